/* SPDX-License-Identifier: MIT */
/*
 * libflexsc: exception-less system calls on a stock Linux kernel.
 *
 * A process registers once (flexsc_register) and gets an instance that owns
 * the engines: io_uring support, a pool of syscall threads pinned to the
 * syscall cores, and the synchronous fallback. Each thread that posts calls
 * creates a queue (flexsc_queue_create): a private group of syscall pages
 * with single-producer semantics, so posting needs no atomic
 * read-modify-write. FlexSC-Threads creates one queue per user core.
 *
 * Error convention: every function returns 0 (or a count) on success and a
 * negative errno on failure, and never touches errno. A posted call's own
 * result is reported separately, as the kernel reports it: >= 0, or -errno.
 *
 * A queue is not thread safe: only the thread that owns it (or one thread at
 * a time, with external locking) may call the flexsc_queue-taking functions.
 */
#ifndef FLEXSC_FLEXSC_H
#define FLEXSC_FLEXSC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <flexsc/page.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FLEXSC_VERSION_MAJOR 0
#define FLEXSC_VERSION_MINOR 1

struct flexsc;
struct flexsc_queue;

/* Where posted calls run. */
enum flexsc_engine {
	FLEXSC_ENGINE_AUTO = 0,    /* io_uring where the call has an opcode, syscall threads otherwise */
	FLEXSC_ENGINE_URING = 1,   /* io_uring where possible, the rest synchronously */
	FLEXSC_ENGINE_THREADS = 2, /* syscall threads for every delegable call */
	FLEXSC_ENGINE_SYNC = 3,    /* inline on the owner, at flush time: the baseline */
};

#define FLEXSC_MAX_CPUS 64

/* flexsc_config.flags */
#define FLEXSC_QUIET (1u << 0) /* no warning on stderr when an engine is unavailable */
/*
 * How a flush orders its batch before handing it to the engines (the
 * paper's future work; default: the order posted). Posted calls are not
 * ordered with respect to each other, so neither changes what a correct
 * program sees; both may be set (I/O first, then by type within each part).
 */
#define FLEXSC_ORDER_BY_TYPE (1u << 1)  /* calls of one system call number consecutively */
#define FLEXSC_ORDER_IO_FIRST (1u << 2) /* calls that move data or wait for a device first */

struct flexsc_config {
	enum flexsc_engine engine;
	unsigned pages_per_queue;   /* syscall pages per queue; 1..64, default 8 (512 entries) */
	unsigned nr_syscall_cpus;   /* 0: no pinning (syscall threads float, SQPOLL unpinned) */
	int syscall_cpus[FLEXSC_MAX_CPUS]; /* the static list of syscall cores */
	bool sqpoll;                /* io_uring: a kernel polling thread on syscall_cpus[0] */
	unsigned sqpoll_idle_ms;    /* SQPOLL idle time before it sleeps; default 10 */
	unsigned spin_us;           /* spin before sleeping (waits, idle syscall threads); default 20 */
	unsigned batch_threshold;   /* flush once this many calls are pending (CEFOS M); default 32, 1 = every post */
	unsigned batch_timeout_us;  /* flush when the oldest pending call is this old; 0 = off; default 100 */
	unsigned threads_per_cpu;   /* syscall threads started per syscall core (or in all); default 2;
				     * 0: none until the first call sent to them */
	unsigned max_threads;       /* the pool grows to this when every thread is blocked; default 64 */
	unsigned iowq_max_workers;  /* cap of io_uring's bounded and unbounded workers; default 16 */
	int interrupt_signal;       /* 0, or a signal (with a handler installed without SA_RESTART)
				     * that syscall threads leave unblocked, so flexsc_cancel can
				     * interrupt a call one of them is executing */
	unsigned flags;             /* FLEXSC_QUIET, FLEXSC_ORDER_* */
	uint64_t reserved[8];       /* 0 (flexsc_config_init): room for later fields under soname 0 */
};

/* Fills *cfg with the defaults above. */
void flexsc_config_init(struct flexsc_config *cfg);

/*
 * Creates an instance. cfg may be NULL for the defaults.
 * Errors: -EINVAL (a field out of range, a syscall CPU the machine does not
 * have, sqpoll without the uring or auto engine, a reserved word not 0),
 * -ENOMEM,
 * -EAGAIN (a syscall thread could not be started). io_uring refused by the
 * kernel (disabled, seccomp, ENOSYS, EPERM) is not an error: auto falls
 * back to syscall threads, uring to synchronous calls, and it says so once
 * on stderr unless FLEXSC_QUIET. Failing to start the syscall threads (auto
 * and threads) is an error, not a fallback: -EAGAIN or -ENOMEM.
 */
