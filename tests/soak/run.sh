#!/usr/bin/env bash
# The soak (tests/soak/soak.c): SECONDS seconds of thread churn, queues,
# semaphores, pipe and socket I/O, fork and exec, signals, sleeps, timed
# waits and cancellation, self-checked, in each configuration:
#   default  flexsc-run --require
#   cores0   flexsc-run --require --cores 0          one carrier
#   threads  flexsc-run --require --engine threads
#   plain    without flexsc-run: NPTL, the reference
# Each flexsc-run must have run the runtime: FLEXSC_RAN_FILE gets a line for
# the soak (as in tests/shell/threads.sh). A run whose soak reports a stall
# (a part without progress: a hang, a lost wake-up) is held for a minute
# (SOAK_STALL_HOLD) and backtraced with gdb and tests/shell/rt-state.gdb
# first, as is a run still going SECONDS + 120 s after its start.
# One PASS/FAIL line per configuration, then "N passed, N failed, N skipped".
#
# Usage: tests/soak/run.sh BUILD [SECONDS]   (make soak SECONDS=N; default 60)
# Environment: SOAK_CONFIGS (names, space-separated), SOAK_PARALLEL=1 (all
# configurations at once, each for SECONDS: a long run in the time of one),
# SOAK_FLAGS (more soak arguments, e.g. "--every 60" or "--only fork,cancel"),
# CC. Logs: BUILD/soak/logs/CONFIG.{out,err,ran,gdb} (or SOAK_LOGS/...).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: tests/soak/run.sh BUILD [SECONDS]}" && pwd)
seconds=${2:-60}
run=$build/flexsc-run
out=$build/soak
logs=${SOAK_LOGS:-$out/logs}
mkdir -p "$logs"
cc=${CC:-cc}
read -r -a configs <<<"${SOAK_CONFIGS:-default cores0 threads plain}"
read -r -a extra <<<"${SOAK_FLAGS:-}"
declare -A flags=([plain]="" [default]="" [cores0]="--cores 0" [threads]="--engine threads")
for c in "${configs[@]}"; do
	[ -n "${flags[$c]+x}" ] || { echo "FAIL: unknown configuration '$c' in SOAK_CONFIGS"; exit 1; }
done

bin=$out/soak
if [ ! -x "$bin" ] || [ "$root/tests/soak/soak.c" -nt "$bin" ]; then
	"$cc" -O2 -g -pthread -o "$bin" "$root/tests/soak/soak.c" || { echo "FAIL: soak.c does not compile"; exit 1; }
fi
exe=$(readlink -f "$bin")
if [ ! -x "$run" ] || [ ! -f "$build/libflexsc-run.so" ]; then
	echo "skip: $run or $build/libflexsc-run.so is missing (make builds them; not under SANITIZE)"
	echo "0 passed, 0 failed, 1 skipped"
	exit 77
fi
every=10
[ "$seconds" -ge 600 ] && every=60

# Runs one configuration to its end; its verdict in $logs/CONFIG.verdict.
soak_one() {
	local cfg=$1 base=$logs/$1 pid limit start rc why
	rm -f "$base".*
	local cmd=("$bin" "$seconds" --every "$every" "${extra[@]}")
	# shellcheck disable=SC2206
	[ "$cfg" = plain ] || cmd=(env FLEXSC_RAN_FILE="$base.ran" "$run" --require ${flags[$cfg]} -- "${cmd[@]}")
	start=$(date +%s)
	limit=$((start + seconds + 120))
	SOAK_STALL_HOLD=60 setsid "${cmd[@]}" </dev/null >"$base.out" 2>"$base.err" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		if grep -q '^soak: STALL' "$base.out" || [ "$(date +%s)" -gt "$limit" ]; then
			# the soak itself: flexsc-run execs it, env too
			if command -v gdb >/dev/null; then
				timeout 60 gdb -p "$pid" -batch -nx -ex 'set pagination off' \
					-x "$root/tests/shell/rt-state.gdb" \
					-ex 'info threads' -ex 'thread apply all bt 15' >"$base.gdb" 2>&1
			fi
			kill -KILL -- -"$pid" 2>/dev/null
			break
		fi
		sleep 1
	done
	wait "$pid"
	rc=$?
	why=
	if [ "$cfg" != plain ] && ! grep -q " $exe\$" "$base.ran" 2>/dev/null; then
		why="the runtime did not run (no line for $exe in $base.ran); "
	fi
	grep -q '^soak: STALL' "$base.out" && why="${why}a stall; "
	[ -s "$base.gdb" ] && why="${why}backtraces in $base.gdb; "
	if [ $rc -eq 0 ] && [ -z "$why" ]; then
		echo "PASS soak $cfg $(($(date +%s) - start))s: $(tail -n 1 "$base.out" | sed 's/^soak: //')" >"$base.verdict"
	else
		{
			local how="flexsc-run --require ${flags[$cfg]}"
			[ "$cfg" = plain ] && how="NPTL"
			echo "FAIL soak $cfg: ${why}exit $rc ($how)"
			grep -E '^soak: (FAIL|STALL)' "$base.out" | head -n 20 | sed 's/^/     /'
			[ -s "$base.err" ] && tail -n 5 "$base.err" | sed 's/^/     stderr: /'
		} >"$base.verdict"
	fi
}

echo "soak: ${seconds}s per configuration (${configs[*]})${SOAK_PARALLEL:+, all at once}; logs in $logs"
pids=()
for cfg in "${configs[@]}"; do
	if [ -n "${SOAK_PARALLEL:-}" ]; then
		soak_one "$cfg" &
		pids+=($!)
	else
		soak_one "$cfg"
		cat "$logs/$cfg.verdict"
	fi
done
if [ -n "${SOAK_PARALLEL:-}" ]; then
	wait "${pids[@]}"
	for cfg in "${configs[@]}"; do cat "$logs/$cfg.verdict"; done
fi
pass=0 fail=0
for cfg in "${configs[@]}"; do
	if grep -q '^PASS' "$logs/$cfg.verdict"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "$pass passed, $fail failed, 0 skipped"
[ $fail -eq 0 ]
