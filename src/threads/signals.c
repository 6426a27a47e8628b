/* SPDX-License-Identifier: MIT */
/*
 * Signals for uthreads: who takes a process-directed signal, sigwait, and
 * interrupting a wait.
 *
 * The kernel sees carriers, not uthreads. A carrier running a uthread has
 * that uthread's mask, so a signal the uthread accepts may be delivered to
 * it directly. An idle carrier blocks every signal (else a signal every
 * uthread blocks would reach the program through it). What no running
 * uthread accepts goes to the signal thread, a kernel thread that waits for
 * every signal and hands each to a uthread, as the kernel would have:
 *   1. a uthread in sigwait for it takes it;
 *   2. else a uthread that does not block it gets it pending, and if it is
 *      asleep in a call or an interruptible wait, that wait is ended (the
 *      call then fails with EINTR or restarts, by the handler's SA_RESTART,
 *      as in the kernel) and the handler runs on it when it resumes;
 *   3. else it stays pending for the process until a uthread unblocks it or
 *      waits for it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "threads/overflow.h"
#include "threads/rt.h"
#include "threads/signals.h"
#include "threads/wait.h"

#define BIT(sig) (1ull << ((sig) - 1))

static _Atomic int reg_lock;            /* the registry, the sigwait list, proc_pending */
static struct fx_uthread *reg_head;     /* live uthreads */
static struct fx_wlist sigwaiters;      /* uthreads in sigwait */
static _Atomic uint64_t proc_pending;   /* process-directed, no uthread could take them yet */

/* Signals the runtime or glibc owns: never waited for, never blocked by an idle carrier. */
static const uint64_t reserved = BIT(SIGKILL) | BIT(SIGSTOP) | BIT(32) | BIT(33) |
				BIT(FX_SIG_POKE) | BIT(FX_SIG_INTERRUPT);

uint64_t fx_sig_idle_mask(void)
{
	return ~reserved;
}

void fx_sig_register(struct fx_uthread *u)
{
	fx_spin_lock(&reg_lock);
	u->reg_prev = NULL;
	u->reg_next = reg_head;
	if (reg_head)
		reg_head->reg_prev = u;
	reg_head = u;
	fx_spin_unlock(&reg_lock);
}

static void pass_on(struct fx_uthread *u, uint64_t set);

void fx_sig_unregister(struct fx_uthread *u)
{
	fx_spin_lock(&reg_lock);
	if (u->reg_prev)
		u->reg_prev->reg_next = u->reg_next;
	else if (reg_head == u)
		reg_head = u->reg_next;
	if (u->reg_next)
		u->reg_next->reg_prev = u->reg_prev;
	u->reg_prev = u->reg_next = NULL;
	/* what the process was sent and it has not taken: the others' (its own are lost with it) */
	pass_on(u, ~0ull);
	fx_spin_unlock(&reg_lock);
}

/*
 * Gets u, asleep, to take a signal: an interruptible wait (a sleep,
 * sigsuspend) or a call in flight ends; any other wait (a mutex, a
 * condition...) lets it run the handler and goes on (wait.c).
 */
static void poke(struct fx_uthread *u)
{
	if (!fx_end_wait(u, &u->intr_waiter) && !fx_waiter_signal(u))
		fx_interrupt_call(u);
}

/* With reg_lock held: gives sig to a uthread in sigwait for it (only to only, if set). */
static bool to_sigwaiter(int sig, const siginfo_t *info, const struct fx_uthread *only)
{
	for (struct fx_waiter *w = sigwaiters.head; w; w = w->next) {
		struct fx_uthread *u = w->u;
		int st = atomic_load(&w->state);
		if ((only && u != only) || !(u->sigwait_set & BIT(sig)) ||
		    (st != FX_W_WAITING && st != FX_W_SIGNALLED))
			continue;
		u->sigwait_info = *info;
		u->sigwait_info.si_signo = sig;
		fx_wlist_remove(&sigwaiters, w);
		if (fx_waiter_wake(w))
			return true;
		u->sigwait_info.si_signo = 0; /* its deadline won: try the next */
	}
	return false;
}

/* With reg_lock held: makes sig pending on u (which accepts it) and gets u to take it. */
static void to_uthread(struct fx_uthread *u, int sig)
{
	/* the signal first, then the state: pairs with fx_rt_syscall's state store and check */
	atomic_fetch_or(&u->sigpending, BIT(sig));
	int state = atomic_load(&u->state);
	struct fx_carrier *c = u->home;

	if (state == FX_U_RUNNING && c && fx_rt_inline && atomic_load(&c->in_call) == u)
		fx_interrupt_call(u); /* in a call it runs itself: raised when the call is back */
	else if (state == FX_U_RUNNING && c)
		/* raised by the poke's handler if u still runs there, else when it next runs */
		fx_raw_syscall6(SYS_tgkill, getpid(), c->tid, FX_SIG_POKE, 0, 0, 0);
	else if (state != FX_U_RUNNABLE)
		poke(u); /* raised on its carrier as soon as it runs again */
}

