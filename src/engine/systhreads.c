/* SPDX-License-Identifier: MIT */
/*
 * Syscall threads: user-space threads, pinned to the syscall cores, that
 * execute posted entries with the raw system call instruction, in the
 * process's own address space, descriptor table and credentials.
 *
 * The problem. The paper's kernel threads could tell when one of them
 * blocked and start another; user-space threads cannot. A call that blocks
 * (a read on an empty pipe) must not hold up the calls behind it.
 *
 * The shape. Each queue has a submission ring (owner to threads) and a
 * completion ring (threads to owner) of entry indices, in an fx_tq. The
 * owner's side is single-producer/single-consumer with plain loads and
 * stores. Several threads serve one queue, so a thread takes the queue's
 * claim word (one compare-and-swap, on the threads' side only) for the few
 * instructions it needs to push its last result and pop the next entry,
 * and executes the call after letting go: while one thread blocks in the
 * kernel the others keep draining. When every thread is executing and work
 * is still queued, the pool grows (up to max_threads), which is the
 * user-space version of the paper's "one syscall thread per entry".
 *
 * Sleeping. Idle threads spin for spin_us, then sleep on the pool's futex;
 * the owner wakes them only if one is asleep (an eventcount: the owner
 * publishes, fences, then reads the sleeper count; a sleeper counts itself,
 * fences, then looks for work). The owner sleeps the same way on
 * owner_sleep, which a thread clears with an exchange before waking it.
 *
 * Signals are blocked on every syscall thread, so the process's signals
 * go to the application's threads, where handlers expect to run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <immintrin.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/engine.h"

#define FX_POOL_SLOTS 256 /* queues one pool serves at once */

struct fx_pool {
	struct flexsc *fx;
	_Atomic(struct fx_tq *) slots[FX_POOL_SLOTS];
	_Atomic unsigned nslots; /* slots[nslots..] have never been used */
	/* awake threads per syscall core (index FLEXSC_MAX_CPUS: unpinned ones) */
	_Atomic uint32_t awake[FLEXSC_MAX_CPUS + 1];
	_Alignas(FX_CACHELINE) _Atomic uint32_t work_seq; /* futex: bumped when work is posted */
	_Atomic uint32_t sleepers;
	_Alignas(FX_CACHELINE) _Atomic uint32_t busy;      /* threads inside a call */
	_Atomic uint32_t nthreads;
	_Atomic bool stop;
	bool pinned;
	cpu_set_t cpus; /* the syscall cores, when pinned */
	pthread_mutex_t lock; /* threads[], free_tqs, slot assignment */
	pthread_t *threads;
	struct worker **workers; /* parallel to threads[] */
	unsigned max_threads;
	struct fx_tq *free_tqs;
	struct fx_tq *all_tqs[FX_POOL_SLOTS];
	unsigned ntqs;
};

struct worker {
	struct fx_pool *pool;
	_Atomic int tid;
	_Atomic(struct fx_tq *) run_tq; /* the call it executes now (not chains): tq and index */
	_Atomic uint32_t run_idx;
	int cpu;           /* -1: not pinned */
	int partner_cpu;   /* the owner of the last queue served was there */
};

static bool tq_has_work(struct fx_tq *tq)
{
	/* acquire: pairs with the release in fx_threads_commit */
	return atomic_load_explicit(&tq->sq_tail, memory_order_acquire) !=
	       atomic_load_explicit(&tq->sq_head, memory_order_relaxed);
}

static bool try_claim(struct fx_tq *tq)
{
	int free = 0;

	return atomic_load_explicit(&tq->claim, memory_order_relaxed) == 0 &&
	       atomic_compare_exchange_strong_explicit(&tq->claim, &free, 1, memory_order_acquire,
						       memory_order_relaxed);
}

static void claim(struct fx_tq *tq)
{
	while (!try_claim(tq))
		_mm_pause();
}

static void unclaim(struct fx_tq *tq)
{
	/* release: pairs with the acquire in try_claim */
	atomic_store_explicit(&tq->claim, 0, memory_order_release);
}

