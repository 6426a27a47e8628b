/*
 * Asynchronous cancellation (POSIX pthread_setcanceltype) of a thread that
 * computes without end and calls nothing: it ends, its cleanup handlers run
 * (in reverse order), the join returns PTHREAD_CANCELED.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define CHECK_NAME "cancel_async_spin"
#include "check.h"

static _Atomic int ready;
static char order[4];
static _Atomic int n;

static void cleanup(void *arg)
{
	order[atomic_fetch_add(&n, 1) & 3] = *(const char *)arg;
}

static volatile unsigned long spins;

static void *spin(void *arg)
{
	(void)arg;
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	pthread_cleanup_push(cleanup, "a");
	pthread_cleanup_push(cleanup, "b");
	atomic_store(&ready, 1);
	for (;;)
		spins++;
	pthread_cleanup_pop(0);
	pthread_cleanup_pop(0);
	return NULL;
}

int main(void)
{
	void *r = NULL;
	pthread_t t = spawn(spin, NULL);

	while (!atomic_load(&ready))
		sleep_ms(1);
	sleep_ms(20);
	pthread_cancel(t);
	pthread_join(t, &r);
	result("an asynchronously cancelled computing thread ends, handlers b then a",
	       r == PTHREAD_CANCELED && n == 2 && order[0] == 'b' && order[1] == 'a');
	printf("cancel_async_spin: %s\n", failed ? "FAIL" : "PASS");
	return failed;
}
