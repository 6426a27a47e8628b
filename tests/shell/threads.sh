#!/usr/bin/env bash
# Unmodified pthread programs under flexsc-run behave as they do on NPTL.
#
# Every tests/threads/*.c is an ordinary, self-checking pthread program
# with deterministic stdout (built with plain `cc -O2 -g -pthread`, knowing
# nothing of flexsc, cached under $FLEXSC_BUILD/threads/). Each runs once
# plainly, which must exit 0, and then under $FLEXSC_BUILD/flexsc-run in
# these configurations:
#   default  (no flag)                      a carrier per CPU, placed by the kernel
#   cores0   --cores 0                      one carrier
#   pinned   --cores 0,1                    two carriers, each pinned (2+ CPUs only)
#   threads  --engine threads
#   sync     --engine sync
#   small    --entries 64                   64 syscall entries a carrier: overflow threads
#   order    --order io-first,type          batches reordered: I/O first, then by type
#   split    --cores 0 --syscall-cores 1 --engine threads   (2+ CPUs only)
#   auto     --cores 0 --syscall-cores 1 --specialize auto  (2+ CPUs only; windows of
#            2 ms instead of 100, FLEXSC_SPECIALIZE_MS, so calls change route often)
#   contained (no flag) under a seccomp filter that allows every call, installed
#            before flexsc-run starts (tests/shell/allow_all_filter.c), as a
#            container or systemd's SystemCallFilter= starts a program: the
#            runtime starts filtered (no io_uring then: syscall threads)
# each with a timeout (a run that reaches it is backtraced with gdb first),
# requiring the plain run's exit status and stdout, and that the runtime
# ran: every run passes --require (a runtime that cannot start ends the
# program with exit status 122) and FLEXSC_RAN_FILE, which must then hold a
# line for the program (else FAIL "the runtime did not run").
# A program that exits 77 on its plain run is skipped in every
# configuration (the first line of its stdout says why).
# One line per (program, configuration), then a summary. Under tests/run.sh
# each of those lines (but the plain runs' "ok") is also appended to the file
# FLEXSC_RESULTS as "STATUS PROGRAM/CONFIG DETAIL", and run.sh counts and
# prints each as its own result (threads/PROGRAM/CONFIG).
#
# A program may carry directives in comment lines:
#   // flexsc-test: args WORD...             more arguments (no quoting)
#   // flexsc-test: skip-config NAME [why]   do not run that configuration
#   // flexsc-test: shlib                    also build this source with
#        -DFLEXSC_TEST_SHLIB -shared -fPIC into NAME.so, passed as argument 1
#   // flexsc-test: shlib-linked             build it so into libNAME.so and
#        link the program against it (its constructors run at load time)
#   // flexsc-test: liburing                 build with -DHAVE_LIBURING -luring
#        when liburing's header and library are there (else without: the
#        program then skips itself, exit 77)
#
# Environment: FLEXSC_BUILD (set by tests/run.sh), CC (cc), and for
# working on one program: FLEXSC_THREADS_ONLY (a glob of program names),
# FLEXSC_THREADS_CONFIGS (names, space-separated), FLEXSC_THREADS_TIMEOUT
# (seconds per run, default 120). The whole script stays within
# FLEXSC_TEST_TIMEOUT (tests/run.sh's limit, default 1200 s): once that is
# nearly used up, the remaining runs are reported as not run, and fail.
# Logs of every run: $FLEXSC_BUILD/threads/logs/PROGRAM.CONFIG.{out,err,ran}.
# Exit 0 pass, 1 fail, 77 skip.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/preload.bash"
cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "skip: no C compiler ($cc)"; exit 77; }
cflags=(-O2 -g -pthread)
per_run=${FLEXSC_THREADS_TIMEOUT:-120}
deadline=$(($(date +%s) + ${FLEXSC_TEST_TIMEOUT:-1200} - 60)) # 60 s: a timed-out run's backtrace, and the summary
export FLEXSC_SPECIALIZE_MS=2
out=$build/threads
logs=$out/logs
mkdir -p "$logs"
if ! "$cc" -O2 -o "$out/allow_all_filter" "$root/tests/shell/allow_all_filter.c" 2>"$logs/allow_all_filter.build"; then
	echo "FAIL: tests/shell/allow_all_filter.c does not build ($logs/allow_all_filter.build)"
	exit 1
fi

declare -A flags=(
	[default]=""
	[cores0]="--cores 0"
	[threads]="--engine threads"
	[sync]="--engine sync"
	[uring]="--engine uring"
	[small]="--entries 64"
	[order]="--order io-first,type"
	[split]="--cores 0 --syscall-cores 1 --engine threads"
	[auto]="--cores 0 --syscall-cores 1 --specialize auto"
	[pinned]="--cores 0,1"
	[contained]=""
)
# what runs flexsc-run, for the configurations that need it
declare -A wrapper=([contained]="$out/allow_all_filter")
configs=(default cores0 threads sync uring small order contained)
if [ "$(nproc)" -ge 2 ]; then
	configs+=(split auto pinned)
else
	echo "note: one CPU: configurations split, auto and pinned (CPU 1) not run"
