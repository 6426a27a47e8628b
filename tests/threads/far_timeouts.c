/*
 * Timeouts far in the future wait, and invalid ones fail as glibc's do.
 *
 * Part 1: one thread per blocking call, each with a timeout at the end of
 * time (tv_sec = LONG_MAX, or INT_MAX ms where the timeout is an int):
 * nanosleep, clock_nanosleep (relative and TIMER_ABSTIME, both clocks),
 * pthread_cond_timedwait (both clocks) and pthread_cond_clockwait,
 * sem_timedwait and sem_clockwait, pthread_mutex_timedlock and
 * pthread_mutex_clocklock, pthread_rwlock_timedrdlock/timedwrlock/
 * clockrdlock/clockwrlock, pthread_timedjoin_np and pthread_clockjoin_np,
 * poll, ppoll, select, pselect and epoll_wait. After 300 ms every one must
 * still be waiting; then each is released the ordinary way (a signal whose
 * handler has no SA_RESTART for the sleeps: EINTR, and the time left of a
 * relative sleep is most of what was asked; a post, an unlock, a write...)
 * and must report that.
 *
 * Part 2: invalid timespecs (tv_nsec < 0 or >= 10^9, and tv_sec < 0) give
 * what NPTL (glibc 2.36) gives, which POSIX allows: EINVAL before anything
 * else for conditions, semaphores, rwlocks and sleeps; for mutexes and
 * joins only when the call would block (a free mutex is taken, a finished
 * thread joined), a negative tv_sec of an absolute time is a time in the
 * past (ETIMEDOUT) where the call would block, and EINVAL for the kernel's
 * sleeps. pthread_timedjoin_np on a running thread with a bad tv_nsec (and
 * tv_sec >= 0) may fail with EINVAL (its man page) or wait for the thread
 * as glibc 2.36 does; either passes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <unistd.h>

#define CHECK_NAME "far_timeouts"
#include "check.h"

static const struct timespec far = { LONG_MAX, 999999999L };

static void on_usr1(int sig)
{
	(void)sig;
}

enum kind {
	K_NANOSLEEP, K_CNS_REL, K_CNS_ABS_RT, K_CNS_ABS_MONO,
	K_COND_RT, K_COND_MONO, K_COND_CLOCK,
	K_SEM_TIMED, K_SEM_CLOCK,
	K_MUTEX_TIMED, K_MUTEX_CLOCK,
	K_RW_RD, K_RW_WR, K_RW_CLOCKRD, K_RW_CLOCKWR,
	K_JOIN_TIMED, K_JOIN_CLOCK,
	K_POLL, K_PPOLL, K_SELECT, K_PSELECT, K_EPOLL,
	K_N
};

static const char *const kind_name[K_N] = {
	"nanosleep", "clock_nanosleep relative", "clock_nanosleep REALTIME ABSTIME",
	"clock_nanosleep MONOTONIC ABSTIME",
	"pthread_cond_timedwait", "pthread_cond_timedwait (MONOTONIC condition)",
	"pthread_cond_clockwait MONOTONIC",
	"sem_timedwait", "sem_clockwait MONOTONIC",
	"pthread_mutex_timedlock", "pthread_mutex_clocklock MONOTONIC",
	"pthread_rwlock_timedrdlock", "pthread_rwlock_timedwrlock",
	"pthread_rwlock_clockrdlock MONOTONIC", "pthread_rwlock_clockwrlock MONOTONIC",
	"pthread_timedjoin_np", "pthread_clockjoin_np MONOTONIC",
	"poll INT_MAX ms", "ppoll", "select", "pselect", "epoll_wait INT_MAX ms",
};

struct waiter {
	enum kind kind;
	pthread_t thread;
	_Atomic int done;
	int ret, err;            /* the call's return, and errno where it sets it */
	struct timespec rem;     /* sleeps: the time left */
	_Atomic int go;          /* conditions: the predicate */
	pthread_t joinee;        /* joins */
	_Atomic int joinee_go;
};

static pthread_mutex_t cond_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond_rt = PTHREAD_COND_INITIALIZER, cond_mono;
static sem_t sem;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static int pipe_fd[2], epfd;

static void *joinee(void *arg)
{
	struct waiter *w = arg;

	while (!atomic_load(&w->joinee_go))
		sleep_ms(5);
	return (void *)(intptr_t)42;
}

