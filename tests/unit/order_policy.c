// SPDX-License-Identifier: MIT
/*
 * Ordering a flushed batch (src/batch/order.c, FLEXSC_ORDER_*):
 *   1. the pure function on synthetic batches: no flag leaves the batch as
 *      posted; by type makes each number's calls consecutive, by number,
 *      in posted order; I/O first puts the I/O calls first, each part in
 *      posted order; both together; random batches of up to 4,096 calls
 *      against a reference insertion sort (same permutation, stable);
 *   2. through the API on the sync engine, where the order is observable:
 *      writev and lseek(SEEK_CUR) on one file, posted in both orders, give
 *      the offsets each policy implies; a chain stays whole and in order;
 *   3. every engine with both flags runs a mixed batch of independent
 *      calls to the right results.
 * The function is included (white box); the API is the shared library's.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "helpers.h"
#include "batch/order.c"

#define BIG 4096

static struct flexsc_entry entries[BIG];
static uint32_t scratch[2 * BIG];

/* Orders the batch nrs[0..n) (entry i has system call nrs[i]) and returns the order in out. */
static void order(const long *nrs, unsigned n, unsigned flags, uint16_t *out)
{
	for (unsigned i = 0; i < n; i++) {
		entries[i].sysnum = (uint16_t)nrs[i];
		out[i] = (uint16_t)i;
	}
	fx_order_batch(out, n, entries, flags, scratch);
}

static void expect(const long *nrs, unsigned n, unsigned flags, const uint16_t *want)
{
	uint16_t got[16];

	order(nrs, n, flags, got);
	for (unsigned i = 0; i < n; i++)
		CHECK_EQ(got[i], want[i]);
}

/* The reference: key as order.c defines it, stable insertion sort. */
static unsigned ref_key(long nr, unsigned flags)
{
	return ((flags & FLEXSC_ORDER_IO_FIRST) && !fx_does_io(nr) ? 1000u : 0u) +
	       (flags & FLEXSC_ORDER_BY_TYPE ? (unsigned)nr : 0u);
}

static void random_batches(void)
{
	static uint16_t got[BIG], want[BIG];
	static long nrs[BIG];
	const unsigned sizes[] = { 2, 3, 31, 32, 33, 500, BIG };
	unsigned seed = 12345;

	for (unsigned f = 1; f <= 3; f++) {
		unsigned flags = (f & 1 ? FLEXSC_ORDER_BY_TYPE : 0) | (f & 2 ? FLEXSC_ORDER_IO_FIRST : 0);
		for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			unsigned n = sizes[s];
			for (unsigned i = 0; i < n; i++) {
				seed = seed * 1103515245u + 12345u;
				/* few types (real batches) or any number below 512 */
				nrs[i] = s % 2 ? (long)((seed >> 8) % 512) : (long)((seed >> 8) % 6);
				want[i] = (uint16_t)i;
			}
			for (unsigned i = 1; i < n; i++) {
				uint16_t v = want[i];
				unsigned j = i;
				for (; j > 0 && ref_key(nrs[want[j - 1]], flags) > ref_key(nrs[v], flags); j--)
					want[j] = want[j - 1];
				want[j] = v;
			}
			order(nrs, n, flags, got);
			for (unsigned i = 0; i < n; i++)
				CHECK_EQ(got[i], want[i]);
		}
	}
}