/* Under claim: files a finished index for the owner. */
static void push_completion(struct fx_tq *tq, unsigned idx)
{
	uint32_t t = atomic_load_explicit(&tq->cq_tail, memory_order_relaxed);

	tq->cq[t & tq->mask] = (uint16_t)idx;
	/* release: pairs with the acquire in fx_threads_harvest */
	atomic_store_explicit(&tq->cq_tail, t + 1, memory_order_release);
}

/*
 * Under claim: takes the next submitted index whose entry is still
 * SUBMITTED (the owner may have cancelled it), or FX_NIL.
 */
static unsigned pop_submission(struct fx_tq *tq)
{
	uint32_t h = atomic_load_explicit(&tq->sq_head, memory_order_relaxed);

	while (h != atomic_load_explicit(&tq->sq_tail, memory_order_acquire)) {
		unsigned idx = tq->sq[h & tq->mask];
		uint8_t expect = FLEXSC_SUBMITTED;

		atomic_store_explicit(&tq->sq_head, ++h, memory_order_relaxed);
		if (idx == FX_NIL)
			continue; /* a call cancelled in the ring: see fx_threads_cancel */
		/* pairs with the compare-and-swap in fx_threads_cancel */
		if (__atomic_compare_exchange_n(&tq->entries[idx].status, &expect, FLEXSC_BUSY, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return idx;
	}
	return FX_NIL;
}

static void maybe_grow(struct fx_pool *pool);
static bool any_work(struct fx_pool *pool);

static void report(struct fx_tq *tq, unsigned idx, int64_t ret)
{
	tq->entries[idx].ret = ret;
	/* release: the owner reads ret after seeing DONE through the completion ring */
	__atomic_store_n(&tq->entries[idx].status, FLEXSC_DONE, __ATOMIC_RELEASE);
}

/* Results are in for tq's owner: woken if it sleeps, else told (fx_os_owner_awake). */
static void tell_owner(struct fx_tq *tq)
{
	if (!fx_wake_up(&tq->wake))
		fx_os_owner_awake(&tq->wake);
}

static void chain_done(void *ctx, unsigned idx, int64_t ret)
{
	struct fx_tq *tq = ctx;

	report(tq, idx, ret);
	claim(tq);
	push_completion(tq, idx);
	unclaim(tq);
	tell_owner(tq);
}

#define OWNER_WORDS (sizeof(struct fx_owner) / sizeof(uint32_t))
_Static_assert(sizeof(struct fx_owner) % sizeof(uint32_t) == 0, "fx_owner is 32-bit words");

/*
 * The owner's side of tq->owner (a sequence lock; one writer at a time:
 * the owner, or fx_pool_attach before the queue has one). Word by word
 * with atomics, as a reader may copy meanwhile; on x86 they are plain
 * moves.
 */
static void owner_write(struct fx_tq *tq, const struct fx_owner *o)
{
	uint32_t gen = atomic_load_explicit(&tq->owner_gen, memory_order_relaxed);
	uint32_t *dst = (uint32_t *)&tq->owner;
	const uint32_t *src = (const uint32_t *)o;

	atomic_store_explicit(&tq->owner_gen, gen + 1, memory_order_relaxed);
	/* release: a reader that sees a word of the new record also sees the odd generation */
	for (unsigned i = 0; i < OWNER_WORDS; i++)
		__atomic_store_n(&dst[i], src[i], __ATOMIC_RELEASE);
	atomic_store_explicit(&tq->owner_gen, gen + 2, memory_order_release);
}

/* A consistent copy of tq->owner; waits only while the owner writes it. */
static void owner_read(struct fx_tq *tq, struct fx_owner *o)
{
	const uint32_t *src = (const uint32_t *)&tq->owner;
	uint32_t *dst = (uint32_t *)o;

	for (;;) {
		/* acquire: pairs with the release store that ended the last write */
		uint32_t gen = atomic_load_explicit(&tq->owner_gen, memory_order_acquire);
		if (gen & 1) {
			/* relaxed: looking is all a waiting reader does to the line its writer stores to */
			while (atomic_load_explicit(&tq->owner_gen, memory_order_relaxed) == gen)
				_mm_pause();
			continue;
		}
		/* acquire: pairs with the writer's release stores, and keeps the look below after the copy */
		for (unsigned i = 0; i < OWNER_WORDS; i++)
			dst[i] = __atomic_load_n(&src[i], __ATOMIC_ACQUIRE);
		if (atomic_load_explicit(&tq->owner_gen, memory_order_relaxed) == gen)
			return;
	}
}

/*
 * Whether this thread is now who tq's owner was at its last flush: the
 * same identity, read from the kernel on this thread, and the same
 * descriptor table and fs context as the owner's task. Returns the
 * record's seq (the calls stamped with it may run here), or 0.
 */
static uint32_t runs_as_owner(struct fx_tq *tq)
{
	struct fx_identity mine;
	struct fx_owner owner;

	fx_identity_read(&mine);
	owner_read(tq, &owner);
	uint32_t seq = fx_identity_same(&mine, &owner.id) ? owner.seq : 0;
	return seq && fx_shares_context(owner.tid) ? seq : 0;
}

/*
 * A call flushed by somebody this thread is not: its owner runs it (and
 * the rest of its chain) itself when it harvests it (core/identity.c).
 */
static unsigned refuse(struct fx_tq *tq, unsigned idx)
{
	report(tq, idx, FX_RET_REFUSED);
	claim(tq);
	push_completion(tq, idx);
	unsigned next = pop_submission(tq);
	unclaim(tq);
	tell_owner(tq);
	return next;
}

/*
 * Runs one entry (or chain) that this thread popped and reports it, if it
 * was flushed with identity seq (0: none); under the same claim it pops the
 * next one, which it returns (or FX_NIL).
 */
static unsigned execute(struct worker *w, struct fx_tq *tq, unsigned idx, uint32_t seq)
{
	if (fx_unlikely(!seq || tq->id_stamp[idx] != seq))
		return refuse(tq, idx);

	struct fx_pool *pool = w->pool;
	uint32_t busy = atomic_fetch_add(&pool->busy, 1) + 1;
	unsigned next;
	/*
	 * The last free thread grows the pool when work waits on any queue,
	 * not only on tq: the owner of another queue may have read busy in
	 * fx_threads_unstick before this thread counted itself, and gone to
	 * sleep, and then nobody starts a thread for its calls. seq_cst:
	 * pairs with the fence in fx_threads_commit (the owner publishes its
	 * calls, fences, then reads busy).
	 */
	bool full = busy >= atomic_load(&pool->nthreads);

	if (full)
		atomic_thread_fence(memory_order_seq_cst);
	if (full && any_work(pool)) {
		maybe_grow(pool);
	} else if (atomic_load(&pool->sleepers) && (tq_has_work(tq) || any_work(pool))) {
		/*
		 * A commit wakes one sleeper for a whole batch: pass the wake on
		 * before this call runs, so that the calls behind it do not wait
		 * for it (it may block) while a thread sleeps. Work on any queue,
		 * not only on tq: a wake is not tied to the queue whose commit
		 * made it. Two owners commit, each wakes one thread, and both
		 * threads take the first owner's calls (serve looks at the slots
		 * in order); if those block, a look at tq alone leaves the second
		 * owner's calls queued while every other thread sleeps.
		 */
		atomic_fetch_add(&pool->work_seq, 1);
		fx_futex_wake(&pool->work_seq, 1);
	}
	if (tq->link[idx] != FX_NIL) {
		/* the chain's later entries are published with op 0: they are ours */
		for (unsigned i = tq->link[idx]; i != FX_NIL; i = tq->link[i])
			__atomic_store_n(&tq->entries[i].status, FLEXSC_BUSY, __ATOMIC_RELAXED);
		fx_chain_run(tq->entries, tq->link, idx, chain_done, tq);
		claim(tq);
	} else {
		/*
		 * The next entry's cache line was last written by the owner on
		 * another core: start fetching it while this call runs.
		 */
		uint32_t h = atomic_load_explicit(&tq->sq_head, memory_order_relaxed);
		if (h != atomic_load_explicit(&tq->sq_tail, memory_order_acquire)) {
			/* relaxed: fx_threads_cancel may store FX_NIL there meanwhile */
			unsigned nx = __atomic_load_n(&tq->sq[h & tq->mask], __ATOMIC_RELAXED);
			if (nx != FX_NIL)
				__builtin_prefetch(&tq->entries[nx], 1);
		}
		atomic_store_explicit(&w->run_idx, idx, memory_order_relaxed);
		/* release: pairs with the acquire in interrupt() */
		atomic_store_explicit(&w->run_tq, tq, memory_order_release);
		/*
		 * Started, unless the owner asked for a cancel first: one
		 * compare-and-swap against fx_threads_cancel's decides which.
		 */
		uint8_t none = FX_REQ_NONE;
		if (fx_likely(atomic_compare_exchange_strong(&tq->cancel_req[idx], &none, FX_REQ_STARTED)))
			report(tq, idx, fx_entry_exec(&tq->entries[idx]));
		else
			report(tq, idx, -ECANCELED);
		atomic_store_explicit(&w->run_tq, NULL, memory_order_relaxed);
		claim(tq);
		push_completion(tq, idx);
	}
	next = pop_submission(tq);
	unclaim(tq);
	tell_owner(tq);
	atomic_fetch_sub(&pool->busy, 1);
	return next;
}

/* One pass over the pool's queues. Returns whether it ran anything. */
static bool serve(struct worker *w)
{
	unsigned nslots = atomic_load_explicit(&w->pool->nslots, memory_order_acquire);
	bool ran = false;

	for (unsigned s = 0; s < nslots; s++) {
		struct fx_tq *tq = atomic_load_explicit(&w->pool->slots[s], memory_order_acquire);

		if (!tq || !tq_has_work(tq) || !try_claim(tq))
			continue;
		unsigned idx = pop_submission(tq);
		unclaim(tq);
		if (idx == FX_NIL)
			continue;
		w->partner_cpu = atomic_load_explicit(&tq->owner_cpu, memory_order_relaxed);
		uint32_t seq = runs_as_owner(tq);
		while (idx != FX_NIL)
			idx = execute(w, tq, idx, seq); /* drain this queue while it has work: locality */
		ran = true;
	}
	return ran;
}

static bool any_work(struct fx_pool *pool)
{
	unsigned nslots = atomic_load_explicit(&pool->nslots, memory_order_acquire);

	for (unsigned s = 0; s < nslots; s++) {
		struct fx_tq *tq = atomic_load_explicit(&pool->slots[s], memory_order_acquire);
		if (tq && tq_has_work(tq))
			return true;
	}
	return false;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct fx_pool *pool = w->pool;

	/*
	 * clone copied the creating thread's GS base; a runtime that keeps a
	 * per-thread pointer there (FlexSC-Threads' carriers) must not see this
	 * thread as one of its own.
	 */
	if (getauxval(AT_HWCAP2) & (1 << 1)) /* HWCAP2_FSGSBASE: else nobody can have set it */
		__asm__ volatile("wrgsbase %0" : : "r"(0ul));

	if (w->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set)) {
			fx_warn(pool->fx, "cannot pin a syscall thread to CPU %d; it runs unpinned", w->cpu);
			w->cpu = -1;
		}
	}
	fx_raw_syscall6(SYS_prctl, PR_SET_NAME, (long)"flexsc-sys", 0, 0, 0, 0);
	atomic_store(&w->tid, (int)fx_raw_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0));
	if (pool->fx->cfg.interrupt_signal) {
		uint64_t sig = 1ull << (pool->fx->cfg.interrupt_signal - 1);
		fx_raw_syscall6(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&sig, 0, 8, 0, 0);
	}
	_Atomic uint32_t *awake = &pool->awake[w->cpu >= 0 ? w->cpu % FLEXSC_MAX_CPUS : FLEXSC_MAX_CPUS];
	atomic_fetch_add(awake, 1);
	while (!atomic_load_explicit(&pool->stop, memory_order_relaxed)) {
		if (serve(w))
			continue;
		/*
		 * Spin only where it pays: not against the owner on its own core,
		 * and not against another awake syscall thread of this core, which
		 * would lose the CPU to the spinning.
		 */
		int here = w->cpu >= 0 ? w->cpu : sched_getcpu();
		bool spin = pool->fx->cfg.spin_us && w->partner_cpu != here;
		uint64_t spin_end = fx_now_ns() + (uint64_t)pool->fx->cfg.spin_us * 1000u;
		bool found = false;
		for (unsigned i = 1; spin && !found && !atomic_load(&pool->stop); i++) {
			_mm_pause();
			found = any_work(pool);
			if (i % 64 == 0 && (fx_now_ns() >= spin_end || atomic_load(awake) > 1))
				break;
		}
		if (found)
			continue;
		uint32_t seq = atomic_load(&pool->work_seq);
		atomic_fetch_sub(awake, 1);
		atomic_fetch_add(&pool->sleepers, 1);
		/* seq_cst: pairs with the fence in fx_threads_commit */
		atomic_thread_fence(memory_order_seq_cst);
		if (!any_work(pool) && !atomic_load(&pool->stop))
			fx_futex_wait(&pool->work_seq, seq, NULL);
		atomic_fetch_sub(&pool->sleepers, 1);
		atomic_fetch_add(awake, 1);
	}
	atomic_fetch_sub(awake, 1);
	free(w);
	return NULL;
}

