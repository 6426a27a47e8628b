/* SPDX-License-Identifier: MIT */
/*
 * The FlexSC-Threads scheduler: carriers, run queues, blocking and waking.
 *
 * Concepts. A carrier (struct fx_carrier) is a real NPTL thread, one per
 * user core (pinned to it under --cores or --syscall-cores); %gs points at
 * it, so any code can find "its" carrier in one instruction, whatever TCB
 * %fs holds. A uthread is a program thread with its own stack and TCB
 * (uthread.c). Each carrier has a run queue, a
 * private flexsc queue (syscall pages: single producer, the carrier), and
 * a scheduler context (its own stack and TCB) where it goes when nothing
 * can run.
 *
 * Blocking. A uthread that must wait marks its state, makes itself findable
 * by its waker (a wait list, or the cookie of a posted call), and calls
 * fx_block, which switches directly to the next runnable uthread, or to the
 * scheduler context when there is none. Scheduling is cooperative: every
 * interposed blocking call, every contended lock and every wait is a switch
 * point; a uthread that computes while others wait is preempted by the
 * monitor (preempt.c).
 *
 * The race every M:N runtime must close: once a blocking uthread is on a
 * wait list, another carrier may wake and resume it before its registers
 * are saved. As in Linux's try_to_wake_up, each uthread has on_cpu: set
 * while its context is live, cleared (release) by whatever context runs
 * next on that carrier once the switch is complete (finish_switch); a
 * carrier about to resume a uthread waits (acquire) until it is clear.
 *
 * Exception-less calls. An interposed call is posted to the carrier's
 * queue with the uthread as cookie and the uthread blocks in FX_U_SYSCALL.
 * Completions are reaped when the carrier looks for work, before it would
 * go idle; the batch is flushed by the library's policy (threshold, time
 * bound) and at the latest when the carrier has nothing left to run, which
 * is FlexSC's rule. Only then does the carrier sleep: in flexsc_wait when
 * calls are in flight, else on a futex; a carrier that makes work for a
 * sleeping one kicks it (flexsc_queue_wake, or the futex).
 *
 * Balancing. The paper pins user threads to their core. Here a uthread is
 * woken onto the carrier it last ran on (its TCB goes with it, so it may
 * move), and a carrier with nothing to run steals from the others' run
 * queues before it sleeps; a wake that leaves a busy carrier with a queue
 * kicks a sleeping one to come and steal.
 *
 * Around it, each in a file of its own (sched.h lists what they share):
 * the monitor (monitor.c), the runtime's signal handlers and restart rules
 * (poke.c), the making of carriers and the runtime's other kernel threads
 * (carrier.c), and start-up and the fork child's rebuild (start.c).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <immintrin.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/fence.h"
#include "threads/overflow.h"
#include "threads/preempt.h"
#include "threads/rt.h"
#include "threads/sched.h"
#include "threads/signals.h"
#include "threads/timeleft.h"
#include "threads/ufutex.h"
#include "threads/waiter.h"

#ifndef HWCAP2_FSGSBASE
#define HWCAP2_FSGSBASE (1 << 1)
#endif

struct fx_carrier **fx_carriers;
unsigned fx_ncarriers;
unsigned fx_ncores;
unsigned fx_spares_max = FX_SPARES_MAX;
/* The carrier that has the core of each slot now (a spare, after a hand-over). */
_Atomic(struct fx_carrier *) fx_slot_owner[FLEXSC_MAX_CPUS];
/* the monitor's futex word (sched.h): defined here, where idle_sleep reads it */
_Atomic uint32_t fx_monitor_waiting;
struct flexsc *fx_rt_instance;
struct fx_uthread *fx_main_uthread;
_Atomic int fx_rt_live_uthreads;

static void finish_switch(void);

/*
 * Carriers follow demand (docs/threads.md, "How many carriers take work"):
 * with the carriers placed by the kernel, only the cores (slots) below
 * `fx_in_use` take uthreads, wake-ups, completions and steals; the monitor moves it
 * between 1 and fx_ncores by the CPU time the process gets (monitor_tick).
 * A carrier of a slot out of use runs what it already has, then sleeps.
 * With the user's --cores (pinned) every slot is in use, always.
 */
_Atomic unsigned fx_in_use = FLEXSC_MAX_CPUS;

/*
 * Where work for c goes: c, unless c's slot is out of use; then self's
 * carrier if its slot is in use, else slot 0's. An exclusive carrier keeps its own.
 */
static struct fx_carrier *in_use_for(struct fx_carrier *c, struct fx_carrier *self)
{
	if (fx_likely(fx_slot_in_use(c)) || c->own)
		return c;
	if (self && !self->own && fx_slot_in_use(self))
		return fx_owner_of(self);
	struct fx_carrier *o = atomic_load_explicit(&fx_slot_owner[0], memory_order_acquire);
	return o ? o : c;
}

void fx_rq_push(struct fx_carrier *c, struct fx_uthread *u)
{
	u->next = NULL;
	fx_spin_lock(&c->rq_lock);
	if (c->rq_tail)
		c->rq_tail->next = u;
	else
		c->rq_head = u;
	c->rq_tail = u;
	atomic_fetch_add_explicit(&c->rq_len, 1, memory_order_relaxed);
	fx_spin_unlock(&c->rq_lock);
}

static struct fx_uthread *rq_pop(struct fx_carrier *c)
{
	struct fx_uthread *u;

	if (!atomic_load_explicit(&c->rq_len, memory_order_relaxed))
		return NULL;
	fx_spin_lock(&c->rq_lock);
	u = c->rq_head;
	if (u) {
		c->rq_head = u->next;
		if (!c->rq_head)
			c->rq_tail = NULL;
		atomic_fetch_sub_explicit(&c->rq_len, 1, memory_order_relaxed);
	}
	fx_spin_unlock(&c->rq_lock);
	return u;
}

/* Makes a sleeping carrier look at its run queue (or steal) again. */
void fx_kick(struct fx_carrier *c)
{
	/* seq_cst: pairs with the store of sleeping before the carrier's last look */
	atomic_thread_fence(memory_order_seq_cst);
	switch (atomic_load_explicit(&c->sleeping, memory_order_relaxed)) {
	case FX_C_IN_FLEXSC:
		flexsc_queue_wake(c->q);
		break;
	case FX_C_IN_FUTEX:
		atomic_store(&c->idle_word, 1);
		fx_futex_wake(&c->idle_word, 1);
		break;
	}
}

/* The thread's CPU clock of c, as glibc's pthread_getcpuclockid makes it: per thread, scheduler time. */
int fx_carrier_clock(const struct fx_carrier *c)
{
	return (int)(~(unsigned)c->tid << 3) | 4 | 2;
}

/* *ns: CPU clock clk (a thread's or the process's) now; false if it cannot be read. */
bool fx_cpu_clock_ns(int clk, uint64_t *ns)
{
	struct timespec ts;

	if (fx_raw_syscall6(SYS_clock_gettime, clk, (long)&ts, 0, 0, 0, 0))
		return false;
	*ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return true;
}

/* Kicks a sleeping carrier taking work, other than except; false if none sleeps. */
static bool kick_one_idle(struct fx_carrier *except)
{
	for (unsigned i = 0; i < fx_ncarriers; i++) {
		struct fx_carrier *c = fx_carriers[i];
		if (c && c != except && !atomic_load_explicit(&c->handed, memory_order_relaxed) &&
		    fx_slot_in_use(c) && atomic_load_explicit(&c->sleeping, memory_order_relaxed)) {
			fx_kick(c);
			return true;
		}
	}
	return false;
}

