// SPDX-License-Identifier: MIT
/*
 * Chains (flexsc_post_chain) give the same results on every engine:
 *  - open -> read -> close of one file: 0 (op 0's descriptor is consumed by
 *    the chain), the byte count with the file's bytes in the buffer, 0;
 *  - a chain whose open fails: -ENOENT, -EBADF, -EBADF;
 *  - socket -> connect -> close to a loopback listener: 0, 0, 0, and the
 *    listener sees the connection come and go;
 *  - a chain with a THREAD-class op (fstat of the chain's descriptor);
 *  - FLEXSC_CHAIN_MAX ops (open, six preads, close), ops that must run in
 *    order (write, write, fsync), a failing middle op (the close still runs);
 *  - a nonblocking socket -> connect -> close: 0, -EINPROGRESS, 0, and a
 *    nonblocking FIFO open -> read -> close: 0, -EAGAIN, 0 (io_uring would
 *    wait where the descriptor says not to);
 *  - 24 chains in flight at once.
 * On the uring and auto engines the io_uring-able chains must have gone
 * through io_uring (queue stats), and no descriptor may leak on any engine.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helpers.h"

#define FD FLEXSC_CHAIN_FD
/*
 * The bound on each wait for a chain. Generous because it only turns a hang
 * into a failure (a busy 2-CPU machine, fsync on a disk-backed /tmp, or a
 * sanitizer can take seconds); a wait ends as soon as the chain is done.
 */
#define BOUND_S 30

static char dir[64], file[128], missing[128], out[128], fifo[128];
static const char content[] = "chained bytes: 0123456789";

static void uring_ops(struct flexsc_queue *q, uint64_t *u)
{
	struct flexsc_stats st;
	CHECK_EQ(flexsc_queue_stats(q, &st), 0);
	*u = st.by_engine[FLEXSC_ENGINE_URING];
}

/* Posts ops as one chain and collects every result. */
static void run_chain(struct flexsc_queue *q, const struct flexsc_op *ops, unsigned n, int64_t *rets)
{
	flexsc_call_t calls[FLEXSC_CHAIN_MAX];
	struct timespec to = { BOUND_S, 0 };

	CHECK_EQ(flexsc_post_chain(q, ops, n, calls), 0);
	CHECK_EQ(flexsc_wait_all(q, calls, n, rets, &to), 0);
}

static bool ring_engine(enum flexsc_engine e)
{
	return e == FLEXSC_ENGINE_URING || e == FLEXSC_ENGINE_AUTO;
}

static void expect(const char *what, enum flexsc_engine e, const int64_t *got, const int64_t *want, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (got[i] != want[i]) {
			fprintf(stderr, "%s on %s: op %u returned %lld, expected %lld\n", what,
				flexsc_engine_name(e), i, (long long)got[i], (long long)want[i]);
			exit(1);
		}
	}
}

static void open_read_close(enum flexsc_engine e, struct flexsc_queue *q)
{
	char buf[64];
	int64_t r[3], want[3] = { 0, (int64_t)strlen(content), 0 };
	uint64_t u0, u1;
	struct flexsc_op ops[3] = {
		{ SYS_openat, 4, { (uint64_t)AT_FDCWD, P(file), O_RDONLY, 0 } },
		{ SYS_read, 3, { FD, P(buf), sizeof(buf) } },
		{ SYS_close, 1, { FD } },
	};

	memset(buf, '.', sizeof(buf));
	uring_ops(q, &u0);
	run_chain(q, ops, 3, r);
	uring_ops(q, &u1);
	expect("open->read->close", e, r, want, 3);
	CHECK(!memcmp(buf, content, strlen(content)));
	CHECK_EQ(buf[strlen(content)], '.');
	if (ring_engine(e))
		CHECK_EQ(u1 - u0, 3); /* linked SQEs, a direct descriptor */
	else
		CHECK_EQ(u1 - u0, 0);

	/* the same with open(2) as op 0 */
	ops[0] = (struct flexsc_op){ SYS_open, 3, { P(file), O_RDONLY, 0 } };
	memset(buf, '.', sizeof(buf));
	run_chain(q, ops, 3, r);
	expect("open(2)->read->close", e, r, want, 3);
	CHECK(!memcmp(buf, content, strlen(content)));
}

