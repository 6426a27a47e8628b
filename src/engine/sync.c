/* SPDX-License-Identifier: MIT */
/*
 * The synchronous engine: the entry runs on the owner with the plain
 * system call instruction. It is the baseline every benchmark compares
 * against, the fallback when nothing else is allowed, and the executor of
 * chains for engines that have no linked submission of their own.
 */
#include "engine/engine.h"

int64_t fx_sync_run(struct flexsc_entry *e)
{
	__atomic_store_n(&e->status, FLEXSC_BUSY, __ATOMIC_RELAXED);
	return fx_entry_exec(e);
}

static bool uses_chain_fd(const struct flexsc_entry *e)
{
	for (unsigned a = 0; a < e->nargs; a++)
		if (e->args[a] == FLEXSC_CHAIN_FD)
			return true;
	return false;
}

/*
 * Runs the chain that starts at first, in order, every op even after a
 * failure (io_uring hard-link semantics). FLEXSC_CHAIN_FD arguments become
 * op 0's descriptor (or its -errno, which makes the op fail with -EBADF);
 * op 0 then reports 0 on success, as a direct descriptor does on io_uring.
 */
void fx_chain_run(struct flexsc_entry *entries, const uint16_t *link, unsigned first,
		  void (*done)(void *ctx, unsigned idx, int64_t ret), void *ctx)
{
	int64_t fd = -1;
	bool fd_used = false;

	for (unsigned i = link[first]; i != FX_NIL; i = link[i])
		fd_used = fd_used || uses_chain_fd(&entries[i]);
	for (unsigned i = first; i != FX_NIL;) {
		struct flexsc_entry *e = &entries[i];
		unsigned next = link[i];

		if (i != first)
			for (unsigned a = 0; a < e->nargs; a++)
				if (e->args[a] == FLEXSC_CHAIN_FD)
					e->args[a] = (uint64_t)(fd >= 0 ? fd : -1);
		int64_t r = fx_sync_run(e);
		if (i == first) {
			fd = r;
			if (fd_used && r >= 0)
				r = 0;
		}
		done(ctx, i, r);
		i = next;
	}
}
