/* SPDX-License-Identifier: MIT */
/*
 * Internal shapes shared by the core, the engines and the batching policy.
 * Internal names carry the prefix fx_; everything returns -errno.
 */
#ifndef FX_INTERNAL_H
#define FX_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <flexsc/flexsc.h>

#include "core/identity.h"
#include "core/systab.h"

#define FX_EXPORT __attribute__((visibility("default")))
#define fx_likely(x) __builtin_expect(!!(x), 1)
#define fx_unlikely(x) __builtin_expect(!!(x), 0)
#define FX_CACHELINE 64

/* Where a posted entry is executed. */
enum fx_route {
	FX_ROUTE_LOCAL = 0,  /* on the owner, at post time */
	FX_ROUTE_URING = 1,  /* the queue's io_uring */
	FX_ROUTE_THREAD = 2, /* the instance's syscall threads */
	FX_ROUTE_SYNC = 3,   /* on the owner, at flush time */
};

/* The owner's private view of an entry (never read by an engine). */
enum fx_slot_state {
	FX_SLOT_FREE = 0,
	FX_SLOT_PENDING,  /* posted, not yet flushed */
	FX_SLOT_INFLIGHT, /* handed to an engine */
	FX_SLOT_READY,    /* done, on the ready list, not yet collected */
};

#define FX_NIL 0xffffu /* end of an index list */

struct fx_slot {
	void *cookie;
	uint16_t prev, next; /* ready list */
	uint8_t state;       /* enum fx_slot_state */
	uint8_t route;       /* enum fx_route */
	uint8_t chain_len;   /* on a chain's op 0: ops in the chain; else 0 */
	uint8_t chain_fd;    /* op 0 makes a descriptor that later ops use */
	uint8_t chained;     /* part of a chain: cancelled whole or not at all */
	int32_t keep_fd;     /* a descriptor an earlier try made, plus one, which the result replaces (fx_queue_reroute); 0: none */
};

/*
 * The part of a queue that syscall threads touch. It is owned by the pool,
 * not by the queue, and is never freed while the pool lives: a detached
 * one is kept for the next queue. So a syscall thread that read a pointer
 * to it just before its queue went away touches valid (empty) memory.
 */
/*
 * How to wake a queue's owner: it says how it sleeps (a futex on sleep, or
 * an eventfd read armed on its ring) and a waker takes that with an
 * exchange. Lives in the pool-owned fx_tq when the queue has syscall
 * threads (they may still wake it after the queue is gone), else in the
 * queue.
 */
struct fx_wake {
	_Atomic uint32_t sleep; /* FX_SLEEP_* */
	int fd;                 /* eventfd, or -1 */
};

/* A queue's owner as its syscall threads compare themselves with it: 32-bit words only. */
struct fx_owner {
	uint32_t seq;       /* bumped when the rest changes; 0: none recorded yet */
	int32_t tid;
	struct fx_identity id;
};

struct fx_tq {
	/* written by the owner at each flush */
	_Alignas(FX_CACHELINE) _Atomic uint32_t sq_tail;
	_Atomic int owner_cpu;        /* where the owner flushed: no spinning against it there */
	/* written by syscall threads under claim */
	_Alignas(FX_CACHELINE) _Atomic uint32_t sq_head;
	_Atomic int claim;            /* 0 free, 1 held: one syscall thread at a time moves indices */
	/* written by syscall threads, read by the owner */
	_Alignas(FX_CACHELINE) _Atomic uint32_t cq_tail;
	/* the owner's alone */
	_Alignas(FX_CACHELINE) _Atomic uint32_t cq_head;
	/* read on every completion, written only when the owner goes to sleep */
	_Alignas(FX_CACHELINE) struct fx_wake wake;
	/*
	 * Who the owner was at its last flush (core/identity.c); id_stamp[idx]
	 * is the seq a call was flushed with. A syscall thread runs a call only
	 * while it is that same identity itself. A sequence lock (owner_gen odd
	 * while the record is written) with one writer at a time, the owner:
	 * every syscall thread reads the record for each queue it serves, and
	 * a lock they all took made them queue behind each other, spinning, on
	 * two cores with dozens of threads (and starved the holder under
	 * ThreadSanitizer for good).
	 */
	_Alignas(FX_CACHELINE) _Atomic uint32_t owner_gen;
	struct fx_owner owner;
	uint32_t *id_stamp; /* written by the owner before it publishes the index */
	/*
	 * cancel_req[idx], FX_REQ_*: whether the call in entry idx was asked to
	 * be cancelled (by the owner, fx_threads_cancel) or started (by the
	 * syscall thread that took it), whichever came first: a compare-and-swap
	 * from NONE each. Reset by the owner when it publishes the index.
	 */
	_Atomic uint8_t *cancel_req;
	/* set while attached, read-only meanwhile */
	struct flexsc_entry *entries;
	const uint16_t *link;
	uint32_t mask;                /* ring size - 1 */
	uint16_t *sq, *cq;
	uint32_t cap;                 /* allocated ring size */
	struct fx_tq *next_free;
	struct fx_pool *pool;
};

