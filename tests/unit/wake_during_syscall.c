// SPDX-License-Identifier: MIT
/*
 * flexsc_queue_wake does not end flexsc_syscall: a read on an empty pipe,
 * made with flexsc_syscall on the uring and threads engines, is woken by
 * another thread while in flight and returns 1 once that thread writes a
 * byte, not -EINTR (which would pass for read's own and lose the call's
 * descriptor). The wake is re-armed, as documented: the owner's next
 * flexsc_wait, on an otherwise idle queue, returns -EINTR, and the one
 * after that -ECHILD.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

struct waker {
	struct flexsc_queue *q;
	int wfd;
	_Atomic pid_t owner; /* the owner's thread id, set just before it enters flexsc_syscall */
};

/* A thread's state letter ('S': asleep) and its voluntary context switches, from /proc. */
static void task_state(pid_t tid, char *state, long *vcs)
{
	char path[64], line[256];

	*state = '?';
	*vcs = -1;
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "State:", 6))
			sscanf(line + 6, " %c", state);
		else if (!strncmp(line, "voluntary_ctxt_switches:", 24))
			*vcs = atol(line + 24);
	}
	fclose(f);
}

/*
 * Until the owner is asleep having switched away more than `after` times
 * (up to 30 s); returns its count then. No nap can tell that it is: a slow
 * or preempted owner may still be on its way into the wait.
 */
static long owner_asleep(pid_t tid, long after)
{
	char state;
	long vcs;

	for (int i = 0; i < 30000; i++) {
		task_state(tid, &state, &vcs);
		if (state == 'S' && vcs > after)
			return vcs;
		t_sleep_ms(1);
	}
	return -1;
}

static void *waker_main(void *arg)
{
	struct waker *w = arg;
	pid_t tid;

	while (!(tid = atomic_load(&w->owner)))
		t_sleep_ms(1);
	long vcs = owner_asleep(tid, -1); /* the read is in flight and its owner asleep */
	CHECK(vcs >= 0);
	CHECK_EQ(flexsc_queue_wake(w->q), 0);
	CHECK(owner_asleep(tid, vcs) >= 0); /* the woken owner went back to waiting */
	CHECK_EQ(write(w->wfd, "x", 1), 1);
	return NULL;
}

int main(void)
{
	static const enum flexsc_engine engines[] = { FLEXSC_ENGINE_URING, FLEXSC_ENGINE_THREADS };

	alarm(60);
	for (unsigned e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		struct flexsc *fx;
		struct flexsc_queue *q;
		struct waker w;
		pthread_t t;
		char c = 0;
		int p[2];

		t_open(engines[e], &fx, &q, NULL);
		CHECK_EQ(pipe(p), 0);
		w.q = q;
		w.wfd = p[1];
		atomic_init(&w.owner, 0);
		CHECK_EQ(pthread_create(&t, NULL, waker_main, &w), 0);

		/*
		 * A read of 0 bytes first, through the same route: the ring (and
		 * the context anchor's thread) are made at a queue's first call
		 * that could use them, and the owner sleeps a moment while that
		 * thread starts, which the waker would take for the read's wait.
		 */
		uint64_t none[3] = { (uint64_t)p[0], (uint64_t)(uintptr_t)&c, 0 };
		CHECK_EQ(flexsc_syscall(q, SYS_read, 3, none), 0);
		uint64_t args[3] = { (uint64_t)p[0], (uint64_t)(uintptr_t)&c, 1 };
		struct flexsc_stats before, after;
		CHECK_EQ(flexsc_queue_stats(q, &before), 0);
		atomic_store(&w.owner, (pid_t)syscall(SYS_gettid));
		int64_t r = flexsc_syscall(q, SYS_read, 3, args);
		CHECK_EQ(pthread_join(t, NULL), 0);
		CHECK_EQ(r, 1);
		CHECK_EQ(c, 'x');
		/* it slept, was woken, and slept again */
		CHECK_EQ(flexsc_queue_stats(q, &after), 0);
		CHECK(after.waits >= before.waits + 2);

		/* the wake was re-armed: it ends the next wait, and only that one */
		CHECK_EQ(flexsc_wait(q, NULL), -EINTR);
		CHECK_EQ(flexsc_wait(q, NULL), -ECHILD);
		CHECK_EQ(flexsc_syscall(q, SYS_getppid, 0, NULL), getppid());

		close(p[0]);
		close(p[1]);
		printf("%s (in use: %s): flexsc_syscall read 1 byte through a wake; "
		       "the next wait returned -EINTR\n", flexsc_engine_name(engines[e]),
		       flexsc_engine_name(flexsc_engine_in_use(fx)));
		t_close(fx, q);
	}
	return 0;
}
