#!/usr/bin/env bash
# make check-deb: installs the packages make deb built into a fresh Debian
# 12 root (debootstrap, minbase plus a compiler) with apt, which fetches
# what they depend on (liburing), and, inside it, builds a program against
# libflexsc-dev with pkg-config and runs it, runs a threaded program under
# the installed flexsc-run --require (its runtime must start: a
# FLEXSC_RAN_FILE line), and removes the packages again. Needs root
# (chroot) and the Debian mirror this machine's apt uses (or
# FLEXSC_DEB_MIRROR); the root, made once, is kept under build/ (deb-root-*.tar)
# and unpacked afresh for every run. Usage: tests/deb/run.sh DEB_DIR
set -eu
debs=$(cd "${1:?usage: tests/deb/run.sh DEB_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "FAIL: make check-deb needs root (it installs into a chroot)"; exit 1; }
for p in libflexsc0 libflexsc-dev flexsc-run; do
	ls "$debs/${p}_"*_amd64.deb >/dev/null 2>&1 || { echo "FAIL: no $p package in $debs (make deb)"; exit 1; }
done

mirror=${FLEXSC_DEB_MIRROR:-$(apt-get indextargets --format '$(TARGET_OF) $(REPO_URI) $(ORIGIN) $(CODENAME)' 2>/dev/null |
	awk '$1 == "deb" && $3 == "Debian" && $4 == "bookworm" { print $2; exit }')}
[ -n "$mirror" ] || { echo "FAIL: no Debian bookworm entry in this machine's apt sources (set FLEXSC_DEB_MIRROR)"; exit 1; }
include=gcc,libc6-dev,pkg-config
cache=$top/build/deb-root-$include.tar # a new list makes a new root
if [ ! -s "$cache" ]; then
	made=$(mktemp -d)
	echo "check-deb: making a Debian 12 root from $mirror (once; kept in $cache)"
	debootstrap --variant=minbase --include="$include" bookworm \
		"$made" "$mirror" >"$top/build/deb-root.log" 2>&1 ||
		{ tail -n 20 "$top/build/deb-root.log"; rm -rf "$made"; echo "FAIL: debootstrap"; exit 1; }
	tar -C "$made" -cf "$cache.part" . && mv "$cache.part" "$cache"
	rm -rf "$made"
fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
tar -C "$root" -xf "$cache"
printf 'deb %s bookworm main\n' "$mirror" >"$root/etc/apt/sources.list"
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
mkdir -p "$root/tmp/debs"
for p in libflexsc0 libflexsc-dev flexsc-run; do cp "$debs/${p}_"*_amd64.deb "$root/tmp/debs/"; done

cp "$top/tests/shell/installed_api.c" "$root/tmp/api.c"
# Four pairs of threads pass a byte back and forth through pipes: blocking
# reads that the runtime must switch away from.
cat >"$root/tmp/pingpong.c" <<'C'
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
enum { PAIRS = 4, ROUNDS = 2000 };
static int fds[PAIRS][2][2];
static void *side(void *arg)
{
	long k = (long)arg, pair = k / 2, me = k % 2;
	char c = 0;
	for (int i = 0; i < ROUNDS; i++) {
		if (me == 0 && write(fds[pair][0][1], &c, 1) != 1)
			return (void *)1;
		if (read(fds[pair][!me][0], &c, 1) != 1)
			return (void *)1;
		if (me == 1 && write(fds[pair][1][1], &c, 1) != 1)
			return (void *)1;
	}
	return NULL;
}
int main(void)
{
	pthread_t t[2 * PAIRS];
	void *r;
	int bad = 0;
	for (int p = 0; p < PAIRS; p++)
		if (pipe(fds[p][0]) || pipe(fds[p][1]))
			return 1;
	for (long k = 0; k < 2 * PAIRS; k++)
		if (pthread_create(&t[k], NULL, side, (void *)k))
			return 1;
	for (int k = 0; k < 2 * PAIRS; k++)
		bad += pthread_join(t[k], &r) || r;
	printf("pingpong %s\n", bad ? "failed" : "ok");
	return bad != 0;
}
C
cat >"$root/tmp/check.sh" <<'SH'
set -eu
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
cd /tmp
export DEBIAN_FRONTEND=noninteractive
{ apt-get update && apt-get install -y --no-install-recommends ./debs/*.deb; } >dpkg.log 2>&1 ||
	{ tail -n 30 dpkg.log; echo "FAIL: apt-get install of the packages"; exit 1; }
for f in /usr/bin/flexsc-run /usr/lib/flexsc/libflexsc-run.so /usr/share/man/man1/flexsc-run.1.gz \
	/usr/share/man/man3/flexsc_post.3.gz /usr/share/man/man7/flexsc.7.gz /usr/include/flexsc/flexsc.h; do
	[ -e "$f" ] || { echo "FAIL: the packages did not install $f"; exit 1; }
done
cc api.c -o api $(pkg-config --cflags --libs flexsc)
[ "$(./api)" = ok ] || { echo "FAIL: a program built with pkg-config flexsc"; exit 1; }
cc pingpong.c -o pingpong -pthread
out=$(FLEXSC_RAN_FILE=/tmp/ran timeout 60 flexsc-run --require -- ./pingpong) ||
	{ echo "FAIL: pingpong under the installed flexsc-run (status $?): $out"; exit 1; }
[ "$out" = "pingpong ok" ] || { echo "FAIL: pingpong printed '$out'"; exit 1; }
grep -q " /tmp/pingpong\$" ran || { echo "FAIL: the runtime did not run in pingpong ('$(cat ran 2>/dev/null)')"; exit 1; }
dpkg -r flexsc-run libflexsc-dev libflexsc0 >>dpkg.log 2>&1 || { tail -n 30 dpkg.log; echo "FAIL: dpkg -r"; exit 1; }
for f in /usr/bin/flexsc-run /usr/lib/flexsc /usr/lib/x86_64-linux-gnu/libflexsc.so.0 /usr/include/flexsc; do
	[ ! -e "$f" ] || { echo "FAIL: $f is left after dpkg -r"; exit 1; }
done
echo "PASS: installed with apt into a fresh Debian 12 root (liburing fetched); a program built with pkg-config runs; pingpong ran under the installed flexsc-run; removed cleanly"
SH
# A private mount namespace: its /proc and /dev go away with it.
unshare --mount --propagation private -- sh -c '
	mount -t proc proc "$1/proc" && mount --rbind /dev "$1/dev" && exec chroot "$1" /bin/sh /tmp/check.sh' sh "$root"
