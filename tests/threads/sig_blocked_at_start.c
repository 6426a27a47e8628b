/*
 * A process-directed signal that every thread blocks stays pending
 * (signal(7)), in the moment the process's first threads start too.
 * Twenty forked children each: create a thread (main's mask empty) that
 * starts with every signal blocked (pthread_attr_setsigmask_np, glibc
 * 2.32) and waits on a pipe, block SIGUSR2 in main at once, send SIGUSR2
 * to the process, and take it with sigtimedwait (5 s).
 * Each child must exit 0, none killed by SIGUSR2 (its default action).
 * Under FlexSC-Threads the new thread started with main's mask (the
 * attribute's was not read), and the first pthread_create starts the
 * other carriers, each with its maker's mask (main's, empty) kept until
 * its first idle sleep: the signal found one accepting and killed the
 * process (1 run in 20 of posix_sigmask under load).
 */
#define _GNU_SOURCE
#include <signal.h>

#define CHECK_NAME "sig_blocked_at_start"
#include "check.h"

static int p[2];

static void *waiter(void *arg)
{
	char c;

	while (read(p[0], &c, 1) < 0 && errno == EINTR)
		;
	return arg;
}

static int child(void)
{
	sigset_t usr2 = sigset_of(SIGUSR2);
	struct timespec five = { 5, 0 };
	siginfo_t info;
	pthread_attr_t attr;
	sigset_t all;
	pthread_t t;

	sigfillset(&all);
	pthread_attr_init(&attr);
	if (pipe(p) || pthread_attr_setsigmask_np(&attr, &all) || pthread_create(&t, &attr, waiter, NULL))
		return 2;
	pthread_sigmask(SIG_BLOCK, &usr2, NULL);
	kill(getpid(), SIGUSR2);
	int sig = sigtimedwait(&usr2, &info, &five);
	if (write(p[1], "x", 1) != 1)
		return 3;
	pthread_join(t, NULL);
	return sig == SIGUSR2 ? 0 : 4;
}

int main(void)
{
	int killed = 0, other = 0;

	for (int i = 0; i < 20; i++) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0)
			_exit(child());
		int st = wait_bounded(pid, 10000);
		if (WIFSIGNALED(st) && WTERMSIG(st) == SIGUSR2)
			killed++;
		else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			other++;
	}
	resultf(killed == 0, "no child killed by the SIGUSR2 every thread blocked (%d of 20)", killed);
	resultf(other == 0, "every child took it with sigtimedwait and exited 0 (%d did not)", other);
	return failed;
}
