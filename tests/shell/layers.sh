#!/usr/bin/env bash
# The layers point one way (docs/design.md, "Layers"): a file of one layer
# includes only headers of its own layer or of those below it, and its
# functions call only functions of those layers.
#   1 src/core     what every layer shares: entries, queues' structures,
#                  identity, descriptor facts, the syscall table, the OS
#   2 src/engine   io_uring, syscall threads, synchronous
#   2 src/batch    the batch policy (when to flush, in what order)
#   3 src/api      the public API: registration, posting, flushing, waiting
#   4 src/threads  FlexSC-Threads: carriers, uthreads, the scheduler
#   5 src/preload  the interposed libc functions, the edge
# Read from the objects of BUILD (nm): every undefined fx_ or flexsc_
# symbol of an object must be defined in its layer or below, or have a
# weak default there that a higher layer replaces at link time (musl's
# weak_alias pattern). libc's names are not checked: the preload
# replaces them for the whole process, callers included, by design.
# KNOWN lists the calls upward left to remove (each "caller symbol");
# the check fails on any other, and on a KNOWN one that is gone.
# Exit 0 pass, 1 fail, 77 skip.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${FLEXSC_BUILD:-}
[ -n "$build" ] || { echo "skip: FLEXSC_BUILD is not set"; exit 77; }
command -v nm >/dev/null || { echo "skip: no nm"; exit 77; }

# Calls upward that remain: the engines complete entries through the
# queue (the entry life cycle still lives in src/api/queue.c), and the
# scheduler reaches three of the preload's functions.
KNOWN="
src/engine/systhreads fx_queue_complete
src/engine/systhreads fx_queue_run_here
src/engine/uring fx_queue_complete
src/engine/uring fx_queue_reroute
src/engine/uring fx_wake_pending
src/threads/poke fx_cancel_async_poked
src/threads/sched fx_thread_finished
src/threads/start fx_real_sigaction
src/threads/signals fx_real_sigaction
"

layer() {
	case $1 in
	src/core/*) echo 1 ;;
	src/engine/* | src/batch/*) echo 2 ;;
	src/api/*) echo 3 ;;
	src/threads/*) echo 4 ;;
	src/preload/*) echo 5 ;;
	*) echo 0 ;;
	esac
}

cd "$root"
objs=()
for src in src/*/*.c src/*/*.S; do
	o=$build/${src%.*}.o
	[ -f "$o" ] || { echo "skip: $o is missing (make builds it; sanitizer builds lack the runtime's)"; exit 77; }
	[ "$(layer "$src")" != 0 ] || { echo "FAIL: $src is in no layer (add its directory here and to docs/design.md)"; exit 1; }
	objs+=("${src%.*}")
done

declare -A strong weak
for o in "${objs[@]}"; do
	while read -r _ type sym; do
		case $type in
		T | D | B | R) strong[$sym]=$o ;;
		W | V) weak[$sym]=$o ;;
		esac
	done < <(nm --defined-only "$build/$o.o")
done

fail=0 found=""
# includes: a file includes headers of its layer or below
for f in src/*/*.[chS]; do
	lf=$(layer "$f")
	for h in $(sed -n 's/^#[[:space:]]*include[[:space:]]*"\([a-z]*\/[^"]*\)".*/\1/p' "$f"); do
		[ "$(layer "src/$h")" -le "$lf" ] && continue
		echo "FAIL: $f (layer $lf) includes $h (layer $(layer "src/$h"))"
		fail=1
	done
done
for o in "${objs[@]}"; do
	lo=$(layer "$o")
	for sym in $(nm -u "$build/$o.o" | awk '{ print $2 }' | grep -E '^(fx|flexsc)_'); do
		d=${strong[$sym]:-${weak[$sym]:-}}
		[ -n "$d" ] || continue
		[ "$(layer "$d")" -le "$lo" ] && continue
		w=${weak[$sym]:-}
		[ -n "$w" ] && [ "$(layer "$w")" -le "$lo" ] && continue
		found+="$o $sym"$'\n'
		if ! grep -qx "$o $sym" <<<"$KNOWN"; then
			echo "FAIL: $o (layer $lo) calls $sym of $d (layer $(layer "$d"))"
			fail=1
		fi
	done
done
while read -r k; do
	[ -n "$k" ] || continue
	grep -qx "$k" <<<"$found" || { echo "FAIL: '$k' is listed as a call upward but is gone: take it off KNOWN"; fail=1; }
done <<<"$KNOWN"
[ $fail = 0 ] && echo "ok: includes point down; calls of ${#objs[@]} objects too, but for $(grep -c . <<<"$KNOWN") listed ones"
exit $fail
