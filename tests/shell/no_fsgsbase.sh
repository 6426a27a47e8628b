#!/usr/bin/env bash
# Where the CPU or the kernel lacks FSGSBASE (a kernel before 5.9, a CPU
# before Ivy Bridge, a virtual CPU model that hides it), the runtime cannot
# start: flexsc-run says so and the program runs on plain NPTL, with the
# same results; with --require it refuses instead. Valgrind's CPU is such a
# CPU (its AT_HWCAP2 has no FSGSBASE), so the program runs under it: four
# threads passing bytes through pipes under a mutex and a condition
# variable, descriptors opened and closed, a fork and its wait. Before the
# runtime checked, the first interposed call read the GS base and died of
# SIGILL. Skipped without valgrind (scripts/deps.sh installs it for tests).
# Exit 0 pass, 1 fail, 77 skip.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/preload.bash"
cc=${CC:-cc}
command -v "$cc" >/dev/null || { echo "skip: no C compiler ($cc)"; exit 77; }
command -v valgrind >/dev/null || { echo "skip: no valgrind"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/prog.c" <<'C'
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>
enum { THREADS = 4, ROUNDS = 200 };
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int done, pipes[THREADS][2];
static void *worker(void *arg)
{
	int *p = arg;
	char c;
	for (int i = 0; i < ROUNDS; i++) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd < 0 || write(p[1], "x", 1) != 1 || read(p[0], &c, 1) != 1 || close(fd))
			return arg;
	}
	pthread_mutex_lock(&lock);
	done++;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
	return NULL;
}
int main(void)
{
	pthread_t t[THREADS];
	int st;
	if (getauxval(AT_HWCAP2) & 2) {
		puts("fsgsbase"); /* this CPU has it: nothing to test */
		return 0;
	}
	for (int i = 0; i < THREADS; i++)
		if (pipe(pipes[i]) || pthread_create(&t[i], NULL, worker, pipes[i]))
			return 1;
	pthread_mutex_lock(&lock);
	while (done < THREADS)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < THREADS; i++) {
		void *r;
		if (pthread_join(t[i], &r) || r)
			return 1;
	}
	pid_t pid = fork();
	if (pid == 0)
		_exit(write(1, "", 0) == 0 ? 7 : 1);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 7)
		return 1;
	puts("ok");
	return 0;
}
C
"$cc" -O2 -pthread -o "$tmp/prog" "$tmp/prog.c" || { echo "FAIL: the program does not compile"; exit 1; }

vg() { timeout 300 valgrind -q --tool=none --trace-children=yes "$@"; }

fail=0
out=$(vg "$run" -- "$tmp/prog" 2>"$tmp/err")
status=$?
if [ "$out" = fsgsbase ]; then
	echo "skip: valgrind's CPU has FSGSBASE here: no CPU without it to run on"
	exit 77
fi
if [ "$status" = 0 ] && [ "$out" = ok ] && grep -q "lacks FSGSBASE.*running on plain NPTL" "$tmp/err"; then
	echo "ok: without FSGSBASE the program runs on plain NPTL, and flexsc-run says so"
else
	echo "FAIL: without FSGSBASE: exit $status, output '$out', stderr: $(grep -v '^==' "$tmp/err" | head -5)"
	fail=1
fi

out=$(vg "$run" --require -- "$tmp/prog" 2>"$tmp/err")
status=$?
if [ "$status" != 0 ] && [ -z "$out" ] && grep -q "FSGSBASE" "$tmp/err"; then
	echo "ok: --require refuses to run it without FSGSBASE (exit $status), and says why"
else
	echo "FAIL: --require without FSGSBASE: exit $status, output '$out', stderr: $(grep -v '^==' "$tmp/err" | head -5)"
	fail=1
fi
exit $fail
