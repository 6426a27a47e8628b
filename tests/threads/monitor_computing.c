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
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

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

/* The task of this process named name, or 0; *runtime: some task's name starts with "flexsc-". */
static int task_named(const char *name, int *runtime)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int tid = 0;

	while (d && (e = readdir(d)) && !tid) {
		char path[300], comm[32] = "", want[32];
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		snprintf(want, sizeof(want), "%s\n", name);
		FILE *f = fopen(path, "r");
		if (f && fgets(comm, sizeof(comm), f) && !strcmp(comm, want))
			tid = atoi(e->d_name);
		if (!strncmp(comm, "flexsc-", 7))
			*runtime = 1;
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return tid;
}

/* The monitor's wake-ups (schedstat's third field) and read calls (syscr); false if unreadable. */
static int counts(int tid, long *wakes, long *reads)
{
	char path[64], line[128];
	long ns, wait;
	int ok = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
	FILE *f = fopen(path, "r");
	if (f && fscanf(f, "%ld %ld %ld", &ns, &wait, wakes) == 3)
		ok++;
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "/proc/self/task/%d/io", tid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "syscr: %ld", reads) == 1)
			ok++;
	if (f)
		fclose(f);
	return ok == 2;
}

int main(void)
{
	pthread_t t[SPINNERS];

	/* the runtime starts its carriers, and the monitor, at the first pthread_create */
	pthread_join(spawn(spinner, NULL), NULL);
	int mon = 0, runtime = 0;
	/* it names itself once it runs: wait for that, under the runtime only */
	for (int i = 0; i < 500 && !(mon = task_named("flexsc-monitor", &runtime)) && runtime; i++)
		sleep_ms(10);
	long w0 = 0, r0 = 0, w1 = 0, r1 = 0;
	int have = mon && counts(mon, &w0, &r0);
	until_ms = now_ms() + SPIN_MS;
	for (int i = 0; i < SPINNERS; i++)
		t[i] = spawn(spinner, NULL);
	for (int i = 0; i < SPINNERS; i++)
		pthread_join(t[i], NULL);
	have = have && counts(mon, &w1, &r1);
	if (have)
		fprintf(stderr, "monitor %d: %ld wake-ups, %ld reads while the threads computed\n", mon,
			w1 - w0, r1 - r0);
	result("the monitor read /proc at most at every other look", !have || 2 * (r1 - r0) <= w1 - w0);
	return failed;
}
