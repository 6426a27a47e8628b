// SPDX-License-Identifier: MIT
/*
 * The waits, on every engine: flexsc_wait_one, _any, _all and flexsc_wait,
 * with pipes whose reads block until another thread writes; relative
 * timeouts (-ETIME, and nothing collected by wait_all when it times out);
 * flexsc_wait's count of done, uncollected calls; flexsc_reap's order
 * (oldest completion first, each with its cookie); and a wait on a queue
 * that another thread made and posted to.
 *
 * With the sync engine a read on an empty pipe blocks the owner itself at
 * flush time, so a writer thread must release it, and a timeout can never
 * fire: those parts are run only where an engine executes the call.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

struct writer {
	int fd;
	const char *data;
	size_t len;
	unsigned delay_ms;
	pthread_t t;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct timespec d = { w->delay_ms / 1000, (long)(w->delay_ms % 1000) * 1000000L };

	nanosleep(&d, NULL);
	CHECK_EQ(write(w->fd, w->data, w->len), (long)w->len);
	return NULL;
}

/* Writes data to fd from another thread after delay_ms. */
static void write_later(struct writer *w, int fd, const char *data, unsigned delay_ms)
{
	w->fd = fd;
	w->data = data;
	w->len = strlen(data);
	w->delay_ms = delay_ms;
	CHECK_EQ(pthread_create(&w->t, NULL, writer_main, w), 0);
}

static void join(struct writer *w)
{
	CHECK_EQ(pthread_join(w->t, NULL), 0);
}

static flexsc_call_t post_read(struct flexsc_queue *q, int fd, char *buf, size_t len, void *cookie)
{
	return t_post_io(q, SYS_read, fd, buf, len, cookie);
}

static flexsc_call_t post_write(struct flexsc_queue *q, int fd, const char *buf, size_t len,
				void *cookie)
{
	return t_post_io(q, SYS_write, fd, buf, len, cookie);
}

static int devnull;
static char zeros[4096];

/*
 * A blocked read is released by a write from another thread: wait_one,
 * wait_any, wait_all. Each writer starts before the reads are posted: the
 * synchronous engine runs a read at the flush, which a batch's time bound
 * may make at its post (under ThreadSanitizer, slow, the read then waited
 * for a writer not started yet, for ever).
 */
static void blocked_reads(struct flexsc_queue *q, bool sync)
{
	int p[2];
	char buf[64];
	int64_t r;
	/* a bound that only turns a hang (a lost wake-up) into a failure */
	const struct timespec long_ts = { 30, 0 };
	unsigned idx = 99;

	CHECK_EQ(pipe(p), 0);
	struct writer w;

	memset(buf, 0, sizeof(buf));
	write_later(&w, p[1], "hello", 20);
	flexsc_call_t c = post_read(q, p[0], buf, sizeof(buf), NULL);
	CHECK_EQ(flexsc_wait_one(q, c, &r, &long_ts), 0);
	CHECK_EQ(r, 5);
	CHECK(!memcmp(buf, "hello", 5));
	join(&w);

	/*
	 * wait_any among two blocked reads: the one released. With the sync
	 * engine the owner runs the reads in order, so the first one must be
	 * released first, and is the one found.
	 */
	int p2[2];
	char buf2[64];
	CHECK_EQ(pipe(p2), 0);
	unsigned first = sync ? 0 : 1, second = 1 - first;
	write_later(&w, sync ? p[1] : p2[1], "second", 20);
	if (sync)
		CHECK_EQ(write(p2[1], "first!!", 7), 7); /* so that the second read returns */
	flexsc_call_t two[2] = { post_read(q, p[0], buf, sizeof(buf), NULL),
				 post_read(q, p2[0], buf2, sizeof(buf2), NULL) };
	CHECK_EQ(flexsc_wait_any(q, two, 2, &idx, &r, &long_ts), 0);
	CHECK_EQ(idx, first);
	CHECK_EQ(r, 6);
	CHECK(!memcmp(first ? buf2 : buf, "second", 6));
	join(&w);
	CHECK_EQ(flexsc_poll(q, two[first], &r), -ESTALE);
	if (!sync)
		write_later(&w, p[1], "first!!", 0);
	CHECK_EQ(flexsc_wait_any(q, &two[second], 1, &idx, &r, &long_ts), 0);
	CHECK_EQ(idx, 0);
	CHECK_EQ(r, 7);
	if (!sync)
		join(&w);

	/* wait_all: two reads released by two writes, plus a write that is done at once */
	struct writer w2;
	write_later(&w, p[1], "abc", 10);
	write_later(&w2, p2[1], "defg", 30);
	flexsc_call_t three[3] = { post_read(q, p[0], buf, 3, NULL),
				   post_write(q, devnull, zeros, 123, NULL),
				   post_read(q, p2[0], buf2, 4, NULL) };
	int64_t rets[3] = { -1, -1, -1 };
	CHECK_EQ(flexsc_wait_all(q, three, 3, rets, &long_ts), 0);
	CHECK_EQ(rets[0], 3);
	CHECK_EQ(rets[1], 123);
	CHECK_EQ(rets[2], 4);
	CHECK(!memcmp(buf, "abc", 3) && !memcmp(buf2, "defg", 4));
	join(&w);
	join(&w2);
	for (unsigned i = 0; i < 3; i++)
		CHECK_EQ(flexsc_poll(q, three[i], &r), -ESTALE);
	close(p[0]), close(p[1]), close(p2[0]), close(p2[1]);
}

