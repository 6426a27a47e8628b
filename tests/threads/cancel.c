/*
 * Deferred cancellation:
 *   1. a thread blocked in read() on a pipe nobody writes;
 *   2. a thread blocked in pthread_cond_wait: its cleanup handler finds
 *      the mutex locked by it (an error-checking mutex: unlock succeeds
 *      only for the owner) and unlocks it;
 *   3. a thread in nanosleep();
 *   4. a thread that disabled cancellation: the request waits until it
 *      enables it again and reaches pthread_testcancel();
 *   5. a thread in pthread_join on a thread that never ends;
 * each with cleanup handlers (nested: run in reverse order) and a key
 * destructor; pthread_join returns PTHREAD_CANCELED. A thread that is
 * never cancelled returns normally with its handlers not run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "cancel"
#include "check.h"

/* the order cleanup handlers and destructors ran in, per test */
static char trace[64];
static _Atomic int trace_len;
static _Atomic int ready;
static pthread_key_t key;

static void note(char c)
{
	int i = atomic_fetch_add(&trace_len, 1);

	if (i < (int)sizeof(trace) - 1)
		trace[i] = c;
}

static void cleanup(void *arg)
{
	note(*(const char *)arg);
}

static void destructor(void *v)
{
	(void)v;
	note('D');
}

/* ---- 1. read ---- */

static int rpipe[2];

static void *in_read(void *arg)
{
	char c;

	(void)arg;
	pthread_setspecific(key, &c);
	pthread_cleanup_push(cleanup, "a");
	pthread_cleanup_push(cleanup, "b");
	atomic_store(&ready, 1);
	read(rpipe[0], &c, 1); /* nobody writes */
	note('X');             /* never reached */
	pthread_cleanup_pop(0);
	pthread_cleanup_pop(0);
	return NULL;
}

/* ---- 2. condition wait ---- */

static pthread_mutex_t m;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int unlock_err = -1;

static void unlock_mutex(void *arg)
{
	(void)arg;
	unlock_err = pthread_mutex_unlock(&m); /* 0 only if this thread holds it */
	note('u');
}

static void *in_cond_wait(void *arg)
{
	(void)arg;
	pthread_setspecific(key, &m);
	pthread_mutex_lock(&m);
	pthread_cleanup_push(unlock_mutex, NULL);
	atomic_store(&ready, 1);
	for (;;)
		pthread_cond_wait(&cv, &m); /* nobody signals */
	pthread_cleanup_pop(1);
	return NULL;
}

/* ---- 3. nanosleep ---- */

static void *in_sleep(void *arg)
{
	(void)arg;
	pthread_setspecific(key, &key);
	pthread_cleanup_push(cleanup, "s");
	atomic_store(&ready, 1);
	for (;;)
		sleep_ms(1000);
	pthread_cleanup_pop(0);
	return NULL;
}

/* ---- 5. pthread_join on a thread that never ends ---- */

static void *forever(void *arg)
{
	char c;

	(void)arg;
	return read(rpipe[0], &c, 1) == 1 ? NULL : (void *)1; /* released at the end of main */
}

static pthread_t never_ends;

static void *in_join(void *arg)
{
	(void)arg;
	pthread_setspecific(key, &key);
	pthread_cleanup_push(cleanup, "j");
	atomic_store(&ready, 1);
	pthread_join(never_ends, NULL);
	pthread_cleanup_pop(0);
	return NULL;
}

/* ---- 4. disabled, then enabled ---- */

static _Atomic int go_on;

static void *disabled(void *arg)
{
	int old;

	(void)arg;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	pthread_cleanup_push(cleanup, "e");
	atomic_store(&ready, 1);
	while (!atomic_load(&go_on))
		sleep_ms(1); /* a cancellation point, but cancellation is disabled */
	note('1');       /* still running after the request */
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
	pthread_testcancel();
	note('X');
	pthread_cleanup_pop(0);
	return (void *)(intptr_t)(old == PTHREAD_CANCEL_DISABLE);
}

/* ---- 5. never cancelled ---- */

