// SPDX-License-Identifier: MIT
/*
 * When a batch is flushed (src/batch/policy.h): at the threshold M, at a
 * wait, at the time bound (checked when the owner enters the library: post,
 * poll, reap), and
 * never otherwise; and the batch-size histogram.
 *
 * White-box: the syscall pages are not reachable through the public API,
 * so the test reads entry status bytes through the queue's internal shape
 * (core/internal.h) to see that posted calls stay FLEXSC_SUBMITTED until
 * their batch is flushed.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "core/internal.h"

static const struct timespec long_ts = { 30, 0 };

static uint8_t status_of(const struct flexsc_queue *q, flexsc_call_t c)
{
	return __atomic_load_n(&q->entries[(c & 0xffff) - 1].status, __ATOMIC_ACQUIRE); /* the index part */
}

/* The threshold M = 8 with no time bound; then "a wait flushes". */
static void threshold(enum flexsc_engine eng)
{
	struct flexsc_config cfg;
	struct flexsc *fx;
	struct flexsc_queue *q;
	flexsc_call_t c[8];
	int64_t rets[8], r;
	int p[2];
	const struct timespec ms = { 0, 1000000L };

	flexsc_config_init(&cfg);
	cfg.batch_threshold = 8;
	cfg.batch_timeout_us = 0;
	t_open(eng, &fx, &q, &cfg);
	CHECK_EQ(pipe(p), 0);

	for (unsigned i = 0; i < 7; i++) {
		c[i] = t_post_io(q, SYS_write, p[1], "x", 1, NULL);
		CHECK_EQ(flexsc_poll(q, c[i], &r), -EINPROGRESS);
	}
	/* a while later, still nothing has run: not flushed, not executed */
	nanosleep(&(struct timespec){ 0, 20 * 1000000L }, NULL);
	for (unsigned i = 0; i < 7; i++) {
		CHECK_EQ(status_of(q, c[i]), FLEXSC_SUBMITTED);
		CHECK_EQ(flexsc_poll(q, c[i], &r), -EINPROGRESS);
	}
	CHECK_EQ(t_stats(q).batches, 0);
	CHECK_EQ(t_pipe_bytes(p[0]), 0);

	/* the 8th flushes all eight */
	c[7] = t_post_io(q, SYS_write, p[1], "x", 1, NULL);
	struct flexsc_stats st = t_stats(q);
	CHECK_EQ(st.batches, 1);
	CHECK_EQ(st.batch_hist[3], 1); /* 8..15 */
	/* polling harvests them and flushes nothing new */
	for (unsigned i = 0, left = 8; left; i++) {
		CHECK(i < 30000);
		for (unsigned k = 0; k < 8; k++) {
			if (c[k] && flexsc_poll(q, c[k], &r) == 0) {
				CHECK_EQ(r, 1);
				c[k] = 0;
				left--;
			}
		}
		if (left)
			nanosleep(&ms, NULL);
	}
	CHECK_EQ(t_stats(q).batches, 1);
	CHECK_EQ(t_pipe_bytes(p[0]), 8);

	/* below the threshold, a wait flushes: wait_all, flexsc_wait, wait_one */
	for (unsigned i = 0; i < 3; i++)
		c[i] = t_post_io(q, SYS_write, p[1], "y", 1, NULL);
	CHECK_EQ(t_stats(q).batches, 1);
	CHECK_EQ(flexsc_wait_all(q, c, 3, rets, &long_ts), 0);
	st = t_stats(q);
	CHECK_EQ(st.batches, 2);
	CHECK_EQ(st.batch_hist[1], 1); /* 2..3 */
	for (unsigned i = 0; i < 3; i++)
		CHECK_EQ(rets[i], 1);

	c[0] = t_post_io(q, SYS_write, p[1], "z", 1, NULL);
	CHECK_EQ(flexsc_wait(q, &long_ts), 1);
	CHECK_EQ(t_stats(q).batches, 3);
	CHECK_EQ(flexsc_poll(q, c[0], &r), 0);
	c[0] = t_post_io(q, SYS_write, p[1], "z", 1, NULL);
	CHECK_EQ(flexsc_wait_one(q, c[0], &r, &long_ts), 0);
	st = t_stats(q);
	CHECK_EQ(st.batches, 4);
	CHECK_EQ(st.batch_hist[0], 2); /* 1 */
	CHECK_EQ(t_pipe_bytes(p[0]), 13);

	/* an explicit flush, of nothing and of something */
	CHECK_EQ(flexsc_flush(q), 0);
	CHECK_EQ(t_stats(q).batches, 4);
	c[0] = t_post_io(q, SYS_write, p[1], "w", 1, NULL);
	c[1] = t_post_io(q, SYS_write, p[1], "w", 1, NULL);
	CHECK_EQ(flexsc_flush(q), 2);
	CHECK_EQ(flexsc_flush(q), 0);
	st = t_stats(q);
	CHECK_EQ(st.batches, 5);
	CHECK_EQ(st.batch_hist[1], 2);
	CHECK_EQ(flexsc_wait_all(q, c, 2, NULL, &long_ts), 0);
	CHECK_EQ(t_stats(q).batches, 5); /* nothing left to flush */
	close(p[0]), close(p[1]);
	t_close(fx, q);
}

