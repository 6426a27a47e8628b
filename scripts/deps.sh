#!/usr/bin/env bash
# Installs what flexsc needs from Debian 12 and is missing: as root with
# apt-get; otherwise prints the exact command to run and fails.
# Usage: scripts/deps.sh [--check] [GROUP...]   GROUP: build test bench servers programs deb
#   (default: build test bench; servers only when asked: make bench-servers;
#   programs: the real Debian programs tests/shell/programs.sh runs, which
#   make test and make check-programs install; deb: what make deb and
#   make check-deb need)
#   --check  install nothing; fail with the list if anything is missing
# servers, programs: real Debian servers (memcached, redis-server, sshd too). Their packages would start
# system services on install; a temporary /usr/sbin/policy-rc.d that exits
# 101 (only if none exists, removed afterwards) forbids that, so no system
# instance is started, and one that already runs is left alone.
set -eu

declare -A group=(
	[build]="gcc make libc6-dev liburing-dev pkg-config"
	[test]="clang libclang-rt-14-dev procps pigz stress-ng gdb valgrind"
	[bench]="python3 python3-matplotlib valgrind wrk iproute2"
	[deb]="build-essential dpkg-dev debhelper lintian debootstrap"
	[programs]="xz-utils zstd pigz sqlite3 python3 git make coreutils memcached libmemcached-tools redis-server redis-tools openssh-server openssh-client strace"
	[servers]="apache2 apache2-utils nginx mariadb-server mariadb-client sysbench bind9 bind9-utils bind9-dnsutils curl dnsperf gdb strace procps iproute2 python3 python3-matplotlib wrk"
)

check=0
groups=()
for a in "$@"; do
	case $a in
	--check) check=1 ;;
	build|test|bench|servers|programs|deb) groups+=("$a") ;;
	*) echo "scripts/deps.sh: unknown argument '$a' (groups: build test bench servers programs deb; --check)" >&2; exit 2 ;;
	esac
done
[ ${#groups[@]} -gt 0 ] || groups=(build test bench)

missing=()
for g in "${groups[@]}"; do
	for p in ${group[$g]}; do
		if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
			missing+=("$p")
		fi
	done
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$check" = 1 ] || [ "$(id -u)" != 0 ]; then
	echo "flexsc needs these Debian packages: ${missing[*]}" >&2
	echo "install them with: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
	exit 1
fi
echo "flexsc: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
	# no service may start during the install; ours goes away afterwards, even on failure
	trap 'rm -f "$policy"' EXIT
	trap 'exit 130' INT TERM
	printf '#!/bin/sh\n# scripts/deps.sh (flexsc): no service starts while it installs\nexit 101\n' >"$policy"
	chmod 755 "$policy"
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