/* Whether sig is left to a default action that ends or stops the process (signal(7)). */
static bool default_acts(int sig)
{
	struct sigaction sa;

	if (sig == SIGCHLD || sig == SIGURG || sig == SIGWINCH || sig == SIGCONT)
		return false; /* Ign, Cont */
	return fx_real_sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL;
}

/*
 * Whether sig is ignored: SIG_IGN, or SIG_DFL with an action of "ignore"
 * (SIGCHLD, SIGURG, SIGWINCH) or "continue" (SIGCONT, whose continuing the
 * kernel did when it was sent). Delivered to a thread that accepts it, it
 * does nothing: it must not end a sleep or a call either (nanosleep goes
 * on across a stop and continue, and across a child's exit).
 */
static bool ignored(int sig)
{
	struct sigaction sa;

	if (fx_real_sigaction(sig, NULL, &sa) || (sa.sa_flags & SA_SIGINFO))
		return false;
	if (sa.sa_handler == SIG_IGN)
		return true;
	return sa.sa_handler == SIG_DFL &&
	       (sig == SIGCHLD || sig == SIGURG || sig == SIGWINCH || sig == SIGCONT);
}

/*
 * Such a signal, not blocked by some thread, ends (or stops) the whole
 * process at once, whatever its threads are doing; a uthread asleep in a
 * wait would only act on it when it runs again. So the signal thread lets
 * the kernel act: it unblocks the signal on itself and sends it to itself
 * (terminate, core dump or stop, with the status the kernel gives), then,
 * after a stop, blocks it again.
 */
static void act_by_default(int sig)
{
	uint64_t one = BIT(sig);

	fx_raw_syscall6(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&one, 0, 8, 0, 0);
	fx_raw_syscall6(SYS_tgkill, getpid(), fx_raw_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0), sig, 0, 0, 0);
	fx_raw_syscall6(SYS_rt_sigprocmask, SIG_BLOCK, (long)&one, 0, 8, 0, 0);
}

/* With reg_lock held: the uthread that takes sig soonest (running, then runnable, then asleep), but not. */
static struct fx_uthread *taker(int sig, const struct fx_uthread *not)
{
	struct fx_uthread *best = NULL;
	int best_rank = 0;

	for (struct fx_uthread *u = reg_head; u && best_rank < 3; u = u->reg_next) {
		if (u == not || (u->sigmask & BIT(sig)))
			continue;
		int state = atomic_load(&u->state);
		int rank = state == FX_U_RUNNING ? 3 : state == FX_U_RUNNABLE ? 2 : state == FX_U_EXITED ? 0 : 1;
		if (rank > best_rank)
			best = u, best_rank = rank;
	}
	return best;
}

/* With reg_lock held: a process-directed signal for u, which accepts it. */
static void to_uthread_proc(struct fx_uthread *u, int sig)
{
	atomic_fetch_or(&u->sigpending_proc, BIT(sig));
	to_uthread(u, sig);
}

/*
 * With reg_lock held: the process-directed signals of set that u was
 * given and has not taken (it blocks them now, or it exits) go to
 * another uthread that accepts them, or stay pending for the process,
 * as the kernel keeps them pending for the process, not the thread.
 */
static void pass_on(struct fx_uthread *u, uint64_t set)
{
	uint64_t mine = atomic_fetch_and(&u->sigpending_proc, ~set) & set;

	if (!mine)
		return;
	mine &= atomic_fetch_and(&u->sigpending, ~mine); /* those still pending: raise_pending may take some */
	while (mine) {
		int sig = __builtin_ctzll(mine) + 1;
		mine &= mine - 1;
		struct fx_uthread *t = taker(sig, u);
		if (t)
			to_uthread_proc(t, sig);
		else
			atomic_fetch_or(&proc_pending, BIT(sig));
	}
}

void fx_sig_mask_blocked(struct fx_uthread *u, uint64_t blocked)
{
	if (!(atomic_load(&u->sigpending_proc) & blocked))
		return;
	fx_spin_lock(&reg_lock);
	pass_on(u, blocked);
	fx_spin_unlock(&reg_lock);
}

/* A process-directed signal the kernel gave the signal thread. */
static void dispatch(int sig, const siginfo_t *info)
{
	bool by_default = default_acts(sig);

	fx_spin_lock(&reg_lock);
	if (to_sigwaiter(sig, info, NULL)) {
		fx_spin_unlock(&reg_lock);
		return;
	}
	struct fx_uthread *best = taker(sig, NULL);
	if (best && !by_default && ignored(sig))
		; /* a thread accepts it, and it does nothing there: gone, as in the kernel */
	else if (best && !by_default)
		to_uthread_proc(best, sig);
	else if (!best)
		atomic_fetch_or(&proc_pending, BIT(sig));
	fx_spin_unlock(&reg_lock);
	if (best && by_default)
		act_by_default(sig);
}

