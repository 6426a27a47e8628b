/* SPDX-License-Identifier: MIT */
/*
 * Signals with per-user-thread meaning.
 *
 * Masks: each uthread has its own; the carrier that runs it takes it on
 * (one rt_sigprocmask per switch, only when two threads' masks differ).
 * pthread_kill to a uthread that is running signals its carrier; to one
 * that is not, the signal waits in the uthread and is raised on whichever
 * carrier runs it next, as soon as it is unblocked there, so the handler
 * runs on the thread it was sent to.
 *
 * Handlers: the program's handlers are installed behind a trampoline that
 * marks the carrier "in a handler" for their duration, so that an
 * interposed call made from a handler (write is async-signal-safe) runs
 * directly instead of switching user threads inside a handler, which
 * could leave the interrupted thread's libc locks held by a thread that
 * does not run. A handler left by siglongjmp/longjmp instead of returning
 * is dropped by the jump (or by the next check, from the stack pointer:
 * fx_handler_active in src/threads/signals.c).
 *
 * Process-directed signals, sigwait and interrupted calls: src/threads/signals.c.
 * Handlers record on the uthread whether one without SA_RESTART ran, which
 * decides whether its interrupted call fails with EINTR or starts again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <ucontext.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/cancel.h"
#include "preload/real.h"
#include "threads/signals.h"
#include "threads/waiter.h"

static uint64_t to_bits(const sigset_t *set)
{
	uint64_t bits;

	memcpy(&bits, set, sizeof(bits));
	return bits;
}

/* As the kernel writes a sigset out: its 8 bytes, the rest of glibc's 128 untouched. */
static void from_bits(sigset_t *set, uint64_t bits)
{
	memcpy(set, &bits, sizeof(bits));
}

FX_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	struct fx_carrier *c = fx_rt_active ? fx_carrier_self() : NULL;
	struct fx_uthread *u = c ? c->current : NULL;

	if (!u || fx_in_handler(c))
		return REAL(pthread_sigmask)(how, set, old);
	uint64_t cur = u->sigmask, next = cur;
	/* as the kernel's rt_sigprocmask: the new set read first (EFAULT: nothing changes), the old one written last */
	if (set && !fx_mem_r_ok(set, sizeof(uint64_t)))
		return EFAULT;
	if (set) {
		uint64_t bits = fx_sig_blockable(set);
		switch (how) {
		case SIG_BLOCK: next = cur | bits; break;
		case SIG_UNBLOCK: next = cur & ~bits; break;
		case SIG_SETMASK: next = bits; break;
		default: return EINVAL;
		}
	}
	if (next != cur) {
		u->sigmask = next;
		if (cur & ~next)
			fx_sig_mask_changed(u); /* the process's pending ones it now takes */
		if (next & ~cur)
			fx_sig_mask_blocked(u, next & ~cur);
		/* those pending in the runtime stay blocked until raised: they come first */
		c->kextra = atomic_load(&u->sigpending) & ~next;
		uint64_t want = next | c->kextra;
		c->kmask = want;
		fx_raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&want, 0, 8, 0, 0);
		fx_raise_pending();
	}
	if (old && !fx_mem_rw_ok(old, sizeof(uint64_t)))
		return EFAULT;
	if (old)
		from_bits(old, cur);
	return 0;
}

FX_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	int err;

	if (!fx_rt_active || !fx_uthread_self())
		return REAL(sigprocmask)(how, set, old);
	err = pthread_sigmask(how, set, old);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

FX_EXPORT int pthread_kill(pthread_t thread, int sig)
{
	struct fx_uthread *u = fx_rt_active ? fx_uthread_of((uintptr_t)thread) : NULL;

	if (!u) {
		if (fx_rt_active && fx_uthread_dead((uintptr_t)thread))
			return ESRCH; /* joined or gone, as an exited one */
		return REAL(pthread_kill)(thread, sig);
	}
	if (sig < 0 || sig >= 65)
		return EINVAL;
	if (atomic_load(&u->state) == FX_U_EXITED)
		return ESRCH;
	if (sig == 0)
		return 0;
	if (sig == 32 || sig == 33 || sig == FX_SIG_POKE || sig == FX_SIG_INTERRUPT)
		return EINVAL; /* glibc's own, and the runtime's */
	fx_sig_send(u, sig);
	if (u == fx_uthread_self())
		fx_raise_pending();
	return 0;
}

