/* SPDX-License-Identifier: MIT */
/*
 * FlexSC-Threads: the M-on-N runtime's shared shapes.
 *
 * Names: a carrier is a kernel-visible NPTL thread, one per user core (pinned
 * to it under --cores or --syscall-cores, else placed by the kernel);
 * a uthread is a user thread the program created with pthread_create (or
 * the program's main thread), run by whichever carrier picks it.
 */
#ifndef FX_RT_H
#define FX_RT_H

#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "threads/specialize.h"
#include "core/internal.h"

enum fx_ustate {
	FX_U_RUNNABLE = 0, /* on a run queue */
	FX_U_RUNNING,      /* some carrier's current */
	FX_U_BLOCKED,      /* parked on a wait list (mutex, condition, join, sleep...) */
	FX_U_SYSCALL,      /* parked until its exception-less call completes */
	FX_U_OVERFLOW,     /* parked until an overflow thread has run its call (overflow.c) */
	FX_U_EXITED,       /* finished; waits to be joined or freed */
};

struct fx_carrier;
struct fx_waiter;
struct fx_sigq_ent;
/* Signals pending in the runtime, with their siginfo, in the order they came (signals.c). */
struct fx_sigq {
	struct fx_sigq_ent *head, *tail;
};

#define FX_KEYS_MAX 1024 /* PTHREAD_KEYS_MAX */

#define FX_UTHREAD_MAGIC 0xF1E75C7472656164ull
#define FX_UTHREAD_DEAD 0xF1E75CDEADDEAD00ull /* freed: its mapping waits in the stack cache */

struct fx_uthread {
	uint64_t magic;             /* FX_UTHREAD_MAGIC: tells our TCBs from foreign ones */
	void *sp;                   /* saved stack pointer while not running */
	uintptr_t tcb;              /* its own glibc TCB: the FS base, and its pthread_t */
	_Atomic int on_cpu;         /* its context is live or not yet saved: do not resume */
	_Atomic int state;          /* enum fx_ustate */
	struct fx_carrier *home;    /* the carrier it last ran on */
	struct fx_uthread *next;    /* run queue or wait list link */
	int64_t sysret;             /* result of its exception-less call */

	void *(*start)(void *);
	void *arg;
	void *result;

	/* the mapping that holds its stack, static TLS and TCB */
	void *map;
	size_t map_size;
	size_t guard;
	void *stack_lo;             /* lowest usable stack byte */
	size_t stack_size;
	bool user_stack;            /* stack from pthread_attr_setstack: only TLS is ours */

	_Atomic int detached;       /* 1: nobody joins; freed at exit */
	struct fx_waiter *join_waiter; /* the wait of the thread in pthread_join on it */
	_Atomic int join_lock;

