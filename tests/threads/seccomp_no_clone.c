/*
 * A program that seals itself in a seccomp filter forbidding thread
 * creation (OpenSSH's pre-auth sandbox, Chromium-style "no clone after
 * the sandbox" filters: clone and clone3 kill the process) then waits as
 * usual: a nanosleep, a signal it sent itself taken with sigtimedwait, a
 * pipe's byte read back. It makes no thread, so on NPTL nothing clones.
 * Under flexsc-run the runtime's own threads must then be there already,
 * or not needed: one started from a filtered thread would kill it
 * (SIGSYS). Runs where seccomp filters can be installed (no_new_privs).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "seccomp_no_clone"
#include "check.h"

int main(void)
{
	sigset_t set = sigset_of(SIGUSR1);
	struct timespec nap = { 0, 20000000 }, sec = { 1, 0 };
	siginfo_t info;
	char c = 0;
	int p[2];

	if (pipe(p) || seal_no_clone()) {
		printf("%s: skip: cannot install a seccomp filter\n", CHECK_NAME);
		return 77;
	}
	result("nanosleep under the filter", nanosleep(&nap, NULL) == 0);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	kill(getpid(), SIGUSR1);
	result("sigtimedwait takes the signal it sent itself", sigtimedwait(&set, &info, &sec) == SIGUSR1);
	result("a byte through a pipe", write(p[1], "x", 1) == 1 && read(p[0], &c, 1) == 1 && c == 'x');
	return failed;
}
