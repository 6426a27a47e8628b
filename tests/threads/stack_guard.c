/*
 * A thread with a small stack (64 KiB, one guard page) recurses without
 * end: the process must die of SIGSEGV, not run on into other memory.
 *   1. in a forked child;
 *   2. in a forked and exec'ed child (this program with --overflow);
 *   3. the same with a SIGSEGV handler on an alternate signal stack
 *      (sigaltstack, SA_ONSTACK): the handler runs, reports and exits 3,
 *      the way language runtimes report stack overflows; the depth
 *      reached shows the 64 KiB stack size was honoured.
 * Children disable core dumps.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK_NAME "stack_guard"
#include "check.h"

static volatile long depth;

#pragma GCC diagnostic ignored "-Winfinite-recursion"
static int recurse(int n)
{
	volatile char frame[256];

	frame[0] = (char)n;
	frame[255] = (char)n;
	depth++;
	return recurse(n + 1) + frame[n & 255]; /* not a tail call */
}

static void *overflow(void *arg)
{
	(void)arg;
	return (void *)(long)recurse(0);
}

/*
 * Frames take at least 256 bytes: a 64 KiB stack holds at most 256 of
 * them; far more means the thread did not get the stack size it asked for.
 */
static void on_segv(int sig)
{
	static const char msg[] = "caught SIGSEGV on the alternate stack\n";
	static const char deep[] = "caught SIGSEGV, but deeper than a 64 KiB stack allows\n";
	int fits = depth >= 16 && depth <= 256;

	(void)sig;
	if (write(1, fits ? msg : deep, fits ? sizeof(msg) - 1 : sizeof(deep) - 1) < 0)
		_exit(4);
	_exit(3);
}

static void *overflow_altstack(void *arg)
{
	stack_t ss;

	(void)arg;
	ss.ss_sp = malloc(1 << 16);
	ss.ss_size = 1 << 16;
	ss.ss_flags = 0;
	if (!ss.ss_sp || sigaltstack(&ss, NULL)) {
		perror("sigaltstack");
		_exit(5);
	}
	on_signal(SIGSEGV, on_segv, SA_ONSTACK);
	return (void *)(long)recurse(0);
}

/* In a child: a 64 KiB thread that overflows its stack. Never returns normally. */
static int child(void *(*fn)(void *))
{
	struct rlimit no_core = { 0, 0 };
	pthread_attr_t attr;
	pthread_t t;

	setrlimit(RLIMIT_CORE, &no_core);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	pthread_attr_setguardsize(&attr, 4096);
	int err = pthread_create(&t, &attr, fn, NULL);
	if (err) {
		fprintf(stderr, "pthread_create: %s\n", strerror(err));
		return 6;
	}
	pthread_join(t, NULL);
	fprintf(stderr, "the overflowing thread returned\n");
	return 7;
}

static char self[4096]; /* this program's path, for exec */

/* In a forked child: the overflow in a thread, without exec. */
static int forked(void *arg)
{
	(void)arg;
	return child(overflow);
}

/* In a forked child: this program again, with the argument. */
static int exec_self(void *arg)
{
	execl(self, self, (const char *)arg, (char *)NULL);
	return 127;
}

static int died_of_segv(const char *what, int status)
{
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV)
		return 1;
	if (WIFSIGNALED(status))
		fprintf(stderr, "%s: killed by signal %d (%s), want SIGSEGV\n", what, WTERMSIG(status),
			strsignal(WTERMSIG(status)));
	else
		fprintf(stderr, "%s: exited with %d, want death by SIGSEGV\n", what, WEXITSTATUS(status));
	return 0;
}

int main(int argc, char **argv)
{
	char out[256];
	ssize_t n;

	if (argc > 1 && !strcmp(argv[1], "--overflow"))
		return child(overflow);
	if (argc > 1 && !strcmp(argv[1], "--overflow-altstack"))
		return child(overflow_altstack);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		perror("readlink /proc/self/exe");
		return 1;
	}
	self[n] = 0;

	int st = run_captured(forked, NULL, out, sizeof(out));
	result("stack overflow in a thread of a forked child: SIGSEGV", died_of_segv("fork", st));

	st = run_captured(exec_self, "--overflow", out, sizeof(out));
	result("stack overflow in a thread of an exec'ed child: SIGSEGV", died_of_segv("exec", st));

	st = run_captured(exec_self, "--overflow-altstack", out, sizeof(out));
	int ok = WIFEXITED(st) && WEXITSTATUS(st) == 3 &&
		 !strcmp(out, "caught SIGSEGV on the alternate stack\n");
	if (!ok)
		fprintf(stderr, "altstack: status 0x%x, output '%s'\n", st, out);
	result("stack overflow with a handler on sigaltstack: the handler runs", ok);

	printf("stack_guard: %s\n", failed ? "FAIL" : "PASS");
	return failed;
}
