/*
 * A call's timeout expires, and it returns what it returns at its timeout,
 * while other threads of the process wait in calls of their own and
 * others keep running.
 *
 * For each timed call (epoll_wait, epoll_pwait, epoll_pwait2, poll, ppoll,
 * select, pselect, semtimedop, recv and accept on a socket with
 * SO_RCVTIMEO, send on one with SO_SNDTIMEO, nanosleep) a thread makes
 * the call with a 200-ms timeout on something that never becomes ready,
 * while eight threads wait in a read of a pipe nobody writes and two
 * others sleep 1 ms at a time. Each call must come back with its timeout's
 * result (0, or EAGAIN: epoll_wait(2), poll(2), select(2), semop(2),
 * socket(7) SO_RCVTIMEO/SO_SNDTIMEO), and ppoll leaves its timeout as it
 * was (a const argument; glibc hands the kernel a copy). A timeout that
 * never expires is a hang: a watchdog kills the program after 60 s, and
 * its exit status then differs from the plain run's.
 *
 * Under flexsc-run --engine uring the readers' reads are in flight on
 * their carrier's ring while the timed call (one io_uring has no
 * operation for) runs on that carrier in place; the monitor, having given
 * the blocked carrier's core to a spare, pokes it every 1-100 ms to serve
 * that ring, and each poke cut the call short: it was started again with
 * its whole timeout, so it never expired while the reads waited.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/ipc.h>
#include <sys/select.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <unistd.h>

#define CHECK_NAME "timeout_beside_calls"
#include "check.h"

#define TIMEOUT_MS 200
#define READERS 8
#define WATCH_MS 60000

enum kind {
	K_EPOLL_WAIT, K_EPOLL_PWAIT, K_EPOLL_PWAIT2, K_POLL, K_PPOLL, K_SELECT, K_PSELECT,
	K_SEMTIMEDOP, K_RECV, K_ACCEPT, K_SEND, K_NANOSLEEP, K_N
};

static const char *const names[K_N] = {
	"epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select", "pselect",
	"semtimedop", "recv with SO_RCVTIMEO", "accept with SO_RCVTIMEO",
	"send with SO_SNDTIMEO", "nanosleep",
};

static int gate[2];     /* the readers' pipe: written only at the end */
static int idle[2];     /* a pipe that never becomes readable */
static int ep, semid, listener, full_sock, empty_sock;
static _Atomic int stop;

struct outcome {
	long ret;
	int err;
};

