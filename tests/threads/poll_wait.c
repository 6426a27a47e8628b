/*
 * poll() of one descriptor, as servers wait for a request on a socket
 * (Apache, MariaDB), and epoll_wait(), as event loops do (BIND's libuv):
 * what they return, when, and what they write.
 *   1. a pipe another thread writes to later: 1, revents POLLIN;
 *   2. nothing comes within 100 ms: 0, revents 0, not before 100 ms;
 *   3. the peer shut its side of a socket: POLLIN, and no POLLRDHUP
 *      (not asked for); asked for, POLLIN|POLLRDHUP;
 *   4. a handler with SA_RESTART runs while the thread waits: -1, EINTR
 *      (poll is never restarted), not its 10 s timeout's 0;
 *   5. pthread_cancel of a thread waiting with no timeout: it exits
 *      PTHREAD_CANCELED;
 *   6. 200 threads each waiting on a pipe of its own, written in a shuffled
 *      order: every poll returns 1 with POLLIN;
 *   7. 2,000 polls with a 1 ms timeout racing a writer: each returns 0 with
 *      revents 0 and nothing to read, or 1 with POLLIN and a byte to read;
 *   8. a bad pointer: -1, EFAULT; a closed descriptor: 1, POLLNVAL;
 *   9. epoll_wait woken by a write: 1 event, with its data;
 *  10. epoll_wait with nothing within 100 ms: 0, not early;
 *  11. two threads in epoll_wait on one EPOLLONESHOT descriptor, one write:
 *      one thread gets its event, the other does not (a second, level-
 *      triggered descriptor in the set, written once the first thread has
 *      returned, ends its wait: it gets that one's event, or 0 at its
 *      timeout);
 *  12. epoll_wait while a handler with SA_RESTART runs: -1, EINTR.
 * Every wait is bounded: a lost wake-up is a FAIL, not a hang.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "poll_wait"
#include "check.h"

#define NWAITERS 200
#define NRACES 2000

static int must_pipe(int p[2])
{
	if (pipe(p)) {
		perror("pipe");
		exit(1);
	}
	return p[0];
}

/* ---- 1, 4, 5: one thread waiting on a pipe ---- */

struct waiter {
	int fd;
	int timeout;
	_Atomic int started, done;
	int ret, err;
	short revents;
};

static void *wait_fn(void *arg)
{
	struct waiter *w = arg;
	struct pollfd p = { w->fd, POLLIN, 0x7777 };

	atomic_store(&w->started, 1);
	w->ret = poll(&p, 1, w->timeout);
	w->err = errno;
	w->revents = p.revents;
	atomic_store(&w->done, 1);
	return NULL;
}

/* Until a waiter's thread says it is about to wait (up to 5 s); then settle_ms more, for it to be in. */
static void wait_started(_Atomic int *started, int settle_ms)
{
	for (int i = 0; i < 5000 && !atomic_load(started); i++)
		sleep_ms(1);
	sleep_ms(settle_ms);
}

static int woken_by_write(void)
{
	int p[2];
	struct waiter w = { .fd = must_pipe(p), .timeout = 5000 };
	pthread_t t = spawn(wait_fn, &w);

	wait_started(&w.started, 50);
	if (write(p[1], "x", 1) != 1)
		return 0;
	pthread_join(t, NULL);
	close(p[0]);
	close(p[1]);
	return w.ret == 1 && w.revents == POLLIN;
}

static int times_out(void)
{
	int p[2];
	struct pollfd pf = { must_pipe(p), POLLIN, 0x7777 };
	double t0 = now_s();
	int r = poll(&pf, 1, 100);
	double took = now_s() - t0;

	close(p[0]);
	close(p[1]);
	return r == 0 && pf.revents == 0 && took >= 0.099;
}

static int peer_shut(short events, short want)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) || shutdown(sv[1], SHUT_WR))
		return 0;
	struct pollfd pf = { sv[0], events, 0 };
	int r = poll(&pf, 1, 5000);
	close(sv[0]);
	close(sv[1]);
	return r == 1 && pf.revents == want;
}

static void handler(int sig)
{
	(void)sig;
}

/*
 * SIGUSR1 to t every 50 ms until its wait returned (*done), for up to 5 s.
 * A waiter says it started just before its call, and even after a settle
 * it may not be in the call yet: a signal that comes first only runs the
 * handler, and the call waits on. So the signal is sent again; one that
 * comes after the call returned is harmless. Its wait's own timeout is
 * longer than these 5 s: a signal the call never sees ends in that
 * timeout's 0, a FAIL, not a hang.
 */
