#!/usr/bin/env bash
# A thread alone makes its calls itself: on the default engine, a process
# whose only thread opens and closes a file 200 times runs every call in
# place (--stats: by engine local, none on the ring or a syscall thread),
# since nothing could run while a posted call waits. The rule's limits:
# with a second thread (blocked in a read meanwhile) the same calls go to
# an engine, and so they do when the user chose one (--engine uring,
# --syscall-cores). And such a process has no other kernel thread: the
# runtime's (signal thread, syscall threads, context anchor) start when
# first needed, and a thread that makes every call itself needs none.
# docs/threads.md, "A thread alone"; alone_calls.c (in tests/threads)
# checks how such calls behave. Needs a C compiler.
# Exit 0 pass, 1 fail, 77 skip.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/preload.bash"
cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "skip: no C compiler ($cc)"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/prog.c" <<'C'
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static int p[2];
static void *reader(void *arg) { char c; (void)arg; return read(p[0], &c, 1) == 1 ? NULL : arg; }
int main(int argc, char **argv)
{
	pthread_t t;
	int pair = argc > 1 && !strcmp(argv[1], "pair");
	if (pipe(p) || (pair && pthread_create(&t, NULL, reader, NULL)))
		return 1;
	if (pair)
		usleep(100000); /* the reader's call in flight */
	for (int i = 0; i < 200; i++) {
		int fd = open("/etc/hostname", O_RDONLY);
		if (fd < 0 || close(fd))
			return 1;
	}
	if (pair && (write(p[1], "x", 1) != 1 || pthread_join(t, NULL)))
		return 1;
	if (argc > 1 && !strcmp(argv[1], "tasks")) {
		DIR *d = opendir("/proc/self/task");
		int n = 0;
		while (d && readdir(d))
			n++;
		printf("%d\n", n - 2); /* . and .. */
	}
	return 0;
}
C
"$cc" -O2 -pthread -o "$tmp/prog" "$tmp/prog.c" || { echo "FAIL: the program does not compile"; exit 1; }

fail=0
# routes WHAT WANT ARG -- FLAGS...: runs prog ARG under flexsc-run --stats FLAGS;
# WANT "here": every call ran in place; "engine": 200 or more went to the ring or a syscall thread
routes() {
	local what=$1 want=$2 arg=$3
	shift 4
	stats_run "$what" "$@" -- "$tmp/prog" $arg || { fail=1; return; }
	# sums over carriers: "... by engine: local L uring U threads T sync S; ..."
	read -r local away <<<"$(sed -n 's/.*by engine: local \([0-9]*\) uring \([0-9]*\) threads \([0-9]*\) sync \([0-9]*\);.*/\1 \2 \3/p' "$tmp/err" |
		awk '{ l += $1; a += $2 + $3 } END { print l + 0, a + 0 }')"
	if [ "$want" = here ] && [ "$local" -ge 400 ] && [ "$away" = 0 ]; then
		echo "ok: $what: $local calls in place, none sent away"
	elif [ "$want" = engine ] && [ "$away" -ge 200 ]; then
		echo "ok: $what: $away calls to an engine"
	else
		echo "FAIL: $what: $local calls in place, $away to an engine (want $want)"
		fail=1
	fi
}
routes "one thread, default engine" here alone --
# the same loop: the process's kernel threads at its end
rm -f "$tmp/ran"
tasks=$(FLEXSC_RAN_FILE=$tmp/ran timeout 60 "$run" --require -- "$tmp/prog" tasks 2>"$tmp/err")
if ! grep -q " $tmp/prog\$" "$tmp/ran" 2>/dev/null; then
	echo "FAIL: one thread, its kernel threads: the runtime did not run ($(head -3 "$tmp/err"))"
	fail=1
elif [ "$tasks" = 1 ]; then
	echo "ok: one thread that makes its calls itself is its process's only kernel thread"
else
	echo "FAIL: one thread that makes its calls itself: its process has $tasks kernel threads (want 1)"
	fail=1
fi
routes "a second thread blocked meanwhile" engine pair --
routes "one thread, --engine uring" engine alone -- --engine uring
routes "one thread, --engine threads" engine alone -- --engine threads
if [ "$(nproc)" -ge 2 ]; then
	routes "one thread, --syscall-cores 1" engine alone -- --cores 0 --syscall-cores 1
fi
exit $fail