void fx_sig_send(struct fx_uthread *u, int sig)
{
	siginfo_t info;

	memset(&info, 0, sizeof(info));
	info.si_signo = sig;
	info.si_code = SI_TKILL;
	info.si_pid = getpid();
	info.si_uid = getuid();
	fx_spin_lock(&reg_lock);
	/* sigwait_set is set, under the lock, only while u waits in sigwait */
	if (!((u->sigwait_set & BIT(sig)) && to_sigwaiter(sig, &info, u))) {
		if (u->sigmask & BIT(sig))
			atomic_fetch_or(&u->sigpending, BIT(sig)); /* until it unblocks or waits for it */
		else if (ignored(sig))
			; /* discarded, as the kernel does: it would end u's sleep for nothing */
		else if (u == fx_uthread_self())
			atomic_fetch_or(&u->sigpending, BIT(sig)); /* raised by the caller, once unlocked */
		else
			to_uthread(u, sig);
	}
	fx_spin_unlock(&reg_lock);
}

void fx_sig_mask_changed(struct fx_uthread *u)
{
	uint64_t take = atomic_load(&proc_pending) & ~u->sigmask;

	if (!take)
		return;
	fx_spin_lock(&reg_lock);
	take = atomic_fetch_and(&proc_pending, ~take) & take;
	atomic_fetch_or(&u->sigpending_proc, take);
	atomic_fetch_or(&u->sigpending, take);
	fx_spin_unlock(&reg_lock);
}

uint64_t fx_sig_pending(const struct fx_uthread *u)
{
	return atomic_load(&u->sigpending) | atomic_load(&proc_pending);
}

static int take_lowest(_Atomic uint64_t *bits, uint64_t set)
{
	uint64_t have = atomic_load(bits) & set;

	if (!have)
		return 0;
	int sig = __builtin_ctzll(have) + 1;
	atomic_fetch_and(bits, ~BIT(sig));
	return sig;
}

int fx_sig_wait(uint64_t set, siginfo_t *info, uint64_t deadline)
{
	struct fx_uthread *u = fx_uthread_self();
	struct timespec zero = { 0, 0 };
	struct fx_waiter w;
	int sig;

	set &= ~reserved;
	/* pending for this kernel thread (raise) or the process, in the kernel */
	long r = fx_raw_syscall6(SYS_rt_sigtimedwait, (long)&set, (long)info, (long)&zero, 8, 0, 0);
	if (r > 0)
		return (int)r;
	fx_spin_lock(&reg_lock);
	sig = take_lowest(&u->sigpending, set);
	if (!sig)
		sig = take_lowest(&proc_pending, set);
	if (sig) {
		fx_spin_unlock(&reg_lock);
		memset(info, 0, sizeof(*info));
		info->si_signo = sig;
		info->si_code = SI_USER;
		return sig;
	}
	fx_waiter_init(&w);
	u->sigwait_set = set;
	u->sigwait_info.si_signo = 0;
	fx_wlist_push(&sigwaiters, &w);
	fx_spin_unlock(&reg_lock);
	fx_waiter_sleep_cp(&w, deadline);
	fx_spin_lock(&reg_lock);
	fx_wlist_remove(&sigwaiters, &w);
	u->sigwait_set = 0;
	sig = u->sigwait_info.si_signo;
	fx_spin_unlock(&reg_lock);
	if (!sig)
		return fx_cancel_pending(u) ? -ECANCELED : -EAGAIN;
	*info = u->sigwait_info;
	return sig;
}

int fx_sig_sleep(struct fx_waiter *w, uint64_t deadline, bool cancellable)
{
	struct fx_uthread *u = fx_uthread_self();
	int r, expect = FX_W_WAITING;

	fx_spin_lock(&u->cancel_lock);
	u->intr_waiter = w;
	fx_spin_unlock(&u->cancel_lock);
	/* a signal that came before the wait was visible: do not sleep through it */
	if ((atomic_load(&u->sigpending) & ~u->sigmask) &&
	    atomic_compare_exchange_strong(&w->state, &expect, FX_W_TIMEDOUT))
		r = -ETIMEDOUT;
	else
		r = cancellable ? fx_waiter_sleep_cp(w, deadline) : fx_waiter_sleep(w, deadline);
	fx_spin_lock(&u->cancel_lock);
	u->intr_waiter = NULL;
	fx_spin_unlock(&u->cancel_lock);
	if (r == -ETIMEDOUT && (deadline == UINT64_MAX || fx_now_ns() < deadline))
		r = -EINTR; /* ended early: a signal (or a cancellation) */
	fx_raise_pending();
	return r;
}