static void kill_until_done(pthread_t t, _Atomic int *done)
{
	for (int i = 0; i < 100 && !atomic_load(done); i++) {
		pthread_kill(t, SIGUSR1);
		for (int j = 0; j < 50 && !atomic_load(done); j++)
			sleep_ms(1);
	}
}

static int interrupted(void)
{
	int p[2];
	struct waiter w = { .fd = must_pipe(p), .timeout = 10000 };

	on_signal(SIGUSR1, handler, SA_RESTART);
	pthread_t t = spawn(wait_fn, &w);
	wait_started(&w.started, 50);
	kill_until_done(t, &w.done);
	pthread_join(t, NULL);
	close(p[0]);
	close(p[1]);
	return w.ret == -1 && w.err == EINTR;
}

static int cancelled(void)
{
	int p[2];
	struct waiter w = { .fd = must_pipe(p), .timeout = -1 };
	pthread_t t = spawn(wait_fn, &w);
	void *res = NULL;

	wait_started(&w.started, 50);
	pthread_cancel(t);
	pthread_join(t, &res);
	close(p[0]);
	close(p[1]);
	return res == PTHREAD_CANCELED;
}

/* ---- 6. many waiters ---- */

static int many_waiters(void)
{
	static struct waiter w[NWAITERS];
	static int wfd[NWAITERS];
	pthread_t t[NWAITERS];
	int order[NWAITERS], ok = 1;

	for (int i = 0; i < NWAITERS; i++) {
		int p[2];
		w[i] = (struct waiter){ .fd = must_pipe(p), .timeout = 10000 };
		wfd[i] = p[1];
		order[i] = i;
		t[i] = spawn(wait_fn, &w[i]);
	}
	srand(7);
	for (int i = NWAITERS - 1; i > 0; i--) {
		int j = rand() % (i + 1), k = order[i];
		order[i] = order[j];
		order[j] = k;
	}
	for (int i = 0; i < NWAITERS; i++)
		wait_started(&w[i].started, i == NWAITERS - 1 ? 50 : 0);
	for (int i = 0; i < NWAITERS; i++)
		if (write(wfd[order[i]], "x", 1) != 1)
			ok = 0;
	for (int i = 0; i < NWAITERS; i++) {
		pthread_join(t[i], NULL);
		ok &= w[i].ret == 1 && w[i].revents == POLLIN;
		close(w[i].fd);
		close(wfd[i]);
	}
	return ok;
}

/* ---- 7. timeouts racing a writer ---- */

static int race_pipe[2];
static _Atomic int race_done;

static void *race_writer(void *arg)
{
	(void)arg;
	while (!atomic_load(&race_done)) {
		if (write(race_pipe[1], "r", 1) != 1)
			break;
		sleep_ms(1);
	}
	return NULL;
}

static int races(void)
{
	int ok = 1, hits = 0;

	must_pipe(race_pipe);
	pthread_t t = spawn(race_writer, NULL);
	for (int i = 0; i < NRACES && ok; i++) {
		struct pollfd pf = { race_pipe[0], POLLIN, 0x7777 };
		int r = poll(&pf, 1, 1);
		char c;
		if (r == 1) {
			ok = pf.revents == POLLIN && read(race_pipe[0], &c, 1) == 1 && c == 'r';
			hits++;
		} else {
			ok = r == 0 && pf.revents == 0;
		}
	}
	atomic_store(&race_done, 1);
	pthread_join(t, NULL);
	close(race_pipe[0]);
	close(race_pipe[1]);
	return ok && hits > 0;
}

/* ---- 8. bad input ---- */

static int bad_input(void)
{
	int p[2];
	struct pollfd pf = { must_pipe(p), POLLIN, 0x7777 };

	close(p[0]);
	close(p[1]);
	int r1 = poll((struct pollfd *)16, 1, 100);
	int e1 = errno;
	int r2 = poll(&pf, 1, 100);
	return r1 == -1 && e1 == EFAULT && r2 == 1 && pf.revents == POLLNVAL;
}

/* ---- 9-12. epoll_wait ---- */

struct ep_waiter {
	int epfd;
	int timeout;
	_Atomic int started, done;
	int ret, err;
	struct epoll_event ev;
};

static void *ep_wait_fn(void *arg)
{
	struct ep_waiter *w = arg;

	atomic_store(&w->started, 1);
	w->ret = epoll_wait(w->epfd, &w->ev, 1, w->timeout);
	w->err = errno;
	atomic_store(&w->done, 1);
	return NULL;
}

