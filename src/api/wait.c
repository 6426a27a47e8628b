/* SPDX-License-Identifier: MIT */
/*
 * Waiting for results: the only place the owner blocks.
 *
 * Every wait first flushes (the owner has nothing else to do, so the batch
 * is as large as it will get), then harvests, then spins for spin_us
 * reading the completion channels (plain loads) unless the only executor
 * is a syscall thread on the owner's own core, and only then sleeps in
 * the kernel: in io_uring_enter when io_uring has calls in flight (armed to
 * wake for syscall-thread completions too), else on a futex. It never
 * yields the CPU in a loop: sched_yield is itself a system call and gave
 * the Linux 5.0 port of FlexSC its losses.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "engine/engine.h"

#define FX_FOREVER UINT64_MAX

static int deadline_of(const struct timespec *t, uint64_t *deadline)
{
	if (!t) {
		*deadline = FX_FOREVER;
		return 0;
	}
	if (t->tv_sec < 0 || t->tv_nsec < 0 || t->tv_nsec >= 1000000000L)
		return -EINVAL;
	*deadline = fx_deadline_after(t); /* FX_FOREVER when past 584 years */
	return 0;
}

static bool remote_inflight(const struct flexsc_queue *q)
{
	return q->inflight[FX_ROUTE_URING] || q->inflight[FX_ROUTE_THREAD];
}

bool fx_wake_pending(const struct flexsc_queue *q)
{
	return atomic_load(&q->kicked) || (q->tq && fx_threads_pending(q));
}

/* Sleeps on w's futex unless q already has something for its owner. */
static int wake_sleep(struct fx_wake *w, const struct flexsc_queue *q, const struct timespec *rel)
{
	int err = 0;

	/* seq_cst: pairs with the fence in fx_wake_up */
	atomic_store(&w->sleep, FX_SLEEP_FUTEX);
	if (!fx_wake_pending(q))
		err = fx_futex_wait(&w->sleep, FX_SLEEP_FUTEX, rel);
	atomic_store(&w->sleep, FX_SLEEP_NONE);
	return err == -EAGAIN || err == -EINTR ? 0 : err;
}

static int take_kick(struct flexsc_queue *q)
{
	if (atomic_load_explicit(&q->kicked, memory_order_relaxed) &&
	    atomic_exchange(&q->kicked, false))
		return -EINTR;
	return 0;
}

/*
 * Makes progress towards some completion. Returns 0 when something may have
 * completed (the caller looks again), -ETIME at the deadline, -EINTR when
 * flexsc_queue_wake was called.
 */
static int make_progress(struct flexsc_queue *q, uint64_t deadline)
{
	if (q->npending)
		flexsc_flush(q);
	if (fx_queue_harvest(q) > 0)
		return 0;
	int kick = take_kick(q);
	if (kick || !remote_inflight(q))
		return kick;

	uint64_t start = fx_now_ns(), now = start;
	/* spinning against a syscall thread on this very core only delays it */
	bool spin = !q->inflight[FX_ROUTE_THREAD] || fx_threads_remote(q);
	uint64_t spin_end = start + (spin ? (uint64_t)q->fx->cfg.spin_us * 1000u : 0);
	/*
	 * Back off while nothing arrives: every look pulls the completion
	 * ring's cache line away from the core that is filling it.
	 */
	for (unsigned i = 1, pauses = 1; now < spin_end && now < deadline; i++) {
		for (unsigned p = 0; p < pauses; p++)
			_mm_pause();
		if (fx_queue_harvest(q) > 0 || atomic_load_explicit(&q->kicked, memory_order_relaxed))
			goto out;
		if (pauses < 32)
			pauses *= 2;
		if (i % 16 == 0)
			now = fx_now_ns();
	}
	if (now >= deadline) {
		/* a caller that waits in short slices must not leave calls stuck: see below */
		if (q->inflight[FX_ROUTE_THREAD])
			fx_threads_unstick(q);
		return -ETIME;
	}

	struct timespec rel, *relp = NULL;
	if (deadline != FX_FOREVER) {
		uint64_t left = deadline - now;
		rel.tv_sec = (time_t)(left / 1000000000u);
		rel.tv_nsec = (long)(left % 1000000000u);
		relp = &rel;
	}
	q->stats.waits++;
	if (q->inflight[FX_ROUTE_THREAD])
		fx_threads_unstick(q);
	if (q->inflight[FX_ROUTE_URING])
		fx_uring_sleep(q, relp);
	else
		wake_sleep(q->wake, q, relp);
	fx_queue_harvest(q);
out:
	q->stats.wait_ns += fx_now_ns() - start;
	return q->nready ? 0 : take_kick(q);
}

static bool done(const struct flexsc_queue *q, unsigned idx)
{
	return q->slots[idx].state == FX_SLOT_READY;
}

/*
 * Checks descriptors the way flexsc_poll does, without collecting; with
 * distinct, also that no call is named twice (flexsc_wait_all would collect
 * it once and fail on the second with its result lost): -EINVAL.
 */
