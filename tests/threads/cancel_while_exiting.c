/*
 * A thread that has begun to exit is not cancelled again (glibc marks it
 * exiting; its cancellation points and its SIGCANCEL handler then do
 * nothing), so every cleanup handler and key destructor runs to its end:
 *   1. deferred: a thread cancelled in read() whose cleanup handler and
 *      key destructor call cancellation points (usleep, write, nanosleep);
 *   2. asynchronous: a thread cancelled while it computes, cancelled again
 *      and again while its first cleanup handler computes;
 *   3. pthread_exit with a cancel request pending (cancellation disabled),
 *      whose cleanup handler enables cancellation and calls
 *      pthread_testcancel.
 * Each joins with the result of its first exit, handlers in reverse order.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "cancel_while_exiting"
#include "check.h"

static char trace[16];
static _Atomic int trace_len;
static _Atomic int ready;
static _Atomic int stop;
static pthread_key_t key;
static int devnull[2];

static void note(char c)
{
	int i = atomic_fetch_add(&trace_len, 1);

	if (i < (int)sizeof(trace) - 1)
		trace[i] = c;
}

static void reset(void)
{
	memset(trace, 0, sizeof(trace));
	atomic_store(&trace_len, 0);
	atomic_store(&ready, 0);
	atomic_store(&stop, 0);
}

/* a cleanup handler that calls cancellation points before it notes itself */
static void calls_points(void *arg)
{
	usleep(2000);
	if (write(devnull[1], "x", 1) != 1)
		note('!');
	note(*(const char *)arg);
}

static void notes(void *arg)
{
	note(*(const char *)arg);
}

static void destructor(void *value)
{
	struct timespec ts = { 0, 1000000 };

	nanosleep(&ts, NULL);
	note(*(const char *)value);
}

static void *reads(void *arg)
{
	int fd[2];
	char c;

	(void)arg;
	if (pipe(fd))
		return NULL;
	pthread_setspecific(key, "k");
	pthread_cleanup_push(notes, "a");
	pthread_cleanup_push(calls_points, "b");
	atomic_store(&ready, 1);
	if (read(fd[0], &c, 1) >= 0)
		note('?');
	pthread_cleanup_pop(0);
	pthread_cleanup_pop(0);
	return NULL;
}

static volatile unsigned long spins;

/* a cleanup handler that computes until main has cancelled its thread again many times */
static void computes(void *arg)
{
	atomic_store(&ready, 2);
	while (!atomic_load(&stop))
		spins++;
	note(*(const char *)arg);
}

static void *spins_async(void *arg)
{
	(void)arg;
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	pthread_cleanup_push(notes, "a");
	pthread_cleanup_push(computes, "b");
	atomic_store(&ready, 1);
	for (;;)
		spins++;
	pthread_cleanup_pop(0);
	pthread_cleanup_pop(0);
	return NULL;
}

static void enables_and_tests(void *arg)
{
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	pthread_testcancel();
	note(*(const char *)arg);
}

static void *exits_with_cancel_pending(void *arg)
{
	(void)arg;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_cleanup_push(notes, "a");
	pthread_cleanup_push(enables_and_tests, "b");
	atomic_store(&ready, 1);
	while (atomic_load(&ready) != 2)
		sleep_ms(1);
	pthread_exit((void *)7);
	pthread_cleanup_pop(0);
	pthread_cleanup_pop(0);
	return NULL;
}

static void wait_ready(int value)
{
	while (atomic_load(&ready) != value)
		sleep_ms(1);
}

int main(void)
{
	void *r = NULL;
	pthread_t t;

	if (pipe(devnull) || pthread_key_create(&key, destructor))
		return 1;

	reset();
	t = spawn(reads, NULL);
	wait_ready(1);
	sleep_ms(10);
	pthread_cancel(t);
	pthread_join(t, &r);
	resultf(r == PTHREAD_CANCELED && !strcmp(trace, "bak"),
		"deferred: handlers and destructor that call cancellation points run to their end (%s)", trace);

	reset();
	t = spawn(spins_async, NULL);
	wait_ready(1);
	sleep_ms(10);
	pthread_cancel(t);
	wait_ready(2);
	for (int i = 0; i < 50; i++) {
		pthread_cancel(t);
		sleep_ms(1);
	}
	atomic_store(&stop, 1);
	pthread_join(t, &r);
	resultf(r == PTHREAD_CANCELED && !strcmp(trace, "ba"),
		"asynchronous: a handler cancelled again runs to its end (%s)", trace);

	reset();
	t = spawn(exits_with_cancel_pending, NULL);
	wait_ready(1);
	pthread_cancel(t);
	atomic_store(&ready, 2);
	pthread_join(t, &r);
	resultf(r == (void *)7 && !strcmp(trace, "ba"),
		"pthread_exit with a cancel pending: a handler's pthread_testcancel does not cancel (%s)", trace);

	printf("cancel_while_exiting: %s\n", failed ? "FAIL" : "PASS");
	return failed;
}
