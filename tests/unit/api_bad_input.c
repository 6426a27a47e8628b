// SPDX-License-Identifier: MIT
/*
 * Every documented error of the public API, on every engine: bad system
 * call numbers and argument counts, NULL queues, malformed and spent
 * descriptors, a wait with nothing to wait for, exhausted pages, bad
 * configurations, bad timeouts, and use of a queue after flexsc_exit.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "helpers.h"

static const struct timespec bad_ts = { .tv_sec = 0, .tv_nsec = 1000000000L };
static const struct timespec neg_ts = { .tv_sec = -1, .tv_nsec = 0 };

static void bad_numbers_and_args(struct flexsc_queue *q)
{
	const long bad[] = { -1, 512, 100000, 400, 387, 423, -100000, 1L << 40 };
	uint64_t args[7] = { 0 };
	flexsc_call_t c = 0;
	struct flexsc_stats st;

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ(flexsc_post(q, bad[i], 0, NULL, NULL, &c), -ENOSYS);
		CHECK_EQ(c, 0); /* no descriptor handed out on failure */
		struct flexsc_op op = { .sysnum = bad[i] };
		CHECK_EQ(flexsc_post_chain(q, &op, 1, &c), -ENOSYS);
		CHECK_EQ(flexsc_syscall(q, bad[i], 0, NULL), -ENOSYS);
	}
	CHECK_EQ(flexsc_post(q, SYS_getpid, 7, args, NULL, &c), -EINVAL);
	CHECK_EQ(flexsc_post(q, SYS_getpid, 100, args, NULL, &c), -EINVAL);
	CHECK_EQ(flexsc_post(q, SYS_getpid, 1, NULL, NULL, &c), -EINVAL);
	CHECK_EQ(flexsc_post(q, SYS_write, 3, NULL, NULL, &c), -EINVAL);
	CHECK_EQ(flexsc_syscall(q, SYS_getpid, 7, args), -EINVAL);
	/* nargs 0 with args NULL is fine */
	CHECK_EQ(flexsc_syscall(q, SYS_getpid, 0, NULL), getpid());
	/* nothing of the refused posts was counted */
	CHECK_EQ(flexsc_queue_stats(q, &st), 0);
	CHECK_EQ(st.posted, 1);
}

static void null_queue(void)
{
	flexsc_call_t c = 1;
	int64_t r;
	unsigned idx;
	struct flexsc_completion comp;
	struct flexsc_stats st;
	struct flexsc_op op = { .sysnum = SYS_getpid };

	CHECK_EQ(flexsc_post(NULL, SYS_getpid, 0, NULL, NULL, &c), -EINVAL);
	CHECK_EQ(flexsc_post_chain(NULL, &op, 1, &c), -EINVAL);
	CHECK_EQ(flexsc_flush(NULL), -EINVAL);
	CHECK_EQ(flexsc_poll(NULL, c, &r), -EINVAL);
	CHECK_EQ(flexsc_wait_one(NULL, c, &r, NULL), -EINVAL);
	CHECK_EQ(flexsc_wait_any(NULL, &c, 1, &idx, &r, NULL), -EINVAL);
	CHECK_EQ(flexsc_wait_all(NULL, &c, 1, &r, NULL), -EINVAL);
	CHECK_EQ(flexsc_wait(NULL, NULL), -EINVAL);
	CHECK_EQ(flexsc_reap(NULL, &comp, 1), -EINVAL);
	CHECK_EQ(flexsc_cancel(NULL, c), -EINVAL);
	CHECK_EQ(flexsc_syscall(NULL, SYS_getpid, 0, NULL), -EINVAL);
	CHECK_EQ(flexsc_queue_stats(NULL, &st), -EINVAL);
	CHECK_EQ(flexsc_queue_destroy(NULL), -EINVAL);
	CHECK_EQ(flexsc_queue_wake(NULL), -EINVAL);
	CHECK_EQ(flexsc_exit(NULL), -EINVAL);
	CHECK_EQ(flexsc_queue_create(NULL, NULL), -EINVAL);
	CHECK_EQ(flexsc_register(NULL, NULL), -EINVAL);
	flexsc_config_init(NULL); /* must not crash */
}

