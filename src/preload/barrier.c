/* SPDX-License-Identifier: MIT */
/*
 * Barriers for uthreads (and for any other thread).
 *
 * glibc's would put a whole carrier to sleep in the kernel while the
 * threads it waits for may be uthreads of that carrier. Ours keep glibc's
 * size and lay their own state over the object:
 *
 *   offset  0  wait-list spin lock
 *   offset  4  threads arrived in the current round
 *   offset  8  count
 *   offset 12  BARRIER_MAGIC (glibc keeps its futex flag there: 0 or 128)
 *   offset 16  wait list
 *
 * Barriers have no static initialiser, so pthread_barrier_init decides:
 * the magic marks ours; process-shared barriers are glibc's (and block
 * their carrier while they wait).
 *
 * The thread that completes a round takes the whole wait list, resets the
 * barrier under the wait-list lock (so it serves the next round at once)
 * and wakes the others after letting go of it: it alone returns
 * PTHREAD_BARRIER_SERIAL_THREAD. Nobody touches the barrier after that,
 * so it may be destroyed as soon as any thread returns from the round.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "preload/real.h"
#include "threads/waiter.h"

struct fx_barrier {
	_Atomic int wl;
	unsigned arrived;
	unsigned count;
	uint32_t magic;
	struct fx_wlist waiters;
};
_Static_assert(sizeof(struct fx_barrier) == sizeof(pthread_barrier_t), "glibc's barrier size");

/* The wait-list lock; taken over from a thread a fork left behind, the list is the parent's: emptied. */
static void wl_lock(struct fx_barrier *x)
{
	if (fx_wl_lock(&x->wl))
		fx_wlist_reset(&x->waiters);
}

#define BARRIER_MAGIC 0xF1E8BA77u

static bool ours(const pthread_barrier_t *b)
{
	return fx_sync_ours() && ((const struct fx_barrier *)b)->magic == BARRIER_MAGIC;
}

FX_EXPORT int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *attr,
				   unsigned count)
{
	int pshared = PTHREAD_PROCESS_PRIVATE;
	struct fx_barrier *x = (struct fx_barrier *)b;

	if (attr)
		pthread_barrierattr_getpshared(attr, &pshared);
	if (!fx_sync_ours() || pshared == PTHREAD_PROCESS_SHARED)
		return REAL(pthread_barrier_init)(b, attr, count);
	if (count == 0 || count >= INT_MAX) /* glibc's bound */
		return EINVAL;
	memset(b, 0, sizeof(*b));
	x->count = count;
	x->magic = BARRIER_MAGIC;
	return 0;
}

FX_EXPORT int pthread_barrier_destroy(pthread_barrier_t *b)
{
	struct fx_barrier *x = (struct fx_barrier *)b;
	int err = 0;

	if (!ours(b))
		return REAL(pthread_barrier_destroy)(b);
	/* the lock: the thread that ended the last round may still be letting go of it */
	wl_lock(x);
	if (x->arrived)
		err = EBUSY;
	else
		x->magic = 0;
	fx_wl_unlock(&x->wl);
	return err;
}

FX_EXPORT int pthread_barrier_wait(pthread_barrier_t *b)
{
	struct fx_barrier *x = (struct fx_barrier *)b;
	struct fx_waiter w, *round;

	if (!ours(b))
		return REAL(pthread_barrier_wait)(b);
	fx_waiter_init(&w);
	wl_lock(x);
	if (++x->arrived < x->count) {
		fx_wlist_push(&x->waiters, &w);
		fx_wl_unlock(&x->wl);
		fx_waiter_sleep(&w, UINT64_MAX); /* no deadline, not a cancellation point */
		return 0;
	}
	round = x->waiters.head;
	x->waiters.head = x->waiters.tail = NULL;
	x->arrived = 0;
	fx_wl_unlock(&x->wl);
	while (round) {
		struct fx_waiter *next = round->next; /* before the wake: its waiter then goes */
		fx_waiter_wake(round);
		round = next;
	}
	return PTHREAD_BARRIER_SERIAL_THREAD;
}
