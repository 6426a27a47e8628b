#!/usr/bin/env bash
# Runs every benchmark and plots it: the `make bench` pipeline.
#   bench/run.sh BUILD [NAME]
# writes results/NAME.jsonl (default NAME: <date>-<host>): one line naming the
# build measured, then one JSON object per measurement from
# `flexsc-bench BENCH --json` for each benchmark, then the PNGs of
# bench/plot.py next to it.
#
# Timings want an idle machine, so before each benchmark it waits (up to
# FLEXSC_BENCH_IDLE_WAIT seconds, default 300; 0: no waiting) until other
# work uses under 10% of the CPUs, and it runs a benchmark again (at most
# FLEXSC_BENCH_TRIES times, default 3) when other processes took more than
# 15% of the CPUs during it, keeping the quietest run. Each benchmark's
# noise record says what it got. The binary and library are copied first,
# so a rebuild during the run does not mix two builds. Extra flexsc-bench
# flags (--quick, --reps N) can be given in FLEXSC_BENCH_FLAGS.
set -euo pipefail
build=${1:?usage: bench/run.sh BUILD [NAME]}
name=${2:-$(date +%Y%m%d-%H%M%S)-$(hostname -s 2>/dev/null || echo host)}
here=$(cd "$(dirname "$0")/.." && pwd)
out=$here/results
idle_wait=${FLEXSC_BENCH_IDLE_WAIT:-300}
tries=${FLEXSC_BENCH_TRIES:-3}
benches="fig9 fig10 wsc ros pollution uring-overhead"

[ -x "$build/flexsc-bench" ] || { echo "bench/run.sh: $build/flexsc-bench is missing: run make first" >&2; exit 1; }
tmp=$(mktemp -d /tmp/flexsc-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp "$build/flexsc-bench" "$tmp/"
cp -P "$build"/libflexsc.so* "$tmp/"
export LD_LIBRARY_PATH=$tmp # overrides the binary's RUNPATH: the copy is measured
bin=$tmp/flexsc-bench

# The build measured: a result is only as good as knowing what produced it.
rev=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=false
[ -n "$(git -C "$here" status --porcelain -- src include 2>/dev/null)" ] && dirty=true
sum=$(sha256sum "$(readlink -f "$tmp/libflexsc.so")" | cut -c1-16)
jsonl=$tmp/run.jsonl
printf '{"bench":"build","git":"%s","src_dirty":%s,"libflexsc_sha256":"%s","flags":"%s","date":"%s"}\n' \
	"$rev" "$dirty" "$sum" "${FLEXSC_BENCH_FLAGS:-}" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$jsonl"

cpu_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat; }

busy_pct() { # percent of all CPUs busy over 3 s
	local a b
	a=$(cpu_ticks)
	sleep 3
	b=$(cpu_ticks)
	echo "$a $b" | awk '{d = $4 - $2; print (d > 0 ? int(100 * ($3 - $1) / d) : 0)}'
}

wait_quiet() {
	local waited=0 pct
	while [ "$idle_wait" -gt 0 ]; do
		pct=$(busy_pct)
		[ "$pct" -lt 10 ] && return 0
		if [ "$waited" -ge "$idle_wait" ]; then
			echo "bench/run.sh: warning: the CPUs are still ${pct}% busy; measuring anyway" >&2
			return 0
		fi
		[ "$waited" = 0 ] && echo "bench/run.sh: the CPUs are ${pct}% busy with other work; waiting for quiet" >&2
		sleep 7
		waited=$((waited + 10))
	done
}

# The foreign CPU fraction of a benchmark's noise record.
foreign() { sed -n 's/.*"kind":"noise".*"foreign_cpu_frac":\([0-9.]*\).*/\1/p' "$1" | tail -1; }

start=$(date +%s)
first=1
for b in $benches; do
	best= best_f= fracs=
	for try in $(seq 1 "$tries"); do
		wait_quiet
		echo "bench/run.sh: flexsc-bench $b --json ${FLEXSC_BENCH_FLAGS:-} (try $try)" >&2
		# shellcheck disable=SC2086 # the flags are words
		"$bin" "$b" --json ${FLEXSC_BENCH_FLAGS:-} >"$tmp/$b.$try"
		f=$(foreign "$tmp/$b.$try")
		fracs="$fracs${fracs:+,}${f:-null}"
		if [ -z "$best" ] || awk -v a="$f" -v b="$best_f" 'BEGIN { exit !(a < b) }'; then
			best=$tmp/$b.$try best_f=$f
		fi
		awk -v a="$f" 'BEGIN { exit !(a < 0.15) }' && break
	done
	# one machine record for the whole file
	if [ "$first" = 1 ]; then cat "$best"; else grep -v '"bench":"machine"' "$best"; fi >>"$jsonl"
	first=0
	printf '{"bench":"%s","kind":"tries","tries":%s,"foreign_cpu_fracs":[%s],"kept_foreign_cpu_frac":%s}\n' \
		"$b" "$(echo "$fracs" | tr ',' '\n' | wc -l)" "$fracs" "${best_f:-null}" >>"$jsonl"
done
echo "bench/run.sh: $(($(wc -l <"$jsonl") - 1)) records in $(($(date +%s) - start)) s" >&2

mkdir -p "$out"
cp "$jsonl" "$out/$name.jsonl"
echo "bench/run.sh: wrote $out/$name.jsonl" >&2
/usr/bin/python3 "$here/bench/plot.py" "$out/$name.jsonl"
