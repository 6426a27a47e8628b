/* SPDX-License-Identifier: MIT */
/*
 * A queue: one owner's syscall pages and the life cycle of their entries.
 *
 * The problem. The owner must post a call with a few plain stores and go
 * on, and later learn which calls finished, without scanning hundreds of
 * entries and without atomic read-modify-write instructions on its path.
 *
 * The shape. Everything the owner alone touches lives beside the pages,
 * never in them: a LIFO stack of free indices (allocation in O(1)), the
 * pending array (posted, not flushed, in post order), and a doubly linked
 * ready list (done, not collected, in completion order, O(1) removal so a
 * descriptor can be collected out of order). Only the entry's status byte
 * is shared with engines, and once an engine took an entry only it moves
 * it on to DONE (include/flexsc/page.h says who stores which state); each
 * engine hands finished indices back to the owner through
 * its own single-consumer channel (the io_uring CQ, the syscall threads'
 * completion ring), and fx_queue_complete files them on the ready list.
 *
 * Descriptors are (generation << 32 | queue tag << 16 | index + 1): the
 * generation is bumped at every reuse of an entry, so a stale descriptor is
 * told apart from a live one without any table, and the tag (1..65535, one
 * per queue created, in turn) tells a descriptor of another queue apart.
 *
 * Rejected: scanning pages for free or done entries (the paper's syscall
 * threads do, but it is O(entries) per call for the owner), and one shared
 * completion list for all engines (it would need a multi-producer lock on
 * the owner's side).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/close_range.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "core/internal.h"
#include "core/systab.h"
#include "engine/engine.h"
#include "batch/policy.h"
#include "batch/order.h"

#define FX_CALL_INDEX 0xffffu /* index + 1, below the tag */
_Static_assert(64 * FLEXSC_ENTRIES_PER_PAGE < FX_CALL_INDEX, "an index fits below the tag");

static inline flexsc_call_t make_call(const struct flexsc_queue *q, unsigned idx)
{
	return ((uint64_t)q->entries[idx].gen << 32) | ((uint32_t)q->tag << 16) | (idx + 1);
}

/*
 * 0 and the index; -EINVAL for a descriptor that never named an entry (or
 * q destroyed), -EXDEV for one of another queue, -ESTALE for a spent one.
 */
int fx_call_index(const struct flexsc_queue *q, flexsc_call_t call, unsigned *idx)
{
	uint32_t low = (uint32_t)call & FX_CALL_INDEX, tag = (uint32_t)call >> 16,
		 gen = (uint32_t)(call >> 32);

	if (low == 0 || low > q->nentries || tag == 0 || q->destroyed)
		return -EINVAL;
	if (tag != q->tag)
		return -EXDEV;
	*idx = low - 1;
	uint32_t cur = q->entries[*idx].gen;
	if (gen > cur)
		return -EINVAL;
	if (gen < cur || q->slots[*idx].state == FX_SLOT_FREE)
		return -ESTALE;
	return 0;
}

static void ready_push(struct flexsc_queue *q, unsigned idx)
{
	struct fx_slot *s = &q->slots[idx];

	s->state = FX_SLOT_READY;
	s->next = FX_NIL;
	s->prev = q->ready_tail;
	if (q->ready_tail != FX_NIL)
		q->slots[q->ready_tail].next = (uint16_t)idx;
	else
		q->ready_head = (uint16_t)idx;
	q->ready_tail = (uint16_t)idx;
	q->nready++;
}

static void ready_unlink(struct flexsc_queue *q, unsigned idx)
{
	struct fx_slot *s = &q->slots[idx];

	if (s->prev != FX_NIL)
		q->slots[s->prev].next = s->next;
	else
		q->ready_head = s->next;
	if (s->next != FX_NIL)
		q->slots[s->next].prev = s->prev;
	else
		q->ready_tail = s->prev;
	q->nready--;
}

/* Posted calls after which a descriptor number may name something else, or its flags changed. */
static bool changes_fds(const struct flexsc_entry *e)
{
	switch (fx_sys_fds(e->sysnum)) {
	case FX_FDS_CLOSE: case FX_FDS_DUP_A1:
		return true;
	case FX_FDS_FCNTL:
		return e->args[1] == F_SETFL || e->args[1] == F_DUPFD || e->args[1] == F_DUPFD_CLOEXEC;
	case FX_FDS_IOCTL:
		return e->args[1] == FIONBIO;
	default:
		return false;
	}
}

