// SPDX-License-Identifier: MIT
/*
 * The descriptor facts cache (src/core/fdfacts.c) never changes a result:
 * a read, receive or accept posted on every engine on a descriptor that is
 * O_NONBLOCK now fails with -EAGAIN at once, as the system call does,
 * whatever the cache last saw under that number:
 *   1. a file read through flexsc, fclose'd (libc closes it inside), its
 *      number reused by pipe2(O_NONBLOCK) (a wrapped call: the entry drops);
 *   2. the same, the pipe made by an inline system call (nothing sees it:
 *      the ring's check of a waiting read catches it);
 *   3. a socket read through flexsc, then made O_NONBLOCK by a forked
 *      child (a shared file description: no wrapper in this process sees it);
 *   4. a nonblocking listening socket on a reused number: accept -EAGAIN;
 *   5. a receive on a reused number made by an inline socketpair.
 * A read that waits is ended after 3 s by a watchdog thread (it writes), so
 * a wrong result fails instead of hanging.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

static atomic_int done;
static int wd_fd;

static void *watchdog(void *arg)
{
	(void)arg;
	for (int i = 0; i < 300 && !atomic_load(&done); i++)
		usleep(10000);
	if (!atomic_load(&done) && write(wd_fd, "w", 1) < 0)
		perror("watchdog");
	return NULL;
}

/* The call on fd through q, with a watchdog writing to wfd after 3 s: its result. */
static int64_t timed(struct flexsc_queue *q, long nr, unsigned n, const uint64_t *args, int wfd,
		     uint64_t *took_ms)
{
	pthread_t t;

	atomic_store(&done, 0);
	wd_fd = wfd;
	CHECK_EQ(pthread_create(&t, NULL, watchdog, NULL), 0);
	uint64_t t0 = t_now_ms();
	int64_t r = flexsc_syscall(q, nr, n, args);
	*took_ms = t_now_ms() - t0;
	atomic_store(&done, 1);
	CHECK_EQ(pthread_join(t, NULL), 0);
	return r;
}

/* A number the cache holds as a blocking, seekable file, then closed by libc where nothing sees it. */
static int stale_number(struct flexsc_queue *q)
{
	char c;
	FILE *f = fopen("/proc/self/exe", "r");

	CHECK(f != NULL);
	int n = fileno(f);
	uint64_t args[3] = { (uint64_t)n, (uint64_t)(uintptr_t)&c, 1 };
	CHECK_EQ(flexsc_syscall(q, SYS_read, 3, args), 1);
	fclose(f);
	return n;
}

static void read_eagain(struct flexsc_queue *q, int fd, int wfd)
{
	char c;
	uint64_t args[3] = { (uint64_t)fd, (uint64_t)(uintptr_t)&c, 1 }, took;

	CHECK_EQ(timed(q, SYS_read, 3, args, wfd, &took), -EAGAIN);
	CHECK(took < 1000);
}

int main(void)
{
	alarm(120);
	for (unsigned e = 0; e < sizeof(t_engines) / sizeof(t_engines[0]); e++) {
		struct flexsc *fx;
		struct flexsc_queue *q;
		int p[2], s[2];
		uint64_t took;

		t_open(t_engines[e], &fx, &q, NULL);

		/* 1. */
		int n = stale_number(q);
		CHECK_EQ(pipe2(p, O_NONBLOCK), 0);
		CHECK_EQ(p[0], n);
		read_eagain(q, p[0], p[1]);
		close(p[0]);
		close(p[1]);

		/* 2. */
		n = stale_number(q);
		CHECK_EQ(syscall(SYS_pipe2, p, O_NONBLOCK), 0);
		CHECK_EQ(p[0], n);
		read_eagain(q, p[0], p[1]);
		close(p[0]);
		close(p[1]);

		/* 3. */
		char c;
		CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
		CHECK_EQ(write(s[1], "x", 1), 1);
		uint64_t args[3] = { (uint64_t)s[0], (uint64_t)(uintptr_t)&c, 1 };
		CHECK_EQ(flexsc_syscall(q, SYS_read, 3, args), 1);
		pid_t pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			fcntl(s[0], F_SETFL, fcntl(s[0], F_GETFL) | O_NONBLOCK);
			_exit(0);
		}
		int st;
		CHECK_EQ(waitpid(pid, &st, 0), pid);
		read_eagain(q, s[0], s[1]);
		close(s[0]);
		close(s[1]);

		/* 4. */
		n = stale_number(q);
		int ls = (int)syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
		CHECK_EQ(ls, n);
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "flexsc-fdfacts-%d", getpid());
		socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(a.sun_path + 1));
		CHECK_EQ(bind(ls, (struct sockaddr *)&a, alen), 0);
		CHECK_EQ(listen(ls, 4), 0);
		int pp[2];
		CHECK_EQ(pipe(pp), 0); /* a watchdog target: accept is not ended by it, the alarm is */
		uint64_t aargs[3] = { (uint64_t)ls, 0, 0 };
		CHECK_EQ(timed(q, SYS_accept, 3, aargs, pp[1], &took), -EAGAIN);
		CHECK(took < 1000);
		close(pp[0]);
		close(pp[1]);
		close(ls);

		/* 5. */
		n = stale_number(q);
		CHECK_EQ(syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, s), 0);
		CHECK_EQ(s[0], n);
		uint64_t rargs[6] = { (uint64_t)s[0], (uint64_t)(uintptr_t)&c, 1, 0, 0, 0 };
		CHECK_EQ(timed(q, SYS_recvfrom, 6, rargs, s[1], &took), -EAGAIN);
		CHECK(took < 1000);
		close(s[0]);
		close(s[1]);

		t_close(fx, q);
	}
	return 0;
}
