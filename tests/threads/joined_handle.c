/*
 * The handle of a thread that was already joined (POSIX leaves its use
 * undefined; NPTL returns ESRCH while the thread's stack is cached, and
 * never crashes): pthread_detach, pthread_join and pthread_getcpuclockid
 * return ESRCH; pthread_cancel returns 0 (glibc 2.34 and later: a thread
 * that has exited is not an error to cancel) or ESRCH (older glibc). And pthread_getcpuclockid of live
 * threads: the calling thread's and another's give a clock that
 * clock_gettime reads, and that does not go backwards.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define CHECK_NAME "joined_handle"
#include "check.h"

static void *quick(void *arg)
{
	return arg;
}

static volatile unsigned long sink;
static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;

static void *burn(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&gate); /* held by main while it reads our clock */
	pthread_mutex_unlock(&gate);
	return NULL;
}

static long long ns(clockid_t c, int *err)
{
	struct timespec ts;

	*err = clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(void)
{
	clockid_t cid;
	void *r;
	int e1, e2;

	pthread_t t = spawn(quick, (void *)7);
	pthread_join(t, &r);
	result("the thread is joined", r == (void *)7);
	int ce = pthread_cancel(t);
	result("pthread_cancel of a joined thread: 0 or ESRCH, no crash", ce == 0 || ce == ESRCH);
	result("pthread_detach of a joined thread: ESRCH", pthread_detach(t) == ESRCH);
	result("pthread_join of a joined thread: ESRCH", pthread_join(t, &r) == ESRCH);
	result("pthread_getcpuclockid of a joined thread: ESRCH", pthread_getcpuclockid(t, &cid) == ESRCH);

	/* a new thread after that one works as usual */
	pthread_t u = spawn(quick, (void *)8);
	pthread_join(u, &r);
	result("a later thread is created and joined", r == (void *)8);

	/* the calling thread's CPU clock */
	int err = pthread_getcpuclockid(pthread_self(), &cid);
	long long a = err ? 0 : ns(cid, &e1);
	for (unsigned long i = 0; i < 20000000; i++)
		sink += i;
	long long b = err ? 0 : ns(cid, &e2);
	result("pthread_getcpuclockid of the calling thread: a clock that counts its computing",
	       !err && !e1 && !e2 && b > a);

	/* another live thread's */
	pthread_mutex_lock(&gate);
	pthread_t v = spawn(burn, NULL);
	err = pthread_getcpuclockid(v, &cid);
	a = err ? 0 : ns(cid, &e1);
	b = err ? 0 : ns(cid, &e2);
	result("pthread_getcpuclockid of another live thread: a clock that reads",
	       !err && !e1 && !e2 && b >= a);
	pthread_mutex_unlock(&gate);
	pthread_join(v, NULL);

	printf("joined_handle: %s\n", failed ? "FAIL" : "PASS");
	return failed;
}
