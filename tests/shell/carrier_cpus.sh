#!/usr/bin/env bash
# Where carriers may run: without --cores (and without --syscall-cores)
# every carrier may run on every CPU the process had at start, and the
# kernel places them, as it places NPTL's threads (a carrier pinned to a
# CPU that another process keeps busy cannot move away, and a thread
# computing on it got 1/20 of the CPU time it had unpinned); with --cores
# each carrier is pinned to its CPU of the list, the paper's layout.
# Runs a program whose two threads sleep, so that a second carrier starts,
# and reads each carrier's Cpus_allowed_list. Needs 2 CPUs and a C
# compiler. Exit 0 pass, 1 fail, 77 skip.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/preload.bash"
[ "$(nproc)" -ge 2 ] || { echo "skip: one CPU: nothing to tell apart"; exit 77; }
cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "skip: no C compiler ($cc)"; exit 77; }
want=$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)
first=${want%%[,-]*}

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

fail=0
# check WHAT EXPECTED FLAGS...: every carrier's (carrier 0 is the main
# thread, named prog) list must be EXPECTED ("each": the CPU of its own).
check() {
	local what=$1 expect=$2 lists
	shift 2
	rm -f "$tmp/ran"
	FLEXSC_RAN_FILE=$tmp/ran "$run" --require "$@" -- "$tmp/prog" &
	pid=$!
	for _ in $(seq 100); do # up to 10 s for the runtime and both carriers to start
		lists=$(for t in /proc/$pid/task/*; do
			case $(cat "$t/comm" 2>/dev/null) in
			prog | flexsc-carrier) awk '/^Cpus_allowed_list:/ { print $2 }' "$t/status" ;;
			esac
		done | sort | tr '\n' ' ')
		[ "$(wc -w <<<"$lists")" -ge 2 ] && grep -q " $tmp/prog\$" "$tmp/ran" 2>/dev/null && break
		sleep 0.1
	done
	kill -KILL $pid 2>/dev/null
	wait $pid 2>/dev/null
	pid=
	if ! grep -q " $tmp/prog\$" "$tmp/ran" 2>/dev/null; then
		echo "FAIL: $what: the runtime did not run (no FLEXSC_RAN_FILE line)"
		fail=1
	elif [ "$(wc -w <<<"$lists")" -lt 2 ]; then
		echo "FAIL: $what: fewer than 2 carriers ('$lists')"
		fail=1
	elif [ "$lists" != "$expect" ]; then
		echo "FAIL: $what: carriers may run on CPUs '$lists', expected '$expect'"
		fail=1
	else
		echo "ok: $what: carriers on CPUs $lists"
	fi
}
check "no --cores" "$want $want "
check "--cores $first,$((first + 1))" "$first $((first + 1)) " --cores "$first,$((first + 1))"
check "--syscall-cores $((first + 1))" "$first $((first + 1)) " --syscall-cores "$((first + 1))"
exit $fail