/*
 * raise: glibc's sends the signal to the calling kernel thread, a carrier,
 * where it would stay pending (while blocked) for whichever uthread the
 * carrier runs next. It is the caller's: pthread_kill to itself.
 */
FX_EXPORT int raise(int sig)
{
	struct fx_uthread *u = fx_rt_active ? fx_uthread_self() : NULL;

	if (!u || fx_in_handler(fx_carrier_self()) || sig == 32 || sig == 33)
		return REAL(raise)(sig);
	int err = pthread_kill((pthread_t)u->tcb, sig);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

/* ---- a timer's overrun: that of its signal last delivered ---- */

/*
 * timer_getoverrun(2) gives the overrun of the timer's signal last
 * delivered, which the kernel counts when the signal is dequeued. Under
 * the runtime the signal thread dequeues it, and may dequeue the next one
 * of the same timer before the handler of this one has run: the kernel's
 * answer is then the later signal's, and a handler that counts 1 +
 * timer_getoverrun() per signal counted 2,359 expirations of a 10 ms
 * timer in 19.8 s (the soak). So each delivery to the program (a handler's
 * start, a sigwait's return) records its signal's own si_overrun, the
 * answer for that timer from then on.
 */
#define FX_TIMERS 1024
static _Atomic int delivered_overrun[FX_TIMERS]; /* + 1; 0: none delivered yet */

static void note_delivery(const siginfo_t *si)
{
	if (si->si_code == SI_TIMER && si->si_timerid >= 0 && si->si_timerid < FX_TIMERS)
		atomic_store_explicit(&delivered_overrun[si->si_timerid], si->si_overrun + 1, memory_order_relaxed);
}

FX_EXPORT int timer_create(clockid_t clock, struct sigevent *sev, timer_t *timer)
{
	int r = REAL(timer_create)(clock, sev, timer);
	intptr_t id = r == 0 ? (intptr_t)*timer : -1; /* negative: glibc's SIGEV_THREAD timers */

	if (id >= 0 && id < FX_TIMERS)
		atomic_store_explicit(&delivered_overrun[id], 0, memory_order_relaxed); /* a number used before */
	return r;
}

FX_EXPORT int timer_getoverrun(timer_t timer)
{
	int r = REAL(timer_getoverrun)(timer); /* EINVAL for a timer that is not one */
	intptr_t id = (intptr_t)timer;

	if (r >= 0 && id >= 0 && id < FX_TIMERS) {
		int mine = atomic_load_explicit(&delivered_overrun[id], memory_order_relaxed);
		if (mine)
			return mine - 1;
	}
	return r;
}

/* ---- waiting for signals: a uthread waits, its carrier runs others ---- */

/* sigtimedwait's core: the signal, or -1 with errno (EAGAIN at the timeout, EINVAL). */
static int wait_for(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
	siginfo_t mine;
	uint64_t deadline = UINT64_MAX;

	/* EFAULT before waiting (the kernel's would take the signal, then fail to copy it out) */
	if (!fx_mem_r_ok(set, sizeof(uint64_t)) || (timeout && !fx_mem_r_ok(timeout, sizeof(*timeout))) ||
	    (info && !fx_mem_rw_ok(info, sizeof(*info)))) {
		errno = EFAULT;
		return -1;
	}
	if (timeout) {
		if (timeout->tv_sec < 0 || timeout->tv_nsec < 0 || timeout->tv_nsec >= 1000000000L) {
			errno = EINVAL;
			return -1;
		}
		deadline = fx_deadline_after(timeout);
	}
	fx_testcancel();
	int r = fx_sig_wait(to_bits(set), info ? info : &mine, deadline);
	if (r > 0)
		note_delivery(info ? info : &mine);
	fx_testcancel();
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return r;
}

FX_EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
	if (!fx_on_uthread())
		return REAL(sigtimedwait)(set, info, timeout);
	return wait_for(set, info, timeout);
}

