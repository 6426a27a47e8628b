/*
 * A signal handler may send a signal to another thread: pthread_kill is
 * async-signal-safe (POSIX), so a handler may call it whatever the thread
 * it interrupted was doing, also inside pthread_kill, pthread_sigmask or
 * sigpending themselves.
 *
 * A busy thread does nothing but those calls (pthread_kill of SIGUSR2 to
 * main, which blocks it; SIGUSR1 blocked and unblocked; sigpending) while
 * an interval timer sends SIGALRM to the process every 50 us; the busy
 * thread is the only one that accepts SIGALRM, and its handler sends
 * SIGUSR2 to main with pthread_kill. The busy thread stops after a fixed
 * number of rounds. Every handler run must return: a child process
 * watches, and kills the process (SIGKILL: the exit status then differs
 * from the plain run's) when it has not finished within 30 s.
 *
 * Under flexsc-run the runtime's signal lock was taken with signals
 * unblocked: a handler that interrupted its thread while that held the
 * lock spun on it for ever in its own pthread_kill (and the signal
 * thread with it).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK_NAME "sig_handler_kill"
#include "check.h"

#define ROUNDS 200000
#define WATCH_MS 30000

static pthread_t main_thread;
static _Atomic long handled, kill_errors;

static void on_alarm(int sig)
{
	(void)sig;
	if (pthread_kill(main_thread, SIGUSR2))
		atomic_fetch_add(&kill_errors, 1);
	atomic_fetch_add(&handled, 1);
}

static void *busy(void *arg)
{
	sigset_t alrm, usr1, pend;

	(void)arg;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
	for (long i = 0; i < ROUNDS; i++) {
		if (pthread_kill(main_thread, SIGUSR2))
			atomic_fetch_add(&kill_errors, 1);
		pthread_sigmask(SIG_BLOCK, &usr1, NULL);
		pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
		sigpending(&pend);
	}
	/* a few more handler runs, for the check: the timer still runs */
	while (atomic_load(&handled) == 0)
		sigpending(&pend);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	sigset_t set;
	pid_t watchdog;
	int watched = hang_watchdog(WATCH_MS, &watchdog);

	main_thread = pthread_self();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* the busy thread unblocks SIGALRM */

	struct itimerval it = { { 0, 50 }, { 0, 50 } };
	setitimer(ITIMER_REAL, &it, NULL);
	pthread_t t = spawn(busy, NULL);
	pthread_join(t, NULL);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);

	result("every handler returned", 1);
	result("the handler ran on the busy thread", atomic_load(&handled) > 0);
	result("pthread_kill succeeded, in and out of the handler", atomic_load(&kill_errors) == 0);
	sigemptyset(&set);
	sigpending(&set);
	result("SIGUSR2 pending for main", sigismember(&set, SIGUSR2) == 1);

	hang_watchdog_end(watched, watchdog);
	return failed;
}