/* Only where an engine runs the read: the owner is free to time out. */
static void timeouts(struct flexsc_queue *q)
{
	int p[2];
	char buf[16];
	int64_t r = 12345;
	unsigned idx = 99;
	const struct timespec short_ts = { 0, 20 * 1000000L }, zero = { 0, 0 };

	CHECK_EQ(pipe(p), 0);
	flexsc_call_t c = post_read(q, p[0], buf, sizeof(buf), NULL);
	CHECK_EQ(flexsc_wait_one(q, c, &r, &short_ts), -ETIME);
	CHECK_EQ(r, 12345);
	CHECK_EQ(flexsc_wait_one(q, c, &r, &zero), -ETIME);
	CHECK_EQ(flexsc_poll(q, c, &r), -EINPROGRESS);
	CHECK_EQ(flexsc_wait(q, &short_ts), -ETIME);
	CHECK_EQ(flexsc_wait_any(q, &c, 1, &idx, &r, &short_ts), -ETIME);
	CHECK_EQ(idx, 99);

	/* wait_all times out with one call done: nothing is collected */
	flexsc_call_t two[2] = { post_write(q, devnull, zeros, 77, NULL), c };
	int64_t rets[2] = { -1, -1 };
	CHECK_EQ(flexsc_wait_all(q, two, 2, rets, &short_ts), -ETIME);
	CHECK_EQ(rets[0], -1);
	CHECK_EQ(rets[1], -1);
	/* the write is there to collect (the read cannot finish), and counted by flexsc_wait */
	const struct timespec long_ts = { 30, 0 };
	CHECK_EQ(flexsc_wait(q, &long_ts), 1);
	CHECK_EQ(flexsc_wait_one(q, two[0], &r, &zero), 0);
	CHECK_EQ(r, 77);
	CHECK_EQ(flexsc_wait(q, &zero), -ETIME);

	/* release the read; a long timeout does not expire */
	CHECK_EQ(write(p[1], "x", 1), 1);
	CHECK_EQ(flexsc_wait_one(q, c, &r, &long_ts), 0);
	CHECK_EQ(r, 1);
	CHECK_EQ(flexsc_wait(q, &zero), -ECHILD);
	close(p[0]), close(p[1]);
}

/*
 * Calls flexsc_wait until it counts n done, uncollected calls. Each answer
 * must be between 1 and n; the count must reach n once all n are done (a
 * generous bound only turns a hang into a failure).
 */
static void wait_done(struct flexsc_queue *q, int n)
{
	const struct timespec ts = { 10, 0 };
	uint64_t give_up = t_now_ms() + 20000;
	int got;

	while ((got = flexsc_wait(q, &ts)) != n) {
		if (got < 1 || got > n || t_now_ms() > give_up) {
			fprintf(stderr, "flexsc_wait returned %d, expected %d done calls\n", got, n);
			exit(1);
		}
	}
}

