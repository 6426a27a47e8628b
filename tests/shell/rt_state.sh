#!/usr/bin/env bash
# tests/shell/rt-state.gdb, which threads.sh runs on a program that reaches
# its timeout, still reads this runtime: attached to `flexsc-run --require -- sleep`
# (whose runtime must have started: its FLEXSC_RAN_FILE line),
# it prints every carrier and the main user thread with a backtrace into
# its sleep, and gdb reports no error (a renamed field or symbol would).
# Exit 0 pass, 1 fail, 77 skip.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/preload.bash"
command -v gdb >/dev/null || { echo "skip: gdb is not installed (make deps-test installs it)"; exit 77; }
command -v sleep >/dev/null || { echo "skip: no sleep(1)"; exit 77; }

ran=$(mktemp)
FLEXSC_RAN_FILE=$ran "$run" --require --cores 0 -- sleep 600 &
pid=$!
trap 'kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f "$ran"' EXIT

patterns=(
	'^--- runtime: 1 carriers$' "carrier count"
	'^carrier 0: tid [0-9]+ cpu 0 sleeping' "line for carrier 0"
	'^--- uthread 0 "[^"]*": state 2 ' "blocked main user thread"
	'^#[0-9]+ .*(nanosleep|sleep)' "backtrace into the user thread's sleep"
	'^#[0-9]+ .* __libc_start_call_main ' "backtrace down to the program's start"
)
# all of them seen: sleep may still be starting up when gdb first attaches (so up to 20 tries)
all_seen() {
	for ((i = 0; i < ${#patterns[@]}; i += 2)); do
		grep -Eq "${patterns[i]}" <<<"$out" || return 1
	done
}
out=
for _ in $(seq 1 20); do
	sleep 0.3
	out=$(timeout 60 gdb -p "$pid" -batch -nx -x "$here/rt-state.gdb" 2>&1)
	if grep -q 'ptrace: Operation not permitted' <<<"$out"; then
		echo "skip: gdb may not attach here (ptrace: Operation not permitted; see kernel.yama.ptrace_scope)"
		exit 77
	fi
	all_seen && break
done

fail=0
# the runtime started in sleep (--require: else sleep would have exited with 122)
if ! grep -q "^$pid " "$ran"; then
	echo "FAIL: the runtime did not run in sleep (no line for PID $pid in FLEXSC_RAN_FILE: '$(cat "$ran")')"
	fail=1
fi
for ((i = 0; i < ${#patterns[@]}; i += 2)); do
	if ! grep -Eq "${patterns[i]}" <<<"$out"; then
		echo "FAIL: rt-state.gdb printed no ${patterns[i + 1]} (/${patterns[i]}/)"
		fail=1
	fi
done
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
