/* SPDX-License-Identifier: MIT */
/*
 * The order in which a flush hands its batch to the engines: the paper's
 * future work (section 7: "syscall threads could sort the requests to
 * consecutively execute requests of the same type ... system calls that
 * perform I/O could be prioritized so as to issue them as early as
 * possible"). The batch's order is the order of the io_uring submission
 * entries, of the syscall threads' queue and of the calls run on the
 * owner; posted calls are not ordered with respect to each other, so
 * reordering them is allowed. See src/batch/order.c.
 */
#ifndef FX_ORDER_H
#define FX_ORDER_H

#include <stdbool.h>
#include <stdint.h>

#include <flexsc/flexsc.h>

#define FX_ORDER_FLAGS (FLEXSC_ORDER_BY_TYPE | FLEXSC_ORDER_IO_FIRST)

/* Whether system call nr moves data to or from a file, socket, pipe or device, or waits for a device. */
bool fx_does_io(long nr);

/*
 * Reorders the n entry indices in calls (stably) by flags: FLEXSC_ORDER_IO_FIRST
 * puts the calls that do I/O before the rest, FLEXSC_ORDER_BY_TYPE makes the
 * calls of one system call number consecutive, ordered by number, within
 * each part. scratch holds 2 * n values; n is at most 65,536.
 */
void fx_order_batch(uint16_t *calls, unsigned n, const struct flexsc_entry *entries,
		    unsigned flags, uint32_t *scratch);

#endif
