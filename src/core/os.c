/* SPDX-License-Identifier: MIT */
/*
 * The few operating-system services every layer takes from below:
 * futexes on 32-bit words of this process, owner wake-ups, kernel threads
 * for the syscall-thread engine, the monotonic clock, and warnings on
 * stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
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

/* Wakes the owner behind w if it sleeps, the way it said it sleeps; false if it was awake. */
bool fx_wake_up(struct fx_wake *w)
{
	/* seq_cst: pairs with the store of w->sleep before the sleeper's last look */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&w->sleep, memory_order_relaxed) == FX_SLEEP_NONE)
		return false;
	uint32_t how = atomic_exchange(&w->sleep, FX_SLEEP_NONE);
	if (how == FX_SLEEP_FUTEX) {
		fx_futex_wake(&w->sleep, 1);
	} else if (how == FX_SLEEP_EVENTFD) {
		uint64_t one = 1;
		fx_raw_syscall6(SYS_write, w->fd, (long)&one, sizeof(one), 0, 0, 0);
	}
	return how != FX_SLEEP_NONE;
}

/*
 * A result came for the owner behind w, which was awake. The default does
 * nothing: the owner collects it at its next look. FlexSC-Threads, whose
 * owner may be computing in a uthread, defines it (src/threads/sched.c).
 */
__attribute__((weak)) void fx_os_owner_awake(struct fx_wake *w)
{
	(void)w;
}

/*
 * Kernel threads for the syscall-thread engine and the runtime. These are
 * the defaults, weak: a runtime linked with the library that interposes
 * pthread_create (FlexSC-Threads, src/preload/init.c) defines them to
 * reach libc's own, or syscall threads would become user threads. The
 * link picks the definition; nothing is assigned at run time.
 */
__attribute__((weak)) int fx_os_pthread_create(pthread_t *t, const pthread_attr_t *attr,
					       void *(*fn)(void *), void *arg)
{
	return pthread_create(t, attr, fn, arg);
}

__attribute__((weak)) int fx_os_pthread_join(pthread_t t, void **ret)
{
	return pthread_join(t, ret);
}

int fx_os_thread_create(pthread_t *t, void *(*fn)(void *), void *arg)
{
	return fx_os_pthread_create(t, NULL, fn, arg);
}

int fx_os_thread_join(pthread_t t)
{
	return fx_os_pthread_join(t, NULL);
}

uint64_t fx_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void fx_warn(const struct flexsc *fx, const char *fmt, ...)
{
	va_list ap;

	if (fx && (fx->cfg.flags & FLEXSC_QUIET))
		return;
	va_start(ap, fmt);
	fputs("flexsc: warning: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
