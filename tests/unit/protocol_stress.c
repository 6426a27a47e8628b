// SPDX-License-Identifier: MIT
/*
 * The page protocol under stress: several application threads, each with
 * its own queue of one syscall page (64 entries, so every entry is reused
 * thousands of times), on every engine, post calls whose results are known
 * in advance and collect them with every collection path at random:
 * flexsc_reap, flexsc_poll, flexsc_wait_one, _any, _all, flexsc_wait, and
 * flexsc_syscall; now and then a call is cancelled. Each call carries its
 * sequence number as cookie. The check: every call completes exactly once
 * (no loss, no duplicate), with its own result, through the descriptor it
 * was given; an entry is never handed out while its previous call is
 * uncollected; -EAGAIN comes exactly when all 64 entries are uncollected.
 *
 * At least 10^6 calls in a plain build; FLEXSC_STRESS_CALLS sets the total
 * (sanitizer builds default to fewer, to stay within about a minute).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helpers.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define T_TSAN 1
#endif
#if __has_feature(address_sanitizer)
#define T_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define T_TSAN 1
#endif
#if defined(__SANITIZE_ADDRESS__)
#define T_ASAN 1
#endif

#if defined(T_TSAN)
#define DEFAULT_CALLS 400000u
#elif defined(T_ASAN)
#define DEFAULT_CALLS 1000000u
#else
#define DEFAULT_CALLS 2000000u
#endif

#define NTHREADS 4
#define NENTRIES FLEXSC_ENTRIES_PER_PAGE

static const struct timespec long_ts = { 30, 0 };
static int devnull;
static char wbuf[4096];
static pid_t ppid;

enum kind { K_PPID, K_WRITE, K_BADF, K_TID, K_KINDS };

struct slot {
	flexsc_call_t call;
	uint32_t seq;
	bool live, cancelled;
};

struct worker {
	struct flexsc *fx;
	unsigned id, ncalls;
	pthread_t t;
	pid_t tid;
	uint64_t rng;
	struct flexsc_queue *q;
	struct slot slot[NENTRIES];
	unsigned live;            /* posted, not collected */
	unsigned next_seq, collected;
	uint8_t *done;            /* per sequence number */
	char rbuf[8];
	unsigned long eagain, cancels, by_method[7];
};

static uint64_t rnd(struct worker *w)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return w->rng;
}

static enum kind kind_of(uint32_t seq)
{
	return (enum kind)((seq * 2654435761u) >> 7) % K_KINDS;
}

static unsigned len_of(uint32_t seq)
{
	return 1 + seq % sizeof(wbuf);
}

static int64_t expected(const struct worker *w, uint32_t seq)
{
	switch (kind_of(seq)) {
	case K_PPID: return ppid;
	case K_WRITE: return len_of(seq);
	case K_BADF: return -EBADF;
	default: return w->tid;
	}
}

static void fail(const struct worker *w, const char *what, uint32_t seq, int64_t v)
{
	fprintf(stderr, "thread %u, %s: seq %u: %s (%lld)\n", w->id,
		flexsc_engine_name(flexsc_engine_in_use(w->fx)), seq, what, (long long)v);
	exit(1);
}

/* One completion, by whatever path: must be a live call of ours, once, with its result. */
static void account(struct worker *w, flexsc_call_t call, uint32_t seq, int64_t ret)
{
	uint32_t low = (uint32_t)call & 0xffff; /* index + 1 (above it, the queue's tag) */

	if (low == 0 || low > NENTRIES)
		fail(w, "completion names no entry", seq, (int64_t)call);
	struct slot *s = &w->slot[low - 1];
	if (!s->live || s->call != call)
		fail(w, "completion of a call that is not live in its entry", seq, (int64_t)call);
	if (s->seq != seq)
		fail(w, "completion carries another call's cookie", seq, s->seq);
	if (seq >= w->ncalls || w->done[seq])
		fail(w, "duplicate completion", seq, ret);
	int64_t want = expected(w, seq);
	if (ret != want && !(s->cancelled && ret == -ECANCELED))
		fail(w, "wrong result", seq, ret);
	w->done[seq] = 1;
	s->live = false;
	w->live--;
	w->collected++;
	/* a collected descriptor is spent, whichever path collected it */
	if (seq % 16 == 0) {
		int64_t r;
		int err = flexsc_poll(w->q, call, &r);
		if (err != -ESTALE)
			fail(w, "a collected descriptor is not spent", seq, err);
	}
}

