/* SPDX-License-Identifier: MIT */
/*
 * Unnamed POSIX semaphores for uthreads (and for any other thread).
 *
 * glibc's would put a whole carrier to sleep in the kernel while the
 * poster may be a uthread of that carrier. Ours keep glibc's size and lay
 * their own state over the object:
 *
 *   offset  0  value word: the value (bits 0-30), QUEUED (bit 31: some
 *              thread waits on the list)
 *   offset  4  wait-list spin lock
 *   offset  8  SEM_MAGIC, where glibc keeps its futex flag (0 or 128), which
 *              its sem_init always writes and nothing changes afterwards
 *   offset 16  wait list
 *
 * Only sem_init (process-private) makes ours; any other semaphore (process-
 * shared ones, named ones from sem_open) has no magic and stays glibc's:
 * those then block their carrier while they wait.
 *
 * sem_post hands its unit straight to the first waiter (the value stays 0),
 * so waking is FIFO and a woken waiter never loses the unit it was woken
 * for; one whose deadline won is skipped and gets nothing. The value is
 * only above 0 while nobody waits.
 *
 * sem_wait, sem_timedwait and sem_clockwait are cancellation points, and
 * a signal handler that interrupts them makes them fail with EINTR, unless
 * it has SA_RESTART (glibc's: its futex wait is restarted then).
 * Errors are -1 and errno, as the semaphore interface has it.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <semaphore.h>
#include <stddef.h>
#include <string.h>

#include "preload/real.h"
#include "preload/cancel.h"
#include "threads/signals.h"
#include "threads/waiter.h"

struct fx_sem {
	_Atomic uint32_t value;
	_Atomic int wl;
	uint32_t magic;
	uint32_t pad;
	struct fx_wlist waiters;
};
_Static_assert(sizeof(struct fx_sem) == sizeof(sem_t), "glibc's semaphore size");
_Static_assert(SEM_VALUE_MAX == 0x7fffffff, "the value fits below QUEUED");

/* The wait-list lock; taken over from a thread a fork left behind, the list is the parent's: emptied. */
static void wl_lock(struct fx_sem *x)
{
	if (fx_wl_lock(&x->wl))
		fx_wlist_reset(&x->waiters);
}

#define SEM_MAGIC  0xF1E85E4Du
#define SEM_VALUE  0x7fffffffu
#define SEM_QUEUED 0x80000000u

static bool ours(const sem_t *s)
{
	return fx_sync_ours() && ((const struct fx_sem *)s)->magic == SEM_MAGIC;
}

static int fail(int err)
{
	errno = err;
	return -1;
}

FX_EXPORT int sem_init(sem_t *s, int pshared, unsigned value)
{
	struct fx_sem *x = (struct fx_sem *)s;

	if (!fx_sync_ours() || pshared)
		return REAL(sem_init)(s, pshared, value);
	if (value > SEM_VALUE_MAX)
		return fail(EINVAL);
	memset(s, 0, sizeof(*s));
	atomic_store_explicit(&x->value, value, memory_order_relaxed);
	x->magic = SEM_MAGIC;
	return 0;
}

FX_EXPORT int sem_destroy(sem_t *s)
{
	if (!ours(s))
		return REAL(sem_destroy)(s);
	return 0; /* as glibc's: destroying a semaphore waited on is undefined */
}

/* Takes a unit if there is one. */
static bool take(struct fx_sem *x)
{
	uint32_t v = atomic_load_explicit(&x->value, memory_order_relaxed);

	while (v & SEM_VALUE)
		if (atomic_compare_exchange_weak_explicit(&x->value, &v, v - 1, memory_order_acquire,
							  memory_order_relaxed))
			return true;
	return false;
}

