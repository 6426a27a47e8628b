/*
 * Threads that compute, more of them than there are carriers: a carrier
 * runs one uthread for a long time with another queued behind it, the
 * case where the runtime's monitor must tell a carrier that computes from
 * one blocked in the kernel (docs/threads.md, "A carrier blocked in the
 * kernel"). It must tell so without reading the carrier's state in /proc
 * at every look: its CPU clock says it computes. Checked by counting, over
 * the computing phase, the monitor thread's wake-ups (schedstat) and its
 * read system calls (syscr in /proc/self/task/TID/io): each /proc look is
 * one read, and it may read at the first look and after an interval in
 * which the carrier hardly ran (the machine busy with other work), so at
 * most half as many reads as wake-ups. It read at every look before.
 * Plainly (no monitor thread) the counts are not there and the check holds.
 */
#define _GNU_SOURCE
#include <pthread.h>

#define CHECK_NAME "monitor_computing"
#include "check.h"

#define SPINNERS 3
#define SPIN_MS 400

static uint64_t until_ms;

static void *spinner(void *arg)
{
	volatile unsigned long n = 0;

	(void)arg;
	while (now_ms() < until_ms) /* clock_gettime: the vDSO, no switch point */
		n++;
	return NULL;
}

int main(void)
{
	pthread_t t[SPINNERS];

	/* the runtime starts its carriers, and the monitor, at the first pthread_create */
	pthread_join(spawn(spinner, NULL), NULL);
	int mon = monitor_tid();
	long w0 = 0, r0 = 0, w1 = 0, r1 = 0;
	int have = mon && task_counts(mon, &w0, &r0);
	until_ms = now_ms() + SPIN_MS;
	for (int i = 0; i < SPINNERS; i++)
		t[i] = spawn(spinner, NULL);
	for (int i = 0; i < SPINNERS; i++)
		pthread_join(t[i], NULL);
	have = have && task_counts(mon, &w1, &r1);
	if (have)
		fprintf(stderr, "monitor %d: %ld wake-ups, %ld reads while the threads computed\n", mon,
			w1 - w0, r1 - r0);
	result("the monitor read /proc at most at every other look", !have || 2 * (r1 - r0) <= w1 - w0);
	return failed;
}
