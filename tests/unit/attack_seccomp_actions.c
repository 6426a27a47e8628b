// SPDX-License-Identifier: MIT
/*
 * Attack: a seccomp filter on every thread (TSYNC), installed with the
 * inline system call after the library started, whose action for openat
 * is each of:
 *  - SECCOMP_RET_ERRNO(EACCES): the call fails with that errno;
 *  - SECCOMP_RET_TRAP: the program's SIGSYS handler runs once, on the
 *    calling thread, and the call returns what the handler leaves (-ENOSYS);
 *  - SECCOMP_RET_TRACE without a tracer: the call fails with ENOSYS;
 *  - SECCOMP_RET_KILL_THREAD: the calling thread dies, the others live;
 *  - SECCOMP_RET_KILL_PROCESS: the process dies of SIGSYS.
 * Posted, the call must have the same outcome on every engine: the same
 * result, the handler run as often, the same thread or process dead (a
 * syscall thread that died instead would leave its caller waiting
 * forever). The thread-kill case makes the call on a thread of its own
 * (with its own queue) and reports whether that thread returned.
 * Driver: attack.h.
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "attack.h"

static uint32_t action;

static void install(void)
{
	a_catch_sigsys();
	a_filter_openat(action, SECCOMP_FILTER_FLAG_TSYNC);
}

static int64_t probe_openat(struct flexsc_queue *q)
{
	struct a_call c = { SYS_openat, 4, { (uint64_t)AT_FDCWD, P("/dev/null"), O_RDONLY, 0 } };
	return a_probe(q, &c);
}

struct on_thread {
	int64_t ret;
	bool returned;
};

static void *prober(void *arg)
{
	struct on_thread *t = arg;
	struct flexsc_queue *q = NULL;

	if (a_fx)
		CHECK_EQ(flexsc_queue_create(a_fx, &q), 0);
	t->ret = probe_openat(q);
	t->returned = true;
	return NULL;
}

/* On a thread of its own: 1000 + result if that thread returned, 1 if it died. */
static int64_t probe_on_thread(struct flexsc_queue *q)
{
	struct on_thread t = { 0 };
	pthread_t th;
	struct timespec until;

	(void)q;
	CHECK_EQ(pthread_create(&th, NULL, prober, &t), 0);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	CHECK_EQ(pthread_timedjoin_np(th, NULL, &until), 0); /* a thread killed by seccomp is joinable */
	return t.returned ? 1000 + t.ret : 1;
}

static int run(const char *what, uint32_t act, int64_t (*probe)(struct flexsc_queue *))
{
	action = act;
	return a_run("attack_seccomp_actions", what, NULL, install, probe);
}

int main(void)
{
	a_need_root(); /* not for the filter (no_new_privs does) but for SQPOLL and a fair comparison */
	int failed = run("RET_ERRNO(EACCES)", SECCOMP_RET_ERRNO | EACCES, probe_openat) +
		     run("RET_TRAP", SECCOMP_RET_TRAP, probe_openat) +
		     run("RET_TRACE, no tracer", SECCOMP_RET_TRACE, probe_openat) +
		     run("RET_KILL_THREAD", SECCOMP_RET_KILL_THREAD, probe_on_thread) +
		     run("RET_KILL_PROCESS", SECCOMP_RET_KILL_PROCESS, probe_openat);
	return failed ? 1 : 0;
}
