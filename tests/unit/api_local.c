// SPDX-License-Identifier: MIT
/*
 * Calls that must run on the calling thread run there, at post time, on
 * every engine: gettid returns the caller's own id (not a syscall
 * thread's), rt_sigprocmask changes the caller's mask, sched_getaffinity(0)
 * reports the caller's affinity, prctl(PR_GET_NAME) the caller's name.
 * flexsc_sysinfo reports them FLEXSC_CLASS_LOCAL with a reason. futex
 * FUTEX_LOCK_PI (which records the caller's TID as the owner) and
 * close_range(CLOSE_RANGE_UNSHARE) are local by their arguments:
 * stats.by_engine[FLEXSC_ENGINE_AUTO] counts them.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helpers.h"

static int64_t post_local(struct flexsc_queue *q, long nr, unsigned nargs, const uint64_t *args)
{
	struct flexsc_stats before, after;
	flexsc_call_t c;
	int64_t r;

	CHECK_EQ(flexsc_queue_stats(q, &before), 0);
	CHECK_EQ(flexsc_post(q, nr, nargs, args, NULL, &c), 0);
	/* already done on return: no flush, no batch, no wait */
	CHECK_EQ(flexsc_queue_stats(q, &after), 0);
	CHECK_EQ(after.by_engine[FLEXSC_ENGINE_AUTO], before.by_engine[FLEXSC_ENGINE_AUTO] + 1);
	CHECK_EQ(after.batches, before.batches);
	CHECK_EQ(after.completed, before.completed + 1);
	CHECK_EQ(flexsc_poll(q, c, &r), 0);
	return r;
}

static void check_class(struct flexsc *fx, long nr, const char *name)
{
	struct flexsc_sysinfo si;

	CHECK_EQ(flexsc_sysinfo(fx, nr, &si), 0);
	CHECK(si.name && !strcmp(si.name, name));
	CHECK_EQ(si.cls, FLEXSC_CLASS_LOCAL);
	CHECK(si.why && si.why[0]);
	CHECK_EQ(si.uring_opcode, -1);
	CHECK(!si.uring_supported);
}

static bool sigusr1_blocked(void)
{
	sigset_t cur;

	CHECK_EQ(pthread_sigmask(SIG_SETMASK, NULL, &cur), 0);
	return sigismember(&cur, SIGUSR1);
}