FX_EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
	if (!fx_on_uthread())
		return REAL(sigwaitinfo)(set, info);
	return wait_for(set, info, NULL);
}

FX_EXPORT int sigwait(const sigset_t *set, int *sig)
{
	if (!fx_on_uthread())
		return REAL(sigwait)(set, sig);
	int r = wait_for(set, NULL, NULL);
	if (r < 0)
		return errno;
	*sig = r;
	return 0;
}

/* Waits with mask in place until a handler has run; then the old mask again. */
FX_EXPORT int sigsuspend(const sigset_t *mask)
{
	if (!fx_on_uthread())
		return REAL(sigsuspend)(mask);
	struct fx_uthread *u = fx_uthread_self();
	sigset_t old;

	if (!fx_mem_r_ok(mask, sizeof(uint64_t))) {
		errno = EFAULT;
		return -1;
	}
	u->handled = 0;
	pthread_sigmask(SIG_SETMASK, mask, &old);
	while (!u->handled) {
		fx_sig_interruptible_sleep(UINT64_MAX);
		fx_testcancel();
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = EINTR;
	return -1;
}

FX_EXPORT int pause(void)
{
	sigset_t now;

	if (!fx_on_uthread())
		return REAL(pause)();
	pthread_sigmask(SIG_SETMASK, NULL, &now);
	return sigsuspend(&now);
}

FX_EXPORT int sigpending(sigset_t *set)
{
	struct fx_uthread *u = fx_rt_active ? fx_uthread_self() : NULL;

	if (!u)
		return REAL(sigpending)(set);
	if (!fx_mem_rw_ok(set, sizeof(uint64_t))) {
		errno = EFAULT;
		return -1;
	}
	/* one look under the runtime's lock: a signal being handed on is in one place or the other */
	from_bits(set, fx_sig_pending_all(u));
	return 0;
}

int fx_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return REAL(sigaction)(sig, act, old);
}

/* ---- handlers behind a trampoline ---- */

static struct sigaction user_actions[65];

static void trampoline(int sig, siginfo_t *info, void *uctx)
{
	struct fx_carrier *c = fx_carrier_self();
	struct sigaction *a = &user_actions[sig];
	int saved = errno;

	if (c && (c->sig_locked || fx_locks_held)) {
		/* a lock of the runtime's, which the handler may want (pthread_kill, sem_post): after it */
		fx_sig_hold(c, sig, info, uctx);
		errno = saved;
		return;
	}
	if (c && !c->in_handler &&
	    fx_sig_for_leader(c, sig, info)) {
		errno = saved;
		return;
	}
	int level = c ? c->in_handler : 0;

	note_delivery(info);
	if (c) {
		fx_handler_enter(c, (uintptr_t)__builtin_frame_address(0), &((ucontext_t *)uctx)->uc_stack);
		/* what an exception-less call this interrupted does next: EINTR or restart */
		if (c->current) {
			int h = (a->sa_flags & SA_RESTART) ? 1 : 2;
			c->current->handled = h > c->current->handled ? h : c->current->handled;
		}
	}
	errno = saved;
	if (a->sa_flags & SA_SIGINFO)
		a->sa_sigaction(sig, info, uctx);
	else
		a->sa_handler(sig);
	if (c) {
		c = fx_carrier_self();
		fx_handler_return(c, level);
		/*
		 * A signal for this uthread that came while the handler ran (the
		 * kernel gave it to the signal thread, the poke could not raise it
		 * inside a handler) is raised now: the kernel delivers it once this
		 * handler returns, to the same uthread, which may never reach a
		 * reschedule point (it only computes).
		 */
		if (!fx_in_handler(c) && c->current && !c->in_rt &&
		    (atomic_load(&c->current->sigpending) & ~c->current->sigmask)) {
			fx_raw_enter(c); /* still in this handler's frame: its mask comes back */
			fx_raise_pending();
			fx_raw_leave(c);
		}
	}
}

