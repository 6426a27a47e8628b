/*
 * A blocking write moves everything (write(2), pipe(7), send(2)): a write,
 * writev, send or sendmsg of far more than a pipe or a socket buffer holds
 * returns the whole count once a reader has drained it, and the reader
 * gets every byte in order. On an O_NONBLOCK pipe with nobody reading, a
 * write of more than the pipe holds moves what fits (its capacity, when it
 * was empty) and returns that count.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define CHECK_NAME "large_writes"
#include "check.h"

#define BIG (3 << 20)

static unsigned char *out;

struct drain {
	int fd;
	size_t want, got;
	int in_order;
};

/* Reads until want bytes came, checking that byte i is out[i]. */
static void *reader(void *arg)
{
	struct drain *d = arg;
	static unsigned char buf[65536];

	d->in_order = 1;
	while (d->got < d->want) {
		ssize_t n = read(d->fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++)
			d->in_order &= buf[i] == out[d->got + (size_t)i];
		d->got += (size_t)n;
	}
	return NULL;
}

static void check_one(const char *what, int wfd, int rfd, int how)
{
	struct drain d = { rfd, BIG, 0, 0 };
	pthread_t t = spawn(reader, &d);
	struct iovec iov[3] = { { out, BIG / 3 }, { out + BIG / 3, BIG / 3 }, { out + 2 * (BIG / 3), BIG - 2 * (BIG / 3) } };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 3 };
	ssize_t n;

	switch (how) {
	case 0: n = write(wfd, out, BIG); break;
	case 1: n = writev(wfd, iov, 3); break;
	case 2: n = send(wfd, out, BIG, 0); break;
	default: n = sendmsg(wfd, &m, 0); break;
	}
	pthread_join(t, NULL);
	char line[128];
	snprintf(line, sizeof(line), "%s of %d bytes returns them all", what, BIG);
	result(line, n == BIG);
	snprintf(line, sizeof(line), "%s: the reader got every byte in order", what);
	result(line, d.got == BIG && d.in_order);
}

int main(void)
{
	int p[2], s[2];

	alarm(60);
	out = malloc(BIG);
	for (size_t i = 0; i < BIG; i++)
		out[i] = (unsigned char)(i * 7 + i / 251);
	if (pipe(p) || socketpair(AF_UNIX, SOCK_STREAM, 0, s))
		return 1;
	signal(SIGPIPE, SIG_IGN);
	check_one("write to a pipe", p[1], p[0], 0);
	check_one("writev to a pipe", p[1], p[0], 1);
	check_one("send on a stream socket", s[0], s[1], 2);
	check_one("sendmsg on a stream socket", s[0], s[1], 3);

	/* non-blocking, nobody reading: what fits, at once */
	int cap = fcntl(p[1], F_GETPIPE_SZ);
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	ssize_t n = write(p[1], out, BIG);
	result("a non-blocking write to an empty pipe moves its capacity", cap > 0 && n == cap);
	n = write(p[1], out, BIG);
	result("the next one fails with EAGAIN", n == -1 && errno == EAGAIN);
	return failed;
}
