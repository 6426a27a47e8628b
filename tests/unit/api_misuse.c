// SPDX-License-Identifier: MIT
/*
 * Misuse of the API that used to crash or silently do the wrong thing, on
 * every engine:
 *   - posting a call that cannot run through a queue (rt_sigreturn,
 *     uprobe, uretprobe, fork, vfork, clone, clone3) is refused with
 *     -EINVAL before anything runs: no signal kills the caller and no child
 *     process appears; exit and exit_group, which can, still run;
 *   - a descriptor of one queue handed to another is refused with -EXDEV
 *     by poll, every wait and cancel, and neither queue's call is collected
 *     by it;
 *   - flexsc_wait_all given one descriptor twice is refused with -EINVAL
 *     before anything is waited for or collected (flexsc_wait_any accepts
 *     it: it collects one call);
 *   - a destroyed queue: a second flexsc_queue_destroy and every call on it
 *     return -EINVAL (until another queue is created).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

static void no_children(void)
{
	errno = 0;
	CHECK_EQ(waitpid(-1, NULL, WNOHANG), -1);
	CHECK_EQ(errno, ECHILD);
}

static void unpostable(struct flexsc_queue *q)
{
	/* a frame of zeros for rt_sigreturn, a stack for clone: none of it may be used */
	static uint64_t frame[512];
	const struct {
		long nr;
		unsigned nargs;
		uint64_t args[6];
	} calls[] = {
		{ SYS_rt_sigreturn, 0, { 0 } },
		{ 335 /* uretprobe */, 0, { 0 } },
		{ 336 /* uprobe */, 0, { 0 } },
		{ SYS_vfork, 0, { 0 } },
		{ SYS_fork, 0, { 0 } },
		{ SYS_clone, 5, { SIGCHLD, 0, 0, 0, 0 } },
		{ SYS_clone, 5, { CLONE_VM | CLONE_VFORK | SIGCHLD, (uint64_t)&frame[256], 0, 0, 0 } },
		{ SYS_clone3, 2, { (uint64_t)frame, 88 } },
	};
	struct flexsc_stats before, after;

	CHECK_EQ(flexsc_queue_stats(q, &before), 0);
	for (unsigned i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		flexsc_call_t c = 0;
		CHECK_EQ(flexsc_post(q, calls[i].nr, calls[i].nargs, calls[i].args, NULL, &c), -EINVAL);
		CHECK_EQ(c, 0);
		CHECK_EQ(flexsc_syscall(q, calls[i].nr, calls[i].nargs, calls[i].args), -EINVAL);
		struct flexsc_op op = { .sysnum = calls[i].nr, .nargs = calls[i].nargs };
		memcpy(op.args, calls[i].args, sizeof(op.args));
		CHECK_EQ(flexsc_post_chain(q, &op, 1, &c), -EINVAL);
		no_children();
	}
	CHECK_EQ(flexsc_queue_stats(q, &after), 0);
	CHECK_EQ(after.posted, before.posted);
	/* the queue still works */
	int64_t r;
	CHECK_EQ(flexsc_wait_one(q, t_post_cheap(q), &r, NULL), 0);
	CHECK_EQ(r, getppid());
}

static _Atomic pid_t exiting_tid;

/* exit ends the posting thread, as syscall(SYS_exit) would. */
static void *post_exit(void *arg)
{
	struct flexsc *fx = arg;
	struct flexsc_queue *q;
	uint64_t a = 0;

	CHECK_EQ(flexsc_queue_create(fx, &q), 0);
	exiting_tid = (pid_t)syscall(SYS_gettid);
	flexsc_post(q, SYS_exit, 1, &a, NULL, NULL);
	fprintf(stderr, "a posted exit returned\n");
	exit(1);
}

