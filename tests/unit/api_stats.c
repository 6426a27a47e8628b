// SPDX-License-Identifier: MIT
/*
 * flexsc_queue_stats after a known workload, on every engine: posted and
 * completed count every call once; by_engine says where each call went
 * (AUTO counts local calls; a call cancelled before its flush went
 * nowhere); batches and the histogram agree; waits and wait_ns only grow.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helpers.h"

enum { N_WRITE = 40, N_PPID = 28, N_LOCAL = 20, N_CANCEL = 5, N_CHAIN = 2 };

static uint64_t sum(const uint64_t *v, unsigned n)
{
	uint64_t s = 0;

	for (unsigned i = 0; i < n; i++)
		s += v[i];
	return s;
}

static void workload(enum flexsc_engine eng)
{
	struct flexsc_config cfg;
	struct flexsc *fx;
	struct flexsc_queue *q;
	struct flexsc_stats st, prev;
	struct flexsc_completion comp[64];
	static char buf[256];
	int null = open("/dev/null", O_WRONLY);
	unsigned flushes = 0, collected = 0;

	CHECK(null >= 0);
	flexsc_config_init(&cfg);
	cfg.batch_threshold = 16;
	cfg.batch_timeout_us = 0;
	t_open(eng, &fx, &q, &cfg);
	CHECK_EQ(flexsc_queue_stats(q, &st), 0);
	CHECK_EQ(st.posted + st.completed + st.batches + st.waits + st.wait_ns, 0);
	CHECK_EQ(sum(st.by_engine, 4) + sum(st.batch_hist, FLEXSC_HIST_BUCKETS), 0);
	bool uring = flexsc_engine_in_use(fx) == FLEXSC_ENGINE_AUTO ||
		     flexsc_engine_in_use(fx) == FLEXSC_ENGINE_URING;

	/* cancelled while pending: posted and completed, but never sent to an engine */
	for (unsigned i = 0; i < N_CANCEL; i++) {
		flexsc_call_t c;
		int64_t r;
		CHECK_EQ(flexsc_post(q, SYS_getppid, 0, NULL, NULL, &c), 0);
		CHECK_EQ(flexsc_cancel(q, c), 0);
		CHECK_EQ(flexsc_poll(q, c, &r), 0);
		CHECK_EQ(r, -ECANCELED);
		collected++;
	}
	CHECK_EQ(flexsc_queue_stats(q, &st), 0);
	CHECK_EQ(st.posted, N_CANCEL);
	CHECK_EQ(st.completed, N_CANCEL);
	CHECK_EQ(sum(st.by_engine, 4), 0);
	CHECK_EQ(st.batches, 0);

	/* writes (io_uring-able), getppid (thread-class), gettid (local), chains */
	for (unsigned i = 0; i < N_WRITE; i++) {
		uint64_t a[3] = { (uint64_t)null, (uint64_t)(uintptr_t)buf, i + 1 };
		CHECK_EQ(flexsc_post(q, SYS_write, 3, a, (void *)(uintptr_t)(i + 1), NULL), 0);
		if ((i + 1) % 16 == 0)
			flushes++; /* the threshold */
	}
	CHECK_EQ(flexsc_flush(q), N_WRITE % 16);
	flushes++;
	for (unsigned i = 0; i < N_PPID; i++)
		CHECK_EQ(flexsc_post(q, SYS_getppid, 0, NULL, NULL, NULL), 0);
	flushes += N_PPID / 16;
	for (unsigned i = 0; i < N_LOCAL; i++)
		CHECK_EQ(flexsc_post(q, SYS_gettid, 0, NULL, NULL, NULL), 0);
	struct flexsc_op ops[2] = { { .sysnum = SYS_getppid }, { .sysnum = SYS_getpid } };
	for (unsigned i = 0; i < N_CHAIN; i++) {
		flexsc_call_t cc[2];
		CHECK_EQ(flexsc_post_chain(q, ops, 2, cc), 0);
	}
	CHECK_EQ(flexsc_flush(q), N_PPID % 16 + N_CHAIN); /* a chain is one pending item */
	flushes++;

	const unsigned total = N_CANCEL + N_WRITE + N_PPID + N_LOCAL + 2 * N_CHAIN;
	CHECK_EQ(flexsc_queue_stats(q, &prev), 0);
	CHECK_EQ(prev.posted, total);
	CHECK_EQ(prev.batches, flushes);
	CHECK_EQ(sum(prev.batch_hist, FLEXSC_HIST_BUCKETS), prev.batches);
	while (collected < total) {
		int n = flexsc_wait(q, NULL);
		CHECK(n > 0);
		n = flexsc_reap(q, comp, 64);
		CHECK(n > 0);
		for (int k = 0; k < n; k++)
			if (comp[k].cookie)
				CHECK_EQ(comp[k].ret, (int64_t)(uintptr_t)comp[k].cookie);
		collected += (unsigned)n;
		CHECK_EQ(flexsc_queue_stats(q, &st), 0);
		CHECK(st.completed >= collected && st.completed <= total);
		CHECK(st.waits >= prev.waits && st.wait_ns >= prev.wait_ns);
		prev = st;
	}
	CHECK_EQ(flexsc_wait(q, NULL), -ECHILD);
	CHECK_EQ(flexsc_queue_stats(q, &st), 0);
	CHECK_EQ(st.posted, total);
	CHECK_EQ(st.completed, total);
	CHECK_EQ(st.batches, flushes);
	CHECK_EQ(sum(st.batch_hist, FLEXSC_HIST_BUCKETS), st.batches);
	CHECK_EQ(st.by_engine[FLEXSC_ENGINE_AUTO], N_LOCAL);
	CHECK_EQ(sum(st.by_engine, 4), total - N_CANCEL);
	const uint64_t *e = st.by_engine;
	switch (eng) {
	case FLEXSC_ENGINE_SYNC:
		CHECK_EQ(e[FLEXSC_ENGINE_SYNC], N_WRITE + N_PPID + 2 * N_CHAIN);
		break;
	case FLEXSC_ENGINE_THREADS:
		CHECK_EQ(e[FLEXSC_ENGINE_THREADS], N_WRITE + N_PPID + 2 * N_CHAIN);
		break;
	case FLEXSC_ENGINE_URING:
		/* uring, or sync where io_uring has no opcode */
		if (uring) {
			CHECK_EQ(e[FLEXSC_ENGINE_URING], N_WRITE);
			CHECK_EQ(e[FLEXSC_ENGINE_SYNC], N_PPID + 2 * N_CHAIN);
		}
		break;
	case FLEXSC_ENGINE_AUTO:
		if (uring) {
			CHECK_EQ(e[FLEXSC_ENGINE_URING], N_WRITE);
			CHECK_EQ(e[FLEXSC_ENGINE_THREADS], N_PPID + 2 * N_CHAIN);
		}
		break;
	}
	CHECK_EQ(flexsc_queue_stats(NULL, &st), -EINVAL);
	t_close(fx, q);
	close(null);
	printf("%s: posted %llu = completed, by_engine {auto %llu, uring %llu, threads %llu, sync %llu}, "
	       "%llu batches, %llu waits\n",
	       flexsc_engine_name(eng), (unsigned long long)st.posted,
	       (unsigned long long)e[0], (unsigned long long)e[1], (unsigned long long)e[2],
	       (unsigned long long)e[3], (unsigned long long)st.batches, (unsigned long long)st.waits);
}