int flexsc_register(struct flexsc **fx, const struct flexsc_config *cfg);

/*
 * Tears the instance down: stops its syscall threads (waiting for calls
 * they are executing) and frees everything. Every queue should have been
 * destroyed first; a queue that remains is drained (pending calls flushed,
 * calls in flight waited for, results discarded) and marked dead: later
 * posts and flushes on it get -ESHUTDOWN, and flexsc_queue_destroy must
 * still free it. Its owner must have stopped using it meanwhile.
 * Errors: -EINVAL (fx NULL or already torn down).
 */
int flexsc_exit(struct flexsc *fx);

/*
 * For a child process after fork(): only the forking thread survives, the
 * syscall threads do not, and io_uring rings are shared with the parent.
 * flexsc_forget releases the instance and its queues in the child without
 * touching anything the parent still uses (nothing is drained or joined;
 * calls in flight belong to the parent). Register anew to post calls in
 * the child. Errors: -EINVAL (fx NULL or not a live instance).
 */
int flexsc_forget(struct flexsc *fx);

/* The engine the instance actually uses after probing and fallbacks. */
enum flexsc_engine flexsc_engine_in_use(const struct flexsc *fx);
const char *flexsc_engine_name(enum flexsc_engine engine);

/*
 * Creates a queue owned by the calling thread. Errors: -EINVAL, -ENOMEM,
 * -EMFILE (the instance's syscall threads already serve 256 queues, the
 * most one pool serves). A ring that io_uring refuses to set up is not an
 * error: the queue takes the fallback route (auto: syscall threads, uring:
 * synchronous).
 */
int flexsc_queue_create(struct flexsc *fx, struct flexsc_queue **q);

/*
 * Waits for every call in flight on q (posted, unflushed calls are flushed
 * first; their results are discarded), then frees q. Errors: -EINVAL (q
 * NULL, or destroyed already). A destroyed queue's structure is kept until
 * the next flexsc_queue_create reuses it: until then every function given
 * it returns -EINVAL; afterwards it may name the new queue.
 */
int flexsc_queue_destroy(struct flexsc_queue *q);

/*
 * A call descriptor: names one posted call until its result is collected.
 * 0 is never a valid descriptor.
 */
typedef uint64_t flexsc_call_t;

/*
 * Posts system call sysnum with nargs arguments. The entry is written with
 * plain stores; it runs when the batch is flushed (flexsc_flush, a wait, the
 * threshold or the time bound), except calls that must run on the calling
 * thread (flexsc_sysinfo), which run at once and are already done on return.
 * cookie is returned with the completion by flexsc_reap.
 * Errors: -EINVAL (q NULL or destroyed, nargs > 6, args NULL with nargs > 0,
 * or a call that cannot be posted: fork, vfork, clone, clone3, rt_sigreturn,
 * uprobe, uretprobe; see flexsc_post(3)),
 * -ENOSYS (sysnum is not an x86-64 system call), -EAGAIN (every entry of the
 * queue is in use: collect some results first), -ESHUTDOWN (the queue's
 * instance was torn down).
 */
int flexsc_post(struct flexsc_queue *q, long sysnum, unsigned nargs,
		const uint64_t *args, void *cookie, flexsc_call_t *call);

/*
 * Hands every pending call to its engine now. Returns how many.
 * Errors: -EINVAL, -ESHUTDOWN (the queue's instance was torn down).
 */
int flexsc_flush(struct flexsc_queue *q);

/*
 * Collects call's result without blocking: 0 and *ret set (the descriptor
 * is then spent), or -EINPROGRESS while it is not done. Errors: -EINVAL
 * (q NULL or destroyed, call malformed or never posted), -EXDEV (call is a
 * descriptor of another queue), -ESTALE (its result was already collected).
 */
int flexsc_poll(struct flexsc_queue *q, flexsc_call_t call, int64_t *ret);

/*
 * Blocks until call is done, then collects it like flexsc_poll. timeout is
 * relative; NULL waits as long as it takes, and so does one past 2^64 ns
 * (584 years, up to tv_sec = LONG_MAX). Errors: those of flexsc_poll,
 * -EINVAL (timeout has a negative field or tv_nsec >= 1000000000),
 * -ETIME when the timeout expires first, -EINTR when flexsc_queue_wake
 * ended the wait (the call stays in flight).
 */