static void exit_still_runs(enum flexsc_engine eng)
{
	struct flexsc *fx;
	struct flexsc_queue *q;
	pthread_t t;

	/*
	 * In a child process of its own, and seen ending by the kernel, not
	 * joined: glibc reuses the stack of a thread that ended by a raw exit
	 * without its cleanup, and a sanitizer's bookkeeping never sees it end.
	 * Not under ThreadSanitizer, which then reports every later access to
	 * what the thread touched as a race (its join would wait forever).
	 */
	pid_t pid;
	int status;
#ifndef __SANITIZE_THREAD__
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		t_open(eng, &fx, &q, NULL);
		exiting_tid = 0;
		CHECK_EQ(pthread_create(&t, NULL, post_exit, fx), 0);
		CHECK_EQ(pthread_detach(t), 0);
		unsigned ms = 0;
		while ((!exiting_tid || syscall(SYS_tgkill, getpid(), exiting_tid, 0) == 0) && ms++ < 10000)
			usleep(1000);
		CHECK(exiting_tid != 0);
		CHECK_EQ(syscall(SYS_tgkill, getpid(), exiting_tid, 0), -1);
		CHECK_EQ(errno, ESRCH);
		/* its queue is left behind: flexsc_exit drains it, destroy frees it */
		CHECK_EQ(flexsc_queue_destroy(q), 0);
		CHECK_EQ(flexsc_exit(fx), 0);
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
#else
	(void)fx, (void)q, (void)t, (void)post_exit;
#endif

	/*
	 * exit_group ends the process that posts it, with its status. Not
	 * under ThreadSanitizer: it refuses a new thread in the child of a
	 * multithreaded process, and a ring's context anchor is one.
	 */
#ifndef __SANITIZE_THREAD__
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct flexsc *cfx;
		struct flexsc_queue *cq;
		uint64_t st = 7;
		struct flexsc_config c;
		flexsc_config_init(&c);
		c.engine = eng;
		c.flags |= FLEXSC_QUIET;
		if (flexsc_register(&cfx, &c) || flexsc_queue_create(cfx, &cq))
			_exit(2);
		flexsc_post(cq, SYS_exit_group, 1, &st, NULL, NULL);
		_exit(3);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 7);
#else
	(void)pid, (void)status;
#endif
}

static void cross_queue(struct flexsc *fx, struct flexsc_queue *q, struct flexsc *fx2)
{
	struct flexsc_queue *q2, *q3;
	int64_t r;
	unsigned idx;

	CHECK_EQ(flexsc_queue_create(fx, &q2), 0);
	CHECK_EQ(flexsc_queue_create(fx2, &q3), 0);
	struct flexsc_queue *other[] = { q2, q3 };
	for (unsigned o = 0; o < 2; o++) {
		struct flexsc_queue *b = other[o];
		/* both first posts take entry 0 of their queue, generation for generation */
		flexsc_call_t ca = t_post_cheap(q), cb = t_post_cheap(b);
		CHECK(ca != cb);
		CHECK_EQ(flexsc_poll(b, ca, &r), -EXDEV);
		CHECK_EQ(flexsc_wait_one(b, ca, &r, NULL), -EXDEV);
		flexsc_call_t mix[2] = { cb, ca };
		CHECK_EQ(flexsc_wait_any(b, mix, 2, &idx, &r, NULL), -EXDEV);
		CHECK_EQ(flexsc_wait_all(b, mix, 2, NULL, NULL), -EXDEV);
		CHECK_EQ(flexsc_cancel(b, ca), -EXDEV);
		CHECK_EQ(flexsc_poll(q, cb, &r), -EXDEV);
		CHECK_EQ(flexsc_cancel(q, cb), -EXDEV);
		/* each queue's own call is untouched, and collected once */
		r = -1;
		CHECK_EQ(flexsc_wait_one(b, cb, &r, NULL), 0);
		CHECK_EQ(r, getppid());
		r = -1;
		CHECK_EQ(flexsc_wait_one(q, ca, &r, NULL), 0);
		CHECK_EQ(r, getppid());
		CHECK_EQ(flexsc_poll(q, ca, &r), -ESTALE);
		CHECK_EQ(flexsc_poll(b, cb, &r), -ESTALE);
	}
	CHECK_EQ(flexsc_queue_destroy(q2), 0);
	CHECK_EQ(flexsc_queue_destroy(q3), 0);
}

static void duplicates(struct flexsc_queue *q)
{
	int64_t rets[3] = { -1, -1, -1 }, r;
	unsigned idx = 99;
	flexsc_call_t a = t_post_cheap(q), b = t_post_cheap(q);
	flexsc_call_t twice[2] = { a, a }, three[3] = { a, b, a };
	struct timespec zero = { 0, 0 };

	CHECK_EQ(flexsc_wait_all(q, twice, 2, rets, NULL), -EINVAL);
	CHECK_EQ(flexsc_wait_all(q, three, 3, rets, NULL), -EINVAL);
	CHECK_EQ(flexsc_wait_all(q, three, 3, rets, &zero), -EINVAL);
	CHECK_EQ(rets[0], -1);
	CHECK_EQ(rets[1], -1);
	/* nothing was collected: both still are, once */
	flexsc_call_t ab[2] = { a, b };
	CHECK_EQ(flexsc_wait_all(q, ab, 2, rets, NULL), 0);
	CHECK_EQ(rets[0], getppid());
	CHECK_EQ(rets[1], getppid());

	/* more than 64: the allocated path */
	flexsc_call_t many[80];
	for (unsigned i = 0; i < 79; i++)
		many[i] = t_post_cheap(q);
	many[79] = many[3];
	CHECK_EQ(flexsc_wait_all(q, many, 80, NULL, NULL), -EINVAL);
	CHECK_EQ(flexsc_wait_all(q, many, 79, NULL, NULL), 0);

	/* wait_any: one call named twice is still one call */
	a = t_post_cheap(q);
	twice[0] = twice[1] = a;
	CHECK_EQ(flexsc_wait_any(q, twice, 2, &idx, &r, NULL), 0);
	CHECK_EQ(idx, 0);
	CHECK_EQ(r, getppid());
	CHECK_EQ(flexsc_poll(q, a, &r), -ESTALE);
}