static void open_fails(enum flexsc_engine e, struct flexsc_queue *q)
{
	char buf[16];
	int64_t r[3], want[3] = { -ENOENT, -EBADF, -EBADF };
	struct flexsc_op ops[3] = {
		{ SYS_openat, 4, { (uint64_t)AT_FDCWD, P(missing), O_RDONLY, 0 } },
		{ SYS_read, 3, { FD, P(buf), sizeof(buf) } },
		{ SYS_close, 1, { FD } },
	};

	memset(buf, '.', sizeof(buf));
	run_chain(q, ops, 3, r);
	expect("failed open->read->close", e, r, want, 3);
	CHECK_EQ(buf[0], '.');
}

static void socket_connect_close(enum flexsc_engine e, struct flexsc_queue *q)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(sa);
	int lfd = socket(AF_INET, SOCK_STREAM, 0);
	int64_t r[3], want[3] = { 0, 0, 0 };
	uint64_t u0, u1;

	CHECK(lfd >= 0);
	CHECK_EQ(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	CHECK_EQ(listen(lfd, 4), 0);
	CHECK_EQ(getsockname(lfd, (struct sockaddr *)&sa, &l), 0);
	struct flexsc_op ops[3] = {
		{ SYS_socket, 3, { AF_INET, SOCK_STREAM, 0 } },
		{ SYS_connect, 3, { FD, P(&sa), sizeof(sa) } },
		{ SYS_close, 1, { FD } },
	};
	uring_ops(q, &u0);
	run_chain(q, ops, 3, r);
	uring_ops(q, &u1);
	expect("socket->connect->close", e, r, want, 3);
	if (ring_engine(e))
		CHECK_EQ(u1 - u0, 3);
	/* the connection arrived and was closed: accept it, read EOF */
	int c = accept(lfd, NULL, NULL);
	CHECK(c >= 0);
	char ch;
	CHECK_EQ(read(c, &ch, 1), 0);
	close(c);

	/* connecting to a closed port: 0, -ECONNREFUSED, 0 */
	close(lfd);
	want[1] = -ECONNREFUSED;
	run_chain(q, ops, 3, r);
	expect("socket->refused connect->close", e, r, want, 3);
}

static void nonblocking(enum flexsc_engine e, struct flexsc_queue *q)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(sa);
	int lfd = socket(AF_INET, SOCK_STREAM, 0);
	int64_t r[3], want[3] = { 0, -EINPROGRESS, 0 };
	char buf[8];
	flexsc_call_t c[3];
	/* nothing is ever written to the FIFO: a read that waits never ends, even in BOUND_S */
	struct timespec to = { BOUND_S, 0 };

	CHECK(lfd >= 0);
	CHECK_EQ(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	CHECK_EQ(listen(lfd, 4), 0);
	CHECK_EQ(getsockname(lfd, (struct sockaddr *)&sa, &l), 0);
	struct flexsc_op ops[3] = {
		{ SYS_socket, 3, { AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0 } },
		{ SYS_connect, 3, { FD, P(&sa), sizeof(sa) } },
		{ SYS_close, 1, { FD } },
	};
	run_chain(q, ops, 3, r);
	expect("nonblocking socket->connect->close", e, r, want, 3);
	close(lfd);

	/* a FIFO with a writer but no data: a nonblocking read fails with EAGAIN */
	int w = open(fifo, O_RDWR);
	CHECK(w >= 0);
	struct flexsc_op ops2[3] = {
		{ SYS_openat, 4, { (uint64_t)AT_FDCWD, P(fifo), O_RDONLY | O_NONBLOCK, 0 } },
		{ SYS_read, 3, { FD, P(buf), sizeof(buf) } },
		{ SYS_close, 1, { FD } },
	};
	int64_t want2[3] = { 0, -EAGAIN, 0 };
	CHECK_EQ(flexsc_post_chain(q, ops2, 3, c), 0);
	if (flexsc_wait_all(q, c, 3, r, &to) == -ETIME) {
		fprintf(stderr, "nonblocking FIFO open->read->close on %s: the read waited instead of "
				"failing with -EAGAIN\n", flexsc_engine_name(e));
		_exit(1);
	}
	expect("nonblocking FIFO open->read->close", e, r, want2, 3);
	close(w);
}