/* Queues and sleeps until handed a unit (0), or until deadline (ETIMEDOUT). */
static int wait_slow(struct fx_sem *x, uint64_t deadline)
{
	struct fx_waiter w;

	for (;;) {
		fx_waiter_init(&w);
		wl_lock(x);
		uint32_t v = atomic_load(&x->value);
		for (;;) {
			if (v & SEM_VALUE) {
				if (atomic_compare_exchange_weak(&x->value, &v, v - 1)) {
					fx_wl_unlock(&x->wl);
					return 0;
				}
			} else if (deadline != UINT64_MAX && fx_now_ns() >= deadline) {
				fx_wl_unlock(&x->wl);
				return ETIMEDOUT;
			} else if ((v & SEM_QUEUED) || atomic_compare_exchange_weak(&x->value, &v, v | SEM_QUEUED)) {
				break;
			}
		}
		fx_wlist_push(&x->waiters, &w);
		fx_wl_unlock(&x->wl);
		struct fx_uthread *u = w.u;
		int r;
		if (u) {
			/* a signal ends the wait and runs the handler, as one ends glibc's futex wait */
			u->handled = 0;
			r = fx_sig_sleep(&w, deadline, true);
		} else {
			r = fx_waiter_sleep_cp(&w, deadline);
		}
		if (r == 0)
			return 0; /* handed a unit by sem_post */
		/* the deadline, pthread_cancel, or a signal */
		wl_lock(x);
		fx_wlist_remove(&x->waiters, &w);
		if (!x->waiters.head)
			atomic_fetch_and(&x->value, ~SEM_QUEUED);
		fx_wl_unlock(&x->wl);
		fx_testcancel();
		/*
		 * After a handler, glibc's futex wait is EINTR, but an untimed one
		 * is restarted after a handler with SA_RESTART (the kernel's
		 * -ERESTARTSYS; a timed one's -ERESTART_RESTARTBLOCK is EINTR)
		 */
		if (u && u->handled && (u->handled == 2 || deadline != UINT64_MAX))
			return EINTR;
		if (deadline != UINT64_MAX && fx_now_ns() >= deadline)
			return ETIMEDOUT;
		/*
		 * glibc fails with EINTR when a handler without SA_RESTART ended
		 * the wait (even if the handler posted: the unit stays); after one
		 * with SA_RESTART the kernel restarts the futex wait, and so does this.
		 */
		if (u && u->handled == 2)
			return EINTR;
	}
}

static int sem_wait_common(sem_t *s, clockid_t clock, const struct timespec *abs)
{
	struct fx_sem *x = (struct fx_sem *)s;
	uint64_t deadline = UINT64_MAX;

	if (abs && ((clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC) ||
		    fx_deadline(clock, abs, &deadline)))
		return fail(EINVAL);
	fx_testcancel();
	if (take(x))
		return 0;
	int err = wait_slow(x, deadline);
	return err ? fail(err) : 0;
}

FX_EXPORT int sem_wait(sem_t *s)
{
	if (!ours(s))
		return REAL(sem_wait)(s);
	return sem_wait_common(s, CLOCK_REALTIME, NULL);
}

FX_EXPORT int sem_timedwait(sem_t *s, const struct timespec *abs)
{
	if (!ours(s))
		return REAL(sem_timedwait)(s, abs);
	return sem_wait_common(s, CLOCK_REALTIME, abs);
}

FX_EXPORT int sem_clockwait(sem_t *s, clockid_t clock, const struct timespec *abs)
{
	if (!ours(s))
		return REAL(sem_clockwait)(s, clock, abs);
	return sem_wait_common(s, clock, abs);
}

FX_EXPORT int sem_trywait(sem_t *s)
{
	if (!ours(s))
		return REAL(sem_trywait)(s);
	return take((struct fx_sem *)s) ? 0 : fail(EAGAIN);
}

FX_EXPORT int sem_post(sem_t *s)
{
	struct fx_sem *x = (struct fx_sem *)s;

	if (!ours(s))
		return REAL(sem_post)(s);
	uint32_t v = atomic_load_explicit(&x->value, memory_order_relaxed);
	while (!(v & SEM_QUEUED)) {
		if ((v & SEM_VALUE) == SEM_VALUE_MAX)
			return fail(EOVERFLOW);
		/* release: pairs with the acquire of the taker */
		if (atomic_compare_exchange_weak_explicit(&x->value, &v, v + 1, memory_order_release,
							  memory_order_relaxed))
			return 0;
	}
	wl_lock(x);
	struct fx_waiter *w;
	while ((w = fx_wlist_pop(&x->waiters))) {
		bool last = !x->waiters.head;
		if (last)
			atomic_fetch_and(&x->value, ~SEM_QUEUED);
		if (fx_waiter_wake(w)) {
			fx_wl_unlock(&x->wl);
			return 0; /* handed over: the value stays */
		}
		/* its deadline won: the next one */
	}
	/* nobody left to hand it to */
	v = atomic_load(&x->value);
	for (;;) {
		if ((v & SEM_VALUE) == SEM_VALUE_MAX) {
			fx_wl_unlock(&x->wl);
			return fail(EOVERFLOW);
		}
		if (atomic_compare_exchange_weak(&x->value, &v, (v & ~SEM_QUEUED) + 1))
			break;
	}
	fx_wl_unlock(&x->wl);
	return 0;
}

FX_EXPORT int sem_getvalue(sem_t *restrict s, int *restrict sval)
{
	if (!ours(s))
		return REAL(sem_getvalue)(s, sval);
	*sval = (int)(atomic_load(&((struct fx_sem *)s)->value) & SEM_VALUE);
	return 0;
}
