/* SPDX-License-Identifier: MIT */
/*
 * Deferred cancellation.
 *
 * pthread_cancel marks the target and, if it sleeps at a cancellation
 * point, ends that sleep: a wait on a condition variable or a sleep ends
 * as if its deadline had passed, and an exception-less call in flight is
 * cancelled by its carrier (io_uring cancels it; a syscall thread that
 * took it does not start it, or is interrupted in it with a signal, sent
 * again every millisecond until the call comes back). The target then
 * acts on the request at the cancellation point: it exits with
 * PTHREAD_CANCELED, running its cleanup handlers and key destructors.
 *
 * Cancellation points are the interposed blocking calls POSIX names
 * (src/preload/io.c), pthread_cond_wait and timedwait, the sleeps, and
 * pthread_testcancel. Asynchronous cancellation also acts in a mutex wait
 * and, on a running thread, from a signal (docs/threads.md).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/msg.h>
#include <signal.h>
#include <sys/syscall.h>
#include <ucontext.h>

#include "preload/real.h"
#include "preload/cancel.h"

void fx_cancel_act(void)
{
	if (!fx_in_handler(fx_carrier_self()))
		pthread_exit(PTHREAD_CANCELED);
}

/* This library's own code: where an asynchronous cancellation never acts (its locks, its lists). */
extern const char __ehdr_start __attribute__((visibility("hidden")));
extern const char __etext __attribute__((visibility("hidden")));

/*
 * The poke handler found the running uthread cancelled asynchronously
 * (pthread_cancel pokes its carrier): it exits now, from the handler, as
 * NPTL's SIGCANCEL handler does, unless the signal interrupted this
 * library's code or one of its locks is held (a spin lock or a wait list
 * of ours may be half done):
 * then the request waits for the next cancellation point or interposed
 * wait. The carrier's kernel mask is put back first (the handler's
 * blocked FX_SIG_POKE; the exit leaves the handler by a jump).
 */
void fx_cancel_async_poked(void *uc)
{
	struct fx_carrier *c = fx_carrier_self();
	uintptr_t pc = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];

	if ((pc >= (uintptr_t)&__ehdr_start && pc < (uintptr_t)&__etext) || fx_locks_held)
		return; /* fx_locks_held: a lock of ours held while libc runs (a memcpy under it) */
	fx_raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&c->kmask, 0, 8, 0, 0);
	pthread_exit(PTHREAD_CANCELED);
}

FX_EXPORT int pthread_cancel(pthread_t thread)
{
	struct fx_uthread *u = fx_rt_active ? fx_uthread_of((uintptr_t)thread) : NULL;

	if (!u) {
		/* joined or gone (its mapping is cached): 0, as glibc 2.34+ answers for an exited thread */
		if (fx_rt_active && fx_uthread_dead((uintptr_t)thread))
			return 0;
		return REAL(pthread_cancel)(thread);
	}
	if (atomic_load(&u->state) == FX_U_EXITED)
		return 0;
	atomic_store(&u->cancel_requested, 1);
	if (u == fx_uthread_self()) {
		if (u->cancel_async)
			fx_testcancel();
		return 0;
	}
	if (!u->cancel_disabled && !atomic_load(&u->exiting)) {
		fx_interrupt(u);
		/*
		 * A running target is poked: asynchronous, it is stopped where it
		 * runs; deferred, it may wait in the kernel at a cancellation
		 * point the runtime does not serve (a lock wait, waitpid,
		 * mq_receive), where its carrier's poke acts on it (poke.c,
		 * fx_poked). It waited there for ever before.
		 */
		struct fx_carrier *c = u->home;
		if (atomic_load(&u->state) == FX_U_RUNNING && c && c->current == u)
			fx_raw_syscall6(SYS_tgkill, getpid(), c->tid, FX_SIG_POKE, 0, 0, 0);
	}
	return 0;
}

FX_EXPORT int pthread_setcancelstate(int state, int *old)
{
	struct fx_uthread *u = fx_rt_active ? fx_uthread_self() : NULL;

	if (!u)
		return REAL(pthread_setcancelstate)(state, old);
	if (state != PTHREAD_CANCEL_ENABLE && state != PTHREAD_CANCEL_DISABLE)
		return EINVAL;
	if (old)
		*old = u->cancel_disabled ? PTHREAD_CANCEL_DISABLE : PTHREAD_CANCEL_ENABLE;
	u->cancel_disabled = state == PTHREAD_CANCEL_DISABLE;
	return 0;
}

FX_EXPORT int pthread_setcanceltype(int type, int *old)
{
	struct fx_uthread *u = fx_rt_active ? fx_uthread_self() : NULL;

	if (!u)
		return REAL(pthread_setcanceltype)(type, old);
	if (type != PTHREAD_CANCEL_DEFERRED && type != PTHREAD_CANCEL_ASYNCHRONOUS)
		return EINVAL;
	if (old)
		*old = u->cancel_async ? PTHREAD_CANCEL_ASYNCHRONOUS : PTHREAD_CANCEL_DEFERRED;
	u->cancel_async = type == PTHREAD_CANCEL_ASYNCHRONOUS;
	if (u->cancel_async)
		fx_testcancel();
	return 0;
}

FX_EXPORT void pthread_testcancel(void)
{
	if (!fx_rt_active || !fx_uthread_self()) {
		REAL(pthread_testcancel)();
		return;
	}
	fx_testcancel();
}