/* Returns false on -EAGAIN. */
static bool post_one(struct worker *w)
{
	uint32_t seq = w->next_seq;
	uint64_t a[3] = { 0 };
	long nr;
	unsigned nargs = 0;
	flexsc_call_t call = 0;

	switch (kind_of(seq)) {
	case K_PPID:
		nr = SYS_getppid;
		break;
	case K_WRITE:
		nr = SYS_write, nargs = 3;
		a[0] = (uint64_t)devnull, a[1] = (uint64_t)(uintptr_t)wbuf, a[2] = len_of(seq);
		break;
	case K_BADF:
		nr = SYS_read, nargs = 3;
		a[0] = (uint64_t)-1, a[1] = (uint64_t)(uintptr_t)w->rbuf, a[2] = 1;
		break;
	default:
		nr = SYS_gettid;
		break;
	}
	int err = flexsc_post(w->q, nr, nargs, a, (void *)(uintptr_t)(seq + 1), &call);
	if (err == -EAGAIN) {
		if (w->live != NENTRIES)
			fail(w, "-EAGAIN with free entries", seq, w->live);
		w->eagain++;
		return false;
	}
	if (err)
		fail(w, "flexsc_post failed", seq, err);
	if (w->live == NENTRIES)
		fail(w, "posted with every entry in use", seq, (int64_t)call);
	uint32_t low = (uint32_t)call & 0xffff; /* index + 1 (above it, the queue's tag) */
	if (low == 0 || low > NENTRIES)
		fail(w, "descriptor names no entry", seq, (int64_t)call);
	struct slot *s = &w->slot[low - 1];
	if (s->live)
		fail(w, "entry handed out while its call is uncollected", seq, s->seq);
	*s = (struct slot){ .call = call, .seq = seq, .live = true };
	w->live++;
	w->next_seq++;
	if (rnd(w) % 61 == 0) {
		err = flexsc_cancel(w->q, call);
		if (err != 0 && err != -EALREADY)
			fail(w, "flexsc_cancel", seq, err);
		s->cancelled = err == 0;
		w->cancels += err == 0;
	}
	return true;
}

/* A live slot, starting the search at a random place; NULL if none. */
static struct slot *some_live(struct worker *w)
{
	unsigned start = (unsigned)(rnd(w) % NENTRIES);

	for (unsigned i = 0; i < NENTRIES; i++) {
		struct slot *s = &w->slot[(start + i) % NENTRIES];
		if (s->live)
			return s;
	}
	return NULL;
}