	/* per-thread state the runtime keeps for the program */
	uint64_t sigmask;           /* its signal mask (kernel sigset); carriers take it when they run it */
	_Atomic uint64_t sigpending; /* sent by pthread_kill, raised when it next runs unblocked */
	_Atomic uint64_t sigpending_proc; /* those of them the process was sent: others take them if it blocks them or exits */
	struct fx_sigq sigq;        /* the siginfo of those pending signals, realtime ones queued (signals.c, under its lock) */
	/*
	 * Those pending signals the kernel had no room to queue when they were
	 * raised (the user's queued signals at RLIMIT_SIGPENDING): they end no
	 * call or wait meanwhile; the monitor has them raised again (fx_sig_retry).
	 */
	_Atomic uint64_t sig_stuck;
	int cancel_disabled;        /* PTHREAD_CANCEL_DISABLE */
	int cancel_async;           /* PTHREAD_CANCEL_ASYNCHRONOUS (acted on at cancellation points) */
	_Atomic int cancel_requested;
	/*
	 * It has begun to exit (pthread_exit, a cancel acted on, its start
	 * routine returned): no cancel acts on it any more, so its cleanup
	 * handlers and key destructors run to their end, as glibc's
	 * EXITING_BITMASK makes them.
	 */
	_Atomic int exiting;
	struct fx_waiter *cancel_waiter; /* the wait of a cancellation point it sleeps in */
	_Atomic int cancel_lock;    /* guards cancel_waiter against fx_interrupt */
	flexsc_call_t pending_call; /* its exception-less call in flight (FX_U_SYSCALL) */
	struct fx_uthread *cancel_next; /* on its carrier's cancel inbox */
	_Atomic int in_inbox;       /* on a cancel inbox now: pushed once, however many ask */
	flexsc_call_t cancelling_call; /* its call its carrier keeps cancelling; 0: none */
	bool cancelled_waited;      /* that call may have waited where it was when its carrier first cancelled it */
	struct fx_uthread *cancelling_next;
	struct fx_waiter *intr_waiter; /* an interruptible wait a signal ends (sleep, sigsuspend); under cancel_lock */
	struct fx_waiter *park_waiter; /* any wait it sleeps in: a signal runs its handler and the wait goes on; under cancel_lock */
	uint64_t sigwait_set;       /* in sigwait: the signals it takes (signals.c) */
	siginfo_t sigwait_info;     /* the one it took */
	int handled;                /* since its call began: 1 a handler with SA_RESTART ran, 2 one without */
	int locks_held;             /* mutexes of the runtime it holds (preload/mutex.c): time-slicing waits a little */
	struct fx_uthread *reg_prev, *reg_next; /* live uthreads, for process-directed signals */
	long overflow_nr;           /* its call, handed to an overflow thread (FX_U_OVERFLOW) */
	uint64_t overflow_args[FLEXSC_MAX_ARGS];
	_Atomic int overflow_tid;   /* the overflow thread running that call, or 0 */
	const struct fx_identity *overflow_caller; /* who the carrier was at the hand-over (on u's stack) */
	int overflow_caller_tid;
	char name[16];
	int id;
	cpu_set_t *affinity;        /* set by pthread_setaffinity_np: reported back, no effect on placement */
	int sched_policy;           /* pthread_setschedparam and attributes: reported back, no effect on order */
	int sched_prio;
	bool sched_explicit;        /* created with PTHREAD_EXPLICIT_SCHED: pthread_getattr_np says so */

	/*
	 * Kernel state that is per thread under NPTL, kept per uthread
	 * (src/threads/kstate.c): never left in a carrier for the next one.
	 */
	void *robust;               /* set_robust_list head: its TCB's, as glibc registers it, or the program's */
	size_t robust_len;
	stack_t altstack;           /* sigaltstack; has_altstack: installed on its carrier while it runs */
	bool has_altstack;
};

#define FX_HANDLER_NEST 8 /* nested handlers whose frames are tracked; deeper ones only counted */

struct fx_carrier {
	struct fx_carrier *self;    /* %gs:0 */
	struct fx_uthread *current; /* NULL while the carrier runs its scheduler */
	struct fx_uthread *prev;    /* switched away from; its on_cpu is cleared after the switch */
	struct flexsc_queue *q;     /* this carrier's syscall pages */
	int index, cpu, tid;
	/*
	 * The TCB glibc knows this kernel thread by (its NPTL thread; carrier
	 * 0's is the process's first thread's, which a uthread now runs on):
	 * glibc's SIGSETXID broadcast is accounted against it (setxid.c).
	 */
	pthread_t pthread;

	_Atomic int rq_lock;
	struct fx_uthread *rq_head, *rq_tail;
	_Atomic unsigned rq_len;

	_Atomic int timer_lock;
	struct fx_waiter *timers;   /* sorted by deadline */

