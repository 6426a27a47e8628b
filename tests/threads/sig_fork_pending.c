/*
 * A fork child starts with no signal pending (fork(2): "the child's set
 * of pending signals is initially empty"); the parent keeps its own.
 *
 * Main blocks SIGUSR1 and SIGRTMIN+3, sends itself one SIGUSR1 and three
 * SIGRTMIN+3 with pthread_kill, and forks. The child must see neither
 * pending and run no handler when it unblocks them; the parent, after
 * the child, must still see both pending and run the handlers once for
 * SIGUSR1 and three times for SIGRTMIN+3.
 *
 * Under flexsc-run the signals pending on the forking thread in the
 * runtime stayed pending in the child, and it ran their handlers.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK_NAME "sig_fork_pending"
#include "check.h"

static volatile sig_atomic_t usr1, rt;

static void on_usr1(int sig)
{
	(void)sig;
	usr1++;
}

static void on_rt(int sig)
{
	(void)sig;
	rt++;
}

int main(void)
{
	struct sigaction sa;
	sigset_t both, pend;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_rt;
	sigaction(SIGRTMIN + 3, &sa, NULL);
	sigemptyset(&both);
	sigaddset(&both, SIGUSR1);
	sigaddset(&both, SIGRTMIN + 3);
	pthread_sigmask(SIG_BLOCK, &both, NULL);
	pthread_kill(pthread_self(), SIGUSR1);
	for (int i = 0; i < 3; i++)
		pthread_kill(pthread_self(), SIGRTMIN + 3);

	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		int bad = 0;
		sigemptyset(&pend);
		sigpending(&pend);
		if (sigismember(&pend, SIGUSR1) == 1 || sigismember(&pend, SIGRTMIN + 3) == 1) {
			fprintf(stderr, "child: pending at start\n");
			bad = 1;
		}
		pthread_sigmask(SIG_UNBLOCK, &both, NULL);
		if (usr1 || rt) {
			fprintf(stderr, "child: handlers ran (%d, %d)\n", (int)usr1, (int)rt);
			bad = 1;
		}
		_exit(bad);
	}
	int st = wait_bounded(pid, 10000);
	result("the child: nothing pending, no handler run", st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	sigemptyset(&pend);
	sigpending(&pend);
	result("the parent: both still pending",
	       sigismember(&pend, SIGUSR1) == 1 && sigismember(&pend, SIGRTMIN + 3) == 1);
	pthread_sigmask(SIG_UNBLOCK, &both, NULL);
	result("the parent: SIGUSR1 handled once", usr1 == 1);
	result("the parent: SIGRTMIN+3 handled three times", rt == 3);
	return failed;
}
