/*
 * Blocking calls made through glibc's generic syscall(), as programs and
 * libraries do for calls glibc has no wrapper for, or to bypass one:
 *   1. syscall(SYS_read) on a pipe another thread writes to (with
 *      syscall(SYS_write)) once the reader has started: the data;
 *   2. syscall(SYS_write) to a full pipe another thread then drains: 1;
 *   3. syscall(SYS_accept) on a listening socket another thread connects
 *      to: a descriptor;
 *   4. syscall(SYS_poll) on a pipe another thread writes to: 1, POLLIN;
 *   5. syscall(SYS_nanosleep) of 1 s: other threads run meanwhile;
 *   6. syscall(SYS_read) interrupted by a handler without SA_RESTART:
 *      -1, EINTR; with SA_RESTART: restarted, it returns the data written
 *      later;
 *   7. pthread_cancel of a thread in syscall(SYS_read): glibc's syscall()
 *      is no cancellation point, so the read returns its data first and
 *      the thread is cancelled at its next cancellation point.
 * Under FlexSC-Threads with one carrier, a call made on the carrier
 * instead of posted blocks the thread that would end it: a hang.
 * The other thread waits (yielding: a sleep would leave the carrier to the
 * blocked call) until the blocking one has started; a blocked call may
 * also not have begun yet on NPTL, which changes nothing in what it
 * returns. The signals are sent every 2 ms until they took effect.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "syscall_generic"
#include "check.h"

static atomic_int started, finished;
static int pfd[2];
static long ret;
static int err;

static void wait_started(void)
{
	while (!atomic_load(&started))
		sched_yield();
}

static void reset(void)
{
	atomic_store(&started, 0);
	atomic_store(&finished, 0);
	ret = 0;
	err = 0;
}

static void *reader(void *arg)
{
	char *buf = arg;

	atomic_store(&started, 1);
	ret = syscall(SYS_read, pfd[0], buf, 16);
	err = errno;
	atomic_store(&finished, 1);
	return NULL;
}

static void *writer(void *arg)
{
	(void)arg;
	atomic_store(&started, 1);
	ret = syscall(SYS_write, pfd[1], "w", 1);
	err = errno;
	return NULL;
}

static void *acceptor(void *arg)
{
	int ls = *(int *)arg;

	atomic_store(&started, 1);
	ret = syscall(SYS_accept, ls, NULL, NULL);
	err = errno;
	return NULL;
}

static struct pollfd pollee;

static void *poller(void *arg)
{
	(void)arg;
	atomic_store(&started, 1);
	ret = syscall(SYS_poll, &pollee, 1, 10000);
	err = errno;
	return NULL;
}

static void *sleeper(void *arg)
{
	struct timespec ts = { 1, 0 };

	(void)arg;
	atomic_store(&started, 1);
	ret = syscall(SYS_nanosleep, &ts, NULL);
	atomic_store(&finished, 1);
	return NULL;
}

static atomic_int handled;

static void on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled, 1);
}

static void *cancelled_reader(void *arg)
{
	char *buf = arg;

	atomic_store(&started, 1);
	ret = syscall(SYS_read, pfd[0], buf, 16);
	atomic_store(&finished, 1);
	for (;;)
		pthread_testcancel();
	return NULL;
}

int main(void)
{
	char buf[16];
	pthread_t t;

	/* 1. read */
	if (pipe(pfd))
		return 1;
	reset();
	memset(buf, 0, sizeof(buf));
	t = spawn(reader, buf);
	wait_started();
	long w = syscall(SYS_write, pfd[1], "hello", 5);
	pthread_join(t, NULL);
	result("read: the writer ran and the reader got its data", w == 5 && ret == 5 && !memcmp(buf, "hello", 5));

	/* 2. write to a full pipe */
	int fl = fcntl(pfd[1], F_GETFL);
	fcntl(pfd[1], F_SETFL, fl | O_NONBLOCK);
	size_t filled = 0;
	while (write(pfd[1], buf, sizeof(buf)) > 0)
		filled += sizeof(buf);
	fcntl(pfd[1], F_SETFL, fl);
	reset();
	t = spawn(writer, NULL);
	wait_started();
	size_t drained = 0;
	while (drained < filled + 1) {
		long r = read(pfd[0], buf, sizeof(buf));
		if (r <= 0)
			break;
		drained += (size_t)r;
	}
	pthread_join(t, NULL);
	result("write: a full pipe drained by another thread", ret == 1 && drained == filled + 1);

	/* 3. accept */
	int ls = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "flexsc-syscall-generic-%d", getpid());
	socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(a.sun_path + 1));
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, alen) || listen(ls, 4))
		return 1;
	reset();
	t = spawn(acceptor, &ls);
	wait_started();
	int cs = socket(AF_UNIX, SOCK_STREAM, 0);
	int c = connect(cs, (struct sockaddr *)&a, alen);
	pthread_join(t, NULL);
	result("accept: a connection from another thread", c == 0 && ret >= 0);
	if (ret >= 0)
		close((int)ret);
	close(cs);
	close(ls);

	/* 4. poll */
	reset();
	pollee = (struct pollfd){ .fd = pfd[0], .events = POLLIN };
	t = spawn(poller, NULL);
	wait_started();
	w = syscall(SYS_write, pfd[1], "p", 1);
	pthread_join(t, NULL);
	result("poll: woken by another thread's write", w == 1 && ret == 1 && pollee.revents == POLLIN);
	read(pfd[0], buf, 1);

	/* 5. nanosleep: the other thread runs while it sleeps */
	reset();
	t = spawn(sleeper, NULL);
	wait_started();
	sched_yield();
	int early = !atomic_load(&finished);
	pthread_join(t, NULL);
	result("nanosleep: other threads run meanwhile", early && ret == 0);

	/* 6. a handler without SA_RESTART: EINTR; with it: restarted */
	on_signal(SIGUSR1, on_usr1, 0);
	reset();
	atomic_store(&handled, 0);
	t = spawn(reader, buf);
	wait_started();
	for (int i = 0; i < 1000 && !atomic_load(&finished); i++) {
		pthread_kill(t, SIGUSR1);
		sleep_ms(2);
	}
	if (!atomic_load(&finished))
		syscall(SYS_write, pfd[1], "x", 1); /* no hang: the check below fails */
	pthread_join(t, NULL);
	result("read: EINTR after a handler without SA_RESTART", ret == -1 && err == EINTR && atomic_load(&handled) >= 1);
	on_signal(SIGUSR1, on_usr1, SA_RESTART);
	reset();
	atomic_store(&handled, 0);
	memset(buf, 0, sizeof(buf));
	t = spawn(reader, buf);
	wait_started();
	for (int i = 0; i < 1000 && atomic_load(&handled) < 3; i++) {
		pthread_kill(t, SIGUSR1);
		sleep_ms(2);
	}
	int still = !atomic_load(&finished);
	syscall(SYS_write, pfd[1], "r", 1);
	pthread_join(t, NULL);
	result("read: restarted after handlers with SA_RESTART", still && ret == 1 && buf[0] == 'r');

	/* 7. not a cancellation point */
	reset();
	memset(buf, 0, sizeof(buf));
	t = spawn(cancelled_reader, buf);
	wait_started();
	pthread_cancel(t);
	sleep_ms(50);
	int before = !atomic_load(&finished);
	syscall(SYS_write, pfd[1], "c", 1);
	void *res;
	pthread_join(t, &res);
	result("cancel: the read returns its data, then the thread is cancelled",
	       before && ret == 1 && buf[0] == 'c' && res == PTHREAD_CANCELED);
	return failed;
}