enum { FX_SLEEP_NONE = 0, FX_SLEEP_FUTEX = 1, FX_SLEEP_EVENTFD = 2 };
enum { FX_REQ_NONE = 0, FX_REQ_CANCEL = 1, FX_REQ_STARTED = 2 }; /* fx_tq.cancel_req */

struct fx_uring; /* src/engine/uring.c */

struct flexsc_queue {
	struct flexsc *fx;
	struct flexsc_entry *entries; /* the syscall pages (mmap'd) */
	struct fx_slot *slots;
	unsigned nentries;
	size_t pages_bytes;

	uint16_t *free_stack; /* LIFO of free entry indices: O(1) allocation */
	unsigned nfree;

	uint16_t *link;    /* next op of a chain, or FX_NIL; read by syscall threads after the flush publishes */
	uint16_t *pending; /* posted, not yet flushed, in post order */
	unsigned npending;
	uint64_t first_pending_ns; /* when the oldest pending call was posted */
	uint32_t *order_scratch; /* 2 * nentries for fx_order_batch; NULL: posted order (no FLEXSC_ORDER_*) */

	uint16_t ready_head, ready_tail; /* done, uncollected, completion order */
	unsigned nready;

	unsigned inflight[4]; /* by route */

	struct fx_uring *ring; /* NULL: no io_uring route (yet: ring_later) */
	bool ring_later;       /* the ring is made when a call could first use it (queue.c, ring_allowed) */
	struct fx_tq *tq;      /* NULL: no syscall threads */
	struct fx_wake own_wake;
	struct fx_wake *wake;  /* &tq->wake or &own_wake */
	_Atomic bool kicked;   /* flexsc_queue_wake was called */
	bool filtered;         /* the owner is under a seccomp filter: every call runs on it (identity.c) */
	bool to_threads;       /* posted calls go to the syscall threads, not the ring (fx_queue_to_threads) */
	uint64_t quick_off_until; /* quick calls do not run in place before (queue.c) */
	bool dead;             /* the instance was torn down */
	bool destroyed;        /* flexsc_queue_destroy freed it; kept for reuse (instance.c) */
	uint16_t tag;          /* in its descriptors: tells another queue's apart (queue.c) */
	struct flexsc_queue *next_destroyed;

	struct flexsc_stats stats;
};

struct fx_pool; /* src/engine/systhreads.c */

struct flexsc {
	struct flexsc_config cfg;
	enum flexsc_engine engine;       /* after fallbacks */
	bool uring_ok;                   /* io_uring usable */
	_Atomic bool filtered_all;       /* the program put every thread under a seccomp filter (TSYNC) */
	bool rings_later;                /* queues make their ring at their first call that could use it */
	/*
	 * A call for the synchronous route is not run by whoever flushes or
	 * harvests it but handed back to its owner (FX_RET_REFUSED), which runs
	 * it itself: FlexSC-Threads' carriers flush from their scheduler, where
	 * a call that waits would hold up every thread (threads/sched.c).
	 */
	bool sync_to_owner;
	uint8_t uring_ops[FX_CACHELINE]; /* bitmap of probed opcodes (up to 512) */
	struct fx_pool *pool;            /* NULL without syscall threads */
	pthread_mutex_t lock;            /* queue list */
	struct flexsc_queue **queues;
	unsigned nqueues, cap_queues;
	struct flexsc *next_live;        /* registry of live instances */
	uint64_t quick_slow_ns;          /* a quick call that took longer waited for the disk (queue.c) */
};

