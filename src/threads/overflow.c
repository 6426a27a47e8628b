/* SPDX-License-Identifier: MIT */
/*
 * Overflow threads: where a uthread's call goes when its carrier's syscall
 * entries are all in flight.
 *
 * A carrier's queue has at most 4,096 entries, and each uthread blocked in
 * an exception-less call holds one; a program with more blocked threads
 * than that (10,000 readers on 10,000 pipes) must not block its carrier,
 * since the call that would release the readers may be queued behind them
 * on the same carrier. So a call that finds no free entry is handed to an
 * overflow thread: a kernel thread that runs one call at a time and blocks
 * in it, exactly as the uthread's own NPTL thread would. The pool grows
 * with the number of such calls in flight (kernel threads cost here what
 * NPTL would have paid for every thread anyway) and its idle threads stay
 * for the next burst. Only the excess pays: below 4,096 blocked calls per
 * carrier nothing here runs.
 *
 * Safety as for syscall threads (core/identity.c): the carrier hands over
 * its identity as the kernel reports it, and the overflow thread runs the
 * call only if its own, read from the kernel just before, is the same and
 * it shares the carrier's descriptor table and fs context; else it gives
 * the call back (FX_RET_REFUSED) and the uthread makes it directly on its
 * carrier, which then blocks. A carrier under a seccomp filter hands over
 * nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "threads/overflow.h"
#include "threads/rt.h"

static struct {
	_Atomic uint32_t lock;          /* 0 free, 1 held, 2 held with sleepers */
	struct fx_uthread *head, *tail; /* calls waiting for a thread */
	unsigned queued;                /* on the list */
	unsigned idle;                  /* threads waiting for a call */
	unsigned threads;
	_Atomic uint32_t word;          /* futex: bumped per call queued */
} pool;

/*
 * A sleeping lock, not a spinning one: the pool has more threads than
 * CPUs, and a holder preempted while others spin on it stalls them all.
 */
static void pool_lock(void)
{
	uint32_t c = 0;

	if (atomic_compare_exchange_strong(&pool.lock, &c, 1))
		return;
	if (c != 2)
		c = atomic_exchange(&pool.lock, 2);
	while (c) {
		fx_futex_wait(&pool.lock, 2, NULL);
		c = atomic_exchange(&pool.lock, 2);
	}
}

static void pool_unlock(void)
{
	if (atomic_exchange(&pool.lock, 0) == 2)
		fx_futex_wake(&pool.lock, 1);
}

static struct fx_uthread *take(void)
{
	struct fx_uthread *u = pool.head;

	if (u) {
		pool.head = u->next;
		if (!pool.head)
			pool.tail = NULL;
		pool.queued--;
	}
	return u;
}

static void *overflow_main(void *arg)
{
	int tid = (int)fx_raw_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0);
	uint64_t interrupt = 1ull << (FX_SIG_INTERRUPT - 1);

	(void)arg;
	fx_raw_syscall6(SYS_prctl, PR_SET_NAME, (long)"flexsc-overflow", 0, 0, 0, 0);
	/* started with every signal blocked; cancellation interrupts a call with this one */
	fx_raw_syscall6(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&interrupt, 0, 8, 0, 0);
	for (;;) {
		pool_lock();
		struct fx_uthread *u = take();
		if (!u) {
			uint32_t seen = atomic_load(&pool.word);
			pool.idle++;
			pool_unlock();
			fx_futex_wait(&pool.word, seen, NULL);
			pool_lock();
			pool.idle--;
			pool_unlock();
			continue;
		}
		pool_unlock();
		struct fx_identity mine;
		fx_identity_read(&mine);
		bool same = fx_identity_same(&mine, u->overflow_caller) &&
			    fx_shares_context(u->overflow_caller_tid);
		/*
		 * seq_cst store, then load: against pthread_cancel's store of the
		 * request and fx_overflow_interrupt's load of the tid, one of the
		 * two sees the other. A signal that lands between the check and
		 * the call's entry into the kernel is lost, as it is for syscall
		 * threads (docs/threads.md).
		 */
		atomic_store(&u->overflow_tid, tid);
		long r = !same ? FX_RET_REFUSED :
			 fx_cancel_pending(u) || fx_sig_due(u) ? -ECANCELED : /* not started: fx_rt_syscall */
			fx_raw_syscall6(u->overflow_nr, (long)u->overflow_args[0], (long)u->overflow_args[1],
					(long)u->overflow_args[2], (long)u->overflow_args[3],
					(long)u->overflow_args[4], (long)u->overflow_args[5]);
		/* under the uthread's cancel lock: fx_interrupt signals this thread only while it runs u's call */
		fx_spin_lock(&u->cancel_lock);
		atomic_store(&u->overflow_tid, 0);
		fx_spin_unlock(&u->cancel_lock);
		u->sysret = r;
		fx_uthread_wake(u);
	}
	return NULL;
}

int fx_overflow_submit(struct fx_uthread *u, long nr, const uint64_t *args,
		       const struct fx_identity *caller)
{
	if (caller->seccomp)
		return -EPERM;
	u->overflow_caller = caller;
	u->overflow_caller_tid = (int)fx_raw_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0);
	pool_lock();
	bool need = pool.queued + 1 > pool.idle;
	if (need) {
		/* created under the lock: two carriers must not both count on one idle thread */
		int err = fx_rt_kthread(overflow_main);
		if (err && pool.threads == 0) {
			pool_unlock();
			return err;
		}
		pool.threads += !err;
	}
	u->overflow_nr = nr;
	for (int i = 0; i < FLEXSC_MAX_ARGS; i++)
		u->overflow_args[i] = args[i];
	u->next = NULL;
	if (pool.tail)
		pool.tail->next = u;
	else
		pool.head = u;
	pool.tail = u;
	pool.queued++;
	atomic_fetch_add(&pool.word, 1);
	pool_unlock();
	fx_futex_wake(&pool.word, 1);
	return 0;
}

void fx_overflow_interrupt(struct fx_uthread *u)
{
	fx_spin_lock(&u->cancel_lock);
	int tid = atomic_load(&u->overflow_tid);
	if (tid)
		fx_raw_syscall6(SYS_tgkill, getpid(), tid, FX_SIG_INTERRUPT, 0, 0, 0);
	fx_spin_unlock(&u->cancel_lock);
}

void fx_overflow_after_fork_child(void)
{
	/* the pool's threads are gone, and with them every call they ran */
	pool.head = pool.tail = NULL;
	pool.queued = pool.idle = pool.threads = 0;
	atomic_store(&pool.lock, 0);
}