/*
 * How long c's uthread at switch number `switches` has been seen running:
 * since the first look at it (by the monitor, a waker, a syscall thread
 * with results). No clock is read at the switch itself, which a server
 * makes at every call (15 ns more on a 42 ns switch): a slice is known
 * from its second look on.
 */
uint64_t fx_slice_ran(struct fx_carrier *c, uint64_t switches, uint64_t now)
{
	if (atomic_load_explicit(&c->seen_switch, memory_order_acquire) != switches + 1) {
		atomic_store_explicit(&c->seen_ns, now, memory_order_relaxed);
		atomic_store_explicit(&c->seen_switch, switches + 1, memory_order_release);
		return 0;
	}
	uint64_t t = atomic_load_explicit(&c->seen_ns, memory_order_relaxed);
	return now > t ? now - t : 0; /* another's later first look: a shorter time, never a longer */
}

/* The kernel's state letter for thread tid ('R', 'S', 'D'...), or 0. */
char fx_kernel_state(int tid)
{
	char path[64], buf[256];

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	long fd = fx_raw_syscall6(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC, 0, 0, 0);
	if (fd < 0)
		return 0;
	long n = fx_raw_syscall6(SYS_read, fd, (long)buf, sizeof(buf) - 1, 0, 0, 0);
	fx_raw_syscall6(SYS_close, fd, 0, 0, 0, 0, 0);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/*
 * Whether c's thread computes: on a CPU now (its CPU clock moves between
 * two readings), or runnable ('R' in /proc: the kernel lent its CPU for a
 * moment, often to the very syscall thread that asks). Not one blocked in
 * a call the runtime does not see (a program's own `syscall`): a poke
 * there would end an epoll_wait with EINTR.
 */
bool fx_computes(const struct fx_carrier *c)
{
	uint64_t a, b;

	if (fx_cpu_clock_ns(fx_carrier_clock(c), &a) && fx_cpu_clock_ns(fx_carrier_clock(c), &b) && b != a)
		return true;
	return fx_kernel_state(c->tid) == 'R';
}

/*
 * Whether the uthread c runs at switch number `switches` may be asked to
 * give way: c has not been asked at that switch yet (a request made at an
 * earlier one, which that switch made moot, does not count). How long it
 * has run, and whether it computes, are the caller's to ask.
 */
bool fx_may_preempt(struct fx_carrier *c, uint64_t switches)
{
	/*
	 * Not inside a call the runtime makes there (in place, the synchronous
	 * engine's): a signal ends a pipe write that has moved some bytes with
	 * that count, where NPTL's moved them all.
	 */
	return __atomic_load_n(&c->current, __ATOMIC_RELAXED) && c->tid && !c->own &&
	       !atomic_load_explicit(&c->in_call, memory_order_relaxed) && !__atomic_load_n(&c->in_rt, __ATOMIC_RELAXED) &&
	       atomic_load_explicit(&c->sleeping, memory_order_relaxed) == FX_C_AWAKE &&
	       atomic_load_explicit(&c->preempt_at, memory_order_relaxed) != switches + 1;
}

/*
 * Wake-up preemption: a uthread was made runnable on c, which runs
 * another, and no sleeping carrier was there to take it; or a syscall
 * thread's results came for c (fx_os_owner_awake). When that one has had
 * its slice, it gives way now (preempt.c).
 */
static void preempt_for_wake(struct fx_carrier *c)
{
	uint64_t switches = __atomic_load_n(&c->switches, __ATOMIC_RELAXED);

	/* c switched since: the request names a switch past, and its handler drops it */
	if (fx_may_preempt(c, switches) && fx_slice_ran(c, switches, fx_now_ns()) >= FX_SLICE_NS && fx_computes(c))
		fx_preempt_request(c, switches);
}

/* A shared carrier other than except asleep on its futex: no runnable uthread, no call in flight. */
struct fx_carrier *fx_idle_carrier(struct fx_carrier *except)
{
	for (unsigned i = 0; i < fx_ncarriers; i++) {
		struct fx_carrier *c = fx_carriers[i];
		if (c && c != except && !c->own && !atomic_load_explicit(&c->handed, memory_order_relaxed) &&
		    fx_slot_in_use(c) && atomic_load_explicit(&c->sleeping, memory_order_relaxed) == FX_C_IN_FUTEX &&
		    !atomic_load_explicit(&c->rq_len, memory_order_relaxed))
			return c;
	}
	return NULL;
}

/*
 * A syscall thread's results for a carrier that is awake: when it computes
 * in a uthread that has had its slice, that one gives way, so the callers
 * run now, as the kernel's wake-up preemption would run a thread whose
 * read completed.
 */
void fx_os_owner_awake(struct fx_wake *w)
{
	unsigned n = __atomic_load_n(&fx_ncarriers, __ATOMIC_ACQUIRE);

	for (unsigned i = 0; i < n; i++) {
		struct fx_carrier *c = fx_carriers[i];
		if (c && c->q && c->q->wake == w) {
			preempt_for_wake(c);
			return;
		}
	}
}

void fx_uthread_wake(struct fx_uthread *u)
{
	struct fx_carrier *self = fx_carrier_self();
	struct fx_carrier *c = fx_owner_of(u->home ? u->home : self ? self : fx_carriers[0]);

	c = in_use_for(c, self);
	atomic_store_explicit(&u->state, FX_U_RUNNABLE, memory_order_relaxed);
	fx_rq_push(c, u);
	/* work that came during the slice of the uthread c runs (fresh_work) */
	atomic_store_explicit(&c->woken_switch, __atomic_load_n(&c->switches, __ATOMIC_RELAXED) + 1,
			      memory_order_relaxed);
	if (c != self)
		fx_kick(c);
	if ((atomic_load_explicit(&c->rq_len, memory_order_relaxed) > 1 ||
	     !atomic_load_explicit(&c->sleeping, memory_order_relaxed)) &&
	    !kick_one_idle(c) && c != self)
		preempt_for_wake(c);
}

static void cancelling_remove(struct fx_carrier *c, struct fx_uthread *u);
static void serve_cancels(struct fx_carrier *c);

/* Collects finished exception-less calls and makes their uthreads runnable here. */
void fx_reap(struct fx_carrier *c)
{
	struct flexsc_completion done[64];
	struct fx_carrier *to = in_use_for(fx_owner_of(c), NULL);
	int n;

	while (c->inflight && (n = flexsc_reap(c->q, done, 64)) > 0) {
		for (int i = 0; i < n; i++) {
			struct fx_uthread *u = done[i].cookie;

			/* off every list of cancellations before it can run, exit and be freed */
			if (fx_unlikely(atomic_load_explicit(&u->in_inbox, memory_order_relaxed)))
				serve_cancels(c);
			if (fx_unlikely(u->cancelling_call))
				cancelling_remove(c, u);
			u->sysret = done[i].ret;
			c->inflight--;
			atomic_store_explicit(&u->state, FX_U_RUNNABLE, memory_order_relaxed);
			fx_rq_push(to, u);
			if (fx_unlikely(to != c))
				fx_kick(to);
		}
	}
	/*
	 * More runnable here than the next to run: a sleeping carrier comes
	 * to steal, as for a wake (fx_uthread_wake). (Two threads that
	 * compute between calls leave one runnable at a time here; the
	 * monitor's balance moves them, not this.)
	 */
	if (atomic_load_explicit(&to->rq_len, memory_order_relaxed) > 1)
		kick_one_idle(to);
}

/* Moves every uthread on from's run queue to to's (from's core was handed to to). */
void fx_forward_rq(struct fx_carrier *from, struct fx_carrier *to)
{
	struct fx_uthread *u;
	bool moved = false;

	while ((u = rq_pop(from))) {
		fx_rq_push(to, u);
		moved = true;
	}
	if (moved)
		fx_kick(to);
}

/*
 * Takes a runnable uthread from another carrier. An idle carrier also fires
 * the others' expired timers first: a carrier blocked in a system call (a
 * synchronous-engine call, a call libc makes internally) must not hold up
 * the sleepers whose deadline it keeps.
 */
static struct fx_uthread *steal(struct fx_carrier *self)
{
	for (unsigned i = 1; i < fx_ncarriers; i++) {
		struct fx_carrier *c = fx_carriers[(self->index + i) % fx_ncarriers];
		struct fx_uthread *u;

		if (c && c->timers)
			fx_timers_fire(c);
		/*
		 * A carrier of a slot out of use fires the timers, takes nobody.
		 * Nor from a carrier kicked and on its way (kick): it runs its
		 * queue itself, and a uthread just handed to it (pick_next's
		 * balance) would come straight back.
		 */
		if (c && atomic_load_explicit(&c->rq_len, memory_order_relaxed) && fx_slot_in_use(self) &&
		    !(atomic_load_explicit(&c->sleeping, memory_order_relaxed) == FX_C_IN_FUTEX &&
		      atomic_load_explicit(&c->idle_word, memory_order_relaxed)) &&
		    (u = rq_pop(c))) {
			self->steals++;
			return u;
		}
	}
	return NULL;
}

/*
 * Posted calls of uthreads being cancelled: only the queue's owner may
 * cancel them. A call a syscall thread executes is interrupted with a
 * signal, which is lost if it lands just before the thread enters the
 * call; so the carrier keeps such calls and asks again every millisecond
 * until they come back (a call already ended, or one the uthread made
 * since, is dropped from the list).
 */
#define FX_CANCEL_RETRY_NS 1000000u

/* Takes u off c's list of calls being cancelled; only c touches the list. */
static void cancelling_remove(struct fx_carrier *c, struct fx_uthread *u)
{
	for (struct fx_uthread **p = &c->cancelling; *p; p = &(*p)->cancelling_next) {
		if (*p == u) {
			*p = u->cancelling_next;
			break;
		}
	}
	u->cancelling_call = 0;
}

static void serve_cancels(struct fx_carrier *c)
{
	struct fx_uthread *u = atomic_exchange(&c->cancel_inbox, NULL);

	while (u) {
		struct fx_uthread *next = u->cancel_next;
		atomic_store(&u->in_inbox, 0); /* after reading next: a new push starts a new list */
		/* its call in flight on this queue, not one it made since, elsewhere */
		bool waited = fx_queue_may_have_waited(c->q, u->pending_call);
		if (atomic_load(&u->state) == FX_U_SYSCALL && u->home == c &&
		    flexsc_cancel(c->q, u->pending_call) == 0 && !u->cancelling_call) {
			u->cancelling_call = u->pending_call;
			u->cancelled_waited = waited;
			u->cancelling_next = c->cancelling;
			c->cancelling = u;
		}
		u = next;
	}
	if (!c->cancelling)
		return;
	uint64_t now = fx_now_ns();
	if (now - c->cancel_retry_ns < FX_CANCEL_RETRY_NS)
		return;
	c->cancel_retry_ns = now;
	/* every uthread here is still parked in its call: reap takes it off first */
	for (struct fx_uthread **p = &c->cancelling; (u = *p);) {
		if (flexsc_cancel(c->q, u->cancelling_call) == 0) {
			p = &u->cancelling_next;
		} else {
			u->cancelling_call = 0;
			*p = u->cancelling_next;
		}
	}
}

static struct fx_uthread *pick_next(struct fx_carrier *c)
{
	if (atomic_load_explicit(&c->cancel_inbox, memory_order_relaxed) || c->cancelling)
		serve_cancels(c);
	fx_timers_fire(c);
	/* finished calls join the queue's tail even when it is not empty: no starving them */
	if (c->inflight)
		fx_reap(c);
	if (fx_unlikely(atomic_load_explicit(&c->handed, memory_order_relaxed))) {
		/* its core is another carrier's: it runs nothing more */
		fx_forward_rq(c, fx_owner_of(c));
		return NULL;
	}
	if (fx_unlikely(atomic_load_explicit(&c->shed, memory_order_relaxed))) {
		/* the monitor saw it compute throughout with more waiting (balance_look) */
		struct fx_carrier *idle = fx_idle_carrier(c);
		struct fx_uthread *u;
		atomic_store_explicit(&c->shed, false, memory_order_relaxed);
		if (idle && (u = rq_pop(c))) {
			fx_rq_push(idle, u);
			fx_kick(idle);
		}
	}
	return rq_pop(c);
}

/*
 * Signals sent to a uthread with pthread_kill while it was not running, or
 * while it blocked them: raised on its carrier now that it runs with them
 * unblocked, so the handler runs on it.
 */
static void raise_pending(struct fx_carrier *c, struct fx_uthread *u)
{
	if ((atomic_load(&u->sigpending) & ~u->sigmask) || c->kextra)
		fx_sig_raise(c, u); /* with their siginfo, realtime ones queued (signals.c) */
}

void fx_raise_pending(void)
{
	struct fx_carrier *c = fx_carrier_self();

	if (c && c->current && (atomic_load(&c->current->sigpending) || c->kextra))
		raise_pending(c, c->current);
}

/* Runs in whatever context a carrier switched to: completes the switch. */
static void finish_switch(void)
{
	struct fx_carrier *c = fx_carrier_self();

	if (c->prev) {
		/* release: pairs with the acquire in switch_to; prev's registers are saved */
		atomic_store_explicit(&c->prev->on_cpu, 0, memory_order_release);
		c->prev = NULL;
	}
	if (c->to_free) {
		fx_uthread_free(c->to_free);
		c->to_free = NULL;
	}
	if (c->current && (atomic_load_explicit(&c->current->sigpending, memory_order_relaxed) || c->kextra))
		raise_pending(c, c->current);
}

/* Everything a switch from prev (NULL: the scheduler context) to next does before the jump. */
static void switch_prepare(struct fx_carrier *c, struct fx_uthread *prev, struct fx_uthread *next)
{
	while (atomic_load_explicit(&next->on_cpu, memory_order_acquire))
		_mm_pause();
	atomic_store_explicit(&next->on_cpu, 1, memory_order_relaxed);
	next->home = c;
	/*
	 * seq_cst, then finish_switch's load of sigpending: a sender (wake_for)
	 * sets sigpending, then loads the state; one that still saw it
	 * runnable only left the signal for this switch, one that sees it
	 * running (and, by this order, its new home) pokes this carrier.
	 */
	atomic_store(&next->state, FX_U_RUNNING);
	fx_uthread_set_tid(next, c->tid);
	fx_altstack_sync(c, next);
	/*
	 * What is pending for it in the runtime stays blocked until
	 * finish_switch has raised it: one of those numbers the kernel has
	 * for the process would otherwise come first.
	 */
	c->kextra = atomic_load_explicit(&next->sigpending, memory_order_relaxed) & ~next->sigmask;
	uint64_t want = next->sigmask | c->kextra;
	if (want != c->kmask) {
		fx_raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&want, 0, 8, 0, 0);
		c->kmask = want;
	}
	c->current = next;
	c->prev = prev;
	c->switches++;
}

