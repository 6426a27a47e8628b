/* SPDX-License-Identifier: MIT */
/*
 * Futexes a program calls itself (syscall(SYS_futex, ...)), for uthreads.
 *
 * Programs with their own locks (MariaDB's InnoDB, for one) wait on a
 * futex word with FUTEX_WAIT. Passed to the kernel, that blocks the whole
 * carrier, and with it the uthread that would release the lock: a
 * deadlock with one carrier, lost parallelism with more. So private
 * futexes of uthreads are kept here: a hash of wait lists keyed by the
 * word's address; a waiter checks the word under its bucket's lock and
 * parks (the carrier runs others); a waker takes waiters off the list.
 *
 * What stays with the kernel: shared futexes (another process may wake
 * them), the PI and WAKE_OP operations, and calls from anything that is
 * not a uthread. A wake that finds fewer waiters here than it may wake
 * also asks the kernel, so a thread parked there (a uthread waiting from
 * a signal handler, a kernel thread) is not left behind. Waits end early
 * with EINTR when a signal handler runs for the uthread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>

#include "threads/rt.h"
#include "threads/signals.h"
#include "threads/ufutex.h"
#include "threads/waiter.h"

#define NBUCKETS 512

struct ufw {
	struct fx_waiter w; /* first: the wait lists link fx_waiters */
	const _Atomic uint32_t *_Atomic addr; /* changed by a requeue, under both buckets' locks */
	uint32_t bitset;
};

static struct bucket {
	_Alignas(FX_CACHELINE) _Atomic int lock;
	struct fx_wlist waiters;
} buckets[NBUCKETS];

static struct bucket *bucket_of(const void *addr)
{
	uintptr_t a = (uintptr_t)addr;

	return &buckets[((a >> 2) ^ (a >> 11)) % NBUCKETS];
}

static long wait_on(const _Atomic uint32_t *addr, uint32_t val, uint32_t bitset, uint64_t deadline)
{
	struct bucket *b = bucket_of(addr);
	struct ufw me = { .addr = addr, .bitset = bitset };

	fx_waiter_init(&me.w);
	fx_spin_lock(&b->lock);
	if (atomic_load(addr) != val) {
		fx_spin_unlock(&b->lock);
		return -EAGAIN;
	}
	fx_wlist_push(&b->waiters, &me.w);
	fx_spin_unlock(&b->lock);
	int r = fx_sig_sleep(&me.w, deadline, false);
	/* off whichever list holds it now: a requeue moves it (under both locks) */
	for (;;) {
		b = bucket_of(atomic_load_explicit(&me.addr, memory_order_relaxed));
		fx_spin_lock(&b->lock);
		if (b == bucket_of(atomic_load_explicit(&me.addr, memory_order_relaxed)))
			break;
		fx_spin_unlock(&b->lock);
	}
	fx_wlist_remove(&b->waiters, &me.w);
	fx_spin_unlock(&b->lock);
	return r;
}

/* Locks b and b2 (may be the same bucket) in address order. */
static void lock_pair(struct bucket *b, struct bucket *b2)
{
	if (!b2 || b2 == b) {
		fx_spin_lock(&b->lock);
	} else {
		fx_spin_lock(b < b2 ? &b->lock : &b2->lock);
		fx_spin_lock(b < b2 ? &b2->lock : &b->lock);
	}
}

static void unlock_pair(struct bucket *b, struct bucket *b2)
{
	if (b2 && b2 != b)
		fx_spin_unlock(&b2->lock);
	fx_spin_unlock(&b->lock);
}