	_Alignas(FX_CACHELINE) _Atomic uint32_t idle_word; /* futex while idle with no call in flight */
	_Atomic int sleeping;       /* FX_C_* */
	struct fx_uthread *idle;    /* the scheduler context: its own stack and TCB */
	struct fx_uthread *to_free; /* exited and detached: freed once switched away from */
	int in_rt;                  /* inside the runtime or the library: interposed calls go direct */
	/*
	 * Inside a signal handler: interposed calls go direct. A count of
	 * nested handlers, each with the stack range its frames use (hframe):
	 * a handler left by siglongjmp or setcontext never returns through
	 * its trampoline, and is found gone when the stack pointer is outside
	 * that range (fx_in_handler; src/threads/signals.c).
	 */
	int in_handler;
	struct { uintptr_t lo, hi; } hframe[FX_HANDLER_NEST];
	/*
	 * Holds signals.c's lock (or is taking it): no handler may run here
	 * and wait for the lock it interrupted. The program's handler is put
	 * off (fx_sig_hold): its signal sent back, the program's signals
	 * blocked until the lock is let go, sig_held naming those to unblock
	 * then; the runtime's poke leaves raising pending signals to the
	 * unlock (sig_deferred).
	 */
	int sig_locked;
	_Atomic int poke_sent;      /* a poke is on its way (fx_poke): no second one */
	/*
	 * Signals are pending for its uthread that could not be raised (the
	 * user's queued signals at RLIMIT_SIGPENDING, or a poke that could not
	 * be sent): the monitor pokes it again at its next look.
	 */
	_Atomic int sig_retry;
	/* the monitor asks the running uthread to give way: the switch count it runs at, plus one; 0: not asked (preempt.c) */
	_Atomic uint64_t preempt_at;
	unsigned preempt_put_off;   /* requests put off in a row because its uthread held a mutex (preempt.c) */
	bool sig_deferred;
	_Atomic uint64_t sig_held;
	/*
	 * raw_handler: inside a handler of the runtime's own (the poke), whose
	 * mask the kernel puts back when it returns. kextra: signals blocked
	 * on top of the uthread's mask because they were pending in the runtime
	 * when it was switched in (or unblocked): a signal of the same number
	 * sent to the process meanwhile must not be delivered before them.
	 * fx_sig_raise unblocks them once it has raised them.
	 */
	int raw_handler;
	int raw_level; /* in_handler when the outermost raw_handler window began: a jump to it or below leaves it */
	uint64_t kextra;
	uint64_t kmask;             /* the kernel signal mask of this carrier's thread */
	struct fx_uthread *alt_owner; /* whose sigaltstack the kernel has for this thread; NULL: none */
	void *krobust;              /* the robust list the kernel has for this thread: its own NPTL one */
	_Atomic(struct fx_uthread *) cancel_inbox; /* uthreads whose posted call must be cancelled */
	struct fx_uthread *cancelling; /* their calls not back yet: cancelled again (sched.c) */
	uint64_t cancel_retry_ns;
	unsigned inflight;          /* exception-less calls posted and not reaped */
	/*
	 * Under the synchronous engine (fx_rt_inline) every call runs at once
	 * on the uthread that makes it: in_call names that uthread while its
	 * call may be in the kernel; call_intr, the one whose call must come
	 * back early (a cancel, a signal it takes), which the monitor
	 * interrupts again while both stay equal (a signal may land just
	 * before the call enters the kernel and be lost).
	 */
	_Atomic(struct fx_uthread *) in_call;
	_Atomic(struct fx_uthread *) call_intr;

	/* dynamic core specialization (src/threads/specialize.c): the policy, and the window it measures */
	struct fx_spec spec;
	uint64_t spec_t0, spec_calls0, spec_idle0;
	uint64_t idle_ns;           /* time asleep in idle_sleep */

	/*
	 * An exclusive carrier (fx_rt_bind): it runs only `own`, is in no list
	 * of carriers (nobody steals from it, it steals from nobody), and ends
	 * once own has exited, back in its native context.
	 */
	struct fx_uthread *own;
	_Atomic bool own_exited;
	bool sealed;                /* the program installed a seccomp filter on this kernel thread (fx_rt_sealed) */
	void *native_sp;
	uint64_t native_tcb;