/* Switches from the current context (saved in *save_sp) to next. */
static void switch_to(struct fx_carrier *c, void **save_sp, struct fx_uthread *prev,
		      struct fx_uthread *next)
{
	switch_prepare(c, prev, next);
	fx_ctx_switch(save_sp, next->sp, next->tcb);
	finish_switch();
}

/* Switches from the running uthread self to the carrier's scheduler context. */
static void switch_to_idle(struct fx_carrier *c, struct fx_uthread *self)
{
	fx_altstack_sync(c, NULL);
	c->current = NULL;
	c->prev = self;
	c->switches++;
	fx_ctx_switch(&self->sp, c->idle->sp, c->idle->tcb);
}

/*
 * The caller (a uthread) has set its state and made itself findable by its
 * waker; gives the carrier to someone else until it is resumed.
 */
void fx_block(void)
{
	struct fx_carrier *c = fx_carrier_self();
	struct fx_uthread *self = c->current;

	c->in_rt = 1;
	struct fx_uthread *next = pick_next(c);
	if (next == self) {
		/*
		 * Woken already, and nobody else was waiting here: it goes on
		 * without a switch, so it raises what a sender left for its
		 * switch-in while it was runnable (seq_cst: as switch_prepare).
		 */
		atomic_store(&self->state, FX_U_RUNNING);
		if (atomic_load_explicit(&self->sigpending, memory_order_relaxed) || c->kextra)
			raise_pending(c, self);
	} else if (next) {
		switch_to(c, &self->sp, self, next);
	} else {
		switch_to_idle(c, self);
		finish_switch();
	}
	fx_carrier_self()->in_rt = 0;
}