static void other_nulls(struct flexsc *fx, struct flexsc_queue *q)
{
	flexsc_call_t c = t_post_cheap(q);
	struct flexsc_sysinfo si;
	int64_t r;

	CHECK_EQ(flexsc_queue_create(fx, NULL), -EINVAL);
	CHECK_EQ(flexsc_queue_stats(q, NULL), -EINVAL);
	CHECK_EQ(flexsc_reap(q, NULL, 1), -EINVAL);
	CHECK_EQ(flexsc_reap(q, NULL, 0), 0);
	CHECK_EQ(flexsc_wait_any(q, NULL, 1, NULL, &r, NULL), -EINVAL);
	CHECK_EQ(flexsc_wait_any(q, &c, 0, NULL, &r, NULL), -EINVAL);
	CHECK_EQ(flexsc_wait_all(q, NULL, 1, &r, NULL), -EINVAL);
	CHECK_EQ(flexsc_wait_all(q, &c, 0, &r, NULL), -EINVAL);
	CHECK_EQ(flexsc_post_chain(q, NULL, 1, NULL), -EINVAL);
	CHECK_EQ(flexsc_sysinfo(fx, SYS_getpid, NULL), -EINVAL);
	CHECK_EQ(flexsc_sysinfo(fx, SYS_getpid, &si), 0);
	/* the posted call is untouched by all of that */
	CHECK_EQ(flexsc_wait_one(q, c, &r, NULL), 0);
	CHECK_EQ(r, getppid());
}

static void bad_descriptors(struct flexsc_queue *q)
{
	const unsigned nentries = 8 * FLEXSC_ENTRIES_PER_PAGE; /* default pages_per_queue */
	flexsc_call_t bad[] = {
		0,
		nentries + 1,                     /* index beyond the entries */
		((uint64_t)1 << 32) | (nentries + 1),
		((uint64_t)1 << 32) | 0xffffffffu,
		((uint64_t)7 << 32) | 0,          /* index part 0 */
		((uint64_t)1000 << 32) | 1,       /* a generation never reached */
		~(uint64_t)0,
	};
	int64_t r;
	unsigned idx;
	struct flexsc_stats st;

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		flexsc_call_t c = bad[i];
		CHECK_EQ(flexsc_poll(q, c, &r), -EINVAL);
		CHECK_EQ(flexsc_wait_one(q, c, &r, NULL), -EINVAL);
		CHECK_EQ(flexsc_wait_any(q, &c, 1, &idx, &r, NULL), -EINVAL);
		CHECK_EQ(flexsc_wait_all(q, &c, 1, &r, NULL), -EINVAL);
		CHECK_EQ(flexsc_cancel(q, c), -EINVAL);
	}
	/* one bad descriptor among good ones: the good one is not collected */
	flexsc_call_t mix[2] = { t_post_cheap(q), bad[1] };
	CHECK_EQ(flexsc_wait_any(q, mix, 2, &idx, &r, NULL), -EINVAL);
	CHECK_EQ(flexsc_wait_all(q, mix, 2, NULL, NULL), -EINVAL);
	CHECK_EQ(flexsc_wait_one(q, mix[0], &r, NULL), 0);

	/* spent descriptors: waited twice, polled twice, reaped then polled, cancelled */
	flexsc_call_t c = t_post_cheap(q);
	CHECK_EQ(flexsc_wait_one(q, c, &r, NULL), 0);
	CHECK_EQ(flexsc_wait_one(q, c, &r, NULL), -ESTALE);
	CHECK_EQ(flexsc_wait_any(q, &c, 1, &idx, &r, NULL), -ESTALE);
	CHECK_EQ(flexsc_wait_all(q, &c, 1, &r, NULL), -ESTALE);
	CHECK_EQ(flexsc_poll(q, c, &r), -ESTALE);
	CHECK_EQ(flexsc_cancel(q, c), -ESTALE);

	c = t_post_cheap(q);
	CHECK_EQ(flexsc_wait(q, NULL), 1);
	CHECK_EQ(flexsc_poll(q, c, &r), 0);
	CHECK_EQ(r, getppid());
	CHECK_EQ(flexsc_poll(q, c, &r), -ESTALE);

	c = t_post_cheap(q);
	struct flexsc_completion comp;
	CHECK_EQ(flexsc_wait(q, NULL), 1);
	CHECK_EQ(flexsc_reap(q, &comp, 1), 1);
	CHECK_EQ(comp.call, c);
	CHECK_EQ(flexsc_poll(q, c, &r), -ESTALE);
	CHECK_EQ(flexsc_wait_one(q, c, &r, NULL), -ESTALE);

	/* the entry was reused (LIFO): the old descriptor stays stale, the new one is live */
	flexsc_call_t c2 = t_post_cheap(q);
	CHECK((uint32_t)c2 == (uint32_t)c && c2 != c);
	CHECK_EQ(flexsc_poll(q, c, &r), -ESTALE);
	CHECK_EQ(flexsc_wait_one(q, c2, &r, NULL), 0);

	/* nothing posted: a wait would never end */
	CHECK_EQ(flexsc_wait(q, NULL), -ECHILD);
	struct timespec zero = { 0, 0 };
	CHECK_EQ(flexsc_wait(q, &zero), -ECHILD);
	CHECK_EQ(flexsc_reap(q, &comp, 1), 0);

	/* every refused call above left the counters consistent */
	CHECK_EQ(flexsc_queue_stats(q, &st), 0);
	CHECK_EQ(st.posted, st.completed);
}

