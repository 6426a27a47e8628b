#!/usr/bin/env bash
# Runs every test program under BUILD/tests, and every tests/shell/*.sh
# (with FLEXSC_BUILD=BUILD in its environment), with a timeout each and prints
# one line per test, then "N passed, N failed, N skipped". Exit 1 on any
# failure. Usage: tests/run.sh BUILD [NAME-PATTERN]
#
# A script that runs many cases (threads.sh: every program in every
# configuration) reports each as its own result: it appends lines
# "PASS|FAIL|SKIP CASE [DETAIL]" to the file named by FLEXSC_RESULTS, and
# each counts here as SCRIPT/CASE. Its exit status then adds a FAIL of its
# own only when its lines do not already show the failure (it timed out, or
# failed outside its cases).
set -u
build=${1:?usage: tests/run.sh BUILD [PATTERN]}
pattern=${2:-*}
timeout_s=${FLEXSC_TEST_TIMEOUT:-1200}
pass=0 fail=0 skip=0 failed=() faillogs=()
log=$build/test-logs
mkdir -p "$log"
here=$(cd "$(dirname "$0")" && pwd)
export FLEXSC_BUILD=$(cd "$build" && pwd)
for t in "$build"/tests/$pattern "$here"/shell/$pattern.sh; do
	[ -x "$t" ] && [ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	# a program whose source is gone (renamed, removed) is left over in BUILD: not a test
	case $t in "$build"/tests/*) [ -f "$here/unit/$name.c" ] || continue ;; esac
	results=$log/$name.results
	rm -f "$results"
	start=$(date +%s%N)
	FLEXSC_RESULTS=$results timeout -k 5 "$timeout_s" "$t" >"$log/$name.log" 2>&1
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	secs=$((ms / 1000)).$((ms % 1000 / 100))
	if [ -s "$results" ]; then
		cases_failed=0
		while read -r st case detail; do
			case $st in
			PASS) pass=$((pass + 1)); printf 'PASS %-40s %s\n' "$name/$case" "$detail" ;;
			SKIP) skip=$((skip + 1)); printf 'SKIP %-40s %s\n' "$name/$case" "$detail" ;;
			*) fail=$((fail + 1)) cases_failed=1; failed+=("$name/$case"); printf 'FAIL %-40s %s\n' "$name/$case" "$detail" ;;
			esac
		done <"$results"
		[ $cases_failed = 1 ] && faillogs+=("$name")
		case $rc in
		0|77) ;;
		124|137) fail=$((fail + 1)); failed+=("$name"); faillogs+=("$name")
			printf 'FAIL %-40s timed out after %ss\n' "$name" "$timeout_s" ;;
		*) if [ $cases_failed = 0 ]; then
			fail=$((fail + 1)); failed+=("$name"); faillogs+=("$name")
			printf 'FAIL %-40s exit %s\n' "$name" "$rc"
		fi ;;
		esac
		continue
	fi
	case $rc in
	0) pass=$((pass + 1)); printf 'PASS %-40s %6ss\n' "$name" "$secs" ;;
	77) skip=$((skip + 1)); printf 'SKIP %-40s %s\n' "$name" "$(grep -m1 '^skip:' "$log/$name.log" | cut -c7-)" ;;
	124|137) fail=$((fail + 1)); failed+=("$name"); faillogs+=("$name"); printf 'FAIL %-40s timed out after %ss\n' "$name" "$timeout_s" ;;
	*) fail=$((fail + 1)); failed+=("$name"); faillogs+=("$name"); printf 'FAIL %-40s exit %s\n' "$name" "$rc" ;;
	esac
done
# A failed test's own FAIL lines (with the indented detail after each) come
# first, so the cause shows even where only part of this output is kept.
# One block a log, however many of its cases failed.
declare -A shown=()
for name in "${faillogs[@]}"; do
	[ -n "${shown[$name]+x}" ] && continue
	shown[$name]=1
	echo "--- $name (its FAIL lines, then the last lines of $log/$name.log)"
	awk '/^FAIL/ { show = 1; print; next } show && /^[ \t]/ { print; next } { show = 0 }' \
		"$log/$name.log" | head -n 60
	echo "..."
	tail -n 10 "$log/$name.log"
done
[ "$fail" -eq 0 ] || echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