/*
 * Ends the wait *slot names (u->cancel_waiter or u->intr_waiter), if any,
 * as if its deadline had passed (the primitive then unlinks it), and wakes
 * u. False if there was none, or it had ended already.
 */
bool fx_end_wait(struct fx_uthread *u, struct fx_waiter **slot)
{
	bool won = false;

	/* under the lock: the sleeper clears *slot under it before the waiter goes away */
	fx_spin_lock(&u->cancel_lock);
	struct fx_waiter *w = *slot;
	if (w) {
		int expect = FX_W_WAITING;
		won = atomic_compare_exchange_strong(&w->state, &expect, FX_W_TIMEDOUT);
	}
	fx_spin_unlock(&u->cancel_lock);
	if (won)
		fx_uthread_wake(u);
	return won;
}

/* Ends u's wait at a cancellation point: a sleep, or a posted call by asking its carrier to cancel it. */
void fx_interrupt(struct fx_uthread *u)
{
	fx_end_wait(u, &u->cancel_waiter);
	fx_interrupt_call(u);
}

/*
 * Makes u's call that runs on its own carrier (the synchronous engine, a
 * uthread alone), if it is in one, come back early: false if it is in
 * none. The caller has stored its request (a cancel, a pending signal);
 * the heavy fence pairs with the light one after fx_rt_syscall's store
 * of in_call.
 */
bool fx_interrupt_in_place(struct fx_uthread *u)
{
	struct fx_carrier *h = u->home;
	bool here = h == fx_carrier_self();

	/*
	 * Not running: in no call on its carrier, and the loads of its next
	 * one come after its store of RUNNING (seq_cst, every one of them),
	 * which comes after this load, so they see the request (the caller's
	 * store of it is seq_cst too). Spares the membarrier for a uthread
	 * that sleeps, which most signals and cancels find.
	 */
	if (!h || atomic_load(&u->state) != FX_U_RUNNING)
		return false;
	bool sure = here || fx_fence_heavy();
	bool in_call = atomic_load_explicit(&h->in_call, memory_order_relaxed) == u;
	if (!in_call && sure)
		return false;
	/*
	 * In its call, or maybe about to start one unseen (the fence could not
	 * vouch): the signal ends the call, or lands first and is a barrier on
	 * that thread, and the monitor sends it again while the call is marked.
	 */
	atomic_store(&h->call_intr, u);
	if (!here)
		fx_raw_syscall6(SYS_tgkill, getpid(), h->tid, FX_SIG_INTERRUPT, 0, 0, 0);
	if (h->own)
		fx_monitor_watch(h); /* not in the slots the monitor looks at */
	return in_call;
}

/* Makes u's exception-less call in flight, if any, come back early (-ECANCELED or -EINTR). */
void fx_interrupt_call(struct fx_uthread *u)
{
	if (fx_interrupt_in_place(u))
		return;
	if (atomic_load(&u->state) == FX_U_OVERFLOW)
		fx_overflow_interrupt(u);
	if (atomic_load(&u->state) == FX_U_SYSCALL && u->home) {
		struct fx_carrier *c = u->home;
		/* a second push before the carrier serves the first would make the list a cycle */
		if (atomic_exchange(&u->in_inbox, 1))
			return;
		u->cancel_next = atomic_load(&c->cancel_inbox);
		while (!atomic_compare_exchange_weak(&c->cancel_inbox, &u->cancel_next, u))
			;
		if (c != fx_carrier_self()) {
			fx_kick(c);
			/*
			 * With the sync engine the carrier itself may be blocked in
			 * the call. Not otherwise: the signal would cut short whatever
			 * system call the carrier makes for another uthread.
			 */
			if (c->own || flexsc_engine_in_use(fx_rt_instance) == FLEXSC_ENGINE_SYNC)
				fx_raw_syscall6(SYS_tgkill, getpid(), c->tid, FX_SIG_INTERRUPT, 0, 0, 0);
			if (c->own)
				fx_monitor_watch(c); /* again while its inbox waits: it may have landed before the call */
		}
	}
}

/* Whether fx_yield on c would do more than return: what the caller's call run in place skips. */
static inline bool yield_has_work(struct fx_carrier *c)
{
	return atomic_load_explicit(&c->cancel_inbox, memory_order_relaxed) || c->cancelling || c->inflight ||
	       c->timers || atomic_load_explicit(&c->handed, memory_order_relaxed) ||
	       atomic_load_explicit(&c->rq_len, memory_order_relaxed);
}

void fx_yield(void)
{
	struct fx_carrier *c = fx_carrier_self();

	if (!c || !c->current)
		return;
	if (atomic_load_explicit(&c->cancel_inbox, memory_order_relaxed) || c->cancelling) {
		/* a uthread that only yields would keep the carrier from pick_next, the only other server */
		c->in_rt = 1;
		serve_cancels(c);
		c->in_rt = 0;
	}
	if (c->inflight) {
		/* a yield says "nothing to do": hand the batch over and collect what is done */
		c->in_rt = 1;
		flexsc_flush(c->q);
		fx_reap(c);
		c->in_rt = 0;
	}
	if (c->timers) {
		/* a sleeper whose time has come is as runnable as the yielder */
		c->in_rt = 1;
		fx_timers_fire(c);
		c->in_rt = 0;
	}
	struct fx_uthread *self = c->current;
	struct fx_carrier *to = fx_owner_of(c);
	/*
	 * A yielder that holds others up here (queued uthreads, calls only
	 * this carrier reaps) moves to a carrier asleep with nothing in
	 * flight, and computes there on its own; they no longer wait for its
	 * every next yield (a ping-pong beside a thread that computes and
	 * yields made a round trip per two of its yields).
	 */
	if (!c->own && to == c && (atomic_load_explicit(&c->rq_len, memory_order_relaxed) || c->inflight)) {
		struct fx_carrier *idle = fx_idle_carrier(c);
		if (idle)
			to = idle;
	}
	if (to == c && !atomic_load_explicit(&c->rq_len, memory_order_relaxed))
		return;
	atomic_store_explicit(&self->state, FX_U_RUNNABLE, memory_order_relaxed);
	fx_rq_push(to, self);
	if (fx_unlikely(to != c))
		fx_kick(to);
	fx_block();
}