static void bad_timeouts(struct flexsc_queue *q)
{
	flexsc_call_t c = t_post_cheap(q);
	int64_t r;
	unsigned idx;

	CHECK_EQ(flexsc_wait_one(q, c, &r, &bad_ts), -EINVAL);
	CHECK_EQ(flexsc_wait_any(q, &c, 1, &idx, &r, &bad_ts), -EINVAL);
	CHECK_EQ(flexsc_wait_all(q, &c, 1, &r, &bad_ts), -EINVAL);
	CHECK_EQ(flexsc_wait(q, &bad_ts), -EINVAL);
	CHECK_EQ(flexsc_wait_one(q, c, &r, &neg_ts), -EINVAL);
	CHECK_EQ(flexsc_wait(q, &neg_ts), -EINVAL);
	struct timespec negns = { 0, -1 };
	CHECK_EQ(flexsc_wait_one(q, c, &r, &negns), -EINVAL);
	/* still collectable */
	CHECK_EQ(flexsc_wait_one(q, c, &r, NULL), 0);
	CHECK_EQ(r, getppid());
}

/* pages_per_queue 1: 64 entries; the 65th post finds none. */
static void exhaustion(enum flexsc_engine eng)
{
	struct flexsc_config cfg;
	struct flexsc *fx;
	struct flexsc_queue *q;
	flexsc_call_t calls[FLEXSC_ENTRIES_PER_PAGE], extra = 0;
	int64_t r;

	flexsc_config_init(&cfg);
	cfg.pages_per_queue = 1;
	t_open(eng, &fx, &q, &cfg);
	for (unsigned i = 0; i < FLEXSC_ENTRIES_PER_PAGE; i++)
		CHECK_EQ(flexsc_post(q, SYS_getppid, 0, NULL, NULL, &calls[i]), 0);
	/* all done or in flight, none collected */
	CHECK_EQ(flexsc_post(q, SYS_getppid, 0, NULL, NULL, &extra), -EAGAIN);
	CHECK_EQ(extra, 0);
	CHECK_EQ(flexsc_post(q, SYS_gettid, 0, NULL, NULL, &extra), -EAGAIN); /* local calls need an entry too */
	struct flexsc_op ops[2] = { { .sysnum = SYS_getpid }, { .sysnum = SYS_getpid } };
	flexsc_call_t cc[2];
	CHECK_EQ(flexsc_post_chain(q, ops, 2, cc), -EAGAIN);
	CHECK_EQ(flexsc_wait_one(q, calls[17], &r, NULL), 0);
	CHECK_EQ(r, getppid());
	/* one entry free: a chain of two still does not fit, one call does */
	CHECK_EQ(flexsc_post_chain(q, ops, 2, cc), -EAGAIN);
	CHECK_EQ(flexsc_post(q, SYS_getppid, 0, NULL, NULL, &calls[17]), 0);
	CHECK_EQ(flexsc_post(q, SYS_getppid, 0, NULL, NULL, &extra), -EAGAIN);
	int64_t rets[FLEXSC_ENTRIES_PER_PAGE];
	CHECK_EQ(flexsc_wait_all(q, calls, FLEXSC_ENTRIES_PER_PAGE, rets, NULL), 0);
	for (unsigned i = 0; i < FLEXSC_ENTRIES_PER_PAGE; i++)
		CHECK_EQ(rets[i], getppid());
	/* all free again */
	for (unsigned i = 0; i < FLEXSC_ENTRIES_PER_PAGE; i++)
		CHECK_EQ(flexsc_post(q, SYS_getppid, 0, NULL, NULL, &calls[i]), 0);
	CHECK_EQ(flexsc_wait_all(q, calls, FLEXSC_ENTRIES_PER_PAGE, NULL, NULL), 0);
	t_close(fx, q);
}

