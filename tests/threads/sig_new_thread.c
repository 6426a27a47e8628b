/*
 * Signal masks and pending signals across pthread_create (POSIX
 * pthread_create: the new thread inherits the creator's mask and has no
 * pending signals of its own).
 *   1. main blocks SIGUSR1 and raise()s it: pending for main (thread-
 *      directed); a new thread has main's mask, does not see SIGUSR1
 *      pending, and unblocking it there runs no handler; main still has it
 *      pending and its handler runs on main when main unblocks it;
 *   2. main blocks SIGUSR2 and kill()s the process: pending for the
 *      process; a new thread sees it pending, and it is delivered to that
 *      thread when the thread unblocks it (main still blocks it).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#define CHECK_NAME "sig_new_thread"
#include "check.h"

static __thread volatile sig_atomic_t tls_usr1, tls_usr2;

static void handler(int sig)
{
	if (sig == SIGUSR1)
		tls_usr1++;
	else
		tls_usr2++;
}

static void *child1(void *arg)
{
	int *res = arg;
	sigset_t mask, pend, one;

	pthread_sigmask(SIG_SETMASK, NULL, &mask);
	res[0] = sigismember(&mask, SIGUSR1) == 1; /* the creator's mask */
	sigpending(&pend);
	res[1] = sigismember(&pend, SIGUSR1) == 0; /* main's, not this thread's */
	one = sigset_of(SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	sleep_ms(20);
	res[2] = tls_usr1 == 0; /* main's signal stays with main */
	return NULL;
}

static void *child2(void *arg)
{
	int *res = arg;
	sigset_t pend, one;

	for (int i = 0; i < 5000; i++) { /* kill returned: pending at once, or soon */
		sigpending(&pend);
		if (sigismember(&pend, SIGUSR2) == 1)
			break;
		sleep_ms(1);
	}
	res[0] = sigismember(&pend, SIGUSR2) == 1; /* the process's */
	one = sigset_of(SIGUSR2);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	for (int i = 0; i < 5000 && !tls_usr2; i++)
		sleep_ms(1);
	res[1] = tls_usr2 == 1; /* delivered here, where it is unblocked */
	return NULL;
}

int main(void)
{
	sigset_t both, pend;
	int r1[3] = { 0 }, r2[2] = { 0 };

	on_signal(SIGUSR1, handler, 0);
	on_signal(SIGUSR2, handler, 0);
	both = sigset_of(SIGUSR1);
	sigaddset(&both, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &both, NULL);

	raise(SIGUSR1);
	pthread_t t = spawn(child1, r1);
	pthread_join(t, NULL);
	result("a new thread starts with its creator's mask", r1[0]);
	result("a signal raised by main is not pending in a new thread", r1[1]);
	result("nor delivered there when it unblocks it", r1[2]);
	sigpending(&pend);
	result("it is still pending for main", sigismember(&pend, SIGUSR1) == 1);
	sigset_t one = sigset_of(SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	result("and delivered to main when main unblocks it", tls_usr1 == 1);

	kill(getpid(), SIGUSR2);
	t = spawn(child2, r2);
	pthread_join(t, NULL);
	result("a process-directed signal pending is seen by a new thread", r2[0]);
	result("and delivered to the thread that unblocks it", r2[1] && tls_usr2 == 0);
	return failed;
}
