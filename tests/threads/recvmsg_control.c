/*
 * recvmsg(2) with ancillary data, as unix(7) and cmsg(3) describe it, on a
 * call that finds its data at once and on one that has to wait for it
 * (another thread sends 50 ms later):
 *   1. a UNIX stream socket with SO_PASSCRED receives a byte sent with one
 *      descriptor (SCM_RIGHTS): exactly one SCM_CREDENTIALS (the sender's
 *      pid, uid and gid) and one SCM_RIGHTS, whose descriptor is open and
 *      names the file sent; msg_controllen covers the two, no MSG_CTRUNC;
 *   2. the same without SO_PASSCRED: SCM_RIGHTS alone;
 *   3. a UNIX datagram socket with SO_PASSCRED: as 1;
 *   4. a control buffer with no room for the descriptor ("too small"):
 *      MSG_CTRUNC, and "the excess file descriptors are automatically
 *      closed in the receiving process": no descriptor more names it;
 *   5. a msghdr pointer to unmapped memory: EFAULT.
 * On a UNIX stream socket with SO_PASSCRED the kernel writes credentials
 * into the control buffer even when recvmsg fails with EAGAIN; io_uring
 * retries after its poll with the buffer pointer moved past them, so under
 * FlexSC-Threads a waiting recvmsg returned the credentials twice and no
 * SCM_RIGHTS, while the descriptor was installed (and leaked).
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>

#define CHECK_NAME "recvmsg_control"
#include "check.h"

struct sent {
	int sock;
	int fd;    /* passed with SCM_RIGHTS */
	int delay; /* ms before sending */
};

static void *sender(void *arg)
{
	struct sent *s = arg;
	char data = 'x';
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { &data, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	memset(&u, 0, sizeof(u));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &s->fd, sizeof(int));
	if (s->delay)
		sleep_ms(s->delay);
	EXPECT(sendmsg(s->sock, &m, 0) == 1, "sendmsg: %s", strerror(errno));
	return NULL;
}

static bool same_file(int a, int b)
{
	struct stat sa, sb;

	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* Descriptors open on the file that fd names (the runtime may open others of its own). */
static int naming(int fd)
{
	int n = 0;

	for (int i = 0; i < 1024; i++)
		n += same_file(i, fd);
	return n;
}

/* One byte with a descriptor, received through a control buffer of ctl_len bytes. */
static void one(const char *what, int type, bool passcred, size_t ctl_len, int delay)
{
	int sv[2], on = 1;
	int pipe_fds[2] = { -1, -1 };
	int file = pipe(pipe_fds) == 0 ? pipe_fds[0] : -1; /* a file no one else has open */
	union {
		char buf[256];
		struct cmsghdr align;
	} u;
	char data = 0;
	struct iovec iov = { &data, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = ctl_len };
	int creds = 0, rights = 0, got_fd = -1, before;
	bool creds_ok = false;

	if (socketpair(AF_UNIX, type, 0, sv) != 0 || file < 0) {
		resultf(0, "%s: set-up: %s", what, strerror(errno));
		return;
	}
	if (passcred)
		setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on));
	struct sent s = { sv[1], file, delay };
	pthread_t t = spawn(sender, &s);

	if (!delay)
		pthread_join(t, NULL);
	before = naming(file);
	memset(&u, 0, sizeof(u));
	ssize_t n = recvmsg(sv[0], &m, 0);
	int err = errno;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); n == 1 && c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
			struct ucred uc;

			memcpy(&uc, CMSG_DATA(c), sizeof(uc));
			creds++;
			creds_ok = uc.pid == getpid() && uc.uid == getuid() && uc.gid == getgid();
		} else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			rights++;
			if (c->cmsg_len == CMSG_LEN(sizeof(int)))
				memcpy(&got_fd, CMSG_DATA(c), sizeof(int));
		}
	}
	if (delay)
		pthread_join(t, NULL);
	resultf(n == 1 && data == 'x', "%s: one byte (got %zd, %s)", what, n,
		n < 0 ? strerror(err) : "no error");
	if (ctl_len >= CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(sizeof(int))) {
		size_t want = (passcred ? CMSG_SPACE(sizeof(struct ucred)) : 0) +
			      CMSG_SPACE(sizeof(int));

		resultf(creds == passcred && (!passcred || creds_ok), "%s: %s credentials", what,
			passcred ? "the sender's" : "no");
		resultf(rights == 1 && got_fd >= 0 && same_file(got_fd, file),
			"%s: SCM_RIGHTS names the file sent", what);
		resultf(m.msg_controllen == want && !(m.msg_flags & MSG_CTRUNC),
			"%s: msg_controllen covers them, no MSG_CTRUNC", what);
		resultf(naming(file) == before + 1, "%s: one descriptor more", what);
	} else {
		resultf(m.msg_flags & MSG_CTRUNC, "%s: MSG_CTRUNC", what);
		resultf(rights == 0 && naming(file) == before, "%s: the descriptor closed, not installed",
			what);
	}
	if (got_fd >= 0)
		close(got_fd);
	close(pipe_fds[0]);
	close(pipe_fds[1]);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	static const struct {
		const char *name;
		int delay;
	} when[] = { { "at once", 0 }, { "waiting", 50 } };
	char what[96];

	for (size_t i = 0; i < sizeof(when) / sizeof(when[0]); i++) {
		int d = when[i].delay;

		snprintf(what, sizeof(what), "stream, SO_PASSCRED, %s", when[i].name);
		one(what, SOCK_STREAM, true, 256, d);
		snprintf(what, sizeof(what), "stream, %s", when[i].name);
		one(what, SOCK_STREAM, false, 256, d);
		snprintf(what, sizeof(what), "datagram, SO_PASSCRED, %s", when[i].name);
		one(what, SOCK_DGRAM, true, 256, d);
		snprintf(what, sizeof(what), "stream, buffer too small, %s", when[i].name);
		one(what, SOCK_STREAM, false, CMSG_SPACE(0), d);
	}

	int sv[2];
	void *gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	munmap(gone, 4096);
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	if (write(sv[1], "x", 1) != 1)
		perror("write");
	errno = 0;
	long r = recvmsg(sv[0], gone, 0);
	result_err("unmapped msghdr: EFAULT", r < 0 ? errno : 0, EFAULT);
	close(sv[0]);
	close(sv[1]);
	return failed;
}
