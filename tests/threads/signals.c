/*
 * Signals in a threaded program:
 *   1. kill(getpid(), SIGUSR1): the handler runs;
 *   2. pthread_kill to one thread: the handler runs on that thread (a
 *      __thread counter of the target moves, the sender's does not);
 *   3. pthread_kill to a thread blocked in read() on a pipe: the handler
 *      runs while it is blocked; with SA_RESTART the read goes on and
 *      gets the data written after the handler ran, without it the read
 *      fails with EINTR;
 *   4. a signal sent to a thread that blocks it stays pending
 *      (sigpending) and is delivered, on that thread, when it unblocks;
 *   5. raise() in a thread: the handler runs on it before raise returns;
 *   6. SIGPIPE ignored: a write to a pipe with no reader gives EPIPE;
 *   7. a sigwait() thread consumes process-directed SIGUSR2s that every
 *      thread blocks.
 * No step waits forever for a signal: each gives up after a few seconds
 * and reports FAIL.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "signals"
#include "check.h"

static __thread volatile sig_atomic_t tls_hits; /* handler runs on this thread */
static _Atomic int hits;                         /* handler runs anywhere */
static __thread volatile sig_atomic_t in_read;  /* this thread is in step 3's read() */
static _Atomic int hits_in_read;                 /* handler runs there */

static void handler(int sig)
{
	(void)sig;
	tls_hits++;
	atomic_fetch_add(&hits, 1);
	if (in_read)
		atomic_fetch_add(&hits_in_read, 1);
}

/* Waits up to 5 s for *v to reach want. */
static int wait_for(_Atomic int *v, int want)
{
	for (int i = 0; i < 5000 && atomic_load(v) < want; i++)
		sleep_ms(1);
	return atomic_load(v) >= want;
}

/* ---- 2. pthread_kill to a sleeping thread ---- */

static _Atomic int ready;

static void *sleeper(void *arg)
{
	(void)arg;
	atomic_store(&ready, 1);
	for (int i = 0; i < 5000 && !tls_hits; i++)
		usleep(1000);
	return (void *)(intptr_t)tls_hits;
}

/* ---- 3. pthread_kill to a thread blocked in read() ---- */

static int blk_pipe[2];
static _Atomic int reader_done;
struct read_result {
	ssize_t n;
	int err;
	int hits;
};

static void *blocked_reader(void *arg)
{
	struct read_result *r = arg;
	char c;

	atomic_store(&ready, 1);
	in_read = 1;
	r->n = read(blk_pipe[0], &c, 1);
	in_read = 0;
	r->err = r->n < 0 ? errno : 0;
	r->hits = tls_hits;
	atomic_store(&reader_done, 1);
	return NULL;
}

/*
 * Signals a thread blocked in read() and then writes a byte; fills in
 * what its read returned, and whether the handler ran on it in the read
 * before the byte was written.
 *
 * The reader cannot say it is in read(), only that it is about to be: a
 * signal that comes before the call runs the handler there and the read
 * blocks on. So the signal is sent again every 100 ms, up to 5 s, until
 * the handler ran in the read (SA_RESTART: the read goes on) or the read
 * returned (without SA_RESTART: EINTR). Only then is the byte written: it
 * is what a read that goes on returns, and it also ends a read no signal
 * reached, which then returns 1: a FAIL, not a hang.
 */
static void signal_blocked_reader(struct read_result *r, int restart, int *handler_ran)
{
	if (pipe(blk_pipe)) {
		perror("pipe");
		exit(1);
	}
	atomic_store(&ready, 0);
	atomic_store(&reader_done, 0);
	atomic_store(&hits_in_read, 0);
	pthread_t t = spawn(blocked_reader, r);
	wait_for(&ready, 1);
	sleep_ms(50); /* most likely inside read() by now */
	for (int i = 0; i < 50 && !atomic_load(&reader_done) &&
			!(restart && atomic_load(&hits_in_read) > 0); i++) {
		pthread_kill(t, SIGUSR1);
		for (int j = 0; j < 100 && !atomic_load(&reader_done) &&
				!(restart && atomic_load(&hits_in_read) > 0); j++)
			sleep_ms(1);
	}
	*handler_ran = atomic_load(&hits_in_read) > 0; /* before the byte was written */
	for (int i = 0; restart && i < 200 && !atomic_load(&reader_done); i++)
		sleep_ms(2); /* a read wrongly interrupted returns; one that goes on does not */
	if (write(blk_pipe[1], "x", 1) != 1) /* releases a read that goes on */
		perror("write");
	pthread_join(t, NULL);
	close(blk_pipe[0]);
	close(blk_pipe[1]);
}

/* ---- 4. blocked, pending, delivered on unblock ---- */

static _Atomic int target_step, main_step;

static void *blocker(void *arg)
{
	int *res = arg;
	sigset_t set, pend;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	atomic_store(&target_step, 1); /* blocked: send it */
	wait_for(&main_step, 1);
	for (int i = 0; i < 5000; i++) { /* pthread_kill returned: pending at once, or soon */
		sigpending(&pend);
		if (sigismember(&pend, SIGUSR1) == 1)
			break;
		sleep_ms(1);
	}
	res[0] = sigismember(&pend, SIGUSR1) == 1; /* pending for this thread */
	res[1] = tls_hits == 0;                     /* not delivered yet */
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	res[2] = tls_hits == 1; /* delivered before pthread_sigmask returned */
	sigpending(&pend);
	res[3] = sigismember(&pend, SIGUSR1) == 0;
	return NULL;
}

