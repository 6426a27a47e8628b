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
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

struct waker {
	struct flexsc_queue *q;
	int wfd;
	atomic_bool posting; /* the owner is about to enter flexsc_syscall */
};

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts))
		;
}

static void *waker_main(void *arg)
{
	struct waker *w = arg;

	while (!atomic_load(&w->posting))
		nap_ms(1);
	nap_ms(100); /* the read is in flight and its owner asleep by now */
	CHECK_EQ(flexsc_queue_wake(w->q), 0);
	nap_ms(100); /* the woken owner must go back to waiting */
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
		atomic_init(&w.posting, false);
		CHECK_EQ(pthread_create(&t, NULL, waker_main, &w), 0);

		uint64_t args[3] = { (uint64_t)p[0], (uint64_t)(uintptr_t)&c, 1 };
		struct flexsc_stats before, after;
		CHECK_EQ(flexsc_queue_stats(q, &before), 0);
		atomic_store(&w.posting, true);
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
