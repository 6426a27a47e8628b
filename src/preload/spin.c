/* SPDX-License-Identifier: MIT */
/*
 * Spin locks that cannot spin forever under cooperative scheduling.
 *
 * pthread_spinlock_t stays glibc's int (0 free, 1 held) and its semantics
 * stay a spin lock's. But a uthread that spins on a lock held by a uthread
 * of its own carrier would spin for long: the monitor preempts only the
 * program's own code, never this library's (preempt.c), so the holder
 * would not run again. And the holder may be parked (in an exception-
 * less call, or blocked on something else) where only its carrier going
 * through its scheduler (reaping, firing timers) brings it back.
 *
 * So a locker spins a bounded number of times, then lets others run: a
 * uthread yields its carrier a few times (fx_yield), then sleeps briefly
 * on a waiter, with a growing delay: a sleep is a real trip through the
 * scheduler, which reaps finished calls and fires timers even when other
 * spinners keep the run queue busy. A plain kernel thread yields the CPU,
 * then sleeps likewise. The sleeps are not cancellation points.
 *
 * pshared needs nothing: the lock is one word, with no pointers.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/syscall.h>

#include "preload/real.h"
#include "threads/waiter.h"

#define SPINS        256     /* pauses between looks at the scheduler */
#define YIELDS       8       /* yields before the first sleep */
#define SLEEP_MIN_NS 20000u  /* 20 us */
#define SLEEP_MAX_NS 1000000u /* 1 ms */

static _Atomic int *word(pthread_spinlock_t *l)
{
	return (_Atomic int *)l;
}

FX_EXPORT int pthread_spin_init(pthread_spinlock_t *l, int pshared)
{
	(void)pshared;
	if (!fx_sync_ours())
		return REAL(pthread_spin_init)(l, pshared);
	atomic_store_explicit(word(l), 0, memory_order_relaxed);
	return 0;
}

FX_EXPORT int pthread_spin_destroy(pthread_spinlock_t *l)
{
	if (!fx_sync_ours())
		return REAL(pthread_spin_destroy)(l);
	return 0;
}

static bool try_take(_Atomic int *w)
{
	return !atomic_exchange_explicit(w, 1, memory_order_acquire);
}

struct backoff {
	unsigned yields;
	uint64_t sleep_ns;
};

/* Gives the holder a chance to run; spins resume after it. */
static void let_others_run(struct backoff *b)
{
	struct fx_carrier *c = fx_carrier_self();
	bool uthread = c && c->current;

	if (b->yields < YIELDS) {
		b->yields++;
		if (uthread) {
			if (atomic_load_explicit(&c->rq_len, memory_order_relaxed)) {
				fx_yield();
				return;
			}
			/* nobody else runnable here: the holder is parked, or on another carrier */
		} else {
			fx_raw_syscall6(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
			return;
		}
	}
	struct fx_waiter w;
	fx_waiter_init(&w);
	fx_waiter_sleep(&w, fx_now_ns() + b->sleep_ns); /* nobody wakes it early */
	b->sleep_ns = b->sleep_ns * 2 > SLEEP_MAX_NS ? SLEEP_MAX_NS : b->sleep_ns * 2;
	b->yields = 0;
}

FX_EXPORT int pthread_spin_lock(pthread_spinlock_t *l)
{
	_Atomic int *w = word(l);
	struct backoff b = { 0, SLEEP_MIN_NS };

	if (!fx_sync_ours())
		return REAL(pthread_spin_lock)(l);
	for (;;) {
		if (try_take(w))
			return 0;
		for (unsigned i = 0; atomic_load_explicit(w, memory_order_relaxed); i++) {
			if (i == SPINS) {
				let_others_run(&b);
				i = 0;
			}
			__builtin_ia32_pause();
		}
	}
}

FX_EXPORT int pthread_spin_trylock(pthread_spinlock_t *l)
{
	if (!fx_sync_ours())
		return REAL(pthread_spin_trylock)(l);
	return try_take(word(l)) ? 0 : EBUSY;
}

FX_EXPORT int pthread_spin_unlock(pthread_spinlock_t *l)
{
	if (!fx_sync_ours())
		return REAL(pthread_spin_unlock)(l);
	atomic_store_explicit(word(l), 0, memory_order_release);
	return 0;
}
