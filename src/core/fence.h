/* SPDX-License-Identifier: MIT */
/*
 * Asymmetric fences: the store-then-load handshake (Dekker's) between a
 * side that runs on every call and a side that runs rarely. The frequent
 * side orders its store before its loads with fx_fence_light, a compiler
 * barrier while the process can use membarrier(2); the rare side pays for
 * both with fx_fence_heavy, a membarrier that makes every running thread
 * of the process execute a full barrier. Where membarrier is not to be
 * used (the process started under a seccomp filter, or installs one:
 * the filter may kill any thread that calls it), both are full fences.
 *
 * The pattern, for a flag the frequent side sets and a request the rare
 * side leaves:
 *
 *     frequent:  store(flag); fx_fence_light(); load(request)
 *     rare:      store(request); fx_fence_heavy(); load(flag)
 *
 * at least one of the two sees the other's store.
 */
#ifndef FLEXSC_CORE_FENCE_H
#define FLEXSC_CORE_FENCE_H

#include <stdatomic.h>
#include <stdbool.h>

enum {
	FX_FENCE_FULL = 0,     /* both sides fence: no membarrier */
	FX_FENCE_ASYM = 1,     /* light: compiler barrier; heavy: membarrier */
	FX_FENCE_STOPPING = 2, /* on the way from ASYM to FULL (fx_fence_stop_asym) */
};

extern _Atomic int fx_fence_mode;

/* The frequent side's fence: between its store and its loads. */
static inline void fx_fence_light(void)
{
	atomic_signal_fence(memory_order_seq_cst);
	/*
	 * Read after the store it orders: a thread that read ASYM stored
	 * before the membarrier of fx_fence_stop_asym, which therefore made
	 * the store visible before the mode became FULL (fence.c).
	 */
	if (__builtin_expect(atomic_load_explicit(&fx_fence_mode, memory_order_relaxed) != FX_FENCE_ASYM, 0))
		atomic_thread_fence(memory_order_seq_cst);
}

/*
 * The rare side's fence: between its store and its loads. False when it
 * cannot vouch for the other side (membarrier refused by a seccomp filter
 * the runtime did not see; the mode is FULL from then on): the caller
 * then acts as if the other side might have missed its store.
 */
bool fx_fence_heavy(void);

/*
 * Registers the process for membarrier(2) and turns the asymmetric mode
 * on, unless filtered (the caller is under a seccomp filter: no probe is
 * made) or the kernel refuses. Called while the process has one thread:
 * at start and in a fork's child. Returns the mode chosen.
 */
int fx_fence_start(int filtered);

/*
 * Before the program installs a seccomp filter: from now on both sides
 * use full fences, for good, and no thread calls membarrier once this
 * returns (the filter could kill it). Waits for the heavy fences under way.
 */
void fx_fence_stop_asym(void);

#endif