/* The retry of a call that made keep_fd (fx_queue_reroute) gave ret: its result, on keep_fd's number. */
static int64_t replace_kept(const struct flexsc_entry *e, int keep_fd, int64_t ret)
{
	if (ret < 0) {
		fx_raw_syscall6(SYS_close, keep_fd, 0, 0, 0, 0, 0);
		return ret;
	}
	int cloexec = fx_open_flags(e->sysnum, e->args) & O_CLOEXEC;
	if (fx_raw_syscall6(SYS_dup3, ret, keep_fd, cloexec, 0, 0, 0) < 0)
		return ret; /* cannot fail for two open descriptors; if it did, the retry's own number */
	fx_raw_syscall6(SYS_close, ret, 0, 0, 0, 0, 0);
	fx_fd_changed();
	return keep_fd;
}

/* What the runtime knows of the descriptors, after e gave ret. */
static void keep_fd_facts(const struct flexsc_entry *e, int64_t ret)
{
	if (fx_sys_fds(e->sysnum) == FX_FDS_NONE)
		return; /* most calls: one load */
	if (changes_fds(e))
		fx_fd_changed();
	fx_fd_made(e->sysnum, e->args, ret);
	if (fx_unlikely(atomic_load_explicit(&fx_fd_marks_used, memory_order_relaxed)) && ret >= 0)
		fx_fd_track_result(e, ret);
}

/* Called by the owner when an engine reports idx finished with ret. */
void fx_queue_complete(struct flexsc_queue *q, unsigned idx, int64_t ret)
{
	struct flexsc_entry *e = &q->entries[idx];
	struct fx_slot *s = &q->slots[idx];

	if (fx_unlikely(s->keep_fd)) {
		ret = replace_kept(e, s->keep_fd - 1, ret);
		s->keep_fd = 0;
	}
	keep_fd_facts(e, ret);
	e->ret = ret;
	/* release: the owner is the reader too, but an observer of the page must see ret before DONE */
	__atomic_store_n(&e->status, FLEXSC_DONE, __ATOMIC_RELEASE);
	if (s->state == FX_SLOT_INFLIGHT)
		q->inflight[s->route]--;
	q->stats.completed++;
	ready_push(q, idx);
}

/* Returns the entry to the free stack: the descriptor is spent. */
static int64_t collect(struct flexsc_queue *q, unsigned idx)
{
	struct flexsc_entry *e = &q->entries[idx];
	int64_t ret = e->ret;

	ready_unlink(q, idx);
	q->slots[idx].state = FX_SLOT_FREE;
	q->slots[idx].cookie = NULL;
	__atomic_store_n(&e->status, FLEXSC_FREE, __ATOMIC_RELAXED);
	q->free_stack[q->nfree++] = (uint16_t)idx;
	return ret;
}

int fx_queue_harvest(struct flexsc_queue *q)
{
	int n = 0;

	if (q->inflight[FX_ROUTE_URING])
		n += fx_uring_harvest(q);
	if (q->inflight[FX_ROUTE_THREAD])
		n += fx_threads_harvest(q);
	return n;
}

/*
 * A filtered owner hands no call to the ring (identity.c): it would bypass
 * the filter. The ring is made here, on the owner, the first time a call
 * could use it; on failure q->ring stays NULL and calls take the fallback
 * route.
 */
static bool ring_allowed(struct flexsc_queue *q)
{
	if (fx_unlikely(q->ring_later) && !q->filtered && !q->to_threads) {
		q->ring_later = false;
		fx_uring_create(q);
	}
	return q->ring && !q->filtered && !q->to_threads;
}

void fx_queue_to_threads(struct flexsc_queue *q, bool on)
{
	/* only the auto engine falls back to the threads (uring falls back to sync) */
	q->to_threads = on && q->tq && q->fx->engine == FLEXSC_ENGINE_AUTO;
}

/*
 * Decision: once the program installs a filter, the runtime says so at
 * once, and the owner's calls all run on it without another question to
 * the kernel: a filter of OpenSSH's kind kills the thread at any call not
 * on its list, and the questions that route a call (fcntl, fstat and lseek
 * for descriptor facts, prctl at the next flush) are on none.
 */
void fx_queue_note_filter(struct flexsc_queue *q, bool every_thread)
{
	if (every_thread)
		atomic_store(&q->fx->filtered_all, true);
	else
		q->filtered = true;
}

