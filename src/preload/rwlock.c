/* SPDX-License-Identifier: MIT */
/*
 * Read-write locks for uthreads (and for any other thread).
 *
 * As with mutexes (mutex.c), glibc's own would put a whole carrier to
 * sleep in the kernel while the holder may be a uthread of that carrier.
 * Ours keep glibc's size and its static initialisers and lay their state
 * over the object:
 *
 *   offset  0  state word: readers (bits 0-29), WRITER (bit 30),
 *              QUEUED (bit 31: some thread waits on a list below)
 *   offset  4  wait-list spin lock
 *   offset  8  readers' wait list
 *   offset 24  id of the writer holding it (EDEADLK, unlock)
 *   offset 28  glibc's __shared: 0 here, 1 for a process-shared lock
 *   offset 32  writers' wait list
 *   offset 48  glibc's __flags: the kind
 *
 * PTHREAD_RWLOCK_INITIALIZER is all zero: free, reader-preferring.
 * PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP sets only __flags to
 * PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP. As in glibc, that is the
 * only writer-preferring kind: PTHREAD_RWLOCK_PREFER_WRITER_NP behaves as
 * PREFER_READER_NP. Reader-preferring: a reader gets in whenever no writer
 * holds the lock. Writer-preferring: not while a writer waits (so a reader
 * that already holds it and relocks may deadlock, as in glibc).
 *
 * Fast paths are one compare-and-swap on the state word while nobody
 * waits. A thread that must wait queues a waiter under the wait-list lock
 * and sleeps (fx_waiter_sleep). Whatever may let waiters in (an unlock, a
 * waiter giving up on its deadline) grants the lock to them under the
 * wait-list lock: the state word is changed on their behalf before they
 * are woken, and undone if fx_waiter_wake reports that the waiter's
 * deadline won, so a woken waiter owns what it waited for and one that
 * timed out owns nothing.
 *
 * Process-shared locks (glibc's __shared) are left to glibc, and then
 * block their carrier while they wait.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/real.h"
#include "threads/waiter.h"

struct fx_rwlock {
	_Atomic uint32_t state;
	_Atomic int wl;
	struct fx_wlist readers;
	_Atomic int writer;
	int shared;          /* glibc's __shared */
	struct fx_wlist writers;
	unsigned flags;      /* glibc's __flags */
	unsigned pad;
};
_Static_assert(sizeof(struct fx_rwlock) == sizeof(pthread_rwlock_t), "glibc's rwlock size");
_Static_assert(offsetof(struct fx_rwlock, shared) == offsetof(pthread_rwlock_t, __data.__shared),
	       "shared where glibc keeps __shared");
_Static_assert(offsetof(struct fx_rwlock, flags) == offsetof(pthread_rwlock_t, __data.__flags),
	       "kind where glibc keeps __flags");

/* The wait-list lock; taken over from a thread a fork left behind, the lists are the parent's: emptied. */
static void wl_lock(struct fx_rwlock *x)
{
	if (fx_wl_lock(&x->wl)) {
		fx_wlist_reset(&x->readers);
		fx_wlist_reset(&x->writers);
	}
}

#define RW_READERS 0x3fffffffu
#define RW_WRITER  0x40000000u
#define RW_QUEUED  0x80000000u

enum { WANT_READ = 0, WANT_WRITE = 1 };

/* An id for the calling thread: a uthread's, or minus the kernel thread id (as mutex.c). */
static int self_id(void)
{
	static __thread int tid;
	struct fx_uthread *u = fx_uthread_self();

	if (u)
		return u->id ? u->id : -1;
	if (!tid)
		tid = (int)syscall(SYS_gettid);
	return -tid - 1;
}

static bool ours(const pthread_rwlock_t *l)
{
	return fx_sync_ours() && !((const struct fx_rwlock *)l)->shared;
}

static bool prefer_writer(const struct fx_rwlock *x)
{
	return x->flags == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP;
}

/*
 * Under the wait-list lock: lets in the waiters that may now have the
 * lock, and clears QUEUED once nobody waits. QUEUED stays set while
 * granting, so no fast path races with the state changes made here.
 */
