/* SPDX-License-Identifier: MIT */
/* Overflow threads: calls beyond a carrier's syscall entries (overflow.c). */
#ifndef FX_OVERFLOW_H
#define FX_OVERFLOW_H

#include <stdint.h>

struct fx_uthread;
struct fx_identity;

/*
 * Hands u's call to an overflow thread; u must be parked in FX_U_OVERFLOW
 * by the caller, which then blocks; the thread sets u->sysret and wakes it.
 * Returns 0, -EPERM under a seccomp filter that may not cover the pool's
 * threads, or -EAGAIN/-ENOMEM when no thread exists and none can start.
 */
int fx_overflow_submit(struct fx_uthread *u, long nr, const uint64_t *args,
		       const struct fx_identity *caller);
/* Makes u's call, if an overflow thread runs it now, return -EINTR. */
void fx_overflow_interrupt(struct fx_uthread *u);
/* In a fork child: the pool is empty. */
void fx_overflow_after_fork_child(void);

#endif