static void with_thread_op(enum flexsc_engine e, struct flexsc_queue *q)
{
	struct stat st;
	int64_t r[3], want[3] = { 0, 0, 0 };
	uint64_t u0, u1;
	struct flexsc_op ops[3] = {
		{ SYS_openat, 4, { (uint64_t)AT_FDCWD, P(file), O_RDONLY, 0 } },
		{ SYS_fstat, 2, { FD, P(&st) } },
		{ SYS_close, 1, { FD } },
	};

	memset(&st, 0, sizeof(st));
	uring_ops(q, &u0);
	run_chain(q, ops, 3, r);
	uring_ops(q, &u1);
	expect("open->fstat->close", e, r, want, 3);
	CHECK_EQ(st.st_size, (long)strlen(content));
	CHECK_EQ(u1 - u0, 0); /* fstat has no opcode: the whole chain takes the fallback */
}

static void max_ops(enum flexsc_engine e, struct flexsc_queue *q)
{
	char b[6][4];
	int64_t r[FLEXSC_CHAIN_MAX], want[FLEXSC_CHAIN_MAX];
	struct flexsc_op ops[FLEXSC_CHAIN_MAX];

	ops[0] = (struct flexsc_op){ SYS_openat, 4, { (uint64_t)AT_FDCWD, P(file), O_RDONLY, 0 } };
	want[0] = 0;
	for (int i = 0; i < 6; i++) {
		ops[1 + i] = (struct flexsc_op){ SYS_pread64, 4, { FD, P(b[i]), 3, (uint64_t)(15 + i) } };
		want[1 + i] = 3;
	}
	ops[7] = (struct flexsc_op){ SYS_close, 1, { FD } };
	want[7] = 0;
	run_chain(q, ops, FLEXSC_CHAIN_MAX, r);
	expect("open->6 preads->close", e, r, want, FLEXSC_CHAIN_MAX);
	for (int i = 0; i < 6; i++)
		CHECK(!memcmp(b[i], content + 15 + i, 3));
}

static void ordered(enum flexsc_engine e, struct flexsc_queue *q)
{
	int fd = open(out, O_RDWR | O_CREAT | O_TRUNC, 0644);
	char buf[16] = { 0 };
	int64_t r[4], want[4] = { 3, 3, 0, 6 };

	CHECK(fd >= 0);
	/* no FLEXSC_CHAIN_FD: plain descriptors, run in order */
	struct flexsc_op ops[4] = {
		{ SYS_write, 3, { (uint64_t)fd, P("abc"), 3 } },
		{ SYS_write, 3, { (uint64_t)fd, P("def"), 3 } },
		{ SYS_fsync, 1, { (uint64_t)fd } },
		{ SYS_pread64, 4, { (uint64_t)fd, P(buf), sizeof(buf), 0 } },
	};
	run_chain(q, ops, 4, r);
	expect("write->write->fsync->pread", e, r, want, 4);
	CHECK(!memcmp(buf, "abcdef", 6));
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 6);
	close(fd);

	/* open for writing in the chain: pwrite, then read at the position */
	char rb[8] = { 0 };
	int64_t want2[4] = { 0, 2, 4, 0 };
	struct flexsc_op ops2[4] = {
		{ SYS_openat, 4, { (uint64_t)AT_FDCWD, P(out), O_RDWR, 0 } },
		{ SYS_pwrite64, 4, { FD, P("XY"), 2, 1 } },
		{ SYS_read, 3, { FD, P(rb), 4 } },
		{ SYS_close, 1, { FD } },
	};
	run_chain(q, ops2, 4, r);
	expect("open->pwrite->read->close", e, r, want2, 4);
	CHECK(!memcmp(rb, "aXYd", 4));
}