static void grant(struct fx_rwlock *x)
{
	bool pw = prefer_writer(x);

	for (;;) {
		uint32_t s = atomic_load(&x->state);
		struct fx_waiter *w;

		if (s & RW_WRITER)
			break;
		if (x->writers.head && !(s & RW_READERS) && (pw || !x->readers.head)) {
			w = fx_wlist_pop(&x->writers);
			atomic_fetch_or(&x->state, RW_WRITER);
			if (fx_waiter_wake(w))
				break; /* a writer: nobody else gets in */
			atomic_fetch_and(&x->state, ~RW_WRITER); /* its deadline won */
			continue;
		}
		if (x->readers.head && (!pw || !x->writers.head) && (s & RW_READERS) < RW_READERS) {
			w = fx_wlist_pop(&x->readers);
			atomic_fetch_add(&x->state, 1);
			if (!fx_waiter_wake(w))
				atomic_fetch_sub(&x->state, 1);
			continue;
		}
		break;
	}
	if (!x->readers.head && !x->writers.head)
		atomic_fetch_and(&x->state, ~RW_QUEUED);
}

/* May a reader get in, in state s? (Under the wait-list lock for the writers' list.) */
static bool read_ok(struct fx_rwlock *x, uint32_t s)
{
	return !(s & RW_WRITER) && (!prefer_writer(x) || !x->writers.head);
}

/*
 * The contended path of both modes: takes the lock, or queues and sleeps
 * until granted it or until deadline. try: never sleeps (EBUSY).
 */
static int lock_slow(struct fx_rwlock *x, int want, bool try, uint64_t deadline)
{
	struct fx_waiter w;
	int err = 0;

	fx_waiter_init(&w);
	w.data = (uintptr_t)want;
	wl_lock(x);
	for (;;) {
		uint32_t s = atomic_load(&x->state), n;

		if (want == WANT_READ ? read_ok(x, s) : !(s & (RW_WRITER | RW_READERS))) {
			if (want == WANT_READ && (s & RW_READERS) == RW_READERS) {
				err = EAGAIN; /* as many readers as the word counts */
				break;
			}
			n = want == WANT_READ ? s + 1 : s | RW_WRITER;
			if (atomic_compare_exchange_strong(&x->state, &s, n))
				break;
			continue;
		}
		if (try) {
			err = EBUSY;
			break;
		}
		if (deadline != UINT64_MAX && fx_now_ns() >= deadline) {
			err = ETIMEDOUT;
			break;
		}
		if ((s & RW_QUEUED) || atomic_compare_exchange_strong(&x->state, &s, s | RW_QUEUED)) {
			fx_wlist_push(want == WANT_READ ? &x->readers : &x->writers, &w);
			fx_wl_unlock(&x->wl);
			if (fx_waiter_sleep(&w, deadline) == 0)
				return 0; /* granted: the state word already counts us */
			wl_lock(x);
			fx_wlist_remove(want == WANT_READ ? &x->readers : &x->writers, &w);
			grant(x); /* a writer that leaves may let readers in */
			fx_wl_unlock(&x->wl);
			return ETIMEDOUT;
		}
	}
	fx_wl_unlock(&x->wl);
	return err;
}

static int rdlock(pthread_rwlock_t *l, bool try, clockid_t clock, const struct timespec *abs)
{
	struct fx_rwlock *x = (struct fx_rwlock *)l;
	uint64_t deadline = UINT64_MAX;

	/* glibc's order: the time first, then the deadlock */
	if (abs && ((clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC) ||
		    fx_deadline(clock, abs, &deadline)))
		return EINVAL;
	int writer = atomic_load_explicit(&x->writer, memory_order_relaxed);
	if (!try && writer && writer == self_id())
		return EDEADLK;
	uint32_t s = atomic_load_explicit(&x->state, memory_order_relaxed);
	if (!(s & (RW_WRITER | RW_QUEUED)) && (s & RW_READERS) < RW_READERS &&
	    atomic_compare_exchange_strong_explicit(&x->state, &s, s + 1, memory_order_acquire,
						    memory_order_relaxed))
		return 0;
	return lock_slow(x, WANT_READ, try, deadline);
}

