/*
 * pthread_kill(3) of a standard signal to a thread that computes (and
 * yields now and then), 200,000
 * times in a row: the signal is pending at most once at a time (signal(7):
 * standard signals do not queue), so the process holds few entries of the
 * user's queued-signal limit (RLIMIT_SIGPENDING, shared by every process
 * of the user; SigQ in /proc/self/status) meanwhile. The count may move
 * with other processes of the user; a bound of 1,000 more than at the
 * start leaves room for them.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>

#define CHECK_NAME "poke_flood"
#include "check.h"

static _Atomic int stop;
static _Atomic long handled;

static void on_usr1(int sig)
{
	volatile unsigned long x = 1;

	(void)sig;
	atomic_fetch_add(&handled, 1);
	for (int i = 0; i < 20000; i++)
		x = x * 3 + 1;
}

static void *compute(void *arg)
{
	volatile unsigned long x = 1;

	(void)arg;
	while (!atomic_load(&stop)) {
		for (int i = 0; i < 100000; i++)
			x = x * 3 + 1;
		sched_yield(); /* with one core, the sender must get to run too */
	}
	return NULL;
}

/* The user's queued signals (SigQ's first number), or -1. */
static long queued(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long q = -1;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "SigQ:", 5))
			q = atol(line + 5);
	if (f)
		fclose(f);
	return q;
}

int main(void)
{
	on_signal(SIGUSR1, on_usr1, SA_RESTART);
	pthread_t t = spawn(compute, NULL);
	sleep_ms(10);
	long start = queued(), most = start;
	for (int i = 0; i < 200000; i++) {
		pthread_kill(t, SIGUSR1);
		if (i % 1000 == 0) {
			long q = queued();
			most = q > most ? q : most;
		}
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	if (most > start + 1000)
		printf("poke_flood: %ld queued signals at the start, %ld at most\n", start, most);
	result("the user's queued signals grew by at most 1,000", start >= 0 && most <= start + 1000);
	result("the handler ran", atomic_load(&handled) > 0);
	return failed;
}
