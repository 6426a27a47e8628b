/* SPDX-License-Identifier: MIT */
/*
 * Waiters and timers: how every blocking primitive of the runtime sleeps.
 *
 * A waiter lives on the sleeping thread's stack and goes on the wait list
 * of whatever it waits for (a mutex, a condition, a semaphore). Two kinds
 * of thread can wait: a uthread, which blocks in user space (fx_block), and
 * a plain kernel thread (the runtime's own, glibc's helper threads), which
 * sleeps on a futex in the waiter. A waiter ends exactly once: the state
 * word goes from WAITING to WOKEN (a waker that unlinked it) or to TIMEDOUT
 * (its deadline passed) with a compare-and-swap, and only the winner wakes
 * the thread.
 *
 * Deadlines of uthreads sit on their carrier's timer list, sorted; the
 * carrier fires expired ones whenever it looks for work, and sleeps no
 * longer than the earliest one. When the monitor hands the core of a
 * carrier blocked in a system call to a spare, its timers go with the
 * core (fx_timers_move).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "threads/rt.h"
#include "threads/waiter.h"

unsigned fx_fork_gen;
_Atomic unsigned *fx_fork_mark;

void fx_fork_mark_init(void)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	if (fx_fork_mark)
		return;
	p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	if (madvise(p, (size_t)page, MADV_WIPEONFORK)) {
		munmap(p, (size_t)page); /* before Linux 4.14: the atfork handler bumps the generation */
		return;
	}
	atomic_store((_Atomic unsigned *)p, 1);
	fx_fork_mark = p;
}

/*
 * In a fork child, at its first look. Only the forking thread runs then,
 * unless a child made threads before any of them looked (no runtime, so
 * no atfork handler looked first): the lock next to the mark, wiped with
 * it, makes sure the generation moves once.
 */
void fx_fork_noticed(void)
{
	_Atomic int *lock = (_Atomic int *)(fx_fork_mark + 1);

	fx_spin_lock(lock);
	if (!atomic_load(fx_fork_mark)) {
		fx_fork_gen++;
		atomic_store(fx_fork_mark, 1); /* after the generation: fx_gen loads them in that order */
	}
	fx_spin_unlock(lock);
}

bool fx_wl_lock_slow(_Atomic int *l, int stamp)
{
	for (;;) {
		int v = atomic_load_explicit(l, memory_order_relaxed);
		if (v == stamp) {
			__builtin_ia32_pause();
			continue;
		}
		/* free, or held by a thread of an ancestor process: gone, it never lets go */
		if (atomic_compare_exchange_weak_explicit(l, &v, stamp, memory_order_acquire,
							  memory_order_relaxed))
			return v != 0;
	}
}

void fx_waiter_init(struct fx_waiter *w)
{
	w->fork_gen = fx_gen();
	w->next = NULL;
	w->tnext = NULL;
	/*
	 * Inside the runtime (the scheduler, the library under it) nothing may
	 * switch user threads: a lock taken there blocks the carrier in the
	 * kernel, like any thread that is not a uthread.
	 */
	struct fx_carrier *c = fx_carrier_self();
	w->u = c && !c->in_rt && !fx_in_handler(c) ? c->current : NULL;
	w->carrier = NULL;
	atomic_store_explicit(&w->state, FX_W_WAITING, memory_order_relaxed);
	atomic_store_explicit(&w->futex, 0, memory_order_relaxed);
}

static void timer_add(struct fx_carrier *c, struct fx_waiter *w)
{
	fx_spin_lock(&c->timer_lock);
	struct fx_waiter **pp = &c->timers;
	while (*pp && (*pp)->deadline <= w->deadline)
		pp = &(*pp)->tnext;
	w->tnext = *pp;
	*pp = w;
	atomic_store_explicit(&w->carrier, c, memory_order_relaxed);
	fx_spin_unlock(&c->timer_lock);
}

