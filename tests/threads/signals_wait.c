/*
 * Waiting for signals, and process-directed signals reaching the one
 * thread that accepts them (every other thread blocks them):
 *   1. sigsuspend in a thread: kill(getpid()) runs the handler there and
 *      sigsuspend returns -1/EINTR with the old mask back;
 *   2. nanosleep(5 s) in a thread: kill(getpid()) with a handler without
 *      SA_RESTART ends it early with EINTR and the time left in rem;
 *   3. read() on an empty pipe in a thread: kill(getpid()) with a handler
 *      without SA_RESTART makes it fail with EINTR;
 *   4. pause() in a thread: pthread_kill ends it after the handler ran;
 *   5. a process-directed signal every thread blocks: sigpending shows it
 *      and sigwait in main takes it;
 *   6. sigtimedwait with 100 ms and nothing sent: EAGAIN, after >= 100 ms;
 *   7. a burst of signals (SA_RESTART) at a thread blocked in read(): the
 *      handler runs, the read goes on and returns the byte written later;
 *   8. two threads in sigtimedwait for SIGUSR2: pthread_kill to the second
 *      wakes the second only (the first times out with EAGAIN).
 * Every wait is bounded: a lost signal is a FAIL, not a hang (a thread of
 * 1 or 4 that no signal ends is left blocked when the program exits).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "signals_wait"
#include "check.h"

static __thread volatile sig_atomic_t tls_hits;

static void handler(int sig)
{
	(void)sig;
	tls_hits++;
}

static _Atomic int ready;

/* One of steps 1-4: its thread says ready just before its wait, done after it returned. */
struct step {
	_Atomic int ready, done;
	int ok;
};

/* Spins (sleeping 1 ms) up to 5 s for *v to be set. */
static int wait_set(_Atomic int *v)
{
	for (int i = 0; i < 5000 && !atomic_load(v); i++)
		usleep(1000);
	return atomic_load(v);
}

static void unblock(int sig)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, sig);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
}

/* ---- 1. sigsuspend ---- */

static void *suspender(void *arg)
{
	struct step *s = arg;
	sigset_t during, after;

	pthread_sigmask(SIG_SETMASK, NULL, &during);
	sigdelset(&during, SIGUSR1);
	atomic_store(&s->ready, 1);
	int r = sigsuspend(&during);
	int err = errno;
	pthread_sigmask(SIG_SETMASK, NULL, &after);
	s->ok = r == -1 && err == EINTR && tls_hits == 1 && sigismember(&after, SIGUSR1);
	atomic_store(&s->done, 1);
	return NULL;
}

/* ---- 2. nanosleep ---- */

static void *napper(void *arg)
{
	struct step *s = arg;
	struct timespec req = { 5, 0 }, rem = { 0, 0 };

	unblock(SIGUSR2);
	atomic_store(&s->ready, 1);
	double t0 = now_s();
	int r = nanosleep(&req, &rem);
	int err = errno;
	double took = now_s() - t0;
	s->ok = r == -1 && err == EINTR && tls_hits >= 1 && took < 4.5 &&
		(rem.tv_sec > 0 || rem.tv_nsec > 0) && rem.tv_sec < 5;
	atomic_store(&s->done, 1);
	return NULL;
}

/* ---- 3. read ---- */

static int pfd[2];

static void *reader(void *arg)
{
	struct step *s = arg;
	char c;

	unblock(SIGHUP);
	atomic_store(&s->ready, 1);
	ssize_t n = read(pfd[0], &c, 1);
	int err = errno;
	s->ok = n == -1 && err == EINTR && tls_hits >= 1;
	atomic_store(&s->done, 1);
	return NULL;
}

/* ---- 4. pause ---- */

static void *pauser(void *arg)
{
	struct step *s = arg;

	unblock(SIGWINCH);
	atomic_store(&s->ready, 1);
	int r = pause();
	s->ok = r == -1 && errno == EINTR && tls_hits >= 1;
	atomic_store(&s->done, 1);
	return NULL;
}

/* ---- 7. a burst ---- */

static int burst_pipe[2];

static void *burst_reader(void *arg)
{
	int *ok = arg;
	char c = 0;

	unblock(SIGUSR1);
	atomic_store(&ready, 1);
	ssize_t n = read(burst_pipe[0], &c, 1);
	*ok = n == 1 && c == 'z' && tls_hits >= 1;
	return NULL;
}

/* ---- 8. the sigwaiter pthread_kill names ---- */

static _Atomic int sigwaiting;

static void *timed_sigwaiter(void *arg)
{
	long ms = (long)(__INTPTR_TYPE__)arg;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	atomic_fetch_add(&sigwaiting, 1);
	int r = sigtimedwait(&set, NULL, &ts);
	return (void *)(__INTPTR_TYPE__)(r > 0 ? r : -errno);
}

/*
 * Runs fn in a thread with s, lets it block, sends sig (process-wide or to
 * it) until its wait returned (up to 5 s), joins; returns its verdict.
 *
 * Sent again every 100 ms when `again`: the threads of 2-4 unblock sig
 * before they say ready and then wait, so a signal that comes before the
 * wait runs the handler there, and nanosleep sleeps its 5 s, read and
 * pause block on. (sigsuspend unblocks sig only in its wait: one signal,
 * pending until then, does.) One sent again just as the wait returned
 * may be left pending: sent to the thread (4), it goes with the thread;
 * sent to the process (2, 3), main takes it here, as a SIGUSR2 left
 * pending would be taken by 8's first sigwaiter.
 * When the wait has not returned after 5 s, that is a FAIL: release ends
 * a read (a byte to read: n is 1); nanosleep ends at its 5 s; a thread in
 * sigsuspend or pause that no signal ends is not joined but left to exit.
 */
