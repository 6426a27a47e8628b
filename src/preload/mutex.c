/* SPDX-License-Identifier: MIT */
/*
 * Mutexes and condition variables for uthreads (and for any other thread).
 *
 * glibc's own would make a contended thread wait in the kernel, putting a
 * whole carrier to sleep while the owner may be a uthread of that very
 * carrier: a deadlock. Ours keep glibc's object sizes and its static
 * initialisers (all zero, the kind in __kind) and lay their own state over
 * them:
 *
 *   pthread_mutex_t: lock word (0 free, 1 held, 2 held with waiters),
 *   recursion count, owner id, kind, wait-list spin lock, wait list.
 *   pthread_cond_t: wait-list spin lock, clock, wait list.
 *
 * A contended locker queues a waiter and sleeps (fx_waiter_sleep: a uthread
 * switches away, any other thread sleeps on a futex). Unlock hands the
 * mutex to the first waiter (it never becomes free in between), so waking
 * is FIFO and a waiter never loses the lock it was woken for.
 *
 * Process-shared objects cannot hold pointers to our waiters: they wait on
 * the lock word with the kernel's shared futexes instead (Drepper's
 * three-state mutex; a sequence word for conditions), a uthread through
 * an exception-less FUTEX_WAIT so that its carrier runs others. Their
 * owner is (process id, thread id), not the carrier's kernel thread id
 * glibc's would record, which another uthread of the same carrier shares
 * and a forked child may reuse. Robust and priority-inheritance/protect
 * mutexes are left to glibc (docs/threads.md).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/real.h"
#include "preload/cancel.h"
#include "threads/waiter.h"

struct fx_mutex {
	_Atomic int lock;
	unsigned count;
	int owner;
	unsigned nusers;
	int kind;
	_Atomic int wl;
	struct fx_wlist waiters;
};
_Static_assert(sizeof(struct fx_mutex) <= sizeof(pthread_mutex_t), "fits glibc's mutex");
_Static_assert(offsetof(struct fx_mutex, kind) == 16, "kind where glibc keeps __kind");

/* The wait-list lock; taken over from a thread a fork left behind, the list is the parent's: emptied. */
static void wl_lock(struct fx_mutex *x)
{
	if (fx_wl_lock(&x->wl))
		fx_wlist_reset(&x->waiters);
}

#define KIND_TYPE_MASK 3
#define KIND_ROBUST 16
#define KIND_PI 32
#define KIND_PP 64
#define KIND_PSHARED 128
#define KIND_GLIBC (KIND_ROBUST | KIND_PI | KIND_PP | KIND_PSHARED)
#define KIND_FX_SHARED 0x4000 /* process-shared, ours: waits on shared futexes */

/*
 * Waits while *word is val, on the kernel's shared futex (another process
 * may wake it), until deadline (CLOCK_MONOTONIC ns; UINT64_MAX: none). A
 * uthread's wait is an exception-less call: its carrier runs others, and
 * a cancellation cuts it short. Each wait is at most SHARED_SLICE long so
 * that a carrier that has to run the call itself (the synchronous engine)
 * is never held longer: the caller looks at its word again and waits on.
 * Returns -ETIMEDOUT once the deadline has passed, else 0 (woken, the word
 * changed, interrupted, or the slice ended).
 */
#define SHARED_SLICE 50000000ull
static int shared_wait(_Atomic uint32_t *word, uint32_t val, uint64_t deadline)
{
	uint64_t now = fx_now_ns();

	if (now >= deadline)
		return -ETIMEDOUT;
	uint64_t until = deadline - now > SHARED_SLICE ? now + SHARED_SLICE : deadline;
	struct timespec ts = { (time_t)(until / 1000000000u), (long)(until % 1000000000u) };
	uint64_t a[6] = { (uintptr_t)word, FUTEX_WAIT_BITSET, val, (uintptr_t)&ts, 0, FUTEX_BITSET_MATCH_ANY };
	long r = fx_on_uthread() ? fx_rt_syscall(SYS_futex, 6, a)
				 : fx_raw_syscall6(SYS_futex, (long)word, FUTEX_WAIT_BITSET, val,
						   (long)&ts, 0, FUTEX_BITSET_MATCH_ANY);
	if (r == -ETIMEDOUT && until == deadline)
		return -ETIMEDOUT;
	return 0;
}

