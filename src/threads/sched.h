/* SPDX-License-Identifier: MIT */
/*
 * What the scheduler's own files share, and nothing else uses: sched.c
 * (run queues, switching, blocking and waking, the syscall path: the hot
 * path) and the files split from it (issue 13): monitor.c (the monitor),
 * poke.c (the runtime's signals' handlers), carrier.c (the runtime's kernel
 * threads: carriers, exclusive carriers, helpers) and start.c (start-up,
 * configuration from the environment, fork).
 *
 * Each name here was a static of sched.c, visible now only because code
 * that uses it moved to another of these files. What the hot path reads
 * (the slot owners, the slots in use, the monitor's word) is defined in
 * sched.c, so that it loads it directly there, not through the GOT as
 * another file's variable; the two inline helpers are here so that both
 * sides still inline them.
 */
#ifndef FX_THREADS_SCHED_H
#define FX_THREADS_SCHED_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "threads/rt.h"

/* sched.c, for the monitor, start-up and fork: where work for a carrier goes */

/* The carrier that has the core of each slot now (a spare, after a hand-over). */
extern _Atomic(struct fx_carrier *) fx_slot_owner[FLEXSC_MAX_CPUS];
/* Slots below it take work (sched.c, "Carriers follow demand"); the monitor moves it. */
extern _Atomic unsigned fx_in_use;

/*
 * Where work for carrier c goes: c itself, or, once its core was handed to
 * another carrier because it blocked in the kernel, the carrier that has
 * the core now. One relaxed load on the common path.
 */
static inline struct fx_carrier *fx_owner_of(struct fx_carrier *c)
{
	if (fx_unlikely(atomic_load_explicit(&c->handed, memory_order_relaxed))) {
		struct fx_carrier *o = atomic_load_explicit(&fx_slot_owner[c->slot], memory_order_acquire);
		return o ? o : c;
	}
	return c;
}

static inline bool fx_slot_in_use(const struct fx_carrier *c)
{
	return (unsigned)c->slot < atomic_load_explicit(&fx_in_use, memory_order_relaxed);
}

/* sched.c, for the monitor: its wait while every carrier sleeps, which idle_sleep ends */

/*
 * While every carrier sleeps, the monitor waits on this word (a futex).
 * FX_MON_SHORT: it waits out one period; a carrier that wakes meanwhile
 * clears the word, which the monitor looks at when the period ends, and
 * makes no system call. FX_MON_LONG: nobody woke for a whole period, and it
 * waits until a carrier does: that carrier clears the word and wakes it.
 */
enum { FX_MON_RUNS = 0, FX_MON_SHORT = 1, FX_MON_LONG = 2 };
extern _Atomic uint32_t fx_monitor_waiting;
/* Ends the monitor's wait for a carrier to wake (FX_MON_LONG): its next look is due a period from now. */
static inline void fx_monitor_nudge(void)
{
	if (fx_unlikely(atomic_load(&fx_monitor_waiting)) && atomic_exchange(&fx_monitor_waiting, FX_MON_RUNS) == FX_MON_LONG)
		fx_futex_wake(&fx_monitor_waiting, 1);
}
/* An exclusive carrier whose in-place call is marked for interruption: the monitor signals it again (monitor.c). */
void fx_monitor_watch(struct fx_carrier *c);
/* ... and no more: before the carrier is freed. */
void fx_monitor_unwatch(struct fx_carrier *c);

/* sched.c, for the monitor: the wake path's slices and looks at a carrier, which the monitor's looks share */

/*
 * A uthread's slice: how long one may keep its carrier, computing, while
 * others wait on the carrier. The kernel lets a woken thread preempt one
 * that has had its slice (0.75 to 3 ms on EEVDF); without this, the woken
 * uthread waited for the monitor's look, 10 to 20 ms, and a pipeline of
 * threads handing work to threads that compute (pigz -p 2) took twice
 * NPTL's time.
 */
#define FX_SLICE_NS 500000ull

