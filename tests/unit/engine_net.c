// SPDX-License-Identifier: MIT
/*
 * Engine equivalence, sockets: socket, bind, listen, accept, accept4,
 * connect, recvfrom, sendto, recvmsg, sendmsg and shutdown on loopback TCP
 * and UDP (127.0.0.1 only) and AF_UNIX socket pairs, on success and error
 * paths (EAGAIN on nonblocking sockets, EPIPE, ECONNREFUSED, EISCONN,
 * ENOTSOCK, EDESTADDRREQ, EMSGSIZE, EACCES as nobody), give on every engine
 * the result and side effects of the plain system call. recvfrom with an
 * address and sendto with an address take the fallback route on io_uring.
 * Harness: engine_harness.h. Usage: engine_net [NAME-SUBSTRING].
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/un.h>

#include "engine_harness.h"

#define S(name) static void name(struct fix *f)
#define O(name)                                                                          \
	static void name(struct fix *f __attribute__((unused)),                          \
			 int64_t ret __attribute__((unused)), struct obs *o)

#define BAD_FD 1000
#define BAD_PTR 16
#define SIN(ss) ((struct sockaddr_in *)(ss))

static void loopback(struct sockaddr_storage *ss, int port)
{
	memset(ss, 0, sizeof(*ss));
	SIN(ss)->sin_family = AF_INET;
	SIN(ss)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	SIN(ss)->sin_port = htons((uint16_t)port);
}

static int sock(int type)
{
	int s = socket(AF_INET, type, 0);
	CHECK(s >= 0);
	return s;
}

static void bound_name(int s, struct sockaddr_storage *ss)
{
	socklen_t l = sizeof(*ss);
	CHECK_EQ(getsockname(s, (struct sockaddr *)ss, &l), 0);
}

static void set_nonblock(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFL);
	CHECK_EQ(fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK), 0);
}

/* v[4] listener (address ss[0]); v[5] client connected to it; v[6] the accepted side */
S(tcp)
{
	f->v[4] = sock(SOCK_STREAM);
	loopback(&f->ss[0], 0);
	CHECK_EQ(bind(f->v[4], (struct sockaddr *)&f->ss[0], sizeof(struct sockaddr_in)), 0);
	CHECK_EQ(listen(f->v[4], 8), 0);
	bound_name(f->v[4], &f->ss[0]);
	f->v[5] = sock(SOCK_STREAM);
	CHECK_EQ(connect(f->v[5], (struct sockaddr *)&f->ss[0], sizeof(struct sockaddr_in)), 0);
	f->v[6] = accept(f->v[4], NULL, NULL);
	CHECK(f->v[6] >= 0);
	memcpy(f->b[0], "hello", 5);
}
/* a listener with one connection waiting in its backlog */
S(tcp_pending)
{
	f->v[4] = sock(SOCK_STREAM);
	loopback(&f->ss[0], 0);
	CHECK_EQ(bind(f->v[4], (struct sockaddr *)&f->ss[0], sizeof(struct sockaddr_in)), 0);
	CHECK_EQ(listen(f->v[4], 8), 0);
	bound_name(f->v[4], &f->ss[0]);
	f->v[5] = sock(SOCK_STREAM);
	CHECK_EQ(connect(f->v[5], (struct sockaddr *)&f->ss[0], sizeof(struct sockaddr_in)), 0);
	CHECK_EQ(write(f->v[5], "hi", 2), 2);
}
/* v[4] UDP receiver (ss[0]), v[5] UDP sender (ss[1]), both bound on loopback */
S(udp)
{
	f->v[4] = sock(SOCK_DGRAM);
	f->v[5] = sock(SOCK_DGRAM);
	loopback(&f->ss[0], 0);
	loopback(&f->ss[1], 0);
	CHECK_EQ(bind(f->v[4], (struct sockaddr *)&f->ss[0], sizeof(struct sockaddr_in)), 0);
	CHECK_EQ(bind(f->v[5], (struct sockaddr *)&f->ss[1], sizeof(struct sockaddr_in)), 0);
	bound_name(f->v[4], &f->ss[0]);
	bound_name(f->v[5], &f->ss[1]);
	memcpy(f->b[0], "hello", 5);
}
S(udp_sent)
{
	udp(f);
	CHECK_EQ(sendto(f->v[5], "datagram!", 9, 0, (struct sockaddr *)&f->ss[0], sizeof(struct sockaddr_in)), 9);
	f->sl[1] = sizeof(struct sockaddr_storage);
	memset(&f->ss[1], 0, sizeof(f->ss[1]));
}
/* v[0], v[1]: an AF_UNIX pair */
static void upair(struct fix *f, int type)
{
	int sv[2];
	CHECK_EQ(socketpair(AF_UNIX, type, 0, sv), 0);
	f->v[0] = sv[0], f->v[1] = sv[1];
	memcpy(f->b[0], "hello", 5);
}
static void file(struct fix *f)
{
	mkfile(f, 0, "f", "0123456789", 0644);
	f->v[3] = openp(f, 0, O_RDWR);
}
/* fill v[1]'s send path until it would block */
static void fill(int fd)
{
	static char junk[65536];
	set_nonblock(fd, true);
	while (write(fd, junk, sizeof(junk)) > 0)
		;
	CHECK_EQ(errno, EAGAIN);
}

