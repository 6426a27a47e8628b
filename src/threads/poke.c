/* SPDX-License-Identifier: MIT */
/*
 * The runtime's two signals, and when a call they cut short starts again.
 *
 * FX_SIG_INTERRUPT (fx_interrupted) does nothing but make a blocking
 * system call return EINTR: how a cancel or a signal ends a call in the
 * kernel, on a carrier (fx_interrupt_call) or on a syscall thread (the
 * instance's interrupt_signal). FX_SIG_POKE (fx_poked, sent through
 * fx_poke) makes the uthread running on a carrier take the signals
 * pending for it, lets the monitor flush and reap for a carrier blocked
 * outside the runtime, and ends in time-slicing (preempt.c) and
 * asynchronous cancellation. fx_never_restarted and the waits here say
 * which calls fail with EINTR after a handler, as the kernel's rules
 * (signal(7)) have it. Both handlers are installed by fx_rt_start
 * (start-up).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "threads/preempt.h"
#include "threads/rt.h"
#include "threads/sched.h"
#include "threads/signals.h"

/* The interrupt signal does nothing but make a blocking system call return EINTR. */
void fx_interrupted(int sig)
{
	(void)sig;
}

/* Whether the interrupted context is at a `syscall` instruction or just after one. */
static bool at_syscall(const ucontext_t *uc)
{
	uintptr_t ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	const volatile uint8_t *p = (const uint8_t *)ip;

	/* restarted: the kernel moved ip back onto it (a 0x0f opcode has a second byte: mapped) */
	if (p[0] == 0x0f && p[1] == 0x05)
		return true;
	return (ip & 4095) >= 2 && p[-2] == 0x0f && p[-1] == 0x05; /* same page as ip: mapped */
}

/*
 * Realtime signals queue: pokes sent while the carrier blocks them (in a
 * handler, raising signals) piled up, each holding an entry of the user's
 * queued-signal limit (RLIMIT_SIGPENDING), which every process of the
 * user shares, until sigqueue and timer_create failed everywhere with
 * EAGAIN. One on its way is enough: its handler looks at everything
 * pending when it runs, and clears poke_sent first.
 */
void fx_poke(struct fx_carrier *c)
{
	/* after the sender's seq_cst store of what is pending */
	if (!atomic_exchange(&c->poke_sent, 1) &&
	    fx_raw_syscall6(SYS_tgkill, getpid(), c->tid, FX_SIG_POKE, 0, 0, 0) < 0) {
		atomic_store(&c->poke_sent, 0); /* not on its way after all */
		atomic_store(&c->sig_retry, 1); /* EAGAIN: the user's queued signals are at their limit */
	}
}

/*
 * Waits of the kernel's that a handler without SA_RESTART ends with EINTR
 * (signal(7)), and that the runtime does not serve itself, so that a
 * program makes them as system calls: lock waits, waits for children,
 * message queues.
 */
static bool interruptible_wait(long nr, long arg1)
{
	switch (nr) {
	case SYS_fcntl:
		return arg1 == F_SETLKW || arg1 == F_OFD_SETLKW;
	case SYS_flock: case SYS_wait4: case SYS_waitid: case SYS_mq_timedreceive: case SYS_mq_timedsend:
		return true;
	}
	return false;
}

/*
 * Whether the poke interrupted such a wait: the kernel, seeing the poke's
 * SA_RESTART, set it up to start again (ip back on its `syscall`, rax its
 * number).
 */
static bool in_restarted_wait(const ucontext_t *uc)
{
	const greg_t *g = uc->uc_mcontext.gregs;
	const volatile uint8_t *p = (const uint8_t *)g[REG_RIP];

	return p[0] == 0x0f && p[1] == 0x05 && interruptible_wait(g[REG_RAX], g[REG_RSI]);
}

/*
 * Of those, the cancellation points (pthreads(7)): all but flock. A
 * deferred cancel of a thread waiting in one acts there, as NPTL's does.
 */
static bool cancellable_wait(const ucontext_t *uc)
{
	return in_restarted_wait(uc) && uc->uc_mcontext.gregs[REG_RAX] != SYS_flock;
}

/*
 * A handler without SA_RESTART that ran from the poke for the program
 * would have made such a wait fail with EINTR: it does now (alarm(1)
 * around a lock wait or a waitpid otherwise waited for the holder or the
 * child).
 */
static void end_restarted_wait(ucontext_t *uc)
{
	if (in_restarted_wait(uc)) {
		uc->uc_mcontext.gregs[REG_RAX] = -EINTR;
		uc->uc_mcontext.gregs[REG_RIP] += 2;
	}
}