/* Wakes up to n waiters on addr whose bitset meets bitset; moves up to n2 more to addr2 if set. */
static long wake(const _Atomic uint32_t *addr, int n, uint32_t bitset, const _Atomic uint32_t *addr2, int n2)
{
	struct bucket *b = bucket_of(addr), *b2 = addr2 ? bucket_of(addr2) : NULL;
	long woken = 0, requeued = 0;

	lock_pair(b, b2);
	for (struct fx_waiter *p = b->waiters.head, *next; p && (woken < n || (b2 && requeued < n2)); p = next) {
		struct ufw *w = (struct ufw *)p;
		next = p->next;
		if (atomic_load_explicit(&w->addr, memory_order_relaxed) != addr || !(w->bitset & bitset))
			continue;
		fx_wlist_remove(&b->waiters, p);
		if (woken < n) {
			/* woken under the lock: once off the list, the waiter may return and go */
			if (fx_waiter_wake(p))
				woken++;
		} else {
			atomic_store_explicit(&w->addr, addr2, memory_order_relaxed);
			fx_wlist_push(&b2->waiters, p);
			requeued++;
		}
	}
	unlock_pair(b, b2);
	if (woken < n) {
		long k = fx_raw_syscall6(SYS_futex, (long)addr, FUTEX_WAKE_BITSET | FUTEX_PRIVATE_FLAG,
					 n - woken, 0, 0, (long)bitset);
		woken += k > 0 ? k : 0;
	}
	return woken + requeued;
}

/* A relative timeout (FUTEX_WAIT) or an absolute one on the op's clock (FUTEX_WAIT_BITSET). */
static int deadline_of(const struct timespec *ts, bool absolute, bool realtime, uint64_t *deadline)
{
	if (!ts) {
		*deadline = UINT64_MAX;
		return 0;
	}
	if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000L)
		return -EINVAL;
	if (absolute)
		return fx_deadline(realtime ? CLOCK_REALTIME : CLOCK_MONOTONIC, ts, deadline);
	*deadline = fx_deadline_after(ts);
	return 0;
}

bool fx_ufutex_call(const long *a, long *ret)
{
	const _Atomic uint32_t *addr = (const _Atomic uint32_t *)a[0];
	int op = (int)a[1], cmd = op & FUTEX_CMD_MASK;
	bool realtime = op & FUTEX_CLOCK_REALTIME;
	uint64_t deadline;
	int err;

	if (!(op & FUTEX_PRIVATE_FLAG))
		return false;
	if ((uintptr_t)addr & 3) {
		*ret = -EINVAL;
		return true;
	}
	switch (cmd) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET: {
		uint32_t bitset = cmd == FUTEX_WAIT ? FUTEX_BITSET_MATCH_ANY : (uint32_t)a[5];
		if (bitset == 0 || (realtime && cmd == FUTEX_WAIT)) {
			*ret = -EINVAL; /* FUTEX_WAIT with CLOCK_REALTIME: the kernel says ENOSYS on old, EINVAL since 4.5 */
			return true;
		}
		err = deadline_of((const struct timespec *)a[3], cmd == FUTEX_WAIT_BITSET, realtime, &deadline);
		*ret = err ? err : wait_on(addr, (uint32_t)a[2], bitset, deadline);
		return true;
	}
	case FUTEX_WAKE:
	case FUTEX_WAKE_BITSET: {
		uint32_t bitset = cmd == FUTEX_WAKE ? FUTEX_BITSET_MATCH_ANY : (uint32_t)a[5];
		if (bitset == 0) {
			*ret = -EINVAL;
			return true;
		}
		*ret = wake(addr, a[2] < 0 ? INT_MAX : (int)a[2], bitset, NULL, 0);
		return true;
	}
	case FUTEX_REQUEUE:
	case FUTEX_CMP_REQUEUE: {
		const _Atomic uint32_t *addr2 = (const _Atomic uint32_t *)a[4];
		if ((int)a[2] < 0 || (int)a[3] < 0 || ((uintptr_t)addr2 & 3)) {
			*ret = -EINVAL;
			return true;
		}
		if (cmd == FUTEX_CMP_REQUEUE && atomic_load(addr) != (uint32_t)a[5]) {
			/* the kernel compares under its lock; a racing waker is serialised by the word anyway */
			*ret = -EAGAIN;
			return true;
		}
		*ret = wake(addr, (int)a[2], FUTEX_BITSET_MATCH_ANY, addr2, (int)a[3]);
		return true;
	}
	}
	return false;
}

void fx_ufutex_after_fork_child(void)
{
	for (unsigned i = 0; i < NBUCKETS; i++) {
		atomic_store(&buckets[i].lock, 0);
		fx_wlist_reset(&buckets[i].waiters);
	}
}
