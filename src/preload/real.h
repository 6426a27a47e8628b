/* SPDX-License-Identifier: MIT */
/*
 * The preload's edge: the real libc functions behind the ones it
 * interposes, and the one conversion from the runtime's -errno results to
 * libc's -1 and errno.
 */
#ifndef FX_PRELOAD_REAL_H
#define FX_PRELOAD_REAL_H

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>

#include "threads/rt.h"

/* The next definition of name after the preload (libc's), resolved once. */
#define REAL(name)                                                              \
	({                                                                      \
		static __typeof__(name) *real_##name;                           \
		if (!real_##name)                                               \
			real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name); \
		if (!real_##name)                                               \
			abort();                                                \
		real_##name;                                                    \
	})

/* Whether the runtime runs this process (flexsc-run, and the start went well). */
extern bool fx_rt_active;

/*
 * Whether the program's mutexes, conditions, rwlocks, barriers, semaphores,
 * spinlocks and thread-specific keys are ours: from the very first call,
 * before the runtime starts too. Libraries loaded with the program run their constructors
 * before the preload's, and some make and take locks there (BIND's libisc,
 * OpenSSL); an object glibc initialised and locked, then used by ours,
 * would be read in the wrong layout (BIND hung in its first rwlock).
 * Ours also serve kernel threads, so they stay when the runtime cannot
 * start, unless the CPU lacks FSGSBASE (they read %gs).
 */
bool fx_sync_ours(void);

/*
 * Whether the caller is a uthread that may wait as one (switching its
 * carrier to others): not the runtime itself, not a signal handler, which
 * must not switch user threads under the thread it interrupted.
 */
static inline bool fx_on_uthread(void)
{
	struct fx_carrier *c = fx_rt_active ? fx_carrier_self() : NULL;

	return c && c->current && !c->in_rt && !fx_in_handler(c);
}

/*
 * syscall(nr, ...) for the blocking calls src/preload/io.c interposes,
 * made as their wrappers make them: true and *ret (-1 and errno) when it
 * took the call, false for a call to make directly.
 */
bool fx_io_syscall(long nr, const long *a, long *ret);

/* A raw result (>= 0 or -errno) as libc returns it. */
static inline long fx_libc_ret(long r)
{
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

#endif