/* Every call of q's owner runs on it: it is under a seccomp filter (identity.c). */
static bool owner_filtered(const struct flexsc_queue *q)
{
	return q->filtered || atomic_load_explicit(&q->fx->filtered_all, memory_order_relaxed);
}

/* Where a delegable call goes when io_uring does not take it. */
static enum fx_route fallback_route(const struct flexsc_queue *q)
{
	enum flexsc_engine eng = q->fx->engine;

	if ((eng == FLEXSC_ENGINE_AUTO || eng == FLEXSC_ENGINE_THREADS) && q->tq && !q->filtered)
		return FX_ROUTE_THREAD;
	return FX_ROUTE_SYNC;
}

/*
 * Calls the table lets go elsewhere but whose arguments tie them to the
 * caller: priority-inheritance futex operations record the caller's thread
 * id as the lock owner, and close_range(CLOSE_RANGE_UNSHARE) would give the
 * executing thread a private descriptor table.
 */
static bool local_by_args(const struct flexsc_entry *e)
{
	if (e->sysnum == SYS_futex) {
		switch (e->args[1] & FUTEX_CMD_MASK) {
		case FUTEX_LOCK_PI: case FUTEX_LOCK_PI2: case FUTEX_UNLOCK_PI:
		case FUTEX_TRYLOCK_PI: case FUTEX_WAIT_REQUEUE_PI: case FUTEX_CMP_REQUEUE_PI:
			return true;
		}
	}
	return e->sysnum == SYS_close_range && (e->args[2] & CLOSE_RANGE_UNSHARE);
}

/*
 * Calls that are quick unless the kernel must read the disk: attributes of
 * a file (stat and friends). io_uring always hands STATX to an io-wq worker,
 * a kernel thread switch on this core, and a syscall thread costs a
 * hand-off: either costs more than the call (Apache, one stat a request:
 * 1.3x NPTL through io_uring, 1.6x in place, on one core). So on the auto
 * engine they run in place, timed; one that took longer than
 * fx->quick_slow_ns (200 us) must have waited for the disk, and sends the
 * quick calls of this queue the usual way (ring or threads) for
 * FX_QUICK_BACKOFF_NS: a carrier stalls for the disk at most once a second.
 */
#define FX_QUICK_BACKOFF_NS (1000 * 1000000ull)

/* A quick call on this queue's engine: run in place and timed, unless backing off. */
static bool quick_call(const struct flexsc_queue *q, const struct flexsc_entry *e)
{
	return q->fx->engine == FLEXSC_ENGINE_AUTO &&
	       (e->sysnum == SYS_newfstatat || e->sysnum == SYS_fstat || e->sysnum == SYS_statx);
}

static bool quick_in_place(const struct flexsc_queue *q, const struct flexsc_entry *e)
{
	return quick_call(q, e) && (!q->quick_off_until || fx_now_ns() >= q->quick_off_until);
}

static enum fx_route route_for(struct flexsc_queue *q, const struct fx_sysdesc *d,
			       const struct flexsc_entry *e, bool chain_fd)
{
	enum flexsc_engine eng = q->fx->engine;

	if (d->cls == FLEXSC_CLASS_LOCAL || local_by_args(e))
		return FX_ROUTE_LOCAL;
	if (fx_unlikely(owner_filtered(q)))
		return FX_ROUTE_SYNC;
	if (!chain_fd && (fx_call_cannot_block(e) || quick_in_place(q, e)))
		return FX_ROUTE_LOCAL;
	/* namespaces: no other task is in the caller's for sure, an SQPOLL thread included */
	if ((eng == FLEXSC_ENGINE_AUTO || eng == FLEXSC_ENGINE_URING) && ring_allowed(q) &&
	    fx_uring_can(q->fx, e, chain_fd) && !((d->dep & FX_DEP_NS) && q->fx->cfg.sqpoll))
		return FX_ROUTE_URING;
	return (d->dep & FX_DEP_NS) ? FX_ROUTE_SYNC : fallback_route(q);
}