/* flexsc_wait counts done, uncollected calls, and collects none of them. */
static void wait_counts(struct flexsc_queue *q)
{
	enum { N = 5 };
	int64_t r;
	struct flexsc_completion comp[N + 1];

	for (uintptr_t n = 1; n <= N; n++) {
		post_write(q, devnull, zeros, n, (void *)n);
		wait_done(q, (int)n);
	}
	/* nothing was collected by the waits: all five are still there, in order */
	CHECK_EQ(flexsc_reap(q, comp, N + 1), N);
	for (unsigned i = 0; i < N; i++) {
		CHECK(comp[i].cookie == (void *)(uintptr_t)(i + 1));
		CHECK_EQ(comp[i].ret, i + 1);
		CHECK_EQ(flexsc_poll(q, comp[i].call, &r), -ESTALE);
	}
	CHECK_EQ(flexsc_wait(q, NULL), -ECHILD);

	/* several at once */
	for (uintptr_t n = 1; n <= N; n++)
		post_write(q, devnull, zeros, n, (void *)n);
	wait_done(q, N);
	CHECK_EQ(flexsc_reap(q, comp, N + 1), N);
	CHECK_EQ(flexsc_wait(q, NULL), -ECHILD);
}

/*
 * flexsc_reap: oldest completion first, with cookies. A and B complete;
 * A is collected, which frees its entry; C reuses that entry (the lowest
 * index) and completes after B. Entry order would give C, B; completion
 * order is B, C.
 */
static void reap_order(struct flexsc_queue *q)
{
	struct flexsc_completion comp[4];
	int64_t r;
	flexsc_call_t a, b, c;
	static char ca, cb, cc;

	a = post_write(q, devnull, zeros, 1, &ca);
	wait_done(q, 1);
	b = post_write(q, devnull, zeros, 2, &cb);
	wait_done(q, 2);
	CHECK_EQ(flexsc_poll(q, a, &r), 0);
	CHECK_EQ(r, 1);
	c = post_write(q, devnull, zeros, 3, &cc);
	CHECK_EQ((uint32_t)c, (uint32_t)a); /* LIFO free stack: A's entry */
	wait_done(q, 2);
	CHECK_EQ(flexsc_reap(q, comp, 4), 2);
	CHECK_EQ(comp[0].call, b);
	CHECK(comp[0].cookie == &cb);
	CHECK_EQ(comp[0].ret, 2);
	CHECK_EQ(comp[1].call, c);
	CHECK(comp[1].cookie == &cc);
	CHECK_EQ(comp[1].ret, 3);
	CHECK_EQ(flexsc_reap(q, comp, 4), 0);

	/* a max smaller than what is ready: the oldest come out, the rest stay */
	for (uintptr_t i = 1; i <= 3; i++) {
		post_write(q, devnull, zeros, i, (void *)i);
		wait_done(q, (int)i);
	}
	CHECK_EQ(flexsc_reap(q, comp, 2), 2);
	CHECK(comp[0].cookie == (void *)1 && comp[1].cookie == (void *)2);
	CHECK_EQ(flexsc_reap(q, comp, 0), 0);
	CHECK_EQ(flexsc_reap(q, comp, 4), 1);
	CHECK(comp[0].cookie == (void *)3);
	CHECK_EQ(comp[0].ret, 3);
}

/* With an engine: a read posted first completes after a write posted second. */
static void reap_completion_order(struct flexsc_queue *q)
{
	int p[2];
	char buf[8];
	struct flexsc_completion comp[3];
	static char cr, cw;

	CHECK_EQ(pipe(p), 0);
	flexsc_call_t rd = post_read(q, p[0], buf, sizeof(buf), &cr);
	flexsc_call_t wr = post_write(q, devnull, zeros, 9, &cw);
	wait_done(q, 1); /* only the write can be done */
	CHECK_EQ(write(p[1], "zz", 2), 2);
	wait_done(q, 2);
	CHECK_EQ(flexsc_reap(q, comp, 3), 2);
	CHECK_EQ(comp[0].call, wr);
	CHECK(comp[0].cookie == &cw);
	CHECK_EQ(comp[0].ret, 9);
	CHECK_EQ(comp[1].call, rd);
	CHECK(comp[1].cookie == &cr);
	CHECK_EQ(comp[1].ret, 2);
	close(p[0]), close(p[1]);
}

