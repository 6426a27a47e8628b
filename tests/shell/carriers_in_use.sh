#!/usr/bin/env bash
# How many carriers take work (docs/threads.md, "How many carriers take
# work"): with the carriers placed by the kernel, a process starts with one
# and the monitor adds one when the process keeps them busy. Two threads
# that compute (0.6 s each, a write every millisecond) get the second
# carrier: its calls show in --stats, and so does the change. A thread that
# mostly sleeps (a write every 2 ms) never does: the second carrier takes
# none of its calls. With --cores every carrier takes work from the start:
# no change is reported. Needs 2 CPUs and a C compiler.
# Exit 0 pass, 1 fail, 77 skip.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/preload.bash"
cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "skip: no C compiler ($cc)"; exit 77; }
[ "$(nproc)" -ge 2 ] || { echo "skip: one CPU: one carrier"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/prog.c" <<'C'
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static int null_fd, compute;
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
static void *work(void *arg)
{
	double end = now() + 0.6;
	(void)arg;
	while (now() < end) {
		if (compute) {
			double until = now() + 0.001;
			while (now() < until)
				;
		} else {
			usleep(2000);
		}
		if (write(null_fd, "", 1) != 1)
			return arg;
	}
	return NULL;
}
int main(int argc, char **argv)
{
	pthread_t t[2];
	int n = argc > 1 && !strcmp(argv[1], "compute") ? 2 : 1;
	compute = n == 2;
	null_fd = open("/dev/null", O_WRONLY);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, work, NULL))
			return 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
C
"$cc" -O2 -pthread -o "$tmp/prog" "$tmp/prog.c" || { echo "FAIL: the program does not compile"; exit 1; }

fail=0
# in_use WHAT ARG WANT_CALLS WANT_CHANGES -- FLAGS...: runs prog ARG under flexsc-run --stats
# FLAGS; WANT_CALLS: "some" or "none" on carrier 1; WANT_CHANGES: "some" or "none" reported
in_use() {
	local what=$1 arg=$2 want_calls=$3 want_changes=$4
	shift 5
	stats_run "$what" "$@" -- "$tmp/prog" "$arg" || { fail=1; return; }
	local calls changes got_calls=none got_changes=none
	calls=$(sed -n 's/.*carrier 1: .*by engine: local \([0-9]*\) uring \([0-9]*\) threads \([0-9]*\) sync \([0-9]*\);.*/\1 \2 \3 \4/p' "$tmp/err" |
		awk '{ print $1 + $2 + $3 + $4 }')
	changes=$(sed -n 's/.*the number changed \([0-9]*\) times.*/\1/p' "$tmp/err")
	[ "${calls:-0}" -gt 0 ] && got_calls=some
	[ "${changes:-0}" -gt 0 ] && got_changes=some
	if [ "$got_calls" = "$want_calls" ] && [ "$got_changes" = "$want_changes" ]; then
		echo "ok: $what: carrier 1 took ${calls:-0} calls, the number changed ${changes:-0} times"
	else
		echo "FAIL: $what: carrier 1 took ${calls:-0} calls (want $want_calls), the number changed ${changes:-0} times (want $want_changes)"
		fail=1
	fi
}
in_use "two threads computing" compute some some --
in_use "one thread mostly asleep" sleep none none --
in_use "two threads computing, --cores 0,1" compute some none -- --cores 0,1
exit $fail
