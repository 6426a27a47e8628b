/*
 * Realtime signals queue (POSIX): every sigqueue() of a realtime signal is
 * delivered, each with its own value, also when it has to wait before a
 * thread can take it:
 *   1. 8 SIGRTMIN+2 sent to the process (sigqueue, values 1..8) while the
 *      one thread that accepts them waits in pthread_cond_wait (main
 *      blocks them): the handler runs 8 times, each value once;
 *   2. 8 more (values 11..18) while every thread blocks the signal; then
 *      a thread unblocks it: 8 handler runs, each of 11..18 once;
 *   3. 3 pthread_kill of SIGRTMIN+4 to a thread that blocks it; when it
 *      unblocks it, its handler runs 3 times, on that thread.
 * Each wait for the handler is bounded (10 s, a hang guard, not a
 * timing check). Deterministic output; exit 0 when every check held.
 * The order is not checked: under flexsc-run one that the kernel delivers
 * straight to the thread's carrier can still overtake one the signal
 * thread has taken but not yet raised (docs/threads.md, Signals; about
 * one run in ten of this test).
 *
 * Under flexsc-run a signal that waited in the runtime was a bit in a
 * mask: 1 handled 1 or 2 of the 8, 2 one, 3 one of the 3 (and once the
 * queue was kept, a later one the kernel delivered straight to the
 * carrier could overtake those waiting: values 7 1 2 3 4 5 6 8; now
 * rarer, see above).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CHECK_NAME "sig_rt_queue"
#include "check.h"

#define N 8

static _Atomic int got;
static int vals[64];
static _Atomic int kill_got;
static _Atomic int kill_wrong_thread;
static pthread_t kill_target;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int waiting, done;

static void on_rt(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	int i = atomic_fetch_add(&got, 1);
	if (i < 64)
		vals[i] = si->si_value.sival_int;
}

static void on_kill(int sig)
{
	(void)sig;
	if (!pthread_equal(pthread_self(), kill_target))
		atomic_fetch_add(&kill_wrong_thread, 1);
	atomic_fetch_add(&kill_got, 1);
}

static void mask(int how, int sig)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, sig);
	pthread_sigmask(how, &s, NULL);
}

/* Accepts SIGRTMIN+2 and waits on cv until done. */
static void *waiter(void *arg)
{
	(void)arg;
	mask(SIG_UNBLOCK, SIGRTMIN + 2);
	pthread_mutex_lock(&mu);
	waiting = 1;
	while (!done)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return NULL;
}

/* Blocks SIGRTMIN+2 until told, then unblocks it and returns. */
static _Atomic int go_unblock;
static void *unblocker(void *arg)
{
	int want = (int)(intptr_t)arg;

	while (!atomic_load(&go_unblock))
		sleep_ms(1);
	mask(SIG_UNBLOCK, SIGRTMIN + 2);
	uint64_t end = now_ms() + 10000;
	while (atomic_load(&got) < want && now_ms() < end)
		sleep_ms(1); /* stays, so that they are not left to main, which blocks them */
	return NULL;
}

static _Atomic int kill_sent;
static void *kill_fn(void *arg)
{
	(void)arg;
	/* SIGRTMIN+4 blocked (inherited from main) */
	while (!atomic_load(&kill_sent))
		sleep_ms(1);
	mask(SIG_UNBLOCK, SIGRTMIN + 4);
	uint64_t end = now_ms() + 10000;
	while (atomic_load(&kill_got) < 3 && now_ms() < end)
		sleep_ms(1);
	return NULL;
}

static int wait_for(_Atomic int *n, int want)
{
	uint64_t end = now_ms() + 10000;

	while (atomic_load(n) < want && now_ms() < end)
		sleep_ms(1);
	return atomic_load(n);
}

/* Each of base..base+N-1 handled once (in any order: see the header). */
static int each_once(int from, int base)
{
	int seen[N] = { 0 };

	for (int i = 0; i < N; i++)
		if (vals[from + i] >= base && vals[from + i] < base + N)
			seen[vals[from + i] - base]++;
	for (int i = 0; i < N; i++)
		if (seen[i] != 1) {
			fprintf(stderr, "values:");
			for (int j = 0; j < N; j++)
				fprintf(stderr, " %d", vals[from + j]);
			fprintf(stderr, "\n");
			return 0;
		}
	return 1;
}

int main(void)
{
	struct sigaction sa;
	union sigval v;
	char what[128];

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_rt;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGRTMIN + 2, &sa, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_kill;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGRTMIN + 4, &sa, NULL);
	mask(SIG_BLOCK, SIGRTMIN + 2);
	mask(SIG_BLOCK, SIGRTMIN + 4);

	/* 1: to the process, the one taker in a condition wait */
	pthread_t w = spawn(waiter, NULL);
	for (;;) {
		pthread_mutex_lock(&mu);
		int in = waiting;
		pthread_mutex_unlock(&mu); /* taken: the waiter is in its wait */
		if (in)
			break;
		sleep_ms(1);
	}
	for (int i = 0; i < N; i++) {
		v.sival_int = 1 + i;
		if (sigqueue(getpid(), SIGRTMIN + 2, v))
			perror("sigqueue");
	}
	int n = wait_for(&got, N);
	snprintf(what, sizeof(what), "8 queued to a thread in a condition wait: %d handled", n);
	result(what, n == N);
	result("each with its own value, once", n >= N && each_once(0, 1));
	pthread_mutex_lock(&mu);
	done = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(w, NULL);

	/* 2: pending for the process while every thread blocks it */
	int before = atomic_load(&got);
	pthread_t u = spawn(unblocker, (void *)(intptr_t)(before + N));
	for (int i = 0; i < N; i++) {
		v.sival_int = 11 + i;
		if (sigqueue(getpid(), SIGRTMIN + 2, v))
			perror("sigqueue");
	}
	sleep_ms(50); /* not needed for the check: lets them wait */
	atomic_store(&go_unblock, 1);
	n = wait_for(&got, before + N) - before;
	snprintf(what, sizeof(what), "8 pending for the process, then unblocked: %d handled", n);
	result(what, n == N);
	result("each with its own value, once", n >= N && each_once(before, 11));
	pthread_join(u, NULL);

	/* 3: pthread_kill to a thread that blocks it */
	kill_target = spawn(kill_fn, NULL);
	for (int i = 0; i < 3; i++)
		pthread_kill(kill_target, SIGRTMIN + 4);
	atomic_store(&kill_sent, 1);
	n = wait_for(&kill_got, 3);
	pthread_join(kill_target, NULL);
	snprintf(what, sizeof(what), "3 pthread_kill while blocked: %d handled", n);
	result(what, n == 3);
	result("on the thread they were sent to", atomic_load(&kill_wrong_thread) == 0);
	return failed;
}