static int validate(struct flexsc_queue *q, const flexsc_call_t *calls, unsigned n, unsigned *idx,
		    bool distinct)
{
	uint64_t seen[64 * FLEXSC_ENTRIES_PER_PAGE / 64];

	if (!q || !calls || n == 0)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++) {
		int err = fx_call_index(q, calls[i], &idx[i]);
		if (err)
			return err;
	}
	if (distinct && n > 1) {
		memset(seen, 0, (q->nentries + 63) / 64 * sizeof(seen[0]));
		for (unsigned i = 0; i < n; i++) {
			uint64_t bit = 1ull << (idx[i] % 64);
			if (seen[idx[i] / 64] & bit)
				return -EINVAL;
			seen[idx[i] / 64] |= bit;
		}
	}
	return 0;
}

/*
 * What both waits do first: the entries calls name, in *ip (the caller's
 * idx, or allocated when n is larger: the caller frees *ip when it is not
 * idx), validated (distinct: no call twice), and the deadline.
 */
static int wait_begin(struct flexsc_queue *q, const flexsc_call_t *calls, unsigned n, bool distinct,
		      const struct timespec *timeout, unsigned idx[64], unsigned **ip, uint64_t *deadline)
{
	*ip = idx;
	if (q && n > 64) {
		unsigned *big = malloc(n * sizeof(*big));
		if (!big)
			return -ENOMEM;
		*ip = big;
	}
	int err = validate(q, calls, n, *ip, distinct);
	return err ? err : deadline_of(timeout, deadline);
}

FX_EXPORT int flexsc_wait_any(struct flexsc_queue *q, const flexsc_call_t *calls, unsigned n,
			      unsigned *index, int64_t *ret, const struct timespec *timeout)
{
	unsigned idx[64], *ip;
	uint64_t deadline;
	int err = wait_begin(q, calls, n, false, timeout, idx, &ip, &deadline);

	while (!err) {
		for (unsigned i = 0; i < n; i++) {
			if (done(q, ip[i])) {
				if (index)
					*index = i;
				err = flexsc_poll(q, calls[i], ret);
				goto out;
			}
		}
		err = make_progress(q, deadline);
	}
out:
	if (ip != idx)
		free(ip);
	return err;
}

FX_EXPORT int flexsc_wait_one(struct flexsc_queue *q, flexsc_call_t call, int64_t *ret,
			      const struct timespec *timeout)
{
	return flexsc_wait_any(q, &call, 1, NULL, ret, timeout);
}

FX_EXPORT int flexsc_wait_all(struct flexsc_queue *q, const flexsc_call_t *calls, unsigned n,
			      int64_t *rets, const struct timespec *timeout)
{
	unsigned idx[64], *ip, next = 0;
	uint64_t deadline;
	int err = wait_begin(q, calls, n, true, timeout, idx, &ip, &deadline);

	while (!err && next < n) {
		if (done(q, ip[next]))
			next++;
		else
			err = make_progress(q, deadline);
	}
	for (unsigned i = 0; !err && i < n; i++) {
		int64_t r;
		err = flexsc_poll(q, calls[i], &r);
		if (!err && rets)
			rets[i] = r;
	}
	if (ip != idx)
		free(ip);
	return err;
}

FX_EXPORT int flexsc_wait(struct flexsc_queue *q, const struct timespec *timeout)
{
	uint64_t deadline;
	int err;

	if (!q || q->destroyed)
		return -EINVAL;
	err = deadline_of(timeout, &deadline);
	if (!err) {
		/* flush even when something is ready already, and count what finished since */
		if (q->npending)
			flexsc_flush(q);
		fx_queue_harvest(q);
	}
	while (!err && q->nready == 0) {
		if (!q->npending && !remote_inflight(q))
			return take_kick(q) ? -EINTR : -ECHILD;
		err = make_progress(q, deadline);
	}
	return err ? err : (int)q->nready;
}

FX_EXPORT int flexsc_queue_wake(struct flexsc_queue *q)
{
	if (!q || q->destroyed)
		return -EINVAL;
	/* seq_cst: the owner's sleep path checks kicked after announcing its sleep */
	atomic_store(&q->kicked, true);
	fx_wake_up(q->wake);
	return 0;
}

FX_EXPORT int64_t flexsc_syscall(struct flexsc_queue *q, long sysnum, unsigned nargs,
				 const uint64_t *args)
{
	flexsc_call_t call;
	int64_t ret;
	bool woken = false;
	int err = flexsc_post(q, sysnum, nargs, args, NULL, &call);

	/*
	 * A wake is not this call's result: returning -EINTR would pass for
	 * the call's own and lose its descriptor with the call in flight. So
	 * keep waiting, and re-arm the wake for the owner's next wait.
	 */
	if (!err)
		while ((err = flexsc_wait_one(q, call, &ret, NULL)) == -EINTR)
			woken = true;
	if (woken)
		flexsc_queue_wake(q);
	return err ? err : ret;
}