/* The time bound: checked when the owner posts, polls or reaps. */
static void time_bound(enum flexsc_engine eng)
{
	struct flexsc_config cfg;
	struct flexsc *fx;
	struct flexsc_queue *q;
	struct flexsc_completion comp;
	int64_t r;
	int dn[2];

	CHECK_EQ(pipe(dn), 0);
	flexsc_config_init(&cfg);
	cfg.batch_threshold = 32;
	cfg.batch_timeout_us = 1000;
	t_open(eng, &fx, &q, &cfg);

	/* post one, sleep past the bound, post another: both go in one batch */
	flexsc_call_t a = t_post_io(q, SYS_write, dn[1], "a", 1, NULL);
	nanosleep(&(struct timespec){ 0, 5 * 1000000L }, NULL);
	CHECK_EQ(t_stats(q).batches, 0); /* no timer thread: nothing happened meanwhile */
	flexsc_call_t b = t_post_io(q, SYS_write, dn[1], "b", 1, NULL);
	struct flexsc_stats st = t_stats(q);
	CHECK_EQ(st.batches, 1);
	CHECK_EQ(st.batch_hist[1], 1);
	flexsc_call_t ab[2] = { a, b };
	CHECK_EQ(flexsc_wait_all(q, ab, 2, NULL, &long_ts), 0);
	CHECK_EQ(t_stats(q).batches, 1);

	/* post one, sleep past the bound, poll it: the poll flushes */
	a = t_post_io(q, SYS_write, dn[1], "c", 1, NULL);
	nanosleep(&(struct timespec){ 0, 5 * 1000000L }, NULL);
	CHECK_EQ(t_stats(q).batches, 1);
	int err = flexsc_poll(q, a, &r);
	CHECK(err == 0 || err == -EINPROGRESS);
	st = t_stats(q);
	CHECK_EQ(st.batches, 2);
	CHECK_EQ(st.batch_hist[0], 1);
	if (err)
		CHECK_EQ(flexsc_wait_one(q, a, &r, &long_ts), 0);
	CHECK_EQ(r, 1);

	/* post one, sleep past the bound, only reap: the reap flushes (a runtime's scheduler does this) */
	a = t_post_io(q, SYS_write, dn[1], "r", 1, NULL);
	nanosleep(&(struct timespec){ 0, 5 * 1000000L }, NULL);
	CHECK_EQ(t_stats(q).batches, 2);
	int n = flexsc_reap(q, &comp, 1);
	CHECK(n == 0 || n == 1);
	CHECK_EQ(t_stats(q).batches, 3);
	if (n == 0)
		CHECK_EQ(flexsc_wait_one(q, a, &r, &long_ts), 0);
	CHECK_EQ(n ? comp.ret : r, 1);
	t_close(fx, q);

	/* a bound far away: the same sequence does not flush */
	cfg.batch_timeout_us = 60u * 1000 * 1000;
	t_open(eng, &fx, &q, &cfg);
	a = t_post_io(q, SYS_write, dn[1], "d", 1, NULL);
	nanosleep(&(struct timespec){ 0, 5 * 1000000L }, NULL);
	b = t_post_io(q, SYS_write, dn[1], "e", 1, NULL);
	CHECK_EQ(flexsc_poll(q, a, &r), -EINPROGRESS);
	CHECK_EQ(flexsc_reap(q, &comp, 1), 0);
	CHECK_EQ(t_stats(q).batches, 0);
	CHECK_EQ(status_of(q, a), FLEXSC_SUBMITTED);
	CHECK_EQ(status_of(q, b), FLEXSC_SUBMITTED);
	ab[0] = a, ab[1] = b;
	CHECK_EQ(flexsc_wait_all(q, ab, 2, NULL, &long_ts), 0);
	CHECK_EQ(t_stats(q).batches, 1);
	t_close(fx, q);
	close(dn[0]), close(dn[1]);
}

