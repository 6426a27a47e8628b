/* SPDX-License-Identifier: MIT */
/*
 * syscall(), prctl() and the calls that give a thread an identity of its
 * own.
 *
 * syscall() and prctl() are the generic entries through which a program
 * reaches per-thread kernel state that the runtime keeps per uthread
 * (threads/kstate.c: the robust list, the alternate signal stack, the
 * thread's name, futexes), and the blocking calls src/preload/io.c makes
 * exception-less, posted the same way (fx_io_syscall), so that a call
 * made through syscall() does not block the carrier; execve and execveat
 * go through the exec family's wrappers (preload/exec.c). Everything else
 * (clone, vfork, exit, rt_sigreturn, calls with a signal mask...) goes
 * to the kernel unchanged.
 *
 * Per-thread identity: credentials changed with the raw system call
 * (glibc's set*id functions are process-wide: preload/setxid.c),
 * setfsuid, capset, a seccomp filter without TSYNC, no_new_privs, the
 * capability bounding and ambient sets, securebits, unshare, setns and
 * personality are the kernel thread's. Made on a carrier, they would be
 * the carrier's: every uthread that runs there next would have them, and
 * the uthread that made them would lose them when it moves. So the uthread
 * first gets a kernel thread of its own for the rest of its life
 * (fx_rt_bind), and makes the change there. A change made with an inline
 * system call instruction is not seen (docs/threads.md).
 *
 * The runtime's own threads start when first needed, and a sandbox may
 * forbid them by then: a seccomp filter that kills the process at clone,
 * an RLIMIT_NPROC of 0 that fails it (OpenSSH's pre-auth child sets both,
 * then waits in poll and sleeps). So before either, the signal thread,
 * the one a process of one uthread may still need, starts
 * (before_sandbox); the others are not needed there (its calls run on
 * its carrier: a filtered caller's always, src/core/identity.c).
 */
#define _GNU_SOURCE
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/fsuid.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "core/fence.h"
#include "preload/real.h"
#include "threads/signals.h"

/* Whether prctl's option changes the calling thread's identity only. */
static bool prctl_own_identity(long option)
{
	switch (option) {
	case PR_SET_SECCOMP: case PR_SET_NO_NEW_PRIVS: case PR_CAPBSET_DROP:
	case PR_SET_SECUREBITS: case PR_CAP_AMBIENT: case PR_SET_KEEPCAPS:
		return true;
	}
	return false;
}

/* Whether system call nr, with these arguments, changes the calling thread's identity only. */
static bool own_identity(long nr, const long *a)
{
	switch (nr) {
	case SYS_setuid: case SYS_setgid: case SYS_setreuid: case SYS_setregid:
	case SYS_setresuid: case SYS_setresgid: case SYS_setfsuid: case SYS_setfsgid:
	case SYS_setgroups: case SYS_capset: case SYS_unshare: case SYS_setns:
		return true;
	case SYS_personality:
		return (unsigned)a[0] != 0xffffffff; /* that one only asks */
	case SYS_seccomp: /* with TSYNC it is every thread's: the kernel sees to the carriers */
		return a[0] == SECCOMP_SET_MODE_STRICT ||
		       (a[0] == SECCOMP_SET_MODE_FILTER && !(a[1] & SECCOMP_FILTER_FLAG_TSYNC));
	case SYS_prctl:
		return prctl_own_identity(a[0]);
	}
	return false;
}

/* Whether call nr installs a seccomp filter (or strict mode). */
static bool installs_filter(long nr, const long *a)
{
	return (nr == SYS_seccomp && (a[0] == SECCOMP_SET_MODE_STRICT || a[0] == SECCOMP_SET_MODE_FILTER)) ||
	       (nr == SYS_prctl && a[0] == PR_SET_SECCOMP);
}

