/*
 * A thread's own CPU affinity (sched_getaffinity(2), pthread_getaffinity_np(3)):
 * pid 0 names the calling thread, and a thread starts with its creator's
 * set, so in a program nobody pinned, the main thread and a new thread
 * both see every CPU the process may use, which is what nproc(1) prints
 * and what programs size their thread pools by. sched_setaffinity(0, ...)
 * changes the caller's set: it reads back, and a thread created after
 * inherits it. The count is printed (the same machine for the plain run
 * and the others).
 * Under FlexSC-Threads the carriers are pinned, one CPU each, and glibc's
 * sched_getaffinity answered the carrier's: nproc under flexsc-run said 1
 * on a 2-CPU machine.
 */
#define _GNU_SOURCE
#include <sched.h>

#define CHECK_NAME "affinity_self"
#include "check.h"

static cpu_set_t start;

/* A new thread's own set: must be *want, its creator's. */
static void *other(void *want)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	EXPECT(sched_getaffinity(0, sizeof(s), &s) == 0, "sched_getaffinity: %s", strerror(errno));
	EXPECT(CPU_EQUAL(&s, (cpu_set_t *)want), "a new thread sees %d CPUs, its creator %d", CPU_COUNT(&s),
	       CPU_COUNT((cpu_set_t *)want));
	return NULL;
}

int main(void)
{
	cpu_set_t s, one;
	pthread_t t;

	CPU_ZERO(&start);
	result("sched_getaffinity(0) of the main thread", sched_getaffinity(0, sizeof(start), &start) == 0);
	printf("%s: the main thread may run on %d CPUs\n", CHECK_NAME, CPU_COUNT(&start));
	long seen = sysconf(_SC_NPROCESSORS_ONLN);
	result("no more CPUs than are online", CPU_COUNT(&start) >= 1 && CPU_COUNT(&start) <= seen);
	CPU_ZERO(&s);
	result("pthread_getaffinity_np of itself: the same set",
	       pthread_getaffinity_np(pthread_self(), sizeof(s), &s) == 0 && CPU_EQUAL(&s, &start));

	long before = atomic_load(&expect_misses);
	pthread_create(&t, NULL, other, &start);
	pthread_join(t, NULL);
	result("a new thread sees the same set", atomic_load(&expect_misses) == before);

	int first = -1;
	for (int cpu = 0; cpu < CPU_SETSIZE && first < 0; cpu++)
		if (CPU_ISSET(cpu, &start))
			first = cpu;
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	result("sched_setaffinity(0) to its first CPU", sched_setaffinity(0, sizeof(one), &one) == 0);
	CPU_ZERO(&s);
	result("reads back that one CPU", sched_getaffinity(0, sizeof(s), &s) == 0 && CPU_EQUAL(&s, &one));
	before = atomic_load(&expect_misses);
	pthread_create(&t, NULL, other, &one);
	pthread_join(t, NULL);
	result("a thread created now inherits that one CPU", atomic_load(&expect_misses) == before);
	CPU_ZERO(&s);
	errno = 0;
	result("an empty set: EINVAL", sched_setaffinity(0, sizeof(s), &s) == -1 && errno == EINVAL);
	result("the whole set again", sched_setaffinity(0, sizeof(start), &start) == 0);
	return failed;
}
