#!/usr/bin/env bash
# Runs every benchmark and plots it: the `make bench` pipeline.
#   bench/run.sh BUILD [NAME]
# NAME defaults to <date>-<host>. Three parts, all by default
# (FLEXSC_BENCH_PARTS="lib switch http" picks some):
#   lib     the library: one line naming the build measured, then one JSON
#           object per measurement from `flexsc-bench BENCH --json` for each
#           benchmark, in results/NAME.jsonl, and the PNGs of bench/plot.py
#           next to it (results/fig9.png ...)
#   switch  FlexSC-Threads thread switches against NPTL: bench/switch/run.sh,
#           results/NAME-switch.jsonl
#   http    the bundled thread-per-connection HTTP server on NPTL against
#           flexsc-run, 64 256 1024 4096 connections, 3 runs each (about
#           15 minutes): bench/http/run.sh, results/NAME-http.jsonl
# then bench/plot_threads.py plots switch and http: results/threads-switch.png,
# threads-http.png and threads-http-quiet.png (the runs no other work disturbed).
#
# Timings want an idle machine, so before each benchmark it waits (up to
# FLEXSC_BENCH_IDLE_WAIT seconds, default 300; 0: no waiting) until other
# work uses under 10% of the CPUs, and it runs a library benchmark again (at
# most FLEXSC_BENCH_TRIES times, default 3) when other processes took more
# than 15% of the CPUs during it, keeping the quietest run. Each benchmark's
# noise record says what it got (the HTTP runs: "foreign_cpu0_s", "noisy").
# The binaries and libraries are copied first, so a rebuild during the run
# does not mix two builds. Extra flags: FLEXSC_BENCH_FLAGS for flexsc-bench
# (--quick, --reps N), FLEXSC_BENCH_SWITCH_FLAGS for bench/switch/run.sh
# (--quick), FLEXSC_BENCH_HTTP_FLAGS for bench/http/run.sh (--reps N,
# --seconds S, --conns "LIST"). Exit status 1 if any part failed; the other
# parts still run.
set -euo pipefail
build=${1:?usage: bench/run.sh BUILD [NAME]}
name=${2:-$(date +%Y%m%d-%H%M%S)-$(hostname -s 2>/dev/null || echo host)}
here=$(cd "$(dirname "$0")/.." && pwd)
out=$here/results
idle_wait=${FLEXSC_BENCH_IDLE_WAIT:-300}
tries=${FLEXSC_BENCH_TRIES:-3}
benches="fig9 fig10 wsc ros pollution uring-overhead"
parts=${FLEXSC_BENCH_PARTS:-lib switch http}
for p in $parts; do
	case $p in
	lib|switch|http) ;;
	*) echo "bench/run.sh: FLEXSC_BENCH_PARTS: unknown part '$p' (parts: lib switch http)" >&2; exit 2 ;;
	esac
done
has() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }

tmp=$(mktemp -d /tmp/flexsc-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
failed=0

# FlexSC-Threads needs the preload, which is not built under a sanitizer
threads=0
if has switch || has http; then
	if [ -e "$build/flexsc-run" ] && [ -e "$build/libflexsc-run.so" ]; then
		threads=1
		mkdir "$tmp/threads" # the runtime measured: a private copy, as for the library
		cp "$build/flexsc-run" "$build/libflexsc-run.so" "$tmp/threads/"
	else
		echo "bench/run.sh: skipping the FlexSC-Threads benchmarks: $build/libflexsc-run.so is missing" \
			"(make builds it, but not with SANITIZE)" >&2
	fi
fi

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

# ---- lib: flexsc-bench ----
if has lib; then
	[ -x "$build/flexsc-bench" ] || { echo "bench/run.sh: $build/flexsc-bench is missing: run make first" >&2; exit 1; }
	cp "$build/flexsc-bench" "$tmp/"
	cp -P "$build"/libflexsc.so* "$tmp/"
	bin=$tmp/flexsc-bench

	# The build measured: a result is only as good as knowing what produced it.
	rev=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
	dirty=false
	[ -n "$(git -C "$here" status --porcelain -- src include 2>/dev/null)" ] && dirty=true
	sum=$(sha256sum "$(readlink -f "$tmp/libflexsc.so")" | cut -c1-16)
	jsonl=$tmp/run.jsonl
	printf '{"bench":"build","git":"%s","src_dirty":%s,"libflexsc_sha256":"%s","flags":"%s","date":"%s"}\n' \
		"$rev" "$dirty" "$sum" "${FLEXSC_BENCH_FLAGS:-}" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$jsonl"

	# The foreign CPU fraction of a benchmark's noise record.
	foreign() { sed -n 's/.*"kind":"noise".*"foreign_cpu_frac":\([0-9.]*\).*/\1/p' "$1" | tail -1; }

	start=$(date +%s)
	first=1
	for b in $benches; do
		best= best_f= fracs=
		for try in $(seq 1 "$tries"); do
			wait_quiet
			echo "bench/run.sh: flexsc-bench $b --json ${FLEXSC_BENCH_FLAGS:-} (try $try)" >&2
			# LD_LIBRARY_PATH overrides the binary's RUNPATH: the copy is measured
			# shellcheck disable=SC2086 # the flags are words
			LD_LIBRARY_PATH=$tmp "$bin" "$b" --json ${FLEXSC_BENCH_FLAGS:-} >"$tmp/$b.$try"
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

	cp "$jsonl" "$out/$name.jsonl"
	echo "bench/run.sh: wrote $out/$name.jsonl" >&2
	/usr/bin/python3 "$here/bench/plot.py" "$out/$name.jsonl"
fi

# ---- FlexSC-Threads: switch and http ----
plots=()
if has switch && [ $threads = 1 ]; then
	wait_quiet
	echo "bench/run.sh: bench/switch/run.sh ${FLEXSC_BENCH_SWITCH_FLAGS:-}" >&2
	# shellcheck disable=SC2086 # the flags are words
	"$here/bench/switch/run.sh" "$tmp/threads" --out "$name-switch" ${FLEXSC_BENCH_SWITCH_FLAGS:-} || failed=1
	if [ -s "$out/$name-switch.jsonl" ]; then plots+=("$out/$name-switch.jsonl"); fi
fi
if has http && [ $threads = 1 ]; then
	# it waits for quiet itself, as long as the library benchmarks do
	echo "bench/run.sh: bench/http/run.sh ${FLEXSC_BENCH_HTTP_FLAGS:-}" >&2
	# shellcheck disable=SC2086 # the flags are words
	FLEXSC_BENCH_IDLE_WAIT=$idle_wait "$here/bench/http/run.sh" "$tmp/threads" --out "$name-http" \
		${FLEXSC_BENCH_HTTP_FLAGS:-} || failed=1
	if [ -s "$out/$name-http.jsonl" ]; then plots+=("$out/$name-http.jsonl"); fi
fi
if [ ${#plots[@]} -gt 0 ]; then
	/usr/bin/python3 "$here/bench/plot_threads.py" --out "$out" "${plots[@]}" || failed=1
	if [ -s "$out/$name-http.jsonl" ]; then
		/usr/bin/python3 "$here/bench/plot_threads.py" --quiet --out "$out" "$out/$name-http.jsonl" || true
	fi
fi
[ $failed = 0 ] || echo "bench/run.sh: some benchmarks FAILED (see above)" >&2
exit $failed
