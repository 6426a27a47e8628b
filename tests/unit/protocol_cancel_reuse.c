// SPDX-License-Identifier: MIT
/*
 * The page protocol after a cancellation on the syscall-thread route: a call
 * queued for a syscall thread and cancelled before any thread took it
 * leaves its index in the submission ring. Its entry is collected, freed and
 * reused at once (the free stack is LIFO). The next call in that entry is
 * posted but not flushed: no engine may execute it before the flush, and
 * after the flush it must run exactly once.
 *
 * One syscall thread, blocked in a read, keeps the cancelled index in the
 * ring until the read is released; a second queue served by the same thread
 * is the barrier that says the thread has looked at the first queue's ring.
 */
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

static const struct timespec long_ts = { 30, 0 };

static void round_trip(unsigned round)
{
	struct flexsc_config cfg;
	struct flexsc *fx;
	struct flexsc_queue *q, *q2;
	int blk[2], out[2];
	int64_t r;
	char buf[8];

	flexsc_config_init(&cfg);
	cfg.threads_per_cpu = 1;
	cfg.max_threads = 1;        /* one syscall thread: it blocks, nothing else runs */
	cfg.batch_threshold = 64;
	cfg.batch_timeout_us = 0;   /* a posted call stays pending until flushed */
	t_open(FLEXSC_ENGINE_THREADS, &fx, &q, &cfg);
	CHECK_EQ(flexsc_queue_create(fx, &q2), 0);
	CHECK_EQ(pipe(blk), 0);
	CHECK_EQ(pipe(out), 0);

	/* the only thread blocks in a read */
	flexsc_call_t rd = t_post_io(q, SYS_read, blk[0], buf, sizeof(buf), NULL);
	CHECK_EQ(flexsc_flush(q), 1);
	t_wait_thread_in_read(blk[0]);

	/* A is queued behind it and cancelled: its index stays in the ring */
	flexsc_call_t a = t_post_io(q, SYS_write, out[1], "A", 1, NULL);
	CHECK_EQ(flexsc_flush(q), 1);
	CHECK_EQ(flexsc_cancel(q, a), 0);
	CHECK_EQ(flexsc_poll(q, a, &r), 0);
	CHECK_EQ(r, -ECANCELED);

	/* B reuses A's entry and is only posted */
	flexsc_call_t b = t_post_io(q, SYS_write, out[1], "B", 1, NULL);
	CHECK_EQ((uint32_t)b, (uint32_t)a);
	CHECK(b != a);
	CHECK_EQ(flexsc_poll(q, b, &r), -EINPROGRESS);

	/*
	 * Release the thread. It finishes the read and looks at q's ring
	 * before it can serve q2 (no wait on q here: a wait would flush B).
	 */
	CHECK_EQ(write(blk[1], "go", 2), 2);
	flexsc_call_t barrier = t_post_io(q2, SYS_write, out[1], "", 0, NULL);
	CHECK_EQ(flexsc_wait_one(q2, barrier, &r, &long_ts), 0);
	CHECK_EQ(r, 0);
	if (t_pipe_bytes(out[0]) != 0) {
		int n = (int)read(out[0], buf, sizeof(buf));
		fprintf(stderr, "round %u: a call that was posted but never flushed ran: "
				"the pipe holds \"%.*s\" (a stale index of the cancelled call)\n",
			round, n > 0 ? n : 0, buf);
		exit(1);
	}
	/* the read is done; B is still pending (a poll does not flush it) */
	for (unsigned i = 0; flexsc_poll(q, rd, &r) == -EINPROGRESS; i++) {
		CHECK(i < 30000);
		t_sleep_ms(1);
	}
	CHECK_EQ(r, 2);
	CHECK_EQ(flexsc_poll(q, b, &r), -EINPROGRESS);

	/* flushed, it runs exactly once */
	CHECK_EQ(flexsc_flush(q), 1);
	CHECK_EQ(flexsc_wait_one(q, b, &r, &long_ts), 0);
	CHECK_EQ(r, 1);
	barrier = t_post_io(q2, SYS_write, out[1], "", 0, NULL);
	CHECK_EQ(flexsc_wait_one(q2, barrier, &r, &long_ts), 0);
	CHECK_EQ(t_pipe_bytes(out[0]), 1);
	CHECK_EQ(read(out[0], buf, sizeof(buf)), 1);
	CHECK_EQ(buf[0], 'B');
	CHECK_EQ(flexsc_wait(q, &long_ts), -ECHILD);

	struct flexsc_stats st;
	CHECK_EQ(flexsc_queue_stats(q, &st), 0);
	CHECK_EQ(st.posted, 3);
	CHECK_EQ(st.completed, 3);
	close(blk[0]), close(blk[1]), close(out[0]), close(out[1]);
	CHECK_EQ(flexsc_queue_destroy(q2), 0);
	t_close(fx, q);
}

int main(void)
{
	for (unsigned round = 0; round < 20; round++)
		round_trip(round);
	printf("threads: a cancelled call's entry reused at once; its next call never ran before "
	       "its flush, and ran exactly once after (20 rounds)\n");
	return 0;
}
