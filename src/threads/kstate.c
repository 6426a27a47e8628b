/* SPDX-License-Identifier: MIT */
/*
 * Kernel state that is per thread under NPTL, kept per uthread.
 *
 * The problem. Some state the kernel keeps per kernel thread is the
 * program's per-thread state: the robust mutex list (set_robust_list),
 * the alternate signal stack (sigaltstack), the name (PR_SET_NAME). Set
 * by a uthread on its carrier, it stays there for the next uthreads of
 * that carrier. stress-ng's pthread stressor registers a robust list head
 * on its thread's stack and returns; the next uthread of the carrier asks
 * get_robust_list, gets a pointer into a stack that is unmapped by then,
 * reads it, and dies of SIGSEGV.
 *
 * The shape. The uthread keeps the state; the kernel gets it only where
 * the kernel must act on it:
 *  - robust list: set/get_robust_list made by a uthread read and write
 *    its record and never reach the kernel, whose registration for a
 *    carrier stays the carrier's own. glibc's robust mutexes use the head
 *    in the uthread's TCB (initialised in uthread.c); when the uthread
 *    exits, the runtime does what the kernel does at a thread's exit
 *    (fx_uthread_robust_exit).
 *  - sigaltstack: the kernel must have it when a signal arrives, so the
 *    stack of the running uthread is installed on its carrier: at a switch,
 *    only when the incoming uthread or the carrier's installed one has
 *    one (fx_altstack_sync: no call when neither has, the common case).
 *  - the name: PR_SET_NAME and PR_GET_NAME of a uthread are its name, the
 *    one pthread_setname_np and pthread_getname_np use (inherited at
 *    pthread_create, as the kernel does); the main uthread's also renames
 *    the process.
 * They reach here from the interposed sigaltstack (preload/signal.c), and
 * from the preload's syscall() and prctl() wrappers (preload/syscall.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "threads/rt.h"
#include "threads/ufutex.h"

#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31) /* linux/signal.h: disarmed while a handler runs on it */
#endif

/* Installs next's alternate signal stack on carrier c, or none. */
void fx_altstack_switch(struct fx_carrier *c, struct fx_uthread *next)
{
	stack_t off = { .ss_flags = SS_DISABLE };
	struct fx_uthread *want = next && next->has_altstack ? next : NULL;

	/* fails (EPERM) only while running on the installed stack: then try again at the next switch */
	if (fx_raw_syscall6(SYS_sigaltstack, (long)(want ? &want->altstack : &off), 0, 0, 0, 0, 0) == 0)
		c->alt_owner = want;
}

/*
 * sigaltstack for the running uthread: the kernel has its stack installed
 * (or none), so the kernel validates, reports SS_ONSTACK, and installs;
 * the uthread keeps what it set, for the carriers that run it next.
 */
long fx_sigaltstack(const stack_t *ss, stack_t *old)
{
	struct fx_carrier *c = fx_carrier_self();
	struct fx_uthread *u = c ? c->current : NULL;
	long r = fx_raw_syscall6(SYS_sigaltstack, (long)ss, (long)old, 0, 0, 0, 0);

	if (r || !ss || !u)
		return r;
	if (ss->ss_flags & SS_DISABLE) {
		u->has_altstack = false;
		c->alt_owner = NULL;
	} else {
		u->altstack = *ss;
		u->altstack.ss_flags &= SS_AUTODISARM;
		u->has_altstack = true;
		c->alt_owner = u;
	}
	return r;
}

/* At the runtime's start: an alternate stack the main thread already has stays the main uthread's. */
/*
 * The process's name when the runtime started: what PR_GET_NAME gives a
 * thread never named (the kernel copies the creator's name to a new
 * thread; one named hands its name on to the uthreads it creates). Not
 * the carrier's: carriers and spares other than the first are named
 * "flexsc-carrier" (fx_kstate_name_carrier).
 */
static char proc_name[16];

void fx_kstate_start(struct fx_carrier *c0, struct fx_uthread *main_u)
{
	stack_t cur;

	fx_raw_syscall6(SYS_prctl, PR_GET_NAME, (long)proc_name, 0, 0, 0, 0);
	proc_name[sizeof(proc_name) - 1] = 0;

	if (fx_raw_syscall6(SYS_sigaltstack, 0, (long)&cur, 0, 0, 0, 0) == 0 && !(cur.ss_flags & SS_DISABLE)) {
		main_u->altstack = cur;
		main_u->altstack.ss_flags &= SS_AUTODISARM;
		main_u->has_altstack = true;
		c0->alt_owner = main_u;
	}
}