static void timer_remove(struct fx_waiter *w)
{
	for (;;) {
		/* acquire: pairs with the release in fx_timers_fire, its last touch of w */
		struct fx_carrier *c = atomic_load_explicit(&w->carrier, memory_order_acquire);

		if (!c)
			return;
		fx_spin_lock(&c->timer_lock);
		/* moved to another carrier's list meanwhile (fx_timers_move): look there */
		if (atomic_load_explicit(&w->carrier, memory_order_relaxed) != c) {
			fx_spin_unlock(&c->timer_lock);
			continue;
		}
		for (struct fx_waiter **pp = &c->timers; *pp; pp = &(*pp)->tnext) {
			if (*pp == w) {
				*pp = w->tnext;
				break;
			}
		}
		atomic_store_explicit(&w->carrier, NULL, memory_order_relaxed);
		fx_spin_unlock(&c->timer_lock);
		return;
	}
}

/*
 * Moves every timer of from onto to's list: from's core was handed to to
 * (the monitor, monitor.c), and from is blocked in a system call, so it would
 * fire them only once the call returns. Only the monitor holds two timer
 * locks at once, so taking from's and then to's cannot deadlock.
 */
void fx_timers_move(struct fx_carrier *from, struct fx_carrier *to)
{
	if (from == to || !__atomic_load_n(&from->timers, __ATOMIC_RELAXED))
		return;
	fx_spin_lock(&from->timer_lock);
	fx_spin_lock(&to->timer_lock);
	/* a merge of two sorted lists */
	struct fx_waiter *a = from->timers, *b = to->timers, *head = NULL, **tail = &head;
	while (a || b) {
		struct fx_waiter **pick = !b || (a && a->deadline < b->deadline) ? &a : &b;
		struct fx_waiter *w = *pick;
		*pick = w->tnext;
		atomic_store_explicit(&w->carrier, to, memory_order_relaxed);
		*tail = w;
		tail = &w->tnext;
	}
	*tail = NULL;
	to->timers = head;
	from->timers = NULL;
	fx_spin_unlock(&to->timer_lock);
	fx_spin_unlock(&from->timer_lock);
}

/* On carrier c: wakes the uthreads whose deadline has passed. */
void fx_timers_fire(struct fx_carrier *c)
{
	if (!c->timers)
		return;
	uint64_t now = fx_now_ns();
	for (;;) {
		fx_spin_lock(&c->timer_lock);
		struct fx_waiter *w = c->timers;
		if (!w || w->deadline > now) {
			fx_spin_unlock(&c->timer_lock);
			return;
		}
		c->timers = w->tnext;
		int expect = FX_W_WAITING;
		struct fx_uthread *u = w->u;
		bool won = atomic_compare_exchange_strong(&w->state, &expect, FX_W_TIMEDOUT);
		/*
		 * release, and the last touch of w: a sleeper woken by someone else
		 * waits in timer_remove until this, then may leave (w is on its stack)
		 */
		atomic_store_explicit(&w->carrier, NULL, memory_order_release);
		fx_spin_unlock(&c->timer_lock);
		if (won)
			fx_uthread_wake(u);
	}
}

/* The earliest deadline on c's timer list, or UINT64_MAX. */
uint64_t fx_timers_next(struct fx_carrier *c)
{
	uint64_t d = UINT64_MAX;

	if (c->timers) {
		fx_spin_lock(&c->timer_lock);
		if (c->timers)
			d = c->timers->deadline;
		fx_spin_unlock(&c->timer_lock);
	}
	return d;
}

/*
 * A uthread's sleep: until a waker or the deadline ends w. A signal for it
 * (fx_waiter_signal) wakes it with w SIGNALLED and still on its wait list:
 * it runs its handlers and sleeps again, so a handler runs on a thread
 * blocked on a mutex, rwlock, barrier, condition or join, and the wait
 * goes on as POSIX has it, without EINTR. A waker that ends w meanwhile
 * makes it WOKEN without waking the thread (it is running); the deadline
 * and a cancellation are looked at before it sleeps again.
 */