/* Starts one thread on cpu; with all signals blocked, which it inherits. */
static int spawn(struct fx_pool *pool, int cpu)
{
	sigset_t all, old;
	pthread_t t;
	struct worker *w = calloc(1, sizeof(*w));
	unsigned n = atomic_load(&pool->nthreads);

	if (!w)
		return -ENOMEM;
	if (n >= pool->max_threads) {
		free(w);
		return -EAGAIN;
	}
	w->pool = pool;
	w->cpu = cpu;
	w->partner_cpu = -1;
	sigfillset(&all);
	fx_raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&old, _NSIG / 8, 0, 0);
	int err = fx_os_thread_create(&t, worker_main, w);
	fx_raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, _NSIG / 8, 0, 0);
	if (err) {
		free(w);
		return -err;
	}
	pool->threads[n] = t;
	pool->workers[n] = w;
	atomic_store(&pool->nthreads, n + 1);
	return 0;
}

static int cpu_for(const struct fx_pool *pool, unsigned i)
{
	const struct flexsc_config *c = &pool->fx->cfg;

	return c->nr_syscall_cpus ? c->syscall_cpus[i % c->nr_syscall_cpus] : -1;
}

static void maybe_grow(struct fx_pool *pool)
{
	if (atomic_load(&pool->nthreads) >= pool->max_threads)
		return;
	/*
	 * Wait for the lock rather than give up: its holder (the owner before
	 * it sleeps, or another thread growing the pool) may have counted fewer
	 * busy threads and started none, and a growth lost here leaves queued
	 * calls behind blocked threads for good.
	 */
	pthread_mutex_lock(&pool->lock);
	/* only when no thread is idle: an idle one takes the work in a moment */
	unsigned n = atomic_load(&pool->nthreads);
	if (n < pool->max_threads && atomic_load(&pool->busy) >= n)
		spawn(pool, cpu_for(pool, n));
	pthread_mutex_unlock(&pool->lock);
}