/*
 * Leaving a handler by a jump: it never returns through the trampoline,
 * so the jump says which handlers it leaves (those whose frames lie below
 * the target's stack pointer) and which mask the thread then has. A
 * jmp_buf holds the stack pointer mangled with the pointer guard
 * (%fs:0x30, copied into every uthread's TCB), as glibc's PTR_MANGLE on
 * x86-64 does: xor, then rotate left by 17.
 */
#define JB_RSP 6

static void leaving_by_jump(struct __jmp_buf_tag *env)
{
	struct fx_carrier *c = fx_rt_active ? fx_carrier_self() : NULL;

	if (!c || !c->in_handler)
		return;
	uintptr_t guard, sp = (uintptr_t)env->__jmpbuf[JB_RSP];
	__asm__("mov %%fs:0x30, %0" : "=r"(guard));
	sp = ((sp >> 17) | (sp << 47)) ^ guard;
	uint64_t mask;
	if (env->__mask_was_saved)
		memcpy(&mask, &env->__saved_mask, sizeof(mask));
	fx_handler_longjmp(c, sp, env->__mask_was_saved ? &mask : NULL);
}

FX_EXPORT void siglongjmp(sigjmp_buf env, int val)
{
	leaving_by_jump(env);
	REAL(siglongjmp)(env, val);
	__builtin_unreachable();
}

FX_EXPORT void longjmp(jmp_buf env, int val)
{
	leaving_by_jump(env);
	REAL(longjmp)(env, val);
	__builtin_unreachable();
}

FX_EXPORT void _longjmp(jmp_buf env, int val)
{
	leaving_by_jump(env);
	REAL(_longjmp)(env, val);
	__builtin_unreachable();
}

/* what -D_FORTIFY_SOURCE makes of longjmp */
void __longjmp_chk(jmp_buf env, int val) __attribute__((noreturn));
FX_EXPORT void __longjmp_chk(jmp_buf env, int val)
{
	leaving_by_jump(env);
	REAL(__longjmp_chk)(env, val);
	__builtin_unreachable();
}

static bool is_function(const struct sigaction *a)
{
	return (a->sa_flags & SA_SIGINFO) ||
	       (a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN);
}

FX_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction mine, prev;

	if (!fx_rt_active || sig <= 0 || sig >= 65 || sig == 32 || sig == 33)
		return REAL(sigaction)(sig, act, old);
	if (act && is_function(act)) {
		mine = *act;
		mine.sa_sigaction = trampoline;
		mine.sa_flags |= SA_SIGINFO;
		user_actions[sig] = *act;
	}
	int r = REAL(sigaction)(sig, act && is_function(act) ? &mine : act, &prev);
	if (r == 0 && old) {
		*old = prev;
		if (prev.sa_sigaction == trampoline)
			*old = user_actions[sig];
	}
	return r;
}

/* glibc's signal: BSD semantics (SA_RESTART, handler stays installed) */
FX_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction act, old;

	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	act.sa_flags = SA_RESTART;
	sigemptyset(&act.sa_mask);
	sigaddset(&act.sa_mask, sig);
	if (sigaction(sig, &act, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

/* The alternate signal stack is the calling thread's: a uthread keeps its own (threads/kstate.c). */
FX_EXPORT int sigaltstack(const stack_t *ss, stack_t *old)
{
	struct fx_carrier *c = fx_rt_active ? fx_carrier_self() : NULL;

	if (!c || !c->current || c->in_rt)
		return REAL(sigaltstack)(ss, old);
	return (int)fx_libc_ret(fx_sigaltstack(ss, old));
}