	/*
	 * Hand-over of a carrier blocked in the kernel (the monitor, monitor.c).
	 * slot: the core (carrier index at start) it runs on. handed: its core
	 * belongs to the carrier fx_slot_owner[slot] names, not to it: it runs
	 * no uthread after its next switch point, serves its own queue until
	 * nothing of it is in flight, then parks as a spare (parked).
	 */
	int slot;
	_Atomic int handed;
	_Atomic uint32_t parked;    /* futex: 1 while a spare waits in the pool */
	/* inside the runtime only for a uthread's call run here, in place (fx_queue_run_now): the poke may reap */
	volatile bool in_place_call;
	uint64_t mon_beat;          /* the monitor's: switches + syscalls at its last look */
	uint64_t mon_cpu_ns, mon_look_ns; /* the monitor's: its thread's CPU time, and when, at the last stale look; 0: none */
	uint64_t mon_poke_ns, mon_poke_gap;
	bool mon_preempted;         /* the monitor's: it asked the running uthread to give way at its last look */
	uint64_t bal_cpu_ns, bal_look_ns; /* the monitor's: its thread's CPU time, and when, at the last look (balance) */
	_Atomic bool shed;          /* set by the monitor: give the next runnable uthread to a sleeping carrier */

	/* counters for --stats */
	uint64_t switches, syscalls, idle_sleeps, steals, overflowed, handoffs;
	uint64_t by_nr[512];

	/*
	 * The slice of its running uthread as others have seen it (sched.c,
	 * fx_slice_ran): the switch number it runs at, plus one, and when it was
	 * first seen running. Written by the monitor and by wakers, never by
	 * the carrier: a line of their own, with the last wake's switch.
	 */
	_Alignas(FX_CACHELINE) _Atomic uint64_t seen_switch;
	_Atomic uint64_t seen_ns;
	_Atomic uint64_t woken_switch; /* a uthread was woken onto it at that switch number, plus one (fresh_work) */
};

/* The engine in use is the synchronous one: each call runs at once, on its caller (sched.c) */
extern bool fx_rt_inline;

/* flexsc-run --specialize auto: carriers choose where their calls run (src/threads/specialize.c) */
extern bool fx_rt_specialize;

enum { FX_C_AWAKE = 0, FX_C_IN_FLEXSC = 1, FX_C_IN_FUTEX = 2, FX_C_PARKED = 3 };

/* Reserved by the runtime to interrupt a blocked call of a cancelled thread (docs/threads.md). */
#define FX_SIG_INTERRUPT 63
/* Reserved: makes a running uthread take the signals pending for it (SA_RESTART: cuts no call short). */
#define FX_SIG_POKE 62

/*
 * The signal mask of a kernel thread of the runtime's own while it runs
 * no uthread: every signal but glibc's 32 and 33 (SIGCANCEL, SIGSETXID),
 * as sigfillset leaves them. glibc's set*id sends 33 to every thread it
 * knows and waits until each has taken it: a thread that blocks it makes
 * setuid, setgroups... wait for ever (sshd's sessions hung so).
 */
#define FX_KTHREAD_MASK (~0ull & ~(3ull << 31))

/* libc's sigaction, whatever the preload interposes (src/preload/signal.c) */
int fx_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old);

/*
 * 1 in every TCB a carrier runs on: uthreads' and scheduler contexts'
 * (set when uthread.c builds them), carriers' own and the main thread's
 * (fx_carrier_enter). 0 in any other thread's: glibc makes a new thread's
 * TLS from the initial image. Initial-exec: one load at a fixed offset
 * from %fs, and the preload is loaded at start, so it has static TLS.
 */
extern __thread int fx_tcb_ours __attribute__((tls_model("initial-exec")));

/*
 * Whether user code may read the GS base (FSGSBASE: the CPU has it and the
 * kernel, 5.9 or later, enabled it), set by fx_rt_start before any carrier
 * exists. Without it rdgsbase raises SIGILL; the runtime does not start,
 * the program runs on plain NPTL, and no thread is a carrier.
 */
extern bool fx_rt_gs_readable;

/* Around the runtime's own handler code that may raise signals (raw_handler above). */
static inline void fx_raw_enter(struct fx_carrier *c)
{
	if (!c->raw_handler++)
		c->raw_level = c->in_handler;
}