static void shared_wake(_Atomic uint32_t *word, int n)
{
	fx_raw_syscall6(SYS_futex, (long)word, FUTEX_WAKE, n, 0, 0, 0);
}

/* An id for the calling thread, u (NULL: not a uthread): a uthread's, or minus the kernel thread id. */
static int id_of(const struct fx_uthread *u)
{
	static __thread int tid;

	if (u)
		return u->id ? u->id : -1;
	if (!tid)
		tid = (int)syscall(SYS_gettid);
	return -tid - 1;
}

/*
 * Counts the mutexes the calling thread u holds, for time-slicing: one
 * that holds one is preempted only after a grace (src/threads/preempt.c),
 * so that the threads waiting for it do not wait out its whole time slice
 * too.
 */
static void held(struct fx_uthread *u, int delta)
{
	if (u)
		u->locks_held += delta;
}

static bool ours(const pthread_mutex_t *m)
{
	int kind = ((const struct fx_mutex *)m)->kind;

	return fx_sync_ours() && (!(kind & KIND_GLIBC) || (kind & KIND_FX_SHARED));
}

static int timed_deadline(clockid_t clock, const struct timespec *abs, uint64_t *deadline);

/* The process part of a shared mutex's owner: only kept for the kinds that check it. */
static unsigned shared_pid(int type)
{
	if (type != PTHREAD_MUTEX_ERRORCHECK && type != PTHREAD_MUTEX_RECURSIVE)
		return 0;
	return (unsigned)fx_raw_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0);
}

static int shared_lock(struct fx_mutex *x, bool try, clockid_t clock, const struct timespec *abs)
{
	struct fx_uthread *self = fx_uthread_self();
	int me = id_of(self), type = x->kind & KIND_TYPE_MASK;
	unsigned pid = shared_pid(type);
	_Atomic uint32_t *word = (_Atomic uint32_t *)&x->lock;

	if (pid && x->owner == me && x->nusers == pid) {
		if (type == PTHREAD_MUTEX_ERRORCHECK)
			return try ? EBUSY : EDEADLK;
		if (x->count == UINT32_MAX)
			return EAGAIN;
		x->count++;
		return 0;
	}
	uint32_t expect = 0;
	if (!atomic_compare_exchange_strong(word, &expect, 1)) {
		if (try)
			return EBUSY;
		uint64_t deadline;
		int err = timed_deadline(clock, abs, &deadline);
		if (err)
			return err;
		struct fx_uthread *u = fx_on_uthread() ? fx_uthread_self() : NULL;
		while (atomic_exchange(word, 2) != 0) {
			if (shared_wait(word, 2, deadline) == -ETIMEDOUT)
				return ETIMEDOUT;
			if (u && u->cancel_async)
				fx_testcancel(); /* asynchronous cancellation acts anywhere */
		}
	}
	x->owner = me;
	x->nusers = pid;
	x->count = 1;
	held(self, 1);
	return 0;
}

static int shared_unlock(struct fx_mutex *x)
{
	struct fx_uthread *self = fx_uthread_self();
	int type = x->kind & KIND_TYPE_MASK;

	if (type == PTHREAD_MUTEX_ERRORCHECK || type == PTHREAD_MUTEX_RECURSIVE) {
		if (x->owner != id_of(self) || x->nusers != shared_pid(type) || !atomic_load(&x->lock))
			return EPERM;
		if (--x->count)
			return 0;
	}
	held(self, -1);
	x->owner = 0;
	x->nusers = 0;
	if (atomic_exchange((_Atomic uint32_t *)&x->lock, 0) == 2)
		shared_wake((_Atomic uint32_t *)&x->lock, 1);
	return 0;
}

FX_EXPORT int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr)
{
	int type = PTHREAD_MUTEX_DEFAULT, pshared = PTHREAD_PROCESS_PRIVATE;
	int robust = PTHREAD_MUTEX_STALLED, proto = PTHREAD_PRIO_NONE;

	if (attr) {
		pthread_mutexattr_gettype(attr, &type);
		pthread_mutexattr_getpshared(attr, &pshared);
		pthread_mutexattr_getrobust(attr, &robust);
		pthread_mutexattr_getprotocol(attr, &proto);
	}
	if (!fx_sync_ours() || robust == PTHREAD_MUTEX_ROBUST || proto != PTHREAD_PRIO_NONE)
		return REAL(pthread_mutex_init)(m, attr);
	memset(m, 0, sizeof(*m));
	((struct fx_mutex *)m)->kind = type & KIND_TYPE_MASK;
	if (pshared == PTHREAD_PROCESS_SHARED)
		((struct fx_mutex *)m)->kind |= KIND_PSHARED | KIND_FX_SHARED;
	return 0;
}