static unsigned take_entry(struct flexsc_queue *q, long sysnum, unsigned nargs,
			   const uint64_t *args, void *cookie)
{
	unsigned idx = q->free_stack[--q->nfree];
	struct flexsc_entry *e = &q->entries[idx];

	e->gen++;
	e->sysnum = (uint16_t)sysnum;
	e->nargs = (uint8_t)nargs;
	for (unsigned i = 0; i < FLEXSC_MAX_ARGS; i++)
		e->args[i] = i < nargs ? args[i] : 0;
	e->ret = 0;
	q->slots[idx].cookie = cookie;
	q->slots[idx].chain_len = 0;
	q->slots[idx].chain_fd = 0;
	q->slots[idx].chained = 0;
	q->slots[idx].keep_fd = 0;
	q->link[idx] = FX_NIL;
	q->stats.posted++;
	return idx;
}

static void run_local(struct flexsc_queue *q, unsigned idx)
{
	struct flexsc_entry *e = &q->entries[idx];
	bool timed = quick_call(q, e);
	uint64_t t0 = timed ? fx_now_ns() : 0;

	q->slots[idx].route = FX_ROUTE_LOCAL;
	q->slots[idx].state = FX_SLOT_INFLIGHT;
	q->inflight[FX_ROUTE_LOCAL]++;
	q->stats.by_engine[FLEXSC_ENGINE_AUTO]++;
	int64_t ret = fx_sync_run(e);
	if (timed) {
		uint64_t t1 = fx_now_ns();
		if (t1 - t0 > q->fx->quick_slow_ns)
			q->quick_off_until = t1 + FX_QUICK_BACKOFF_NS;
	}
	fx_queue_complete(q, idx, ret);
}

static void make_pending(struct flexsc_queue *q, unsigned idx, enum fx_route route)
{
	q->slots[idx].route = (uint8_t)route;
	q->slots[idx].state = FX_SLOT_PENDING;
	/* relaxed: engines only see the entry after the flush publishes its index (release) */
	__atomic_store_n(&q->entries[idx].status, FLEXSC_SUBMITTED, __ATOMIC_RELAXED);
	if (q->npending == 0)
		q->first_pending_ns = fx_batch_clock(q);
	q->pending[q->npending++] = (uint16_t)idx;
}

void fx_queue_reroute(struct flexsc_queue *q, unsigned idx, int keep_fd)
{
	struct fx_slot *s = &q->slots[idx];

	q->inflight[s->route]--;
	s->keep_fd = keep_fd + 1;
	make_pending(q, idx, fallback_route(q));
}

static int check_alive(const struct flexsc_queue *q)
{
	if (!q)
		return -EINVAL;
	if (fx_unlikely(q->dead))
		return q->destroyed ? -EINVAL : -ESHUTDOWN;
	return 0;
}

/*
 * Flushes the batch if its threshold or time bound says so: what the owner
 * checks on every entry into the library that may leave calls pending
 * (post, poll, reap). An owner that only reaps needs it too: a runtime
 * whose user threads keep it busy without posting would otherwise never
 * issue a posted call (MariaDB livelocked so: threads waking each other
 * through futexes while the lock holder's fdatasync stayed pending).
 */
static void flush_if_due(struct flexsc_queue *q)
{
	if (q->npending && !q->dead && fx_batch_due(q))
		flexsc_flush(q);
}

/*
 * Calls that cannot be posted at all (flexsc_post(3) says why): the child
 * of fork, vfork, clone or clone3 made by a raw system call would return
 * into the library (on the parent's stack, for vfork and CLONE_VM), without
 * glibc's fork handlers; rt_sigreturn pops a signal frame that is not
 * there; uprobe and uretprobe are only for a uprobe trampoline (SIGILL).
 */
static bool unpostable(long nr)
{
	switch (nr) {
	case SYS_fork: case SYS_vfork: case SYS_clone: case SYS_clone3:
	case SYS_rt_sigreturn:
	case 335: /* uretprobe */
	case 336: /* uprobe */
		return true;
	default:
		return false;
	}
}

FX_EXPORT int flexsc_post(struct flexsc_queue *q, long sysnum, unsigned nargs,
			  const uint64_t *args, void *cookie, flexsc_call_t *call)
{
	int err = check_alive(q);

	if (err)
		return err;
	if (nargs > FLEXSC_MAX_ARGS || (nargs && !args))
		return -EINVAL;
	const struct fx_sysdesc *d = fx_sysdesc(sysnum);
	if (!d)
		return -ENOSYS;
	if (unpostable(sysnum))
		return -EINVAL;
	if (q->nfree == 0) {
		fx_queue_harvest(q);
		if (q->nfree == 0)
			return -EAGAIN;
	}
	unsigned idx = take_entry(q, sysnum, nargs, args, cookie);
	if (call)
		*call = make_call(q, idx);
	enum fx_route route = route_for(q, d, &q->entries[idx], false);
	if (route == FX_ROUTE_LOCAL) {
		run_local(q, idx);
		return 0;
	}
	make_pending(q, idx, route);
	flush_if_due(q);
	return 0;
}