static inline void fx_raw_leave(struct fx_carrier *c)
{
	if (c->raw_handler) /* zero: a jump out of a handler run inside the window reset it */
		c->raw_handler--;
}

/* A foreign thread that inherited a carrier's GS base: clears it; NULL (sched.c). */
struct fx_carrier *fx_carrier_disown(void);

/*
 * The carrier running the caller, or NULL on a thread that is not one.
 *
 * %gs alone does not say: clone copies the GS base, so a kernel thread
 * started from a carrier with glibc's own pthread_create (jemalloc's
 * background thread finds it with dlsym(RTLD_NEXT)), or by glibc itself
 * (timer and AIO helper threads), starts with that carrier's. Its TCB is
 * glibc's, not one of ours: the first call that looks here clears its GS
 * base, and the thread is no carrier from then on, as the runtime's own
 * kernel threads make themselves (docs/threads.md, "Kernel threads the
 * runtime did not start").
 */
static inline struct fx_carrier *fx_carrier_self(void)
{
	uintptr_t gs;

	if (__builtin_expect(!fx_rt_gs_readable, 0))
		return NULL;
	__asm__ volatile("rdgsbase %0" : "=r"(gs));
	if (__builtin_expect(gs != 0 && !fx_tcb_ours, 0))
		return fx_carrier_disown();
	return (struct fx_carrier *)gs;
}

/*
 * Whether c (the caller's carrier) runs a signal handler that has not
 * been left. The count alone is not enough: a handler that leaves by
 * siglongjmp never decrements it (src/threads/signals.c).
 */
bool fx_handler_active(struct fx_carrier *c);
static inline bool fx_in_handler(struct fx_carrier *c)
{
	return __builtin_expect(c->in_handler != 0, 0) && fx_handler_active(c);
}

/*
 * The signals pending for u that it accepts and that end its call or
 * wait: all but those stuck (the kernel had no room to queue them when
 * they were raised; the monitor has them raised again, fx_sig_retry).
 */
static inline uint64_t fx_sig_due(struct fx_uthread *u)
{
	return atomic_load(&u->sigpending) & ~u->sigmask & ~atomic_load(&u->sig_stuck);
}

/*
 * The runtime's locks this thread holds or is taking (its spin locks and
 * wait-list locks), and whether a signal was put off meanwhile. A handler
 * of the program runs on the kernel thread it interrupted, and may call
 * what POSIX calls async-signal-safe: sem_post, pthread_kill, raise. Those
 * take the runtime's locks (a wait list's, a carrier's run queue's, a
 * thread's cancel lock); run while the code it interrupted held one of
 * them, it spun for ever on it (a SIGALRM handler's sem_post hung every
 * run, its carrier inside rq_pop). So the trampoline does not run a
 * handler while the count is not 0: it puts the signal off as inside the
 * signal lock's window (fx_sig_hold, signals.c), and the last unlock
 * delivers it (fx_locks_left). Per thread in TLS (initial-exec: a uthread's
 * own, the scheduler context's, any other thread's), so counting is one
 * increment; no switch happens while a lock is held, and a handler runs
 * on the TLS of the code it interrupted.
 */
extern __thread int fx_locks_held __attribute__((tls_model("initial-exec")));
extern __thread int fx_locks_owe __attribute__((tls_model("initial-exec")));
void fx_locks_left(void);

static inline void fx_locks_enter(void)
{
	fx_locks_held++;
	atomic_signal_fence(memory_order_seq_cst); /* seen by a handler before the lock is taken */
}

static inline void fx_locks_leave(void)
{
	atomic_signal_fence(memory_order_seq_cst);
	if (!--fx_locks_held && __builtin_expect(fx_locks_owe, 0))
		fx_locks_left();
}

static inline void fx_spin_lock(_Atomic int *l)
{
	fx_locks_enter();
	while (atomic_exchange_explicit(l, 1, memory_order_acquire))
		while (atomic_load_explicit(l, memory_order_relaxed))
			__builtin_ia32_pause();
}