/* ---- observers ---- */
static void osock(struct obs *o, int s)
{
	int v[4];
	socklen_t l = sizeof(int);

	getsockopt(s, SOL_SOCKET, SO_DOMAIN, &v[0], &l);
	getsockopt(s, SOL_SOCKET, SO_TYPE, &v[1], &l);
	getsockopt(s, SOL_SOCKET, SO_PROTOCOL, &v[2], &l);
	getsockopt(s, SOL_SOCKET, SO_ACCEPTCONN, &v[3], &l);
	oprintf(o, " sock{dom=%d type=%d proto=%d listening=%d}", v[0], v[1], v[2], v[3]);
}
static void oname(struct obs *o, const char *tag, int s, bool peer)
{
	struct sockaddr_storage ss;
	socklen_t l = sizeof(ss);
	int r = peer ? getpeername(s, (struct sockaddr *)&ss, &l) : getsockname(s, (struct sockaddr *)&ss, &l);

	if (r) {
		oprintf(o, " %s=<%s>", tag, strerror(errno));
		return;
	}
	if (ss.ss_family == AF_INET)
		oprintf(o, " %s=%s:%s", tag, inet_ntoa(SIN(&ss)->sin_addr), SIN(&ss)->sin_port ? "port" : "0");
	else
		oprintf(o, " %s=family%d", tag, ss.ss_family);
}
static bool same_in(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	return SIN(a)->sin_family == SIN(b)->sin_family && SIN(a)->sin_port == SIN(b)->sin_port &&
	       SIN(a)->sin_addr.s_addr == SIN(b)->sin_addr.s_addr;
}
static int readable(int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };
	return poll(&p, 1, 0) == 1 ? p.revents : 0;
}
O(o_new_sock) { if (ret >= 0) osock(o, (int)ret); }
O(o_bound) { oname(o, "name", f->v[7], false); osock(o, f->v[7]); }
O(o_listen) { osock(o, f->v[7]); }
O(o_accepted)
{
	struct sockaddr_storage client;

	if (ret < 0)
		return;
	bound_name(f->v[5], &client);
	struct sockaddr_storage peer;
	socklen_t l = sizeof(peer);
	CHECK_EQ(getpeername((int)ret, (struct sockaddr *)&peer, &l), 0);
	oprintf(o, " peer_is_client=%d", same_in(&peer, &client));
	char buf[8];
	oprintf(o, " got=%zd", recv((int)ret, buf, sizeof(buf), MSG_DONTWAIT));
	oprintf(o, " addrlen=%u addr_is_client=%d", f->sl[1], same_in(&f->ss[1], &client));
	oprintf(o, " backlog_left=%d", readable(f->v[4]));
}
O(o_connected) { oname(o, "peer", f->v[7], true); oprintf(o, " listener_readable=%d", f->v[4] >= 0 ? readable(f->v[4]) : -1); }
O(o_recvmsg)
{
	struct sockaddr_storage sender;

	obytes(o, "b0", f->b[0], 8);
	obytes(o, "b1", f->b[1], 8);
	oprintf(o, " msg_flags=%x namelen=%u controllen=%zu", f->msg.msg_flags, f->msg.msg_namelen,
		f->msg.msg_controllen);
	if (f->v[5] >= 0 && f->msg.msg_name) {
		bound_name(f->v[5], &sender);
		oprintf(o, " name_is_sender=%d", same_in(f->msg.msg_name, &sender));
	}
	if (ret >= 0 && f->msg.msg_controllen) {
		struct cmsghdr *c = CMSG_FIRSTHDR(&f->msg);
		if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int fd;
			memcpy(&fd, CMSG_DATA(c), sizeof(fd));
			struct stat a, b;
			CHECK_EQ(fstat(fd, &a), 0);
			CHECK_EQ(stat(f->p[0], &b), 0);
			oprintf(o, " passed_fd_is_f=%d cloexec=%d", a.st_ino == b.st_ino,
				fcntl(fd, F_GETFD) & FD_CLOEXEC);
			close(fd);
		}
	}
}
O(o_sent)
{
	char buf[16];
	ssize_t n = recv(f->v[6], buf, sizeof(buf), MSG_DONTWAIT);
	if (n < 0)
		oprintf(o, " peer_got=<%s>", strerror(errno));
	else
		obytes(o, "peer_got", buf, n);
}
O(o_sent_scm)
{
	char buf[16], cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec v = { buf, sizeof(buf) };
	struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	ssize_t n = recvmsg(f->v[1], &m, MSG_DONTWAIT);

	if (n < 0) {
		oprintf(o, " peer_got=<%s>", strerror(errno));
		return;
	}
	obytes(o, "peer_got", buf, n);
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	if (c && c->cmsg_type == SCM_RIGHTS) {
		int fd;
		struct stat a, b;
		memcpy(&fd, CMSG_DATA(c), sizeof(fd));
		CHECK_EQ(fstat(fd, &a), 0);
		CHECK_EQ(stat(f->p[0], &b), 0);
		oprintf(o, " passed_fd_is_f=%d", a.st_ino == b.st_ino);
		close(fd);
	}
}
O(o_shut)
{
	char c;

	errno = 0;
	oprintf(o, " peer_read=%zd", recv(f->v[6], &c, 1, MSG_DONTWAIT));
	if (errno == EAGAIN)
		oprintf(o, "(EAGAIN)");
	errno = 0;
	oprintf(o, " self_read=%zd", recv(f->v[5], &c, 1, MSG_DONTWAIT));
	if (errno == EAGAIN)
		oprintf(o, "(EAGAIN)");
}

/* ---- socket ---- */
S(s_socket_tcp) { ARGS(f, AF_INET, SOCK_STREAM, 0); }
S(s_socket_udp_flags) { ARGS(f, AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0); }
S(s_socket_unix_seqpacket) { ARGS(f, AF_UNIX, SOCK_SEQPACKET, 0); }
S(s_socket_tcp6) { ARGS(f, AF_INET6, SOCK_STREAM, IPPROTO_TCP); }
S(s_socket_bad_domain) { ARGS(f, 12345, SOCK_STREAM, 0); }
S(s_socket_bad_type) { ARGS(f, AF_INET, 12345 & 0xf, 0); }
S(s_socket_bad_proto) { ARGS(f, AF_INET, SOCK_STREAM, IPPROTO_UDP); }
S(s_socket_bad_flags) { ARGS(f, AF_INET, SOCK_STREAM | 0x1000, 0); }