static long robust_call(struct fx_carrier *c, struct fx_uthread *u, long nr, const long *a)
{
	if (nr == SYS_set_robust_list) {
		if ((size_t)a[1] != sizeof(struct robust_list_head))
			return -EINVAL;
		u->robust = (void *)a[0];
		u->robust_len = (size_t)a[1];
		return 0;
	}
	/* get_robust_list: the kernel checks the pointers (EFAULT) and other threads' ids */
	long r = fx_raw_syscall6(SYS_get_robust_list, a[0], a[1], a[2], 0, 0, 0);
	if (r == 0 && (a[0] == 0 || a[0] == c->tid)) {
		*(void **)a[1] = u->robust;
		*(size_t *)a[2] = u->robust_len;
	}
	return r;
}

/*
 * The main thread's name is also the process's (ps, /proc/PID/comm): it
 * goes to the kernel thread that started the process, whichever carrier
 * the main uthread runs on.
 */
void fx_kstate_named(struct fx_uthread *u)
{
	struct fx_carrier *c = fx_carrier_self();
	const char *name = u->name;
	char path[48];

	if (u != fx_main_uthread)
		return;
	long pid = fx_raw_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0);
	if (c && c->tid == pid) {
		fx_raw_syscall6(SYS_prctl, PR_SET_NAME, (long)name, 0, 0, 0, 0);
		return;
	}
	snprintf(path, sizeof(path), "/proc/self/task/%ld/comm", pid);
	long fd = fx_raw_syscall6(SYS_openat, AT_FDCWD, (long)path, O_WRONLY | O_CLOEXEC, 0, 0, 0);
	if (fd >= 0) {
		fx_raw_syscall6(SYS_write, fd, (long)name, (long)strlen(name), 0, 0, 0);
		fx_raw_syscall6(SYS_close, fd, 0, 0, 0, 0, 0);
	}
}

/* PR_SET_NAME, PR_GET_NAME: the uthread's name; one never named reads the process's (at the start). */
static bool name_call(struct fx_uthread *u, const long *a, long *ret)
{
	char *name = (char *)a[1];

	if (a[0] == PR_SET_NAME) {
		strncpy(u->name, name, sizeof(u->name) - 1);
		u->name[sizeof(u->name) - 1] = 0;
		fx_kstate_named(u);
		*ret = 0;
		return true;
	}
	memcpy(name, fx_kstate_name_of(u), sizeof(u->name));
	*ret = 0;
	return true;
}

const char *fx_kstate_name_of(const struct fx_uthread *u)
{
	return u->name[0] ? u->name : proc_name;
}

/*
 * The syscall() and prctl() wrappers ask first (nr SYS_prctl: a[0] is the
 * option). Returns true when the call was the uthread's state, with its
 * result (or -errno) in *ret.
 */
bool fx_kstate_call(long nr, const long *a, long *ret)
{
	struct fx_carrier *c = fx_carrier_self();
	struct fx_uthread *u = c ? c->current : NULL;

	if (!u || c->in_rt)
		return false;
	switch (nr) {
	case SYS_set_robust_list:
	case SYS_get_robust_list:
		if (!fx_uthread_own_robust(u))
			return false; /* glibc's layout unknown: as before */
		*ret = robust_call(c, u, nr, a);
		return true;
	case SYS_sigaltstack:
		*ret = fx_sigaltstack((const stack_t *)a[0], (stack_t *)a[1]);
		return true;
	case SYS_prctl:
		if (a[0] != PR_SET_NAME && a[0] != PR_GET_NAME)
			return false;
		return name_call(u, a, ret);
	case SYS_futex:
		return !fx_in_handler(c) && fx_ufutex_call(a, ret);
	}
	return false;
}

/*
 * A carrier's kernel thread is named for what it is: a carrier of the
 * runtime ("flexsc-carrier", as its syscall threads are "flexsc-sys"), so
 * that the program's own kernel threads can be told from the runtime's in
 * /proc/PID/task/\*\/comm. An exclusive carrier is the program's thread (it
 * runs one uthread and ends with it): the process's name.
 */
void fx_kstate_name_carrier(const struct fx_carrier *c)
{
	const char *name = c->own ? proc_name : "flexsc-carrier";

	fx_raw_syscall6(SYS_prctl, PR_SET_NAME, (long)name, 0, 0, 0, 0);
}

void fx_kstate_name_forked(const struct fx_uthread *self)
{
	fx_raw_syscall6(SYS_prctl, PR_SET_NAME, (long)(self->name[0] ? self->name : proc_name), 0, 0, 0, 0);
}
