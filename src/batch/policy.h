/* SPDX-License-Identifier: MIT */
/*
 * When a batch of posted calls is handed to the engines.
 *
 * A batch is flushed at whichever comes first: the owner waits (it has
 * nothing else to do: the FlexSC rule), the number of pending calls reaches
 * the threshold M (CEFOS wrapped system calls), or the oldest pending call
 * has waited batch_timeout_us. There is no timer thread: the time bound is
 * checked whenever the owner enters the library (post, poll, reap), so an
 * owner that stops calling in must flush or wait, which it does to get
 * results.
 */
#ifndef FX_BATCH_POLICY_H
#define FX_BATCH_POLICY_H

#include "core/internal.h"

/* The timestamp of a batch's first call; 0 when no time bound is set (no clock read). */
static inline uint64_t fx_batch_clock(const struct flexsc_queue *q)
{
	return q->fx->cfg.batch_timeout_us ? fx_now_ns() : 0;
}

static inline bool fx_batch_due(const struct flexsc_queue *q)
{
	const struct flexsc_config *c = &q->fx->cfg;

	if (q->npending >= c->batch_threshold)
		return true;
	return c->batch_timeout_us &&
	       fx_now_ns() - q->first_pending_ns >= (uint64_t)c->batch_timeout_us * 1000u;
}

#endif