static void failing_middle(enum flexsc_engine e, struct flexsc_queue *q)
{
	int64_t r[4], want[4] = { 0, -EFAULT, 4, 0 };
	char buf[4];
	struct flexsc_op ops[4] = {
		{ SYS_openat, 4, { (uint64_t)AT_FDCWD, P(file), O_RDONLY, 0 } },
		{ SYS_read, 3, { FD, 16, 8 } }, /* a bad buffer */
		{ SYS_read, 3, { FD, P(buf), 4 } },
		{ SYS_close, 1, { FD } },
	};

	run_chain(q, ops, 4, r);
	expect("open->faulting read->read->close", e, r, want, 4);
	CHECK(!memcmp(buf, content, 4));
}

static void many_in_flight(enum flexsc_engine e, struct flexsc_queue *q)
{
	enum { N = 24 };
	char bufs[N][8];
	flexsc_call_t calls[N][3];
	struct flexsc_op ops[3] = {
		{ SYS_openat, 4, { (uint64_t)AT_FDCWD, P(file), O_RDONLY, 0 } },
		{ SYS_pread64, 4, { FD, 0, 5, 0 } },
		{ SYS_close, 1, { FD } },
	};
	struct timespec to = { BOUND_S, 0 };

	for (int i = 0; i < N; i++) {
		ops[1].args[1] = P(bufs[i]);
		ops[1].args[3] = (uint64_t)i % 20;
		ops[0].args[1] = P(i % 5 == 4 ? missing : file);
		CHECK_EQ(flexsc_post_chain(q, ops, 3, calls[i]), 0);
	}
	for (int i = 0; i < N; i++) {
		int64_t r[3];
		CHECK_EQ(flexsc_wait_all(q, calls[i], 3, r, &to), 0);
		if (i % 5 == 4) {
			int64_t want[3] = { -ENOENT, -EBADF, -EBADF };
			expect("24 chains, a failing one", e, r, want, 3);
		} else {
			int64_t want[3] = { 0, 5, 0 };
			expect("24 chains", e, r, want, 3);
			CHECK(!memcmp(bufs[i], content + i % 20, 5));
		}
	}
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/flexsc-chain-XXXXXX");
	CHECK(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/f", dir);
	snprintf(missing, sizeof(missing), "%s/missing", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	CHECK_EQ(mkfifo(fifo, 0600), 0);
	int fd = open(file, O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, content, strlen(content)), (long)strlen(content));
	close(fd);

	for (unsigned i = 0; i < T_NENGINES; i++) {
		enum flexsc_engine e = t_engines[i];
		struct flexsc *fx;
		struct flexsc_queue *q;

		t_open(e, &fx, &q, NULL);
		if (flexsc_engine_in_use(fx) != e) {
			t_close(fx, q);
			SKIP("the %s engine is unavailable here", flexsc_engine_name(e));
		}
		int before = t_count_fds();
		for (int round = 0; round < 3; round++) {
			open_read_close(e, q);
			open_fails(e, q);
			socket_connect_close(e, q);
			nonblocking(e, q);
			with_thread_op(e, q);
			max_ops(e, q);
			ordered(e, q);
			failing_middle(e, q);
			many_in_flight(e, q);
		}
		int after = t_count_fds();
		if (after != before) {
			fprintf(stderr, "%s: %d descriptors before the chains, %d after\n",
				flexsc_engine_name(e), before, after);
			return 1;
		}
		struct flexsc_stats st;
		CHECK_EQ(flexsc_queue_stats(q, &st), 0);
		printf("chain_engines: %-7s identical results, %llu ops via io_uring, no descriptor leaked\n",
		       flexsc_engine_name(e), (unsigned long long)st.by_engine[FLEXSC_ENGINE_URING]);
		t_close(fx, q);
	}
	unlink(file);
	unlink(out);
	unlink(fifo);
	rmdir(dir);
	printf("chain_engines: open/read/close, failed open, socket/connect/close, nonblocking descriptors, "
	       "mixed, %d-op, "
	       "ordered, failing middle, 24 in flight: same on every engine\n", FLEXSC_CHAIN_MAX);
	return 0;
}