/* Whether c, its core handed over, is blocked in a system call with calls of its own queue out. */
static bool blocked_with_calls_out(const struct fx_carrier *c, const ucontext_t *uc)
{
	return atomic_load_explicit(&c->handed, memory_order_relaxed) && c->inflight && at_syscall(uc);
}

/*
 * Only c may hand its queue's calls to the kernel and collect them: it
 * does so here, from the poke, and the uthreads they wake go to the
 * carrier that has its core now.
 */
static void serve_queue_for_owner(struct fx_carrier *c)
{
	int saved = errno;
	int in_rt = c->in_rt;

	c->in_rt = 1;
	if (flexsc_engine_in_use(fx_rt_instance) != FLEXSC_ENGINE_SYNC)
		flexsc_flush(c->q);
	fx_reap(c);
	c->in_rt = in_rt;
	errno = saved;
}

/*
 * A signal is pending for the uthread running here: its handler runs now,
 * unless in the runtime. Also the monitor's nudge to a carrier whose core
 * it handed over while it is blocked in a call outside the runtime, with
 * calls of its own queue out: only it may hand them to the kernel and
 * collect them, which it does here for the carrier that has its core now.
 */
void fx_poked(int sig, siginfo_t *si, void *uc)
{
	struct fx_carrier *c = fx_carrier_self();

	(void)sig, (void)si;
	fx_sig_leader_requeue(); /* first: it may be for the leader, whatever it runs */
	if (c)
		atomic_store(&c->poke_sent, 0); /* seq_cst, then the look at what is pending: a later sender pokes again */
	if (!c || !c->current)
		return;
	if (c->in_rt && c->in_place_call && !fx_in_handler(c) && blocked_with_calls_out(c, uc)) {
		/*
		 * A uthread's call run here, in place (one handed back for the
		 * synchronous route), blocks this carrier after the hand-over:
		 * its queue is served as below, or the thread whose read would
		 * end the call never ran (system() under --engine uring waited
		 * for good for a shell another thread fed). Only at the call's
		 * own system call: the queue is not in use then.
		 */
		fx_raw_enter(c);
		serve_queue_for_owner(c);
		fx_raw_leave(c);
	}
	if (c->in_rt || fx_in_handler(c)) {
		/* raised at its next switch; should it compute on, at the monitor's next poke */
		if (atomic_load(&c->current->sigpending) & ~c->current->sigmask)
			atomic_store(&c->sig_retry, 1);
		return;
	}
	/*
	 * The poke's handler began with the program's signals blocked (its
	 * sa_mask); those pending for this uthread run here, so that one whose
	 * handler has no SA_RESTART ends the wait the poke cut (end_restarted_wait).
	 */
	if ((atomic_load(&c->current->sigpending) & ~c->current->sigmask) || c->kextra)
		fx_raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&c->kmask, 0, 8, 0, 0);
	fx_raw_enter(c);
	if (blocked_with_calls_out(c, uc))
		serve_queue_for_owner(c);
	struct fx_uthread *u = c->current;
	int before = u->handled;
	u->handled = 0;
	fx_raise_pending();
	if (u->handled == 2)
		end_restarted_wait(uc);
	u->handled = u->handled > before ? u->handled : before;
	fx_raw_leave(c);
	if (atomic_load_explicit(&c->preempt_at, memory_order_relaxed)) {
		fx_preempt_poked(c, uc);
		c = fx_carrier_self(); /* resumed perhaps on another */
	}
	u = c->current;
	if (fx_cancel_pending(u) && (u->cancel_async || (!u->cancel_disabled && cancellable_wait(uc))))
		fx_cancel_async_poked(uc);
}

/*
 * Calls that never wait in the kernel where a signal could end them (the
 * table's waits column, core/systab.h): io_uring never parks them on a
 * poll, a timer or a futex, so when its cancel ends one with -ECANCELED,
 * the call had not started: it was still queued for an io_uring worker.
 * (One that waits, a read of an empty socket, is also ended with
 * -ECANCELED, but once it had started and found nothing.) And one that
 * waited long for a free syscall thread would not have waited in the
 * kernel: it starts after the handler all the same.
 */
bool fx_call_never_waits(long nr, const uint64_t *args)
{
	switch (fx_sys_waits(nr)) {
	case FX_WAITS_NEVER:
		return true;
	case FX_WAITS_NOT_ON_FILE:
		return fx_fd_facts((int)args[0]) & FX_FD_FILE;
	default:
		return false;
	}
}

/* Calls the kernel fails with EINTR after any handler, SA_RESTART or not (the restart column). */
bool fx_never_restarted(long nr, const uint64_t *args)
{
	switch (fx_sys_restart(nr)) {
	case FX_RESTART_NEVER:
		return true;
	case FX_RESTART_NOT_TIMED:
		return fx_fd_timed((int)args[0]);
	default:
		return false;
	}
}