/*
 * On the owner, before it sleeps: if its queue has work that no thread is
 * free to take (every thread is inside a call, perhaps blocked for good
 * until something behind them runs), start one more.
 */
void fx_threads_unstick(struct flexsc_queue *q)
{
	struct fx_pool *pool = q->tq->pool;

	if (tq_has_work(q->tq) && atomic_load(&pool->busy) >= atomic_load(&pool->nthreads))
		maybe_grow(pool);
}

int fx_pool_create(struct flexsc *fx)
{
	const struct flexsc_config *c = &fx->cfg;
	/* aligned: its counters sit on cache lines of their own (calloc gives 16 bytes) */
	struct fx_pool *pool = aligned_alloc(_Alignof(struct fx_pool), sizeof(struct fx_pool));
	unsigned start = c->threads_per_cpu * (c->nr_syscall_cpus ? c->nr_syscall_cpus : 1);
	int err = 0;

	if (!pool)
		return -ENOMEM;
	memset(pool, 0, sizeof(*pool));
	pool->fx = fx;
	pool->max_threads = c->max_threads;
	pool->threads = calloc(pool->max_threads, sizeof(*pool->threads));
	pool->workers = calloc(pool->max_threads, sizeof(*pool->workers));
	if (!pool->threads || !pool->workers) {
		free(pool->workers);
		free(pool->threads);
		free(pool);
		return -ENOMEM;
	}
	pthread_mutex_init(&pool->lock, NULL);
	pool->pinned = c->nr_syscall_cpus > 0;
	for (unsigned i = 0; i < c->nr_syscall_cpus; i++)
		CPU_SET(c->syscall_cpus[i], &pool->cpus);
	fx->pool = pool;
	pthread_mutex_lock(&pool->lock);
	for (unsigned i = 0; i < start && !err; i++)
		err = spawn(pool, cpu_for(pool, i));
	pthread_mutex_unlock(&pool->lock);
	if (err) {
		fx_pool_destroy(pool);
		fx->pool = NULL;
	}
	return err;
}

