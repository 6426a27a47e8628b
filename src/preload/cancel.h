/* SPDX-License-Identifier: MIT */
/* Cancellation points (src/preload/cancel.c). */
#ifndef FX_PRELOAD_CANCEL_H
#define FX_PRELOAD_CANCEL_H

/* Exits the calling uthread with PTHREAD_CANCELED if it was cancelled and may act on it. */
void fx_testcancel(void);

#endif
