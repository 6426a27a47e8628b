# Sourced (not run: tests/run.sh runs only *.sh) by the tests that run
# programs under flexsc-run. Sets build (from FLEXSC_BUILD) and run (its
# flexsc-run), or skips with exit 77 when there is no preload to run under
# (sanitizer builds make none).
build=${FLEXSC_BUILD:-}
[ -n "$build" ] || { echo "skip: FLEXSC_BUILD is not set (run through tests/run.sh BUILD)"; exit 77; }
run=$build/flexsc-run
if [ ! -x "$run" ] || [ ! -f "$build/libflexsc-run.so" ]; then
	echo "skip: $run or $build/libflexsc-run.so is missing (make builds them; sanitizer builds make none)"
	exit 77
fi

# stats_run WHAT FLAGS... -- PROGRAM ARGS...: runs PROGRAM under flexsc-run
# --require --stats FLAGS (60 s at most), its stderr (the counters) in
# $tmp/err (the caller's $tmp). Prints a FAIL line and returns 1 when the
# program failed or the runtime did not run in it (no FLEXSC_RAN_FILE line).
stats_run() {
	local what=$1 a prog=
	shift
	for a in "$@"; do
		[ "$prog" = -- ] && { prog=$a; break; }
		[ "$a" = -- ] && prog=--
	done
	rm -f "$tmp/ran"
	if ! FLEXSC_RAN_FILE=$tmp/ran timeout 60 "$run" --require --stats "$@" 2>"$tmp/err"; then
		echo "FAIL: $what: the program failed: $(head -3 "$tmp/err")"
		return 1
	fi
	if ! grep -q " $prog\$" "$tmp/ran" 2>/dev/null; then
		echo "FAIL: $what: the runtime did not run (no FLEXSC_RAN_FILE line)"
		return 1
	fi
}