bool fx_queue_run_now(struct flexsc_queue *q, long nr, unsigned nargs, const uint64_t *args,
		      int64_t *ret)
{
	struct flexsc_entry e = { .sysnum = (uint16_t)nr, .nargs = (uint8_t)nargs };

	if (check_alive(q) || nargs > FLEXSC_MAX_ARGS || !fx_sysdesc(nr) || unpostable(nr))
		return false;
	memcpy(e.args, args, nargs * sizeof(*args));
	*ret = fx_sync_run(&e);
	keep_fd_facts(&e, *ret);
	q->stats.posted++;
	q->stats.completed++;
	q->stats.by_engine[FLEXSC_ENGINE_AUTO]++;
	return true;
}

static void chain_complete(void *q, unsigned idx, int64_t ret)
{
	fx_queue_complete(q, idx, ret);
}

/* Runs after the remote engines got their batch, so they work meanwhile. */
void fx_queue_run_here(struct flexsc_queue *q, unsigned idx)
{
	if (q->fx->sync_to_owner && !q->slots[idx].chain_len)
		fx_queue_complete(q, idx, FX_RET_REFUSED); /* the owner runs it, where it waits */
	else if (q->slots[idx].chain_len)
		fx_chain_run(q->entries, q->link, idx, chain_complete, q);
	else
		fx_queue_complete(q, idx, fx_sync_run(&q->entries[idx]));
}

static void count_batch(struct flexsc_queue *q, unsigned n)
{
	unsigned b = 0;

	while ((n >>= 1) && b < FLEXSC_HIST_BUCKETS - 1)
		b++;
	q->stats.batches++;
	q->stats.batch_hist[b]++;
}

static void mark_inflight(struct flexsc_queue *q, unsigned idx)
{
	struct fx_slot *s = &q->slots[idx];
	unsigned ops = s->chain_len ? s->chain_len : 1;

	for (unsigned i = 0; i < ops; i++, idx = q->link[idx]) {
		q->slots[idx].state = FX_SLOT_INFLIGHT;
		q->slots[idx].route = s->route;
		q->inflight[s->route]++;
		q->stats.by_engine[s->route == FX_ROUTE_URING ? FLEXSC_ENGINE_URING :
				   s->route == FX_ROUTE_THREAD ? FLEXSC_ENGINE_THREADS :
								 FLEXSC_ENGINE_SYNC]++;
	}
}

/* The FX_SHARE_* that the call at idx (with the rest of its chain) needs of the owner on a ring's io-wq worker. */
static unsigned context_dep(const struct flexsc_queue *q, unsigned idx)
{
	unsigned need = 0;

	for (unsigned i = idx; i != FX_NIL; i = q->slots[idx].chain_len ? q->link[i] : FX_NIL) {
		const struct fx_sysdesc *d = fx_sysdesc(q->entries[i].sysnum);
		if (d && (d->dep & FX_DEP_FS))
			need |= FX_SHARE_FS;
		if (d && (d->dep & FX_DEP_FILES))
			need |= FX_SHARE_FILES;
	}
	return need;
}

/*
 * The hand-over check (identity.c), made at every flush that sends calls
 * away from the owner, with the kernel's answers of this moment: a
 * filtered owner runs them all itself (io_uring bypasses its filter, and
 * another task is not under it), and so does an owner an SQPOLL ring would
 * not run them as; one that no longer shares the process's descriptor
 * table or fs context runs itself the calls an io-wq worker would resolve
 * with those (FX_DEP_FS, FX_DEP_FILES); calls for the syscall threads
 * carry the owner's identity, which those threads compare with their own.
 */
