/* SPDX-License-Identifier: MIT */
/*
 * syscall() and prctl(): the generic entries through which a program
 * reaches per-thread kernel state that the runtime keeps per uthread
 * (threads/kstate.c: the robust list, the alternate signal stack, the
 * thread's name, futexes), and the blocking calls src/preload/io.c makes
 * exception-less, posted the same way (fx_io_syscall), so that a call
 * made through syscall() does not block the carrier. Everything else
 * (clone, vfork, exit, rt_sigreturn, calls with a signal mask...) goes
 * to the kernel unchanged;
 * identity changes need no bookkeeping here, the hand-over of every call
 * asks the kernel (core/identity.c).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "preload/real.h"

FX_PUBLIC long syscall(long nr, ...)
{
	va_list ap;
	long a[6], r;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (fx_rt_active && fx_io_syscall(nr, a, &r))
		return r;
	if (!fx_rt_active || !fx_kstate_call(nr, a, &r)) {
		r = fx_raw_syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		/* descriptor facts (core/fdfacts.c): what it made, closed or changed */
		fx_fd_made(nr, (const uint64_t *)a, r);
		if (nr == SYS_close || nr == SYS_close_range || nr == SYS_dup2 || nr == SYS_dup3)
			fx_fd_changed();
	}
	return fx_libc_ret(r);
}

FX_PUBLIC int prctl(int option, ...)
{
	va_list ap;
	long a[5] = { option }, r;

	va_start(ap, option);
	for (int i = 1; i < 5; i++)
		a[i] = (long)va_arg(ap, unsigned long);
	va_end(ap);
	if (!fx_rt_active || !fx_kstate_call(SYS_prctl, a, &r))
		r = fx_raw_syscall6(SYS_prctl, a[0], a[1], a[2], a[3], a[4], 0);
	return (int)fx_libc_ret(r);
}