/* ---- bind ---- */
S(s_bind)
{
	f->v[7] = sock(SOCK_DGRAM);
	loopback(&f->ss[0], 0);
	ARGS(f, f->v[7], P(&f->ss[0]), sizeof(struct sockaddr_in));
}
S(s_bind_tcp) { s_bind(f); close(f->v[7]); f->v[7] = sock(SOCK_STREAM); f->a[0] = (uint64_t)f->v[7]; }
S(s_bind_twice) { s_bind(f); CHECK_EQ(bind(f->v[7], (struct sockaddr *)&f->ss[0], sizeof(struct sockaddr_in)), 0); }
S(s_bind_inuse)
{
	s_bind(f);
	f->v[6] = sock(SOCK_DGRAM);
	CHECK_EQ(bind(f->v[6], (struct sockaddr *)&f->ss[0], sizeof(struct sockaddr_in)), 0);
	bound_name(f->v[6], &f->ss[0]);
}
S(s_bind_short) { s_bind(f); f->a[2] = 4; }
S(s_bind_long) { s_bind(f); f->a[2] = sizeof(struct sockaddr_storage); }
S(s_bind_family) { s_bind(f); f->ss[0].ss_family = AF_UNIX; }
S(s_bind_nonlocal) { s_bind(f); SIN(&f->ss[0])->sin_addr.s_addr = inet_addr("10.254.253.252"); }
S(s_bind_efault) { s_bind(f); f->a[1] = BAD_PTR; }
S(s_bind_ebadf) { s_bind(f); f->a[0] = BAD_FD; }
S(s_bind_enotsock) { s_bind(f); file(f); f->a[0] = (uint64_t)f->v[3]; }
S(s_bind_unix)
{
	struct sockaddr_un *un = (struct sockaddr_un *)&f->ss[0];

	f->v[7] = socket(AF_UNIX, SOCK_STREAM, 0);
	mkfile(f, 0, "sock", NULL, 0);
	un->sun_family = AF_UNIX;
	CHECK(strlen(f->p[0]) < sizeof(un->sun_path));
	strcpy(un->sun_path, f->p[0]);
	ARGS(f, f->v[7], P(un), sizeof(*un));
}
S(s_bind_unix_exists) { s_bind_unix(f); mkfile(f, 0, "sock", "x", 0644); }
S(s_bind_privileged) { s_bind(f); SIN(&f->ss[0])->sin_port = htons(80); }
O(o_bind_unix) { ofile(o, f->p[0]); oname(o, "name", f->v[7], false); }

/* ---- listen ---- */
S(s_listen) { s_bind_tcp(f); CHECK_EQ(bind(f->v[7], (struct sockaddr *)&f->ss[0], sizeof(struct sockaddr_in)), 0); f->a[1] = 5; f->a[2] = 0; }
S(s_listen_unbound) { s_bind_tcp(f); ARGS(f, f->v[7], 5); }
S(s_listen_udp) { s_bind(f); ARGS(f, f->v[7], 5); }
S(s_listen_neg_backlog) { s_listen(f); f->a[1] = (uint64_t)-1; }
S(s_listen_ebadf) { s_listen(f); f->a[0] = BAD_FD; }
S(s_listen_enotsock) { s_listen(f); file(f); f->a[0] = (uint64_t)f->v[3]; }
S(s_listen_connected) { tcp(f); f->v[7] = f->v[5]; ARGS(f, f->v[5], 5); }

/* ---- accept, accept4 ---- */
S(s_accept) { tcp_pending(f); ARGS(f, f->v[4], 0, 0); }
S(s_accept_addr) { s_accept(f); f->sl[1] = sizeof(f->ss[1]); f->a[1] = P(&f->ss[1]); f->a[2] = P(&f->sl[1]); }
S(s_accept_short_addr) { s_accept_addr(f); f->sl[1] = 4; }
S(s_accept_bad_addrlen) { s_accept_addr(f); f->sl[1] = (socklen_t)-1; }
S(s_accept_nonblock_empty) { s_accept(f); f->v[6] = accept(f->v[4], NULL, NULL); CHECK(f->v[6] >= 0); set_nonblock(f->v[4], true); }
S(s_accept_not_listening) { tcp(f); ARGS(f, f->v[6], 0, 0); }
S(s_accept_udp) { udp(f); ARGS(f, f->v[4], 0, 0); }
S(s_accept_enotsock) { s_accept(f); file(f); f->a[0] = (uint64_t)f->v[3]; }
S(s_accept_ebadf) { s_accept(f); f->a[0] = BAD_FD; }
S(s_accept4) { s_accept_addr(f); f->a[3] = SOCK_NONBLOCK | SOCK_CLOEXEC; }
S(s_accept4_badflags) { s_accept(f); f->a[3] = 0x1; }