fi
if [ -n "${FLEXSC_THREADS_CONFIGS:-}" ]; then
	read -r -a configs <<<"$FLEXSC_THREADS_CONFIGS"
	for c in "${configs[@]}"; do
		[ -n "${flags[$c]+x}" ] || { echo "FAIL: unknown configuration '$c' in FLEXSC_THREADS_CONFIGS"; exit 1; }
	done
fi

pass=0 fail=0 skip=0 failed=()

line() { # STATUS PROGRAM CONFIG [DETAIL]
	printf '%-4s %-20s %-8s %s\n' "$1" "$2" "$3" "${4:-}"
	if [ -n "${FLEXSC_RESULTS:-}" ] && [ "$1" != ok ]; then
		printf '%s %s/%s %s\n' "$1" "$2" "$3" "${4:-}" >>"$FLEXSC_RESULTS"
	fi
}

# Shows what went wrong in a run: its stdout against the plain one, its stderr.
explain() { # LOGBASE PLAINBASE
	if ! cmp -s "$1.out" "$2.out"; then
		echo "     stdout differs from the plain run's (--- plain, +++ flexsc-run):"
		diff -u "$2.out" "$1.out" | sed -n '3,$p' | head -n 20 | sed 's/^/       /'
	fi
	if [ -s "$1.err" ]; then
		echo "     stderr (last lines):"
		tail -n 10 "$1.err" | sed 's/^/       /'
	fi
	if [ -s "$1.gdb" ]; then
		echo "     where its threads were when its time ran out ($1.gdb):"
		grep -E '^(\*? +[0-9]+ +Thread|Thread [0-9]+|#[0-9]+ |--- |carrier [0-9])' "$1.gdb" |
			cut -c1-160 | head -n 120 | sed 's/^/       /'
	fi
}

# Runs one program; sets rc (124 if it ran out of time). TIMEOUT LOGBASE COMMAND...
# A run still going at TIMEOUT is backtraced first, every kernel thread of it
# and, under flexsc-run, every user thread (rt-state.gdb), into LOGBASE.gdb
# (when gdb is installed), then ended: a hang that shows up only on a CI
# machine says where it hung. timeout(1) itself allows 30 s more
# for that and kills the process group, children included, as before.
run_one() {
	local limit=$1 base=$2 tpid wd first pid
	shift 2
	rm -f "$base.gdb"
	timeout -k 5 $((limit + 30)) "$@" </dev/null >"$base.out" 2>"$base.err" &
	tpid=$!
	sleep "$limit" &
	wd=$!
	first=
	wait -n -p first "$tpid" "$wd"
	rc=$?
	if [ "$first" = "$tpid" ]; then
		kill "$wd" 2>/dev/null
		wait "$wd" 2>/dev/null
		return
	fi
	pid=$(pgrep -P "$tpid" | head -n 1)
	if [ -n "$pid" ] && command -v gdb >/dev/null; then
		timeout 25 gdb -p "$pid" -batch -nx -ex 'set pagination off' \
			-x "$root/tests/shell/rt-state.gdb" \
			-ex 'info threads' -ex 'thread apply all bt 15' >"$base.gdb" 2>&1
	fi
	kill -TERM "$tpid" 2>/dev/null
	wait "$tpid"
	rc=124
}

# Seconds this run may take: the per-run timeout, or what is left of the budget.
limit_now() {
	local left=$((deadline - $(date +%s)))
	[ "$left" -lt "$per_run" ] && echo "$left" || echo "$per_run"
}