/*
 * Whether an RLIMIT_NPROC of *rl may forbid a clone the caller could make
 * now: a finite soft limit lower than the current one, for a caller the
 * kernel holds to it (not real uid 0: root's clones pass it). Raising it,
 * RLIM_INFINITY, root's calls start no thread: one would make a later
 * unshare(CLONE_NEWUSER), which wants a process of one thread, fail.
 */
static bool nproc_lowered(const struct rlimit *rl)
{
	struct rlimit now;

	if (!fx_mem_r_ok(rl, sizeof(*rl)) || rl->rlim_cur == RLIM_INFINITY || getuid() == 0)
		return false;
	return fx_raw_syscall6(SYS_prlimit64, 0, RLIMIT_NPROC, 0, (long)&now, 0, 0) == 0 && rl->rlim_cur < now.rlim_cur;
}

/* Whether call nr installs a seccomp filter, or lowers the limit on the process count. */
static bool sandboxes(long nr, const long *a)
{
	switch (nr) {
	case SYS_seccomp:
	case SYS_prctl:
		return installs_filter(nr, a);
	case SYS_setrlimit:
		return a[0] == RLIMIT_NPROC && nproc_lowered((const struct rlimit *)a[1]);
	case SYS_prlimit64:
		return a[1] == RLIMIT_NPROC && (a[0] == 0 || a[0] == getpid()) &&
		       nproc_lowered((const struct rlimit *)a[2]);
	}
	return false;
}

/*
 * Before a sandbox closes: the runtime's threads that it could forbid
 * later (the signal thread, the other carriers, and the monitor, whose
 * second signal is what ends a call run in place when the first landed
 * just before the call: without it, a sealed child's read hung in about
 * one run of eight of seccomp_membarrier); and no more membarrier, which
 * the filter may forbid (a thread that sends a signal or a cancel would
 * call it: core/fence.h).
 */
static void before_sandbox(long nr, const long *a)
{
	if (!fx_rt_active || !sandboxes(nr, a))
		return;
	fx_rt_start_carriers(); /* and the signal thread */
	if (installs_filter(nr, a))
		fx_fence_stop_asym();
}

/*
 * Before a change of the caller's own identity: a kernel thread of its
 * own. 0, or -errno when it has none and others share its carrier: made
 * there, the change would be theirs too, so the call fails instead (with
 * the reason the kernel thread could not be made: EAGAIN, EPERM under the
 * program's own filter, EINTR in a handler).
 */
static long bind_for(long nr, const long *a)
{
	before_sandbox(nr, a);
	if (!fx_rt_active || !own_identity(nr, a))
		return 0;
	int err = fx_rt_bind(installs_filter(nr, a));
	return err && atomic_load(&fx_rt_live_uthreads) > 1 ? err : 0;
}

/* After call nr returned r: a filter it installed may forbid the runtime's clones from now on. */
static void after_call(long nr, const long *a, long r)
{
	if (fx_rt_active && r >= 0 && installs_filter(nr, a))
		fx_rt_note_filter(nr == SYS_seccomp && a[0] == SECCOMP_SET_MODE_FILTER &&
				  (a[1] & SECCOMP_FILTER_FLAG_TSYNC));
}

FX_EXPORT long syscall(long nr, ...)
{
	va_list ap;
	long a[6], r;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (fx_fd_guarded(nr, a, &r)) /* close, dup2... on one of the library's own descriptors */
		return fx_libc_ret(r);
	/* the new image gets the CPUs and mask an exec through libc gives it (src/preload/exec.c) */
	if (nr == SYS_execve)
		return execve((const char *)a[0], (char *const *)a[1], (char *const *)a[2]);
	if (nr == SYS_execveat)
		return execveat((int)a[0], (const char *)a[1], (char *const *)a[2], (char *const *)a[3], (int)a[4]);
	if (fx_rt_active && fx_io_syscall(nr, a, &r))
		return r;
	r = bind_for(nr, a);
	if (r)
		return fx_libc_ret(r);
	if (!fx_rt_active || !fx_kstate_call(nr, a, &r)) {
		r = fx_raw_syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		after_call(nr, a, r);
		/* descriptor facts (core/fdfacts.c): what it made, closed or changed */
		fx_fd_made(nr, (const uint64_t *)a, r);
		if (nr == SYS_close || nr == SYS_close_range || nr == SYS_dup2 || nr == SYS_dup3)
			fx_fd_changed();
		/* as signalfd() (core/fdfacts.c): made, so the kernel read the mask */
		if (fx_rt_active && r >= 0 && (nr == SYS_signalfd || nr == SYS_signalfd4))
			fx_sig_for_signalfd(*(const uint64_t *)a[1]);
	}
	return fx_libc_ret(r);
}