static int cond_wait_far(struct waiter *w, pthread_cond_t *c, int clockwait)
{
	int r = 0;

	pthread_mutex_lock(&cond_m);
	while (!atomic_load(&w->go) && r == 0)
		r = clockwait ? pthread_cond_clockwait(c, &cond_m, CLOCK_MONOTONIC, &far)
			      : pthread_cond_timedwait(c, &cond_m, &far);
	pthread_mutex_unlock(&cond_m);
	return r;
}

static void *wait_far(void *arg)
{
	struct waiter *w = arg;
	struct pollfd pf = { pipe_fd[0], POLLIN, 0 };
	fd_set set;
	void *res = NULL;

	FD_ZERO(&set);
	FD_SET(pipe_fd[0], &set);
	errno = 0;
	switch (w->kind) {
	case K_NANOSLEEP: {
		struct timespec req = { LONG_MAX, 0 };
		w->ret = nanosleep(&req, &w->rem);
		w->err = errno;
		break;
	}
	case K_CNS_REL:
		w->ret = clock_nanosleep(CLOCK_MONOTONIC, 0, &far, &w->rem);
		break;
	case K_CNS_ABS_RT:
		w->ret = clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &far, NULL);
		break;
	case K_CNS_ABS_MONO:
		w->ret = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &far, NULL);
		break;
	case K_COND_RT: w->ret = cond_wait_far(w, &cond_rt, 0); break;
	case K_COND_MONO: w->ret = cond_wait_far(w, &cond_mono, 0); break;
	case K_COND_CLOCK: w->ret = cond_wait_far(w, &cond_rt, 1); break;
	case K_SEM_TIMED:
		w->ret = sem_timedwait(&sem, &far);
		w->err = errno;
		break;
	case K_SEM_CLOCK:
		w->ret = sem_clockwait(&sem, CLOCK_MONOTONIC, &far);
		w->err = errno;
		break;
	case K_MUTEX_TIMED:
		w->ret = pthread_mutex_timedlock(&held, &far);
		if (!w->ret)
			pthread_mutex_unlock(&held);
		break;
	case K_MUTEX_CLOCK:
		w->ret = pthread_mutex_clocklock(&held, CLOCK_MONOTONIC, &far);
		if (!w->ret)
			pthread_mutex_unlock(&held);
		break;
	case K_RW_RD:
	case K_RW_CLOCKRD:
		w->ret = w->kind == K_RW_RD ? pthread_rwlock_timedrdlock(&rw, &far)
					    : pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &far);
		if (!w->ret)
			pthread_rwlock_unlock(&rw);
		break;
	case K_RW_WR:
	case K_RW_CLOCKWR:
		w->ret = w->kind == K_RW_WR ? pthread_rwlock_timedwrlock(&rw, &far)
					    : pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &far);
		if (!w->ret)
			pthread_rwlock_unlock(&rw);
		break;
	case K_JOIN_TIMED:
		w->ret = pthread_timedjoin_np(w->joinee, &res, &far);
		w->err = (int)(intptr_t)res;
		break;
	case K_JOIN_CLOCK:
		w->ret = pthread_clockjoin_np(w->joinee, &res, CLOCK_MONOTONIC, &far);
		w->err = (int)(intptr_t)res;
		break;
	case K_POLL:
		w->ret = poll(&pf, 1, INT_MAX);
		w->err = errno;
		break;
	case K_PPOLL:
		w->ret = ppoll(&pf, 1, &far, NULL);
		w->err = errno;
		break;
	case K_SELECT: {
		struct timeval tv = { LONG_MAX, 999999 };
		w->ret = select(pipe_fd[0] + 1, &set, NULL, NULL, &tv);
		w->err = errno;
		break;
	}
	case K_PSELECT:
		w->ret = pselect(pipe_fd[0] + 1, &set, NULL, NULL, &far, NULL);
		w->err = errno;
		break;
	case K_EPOLL: {
		struct epoll_event ev;
		w->ret = epoll_wait(epfd, &ev, 1, INT_MAX);
		w->err = errno;
		break;
	}
	default:
		break;
	}
	atomic_store(&w->done, 1);
	return NULL;
}

