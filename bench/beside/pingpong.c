/* SPDX-License-Identifier: MIT */
/*
 * A pipe ping-pong between two threads, beside SPIN threads that compute
 * in chunks of 100,000 multiply-adds and sched_yield between them, for
 * SECONDS seconds; prints one JSON object: round trips a second, and the
 * CPU time the process got. An ordinary pthread program (bench/beside/run.sh
 * runs it on NPTL and under flexsc-run).
 *   pingpong SECONDS SPIN
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int there[2], back[2];
static atomic_int stop;

static double now(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *echo(void *arg)
{
	char c;

	(void)arg;
	while (read(there[0], &c, 1) == 1 && c != 'q')
		if (write(back[1], &c, 1) != 1)
			break;
	return NULL;
}

static void *spin(void *arg)
{
	volatile unsigned long v = (unsigned long)arg;

	while (!atomic_load(&stop)) {
		for (int i = 0; i < 100000; i++)
			v = v * 6364136223846793005ull + 1;
		sched_yield();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	int nspin = argc > 2 ? atoi(argv[2]) : 1;
	pthread_t e, s[64];
	long n = 0;
	char c = 'x';

	if (secs <= 0 || nspin < 0 || nspin > 64) {
		fprintf(stderr, "usage: pingpong SECONDS SPIN (0..64)\n");
		return 2;
	}
	if (pipe(there) || pipe(back) || pthread_create(&e, NULL, echo, NULL))
		return 1;
	for (int i = 0; i < nspin; i++)
		if (pthread_create(&s[i], NULL, spin, (void *)(long)i))
			return 1;
	double t0 = now(CLOCK_MONOTONIC), cpu0 = now(CLOCK_PROCESS_CPUTIME_ID), t;
	while ((t = now(CLOCK_MONOTONIC) - t0) < secs) {
		if (write(there[1], &c, 1) != 1 || read(back[0], &c, 1) != 1)
			return 1;
		n++;
	}
	double cpu = now(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
	atomic_store(&stop, 1);
	c = 'q';
	if (write(there[1], &c, 1) != 1)
		return 1;
	pthread_join(e, NULL);
	for (int i = 0; i < nspin; i++)
		pthread_join(s[i], NULL);
	printf("{\"spin\": %d, \"seconds\": %.3f, \"round_trips_per_s\": %.0f, \"cpu_s\": %.3f}\n", nspin, t,
	       (double)n / t, cpu);
	return 0;
}
