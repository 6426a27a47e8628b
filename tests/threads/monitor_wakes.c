/*
 * A thread that sleeps 1 ms at a time, 300 times: the process's carriers
 * go to sleep and wake about a thousand times a second, the load of a
 * lightly used server. The runtime's monitor (docs/threads.md, "A carrier
 * blocked in the kernel") looks at the carriers once a period (10 ms)
 * while any is awake, and waits while all sleep; a carrier that wakes
 * while it waits must not wake it again before its period is over (that
 * cost the carrier a futex wake and the monitor a second wake-up in every
 * period). Checked by counting the monitor thread's wake-ups over the
 * sleeps (schedstat): at most one and a half per 10 ms of elapsed time,
 * plus a few. It woke about twice per 10 ms before (once for its period,
 * once by the first carrier to wake). A busy machine only makes the
 * periods longer and the count smaller. Plainly (no monitor thread) the
 * count is not there and the check holds.
 */
#define _GNU_SOURCE
#include <pthread.h>

#define CHECK_NAME "monitor_wakes"
#include "check.h"

#define SLEEPS 300

static void *sleeper(void *arg)
{
	(void)arg;
	for (int i = 0; i < SLEEPS; i++)
		usleep(1000);
	return NULL;
}

static void *nothing(void *arg)
{
	return arg;
}

int main(void)
{
	/* the runtime starts its carriers, and the monitor, at the first pthread_create */
	pthread_join(spawn(nothing, NULL), NULL);
	int mon = monitor_tid();
	long w0 = 0, w1 = 0, r;
	int have = mon && task_counts(mon, &w0, &r);
	uint64_t t0 = now_ms();
	pthread_join(spawn(sleeper, NULL), NULL);
	long ms = (long)(now_ms() - t0);
	have = have && task_counts(mon, &w1, &r);
	if (have)
		fprintf(stderr, "monitor %d: %ld wake-ups in %ld ms\n", mon, w1 - w0, ms);
	result("the monitor woke at most once per period, give or take", !have || 10 * (w1 - w0) <= 15 * ms / 10 + 40);
	return failed;
}
