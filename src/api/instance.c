/* SPDX-License-Identifier: MIT */
/*
 * Registration: an instance, its engines, its queues, and teardown.
 *
 * Engine choice happens once, here: io_uring is probed (opcodes by the
 * probe API, never assumed from headers), syscall threads are started
 * unless the engine is io_uring-only or synchronous, and whatever the kernel
 * refuses falls back with one warning. A queue then only asks "does my ring
 * exist, does the pool exist".
 *
 * Live instances are kept on a list so that a call with an instance that
 * was torn down gets -EINVAL instead of touching freed memory; queues left
 * alive at flexsc_exit are drained and marked dead, so their later use
 * gets -ESHUTDOWN, and flexsc_queue_destroy still frees them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"
#include "core/systab.h"
#include "engine/engine.h"

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct flexsc *live_head;
static struct flexsc_queue *destroyed_head; /* destroyed queues kept for reuse (under live_lock) */

FX_EXPORT void flexsc_config_init(struct flexsc_config *cfg)
{
	if (!cfg)
		return;
	memset(cfg, 0, sizeof(*cfg));
	cfg->engine = FLEXSC_ENGINE_AUTO;
	cfg->pages_per_queue = 8;
	cfg->sqpoll_idle_ms = 10;
	cfg->spin_us = 20;
	cfg->batch_threshold = 32;
	cfg->batch_timeout_us = 100;
	cfg->threads_per_cpu = 2;
	cfg->max_threads = 64;
	cfg->iowq_max_workers = 16;
}

FX_EXPORT const char *flexsc_engine_name(enum flexsc_engine engine)
{
	switch (engine) {
	case FLEXSC_ENGINE_AUTO: return "auto";
	case FLEXSC_ENGINE_URING: return "uring";
	case FLEXSC_ENGINE_THREADS: return "threads";
	case FLEXSC_ENGINE_SYNC: return "sync";
	}
	return "invalid";
}

FX_EXPORT enum flexsc_engine flexsc_engine_in_use(const struct flexsc *fx)
{
	return fx ? fx->engine : FLEXSC_ENGINE_SYNC;
}

/*
 * Syscall CPUs are checked against the CPUs the machine has, not against
 * the caller's affinity: pinning the caller to one core and its syscall
 * threads to another is the point. A CPU that a cpuset forbids shows up
 * when a thread is pinned, which then warns and runs unpinned.
 */
static int check_config(const struct flexsc_config *c)
{
	/* read from /sys (three system calls) only when there are CPUs to check */
	int ncpus = c->nr_syscall_cpus ? get_nprocs_conf() : 0;

	if ((unsigned)c->engine > FLEXSC_ENGINE_SYNC)
		return -EINVAL;
	if (c->pages_per_queue < 1 || c->pages_per_queue > 64)
		return -EINVAL;
	if (c->nr_syscall_cpus > FLEXSC_MAX_CPUS || c->batch_threshold < 1 ||
	    c->max_threads < 1 || c->iowq_max_workers < 1)
		return -EINVAL;
	if (c->sqpoll && (c->engine == FLEXSC_ENGINE_THREADS || c->engine == FLEXSC_ENGINE_SYNC))
		return -EINVAL;
	if (c->interrupt_signal < 0 || c->interrupt_signal > 64 || c->interrupt_signal == SIGKILL ||
	    c->interrupt_signal == SIGSTOP)
		return -EINVAL;
	for (unsigned i = 0; i < c->nr_syscall_cpus; i++)
		if (c->syscall_cpus[i] < 0 || c->syscall_cpus[i] >= ncpus)
			return -EINVAL;
	/* a later version's field that this one would silently ignore */
	for (unsigned i = 0; i < sizeof(c->reserved) / sizeof(c->reserved[0]); i++)
		if (c->reserved[i])
			return -EINVAL;
	return 0;
}

static bool is_live(const struct flexsc *fx)
{
	for (struct flexsc *p = live_head; p; p = p->next_live)
		if (p == fx)
			return true;
	return false;
}