FX_EXPORT int prctl(int option, ...)
{
	va_list ap;
	long a[5] = { option }, r;

	va_start(ap, option);
	for (int i = 1; i < 5; i++)
		a[i] = (long)va_arg(ap, unsigned long);
	va_end(ap);
	r = bind_for(SYS_prctl, a);
	if (r)
		return (int)fx_libc_ret(r);
	if (!fx_rt_active || !fx_kstate_call(SYS_prctl, a, &r)) {
		r = fx_raw_syscall6(SYS_prctl, a[0], a[1], a[2], a[3], a[4], 0);
		after_call(SYS_prctl, a, r);
	}
	return (int)fx_libc_ret(r);
}

/* The libc functions that change only the calling thread's identity: bound first. */
FX_EXPORT int setfsuid(uid_t fsuid)
{
	/* no error to report: a change not made returns the current id, as the call does */
	return REAL(setfsuid)(bind_for(SYS_setfsuid, (long[6]){ 0 }) ? (uid_t)-1 : fsuid);
}

FX_EXPORT int setfsgid(gid_t fsgid)
{
	return REAL(setfsgid)(bind_for(SYS_setfsgid, (long[6]){ 0 }) ? (gid_t)-1 : fsgid);
}

FX_EXPORT int capset(cap_user_header_t hdr, const cap_user_data_t data)
{
	long err = bind_for(SYS_capset, (long[6]){ 0 });
	return err ? (int)fx_libc_ret(err) : REAL(capset)(hdr, data);
}

FX_EXPORT int unshare(int flags)
{
	long err = bind_for(SYS_unshare, (long[6]){ 0 });
	return err ? (int)fx_libc_ret(err) : REAL(unshare)(flags);
}

FX_EXPORT int setns(int fd, int nstype)
{
	long err = bind_for(SYS_setns, (long[6]){ 0 });
	return err ? (int)fx_libc_ret(err) : REAL(setns)(fd, nstype);
}

FX_EXPORT int personality(unsigned long persona)
{
	long err = bind_for(SYS_personality, (long[6]){ (long)persona });
	return err ? (int)fx_libc_ret(err) : REAL(personality)(persona);
}

/* Resource limits: the process count's may forbid the runtime's threads later (before_sandbox). */
FX_EXPORT int setrlimit(__rlimit_resource_t resource, const struct rlimit *rlim)
{
	return prlimit(0, resource, rlim, NULL);
}

FX_EXPORT int setrlimit64(__rlimit_resource_t resource, const struct rlimit64 *rlim)
{
	return prlimit(0, resource, (const struct rlimit *)rlim, NULL);
}

FX_EXPORT int prlimit(pid_t pid, __rlimit_resource_t resource, const struct rlimit *rlim,
		      struct rlimit *old)
{
	before_sandbox(SYS_prlimit64, (long[6]){ pid, resource, (long)rlim });
	return (int)fx_libc_ret(fx_raw_syscall6(SYS_prlimit64, pid, resource, (long)rlim, (long)old, 0, 0));
}

FX_EXPORT int prlimit64(pid_t pid, __rlimit_resource_t resource, const struct rlimit64 *rlim,
			struct rlimit64 *old)
{
	return prlimit(pid, resource, (const struct rlimit *)rlim, (struct rlimit *)old);
}
