/*
 * Cancellation beyond the deferred kind at a blocking call (POSIX
 * pthread_cancel, pthread_setcanceltype, pthread_cleanup_push,
 * pthread_once):
 *   1. asynchronous cancellation of a thread blocked in
 *      pthread_mutex_lock (not a cancellation point, but asynchronous
 *      cancellation may act at any time): it ends, its cleanup handler
 *      runs, the join returns PTHREAD_CANCELED, and the mutex still works;
 *   2. asynchronous cancellation of a thread that only computes and
 *      calls sched_yield (no cancellation point at all): its cleanup
 *      handler runs (cancel_async_spin.c: one that never yields);
 *   3. deferred cancellation of a thread inside a pthread_once initialiser
 *      (it sleeps, a cancellation point): POSIX says the once control is
 *      then as if pthread_once was never called, so the next pthread_once
 *      runs an initialiser instead of waiting forever.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CHECK_NAME "cancel_async"
#include "check.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int ready, cleaned;

static void cleanup(void *arg)
{
	(void)arg;
	atomic_fetch_add(&cleaned, 1);
}

static void *lock_async(void *arg)
{
	(void)arg;
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	pthread_cleanup_push(cleanup, NULL);
	atomic_store(&ready, 1);
	pthread_mutex_lock(&m); /* main holds it until after the join */
	pthread_mutex_unlock(&m);
	pthread_cleanup_pop(0);
	return NULL;
}

static volatile unsigned long spins;

static void *compute_async(void *arg)
{
	(void)arg;
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	pthread_cleanup_push(cleanup, NULL);
	atomic_store(&ready, 1);
	for (;;)
		if (++spins % 4096 == 0)
			sched_yield(); /* not a cancellation point */
	pthread_cleanup_pop(0);
	return NULL;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static _Atomic int init_runs, second_ran;

static void init_sleeps(void)
{
	atomic_fetch_add(&init_runs, 1);
	atomic_store(&ready, 1);
	for (;;)
		sleep_ms(1000); /* cancelled here */
}

static void init_quick(void)
{
	atomic_store(&second_ran, 1);
}

static void *in_once(void *arg)
{
	(void)arg;
	pthread_cleanup_push(cleanup, NULL);
	pthread_once(&once, init_sleeps);
	pthread_cleanup_pop(0);
	return NULL;
}

static void *once_again(void *arg)
{
	(void)arg;
	pthread_once(&once, init_quick);
	return NULL;
}

static void *cancel_and_join(void *(*fn)(void *))
{
	void *r = NULL;

	atomic_store(&ready, 0);
	atomic_store(&cleaned, 0);
	pthread_t t = spawn(fn, NULL);
	while (!atomic_load(&ready))
		sleep_ms(1);
	sleep_ms(30);
	int err = pthread_cancel(t);
	if (err)
		fprintf(stderr, "pthread_cancel: %s\n", strerror(err));
	pthread_join(t, &r);
	return r;
}

int main(void)
{
	void *r;

	pthread_mutex_lock(&m);
	r = cancel_and_join(lock_async);
	result("asynchronous cancellation of a thread in pthread_mutex_lock",
	       r == PTHREAD_CANCELED && cleaned == 1);
	pthread_mutex_unlock(&m);
	int err = pthread_mutex_trylock(&m);
	result("the mutex is free and usable after the cancelled waiter is gone", err == 0);
	if (!err)
		pthread_mutex_unlock(&m);

	r = cancel_and_join(compute_async);
	result("asynchronous cancellation of a computing thread runs its cleanup handler",
	       r == PTHREAD_CANCELED && cleaned == 1);

	r = cancel_and_join(in_once);
	result("a thread cancelled in its pthread_once initialiser exits cancelled",
	       r == PTHREAD_CANCELED && cleaned == 1 && init_runs == 1);
	/* in a thread: if the once control were left "running", only it would hang */
	pthread_t t = spawn(once_again, NULL);
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 10;
	err = pthread_timedjoin_np(t, NULL, &dl);
	result("the next pthread_once runs its initialiser", err == 0 && second_ran == 1);
	if (err)
		return 1; /* the thread is stuck: do not wait for it at exit */
	result("pthread_once after that is done", (pthread_once(&once, init_sleeps), init_runs == 1));

	printf("cancel_async: %s\n", failed ? "FAIL" : "PASS");
	return failed;
}