/*
 * The last look before an idle carrier sleeps, after its seq_cst store of
 * `sleeping`: what others give it and then kick it for (a runnable uthread,
 * a call to cancel). A kick that came before the store found it awake and
 * did nothing, so what it was for must be seen here.
 */
static bool has_work(struct fx_carrier *c)
{
	return atomic_load(&c->rq_len) || atomic_load(&c->cancel_inbox);
}

/* A carrier that runs no uthread blocks every signal: it must not take the process's. */
static void take_idle_mask(struct fx_carrier *c)
{
	uint64_t idle_mask = fx_sig_idle_mask();

	if (c->kmask != idle_mask) {
		fx_raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&idle_mask, 0, 8, 0, 0);
		c->kmask = idle_mask;
	}
}

/*
 * Sleeps until a call completes, a kick, or the earliest timer (its own
 * only, for a carrier whose core was handed over: it fires no other's).
 */
static void idle_sleep(struct fx_carrier *c)
{
	uint64_t deadline = fx_timers_next(c);
	struct timespec rel, *relp = NULL;

	/*
	 * Every signal blocked first, even on a pass that does not sleep (a
	 * timer due): one whose first passes found other carriers' timers due
	 * kept its last uthread's mask, and a SIGUSR2 that every thread
	 * blocked killed the process there.
	 */
	take_idle_mask(c);

	/* a shared carrier fires the others' timers too (steal); an exclusive or handed one only its own */
	if (!c->own && !atomic_load_explicit(&c->handed, memory_order_relaxed))
		for (unsigned i = 0; i < fx_ncarriers; i++) {
			uint64_t d = fx_carriers[i] ? fx_timers_next(fx_carriers[i]) : UINT64_MAX;
			deadline = d < deadline ? d : deadline;
		}
	if (c->cancelling && c->cancel_retry_ns + FX_CANCEL_RETRY_NS < deadline)
		deadline = c->cancel_retry_ns + FX_CANCEL_RETRY_NS;
	if (deadline != UINT64_MAX) {
		uint64_t now = fx_now_ns();
		if (deadline <= now)
			return;
		rel.tv_sec = (time_t)((deadline - now) / 1000000000u);
		rel.tv_nsec = (long)((deadline - now) % 1000000000u);
		relp = &rel;
	}
	c->idle_sleeps++;
	fx_sig_thread_needed(); /* this carrier blocks every signal while it sleeps */
	uint64_t t0 = fx_rt_specialize ? fx_now_ns() : 0;
	if (c->inflight || flexsc_flush(c->q) > 0) {
		/* seq_cst: pairs with the fence in kick */
		atomic_store(&c->sleeping, FX_C_IN_FLEXSC);
		if (!has_work(c))
			flexsc_wait(c->q, relp);
	} else {
		atomic_store(&c->idle_word, 0);
		atomic_store(&c->sleeping, FX_C_IN_FUTEX);
		if (!has_work(c))
			fx_futex_wait(&c->idle_word, 0, relp);
	}
	atomic_store(&c->sleeping, FX_C_AWAKE);
	/* seq_cst store, then this load; the monitor stores, then looks at sleeping */
	fx_monitor_nudge();
	if (fx_rt_specialize)
		c->idle_ns += fx_now_ns() - t0;
}

bool fx_rt_specialize;
uint64_t fx_spec_window_ns = 100 * 1000000ull;

/*
 * At the end of each window, the policy's choice of where this carrier's
 * posted calls run in the next one (src/threads/specialize.c).
 */
static void specialize_tick(struct fx_carrier *c)
{
	uint64_t now = fx_now_ns();

	if (now - c->spec_t0 < fx_spec_window_ns)
		return;
	struct fx_spec_window w = { now - c->spec_t0, c->syscalls - c->spec_calls0, c->idle_ns - c->spec_idle0 };
	if (c->spec_t0)
		fx_queue_to_threads(c->q, fx_spec_decide(&c->spec, &w) == FX_SPEC_REMOTE);
	c->spec_t0 = now;
	c->spec_calls0 = c->syscalls;
	c->spec_idle0 = c->idle_ns;
}

/*
 * A carrier whose core was handed over, with nothing of its own left (no
 * call in flight, none being cancelled, no timer): a spare now. It waits
 * in the pool until the monitor gives it a core again.
 */
static bool drained(struct fx_carrier *c)
{
	return !c->inflight && !c->cancelling && !atomic_load(&c->cancel_inbox) &&
	       !atomic_load(&c->rq_len) && !c->timers;
}

static void park(struct fx_carrier *c)
{
	fx_sig_thread_needed(); /* this carrier is about to block every signal */
	take_idle_mask(c);
	atomic_store(&c->sleeping, FX_C_PARKED);
	atomic_store(&c->parked, 1); /* the monitor may take it from here */
	while (atomic_load(&c->parked))
		fx_futex_wait(&c->parked, 1, NULL);
	atomic_store(&c->sleeping, FX_C_AWAKE);
}

/* The scheduler context of a carrier: runs whenever no uthread can. */
void fx_idle_loop(void *arg)
{
	struct fx_carrier *c = arg;

	for (;;) {
		finish_switch();
		c->in_rt = 1;
		struct fx_uthread *next = pick_next(c);
		if (fx_unlikely(atomic_load_explicit(&c->handed, memory_order_relaxed))) {
			/* a hand-over made it surplus on its core: it gives the core back */
			if (next) { /* picked just before the hand-over */
				struct fx_carrier *o = fx_owner_of(c);
				fx_rq_push(o, next);
				fx_kick(o);
			}
			if (drained(c))
				park(c);
			else
				idle_sleep(c);
			continue;
		}
		if (!next && !c->own)
			next = steal(c);
		if (next) {
			switch_to(c, &c->idle->sp, NULL, next);
			continue;
		}
		if (c->own && atomic_load(&c->own_exited))
			fx_ctx_switch(&c->idle->sp, c->native_sp, c->native_tcb); /* to carrier_main's end */
		idle_sleep(c);
		if (fx_rt_specialize)
			specialize_tick(c);
	}
}

static void uthread_main(void *arg)
{
	struct fx_uthread *u = arg;

	finish_switch();
	fx_carrier_self()->in_rt = 0;
	/* what glibc's start_thread does first: the thread's ctype tables (isalpha, printf %f) */
	static void (*ctype_init)(void);
	if (!ctype_init)
		ctype_init = (void (*)(void))dlvsym(RTLD_DEFAULT, "__ctype_init", "GLIBC_PRIVATE");
	if (ctype_init)
		ctype_init();
	fx_thread_finished(u->start(u->arg));
}