static void *reader(void *arg)
{
	char c;

	(void)arg;
	while (read(gate[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static void *napper(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		usleep(1000);
	return NULL;
}

static _Atomic int ppoll_kept = 1;

static long timed_call(enum kind k)
{
	struct timespec ts = { 0, TIMEOUT_MS * 1000000L };
	long r;
	struct timeval tv = { 0, TIMEOUT_MS * 1000L };
	struct epoll_event ev;
	struct pollfd p[2] = { { idle[0], POLLIN, 0 }, { gate[0], POLLIN, 0 } };
	fd_set rd;
	char buf[4096] = { 0 };

	FD_ZERO(&rd);
	FD_SET(idle[0], &rd);
	switch (k) {
	case K_EPOLL_WAIT:
		return epoll_wait(ep, &ev, 1, TIMEOUT_MS);
	case K_EPOLL_PWAIT:
		return epoll_pwait(ep, &ev, 1, TIMEOUT_MS, NULL);
	case K_EPOLL_PWAIT2:
		return epoll_pwait2(ep, &ev, 1, &ts, NULL);
	case K_POLL:
		return poll(p, 2, TIMEOUT_MS);
	case K_PPOLL:
		r = ppoll(p, 2, &ts, NULL);
		/* POSIX: a const timeout; glibc passes the kernel a copy, which the kernel updates */
		atomic_store(&ppoll_kept, ts.tv_sec == 0 && ts.tv_nsec == TIMEOUT_MS * 1000000L);
		return r;
	case K_SELECT:
		return select(idle[0] + 1, &rd, NULL, NULL, &tv);
	case K_PSELECT:
		return pselect(idle[0] + 1, &rd, NULL, NULL, &ts, NULL);
	case K_SEMTIMEDOP: {
		struct sembuf op = { 0, -1, 0 };
		return semtimedop(semid, &op, 1, &ts);
	}
	case K_RECV:
		return recv(empty_sock, buf, sizeof(buf), 0);
	case K_ACCEPT:
		return accept(listener, NULL, NULL);
	case K_SEND:
		return send(full_sock, buf, sizeof(buf), 0);
	case K_NANOSLEEP:
		return nanosleep(&ts, NULL);
	case K_N:
		break;
	}
	return -1;
}

struct job {
	enum kind kind;
	struct outcome out;
};

static void *run_job(void *arg)
{
	struct job *j = arg;

	errno = 0;
	j->out.ret = timed_call(j->kind);
	j->out.err = errno;
	return NULL;
}

/* A connected pair whose sender's buffer is full: a send must wait. */
static void make_sockets(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	struct timeval tv = { 0, TIMEOUT_MS * 1000L };
	int sp[2], ep2[2], one = 4096;

	listener = socket(AF_INET, SOCK_STREAM, 0);
	if (listener < 0 || bind(listener, (struct sockaddr *)&a, sizeof(a)) || listen(listener, 1) ||
	    getsockname(listener, (struct sockaddr *)&a, &len) ||
	    setsockopt(listener, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		perror("listener");
		exit(1);
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) ||
	    setsockopt(sp[0], SOL_SOCKET, SO_SNDBUF, &one, sizeof(one)) ||
	    setsockopt(sp[0], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, ep2) ||
	    setsockopt(ep2[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		perror("socketpair");
		exit(1);
	}
	full_sock = sp[0];  /* sp[1] is never read */
	empty_sock = ep2[0]; /* ep2[1] never writes */
	/* fill the sender's side until a send would wait */
	char buf[4096] = { 0 };
	while (send(full_sock, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

int main(void)
{
	pthread_t readers[READERS], nappers[2];
	pid_t watchdog;

	if (pipe(gate) || pipe(idle) || (ep = epoll_create1(0)) < 0 ||
	    (semid = semget(IPC_PRIVATE, 1, 0600)) < 0) {
		perror("setup");
		return 1;
	}
	make_sockets();
	int watched = hang_watchdog(WATCH_MS, &watchdog);

	for (int i = 0; i < READERS; i++)
		readers[i] = spawn(reader, NULL);
	nappers[0] = spawn(napper, NULL);
	nappers[1] = spawn(napper, NULL);
	sleep_ms(50); /* the readers wait in their reads */

	struct job jobs[K_N];
	pthread_t t[K_N];
	for (int k = 0; k < K_N; k++) {
		jobs[k].kind = (enum kind)k;
		t[k] = spawn(run_job, &jobs[k]);
	}
	for (int k = 0; k < K_N; k++)
		pthread_join(t[k], NULL);

	atomic_store(&stop, 1);
	char bytes[READERS] = { 0 };
	if (write(gate[1], bytes, READERS) != READERS)
		perror("write");
	for (int i = 0; i < READERS; i++)
		pthread_join(readers[i], NULL);
	pthread_join(nappers[0], NULL);
	pthread_join(nappers[1], NULL);
	semctl(semid, 0, IPC_RMID);

	for (int k = 0; k < K_N; k++) {
		bool eagain = k == K_SEMTIMEDOP || k == K_RECV || k == K_ACCEPT || k == K_SEND;
		if (eagain)
			resultf(jobs[k].out.ret == -1 && (jobs[k].out.err == EAGAIN || jobs[k].out.err == EWOULDBLOCK),
				"%s fails with EAGAIN at its timeout", names[k]);
		else
			resultf(jobs[k].out.ret == 0, "%s returns 0 at its timeout", names[k]);
		if (jobs[k].out.ret != 0)
			fprintf(stderr, "%s: %ld (%s)\n", names[k], jobs[k].out.ret, strerror(jobs[k].out.err));
	}
	result("ppoll leaves its timeout as it was", atomic_load(&ppoll_kept));
	hang_watchdog_end(watched, watchdog);
	return failed;
}
