// SPDX-License-Identifier: MIT
/*
 * flexsc_cancel: a pending (unflushed) call is cancelled on every engine and
 * never runs; an io_uring read in flight on an empty pipe is cancelled; a
 * call queued for a syscall thread that has not taken it is cancelled; a
 * done call gives -EALREADY, a spent descriptor -ESTALE; and a call that a
 * syscall thread is already executing gives -EALREADY and completes
 * normally once its data arrives.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

static const struct timespec long_ts = { 30, 0 };

/* Pending calls are owned by the owner alone: cancelling one always wins. */
static void cancel_pending(enum flexsc_engine eng)
{
	struct flexsc_config cfg;
	struct flexsc *fx;
	struct flexsc_queue *q;
	struct flexsc_stats st;
	int p[2];
	int64_t r;
	char buf[8];

	flexsc_config_init(&cfg);
	cfg.batch_threshold = 64;
	cfg.batch_timeout_us = 0; /* nothing is flushed behind our back */
	t_open(eng, &fx, &q, &cfg);
	CHECK_EQ(pipe(p), 0);

	flexsc_call_t a = t_post_io(q, SYS_write, p[1], "A", 1, NULL);
	flexsc_call_t b = t_post_io(q, SYS_write, p[1], "B", 1, NULL);
	flexsc_call_t c = t_post_io(q, SYS_write, p[1], "C", 1, NULL);
	CHECK_EQ(flexsc_poll(q, b, &r), -EINPROGRESS);
	CHECK_EQ(flexsc_cancel(q, b), 0);
	/* cancelled means done: collected with -ECANCELED, not executed */
	CHECK_EQ(flexsc_cancel(q, b), -EALREADY);
	CHECK_EQ(flexsc_poll(q, b, &r), 0);
	CHECK_EQ(r, -ECANCELED);
	CHECK_EQ(flexsc_cancel(q, b), -ESTALE);
	CHECK_EQ(t_pipe_bytes(p[0]), 0);
	CHECK_EQ(flexsc_flush(q), 2); /* only a and c are left to flush */
	int64_t rets[2];
	flexsc_call_t ac[2] = { a, c };
	CHECK_EQ(flexsc_wait_all(q, ac, 2, rets, &long_ts), 0);
	CHECK_EQ(rets[0], 1);
	CHECK_EQ(rets[1], 1);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 2);
	/* B never ran (A and C may run in either order, on two syscall threads) */
	CHECK(!memcmp(buf, "AC", 2) || !memcmp(buf, "CA", 2));

	/* cancel the only pending call, then a wait has nothing to wait for */
	flexsc_call_t d = t_post_io(q, SYS_write, p[1], "D", 1, NULL);
	CHECK_EQ(flexsc_cancel(q, d), 0);
	CHECK_EQ(flexsc_flush(q), 0);
	CHECK_EQ(flexsc_wait(q, &long_ts), 1); /* d is done (cancelled), uncollected */
	struct flexsc_completion comp;
	CHECK_EQ(flexsc_reap(q, &comp, 1), 1);
	CHECK_EQ(comp.call, d);
	CHECK_EQ(comp.ret, -ECANCELED);
	CHECK_EQ(flexsc_wait(q, &long_ts), -ECHILD);
	CHECK_EQ(t_pipe_bytes(p[0]), 0);

	/* done: -EALREADY, and the real result stays */
	flexsc_call_t e = t_post_io(q, SYS_write, p[1], "E", 1, NULL);
	CHECK_EQ(flexsc_wait(q, &long_ts), 1);
	CHECK_EQ(flexsc_cancel(q, e), -EALREADY);
	CHECK_EQ(flexsc_wait_one(q, e, &r, &long_ts), 0);
	CHECK_EQ(r, 1);
	CHECK_EQ(flexsc_cancel(q, e), -ESTALE);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 1);

	/* malformed */
	CHECK_EQ(flexsc_cancel(q, 0), -EINVAL);
	CHECK_EQ(flexsc_cancel(q, 100000), -EINVAL);

	/* a local call is done at post time */
	flexsc_call_t t;
	CHECK_EQ(flexsc_post(q, SYS_gettid, 0, NULL, NULL, &t), 0);
	CHECK_EQ(flexsc_cancel(q, t), -EALREADY);
	CHECK_EQ(flexsc_poll(q, t, &r), 0);
	CHECK_EQ(r, gettid());

	CHECK_EQ(flexsc_queue_stats(q, &st), 0);
	CHECK_EQ(st.posted, st.completed);
	close(p[0]), close(p[1]);
	t_close(fx, q);
}

