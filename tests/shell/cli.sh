#!/usr/bin/env bash
# flexsc-run's command line: bad options fail with a message naming the
# problem and exit status 2, before anything runs; good ones run the program
# and pass its exit status on, with --require and the runtime started (a
# line in FLEXSC_RAN_FILE). --require, and FLEXSC_REQUIRE=1 without it:
#  - a statically linked program (cc -static), and a script whose
#    interpreter is one: a message, exit status 2, not run; without
#    --require the same message and the program runs;
#  - a set-user-ID copy of /bin/echo owned by nobody, run as root (as
#    another user: a set-group-ID copy of a supplementary group): the same,
#    and without --require it runs without the runtime (no FLEXSC_RAN_FILE
#    line: the loader did ignore LD_PRELOAD);
#  - the runtime failing to start (env FLEXSC_ENTRIES=100 sh: env starts
#    with the runtime, sh inherits FLEXSC_REQUIRE and a value it refuses):
#    exit status 122 and a message, sh never runs; without --require sh
#    runs on NPTL with a warning, and only env has a FLEXSC_RAN_FILE line.
# --stats: every process of the tree prints its counters at exit, a forked
# child that cleared its environment first as well (nginx's workers keep
# only TZ of theirs).
# A case that cannot be set up here is skipped with a note.
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
if [ ! -f "$build/libflexsc-run.so" ]; then
	echo "cli: flexsc-run refuses bad options (no $build/libflexsc-run.so: good ones not run)"
	exit $fail
fi
tmp=$(mktemp -d "$build/cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp" # the set-user-ID case runs as nobody
ran=$tmp/ran

# ran_in EXE: the runtime started in a process running EXE since $ran was emptied
ran_in() { grep -q " $(readlink -f "$(type -P "$1")")\$" "$ran" 2>/dev/null; }
# fresh: empties the marker file (writable by anyone: see above)
fresh() { : >"$ran"; chmod 666 "$ran"; }
export FLEXSC_RAN_FILE=$ran

fresh
out=$("$run" --require --entries 64 --cores 0 -- sh -c 'echo ran; exit 3')
rc=$?
[ "$out" = ran ] && [ $rc -eq 3 ] || { echo "FAIL: --entries 64 ran '$out', exit $rc (want 'ran', 3)"; fail=1; }
ran_in sh || { echo "FAIL: --require --entries 64 -- sh: no FLEXSC_RAN_FILE line for sh: the runtime did not run"; fail=1; }
fresh
"$run" --require --entries 4096 -- true || { echo "FAIL: --entries 4096 -- true failed"; fail=1; }
ran_in true || { echo "FAIL: --entries 4096 -- true: the runtime did not run (no FLEXSC_RAN_FILE line)"; fail=1; }
for o in posted type io-first io-first,type type,io-first; do
	fresh
	"$run" --require --order "$o" -- true || { echo "FAIL: --order $o -- true failed"; fail=1; }
	ran_in true || { echo "FAIL: --order $o -- true: the runtime did not run (no FLEXSC_RAN_FILE line)"; fail=1; }
done

# --stats in a parent and in a forked child that cleared its environment before exit()
cat >"$tmp/clearenv.c" <<'EOF'
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void)
{
	int st;
	pid_t p = fork();
	if (p == 0) {
		clearenv();
		exit(0);
	}
	return p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : 1;
}
EOF
if cc -o "$tmp/clearenv" "$tmp/clearenv.c" 2>"$tmp/cc.err"; then
	fresh
	"$run" --require --stats -- "$tmp/clearenv" 2>"$tmp/stats.err" || { echo "FAIL: --stats -- clearenv failed: $(head -5 "$tmp/stats.err")"; fail=1; }
	n=$(grep -c '^flexsc-run: [0-9]* exception-less calls' "$tmp/stats.err")
	[ "$n" = 2 ] || { echo "FAIL: --stats: $n processes printed their counters (want 2: the parent and the child that cleared its environment)"; fail=1; }
else
	echo "FAIL: cc clearenv.c: $(head -3 "$tmp/cc.err")"
	fail=1
fi

# --stats of a program that closes its stderr before it exits (coreutils: gnulib's close_stdout)
fresh
"$run" --require --stats -- ls / >/dev/null 2>"$tmp/stats-ls.err" || { echo "FAIL: --stats -- ls / failed: $(head -5 "$tmp/stats-ls.err")"; fail=1; }
ran_in ls || { echo "FAIL: --stats -- ls /: the runtime did not run (no FLEXSC_RAN_FILE line)"; fail=1; }
grep -q '^flexsc-run: [0-9]* exception-less calls' "$tmp/stats-ls.err" ||
	{ echo "FAIL: --stats -- ls /: no counters printed (ls closes stderr before it exits)"; fail=1; }