/* The thread's CPU clock of c, as glibc's pthread_getcpuclockid makes it: per thread, scheduler time. */
int fx_carrier_clock(const struct fx_carrier *c);
/* *ns: CPU clock clk (a thread's or the process's) now; false if it cannot be read. */
bool fx_cpu_clock_ns(int clk, uint64_t *ns);
/* The kernel's state letter for thread tid ('R', 'S', 'D'...), or 0. */
char fx_kernel_state(int tid);
/* Whether c's thread computes (on a CPU now, or runnable). */
bool fx_computes(const struct fx_carrier *c);
/* How long c's uthread at switch number `switches` has been seen running. */
uint64_t fx_slice_ran(struct fx_carrier *c, uint64_t switches, uint64_t now);
/* Whether the uthread c runs at switch number `switches` may be asked to give way. */
bool fx_may_preempt(struct fx_carrier *c, uint64_t switches);
/* A shared carrier other than except asleep on its futex: no runnable uthread, no call in flight. */
struct fx_carrier *fx_idle_carrier(struct fx_carrier *except);
/* Moves every uthread on from's run queue to to's (from's core was handed to to). */
void fx_forward_rq(struct fx_carrier *from, struct fx_carrier *to);

/* sched.c, for carrier.c: a carrier's scheduler context, and a bound uthread's move to its own carrier */

/* The scheduler context of a carrier: runs whenever no uthread can. */
void fx_idle_loop(void *arg);
void fx_rq_push(struct fx_carrier *c, struct fx_uthread *u);
/* Makes a sleeping carrier look at its run queue (or steal) again. */
void fx_kick(struct fx_carrier *c);

/* carrier.c, for the scheduler, the monitor, start-up and fork: carriers made and started */

/* libc's pthread_create, or one that stands for it (fx_os_pthread_create) */
typedef int fx_create_fn(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
/* Whether each carrier is pinned to its CPU (FLEXSC_PIN_CARRIERS=1), or placed by the kernel. */
extern bool fx_carriers_pinned;
/* The CPUs the process could run on before the runtime set its first thread's as carrier 0's. */
extern cpu_set_t fx_start_cpus;
/* The instance of the exclusive carriers' queues (the sync engine, one page each); NULL until the first. */
extern struct flexsc *fx_bound_instance;
struct fx_carrier *fx_carrier_new(int index, int cpu);
/* Starts c's kernel thread with create, with every signal blocked; 0 or an errno value. */
int fx_spawn_carrier(struct fx_carrier *c, const pthread_attr_t *attr, fx_create_fn *create);
/* On the carrier's own kernel thread: its identity, queue and scheduler context. */
int fx_carrier_enter(struct fx_carrier *c);
/* A new exclusive carrier for u, made from the calling kernel thread; NULL and *err (-errno) when it cannot be made. */
struct fx_carrier *fx_exclusive_carrier(struct fx_uthread *u, int *err);
/* Lets the calling thread run on fx_start_cpus; whether it did. */
bool fx_take_start_cpus(void);

/* sched.c, for the poke's handler: it collects for a carrier blocked outside the runtime */

/* Collects finished exception-less calls and makes their uthreads runnable here. */
void fx_reap(struct fx_carrier *c);

/* sched.c, for start-up and fork: settings of the hot path, and the vfork threads a child forgets */

/* The process's only uthread runs its calls itself (sched.c, alone); set by tune_instance. */
extern bool fx_alone_here;
/* The window of dynamic core specialization (FLEXSC_SPECIALIZE_MS). */
extern uint64_t fx_spec_window_ns;
/* The idle kernel threads kept for the next vfork, and their lock. */
struct fx_kthread;
extern _Atomic int fx_kthreads_lock;
extern struct fx_kthread *fx_kthreads_idle;

/* monitor.c, for start-up and fork */

/* The monitor's kernel thread (fx_rt_kthread). */
void *fx_monitor_main(void *arg);
/* Starts the adaptation of fx_in_use with one slot in use, when the carriers are the kernel's to place. */
void fx_in_use_start(void);

/* poke.c, for start-up: the handlers it installs */

/* FX_SIG_INTERRUPT's: it only makes a blocking system call return EINTR. */
void fx_interrupted(int sig);
/* FX_SIG_POKE's: pending signals, the monitor's nudge, preemption, asynchronous cancellation. */
void fx_poked(int sig, siginfo_t *si, void *uc);

#endif