FX_EXPORT int pthread_mutex_destroy(pthread_mutex_t *m)
{
	struct fx_mutex *x = (struct fx_mutex *)m;

	if (!ours(m))
		return REAL(pthread_mutex_destroy)(m);
	return atomic_load(&x->lock) ? EBUSY : 0;
}

static int lock_slow(struct fx_mutex *x, uint64_t deadline)
{
	struct fx_waiter w;

	fx_waiter_init(&w);
	wl_lock(x);
	for (;;) {
		int v = atomic_load(&x->lock);
		if (v == 0) {
			if (atomic_compare_exchange_strong(&x->lock, &v, x->waiters.head ? 2 : 1)) {
				fx_wl_unlock(&x->wl);
				return 0;
			}
		} else if (v == 2 || atomic_compare_exchange_strong(&x->lock, &v, 2)) {
			break;
		}
	}
	fx_wlist_push(&x->waiters, &w);
	fx_wl_unlock(&x->wl);
	/* not a cancellation point, but asynchronous cancellation acts anywhere */
	bool async = w.u && w.u->cancel_async;
	int r = async ? fx_waiter_sleep_cp(&w, deadline) : fx_waiter_sleep(&w, deadline);
	if (r == -ETIMEDOUT) {
		wl_lock(x);
		fx_wlist_remove(&x->waiters, &w);
		fx_wl_unlock(&x->wl);
		if (async)
			fx_testcancel();
		if (deadline == UINT64_MAX)
			return lock_slow(x, deadline); /* a cancellation disabled since: wait on */
		return ETIMEDOUT;
	}
	return 0; /* handed over by the unlocker: the lock word stayed held */
}

/*
 * An absolute timeout, looked at (as glibc does) only when the locker must
 * wait: a time in the past (a negative tv_sec too) times out before a bad
 * tv_nsec is noticed; abs NULL waits as long as it takes.
 */
static int timed_deadline(clockid_t clock, const struct timespec *abs, uint64_t *deadline)
{
	if (abs && abs->tv_sec < 0)
		return ETIMEDOUT;
	return fx_deadline(clock, abs, deadline) ? EINVAL : 0;
}

static int lock(pthread_mutex_t *m, bool try, clockid_t clock, const struct timespec *abs)
{
	struct fx_mutex *x = (struct fx_mutex *)m;
	struct fx_uthread *self = fx_uthread_self();
	int me = id_of(self), type = x->kind & KIND_TYPE_MASK, expect = 0;

	if (x->kind & KIND_FX_SHARED)
		return shared_lock(x, try, clock, abs);
	if (type != PTHREAD_MUTEX_NORMAL && type != PTHREAD_MUTEX_ADAPTIVE_NP && x->owner == me) {
		if (type == PTHREAD_MUTEX_ERRORCHECK)
			return try ? EBUSY : EDEADLK; /* as glibc: trylock never reports a deadlock */
		if (x->count == UINT32_MAX)
			return EAGAIN;
		x->count++;
		return 0;
	}
	if (!atomic_compare_exchange_strong_explicit(&x->lock, &expect, 1, memory_order_acquire,
						     memory_order_relaxed)) {
		if (try)
			return EBUSY;
		uint64_t deadline;
		int err = timed_deadline(clock, abs, &deadline);
		if (!err)
			err = lock_slow(x, deadline);
		if (err)
			return err;
	}
	x->owner = me;
	x->count = 1;
	held(self, 1);
	return 0;
}

FX_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
	if (!ours(m))
		return REAL(pthread_mutex_lock)(m);
	return lock(m, false, CLOCK_MONOTONIC, NULL);
}

FX_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
	if (!ours(m))
		return REAL(pthread_mutex_trylock)(m);
	return lock(m, true, CLOCK_MONOTONIC, NULL);
}

FX_EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abs)
{
	if (!ours(m))
		return REAL(pthread_mutex_clocklock)(m, clock, abs);
	/* the clock first; the time only if it must wait (see timed_deadline) */
	if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
		return EINVAL;
	return lock(m, false, clock, abs);
}

FX_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abs)
{
	if (!ours(m))
		return REAL(pthread_mutex_timedlock)(m, abs);
	return pthread_mutex_clocklock(m, CLOCK_REALTIME, abs);
}