static void collect(struct worker *w)
{
	struct flexsc_completion comp[16];
	flexsc_call_t calls[8];
	struct slot *which[8];
	int64_t rets[8], r;
	unsigned m = (unsigned)(rnd(w) % 7), n, idx;
	int err;
	struct slot *s;

	w->by_method[m]++;
	switch (m) {
	case 0: /* reap */
		err = flexsc_reap(w->q, comp, 1 + (unsigned)(rnd(w) % 16));
		if (err < 0)
			fail(w, "flexsc_reap", 0, err);
		for (int k = 0; k < err; k++)
			account(w, comp[k].call, (uint32_t)((uintptr_t)comp[k].cookie - 1), comp[k].ret);
		if (err == 0 && w->live) {
			/* nothing ready: wait for something, or reap would spin on unflushed calls */
			err = flexsc_wait(w->q, &long_ts);
			if (err < 1)
				fail(w, "flexsc_wait with calls live", 0, err);
		}
		break;
	case 1: /* poll */
		if (!(s = some_live(w)))
			break;
		err = flexsc_poll(w->q, s->call, &r);
		if (err == 0)
			account(w, s->call, s->seq, r);
		else if (err != -EINPROGRESS)
			fail(w, "flexsc_poll", s->seq, err);
		break;
	case 2: /* wait_one */
		if (!(s = some_live(w)))
			break;
		err = flexsc_wait_one(w->q, s->call, &r, &long_ts);
		if (err)
			fail(w, "flexsc_wait_one (lost completion?)", s->seq, err);
		account(w, s->call, s->seq, r);
		break;
	case 3: /* wait_any over up to 8 */
	case 4: /* wait_all over up to 4 */
		n = 0;
		for (unsigned i = 0; i < NENTRIES && n < (m == 3 ? 8u : 4u); i++) {
			if (w->slot[i].live && rnd(w) % 2) {
				which[n] = &w->slot[i];
				calls[n++] = w->slot[i].call;
			}
		}
		if (n == 0)
			break;
		if (m == 3) {
			err = flexsc_wait_any(w->q, calls, n, &idx, &r, &long_ts);
			if (err || idx >= n)
				fail(w, "flexsc_wait_any (lost completion?)", which[0]->seq, err);
			account(w, calls[idx], which[idx]->seq, r);
		} else {
			err = flexsc_wait_all(w->q, calls, n, rets, &long_ts);
			if (err)
				fail(w, "flexsc_wait_all (lost completion?)", which[0]->seq, err);
			for (unsigned i = 0; i < n; i++)
				account(w, calls[i], which[i]->seq, rets[i]);
		}
		break;
	case 5: /* flexsc_wait, then reap everything it counted */
		if (!w->live)
			break;
		err = flexsc_wait(w->q, &long_ts);
		if (err < 1 || (unsigned)err > w->live)
			fail(w, "flexsc_wait count", 0, err);
		for (int left = err; left > 0;) {
			int got = flexsc_reap(w->q, comp, 16);
			if (got < 1)
				fail(w, "flexsc_reap after flexsc_wait", 0, got);
			for (int k = 0; k < got; k++)
				account(w, comp[k].call, (uint32_t)((uintptr_t)comp[k].cookie - 1), comp[k].ret);
			left -= got;
		}
		break;
	case 6: /* a synchronous call through the queue, when an entry is free */
		if (w->live < NENTRIES && w->next_seq < w->ncalls) {
			int64_t v = flexsc_syscall(w->q, SYS_getppid, 0, NULL);
			if (v != ppid)
				fail(w, "flexsc_syscall", 0, v);
		}
		break;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	w->tid = gettid();
	CHECK_EQ(flexsc_queue_create(w->fx, &w->q), 0);
	while (w->collected < w->ncalls) {
		/* mostly short bursts, now and then more than the 64 entries: -EAGAIN */
		unsigned burst = (unsigned)(rnd(w) % 8 ? rnd(w) % 12 : 80);
		for (unsigned b = 0; b < burst && w->next_seq < w->ncalls; b++)
			if (!post_one(w))
				break;
		if (w->live)
			collect(w);
	}
	/* nothing left anywhere */
	struct flexsc_completion comp;
	CHECK_EQ(flexsc_wait(w->q, NULL), -ECHILD);
	CHECK_EQ(flexsc_reap(w->q, &comp, 1), 0);
	for (unsigned i = 0; i < w->ncalls; i++)
		if (!w->done[i])
			fail(w, "never completed", i, 0);
	struct flexsc_stats st;
	CHECK_EQ(flexsc_queue_stats(w->q, &st), 0);
	/* flexsc_syscall calls (method 6) are posted and completed too */
	if (st.posted != st.completed || st.posted < w->ncalls)
		fail(w, "stats: posted != completed", 0, (int64_t)(st.posted - st.completed));
	CHECK_EQ(flexsc_queue_destroy(w->q), 0);
	return NULL;
}

static unsigned long run(enum flexsc_engine eng, unsigned threshold, unsigned timeout_us,
			 unsigned calls_per_thread)
{
	struct flexsc_config cfg;
	struct worker *w = calloc(NTHREADS, sizeof(*w));
	unsigned long eagain = 0, cancels = 0, methods[7] = { 0 };

	CHECK(w != NULL);
	flexsc_config_init(&cfg);
	cfg.engine = eng;
	cfg.flags |= FLEXSC_QUIET;
	cfg.pages_per_queue = 1;
	cfg.batch_threshold = threshold;
	cfg.batch_timeout_us = timeout_us;
	struct flexsc *fx;
	CHECK_EQ(flexsc_register(&fx, &cfg), 0);
	for (unsigned i = 0; i < NTHREADS; i++) {
		w[i].fx = fx;
		w[i].id = i;
		w[i].ncalls = calls_per_thread;
		w[i].rng = 0x9e3779b97f4a7c15ull * (i + 1) + threshold;
		w[i].done = calloc(calls_per_thread, 1);
		CHECK(w[i].done != NULL);
		CHECK_EQ(pthread_create(&w[i].t, NULL, worker_main, &w[i]), 0);
	}
	for (unsigned i = 0; i < NTHREADS; i++) {
		CHECK_EQ(pthread_join(w[i].t, NULL), 0);
		eagain += w[i].eagain;
		cancels += w[i].cancels;
		for (unsigned m = 0; m < 7; m++)
			methods[m] += w[i].by_method[m];
		free(w[i].done);
	}
	CHECK_EQ(flexsc_exit(fx), 0);
	printf("  %-7s M=%-2u timeout %3u us: %u calls, %lu -EAGAIN, %lu cancelled, collections "
	       "reap %lu poll %lu one %lu any %lu all %lu wait %lu syscall %lu\n",
	       flexsc_engine_name(eng), threshold, timeout_us, NTHREADS * calls_per_thread, eagain,
	       cancels, methods[0], methods[1], methods[2], methods[3], methods[4], methods[5],
	       methods[6]);
	free(w);
	return (unsigned long)NTHREADS * calls_per_thread;
}

int main(void)
{
	unsigned long total = DEFAULT_CALLS, done = 0;
	const char *env = getenv("FLEXSC_STRESS_CALLS");

	if (env && *env)
		total = strtoul(env, NULL, 10);
	devnull = open("/dev/null", O_WRONLY);
	CHECK(devnull >= 0);
	ppid = getppid();
	/* per engine two settings: every post flushes; batches with a time bound */
	unsigned per_thread = (unsigned)(total / (T_NENGINES * 2 * NTHREADS)) + 1;
	for (unsigned i = 0; i < T_NENGINES; i++) {
		done += run(t_engines[i], 1, 0, per_thread);
		done += run(t_engines[i], 16, 50, per_thread);
	}
	printf("%lu calls on %u threads x 64-entry queues, every engine: each completed exactly once "
	       "with its own result\n", done, NTHREADS);
	close(devnull);
	return 0;
}