void fx_pool_destroy(struct fx_pool *pool)
{
	atomic_store(&pool->stop, true);
	atomic_fetch_add(&pool->work_seq, 1);
	fx_futex_wake(&pool->work_seq, INT32_MAX);
	/* no queue is attached any more, so no thread is inside a call */
	for (unsigned i = 0; i < atomic_load(&pool->nthreads); i++)
		fx_os_thread_join(pool->threads[i]);
	fx_pool_forget(pool);
}

/* In a forked child, where the pool's threads do not exist: frees what is left. */
void fx_pool_forget(struct fx_pool *pool)
{
	for (unsigned i = 0; i < pool->ntqs; i++) {
		struct fx_tq *tq = pool->all_tqs[i];
		fx_fd_close_kept(tq->wake.fd);
		free(tq->sq);
		free(tq->cq);
		free(tq->id_stamp);
		free((void *)tq->cancel_req);
		free(tq);
	}
	free(pool->threads);
	free(pool->workers);
	free(pool);
}

int fx_pool_attach(struct fx_pool *pool, struct flexsc_queue *q)
{
	uint32_t size = 1;
	struct fx_tq *tq;
	int err = 0;

	while (size < 2 * q->nentries)
		size <<= 1; /* room for stale indices of cancelled calls: see fx_threads_cancel */
	pthread_mutex_lock(&pool->lock);
	tq = pool->free_tqs;
	if (tq) {
		pool->free_tqs = tq->next_free;
	} else if (pool->ntqs == FX_POOL_SLOTS) {
		err = -EMFILE;
	} else if (!(tq = aligned_alloc(FX_CACHELINE, sizeof(*tq)))) {
		err = -ENOMEM;
	} else {
		memset(tq, 0, sizeof(*tq));
		tq->pool = pool;
		tq->wake.fd = fx_fd_keep(eventfd(0, EFD_CLOEXEC)); /* blocking: io_uring must wait on it */
		pool->all_tqs[pool->ntqs++] = tq;
	}
	if (!err && tq->cap < size) {
		uint16_t *sq = realloc(tq->sq, size * sizeof(uint16_t));
		uint16_t *cq = sq ? realloc(tq->cq, size * sizeof(uint16_t)) : NULL;
		uint32_t *stamp = cq ? realloc(tq->id_stamp, size * sizeof(uint32_t)) : NULL;
		_Atomic uint8_t *req = stamp ? realloc((void *)tq->cancel_req, size) : NULL;
		if (sq)
			tq->sq = sq;
		if (cq)
			tq->cq = cq;
		if (stamp)
			tq->id_stamp = stamp;
		if (req)
			tq->cancel_req = req;
		if (!sq || !cq || !stamp || !req) {
			tq->next_free = pool->free_tqs;
			pool->free_tqs = tq;
			err = -ENOMEM;
		} else {
			tq->cap = size;
		}
	}
	if (!err) {
		tq->entries = q->entries;
		tq->link = q->link;
		tq->mask = size - 1;
		memset((void *)tq->cancel_req, FX_REQ_NONE, tq->mask + 1);
		atomic_store(&tq->sq_head, 0);
		atomic_store(&tq->sq_tail, 0);
		atomic_store(&tq->cq_head, 0);
		atomic_store(&tq->cq_tail, 0);
		atomic_store(&tq->wake.sleep, FX_SLEEP_NONE);
		/* a new owner: nothing runs before its first flush records it */
		owner_write(tq, &(struct fx_owner){ .seq = 0 });
		for (unsigned s = 0; s < FX_POOL_SLOTS; s++) {
			if (!atomic_load(&pool->slots[s])) {
				/* release: the rings' reset above is visible to a thread that finds tq */
				atomic_store_explicit(&pool->slots[s], tq, memory_order_release);
				if (s >= atomic_load(&pool->nslots))
					atomic_store_explicit(&pool->nslots, s + 1, memory_order_release);
				break;
			}
		}
		q->tq = tq;
	}
	pthread_mutex_unlock(&pool->lock);
	return err;
}