static inline void fx_spin_unlock(_Atomic int *l)
{
	atomic_store_explicit(l, 0, memory_order_release);
	fx_locks_leave();
}

/*
 * src/threads/sched.c and the files split from it: monitor.c
 * (fx_rt_in_use, fx_rt_handoffs), poke.c (fx_poke, fx_never_restarted),
 * carrier.c (fx_rt_kthread*, fx_rt_exec_*, fx_rt_bind, fx_rt_sealed,
 * fx_rt_note_filter) and start.c (fx_rt_start, fx_rt_start_carriers,
 * fx_rt_monitor_runs, fx_rt_after_fork_child, fx_rt_cpus,
 * fx_rt_start_cpus)
 */
extern struct fx_carrier **fx_carriers;
/*
 * Carriers in fx_carriers: one per core (fx_ncores, carrier i on core slot
 * i) and, after them, spares the monitor started for cores whose carrier
 * blocked in the kernel (at most fx_spares_max). Grows only (a spare
 * parks, it does not exit), reset by fork; entries may be NULL.
 */
extern unsigned fx_ncarriers;
extern unsigned fx_ncores;
/*
 * The bound on spares: FX_SPARES_MAX where only calls the runtime does not
 * see block a carrier; FX_SPARES_MAX_SYNC under the synchronous engine,
 * where every blocking call does, so that each thread blocked in a call
 * may have a kernel thread, as under NPTL, up to that many at once. Not
 * more: a spare costs about five mappings (its stacks, its queue) against
 * the kernel's 65,530 a process (vm.max_map_count), and one that cannot
 * start aborts the process. Set at start; a fork child keeps it.
 */
#define FX_SPARES_MAX 256
#define FX_SPARES_MAX_SYNC 4096
extern unsigned fx_spares_max;
extern struct flexsc *fx_rt_instance;
int fx_rt_start(void);
/*
 * The exit status of a process whose runtime cannot start while
 * FLEXSC_REQUIRE is set (flexsc-run --require), instead of running on
 * plain NPTL: not one a shell or flexsc-run gives (126, 127, 2) or a signal.
 */
#define FX_EXIT_NO_RUNTIME 122
/* FLEXSC_REQUIRE is set, and not to "" or "0" */
bool fx_rt_required(void);
int fx_rt_after_fork_child(void);
/* The monitor has started (the program's first pthread_create) and not been lost to a fork. */
bool fx_rt_monitor_runs(void);
/* The cores whose carriers take work now (sched.c, "carriers follow demand"; monitor.c moves it); *changes: how often it changed */
unsigned fx_rt_in_use(uint64_t *changes);
/* Cores handed from a carrier blocked in the kernel to a spare, since start (the monitor, monitor.c) */
uint64_t fx_rt_handoffs(void);
/* The monitor's looks (monitor.c); *slice: those a time slice asked for; *woken: those after a carrier woke it. */
uint64_t fx_rt_monitor_looks(uint64_t *slice, uint64_t *woken);
void fx_rt_start_carriers(void);
void fx_block(void);
/* Starts u (sched.c says where); 0 or -errno. */
int fx_uthread_start(struct fx_uthread *u);
void fx_yield(void);
void fx_interrupt(struct fx_uthread *u);
/* From the poke handler: an asynchronously cancelled uthread interrupted at uc (src/preload/cancel.c). */
void fx_cancel_async_poked(void *uc);
/* Sends c the poke (FX_SIG_POKE) to raise a signal for its running uthread, unless one is on its way. */
void fx_poke(struct fx_carrier *c);
/* Interrupts u's call on its own carrier, after a request's store; false if it is in none (sched.c). */
bool fx_interrupt_in_place(struct fx_uthread *u);
void fx_interrupt_call(struct fx_uthread *u);
bool fx_end_wait(struct fx_uthread *u, struct fx_waiter **slot);
/*
 * Around an exec (src/preload/exec.c): the new image inherits the calling
 * thread's CPUs and signal mask, a carrier's (one pinned CPU) and the extra
 * signals it blocks for the runtime. fx_rt_exec_prepare gives the thread
 * its uthread's own CPUs (those it set, else the process's at start) and,
 * on carrier c (NULL: not one),
 * the uthread's own mask, saving what it had (true: it changed something);
 * fx_rt_exec_failed puts that back when the exec fails.
 */