/* io_uring: a read parked on an empty pipe is cancelled in the kernel. */
static void cancel_uring_inflight(enum flexsc_engine eng)
{
	struct flexsc *fx;
	struct flexsc_queue *q;
	struct flexsc_stats st;
	int p[2];
	int64_t r;
	char buf[8];

	t_open(eng, &fx, &q, NULL);
	if (flexsc_engine_in_use(fx) != eng) {
		printf("%s: io_uring unavailable, in-flight cancel not checked\n", flexsc_engine_name(eng));
		t_close(fx, q);
		return;
	}
	CHECK_EQ(pipe(p), 0);
	flexsc_call_t rd = t_post_io(q, SYS_read, p[0], buf, sizeof(buf), NULL);
	CHECK_EQ(flexsc_flush(q), 1);
	CHECK_EQ(flexsc_queue_stats(q, &st), 0);
	CHECK_EQ(st.by_engine[FLEXSC_ENGINE_URING], 1);
	CHECK_EQ(flexsc_poll(q, rd, &r), -EINPROGRESS);
	CHECK_EQ(flexsc_cancel(q, rd), 0);
	CHECK_EQ(flexsc_wait_one(q, rd, &r, &long_ts), 0);
	CHECK_EQ(r, -ECANCELED);
	/* the pipe is untouched: a later write is read by a later read */
	CHECK_EQ(write(p[1], "xyz", 3), 3);
	rd = t_post_io(q, SYS_read, p[0], buf, sizeof(buf), NULL);
	CHECK_EQ(flexsc_wait_one(q, rd, &r, &long_ts), 0);
	CHECK_EQ(r, 3);
	close(p[0]), close(p[1]);
	t_close(fx, q);
	printf("%s: in-flight io_uring read cancelled with -ECANCELED\n", flexsc_engine_name(eng));
}

/*
 * Syscall threads: a call a thread is executing cannot be cancelled; a call
 * queued behind it (one thread, which is blocked) can.
 */
static void cancel_threads(void)
{
	struct flexsc_config cfg;
	struct flexsc *fx;
	struct flexsc_queue *q;
	int p[2], p2[2];
	int64_t r;
	char buf[8];

	flexsc_config_init(&cfg);
	cfg.threads_per_cpu = 1;
	cfg.max_threads = 1;
	t_open(FLEXSC_ENGINE_THREADS, &fx, &q, &cfg);
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(pipe(p2), 0);

	flexsc_call_t rd = t_post_io(q, SYS_read, p[0], buf, sizeof(buf), NULL);
	CHECK_EQ(flexsc_flush(q), 1);
	t_wait_thread_in_read(p[0]);
	CHECK_EQ(flexsc_cancel(q, rd), -EALREADY);
	CHECK_EQ(flexsc_poll(q, rd, &r), -EINPROGRESS);

	/* queued behind the blocked read, never taken: cancellable */
	flexsc_call_t w = t_post_io(q, SYS_write, p2[1], "W", 1, NULL);
	CHECK_EQ(flexsc_flush(q), 1);
	CHECK_EQ(flexsc_cancel(q, w), 0);
	CHECK_EQ(flexsc_poll(q, w, &r), 0);
	CHECK_EQ(r, -ECANCELED);

	CHECK_EQ(write(p[1], "data", 4), 4);
	CHECK_EQ(flexsc_wait_one(q, rd, &r, &long_ts), 0);
	CHECK_EQ(r, 4);
	CHECK(!memcmp(buf, "data", 4));
	/* the thread is free again and the cancelled write never ran */
	flexsc_call_t w2 = t_post_io(q, SYS_write, p2[1], "V", 1, NULL);
	CHECK_EQ(flexsc_wait_one(q, w2, &r, &long_ts), 0);
	CHECK_EQ(r, 1);
	CHECK_EQ(read(p2[0], buf, sizeof(buf)), 1);
	CHECK_EQ(buf[0], 'V');
	close(p[0]), close(p[1]), close(p2[0]), close(p2[1]);
	t_close(fx, q);
	printf("threads: executing call -EALREADY then completes; queued call cancelled\n");
}

int main(void)
{
	for (unsigned i = 0; i < T_NENGINES; i++) {
		cancel_pending(t_engines[i]);
		printf("%s: pending call cancelled (-ECANCELED, never ran); done -EALREADY; spent -ESTALE\n",
		       flexsc_engine_name(t_engines[i]));
	}
	cancel_uring_inflight(FLEXSC_ENGINE_URING);
	cancel_uring_inflight(FLEXSC_ENGINE_AUTO);
	cancel_threads();
	return 0;
}
