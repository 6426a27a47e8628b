/*
 * Leaving a signal handler by a jump instead of returning from it, as
 * programs do to recover from SIGSEGV or to abandon work on SIGALRM. After
 * the jump the thread is no longer in a handler: its blocking calls wait
 * as any thread's do. Each case then reads a pipe that another thread
 * (started just before, so not yet run on one core) writes to:
 *   1. siglongjmp to a sigsetjmp(env, 1): the mask is the one saved;
 *   2. longjmp to a setjmp: the handler's mask stays (the signal blocked),
 *      as the kernel leaves it;
 *   3. siglongjmp from a handler running on an alternate signal stack;
 *   4. siglongjmp out of two nested handlers at once;
 *   5. after a jump, a mutex another thread holds: the wait lets it run;
 *   6. a handler that returns normally is still left as before.
 * Under FlexSC-Threads the carrier stayed marked "in a handler" after a
 * jump, every later interposed call ran directly on it, and on one carrier
 * the read blocked the writer: a hang.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK_NAME "handler_longjmp"
#include "check.h"

static sigjmp_buf senv;
static jmp_buf env;
static int pfd[2];
static volatile int nested_depth;

static void *writer(void *arg)
{
	const char *s = arg;

	if (write(pfd[1], s, strlen(s)) < 0)
		perror("write");
	return NULL;
}

/* A read that another thread ends: the data, or "" on failure. */
static int read_from_other(const char *s)
{
	char buf[32] = { 0 };
	pthread_t t = spawn(writer, (void *)s);
	ssize_t n = read(pfd[0], buf, strlen(s));
	pthread_join(t, NULL);
	return n == (ssize_t)strlen(s) && !memcmp(buf, s, strlen(s));
}

static void to_senv(int sig)
{
	(void)sig;
	siglongjmp(senv, 1);
}

static void to_env(int sig)
{
	(void)sig;
	longjmp(env, 1);
}

/* SIGUSR1 raises SIGUSR2 from inside; SIGUSR2's handler jumps out of both. */
static void outer(int sig)
{
	(void)sig;
	nested_depth = 1;
	pthread_kill(pthread_self(), SIGUSR2);
}

static void inner(int sig)
{
	(void)sig;
	nested_depth = 2;
	siglongjmp(senv, 1);
}

static atomic_int returned;
static void plain(int sig)
{
	(void)sig;
	atomic_fetch_add(&returned, 1);
}

static int blocked(int sig)
{
	sigset_t now;

	pthread_sigmask(SIG_SETMASK, NULL, &now);
	return sigismember(&now, sig);
}

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static atomic_int holding;

static void *holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	atomic_store(&holding, 1);
	sleep_ms(100);
	pthread_mutex_unlock(&m);
	return NULL;
}

int main(void)
{
	if (pipe(pfd))
		return 1;

	/* 1. */
	on_signal(SIGUSR1, to_senv, 0);
	int jumped = 0;
	if (sigsetjmp(senv, 1) == 0)
		pthread_kill(pthread_self(), SIGUSR1);
	else
		jumped = 1;
	result("siglongjmp: left the handler", jumped);
	result("siglongjmp: the saved mask (SIGUSR1 not blocked)", !blocked(SIGUSR1));
	result("siglongjmp: a read waits for another thread", read_from_other("one"));

	/* 2. */
	on_signal(SIGUSR1, to_env, 0);
	jumped = 0;
	if (setjmp(env) == 0)
		pthread_kill(pthread_self(), SIGUSR1);
	else
		jumped = 1;
	result("longjmp: left the handler", jumped);
	result("longjmp: the handler's mask stays (SIGUSR1 blocked)", blocked(SIGUSR1));
	result("longjmp: a read waits for another thread", read_from_other("two"));
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);

	/* 3. */
	stack_t ss = { .ss_size = 64 * 1024 };
	ss.ss_sp = malloc(ss.ss_size);
	if (!ss.ss_sp || sigaltstack(&ss, NULL))
		return 1;
	on_signal(SIGUSR1, to_senv, SA_ONSTACK);
	jumped = 0;
	if (sigsetjmp(senv, 1) == 0)
		pthread_kill(pthread_self(), SIGUSR1);
	else
		jumped = 1;
	result("alternate stack: left the handler", jumped);
	result("alternate stack: a read waits for another thread", read_from_other("three"));
	stack_t off = { .ss_flags = SS_DISABLE };
	sigaltstack(&off, NULL);

	/* 4. */
	on_signal(SIGUSR1, outer, 0);
	on_signal(SIGUSR2, inner, 0);
	nested_depth = 0;
	if (sigsetjmp(senv, 1) == 0)
		pthread_kill(pthread_self(), SIGUSR1);
	result("nested: left both handlers", nested_depth == 2 && !blocked(SIGUSR1) && !blocked(SIGUSR2));
	result("nested: a read waits for another thread", read_from_other("four"));

	/* 5. */
	on_signal(SIGUSR1, to_senv, 0);
	if (sigsetjmp(senv, 1) == 0)
		pthread_kill(pthread_self(), SIGUSR1);
	pthread_t h = spawn(holder, NULL);
	while (!atomic_load(&holding))
		sched_yield();
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	pthread_join(h, NULL);
	result("mutex: the holder ran and released it", 1);

	/* 6. */
	on_signal(SIGUSR1, plain, 0);
	pthread_kill(pthread_self(), SIGUSR1);
	result("returned: the handler ran", atomic_load(&returned) == 1);
	result("returned: a read waits for another thread", read_from_other("six"));
	return failed;
}