static void check_identity(struct flexsc_queue *q, unsigned n)
{
	bool ring = false, threads = false;
	unsigned context = 0;

	for (unsigned i = 0; i < n; i++) {
		unsigned idx = q->pending[i];
		ring |= q->slots[idx].route == FX_ROUTE_URING;
		threads |= q->slots[idx].route == FX_ROUTE_THREAD;
		if (q->slots[idx].route == FX_ROUTE_URING)
			context |= context_dep(q, idx);
	}
	if (!ring && !threads)
		return;
	struct fx_identity id;
	bool sqpoll = ring && q->fx->cfg.sqpoll;
	if (threads || sqpoll)
		fx_identity_read(&id);
	else
		id.seccomp = fx_seccomp_filtered();
	q->filtered |= id.seccomp != 0; /* a task never loses a filter */
	bool ring_ok = !q->filtered && (!sqpoll || fx_uring_runs_as(q, &id));
	/* SQPOLL: runs_as looked at the context for every call */
	bool context_ok = ring_ok && (sqpoll || !context || fx_uring_shares_context(q, context));
	if (threads && !q->filtered)
		fx_threads_identity(q, &id, (int)fx_raw_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0));
	for (unsigned i = 0; i < n; i++) {
		unsigned idx = q->pending[i];
		struct fx_slot *s = &q->slots[idx];
		if ((s->route == FX_ROUTE_URING && (!ring_ok || (!context_ok && context_dep(q, idx)))) ||
		    (s->route == FX_ROUTE_THREAD && q->filtered))
			s->route = FX_ROUTE_SYNC;
	}
}

FX_EXPORT int flexsc_flush(struct flexsc_queue *q)
{
	int err = check_alive(q);
	unsigned n = q ? q->npending : 0, nsync = 0;

	if (err)
		return err;
	if (n == 0)
		return 0;
	check_identity(q, n);
	if (q->order_scratch)
		fx_order_batch(q->pending, n, q->entries, q->fx->cfg.flags, q->order_scratch);
	for (unsigned i = 0; i < n; i++) {
		unsigned idx = q->pending[i];
		struct fx_slot *s = &q->slots[idx];

		mark_inflight(q, idx);
		switch (s->route) {
		case FX_ROUTE_URING:
			if (s->chain_len)
				fx_uring_add_chain(q, idx);
			else
				fx_uring_add(q, idx);
			break;
		case FX_ROUTE_THREAD:
			fx_threads_add(q, idx);
			break;
		default:
			q->pending[nsync++] = (uint16_t)idx;
		}
	}
	if (q->inflight[FX_ROUTE_URING])
		fx_uring_commit(q);
	if (q->inflight[FX_ROUTE_THREAD])
		fx_threads_commit(q);
	q->npending = 0;
	for (unsigned i = 0; i < nsync; i++)
		fx_queue_run_here(q, q->pending[i]);
	count_batch(q, n);
	return (int)n;
}

FX_EXPORT int flexsc_poll(struct flexsc_queue *q, flexsc_call_t call, int64_t *ret)
{
	unsigned idx;
	int err;

	if (!q)
		return -EINVAL;
	err = fx_call_index(q, call, &idx);
	if (err)
		return err;
	if (q->slots[idx].state == FX_SLOT_INFLIGHT) {
		/* nothing came back: the call may be queued behind blocked threads (see make_progress() in wait.c) */
		if (!fx_queue_harvest(q) && q->slots[idx].route == FX_ROUTE_THREAD)
			fx_threads_unstick(q);
	} else if (q->slots[idx].state == FX_SLOT_PENDING) {
		flush_if_due(q);
	}
	if (q->slots[idx].state != FX_SLOT_READY)
		return -EINPROGRESS;
	int64_t r = collect(q, idx);
	if (ret)
		*ret = r;
	return 0;
}

FX_EXPORT int flexsc_reap(struct flexsc_queue *q, struct flexsc_completion *out, unsigned max)
{
	unsigned n = 0;

	if (!q || (max && !out) || q->destroyed)
		return -EINVAL;
	flush_if_due(q);
	if (q->nready < max && !fx_queue_harvest(q) && !q->nready && q->inflight[FX_ROUTE_THREAD])
		fx_threads_unstick(q); /* nothing came back: as in flexsc_poll */
	while (n < max && q->ready_head != FX_NIL) {
		unsigned idx = q->ready_head;

		out[n].call = make_call(q, idx);
		out[n].cookie = q->slots[idx].cookie;
		out[n].ret = collect(q, idx);
		n++;
	}
	return (int)n;
}

bool fx_queue_may_have_waited(const struct flexsc_queue *q, flexsc_call_t call)
{
	unsigned idx;

	if (!q || fx_call_index(q, call, &idx) || q->slots[idx].state != FX_SLOT_INFLIGHT)
		return false;
	return q->slots[idx].route == FX_ROUTE_URING ||
	       (q->slots[idx].route == FX_ROUTE_THREAD && fx_threads_all_busy(q));
}