static void on_caller(enum flexsc_engine eng)
{
	struct flexsc *fx;
	struct flexsc_queue *q;
	struct flexsc_config cfg;

	flexsc_config_init(&cfg);
	cfg.batch_threshold = 64;
	cfg.batch_timeout_us = 0;
	t_open(eng, &fx, &q, &cfg);
	check_class(fx, SYS_gettid, "gettid");
	check_class(fx, SYS_rt_sigprocmask, "rt_sigprocmask");
	check_class(fx, SYS_sched_getaffinity, "sched_getaffinity");
	check_class(fx, SYS_prctl, "prctl");

	/* a pending call stays pending: local calls do not flush the batch */
	flexsc_call_t pend;
	int64_t r;
	CHECK_EQ(flexsc_post(q, SYS_getppid, 0, NULL, NULL, &pend), 0);

	CHECK_EQ(post_local(q, SYS_gettid, 0, NULL), gettid());

	/* rt_sigprocmask: block SIGUSR1 on the caller, then unblock it */
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	CHECK(!sigusr1_blocked());
	uint64_t a[4] = { SIG_BLOCK, (uint64_t)(uintptr_t)&set, (uint64_t)(uintptr_t)&old, 8 };
	CHECK_EQ(post_local(q, SYS_rt_sigprocmask, 4, a), 0);
	CHECK(sigusr1_blocked());
	CHECK(!sigismember(&old, SIGUSR1));
	a[0] = SIG_UNBLOCK;
	CHECK_EQ(post_local(q, SYS_rt_sigprocmask, 4, a), 0);
	CHECK(!sigusr1_blocked());
	CHECK(sigismember(&old, SIGUSR1));

	/* sched_getaffinity(0): the caller's mask, narrowed to one CPU for the check */
	cpu_set_t orig, one, got;
	CHECK_EQ(sched_getaffinity(0, sizeof(orig), &orig), 0);
	int cpu = -1;
	for (int i = CPU_SETSIZE - 1; i >= 0 && cpu < 0; i--)
		if (CPU_ISSET(i, &orig))
			cpu = i;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	CHECK_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
	CPU_ZERO(&got);
	uint64_t ga[3] = { 0, sizeof(got), (uint64_t)(uintptr_t)&got };
	CHECK(post_local(q, SYS_sched_getaffinity, 3, ga) > 0);
	CHECK(CPU_EQUAL(&got, &one));
	CHECK_EQ(sched_setaffinity(0, sizeof(orig), &orig), 0);

	/* prctl(PR_GET_NAME): the caller's name, not "flexsc-sys" */
	char name[16] = "";
	CHECK_EQ(pthread_setname_np(pthread_self(), "fx-local-test"), 0);
	uint64_t pa[2] = { PR_GET_NAME, (uint64_t)(uintptr_t)name };
	CHECK_EQ(post_local(q, SYS_prctl, 2, pa), 0);
	CHECK(!strcmp(name, "fx-local-test"));

	/* futex FUTEX_LOCK_PI: the lock word gets the caller's TID */
	static uint32_t word;
	word = 0;
	uint64_t fa[6] = { (uint64_t)(uintptr_t)&word, FUTEX_LOCK_PI_PRIVATE, 0, 0, 0, 0 };
	CHECK_EQ(post_local(q, SYS_futex, 6, fa), 0);
	CHECK_EQ(word & FUTEX_TID_MASK, (uint32_t)gettid());
	fa[1] = FUTEX_UNLOCK_PI_PRIVATE;
	CHECK_EQ(post_local(q, SYS_futex, 6, fa), 0);
	CHECK_EQ(word, 0);
	fa[1] = FUTEX_TRYLOCK_PI;
	CHECK_EQ(post_local(q, SYS_futex, 6, fa), 0);
	CHECK_EQ(word & FUTEX_TID_MASK, (uint32_t)gettid());
	fa[1] = FUTEX_UNLOCK_PI;
	CHECK_EQ(post_local(q, SYS_futex, 6, fa), 0);
	/* a plain FUTEX_WAKE is not local: it goes with the batch */
	flexsc_call_t wake;
	fa[1] = FUTEX_WAKE_PRIVATE;
	fa[2] = 1;
	struct flexsc_stats st;
	CHECK_EQ(flexsc_post(q, SYS_futex, 6, fa, NULL, &wake), 0);
	CHECK_EQ(flexsc_poll(q, wake, &r), -EINPROGRESS);

	/* in a chain, which runs elsewhere, a call local by its arguments is refused */
	struct flexsc_op pi = { .sysnum = SYS_futex, .nargs = 6,
				.args = { (uint64_t)(uintptr_t)&word, FUTEX_LOCK_PI_PRIVATE } };
	struct flexsc_op cr = { .sysnum = SYS_close_range, .nargs = 3,
				.args = { ~0u, ~0u, CLOSE_RANGE_UNSHARE } };
	struct flexsc_op tid = { .sysnum = SYS_gettid };
	flexsc_call_t cc;
	CHECK_EQ(flexsc_post_chain(q, &pi, 1, &cc), -EINVAL);
	CHECK_EQ(flexsc_post_chain(q, &cr, 1, &cc), -EINVAL);
	CHECK_EQ(flexsc_post_chain(q, &tid, 1, &cc), -EINVAL);
	CHECK_EQ(word, 0);

	/* the pending calls were not flushed by any of the local ones */
	CHECK_EQ(flexsc_queue_stats(q, &st), 0);
	CHECK_EQ(st.batches, 0);
	CHECK_EQ(st.by_engine[FLEXSC_ENGINE_AUTO], 9);
	CHECK_EQ(flexsc_wait_one(q, pend, &r, NULL), 0);
	CHECK_EQ(r, getppid());
	CHECK_EQ(flexsc_wait_one(q, wake, &r, NULL), 0);
	CHECK_EQ(r, 0);
	CHECK_EQ(flexsc_queue_stats(q, &st), 0);
	CHECK_EQ(st.by_engine[FLEXSC_ENGINE_AUTO], 9);
	CHECK_EQ(st.posted, 11);
	CHECK_EQ(st.completed, 11);
	t_close(fx, q);
}

