/*
 * Conformance: signal masks and synchronous waits in threads (POSIX
 * pthread_sigmask, sigpending, sigwait, sigwaitinfo, sigtimedwait,
 * sigqueue, pthread_kill), what signals.c and signals_wait.c do not
 * already show:
 *   1. pthread_sigmask: an invalid how is EINVAL (the mask unchanged);
 *      SIGKILL and SIGSTOP cannot be blocked (silently left out);
 *   2. a new thread starts with its creator's mask: a thread that blocks
 *      SIGUSR1 and creates another, whose mask then has SIGUSR1 and not
 *      SIGUSR2; main's own mask is unchanged by either;
 *   3. sigpending is per thread for thread-directed signals: pthread_kill
 *      of SIGUSR1 to a thread that blocks it shows in that thread's
 *      sigpending, not in main's (which blocks it too); a process-directed
 *      SIGUSR2 (kill) that every thread blocks shows in both;
 *   4. that thread's sigtimedwait takes its SIGUSR1, main's the SIGUSR2
 *      (the siginfo of signals that were pending, and how they coalesce
 *      or queue: posix_sigqueue.c);
 *   5. sigtimedwait with a zero timeout and nothing pending: EAGAIN at
 *      once; with a pending signal: that signal;
 *   6. sigwait in a thread for a signal pthread_kill sends to it (from
 *      main, every 10 ms until taken): it gets it; sigwait returns the
 *      number, not -1/errno.
 * Every wait is bounded. Deterministic output; exit 0 when every check held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#define CHECK_NAME "posix_sigmask"
#include "check.h"

static void masks(void)
{
	sigset_t all, cur, old;

	pthread_sigmask(SIG_SETMASK, NULL, &old);
	sigfillset(&all);
	result_err("pthread_sigmask(99): EINVAL", pthread_sigmask(99, &all, NULL), EINVAL);
	pthread_sigmask(SIG_SETMASK, NULL, &cur);
	result("... the mask unchanged", !sigismember(&cur, SIGUSR2) && !sigismember(&cur, SIGTERM));
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_sigmask(SIG_SETMASK, NULL, &cur);
	result("blocking all leaves SIGKILL and SIGSTOP out",
	       !sigismember(&cur, SIGKILL) && !sigismember(&cur, SIGSTOP) && sigismember(&cur, SIGTERM));
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void *report_mask(void *arg)
{
	sigset_t cur;

	(void)arg;
	pthread_sigmask(SIG_SETMASK, NULL, &cur);
	return (void *)(long)(sigismember(&cur, SIGUSR1) | sigismember(&cur, SIGUSR2) << 1);
}

static void *block_then_create(void *arg)
{
	sigset_t s = sigset_of(SIGUSR1);
	void *r;

	(void)arg;
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	pthread_join(spawn(report_mask, NULL), &r);
	return r;
}

static void inheritance(void)
{
	void *r;
	sigset_t cur;

	pthread_join(spawn(block_then_create, NULL), &r);
	result("a new thread has its creator's mask (SIGUSR1, not SIGUSR2)", (long)r == 1);
	pthread_sigmask(SIG_SETMASK, NULL, &cur);
	result("main's mask is unchanged", !sigismember(&cur, SIGUSR1));
	pthread_join(spawn(report_mask, NULL), &r);
	result("a thread main creates has main's mask", (long)r == 0);
}

static atomic_int stage;
static int t_pending_usr1, t_pending_usr2, t_sig;

static void *pending_thread(void *arg)
{
	sigset_t set, pend;
	siginfo_t info;
	struct timespec ts = { 10, 0 };

	(void)arg;
	atomic_store(&stage, 1);
	while (atomic_load(&stage) < 2)
		sleep_ms(1);
	sigpending(&pend);
	t_pending_usr1 = sigismember(&pend, SIGUSR1);
	t_pending_usr2 = sigismember(&pend, SIGUSR2);
	set = sigset_of(SIGUSR1);
	t_sig = sigtimedwait(&set, &info, &ts);
	return NULL;
}

static void pending(void)
{
	sigset_t pend, set;
	siginfo_t info;
	struct timespec ts = { 10, 0 };

	pthread_t t = spawn(pending_thread, NULL);

	while (atomic_load(&stage) < 1)
		sleep_ms(1);
	pthread_kill(t, SIGUSR1);
	kill(getpid(), SIGUSR2);
	sleep_ms(20);
	sigpending(&pend);
	result("main's sigpending: not the other thread's SIGUSR1", !sigismember(&pend, SIGUSR1));
	result("main's sigpending: the process-directed SIGUSR2", sigismember(&pend, SIGUSR2));
	atomic_store(&stage, 2);
	pthread_join(t, NULL);
	result("the thread's sigpending: its SIGUSR1 and the process's SIGUSR2", t_pending_usr1 && t_pending_usr2);
	result("the thread's sigtimedwait takes its SIGUSR1", t_sig == SIGUSR1);
	set = sigset_of(SIGUSR2);
	memset(&info, 0, sizeof info);
	int sig = sigtimedwait(&set, &info, &ts);

	result("main's sigtimedwait takes the SIGUSR2", sig == SIGUSR2);
}

static void zero_timeout(void)
{
	sigset_t set = sigset_of(SIGUSR2);
	struct timespec zero = { 0, 0 }, t0, t1;
	siginfo_t info;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	errno = 0;
	int r = sigtimedwait(&set, &info, &zero);
	int err = errno;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	result_err("sigtimedwait, zero timeout, nothing pending: EAGAIN", r == -1 ? err : 0, EAGAIN);
	result("... at once (under 1 s)", ms_between(t0, t1) < 1000);
	raise(SIGUSR2);
	result("sigtimedwait, zero timeout, SIGUSR2 pending: SIGUSR2", sigtimedwait(&set, &info, &zero) == SIGUSR2);
}

static atomic_int waited;

static void *sigwaiter(void *arg)
{
	sigset_t set = sigset_of(SIGUSR2);
	int sig = 0;

	(void)arg;
	int r = sigwait(&set, &sig);

	atomic_store(&waited, 1);
	return (void *)(long)(r == 0 && sig == SIGUSR2);
}

static void thread_sigwait(void)
{
	pthread_t t = spawn(sigwaiter, NULL);
	void *r;

	for (int i = 0; i < 500 && !atomic_load(&waited); i++) {
		pthread_kill(t, SIGUSR2);
		sleep_ms(10);
	}
	pthread_join(t, &r);
	result("sigwait in a thread takes the SIGUSR2 sent to it, returns 0 and the number", r != NULL);
	/* any extra SIGUSR2 sent before it noticed died with it, or is pending on it: gone */
}

int main(void)
{
	sigset_t block;

	alarm(60);
	masks();
	inheritance();
	/* from here on every thread blocks the signals it waits for */
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &block, NULL);
	pending();
	zero_timeout();
	thread_sigwait();
	return failed;
}
