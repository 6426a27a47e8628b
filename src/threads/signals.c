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
 *      waits for it. *
 * A pending signal keeps its siginfo, and realtime ones queue (sigq, a
 * bounded pool): raised, each goes to the carrier with
 * rt_tgsigqueueinfo, and while they wait the carrier keeps their numbers
 * blocked (kextra) so that one the kernel has for the process cannot
 * overtake them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <ucontext.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "threads/overflow.h"
#include "threads/rt.h"
#include "threads/signals.h"
#include "threads/waiter.h"

#define BIT(sig) (1ull << ((sig) - 1))

static _Atomic int reg_lock;            /* the registry, the sigwait list, proc_pending, the siginfo queues */
static struct fx_uthread *reg_head;     /* live uthreads */
static struct fx_uthread *leader;       /* the process's main thread's (the fork child's: its one), or NULL */
static _Atomic uint64_t fd_sigs;        /* signals the program reads through a signalfd: the kernel keeps them (fx_sig_for_signalfd) */
static struct fx_wlist sigwaiters;      /* uthreads in sigwait */
static _Atomic uint64_t proc_pending;   /* process-directed, no uthread could take them yet */
static _Atomic int stuck_any;           /* some uthread has sig_stuck signals (fx_sig_retry) */
static _Atomic int sig_thread_started;  /* fx_sig_thread_needed */
static _Atomic int sig_thread_starting; /* one caller starts it; the others go on */
static _Atomic int sig_fd = -1;          /* the signal thread's signalfd (signal_thread) */
static _Atomic uint32_t sig_thread_ready; /* it has its signalfd (or none): its starter waits for it */

/*
 * The siginfo of the signals pending in the runtime (on a uthread, or on
 * the process), in the order they came: a realtime signal queues (each
 * one sent is delivered, with its own siginfo), a standard one pending
 * already is one, as in the kernel. The entries come from a pool of
 * FX_SIGQ_MAX for the whole process (the kernel's RLIMIT_SIGPENDING, per
 * user, is in the thousands): beyond it a signal is still pending, as
 * its bit, but its siginfo is not kept, and it is one with any other of
 * its number pending there. A signal pending as a bit with no entry is
 * raised once, with the siginfo of a kill from this process.
 */
#define FX_SIGQ_MAX 1024

struct fx_sigq_ent {
	struct fx_sigq_ent *next;
	bool proc;                      /* sent to the process (it goes to another uthread if this one cannot take it) */
	siginfo_t info;
};

static struct fx_sigq_ent sigq_pool[FX_SIGQ_MAX];
static struct fx_sigq_ent *sigq_free;
static unsigned sigq_fresh;             /* entries of the pool never used yet */
static struct fx_sigq proc_q;           /* the siginfo of proc_pending's */

/* Signals the runtime or glibc owns: never waited for, never blocked by an idle carrier. */
static const uint64_t reserved = BIT(SIGKILL) | BIT(SIGSTOP) | BIT(32) | BIT(33) |
				BIT(FX_SIG_POKE) | BIT(FX_SIG_INTERRUPT);

/*
 * reg_lock and handlers. A handler may call pthread_kill (async-signal-
 * safe), which takes reg_lock: run while its own kernel thread holds the
 * lock, it would spin on it for ever. So no handler of the program runs
 * on a kernel thread inside a window where it holds the lock or is
 * taking it:
 *  - a carrier counts its windows (sig_locked). Blocking every signal
 *    around each would cost two system calls a window (a thread's start
 *    and exit, every pthread_kill); instead the trampoline, entered inside
 *    a window, does not run the handler: fx_sig_hold sends the signal
 *    back to the carrier with its siginfo, with every signal of the
 *    program blocked (in the kernel and in the context it returns to),
 *    and the window's end unblocks them: the kernel delivers it then, to
 *    the same uthread (no switch happens inside a window). A handler of
 *    the runtime that would raise pending signals (the poke) leaves that
 *    to the window's end too (sig_deferred).
 *  - any other kernel thread (a foreign one's pthread_kill to a uthread)
 *    blocks every signal for the window; the signal thread has them all
 *    blocked already.
 */
struct reg_hold {
	struct fx_carrier *c;   /* the carrier holding it, or NULL */
	bool masked;            /* not a carrier: old is the mask to put back */
	uint64_t old;
};

__thread int fx_locks_held __attribute__((tls_model("initial-exec")));
__thread int fx_locks_owe __attribute__((tls_model("initial-exec")));

/* The signals a handler found inside a window or lock (fx_sig_hold) are unblocked: the kernel delivers them now. */
static void unblock_held(struct fx_carrier *c)
{
	uint64_t held = atomic_exchange(&c->sig_held, 0);

	if (held)
		fx_raw_syscall6(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&held, 0, 8, 0, 0);
}

/* Those the poke could not raise inside a window or lock (fx_sig_raise) are raised now. */
static void raise_deferred(struct fx_carrier *c)
{
	if (!c->sig_deferred)
		return;
	c->sig_deferred = false;
	if (c->current && atomic_load(&c->current->state) == FX_U_RUNNING)
		fx_raise_pending();
}

/*
 * The last of the runtime's locks this thread held is let go, and a signal
 * was put off meanwhile (rt.h): as at the end of the signal lock's window
 * (unlock_reg). Inside that window still, its end does it.
 */
void fx_locks_left(void)
{
	struct fx_carrier *c = fx_carrier_self();

	fx_locks_owe = 0;
	if (!c || c->sig_locked)
		return;
	unblock_held(c);
	raise_deferred(c);
}

static void window_enter(struct fx_carrier *c)
{
	c->sig_locked++;
	atomic_signal_fence(memory_order_seq_cst); /* seen by a handler before the lock is taken */
}

/* Ends c's window; the signals a handler found inside it are delivered now. */
static void window_leave(struct fx_carrier *c)
{
	atomic_signal_fence(memory_order_seq_cst);
	if (--c->sig_locked)
		return;
	if (fx_locks_held) {
		fx_locks_owe = 1; /* inside another lock of the runtime's: at its end (fx_locks_left) */
		return;
	}
	unblock_held(c);
}

/* all_blocked: the caller blocks every signal already (the signal thread). */
static struct reg_hold lock_reg_as(bool all_blocked)
{
	struct reg_hold h = { .c = fx_carrier_self() };