static void uthread_sleep(struct fx_waiter *w, uint64_t deadline)
{
	struct fx_uthread *u = w->u;

	fx_spin_lock(&u->cancel_lock);
	u->park_waiter = w;
	fx_spin_unlock(&u->cancel_lock);
	for (;;) {
		/* seq_cst, then the pending signals: pairs with to_uthread's store, then state load */
		atomic_store(&u->state, FX_U_BLOCKED);
		int expect = FX_W_WAITING;
		/* an interruptible wait (fx_sig_sleep) ends for a signal instead */
		int to = u->intr_waiter == w ? FX_W_TIMEDOUT : FX_W_SIGNALLED;
		if (fx_sig_due(u) &&
		    atomic_compare_exchange_strong(&w->state, &expect, to)) {
			/* a signal came before the sleep: nobody wakes u for it */
			atomic_store(&u->state, FX_U_RUNNING); /* seq_cst: see fx_interrupt_in_place */
		} else {
			if (deadline != UINT64_MAX)
				timer_add(fx_carrier_self(), w);
			fx_block();
			timer_remove(w);
		}
		if (atomic_load(&w->state) != FX_W_SIGNALLED)
			break;
		fx_raise_pending(); /* the handlers, on u (if finish_switch has not raised them) */
		expect = FX_W_SIGNALLED;
		if ((deadline != UINT64_MAX && fx_now_ns() >= deadline) ||
		    (u->cancel_waiter == w && fx_cancel_pending(u))) {
			if (atomic_compare_exchange_strong(&w->state, &expect, FX_W_TIMEDOUT))
				break;
		} else if (atomic_compare_exchange_strong(&w->state, &expect, FX_W_WAITING)) {
			/* waits again; a cancellation that found it SIGNALLED is seen here */
			expect = FX_W_WAITING;
			if (u->cancel_waiter == w && fx_cancel_pending(u) &&
			    atomic_compare_exchange_strong(&w->state, &expect, FX_W_TIMEDOUT))
				break;
			continue; /* also when a waker won: its wake is taken by fx_block */
		}
		break; /* a waker ended it while the handler ran: WOKEN, u was not woken */
	}
	fx_spin_lock(&u->cancel_lock);
	u->park_waiter = NULL;
	fx_spin_unlock(&u->cancel_lock);
}

bool fx_waiter_signal(struct fx_uthread *u)
{
	bool won = false;

	/* under the lock: the sleeper clears park_waiter under it before w goes away */
	fx_spin_lock(&u->cancel_lock);
	struct fx_waiter *w = u->park_waiter;
	if (w) {
		int expect = FX_W_WAITING;
		won = atomic_compare_exchange_strong(&w->state, &expect, FX_W_SIGNALLED);
	}
	fx_spin_unlock(&u->cancel_lock);
	if (won)
		fx_uthread_wake(u);
	return won;
}

/*
 * Sleeps until a waker ends w, or until deadline (CLOCK_MONOTONIC ns,
 * UINT64_MAX for none). The caller has put w where its waker finds it and
 * let go of that list's lock. Returns 0 when woken, -ETIMEDOUT when the
 * deadline won: the caller must then take w off its list (it may already
 * be off, if a waker unlinked it and lost the race).
 */
int fx_waiter_sleep(struct fx_waiter *w, uint64_t deadline)
{
	w->deadline = deadline;
	if (w->u) {
		uthread_sleep(w, deadline);
	} else {
		/* the futex word, not the state: a waker is done with w only once it set it */
		while (!atomic_load(&w->futex)) {
			struct timespec rel, *relp = NULL;
			if (deadline != UINT64_MAX) {
				uint64_t now = fx_now_ns();
				int expect = FX_W_WAITING;
				if (now >= deadline &&
				    atomic_compare_exchange_strong(&w->state, &expect, FX_W_TIMEDOUT))
					break;
				if (now < deadline) {
					rel.tv_sec = (time_t)((deadline - now) / 1000000000u);
					rel.tv_nsec = (long)((deadline - now) % 1000000000u);
					relp = &rel;
				}
			}
			fx_futex_wait(&w->futex, 0, relp);
		}
	}
	return atomic_load(&w->state) == FX_W_TIMEDOUT ? -ETIMEDOUT : 0;
}

