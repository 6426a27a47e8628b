/*
 * fork from a signal handler (fork is async-signal-safe) while the
 * interrupted thread is having its pending signals delivered: the child
 * starts with none pending and its own signals work.
 *
 * Each round, main queues 256 SIGRTMIN+1 to itself with pthread_kill
 * while it blocks the signal, then unblocks it; a 100 us interval
 * timer's SIGALRM, armed just before the unblock, forks from its
 * handler, so the fork mostly lands while the 256 are being delivered.
 * The parent must then have handled its 256, and the child must see no
 * signal pending and handle each of 300 SIGRTMIN+1 it queues to itself
 * the same way, once. 40 rounds; each child bounded by 10 s (a hang
 * guard). (A faster timer is no better: under flexsc-run a SIGALRM every
 * 20 us could keep the thread handling them for ever on a busy machine.)
 *
 * Under flexsc-run the runtime took the queued signals' siginfo entries
 * out of its pool, sent them, then put them back: a child forked in
 * between emptied its pool and then got those entries back as free,
 * while they were fresh too, so it gave them out twice and lost or
 * repeated signals, or looped.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK_NAME "sig_fork_handler"
#include "check.h"

#define ROUNDS 40
#define PARENT_Q 256
#define CHILD_Q 300

static volatile sig_atomic_t armed, in_child;
static volatile sig_atomic_t handled;
static pid_t kid;

static void on_rt(int sig)
{
	(void)sig;
	handled++;
}

static void on_alarm(int sig)
{
	(void)sig;
	if (!armed || in_child)
		return;
	armed = 0;
	pid_t p = fork();
	if (p == 0)
		in_child = 1;
	else
		kid = p;
}

static void mask(int how, int sig)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, sig);
	pthread_sigmask(how, &s, NULL);
}

static void set_timer(long us)
{
	struct itimerval it = { { 0, us }, { 0, us } };

	setitimer(ITIMER_REAL, &it, NULL);
}

/* In the child, back from the handler: 0 when its own signals work. */
static int child_checks(void)
{
	sigset_t pend;

	set_timer(0); /* not inherited anyway; and SIGALRM blocked from here on */
	mask(SIG_BLOCK, SIGALRM);
	sigemptyset(&pend);
	sigpending(&pend);
	int bad = 0;
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&pend, s) == 1) {
			fprintf(stderr, "child: signal %d pending at start\n", s);
			bad = 1;
		}
	mask(SIG_BLOCK, SIGRTMIN + 1);
	handled = 0;
	for (int i = 0; i < CHILD_Q; i++)
		if (pthread_kill(pthread_self(), SIGRTMIN + 1)) {
			fprintf(stderr, "child: pthread_kill failed\n");
			return 1;
		}
	mask(SIG_UNBLOCK, SIGRTMIN + 1);
	if (handled != CHILD_Q) {
		fprintf(stderr, "child: %d of %d handled\n", (int)handled, CHILD_Q);
		bad = 1;
	}
	return bad;
}

int main(void)
{
	struct sigaction sa;
	int parent_bad = 0, child_bad = 0, forks = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_rt;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGRTMIN + 1, &sa, NULL);
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	set_timer(100);

	for (int r = 0; r < ROUNDS; r++) {
		kid = 0;
		mask(SIG_BLOCK, SIGRTMIN + 1);
		handled = 0;
		for (int i = 0; i < PARENT_Q; i++)
			pthread_kill(pthread_self(), SIGRTMIN + 1);
		armed = 1;
		mask(SIG_UNBLOCK, SIGRTMIN + 1);
		if (in_child)
			_exit(child_checks());
		if (handled != PARENT_Q) {
			fprintf(stderr, "round %d: parent handled %d of %d\n", r, (int)handled, PARENT_Q);
			parent_bad = 1;
		}
		/* the fork may come after the unblock: wait for it (the timer fires every 20 us) */
		while (armed)
			;
		if (in_child)
			_exit(child_checks());
		forks++;
		int st = wait_bounded(kid, 10000);
		if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "round %d: child status %#x\n", r, st);
			child_bad = 1;
		}
	}
	set_timer(0);
	result("the parent handled each of its queued signals", !parent_bad);
	result("each child: nothing pending, each of its queued signals handled once", !child_bad);
	result("a fork each round", forks == ROUNDS);
	return failed;
}