	if (h.c) {
		window_enter(h.c);
	} else if (!all_blocked) {
		uint64_t all = ~0ull;
		h.masked = fx_raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&h.old, 8, 0, 0) == 0;
	}
	fx_spin_lock(&reg_lock);
	return h;
}

static struct reg_hold lock_reg(void)
{
	return lock_reg_as(false);
}

static void unlock_reg(struct reg_hold h)
{
	struct fx_carrier *c = h.c;

	fx_spin_unlock(&reg_lock);
	if (h.masked)
		fx_raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&h.old, 0, 8, 0, 0);
	if (!c)
		return;
	window_leave(c);
	if (!c->sig_locked && !fx_locks_held) /* inside another lock, window_leave left it to that lock's end */
		raise_deferred(c);
}

static bool is_rt(int sig)
{
	return sig >= 32;
}

/* Sends sig with its siginfo to the carrier's thread, or at least sig. */
static void send_back(long pid, int tid, int sig, const siginfo_t *info)
{
	if (fx_raw_syscall6(SYS_rt_tgsigqueueinfo, pid, tid, sig, (long)info, 0, 0))
		fx_raw_syscall6(SYS_tgkill, pid, tid, sig, 0, 0, 0);
}

/*
 * Realtime signals of sig's number that fx_sig_hold takes out of the
 * kernel's queue to send back behind the held one: more than this many
 * pending at once may overtake it.
 */
#define HOLD_REQUEUE 16

void fx_sig_hold(struct fx_carrier *c, int sig, const siginfo_t *info, ucontext_t *uc)
{
	uint64_t mask, add = ~reserved;
	long pid = getpid();
	/* 2 KiB of the handler's stack (perhaps a small sigaltstack) only where they may be used */
	siginfo_t later[is_rt(sig) ? HOLD_REQUEUE : 1];
	unsigned n = 0;

	fx_locks_owe = 1; /* inside one of the runtime's other locks, its end unblocks them (fx_locks_left) */
	/* first: sig itself (SA_NODEFER) must not come back before the window ends */
	fx_raw_syscall6(SYS_rt_sigprocmask, SIG_BLOCK, (long)&add, 0, 8, 0, 0);
	memcpy(&mask, &uc->uc_sigmask, sizeof(mask));
	add &= ~mask;
	atomic_fetch_or(&c->sig_held, add); /* before the window can end: it unblocks them */
	mask |= add;
	memcpy(&uc->uc_sigmask, &mask, sizeof(mask));
	/*
	 * A realtime signal sent back queues behind the others of its number
	 * the kernel has pending: those are taken out (they are blocked now)
	 * and sent back after it, so they keep their order.
	 */
	if (is_rt(sig)) {
		uint64_t set = BIT(sig);
		struct timespec none = { 0, 0 };
		while (n < HOLD_REQUEUE &&
		       fx_raw_syscall6(SYS_rt_sigtimedwait, (long)&set, (long)&later[n], (long)&none, 8, 0, 0) == sig)
			n++;
	}
	send_back(pid, c->tid, sig, info);
	for (unsigned i = 0; i < n; i++)
		send_back(pid, c->tid, sig, &later[i]);
}

/* ---- the siginfo queues: with reg_lock held ---- */

static struct fx_sigq_ent *ent_get(void)
{
	struct fx_sigq_ent *e = sigq_free;

	if (e)
		sigq_free = e->next;
	else if (sigq_fresh < FX_SIGQ_MAX)
		e = &sigq_pool[sigq_fresh++];
	return e;
}

static void ent_put(struct fx_sigq_ent *e)
{
	e->next = sigq_free;
	sigq_free = e;
}

static void q_push(struct fx_sigq *q, struct fx_sigq_ent *e)
{
	e->next = NULL;
	if (q->tail)
		q->tail->next = e;
	else
		q->head = e;
	q->tail = e;
}

/* The first entry of q for sig (only one sent to the process, if proc_only), unlinked; NULL if none. */
static struct fx_sigq_ent *q_take(struct fx_sigq *q, int sig, bool proc_only)
{
	struct fx_sigq_ent *prev = NULL;

	for (struct fx_sigq_ent *e = q->head; e; prev = e, e = e->next) {
		if (e->info.si_signo != sig || (proc_only && !e->proc))
			continue;
		if (prev)
			prev->next = e->next;
		else
			q->head = e->next;
		if (q->tail == e)
			q->tail = prev;
		e->next = NULL;
		return e;
	}
	return NULL;
}

static bool q_has(const struct fx_sigq *q, int sig, bool proc_only)
{
	for (const struct fx_sigq_ent *e = q->head; e; e = e->next)
		if (e->info.si_signo == sig && (!proc_only || e->proc))
			return true;
	return false;
}

/* Puts e on q, or frees it when it is a standard signal q has already. */
static void q_put(struct fx_sigq *q, struct fx_sigq_ent *e, bool proc)
{
	if (!is_rt(e->info.si_signo) && q_has(q, e->info.si_signo, false)) {
		ent_put(e);
		return;
	}
	e->proc = proc;
	q_push(q, e);
}

/* Records the siginfo of sig, pending now on q. */
static void q_add(struct fx_sigq *q, int sig, const siginfo_t *info, bool proc)
{
	if (!is_rt(sig) && q_has(q, sig, false))
		return; /* one already: a standard signal does not queue */
	struct fx_sigq_ent *e = ent_get();
	if (!e)
		return; /* the pool is spent: the signal is its bit only */
	e->info = *info;
	e->info.si_signo = sig;
	q_put(q, e, proc);
}

/* The siginfo of a signal pending without one: a kill from this process. */
static void plain_info(siginfo_t *info, int sig)
{
	memset(info, 0, sizeof(*info));
	info->si_signo = sig;
	info->si_code = SI_USER;
}

/* Moves the entries for sig (sent to the process) from one queue to another; how many. */
static int q_move(struct fx_sigq *from, struct fx_sigq *to, int sig, bool proc_only)
{
	struct fx_sigq_ent *e;
	int n = 0;

	while ((e = q_take(from, sig, proc_only))) {
		q_put(to, e, true);
		n++;
	}
	if (!n) {
		siginfo_t info;
		plain_info(&info, sig);
		q_add(to, sig, &info, true);
	}
	return n;
}

