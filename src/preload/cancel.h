/* SPDX-License-Identifier: MIT */
/* Cancellation points (src/preload/cancel.c). */
#ifndef FX_PRELOAD_CANCEL_H
#define FX_PRELOAD_CANCEL_H

#include "preload/real.h"
#include "threads/rt.h"

/* Exits the calling uthread with PTHREAD_CANCELED, unless it runs a signal handler (cancel.c). */
void fx_cancel_act(void);

/*
 * u is the calling uthread, or NULL: exits it if it was cancelled and may
 * act on it. Inline, as it runs twice on every interposed cancellation
 * point: u read once (the carrier's GS base costs a few ns to read).
 */
static inline void fx_testcancel_of(const struct fx_uthread *u)
{
	if (u && __builtin_expect(fx_cancel_pending(u), 0))
		fx_cancel_act();
}

/* Exits the calling uthread with PTHREAD_CANCELED if it was cancelled and may act on it. */
static inline void fx_testcancel(void)
{
	if (fx_rt_active)
		fx_testcancel_of(fx_uthread_self());
}

#endif
