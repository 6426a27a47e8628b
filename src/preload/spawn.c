/* SPDX-License-Identifier: MIT */
/*
 * posix_spawn, posix_spawnp, system, popen and pclose: the libc calls
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
 * pclose, and system before this file, also wait for the child in a
 * waitpid inside glibc, blocking the carrier for the child's whole life
 * until the monitor hands its core over. So:
 *   - posix_spawn, posix_spawnp, popen and pclose run whole on a kernel
 *     thread of the uthread's own (fx_kthread_enter, src/threads/sched.c,
 *     as vfork does), which the kernel suspends instead of the carrier.
 *     That thread takes the uthread's signal mask for the call (it blocks
 *     every signal otherwise): glibc gives a child the mask of the thread
 *     that spawns it, and a signal the uthread accepts may run its handler
 *     there meanwhile, as it may on NPTL's thread in the same call;
 *   - system is glibc 2.36's, step for step, over the interposed calls:
 *     SIGINT and SIGQUIT ignored while any system() runs (counted, so the
 *     last one puts them back), SIGCHLD blocked in the uthread's mask, the
 *     shell spawned as above with the old mask and those two signals
 *     reset to their default unless they were ignored, and the wait an
 *     exception-less wait4, a cancellation point: a thread cancelled in
 *     it kills the child with SIGKILL, reaps it and puts the signals back
 *     (its cleanup handler), as glibc's does. glibc's own system would
 *     wait where the runtime cannot see or cancel the wait.
 * Anywhere else (no runtime, the runtime itself, a thread that is not a
 * uthread, a signal handler) each is libc's, unchanged.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "preload/cancel.h"
#include "preload/real.h"

extern char **environ;

/* The calling uthread onto a kernel thread of its own, with its signal mask; NULL: stays where it is. */
static void *kthread_begin(void)
{
	void *h = fx_rt_active ? fx_kthread_enter() : NULL;

	if (h)
		fx_raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)fx_kthread_mask(h), 0, 8, 0, 0);
	return h;
}

/* Back to a carrier (the kernel thread takes its idle mask again); errno stays the call's. */
static void kthread_end(void *h)
{
	int err = errno;

	fx_kthread_leave(h);
	errno = err;
}

FX_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	void *h = kthread_begin();
	int r = REAL(posix_spawn)(pid, path, fa, attr, argv, envp);

	kthread_end(h);
	return r;
}

FX_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	void *h = kthread_begin();
	int r = REAL(posix_spawnp)(pid, file, fa, attr, argv, envp);

	kthread_end(h);
	return r;
}

FX_EXPORT FILE *popen(const char *command, const char *mode)
{
	void *h = kthread_begin();
	FILE *f = REAL(popen)(command, mode);

	kthread_end(h);
	return f;
}

/* glibc 2.36's waits with cancellation disabled: no cancellation point, here either */
FX_EXPORT int pclose(FILE *f)
{
	void *h = kthread_begin();
	int r = REAL(pclose)(f);

	kthread_end(h);
	return r;
}

/* ---- system ---- */

/* SIGINT and SIGQUIT as they were before the first of the system() calls now running */
static pthread_mutex_t shell_lock = PTHREAD_MUTEX_INITIALIZER;
static int shell_users;
static struct sigaction shell_intr, shell_quit;

/* The last system() to end puts SIGINT and SIGQUIT back. */
static void shell_signals_restore(void)
{
	pthread_mutex_lock(&shell_lock);
	if (--shell_users == 0) {
		sigaction(SIGINT, &shell_intr, NULL);
		sigaction(SIGQUIT, &shell_quit, NULL);
	}
	pthread_mutex_unlock(&shell_lock);
}

/* wait4(pid, status, 0) exception-less; -errno. A cancellation point when cancellable. */
static long wait_child(pid_t pid, int *status, bool cancellable)
{
	uint64_t a[4] = { (uint64_t)pid, (uint64_t)(uintptr_t)status, 0, 0 };
	long r;

	if (cancellable)
		fx_testcancel();
	r = fx_rt_syscall(SYS_wait4, 4, a);
	if (cancellable)
		fx_testcancel(); /* cancelled in flight: the call came back -ECANCELED */
	return r;
}

/* The thread was cancelled waiting: the child goes too (glibc's cancel_handler). */
static void shell_cancelled(void *arg)
{
	pid_t pid = *(pid_t *)arg;
	int state;

	fx_raw_syscall6(SYS_kill, pid, SIGKILL, 0, 0, 0, 0);
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
	long r;
	do
		r = wait_child(pid, NULL, false);
	while (r == -EINTR || r == -ECANCELED);
	pthread_setcancelstate(state, NULL);
	shell_signals_restore();
}

static int shell(const char *line)
{
	struct sigaction ign = { .sa_handler = SIG_IGN };
	sigset_t chld, omask, reset;
	posix_spawnattr_t attr;
	int status = -1;
	pid_t pid;

	sigemptyset(&ign.sa_mask);
	sigemptyset(&reset);
	pthread_mutex_lock(&shell_lock);
	if (shell_users++ == 0) {
		sigaction(SIGINT, &ign, &shell_intr);
		sigaction(SIGQUIT, &ign, &shell_quit);
	}
	if (shell_intr.sa_handler != SIG_IGN)
		sigaddset(&reset, SIGINT);
	if (shell_quit.sa_handler != SIG_IGN)
		sigaddset(&reset, SIGQUIT);
	pthread_mutex_unlock(&shell_lock);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, &omask);

	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &omask);
	posix_spawnattr_setsigdefault(&attr, &reset);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	int err = posix_spawn(&pid, "/bin/sh", NULL, &attr,
			      (char *const[]){ "sh", "-c", "--", (char *)line, NULL }, environ);
	posix_spawnattr_destroy(&attr);

	if (err == 0) {
		long r;
		pthread_cleanup_push(shell_cancelled, &pid);
		while ((r = wait_child(pid, &status, true)) == -EINTR)
			;
		if (r != pid) {
			status = -1;
			if (r < 0)
				errno = (int)-r;
		}
		pthread_cleanup_pop(0);
	} else {
		status = W_EXITCODE(127, 0); /* POSIX: as if the shell had exited with 127 */
	}
	shell_signals_restore();
	pthread_sigmask(SIG_SETMASK, &omask, NULL);
	if (err)
		errno = err;
	return status;
}

FX_EXPORT int system(const char *line)
{
	if (!fx_on_uthread())
		return REAL(system)(line);
	if (!line)
		return shell("exit 0") == 0; /* is there a shell at all (after a chroot, maybe not) */
	return shell(line);
}
