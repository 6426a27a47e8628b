// SPDX-License-Identifier: MIT
/*
 * Ordering a batch by call type and issuing I/O first (src/batch/order.h).
 *
 * Each call gets a 10-bit key: bit 9 is set for a call that does no I/O
 * when FLEXSC_ORDER_IO_FIRST is on, bits 0-8 are its system call number
 * (x86-64 numbers are below 512) when FLEXSC_ORDER_BY_TYPE is on. A least
 * significant digit radix sort on 5-bit digits orders the batch by key in
 * one or two passes of O(n + 32), stable, so calls with the same key keep
 * the order they were posted in. A batch of thousands (a carrier with
 * thousands of blocked threads) costs no more per call than one of eight.
 */
#include <asm/unistd.h>

#include "batch/order.h"

bool fx_does_io(long nr)
{
	switch (nr) {
	case __NR_read: case __NR_write: case __NR_pread64: case __NR_pwrite64:
	case __NR_readv: case __NR_writev: case __NR_preadv: case __NR_pwritev:
	case __NR_preadv2: case __NR_pwritev2:
	case __NR_sendto: case __NR_recvfrom: case __NR_sendmsg: case __NR_recvmsg:
	case __NR_sendmmsg: case __NR_recvmmsg:
	case __NR_accept: case __NR_accept4: case __NR_connect:
	case __NR_sendfile: case __NR_splice: case __NR_tee: case __NR_vmsplice:
	case __NR_copy_file_range: case __NR_readahead:
	case __NR_fsync: case __NR_fdatasync: case __NR_sync_file_range: case __NR_syncfs:
		return true;
	default:
		return false;
	}
}

#define DIGIT_BITS 5
#define DIGITS (1u << DIGIT_BITS)
#define KEY_NOT_IO (1u << 9)

static uint32_t key_of(const struct flexsc_entry *e, unsigned flags)
{
	uint32_t k = flags & FLEXSC_ORDER_BY_TYPE ? e->sysnum & (KEY_NOT_IO - 1) : 0;

	if ((flags & FLEXSC_ORDER_IO_FIRST) && !fx_does_io(e->sysnum))
		k |= KEY_NOT_IO;
	return k;
}

/* One stable counting pass over the digit at shift of each (key << 16 | index). */
static void digit_pass(const uint32_t *in, uint32_t *out, unsigned n, unsigned shift)
{
	unsigned start[DIGITS] = { 0 };

	for (unsigned i = 0; i < n; i++)
		start[(in[i] >> (16 + shift)) & (DIGITS - 1)]++;
	for (unsigned d = 0, sum = 0; d < DIGITS; d++) {
		unsigned c = start[d];
		start[d] = sum;
		sum += c;
	}
	for (unsigned i = 0; i < n; i++)
		out[start[(in[i] >> (16 + shift)) & (DIGITS - 1)]++] = in[i];
}

void fx_order_batch(uint16_t *calls, unsigned n, const struct flexsc_entry *entries,
		    unsigned flags, uint32_t *scratch)
{
	uint32_t *a = scratch, *b = scratch + n;
	bool sorted = true;

	if (n < 2 || !(flags & FX_ORDER_FLAGS))
		return;
	for (unsigned i = 0; i < n; i++) {
		a[i] = key_of(&entries[calls[i]], flags) << 16 | calls[i];
		sorted = sorted && (i == 0 || a[i] >> 16 >= a[i - 1] >> 16);
	}
	if (sorted)
		return; /* the common case of a batch of one kind: nothing moves */
	/* Bits 0-4 hold only type, bits 5-9 type and the I/O bit. */
	for (unsigned shift = flags & FLEXSC_ORDER_BY_TYPE ? 0 : DIGIT_BITS; shift < 10;
	     shift += DIGIT_BITS) {
		digit_pass(a, b, n, shift);
		uint32_t *t = a;
		a = b;
		b = t;
	}
	for (unsigned i = 0; i < n; i++)
		calls[i] = (uint16_t)a[i];
}