/* ---- connect ---- */
S(s_connect)
{
	tcp_pending(f);
	f->v[7] = sock(SOCK_STREAM);
	ARGS(f, f->v[7], P(&f->ss[0]), sizeof(struct sockaddr_in));
}
S(s_connect_refused)
{
	s_connect(f);
	int t = sock(SOCK_STREAM);
	loopback(&f->ss[1], 0);
	CHECK_EQ(bind(t, (struct sockaddr *)&f->ss[1], sizeof(struct sockaddr_in)), 0);
	bound_name(t, &f->ss[1]);
	close(t); /* a port nobody listens on */
	f->a[1] = P(&f->ss[1]);
}
S(s_connect_nonblock) { s_connect(f); set_nonblock(f->v[7], true); }
S(s_connect_isconn) { s_connect(f); f->v[7] = f->v[5]; f->a[0] = (uint64_t)f->v[5]; }
S(s_connect_udp) { udp(f); f->v[7] = f->v[5]; f->v[4] = -1; ARGS(f, f->v[5], P(&f->ss[0]), sizeof(struct sockaddr_in)); }
S(s_connect_udp_unspec) { s_connect_udp(f); CHECK_EQ(connect(f->v[5], (struct sockaddr *)&f->ss[0], sizeof(struct sockaddr_in)), 0); f->ss[0].ss_family = AF_UNSPEC; }
S(s_connect_short) { s_connect(f); f->a[2] = 2; }
S(s_connect_efault) { s_connect(f); f->a[1] = BAD_PTR; }
S(s_connect_ebadf) { s_connect(f); f->a[0] = BAD_FD; }
S(s_connect_enotsock) { s_connect(f); file(f); f->a[0] = (uint64_t)f->v[3]; }
S(s_connect_family) { s_connect(f); f->ss[0].ss_family = AF_UNIX; }
S(s_connect_unix_enoent)
{
	struct sockaddr_un *un = (struct sockaddr_un *)&f->ss[0];

	f->v[7] = socket(AF_UNIX, SOCK_STREAM, 0);
	mkfile(f, 0, "nosock", NULL, 0);
	un->sun_family = AF_UNIX;
	strcpy(un->sun_path, f->p[0]);
	ARGS(f, f->v[7], P(un), sizeof(*un));
}

/* ---- recvfrom ---- */
S(s_recv_tcp) { tcp(f); CHECK_EQ(write(f->v[5], "hello", 5), 5); memset(f->b[0], '.', 5); ARGS(f, f->v[6], P(f->b[0]), 100, 0, 0, 0); }
S(s_recv_tcp_short) { s_recv_tcp(f); f->a[2] = 3; }
S(s_recv_peek) { s_recv_tcp(f); f->a[3] = MSG_PEEK; }
S(s_recv_trunc_tcp) { s_recv_tcp(f); f->a[2] = 2; f->a[3] = MSG_TRUNC; }
S(s_recv_addrlen_only) { s_recv_tcp(f); f->sl[1] = 77; f->a[5] = P(&f->sl[1]); }
S(s_recv_eof) { tcp(f); close(f->v[5]); f->v[5] = -1; ARGS(f, f->v[6], P(f->b[0]), 100, 0, 0, 0); }
S(s_recv_nonblock) { upair(f, SOCK_STREAM); memset(f->b[0], '.', 5); set_nonblock(f->v[0], true); ARGS(f, f->v[0], P(f->b[0]), 100); }
S(s_recv_dontwait) { upair(f, SOCK_STREAM); memset(f->b[0], '.', 5); ARGS(f, f->v[0], P(f->b[0]), 100, MSG_DONTWAIT); }
S(s_recv_oob) { s_recv_tcp(f); f->a[3] = MSG_OOB; }
S(s_recv_efault) { s_recv_tcp(f); f->a[1] = BAD_PTR; }
S(s_recv_ebadf) { s_recv_tcp(f); f->a[0] = BAD_FD; }
S(s_recv_enotsock) { s_recv_tcp(f); file(f); f->a[0] = (uint64_t)f->v[3]; }
S(s_recv_huge) { s_recv_tcp(f); f->a[2] = 1ull << 33; }
S(s_recv_udp) { udp_sent(f); ARGS(f, f->v[4], P(f->b[0]), 100, 0, 0, 0); }
S(s_recv_udp_addr) { s_recv_udp(f); f->a[4] = P(&f->ss[1]); f->a[5] = P(&f->sl[1]); }
S(s_recv_udp_trunc) { s_recv_udp(f); f->a[2] = 4; f->a[3] = MSG_TRUNC; }
S(s_recv_udp_addr_short) { s_recv_udp_addr(f); f->sl[1] = 2; }
S(s_recv_udp_addr_efault) { s_recv_udp_addr(f); f->a[4] = BAD_PTR; }
S(s_recv_unconnected_tcp) { f->v[7] = sock(SOCK_STREAM); ARGS(f, f->v[7], P(f->b[0]), 100); }
O(o_recv_from)
{
	struct sockaddr_storage sender;

	obytes(o, "b0", f->b[0], 12);
	if (f->v[6] >= 0)
		oqueued(o, "left", f->v[6]);
	if (f->v[4] >= 0 && f->v[6] < 0)
		oqueued(o, "left", f->v[4]);
	if (f->v[0] >= 0)
		oqueued(o, "left", f->v[0]);
	oprintf(o, " addrlen=%u", f->sl[1]);
	if (f->v[5] >= 0 && f->a[4] && f->a[4] != BAD_PTR) {
		bound_name(f->v[5], &sender);
		oprintf(o, " from_sender=%d", same_in(&f->ss[1], &sender));
	}
}