static void *uncancelled(void *arg)
{
	(void)arg;
	pthread_cleanup_push(cleanup, "n");
	sleep_ms(5);
	pthread_cleanup_pop(0); /* popped without running */
	return (void *)42;
}

/* ---- 6. finished before the request: no cancellation point at all ---- */

static void *quick(void *arg)
{
	(void)arg;
	return (void *)42;
}

/* Starts fn, waits until it is ready, cancels it, joins; returns join's result. */
static void *cancel_one(void *(*fn)(void *), int settle_ms)
{
	void *r = NULL;

	atomic_store(&ready, 0);
	atomic_store(&trace_len, 0);
	memset(trace, 0, sizeof(trace));
	pthread_t t = spawn(fn, NULL);
	while (!atomic_load(&ready))
		sleep_ms(1);
	sleep_ms(settle_ms); /* blocked in its call by now */
	int err = pthread_cancel(t);
	if (err)
		fprintf(stderr, "pthread_cancel: %s\n", strerror(err));
	if (fn == disabled) {
		sleep_ms(30);
		atomic_store(&go_on, 1);
	}
	pthread_join(t, &r);
	return r;
}

static int expect(const char *what, void *r, const char *want_trace)
{
	int ok = r == PTHREAD_CANCELED && !strcmp(trace, want_trace);

	if (!ok)
		fprintf(stderr, "%s: join gave %p (PTHREAD_CANCELED is %p), handlers ran '%s', want '%s'\n",
			what, r, PTHREAD_CANCELED, trace, want_trace);
	return ok;
}

int main(void)
{
	pthread_mutexattr_t a;
	void *r;

	pthread_key_create(&key, destructor);
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&m, &a);
	if (pipe(rpipe)) {
		perror("pipe");
		return 1;
	}

	r = cancel_one(in_read, 50);
	result("cancel a thread blocked in read(): handlers b, a, then the key destructor",
	       expect("read", r, "baD"));

	r = cancel_one(in_cond_wait, 50);
	int ok = expect("cond_wait", r, "uD") && unlock_err == 0;
	if (unlock_err)
		fprintf(stderr, "cond_wait: the cleanup handler's unlock gave %s: the mutex was not "
				"re-acquired before the handlers ran\n", strerror(unlock_err));
	/* the mutex is free again */
	int lock_err = pthread_mutex_trylock(&m);
	if (lock_err) {
		fprintf(stderr, "cond_wait: the mutex is still held after the cancellation: %s\n",
			strerror(lock_err));
		ok = 0;
	} else {
		pthread_mutex_unlock(&m);
	}
	result("cancel a thread in pthread_cond_wait: it holds the mutex in its cleanup", ok);

	r = cancel_one(in_sleep, 20);
	result("cancel a thread in nanosleep()", expect("nanosleep", r, "sD"));

	never_ends = spawn(forever, NULL);
	r = cancel_one(in_join, 20);
	result("cancel a thread in pthread_join", expect("join", r, "jD"));

	r = cancel_one(disabled, 10);
	result("cancellation disabled: acted on at pthread_testcancel once enabled",
	       expect("disabled", r, "1e"));

	atomic_store(&trace_len, 0);
	memset(trace, 0, sizeof(trace));
	pthread_join(spawn(uncancelled, NULL), &r);
	result("a thread never cancelled returns normally, handlers popped unrun",
	       r == (void *)42 && trace_len == 0);

	/* cancelling a thread that has exited but is not joined yet */
	pthread_t t = spawn(quick, NULL);
	sleep_ms(50);
	int err = pthread_cancel(t);
	pthread_join(t, &r);
	result("pthread_cancel of a finished thread: no error, its result stands",
	       err == 0 && r == (void *)42);

	/* the joined-for thread ends once released, and can still be joined */
	void *fr = (void *)1;
	if (write(rpipe[1], "x", 1) == 1)
		pthread_join(never_ends, &fr);
	result("the thread a cancelled joiner waited for is joined afterwards", fr == NULL);

	printf("cancel: %s\n", failed ? "FAIL" : "PASS");
	return failed;
}