static void bad_configs(void)
{
	struct flexsc_config c;
	struct flexsc *fx = NULL;
	cpu_set_t mask;

#define EXPECT_BAD(field_stmt)                                        \
	do {                                                          \
		flexsc_config_init(&c);                               \
		c.flags |= FLEXSC_QUIET;                              \
		field_stmt;                                           \
		fx = NULL;                                            \
		CHECK_EQ(flexsc_register(&fx, &c), -EINVAL);          \
		CHECK(fx == NULL);                                    \
	} while (0)

	EXPECT_BAD(c.pages_per_queue = 0);
	EXPECT_BAD(c.pages_per_queue = 65);
	EXPECT_BAD(c.batch_threshold = 0);
	EXPECT_BAD(c.max_threads = 0);
	EXPECT_BAD(c.iowq_max_workers = 0);
	EXPECT_BAD(c.engine = (enum flexsc_engine)4);
	EXPECT_BAD(c.engine = (enum flexsc_engine)-1);
	EXPECT_BAD(c.nr_syscall_cpus = FLEXSC_MAX_CPUS + 1);
	EXPECT_BAD((c.engine = FLEXSC_ENGINE_THREADS, c.sqpoll = true));
	EXPECT_BAD((c.engine = FLEXSC_ENGINE_SYNC, c.sqpoll = true));
	EXPECT_BAD((c.nr_syscall_cpus = 1, c.syscall_cpus[0] = -1));
	EXPECT_BAD((c.nr_syscall_cpus = 2, c.syscall_cpus[0] = 0, c.syscall_cpus[1] = -5));
	EXPECT_BAD((c.nr_syscall_cpus = 1, c.syscall_cpus[0] = 1 << 20));
	EXPECT_BAD(c.reserved[0] = 1);
	EXPECT_BAD(c.reserved[7] = 1);

	/* a CPU the machine does not have */
	int ncpus = get_nprocs_conf();
	EXPECT_BAD((c.nr_syscall_cpus = 1, c.syscall_cpus[0] = ncpus));
	EXPECT_BAD((c.nr_syscall_cpus = 2, c.syscall_cpus[0] = 0, c.syscall_cpus[1] = ncpus + 7));
	/*
	 * A CPU outside the caller's own affinity is allowed (pinning the
	 * caller to one core and its syscall threads to another is the point).
	 */
	CHECK_EQ(sched_getaffinity(0, sizeof(mask), &mask), 0);
	int present = -1;
	for (int cpu = 0; cpu < CPU_SETSIZE && present < 0; cpu++)
		if (CPU_ISSET(cpu, &mask))
			present = cpu;
	CHECK(present >= 0);
	if (CPU_COUNT(&mask) >= 2) {
		cpu_set_t one;
		int other = -1;
		CPU_ZERO(&one);
		CPU_SET(present, &one);
		for (int cpu = present + 1; cpu < CPU_SETSIZE && other < 0; cpu++)
			if (CPU_ISSET(cpu, &mask))
				other = cpu;
		CHECK_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
		flexsc_config_init(&c);
		c.flags |= FLEXSC_QUIET;
		c.nr_syscall_cpus = 1;
		c.syscall_cpus[0] = other;
		CHECK_EQ(flexsc_register(&fx, &c), 0);
		CHECK_EQ(flexsc_exit(fx), 0);
		CHECK_EQ(sched_setaffinity(0, sizeof(mask), &mask), 0);
	}
#undef EXPECT_BAD
	/* the boundaries themselves are accepted */
	flexsc_config_init(&c);
	c.flags |= FLEXSC_QUIET;
	c.pages_per_queue = 64;
	c.batch_threshold = 1;
	c.nr_syscall_cpus = 1;
	c.syscall_cpus[0] = present;
	CHECK_EQ(flexsc_register(&fx, &c), 0);
	CHECK_EQ(flexsc_exit(fx), 0);
	CHECK_EQ(flexsc_register(&fx, NULL), 0); /* NULL config: the defaults */
	CHECK_EQ(flexsc_exit(fx), 0);
}