uint64_t fx_sig_blockable(const sigset_t *set)
{
	uint64_t bits;

	memcpy(&bits, set, sizeof(bits));
	return bits & ~reserved;
}

uint64_t fx_sig_idle_mask(void)
{
	return ~reserved;
}

void fx_sig_register(struct fx_uthread *u)
{
	struct reg_hold h = lock_reg();

	u->reg_prev = NULL;
	u->reg_next = reg_head;
	if (reg_head)
		reg_head->reg_prev = u;
	reg_head = u;
	if (u == fx_main_uthread)
		leader = u;
	unlock_reg(h);
}

static void pass_on(struct fx_uthread *u, uint64_t set);

void fx_sig_unregister(struct fx_uthread *u)
{
	struct reg_hold h = lock_reg();
	struct fx_sigq_ent *e;

	if (u->reg_prev)
		u->reg_prev->reg_next = u->reg_next;
	else if (reg_head == u)
		reg_head = u->reg_next;
	if (u->reg_next)
		u->reg_next->reg_prev = u->reg_prev;
	u->reg_prev = u->reg_next = NULL;
	if (leader == u)
		leader = NULL;
	/* what the process was sent and it has not taken: the others' (its own are lost with it) */
	pass_on(u, ~0ull);
	while ((e = u->sigq.head)) {
		u->sigq.head = e->next;
		ent_put(e);
	}
	u->sigq.tail = NULL;
	unlock_reg(h);
}

/*
 * Gets u, asleep, to take a signal: an interruptible wait (a sleep,
 * sigsuspend) or a call in flight ends; any other wait (a mutex, a
 * condition...) lets it run the handler and goes on (waiter.c).
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

/*
 * Makes bits pending on u. One of them stuck there before (fx_sig_raise)
 * is tried anew: this one may find room, and a stale stuck bit must not
 * keep it from ending a wait.
 */
static void pend(struct fx_uthread *u, uint64_t bits)
{
	atomic_fetch_and(&u->sig_stuck, ~bits);
	atomic_fetch_or(&u->sigpending, bits);
}

/* With reg_lock held: sig is pending on u (which accepts it): gets u to take it. */
static void wake_for(struct fx_uthread *u, int sig)
{
	/* the signal first, then the state: pairs with fx_rt_syscall's state store and check */
	pend(u, BIT(sig));
	int state = atomic_load(&u->state);
	struct fx_carrier *c = u->home;

	if (state == FX_U_RUNNING && c) {
		/* in a call it runs itself: raised when the call is back */
		if (!fx_interrupt_in_place(u))
			/* raised by the poke's handler if u still runs there, else when it next runs */
			fx_poke(c);
	} else if (state != FX_U_RUNNABLE) {
		poke(u); /* raised on its carrier as soon as it runs again */
	}
}