void fx_uthread_exit(void *result)
{
	struct fx_carrier *c = fx_carrier_self();
	struct fx_uthread *self = c->current;

	self->result = result;
	fx_uthread_robust_exit(self); /* what the kernel does at a thread's exit */
	if (atomic_fetch_sub(&fx_rt_live_uthreads, 1) == 1)
		exit(0); /* the last thread of the process is gone: as NPTL does */
	c->in_rt = 1;
	fx_sig_unregister(self);
	fx_spin_lock(&self->join_lock);
	atomic_store(&self->state, FX_U_EXITED);
	/* woken under the lock: a joiner whose wait timed out leaves only under it */
	if (self->join_waiter)
		fx_waiter_wake(self->join_waiter);
	self->join_waiter = NULL;
	bool detached = atomic_load(&self->detached);
	fx_spin_unlock(&self->join_lock);
	c = fx_carrier_self();
	if (c->own == self)
		atomic_store(&c->own_exited, true); /* its carrier ends with it */
	/*
	 * A detached thread is freed by the scheduler context, off this stack.
	 * Not by the next uthread: freeing runs glibc's free(), which sets up
	 * malloc's per-thread cache in the thread that calls it, and a fresh
	 * uthread (the next one is often one) would take one on, and leak it
	 * when it exits in turn (about 600 bytes a detached thread). The
	 * scheduler context's cache is made once and lives with the carrier.
	 */
	bool to_idle = detached && self != fx_main_uthread;
	struct fx_uthread *next = to_idle ? NULL : pick_next(c);
	if (to_idle)
		c->to_free = self;
	if (next) {
		switch_to(c, &self->sp, self, next);
	} else {
		take_idle_mask(c); /* the scheduler context takes no signal the exited thread accepted */
		fx_altstack_sync(c, NULL); /* its stack may be freed with it */
		c->current = NULL;
		c->prev = self;
		fx_ctx_switch(&self->sp, c->idle->sp, c->idle->tcb);
	}
	abort(); /* an exited thread is never resumed */
}

/*
 * A uthread on a kernel thread of its own, for a call that suspends the
 * calling kernel thread until another process lets go of it: vfork (and
 * clone with CLONE_VFORK), which the kernel ends only when the child
 * execs or exits. Made on the carrier, the call would stop every uthread
 * of that carrier (with one carrier, the program); on NPTL it stops only
 * the calling thread. So the uthread parks as if blocked, a fresh kernel
 * thread that is no carrier (GS base 0, so the runtime sees "not a
 * carrier" there and in the child, whose calls then go direct) resumes
 * its context and makes the call, and then hands it back to a carrier.
 */
struct fx_kthread {
	struct fx_uthread *u;
	void *native_sp;            /* the kernel thread's own context while it runs u */
	uintptr_t native_tcb;
	uint64_t mask;              /* u's signal mask: the kernel thread blocks all, its child takes this */
	_Atomic uint32_t go;        /* futex: u is handed over */
	struct fx_kthread *next;    /* on the idle list */
};

/*
 * Idle ones are kept for the next vfork: cheaper, and the thread that made
 * a child must outlive it (a child's PR_SET_PDEATHSIG fires when the
 * thread that made it exits, as under NPTL when the calling thread does).
 */
_Atomic int fx_kthreads_lock;
struct fx_kthread *fx_kthreads_idle;

static void *kthread_runs_uthread(void *arg)
{
	struct fx_kthread *h = arg;

	__asm__ volatile("rdfsbase %0" : "=r"(h->native_tcb));
	for (;;) {
		while (!atomic_load(&h->go))
			fx_futex_wait(&h->go, 0, NULL);
		atomic_store(&h->go, 0);
		struct fx_uthread *u = h->u;
		/* its carrier clears on_cpu once u's registers are saved there; it may need this CPU to */
		while (atomic_load_explicit(&u->on_cpu, memory_order_acquire))
			fx_raw_syscall6(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
		atomic_store_explicit(&u->on_cpu, 1, memory_order_relaxed);
		fx_uthread_set_tid(u, (int)fx_raw_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0));
		fx_ctx_switch(&h->native_sp, u->sp, u->tcb);
		/* u switched back (fx_kthread_leave): its registers are saved */
		atomic_store_explicit(&u->on_cpu, 0, memory_order_release);
		fx_uthread_wake(u); /* it puts h on the idle list once it runs */
	}
	return NULL;
}

void *fx_kthread_enter(void)
{
	struct fx_carrier *c = fx_carrier_self();

	if (!c || !c->current || c->in_rt || fx_in_handler(c))
		return NULL;
	struct fx_uthread *self = c->current;
	c->in_rt = 1;
	fx_spin_lock(&fx_kthreads_lock);
	struct fx_kthread *h = fx_kthreads_idle;
	if (h)
		fx_kthreads_idle = h->next;
	fx_spin_unlock(&fx_kthreads_lock);
	if (!h) {
		h = calloc(1, sizeof(*h));
		if (!h || fx_rt_kthread_arg(kthread_runs_uthread, h)) {
			free(h);
			c->in_rt = 0;
			return NULL; /* no thread: the call blocks the carrier, as before */
		}
	}
	h->u = self;
	h->mask = self->sigmask;
	atomic_store(&self->state, FX_U_BLOCKED); /* a signal for it waits, as for any blocked uthread */
	atomic_store(&h->go, 1);
	fx_futex_wake(&h->go, 1);
	/* fx_block without its ending: what resumes this context is the kernel thread h */
	struct fx_uthread *next = pick_next(c);
	if (next) {
		switch_prepare(c, self, next);
		fx_ctx_switch(&self->sp, next->sp, next->tcb);
	} else {
		switch_to_idle(c, self);
	}
	return h; /* on the kernel thread h */
}

void fx_kthread_leave(void *arg)
{
	struct fx_kthread *h = arg;
	uint64_t idle = FX_KTHREAD_MASK;

	if (!h)
		return;
	/* what the uthread left (posix_spawn's every signal blocked) would stay while h waits idle */
	fx_raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&idle, 0, 8, 0, 0);
	fx_ctx_switch(&h->u->sp, h->native_sp, h->native_tcb);
	/* resumed by a carrier: end the switch as fx_block does */
	finish_switch();
	fx_spin_lock(&fx_kthreads_lock);
	h->next = fx_kthreads_idle;
	fx_kthreads_idle = h;
	fx_spin_unlock(&fx_kthreads_lock);
	fx_carrier_self()->in_rt = 0;
}

const uint64_t *fx_kthread_mask(const void *arg)
{
	return arg ? &((const struct fx_kthread *)arg)->mask : NULL;
}

/*
 * Puts a new uthread on the least loaded carrier; one made by a uthread
 * with a carrier of its own (an identity of its own: fx_rt_bind) gets a
 * carrier of its own too, made from its creator's kernel thread, so that
 * it starts with its creator's identity, as an NPTL thread does (a thread
 * made after its creator installed a seccomp filter, dropped capabilities
 * or changed its uid with the raw call used to run unfiltered, as root).
 * So does one made on a carrier under the program's seccomp filter
 * (fx_rt_sealed): there every call runs on its caller and the monitor
 * cannot start spares (the filter may forbid a clone the program would
 * not make), so a thread that shared a carrier and blocked in a call held
 * up the others on it for good. Its kernel thread is cloned as NPTL's
 * pthread_create would clone it, from the same thread, at the same call.
 * 0, or -errno (no kernel thread for it: the thread is not started).
 */