/* ---- sendto ---- */
S(s_send_tcp) { tcp(f); ARGS(f, f->v[5], P(f->b[0]), 5, 0, 0, 0); }
S(s_send_tcp_nosignal_epipe) { s_send_tcp(f); CHECK_EQ(shutdown(f->v[5], SHUT_WR), 0); f->a[3] = MSG_NOSIGNAL; }
S(s_send_tcp_epipe) { s_send_tcp_nosignal_epipe(f); f->a[3] = 0; }
S(s_send_tcp_addr_ignored) { s_send_tcp(f); loopback(&f->ss[1], 9); f->a[4] = P(&f->ss[1]); f->a[5] = sizeof(struct sockaddr_in); }
S(s_send_udp_addr) { udp(f); f->v[6] = -1; ARGS(f, f->v[5], P(f->b[0]), 5, 0, P(&f->ss[0]), sizeof(struct sockaddr_in)); }
S(s_send_udp_connected)
{
	udp(f);
	CHECK_EQ(connect(f->v[5], (struct sockaddr *)&f->ss[0], sizeof(struct sockaddr_in)), 0);
	ARGS(f, f->v[5], P(f->b[0]), 5, 0, 0, 0);
}
S(s_send_udp_nodest) { udp(f); ARGS(f, f->v[5], P(f->b[0]), 5, 0, 0, 0); }
S(s_send_udp_emsgsize) { s_send_udp_connected(f); f->a[1] = P(f->big); f->a[2] = 70000; }
S(s_send_udp_zero) { s_send_udp_connected(f); f->a[2] = 0; }
S(s_send_nonblock_full) { upair(f, SOCK_STREAM); fill(f->v[1]); ARGS(f, f->v[1], P(f->b[0]), 5); }
S(s_send_dontwait_full) { s_send_nonblock_full(f); set_nonblock(f->v[1], false); f->a[3] = MSG_DONTWAIT; }
S(s_send_efault) { s_send_tcp(f); f->a[1] = BAD_PTR; }
S(s_send_ebadf) { s_send_tcp(f); f->a[0] = BAD_FD; }
S(s_send_enotsock) { s_send_tcp(f); file(f); f->a[0] = (uint64_t)f->v[3]; }
S(s_send_unconnected_tcp) { f->v[7] = sock(SOCK_STREAM); ARGS(f, f->v[7], P(f->b[0]), 5, MSG_NOSIGNAL); }
S(s_send_huge) { s_send_udp_connected(f); f->a[2] = 1ull << 33; }
O(o_send_udp)
{
	char buf[16];
	ssize_t n = recv(f->v[4], buf, sizeof(buf), MSG_DONTWAIT);
	if (n < 0)
		oprintf(o, " receiver_got=<%s>", strerror(errno));
	else
		obytes(o, "receiver_got", buf, n);
}
O(o_send_full)
{
	oqueued(o, "peer", f->v[0]);
}

/* ---- recvmsg, sendmsg ---- */
static void msg2(struct fix *f)
{
	f->iov[0] = (struct iovec){ f->b[0], 3 };
	f->iov[1] = (struct iovec){ f->b[1], 8 };
	memset(&f->msg, 0, sizeof(f->msg));
	f->msg.msg_iov = f->iov;
	f->msg.msg_iovlen = 2;
}
S(s_recvmsg_tcp) { s_recv_tcp(f); msg2(f); ARGS(f, f->v[6], P(&f->msg), 0); }
S(s_recvmsg_peek) { s_recvmsg_tcp(f); f->a[2] = MSG_PEEK; }
S(s_recvmsg_udp_name)
{
	udp_sent(f);
	msg2(f);
	f->msg.msg_name = &f->ss[1];
	f->msg.msg_namelen = sizeof(f->ss[1]);
	ARGS(f, f->v[4], P(&f->msg), 0);
}
S(s_recvmsg_udp_trunc) { s_recvmsg_udp_name(f); f->iov[1].iov_len = 2; }
S(s_recvmsg_scm)
{
	upair(f, SOCK_STREAM);
	mkfile(f, 0, "f", "0123456789", 0644);
	int fd = openp(f, 0, O_RDONLY);
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec v = { "x", 1 };
	struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(fd));
	CHECK_EQ(sendmsg(f->v[1], &m, 0), 1);
	close(fd);
	msg2(f);
	f->msg.msg_control = f->b[3];
	f->msg.msg_controllen = CMSG_SPACE(sizeof(int));
	ARGS(f, f->v[0], P(&f->msg), MSG_CMSG_CLOEXEC);
}
S(s_recvmsg_scm_ctrunc) { s_recvmsg_scm(f); f->msg.msg_controllen = 4; f->a[2] = 0; }
S(s_recvmsg_nonblock) { upair(f, SOCK_STREAM); msg2(f); set_nonblock(f->v[0], true); ARGS(f, f->v[0], P(&f->msg), 0); }
S(s_recvmsg_dontwait) { upair(f, SOCK_STREAM); msg2(f); ARGS(f, f->v[0], P(&f->msg), MSG_DONTWAIT); }
S(s_recvmsg_badmsg) { s_recvmsg_tcp(f); f->a[1] = BAD_PTR; }
S(s_recvmsg_ebadf) { s_recvmsg_tcp(f); f->a[0] = BAD_FD; }
S(s_recvmsg_enotsock) { s_recvmsg_tcp(f); file(f); f->a[0] = (uint64_t)f->v[3]; }
S(s_recvmsg_seqpacket_eor)
{
	upair(f, SOCK_SEQPACKET);
	CHECK_EQ(write(f->v[1], "record", 6), 6);
	msg2(f);
	ARGS(f, f->v[0], P(&f->msg), 0);
}
S(s_sendmsg_tcp) { tcp(f); msg2(f); memcpy(f->b[0], "abc", 3); memcpy(f->b[1], "defgh", 5); f->iov[1].iov_len = 5; ARGS(f, f->v[5], P(&f->msg), 0); }
S(s_sendmsg_udp_name)
{
	udp(f);
	f->v[6] = -1;
	msg2(f);
	f->iov[1].iov_len = 2;
	f->msg.msg_name = &f->ss[0];
	f->msg.msg_namelen = sizeof(struct sockaddr_in);
	ARGS(f, f->v[5], P(&f->msg), 0);
}
S(s_sendmsg_udp_nodest) { s_sendmsg_udp_name(f); f->msg.msg_name = NULL; f->msg.msg_namelen = 0; }
S(s_sendmsg_udp_badname) { s_sendmsg_udp_name(f); f->msg.msg_namelen = 3; }
S(s_sendmsg_scm)
{
	upair(f, SOCK_STREAM);
	mkfile(f, 0, "f", "0123456789", 0644);
	f->v[3] = openp(f, 0, O_RDONLY);
	msg2(f);
	f->iov[1].iov_len = 0;
	f->msg.msg_control = f->b[3];
	f->msg.msg_controllen = CMSG_SPACE(sizeof(int));
	struct cmsghdr *c = CMSG_FIRSTHDR(&f->msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &f->v[3], sizeof(int));
	ARGS(f, f->v[0], P(&f->msg), 0);
}
S(s_sendmsg_scm_badfd) { s_sendmsg_scm(f); int bad = BAD_FD; memcpy(CMSG_DATA(CMSG_FIRSTHDR(&f->msg)), &bad, sizeof(int)); }
S(s_sendmsg_epipe) { s_sendmsg_tcp(f); CHECK_EQ(shutdown(f->v[5], SHUT_WR), 0); }
S(s_sendmsg_nonblock_full) { upair(f, SOCK_STREAM); fill(f->v[1]); msg2(f); ARGS(f, f->v[1], P(&f->msg), 0); }
S(s_sendmsg_badmsg) { s_sendmsg_tcp(f); f->a[1] = BAD_PTR; }
S(s_sendmsg_ebadf) { s_sendmsg_tcp(f); f->a[0] = BAD_FD; }
S(s_sendmsg_enotsock) { s_sendmsg_tcp(f); file(f); f->a[0] = (uint64_t)f->v[3]; }
S(s_sendmsg_toomany) { s_sendmsg_tcp(f); f->msg.msg_iovlen = 1025; }