/* time */
uint64_t fx_now_ns(void);

/*
 * Nanoseconds as uint64_t never wrap: a sum or a timespec past UINT64_MAX
 * (584 years) saturates there, and UINT64_MAX is the deadline that never
 * comes. So a far-future timeout waits instead of wrapping to an early one.
 */
static inline uint64_t fx_add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* A valid timespec (tv_sec >= 0, 0 <= tv_nsec < 10^9) in ns, saturating. */
static inline uint64_t fx_ts_ns_sat(const struct timespec *t)
{
	if ((uint64_t)t->tv_sec > (UINT64_MAX - (uint64_t)t->tv_nsec) / 1000000000u)
		return UINT64_MAX;
	return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

/* The CLOCK_MONOTONIC deadline rel (valid) from now; UINT64_MAX when it is that far. */
static inline uint64_t fx_deadline_after(const struct timespec *rel)
{
	return fx_add_sat(fx_now_ns(), fx_ts_ns_sat(rel));
}

/* The raw system call, for every engine: returns >= 0 or -errno (src/core/rawsyscall.S). */
long fx_raw_syscall6(long nr, long a0, long a1, long a2, long a3, long a4, long a5);

static inline int64_t fx_entry_exec(const struct flexsc_entry *e)
{
	return fx_raw_syscall6(e->sysnum, (long)e->args[0], (long)e->args[1],
			       (long)e->args[2], (long)e->args[3],
			       (long)e->args[4], (long)e->args[5]);
}

/* operating-system services (src/core/os.c) */
int fx_futex_wait(_Atomic uint32_t *word, uint32_t val, const struct timespec *rel);
void fx_futex_wake(_Atomic uint32_t *word, int n);
bool fx_wake_up(struct fx_wake *w);
/* a result came for the owner behind w while it was awake (weak default: nothing; the runtime's in threads/sched.c) */
void fx_os_owner_awake(struct fx_wake *w);
/*
 * libc's pthread_create and pthread_join, whatever the program's mean (weak
 * defaults in os.c); under FlexSC-Threads pthread_create fails with EPERM
 * from a thread under a seccomp filter (src/preload/init.c)
 */
int fx_os_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
int fx_os_pthread_join(pthread_t t, void **ret);
int fx_os_thread_create(pthread_t *t, void *(*fn)(void *), void *arg);
int fx_os_thread_join(pthread_t t);
/* whether q has something for its owner: a kick, or syscall-thread completions (src/api/wait.c) */
bool fx_wake_pending(const struct flexsc_queue *q);

/*
 * Sends every posted call that may leave the caller to the syscall threads
 * (true) or lets the ring take those it can (false), from the next post on.
 * The owner only; no effect without syscall threads (engine uring or sync).
 * For the M-on-N runtime's dynamic core specialization (src/threads/specialize.c).
 */
void fx_queue_to_threads(struct flexsc_queue *q, bool on);
/*
 * The program installed a seccomp filter on q's owner (every_thread: on
 * every thread, TSYNC): all their calls run on their callers from now on
 * (src/api/queue.c).
 */
void fx_queue_note_filter(struct flexsc_queue *q, bool every_thread);
/*
 * Runs call nr on the owner, now, with no entry taken: what flexsc_post and
 * flexsc_poll do for a call that runs in place, descriptor facts and
 * counters included. False, and nothing done, for a call flexsc_post
 * refuses (unknown, never postable) or on a queue that is gone.
 */
bool fx_queue_run_now(struct flexsc_queue *q, long nr, unsigned nargs, const uint64_t *args,
		      int64_t *ret);

/* the owner's side of completion (src/api/queue.c) */
int fx_call_index(const struct flexsc_queue *q, flexsc_call_t call, unsigned *idx);
/*
 * Whether call may have waited where it went (flushed, not done): on
 * io_uring, or queued for the syscall threads while every one of them is
 * inside a call and there may be no more.
 */
bool fx_queue_may_have_waited(const struct flexsc_queue *q, flexsc_call_t call);
void fx_queue_complete(struct flexsc_queue *q, unsigned idx, int64_t ret);
/*
 * An engine gives back an entry in flight that it could not run as the
 * system call runs (uring.c: the open of a FIFO): it goes out again, on
 * the fallback route, at the owner's next flush. keep_fd >= 0: a
 * descriptor the first try made, which the retry's result replaces (on
 * its number), or which is closed if the retry fails.
 */
void fx_queue_reroute(struct flexsc_queue *q, unsigned idx, int keep_fd);
/* Runs an entry (or its chain) on the owner now and completes it. */
void fx_queue_run_here(struct flexsc_queue *q, unsigned idx);
int fx_queue_harvest(struct flexsc_queue *q);
int fx_queue_init_entries(struct flexsc_queue *q, unsigned pages);
void fx_queue_free_entries(struct flexsc_queue *q);


/* descriptors with socket timeouts io_uring would ignore (src/core/sockopt.c) */
extern _Atomic bool fx_fd_marks_used;
bool fx_fd_timed(int fd);
void fx_fd_track_result(const struct flexsc_entry *e, int64_t ret);

/* cached descriptor facts for the io_uring route (src/core/fdfacts.c) */
void fx_fd_changed(void);
/* fd names something new (or its flags changed): ask the kernel at its next use */
void fx_fd_new(int fd);
/* after call nr with arguments a returned ret: drops the entries of the descriptors it made */
void fx_fd_made_slow(long nr, const uint64_t *a, int64_t ret);
static inline void fx_fd_made(long nr, const uint64_t *a, int64_t ret)
{
	/* inline: it runs after every interposed call, and almost none makes a descriptor */
	if (ret >= 0 && fx_sys_fds(nr) != FX_FDS_NONE)
		fx_fd_made_slow(nr, a, ret);
}
/* what fd is, as last asked of the kernel (FX_FD_*: 0 for none) */
unsigned fx_fd_facts(int fd);
#define FX_FD_NONBLOCK 1u   /* O_NONBLOCK */
#define FX_FD_UNSEEKABLE 2u /* a pipe, socket or terminal: a positioned call fails with ESPIPE */
#define FX_FD_DEVICE 4u     /* a character device but the memory devices (null, zero, random...) */
#define FX_FD_FILE 8u       /* a regular file or a block device: its position is the kernel's to lock */
bool fx_call_cannot_block(const struct flexsc_entry *e);
/* a signalfd is about to name set (weak default: nothing; the runtime's in threads/signals.c) */
void fx_sig_for_signalfd(uint64_t set);

/* the library's own descriptors, out of the program's way (src/core/keptfds.c) */
/* moves fd (the library's) to a high number and marks it; returns the number it has now */
int fx_fd_keep(int fd);
bool fx_fd_is_kept(long fd);
/* before the library closes a kept descriptor in a way that goes through close() */
void fx_fd_unkeep(int fd);
/* unmarks and closes a kept descriptor (-1: nothing) */
void fx_fd_close_kept(int fd);
/* close, close_range, dup2, dup3 with arguments a touching a kept descriptor: true and *ret (0 or -errno) */
bool fx_fd_guarded(long nr, const long *a, long *ret);

/* the caller's memory that the library reads and writes for the kernel, len >= 8 (src/core/memcheck.c) */
bool fx_mem_rw_ok(void *p, size_t len);
/* the same for memory the library only reads: a system call's input */
bool fx_mem_r_ok(const void *p, size_t len);
/* len bytes of the caller's memory at src into dst, as the kernel copies them in: false where that faults (EFAULT) */
bool fx_mem_copy_in(void *dst, const void *src, size_t len);

void fx_warn(const struct flexsc *fx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