/* With reg_lock held: makes sig (info; proc: sent to the process) pending on u, which accepts it. */
static void to_uthread(struct fx_uthread *u, int sig, const siginfo_t *info, bool proc)
{
	q_add(&u->sigq, sig, info, proc);
	if (proc)
		atomic_fetch_or(&u->sigpending_proc, BIT(sig));
	wake_for(u, sig);
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

/* Whether the main thread's uthread lives and does not block sig (reg_lock held, or to be checked again under it). */
static bool leader_accepts(int sig)
{
	struct fx_uthread *l = leader;

	return l && !(l->sigmask & BIT(sig)) && atomic_load(&l->state) != FX_U_EXITED;
}

/* Whether the main thread waits for sig in sigwait (reg_lock held, or to be checked again under it). */
static bool leader_waits_for(int sig)
{
	struct fx_uthread *l = leader;

	/* atomic: read before the lock too (its stores are under the lock) */
	return l && (__atomic_load_n(&l->sigwait_set, __ATOMIC_RELAXED) & BIT(sig));
}

/*
 * With reg_lock held: the uthread that takes sig, but not. As the kernel
 * chooses (complete_signal): the main thread when it accepts it (a kill
 * names the thread group, whose leader it is: Ctrl-C in a threaded Python
 * program, whose main thread waits in Event.wait while a helper sleeps,
 * went to the helper, and the program never stopped); else the one that
 * takes it soonest: running, then runnable, then asleep.
 */
static struct fx_uthread *taker(int sig, const struct fx_uthread *not)
{
	struct fx_uthread *best = NULL;
	int best_rank = 0;

	if (leader && leader != not && leader_accepts(sig))
		return leader;
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

/*
 * Whether a signal the kernel delivered was sent to the process (kill,
 * sigqueue, alarm, a child's SIGCHLD), not to a thread (tgkill, and the
 * faults of the instruction that ran, which belong to it). POSIX timers
 * are left where they land: the runtime may aim them at a thread.
 */
static bool process_directed(int sig, const siginfo_t *info)
{
	bool fault = sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGTRAP ||
		     sig == SIGSYS;

	if (fault && info->si_code > 0)
		return false;
	return info->si_code != SI_TKILL && info->si_code != SI_TIMER;
}

/*
 * From the handler's entry on c, before the program's handler runs on c's
 * uthread: a process-directed signal the main thread accepts goes to the
 * main thread, as the kernel chooses (taker), not to the uthread that
 * happened to run here. The kernel gave it to c because the main thread's
 * carrier, waiting in the runtime, blocked every signal: a computing
 * thread's carrier took SIGALRM, its handler ran there, and the main
 * thread's pause or sem_wait was never ended. A main thread that waits
 * for it in sigwait accepts it too, as the kernel's wants_signal sees a
 * thread in sigwaitinfo (its wait took the signal's number out of its
 * mask): it goes to that wait (a computing thread's carrier took it, and
 * main's sigtimedwait went on to its timeout). True when it was passed on
 * (then the handler does not run here).
 */
static bool dispatch_held(int sig, const siginfo_t *info);

bool fx_sig_for_leader(struct fx_carrier *c, int sig, const siginfo_t *info)
{
	struct fx_uthread *cur = c->current, *l = leader;

	if (!info || !process_directed(sig, info) || fx_locks_held)
		return false;
	if (!cur) {
		/*
		 * The scheduler context, between uthreads, its carrier's mask
		 * still the last one's: no uthread here may run the handler (it
		 * ran on the scheduler's stack, and main's pause never returned,
		 * in 1 of 2 runs under --engine sync): chosen as the signal
		 * thread chooses.
		 */
		struct reg_hold h = lock_reg();
		bool by_default = dispatch_held(sig, info);
		unlock_reg(h);
		if (by_default)
			act_by_default(sig);
		return true;
	}
	if (!l || l == cur || !(leader_accepts(sig) || leader_waits_for(sig)))
		return false;
	/*
	 * Wherever the signal interrupted this uthread but inside a lock of
	 * the runtime's, which the hand-over takes (a run queue's: the soak
	 * deadlocked so, the signal thread holding the registry's lock and
	 * waiting for it); the trampoline puts the signal off until the lock
	 * is let go (fx_locks_held). It used to be only where the program's
	 * own code ran: a thread looping in libc calls (usleep) took a kill
	 * meant for main, whose pause then never returned (2 to 7 runs in 10).
	 */
	bool moved = false;
	struct reg_hold h = lock_reg();
	if (leader == l && leader_waits_for(sig))
		moved = to_sigwaiter(sig, info, l); /* else its deadline won: the handler runs here */
	else if (leader == l && leader_accepts(sig)) {
		to_uthread(l, sig, info, true);
		moved = true;
	}
	unlock_reg(h);
	return moved;
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
	mine &= atomic_load(&u->sigpending); /* those still pending (raising them takes reg_lock) */
	while (mine) {
		int sig = __builtin_ctzll(mine) + 1;
		mine &= mine - 1;
		struct fx_uthread *t = taker(sig, u);
		/* every one it was sent, with its siginfo; those sent to u itself stay */
		q_move(&u->sigq, t ? &t->sigq : &proc_q, sig, true);
		if (!q_has(&u->sigq, sig, false))
			atomic_fetch_and(&u->sigpending, ~BIT(sig));
		if (t) {
			atomic_fetch_or(&t->sigpending_proc, BIT(sig));
			wake_for(t, sig);
		} else {
			atomic_fetch_or(&proc_pending, BIT(sig));
		}
	}
}

void fx_sig_mask_blocked(struct fx_uthread *u, uint64_t blocked)
{
	if (!(atomic_load(&u->sigpending_proc) & blocked))
		return;
	struct reg_hold h = lock_reg();
	pass_on(u, blocked);
	unlock_reg(h);
}

/* A process-directed signal the kernel gave the signal thread. */
/* With reg_lock held: hands sig on; true when its default action must follow, once unlocked. */
static bool dispatch_held(int sig, const siginfo_t *info)
{
	bool by_default = default_acts(sig);

	if (to_sigwaiter(sig, info, NULL))
		return false;
	struct fx_uthread *best = taker(sig, NULL);
	if (best && !by_default && ignored(sig))
		; /* a thread accepts it, and it does nothing there: gone, as in the kernel */
	else if (best && !by_default)
		to_uthread(best, sig, info, true);
	else if (!best) {
		q_add(&proc_q, sig, info, true);
		atomic_fetch_or(&proc_pending, BIT(sig));
	}
	return best && by_default;
}

void fx_sig_send(struct fx_uthread *u, int sig)
{
	siginfo_t info;

	memset(&info, 0, sizeof(info));
	info.si_signo = sig;
	info.si_code = SI_TKILL;
	info.si_pid = getpid();
	info.si_uid = getuid();
	struct reg_hold h = lock_reg();
	/* sigwait_set is set, under the lock, only while u waits in sigwait */
	if (!((u->sigwait_set & BIT(sig)) && to_sigwaiter(sig, &info, u))) {
		if (u->sigmask & BIT(sig) || (u == fx_uthread_self() && !ignored(sig))) {
			/* until it unblocks or waits for it; or raised by the caller, once unlocked */
			q_add(&u->sigq, sig, &info, false);
			pend(u, BIT(sig));
		} else if (ignored(sig))
			; /* discarded, as the kernel does: it would end u's sleep for nothing */
		else
			to_uthread(u, sig, &info, false);
	}
	unlock_reg(h);
}

/*
 * u's mask (set before) lets in more: it takes the process's pending ones
 * it now accepts. Under the lock even when none is pending: the signal
 * thread may be dispatching one, having found no taker by u's old mask,
 * and puts it in proc_pending only before it lets go of the lock; a look
 * at proc_pending without the lock could miss it, and the signal would
 * wait for the next mask change (a pselect letting SIGCHLD in waited for
 * ever).
 */
/*
 * With reg_lock held, as standard signals of set leave the process's
 * pending ones in the runtime: one of their numbers the kernel holds for
 * the process came while they were pending (the signal thread records
 * under the lock), and the kernel would have dropped it then: dropped now
 * (three kills of SIGUSR1 while every thread blocked it made two).
 */
static uint64_t thread_pending(void);

/* The signals pending in the kernel for the calling kernel thread and for the process. */
static uint64_t kernel_pending(void)
{
	uint64_t bits = 0;

	fx_raw_syscall6(SYS_rt_sigpending, (long)&bits, 8, 0, 0, 0, 0);
	return bits;
}

static void drop_kernel_duplicates(uint64_t set)
{
	struct timespec zero = { 0, 0 };

	set &= (1ull << 31) - 1; /* the standard ones, 1..31 */
	if (!set)
		return;
	uint64_t kpend = kernel_pending();
	if (kpend & set)
		kpend &= ~thread_pending(); /* the process's only: one sent to this thread is its own */
	for (uint64_t dup = kpend & set; dup; dup &= dup - 1) {
		uint64_t one = dup & -dup;
		siginfo_t info;
		fx_raw_syscall6(SYS_rt_sigtimedwait, (long)&one, (long)&info, (long)&zero, 8, 0, 0);
	}
}

void fx_sig_mask_changed(struct fx_uthread *u)
{
	struct reg_hold h = lock_reg();
	uint64_t take = atomic_fetch_and(&proc_pending, u->sigmask) & ~u->sigmask;
	drop_kernel_duplicates(take);

	for (uint64_t t = take; t; t &= t - 1)
		q_move(&proc_q, &u->sigq, __builtin_ctzll(t) + 1, false);
	atomic_fetch_or(&u->sigpending_proc, take);
	pend(u, take);
	unlock_reg(h);
}

uint64_t fx_sig_pending(const struct fx_uthread *u)
{
	return atomic_load(&u->sigpending) | atomic_load(&proc_pending);
}

/*
 * With reg_lock held: takes the lowest signal of set pending in bits
 * (with its siginfo on q) into info; 0 if none. proc_bits: the bits of
 * those of them sent to the process (u's sigpending_proc), or NULL.
 */
static int take_lowest(_Atomic uint64_t *bits, _Atomic uint64_t *proc_bits, struct fx_sigq *q, uint64_t set,
		       siginfo_t *info)
{
	uint64_t have = atomic_load(bits) & set;

	if (!have)
		return 0;
	int sig = __builtin_ctzll(have) + 1;
	struct fx_sigq_ent *e = q_take(q, sig, false);
	if (e) {
		*info = e->info;
		ent_put(e);
	} else {
		plain_info(info, sig);
	}
	if (!q_has(q, sig, false))
		atomic_fetch_and(bits, ~BIT(sig)); /* the last of them */
	if (proc_bits && !q_has(q, sig, true))
		atomic_fetch_and(proc_bits, ~BIT(sig));
	return sig;
}

/* The signals pending in the kernel for the calling kernel thread itself (not the process's). */
static uint64_t thread_pending(void)
{
	char buf[4096];
	uint64_t bits = 0;

	/*
	 * Not under a seccomp filter: it may not allow the open (OpenSSH's
	 * pre-auth list does not), and kills the thread; then the signal
	 * wait of a sealed child killed it (sandbox_allowlist, 3 runs in 23).
	 */
	if (fx_rt_sealed())
		return ~0ull;
	long fd = fx_raw_syscall6(SYS_openat, AT_FDCWD, (long)"/proc/thread-self/status", O_RDONLY | O_CLOEXEC, 0, 0, 0);
	if (fd < 0)
		return ~0ull; /* unknown: the kernel's are taken at once, as before */
	long n = fx_raw_syscall6(SYS_read, fd, (long)buf, sizeof(buf) - 1, 0, 0, 0);
	fx_raw_syscall6(SYS_close, fd, 0, 0, 0, 0, 0);
	if (n <= 0)
		return ~0ull;
	buf[n] = 0;
	char *p = strstr(buf, "\nSigPnd:");
	if (!p)
		return ~0ull;
	for (p += 9; *p == ' ' || *p == '\t'; p++)
		;
	for (; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); p++)
		bits = bits << 4 | (uint64_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
	return bits;
}

#define FX_SIG_FD_LOOK_NS 10000000ull

/*
 * With reg_lock held: whether the kernel still has one of set pending (for
 * the process, or for this kernel thread), at a wait's deadline. The
 * signal thread takes the process's under the same lock (signal_thread),
 * so such a one was pending before the deadline, and is not being handed
 * on: the wait must take it (a zero-timeout sigtimedwait right after a
 * kill of the process, which NPTL answers with the signal). Only while
 * the signal thread runs with its signalfd, or none would take it.
 */
static bool still_in_kernel(uint64_t set)
{
	return atomic_load(&sig_fd) >= 0 && (kernel_pending() & set);
}

uint64_t fx_sig_pending_all(const struct fx_uthread *u)
{
	struct reg_hold h = lock_reg();
	uint64_t kpend = kernel_pending() | (fx_sig_pending(u) & u->sigmask);
	unlock_reg(h);
	return kpend;
}

int fx_sig_wait(uint64_t set, siginfo_t *info, uint64_t deadline)
{
	struct fx_uthread *u = fx_uthread_self();
	struct timespec zero = { 0, 0 };
	struct fx_waiter w;
	int sig;

	set &= ~reserved;
	fx_sig_thread_needed();
	struct reg_hold h;
again:
	/*
	 * The lowest-numbered pending one, as the kernel takes them: pending
	 * in the runtime (the thread's own first, then the process's), or still
	 * in the kernel (for this kernel thread, or the process: the signal
	 * thread has not taken it yet). Of one number the runtime's came first.
	 */
	for (;;) {
		uint64_t kpend = kernel_pending(), priv = 0;
		/* within what is pending at all: an unknown answer (~0) must not name one that is not */
		if (kpend & set)
			priv = thread_pending() & set & kpend;
		/* those of a signalfd stay in the kernel, whoever they were sent to: taken here */
		priv |= kpend & set & atomic_load(&fd_sigs);
		h = lock_reg();
		uint64_t rpend = (atomic_load(&u->sigpending) | atomic_load(&proc_pending)) & set;
		if (priv && (!rpend || __builtin_ctzll(priv) < __builtin_ctzll(rpend))) {
			/* for this kernel thread: the kernel takes those first */
			unlock_reg(h);
			uint64_t one = priv & -priv;
			long r = fx_raw_syscall6(SYS_rt_sigtimedwait, (long)&one, (long)info, (long)&zero, 8, 0, 0);
			if (r > 0)
				return (int)r;
			continue;
		}
		if (rpend) {
			uint64_t one = rpend & -rpend;
			sig = take_lowest(&u->sigpending, &u->sigpending_proc, &u->sigq, one, info);
			if (!sig) {
				sig = take_lowest(&proc_pending, NULL, &proc_q, one, info);
				drop_kernel_duplicates(one);
			}
			unlock_reg(h);
			return sig;
		}
		/*
		 * Nothing pending but the process's, still in the kernel: the
		 * signal thread takes those one by one, in order, and hands each
		 * to a thread waiting for it (taken here it could overtake one
		 * of its number the signal thread is handing on).
		 */
		break;
	}
	fx_waiter_init(&w);
	__atomic_store_n(&u->sigwait_set, set, __ATOMIC_RELAXED);
	u->sigwait_info.si_signo = 0;
	fx_wlist_push(&sigwaiters, &w);
	unlock_reg(h);
	/* no one hands on a signalfd's signals: look again every FX_SIG_FD_LOOK_NS */
	bool looks = set & atomic_load(&fd_sigs);
	uint64_t until = deadline;
	if (looks && fx_now_ns() + FX_SIG_FD_LOOK_NS < deadline)
		until = fx_now_ns() + FX_SIG_FD_LOOK_NS;
	fx_waiter_sleep_cp(&w, until);
	h = lock_reg();
	fx_wlist_remove(&sigwaiters, &w);
	__atomic_store_n(&u->sigwait_set, 0, __ATOMIC_RELAXED);
	sig = u->sigwait_info.si_signo;
	/* handed on since the look above, or still in the kernel: pending all along */
	bool pending = !sig && ((fx_sig_pending(u) & set) || still_in_kernel(set));
	unlock_reg(h);
	if (!sig) {
		if (fx_cancel_pending(u))
			return -ECANCELED;
		if (until < deadline)
			goto again;
		if (pending) {
			/* the look above takes it, or the signal thread hands it on in a moment */
			fx_raw_syscall6(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
			goto again;
		}
		return -EAGAIN;
	}
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
	if (fx_sig_due(u) &&
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

/*
 * Raises on c, the carrier running u, the signals pending for u that it
 * does not block: each with its siginfo (rt_tgsigqueueinfo to itself,
 * which the kernel allows for any si_code), every realtime one queued,
 * in the order they came; the kernel then runs their handlers on u. All
 * are sent with them blocked and delivered when the mask is restored, so
 * a handler that leaves by a jump leaves none of them behind.
 *
 * Between taking their entries out of the pool and putting them back,
 * another signal's handler may fork (async-signal-safe). The child's pool
 * starts empty, those entries among its fresh ones: put back there as
 * well, they were given out twice. So they go back only in the process
 * that took them, which the fork generation, looked at under the lock
 * (no handler runs in a window), tells; the child's sends fail (its
 * carrier's thread is not in the process whose id they name), as its
 * pending signals are the parent's.
 */
void fx_sig_raise(struct fx_carrier *c, struct fx_uthread *u)
{
	struct fx_sigq took;
	uint64_t ready;
	unsigned gen;

again:
	if (c->sig_locked || fx_locks_held) {
		/* it may hold reg_lock, or another of the runtime's: raised when it lets go */
		c->sig_deferred = true;
		fx_locks_owe = 1;
		return;
	}
	/* outside a handler, those blocked for a switch (kextra) are unblocked at the end */
	uint64_t extra = c->raw_handler ? 0 : c->kextra;
	if (!(atomic_load(&u->sigpending) & ~u->sigmask) && !extra)
		return;
	took.head = took.tail = NULL;
	long pid = getpid(); /* before they are taken: a child forked after sends them nowhere */
	window_enter(c);
	fx_spin_lock(&reg_lock);
	gen = fx_gen();
	ready = atomic_load(&u->sigpending) & ~u->sigmask;
	atomic_fetch_and(&u->sigpending, ~ready);
	atomic_fetch_and(&u->sigpending_proc, ~ready);
	for (struct fx_sigq_ent *prev = NULL, *e = u->sigq.head, *next; e; e = next) {
		next = e->next;
		if (!(ready & BIT(e->info.si_signo))) {
			prev = e;
			continue;
		}
		if (prev)
			prev->next = next;
		else
			u->sigq.head = next;
		if (u->sigq.tail == e)
			u->sigq.tail = prev;
		q_push(&took, e);
	}
	fx_spin_unlock(&reg_lock);
	window_leave(c);
	if (ready || extra) {
		uint64_t old, block = ready, sent = 0, kept = 0, kept_proc = 0;
		struct fx_sigq back = { NULL, NULL };
		fx_raw_syscall6(SYS_rt_sigprocmask, SIG_BLOCK, (long)&block, (long)&old, 8, 0, 0);
		for (struct fx_sigq_ent *prev = NULL, *e = took.head, *next; e; e = next) {
			int sig = e->info.si_signo;
			next = e->next;
			long err = kept & BIT(sig) ? -EAGAIN :
				   fx_raw_syscall6(SYS_rt_tgsigqueueinfo, pid, c->tid, sig, (long)&e->info, 0, 0);
			if (!err)
				sent |= BIT(sig);
			if (err != -EAGAIN) {
				prev = e;
				continue;
			}
			/*
			 * The user's queued signals are at RLIMIT_SIGPENDING: kept, with
			 * the later ones of sig behind it, for the monitor's retry. Those
			 * sent already are delivered when the mask below is put back, so
			 * before them. Not blocked meanwhile (kextra): the kernel would
			 * keep those sent for this carrier, which u may leave.
			 */
			kept |= BIT(sig);
			kept_proc |= e->proc ? BIT(sig) : 0;
			if (prev)
				prev->next = next;
			else
				took.head = next;
			q_push(&back, e);
		}
		for (uint64_t rest = ready & ~sent & ~kept; rest; rest &= rest - 1) {
			int sig = __builtin_ctzll(rest) + 1;
			if (fx_raw_syscall6(SYS_tgkill, pid, c->tid, sig, 0, 0, 0) == -EAGAIN)
				kept |= BIT(sig); /* pending as its bit, as it was */
		}
		if (took.head || back.head) {
			window_enter(c);
			fx_spin_lock(&reg_lock);
			for (struct fx_sigq_ent *e = took.head, *next; e && gen == fx_gen(); e = next) {
				next = e->next;
				ent_put(e);
			}
			if (back.head && gen == fx_gen()) {
				/* older than any the queue has now: in front */
				back.tail->next = u->sigq.head;
				u->sigq.head = back.head;
				if (!u->sigq.tail)
					u->sigq.tail = back.tail;
			}
			fx_spin_unlock(&reg_lock);
			window_leave(c);
		}
		if (kept && gen == fx_gen()) {
			atomic_fetch_or(&u->sigpending_proc, kept_proc);
			atomic_fetch_or(&u->sigpending, kept);
			/*
			 * Stuck: they end no call or wait until the monitor has them
			 * raised again (fx_sig_retry). Without a monitor (no second
			 * thread yet) they stay plain pending: the next call or wait
			 * tries again.
			 */
			if (fx_rt_monitor_runs()) {
				atomic_fetch_or(&u->sig_stuck, kept); /* before stuck_any: the monitor's swap, then its look */
				atomic_store(&stuck_any, 1);
			}
		}
		atomic_fetch_and(&u->sig_stuck, kept);
		/* the kernel delivers them now: those it has for the thread (these) first */
		if (extra) {
			old &= ~(extra & ~u->sigmask);
			c->kextra = 0;
			c->kmask = old;
		}
		fx_raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8, 0, 0);
	}
	if (c->sig_deferred) {
		c->sig_deferred = false;
		goto again;
	}
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
	c->kextra = 0;
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
	/*
	 * Back at or below the level where a raw window began (the poke, the
	 * trampoline's last raise), from a handler run inside it: the window,
	 * which has no jump target of its own, is gone too.
	 */
	if (c->raw_handler && c->in_handler <= c->raw_level)
		c->raw_handler = 0;
	if (c->in_handler != before)
		adopt_mask(c, mask);
}

/*
 * The signal thread waits for a signal without taking it (poll on a
 * signalfd), then takes it from the kernel and hands it on with reg_lock
 * held: a look under the lock (fx_sig_wait, fx_sig_pending_all) finds a
 * signal of the process still in the kernel or already in the runtime,
 * never taken and not yet recorded. When it took the signal as it woke (in
 * rt_sigtimedwait) and recorded it after, a zero-timeout sigtimedwait right
 * after a kill of the process timed out now and then (6 and 7 of 2,000),
 * and sigpending missed it. Without a signalfd (descriptors exhausted) it
 * waits so still.
 */
static void to_kernel(int sig, const siginfo_t *info);

static void *signal_thread(void *arg)
{
	struct timespec zero = { 0, 0 };

	(void)arg;
	fx_raw_syscall6(SYS_prctl, PR_SET_NAME, (long)"flexsc-signals", 0, 0, 0, 0);
	/* under the lock: fx_sig_for_signalfd changes its mask with fd_sigs */
	struct reg_hold h = lock_reg_as(true);
	uint64_t set = ~reserved & ~atomic_load(&fd_sigs);
	int fd = fx_fd_keep((int)fx_raw_syscall6(SYS_signalfd4, -1, (long)&set, 8,
						  SFD_CLOEXEC | SFD_NONBLOCK, 0, 0));
	atomic_store(&sig_fd, fd);
	unlock_reg(h);
	atomic_store(&sig_thread_ready, 1);
	fx_futex_wake(&sig_thread_ready, 1);
	for (;;) {
		siginfo_t info;
		long sig;
		bool act = false;
		if (fd >= 0) {
			struct pollfd p = { .fd = fd, .events = POLLIN };
			if (fx_raw_syscall6(SYS_poll, (long)&p, 1, -1, 0, 0, 0) <= 0)
				continue;
			h = lock_reg_as(true); /* the signal thread blocks every signal */
			uint64_t set = ~reserved & ~atomic_load(&fd_sigs);
			sig = fx_raw_syscall6(SYS_rt_sigtimedwait, (long)&set, (long)&info, (long)&zero, 8, 0, 0);
			if (sig > 0)
				act = dispatch_held((int)sig, &info);
			unlock_reg(h);
		} else {
			uint64_t set = ~reserved & ~atomic_load(&fd_sigs);
			sig = fx_raw_syscall6(SYS_rt_sigtimedwait, (long)&set, (long)&info, 0, 8, 0, 0);
			if (sig <= 0)
				continue;
			h = lock_reg_as(true);
			if (atomic_load(&fd_sigs) & BIT(sig)) /* a signalfd's since it waited: the kernel's again */
				to_kernel((int)sig, &info);
			else
				act = dispatch_held((int)sig, &info);
			unlock_reg(h);
		}
		if (act)
			act_by_default((int)sig);
	}
	return NULL;
}

/*
 * The kernel takes a siginfo that says kill(), tgkill() or the kernel sent
 * the signal (si_code >= 0, or SI_TKILL) from rt_sigqueueinfo only when the
 * caller is the thread-group leader (the process's first kernel thread:
 * nobody else may pose as such a sender). Another kernel thread got EPERM,
 * and the signal was lost: a signal pending before a signalfd was made,
 * made by a uthread on any carrier but the first, was never read from it
 * (signalfd_signals case 3, about 1 run in 3; every run when the calls ran
 * in place). *Decision:* such a signal waits in one of these slots for the
 * leader, which a poke sends to its poke's handler (fx_sig_leader_requeue):
 * the signal reaches the kernel a moment later, with its siginfo whole.
 */
#define REQUEUE_SLOTS 64
enum { SLOT_FREE, SLOT_FILLING, SLOT_READY };
static struct {
	_Atomic int state;
	siginfo_t info;
} requeue_slots[REQUEUE_SLOTS];
static _Atomic int requeue_due;

/* Gives sig (info) back to the kernel, pending for the process, as it was sent. */
static void to_kernel(int sig, const siginfo_t *info)
{
	long pid = getpid();

	if (fx_raw_syscall6(SYS_rt_sigqueueinfo, pid, sig, (long)info, 0, 0, 0) != -EPERM)
		return;
	for (unsigned i = 0; i < REQUEUE_SLOTS; i++) {
		int expect = SLOT_FREE;
		if (!atomic_compare_exchange_strong(&requeue_slots[i].state, &expect, SLOT_FILLING))
			continue;
		requeue_slots[i].info = *info;
		requeue_slots[i].info.si_signo = sig;
		atomic_store(&requeue_slots[i].state, SLOT_READY);
		atomic_store(&requeue_due, 1);
		fx_raw_syscall6(SYS_tgkill, pid, pid, FX_SIG_POKE, 0, 0, 0);
		return;
	}
	fx_raw_syscall6(SYS_kill, pid, sig, 0, 0, 0, 0); /* every slot taken: the signal at least */
}

void fx_sig_leader_requeue(void)
{
	if (fx_likely(!atomic_load_explicit(&requeue_due, memory_order_relaxed)))
		return;
	long pid = fx_raw_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0);
	if (fx_raw_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0) != pid || !atomic_exchange(&requeue_due, 0))
		return;
	for (unsigned i = 0; i < REQUEUE_SLOTS; i++) {
		if (atomic_load(&requeue_slots[i].state) != SLOT_READY)
			continue;
		siginfo_t *info = &requeue_slots[i].info;
		fx_raw_syscall6(SYS_rt_sigqueueinfo, pid, info->si_signo, (long)info, 0, 0, 0);
		atomic_store(&requeue_slots[i].state, SLOT_FREE);
	}
}

/*
 * Signals a program reads through a signalfd (signalfd(2): it blocks them,
 * and the kernel keeps them pending until a read of the descriptor takes
 * them) must stay in the kernel: the signal thread, which takes every
 * signal no running uthread accepts, took them, and the signalfd never saw
 * them (script(1), waiting for SIGCHLD so, hung every time; daemons lost
 * their SIGTERM). *Decision:* once a signalfd of the program names a
 * signal, the signal thread leaves it to the kernel for the rest of the
 * process's life (a descriptor's end is not followed: it may be a dup's),
 * and those the runtime held for the process go back to the kernel, with
 * their siginfo. A sigwait for one takes it from the kernel itself,
 * looking again every FX_SIG_FD_LOOK_NS while it waits (nobody hands it
 * on); a handler for one runs when a carrier running a uthread that
 * accepts it gets it from the kernel.
 */
void fx_sig_for_signalfd(uint64_t set)
{
	set &= ~reserved;
	if (!(set & ~atomic_load(&fd_sigs)))
		return;
	struct reg_hold h = lock_reg();
	uint64_t added = set & ~atomic_fetch_or(&fd_sigs, set);
	int fd = atomic_load(&sig_fd);
	if (added && fd >= 0) {
		uint64_t left = ~reserved & ~atomic_load(&fd_sigs);
		fx_raw_syscall6(SYS_signalfd4, fd, (long)&left, 8, SFD_CLOEXEC | SFD_NONBLOCK, 0, 0);
	}
	for (uint64_t back = added & atomic_load(&proc_pending); back; back &= back - 1) {
		uint64_t one = back & -back;
		siginfo_t info;
		int sig;
		while ((sig = take_lowest(&proc_pending, NULL, &proc_q, one, &info)))
			to_kernel(sig, &info);
	}
	unlock_reg(h);
}

void fx_sig_retry(void)
{
	if (!atomic_load_explicit(&stuck_any, memory_order_relaxed) || !atomic_exchange(&stuck_any, 0))
		return;
	bool left = false;
	struct reg_hold h = lock_reg_as(true); /* the monitor blocks every signal */
	for (struct fx_uthread *u = reg_head; u; u = u->reg_next) {
		if (!(atomic_load(&u->sig_stuck) & atomic_load(&u->sigpending) & ~u->sigmask))
			continue;
		/*
		 * One that runs raises them in the poke's handler. One that does
		 * not is left as it is: ending its wait or call for a signal the
		 * kernel may still refuse would end it for nothing (a sleep cut
		 * short, a poll started again); it raises them when it next runs.
		 */
		struct fx_carrier *c = u->home;
		if (atomic_load(&u->state) == FX_U_RUNNING && c) {
			atomic_store(&u->sig_stuck, 0);
			fx_poke(c);
		} else {
			left = true;
		}
	}
	unlock_reg(h);
	if (left)
		atomic_store(&stuck_any, 1);
}

/*
 * The signal thread starts when first needed, not with the runtime: while
 * the process's only uthread runs on carrier 0 (its calls made there, "A
 * thread alone" in docs/threads.md), carrier 0 has that uthread's mask,
 * and the kernel gives process-directed signals to it, or keeps them
 * pending for the process, as for a one-thread process on NPTL; and a
 * process with one thread keeps the kernel's cheaper descriptor lookups.
 * Needed from the moment a uthread may be off its carrier or a carrier
 * blocks every signal: the second uthread (fx_rt_start_carriers), a
 * carrier's first idle sleep, and a wait for signals (the process's still
 * in the kernel are the signal thread's to take, fx_sig_wait). Once
 * started it stays; a fork child starts its own, when needed.
 */
void fx_sig_thread_needed(void)
{
	if (fx_likely(atomic_load_explicit(&sig_thread_started, memory_order_acquire)))
		return;
	if (atomic_exchange(&sig_thread_starting, 1)) {
		/* another carrier starts it: until it has, or gave up */
		struct timespec ms = { 0, 1000000 };
		while (atomic_load(&sig_thread_starting) && !atomic_load(&sig_thread_ready))
			fx_futex_wait(&sig_thread_ready, 0, &ms);
		return;
	}
	int err = fx_rt_kthread(signal_thread); /* every signal blocked, which sigwaitinfo needs */
	if (err) {
		static bool said;
		if (!said)
			fprintf(stderr, "flexsc-run: cannot start the signal thread (%s); signals that no "
					"running thread accepts wait until one does\n", strerror(-err));
		said = true;
	} else {
		/* a wait that needed it must find its signalfd: still_in_kernel asks */
		while (!atomic_load(&sig_thread_ready))
			fx_futex_wait(&sig_thread_ready, 0, NULL);
		atomic_store_explicit(&sig_thread_started, 1, memory_order_release);
	}
	atomic_store(&sig_thread_starting, 0);
}

void fx_sig_after_fork_child(struct fx_uthread *self)
{
	/* the child has one uthread, and the signal thread is gone */
	atomic_store(&sig_thread_started, 0);
	atomic_store(&sig_thread_starting, 0);
	atomic_store(&sig_thread_ready, 0);
	int fd = atomic_exchange(&sig_fd, -1);
	if (fd >= 0)
		fx_fd_close_kept(fd); /* the parent's signal thread's */
	atomic_store(&reg_lock, 0);
	reg_head = NULL;
	sigwaiters.head = sigwaiters.tail = NULL;
	atomic_store(&proc_pending, 0); /* the child starts with no pending signals */
	proc_q.head = proc_q.tail = NULL;
	/* nor any of its own: a child starts with none pending (fork(2)), the kernel's as the runtime's */
	self->sigq.head = self->sigq.tail = NULL;
	atomic_store(&self->sigpending, 0);
	atomic_store(&self->sigpending_proc, 0);
	atomic_store(&self->sig_stuck, 0);
	atomic_store(&stuck_any, 0);
	sigq_free = NULL;
	sigq_fresh = 0;
	fx_sig_register(self);
	leader = self; /* the child's one thread leads its thread group */
}
