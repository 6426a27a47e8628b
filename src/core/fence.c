/* SPDX-License-Identifier: MIT */
/*
 * Asymmetric fences (fence.h). Going from ASYM to FULL while other
 * threads run both sides:
 *
 *  - a light side that read ASYM made its store before the mode was
 *    STOPPING; the membarrier that follows that store in
 *    fx_fence_stop_asym makes every running thread, that one included,
 *    execute a full barrier (a thread not running has been switched out,
 *    which is one), so the store is visible to all before the mode is
 *    FULL. A light side that reads STOPPING or FULL fences itself.
 *  - a heavy side that reads ASYM or STOPPING calls membarrier; a stop
 *    returns once no heavy side or other stop may still do so (each
 *    counts itself in heavy_busy, then reads the mode; the mode is FULL
 *    before a stop reads the count: seq_cst on both sides, one of the
 *    two sees the other). A heavy side that reads FULL fences: the light
 *    side fences too.
 */
#define _GNU_SOURCE
#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>

#include "core/fence.h"
#include "core/internal.h"

_Atomic int fx_fence_mode = FX_FENCE_FULL;

static _Atomic int heavy_busy; /* heavy fences and stops between their count and their membarrier's end */

bool fx_fence_heavy(void)
{
	bool sure = true;

	atomic_fetch_add(&heavy_busy, 1);
	if (atomic_load(&fx_fence_mode) != FX_FENCE_FULL &&
	    fx_raw_syscall6(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0, 0, 0, 0) != 0) {
		/*
		 * Refused (registered at start, so only a filter the runtime did
		 * not see refuses it): full fences from now on. This time a light
		 * side that read ASYM may not have fenced: the caller cannot be
		 * sure and acts as if the other side had seen nothing.
		 */
		int expect = FX_FENCE_ASYM;
		atomic_compare_exchange_strong(&fx_fence_mode, &expect, FX_FENCE_FULL);
		sure = false;
	}
	atomic_fetch_sub(&heavy_busy, 1);
	atomic_thread_fence(memory_order_seq_cst); /* in FULL mode, the fence itself */
	return sure;
}

int fx_fence_start(int filtered)
{
	int mode = FX_FENCE_FULL;

	atomic_store(&heavy_busy, 0); /* a fork's child: the parent's threads that counted are gone */
	if (!filtered) {
		long cmds = fx_raw_syscall6(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0, 0, 0, 0);
		if (cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
		    fx_raw_syscall6(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0, 0, 0, 0) == 0)
			mode = FX_FENCE_ASYM;
	}
	atomic_store(&fx_fence_mode, mode);
	return mode;
}

void fx_fence_stop_asym(void)
{
	int expect = FX_FENCE_ASYM;

	/* counted like a heavy side: a stop that returns waits for another's membarrier too */
	atomic_fetch_add(&heavy_busy, 1);
	if (atomic_compare_exchange_strong(&fx_fence_mode, &expect, FX_FENCE_STOPPING) ||
	    expect == FX_FENCE_STOPPING) {
		fx_raw_syscall6(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0, 0, 0, 0);
		atomic_store(&fx_fence_mode, FX_FENCE_FULL);
	}
	atomic_fetch_sub(&heavy_busy, 1);
	while (atomic_load(&heavy_busy))
		sched_yield();
}