/* The queue has nothing in flight on its threads. tq's memory stays valid for the pool's life. */
void fx_pool_detach(struct flexsc_queue *q)
{
	struct fx_tq *tq = q->tq;
	struct fx_pool *pool = tq->pool;

	pthread_mutex_lock(&pool->lock);
	for (unsigned s = 0; s < FX_POOL_SLOTS; s++)
		if (atomic_load(&pool->slots[s]) == tq)
			atomic_store(&pool->slots[s], NULL);
	/* a thread that found tq before the store may still hold the claim for an instant */
	claim(tq);
	unclaim(tq);
	tq->next_free = pool->free_tqs;
	pool->free_tqs = tq;
	pthread_mutex_unlock(&pool->lock);
	q->tq = NULL;
}

void fx_threads_identity(struct flexsc_queue *q, const struct fx_identity *id, int tid)
{
	struct fx_tq *tq = q->tq;
	const struct fx_owner *now = &tq->owner;

	/* only the owner writes the record: its own plain reads race with no write */
	if (now->seq && now->tid == tid && memcmp(&now->id, id, sizeof(*id)) == 0)
		return;
	struct fx_owner next = { .seq = now->seq + 1 ? now->seq + 1 : 1, .tid = tid, .id = *id };
	owner_write(tq, &next);
}