static int run_step(struct step *s, void *(*fn)(void *), int sig, int to_thread, int again,
		    int release)
{
	pthread_t t;

	if (pthread_create(&t, NULL, fn, s)) {
		perror("pthread_create");
		exit(1);
	}
	wait_set(&s->ready);
	usleep(100000); /* let it get into its wait */
	for (int i = 0; i < (again ? 50 : 1) && !atomic_load(&s->done); i++) {
		if (to_thread)
			pthread_kill(t, sig);
		else
			kill(getpid(), sig);
		for (int j = 0; j < (again ? 100 : 5000) && !atomic_load(&s->done); j++)
			usleep(1000);
	}
	if (!atomic_load(&s->done)) {
		fprintf(stderr, "signal %d: the wait did not end within 5 s\n", sig);
		if (release >= 0 && write(release, "x", 1) != 1)
			perror("write");
		wait_set(&s->done); /* nanosleep's own 5 s, the read released */
	}
	if (!atomic_load(&s->done)) {
		pthread_detach(t);
		return 0;
	}
	pthread_join(t, NULL);
	sigset_t set;
	struct timespec zero = { 0, 0 };
	sigemptyset(&set);
	sigaddset(&set, sig);
	while (!to_thread && sigtimedwait(&set, NULL, &zero) == sig)
		; /* a signal sent again after the wait returned, that no thread took */
	return s->ok;
}

int main(void)
{
	sigset_t all;

	/* every thread starts with these blocked; each step's thread unblocks one */
	sigemptyset(&all);
	sigaddset(&all, SIGUSR1);
	sigaddset(&all, SIGUSR2);
	sigaddset(&all, SIGHUP);
	sigaddset(&all, SIGWINCH);
	sigaddset(&all, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	on_signal(SIGUSR1, handler, SA_RESTART);
	on_signal(SIGUSR2, handler, 0);
	on_signal(SIGHUP, handler, 0);
	on_signal(SIGWINCH, handler, 0);
	if (pipe(pfd)) {
		perror("pipe");
		return 1;
	}

	static struct step steps[4];
	result("sigsuspend ends after the handler, old mask back",
	       run_step(&steps[0], suspender, SIGUSR1, 0, 0, -1));
	result("nanosleep interrupted: EINTR and the time left",
	       run_step(&steps[1], napper, SIGUSR2, 0, 1, -1));
	result("read interrupted without SA_RESTART: EINTR",
	       run_step(&steps[2], reader, SIGHUP, 0, 1, pfd[1]));
	result("pause ends after pthread_kill's handler", run_step(&steps[3], pauser, SIGWINCH, 1, 1, -1));

	kill(getpid(), SIGTERM); /* blocked everywhere: stays pending */
	sigset_t pend, want;
	int sig = 0;
	int shown = 0;
	for (int i = 0; i < 500 && !shown; i++) {
		sigpending(&pend);
		shown = sigismember(&pend, SIGTERM);
		if (!shown)
			usleep(1000);
	}
	result("sigpending shows a signal every thread blocks", shown);
	sigemptyset(&want);
	sigaddset(&want, SIGTERM);
	struct timespec five = { 5, 0 };
	sig = sigtimedwait(&want, NULL, &five);
	result("sigtimedwait takes it", sig == SIGTERM);

	struct timespec tenth = { 0, 100000000L };
	double t0 = now_s();
	int r = sigtimedwait(&want, NULL, &tenth);
	int err = errno;
	result("sigtimedwait times out with EAGAIN", r == -1 && err == EAGAIN && now_s() - t0 >= 0.099);

	pthread_t bt;
	int bok = 0;
	if (pipe(burst_pipe)) {
		perror("pipe");
		return 1;
	}
	atomic_store(&ready, 0);
	pthread_create(&bt, NULL, burst_reader, &bok);
	wait_set(&ready);
	usleep(50000);
	for (int i = 0; i < 200; i++) {
		pthread_kill(bt, SIGUSR1);
		if (i % 20 == 0)
			usleep(1000);
	}
	usleep(50000);
	if (write(burst_pipe[1], "z", 1) != 1)
		perror("write");
	pthread_join(bt, NULL);
	result("a burst of SA_RESTART signals: the read goes on and gets its byte", bok);

	pthread_t w1, w2;
	void *r1, *r2;
	pthread_create(&w1, NULL, timed_sigwaiter, (void *)(__INTPTR_TYPE__)300);
	pthread_create(&w2, NULL, timed_sigwaiter, (void *)(__INTPTR_TYPE__)3000);
	for (int i = 0; i < 3000 && atomic_load(&sigwaiting) < 2; i++)
		usleep(1000);
	usleep(100000);
	pthread_kill(w2, SIGUSR2);
	pthread_join(w1, &r1);
	pthread_join(w2, &r2);
	result("pthread_kill wakes the sigwaiter it names, not another",
	       r1 == (void *)(__INTPTR_TYPE__)-EAGAIN && r2 == (void *)(__INTPTR_TYPE__)SIGUSR2);
	return failed;
}
