/*
 * A signal pending for the process is pending (POSIX sigtimedwait: with a
 * zero timeout it "shall return immediately with an error" only "if none
 * of the signals specified by set are pending"): every thread blocks
 * SIGUSR1, kill(getpid(), SIGUSR1) makes it pending for the process, and
 *   1. sigpending, right after the kill, shows it;
 *   2. sigtimedwait with a zero timeout, right after the kill, takes it,
 *      with si_code SI_USER and our pid;
 * each 1,000 times, with the process's only thread, then with a second
 * thread alive (blocked in a read), as NPTL answers every time. Under
 * FlexSC-Threads the signal waits in the kernel for the runtime's signal
 * thread to hand it on; the poll used to time out when that thread had not
 * taken it yet (7 to 18 of 2,000).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "sig_poll_pending"
#include "check.h"

enum { ROUNDS = 1000 };

static void rounds(const char *who)
{
	sigset_t set, pend;
	siginfo_t si;
	struct timespec zero = { 0, 0 };
	int seen = 0, taken = 0, right_info = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	for (int i = 0; i < ROUNDS; i++) {
		kill(getpid(), SIGUSR1);
		if (sigpending(&pend) == 0 && sigismember(&pend, SIGUSR1))
			seen++;
		memset(&si, 0, sizeof(si));
		int r = sigtimedwait(&set, &si, &zero);
		if (r == SIGUSR1) {
			taken++;
			right_info += si.si_code == SI_USER && si.si_pid == getpid();
		} else {
			/* missed: take it anyway (bounded), so the next round starts with none */
			struct timespec sec = { 1, 0 };
			sigtimedwait(&set, &si, &sec);
		}
	}
	resultf(seen == ROUNDS, "%s: sigpending shows a signal just sent to the process (%d of %d)",
		who, seen, ROUNDS);
	resultf(taken == ROUNDS, "%s: sigtimedwait with a zero timeout takes it (%d of %d)", who,
		taken, ROUNDS);
	resultf(right_info == taken, "%s: with SI_USER and our pid", who);
}

static int p[2];

static void *reader(void *arg)
{
	char c;

	return read(p[0], &c, 1) == 1 ? NULL : arg;
}

int main(void)
{
	sigset_t set;
	pthread_t t;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	rounds("one thread");
	if (pipe(p) || pthread_create(&t, NULL, reader, NULL))
		return 1;
	rounds("two threads");
	result("the second thread ends", write(p[1], "x", 1) == 1 && pthread_join(t, NULL) == 0);
	return failed;
}
