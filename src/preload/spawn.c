/* SPDX-License-Identifier: MIT */
/*
 * posix_spawn, posix_spawnp, popen and pclose: the libc calls
 * that make a child inside glibc, or wait for one there.
 *
 * glibc makes their children with clone(CLONE_VM | CLONE_VFORK) of its
 * own, which the preload's vfork and clone never see, and the kernel
 * suspends the calling kernel thread until the child execs: made on a
 * carrier, every uthread of that carrier stopped with it (with one
 * carrier, the program). A uthread's call in flight on that carrier stayed
 * unreaped the whole time, since the monitor's poke cannot interrupt the
 * vfork wait (it is killable only): a child whose file actions wait for
 * another uthread of that carrier (its poll on a FIFO the child opens and
 * closes, in flight there) never got past them.
 * pclose also waits for the child in a waitpid inside glibc, blocking
 * the carrier for the child's whole life until the monitor hands its
 * core over. So:
 *   - posix_spawn, posix_spawnp, popen and pclose run whole on a kernel
 *     thread of the uthread's own (fx_kthread_enter, src/threads/sched.c,
 *     as vfork does), which the kernel suspends instead of the carrier.
 *     That thread takes the uthread's signal mask for the call (it blocks
 *     every signal otherwise): glibc gives a child the mask of the thread
 *     that spawns it, and a signal the uthread accepts may run its handler
 *     there meanwhile, as it may on NPTL's thread in the same call.
 * Anywhere else (no runtime, the runtime itself, a thread that is not a
 * uthread, a signal handler) each is libc's, unchanged.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/syscall.h>

#include "preload/real.h"

/* The calling uthread onto a kernel thread of its own, with its signal mask; NULL: stays where it is. */
static void *kthread_begin(void)
{
	void *h = fx_rt_active ? fx_kthread_enter() : NULL;

	if (h)
		fx_raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)fx_kthread_mask(h), 0, 8, 0, 0);
	return h;
}

/* Back to a carrier; the kernel thread blocks every signal again, errno stays the call's. */
static void kthread_end(void *h)
{
	uint64_t all = ~0ull;
	int err = errno;

	if (!h)
		return;
	fx_raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, 0, 8, 0, 0);
	fx_kthread_leave(h);
	errno = err;
}

FX_PUBLIC int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	void *h = kthread_begin();
	int r = REAL(posix_spawn)(pid, path, fa, attr, argv, envp);

	kthread_end(h);
	return r;
}

FX_PUBLIC int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	void *h = kthread_begin();
	int r = REAL(posix_spawnp)(pid, file, fa, attr, argv, envp);

	kthread_end(h);
	return r;
}

FX_PUBLIC FILE *popen(const char *command, const char *mode)
{
	void *h = kthread_begin();
	FILE *f = REAL(popen)(command, mode);

	kthread_end(h);
	return f;
}

/* glibc 2.36's waits with cancellation disabled: no cancellation point, here either */
FX_PUBLIC int pclose(FILE *f)
{
	void *h = kthread_begin();
	int r = REAL(pclose)(f);

	kthread_end(h);
	return r;
}
