/* SPDX-License-Identifier: MIT */
/*
 * The engines that execute posted entries, behind one small interface.
 *
 * A flush hands each pending entry to its route's engine with *_add, then
 * publishes the whole batch with one *_commit (one io_uring_enter, one
 * futex wake at most). Engines report completions through
 * fx_queue_complete; *_harvest moves finished work to the owner; *_sleep
 * blocks the owner until something may have finished. Engines know nothing
 * of user threads or of descriptors.
 */
#ifndef FX_ENGINE_H
#define FX_ENGINE_H

#include "core/internal.h"

/* io_uring (src/engine/uring.c) */
void fx_uring_probe(struct flexsc *fx);
int fx_uring_create(struct flexsc_queue *q);
void fx_uring_destroy(struct flexsc_queue *q);
bool fx_uring_can(const struct flexsc *fx, const struct flexsc_entry *e, bool chained_fd);
bool fx_uring_has_direct(const struct flexsc_queue *q);
bool fx_uring_chainable(long nr);
void fx_uring_add(struct flexsc_queue *q, unsigned idx);
void fx_uring_add_chain(struct flexsc_queue *q, unsigned first);
int fx_uring_commit(struct flexsc_queue *q);
int fx_uring_harvest(struct flexsc_queue *q);
int fx_uring_sleep(struct flexsc_queue *q, const struct timespec *rel);
int fx_uring_cancel(struct flexsc_queue *q, unsigned idx);
/* Whether the ring runs calls as a caller with identity id (always, without SQPOLL). */
bool fx_uring_runs_as(struct flexsc_queue *q, const struct fx_identity *id);
bool fx_uring_shares_context(struct flexsc_queue *q, unsigned what);

/* syscall threads (src/engine/systhreads.c) */
int fx_pool_create(struct flexsc *fx);
void fx_pool_destroy(struct fx_pool *pool);
void fx_pool_forget(struct fx_pool *pool);
int fx_pool_attach(struct fx_pool *pool, struct flexsc_queue *q);
void fx_pool_detach(struct flexsc_queue *q);
/* Records who the owner (task tid) is at this flush; the calls added after it carry it. */
void fx_threads_identity(struct flexsc_queue *q, const struct fx_identity *id, int tid);
void fx_threads_add(struct flexsc_queue *q, unsigned idx);
void fx_threads_commit(struct flexsc_queue *q);
int fx_threads_harvest(struct flexsc_queue *q);
bool fx_threads_pending(const struct flexsc_queue *q);
int fx_threads_cancel(struct flexsc_queue *q, unsigned idx);
void fx_threads_unstick(struct flexsc_queue *q);
bool fx_threads_all_busy(const struct flexsc_queue *q);
bool fx_threads_remote(const struct flexsc_queue *q);

/* synchronous (src/engine/sync.c): runs an entry, or a chain, on the owner */
int64_t fx_sync_run(struct flexsc_entry *e);
void fx_chain_run(struct flexsc_entry *entries, const uint16_t *link, unsigned first,
		  void (*done)(void *ctx, unsigned idx, int64_t ret), void *ctx);

#endif
