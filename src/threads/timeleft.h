/* SPDX-License-Identifier: MIT */
/* The time a call has left when the runtime starts it again: src/threads/timeleft.c. */
#ifndef FX_THREADS_TIMELEFT_H
#define FX_THREADS_TIMELEFT_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core/internal.h"

/* A call's timeout, from when the call began (fx_timeout_begin). */
struct fx_time_left {
	uint8_t kind;         /* its column (FX_TIMEOUT_*), NONE when it has no finite timeout */
	uint64_t start;       /* CLOCK_MONOTONIC when it began */
	uint64_t arg;         /* the program's argument that held the timeout */
	struct timespec left; /* what a relative timespec argument is replaced with */
};

/* What is left of ms milliseconds since start (CLOCK_MONOTONIC ns); ms itself when negative or 0. */
int fx_ms_left(int ms, uint64_t start);

/*
 * What is left of the relative timeout *ts since start, in *left, which it
 * returns; ts itself when NULL or invalid (the kernel's EINVAL stays).
 */
const struct timespec *fx_ts_left(const struct timespec *ts, uint64_t start, struct timespec *left);

void fx_timeout_begin_slow(struct fx_time_left *t, unsigned kind, const uint64_t *args);

/*
 * Notes when call nr with args begins, if it has a finite timeout: on
 * every call, so a read or a write looks no further while no socket has a
 * timeout.
 */
static inline void fx_timeout_begin(struct fx_time_left *t, long nr, const uint64_t *args)
{
	unsigned kind = fx_sys_timeout(nr);

	t->kind = FX_TIMEOUT_NONE;
	if (kind != FX_TIMEOUT_NONE &&
	    (kind < FX_TIMEOUT_SO_RCV || atomic_load_explicit(&fx_fd_marks_used, memory_order_relaxed)))
		fx_timeout_begin_slow(t, kind, args);
}

/* Before the call starts afresh (it had not started): its whole timeout again, from now. */
void fx_timeout_afresh(struct fx_time_left *t, long nr, uint64_t *args);

/*
 * Before the call starts again: rewrites its timeout in args to the time
 * it has left (0 when its time is up: the call then returns what is ready,
 * as at its timeout). False when a socket's timeout is up and the socket
 * is not ready: *ret is then the call's result at its timeout (-EAGAIN,
 * -EINPROGRESS for a TCP connect).
 */
bool fx_timeout_again(struct fx_time_left *t, long nr, uint64_t *args, long *ret);

#endif
