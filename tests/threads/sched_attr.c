/*
 * Scheduling attributes and yielding (POSIX pthread_attr_setschedpolicy,
 * pthread_attr_setschedparam, pthread_attr_setinheritsched,
 * pthread_getschedparam, pthread_setschedparam, sched_yield):
 *   1. pthread_getschedparam of the calling thread: SCHED_OTHER, priority 0;
 *      (pthread_getattr_np of a thread reports its policy, priority and
 *      inherit-scheduling too);
 *   2. a thread created with PTHREAD_EXPLICIT_SCHED and a policy and
 *      priority reports them (SCHED_FIFO 10 as root, else SCHED_OTHER 0 as
 *      a SCHED_OTHER thread cannot be raised), and one created with
 *      PTHREAD_INHERIT_SCHED from such a thread inherits them;
 *   3. pthread_setschedparam, then pthread_getschedparam, from another thread;
 *   4. a thread spinning in sched_yield while another one sleeps and then
 *      sets a flag, all on one CPU, with equal priorities (SCHED_FIFO as
 *      root): the sleeper runs and the spinner ends.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CHECK_NAME "sched_attr"
#include "check.h"

static int rt; /* running as root: real-time policies may be set */

struct got {
	int err, policy, prio;
	int attr_err, attr_policy, attr_prio, attr_inherit; /* from pthread_getattr_np */
};

static void self_sched(struct got *g)
{
	struct sched_param sp;
	pthread_attr_t a;

	g->err = pthread_getschedparam(pthread_self(), &g->policy, &sp);
	g->prio = sp.sched_priority;
	g->attr_err = pthread_getattr_np(pthread_self(), &a);
	if (!g->attr_err) {
		pthread_attr_getschedpolicy(&a, &g->attr_policy);
		pthread_attr_getschedparam(&a, &sp);
		g->attr_prio = sp.sched_priority;
		pthread_attr_getinheritsched(&a, &g->attr_inherit);
		pthread_attr_destroy(&a);
	}
}

static pthread_attr_t plain_attr;

static void *child_of_child(void *arg)
{
	self_sched(arg);
	return NULL;
}

static void *reports(void *arg)
{
	struct got *g = arg;
	pthread_t t;

	self_sched(&g[0]);
	/* an inheriting thread created by this one */
	if (pthread_create(&t, &plain_attr, child_of_child, &g[1]))
		g[1].err = -1;
	else
		pthread_join(t, NULL);
	return NULL;
}

static _Atomic int flag;
static _Atomic unsigned long yields;

static void *spinner(void *arg)
{
	(void)arg;
	while (!atomic_load(&flag)) {
		sched_yield();
		atomic_fetch_add(&yields, 1);
	}
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	sleep_ms(20);
	atomic_store(&flag, 1);
	return NULL;
}

static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;

static void *parked(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&gate);
	pthread_mutex_unlock(&gate);
	return NULL;
}

int main(void)
{
	struct got g[2], me;
	pthread_attr_t a;
	struct sched_param sp;
	int want_policy, want_prio;
	pthread_t t, t2;

	rt = geteuid() == 0;
	want_policy = rt ? SCHED_FIFO : SCHED_OTHER;
	want_prio = rt ? 10 : 0;

	self_sched(&me);
	result("pthread_getschedparam of the calling thread: SCHED_OTHER, 0",
	       me.err == 0 && me.policy == SCHED_OTHER && me.prio == 0);

	pthread_attr_init(&plain_attr);
	pthread_attr_init(&a);
	pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&a, want_policy);
	sp.sched_priority = want_prio;
	pthread_attr_setschedparam(&a, &sp);
	memset(g, 0, sizeof(g));
	int err = pthread_create(&t, &a, reports, g);
	if (!err)
		pthread_join(t, NULL);
	result("a thread created with an explicit policy and priority has them",
	       !err && g[0].err == 0 && g[0].policy == want_policy && g[0].prio == want_prio);
	result("pthread_getattr_np reports them, and explicit scheduling",
	       !err && g[0].attr_err == 0 && g[0].attr_policy == want_policy &&
		       g[0].attr_prio == want_prio && g[0].attr_inherit == PTHREAD_EXPLICIT_SCHED);
	result("a thread it creates with inherited scheduling has them too",
	       !err && g[1].err == 0 && g[1].policy == want_policy && g[1].prio == want_prio);

	/* 3. set from another thread, then read back */
	pthread_mutex_lock(&gate);
	t2 = spawn(parked, NULL);
	sp.sched_priority = want_prio ? 5 : 0;
	int se = pthread_setschedparam(t2, want_policy, &sp);
	int pol = -1;
	struct sched_param got = { -1 };
	int ge = pthread_getschedparam(t2, &pol, &got);
	result("pthread_setschedparam on another thread, read back by pthread_getschedparam",
	       se == 0 && ge == 0 && pol == want_policy && got.sched_priority == sp.sched_priority);
	sp.sched_priority = 0;
	pthread_setschedparam(t2, SCHED_OTHER, &sp);
	ge = pthread_getschedparam(t2, &pol, &got);
	result("back to SCHED_OTHER", ge == 0 && pol == SCHED_OTHER && got.sched_priority == 0);
	pthread_mutex_unlock(&gate);
	pthread_join(t2, NULL);

	/* an invalid priority for the policy is EINVAL */
	sp.sched_priority = 1000;
	result("pthread_setschedparam with an impossible priority: EINVAL",
	       pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == EINVAL);

	/* 4. sched_yield never starves an equal-priority thread, on one CPU */
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
	pthread_attr_setaffinity_np(&a, sizeof(one), &one);
	pthread_t s1, s2;
	int e1 = pthread_create(&s1, &a, spinner, NULL);
	int e2 = pthread_create(&s2, &a, sleeper, NULL);
	if (!e1)
		pthread_join(s1, NULL);
	if (!e2)
		pthread_join(s2, NULL);
	result("a thread spinning in sched_yield lets a sleeping one run and set its flag",
	       !e1 && !e2 && atomic_load(&flag) == 1);

	printf("sched_attr: %s\n", failed ? "FAIL" : "PASS");
	return failed;
}
