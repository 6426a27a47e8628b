/*
 * A stop and continue does not cut a sleep short (signal(7): without a
 * handler, SIGSTOP/SIGCONT do not interrupt nanosleep; Linux restarts it),
 * and neither does the SIGCHLD (ignored by default) of a child that exits
 * meanwhile. A child process sends SIGSTOP and then SIGCONT to the parent
 * while the parent sleeps 1 s, then exits: nanosleep and clock_nanosleep
 * must return 0, after at least the full second.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "sig_stop_cont"
#include "check.h"

static pid_t stopper(void)
{
	pid_t parent = getpid(), pid = fork();

	if (pid == 0) {
		struct timespec t = { 0, 200 * 1000000L };
		nanosleep(&t, NULL);
		kill(parent, SIGSTOP);
		nanosleep(&t, NULL);
		kill(parent, SIGCONT);
		_exit(0);
	}
	return pid;
}

int main(void)
{
	struct timespec one = { 1, 0 };
	int status;

	pid_t pid = stopper();
	double t0 = now_s();
	int r = nanosleep(&one, NULL);
	double took = now_s() - t0;
	waitpid(pid, &status, 0);
	result("nanosleep across SIGSTOP/SIGCONT returned 0", r == 0);
	result("after at least the full second", took >= 1.0);

	pid = stopper();
	t0 = now_s();
	r = clock_nanosleep(CLOCK_MONOTONIC, 0, &one, NULL);
	took = now_s() - t0;
	waitpid(pid, &status, 0);
	result("clock_nanosleep across SIGSTOP/SIGCONT returned 0", r == 0);
	result("after at least the full second", took >= 1.0);
	return failed;
}