/*
 * Ends w (already unlinked by the caller). False if its deadline got there
 * first, or if it is a waiter of the parent process that a fork copied
 * into a list (its thread does not exist here): the caller then tries the
 * next one, and nothing is handed to a thread that will never run.
 */
bool fx_waiter_wake(struct fx_waiter *w)
{
	int expect = FX_W_WAITING;
	struct fx_uthread *u = w->u;

	if (w->fork_gen != fx_gen())
		return false;
	while (!atomic_compare_exchange_strong(&w->state, &expect, FX_W_WOKEN)) {
		if (expect != FX_W_SIGNALLED)
			return false;
		/* its thread runs a handler and looks at the state before it sleeps again */
		if (atomic_compare_exchange_strong(&w->state, &expect, FX_W_WOKEN))
			return true;
		if (expect != FX_W_WAITING)
			return false;
	}
	if (u) {
		fx_uthread_wake(u);
	} else {
		atomic_store(&w->futex, 1);
		fx_futex_wake(&w->futex, 1);
	}
	return true;
}

/*
 * Converts an absolute time on clock to a CLOCK_MONOTONIC deadline in ns.
 * A time already past is now (a negative tv_sec too); one too far ahead
 * to count in 64-bit ns (tv_sec up to LONG_MAX) saturates to UINT64_MAX,
 * no deadline, instead of wrapping to one in the past.
 */
int fx_deadline(clockid_t clock, const struct timespec *abs, uint64_t *deadline)
{
	struct timespec now, left;

	if (!abs) {
		*deadline = UINT64_MAX;
		return 0;
	}
	if (abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000L)
		return -EINVAL;
	if (clock_gettime(clock, &now))
		return -EINVAL;
	uint64_t base = fx_now_ns();
	if (abs->tv_sec < now.tv_sec || (abs->tv_sec == now.tv_sec && abs->tv_nsec <= now.tv_nsec)) {
		*deadline = base;
		return 0;
	}
	if (__builtin_sub_overflow(abs->tv_sec, now.tv_sec, &left.tv_sec)) {
		*deadline = UINT64_MAX;
		return 0;
	}
	left.tv_nsec = abs->tv_nsec - now.tv_nsec;
	if (left.tv_nsec < 0) {
		left.tv_nsec += 1000000000L;
		left.tv_sec--;
	}
	*deadline = fx_add_sat(base, fx_ts_ns_sat(&left));
	return 0;
}

/*
 * fx_waiter_sleep at a cancellation point: pthread_cancel may end it early
 * (as a timeout: the caller unlinks w and then acts on the cancellation).
 */
int fx_waiter_sleep_cp(struct fx_waiter *w, uint64_t deadline)
{
	struct fx_uthread *u = w->u;
	int r, expect = FX_W_WAITING;

	if (!u)
		return fx_waiter_sleep(w, deadline);
	fx_spin_lock(&u->cancel_lock);
	u->cancel_waiter = w;
	fx_spin_unlock(&u->cancel_lock);
	if (fx_cancel_pending(u) && atomic_compare_exchange_strong(&w->state, &expect, FX_W_TIMEDOUT))
		r = -ETIMEDOUT; /* cancelled before it slept: nobody woke it */
	else
		r = fx_waiter_sleep(w, deadline); /* also when a waker ended it already: take that wake */
	/* under the lock: fx_interrupt never touches w once this returns */
	fx_spin_lock(&u->cancel_lock);
	u->cancel_waiter = NULL;
	fx_spin_unlock(&u->cancel_lock);
	return r;
}

/* Sleeps the calling thread (uthread or not) until deadline; cancellable. */
void fx_sleep_until(uint64_t deadline)
{
	struct fx_waiter w;

	fx_waiter_init(&w);
	fx_waiter_sleep_cp(&w, deadline);
}