# not_run WHAT WANT-RC WANT-MESSAGE COMMAND...: with --require (or FLEXSC_REQUIRE=1), the
# command exits WANT-RC with WANT-MESSAGE on stderr, and never prints "ran"
not_run() {
	local what=$1 want_rc=$2 want=$3 out err rc
	shift 3
	fresh
	out=$("$@" 2>"$tmp/err")
	rc=$?
	err=$(cat "$tmp/err")
	if [ $rc -ne "$want_rc" ] || [[ $err != *"$want"* ]] || [ -n "$out" ]; then
		echo "FAIL: $what: exit $rc, stdout '$out', stderr '$err' (want $want_rc, nothing, '$want')"
		fail=1
	fi
}
# runs_anyway WHAT WANT-MESSAGE COMMAND...: without --require, prints "ran" and exits 0, with WANT-MESSAGE
runs_anyway() {
	local what=$1 want=$2 out err rc
	shift 2
	fresh
	out=$("$@" 2>"$tmp/err")
	rc=$?
	err=$(cat "$tmp/err")
	if [ $rc -ne 0 ] || [ "$out" != ran ] || [[ $err != *"$want"* ]]; then
		echo "FAIL: $what without --require: exit $rc, stdout '$out', stderr '$err' (want 0, 'ran', '$want')"
		fail=1
	fi
}
cases=

# a statically linked program, and a script it interprets
printf '#include <stdio.h>\nint main(int c, char **v) { (void)c; puts(v[1] ? v[1] : "ran"); return 0; }\n' >"$tmp/static.c"
if cc -static -o "$tmp/static" "$tmp/static.c" 2>"$tmp/cc.err"; then
	msg="$tmp/static is statically linked: it"
	not_run "--require -- static" 2 "$msg would run without FlexSC-Threads; not run (--require)" \
		"$run" --require -- "$tmp/static"
	not_run "FLEXSC_REQUIRE=1 -- static" 2 "$msg would run" env FLEXSC_REQUIRE=1 "$run" -- "$tmp/static"
	runs_anyway "static" "$msg will run without FlexSC-Threads" "$run" -- "$tmp/static"
	printf '#!%s\n' "$tmp/static" >"$tmp/script"
	chmod 755 "$tmp/script"
	not_run "--require -- script" 2 "$tmp/script: its interpreter $msg would run" \
		"$run" --require -- "$tmp/script"
	# found on PATH, as execvp finds it
	not_run "--require -- static on PATH" 2 "$msg would run" env PATH="$tmp:$PATH" "$run" --require -- static
	cases+=" static,"
else
	echo "note: cc -static fails (no static libc? libc6-dev has it): the static cases are not run"
	sed 's/^/      /' "$tmp/cc.err" | head -n 5
fi

# a secure execution: set-user-ID to another user (root: nobody), or set-group-ID to a supplementary group
cp "$(readlink -f "$(type -P echo)")" "$tmp/setid-echo"
setid=
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	chown nobody "$tmp/setid-echo" && chmod 4755 "$tmp/setid-echo" && setid="set-user-ID nobody"
else
	for g in $(id -G); do
		if [ "$g" != "$(id -g)" ]; then
			chgrp "$g" "$tmp/setid-echo" && chmod 2755 "$tmp/setid-echo" && setid="set-group-ID $g"
			break
		fi
	done
fi
if [ -z "$setid" ]; then
	echo "note: not root and no supplementary group: the set-user-ID case is not run"
elif findmnt -no OPTIONS -T "$tmp" 2>/dev/null | grep -qw nosuid; then
	echo "note: $tmp is on a nosuid file system: the set-user-ID case is not run"
elif [ "$(awk '/^NoNewPrivs:/ {print $2}' /proc/self/status)" = 1 ]; then
	echo "note: this process has no_new_privs: the set-user-ID case is not run"
else
	msg="$tmp/setid-echo runs with effective"
	not_run "--require -- $setid echo" 2 "$msg" "$run" --require -- "$tmp/setid-echo" ran
	runs_anyway "$setid echo" "$msg" "$run" -- "$tmp/setid-echo" ran
	# and the loader did ignore the preload, as flexsc-run said
	if [ -s "$ran" ]; then
		echo "FAIL: $setid echo: the runtime ran after all ($(cat "$ran")): flexsc-run's secure-execution check is wrong"
		fail=1
	fi
	cases+=" $setid,"
fi

# the runtime fails to start: FLEXSC_ENTRIES=100 (not a multiple of 64) in sh's environment
not_run "--require -- env FLEXSC_ENTRIES=100 sh" 122 \
	"the runtime cannot run here (a FLEXSC_* variable holds a value it cannot use), and FLEXSC_REQUIRE is set" \
	"$run" --require -- env FLEXSC_ENTRIES=100 sh -c 'echo ran'
ran_in env || { echo "FAIL: --require -- env FLEXSC_ENTRIES=100 sh: the runtime did not start in env"; fail=1; }
runs_anyway "env FLEXSC_ENTRIES=100 sh" "the runtime cannot run here (a FLEXSC_* variable holds a value it cannot use); running on plain NPTL" \
	"$run" -- env FLEXSC_ENTRIES=100 sh -c 'echo ran'
if ! ran_in env || ran_in sh; then
	echo "FAIL: env FLEXSC_ENTRIES=100 sh: FLEXSC_RAN_FILE has '$(cat "$ran")' (want env's line, not sh's)"
	fail=1
fi
cases+=" a runtime that cannot start"

[ $fail = 0 ] && echo "cli: flexsc-run refuses bad options and runs good ones under the runtime; --require refuses$cases"
exit $fail