/* ---- shutdown ---- */
S(s_shutdown_wr) { tcp(f); ARGS(f, f->v[5], SHUT_WR); }
S(s_shutdown_rd) { tcp(f); ARGS(f, f->v[5], SHUT_RD); }
S(s_shutdown_rdwr) { tcp(f); ARGS(f, f->v[5], SHUT_RDWR); }
S(s_shutdown_badhow) { tcp(f); ARGS(f, f->v[5], 7); }
S(s_shutdown_enotconn) { tcp(f); f->v[7] = sock(SOCK_STREAM); ARGS(f, f->v[7], SHUT_RDWR); }
S(s_shutdown_listener) { tcp(f); ARGS(f, f->v[4], SHUT_RDWR); }
S(s_shutdown_enotsock) { tcp(f); file(f); ARGS(f, f->v[3], SHUT_RDWR); }
S(s_shutdown_ebadf) { tcp(f); ARGS(f, BAD_FD, SHUT_RDWR); }

static const struct tcase cases[] = {
	{ "socket_tcp", SYS_socket, 'U', 'D', s_socket_tcp, o_new_sock, false },
	{ "socket_udp_nonblock_cloexec", SYS_socket, 'U', 'D', s_socket_udp_flags, o_new_sock, false },
	{ "socket_unix_seqpacket", SYS_socket, 'U', 'D', s_socket_unix_seqpacket, o_new_sock, false },
	{ "socket_tcp6", SYS_socket, 'U', 'D', s_socket_tcp6, o_new_sock, false },
	{ "socket_bad_domain", SYS_socket, 'U', 'D', s_socket_bad_domain, NULL, false },
	{ "socket_bad_type", SYS_socket, 'U', 'D', s_socket_bad_type, NULL, false },
	{ "socket_bad_protocol", SYS_socket, 'U', 'D', s_socket_bad_proto, NULL, false },
	{ "socket_bad_flags", SYS_socket, 'U', 'D', s_socket_bad_flags, NULL, false },
	{ "bind_udp_loopback", SYS_bind, 'U', 'E', s_bind, o_bound, false },
	{ "bind_tcp_loopback", SYS_bind, 'U', 'E', s_bind_tcp, o_bound, false },
	{ "bind_twice_einval", SYS_bind, 'U', 'E', s_bind_twice, o_bound, false },
	{ "bind_eaddrinuse", SYS_bind, 'U', 'E', s_bind_inuse, o_bound, false },
	{ "bind_short_addrlen", SYS_bind, 'U', 'E', s_bind_short, o_bound, false },
	{ "bind_long_addrlen", SYS_bind, 'U', 'E', s_bind_long, o_bound, false },
	{ "bind_wrong_family", SYS_bind, 'U', 'E', s_bind_family, o_bound, false },
	{ "bind_eaddrnotavail", SYS_bind, 'U', 'E', s_bind_nonlocal, o_bound, false },
	{ "bind_efault", SYS_bind, 'U', 'E', s_bind_efault, o_bound, false },
	{ "bind_ebadf", SYS_bind, 'U', 'E', s_bind_ebadf, NULL, false },
	{ "bind_enotsock", SYS_bind, 'U', 'E', s_bind_enotsock, NULL, false },
	{ "bind_unix_path", SYS_bind, 'U', 'E', s_bind_unix, o_bind_unix, false },
	{ "bind_unix_path_eaddrinuse", SYS_bind, 'U', 'E', s_bind_unix_exists, o_bind_unix, false },
	{ "nobody_bind_port_80_eacces", SYS_bind, 'U', 'E', s_bind_privileged, o_bound, true },
	{ "listen", SYS_listen, 'U', 'E', s_listen, o_listen, false },
	{ "listen_unbound_autobinds", SYS_listen, 'U', 'E', s_listen_unbound, o_listen, false },
	{ "listen_udp_eopnotsupp", SYS_listen, 'U', 'E', s_listen_udp, o_listen, false },
	{ "listen_negative_backlog", SYS_listen, 'U', 'E', s_listen_neg_backlog, o_listen, false },
	{ "listen_ebadf", SYS_listen, 'U', 'E', s_listen_ebadf, NULL, false },
	{ "listen_enotsock", SYS_listen, 'U', 'E', s_listen_enotsock, NULL, false },
	{ "listen_connected_einval", SYS_listen, 'U', 'E', s_listen_connected, o_listen, false },
	{ "accept", SYS_accept, 'U', 'D', s_accept, o_accepted, false },
	{ "accept_with_address", SYS_accept, 'U', 'D', s_accept_addr, o_accepted, false },
	{ "accept_short_address", SYS_accept, 'U', 'D', s_accept_short_addr, o_accepted, false },
	{ "accept_negative_addrlen", SYS_accept, 'U', 'D', s_accept_bad_addrlen, o_accepted, false },
	{ "accept_nonblock_empty_eagain", SYS_accept, 'N', 'D', s_accept_nonblock_empty, o_accepted, false },
	{ "accept_not_listening_einval", SYS_accept, 'U', 'D', s_accept_not_listening, NULL, false },
	{ "accept_udp_eopnotsupp", SYS_accept, 'U', 'D', s_accept_udp, NULL, false },
	{ "accept_enotsock", SYS_accept, 'U', 'D', s_accept_enotsock, NULL, false },
	{ "accept_ebadf", SYS_accept, 'U', 'D', s_accept_ebadf, NULL, false },
	{ "accept4_nonblock_cloexec", SYS_accept4, 'U', 'D', s_accept4, o_accepted, false },
	{ "accept4_bad_flags", SYS_accept4, 'U', 'D', s_accept4_badflags, NULL, false },
	{ "connect_tcp", SYS_connect, 'U', 'E', s_connect, o_connected, false },
	{ "connect_econnrefused", SYS_connect, 'U', 'E', s_connect_refused, o_connected, false },
	{ "connect_nonblock_einprogress", SYS_connect, 'N', 'E', s_connect_nonblock, NULL, false },
	{ "connect_eisconn", SYS_connect, 'U', 'E', s_connect_isconn, o_connected, false },
	{ "connect_udp", SYS_connect, 'U', 'E', s_connect_udp, o_connected, false },
	{ "connect_udp_af_unspec_disconnects", SYS_connect, 'U', 'E', s_connect_udp_unspec, o_connected, false },
	{ "connect_short_addrlen", SYS_connect, 'U', 'E', s_connect_short, o_connected, false },
	{ "connect_efault", SYS_connect, 'U', 'E', s_connect_efault, o_connected, false },
	{ "connect_ebadf", SYS_connect, 'U', 'E', s_connect_ebadf, NULL, false },
	{ "connect_enotsock", SYS_connect, 'U', 'E', s_connect_enotsock, NULL, false },
	{ "connect_wrong_family", SYS_connect, 'U', 'E', s_connect_family, o_connected, false },
	{ "connect_unix_enoent", SYS_connect, 'U', 'E', s_connect_unix_enoent, NULL, false },
	{ "recvfrom_tcp", SYS_recvfrom, 'U', 'E', s_recv_tcp, o_recv_from, false },
	{ "recvfrom_tcp_partial", SYS_recvfrom, 'U', 'E', s_recv_tcp_short, o_recv_from, false },
	{ "recvfrom_msg_peek", SYS_recvfrom, 'U', 'E', s_recv_peek, o_recv_from, false },
	{ "recvfrom_msg_trunc_tcp", SYS_recvfrom, 'U', 'E', s_recv_trunc_tcp, o_recv_from, false },
	{ "recvfrom_addrlen_without_addr", SYS_recvfrom, 'U', 'E', s_recv_addrlen_only, o_recv_from, false },
	{ "recvfrom_eof", SYS_recvfrom, 'U', 'E', s_recv_eof, o_recv_from, false },
	{ "recvfrom_nonblock_eagain", SYS_recvfrom, 'N', 'E', s_recv_nonblock, o_recv_from, false },
	{ "recvfrom_msg_dontwait_eagain", SYS_recvfrom, 'N', 'E', s_recv_dontwait, o_recv_from, false },
	{ "recvfrom_msg_oob_einval", SYS_recvfrom, 'U', 'E', s_recv_oob, o_recv_from, false },
	{ "recvfrom_efault", SYS_recvfrom, 'U', 'E', s_recv_efault, o_recv_from, false },
	{ "recvfrom_ebadf", SYS_recvfrom, 'U', 'E', s_recv_ebadf, NULL, false },
	{ "recvfrom_enotsock", SYS_recvfrom, 'U', 'E', s_recv_enotsock, NULL, false },
	{ "recvfrom_length_over_4g", SYS_recvfrom, 'F', 'E', s_recv_huge, o_recv_from, false },
	{ "recvfrom_unconnected_tcp", SYS_recvfrom, 'U', 'E', s_recv_unconnected_tcp, NULL, false },
	{ "recvfrom_udp", SYS_recvfrom, 'U', 'E', s_recv_udp, o_recv_from, false },
	{ "recvfrom_udp_with_address", SYS_recvfrom, 'F', 'E', s_recv_udp_addr, o_recv_from, false },
	{ "recvfrom_udp_msg_trunc", SYS_recvfrom, 'U', 'E', s_recv_udp_trunc, o_recv_from, false },
	{ "recvfrom_udp_short_addrlen", SYS_recvfrom, 'F', 'E', s_recv_udp_addr_short, o_recv_from, false },
	{ "recvfrom_udp_address_efault", SYS_recvfrom, 'F', 'E', s_recv_udp_addr_efault, o_recv_from, false },
	{ "sendto_tcp", SYS_sendto, 'U', 'E', s_send_tcp, o_sent, false },
	{ "sendto_tcp_epipe", SYS_sendto, 'U', 'E', s_send_tcp_epipe, o_sent, false },
	{ "sendto_tcp_epipe_nosignal", SYS_sendto, 'U', 'E', s_send_tcp_nosignal_epipe, o_sent, false },
	{ "sendto_tcp_address_ignored", SYS_sendto, 'F', 'E', s_send_tcp_addr_ignored, o_sent, false },
	{ "sendto_udp_with_address", SYS_sendto, 'F', 'E', s_send_udp_addr, o_send_udp, false },
	{ "sendto_udp_connected", SYS_sendto, 'U', 'E', s_send_udp_connected, o_send_udp, false },
	{ "sendto_udp_edestaddrreq", SYS_sendto, 'U', 'E', s_send_udp_nodest, o_send_udp, false },
	{ "sendto_udp_emsgsize", SYS_sendto, 'U', 'E', s_send_udp_emsgsize, o_send_udp, false },
	{ "sendto_udp_zero_length", SYS_sendto, 'U', 'E', s_send_udp_zero, o_send_udp, false },
	{ "sendto_nonblock_full_eagain", SYS_sendto, 'N', 'E', s_send_nonblock_full, o_send_full, false },
	{ "sendto_msg_dontwait_full_eagain", SYS_sendto, 'N', 'E', s_send_dontwait_full, o_send_full, false },
	{ "sendto_efault", SYS_sendto, 'U', 'E', s_send_efault, o_sent, false },
	{ "sendto_ebadf", SYS_sendto, 'U', 'E', s_send_ebadf, NULL, false },
	{ "sendto_enotsock", SYS_sendto, 'U', 'E', s_send_enotsock, NULL, false },
	{ "sendto_unconnected_tcp", SYS_sendto, 'U', 'E', s_send_unconnected_tcp, NULL, false },
	{ "sendto_udp_length_over_4g", SYS_sendto, 'F', 'E', s_send_huge, o_send_udp, false },
	{ "recvmsg_tcp_2_iovecs", SYS_recvmsg, 'U', 'E', s_recvmsg_tcp, o_recvmsg, false },
	{ "recvmsg_msg_peek", SYS_recvmsg, 'U', 'E', s_recvmsg_peek, o_recvmsg, false },
	{ "recvmsg_udp_name", SYS_recvmsg, 'U', 'E', s_recvmsg_udp_name, o_recvmsg, false },
	{ "recvmsg_udp_truncated", SYS_recvmsg, 'U', 'E', s_recvmsg_udp_trunc, o_recvmsg, false },
	{ "recvmsg_scm_rights_cloexec", SYS_recvmsg, 'F', 'E', s_recvmsg_scm, o_recvmsg, false },
	{ "recvmsg_scm_rights_ctrunc", SYS_recvmsg, 'F', 'E', s_recvmsg_scm_ctrunc, o_recvmsg, false },
	{ "recvmsg_seqpacket_eor", SYS_recvmsg, 'U', 'E', s_recvmsg_seqpacket_eor, o_recvmsg, false },
	{ "recvmsg_nonblock_eagain", SYS_recvmsg, 'N', 'E', s_recvmsg_nonblock, o_recvmsg, false },
	{ "recvmsg_msg_dontwait_eagain", SYS_recvmsg, 'N', 'E', s_recvmsg_dontwait, o_recvmsg, false },
	{ "recvmsg_bad_msghdr", SYS_recvmsg, 'F', 'E', s_recvmsg_badmsg, NULL, false },
	{ "recvmsg_ebadf", SYS_recvmsg, 'U', 'E', s_recvmsg_ebadf, NULL, false },
	{ "recvmsg_enotsock", SYS_recvmsg, 'U', 'E', s_recvmsg_enotsock, NULL, false },
	{ "sendmsg_tcp_2_iovecs", SYS_sendmsg, 'U', 'E', s_sendmsg_tcp, o_sent, false },
	{ "sendmsg_udp_name", SYS_sendmsg, 'U', 'E', s_sendmsg_udp_name, o_send_udp, false },
	{ "sendmsg_udp_edestaddrreq", SYS_sendmsg, 'U', 'E', s_sendmsg_udp_nodest, o_send_udp, false },
	{ "sendmsg_udp_short_name", SYS_sendmsg, 'U', 'E', s_sendmsg_udp_badname, o_send_udp, false },
	{ "sendmsg_scm_rights", SYS_sendmsg, 'U', 'E', s_sendmsg_scm, o_sent_scm, false },
	{ "sendmsg_scm_rights_ebadf", SYS_sendmsg, 'U', 'E', s_sendmsg_scm_badfd, o_sent_scm, false },
	{ "sendmsg_epipe", SYS_sendmsg, 'U', 'E', s_sendmsg_epipe, o_sent, false },
	{ "sendmsg_nonblock_full_eagain", SYS_sendmsg, 'N', 'E', s_sendmsg_nonblock_full, o_send_full, false },
	{ "sendmsg_bad_msghdr", SYS_sendmsg, 'U', 'E', s_sendmsg_badmsg, NULL, false },
	{ "sendmsg_ebadf", SYS_sendmsg, 'U', 'E', s_sendmsg_ebadf, NULL, false },
	{ "sendmsg_enotsock", SYS_sendmsg, 'U', 'E', s_sendmsg_enotsock, NULL, false },
	{ "sendmsg_1025_iovecs_emsgsize", SYS_sendmsg, 'U', 'E', s_sendmsg_toomany, NULL, false },
	{ "shutdown_wr", SYS_shutdown, 'U', 'E', s_shutdown_wr, o_shut, false },
	{ "shutdown_rd", SYS_shutdown, 'U', 'E', s_shutdown_rd, o_shut, false },
	{ "shutdown_rdwr", SYS_shutdown, 'U', 'E', s_shutdown_rdwr, o_shut, false },
	{ "shutdown_bad_how", SYS_shutdown, 'U', 'E', s_shutdown_badhow, o_shut, false },
	{ "shutdown_enotconn", SYS_shutdown, 'U', 'E', s_shutdown_enotconn, NULL, false },
	{ "shutdown_listener", SYS_shutdown, 'U', 'E', s_shutdown_listener, NULL, false },
	{ "shutdown_enotsock", SYS_shutdown, 'U', 'E', s_shutdown_enotsock, NULL, false },
	{ "shutdown_ebadf", SYS_shutdown, 'U', 'E', s_shutdown_ebadf, NULL, false },
};

static const struct t_known known[] = { { NULL, NULL } };

int main(int argc, char **argv)
{
	return t_run_table("engine_net", cases, sizeof(cases) / sizeof(cases[0]), known, argc, argv);
}
