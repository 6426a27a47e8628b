#!/usr/bin/env bash
# flexsc-run's command line: bad options fail with a message naming the
# problem and exit status 2, before anything runs; good ones run the program
# and pass its exit status on.
# Exit 0 pass, 1 fail, 77 skip.
set -u
build=${FLEXSC_BUILD:-}
[ -n "$build" ] || { echo "skip: FLEXSC_BUILD is not set (run through tests/run.sh BUILD)"; exit 77; }
run=$build/flexsc-run
[ -x "$run" ] || { echo "skip: $run is missing (make builds it)"; exit 77; }
fail=0

# refused EXPECTED-MESSAGE-PART ARGS...: exit 2, the message on stderr, the program never run
refused() {
	local want=$1 err rc
	shift
	err=$("$run" "$@" -- sh -c 'echo ran' 2>&1 >/dev/null)
	rc=$?
	if [ $rc -ne 2 ] || [[ $err != *"$want"* ]]; then
		echo "FAIL: flexsc-run $*: exit $rc, stderr '$err' (want 2 and '$want')"
		fail=1
	fi
}

refused "--entries '100'" --entries 100
refused "--entries '0'" --entries 0
refused "--entries '8192'" --entries 8192
refused "--entries 'x'" --entries x
refused "--entries '--'" --entries
refused "unknown engine 'fast'" --engine fast
refused "unknown --specialize 'maybe'" --specialize maybe
refused "--specialize auto needs --syscall-cores" --specialize auto
refused "--specialize auto needs --syscall-cores" --specialize auto --syscall-cores 0 --engine threads
refused "unknown --order 'fast'" --order fast
refused "unknown --order 'io-first,'" --order io-first,
refused "unknown option --bogus" --bogus

# good options run the program (sanitizer builds make no preload: the refusals above are all they check)
if [ -f "$build/libflexsc-run.so" ]; then
	out=$("$run" --entries 64 --cores 0 -- sh -c 'echo ran; exit 3')
	rc=$?
	[ "$out" = ran ] && [ $rc -eq 3 ] || { echo "FAIL: --entries 64 ran '$out', exit $rc (want 'ran', 3)"; fail=1; }
	"$run" --entries 4096 -- true || { echo "FAIL: --entries 4096 -- true failed"; fail=1; }
	for o in posted type io-first io-first,type type,io-first; do
		"$run" --order "$o" -- true || { echo "FAIL: --order $o -- true failed"; fail=1; }
	done
	ran="refuses bad options and runs good ones"
else
	ran="refuses bad options (no $build/libflexsc-run.so: good ones not run)"
fi

[ $fail = 0 ] && echo "cli: flexsc-run $ran"
exit $fail