/* More descriptors than wait_any/wait_all keep on their stack. */
static void many(enum flexsc_engine eng)
{
	enum { N = 100 };
	struct flexsc_config cfg;
	struct flexsc *fx;
	struct flexsc_queue *q;
	flexsc_call_t c[N];
	int64_t rets[N], r;
	unsigned idx, len[N];

	flexsc_config_init(&cfg);
	cfg.pages_per_queue = 2;
	t_open(eng, &fx, &q, &cfg);
	for (unsigned i = 0; i < N; i++)
		c[i] = post_write(q, devnull, zeros, i + 1, NULL);
	CHECK_EQ(flexsc_wait_all(q, c, N, rets, NULL), 0);
	for (unsigned i = 0; i < N; i++)
		CHECK_EQ(rets[i], i + 1);
	for (unsigned i = 0; i < N; i++) {
		len[i] = i + 1;
		c[i] = post_write(q, devnull, zeros, len[i], NULL);
	}
	for (unsigned live = N; live > 0; live--) {
		CHECK_EQ(flexsc_wait_any(q, c, live, &idx, &r, NULL), 0);
		CHECK(idx < live);
		CHECK_EQ(r, len[idx]);
		CHECK_EQ(flexsc_wait_any(q, &c[idx], 1, NULL, &r, NULL), -ESTALE);
		c[idx] = c[live - 1];
		len[idx] = len[live - 1];
	}
	CHECK_EQ(flexsc_wait(q, NULL), -ECHILD);
	t_close(fx, q);
}

/*
 * A queue passed on (flexsc.h: one thread at a time, with external
 * locking): a thread makes it, posts a read that blocks and flushes it,
 * then leaves it alone (alive: io_uring cancels the requests of a thread
 * that exits); another waits for the read there. A ring whose completions
 * only its maker could take (io_uring's DEFER_TASKRUN) never gave it the
 * result: the wait timed out (the 30-s bound).
 */
struct handed {
	enum flexsc_engine eng;
	struct flexsc *fx;
	struct flexsc_queue *q;
	flexsc_call_t call;
	int fd;
	char buf[16];
	pthread_barrier_t posted, done;
};

static void *make_and_post(void *arg)
{
	struct handed *h = arg;

	t_open(h->eng, &h->fx, &h->q, NULL);
	h->call = post_read(h->q, h->fd, h->buf, sizeof(h->buf), NULL);
	CHECK(h->call != 0);
	CHECK(flexsc_flush(h->q) >= 0);
	pthread_barrier_wait(&h->posted); /* the queue is the other thread's now */
	pthread_barrier_wait(&h->done);
	return NULL;
}

static void handed_over(enum flexsc_engine eng, bool sync)
{
	const struct timespec long_ts = { 30, 0 };
	struct handed h = { .eng = eng };
	pthread_t t;
	int p[2];
	int64_t r;

	if (sync)
		return; /* the read would run, and block, at its maker's flush */
	CHECK_EQ(pipe(p), 0);
	h.fd = p[0];
	pthread_barrier_init(&h.posted, NULL, 2);
	pthread_barrier_init(&h.done, NULL, 2);
	CHECK_EQ(pthread_create(&t, NULL, make_and_post, &h), 0);
	pthread_barrier_wait(&h.posted);
	CHECK_EQ(write(p[1], "passed", 6), 6);
	CHECK_EQ(flexsc_wait_one(h.q, h.call, &r, &long_ts), 0);
	CHECK_EQ(r, 6);
	CHECK(!memcmp(h.buf, "passed", 6));
	pthread_barrier_wait(&h.done);
	CHECK_EQ(pthread_join(t, NULL), 0);
	pthread_barrier_destroy(&h.posted);
	pthread_barrier_destroy(&h.done);
	t_close(h.fx, h.q);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	devnull = open("/dev/null", O_RDWR);
	CHECK(devnull >= 0);
	for (unsigned i = 0; i < T_NENGINES; i++) {
		enum flexsc_engine eng = t_engines[i];
		struct flexsc *fx;
		struct flexsc_queue *q;

		t_open(eng, &fx, &q, NULL);
		/* where io_uring is unavailable, auto and uring fall back (threads, sync) */
		enum flexsc_engine used = flexsc_engine_in_use(fx);
		bool sync = used == FLEXSC_ENGINE_SYNC;
		blocked_reads(q, sync);
		handed_over(eng, sync);
		/* the pipe calls went where the engine sends them: all of them (5 reads, 1 write) */
		struct flexsc_stats st;
		CHECK_EQ(flexsc_queue_stats(q, &st), 0);
		CHECK_EQ(st.by_engine[used == FLEXSC_ENGINE_AUTO ? FLEXSC_ENGINE_URING : used], 6);
		if (!sync)
			timeouts(q);
		wait_counts(q);
		reap_order(q);
		if (!sync)
			reap_completion_order(q);
		t_close(fx, q);
		many(eng);
		printf("%s (%s in use): wait_one/any/all released by writes%s, flexsc_wait counts, "
		       "reap oldest first\n",
		       flexsc_engine_name(eng), flexsc_engine_name(used), sync ? "" : ", -ETIME timeouts");
	}
	close(devnull);
	return 0;
}
