/* SPDX-License-Identifier: MIT */
/* Waiters and timers (src/threads/waiter.c). */
#ifndef FX_THREADS_WAIT_H
#define FX_THREADS_WAIT_H

#include <time.h>

#include "threads/rt.h"

/*
 * SIGNALLED: a uthread's wait that a signal interrupted; it runs its
 * handler and waits on (WAITING again), unless a waker ended it meanwhile
 * (WOKEN, without waking it: it is running).
 */
enum { FX_W_WAITING = 0, FX_W_WOKEN = 1, FX_W_TIMEDOUT = 2, FX_W_SIGNALLED = 3 };

struct fx_waiter {
	struct fx_waiter *next;    /* on the wait list of what it waits for */
	struct fx_waiter *tnext;   /* on its carrier's timer list */
	struct fx_uthread *u;      /* NULL: a kernel thread, sleeping on futex */
	_Atomic(struct fx_carrier *) carrier; /* whose timer list holds it; NULL once off it */
	uint64_t deadline;         /* CLOCK_MONOTONIC ns, UINT64_MAX: none */
	_Atomic int state;         /* FX_W_* */
	_Atomic uint32_t futex;
	uintptr_t data;            /* for the primitive: what the waiter wants (rwlock mode...) */
	unsigned fork_gen;         /* fx_fork_gen when it started waiting */
};

/*
 * The process's fork generation: one more in a fork child than in its
 * parent. Waiters queued, and wait-list locks held, under an older one
 * belong to threads the child does not have. A child learns it is one at
 * the first look after the fork, before any atfork handler runs: the
 * word fx_fork_mark points at is in a page the kernel wipes in a fork
 * child (MADV_WIPEONFORK), so it reads 0 there until fx_fork_noticed.
 * Only the forking thread runs then, so nothing races with that.
 */
extern unsigned fx_fork_gen;
extern _Atomic unsigned *fx_fork_mark;
void fx_fork_noticed(void);
/* Maps the fork mark; a process without one learns of a fork from the runtime's atfork handler. */
void fx_fork_mark_init(void);

static inline unsigned fx_gen(void)
{
	_Atomic unsigned *m = fx_fork_mark;

	if (fx_unlikely(m && !atomic_load_explicit(m, memory_order_acquire)))
		fx_fork_noticed();
	return fx_fork_gen;
}

/*
 * The lock of a primitive's wait list (a spin lock: held for a few
 * instructions). A fork can copy it held by a thread the child does not
 * have, which would never let go: so it holds the holder's generation,
 * and a locker that finds it held under an older one takes it over and
 * returns true; its wait lists hold only waiters of the parent's threads,
 * maybe half-linked, and the caller empties them (fx_wlist_reset).
 */
static inline int fx_wl_stamp(void)
{
	return (int)(fx_gen() & 0x3fffffffu) + 1;
}

bool fx_wl_lock_slow(_Atomic int *l, int stamp);

static inline bool fx_wl_lock(_Atomic int *l)
{
	int stamp = fx_wl_stamp(), v = 0;

	fx_locks_enter(); /* a handler's sem_post may want this lock: not while it is held (rt.h) */
	if (fx_likely(atomic_compare_exchange_weak_explicit(l, &v, stamp, memory_order_acquire,
							    memory_order_relaxed)))
		return false;
	return fx_wl_lock_slow(l, stamp);
}

static inline void fx_wl_unlock(_Atomic int *l)
{
	atomic_store_explicit(l, 0, memory_order_release);
	fx_locks_leave();
}

/* A FIFO wait list; its lock is the owner primitive's. */
struct fx_wlist {
	struct fx_waiter *head, *tail;
};

/* Empties l: after a fork took over its lock, every waiter on it is a parent thread's. */
static inline void fx_wlist_reset(struct fx_wlist *l)
{
	l->head = l->tail = NULL;
}

static inline void fx_wlist_push(struct fx_wlist *l, struct fx_waiter *w)
{
	w->next = NULL;
	if (l->tail)
		l->tail->next = w;
	else
		l->head = w;
	l->tail = w;
}

static inline struct fx_waiter *fx_wlist_pop(struct fx_wlist *l)
{
	struct fx_waiter *w = l->head;

	if (w) {
		l->head = w->next;
		if (!l->head)
			l->tail = NULL;
	}
	return w;
}

/* Unlinks w if it is still on l. */
static inline void fx_wlist_remove(struct fx_wlist *l, struct fx_waiter *w)
{
	struct fx_waiter *prev = NULL;

	for (struct fx_waiter *p = l->head; p; prev = p, p = p->next) {
		if (p == w) {
			if (prev)
				prev->next = w->next;
			else
				l->head = w->next;
			if (l->tail == w)
				l->tail = prev;
			return;
		}
	}
}

void fx_waiter_init(struct fx_waiter *w);
int fx_waiter_sleep(struct fx_waiter *w, uint64_t deadline);
int fx_waiter_sleep_cp(struct fx_waiter *w, uint64_t deadline);
bool fx_waiter_wake(struct fx_waiter *w);
void fx_timers_fire(struct fx_carrier *c);
uint64_t fx_timers_next(struct fx_carrier *c);
void fx_timers_move(struct fx_carrier *from, struct fx_carrier *to);
int fx_deadline(clockid_t clock, const struct timespec *abs, uint64_t *deadline);
void fx_sleep_until(uint64_t deadline);
/* A signal for u, which sleeps in w (its park_waiter): true when u now wakes to run its handler. */
bool fx_waiter_signal(struct fx_uthread *u);

#endif
