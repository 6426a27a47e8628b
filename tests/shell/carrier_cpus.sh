#!/usr/bin/env bash
# Where carriers may run: without --cores (and without --syscall-cores)
# every carrier may run on every CPU the process had at start, and the
# kernel places them, as it places NPTL's threads (a carrier pinned to a
# CPU that another process keeps busy cannot move away, and a thread
# computing on it got 1/20 of the CPU time it had unpinned); with --cores,
# or --syscall-cores, each carrier is pinned to its CPU, the paper's layout.
# Runs a program whose two threads sleep, started on two CPUs A and B
# (taskset), so that it has two carriers: carrier 0 is its main thread (the
# tid of the process), the other the one thread named flexsc-carrier (named
# once it has pinned itself). Needs 2 CPUs and a C compiler.
# Exit 0 pass, 1 fail, 77 skip.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/preload.bash"
command -v taskset >/dev/null || { echo "skip: no taskset"; exit 77; }
cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "skip: no C compiler ($cc)"; exit 77; }
# the first two CPUs this process may use
read -r a b _ <<<"$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status | tr ',' '\n' |
	awk -F- '{ for (c = $1; c <= ($2 == "" ? $1 : $2); c++) print c }' | head -n 2 | tr '\n' ' ')"
[ -n "${b:-}" ] || { echo "skip: one CPU: nothing to tell apart"; exit 77; }

tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
cat >"$tmp/prog.c" <<'C'
#include <pthread.h>
#include <unistd.h>
static void *nap(void *arg) { (void)arg; sleep(30); return NULL; }
int main(void)
{
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, nap, NULL);
	sleep(30);
	return 0;
}
C
"$cc" -O2 -pthread -o "$tmp/prog" "$tmp/prog.c" || { echo "FAIL: the program does not compile"; exit 1; }

# lists PID: "carrier0's-list other-carriers'-lists" (the others sorted)
lists() {
	local t others=
	for t in /proc/$1/task/*; do
		[ "${t##*/}" != "$1" ] && [ "$(cat "$t/comm" 2>/dev/null)" = flexsc-carrier ] || continue
		others+="$(awk '/^Cpus_allowed_list:/ { print $2 }' "$t/status") "
	done
	echo "$(awk '/^Cpus_allowed_list:/ { print $2 }' "/proc/$1/status") $(tr ' ' '\n' <<<"$others" | grep . | sort | tr '\n' ' ')"
}

fail=0
# check WHAT EXPECTED FLAGS...: the carriers' lists must become EXPECTED
# (carrier 0's first) and stay so for two looks in a row.
check() {
	local what=$1 expect=$2 got= prev=
	shift 2
	rm -f "$tmp/ran"
	FLEXSC_RAN_FILE=$tmp/ran taskset -c "$a,$b" "$run" --require "$@" -- "$tmp/prog" &
	pid=$!
	for _ in $(seq 100); do # up to 10 s for the runtime and both carriers to start
		prev=$got
		got=$(lists $pid)
		[ "$got" = "$expect" ] && [ "$prev" = "$got" ] && grep -q " $tmp/prog\$" "$tmp/ran" 2>/dev/null && break
		sleep 0.1
	done
	kill -KILL $pid 2>/dev/null
	wait $pid 2>/dev/null
	pid=
	if ! grep -q " $tmp/prog\$" "$tmp/ran" 2>/dev/null; then
		echo "FAIL: $what: the runtime did not run (no FLEXSC_RAN_FILE line)"
		fail=1
	elif [ "$got" != "$expect" ]; then
		echo "FAIL: $what: carriers may run on CPUs '$got', expected '$expect'"
		fail=1
	else
		echo "ok: $what: carriers on CPUs $got"
	fi
}
both=$a-$b
[ $((a + 1)) = "$b" ] || both=$a,$b
check "no --cores" "$both $both "
check "--cores $a,$b" "$a $b " --cores "$a,$b"
check "--syscall-cores $b" "$a $b " --syscall-cores "$b"
exit $fail