/* The time left of an interrupted sleep of LONG_MAX s: at least 30 years (the kernel caps it at 292), at most what was asked. */
static int plausible_rem(const struct timespec *rem, const struct timespec *req)
{
	return rem->tv_nsec >= 0 && rem->tv_nsec < 1000000000L && rem->tv_sec >= 1000000000L &&
	       (rem->tv_sec < req->tv_sec || (rem->tv_sec == req->tv_sec && rem->tv_nsec <= req->tv_nsec));
}

static void far_future(void)
{
	static struct waiter w[K_N];
	char line[160];
	struct sigaction sa;
	pthread_condattr_t ca;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1; /* no SA_RESTART */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&cond_mono, &ca);
	sem_init(&sem, 0, 0);
	if (pipe(pipe_fd) || (epfd = epoll_create1(0)) < 0) {
		perror("pipe/epoll_create1");
		exit(1);
	}
	struct epoll_event ev = { .events = EPOLLIN };
	epoll_ctl(epfd, EPOLL_CTL_ADD, pipe_fd[0], &ev);
	pthread_mutex_lock(&held);
	pthread_rwlock_wrlock(&rw);

	for (int k = 0; k < K_N; k++) {
		w[k].kind = (enum kind)k;
		if (k == K_JOIN_TIMED || k == K_JOIN_CLOCK)
			w[k].joinee = spawn(joinee, &w[k]);
		w[k].thread = spawn(wait_far, &w[k]);
	}
	sleep_ms(300);
	for (int k = 0; k < K_N; k++) {
		snprintf(line, sizeof(line), "%s with the farthest timeout still waits after 300 ms", kind_name[k]);
		result(line, !atomic_load(&w[k].done));
	}

	/* release them, each the ordinary way */
	for (int k = K_NANOSLEEP; k <= K_CNS_ABS_MONO; k++)
		pthread_kill(w[k].thread, SIGUSR1);
	pthread_mutex_lock(&cond_m);
	for (int k = K_COND_RT; k <= K_COND_CLOCK; k++)
		atomic_store(&w[k].go, 1);
	pthread_cond_broadcast(&cond_rt);
	pthread_cond_broadcast(&cond_mono);
	pthread_mutex_unlock(&cond_m);
	sem_post(&sem);
	sem_post(&sem);
	pthread_mutex_unlock(&held);
	pthread_rwlock_unlock(&rw);
	atomic_store(&w[K_JOIN_TIMED].joinee_go, 1);
	atomic_store(&w[K_JOIN_CLOCK].joinee_go, 1);
	if (write(pipe_fd[1], "x", 1) != 1)
		perror("write");
	for (int k = 0; k < K_N; k++)
		pthread_join(w[k].thread, NULL);

	struct timespec req = { LONG_MAX, 0 };
	result("nanosleep interrupted by a handler: -1, EINTR",
	       w[K_NANOSLEEP].ret == -1 && w[K_NANOSLEEP].err == EINTR);
	result("nanosleep reports most of LONG_MAX s left", plausible_rem(&w[K_NANOSLEEP].rem, &req));
	result("clock_nanosleep relative interrupted: EINTR", w[K_CNS_REL].ret == EINTR);
	result("clock_nanosleep relative reports most of LONG_MAX s left", plausible_rem(&w[K_CNS_REL].rem, &far));
	result("clock_nanosleep REALTIME ABSTIME interrupted: EINTR", w[K_CNS_ABS_RT].ret == EINTR);
	result("clock_nanosleep MONOTONIC ABSTIME interrupted: EINTR", w[K_CNS_ABS_MONO].ret == EINTR);
	for (int k = K_COND_RT; k <= K_RW_CLOCKWR; k++) {
		snprintf(line, sizeof(line), "%s released: 0", kind_name[k]);
		result(line, w[k].ret == 0);
	}
	for (int k = K_JOIN_TIMED; k <= K_JOIN_CLOCK; k++) {
		snprintf(line, sizeof(line), "%s joins the thread when it ends", kind_name[k]);
		result(line, w[k].ret == 0 && w[k].err == 42);
	}
	for (int k = K_POLL; k <= K_EPOLL; k++) {
		snprintf(line, sizeof(line), "%s released by a write: 1", kind_name[k]);
		result(line, w[k].ret == 1);
	}
	close(pipe_fd[0]);
	close(pipe_fd[1]);
	close(epfd);
}

/* ---- part 2: invalid timespecs ---- */

static pthread_mutex_t other_held = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw_other = PTHREAD_RWLOCK_INITIALIZER;
static _Atomic int holder_go;