int flexsc_wait_one(struct flexsc_queue *q, flexsc_call_t call, int64_t *ret,
		    const struct timespec *timeout);

/*
 * Blocks until one of the n calls is done, collects it, and stores its
 * position in *index. Errors: -EINVAL (n == 0, calls NULL, a descriptor
 * malformed, timeout invalid), -EXDEV (a descriptor of another queue),
 * -ESTALE (a descriptor already collected),
 * -ETIME, -EINTR, -ENOMEM (n > 64 needs an allocation, which failed).
 */
int flexsc_wait_any(struct flexsc_queue *q, const flexsc_call_t *calls,
		    unsigned n, unsigned *index, int64_t *ret,
		    const struct timespec *timeout);

/*
 * Blocks until all n calls are done and collects them into rets[0..n-1].
 * On -ETIME nothing is collected. Errors: as flexsc_wait_any, and -EINVAL
 * when a descriptor is named twice (before anything is waited for).
 */
int flexsc_wait_all(struct flexsc_queue *q, const flexsc_call_t *calls,
		    unsigned n, int64_t *rets, const struct timespec *timeout);

/*
 * Blocks until at least one posted call of q is done (flushing first), but
 * collects nothing. Spins for spin_us, then sleeps in io_uring or on a futex;
 * it never yields the CPU in a loop. Returns the number of done,
 * uncollected calls. Errors: -EINVAL (q NULL, timeout invalid), -ECHILD
 * (nothing is in flight or done: waiting would never end, as wait(2) with
 * no children), -ETIME, -EINTR (flexsc_queue_wake was called).
 */
int flexsc_wait(struct flexsc_queue *q, const struct timespec *timeout);

/*
 * Makes the owner's current wait on q, or its next one, return -EINTR
 * (unless results are already there to return). Any thread may call it,
 * while q exists; a wake is consumed by the wait it ends. This is how a
 * runtime wakes a thread that sleeps for results when other work arrives.
 * Errors: -EINVAL.
 */
int flexsc_queue_wake(struct flexsc_queue *q);

struct flexsc_completion {
	flexsc_call_t call;
	int64_t ret;
	void *cookie;
};

/*
 * Collects up to max done calls, oldest completion first, without blocking.
 * Returns how many. Each result is collected exactly once, by flexsc_reap or
 * by a poll/wait on its descriptor. Errors: -EINVAL.
 */
int flexsc_reap(struct flexsc_queue *q, struct flexsc_completion *out,
		unsigned max);

/*
 * Asks for call to be cancelled. 0: it will complete with -ECANCELED (or
 * with its real result if it finished first); the result must still be
 * collected. A call a syscall thread has taken but not started yet
 * completes with -ECANCELED without running. A call a syscall thread is
 * executing can be interrupted when the configuration names an
 * interrupt_signal: 0, and it completes with -EINTR if it was blocked (the
 * signal may also cut short the thread's next call, which then completes
 * with -EINTR; and a signal that arrives just before the thread enters the
 * kernel is lost: while the call has not completed, asking again sends it
 * again). Errors: -EINVAL, -ESTALE, -EALREADY (it is already executing on
 * a syscall thread and no interrupt signal is configured, ran
 * synchronously, or is already done; or it is an op of a chain, which runs
 * whole), -EBUSY (it is on io_uring and no SQE is free for the cancel
 * request).
 */
int flexsc_cancel(struct flexsc_queue *q, flexsc_call_t call);

/*
 * Posts and waits: a synchronous call through the queue. Returns the raw
 * result or an API error. flexsc_queue_wake does not end it (-EINTR would
 * pass for the call's own result): it waits on until the call is done, then
 * re-arms the wake, which ends the owner's next wait as if it came now
 * (flexsc_wait on an otherwise idle queue: -EINTR, not -ECHILD).
 */
int64_t flexsc_syscall(struct flexsc_queue *q, long sysnum, unsigned nargs,
		       const uint64_t *args);

/*
 * Chains of dependent calls, submitted at once and run in order. An argument
 * equal to FLEXSC_CHAIN_FD (within the op's nargs) is replaced by the
 * descriptor that op 0 of the chain opened (op 0 must then be openat, open
 * or socket, and the last op must be the close of that descriptor, with
 * nargs >= 1, so it never leaks). Every op runs even when an earlier one
 * failed (the later ones then see a bad descriptor and fail with -EBADF),
 * as io_uring hard links. Op 0's own result is 0 on success when its
 * descriptor is consumed by the chain, on every engine.
 * With io_uring the chain uses linked SQEs and a direct descriptor (so a
 * chain that passes a descriptor on avoids a ring that could not register
 * its direct descriptor table); otherwise one syscall thread (or the owner,
 * synchronously) runs it in order.
 */