static void pure(void)
{
	/* read 0 (I/O), write 1 (I/O), lseek 8, getpid 39, fadvise64 221, sendto 44 (I/O) */
	const long mixed[] = { 39, 1, 8, 0, 39, 44, 221, 1 };
	const unsigned n = sizeof(mixed) / sizeof(mixed[0]);

	expect(mixed, n, 0, (const uint16_t[]){ 0, 1, 2, 3, 4, 5, 6, 7 });
	expect(mixed, n, FLEXSC_QUIET, (const uint16_t[]){ 0, 1, 2, 3, 4, 5, 6, 7 });
	expect(mixed, n, FLEXSC_ORDER_BY_TYPE, (const uint16_t[]){ 3, 1, 7, 2, 0, 4, 5, 6 });
	expect(mixed, n, FLEXSC_ORDER_IO_FIRST, (const uint16_t[]){ 1, 3, 5, 7, 0, 2, 4, 6 });
	expect(mixed, n, FLEXSC_ORDER_BY_TYPE | FLEXSC_ORDER_IO_FIRST,
	       (const uint16_t[]){ 3, 1, 7, 5, 2, 0, 4, 6 });
	/* already in order, and one call */
	expect((const long[]){ 0, 1, 1, 8 }, 4, FLEXSC_ORDER_BY_TYPE, (const uint16_t[]){ 0, 1, 2, 3 });
	expect((const long[]){ 8 }, 1, FX_ORDER_FLAGS, (const uint16_t[]){ 0 });
	/* the classification: data moved or a device waited for, not readiness or metadata */
	CHECK(fx_does_io(__NR_pread64) && fx_does_io(__NR_recvmsg) && fx_does_io(__NR_fsync) &&
	      fx_does_io(__NR_accept4) && fx_does_io(__NR_splice));
	CHECK(!fx_does_io(__NR_poll) && !fx_does_io(__NR_openat) && !fx_does_io(__NR_close) &&
	      !fx_does_io(__NR_statx) && !fx_does_io(__NR_epoll_wait) && !fx_does_io(-1));
	random_batches();
}

static int scratch_file(void)
{
	char path[] = "/tmp/flexsc-order-XXXXXX";
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	unlink(path);
	return fd;
}

/* An instance and a queue on engine e whose flushes order by flags. */
static void open_ordered(enum flexsc_engine e, unsigned flags, struct flexsc **fx,
			 struct flexsc_queue **q)
{
	struct flexsc_config c;

	flexsc_config_init(&c);
	c.flags = flags;
	c.batch_threshold = 64; /* every batch here is flushed whole, by its wait */
	t_open(e, fx, q, &c);
}

/*
 * Posts writev(fd, 1 byte) and lseek(fd, 0, SEEK_CUR) in the given order
 * on a sync-engine queue with flags and returns what lseek saw: 1 if the
 * writev ran first, 0 if not.
 */
static long lseek_after(unsigned flags, bool writev_first)
{
	struct flexsc *fx;
	struct flexsc_queue *q;
	static char byte = 'x';
	struct iovec iov = { &byte, 1 };
	int fd = scratch_file();
	uint64_t wv[3] = { (uint64_t)fd, (uint64_t)(uintptr_t)&iov, 1 };
	uint64_t ls[3] = { (uint64_t)fd, 0, SEEK_CUR };
	flexsc_call_t calls[2];
	int64_t rets[2];

	open_ordered(FLEXSC_ENGINE_SYNC, flags, &fx, &q);
	CHECK_EQ(flexsc_post(q, writev_first ? SYS_writev : SYS_lseek, 3, writev_first ? wv : ls, 0, &calls[0]), 0);
	CHECK_EQ(flexsc_post(q, writev_first ? SYS_lseek : SYS_writev, 3, writev_first ? ls : wv, 0, &calls[1]), 0);
	CHECK_EQ(flexsc_wait_all(q, calls, 2, rets, NULL), 0);
	t_close(fx, q);
	close(fd);
	CHECK_EQ(rets[writev_first ? 0 : 1], 1);
	return rets[writev_first ? 1 : 0];
}

