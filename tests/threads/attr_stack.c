/*
 * Stack attributes (POSIX pthread_attr_setguardsize, pthread_attr_setstacksize;
 * pthread_getattr_np):
 *   1. pthread_getattr_np of a thread reports its real stack: the
 *      thread's own local variable lies inside [stackaddr, stackaddr +
 *      stacksize), the size is at least what was asked, the guard size is
 *      the one asked for;
 *   2. changing the attribute object after pthread_create does not change
 *      the running thread (the implementation copies it);
 *   3. a write into the guard area (a guard of 64 KiB, 32 KiB below the
 *      stack's lowest byte) dies of SIGSEGV: in a forked child, without
 *      core dumps;
 *   4. the same for a thread created with no attribute object after
 *      pthread_setattr_default_np set a 512 KiB stack and a 64 KiB guard
 *      (glibc extension): it reports them (the size within 16 KiB: NPTL
 *      takes its TLS from it) and a write into its guard dies of SIGSEGV;
 *   5. a thread with a stack of 16 KiB (PTHREAD_STACK_MIN) that uses 11,000
 *      bytes of it (about 11,800 fit on NPTL, whose TLS and descriptor come
 *      out of the size asked for): it runs to its end, in a forked child.
 *      A runtime that took its own struct, TLS and frames out of the size
 *      asked for too left less than NPTL, and the thread died of SIGSEGV.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK_NAME "attr_stack"
#include "check.h"

#define STACK (256 * 1024)
#define GUARD (64 * 1024)

static pthread_attr_t attr;
static pthread_barrier_t bar;

struct seen {
	void *addr;
	size_t size, guard;
	uintptr_t local;
	int err;
};

static void look(struct seen *s)
{
	pthread_attr_t a;
	volatile char local = 0;

	s->local = (uintptr_t)&local;
	s->err = pthread_getattr_np(pthread_self(), &a);
	if (!s->err) {
		pthread_attr_getstack(&a, &s->addr, &s->size);
		pthread_attr_getguardsize(&a, &s->guard);
		pthread_attr_destroy(&a);
	}
}

static int fits(const struct seen *s)
{
	return !s->err && s->local >= (uintptr_t)s->addr && s->local < (uintptr_t)s->addr + s->size &&
	       s->size >= STACK && s->guard == GUARD;
}

static void *reporter(void *arg)
{
	look(arg);
	pthread_barrier_wait(&bar); /* main changes the attribute object */
	pthread_barrier_wait(&bar);
	look((struct seen *)arg + 1);
	return NULL;
}

static __attribute__((noinline)) void use_stack(size_t n)
{
	char *p = __builtin_alloca(n);

	memset(p, 1, n);
	__asm__ volatile("" : : "r"(p) : "memory");
}

static void *deep(void *arg)
{
	use_stack(11000);
	return arg;
}

static void *into_guard(void *arg)
{
	struct seen s;

	(void)arg;
	look(&s);
	if (s.err)
		_exit(2);
	volatile char *p = (char *)s.addr - GUARD / 2;
	*p = 1; /* must fault */
	_exit(0);
}

int main(void)
{
	struct seen s[2];
	pthread_t t;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STACK);
	pthread_attr_setguardsize(&attr, GUARD);
	pthread_barrier_init(&bar, NULL, 2);
	if (pthread_create(&t, &attr, reporter, s)) {
		fprintf(stderr, "pthread_create failed\n");
		return 1;
	}
	pthread_barrier_wait(&bar);
	pthread_attr_setstacksize(&attr, 4 * STACK);
	pthread_attr_setguardsize(&attr, 2 * GUARD);
	pthread_barrier_wait(&bar);
	pthread_join(t, NULL);
	result("pthread_getattr_np reports the thread's real stack and guard", fits(&s[0]));
	result("changing the attribute object afterwards leaves the thread's stack as created",
	       fits(&s[1]) && s[1].addr == s[0].addr && s[1].size == s[0].size);

	pthread_attr_setstacksize(&attr, STACK);
	pthread_attr_setguardsize(&attr, GUARD);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		struct rlimit no = { 0, 0 };
		setrlimit(RLIMIT_CORE, &no);
		if (pthread_create(&t, &attr, into_guard, NULL))
			_exit(3);
		pthread_join(t, NULL);
		_exit(4);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	result("a write into the guard area set in the attribute dies of SIGSEGV",
	       WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	if (!(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV))
		fprintf(stderr, "child status 0x%x\n", st);

	/* 4. the default attribute */
	pthread_attr_t d;
	pthread_attr_init(&d);
	pthread_attr_setstacksize(&d, 512 * 1024);
	pthread_attr_setguardsize(&d, GUARD);
	int err = pthread_setattr_default_np(&d);
	if (err || pthread_create(&t, NULL, reporter, s)) {
		fprintf(stderr, "pthread_setattr_default_np or pthread_create failed\n");
		return 1;
	}
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	pthread_join(t, NULL);
	long off = (long)s[0].size - 512 * 1024;
	result("with no attribute object, the default attribute's stack size and guard",
	       !s[0].err && off > -16384 && off < 16384 && s[0].guard == GUARD &&
		       s[0].local >= (uintptr_t)s[0].addr && s[0].local < (uintptr_t)s[0].addr + s[0].size);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct rlimit no = { 0, 0 };
		setrlimit(RLIMIT_CORE, &no);
		if (pthread_create(&t, NULL, into_guard, NULL))
			_exit(3);
		pthread_join(t, NULL);
		_exit(4);
	}
	waitpid(pid, &st, 0);
	result("a write into the default attribute's guard area dies of SIGSEGV",
	       WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);

	/* 5. a small stack, used as far as NPTL lets it be */
	use_stack(1); /* memset resolved here, not on the small stack */
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct rlimit no = { 0, 0 };
		setrlimit(RLIMIT_CORE, &no);
		pthread_attr_t small;
		pthread_attr_init(&small);
		pthread_attr_setstacksize(&small, 16384);
		if (pthread_create(&t, &small, deep, NULL))
			_exit(3);
		pthread_join(t, NULL);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	result("a 16 KiB stack holds the 11,000 bytes a thread uses of it", WIFEXITED(st) && WEXITSTATUS(st) == 0);

	printf("attr_stack: %s\n", failed ? "FAIL" : "PASS");
	return failed;
}
