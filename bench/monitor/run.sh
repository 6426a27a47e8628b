#!/usr/bin/env bash
# What the runtime's monitor thread costs (docs/results.md, "The monitor's cost").
#   bench/monitor/run.sh BUILD [--seconds N] [--strace] [--only MODE...]
# Runs bench/monitor/load.c under BUILD/flexsc-run in four loads (idle,
# tick, pingpong, spin; see load.c) and, over N seconds (default 10) of
# each, measures the monitor thread alone (the task named flexsc-monitor):
# its CPU time and the times it was scheduled in (/proc/PID/task/TID/schedstat,
# in nanoseconds) and its system calls (perf stat --per-thread, tracepoint
# raw_syscalls:sys_enter), and the whole process's system calls over the
# same window (the carriers' wakes of the monitor among them). One JSON
# line per load on stdout. --strace: also strace -c the monitor thread over
# a second window of N seconds and print its table on stderr (strace slows
# each call it traces: counts only). Needs root or perf_event_paranoid <= 1
# for perf, and ptrace rights for --strace.
set -euo pipefail
usage() { echo "usage: bench/monitor/run.sh BUILD [--seconds N] [--strace] [--only MODE...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
build=$(cd "$1" && pwd)
shift
secs=10 do_strace=0 modes=()
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) [ $# -ge 2 ] || usage; secs=$2; shift ;;
	--strace) do_strace=1 ;;
	--only) shift; modes=("$@"); break ;;
	*) usage ;;
	esac
	shift
done
[ ${#modes[@]} -gt 0 ] || modes=(idle tick pingpong spin)
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d /tmp/flexsc-monitor.XXXXXX)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
for f in flexsc-run libflexsc-run.so; do
	[ -e "$build/$f" ] || { echo "bench/monitor/run.sh: $build/$f is missing: run make first" >&2; exit 1; }
	cp "$build/$f" "$tmp/" # a private copy: other work may rebuild BUILD meanwhile
done
${CC:-cc} -O2 -g -std=c11 -Wall -Wextra -pthread "$here/bench/monitor/load.c" -o "$tmp/load"
rev=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
lib=$(sha256sum "$tmp/libflexsc-run.so" | cut -c1-16) # which runtime ran: BUILD need not be this tree's
# the loads that ask the kernel about a carrier (spin) run on one carrier, the others on the default two
declare -A flags=([idle]="" [tick]="" [pingpong]="--cores 0" [spin]="--cores 0")

# schedstat TASK: "ns_on_cpu times_scheduled_in"
schedstat() { awk '{ print $1, $3 }' "/proc/$pid/task/$1/schedstat"; }
# syscalls: "MONITOR PROCESS", the system calls each made over the window
# (per thread: a thread that made none is <not counted>, which perf's sum
# over the process then is too)
syscalls() {
	perf stat -x, --per-thread -e raw_syscalls:sys_enter -p "$pid" -- sleep "$secs" 2>&1 >/dev/null |
		awk -F, -v mon="flexsc-monitor-$mon" '$4 == "raw_syscalls:sys_enter" && $2 + 0 == $2 {
			all += $2; if ($1 == mon) m = $2 } END { print m + 0, all + 0 }'
}

for mode in "${modes[@]}"; do
	# shellcheck disable=SC2086 # flags are words
	"$tmp/flexsc-run" --require ${flags[$mode]} -- "$tmp/load" "$mode" $((secs + 4 + do_strace * secs)) &
	pid=$!
	sleep 1
	mon=
	for t in /proc/$pid/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = flexsc-monitor ] && mon=${t##*/}
	done
	[ -n "$mon" ] || { echo "bench/monitor/run.sh: $mode: no flexsc-monitor thread in $pid" >&2; exit 1; }
	read -r ns0 runs0 < <(schedstat "$mon")
	read -r mon_calls proc_calls < <(syscalls)
	read -r ns1 runs1 < <(schedstat "$mon")
	python3 - "$mode" "${flags[$mode]}" "$secs" "$ns0" "$ns1" "$runs0" "$runs1" "$mon_calls" "$proc_calls" "$rev" "$lib" <<'PY'
import json, sys
mode, flags, secs, ns0, ns1, r0, r1, mc, pc, rev, lib = sys.argv[1:]
secs = float(secs)
cpu, runs = int(ns1) - int(ns0), int(r1) - int(r0)
print(json.dumps({"bench": "monitor", "git": rev, "libflexsc_run_sha256": lib, "load": mode, "flags": flags, "seconds": secs,
    "monitor_cpu_us_per_s": round(cpu / 1e3 / secs, 2), "monitor_wakeups_per_s": round(runs / secs, 1),
    "monitor_syscalls_per_s": round(int(mc) / secs, 1), "ns_per_wakeup": round(cpu / runs) if runs else None,
    "process_syscalls_per_s": round(int(pc) / secs, 1)}))
PY
	if [ $do_strace = 1 ]; then
		echo "== strace -c of the monitor, load $mode, $secs s" >&2
		timeout "$secs" strace -c -p "$mon" 2>&1 >/dev/null | sed -n '/% time/,$p' >&2 || true
	fi
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	pid=
done