/* Two queues keep separate counters. */
static void per_queue(void)
{
	struct flexsc *fx;
	struct flexsc_queue *q, *q2;
	struct flexsc_stats st;

	t_open(FLEXSC_ENGINE_THREADS, &fx, &q, NULL);
	CHECK_EQ(flexsc_queue_create(fx, &q2), 0);
	for (unsigned i = 0; i < 3; i++)
		CHECK_EQ(flexsc_syscall(q, SYS_getppid, 0, NULL), getppid());
	CHECK_EQ(flexsc_syscall(q2, SYS_getppid, 0, NULL), getppid());
	CHECK_EQ(flexsc_queue_stats(q, &st), 0);
	CHECK_EQ(st.posted, 3);
	CHECK_EQ(st.completed, 3);
	CHECK_EQ(st.by_engine[FLEXSC_ENGINE_THREADS], 3);
	CHECK_EQ(flexsc_queue_stats(q2, &st), 0);
	CHECK_EQ(st.posted, 1);
	CHECK_EQ(st.by_engine[FLEXSC_ENGINE_THREADS], 1);
	CHECK_EQ(flexsc_queue_destroy(q2), 0);
	t_close(fx, q);
}

int main(void)
{
	for (unsigned i = 0; i < T_NENGINES; i++)
		workload(t_engines[i]);
	per_queue();
	printf("per-queue counters are separate\n");
	return 0;
}