static int wrlock(pthread_rwlock_t *l, bool try, clockid_t clock, const struct timespec *abs)
{
	struct fx_rwlock *x = (struct fx_rwlock *)l;
	uint64_t deadline = UINT64_MAX;
	int me = self_id(), err;

	if (abs && ((clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC) ||
		    fx_deadline(clock, abs, &deadline)))
		return EINVAL;
	if (!try && atomic_load_explicit(&x->writer, memory_order_relaxed) == me)
		return EDEADLK;
	uint32_t s = 0;
	if (!atomic_compare_exchange_strong_explicit(&x->state, &s, RW_WRITER, memory_order_acquire,
						     memory_order_relaxed)) {
		err = lock_slow(x, WANT_WRITE, try, deadline);
		if (err)
			return err;
	}
	atomic_store_explicit(&x->writer, me, memory_order_relaxed);
	return 0;
}

FX_EXPORT int pthread_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *attr)
{
	int pshared = PTHREAD_PROCESS_PRIVATE, kind = PTHREAD_RWLOCK_DEFAULT_NP;

	if (attr) {
		pthread_rwlockattr_getpshared(attr, &pshared);
		pthread_rwlockattr_getkind_np(attr, &kind);
	}
	if (!fx_sync_ours() || pshared == PTHREAD_PROCESS_SHARED)
		return REAL(pthread_rwlock_init)(l, attr);
	memset(l, 0, sizeof(*l));
	((struct fx_rwlock *)l)->flags = (unsigned)kind;
	return 0;
}

FX_EXPORT int pthread_rwlock_destroy(pthread_rwlock_t *l)
{
	if (!ours(l))
		return REAL(pthread_rwlock_destroy)(l);
	return 0; /* as glibc's: destroying a lock in use is undefined */
}

FX_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	if (!ours(l))
		return REAL(pthread_rwlock_rdlock)(l);
	return rdlock(l, false, CLOCK_REALTIME, NULL);
}

FX_EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	if (!ours(l))
		return REAL(pthread_rwlock_tryrdlock)(l);
	return rdlock(l, true, CLOCK_REALTIME, NULL);
}

FX_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abs)
{
	if (!ours(l))
		return REAL(pthread_rwlock_timedrdlock)(l, abs);
	return rdlock(l, false, CLOCK_REALTIME, abs);
}

FX_EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t clock, const struct timespec *abs)
{
	if (!ours(l))
		return REAL(pthread_rwlock_clockrdlock)(l, clock, abs);
	return rdlock(l, false, clock, abs);
}

FX_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	if (!ours(l))
		return REAL(pthread_rwlock_wrlock)(l);
	return wrlock(l, false, CLOCK_REALTIME, NULL);
}

FX_EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
	if (!ours(l))
		return REAL(pthread_rwlock_trywrlock)(l);
	return wrlock(l, true, CLOCK_REALTIME, NULL);
}

FX_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *abs)
{
	if (!ours(l))
		return REAL(pthread_rwlock_timedwrlock)(l, abs);
	return wrlock(l, false, CLOCK_REALTIME, abs);
}

FX_EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clock, const struct timespec *abs)
{
	if (!ours(l))
		return REAL(pthread_rwlock_clockwrlock)(l, clock, abs);
	return wrlock(l, false, clock, abs);
}

FX_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	struct fx_rwlock *x = (struct fx_rwlock *)l;

	if (!ours(l))
		return REAL(pthread_rwlock_unlock)(l);
	int writer = atomic_load_explicit(&x->writer, memory_order_relaxed);
	if (writer && writer == self_id()) {
		uint32_t s = RW_WRITER;
		atomic_store_explicit(&x->writer, 0, memory_order_relaxed);
		/* release: pairs with the acquire of the next locker */
		if (atomic_compare_exchange_strong_explicit(&x->state, &s, 0, memory_order_release,
							    memory_order_relaxed))
			return 0;
		wl_lock(x);
		atomic_fetch_and(&x->state, ~RW_WRITER);
		grant(x);
		fx_wl_unlock(&x->wl);
		return 0;
	}
	uint32_t s = atomic_load_explicit(&x->state, memory_order_relaxed);
	for (;;) {
		if (!(s & RW_READERS) || (s & RW_WRITER))
			return EPERM; /* not held for reading (glibc does not check) */
		if ((s & RW_READERS) == 1 && (s & RW_QUEUED))
			break; /* the last reader, with waiters: let them in */
		if (atomic_compare_exchange_weak_explicit(&x->state, &s, s - 1, memory_order_release,
							  memory_order_relaxed))
			return 0;
	}
	wl_lock(x);
	atomic_fetch_sub(&x->state, 1);
	grant(x);
	fx_wl_unlock(&x->wl);
	return 0;
}