FX_EXPORT int flexsc_cancel(struct flexsc_queue *q, flexsc_call_t call)
{
	unsigned idx;
	int err;

	if (!q)
		return -EINVAL;
	err = fx_call_index(q, call, &idx);
	if (err)
		return err;
	struct fx_slot *s = &q->slots[idx];
	switch (s->state) {
	case FX_SLOT_PENDING:
		if (s->chained)
			return -EALREADY; /* a chain runs whole */
		for (unsigned i = 0; i < q->npending; i++) {
			if (q->pending[i] == idx) {
				memmove(&q->pending[i], &q->pending[i + 1],
					(q->npending - i - 1) * sizeof(q->pending[0]));
				q->npending--;
				break;
			}
		}
		fx_queue_complete(q, idx, -ECANCELED);
		return 0;
	case FX_SLOT_INFLIGHT:
		if (s->route == FX_ROUTE_URING)
			return s->chained ? -EALREADY : fx_uring_cancel(q, idx);
		if (s->route == FX_ROUTE_THREAD)
			return fx_threads_cancel(q, idx);
		return -EALREADY;
	default:
		return -EALREADY;
	}
}

FX_EXPORT int flexsc_queue_stats(const struct flexsc_queue *q, struct flexsc_stats *st)
{
	if (!q || !st || q->destroyed)
		return -EINVAL;
	*st = q->stats;
	return 0;
}

/*
 * 1 if op passes op 0's descriptor on, else 0; -EINVAL for FLEXSC_CHAIN_FD
 * past nargs, where the entry gets 0 instead: a close would close
 * descriptor 0 and leak op 0's. Call with nargs checked.
 */
static int chain_uses_fd(const struct flexsc_op *op)
{
	int used = 0;

	for (unsigned a = 0; a < FLEXSC_MAX_ARGS; a++) {
		if (op->args[a] != FLEXSC_CHAIN_FD)
			continue;
		if (a >= op->nargs)
			return -EINVAL;
		used = 1;
	}
	return used;
}

/* local_by_args for an op, whose arguments past nargs are 0 as in its entry. */
static bool op_local_by_args(const struct flexsc_op *op)
{
	struct flexsc_entry e = { .sysnum = (uint16_t)op->sysnum };

	for (unsigned a = 0; a < op->nargs; a++)
		e.args[a] = op->args[a];
	return local_by_args(&e);
}

static bool makes_fd(long nr)
{
	return nr == SYS_openat || nr == SYS_open || nr == SYS_socket;
}

/* The rules of flexsc_post_chain, checked before anything is taken. */
static int chain_check(const struct flexsc_op *ops, unsigned n, bool *fd)
{
	if (!ops || n == 0 || n > FLEXSC_CHAIN_MAX)
		return -EINVAL;
	*fd = false;
	for (unsigned i = 0; i < n; i++) {
		const struct fx_sysdesc *d = fx_sysdesc(ops[i].sysnum);

		if (!d)
			return -ENOSYS;
		if (ops[i].nargs > FLEXSC_MAX_ARGS || d->cls == FLEXSC_CLASS_LOCAL ||
		    op_local_by_args(&ops[i]))
			return -EINVAL;
		int uses = chain_uses_fd(&ops[i]);
		if (uses < 0)
			return uses;
		if (uses) {
			if (i == 0 || !makes_fd(ops[0].sysnum))
				return -EINVAL;
			*fd = true;
		}
	}
	if (*fd && !(ops[n - 1].sysnum == SYS_close && ops[n - 1].nargs >= 1 &&
		     ops[n - 1].args[0] == FLEXSC_CHAIN_FD))
		return -EINVAL;
	return 0;
}

/*
 * Op 0 makes a nonblocking descriptor. io_uring waits where calls on such a
 * descriptor fail with EAGAIN or EINPROGRESS, and the ring's route check
 * (fd_fits in src/engine/uring.c) cannot look at one that does not exist yet.
 */
static bool makes_nonblocking_fd(const struct flexsc_op *op0)
{
	switch (op0->sysnum) {
	case SYS_socket: return op0->args[1] & SOCK_NONBLOCK;
	case SYS_open: case SYS_openat: return fx_open_flags(op0->sysnum, op0->args) & O_NONBLOCK;
	default: return false;
	}
}