void fx_threads_add(struct flexsc_queue *q, unsigned idx)
{
	struct fx_tq *tq = q->tq;
	uint32_t t = atomic_load_explicit(&tq->sq_tail, memory_order_relaxed);

	tq->id_stamp[idx] = tq->owner.seq;
	atomic_store_explicit(&tq->cancel_req[idx], FX_REQ_NONE, memory_order_relaxed); /* published with the index */

	/* relaxed atomic: a thread's prefetch in execute may read the slot meanwhile */
	__atomic_store_n(&tq->sq[t & tq->mask], (uint16_t)idx, __ATOMIC_RELAXED);
	/*
	 * release: pairs with the acquire in tq_has_work and pop_submission,
	 * publishing the index and the entry; the fence in fx_threads_commit
	 * comes after this store, so it cannot order it.
	 */
	atomic_store_explicit(&tq->sq_tail, t + 1, memory_order_release);
}

/*
 * Whether the pool can take no more calls now: every thread is inside one
 * and it may not grow. A call queued then waits for one to come free,
 * which may take as long as any call; below the cap a thread comes at
 * once (maybe_grow).
 */
bool fx_threads_all_busy(const struct flexsc_queue *q)
{
	const struct fx_pool *pool = q->tq->pool;
	unsigned n = atomic_load(&pool->nthreads);

	return n >= pool->max_threads && atomic_load(&pool->busy) >= n;
}

/* Whether a syscall thread can run this queue's calls while the owner spins. */
bool fx_threads_remote(const struct flexsc_queue *q)
{
	const struct fx_pool *pool = q->tq->pool;
	int here = sched_getcpu();

	return !pool->pinned || CPU_COUNT(&pool->cpus) > 1 || here < 0 || !CPU_ISSET(here, &pool->cpus);
}

void fx_threads_commit(struct flexsc_queue *q)
{
	struct fx_pool *pool = q->tq->pool;

	atomic_store_explicit(&q->tq->owner_cpu, sched_getcpu(), memory_order_relaxed);
	/* release: pairs with the acquire in tq_has_work; seq_cst: with the sleeper's fence */
	atomic_thread_fence(memory_order_seq_cst);
	/* a pool started with none (threads_per_cpu 0): the first call starts one */
	if (fx_unlikely(!atomic_load_explicit(&pool->nthreads, memory_order_relaxed)))
		maybe_grow(pool);
	if (atomic_load_explicit(&pool->sleepers, memory_order_relaxed)) {
		atomic_fetch_add(&pool->work_seq, 1);
		fx_futex_wake(&pool->work_seq, 1);
	}
}

