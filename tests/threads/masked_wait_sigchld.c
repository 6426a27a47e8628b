/*
 * The calls that install a signal mask for their duration take a signal
 * that arrived while the thread blocked it, as GNU make waits for its
 * children: SIGCHLD blocked, a child started, then pselect() with a mask
 * that lets SIGCHLD in (and a pipe nobody writes). Each of pselect,
 * ppoll and epoll_pwait, with a child that has already exited (waitid
 * with WNOWAIT says so) when the call begins: it returns -1/EINTR after
 * the handler ran. A watchdog alarm ends a hang.
 * Under FlexSC-Threads a signal every carrier blocked went to the
 * runtime's signal thread, which kept it for the process until a
 * uthread unblocked it with pthread_sigmask; these calls unblock it in
 * the kernel only, so they never saw it and waited for good (every
 * configuration). GNU make -j hung so once its children were made on
 * kernel threads of their own (posix_spawn), whose exit signal then no
 * longer went to the carrier waiting in pselect.
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

int main(void)
{
	struct sigaction sa = { .sa_handler = on_chld };
	sigset_t chld, none;
	int p[2];

	alarm(30);
	if (pipe(p))
		return 1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigemptyset(&none);
	pthread_sigmask(SIG_BLOCK, &chld, NULL);

	pid_t pid = exited_child();
	fd_set r;
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	handled = 0;
	int n = pselect(p[0] + 1, &r, NULL, NULL, NULL, &none);
	result("pselect with SIGCHLD let in: EINTR after the handler", n == -1 && errno == EINTR && handled == 1);
	waitpid(pid, NULL, 0);

	pid = exited_child();
	struct pollfd pf = { .fd = p[0], .events = POLLIN };
	handled = 0;
	n = ppoll(&pf, 1, NULL, &none);
	result("ppoll, the same", n == -1 && errno == EINTR && handled == 1);
	waitpid(pid, NULL, 0);

	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN }, out;
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
	pid = exited_child();
	handled = 0;
	n = epoll_pwait(ep, &out, 1, -1, &none);
	result("epoll_pwait, the same", n == -1 && errno == EINTR && handled == 1);
	waitpid(pid, NULL, 0);

	sigset_t now;
	pthread_sigmask(SIG_SETMASK, NULL, &now);
	result("SIGCHLD blocked again after", sigismember(&now, SIGCHLD));
	return failed;
}
