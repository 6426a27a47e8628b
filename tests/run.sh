#!/usr/bin/env bash
# Runs every test program under BUILD/tests, and every tests/shell/*.sh
# (with FLEXSC_BUILD=BUILD in its environment), with a timeout each and prints
# one line per test, then "N passed, N failed, N skipped". Exit 1 on any
# failure. Usage: tests/run.sh BUILD [NAME-PATTERN]
set -u
build=${1:?usage: tests/run.sh BUILD [PATTERN]}
pattern=${2:-*}
timeout_s=${FLEXSC_TEST_TIMEOUT:-1200}
pass=0 fail=0 skip=0 failed=()
log=$build/test-logs
mkdir -p "$log"
here=$(cd "$(dirname "$0")" && pwd)
export FLEXSC_BUILD=$(cd "$build" && pwd)
for t in "$build"/tests/$pattern "$here"/shell/$pattern.sh; do
	[ -x "$t" ] && [ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	start=$(date +%s%N)
	timeout -k 5 "$timeout_s" "$t" >"$log/$name.log" 2>&1
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	secs=$((ms / 1000)).$((ms % 1000 / 100))
	case $rc in
	0) pass=$((pass + 1)); printf 'PASS %-32s %6ss\n' "$name" "$secs" ;;
	77) skip=$((skip + 1)); printf 'SKIP %-32s %s\n' "$name" "$(grep -m1 '^skip:' "$log/$name.log" | cut -c7-)" ;;
	124|137) fail=$((fail + 1)); failed+=("$name"); printf 'FAIL %-32s timed out after %ss\n' "$name" "$timeout_s" ;;
	*) fail=$((fail + 1)); failed+=("$name"); printf 'FAIL %-32s exit %s\n' "$name" "$rc" ;;
	esac
done
# A failed test's own FAIL lines (with the indented detail after each) come
# first, so the cause shows even where only part of this output is kept.
for name in "${failed[@]}"; do
	echo "--- $name (its FAIL lines, then the last lines of $log/$name.log)"
	awk '/^FAIL/ { show = 1; print; next } show && /^[ \t]/ { print; next } { show = 0 }' \
		"$log/$name.log" | head -n 60
	echo "..."
	tail -n 10 "$log/$name.log"
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
