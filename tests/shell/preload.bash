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
