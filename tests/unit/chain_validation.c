// SPDX-License-Identifier: MIT
/*
 * flexsc_post_chain's rules, on every engine: FLEXSC_CHAIN_FD without a
 * descriptor-making op 0, or without a last op that closes it, or in op 0
 * itself; 0 or more than FLEXSC_CHAIN_MAX ops; an op that must run locally
 * (gettid); nargs > 6; a NULL ops array: all -EINVAL, and a number that is
 * no system call -ENOSYS. A rejected chain takes no entry (stats.posted
 * does not move, the queue's whole capacity is still there), runs nothing
 * and leaks no descriptor; valid chains still run afterwards.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helpers.h"

#define FD FLEXSC_CHAIN_FD

static uint64_t posted(struct flexsc_queue *q)
{
	struct flexsc_stats st;
	CHECK_EQ(flexsc_queue_stats(q, &st), 0);
	return st.posted;
}

static char path[64];
static char buf[64];

struct bad {
	const char *why;
	struct flexsc_op ops[FLEXSC_CHAIN_MAX + 1];
	unsigned n;
	int err;
};

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
};

int main(void)
{
	unsigned checked = 0;

	snprintf(path, sizeof(path), "/tmp/flexsc-chainv-XXXXXX");
	int tfd = mkstemp(path);
	CHECK(tfd >= 0);
	CHECK_EQ(write(tfd, "12345678", 8), 8);
	close(tfd);

	for (unsigned e = 0; e < T_NENGINES; e++) {
		struct flexsc *fx;
		struct flexsc_queue *q;
		struct flexsc_config cfg;

		flexsc_config_init(&cfg);
		cfg.pages_per_queue = 1; /* 64 entries: a leaked entry would show */
		t_open(t_engines[e], &fx, &q, &cfg);
		int fds = t_count_fds();
		uint64_t p0 = posted(q);

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
		CHECK_EQ(posted(q), p0);
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
		CHECK_EQ(t_count_fds(), fds);
		t_close(fx, q);
	}
	unlink(path);
	printf("chain_validation: %u rejected chains (%zu rules x %zu engines) took no entry and ran nothing; "
	       "a full queue of valid chains still ran; no descriptor leaked\n",
	       checked, sizeof(bad) / sizeof(bad[0]), T_NENGINES);
	return 0;
}