static void *holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&other_held);
	pthread_rwlock_wrlock(&rw_other);
	while (!atomic_load(&holder_go))
		sleep_ms(5);
	pthread_rwlock_unlock(&rw_other);
	pthread_mutex_unlock(&other_held);
	return NULL;
}

static void *ends_soon(void *arg)
{
	sleep_ms(100);
	return arg;
}

static void *ends_now(void *arg)
{
	return arg;
}

static const char *err_name(int e)
{
	switch (e) {
	case 0: return "0";
	case EINVAL: return "EINVAL";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EDEADLK: return "EDEADLK";
	case EINTR: return "EINTR";
	default: return strerror(e);
	}
}

static void expect(const char *what, const char *ts_name, int got, int want)
{
	char line[200];

	if (got != want)
		fprintf(stderr, "%s %s: %s, expected %s\n", what, ts_name, err_name(got), err_name(want));
	snprintf(line, sizeof(line), "%s %s: %s", what, ts_name, err_name(want));
	result(line, got == want);
}

/* The semaphore's way: -1 and errno, or 0. */
static int sem_err(int r)
{
	return r ? errno : 0;
}

static void invalid(void)
{
	static const struct {
		const char *name;
		struct timespec ts;
		int bad_nsec, neg_sec;
	} cases[] = {
		{ "tv_nsec -1", { 0, -1 }, 1, 0 },
		{ "tv_nsec 1e9", { 0, 1000000000L }, 1, 0 },
		{ "tv_nsec LONG_MAX", { 1, LONG_MAX }, 1, 0 },
		{ "tv_sec -1", { -1, 0 }, 0, 1 },
		{ "tv_sec LONG_MIN", { LONG_MIN, 0 }, 0, 1 },
		{ "tv_sec -1 tv_nsec -1", { -1, -1 }, 1, 1 },
	};
	pthread_mutex_t free_m = PTHREAD_MUTEX_INITIALIZER, ec, rec;
	pthread_mutexattr_t ma;
	pthread_rwlock_t rw_free = PTHREAD_RWLOCK_INITIALIZER, rw_mine = PTHREAD_RWLOCK_INITIALIZER;
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	sem_t s0, s1;

	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&ec, &ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&rec, &ma);
	pthread_mutex_lock(&ec);
	pthread_mutex_lock(&rec);
	pthread_rwlock_wrlock(&rw_mine);
	sem_init(&s0, 0, 0);
	sem_init(&s1, 0, 100);
	pthread_t h = spawn(holder, NULL);
	while (pthread_mutex_trylock(&other_held) == 0) { /* until the holder has both */
		pthread_mutex_unlock(&other_held);
		sleep_ms(1);
	}
	sleep_ms(20);

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct timespec *t = &cases[i].ts;
		const char *n = cases[i].name;
		int bad = cases[i].bad_nsec, neg = cases[i].neg_sec;
		int r;

		/* conditions: the time is checked first; a past one times out (with the mutex held again) */
		pthread_mutex_lock(&m);
		expect("pthread_cond_timedwait", n, pthread_cond_timedwait(&c, &m, t), bad ? EINVAL : ETIMEDOUT);
		expect("pthread_cond_clockwait", n, pthread_cond_clockwait(&c, &m, CLOCK_MONOTONIC, t),
		       bad ? EINVAL : ETIMEDOUT);
		result("the mutex is held after a failed condition wait", pthread_mutex_trylock(&m) == EBUSY);
		pthread_mutex_unlock(&m);

		/* semaphores: the time first, even when a unit is there */
		errno = 0;
		expect("sem_timedwait with a unit", n, sem_err(sem_timedwait(&s1, t)), bad ? EINVAL : 0);
		expect("sem_timedwait without", n, sem_err(sem_timedwait(&s0, t)), bad ? EINVAL : ETIMEDOUT);
		expect("sem_clockwait without", n, sem_err(sem_clockwait(&s0, CLOCK_MONOTONIC, t)),
		       bad ? EINVAL : ETIMEDOUT);

		/* mutexes: the time only matters when the call would block, and a past time comes first */
		r = pthread_mutex_timedlock(&free_m, t);
		expect("pthread_mutex_timedlock free", n, r, 0);
		if (!r)
			pthread_mutex_unlock(&free_m);
		r = pthread_mutex_clocklock(&free_m, CLOCK_MONOTONIC, t);
		expect("pthread_mutex_clocklock free", n, r, 0);
		if (!r)
			pthread_mutex_unlock(&free_m);
		expect("pthread_mutex_clocklock with a bad clock", n, pthread_mutex_clocklock(&free_m, 12345, t),
		       EINVAL);
		expect("pthread_mutex_timedlock held by another", n, pthread_mutex_timedlock(&other_held, t),
		       neg ? ETIMEDOUT : EINVAL);
		expect("pthread_mutex_clocklock held by another", n,
		       pthread_mutex_clocklock(&other_held, CLOCK_MONOTONIC, t), neg ? ETIMEDOUT : EINVAL);
		expect("pthread_mutex_timedlock errorcheck held by me", n, pthread_mutex_timedlock(&ec, t), EDEADLK);
		r = pthread_mutex_timedlock(&rec, t);
		expect("pthread_mutex_timedlock recursive held by me", n, r, 0);
		if (!r)
			pthread_mutex_unlock(&rec);

		/* rwlocks: the time first, then the deadlock */
		r = pthread_rwlock_timedrdlock(&rw_free, t);
		expect("pthread_rwlock_timedrdlock free", n, r, bad ? EINVAL : 0);
		if (!r)
			pthread_rwlock_unlock(&rw_free);
		r = pthread_rwlock_timedwrlock(&rw_free, t);
		expect("pthread_rwlock_timedwrlock free", n, r, bad ? EINVAL : 0);
		if (!r)
			pthread_rwlock_unlock(&rw_free);
		expect("pthread_rwlock_timedrdlock held by another", n, pthread_rwlock_timedrdlock(&rw_other, t),
		       bad ? EINVAL : ETIMEDOUT);
		expect("pthread_rwlock_clockwrlock held by another", n,
		       pthread_rwlock_clockwrlock(&rw_other, CLOCK_MONOTONIC, t), bad ? EINVAL : ETIMEDOUT);
		expect("pthread_rwlock_timedwrlock held by me", n, pthread_rwlock_timedwrlock(&rw_mine, t),
		       bad ? EINVAL : EDEADLK);

		/* joins: a finished thread is joined; a running one with a past time times out */
		pthread_t t2 = spawn(ends_now, (void *)(intptr_t)7);
		void *res = NULL;
		/* finished: a past or invalid time says ETIMEDOUT or EINVAL only while it still runs (a busy machine) */
		sleep_ms(20);
		for (int i = 0; ((r = pthread_timedjoin_np(t2, &res, t)) == ETIMEDOUT || r == EINVAL) && i < 500; i++)
			sleep_ms(10);
		expect("pthread_timedjoin_np of a finished thread", n, r, 0);
		if (r)
			pthread_join(t2, NULL);
		t2 = spawn(ends_soon, NULL);
		r = pthread_timedjoin_np(t2, NULL, t);
		if (bad && !neg) {
			/* the man page: EINVAL; glibc 2.36 waits for the thread (0) */
			if (r != EINVAL && r != 0)
				fprintf(stderr, "pthread_timedjoin_np %s: %s\n", n, err_name(r));
			result("pthread_timedjoin_np of a running thread, bad tv_nsec: EINVAL or joined",
			       r == EINVAL || r == 0);
		} else {
			expect("pthread_timedjoin_np of a running thread", n, r, ETIMEDOUT);
		}
		if (r)
			pthread_join(t2, NULL);

		/* sleeps: the kernel's rules, a negative time is invalid too */
		expect("clock_nanosleep relative", n, clock_nanosleep(CLOCK_MONOTONIC, 0, t, NULL), EINVAL);
		expect("clock_nanosleep MONOTONIC ABSTIME", n, clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL),
		       EINVAL);
		expect("clock_nanosleep REALTIME ABSTIME", n, clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, t, NULL),
		       EINVAL);
		errno = 0;
		r = nanosleep(t, NULL);
		expect("nanosleep", n, r == -1 ? errno : 1000 + r, EINVAL);
	}
	atomic_store(&holder_go, 1);
	pthread_join(h, NULL);
	pthread_mutex_unlock(&ec);
	pthread_mutex_unlock(&rec);
	pthread_rwlock_unlock(&rw_mine);
}

int main(void)
{
	far_future();
	invalid();
	return failed;
}