/* A chain [writev, lseek] posted after an lseek, both orders on: the chain runs whole, in order. */
static void chain_whole(void)
{
	struct flexsc *fx;
	struct flexsc_queue *q;
	static char byte = 'y';
	struct iovec iov = { &byte, 1 };
	int fd = scratch_file();
	uint64_t ls[3] = { (uint64_t)fd, 0, SEEK_CUR };
	struct flexsc_op ops[2] = {
		{ SYS_writev, 3, { (uint64_t)fd, (uint64_t)(uintptr_t)&iov, 1 } },
		{ SYS_lseek, 3, { (uint64_t)fd, 0, SEEK_CUR } },
	};
	flexsc_call_t calls[3];
	int64_t rets[3];

	open_ordered(FLEXSC_ENGINE_SYNC, FX_ORDER_FLAGS, &fx, &q);
	CHECK_EQ(flexsc_post(q, SYS_lseek, 3, ls, 0, &calls[0]), 0);
	CHECK_EQ(flexsc_post_chain(q, ops, 2, &calls[1]), 0);
	CHECK_EQ(flexsc_wait_all(q, calls, 3, rets, NULL), 0);
	CHECK_EQ(rets[1], 1); /* writev */
	CHECK_EQ(rets[2], 1); /* the chain's lseek, right after its writev */
	CHECK_EQ(rets[0], 1); /* I/O first: the chain (headed by writev) ran before the lone lseek */
	t_close(fx, q);
	close(fd);
}

static void observable(void)
{
	const unsigned type = FLEXSC_ORDER_BY_TYPE, io = FLEXSC_ORDER_IO_FIRST;

	/* posted order: what the sync engine documents without flags */
	CHECK_EQ(lseek_after(0, true), 1);
	CHECK_EQ(lseek_after(0, false), 0);
	/* by type: lseek (8) before writev (20) */
	CHECK_EQ(lseek_after(type, true), 0);
	CHECK_EQ(lseek_after(type, false), 0);
	/* I/O first: writev before lseek */
	CHECK_EQ(lseek_after(io, true), 1);
	CHECK_EQ(lseek_after(io, false), 1);
	CHECK_EQ(lseek_after(type | io, false), 1);
	chain_whole();
}

/* Independent calls of five kinds, interleaved, on every engine with both flags. */
static void every_engine(void)
{
	enum { N = 40 };
	static char buf[N][16], zeros[N];
	int fd = scratch_file(), devnull = open("/dev/null", O_WRONLY);

	CHECK(devnull >= 0);
	CHECK_EQ(pwrite(fd, "0123456789abcdef", 16, 0), 16);
	for (unsigned e = 0; e < T_NENGINES; e++) {
		struct flexsc *fx;
		struct flexsc_queue *q;
		flexsc_call_t calls[N];
		int64_t rets[N], want[N];

		open_ordered(t_engines[e], FX_ORDER_FLAGS, &fx, &q);
		for (unsigned i = 0; i < N; i++) {
			uint64_t a[4] = { 0 };
			long nr;
			switch (i % 5) {
			case 0: nr = SYS_pread64; a[0] = (uint64_t)fd; a[1] = (uint64_t)(uintptr_t)buf[i];
				a[2] = 16; a[3] = i % 16; want[i] = 16 - i % 16; break;
			case 1: nr = SYS_write; a[0] = (uint64_t)devnull; a[1] = (uint64_t)(uintptr_t)zeros;
				a[2] = i; want[i] = i; break;
			case 2: nr = SYS_getppid; want[i] = getppid(); break;
			case 3: nr = SYS_lseek; a[0] = (uint64_t)fd; a[1] = i; a[2] = SEEK_SET; want[i] = i; break;
			default: nr = SYS_fadvise64; a[0] = (uint64_t)fd; a[3] = POSIX_FADV_NORMAL; want[i] = 0;
			}
			CHECK_EQ(flexsc_post(q, nr, 4, a, 0, &calls[i]), 0);
		}
		CHECK_EQ(flexsc_wait_all(q, calls, N, rets, NULL), 0);
		for (unsigned i = 0; i < N; i++) {
			CHECK_EQ(rets[i], want[i]);
			if (i % 5 == 0)
				CHECK(!memcmp(buf[i], "0123456789abcdef" + i % 16, 16 - i % 16));
		}
		t_close(fx, q);
	}
	close(fd);
	close(devnull);
}

int main(void)
{
	pure();
	observable();
	every_engine();
	printf("order_policy: pure ordering, observable on sync, every engine: ok\n");
	return 0;
}