static void destroyed(enum flexsc_engine eng)
{
	struct flexsc *fx;
	struct flexsc_queue *q;
	flexsc_call_t c;
	int64_t r;
	unsigned idx;
	struct flexsc_completion comp;
	struct flexsc_stats st;
	struct timespec zero = { 0, 0 };
	uint64_t a[1] = { 0 };

	t_open(eng, &fx, &q, NULL);
	c = t_post_cheap(q);
	CHECK_EQ(flexsc_queue_destroy(q), 0);
	CHECK_EQ(flexsc_queue_destroy(q), -EINVAL);
	CHECK_EQ(flexsc_post(q, SYS_getppid, 0, NULL, NULL, &c), -EINVAL);
	CHECK_EQ(flexsc_post(q, SYS_close, 1, a, NULL, &c), -EINVAL);
	struct flexsc_op op = { .sysnum = SYS_getppid };
	CHECK_EQ(flexsc_post_chain(q, &op, 1, &c), -EINVAL);
	CHECK_EQ(flexsc_syscall(q, SYS_getppid, 0, NULL), -EINVAL);
	CHECK_EQ(flexsc_flush(q), -EINVAL);
	CHECK_EQ(flexsc_poll(q, c, &r), -EINVAL);
	CHECK_EQ(flexsc_wait_one(q, c, &r, &zero), -EINVAL);
	CHECK_EQ(flexsc_wait_any(q, &c, 1, &idx, &r, &zero), -EINVAL);
	CHECK_EQ(flexsc_wait_all(q, &c, 1, &r, &zero), -EINVAL);
	CHECK_EQ(flexsc_wait(q, &zero), -EINVAL);
	CHECK_EQ(flexsc_reap(q, &comp, 1), -EINVAL);
	CHECK_EQ(flexsc_cancel(q, c), -EINVAL);
	CHECK_EQ(flexsc_queue_wake(q), -EINVAL);
	CHECK_EQ(flexsc_queue_stats(q, &st), -EINVAL);
	CHECK_EQ(flexsc_queue_destroy(q), -EINVAL);

	/* a queue made dead by flexsc_exit is destroyed once, too */
	CHECK_EQ(flexsc_queue_create(fx, &q), 0);
	CHECK_EQ(flexsc_exit(fx), 0);
	CHECK_EQ(flexsc_post(q, SYS_getppid, 0, NULL, NULL, &c), -ESHUTDOWN);
	CHECK_EQ(flexsc_queue_destroy(q), 0);
	CHECK_EQ(flexsc_queue_destroy(q), -EINVAL);
	CHECK_EQ(flexsc_post(q, SYS_getppid, 0, NULL, NULL, &c), -EINVAL);
}

/* argv[1], if given, runs one part: unpostable, exit, cross, dup or destroyed */
int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : NULL;
#define PART(name) (!only || !strcmp(only, name))

	for (unsigned e = 0; e < T_NENGINES; e++) {
		struct flexsc *fx, *fx2;
		struct flexsc_queue *q, *q2;

		t_open(t_engines[e], &fx, &q, NULL);
		t_open(t_engines[e], &fx2, &q2, NULL);
		if (PART("unpostable"))
			unpostable(q);
		if (PART("cross"))
			cross_queue(fx, q, fx2);
		if (PART("dup"))
			duplicates(q);
		t_close(fx2, q2);
		t_close(fx, q);
		if (PART("exit"))
			exit_still_runs(t_engines[e]);
		if (PART("destroyed"))
			destroyed(t_engines[e]);
		no_children();
		printf("%s: unpostable calls, descriptors of other queues, duplicates in wait_all, "
		       "destroyed queues refused\n", flexsc_engine_name(t_engines[e]));
	}
	return 0;
}