/*
 * close_range(CLOSE_RANGE_UNSHARE) gives the thread that runs it a private
 * descriptor table. Posted from a helper thread, it must be that thread's
 * table: a descriptor the helper opens afterwards is not in ours.
 */
struct unshare_ctx {
	struct flexsc *fx;
	struct flexsc_queue *q;
	int fd;
	int64_t ret;
};

static void *unshare_main(void *arg)
{
	struct unshare_ctx *u = arg;

	CHECK_EQ(flexsc_queue_create(u->fx, &u->q), 0);
	uint64_t a[3] = { ~0u, ~0u, CLOSE_RANGE_UNSHARE };
	flexsc_call_t c;
	CHECK_EQ(flexsc_post(u->q, SYS_close_range, 3, a, NULL, &c), 0);
	CHECK_EQ(flexsc_poll(u->q, c, &u->ret), 0);
	u->fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHECK(u->fd >= 0);
	return NULL;
}

static void unshare_on_caller(enum flexsc_engine eng)
{
	struct unshare_ctx u = { .fd = -1 };
	struct flexsc_stats st;
	pthread_t t;

	struct flexsc_config cfg;
	flexsc_config_init(&cfg);
	cfg.flags |= FLEXSC_QUIET;
	cfg.engine = eng;
	CHECK_EQ(flexsc_register(&u.fx, &cfg), 0);
	CHECK_EQ(pthread_create(&t, NULL, unshare_main, &u), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(u.ret, 0);
	/* the helper's descriptor lived in its private table, gone with it */
	CHECK_EQ(fcntl(u.fd, F_GETFD), -1);
	CHECK_EQ(errno, EBADF);
	CHECK_EQ(flexsc_queue_stats(u.q, &st), 0);
	CHECK_EQ(st.by_engine[FLEXSC_ENGINE_AUTO], 1);
	CHECK_EQ(st.batches, 0);
	/* queue and instance are torn down here, on the shared table, so nothing leaks */
	CHECK_EQ(flexsc_queue_destroy(u.q), 0);
	CHECK_EQ(flexsc_exit(u.fx), 0);

	/* without CLOSE_RANGE_UNSHARE it is an ordinary call */
	struct flexsc *fx;
	struct flexsc_queue *q;
	t_open(eng, &fx, &q, NULL);
	uint64_t a[3] = { ~0u, ~0u, 0 };
	flexsc_call_t c;
	int64_t r;
	CHECK_EQ(flexsc_post(q, SYS_close_range, 3, a, NULL, &c), 0);
	CHECK_EQ(flexsc_wait_one(q, c, &r, NULL), 0);
	CHECK_EQ(r, 0);
	CHECK_EQ(flexsc_queue_stats(q, &st), 0);
	CHECK_EQ(st.by_engine[FLEXSC_ENGINE_AUTO], 0);
	t_close(fx, q);
}

int main(void)
{
	for (unsigned i = 0; i < T_NENGINES; i++) {
		on_caller(t_engines[i]);
		unshare_on_caller(t_engines[i]);
		printf("%s: gettid, rt_sigprocmask, sched_getaffinity, prctl, FUTEX_LOCK_PI and "
		       "close_range(UNSHARE) ran on the caller at post time\n",
		       flexsc_engine_name(t_engines[i]));
	}
	return 0;
}