/* Batch sizes land in buckets 1, 2-3, 4-7, 8-15, 16-31, 32-63, 64-127, 128+. */
static void histogram(enum flexsc_engine eng)
{
	static const unsigned sizes[] = { 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 127, 128, 200, 512 };
	static const unsigned bucket[] = { 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 7 };
	static char buf[1];
	struct flexsc_config cfg;
	struct flexsc *fx;
	struct flexsc_queue *q;
	struct flexsc_completion comp[64];
	uint64_t want[FLEXSC_HIST_BUCKETS] = { 0 };
	int null = open("/dev/null", O_WRONLY);

	CHECK(null >= 0);
	flexsc_config_init(&cfg);
	cfg.pages_per_queue = 8;     /* 512 entries */
	cfg.batch_threshold = 100000; /* only flexsc_flush flushes */
	cfg.batch_timeout_us = 0;
	t_open(eng, &fx, &q, &cfg);
	for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		for (unsigned i = 0; i < sizes[s]; i++)
			t_post_io(q, SYS_write, null, buf, 1, NULL);
		CHECK_EQ(flexsc_flush(q), (int)sizes[s]);
		want[bucket[s]]++;
		for (unsigned left = sizes[s]; left;) {
			int n = flexsc_wait(q, &long_ts);
			CHECK(n > 0);
			n = flexsc_reap(q, comp, 64);
			CHECK(n > 0 && (unsigned)n <= left);
			for (int k = 0; k < n; k++)
				CHECK_EQ(comp[k].ret, 1);
			left -= (unsigned)n;
		}
	}
	struct flexsc_stats st = t_stats(q);
	uint64_t total = 0;
	for (unsigned b = 0; b < FLEXSC_HIST_BUCKETS; b++) {
		CHECK_EQ(st.batch_hist[b], want[b]);
		total += st.batch_hist[b];
	}
	CHECK_EQ(st.batches, sizeof(sizes) / sizeof(sizes[0]));
	CHECK_EQ(total, st.batches);
	t_close(fx, q);
	close(null);
}

int main(void)
{
	/* the threads engine is the one the brief names; the rule is the same on all */
	for (unsigned i = 0; i < T_NENGINES; i++) {
		enum flexsc_engine eng = t_engines[i];

		threshold(eng);
		time_bound(eng);
		histogram(eng);
		printf("%s: threshold 8 (7 posted stay SUBMITTED, unflushed; the 8th flushes), waits "
		       "flush, 1 ms time bound, histogram buckets\n",
		       flexsc_engine_name(eng));
	}
	return 0;
}
