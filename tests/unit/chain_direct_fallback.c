// SPDX-License-Identifier: MIT
/*
 * A chain that passes op 0's descriptor on needs the ring's table of direct
 * descriptors. io_uring refuses to register a table larger than
 * RLIMIT_NOFILE, so a queue created under a low hard limit (in a child)
 * has a ring without one: such a chain must then take the fallback route
 * (synchronous with the uring engine, syscall threads with auto) and run
 * correctly, while chains that pass no descriptor still go through
 * io_uring. With the usual limit the same chain goes through io_uring.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define FD FLEXSC_CHAIN_FD

static char path[64];

/* openat, read, close: op 0 reports 0 and the read gets the file. */
static void run_fd_chain(struct flexsc_queue *q)
{
	char buf[16] = { 0 };
	struct flexsc_op ops[3] = {
		{ SYS_openat, 4, { (uint64_t)AT_FDCWD, P(path), O_RDONLY, 0 } },
		{ SYS_read, 3, { FD, P(buf), 8 } },
		{ SYS_close, 1, { FD } },
	};
	flexsc_call_t calls[3];
	int64_t r[3];

	CHECK_EQ(flexsc_post_chain(q, ops, 3, calls), 0);
	CHECK_EQ(flexsc_wait_all(q, calls, 3, r, NULL), 0);
	CHECK_EQ(r[0], 0);
	CHECK_EQ(r[1], 8);
	CHECK(!memcmp(buf, "12345678", 8));
	CHECK_EQ(r[2], 0);
}

/* Two writes to a pipe: io_uring can run this chain without a direct table. */
static void run_plain_chain(struct flexsc_queue *q)
{
	char buf[4];
	int p[2];

	CHECK_EQ(pipe(p), 0);
	struct flexsc_op ops[2] = {
		{ SYS_write, 3, { (uint64_t)p[1], P("a"), 1 } },
		{ SYS_write, 3, { (uint64_t)p[1], P("b"), 1 } },
	};
	flexsc_call_t calls[2];
	int64_t r[2];

	CHECK_EQ(flexsc_post_chain(q, ops, 2, calls), 0);
	CHECK_EQ(flexsc_wait_all(q, calls, 2, r, NULL), 0);
	CHECK_EQ(r[0], 1);
	CHECK_EQ(r[1], 1);
	CHECK_EQ(read(p[0], buf, sizeof(buf)), 2);
	CHECK(!memcmp(buf, "ab", 2));
	close(p[0]);
	close(p[1]);
}

/*
 * In a child, whose hard limit cannot be raised again: liburing raises the
 * soft limit itself when the table does not fit under it.
 */
static void low_limit(enum flexsc_engine engine, enum flexsc_engine fallback)
{
	struct rlimit low = { 64, 64 };
	struct flexsc_queue *q;
	struct flexsc *fx;
	int status;

	fflush(stdout); /* or the child prints it again */
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		CHECK_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
		t_open(engine, &fx, &q, NULL);
		CHECK_EQ(flexsc_engine_in_use(fx), engine);
		uint64_t u = t_by_engine(q, FLEXSC_ENGINE_URING), f = t_by_engine(q, fallback);
		run_fd_chain(q);
		CHECK_EQ(t_by_engine(q, FLEXSC_ENGINE_URING), u);
		CHECK_EQ(t_by_engine(q, fallback), f + 3);
		/* chains that pass no descriptor still go through the ring */
		run_plain_chain(q);
		CHECK_EQ(t_by_engine(q, FLEXSC_ENGINE_URING), u + 2);
		t_close(fx, q);
		exit(0);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
	static const enum flexsc_engine engines[] = { FLEXSC_ENGINE_URING, FLEXSC_ENGINE_AUTO };

	snprintf(path, sizeof(path), "/tmp/flexsc-chaindirect-XXXXXX");
	int tfd = mkstemp(path);
	CHECK(tfd >= 0);
	CHECK_EQ(write(tfd, "12345678", 8), 8);
	close(tfd);

	for (unsigned e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		struct flexsc_queue *q;
		struct flexsc *fx;

		t_open(engines[e], &fx, &q, NULL); /* 512 entries, so 512 direct slots */
		if (flexsc_engine_in_use(fx) != engines[e]) {
			t_close(fx, q);
			unlink(path);
			SKIP("io_uring is unavailable");
		}
		enum flexsc_engine fallback = engines[e] == FLEXSC_ENGINE_AUTO ? FLEXSC_ENGINE_THREADS
									    : FLEXSC_ENGINE_SYNC;

		/* the usual limit: the table is there and the chain uses io_uring */
		uint64_t u = t_by_engine(q, FLEXSC_ENGINE_URING);
		run_fd_chain(q);
		CHECK_EQ(t_by_engine(q, FLEXSC_ENGINE_URING), u + 3);
		t_close(fx, q);

		/* a hard limit below the entries: the ring has no table */
		low_limit(engines[e], fallback);
		printf("%s: a descriptor-passing chain used io_uring with a direct table and %s without\n",
		       flexsc_engine_name(engines[e]), flexsc_engine_name(fallback));
	}
	unlink(path);
	return 0;
}
