/* SPDX-License-Identifier: MIT */
/*
 * load: a plain pthread program that holds one kind of load for a while,
 * so that bench/monitor/run.sh can measure what the runtime's monitor
 * thread costs meanwhile (docs/results.md, "The monitor's cost").
 *
 *   load MODE SECONDS
 *
 * idle      four threads wait on a condition variable, main sleeps
 * tick      one thread sleeps 1 ms at a time (a lightly loaded server)
 * pingpong  two threads hand a turn back and forth through a mutex and
 *           condition variables (a busy server: carriers never idle)
 * spin      three threads compute (more than there are carriers: a
 *           computing carrier with a queued thread, the case the monitor
 *           must ask the kernel about); SIGALRM ends it (exit status 142
 *           from a shell), since main never runs again under a cooperative
 *           runtime
 *
 * Nothing here is timed: the program only holds the load and exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv[2] = { PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER };
static int turn;
static atomic_int stop;

static void *waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	while (!atomic_load(&stop))
		pthread_cond_wait(&cv[0], &m);
	pthread_mutex_unlock(&m);
	return NULL;
}

static void *ticker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		usleep(1000);
	return NULL;
}

static void *player(void *arg)
{
	int me = (int)(long)arg;

	pthread_mutex_lock(&m);
	while (!atomic_load(&stop)) {
		while (turn != me && !atomic_load(&stop))
			pthread_cond_wait(&cv[me], &m);
		turn = !me;
		pthread_cond_signal(&cv[!me]);
	}
	pthread_cond_signal(&cv[!me]);
	pthread_mutex_unlock(&m);
	return NULL;
}

static void *spinner(void *arg)
{
	volatile unsigned long n = 0;

	(void)arg;
	for (;;)
		n++; /* ended by exit(): a cooperative runtime would not let main run again */
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*fn)(void *) = NULL;
	int n = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: load idle|tick|pingpong|spin SECONDS\n");
		return 2;
	}
	if (!strcmp(argv[1], "idle"))
		fn = waiter, n = 4;
	else if (!strcmp(argv[1], "tick"))
		fn = ticker, n = 1;
	else if (!strcmp(argv[1], "pingpong"))
		fn = player, n = 2;
	else if (!strcmp(argv[1], "spin"))
		fn = spinner, n = 3;
	else {
		fprintf(stderr, "load: unknown mode %s\n", argv[1]);
		return 2;
	}
	pthread_t t[4];
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, fn, (void *)(long)i)) {
			perror("pthread_create");
			return 1;
		}
	if (fn == spinner)
		alarm((unsigned)atoi(argv[2])); /* main never runs again: the spinners keep every carrier */
	struct timespec ts = { atoi(argv[2]), 0 };
	while (nanosleep(&ts, &ts))
		;
	if (fn == spinner)
		exit(0);
	atomic_store(&stop, 1);
	pthread_mutex_lock(&m);
	pthread_cond_broadcast(&cv[0]);
	pthread_cond_broadcast(&cv[1]);
	pthread_mutex_unlock(&m);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