/* A queue left alive at flexsc_exit: -ESHUTDOWN, then destroy still frees it. */
static void after_exit(enum flexsc_engine eng)
{
	struct flexsc *fx;
	struct flexsc_queue *q, *q2 = NULL;
	flexsc_call_t done_call, pending_call, c = 0;
	int64_t r;
	struct flexsc_completion comp;
	struct flexsc_op op = { .sysnum = SYS_getpid };

	t_open(eng, &fx, &q, NULL);
	CHECK_EQ(flexsc_post(q, SYS_getppid, 0, NULL, NULL, &done_call), 0);
	CHECK_EQ(flexsc_wait(q, NULL), 1);
	CHECK_EQ(flexsc_post(q, SYS_getppid, 0, NULL, NULL, &pending_call), 0);
	CHECK_EQ(flexsc_exit(fx), 0); /* drains q: the results are dropped */

	CHECK_EQ(flexsc_post(q, SYS_getpid, 0, NULL, NULL, &c), -ESHUTDOWN);
	CHECK_EQ(c, 0);
	CHECK_EQ(flexsc_post(q, SYS_gettid, 0, NULL, NULL, &c), -ESHUTDOWN);
	CHECK_EQ(flexsc_post_chain(q, &op, 1, &c), -ESHUTDOWN);
	CHECK_EQ(flexsc_flush(q), -ESHUTDOWN);
	CHECK_EQ(flexsc_syscall(q, SYS_getpid, 0, NULL), -ESHUTDOWN);
	/*
	 * Whether the drain dropped the results is not specified (it reaps
	 * what was in flight on io_uring or syscall threads, and leaves
	 * synchronous results in place): either spent, or collectable once
	 * with the right result.
	 */
	flexsc_call_t both[2] = { done_call, pending_call };
	for (unsigned i = 0; i < 2; i++) {
		int err = flexsc_poll(q, both[i], &r);
		CHECK(err == 0 || err == -ESTALE);
		if (err == 0)
			CHECK_EQ(r, getppid());
		CHECK_EQ(flexsc_poll(q, both[i], &r), -ESTALE);
		CHECK_EQ(flexsc_wait_one(q, both[i], &r, NULL), -ESTALE);
		CHECK_EQ(flexsc_cancel(q, both[i]), -ESTALE);
	}
	CHECK_EQ(flexsc_wait(q, NULL), -ECHILD);
	CHECK_EQ(flexsc_reap(q, &comp, 1), 0);
	struct flexsc_stats st;
	CHECK_EQ(flexsc_queue_stats(q, &st), 0);
	CHECK_EQ(st.posted, 2);
	CHECK_EQ(st.completed, 2);

	/* the instance is gone */
	CHECK_EQ(flexsc_exit(fx), -EINVAL);
	CHECK_EQ(flexsc_queue_create(fx, &q2), -EINVAL);
	CHECK(q2 == NULL);
	CHECK_EQ(flexsc_queue_destroy(q), 0); /* frees it: LeakSanitizer checks */
}

static void sysinfo_errors(void)
{
	struct flexsc_sysinfo si;
	const long bad[] = { -1, 512, 100000, 400 };

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ(flexsc_sysinfo(NULL, bad[i], &si), -ENOSYS);
	}
	CHECK_EQ(flexsc_sysinfo(NULL, SYS_read, &si), 0);
	CHECK(si.name && !strcmp(si.name, "read"));
	CHECK(!si.uring_supported); /* no instance: nothing probed */
}

int main(void)
{
	null_queue();
	bad_configs();
	sysinfo_errors();
	for (unsigned i = 0; i < T_NENGINES; i++) {
		enum flexsc_engine eng = t_engines[i];
		struct flexsc *fx;
		struct flexsc_queue *q;

		t_open(eng, &fx, &q, NULL);
		bad_numbers_and_args(q);
		other_nulls(fx, q);
		bad_descriptors(q);
		bad_timeouts(q);
		t_close(fx, q);
		exhaustion(eng);
		after_exit(eng);
		printf("%s: -ENOSYS, -EINVAL, -ESTALE, -ECHILD, -EAGAIN and -ESHUTDOWN as documented\n",
		       flexsc_engine_name(eng));
	}
	printf("bad configurations, NULL queues and sysinfo errors refused with -EINVAL/-ENOSYS\n");
	return 0;
}
