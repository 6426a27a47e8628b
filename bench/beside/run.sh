#!/usr/bin/env bash
# A program beside a busy one: how the runtime's carriers fare when another
# process keeps a CPU busy (docs/threads.md, "Where carriers run").
#   bench/beside/run.sh BUILD [--seconds S] [--spin N] [--repeat R]
# Runs bench/beside/pingpong.c (a pipe ping-pong beside N threads that
# compute and yield; default 1) on NPTL, under flexsc-run as a user starts
# it (carriers placed by the kernel), and under flexsc-run --cores with a
# carrier pinned to each CPU; each quiet, then beside a busy process pinned
# to the first CPU (a loop that never sleeps, as another program would
# be). Runtimes alternate; R rounds (default 3). One JSON line per run,
# then the medians as a table with each flexsc ratio to NPTL.
set -euo pipefail
usage() { echo "usage: bench/beside/run.sh BUILD [--seconds S] [--spin N] [--repeat R]" >&2; exit 2; }
[ $# -ge 1 ] || usage
build=$(cd "$1" && pwd)
shift
secs=3 spin=1 repeat=3
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) secs=${2:?}; shift ;;
	--spin) spin=${2:?}; shift ;;
	--repeat) repeat=${2:?}; shift ;;
	*) usage ;;
	esac
	shift
done
here=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$build/flexsc-run" ] || { echo "bench/beside/run.sh: $build/flexsc-run is missing: run make first" >&2; exit 1; }
cpus=$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)
read -r first second _ <<<"$(tr ',' '\n' <<<"$cpus" | awk -F- '{ for (c = $1; c <= ($2 == "" ? $1 : $2); c++) print c }' | head -n 2 | tr '\n' ' ')"
[ -n "${second:-}" ] || { echo "bench/beside/run.sh: needs 2 CPUs" >&2; exit 1; }
tmp=$(mktemp -d /tmp/flexsc-beside.XXXXXX)
hog=
trap '[ -n "$hog" ] && kill $hog 2>/dev/null; rm -rf "$tmp"' EXIT
${CC:-cc} -O2 -g -std=c11 -Wall -Wextra -pthread "$here/bench/beside/pingpong.c" -o "$tmp/pingpong"

run_one() { # RUNTIME SETTING
	local out
	case $1 in
	nptl) out=$(taskset -c "$first,$second" "$tmp/pingpong" "$secs" "$spin") ;;
	flexsc) out=$(taskset -c "$first,$second" "$build/flexsc-run" --require -- "$tmp/pingpong" "$secs" "$spin") ;;
	flexsc-pinned) out=$(taskset -c "$first,$second" "$build/flexsc-run" --require --cores "$first,$second" -- "$tmp/pingpong" "$secs" "$spin") ;;
	esac
	echo "{\"bench\": \"beside\", \"runtime\": \"$1\", \"setting\": \"$2\", ${out#\{}" | tee -a "$tmp/all.jsonl"
}
for setting in quiet beside-busy; do
	if [ "$setting" = beside-busy ]; then
		taskset -c "$first" sh -c 'while :; do :; done' &
		hog=$!
	fi
	for r in $(seq "$repeat"); do
		rts=(nptl flexsc flexsc-pinned)
		[ $((r % 2)) = 0 ] && rts=(flexsc-pinned flexsc nptl)
		for rt in "${rts[@]}"; do run_one "$rt" "$setting"; done
	done
	if [ -n "$hog" ]; then kill $hog; wait $hog 2>/dev/null || true; hog=; fi
done
/usr/bin/python3 - "$tmp/all.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("\n%-12s %-14s %18s %8s %10s" % ("setting", "runtime", "round trips/s", "x NPTL", "CPU s"))
for setting in ("quiet", "beside-busy"):
    med = {}
    for rt in ("nptl", "flexsc", "flexsc-pinned"):
        rs = [r for r in rows if r["setting"] == setting and r["runtime"] == rt]
        med[rt] = (statistics.median(r["round_trips_per_s"] for r in rs), statistics.median(r["cpu_s"] for r in rs))
    for rt, (v, cpu) in med.items():
        print("%-12s %-14s %18.0f %8.2f %10.2f" % (setting, rt, v, v / med["nptl"][0], cpu))
PY