shopt -s nullglob
sources=("$root"/tests/threads/*.c)
[ ${#sources[@]} -gt 0 ] || { echo "skip: no tests/threads/*.c"; exit 77; }

for src in "${sources[@]}"; do
	name=$(basename "$src" .c)
	# shellcheck disable=SC2053
	[[ -z "${FLEXSC_THREADS_ONLY:-}" || $name == ${FLEXSC_THREADS_ONLY} ]] || continue
	bin=$out/$name
	args=()
	declare -A skipped=()
	shlib=0 linked=0 uring=0
	while IFS= read -r d; do
		read -r -a w <<<"$d"
		case ${w[0]:-} in
		args) args+=("${w[@]:1}") ;;
		skip-config) skipped[${w[1]:-}]="${w[*]:2}" ;;
		shlib) shlib=1 ;;
		shlib-linked) linked=1 ;;
		liburing) uring=1 ;;
		*) line FAIL "$name" build "unknown directive '// flexsc-test: $d'"; fail=$((fail + 1)); failed+=("$name"); continue 2 ;;
		esac
	done < <(sed -n 's|^[[:space:]]*// flexsc-test:[[:space:]]*||p' "$src")

	# shlib-linked: the source built with FLEXSC_TEST_SHLIB is also a library
	# the program links, so its constructors run at load, before the preload's
	link=()
	if [ $linked = 1 ]; then
		if ! "$cc" "${cflags[@]}" -DFLEXSC_TEST_SHLIB -shared -fPIC -o "$out/lib$name.so" "$src" \
			2>"$logs/$name.build"; then
			line FAIL "$name" build "the linked library does not compile:"
			sed 's/^/       /' "$logs/$name.build" | head -n 20
			fail=$((fail + 1)); failed+=("$name")
			continue
		fi
		link=("-L$out" "-l$name" "-Wl,-rpath,$out")
	fi
	if [ $uring = 1 ] && printf '#include <liburing.h>\nint main(void){struct io_uring r;return io_uring_queue_init(1,&r,0);}\n' |
		"$cc" -x c -o /dev/null - -luring 2>/dev/null; then
		link+=(-DHAVE_LIBURING -luring)
	fi

	# build (cached: again only when the source, check.h or this script is newer)
	if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ] || [ "$0" -nt "$bin" ] || [ "$root/tests/threads/check.h" -nt "$bin" ]; then
		if ! "$cc" "${cflags[@]}" -o "$bin" "$src" "${link[@]}" 2>"$logs/$name.build"; then
			line FAIL "$name" build "does not compile:"
			sed 's/^/       /' "$logs/$name.build" | head -n 20
			rm -f "$bin"
			fail=$((fail + 1)); failed+=("$name")
			continue
		fi
	fi
	if [ $shlib = 1 ]; then
		if [ ! -f "$bin.so" ] || [ "$src" -nt "$bin.so" ] || [ "$0" -nt "$bin.so" ]; then
			if ! "$cc" "${cflags[@]}" -DFLEXSC_TEST_SHLIB -shared -fPIC -o "$bin.so" "$src" \
				2>"$logs/$name.build"; then
				line FAIL "$name" build "the shared library does not compile:"
				sed 's/^/       /' "$logs/$name.build" | head -n 20
				fail=$((fail + 1)); failed+=("$name")
				continue
			fi
		fi
		args=("$bin.so" "${args[@]}")
	fi

	exe=$(readlink -f "$bin") # as the runtime writes it in FLEXSC_RAN_FILE

	# the reference: plainly, on NPTL
	plain=$logs/$name.plain
	lim=$(limit_now)
	if [ "$lim" -le 0 ]; then
		line FAIL "$name" all "not run: the time budget (FLEXSC_TEST_TIMEOUT) is used up"
		fail=$((fail + 1)); failed+=("$name")
		continue
	fi
	run_one "$lim" "$plain" "$bin" "${args[@]}"
	if [ $rc -eq 77 ]; then
		# the program cannot check anything here (setxid: not root)
		line SKIP "$name" all "$(head -n 1 "$plain.out")"
		skip=$((skip + 1))
		continue
	fi
	if [ $rc -ne 0 ]; then
		line FAIL "$name" plain "exit $rc without flexsc-run: the program itself fails"
		explain "$plain" "$plain"
		fail=$((fail + 1)); failed+=("$name")
		continue
	fi
	line ok "$name" plain

	for cfg in "${configs[@]}"; do
		if [ -n "${skipped[$cfg]+x}" ]; then
			line SKIP "$name" "$cfg" "${skipped[$cfg]:-skip-config}"
			skip=$((skip + 1))
			continue
		fi
		base=$logs/$name.$cfg
		lim=$(limit_now)
		if [ "$lim" -le 0 ]; then
			line FAIL "$name" "$cfg" "not run: the time budget (FLEXSC_TEST_TIMEOUT) is used up"
			fail=$((fail + 1)); failed+=("$name/$cfg")
			continue
		fi
		start=$(date +%s%N)
		rm -f "$base.ran"
		# shellcheck disable=SC2086
		run_one "$lim" "$base" env FLEXSC_RAN_FILE="$base.ran" ${wrapper[$cfg]:-} "$run" --require ${flags[$cfg]} -- "$bin" "${args[@]}"
		ms=$((($(date +%s%N) - start) / 1000000))
		took="$((ms / 1000)).$((ms % 1000 / 100))s"
		ran=0
		grep -q " $exe\$" "$base.ran" 2>/dev/null && ran=1
		if [ $rc -eq 0 ] && [ $ran = 1 ] && cmp -s "$base.out" "$plain.out"; then
			line PASS "$name" "$cfg" "$took"
			pass=$((pass + 1))
			continue
		fi
		case $rc in
		124|137) why="timed out after ${lim}s" ;;
		0) why="exit 0 but" ;;
		122) why="exit 122: the runtime could not start (--require)" ;;
		*) why="exit $rc"; [ $rc -gt 128 ] && why="$why (signal $((rc - 128)): $(kill -l $((rc - 128)) 2>/dev/null))" ;;
		esac
		cmp -s "$base.out" "$plain.out" || why="$why, stdout differs"
		[ $ran = 1 ] || why="$why, the runtime did not run (no line for $exe in $base.ran)"
		line FAIL "$name" "$cfg" "$why; flexsc-run ${flags[$cfg]:-(default)}"
		explain "$base" "$plain"
		fail=$((fail + 1)); failed+=("$name/$cfg")
	done
	unset skipped
done

echo "threads: $pass passed, $fail failed, $skip skipped (logs in $logs)"
[ $fail -eq 0 ] || echo "failed: ${failed[*]}"
[ $fail -eq 0 ]
