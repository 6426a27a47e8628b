/*
 * The calls that install a signal mask for their duration take a signal
 * that arrived while the thread blocked it, as GNU make waits for its
 * children: SIGCHLD blocked, a child started, then pselect() with a mask
 * that lets SIGCHLD in (and a pipe nobody writes). Each of pselect,
 * ppoll and epoll_pwait, with a child that has already exited (waitid
 * with WNOWAIT says so) when the call begins: it returns -1/EINTR after
 * the handler ran, ROUNDS times each (the signal's path races with the
 * call). A watchdog alarm ends a hang.
 * Under FlexSC-Threads a signal every carrier blocked went to the
 * runtime's signal thread, which kept it for the process until a
 * uthread unblocked it with pthread_sigmask; these calls unblock it in
 * the kernel only, so they never saw it and waited for good (every
 * configuration). GNU make -j hung so once its children were made on
 * kernel threads of their own (posix_spawn), whose exit signal then no
 * longer went to the carrier waiting in pselect. Then two races, each
 * in about one of 300 calls: the uthread let the signal in just as the
 * signal thread, having found no thread that took it, was putting it
 * aside for the process (a hang); and the call, woken by the signal in
 * the kernel's queue, returned EINTR with no handler run because the
 * signal thread took the signal first (n -1, EINTR, handled 0).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK_NAME "masked_wait_sigchld"
#include "check.h"

static volatile sig_atomic_t handled;

static void on_chld(int sig)
{
	(void)sig;
	handled++;
}

/* A child that has exited and is not reaped yet (its SIGCHLD is pending for the process). */
static pid_t exited_child(void)
{
	siginfo_t si;
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	if (pid < 0 || waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT)) {
		perror("child");
		exit(1);
	}
	return pid;
}

#define ROUNDS 50

enum call { PSELECT, PPOLL, EPOLL_PWAIT };

/* One call of the kind, with SIGCHLD let in; whether it ended as on Linux: EINTR, the handler run once. */
static int wait_once(enum call kind, int fd, int ep, const sigset_t *none, int round)
{
	pid_t pid = exited_child();
	int n;

	handled = 0;
	if (kind == PSELECT) {
		fd_set r;
		FD_ZERO(&r);
		FD_SET(fd, &r);
		n = pselect(fd + 1, &r, NULL, NULL, NULL, none);
	} else if (kind == PPOLL) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		n = ppoll(&pf, 1, NULL, none);
	} else {
		struct epoll_event out;
		n = epoll_pwait(ep, &out, 1, -1, none);
	}
	int err = errno, ok = n == -1 && err == EINTR && handled == 1;
	EXPECT(ok, "call %d, round %d: returned %d, errno %d, handler ran %d times", (int)kind, round, n,
	       err, (int)handled);
	waitpid(pid, NULL, 0);
	return ok;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_chld };
	sigset_t chld, none;
	int p[2], ok[3] = { 1, 1, 1 };

	alarm(60);
	if (pipe(p))
		return 1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigemptyset(&none);
	pthread_sigmask(SIG_BLOCK, &chld, NULL);
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN };
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);

	for (int round = 0; round < ROUNDS; round++)
		for (int kind = PSELECT; kind <= EPOLL_PWAIT; kind++)
			ok[kind] &= wait_once((enum call)kind, p[0], ep, &none, round);
	result("pselect with SIGCHLD let in: EINTR after the handler, every round", ok[PSELECT]);
	result("ppoll, the same", ok[PPOLL]);
	result("epoll_pwait, the same", ok[EPOLL_PWAIT]);

	sigset_t now;
	pthread_sigmask(SIG_SETMASK, NULL, &now);
	result("SIGCHLD blocked again after", sigismember(&now, SIGCHLD));
	return failed;
}
