/* SPDX-License-Identifier: MIT */
/* Futex waits and wakes on 32-bit words that belong to one process. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/internal.h"

/* Sleeps while *word == val, at most rel (NULL: no limit). Returns 0 or -errno (EAGAIN, ETIMEDOUT, EINTR). */
int fx_futex_wait(_Atomic uint32_t *word, uint32_t val, const struct timespec *rel)
{
	long r = fx_raw_syscall6(SYS_futex, (long)word, FUTEX_WAIT_PRIVATE, (long)val, (long)rel, 0, 0);

	return r < 0 ? (int)r : 0;
}

void fx_futex_wake(_Atomic uint32_t *word, int n)
{
	fx_raw_syscall6(SYS_futex, (long)word, FUTEX_WAKE_PRIVATE, n, 0, 0, 0);
}
