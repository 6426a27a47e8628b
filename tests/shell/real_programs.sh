#!/usr/bin/env bash
# Real threaded programs from Debian under flexsc-run:
#  - pigz -p 8 compresses and decompresses a generated file (6 MB,
#    deterministic content): the round trip gives the same sha256, and the
#    compressed stream is valid for plain gzip; in the default
#    configuration, with one carrier (--cores 0) and with --engine threads;
#  - stress-ng's thread stressors, one run each: --pthread 4, --mutex 4,
#    --futex 4, --sem 4, with --verify, -t 5s and --metrics-brief; exit 0
#    (-v too: its debug lines tell how a stressor process ended).
# Every run passes --require and FLEXSC_RAN_FILE, which must then hold a
# line for the program (pigz twice, stress-ng at least once): a run without
# the runtime fails.
# This script installs nothing: make test installs pigz and stress-ng first
# (make deps-test, scripts/deps.sh test); a missing one is a skip (77) that
# names it. Logs: $FLEXSC_BUILD/real-programs/.
# Exit 0 pass, 1 fail, 77 skip.
set -u
. "$(dirname "$0")/preload.bash"

# pigz and stress-ng: Debian packages of the same names (make deps-test)
missing=()
for tool in pigz stress-ng; do
	command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "skip: ${missing[*]} not installed (make deps-test, or scripts/deps.sh test, as root)"
	exit 77
fi

out=$build/real-programs
rm -rf "$out"
mkdir -p "$out"
fail=0 pass=0

result() { # OK WHAT [LOG]
	if [ "$1" = 1 ]; then
		printf 'PASS %s\n' "$2"
		pass=$((pass + 1))
	else
		printf 'FAIL %s\n' "$2"
		if [ -n "${3:-}" ] && [ -s "$3" ]; then
			tail -n 15 "$3" | sed 's/^/     /'
		fi
		fail=$((fail + 1))
	fi
}

# ---- pigz ----
data=$out/data
# 6 MB of text from a fixed LCG: compressible, but not trivially
awk 'BEGIN { s = 1; for (i = 0; i < 250000; i++) { s = (s * 1103515245 + 12345) % 2147483648;
	printf "%07d %08x %s %d\n", i, s, (s % 3 ? "flexsc-threads" : "exception-less"), s % 977 } }' >"$data"
want=$(sha256sum <"$data" | cut -d' ' -f1)
# runs EXE FILE: the number of FLEXSC_RAN_FILE lines in FILE for EXE (a name on PATH)
runs() { grep -c " $(readlink -f "$(type -P "$1")")\$" "$2" 2>/dev/null; }

declare -A cfgs=([default]="" [cores0]="--cores 0" [threads]="--engine threads")
for cfg in default cores0 threads; do
	gz=$out/data.$cfg.gz back=$out/data.$cfg.back log=$out/pigz.$cfg.log ran=$out/pigz.$cfg.ran
	: >"$log"
	# shellcheck disable=SC2086
	FLEXSC_RAN_FILE=$ran timeout -k 5 60 "$run" --require ${cfgs[$cfg]} -- pigz -p 8 -c "$data" >"$gz" 2>>"$log"
	c=$?
	# shellcheck disable=SC2086
	FLEXSC_RAN_FILE=$ran timeout -k 5 60 "$run" --require ${cfgs[$cfg]} -- pigz -p 8 -d -c "$gz" >"$back" 2>>"$log"
	d=$?
	got=$(sha256sum <"$back" | cut -d' ' -f1)
	plain=$(gzip -dc <"$gz" 2>>"$log" | sha256sum | cut -d' ' -f1)
	n=$(runs pigz "$ran")
	echo "compress exit $c, decompress exit $d, sha256 $got (want $want), gzip -d of it $plain, runtime started in ${n:-0} of 2 pigz runs" >>"$log"
	ok=0
	[ $c = 0 ] && [ $d = 0 ] && [ "$got" = "$want" ] && [ "$plain" = "$want" ] && [ "${n:-0}" = 2 ] && ok=1
	result $ok "pigz -p 8 round trip, flexsc-run --require ${cfgs[$cfg]:-(default)}: compress $c, decompress $d, sha256 $([ "$got" = "$want" ] && echo same || echo DIFFERS), runtime in ${n:-0} of 2" "$log"
done

# ---- stress-ng ----
work=$out/stress-ng-tmp
mkdir -p "$work"
for s in pthread mutex futex sem; do
	log=$out/stress-ng.$s.log ran=$out/stress-ng.$s.ran
	# -v: stress-ng then says how a stressor process ended (its failure
	# reports alone blame "corrupted counters" when a stressor crashed)
	(cd "$work" && FLEXSC_RAN_FILE=$ran timeout -k 5 90 "$run" --require -- stress-ng --"$s" 4 --verify \
		-t 5s --metrics-brief -v --temp-path "$work") >"$log" 2>&1
	rc=$?
	why="exit $rc"
	[ $rc = 124 ] && why="timed out after 90s"
	[ $rc = 122 ] && why="exit 122: the runtime could not start"
	n=$(runs stress-ng "$ran")
	[ "${n:-0}" -ge 1 ] || why="$why, the runtime did not run (no line for stress-ng in $ran)"
	grep -E 'fail:|error:|terminated on signal|unsuccessful|flexsc-run:' "$log" >"$log.why"
	result $((rc == 0 && ${n:-0} >= 1)) "stress-ng --$s 4 --verify -t 5s under flexsc-run --require: $why" "$log.why"
done

echo "real programs: $pass passed, $fail failed (logs in $out)"
[ $fail -eq 0 ]
