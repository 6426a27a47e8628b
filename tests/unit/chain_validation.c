// SPDX-License-Identifier: MIT
/*
 * flexsc_post_chain's rules, on every engine: FLEXSC_CHAIN_FD without a
 * descriptor-making op 0, or without a last op that closes it, or in op 0
 * itself; 0 or more than FLEXSC_CHAIN_MAX ops; an op that must run locally
 * (gettid); nargs > 6; a NULL ops array: all -EINVAL, and a number that is
 * no system call -ENOSYS. Also -EINVAL:
 *  - FLEXSC_CHAIN_FD past an op's nargs, which the entry would turn into 0:
 *    a closing op declared {SYS_close, 0, {FLEXSC_CHAIN_FD}} would close
 *    descriptor 0 and leak op 0's;
 *  - ops that flexsc_post runs locally by their arguments (a futex
 *    priority-inheritance operation, close_range with CLOSE_RANGE_UNSHARE),
 *    which would run on the chain's executor.
 * A rejected chain takes no entry (stats.posted does not move, the queue's
 * whole capacity is still there), runs nothing and leaks no descriptor:
 * descriptor 0 (a pipe dup'ed onto it) is still that pipe. Valid chains,
 * and close_range without CLOSE_RANGE_UNSHARE, still run afterwards.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/futex.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helpers.h"

#define FD FLEXSC_CHAIN_FD

static char path[64];
static char buf[64];
static uint32_t word;

struct bad {
	const char *why;
	struct flexsc_op ops[FLEXSC_CHAIN_MAX + 1];
	unsigned n;
	int err;
};

#define OPEN { SYS_openat, 4, { (uint64_t)AT_FDCWD, P(path), O_RDONLY, 0 } }

static const struct bad bad[] = {
	{ "FLEXSC_CHAIN_FD after a getpid op 0",
	  { { SYS_getpid, 0, { 0 } }, { SYS_read, 3, { FD, P(buf), 8 } }, { SYS_close, 1, { FD } } }, 3, -EINVAL },
	{ "FLEXSC_CHAIN_FD after a dup op 0 (not openat, open or socket)",
	  { { SYS_dup, 1, { 0 } }, { SYS_read, 3, { FD, P(buf), 8 } }, { SYS_close, 1, { FD } } }, 3, -EINVAL },
	{ "no closing last op",
	  { { SYS_openat, 4, { (uint64_t)AT_FDCWD, P(path), O_RDONLY, 0 } }, { SYS_read, 3, { FD, P(buf), 8 } } }, 2, -EINVAL },
	{ "the last op closes another descriptor",
	  { { SYS_openat, 4, { (uint64_t)AT_FDCWD, P(path), O_RDONLY, 0 } }, { SYS_read, 3, { FD, P(buf), 8 } },
	    { SYS_close, 1, { 0 } } }, 3, -EINVAL },
	{ "the last op is not a close",
	  { { SYS_socket, 3, { AF_INET, SOCK_STREAM, 0 } }, { SYS_shutdown, 2, { FD, SHUT_RDWR } },
	    { SYS_fsync, 1, { FD } } }, 3, -EINVAL },
	{ "FLEXSC_CHAIN_FD in op 0 itself",
	  { { SYS_openat, 4, { FD, P(path), O_RDONLY, 0 } }, { SYS_close, 1, { FD } } }, 2, -EINVAL },
	{ "a LOCAL op (gettid) in the chain",
	  { { SYS_openat, 4, { (uint64_t)AT_FDCWD, P(path), O_RDONLY, 0 } }, { SYS_gettid, 0, { 0 } },
	    { SYS_close, 1, { FD } } }, 3, -EINVAL },
	{ "a LOCAL op (gettid) as op 0, no descriptor",
	  { { SYS_gettid, 0, { 0 } }, { SYS_getpid, 0, { 0 } } }, 2, -EINVAL },
	{ "a LOCAL op (rt_sigprocmask) last",
	  { { SYS_getpid, 0, { 0 } }, { SYS_rt_sigprocmask, 4, { 0, 0, 0, 8 } } }, 2, -EINVAL },
	{ "nargs 7",
	  { { SYS_getpid, 7, { 0 } }, { SYS_getpid, 0, { 0 } } }, 2, -EINVAL },
	{ "zero ops", { { SYS_getpid, 0, { 0 } } }, 0, -EINVAL },
	{ "FLEXSC_CHAIN_MAX + 1 ops",
	  { { SYS_getpid, 0, { 0 } }, { SYS_getpid, 0, { 0 } }, { SYS_getpid, 0, { 0 } }, { SYS_getpid, 0, { 0 } },
	    { SYS_getpid, 0, { 0 } }, { SYS_getpid, 0, { 0 } }, { SYS_getpid, 0, { 0 } }, { SYS_getpid, 0, { 0 } },
	    { SYS_getpid, 0, { 0 } } }, FLEXSC_CHAIN_MAX + 1, -EINVAL },
	{ "a number that is no system call",
	  { { SYS_getpid, 0, { 0 } }, { 400, 0, { 0 } } }, 2, -ENOSYS },
	{ "closing op with nargs 0", { OPEN, { SYS_close, 0, { FD } } }, 2, -EINVAL },
	{ "closing op with nargs 0 after a read",
	  { OPEN, { SYS_read, 3, { FD, P(buf), 8 } }, { SYS_close, 0, { FD } } }, 3, -EINVAL },
	{ "FLEXSC_CHAIN_FD past a read's nargs",
	  { OPEN, { SYS_read, 3, { FD, P(buf), 8, FD } }, { SYS_close, 1, { FD } } }, 3, -EINVAL },
	{ "FLEXSC_CHAIN_FD only past nargs, no descriptor-making op 0",
	  { { SYS_getpid, 0, { 0 } }, { SYS_close, 0, { FD } } }, 2, -EINVAL },
	{ "futex FUTEX_LOCK_PI",
	  { { SYS_getpid, 0, { 0 } }, { SYS_futex, 6, { P(&word), FUTEX_LOCK_PI_PRIVATE, 0, 0, 0, 0 } } }, 2,
	  -EINVAL },
	{ "futex FUTEX_UNLOCK_PI as op 0",
	  { { SYS_futex, 6, { P(&word), FUTEX_UNLOCK_PI, 0, 0, 0, 0 } }, { SYS_getpid, 0, { 0 } } }, 2, -EINVAL },
	{ "close_range with CLOSE_RANGE_UNSHARE",
	  { { SYS_getpid, 0, { 0 } }, { SYS_close_range, 3, { ~0u, ~0u, CLOSE_RANGE_UNSHARE } } }, 2, -EINVAL },
};

int main(void)
{
	unsigned checked = 0;
	struct stat st0, st;
	int p[2];

	snprintf(path, sizeof(path), "/tmp/flexsc-chainv-XXXXXX");
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
		struct flexsc_config cfg;

		flexsc_config_init(&cfg);
		cfg.pages_per_queue = 1; /* 64 entries: a leaked entry would show */
		t_open(t_engines[e], &fx, &q, &cfg);
		int fds = t_count_fds();
		uint64_t p0 = t_stats(q).posted;

		for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			flexsc_call_t calls[FLEXSC_CHAIN_MAX + 1];
			memset(calls, 0, sizeof(calls));
			int r = flexsc_post_chain(q, bad[i].ops, bad[i].n, calls);
			if (r != bad[i].err) {
				fprintf(stderr, "%s: %s: flexsc_post_chain returned %d, expected %d\n",
					flexsc_engine_name(t_engines[e]), bad[i].why, r, bad[i].err);
				return 1;
			}
			CHECK_EQ(calls[0], 0); /* nothing handed out */
			checked++;
		}
		CHECK_EQ(flexsc_post_chain(q, NULL, 2, NULL), -EINVAL);
		CHECK_EQ(flexsc_post_chain(NULL, bad[0].ops, 3, NULL), -EINVAL);
		CHECK_EQ(t_stats(q).posted, p0);
		CHECK_EQ(flexsc_wait(q, NULL), -ECHILD); /* nothing in flight */

		/* the queue's 64 entries are all free: 8 chains of 8 ops fill it exactly */
		flexsc_call_t calls[8][FLEXSC_CHAIN_MAX];
		struct flexsc_op ops[FLEXSC_CHAIN_MAX];
		ops[0] = (struct flexsc_op){ SYS_openat, 4, { (uint64_t)AT_FDCWD, P(path), O_RDONLY, 0 } };
		for (int k = 1; k < FLEXSC_CHAIN_MAX - 1; k++)
			ops[k] = (struct flexsc_op){ SYS_pread64, 4, { FD, P(buf + 8 * k), 1, (uint64_t)k } };
		ops[FLEXSC_CHAIN_MAX - 1] = (struct flexsc_op){ SYS_close, 1, { FD } };
		for (int c = 0; c < 8; c++)
			CHECK_EQ(flexsc_post_chain(q, ops, FLEXSC_CHAIN_MAX, calls[c]), 0);
		CHECK_EQ(flexsc_post_chain(q, ops, FLEXSC_CHAIN_MAX, NULL), -EAGAIN);
		for (int c = 0; c < 8; c++) {
			int64_t r[FLEXSC_CHAIN_MAX];
			CHECK_EQ(flexsc_wait_all(q, calls[c], FLEXSC_CHAIN_MAX, r, NULL), 0);
			CHECK_EQ(r[0], 0);
			for (int k = 1; k < FLEXSC_CHAIN_MAX - 1; k++) {
				CHECK_EQ(r[k], 1);
				CHECK_EQ(buf[8 * k], '1' + k);
			}
			CHECK_EQ(r[FLEXSC_CHAIN_MAX - 1], 0);
		}

		/* close_range without CLOSE_RANGE_UNSHARE is an ordinary call */
		struct flexsc_op cr[2] = { { SYS_getpid, 0, { 0 } },
					   { SYS_close_range, 3, { 100000, 100001, 0 } } };
		int64_t rc[2];
		CHECK_EQ(flexsc_post_chain(q, cr, 2, calls[0]), 0);
		CHECK_EQ(flexsc_wait_all(q, calls[0], 2, rc, NULL), 0);
		CHECK_EQ(rc[0], getpid());
		CHECK_EQ(rc[1], 0);

		CHECK_EQ(t_count_fds(), fds);
		CHECK_EQ(fstat(0, &st), 0);
		CHECK(st.st_dev == st0.st_dev && st.st_ino == st0.st_ino);
		t_close(fx, q);
	}
	/* descriptor 0 is still the read end of the pipe */
	CHECK_EQ(write(p[1], "x", 1), 1);
	CHECK_EQ(read(0, buf, 1), 1);
	CHECK_EQ(buf[0], 'x');
	unlink(path);
	printf("chain_validation: %u rejected chains (%zu rules x %zu engines) took no entry and ran nothing; "
	       "a full queue of valid chains still ran; no descriptor leaked\n",
	       checked, sizeof(bad) / sizeof(bad[0]), T_NENGINES);
	return 0;
}
