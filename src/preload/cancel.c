/* SPDX-License-Identifier: MIT */
/*
 * Deferred cancellation.
 *
 * pthread_cancel marks the target and, if it sleeps at a cancellation
 * point, ends that sleep: a wait on a condition variable or a sleep ends
 * as if its deadline had passed, and an exception-less call in flight is
 * cancelled by its carrier (io_uring cancels it; a call already executing
 * on a syscall thread runs to its end first). The target then acts on the
 * request at the cancellation point: it exits with PTHREAD_CANCELED,
 * running its cleanup handlers and key destructors.
 *
 * Cancellation points are the interposed blocking calls POSIX names
 * (src/preload/io.c), pthread_cond_wait and timedwait, the sleeps, and
 * pthread_testcancel. Asynchronous cancellation is accepted and acts at
 * the same points (docs/threads.md).
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "preload/real.h"
#include "preload/cancel.h"

void fx_testcancel(void)
{
	struct fx_uthread *u = fx_rt_active ? fx_uthread_self() : NULL;

	if (u && fx_cancel_pending(u) && !fx_in_handler(fx_carrier_self()))
		pthread_exit(PTHREAD_CANCELED);
}

FX_PUBLIC int pthread_cancel(pthread_t thread)
{
	struct fx_uthread *u = fx_rt_active ? fx_uthread_of((uintptr_t)thread) : NULL;

	if (!u)
		return REAL(pthread_cancel)(thread);
	if (atomic_load(&u->state) == FX_U_EXITED)
		return 0;
	atomic_store(&u->cancel_requested, 1);
	if (u == fx_uthread_self()) {
		if (u->cancel_async)
			fx_testcancel();
		return 0;
	}
	if (!u->cancel_disabled)
		fx_interrupt(u);
	return 0;
}

FX_PUBLIC int pthread_setcancelstate(int state, int *old)
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

FX_PUBLIC int pthread_setcanceltype(int type, int *old)
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

FX_PUBLIC void pthread_testcancel(void)
{
	if (!fx_rt_active || !fx_uthread_self()) {
		REAL(pthread_testcancel)();
		return;
	}
	fx_testcancel();
}