#define FLEXSC_CHAIN_MAX 8
#define FLEXSC_CHAIN_FD 0xF1E75CFDF1E75CFDull

struct flexsc_op {
	long sysnum;
	unsigned nargs;
	uint64_t args[FLEXSC_MAX_ARGS];
};

/*
 * Posts a chain of n ops; calls[i] is the descriptor of op i.
 * Errors: those of flexsc_post; -EINVAL (n == 0 or > FLEXSC_CHAIN_MAX, an op
 * that must run locally, by class or by its arguments as flexsc_sysinfo
 * describes, FLEXSC_CHAIN_FD past an op's nargs, FLEXSC_CHAIN_FD used
 * without a descriptor-making op 0, or without a closing last op),
 * -EAGAIN (fewer than n free entries).
 */
int flexsc_post_chain(struct flexsc_queue *q, const struct flexsc_op *ops,
		      unsigned n, flexsc_call_t *calls);

/* How the library treats each x86-64 system call (one table, src/core/systab.c). */
enum flexsc_class {
	FLEXSC_CLASS_NONE = 0,   /* not a system call on this architecture */
	FLEXSC_CLASS_URING = 1,  /* postable; io_uring has an opcode for it (if the kernel does) */
	FLEXSC_CLASS_THREAD = 2, /* postable; runs on a syscall thread */
	FLEXSC_CLASS_LOCAL = 3,  /* must run on the calling thread; runs there at post time */
};

struct flexsc_sysinfo {
	const char *name;
	enum flexsc_class cls;
	int uring_opcode;        /* IORING_OP_*, or -1 */
	bool uring_supported;    /* the running kernel has that opcode (probed) */
	const char *why;         /* why the call must run locally; NULL otherwise */
};

/*
 * Describes sysnum for instance fx (fx may be NULL: no probe). The class is
 * the call's, not that of particular arguments: calls whose arguments tie
 * them to the caller run locally although their class is THREAD (futex
 * priority-inheritance operations, close_range with CLOSE_RANGE_UNSHARE).
 * Errors: -ENOSYS, -EINVAL (info NULL).
 */
int flexsc_sysinfo(const struct flexsc *fx, long sysnum, struct flexsc_sysinfo *info);

#define FLEXSC_HIST_BUCKETS 8 /* batch sizes 1, 2-3, 4-7, ..., 128+ */

struct flexsc_stats {
	uint64_t posted;
	uint64_t completed;
	uint64_t by_engine[4];   /* indexed by enum flexsc_engine: AUTO counts local calls */
	uint64_t batches;
	uint64_t batch_hist[FLEXSC_HIST_BUCKETS];
	uint64_t waits;          /* times the owner slept */
	uint64_t wait_ns;        /* time spent in flexsc_wait and friends */
	uint64_t reserved[8];    /* 0: room for later counters under soname 0 */
};

/* Copies q's counters. Errors: -EINVAL. */
int flexsc_queue_stats(const struct flexsc_queue *q, struct flexsc_stats *st);

/*
 * Credentials and seccomp. Calls that change them through glibc (setuid
 * and friends, setgroups, capset, prctl(PR_SET_SECCOMP), seccomp) are
 * noticed by the library itself (libflexsc wraps them); a program that
 * changes them by raw syscall must call flexsc_creds_changed() afterwards.
 * An SQPOLL ring, whose kernel thread keeps its creator's credentials, gets
 * an io_uring personality with the current ones before its next batch (a
 * queue whose ring cannot register one stops using io_uring), and an engine
 * that cannot honour a seccomp filter is switched off. Never fails.
 */
void flexsc_creds_changed(void);

/*
 * The io_uring route must know whether a descriptor is nonblocking and
 * whether it is seekable (io_uring waits where such calls would fail with
 * EAGAIN or ESPIPE); libflexsc caches both per descriptor and forgets them
 * when fcntl, ioctl, close, dup2, dup3 or close_range (which it wraps) or
 * a posted call may have changed them. A program that changes descriptors
 * behind libc's back (inline system calls) calls flexsc_fds_changed()
 * afterwards. Never fails.
 */
void flexsc_fds_changed(void);

#ifdef __cplusplus
}
#endif
#endif
