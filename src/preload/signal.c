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
 * does not run.
 *
 * Not emulated (docs/threads.md): a signal does not interrupt a uthread's
 * exception-less call in flight, so blocking calls behave as with
 * SA_RESTART; process-directed signals are handled by whichever carrier
 * the kernel picks, on the uthread it is running (or its scheduler).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/real.h"

#define SIG_BIT(sig) (1ull << ((sig) - 1))
/* glibc's SIGCANCEL and SIGSETXID: never blocked, as glibc ensures */
#define INTERNAL_SIGS (SIG_BIT(32) | SIG_BIT(33))
#define UNBLOCKABLE (SIG_BIT(SIGKILL) | SIG_BIT(SIGSTOP))

static uint64_t to_bits(const sigset_t *set)
{
	uint64_t bits;

	memcpy(&bits, set, sizeof(bits));
	return bits;
}

static void from_bits(sigset_t *set, uint64_t bits)
{
	sigemptyset(set);
	memcpy(set, &bits, sizeof(bits));
}

FX_PUBLIC int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	struct fx_carrier *c = fx_rt_active ? fx_carrier_self() : NULL;
	struct fx_uthread *u = c ? c->current : NULL;

	if (!u || c->in_handler)
		return REAL(pthread_sigmask)(how, set, old);
	uint64_t cur = u->sigmask, next = cur;
	if (set) {
		uint64_t bits = to_bits(set) & ~(INTERNAL_SIGS | UNBLOCKABLE);
		switch (how) {
		case SIG_BLOCK: next = cur | bits; break;
		case SIG_UNBLOCK: next = cur & ~bits; break;
		case SIG_SETMASK: next = bits; break;
		default: return EINVAL;
		}
	}
	if (old)
		from_bits(old, cur);
	if (next != cur) {
		u->sigmask = next;
		c->kmask = next;
		fx_raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&next, 0, 8, 0, 0);
		fx_raise_pending();
	}
	return 0;
}

FX_PUBLIC int sigprocmask(int how, const sigset_t *set, sigset_t *old)
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

FX_PUBLIC int pthread_kill(pthread_t thread, int sig)
{
	struct fx_uthread *u = fx_rt_active ? fx_uthread_of((uintptr_t)thread) : NULL;

	if (!u)
		return REAL(pthread_kill)(thread, sig);
	if (sig < 0 || sig >= 65)
		return EINVAL;
	if (atomic_load(&u->state) == FX_U_EXITED)
		return ESRCH;
	if (sig == 0)
		return 0;
	if (u != fx_uthread_self() && atomic_load(&u->state) == FX_U_RUNNING && u->home) {
		/* running now: its carrier's thread takes it (if u switches away first, whoever runs there) */
		fx_raw_syscall6(SYS_tgkill, getpid(), u->home->tid, sig, 0, 0, 0);
		return 0;
	}
	atomic_fetch_or(&u->sigpending, SIG_BIT(sig));
	if (u == fx_uthread_self())
		fx_raise_pending();
	return 0; /* otherwise raised when it next runs */
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

	if (c)
		c->in_handler++;
	errno = saved;
	if (a->sa_flags & SA_SIGINFO)
		a->sa_sigaction(sig, info, uctx);
	else
		a->sa_handler(sig);
	if (c)
		fx_carrier_self()->in_handler--;
}

static bool is_function(const struct sigaction *a)
{
	return (a->sa_flags & SA_SIGINFO) ||
	       (a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN);
}

FX_PUBLIC int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
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
FX_PUBLIC sighandler_t signal(int sig, sighandler_t handler)
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