/* ---- 5. raise in a thread ---- */

static void *raiser(void *arg)
{
	(void)arg;
	raise(SIGUSR1);
	return (void *)(intptr_t)tls_hits; /* synchronous: already 1 */
}

/* ---- 6. SIGPIPE ---- */

static void *pipe_writer(void *arg)
{
	int fd = *(int *)arg;
	ssize_t n = write(fd, "x", 1);

	return (void *)(intptr_t)(n == -1 && errno == EPIPE);
}

/* ---- 7. sigwait ---- */

static pthread_mutex_t sw_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sw_cond = PTHREAD_COND_INITIALIZER;
static int sw_count;

static void *signal_thread(void *arg)
{
	sigset_t *set = arg;

	for (int i = 0; i < 3; i++) {
		int sig = 0;
		if (sigwait(set, &sig) || sig != SIGUSR2)
			return (void *)1;
		pthread_mutex_lock(&sw_lock);
		sw_count++;
		pthread_cond_broadcast(&sw_cond);
		pthread_mutex_unlock(&sw_lock);
	}
	return NULL;
}

int main(void)
{
	/* 1. process-directed */
	on_signal(SIGUSR1, handler, SA_RESTART);
	int before = atomic_load(&hits);
	kill(getpid(), SIGUSR1);
	result("kill(getpid(), SIGUSR1) runs the handler", wait_for(&hits, before + 1));

	/* 2. thread-directed */
	int main_hits = tls_hits;
	atomic_store(&ready, 0);
	pthread_t t = spawn(sleeper, NULL);
	wait_for(&ready, 1);
	pthread_kill(t, SIGUSR1);
	void *r;
	pthread_join(t, &r);
	result("pthread_kill runs the handler on the target thread, only there",
	       (intptr_t)r == 1 && tls_hits == main_hits);

	/* 3. a thread blocked in read() */
	struct read_result rr;
	int ran;
	/* target hits >= 1: a signal sent again may run the handler more than once */
	signal_blocked_reader(&rr, 1, &ran);
	if (!ran || rr.n != 1 || rr.hits < 1)
		fprintf(stderr, "SA_RESTART: handler ran while blocked: %d; read %zd (%s), target hits %d\n",
			ran, rr.n, strerror(rr.err), rr.hits);
	result("pthread_kill to a thread in read(), SA_RESTART: handler runs, read goes on",
	       ran && rr.n == 1 && rr.hits >= 1);
	on_signal(SIGUSR1, handler, 0);
	signal_blocked_reader(&rr, 0, &ran);
	if (!ran || rr.n != -1 || rr.err != EINTR || rr.hits < 1)
		fprintf(stderr, "no SA_RESTART: handler ran while blocked: %d; read %zd (%s), target hits %d\n",
			ran, rr.n, strerror(rr.err), rr.hits);
	result("pthread_kill to a thread in read(), no SA_RESTART: read fails with EINTR",
	       ran && rr.n == -1 && rr.err == EINTR && rr.hits >= 1);
	on_signal(SIGUSR1, handler, SA_RESTART);

	/* 4. blocked, pending, delivered on unblock */
	int res[4] = { 0, 0, 0, 0 };
	t = spawn(blocker, res);
	wait_for(&target_step, 1);
	pthread_kill(t, SIGUSR1);
	atomic_store(&main_step, 1);
	pthread_join(t, NULL);
	if (!(res[0] && res[1] && res[2] && res[3]))
		fprintf(stderr, "blocked signal: pending %d, not delivered %d, delivered on unblock %d, "
				"not pending after %d\n", res[0], res[1], res[2], res[3]);
	result("a blocked signal stays pending and is delivered on unblock, to its thread",
	       res[0] && res[1] && res[2] && res[3]);

	/* 5. raise */
	pthread_join(spawn(raiser, NULL), &r);
	result("raise() in a thread runs the handler on it before returning", (intptr_t)r == 1);

	/* 6. SIGPIPE ignored */
	int p[2];
	signal(SIGPIPE, SIG_IGN);
	if (pipe(p)) {
		perror("pipe");
		return 1;
	}
	close(p[0]);
	errno = 0;
	int main_epipe = write(p[1], "x", 1) == -1 && errno == EPIPE;
	pthread_join(spawn(pipe_writer, &p[1]), &r);
	close(p[1]);
	result("SIGPIPE ignored: write to a pipe with no reader fails with EPIPE",
	       main_epipe && (intptr_t)r == 1);

	/* 7. sigwait: every thread blocks SIGUSR2 (created after the mask is set) */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	t = spawn(signal_thread, &set);
	int got = 1;
	for (int i = 0; i < 3 && got; i++) {
		kill(getpid(), SIGUSR2);
		/* wait until it was consumed: signals of one kind do not queue */
		struct timespec abs;
		clock_gettime(CLOCK_REALTIME, &abs);
		abs.tv_sec += 5;
		pthread_mutex_lock(&sw_lock);
		while (sw_count <= i && got)
			got = pthread_cond_timedwait(&sw_cond, &sw_lock, &abs) != ETIMEDOUT;
		pthread_mutex_unlock(&sw_lock);
	}
	if (got) {
		pthread_join(t, &r);
	} else {
		fprintf(stderr, "sigwait thread: %d of 3 signals consumed\n", sw_count);
		r = (void *)1;
	}
	result("a sigwait() thread takes 3 process-directed SIGUSR2s", got && r == NULL);

	printf("signals: %s\n", failed ? "FAIL" : "PASS");
	return failed;
}
