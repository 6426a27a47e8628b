// SPDX-License-Identifier: MIT
/*
 * The syscall-thread pool grows past blocked threads: threads engine with
 * threads_per_cpu = 1 and max_threads = 32. Twelve reads are posted on
 * twelve empty pipes, so each blocks a syscall thread; then the test writes
 * to the pipes in a random order and waits for each read in that order:
 * every read must complete with its own pipe's bytes (no call is stuck
 * behind a blocked one). Three ways of posting: one batch; one flush per
 * read, each after the previous read has blocked its thread (the pool must
 * grow although nothing is queued when a thread starts its call); and one
 * flush per read with no pause. Results are collected with flexsc_wait_one,
 * and also by an owner that never sleeps in the library: a flexsc_poll loop,
 * flexsc_wait_one with a zero timeout, and a flexsc_reap loop. With one batch, all twelve reads
 * must be blocked in the kernel at once (twelve threads) before any is
 * released. Then the pool serves ordinary calls again.
 */
#define _GNU_SOURCE
#include "threads_pool.h"

enum { N = 12 };

enum { WAIT, POLL, WAIT0, REAP };

/*
 * The bound on each wait below. Generous because it only turns a hang into
 * a failure: on a busy 2-CPU machine or under a sanitizer, starting a thread
 * or waking one can take seconds. Every wait ends as soon as it succeeds.
 */
#define BOUND_S 30

/* Collects call c: blocking, by polling, or by zero-timeout waits; -ETIME after BOUND_S. */
static int collect(struct flexsc_queue *q, flexsc_call_t c, int64_t *r, int style)
{
	struct timespec to = { BOUND_S, 0 }, zero = { 0, 0 };
	uint64_t end = t_now_ms() + BOUND_S * 1000u;

	if (style == WAIT)
		return flexsc_wait_one(q, c, r, &to);
	do {
		if (style == REAP) {
			/* only the released read can complete: it is the one reaped */
			struct flexsc_completion done[4];
			int n = flexsc_reap(q, done, 4);
			CHECK(n >= 0 && n <= 1);
			if (n == 1) {
				CHECK_EQ(done[0].call, c);
				*r = done[0].ret;
				return 0;
			}
			t_sleep_ms(1);
			continue;
		}
		int err = style == POLL ? flexsc_poll(q, c, r) : flexsc_wait_one(q, c, r, &zero);
		if (err != -EINPROGRESS && err != -ETIME)
			return err;
		t_sleep_ms(1);
	} while (t_now_ms() < end);
	return -ETIME;
}

static int run(unsigned seed, int how, int style)
{
	struct flexsc *fx;
	struct flexsc_queue *q;
	struct flexsc_config cfg;
	int p[N][2], order[N];
	char buf[N][16];
	flexsc_call_t calls[N];

	flexsc_config_init(&cfg);
	cfg.threads_per_cpu = 1;
	cfg.max_threads = 32;
	cfg.batch_timeout_us = 0; /* "one batch" means one: no flush by the time bound */
	cfg.batch_threshold = 64;
	t_open(FLEXSC_ENGINE_THREADS, &fx, &q, &cfg);
	/* a thread names itself once it runs: up to 10 s on a machine busy with other work */
	for (int k = 0; k < 10000 && sys_threads() < 1; k++)
		t_sleep_ms(1);
	CHECK_EQ(sys_threads(), 1);
	for (int i = 0; i < N; i++) {
		CHECK_EQ(pipe(p[i]), 0);
		memset(buf[i], 0, sizeof(buf[i]));
		uint64_t a[3] = { (uint64_t)p[i][0], P(buf[i]), sizeof(buf[i]) };
		CHECK_EQ(flexsc_post(q, SYS_read, 3, a, NULL, &calls[i]), 0);
		if (how >= 1)
			CHECK_EQ(flexsc_flush(q), 1);
		if (how == 1 && i == 0) {
			/* the first read holds the only thread before the next is posted */
			for (int k = 0; k < 10000 && pipe_sleepers() < 1; k++)
				t_sleep_ms(1);
			CHECK_EQ(pipe_sleepers(), 1);
		}
		if (how == 1)
			t_sleep_ms(2);
	}
	int peak = 0;
	if (how == 0) {
		CHECK_EQ(flexsc_flush(q), N);
		/* one batch: the pool grows until every read is blocked in the kernel */
		for (uint64_t end = t_now_ms() + BOUND_S * 1000u; pipe_sleepers() < N && t_now_ms() < end;)
			t_sleep_ms(1);
		peak = pipe_sleepers();
		if (peak != N) {
			fprintf(stderr, "threads_pool_grow: one batch of %d reads: only %d blocked in the "
					"kernel after %d s, %d syscall threads\n", N, peak, BOUND_S, sys_threads());
			_exit(1);
		}
	}

	srand(seed);
	for (int i = 0; i < N; i++)
		order[i] = i;
	for (int i = N - 1; i > 0; i--) {
		int j = rand() % (i + 1), t = order[i];
		order[i] = order[j], order[j] = t;
	}
	for (int k = 0; k < N; k++) {
		int i = order[k];
		char msg[16];
		int64_t r;
		int len = snprintf(msg, sizeof(msg), "pipe-%d", i);

		CHECK_EQ(write(p[i][1], msg, (size_t)len), len);
		int err = collect(q, calls[i], &r, style);
		if (err == -ETIME) {
			fprintf(stderr, "threads_pool_grow: read %d (the %d-th released, posting mode %d, "
					"collect style %d) did not complete in %d s: stuck behind blocked "
					"threads (%d syscall threads)\n",
				i, k + 1, how, style, BOUND_S, sys_threads());
			_exit(1);
		}
		CHECK_EQ(err, 0);
		CHECK_EQ(r, len);
		CHECK(!memcmp(buf[i], msg, (size_t)len));
	}
	int threads = sys_threads();
	CHECK(threads <= 32);
	CHECK(how != 0 || threads >= N);

	/* the pool still serves ordinary calls */
	for (int i = 0; i < 100; i++)
		CHECK_EQ(flexsc_syscall(q, SYS_getppid, 0, NULL), getppid());
	for (int i = 0; i < N; i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
	t_close(fx, q);
	/* joined threads may stay listed in /proc/self/task while the kernel reaps them */
	for (uint64_t end = t_now_ms() + BOUND_S * 1000u; sys_threads() != 0 && t_now_ms() < end;)
		t_sleep_ms(1);
	CHECK_EQ(sys_threads(), 0);
	return threads;
}

int main(void)
{
	static const char *mode[] = { "one batch", "one flush per read, each after the previous blocked",
				      "one flush per read, no pause" };
	static const char *styles[] = { "wait", "poll loop", "zero-timeout waits", "reap loop" };

	for (int style = WAIT; style <= REAP; style++) {
		for (int how = 0; how < 3; how++) {
			for (unsigned seed = 1; seed <= 2; seed++) {
				int threads = run(seed * 7919 + (unsigned)how, how, style);
				printf("threads_pool_grow: %s, %s, release order %u: %d reads done, "
				       "%d syscall threads\n", mode[how], styles[style], seed, N, threads);
			}
		}
	}
	return 0;
}
