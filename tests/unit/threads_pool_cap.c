// SPDX-License-Identifier: MIT
/*
 * A pool capped at max_threads = 2 (threads engine, threads_per_cpu = 1)
 * with three blocked reads: two threads block, the third read waits in the
 * queue and is not lost. Its pipe is written first, yet it cannot complete
 * while both threads are blocked (the cap holds: never more than two
 * syscall threads); once one of the first two reads is released, the third
 * completes with its bytes, and the last read completes when released.
 */
#define _GNU_SOURCE
#include "threads_pool.h"

int main(void)
{
	struct flexsc *fx;
	struct flexsc_queue *q;
	struct flexsc_config cfg;
	int p[3][2];
	char buf[3][8];
	flexsc_call_t c[3];
	int64_t r;
	/*
	 * shortw: a read that must stay waiting, so the wait must time out (a slow
	 * machine cannot make that fail; only a third thread reading it can);
	 * longw: reads that must complete, bounded generously since the bound only
	 * turns a hang into a failure (a busy 2-CPU machine or a sanitizer can
	 * stall a thread for seconds); a completed read ends the wait at once.
	 */
	struct timespec shortw = { 0, 300 * 1000000L }, longw = { 30, 0 };

	flexsc_config_init(&cfg);
	cfg.threads_per_cpu = 1;
	cfg.max_threads = 2;
	cfg.batch_timeout_us = 0; /* one batch of three, whatever the post takes */
	t_open(FLEXSC_ENGINE_THREADS, &fx, &q, &cfg);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(pipe(p[i]), 0);
		uint64_t a[3] = { (uint64_t)p[i][0], P(buf[i]), sizeof(buf[i]) };
		CHECK_EQ(flexsc_post(q, SYS_read, 3, a, NULL, &c[i]), 0);
	}
	CHECK_EQ(flexsc_flush(q), 3);
	for (int k = 0; k < 10000 && pipe_sleepers() < 2; k++)
		t_sleep_ms(1);
	CHECK_EQ(pipe_sleepers(), 2);

	/* the third read's data is there, but no thread is free to read it */
	CHECK_EQ(write(p[2][1], "third", 5), 5);
	CHECK_EQ(flexsc_wait_one(q, c[2], &r, &shortw), -ETIME);
	CHECK_EQ(flexsc_poll(q, c[2], &r), -EINPROGRESS);
	CHECK_EQ(sys_threads(), 2);

	/* release the first: its thread then takes the third */
	CHECK_EQ(write(p[0][1], "first", 5), 5);
	CHECK_EQ(flexsc_wait_one(q, c[0], &r, &longw), 0);
	CHECK_EQ(r, 5);
	CHECK(!memcmp(buf[0], "first", 5));
	int err = flexsc_wait_one(q, c[2], &r, &longw);
	if (err) {
		fprintf(stderr, "threads_pool_cap: the queued read did not complete after a thread was "
				"released (%d)\n", err);
		return 1;
	}
	CHECK_EQ(r, 5);
	CHECK(!memcmp(buf[2], "third", 5));
	CHECK_EQ(write(p[1][1], "second", 6), 6);
	CHECK_EQ(flexsc_wait_one(q, c[1], &r, &longw), 0);
	CHECK_EQ(r, 6);
	CHECK(!memcmp(buf[1], "second", 6));
	CHECK_EQ(sys_threads(), 2);
	t_close(fx, q);
	printf("threads_pool_cap: max_threads=2, 3 blocked reads: the 3rd waited (no 3rd thread), "
	       "completed once the 1st was released; nothing lost\n");
	return 0;
}
