/*
 * Thread affinity calls a program makes on itself and on another thread:
 * pthread_setaffinity_np to CPU 0 succeeds and pthread_getaffinity_np
 * reports exactly CPU 0; an empty set and a set of only a CPU the machine
 * does not have fail with EINVAL and leave the affinity as it was; the
 * thread runs on afterwards (its work completes).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#define CHECK_NAME "affinity"
#include "check.h"

static int only_cpu0(pthread_t t)
{
	cpu_set_t got;

	if (pthread_getaffinity_np(t, sizeof(got), &got))
		return 0;
	return CPU_COUNT(&got) == 1 && CPU_ISSET(0, &got);
}

static void *worker(void *arg)
{
	cpu_set_t set;
	volatile unsigned long sum = 0;

	(void)arg;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	result("pin itself to CPU 0", pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0);
	result("reads back CPU 0 only", only_cpu0(pthread_self()));
	CPU_ZERO(&set);
	result("empty set: EINVAL", pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == EINVAL);
	CPU_SET(CPU_SETSIZE - 1, &set);
	result("only a CPU the machine lacks: EINVAL",
	       pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == EINVAL);
	result("affinity unchanged by the failures", only_cpu0(pthread_self()));
	for (unsigned long i = 0; i < 1000000; i++)
		sum += i;
	return (void *)(__INTPTR_TYPE__)(sum == 499999500000ul);
}

int main(void)
{
	pthread_t t;
	void *r = NULL;

	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	pthread_join(t, &r);
	result("the pinned thread finished its work", r == (void *)1);
	return failed;
}