void fx_sig_interruptible_sleep(uint64_t deadline)
{
	struct fx_waiter w;

	fx_waiter_init(&w);
	fx_sig_sleep(&w, deadline, true);
}

/* ---- leaving a handler without returning from it ---- */

/*
 * The mask a handler left without rt_sigreturn leaves is the kernel's:
 * the handler's (its sa_mask and the signal) after longjmp, the one saved
 * after siglongjmp with a saved mask or setcontext, as on NPTL. The
 * uthread takes it on, less the signals nobody may block.
 */
static void adopt_mask(struct fx_carrier *c, const uint64_t *known)
{
	struct fx_uthread *u = c->current;
	uint64_t k;

	if (known)
		k = *known;
	else if (fx_raw_syscall6(SYS_rt_sigprocmask, SIG_BLOCK, 0, (long)&k, 8, 0, 0))
		return;
	uint64_t mine = k & ~reserved;
	if (!known && mine != k)
		fx_raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&mine, 0, 8, 0, 0);
	c->kmask = mine;
	if (!u)
		return;
	uint64_t old = u->sigmask;
	u->sigmask = mine;
	if (old & ~mine)
		fx_sig_mask_changed(u);
}

/* Drops the handler levels whose frames sp is not in; whether any is left. */
static bool drop_left(struct fx_carrier *c, uintptr_t sp)
{
	while (c->in_handler > 0) {
		int i = c->in_handler - 1;
		if (i >= FX_HANDLER_NEST || (sp >= c->hframe[i].lo && sp < c->hframe[i].hi))
			return true;
		c->in_handler = i;
	}
	return false;
}

/*
 * A handler's frames lie below its trampoline's frame, on the stack it
 * runs on (the uthread's, or its alternate signal stack); code that runs
 * after the handler was left by a jump runs on the interrupted stack at or
 * above the interrupted frame. So a stack pointer above the trampoline's
 * frame, or off the alternate stack the handler ran on, means the handler
 * is gone. (Below the trampoline's frame on the same stack, after a jump,
 * cannot be told from inside the handler: siglongjmp and longjmp drop the
 * levels they leave themselves, fx_handler_longjmp.)
 */
bool fx_handler_active(struct fx_carrier *c)
{
	int before = c->in_handler;
	bool active = drop_left(c, (uintptr_t)__builtin_frame_address(0));

	if (c->in_handler != before)
		adopt_mask(c, NULL);
	return active;
}

void fx_handler_enter(struct fx_carrier *c, uintptr_t frame, const stack_t *alt)
{
	int i = c->in_handler++;

	if (i >= FX_HANDLER_NEST)
		return;
	uintptr_t lo = (uintptr_t)alt->ss_sp;
	bool on_alt = !(alt->ss_flags & SS_DISABLE) && alt->ss_size && frame >= lo &&
		      frame - lo < alt->ss_size;
	c->hframe[i].lo = on_alt ? lo : 0;
	c->hframe[i].hi = frame;
}

void fx_handler_return(struct fx_carrier *c, int level)
{
	if (c->in_handler > level)
		c->in_handler = level; /* its own level, and any a nested one left behind */
}

/*
 * Before a jump to sp (a jmp_buf's) from a handler: the handler levels it
 * leaves are gone. mask: the mask the jump restores, or NULL when it
 * leaves the kernel's as it is.
 */
void fx_handler_longjmp(struct fx_carrier *c, uintptr_t sp, const uint64_t *mask)
{
	int before = c->in_handler;

	drop_left(c, sp);
	if (c->in_handler != before)
		adopt_mask(c, mask);
}

static void *signal_thread(void *arg)
{
	uint64_t set = ~reserved;

	(void)arg;
	fx_raw_syscall6(SYS_prctl, PR_SET_NAME, (long)"flexsc-signals", 0, 0, 0, 0);
	for (;;) {
		siginfo_t info;
		long sig = fx_raw_syscall6(SYS_rt_sigtimedwait, (long)&set, (long)&info, 0, 8, 0, 0);
		if (sig > 0)
			dispatch((int)sig, &info);
	}
	return NULL;
}

int fx_sig_start(void)
{
	return fx_rt_kthread(signal_thread); /* every signal blocked, which sigwaitinfo needs */
}

void fx_sig_after_fork_child(struct fx_uthread *self)
{
	/* the child has one uthread, and the signal thread is gone */
	atomic_store(&reg_lock, 0);
	reg_head = NULL;
	sigwaiters.head = sigwaiters.tail = NULL;
	atomic_store(&proc_pending, 0); /* the child starts with no pending signals */
	fx_sig_register(self);
}