FX_EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
	struct fx_mutex *x = (struct fx_mutex *)m;
	int type, expect = 1;

	if (!ours(m))
		return REAL(pthread_mutex_unlock)(m);
	if (x->kind & KIND_FX_SHARED)
		return shared_unlock(x);
	type = x->kind & KIND_TYPE_MASK;
	struct fx_uthread *self = fx_uthread_self();
	if (type == PTHREAD_MUTEX_ERRORCHECK || type == PTHREAD_MUTEX_RECURSIVE) {
		if (x->owner != id_of(self) || !atomic_load(&x->lock))
			return EPERM;
		if (--x->count)
			return 0;
	}
	held(self, -1);
	x->owner = 0;
	/* release: pairs with the acquire of the next locker */
	if (atomic_compare_exchange_strong_explicit(&x->lock, &expect, 0, memory_order_release,
						    memory_order_relaxed))
		return 0;
	wl_lock(x);
	for (;;) {
		struct fx_waiter *w = fx_wlist_pop(&x->waiters);
		if (!w) {
			atomic_store_explicit(&x->lock, 0, memory_order_release);
			break;
		}
		atomic_store(&x->lock, x->waiters.head ? 2 : 1);
		if (fx_waiter_wake(w))
			break; /* handed over */
		/* its deadline won: try the next one */
	}
	fx_wl_unlock(&x->wl);
	return 0;
}

FX_EXPORT int pthread_mutex_consistent(pthread_mutex_t *m)
{
	if (!ours(m))
		return REAL(pthread_mutex_consistent)(m);
	return EINVAL; /* ours are never robust */
}

/* ---- condition variables ---- */

struct fx_cond {
	_Atomic int wl;
	int clock;
	struct fx_wlist waiters;
	char pad[36 - 24];
	unsigned wrefs;  /* glibc's __wrefs: bit 0 marks a process-shared condition */
};
_Static_assert(sizeof(struct fx_cond) <= sizeof(pthread_cond_t), "fits glibc's condition");
_Static_assert(offsetof(struct fx_cond, wrefs) == 36, "where glibc keeps __wrefs");

static void cond_wl_lock(struct fx_cond *x)
{
	if (fx_wl_lock(&x->wl))
		fx_wlist_reset(&x->waiters);
}

/*
 * A process-shared condition of ours: a sequence word bumped by every
 * signal and broadcast, which waiters wait on (shared futex); glibc's
 * pshared bit stays set in __wrefs, with our mark next to the sequence.
 */
struct fx_scond {
	_Atomic uint32_t seq;
	int clock;
	uint32_t mark;             /* SCOND_MARK */
	_Atomic uint32_t waiters;  /* in a wait now: a signal with none makes no call */
	char pad[36 - 16];
	unsigned wrefs;
};
_Static_assert(sizeof(struct fx_scond) <= sizeof(pthread_cond_t), "fits glibc's condition");
_Static_assert(offsetof(struct fx_scond, wrefs) == 36, "where glibc keeps __wrefs");
#define SCOND_MARK 0x46585343u

static bool cond_shared(const pthread_cond_t *c)
{
	const struct fx_scond *x = (const struct fx_scond *)c;

	return (x->wrefs & 1) && x->mark == SCOND_MARK;
}

static bool cond_ours(const pthread_cond_t *c)
{
	return fx_sync_ours() && (!(((const struct fx_cond *)c)->wrefs & 1) || cond_shared(c));
}

static int scond_wait(struct fx_scond *x, pthread_mutex_t *m, clockid_t clock, const struct timespec *abs)
{
	uint64_t deadline;
	int err = 0;

	if (fx_deadline(clock, abs, &deadline))
		return EINVAL;
	fx_testcancel();
	struct fx_uthread *u = fx_on_uthread() ? fx_uthread_self() : NULL;
	uint32_t seq = atomic_load(&x->seq);
	atomic_fetch_add(&x->waiters, 1);
	/* the sequence read before the mutex goes: a signal after the unlock changes it */
	err = pthread_mutex_unlock(m);
	if (err) {
		atomic_fetch_sub(&x->waiters, 1);
		return err;
	}
	while (atomic_load(&x->seq) == seq && !(u && fx_cancel_pending(u))) {
		if (shared_wait(&x->seq, seq, deadline) == -ETIMEDOUT) {
			err = ETIMEDOUT;
			break;
		}
	}
	atomic_fetch_sub(&x->waiters, 1);
	pthread_mutex_lock(m);
	/* a cancelled waiter exits holding the mutex, for its cleanup handlers */
	fx_testcancel();
	return err;
}