int fx_uthread_start(struct fx_uthread *u)
{
	struct fx_carrier *best = NULL, *self = fx_carrier_self();

	u->sp = fx_ctx_make((uint8_t *)u->stack_lo + u->stack_size, uthread_main, u);
	if (self && self->current && ((self->own && self->own == self->current) || fx_rt_sealed())) {
		int err;
		self->in_rt = 1;
		struct fx_carrier *k = fx_exclusive_carrier(u, &err);
		self->in_rt = 0;
		if (!k)
			return err;
		atomic_fetch_add(&fx_rt_live_uthreads, 1);
		u->home = k;
		fx_sig_register(u);
		atomic_store_explicit(&u->state, FX_U_RUNNABLE, memory_order_relaxed);
		fx_rq_push(k, u);
		fx_kick(k);
		return 0;
	}
	atomic_fetch_add(&fx_rt_live_uthreads, 1);
	for (unsigned i = 0; i < fx_ncarriers; i++) {
		struct fx_carrier *c = fx_carriers[i];
		if (c && !atomic_load_explicit(&c->handed, memory_order_relaxed) && fx_slot_in_use(c) &&
		    (!best || atomic_load(&c->rq_len) < atomic_load(&best->rq_len)))
			best = c;
	}
	u->home = best;
	fx_sig_register(u);
	fx_uthread_wake(u);
	return 0;
}

/*
 * The process's only uthread, with nothing of its carrier's in flight, on
 * the default engine: no other uthread could run while its call waits, so
 * a call sent away overlaps with nothing and costs the carrier a sleep and
 * a wake-up (nginx's workers, one thread each, ran at a quarter of their
 * NPTL speed). Its calls run on it, at once, as under the synchronous
 * engine, and are interrupted the same way (in_call). Not when the user
 * chose where calls run (--engine, --syscall-cores): docs/threads.md,
 * "A thread alone".
 */
bool fx_alone_here;

/* The engine in use is the synchronous one (rt.h): defined here, where fx_rt_syscall reads it. */
bool fx_rt_inline;

static bool alone(const struct fx_carrier *c)
{
	return fx_alone_here && !c->inflight &&
	       atomic_load_explicit(&fx_rt_live_uthreads, memory_order_relaxed) == 1;
}

/*
 * The signal the kernel sends the calling thread with some failures:
 * SIGPIPE with EPIPE (unless MSG_NOSIGNAL), SIGXFSZ with EFBIG. A call that
 * ran away from its caller sent it to a syscall thread, which blocks every
 * signal, or sent none (io_uring's sends add MSG_NOSIGNAL); so it is raised
 * on the caller, once its call is back. io_uring's writes send SIGPIPE to
 * the ring's submitter, the caller's carrier, themselves; and a file's
 * writes never go to the ring (src/engine/uring.c, fd_fits).
 */
static void side_signal(struct fx_carrier *c, long nr, const uint64_t *a, int64_t r)
{
	bool write = nr == SYS_write || nr == SYS_writev || nr == SYS_pwrite64 || nr == SYS_pwritev ||
		     nr == SYS_pwritev2 || nr == SYS_sendfile || nr == SYS_splice || nr == SYS_vmsplice ||
		     nr == SYS_tee;
	bool ring = flexsc_engine_in_use(fx_rt_instance) != FLEXSC_ENGINE_THREADS && !c->q->to_threads;
	int sig = 0;

	if (r == -EFBIG && write)
		sig = SIGXFSZ;
	else if (r == -EPIPE && nr == SYS_sendto)
		sig = a[3] & MSG_NOSIGNAL ? 0 : SIGPIPE;
	else if (r == -EPIPE && nr == SYS_sendmsg)
		sig = a[2] & MSG_NOSIGNAL ? 0 : SIGPIPE;
	else if (r == -EPIPE && write && !ring)
		sig = SIGPIPE;
	if (sig)
		raise(sig);
}

/*
 * A call cut short, with EINTR or, not run, -ECANCELED: whether it starts
 * again (else *r is its result). Once one of its tries had started, the
 * program saw one call all along, as on NPTL: a handler that ran ends it
 * as the kernel's rules say (without SA_RESTART, or for calls never
 * restarted: EINTR), and it goes on for the time it has left (its result
 * at its timeout when that is up). A call none of whose tries started
 * starts afresh after the handler, with its whole timeout.
 */
static bool again(struct fx_time_left *t, struct fx_uthread *self, bool *begun, bool unstarted, long nr,
		  uint64_t *args, int64_t *r)
{
	long ret;

	if (!*begun && unstarted) {
		self->handled = 0;
		fx_timeout_afresh(t, nr, args);
		return true;
	}
	*begun = true;
	if (self->handled == 2 || (self->handled && fx_never_restarted(nr, args))) {
		*r = -EINTR;
		return false;
	}
	if (fx_timeout_again(t, nr, args, &ret))
		return true;
	*r = ret;
	return false;
}

/*
 * Exception-less execution of one system call for the calling uthread;
 * a direct system call anywhere else (a thread that is not a carrier, the
 * runtime itself, a signal handler). c is fx_carrier_self(), which a
 * caller that read it already passes on (fx_rt_syscall).
 */