/* An epoll instance watching pipe p's read end for events, data 42. */
static int ep_on_pipe(int p[2], unsigned events)
{
	int epfd = epoll_create1(0);
	struct epoll_event ev = { .events = events, .data.u64 = 42 };

	must_pipe(p);
	if (epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, p[0], &ev)) {
		perror("epoll");
		exit(1);
	}
	return epfd;
}

static int ep_woken(void)
{
	int p[2];
	struct ep_waiter w = { .epfd = ep_on_pipe(p, EPOLLIN), .timeout = 5000 };
	pthread_t t = spawn(ep_wait_fn, &w);

	wait_started(&w.started, 50);
	int wrote = write(p[1], "x", 1) == 1;
	pthread_join(t, NULL);
	close(w.epfd);
	close(p[0]);
	close(p[1]);
	return wrote && w.ret == 1 && w.ev.events == EPOLLIN && w.ev.data.u64 == 42;
}

static int ep_times_out(void)
{
	int p[2], epfd = ep_on_pipe(p, EPOLLIN);
	struct epoll_event ev;
	double t0 = now_s();
	int r = epoll_wait(epfd, &ev, 1, 100);
	double took = now_s() - t0;

	close(epfd);
	close(p[0]);
	close(p[1]);
	return r == 0 && took >= 0.099;
}

/* What one waiter of 11 got: 1 the one-shot event (42), 2 the later one (43), 0 nothing, -1 else. */
static int ep_got(const struct ep_waiter *w)
{
	if (w->ret == 0)
		return 0;
	if (w->ret == 1 && w->ev.events == EPOLLIN)
		return w->ev.data.u64 == 42 ? 1 : w->ev.data.u64 == 43 ? 2 : -1;
	return -1;
}

/*
 * The loser is not left to time out: with a short timeout, a stall of
 * main's between the threads' start and its write made both time out.
 * With 5 s, the one that did not get the one-shot event is ended by a
 * second descriptor, level-triggered, written once the winner returned.
 */
static int ep_oneshot_one_winner(void)
{
	int p[2], q[2], epfd = ep_on_pipe(p, EPOLLIN | EPOLLONESHOT);
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 43 };

	if (epoll_ctl(epfd, EPOLL_CTL_ADD, must_pipe(q), &ev)) {
		perror("epoll_ctl");
		exit(1);
	}
	struct ep_waiter a = { .epfd = epfd, .timeout = 5000 }, b = a;
	pthread_t ta = spawn(ep_wait_fn, &a), tb = spawn(ep_wait_fn, &b);

	wait_started(&a.started, 0);
	wait_started(&b.started, 50);
	int wrote = write(p[1], "x", 1) == 1;
	for (int i = 0; i < 5000 && !atomic_load(&a.done) && !atomic_load(&b.done); i++)
		sleep_ms(1);
	wrote &= write(q[1], "y", 1) == 1;
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	close(epfd);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	int ga = ep_got(&a), gb = ep_got(&b);
	return wrote && ((ga == 1 && gb >= 0 && gb != 1) || (gb == 1 && ga >= 0 && ga != 1));
}

static int ep_interrupted(void)
{
	int p[2];
	struct ep_waiter w = { .epfd = ep_on_pipe(p, EPOLLIN), .timeout = 10000 };
	pthread_t t = spawn(ep_wait_fn, &w);

	wait_started(&w.started, 50);
	kill_until_done(t, &w.done); /* the handler interrupted() installed, SA_RESTART */
	pthread_join(t, NULL);
	close(w.epfd);
	close(p[0]);
	close(p[1]);
	return w.ret == -1 && w.err == EINTR;
}

int main(void)
{
	result("woken by a write: 1, POLLIN", woken_by_write());
	result("nothing within 100 ms: 0, not early", times_out());
	result("peer shut: POLLIN without POLLRDHUP", peer_shut(POLLIN, POLLIN));
	result("peer shut, POLLRDHUP asked: both", peer_shut(POLLIN | POLLRDHUP, POLLIN | POLLRDHUP));
	result("a handler with SA_RESTART: EINTR", interrupted());
	result("cancelled while waiting", cancelled());
	result("200 waiters woken in shuffled order", many_waiters());
	result("1 ms timeouts racing a writer", races());
	result("bad pointer EFAULT, closed descriptor POLLNVAL", bad_input());
	result("epoll_wait woken by a write: the event and its data", ep_woken());
	result("epoll_wait with nothing within 100 ms: 0, not early", ep_times_out());
	result("epoll_wait, EPOLLONESHOT, two waiters: one gets it", ep_oneshot_one_winner());
	result("epoll_wait with a handler with SA_RESTART: EINTR", ep_interrupted());
	return failed;
}
