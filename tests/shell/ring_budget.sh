#!/usr/bin/env bash
# Many processes of one unprivileged user each get an io_uring of their
# own. A ring's memory counts against the user's locked-memory limit
# (RLIMIT_MEMLOCK, shared by all of the user's processes; 8 MiB on
# Debian) unless the process has CAP_IPC_LOCK, and servers run their
# workers as such a user (Apache's children as www-data). As nobody, with
# that limit at Debian's 8 MiB, 24 processes run at once under flexsc-run
# --stats, each with two threads that pass a byte back and forth over
# pipes (the reads wait on the ring); every one must have sent calls to
# the ring and none may say its io_uring setup failed. Rings sized after
# the queue (800 KiB each) gave 10 of them a ring. docs/design.md, "The
# ring's size". Needs root (to become nobody) and a C compiler.
# Exit 0 pass, 1 fail, 77 skip.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/preload.bash"
cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "skip: no C compiler ($cc)"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "skip: not root (the test runs its processes as nobody)"; exit 77; }
id nobody >/dev/null 2>&1 || { echo "skip: no user nobody"; exit 77; }
command -v setpriv >/dev/null || { echo "skip: no setpriv (util-linux)"; exit 77; }

procs=24
tmp=$(mktemp -d "$build/ring_budget.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
cat >"$tmp/prog.c" <<'C'
#include <pthread.h>
#include <unistd.h>
static int ping[2], pong[2];
static void *echoer(void *arg)
{
	char c;
	(void)arg;
	while (read(ping[0], &c, 1) == 1 && c != 'q')
		if (write(pong[1], &c, 1) != 1)
			return arg;
	return NULL;
}
int main(void)
{
	pthread_t t;
	char c = 'x';
	if (pipe(ping) || pipe(pong) || pthread_create(&t, NULL, echoer, NULL))
		return 1;
	/* long enough for the processes to overlap: each holds its ring meanwhile */
	for (int i = 0; i < 20000; i++)
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			return 1;
	c = 'q';
	return write(ping[1], &c, 1) != 1 || pthread_join(t, NULL);
}
C
"$cc" -O2 -pthread -o "$tmp/prog" "$tmp/prog.c" || { echo "FAIL: the program does not compile"; exit 1; }
: >"$tmp/ran"
chmod 666 "$tmp/ran"

for i in $(seq 1 "$procs"); do
	(
		ulimit -l 8192
		FLEXSC_RAN_FILE=$tmp/ran timeout 120 setpriv --reuid=nobody --regid=nogroup --clear-groups \
			"$run" --require --stats -- "$tmp/prog" 2>"$tmp/err.$i"
		echo $? >"$tmp/rc.$i"
	) &
done
wait

fail=0 ringless=0
for i in $(seq 1 "$procs"); do
	rc=$(cat "$tmp/rc.$i")
	if [ "$rc" != 0 ]; then
		echo "FAIL: process $i exited $rc: $(head -3 "$tmp/err.$i")"
		fail=1
		continue
	fi
	# sums over carriers: "... by engine: local L uring U threads T sync S; ..."
	uring=$(sed -n 's/.*by engine: local [0-9]* uring \([0-9]*\) threads.*/\1/p' "$tmp/err.$i" | awk '{ u += $1 } END { print u + 0 }')
	if [ "$uring" -lt 1000 ] || grep -q "io_uring setup failed" "$tmp/err.$i"; then
		ringless=$((ringless + 1))
		[ "$ringless" = 1 ] && echo "first without a ring: process $i, $uring calls on the ring; $(grep -m1 "io_uring setup failed" "$tmp/err.$i")"
	fi
done
n=$(grep -c " $tmp/prog\$" "$tmp/ran")
if [ "$n" != "$procs" ]; then
	echo "FAIL: the runtime ran in $n of $procs processes"
	fail=1
fi
if [ "$ringless" = 0 ]; then
	echo "ok: $procs processes of nobody (RLIMIT_MEMLOCK 8 MiB) at once, each with its calls on a ring of its own"
else
	echo "FAIL: $ringless of $procs processes of nobody had no ring (RLIMIT_MEMLOCK 8 MiB)"
	fail=1
fi
exit $fail