FX_EXPORT int flexsc_post_chain(struct flexsc_queue *q, const struct flexsc_op *ops,
				unsigned n, flexsc_call_t *calls)
{
	uint16_t idx[FLEXSC_CHAIN_MAX];
	bool fd, uring = true;
	int err = check_alive(q);

	if (err)
		return err;
	err = chain_check(ops, n, &fd);
	if (err)
		return err;
	if (q->nfree < n) {
		fx_queue_harvest(q);
		if (q->nfree < n)
			return -EAGAIN;
	}
	for (unsigned i = 0; i < n; i++) {
		idx[i] = (uint16_t)take_entry(q, ops[i].sysnum, ops[i].nargs, ops[i].args, NULL);
		q->slots[idx[i]].chained = 1;
		if (i)
			q->link[idx[i - 1]] = idx[i];
		if (calls)
			calls[i] = make_call(q, idx[i]);
		uring = uring && fx_uring_chainable(ops[i].sysnum) &&
			route_for(q, fx_sysdesc(ops[i].sysnum), &q->entries[idx[i]],
				  fd && i > 0) == FX_ROUTE_URING;
	}
	/*
	 * One route for the whole chain: io_uring only if it can run every op,
	 * and, when op 0's descriptor is passed on, only if the ring has the
	 * direct descriptor table that carries it.
	 */
	enum fx_route route = uring && (!fd || (fx_uring_has_direct(q) && !makes_nonblocking_fd(&ops[0])))
				      ? FX_ROUTE_URING : fallback_route(q);
	for (unsigned i = 1; i < n; i++) {
		q->slots[idx[i]].route = (uint8_t)route;
		q->slots[idx[i]].state = FX_SLOT_PENDING;
		__atomic_store_n(&q->entries[idx[i]].status, FLEXSC_SUBMITTED, __ATOMIC_RELAXED);
	}
	q->slots[idx[0]].chain_len = (uint8_t)n;
	q->slots[idx[0]].chain_fd = fd;
	make_pending(q, idx[0], route);
	flush_if_due(q);
	return 0;
}

int fx_queue_init_entries(struct flexsc_queue *q, unsigned pages)
{
	static _Atomic uint32_t tags;

	q->tag = (uint16_t)(atomic_fetch_add_explicit(&tags, 1, memory_order_relaxed) % 0xffffu + 1);
	q->nentries = pages * FLEXSC_ENTRIES_PER_PAGE;
	q->pages_bytes = (size_t)pages * FLEXSC_PAGE_SIZE;
	/*
	 * Not populated: entries are taken lowest first and the freed one is
	 * the next taken, so a queue touches its first page or two; 64
	 * populated pages (256 KiB) cost each carrier, and each fork child
	 * that only execs, their zeroing and their memory.
	 */
	q->entries = mmap(NULL, q->pages_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q->entries == MAP_FAILED) {
		q->entries = NULL;
		return -ENOMEM;
	}
	q->slots = calloc(q->nentries, sizeof(*q->slots));
	q->free_stack = calloc(q->nentries, sizeof(*q->free_stack));
	q->pending = calloc(q->nentries, sizeof(*q->pending));
	q->link = calloc(q->nentries, sizeof(*q->link));
	if (!q->slots || !q->free_stack || !q->pending || !q->link)
		return -ENOMEM;
	if (q->fx->cfg.flags & FX_ORDER_FLAGS) {
		q->order_scratch = calloc(2 * (size_t)q->nentries, sizeof(*q->order_scratch));
		if (!q->order_scratch)
			return -ENOMEM;
	}
	/* Lowest index on top, so a light load keeps reusing the same few cache lines. */
	for (unsigned i = 0; i < q->nentries; i++)
		q->free_stack[i] = (uint16_t)(q->nentries - 1 - i);
	q->nfree = q->nentries;
	q->ready_head = q->ready_tail = FX_NIL;
	return 0;
}

void fx_queue_free_entries(struct flexsc_queue *q)
{
	if (q->entries)
		munmap(q->entries, q->pages_bytes);
	free(q->slots);
	free(q->free_stack);
	free(q->pending);
	free(q->link);
	free(q->order_scratch);
	q->entries = NULL;
	q->slots = NULL;
	q->free_stack = q->pending = q->link = NULL;
	q->order_scratch = NULL;
}