FX_EXPORT int flexsc_register(struct flexsc **out, const struct flexsc_config *cfg)
{
	struct flexsc *fx;
	int err;

	if (!out)
		return -EINVAL;
	fx = calloc(1, sizeof(*fx));
	if (!fx)
		return -ENOMEM;
	if (cfg)
		fx->cfg = *cfg;
	else
		flexsc_config_init(&fx->cfg);
	err = check_config(&fx->cfg);
	if (err)
		goto fail;
	if (fx->cfg.max_threads < fx->cfg.threads_per_cpu * (fx->cfg.nr_syscall_cpus ? fx->cfg.nr_syscall_cpus : 1))
		fx->cfg.max_threads = fx->cfg.threads_per_cpu * (fx->cfg.nr_syscall_cpus ? fx->cfg.nr_syscall_cpus : 1);
	pthread_mutex_init(&fx->lock, NULL);
	fx->engine = fx->cfg.engine;
	/* 200 us: a cached stat takes ~1 us; tests set 0 to make every one "slow" */
	const char *slow = getenv("FLEXSC_QUICK_SLOW_NS");
	fx->quick_slow_ns = slow ? strtoull(slow, NULL, 10) : 200 * 1000ull;

	if (fx->engine == FLEXSC_ENGINE_AUTO || fx->engine == FLEXSC_ENGINE_URING) {
		fx_uring_probe(fx);
		if (!fx->uring_ok) {
			fx_warn(fx, "%s; using %s instead",
				fx_seccomp_filtered()
					? "a seccomp filter is installed and io_uring would bypass it"
					: "io_uring is unavailable here",
				fx->engine == FLEXSC_ENGINE_AUTO ? "syscall threads" : "synchronous calls");
			fx->engine = fx->engine == FLEXSC_ENGINE_AUTO ? FLEXSC_ENGINE_THREADS
								      : FLEXSC_ENGINE_SYNC;
		}
	}
	if (fx->engine == FLEXSC_ENGINE_AUTO || fx->engine == FLEXSC_ENGINE_THREADS) {
		err = fx_pool_create(fx);
		if (err)
			goto fail;
	}
	pthread_mutex_lock(&live_lock);
	fx->next_live = live_head;
	live_head = fx;
	pthread_mutex_unlock(&live_lock);
	*out = fx;
	return 0;
fail:
	free(fx);
	return err;
}

FX_EXPORT int flexsc_queue_create(struct flexsc *fx, struct flexsc_queue **out)
{
	struct flexsc_queue *q;
	int err;

	if (!out)
		return -EINVAL;
	pthread_mutex_lock(&live_lock);
	bool live = fx && is_live(fx);
	pthread_mutex_unlock(&live_lock);
	if (!live)
		return -EINVAL;
	pthread_mutex_lock(&live_lock);
	q = destroyed_head;
	if (q)
		destroyed_head = q->next_destroyed;
	pthread_mutex_unlock(&live_lock);
	if (q)
		memset(q, 0, sizeof(*q));
	else if (!(q = calloc(1, sizeof(*q))))
		return -ENOMEM;
	q->fx = fx;
	err = fx_queue_init_entries(q, fx->cfg.pages_per_queue);
	if (err)
		goto fail;
	q->own_wake.fd = -1;
	q->wake = &q->own_wake;
	if (fx->pool) {
		err = fx_pool_attach(fx->pool, q);
		if (err)
			goto fail;
		q->wake = &q->tq->wake;
	}
	/*
	 * FlexSC-Threads has its queues make the ring when a call could first
	 * use it (rings_later), by the owner: a queue whose calls all run
	 * elsewhere (a lone thread's, a fork child's about to exec) does not
	 * pay for one. A library user gets it now, with its descriptors.
	 */
	if (fx->uring_ok && (fx->engine == FLEXSC_ENGINE_AUTO || fx->engine == FLEXSC_ENGINE_URING)) {
		if (fx->rings_later)
			q->ring_later = true;
		else
			fx_uring_create(q); /* on failure q->ring stays NULL and calls take the fallback route */
	}

	pthread_mutex_lock(&fx->lock);
	if (fx->nqueues == fx->cap_queues) {
		unsigned cap = fx->cap_queues ? 2 * fx->cap_queues : 8;
		struct flexsc_queue **nq = realloc(fx->queues, cap * sizeof(*nq));
		if (!nq) {
			pthread_mutex_unlock(&fx->lock);
			err = -ENOMEM;
			goto fail;
		}
		fx->queues = nq;
		fx->cap_queues = cap;
	}
	fx->queues[fx->nqueues++] = q;
	pthread_mutex_unlock(&fx->lock);
	*out = q;
	return 0;
fail:
	if (q->ring)
		fx_uring_destroy(q);
	if (q->tq)
		fx_pool_detach(q);
	fx_queue_free_entries(q);
	free(q);
	return err;
}

/* Flushes and waits until nothing of q is in flight; results are dropped. */
static void drain(struct flexsc_queue *q)
{
	struct flexsc_completion c[64];

	flexsc_flush(q);
	/* pending again: an entry an engine gave back (fx_queue_reroute), flushed by the wait */
	while (q->inflight[FX_ROUTE_URING] || q->inflight[FX_ROUTE_THREAD] || q->npending) {
		flexsc_wait(q, NULL);
		while (flexsc_reap(q, c, 64) > 0)
			;
	}
}