struct fx_exec_saved {
	cpu_set_t cpus;
	bool cpus_set, mask_set;
};
bool fx_rt_exec_prepare(struct fx_exec_saved *saved, struct fx_carrier *c);
void fx_rt_exec_failed(const struct fx_exec_saved *saved, struct fx_carrier *c);

/*
 * Starts one of the runtime's own kernel threads (the signal thread,
 * overflow threads) running fn(NULL): detached, a 64 KiB stack,
 * FX_KTHREAD_MASK (it unblocks what it needs), no carrier's GS base.
 * Returns 0 or -errno.
 */
int fx_rt_kthread(void *(*fn)(void *));
int fx_rt_kthread_arg(void *(*fn)(void *), void *arg);
/*
 * vfork and clone(CLONE_VFORK) from a uthread: fx_kthread_enter moves the
 * calling uthread onto a kernel thread of its own that is no carrier
 * (NULL when the caller is not a uthread that may switch, or no thread
 * could start: then it stays where it is); fx_kthread_leave(that) moves
 * it back to a carrier, the kernel thread's mask FX_KTHREAD_MASK again.
 * fx_kthread_mask: the uthread's signal mask, for the child.
 */
void *fx_kthread_enter(void);
void fx_kthread_leave(void *h);
const uint64_t *fx_kthread_mask(const void *h);
void fx_raise_pending(void);
/* A cancel request u acts on now (enabled, and u is not on its way out). */
static inline bool fx_cancel_pending(const struct fx_uthread *u)
{
	return atomic_load_explicit(&u->cancel_requested, memory_order_relaxed) && !u->cancel_disabled &&
	       !atomic_load_explicit(&u->exiting, memory_order_relaxed);
}
void fx_uthread_wake(struct fx_uthread *u);
void fx_uthread_exit(void *result) __attribute__((noreturn));
/* The preload's end of a thread: key and TLS destructors, then fx_uthread_exit. */
void fx_thread_finished(void *result) __attribute__((noreturn));
long fx_rt_syscall_on(struct fx_carrier *c, long nr, unsigned nargs, const uint64_t *args);
/* Runs system call nr for the calling thread: exception-less on a uthread (sched.c). Returns >= 0 or -errno. */
static inline long fx_rt_syscall(long nr, unsigned nargs, const uint64_t *args)
{
	return fx_rt_syscall_on(fx_carrier_self(), nr, nargs, args);
}
bool fx_never_restarted(long nr, const uint64_t *args);
bool fx_call_never_waits(long nr, const uint64_t *args);
void fx_rt_cpus(cpu_set_t *set);
/* The CPUs the process could run on at start, before the runtime set carrier 0's: a uthread's affinity. */
void fx_rt_start_cpus(cpu_set_t *set);
/* The uthread running on the calling kernel thread; NULL on a thread that is no carrier. */
static inline struct fx_uthread *fx_uthread_self(void)
{
	struct fx_carrier *c = fx_carrier_self();

	return c ? c->current : NULL;
}
extern _Atomic int fx_rt_live_uthreads;

/*
 * Gives the calling uthread a kernel thread of its own for the rest of its
 * life (an exclusive carrier), so that per-thread kernel identity it is
 * about to take (its own credentials, seccomp filter, namespaces, fs
 * context) stays its own, as under NPTL; the threads it makes later get
 * one each, made from its own, and so start with its identity. Not when
 * the caller is the process's only thread (the change is then the
 * process's; seccomp, for a filter: always bound). 0 (also when it is not
 * a uthread, or already bound), or -errno: no thread could be made, the
 * caller is under a seccomp filter already (-EPERM: it may forbid the
 * clone), or the caller is a signal handler; the caller then runs where
 * it is.
 */
