/*
 * A process-directed signal goes to the main thread when it accepts it
 * (the kernel's complete_signal gives the thread group's leader the first
 * chance), also while another thread is busy in libc: a daemon's main
 * thread waits in pause() or sigsuspend() for SIGTERM while its workers
 * poll with usleep, and must wake.
 *
 * A worker loops on usleep(100) (and a second one on sched_yield) for the
 * whole test. Ten rounds each of main in pause() and in sigsuspend() with
 * an empty mask: a forked child sends SIGUSR1 (handler without
 * SA_RESTART) after 20 ms, and sends it again every 200 ms until main
 * acknowledges through a pipe (25 times at most); main's wait must return
 * after the first, with the handler run on main. A signal taken by a
 * worker is a FAIL when a resend ends main's wait, and a hang, which the
 * runner's timeout ends, when every one of them is taken too.
 *
 * Under flexsc-run the kernel gave the signal to the worker's carrier,
 * running the scheduler between two of its sleeps or inside a libc call,
 * and the handler ran there: main's pause never returned (2 to 7 runs in
 * 10, by engine).
 */
#define _GNU_SOURCE
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK_NAME "sig_to_main_busy"
#include "check.h"

#define ROUNDS 10

static pthread_t main_thread;
static _Atomic int stop;
static _Atomic int on_main, elsewhere;

static void on_usr1(int sig)
{
	(void)sig;
	if (pthread_equal(pthread_self(), main_thread))
		atomic_fetch_add(&on_main, 1);
	else
		atomic_fetch_add(&elsewhere, 1);
}

static void *sleeper(void *arg)
{
	while (!atomic_load(&stop))
		usleep(100);
	return arg;
}

static void *yielder(void *arg)
{
	while (!atomic_load(&stop))
		sched_yield();
	return arg;
}

/* A child that sends SIGUSR1 to the parent after 20 ms, again every 200 ms until ack is readable; exits with the resends. */
static pid_t sender(int ack)
{
	pid_t parent = getpid();

	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		struct pollfd p = { .fd = ack, .events = POLLIN };
		int again = 0;
		usleep(20000);
		kill(parent, SIGUSR1);
		while (poll(&p, 1, 200) == 0 && again < 25) {
			kill(parent, SIGUSR1);
			again++;
		}
		_exit(again);
	}
	return pid;
}

/* One mode's rounds: how many had main's wait end at the first signal, with the handler on main. */
static int rounds(int suspend)
{
	int good = 0;

	for (int i = 0; i < ROUNDS; i++) {
		int ack[2], status = 0;
		if (pipe(ack))
			return -1;
		atomic_store(&on_main, 0);
		atomic_store(&elsewhere, 0);
		pid_t pid = sender(ack[0]);
		if (suspend) {
			sigset_t none;
			sigemptyset(&none);
			sigsuspend(&none);
		} else {
			pause();
		}
		if (write(ack[1], "x", 1) != 1)
			return -1;
		waitpid(pid, &status, 0);
		close(ack[0]);
		close(ack[1]);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && atomic_load(&on_main) == 1 &&
		    atomic_load(&elsewhere) == 0)
			good++;
		else
			fprintf(stderr, "sig_to_main_busy: %s round %d: resends %d, handler on main %d, elsewhere %d\n",
				suspend ? "sigsuspend" : "pause", i, WEXITSTATUS(status), atomic_load(&on_main),
				atomic_load(&elsewhere));
	}
	return good;
}

int main(void)
{
	struct sigaction sa;

	main_thread = pthread_self();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	pthread_t a = spawn(sleeper, NULL), b = spawn(yielder, NULL);

	resultf(rounds(0) == ROUNDS, "pause in main, workers in usleep and sched_yield: the signal wakes main, %d rounds", ROUNDS);
	resultf(rounds(1) == ROUNDS, "sigsuspend in main, the same: the signal wakes main, %d rounds", ROUNDS);

	atomic_store(&stop, 1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return failed;
}