static void queue_teardown(struct flexsc_queue *q)
{
	drain(q);
	if (q->ring)
		fx_uring_destroy(q);
	if (q->tq)
		fx_pool_detach(q);
	q->wake = &q->own_wake;
	q->dead = true;
}

/*
 * A destroyed queue's memory is not given back to malloc: it stays a dead
 * queue (every call on it returns -EINVAL, a second destroy too) until the
 * next flexsc_queue_create reuses it. Use after destroy is thus caught at
 * the cost of one flag no live path reads more than once, and the memory
 * kept is that of the most queues alive at once.
 */
static void keep_destroyed(struct flexsc_queue *q)
{
	memset(q, 0, sizeof(*q));
	q->dead = q->destroyed = true;
	q->own_wake.fd = -1;
	q->wake = &q->own_wake;
	pthread_mutex_lock(&live_lock);
	q->next_destroyed = destroyed_head;
	destroyed_head = q;
	pthread_mutex_unlock(&live_lock);
}

FX_EXPORT int flexsc_queue_destroy(struct flexsc_queue *q)
{
	if (!q || q->destroyed)
		return -EINVAL;
	if (!q->dead) {
		struct flexsc *fx = q->fx;

		queue_teardown(q);
		pthread_mutex_lock(&fx->lock);
		for (unsigned i = 0; i < fx->nqueues; i++) {
			if (fx->queues[i] == q) {
				fx->queues[i] = fx->queues[--fx->nqueues];
				break;
			}
		}
		pthread_mutex_unlock(&fx->lock);
	}
	fx_fd_close_kept(q->own_wake.fd);
	fx_queue_free_entries(q);
	keep_destroyed(q);
	return 0;
}

FX_EXPORT int flexsc_exit(struct flexsc *fx)
{
	pthread_mutex_lock(&live_lock);
	bool live = fx && is_live(fx);
	if (live) {
		struct flexsc **pp = &live_head;
		while (*pp != fx)
			pp = &(*pp)->next_live;
		*pp = fx->next_live;
	}
	pthread_mutex_unlock(&live_lock);
	if (!live)
		return -EINVAL;
	/*
	 * Queues still alive belong to other code paths; drain them here,
	 * which is only safe if their owners stopped using them, as the
	 * contract says. They stay allocated (dead) until destroyed.
	 */
	for (unsigned i = 0; i < fx->nqueues; i++)
		queue_teardown(fx->queues[i]);
	if (fx->pool)
		fx_pool_destroy(fx->pool);
	pthread_mutex_destroy(&fx->lock);
	free(fx->queues);
	free(fx);
	return 0;
}

/*
 * In a child after fork: only the forking thread exists, the syscall
 * threads do not, and the rings' memory is shared with the parent, which
 * still uses it. Unmapping and closing our copies is all that is safe:
 * nothing is drained, joined or submitted.
 */
FX_EXPORT int flexsc_forget(struct flexsc *fx)
{
	if (!fx)
		return -EINVAL;
	pthread_mutex_init(&live_lock, NULL); /* a parent thread may have held it */
	struct flexsc **pp = &live_head;
	while (*pp && *pp != fx)
		pp = &(*pp)->next_live;
	if (!*pp)
		return -EINVAL;
	*pp = fx->next_live;
	for (unsigned i = 0; i < fx->nqueues; i++) {
		struct flexsc_queue *q = fx->queues[i];
		if (q->ring)
			fx_uring_destroy(q); /* munmap and close: nothing reaches the parent's ring */
		fx_fd_close_kept(q->own_wake.fd);
		fx_queue_free_entries(q);
		free(q);
	}
	if (fx->pool)
		fx_pool_forget(fx->pool);
	free(fx->queues);
	free(fx);
	return 0;
}

FX_EXPORT int flexsc_sysinfo(const struct flexsc *fx, long sysnum, struct flexsc_sysinfo *info)
{
	const struct fx_sysdesc *d = fx_sysdesc(sysnum);

	if (!info)
		return -EINVAL;
	if (!d)
		return -ENOSYS;
	info->name = d->name;
	info->cls = (enum flexsc_class)d->cls;
	info->uring_opcode = d->uring_op == FX_NO_OPCODE ? -1 : d->uring_op;
	info->uring_supported = fx && fx->uring_ok && d->uring_op != FX_NO_OPCODE &&
				(fx->uring_ops[d->uring_op / 8] & (1u << (d->uring_op % 8)));
	info->why = d->why;
	return 0;
}
