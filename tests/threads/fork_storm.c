/*
 * fork, again and again, while other threads contend on a mutex and a
 * condition variable (the pattern of Python's os.fork() in a threaded
 * program):
 *   three workers lock a mutex, wait on and signal a condition variable,
 *   and sometimes hold the mutex across a yield or a short sleep, so a
 *   fork often finds it held, its wait list not empty, a thread asleep in
 *   the condition or the scheduler in the middle of a switch;
 *   the main thread forks 1,000 times, holding the workers' mutex across
 *   the fork (what an atfork prepare handler does) so that the child may
 *   use it; each child (one thread, as POSIX says) releases that mutex,
 *   takes it again, starts a thread, joins it, uses a fresh mutex and
 *   condition variable and _exits with a status; the parent waits for
 *   each child with a bounded wait (WNOHANG polling, 20 s), and kills it
 *   if it does not end.
 * The child does not touch the parent's condition variable: glibc's own
 * may hang there (a waiter of the parent is half-way out of it).
 * A watchdog (alarm) ends the whole program if anything hangs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "fork_storm"
#include "check.h"

#define WORKERS 3
#define FORKS 1000
#define CHILD_WAIT_MS 10000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static long counter;
static _Atomic int stop;

static void *worker(void *arg)
{
	long id = (long)(intptr_t)arg;
	unsigned seed = (unsigned)id * 2654435761u + 1;

	while (!atomic_load(&stop)) {
		pthread_mutex_lock(&lock);
		counter++;
		seed = seed * 1103515245u + 12345u;
		switch ((seed >> 16) % 4) {
		case 0: { /* wait for a signal, bounded */
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 200000;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&cond, &lock, &ts);
			break;
		}
		case 1: /* hold it across a switch */
			sched_yield();
			break;
		case 2:
			pthread_cond_signal(&cond);
			break;
		default: /* hold it across a sleep */
			usleep(50);
			break;
		}
		pthread_mutex_unlock(&lock);
		if (((seed >> 8) & 7) == 0)
			sched_yield();
	}
	pthread_mutex_lock(&lock);
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* ---- the child ---- */

static pthread_mutex_t child_lock; /* initialised in the child: the parent never uses it */
static pthread_cond_t child_cond;
static int child_value;

static void *child_thread(void *arg)
{
	pthread_mutex_lock(&child_lock);
	child_value += (int)(intptr_t)arg;
	pthread_cond_signal(&child_cond);
	pthread_mutex_unlock(&child_lock);
	return (void *)((intptr_t)arg + 1);
}

static void child(int round)
{
	pthread_t t;
	void *ret = NULL;

	alarm(30); /* a child that hangs dies; the parent sees it */
	/* the parent's workers queued on it: their waits are not the child's */
	pthread_mutex_lock(&lock);
	counter++;
	pthread_mutex_unlock(&lock);
	pthread_mutex_init(&child_lock, NULL);
	pthread_cond_init(&child_cond, NULL);
	child_value = 0;
	if (pthread_create(&t, NULL, child_thread, (void *)(intptr_t)round))
		_exit(2);
	pthread_mutex_lock(&child_lock);
	while (child_value != round)
		pthread_cond_wait(&child_cond, &child_lock);
	pthread_mutex_unlock(&child_lock);
	if (pthread_join(t, &ret) || (intptr_t)ret != round + 1)
		_exit(3);
	pthread_mutex_destroy(&child_lock);
	pthread_cond_destroy(&child_cond);
	_exit(round % 100 + 10);
}

/* The child's wait status, or -1 when it did not end in time (it is killed). */
int main(void)
{
	pthread_t w[WORKERS];
	int bad = 0, hung = 0;

	alarm(110); /* the whole program: a hang is a failure, never a stuck run */
	for (long i = 0; i < WORKERS; i++)
		w[i] = spawn(worker, (void *)(intptr_t)i);
	for (int round = 0; round < FORKS; round++) {
		fflush(stdout);
		pthread_mutex_lock(&lock);
		pid_t pid = fork();
		pthread_mutex_unlock(&lock); /* in both */
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0)
			child(round);
		int status = wait_bounded(pid, CHILD_WAIT_MS);
		if (status == -1) {
			if (!hung++)
				fprintf(stderr, "round %d: the child did not end in %d ms\n", round, CHILD_WAIT_MS);
			if (hung >= 2)
				break; /* enough to know */
		} else if (!WIFEXITED(status) || WEXITSTATUS(status) != round % 100 + 10) {
			if (!bad++)
				fprintf(stderr, "round %d: child status 0x%x, want exit %d\n", round, status,
					round % 100 + 10);
		}
		if (round % 8 == 0)
			sched_yield();
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(w[i], NULL);
	result("1000 forks while 3 threads contend on a mutex and a condition; no child hangs", !hung);
	result("every child made a thread, joined it, used a mutex and exited with its status", !bad);
	result("the workers made progress", counter > 0);
	printf("fork_storm: %s\n", failed ? "FAIL" : "PASS");
	return failed;
}
