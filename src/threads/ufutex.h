/* SPDX-License-Identifier: MIT */
/* Private futexes of uthreads, kept in user space (src/threads/ufutex.c). */
#ifndef FX_THREADS_UFUTEX_H
#define FX_THREADS_UFUTEX_H

#include <stdbool.h>

/*
 * syscall(SYS_futex, a[0..5]) from a uthread: true when handled here, with
 * the result (or -errno, as the kernel's) in *ret; false: the kernel's to do.
 */
bool fx_ufutex_call(const long *a, long *ret);

/* In a fork child: every waiter is a parent thread's, and a bucket lock may have been held. */
void fx_ufutex_after_fork_child(void);

#endif
