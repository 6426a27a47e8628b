#!/usr/bin/env bash
# tests/shell/rt-state.gdb, which threads.sh runs on a program that reaches
# its timeout, still reads this runtime: attached to `flexsc-run -- sleep`,
# it prints every carrier and the main user thread with a backtrace into
# its sleep, and gdb reports no error (a renamed field or symbol would).
# Exit 0 pass, 1 fail, 77 skip.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${FLEXSC_BUILD:-}
[ -n "$build" ] || { echo "skip: FLEXSC_BUILD is not set (run through tests/run.sh BUILD)"; exit 77; }
run=$build/flexsc-run
[ -x "$run" ] && [ -f "$build/libflexsc-run.so" ] || { echo "skip: no preload in this build (sanitizer builds make none)"; exit 77; }
command -v gdb >/dev/null || { echo "skip: gdb is not installed (make deps-test installs it)"; exit 77; }
command -v sleep >/dev/null || { echo "skip: no sleep(1)"; exit 77; }

"$run" --cores 0 -- sleep 30 &
pid=$!
trap 'kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
out=
for _ in 1 2 3 4 5 6 7 8 9 10; do
	sleep 0.3
	out=$(timeout 60 gdb -p "$pid" -batch -nx -x "$here/rt-state.gdb" 2>&1)
	[[ $out == *"--- uthread 0 "* ]] && break
done

fail=0
want() { # PATTERN WHAT
	if ! grep -Eq "$1" <<<"$out"; then
		echo "FAIL: rt-state.gdb printed no $2 (/$1/)"
		fail=1
	fi
}
want '^--- runtime: 1 carriers$' "carrier count"
want '^carrier 0: tid [0-9]+ cpu 0 sleeping' "line for carrier 0"
want '^--- uthread 0 "[^"]*": state 2 ' "blocked main user thread"
want '^#[0-9]+ .*(nanosleep|sleep)' "backtrace into the user thread's sleep"
want '^#[0-9]+ .* __libc_start_call_main ' "backtrace down to the program's start"
if grep -Eq '^(No symbol|There is no member|Cannot access|A syntax error)' <<<"$out"; then
	echo "FAIL: gdb reported an error:"
	grep -E '^(No symbol|There is no member|Cannot access|A syntax error)' <<<"$out"
	fail=1
fi
if [ $fail -ne 0 ]; then
	echo "--- gdb printed:"
	head -n 60 <<<"$out"
fi
exit $fail