static void scond_wake(struct fx_scond *x, int n)
{
	atomic_fetch_add(&x->seq, 1);
	if (atomic_load(&x->waiters))
		shared_wake(&x->seq, n);
}

FX_EXPORT int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *attr)
{
	int pshared = PTHREAD_PROCESS_PRIVATE;
	clockid_t clock = CLOCK_REALTIME;

	if (attr) {
		pthread_condattr_getpshared(attr, &pshared);
		pthread_condattr_getclock(attr, &clock);
	}
	if (!fx_sync_ours())
		return REAL(pthread_cond_init)(c, attr);
	memset(c, 0, sizeof(*c));
	((struct fx_cond *)c)->clock = (int)clock;
	if (pshared == PTHREAD_PROCESS_SHARED) {
		((struct fx_scond *)c)->mark = SCOND_MARK;
		((struct fx_scond *)c)->wrefs = 1;
	}
	return 0;
}

FX_EXPORT int pthread_cond_destroy(pthread_cond_t *c)
{
	if (!cond_ours(c))
		return REAL(pthread_cond_destroy)(c);
	return 0;
}

static int cond_wait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock, const struct timespec *abs)
{
	struct fx_cond *x = (struct fx_cond *)c;
	struct fx_waiter w;
	uint64_t deadline;
	int err;

	if (cond_shared(c))
		return scond_wait((struct fx_scond *)c, m, clock, abs);
	if (fx_deadline(clock, abs, &deadline))
		return EINVAL;
	fx_testcancel();
	fx_waiter_init(&w);
	cond_wl_lock(x);
	fx_wlist_push(&x->waiters, &w);
	fx_wl_unlock(&x->wl);
	/* queued before the mutex goes: a signal after the unlock finds us */
	err = pthread_mutex_unlock(m);
	if (err) {
		cond_wl_lock(x);
		fx_wlist_remove(&x->waiters, &w);
		fx_wl_unlock(&x->wl);
		return err;
	}
	if (fx_waiter_sleep_cp(&w, deadline) == -ETIMEDOUT) {
		cond_wl_lock(x);
		fx_wlist_remove(&x->waiters, &w);
		fx_wl_unlock(&x->wl);
		err = ETIMEDOUT;
	}
	pthread_mutex_lock(m);
	/* a cancelled waiter exits holding the mutex, for its cleanup handlers */
	fx_testcancel();
	return err;
}

FX_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	if (!cond_ours(c))
		return REAL(pthread_cond_wait)(c, m);
	return cond_wait(c, m, CLOCK_REALTIME, NULL);
}

FX_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abs)
{
	if (!cond_ours(c))
		return REAL(pthread_cond_timedwait)(c, m, abs);
	return cond_wait(c, m, ((struct fx_cond *)c)->clock, abs);
}

FX_EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
				     const struct timespec *abs)
{
	if (!cond_ours(c))
		return REAL(pthread_cond_clockwait)(c, m, clock, abs);
	if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
		return EINVAL;
	return cond_wait(c, m, clock, abs);
}

FX_EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
	struct fx_cond *x = (struct fx_cond *)c;

	if (!cond_ours(c))
		return REAL(pthread_cond_signal)(c);
	if (cond_shared(c)) {
		scond_wake((struct fx_scond *)c, 1);
		return 0;
	}
	if (!x->waiters.head)
		return 0;
	cond_wl_lock(x);
	struct fx_waiter *w;
	while ((w = fx_wlist_pop(&x->waiters)) && !fx_waiter_wake(w))
		; /* one whose deadline won is not a wake-up: signal the next */
	fx_wl_unlock(&x->wl);
	return 0;
}

FX_EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
	struct fx_cond *x = (struct fx_cond *)c;

	if (!cond_ours(c))
		return REAL(pthread_cond_broadcast)(c);
	if (cond_shared(c)) {
		scond_wake((struct fx_scond *)c, INT_MAX);
		return 0;
	}
	if (!x->waiters.head)
		return 0;
	cond_wl_lock(x);
	struct fx_waiter *w;
	while ((w = fx_wlist_pop(&x->waiters)))
		fx_waiter_wake(w);
	fx_wl_unlock(&x->wl);
	return 0;
}
