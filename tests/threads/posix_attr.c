/*
 * Conformance: thread attributes and scheduling parameters (POSIX
 * pthread_attr_*, pthread_create, pthread_setschedprio,
 * sched_get_priority_min/max, sched_rr_get_interval; glibc's
 * pthread_getattr_np, pthread_attr_getstack), what attr_stack.c and
 * sched_attr.c do not already show:
 *   1. defaults of a fresh attribute object: joinable, inherit scheduling,
 *      SCHED_OTHER priority 0, system scope, a guard of one page, a stack
 *      size of at least PTHREAD_STACK_MIN;
 *   2. EINVAL for a bad detach state, inherit value, policy, scope, and a
 *      stack size under PTHREAD_STACK_MIN; PTHREAD_SCOPE_PROCESS is
 *      ENOTSUP (Linux has only system scope); the object keeps its values
 *      after a refused set;
 *   3. get* read back what was set (stack size, guard size 0 and an odd
 *      size, detach state, policy and priority);
 *   4. a thread created detached reports PTHREAD_CREATE_DETACHED through
 *      pthread_getattr_np, and joining it is EINVAL; a joinable one reports
 *      JOINABLE;
 *   5. a thread with a stack of exactly PTHREAD_STACK_MIN runs; a thread on
 *      a stack the program gives (pthread_attr_setstack) runs on it (a local
 *      variable lies inside) and pthread_getattr_np reports that stack;
 *   6. priorities: sched_get_priority_min/max are 1 and 99 for SCHED_FIFO
 *      and SCHED_RR, 0 and 0 for SCHED_OTHER, EINVAL for an unknown
 *      policy; sched_rr_get_interval of the process gives a valid
 *      timespec; pthread_attr_setschedparam of priority 5 for SCHED_OTHER
 *      is EINVAL (glibc checks it against the attribute's policy at once),
 *      and a thread created with that attribute (explicit scheduling) has
 *      SCHED_OTHER, 0; pthread_setschedprio of SCHED_OTHER to 0 is
 *      0 and to 1 EINVAL.
 * Deterministic output; exit 0 when every check held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#define CHECK_NAME "posix_attr"
#include "check.h"

static void defaults(void)
{
	pthread_attr_t a;
	struct sched_param sp = { .sched_priority = -1 };
	size_t sz = 0;
	int v = -1;

	pthread_attr_init(&a);
	pthread_attr_getdetachstate(&a, &v);
	result("default detach state: PTHREAD_CREATE_JOINABLE", v == PTHREAD_CREATE_JOINABLE);
	pthread_attr_getinheritsched(&a, &v);
	result("default inherit: PTHREAD_INHERIT_SCHED", v == PTHREAD_INHERIT_SCHED);
	pthread_attr_getschedpolicy(&a, &v);
	pthread_attr_getschedparam(&a, &sp);
	result("default policy SCHED_OTHER, priority 0", v == SCHED_OTHER && sp.sched_priority == 0);
	pthread_attr_getscope(&a, &v);
	result("default scope: PTHREAD_SCOPE_SYSTEM", v == PTHREAD_SCOPE_SYSTEM);
	pthread_attr_getguardsize(&a, &sz);
	result("default guard size: one page", sz == (size_t)sysconf(_SC_PAGESIZE));
	pthread_attr_getstacksize(&a, &sz);
	result("default stack size: at least PTHREAD_STACK_MIN", sz >= (size_t)PTHREAD_STACK_MIN);

	result_err("setdetachstate(99): EINVAL", pthread_attr_setdetachstate(&a, 99), EINVAL);
	result_err("setinheritsched(99): EINVAL", pthread_attr_setinheritsched(&a, 99), EINVAL);
	result_err("setschedpolicy(99): EINVAL", pthread_attr_setschedpolicy(&a, 99), EINVAL);
	result_err("setscope(99): EINVAL", pthread_attr_setscope(&a, 99), EINVAL);
	result_err("setscope(PTHREAD_SCOPE_PROCESS): ENOTSUP", pthread_attr_setscope(&a, PTHREAD_SCOPE_PROCESS), ENOTSUP);
	result_err("setstacksize(PTHREAD_STACK_MIN - 1): EINVAL",
		   pthread_attr_setstacksize(&a, PTHREAD_STACK_MIN - 1), EINVAL);
	pthread_attr_getdetachstate(&a, &v);
	result("a refused set changes nothing (still joinable)", v == PTHREAD_CREATE_JOINABLE);
	pthread_attr_getstacksize(&a, &sz);
	result("... (stack size still at least PTHREAD_STACK_MIN)", sz >= (size_t)PTHREAD_STACK_MIN);

	result_err("setstacksize(PTHREAD_STACK_MIN)", pthread_attr_setstacksize(&a, PTHREAD_STACK_MIN), 0);
	pthread_attr_getstacksize(&a, &sz);
	result("getstacksize reads it back", sz == (size_t)PTHREAD_STACK_MIN);
	pthread_attr_setguardsize(&a, 0);
	pthread_attr_getguardsize(&a, &sz);
	result("guard size 0 reads back 0", sz == 0);
	pthread_attr_setguardsize(&a, 12345);
	pthread_attr_getguardsize(&a, &sz);
	result("guard size 12345 reads back as set", sz == 12345);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_getdetachstate(&a, &v);
	result("detach state reads back DETACHED", v == PTHREAD_CREATE_DETACHED);
	pthread_attr_setschedpolicy(&a, SCHED_RR);
	sp.sched_priority = 7;
	pthread_attr_setschedparam(&a, &sp);
	sp.sched_priority = 0;
	pthread_attr_getschedpolicy(&a, &v);
	pthread_attr_getschedparam(&a, &sp);
	result("policy SCHED_RR, priority 7 read back", v == SCHED_RR && sp.sched_priority == 7);
	pthread_attr_destroy(&a);
}

static sem_t release;

static void *park(void *arg)
{
	(void)arg;
	sem_wait(&release);
	return (void *)3L;
}

static void detached(void)
{
	pthread_attr_t a, got;
	pthread_t t;
	int v = -1;
	void *r;

	sem_init(&release, 0, 0);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &a, park, NULL))
		exit(1);
	pthread_attr_destroy(&a);
	pthread_getattr_np(t, &got);
	pthread_attr_getdetachstate(&got, &v);
	pthread_attr_destroy(&got);
	result("a detached thread reports PTHREAD_CREATE_DETACHED", v == PTHREAD_CREATE_DETACHED);
	result_err("joining a detached thread (still running): EINVAL", pthread_join(t, &r), EINVAL);
	result_err("detaching it again: EINVAL", pthread_detach(t), EINVAL);
	sem_post(&release);

	t = spawn(park, NULL);
	pthread_getattr_np(t, &got);
	pthread_attr_getdetachstate(&got, &v);
	pthread_attr_destroy(&got);
	result("a joinable thread reports PTHREAD_CREATE_JOINABLE", v == PTHREAD_CREATE_JOINABLE);
	sem_post(&release);
	pthread_join(t, &r);
	result("and is joined with its result", r == (void *)3L);
}

static char *given_lo, *given_hi;

static void *on_given(void *arg)
{
	char here;
	pthread_attr_t got;
	void *addr = NULL;
	size_t sz = 0;

	(void)arg;
	pthread_getattr_np(pthread_self(), &got);
	pthread_attr_getstack(&got, &addr, &sz);
	pthread_attr_destroy(&got);
	int inside = &here >= given_lo && &here < given_hi;
	int reported = (char *)addr == given_lo && (char *)addr + sz == given_hi;

	return (void *)(long)(inside | reported << 1);
}

static void *small(void *arg)
{
	char buf[1024];

	(void)arg;
	memset(buf, 7, sizeof buf);
	sleep_ms(1);
	return (void *)(long)(buf[0] + buf[1023]);
}

static void stacks(void)
{
	pthread_attr_t a;
	pthread_t t;
	void *r = NULL;
	size_t size = 256 * 1024;

	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, PTHREAD_STACK_MIN);
	result_err("a thread with a PTHREAD_STACK_MIN stack starts", pthread_create(&t, &a, small, NULL), 0);
	pthread_join(t, &r);
	result("... and runs", r == (void *)14L);
	pthread_attr_destroy(&a);

	given_lo = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (given_lo == MAP_FAILED)
		exit(1);
	given_hi = given_lo + size;
	pthread_attr_init(&a);
	result_err("pthread_attr_setstack", pthread_attr_setstack(&a, given_lo, size), 0);
	void *addr = NULL;
	size_t sz = 0;

	pthread_attr_getstack(&a, &addr, &sz);
	result("pthread_attr_getstack reads it back", addr == given_lo && sz == size);
	result_err("a thread on the given stack starts", pthread_create(&t, &a, on_given, NULL), 0);
	pthread_join(t, &r);
	result("it runs on the given stack", ((long)r & 1) != 0);
	result("pthread_getattr_np reports the given stack", ((long)r & 2) != 0);
	pthread_attr_destroy(&a);
	munmap(given_lo, size);
}

static void priorities(void)
{
	struct timespec ts = { -1, -1 };
	struct sched_param sp;
	pthread_attr_t a;
	pthread_t t;

	result("SCHED_FIFO priorities 1..99", sched_get_priority_min(SCHED_FIFO) == 1 &&
						   sched_get_priority_max(SCHED_FIFO) == 99);
	result("SCHED_RR priorities 1..99", sched_get_priority_min(SCHED_RR) == 1 &&
						 sched_get_priority_max(SCHED_RR) == 99);
	result("SCHED_OTHER priorities 0..0", sched_get_priority_min(SCHED_OTHER) == 0 &&
						   sched_get_priority_max(SCHED_OTHER) == 0);
	errno = 0;
	result_err("sched_get_priority_max(99): EINVAL", sched_get_priority_max(99) == -1 ? errno : 0, EINVAL);
	result_err("sched_rr_get_interval(0)", sched_rr_get_interval(0, &ts) == 0 ? 0 : errno, 0);
	result("... a valid timespec", ts.tv_sec >= 0 && ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000L);

	pthread_attr_init(&a);
	pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&a, SCHED_OTHER);
	sp.sched_priority = 5;
	result_err("attr_setschedparam, SCHED_OTHER priority 5: EINVAL (glibc checks at set)",
		   pthread_attr_setschedparam(&a, &sp), EINVAL);
	int err = pthread_create(&t, &a, park, NULL);

	result_err("pthread_create with it (priority still 0)", err, 0);
	if (err == 0) {
		int pol = -1;

		sp.sched_priority = -1;
		pthread_getschedparam(t, &pol, &sp);
		result("the thread has SCHED_OTHER, priority 0", pol == SCHED_OTHER && sp.sched_priority == 0);
		sem_post(&release);
		pthread_join(t, NULL);
	}
	pthread_attr_destroy(&a);
	result_err("pthread_setschedprio(self, 0) under SCHED_OTHER", pthread_setschedprio(pthread_self(), 0), 0);
	result_err("pthread_setschedprio(self, 1) under SCHED_OTHER: EINVAL",
		   pthread_setschedprio(pthread_self(), 1), EINVAL);
}

int main(void)
{
	alarm(60);
	defaults();
	detached();
	stacks();
	priorities();
	return failed;
}
