/*
 * A descriptor number that names something new, or whose O_NONBLOCK flag
 * changed, where the thread did not see it happen: calls on it behave as
 * the kernel says now.
 *   1. a file read, then fclose (libc closes it inside), then a pipe made
 *      O_NONBLOCK that gets the same number: read fails with EAGAIN at once;
 *   2. the same with a nonblocking socketpair: recv fails with EAGAIN;
 *   3. the same with a nonblocking listening socket: accept fails with EAGAIN;
 *   4. a socket read once, then made O_NONBLOCK by another process (a forked
 *      child: the file description is shared): read fails with EAGAIN;
 *   5. a nonblocking pipe read (EAGAIN), closed by fclose of an fdopen'ed
 *      stream, the number reused by a blocking pipe: read waits for the
 *      writer thread and returns its byte.
 * The new descriptor gets the old number when nothing else took it first
 * (not checked: the runtime may open a descriptor of its own meanwhile).
 * A read that waits where it must fail is ended after 3 s by a watchdog
 * thread (it writes or connects), so that is a FAIL, not a hang.
 * Under FlexSC-Threads the descriptor facts cache (src/core/fdfacts.c)
 * kept the old number's "blocking" and the read went to io_uring, which
 * waits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "fd_reuse"
#include "check.h"

static atomic_int done;
static int wd_fd = -1;
static struct sockaddr_un wd_addr;
static socklen_t wd_len;

/* After 3 s without done: writes a byte to wd_fd, or connects to wd_addr. */
static void *watchdog(void *arg)
{
	(void)arg;
	for (int i = 0; i < 300 && !atomic_load(&done); i++)
		sleep_ms(10);
	if (atomic_load(&done))
		return NULL;
	if (wd_len) {
		int s = socket(AF_UNIX, SOCK_STREAM, 0);
		connect(s, (struct sockaddr *)&wd_addr, wd_len);
		sleep_ms(100);
		close(s);
	} else if (write(wd_fd, "w", 1) < 0) {
		perror("watchdog write");
	}
	return NULL;
}

static pthread_t arm(int fd)
{
	atomic_store(&done, 0);
	wd_fd = fd;
	return spawn(watchdog, NULL);
}

static void disarm(pthread_t t)
{
	atomic_store(&done, 1);
	pthread_join(t, NULL);
	wd_len = 0;
}

/* A number left cached as a blocking, seekable file, then closed inside libc. */
static int stale_number(const char *self)
{
	char c;
	FILE *f = fopen(self, "r");

	if (!f)
		return -1;
	int n = fileno(f);
	if (read(n, &c, 1) != 1)
		return -1;
	fclose(f);
	return n;
}

static void *late_writer(void *arg)
{
	sleep_ms(50);
	if (write(*(int *)arg, "L", 1) < 0)
		perror("late write");
	return NULL;
}

int main(int argc, char **argv)
{
	char buf[8];
	(void)argc;

	/* 1. */
	int n = stale_number(argv[0]);
	int p[2];
	if (n < 0 || pipe2(p, O_NONBLOCK))
		return 1;
	pthread_t w = arm(p[1]);
	double t0 = now_s();
	ssize_t r = read(p[0], buf, 1);
	int e = errno;
	double took = now_s() - t0;
	disarm(w);
	result("pipe: read fails with EAGAIN at once", r == -1 && e == EAGAIN && took < 1.0);
	close(p[0]);
	close(p[1]);

	/* 2. */
	n = stale_number(argv[0]);
	int s[2];
	if (n < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, s))
		return 1;
	w = arm(s[1]);
	t0 = now_s();
	r = recv(s[0], buf, 1, 0);
	e = errno;
	took = now_s() - t0;
	disarm(w);
	result("socketpair: recv fails with EAGAIN at once", r == -1 && e == EAGAIN && took < 1.0);
	close(s[0]);
	close(s[1]);

	/* 3. */
	n = stale_number(argv[0]);
	int ls = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	wd_addr = (struct sockaddr_un){ .sun_family = AF_UNIX };
	snprintf(wd_addr.sun_path + 1, sizeof(wd_addr.sun_path) - 1, "flexsc-fd-reuse-%d", getpid());
	socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(wd_addr.sun_path + 1));
	if (n < 0 || ls < 0 || bind(ls, (struct sockaddr *)&wd_addr, alen) || listen(ls, 4))
		return 1;
	w = arm(-1);
	wd_len = alen;
	t0 = now_s();
	int a = accept(ls, NULL, NULL);
	e = errno;
	took = now_s() - t0;
	disarm(w);
	result("listener: accept fails with EAGAIN at once", a == -1 && e == EAGAIN && took < 1.0);
	if (a >= 0)
		close(a);
	close(ls);

	/* 4. */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, s) || write(s[1], "x", 1) != 1 || read(s[0], buf, 1) != 1)
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		fcntl(s[0], F_SETFL, fcntl(s[0], F_GETFL) | O_NONBLOCK);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	w = arm(s[1]);
	t0 = now_s();
	r = read(s[0], buf, 1);
	e = errno;
	took = now_s() - t0;
	disarm(w);
	result("another process set O_NONBLOCK: read fails with EAGAIN at once",
	       r == -1 && e == EAGAIN && took < 1.0);
	close(s[0]);
	close(s[1]);

	/* 5. */
	if (pipe2(p, O_NONBLOCK))
		return 1;
	r = read(p[0], buf, 1);
	result("nonblocking pipe: EAGAIN", r == -1 && errno == EAGAIN);
	FILE *f = fdopen(p[0], "r");
	int q[2];
	fclose(f);
	if (pipe(q))
		return 1;
	pthread_t lw = spawn(late_writer, &q[1]);
	r = read(q[0], buf, 1);
	pthread_join(lw, NULL);
	result("blocking pipe: read waits for the writer", r == 1 && buf[0] == 'L');
	close(p[1]);
	close(q[0]);
	close(q[1]);
	return failed;
}
