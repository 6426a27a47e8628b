/*
 * Signals read through a signalfd (signalfd(2)): the program blocks them
 * and the kernel keeps them pending until a read of the descriptor takes
 * them. Each wait is bounded (a lost signal is a FAIL, not a hang):
 *   1. one thread, SIGCHLD: a child exits with 7 after 50 ms; poll on the
 *      signalfd is ready, and the read gives SIGCHLD with status 7 (as
 *      script(1) waits for its shell);
 *   2. with a second thread asleep, SIGTERM through epoll_wait on the
 *      signalfd: a child sends it; the read gives SIGTERM from that child
 *      (a daemon's "stop" path);
 *   3. a signal pending before the signalfd is made (sent while every
 *      thread blocked it, with a thread asleep meanwhile) is read from
 *      the signalfd made after, with its sender;
 *   4. sigtimedwait (2 s) for a signal a signalfd names takes it when a
 *      child sends it after 50 ms;
 *   5. case 3 with the signalfd made and read by a second thread, not the
 *      main one (only the process's first thread may give the kernel back
 *      a signal with a sender's siginfo: rt_sigqueueinfo(2), EPERM).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "signalfd_signals"
#include "check.h"

static int gate[2];

static void *napper(void *arg)
{
	char c;

	return read(gate[0], &c, 1) == 1 ? NULL : arg; /* asleep until the end */
}

/* A child that sends sig to this process after ms, or exits with code then (sig 0). */
static pid_t child_after(int ms, int sig, int code)
{
	pid_t parent = getpid();

	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		usleep((useconds_t)ms * 1000);
		if (sig)
			kill(parent, sig);
		_exit(code);
	}
	return pid;
}

static void block(int sig)
{
	sigset_t s = sigset_of(sig);

	pthread_sigmask(SIG_BLOCK, &s, NULL);
}

static void sigchld_one_thread(void)
{
	sigset_t s = sigset_of(SIGCHLD);
	struct signalfd_siginfo si;

	block(SIGCHLD);
	int fd = signalfd(-1, &s, SFD_CLOEXEC);
	pid_t pid = child_after(50, 0, 7);
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n = poll(&p, 1, 5000);
	int ok = n == 1 && read(fd, &si, sizeof(si)) == sizeof(si) && si.ssi_signo == SIGCHLD &&
		 si.ssi_status == 7 && si.ssi_pid == (uint32_t)pid;
	result("one thread: SIGCHLD read from a signalfd after poll, with the child's status", ok);
	waitpid(pid, NULL, 0);
	close(fd);
}

static void sigterm_epoll(void)
{
	sigset_t s = sigset_of(SIGTERM);
	struct signalfd_siginfo si;
	struct epoll_event ev = { .events = EPOLLIN }, got;

	int fd = signalfd(-1, &s, SFD_CLOEXEC);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	ev.data.fd = fd;
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	pid_t pid = child_after(50, SIGTERM, 0);
	int n = epoll_wait(ep, &got, 1, 5000);
	int ok = n == 1 && got.data.fd == fd && read(fd, &si, sizeof(si)) == sizeof(si) &&
		 si.ssi_signo == SIGTERM && si.ssi_pid == (uint32_t)pid;
	result("a thread asleep beside: SIGTERM read from a signalfd after epoll_wait, with its sender", ok);
	waitpid(pid, NULL, 0);
	close(ep);
	close(fd);
}

static void pending_before(const char *who)
{
	sigset_t s = sigset_of(SIGUSR2);
	struct signalfd_siginfo si;

	pid_t pid = child_after(0, SIGUSR2, 0);
	waitpid(pid, NULL, 0); /* sent and pending: every thread blocks it */
	sleep_ms(50);
	int fd = signalfd(-1, &s, SFD_CLOEXEC | SFD_NONBLOCK);
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int ok = poll(&p, 1, 5000) == 1 && read(fd, &si, sizeof(si)) == sizeof(si) &&
		 si.ssi_signo == SIGUSR2 && si.ssi_pid == (uint32_t)pid;
	resultf(ok, "a signal pending before the signalfd was made (%s) is read from it, with its sender", who);
	close(fd);
}

static void *pending_before_thread(void *arg)
{
	(void)arg;
	pending_before("by a second thread");
	return NULL;
}

static void sigwait_named(void)
{
	sigset_t s = sigset_of(SIGUSR1);
	struct timespec two = { 2, 0 };
	siginfo_t info;

	int fd = signalfd(-1, &s, SFD_CLOEXEC);
	pid_t pid = child_after(50, SIGUSR1, 0);
	int r = sigtimedwait(&s, &info, &two);
	result("sigtimedwait takes a signal a signalfd names", r == SIGUSR1 && info.si_pid == pid);
	waitpid(pid, NULL, 0);
	close(fd);
}

int main(void)
{
	block(SIGTERM);
	block(SIGUSR1);
	block(SIGUSR2);
	sigchld_one_thread();
	if (pipe(gate))
		return 1;
	pthread_t t = spawn(napper, NULL);
	sleep_ms(20);
	sigterm_epoll();
	pending_before("by main");
	sigwait_named();
	pthread_t second = spawn(pending_before_thread, NULL);
	pthread_join(second, NULL);
	if (write(gate[1], "x", 1) != 1)
		return 1;
	pthread_join(t, NULL);
	return failed;
}
