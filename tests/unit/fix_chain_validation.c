// SPDX-License-Identifier: MIT
/*
 * flexsc_post_chain rejects, on every engine, what used to slip through:
 *  - FLEXSC_CHAIN_FD past an op's nargs, which the entry turned into 0: a
 *    closing op declared {SYS_close, 0, {FLEXSC_CHAIN_FD}} closed
 *    descriptor 0 and leaked op 0's;
 *  - ops that flexsc_post runs locally by their arguments (a futex
 *    priority-inheritance operation, close_range with CLOSE_RANGE_UNSHARE),
 *    which would have run on the chain's executor.
 * Each is -EINVAL, takes no entry and runs nothing: descriptor 0 (a pipe
 * dup'ed onto it) is still that pipe and no descriptor leaks. A valid
 * chain, and close_range without CLOSE_RANGE_UNSHARE, still run.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/futex.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helpers.h"

#define FD FLEXSC_CHAIN_FD

static char path[64];
static char buf[16];
static uint32_t word;

static uint64_t posted(struct flexsc_queue *q)
{
	struct flexsc_stats st;

	CHECK_EQ(flexsc_queue_stats(q, &st), 0);
	return st.posted;
}

struct bad {
	const char *why;
	struct flexsc_op ops[3];
	unsigned n;
};

#define OPEN { SYS_openat, 4, { (uint64_t)AT_FDCWD, P(path), O_RDONLY, 0 } }

static const struct bad bad[] = {
	{ "closing op with nargs 0", { OPEN, { SYS_close, 0, { FD } } }, 2 },
	{ "closing op with nargs 0 after a read",
	  { OPEN, { SYS_read, 3, { FD, P(buf), 8 } }, { SYS_close, 0, { FD } } }, 3 },
	{ "FLEXSC_CHAIN_FD past a read's nargs",
	  { OPEN, { SYS_read, 3, { FD, P(buf), 8, FD } }, { SYS_close, 1, { FD } } }, 3 },
	{ "FLEXSC_CHAIN_FD only past nargs, no descriptor-making op 0",
	  { { SYS_getpid, 0, { 0 } }, { SYS_close, 0, { FD } } }, 2 },
	{ "futex FUTEX_LOCK_PI",
	  { { SYS_getpid, 0, { 0 } }, { SYS_futex, 6, { P(&word), FUTEX_LOCK_PI_PRIVATE, 0, 0, 0, 0 } } }, 2 },
	{ "futex FUTEX_UNLOCK_PI as op 0",
	  { { SYS_futex, 6, { P(&word), FUTEX_UNLOCK_PI, 0, 0, 0, 0 } }, { SYS_getpid, 0, { 0 } } }, 2 },
	{ "close_range with CLOSE_RANGE_UNSHARE",
	  { { SYS_getpid, 0, { 0 } }, { SYS_close_range, 3, { ~0u, ~0u, CLOSE_RANGE_UNSHARE } } }, 2 },
};

int main(void)
{
	struct stat st0, st;
	int p[2];

	snprintf(path, sizeof(path), "/tmp/flexsc-fixchain-XXXXXX");
	int tfd = mkstemp(path);
	CHECK(tfd >= 0);
	CHECK_EQ(write(tfd, "12345678", 8), 8);
	close(tfd);

	/* descriptor 0 is a pipe of ours: a stray close(0) would show */
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(dup2(p[0], 0), 0);
	CHECK_EQ(fstat(0, &st0), 0);

	for (unsigned e = 0; e < T_NENGINES; e++) {
		struct flexsc *fx;
		struct flexsc_queue *q;

		t_open(t_engines[e], &fx, &q, NULL);
		const char *eng = flexsc_engine_name(t_engines[e]);
		int fds = t_count_fds();
		uint64_t p0 = posted(q);

		for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			flexsc_call_t calls[3] = { 0 };
			int r = flexsc_post_chain(q, bad[i].ops, bad[i].n, calls);

			if (r != -EINVAL) {
				fprintf(stderr, "%s: %s: flexsc_post_chain returned %d, expected -EINVAL\n",
					eng, bad[i].why, r);
				return 1;
			}
			CHECK_EQ(calls[0], 0);
		}
		CHECK_EQ(posted(q), p0);
		CHECK_EQ(flexsc_wait(q, NULL), -ECHILD); /* nothing ran */
		CHECK_EQ(t_count_fds(), fds);

		/* the same shapes, written correctly, run */
		struct flexsc_op ok[3] = { OPEN, { SYS_read, 3, { FD, P(buf), 8 } }, { SYS_close, 1, { FD } } };
		flexsc_call_t calls[3];
		int64_t r[3];
		memset(buf, 0, sizeof(buf));
		CHECK_EQ(flexsc_post_chain(q, ok, 3, calls), 0);
		CHECK_EQ(flexsc_wait_all(q, calls, 3, r, NULL), 0);
		CHECK_EQ(r[0], 0);
		CHECK_EQ(r[1], 8);
		CHECK(!memcmp(buf, "12345678", 8));
		CHECK_EQ(r[2], 0);

		/* close_range without CLOSE_RANGE_UNSHARE is an ordinary call */
		struct flexsc_op cr[2] = { { SYS_getpid, 0, { 0 } },
					   { SYS_close_range, 3, { 100000, 100001, 0 } } };
		CHECK_EQ(flexsc_post_chain(q, cr, 2, calls), 0);
		CHECK_EQ(flexsc_wait_all(q, calls, 2, r, NULL), 0);
		CHECK_EQ(r[0], getpid());
		CHECK_EQ(r[1], 0);

		CHECK_EQ(t_count_fds(), fds);
		CHECK_EQ(fstat(0, &st), 0);
		CHECK(st.st_dev == st0.st_dev && st.st_ino == st0.st_ino);
		t_close(fx, q);
		printf("%s: %zu bad chains rejected, descriptor 0 untouched, nothing leaked\n",
		       eng, sizeof(bad) / sizeof(bad[0]));
	}
	/* descriptor 0 is still the read end of the pipe */
	CHECK_EQ(write(p[1], "x", 1), 1);
	CHECK_EQ(read(0, buf, 1), 1);
	CHECK_EQ(buf[0], 'x');
	unlink(path);
	return 0;
}
