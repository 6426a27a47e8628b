/*
 * Detached threads, pthread_exit from main, pthread_once under contention.
 *   - 32 threads race on one pthread_once whose routine blocks (usleep)
 *     midway: it runs exactly once, and every caller returns only after it
 *     finished;
 *   - pthread_detach of a thread that already finished, and of a running one;
 *   - main starts detached workers (attribute and pthread_detach) and a
 *     joinable one nobody joins, then calls pthread_exit: the process lives
 *     on until the last of them finishes, the last prints the summary, and
 *     the process exits with status 0 running its atexit handler.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK_NAME "detach_exit"
#include "check.h"

/* A thread started detached (by its attribute); the program stops if it cannot start. */
static void spawn_detached(void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	pthread_t t;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	int err = pthread_create(&t, &attr, fn, arg);
	if (err) {
		fprintf(stderr, "pthread_create: %s\n", strerror(err));
		exit(1);
	}
	pthread_attr_destroy(&attr);
}

/* ---- pthread_once ---- */

#define ONCE_THREADS 32
static pthread_once_t once = PTHREAD_ONCE_INIT;
static _Atomic int once_runs, once_finished, once_bad;
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t start_cond = PTHREAD_COND_INITIALIZER;
static int started, go;

static void init_routine(void)
{
	atomic_fetch_add(&once_runs, 1);
	usleep(50000); /* blocks: the other callers must wait, not run it again */
	atomic_store(&once_finished, 1);
}

static void *once_caller(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&start_lock);
	started++;
	pthread_cond_broadcast(&start_cond);
	while (!go)
		pthread_cond_wait(&start_cond, &start_lock);
	pthread_mutex_unlock(&start_lock);
	pthread_once(&once, init_routine);
	if (!atomic_load(&once_finished))
		atomic_store(&once_bad, 1); /* returned before the routine finished */
	return NULL;
}

static int test_once(void)
{
	pthread_t t[ONCE_THREADS];

	for (int i = 0; i < ONCE_THREADS; i++)
		t[i] = spawn(once_caller, NULL);
	pthread_mutex_lock(&start_lock);
	while (started < ONCE_THREADS)
		pthread_cond_wait(&start_cond, &start_lock);
	go = 1;
	pthread_cond_broadcast(&start_cond);
	pthread_mutex_unlock(&start_lock);
	for (int i = 0; i < ONCE_THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_once(&once, init_routine); /* done: returns at once */
	int ok = atomic_load(&once_runs) == 1 && !atomic_load(&once_bad);
	if (!ok)
		fprintf(stderr, "pthread_once: routine ran %d times, early return %d\n",
			atomic_load(&once_runs), atomic_load(&once_bad));
	return ok;
}

/* ---- detach ---- */

static void *quick(void *arg)
{
	return arg;
}

static _Atomic int gate;

static void *gated(void *arg)
{
	while (!atomic_load(&gate))
		usleep(1000);
	return arg;
}

static int test_detach(void)
{
	pthread_t a = spawn(quick, NULL), b = spawn(gated, NULL);
	int ok = 1;

	usleep(20000); /* a has finished */
	if (pthread_detach(a)) {
		fprintf(stderr, "pthread_detach of a finished thread failed\n");
		ok = 0;
	}
	if (pthread_detach(b)) {
		fprintf(stderr, "pthread_detach of a running thread failed\n");
		ok = 0;
	}
	atomic_store(&gate, 1);
	return ok;
}

/* ---- main exits first ---- */

#define WORKERS 24
static _Atomic int remaining = WORKERS + 1; /* + the joinable one */
static _Atomic long total;
static pthread_t joinable;

static void finish_one(long contribution)
{
	atomic_fetch_add(&total, contribution);
	if (atomic_fetch_sub(&remaining, 1) == 1) {
		/* the last one: everybody's work is in */
		result("the last thread sees all work done",
		       atomic_load(&total) == (long)WORKERS * (WORKERS + 1) / 2 * 1000 + 5);
	}
}

static void *worker(void *arg)
{
	long id = (long)(intptr_t)arg;

	usleep((useconds_t)(1000 * (1 + id % 5)));
	/* a detached thread can still lock, sleep and do I/O after main has gone */
	struct timespec ts = { 0, 2000000 };
	nanosleep(&ts, NULL);
	finish_one((id + 1) * 1000);
	return NULL;
}

/* Set by main once its last line is out: the summary must come after it. */
static _Atomic int main_said_exit;

static void *lingering(void *arg)
{
	(void)arg;
	/*
	 * A handshake, not a head start, orders the two lines: main may be
	 * descheduled for any time between starting this thread and printing.
	 */
	while (!atomic_load(&main_said_exit))
		usleep(1000);
	usleep(100000); /* then outlives main's pthread_exit by a good margin */
	finish_one(5);
	return NULL;
}

static void at_exit_handler(void)
{
	printf("detach_exit: atexit handler ran, %d threads unfinished\n", atomic_load(&remaining));
}

int main(void)
{
	result("pthread_once under contention runs once, callers wait", test_once());
	result("pthread_detach of finished and running threads", test_detach());
	if (failed) {
		printf("detach_exit: FAIL\n");
		return 1;
	}
	atexit(at_exit_handler);
	for (long i = 0; i < WORKERS; i++) {
		if (i % 2)
			spawn_detached(worker, (void *)(intptr_t)i);
		else
			pthread_detach(spawn(worker, (void *)(intptr_t)i));
	}
	joinable = spawn(lingering, NULL);
	printf("detach_exit: main calls pthread_exit\n");
	fflush(stdout);
	atomic_store(&main_said_exit, 1);
	pthread_exit(NULL);
}