int fx_threads_harvest(struct flexsc_queue *q)
{
	struct fx_tq *tq = q->tq;
	uint32_t h = atomic_load_explicit(&tq->cq_head, memory_order_relaxed);
	/* acquire: pairs with the release in push_completion */
	uint32_t t = atomic_load_explicit(&tq->cq_tail, memory_order_acquire);
	int n = 0;

	for (; h != t; h++, n++) {
		unsigned idx = tq->cq[h & tq->mask];
		int64_t ret = tq->entries[idx].ret;
		if (fx_unlikely(ret == FX_RET_REFUSED))
			fx_queue_run_here(q, idx);
		else
			fx_queue_complete(q, idx, ret);
	}
	atomic_store_explicit(&tq->cq_head, h, memory_order_release);
	return n;
}

/* Whether the syscall threads have results the owner has not harvested. */
bool fx_threads_pending(const struct flexsc_queue *q)
{
	return atomic_load(&q->tq->cq_tail) !=
	       atomic_load_explicit(&q->tq->cq_head, memory_order_relaxed);
}

/*
 * A call a syscall thread took from the ring. Not started yet (the thread
 * is between the pop and the call: it checks who it runs as first, a
 * dozen system calls): the request makes it complete with -ECANCELED
 * unstarted. Started: it can only be interrupted: with an interrupt signal
 * configured, the thread leaves it unblocked and the signal makes a
 * blocking call return -EINTR. A signal that lands before the thread
 * enters the kernel is lost; the caller asks again while the call is out
 * (FlexSC-Threads' carriers, every millisecond). (If the thread finished
 * the call meanwhile, its next call may see the -EINTR: documented.)
 */
static int interrupt(struct fx_tq *tq, unsigned idx)
{
	struct fx_pool *pool = tq->pool;
	int sig = pool->fx->cfg.interrupt_signal;
	uint8_t req = FX_REQ_NONE;

	/*
	 * Not started: the thread that took it finds the request and reports
	 * -ECANCELED (a call done meanwhile without starting, one refused back
	 * to the owner, keeps its result: a cancel may always lose the race).
	 */
	if (atomic_compare_exchange_strong(&tq->cancel_req[idx], &req, FX_REQ_CANCEL) ||
	    req == FX_REQ_CANCEL)
		return 0;
	unsigned n = atomic_load(&pool->nthreads);
	for (unsigned i = 0; sig && i < n; i++) {
		struct worker *w = pool->workers[i];
		/* acquire: pairs with the release in execute */
		if (atomic_load_explicit(&w->run_tq, memory_order_acquire) == tq &&
		    atomic_load_explicit(&w->run_idx, memory_order_relaxed) == idx) {
			fx_raw_syscall6(SYS_tgkill, getpid(), atomic_load(&w->tid), sig, 0, 0, 0);
			return 0;
		}
	}
	return -EALREADY; /* no signal to interrupt it with, or it is done */
}

int fx_threads_cancel(struct flexsc_queue *q, unsigned idx)
{
	struct fx_tq *tq = q->tq;
	uint32_t h, t;

	if (q->slots[idx].chained)
		return -EALREADY;
	/*
	 * Under the claim no thread pops: if idx is still in the ring, no thread
	 * has taken it, and its index is taken out. Left there, it would run
	 * the entry's next call, which reuses the entry at once, even before
	 * that call is flushed. A cancelled call leaves a hole (FX_NIL) in the
	 * submission ring until a thread pops and skips it; the ring has room
	 * for one hole per live index, and no more: past that the index stays,
	 * and the thread that takes it sees the request and does not start it.
	 */
	claim(tq);
	t = atomic_load_explicit(&tq->sq_tail, memory_order_relaxed);
	h = atomic_load_explicit(&tq->sq_head, memory_order_relaxed);
	bool room = t - h < tq->mask / 2;
	for (; h != t; h++)
		if (tq->sq[h & tq->mask] == idx)
			break;
	if (h != t) {
		if (room)
			__atomic_store_n(&tq->sq[h & tq->mask], FX_NIL, __ATOMIC_RELAXED);
		else
			atomic_store_explicit(&tq->cancel_req[idx], FX_REQ_CANCEL, memory_order_relaxed); /* the unclaim publishes it */
	}
	unclaim(tq);
	if (h == t)
		return interrupt(tq, idx);
	if (room)
		fx_queue_complete(q, idx, -ECANCELED);
	return 0;
}