long fx_rt_syscall_on(struct fx_carrier *c, long nr, unsigned nargs, const uint64_t *a)
{
	uint64_t args[FLEXSC_MAX_ARGS] = { 0 };

	for (unsigned i = 0; i < nargs && i < FLEXSC_MAX_ARGS; i++) /* inline: memcpy of a variable size is a call */
		args[i] = a[i];
	if (!c || c->in_rt || !c->current || fx_in_handler(c))
		return fx_raw_syscall6(nr, (long)args[0], (long)args[1], (long)args[2],
				       (long)args[3], (long)args[4], (long)args[5]);
	struct fx_uthread *self = c->current;
	struct fx_identity caller; /* handed to an overflow thread: lives while self waits */
	flexsc_call_t call;
	int64_t r;

	/*
	 * Handed back (FX_RET_REFUSED): by the library, a call for the
	 * synchronous route (io_uring has no operation for it under --engine
	 * uring, or it came back from the ring: a FIFO's open, a connect under
	 * way), or by a syscall thread or the overflow thread that may not run
	 * it as its caller. It runs here, on the uthread, as
	 * under the synchronous engine: a signal interrupts it, and the
	 * monitor gives the core to a spare while it waits. Run at the flush,
	 * from the scheduler, it held up every other uthread of the carrier:
	 * the open of a FIFO waited for ever for a writer that could not run.
	 */
	bool refused = false;
	struct fx_time_left timeout;
	bool begun = false; /* one of its tries started */

	self->handled = 0;
	fx_timeout_begin(&timeout, nr, args);
	for (;;) {
		/*
		 * In place, with the interruption protocol below: under the
		 * synchronous engine, a uthread alone, a call handed back, and
		 * every call of an exclusive carrier's one uthread. (Posted, that
		 * one ran at the flush, in the kernel unmarked: a pthread_kill
		 * that came just before its blocking read entered the kernel
		 * was raised only once the read returned, and a sealed child
		 * whose thread waited in a read lost its signals.)
		 */
		bool inl = fx_rt_inline || alone(c) || refused || c->own;
		/*
		 * Ended by a signal before it started: as if the signal had come
		 * just before the call, whose handler runs first and which then
		 * starts, whatever SA_RESTART says. Only a call the kernel was
		 * waiting in fails with EINTR (a write to a file never does: Ruby,
		 * with a SIGCHLD handler and no SA_RESTART, failed its closes).
		 */
		bool unstarted = false;

		self->cancelled_waited = false; /* set by the carrier when it cancels this call */
		c->in_rt = 1;
		if (inl) {
			/*
			 * The call runs here, now, with this uthread on the CPU (its
			 * batch is its own call). Store of in_call, light fence, then
			 * the loads of the requests; a canceller or a signal's sender
			 * stores its request, heavy fence, then loads in_call
			 * (fx_interrupt_in_place): one of the two sees the other
			 * (core/fence.h: the two locked exchanges this took on every
			 * call were 5-10 ns of a 135 ns write). Asked before it
			 * starts: the call does not start (it starts after the
			 * handler, or a cancel acts). A mark left from an earlier call
			 * is cleared first, with a plain store that the release of
			 * in_call's orders before it: a sender sets the mark after it
			 * saw in_call.
			 */
			if (fx_unlikely(atomic_load_explicit(&c->call_intr, memory_order_relaxed)))
				atomic_store_explicit(&c->call_intr, NULL, memory_order_relaxed);
			atomic_store_explicit(&c->in_call, self, memory_order_release);
			fx_fence_light();
			if (fx_cancel_pending(self) || fx_sig_due(self)) {
				r = -EINTR;
				unstarted = true;
				goto ran_here;
			}
			c->in_place_call = true;
			bool ran = !fx_rt_inline && fx_queue_run_now(c->q, nr, nargs, args, &r);
			c->in_place_call = false;
			if (ran) {
				c->syscalls++;
				c->by_nr[nr & 511]++;
				goto ran_here;
			}
		}
		int err = flexsc_post(c->q, nr, nargs, args, self, &call);
		if (err == -EAGAIN) {
			fx_reap(c);
			err = flexsc_post(c->q, nr, nargs, args, self, &call);
		}
		c->syscalls++;
		c->by_nr[nr & 511]++;
		if (fx_rt_specialize && !(c->syscalls & 63))
			specialize_tick(c); /* a saturated carrier may never go idle */
		if (err == -EAGAIN) {
			/* every entry holds a blocked call: this one must not block the carrier */
			if (inl)
				atomic_store(&c->in_call, NULL); /* it waits on the overflow thread, not here */
			atomic_store(&self->state, FX_U_OVERFLOW); /* seq_cst: see the check below */
			fx_identity_read(&caller);
			err = fx_overflow_submit(self, nr, args, &caller);
			if (err)
				atomic_store(&self->state, FX_U_RUNNING); /* seq_cst: see fx_interrupt_in_place */
			else
				c->overflowed++;
		} else if (!err) {
			if (flexsc_poll(c->q, call, &r) == 0) {
				if (fx_unlikely(r == FX_RET_REFUSED)) { /* flushed at once, handed back */
					refused = true;
					self->handled = 0; /* not started: a handler ran before it */
					continue;
				}
				/* a call that had to run here, at once */
ran_here:
				if (inl) {
					/*
					 * Fenced from the load of sigpending below: a sender
					 * that still saw in_call sent only an interrupt, so the
					 * signal it left is raised here.
					 */
					atomic_store_explicit(&c->in_call, NULL, memory_order_relaxed);
					fx_fence_light();
					atomic_store_explicit(&c->call_intr, NULL, memory_order_relaxed);
				}
				c->in_rt = 0;
				/* a poke that came meanwhile could not raise its signal in the runtime */
				if (fx_unlikely(atomic_load_explicit(&self->sigpending, memory_order_relaxed)))
					fx_raise_pending();
				/*
				 * Cut short by a handler, or by the runtime (its interrupt,
				 * its poke, io_uring's task work for this carrier's ring):
				 * as below.
				 */
				if (r != -EINTR || fx_cancel_pending(self)) {
					/*
					 * A call run here is a switch point, as a posted one is:
					 * the uthreads queued on this carrier, and the sleepers
					 * whose time has come, run before the caller goes on.
					 * Else a thread whose calls each wait a little (a pipe
					 * ping-pong) keeps its carrier for ever, its heartbeat
					 * moving, so the monitor never hands the core over.
					 */
					if (inl && yield_has_work(c))
						fx_yield();
					return r;
				}
				if (!again(&timeout, self, &begun, unstarted, nr, args, &r))
					return r;
				c = fx_carrier_self(); /* a handler may have blocked, and moved it */
				continue;
			}
			if (inl)
				atomic_store(&c->in_call, NULL); /* seq_cst: the state's check below covers it */
			c->inflight++;
			self->pending_call = call;
			atomic_store(&self->state, FX_U_SYSCALL); /* seq_cst: see the check below */
		}
		c->in_rt = 0;
		if (err) {
			if (inl) {
				atomic_store(&c->in_call, NULL); /* seq_cst, then the look at what a sender left */
				if (atomic_load_explicit(&self->sigpending, memory_order_relaxed))
					fx_raise_pending();
			}
			return fx_raw_syscall6(nr, (long)args[0], (long)args[1], (long)args[2],
					       (long)args[3], (long)args[4], (long)args[5]);
		}
		/*
		 * Cancelled, or sent a signal it accepts, before its state said it
		 * waits in a call: the sender may have seen it running and left
		 * the interruption to it. seq_cst store of the state, then this
		 * load; the sender stores the request, then loads the state: one
		 * of the two sees the other. The inbox is served before it sleeps.
		 */
		if (fx_cancel_pending(self) || fx_sig_due(self))
			fx_interrupt(self);
		fx_block();
		r = self->sysret;
		if (fx_unlikely(r == FX_RET_REFUSED)) {
			refused = true;
			self->handled = 0; /* not started: a handler that ran meanwhile ran before it */
			c = fx_carrier_self();
			continue;
		}
		if (fx_unlikely(r == -EPIPE || r == -EFBIG))
			side_signal(fx_carrier_self(), nr, args, r);
		if ((r != -EINTR && r != -ECANCELED) || fx_cancel_pending(self))
			return r;
		/*
		 * Cut short by a signal for this uthread (its handler ran when it
		 * resumed) or by the runtime's own interrupt: as the kernel does,
		 * the call fails with EINTR after a handler without SA_RESTART, or
		 * for calls never restarted; else it starts again. -ECANCELED: it
		 * never started (taken out of the batch, off the syscall threads'
		 * ring or the overflow thread, before it ran). But on io_uring a
		 * call that waited there ends so too, and one queued while every
		 * syscall thread was inside a call may have waited as long as the
		 * kernel would have waited in it (an alarm() around a flock must
		 * still end it with EINTR): there only a call that never waits
		 * counts as not started.
		 */
		unstarted = r == -ECANCELED && (!self->cancelled_waited || fx_call_never_waits(nr, args));
		if (!again(&timeout, self, &begun, unstarted, nr, args, &r))
			return r;
		c = fx_carrier_self();
	}
}

__thread int fx_tcb_ours __attribute__((tls_model("initial-exec")));
bool fx_rt_gs_readable;

__attribute__((noinline, cold)) struct fx_carrier *fx_carrier_disown(void)
{
	__asm__ volatile("wrgsbase %0" : : "r"(0ul));
	return NULL;
}