int fx_rt_bind(bool seccomp);

/*
 * Whether the calling kernel thread is under a seccomp filter that the
 * program installed after the runtime started (through prctl, seccomp or
 * syscall; fx_rt_note_filter): it may forbid clone, so no thread of the
 * runtime's is made from it. A filter the process had at start (a
 * container's, systemd's) let the runtime start, and is not counted.
 */
bool fx_rt_sealed(void);
/* The program installed a filter: on the calling kernel thread, or on every thread (TSYNC). */
void fx_rt_note_filter(bool every_thread);

/* src/threads/setxid.c: set*id and setgroups change every carrier (libc's contract, -1 and errno) */
int fx_rt_setuid(uid_t u);
int fx_rt_setgid(gid_t g);
int fx_rt_seteuid(uid_t u);
int fx_rt_setegid(gid_t g);
int fx_rt_setreuid(uid_t r, uid_t e);
int fx_rt_setregid(gid_t r, gid_t e);
int fx_rt_setresuid(uid_t r, uid_t e, uid_t s);
int fx_rt_setresgid(gid_t r, gid_t e, gid_t s);
int fx_rt_setgroups(size_t n, const gid_t *list);

/* src/threads/uthread.c */
int fx_uthread_init(void);
size_t fx_default_stack_size(void);
struct fx_uthread *fx_sched_context_create(void (*loop)(void *), void *arg);
extern struct fx_uthread *fx_main_uthread;
struct fx_uthread *fx_uthread_create(size_t stack_size, size_t guard, void *user_stack,
				      void *(*start)(void *), void *arg, int *err);
struct fx_uthread *fx_uthread_adopt_current(void);
void fx_uthread_free(struct fx_uthread *u);
struct fx_uthread *fx_uthread_of(uintptr_t tcb);
bool fx_uthread_dead(uintptr_t tcb);
void fx_uthread_set_tid(struct fx_uthread *u, int tid);
void *fx_uthread_own_robust(const struct fx_uthread *u);
void fx_uthread_robust_exit(struct fx_uthread *u);

/*
 * src/threads/tcache.c: glibc's per-thread malloc cache of exited uthreads,
 * handed on. init finds it (0, or -errno: recycling off); give puts a
 * pooled one into a new TCB before it first runs; take moves a freed
 * uthread's out of its TCB into the pool; report prints what happened.
 */
int fx_tcache_init(void);
void fx_tcache_give(uintptr_t tcb);
void fx_tcache_take(uintptr_t tcb);
void fx_tcache_report(FILE *out);

/* src/threads/kstate.c: per-thread kernel state kept per uthread */
void fx_kstate_start(struct fx_carrier *c0, struct fx_uthread *main_u);
void fx_altstack_switch(struct fx_carrier *c, struct fx_uthread *next);
long fx_sigaltstack(const stack_t *ss, stack_t *old);
bool fx_kstate_call(long nr, const long *args, long *ret);
void fx_kstate_named(struct fx_uthread *u);
/* Its name as PR_GET_NAME gives it: its own, or, never named, the process's at start. */
const char *fx_kstate_name_of(const struct fx_uthread *u);
/* Names the calling carrier's kernel thread (not carrier 0's: the process's). */
void fx_kstate_name_carrier(const struct fx_carrier *c);
/* In a fork child: its one kernel thread takes the forking uthread's name, as NPTL's child has. */
void fx_kstate_name_forked(const struct fx_uthread *self);

/* The carrier's sigaltstack becomes next's (none for NULL: the scheduler context); no call when both have none. */
static inline void fx_altstack_sync(struct fx_carrier *c, struct fx_uthread *next)
{
	if (__builtin_expect((next && next->has_altstack ? next : NULL) != c->alt_owner, 0))
		fx_altstack_switch(c, next);
}
void *fx_ctx_make(void *stack_top, void (*entry)(void *), void *arg);
uintptr_t fx_tcb_create_for_scheduler(void);
void fx_ctx_switch(void **save_sp, void *load_sp, uint64_t load_fsbase);

#endif
