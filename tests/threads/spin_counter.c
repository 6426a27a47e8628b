/*
 * Spin locks: 64 threads increment plain counters under them.
 *
 * - Counter: 64 threads x 20,000 increments under one spin lock (some
 *   with pthread_spin_trylock, retried); the count must be exact.
 * - Holders that block: threads keep the lock across a sleep, a read of a
 *   pipe, and a wait for a mutex another thread holds for a while, while
 *   the others spin on it. A runtime that lets a spinner keep the holder
 *   from ever running again (one CPU, no preemption, the holder parked in
 *   a system call or a wait) hangs here.
 * - trylock is EBUSY while the lock is held, and 0 once it is free.
 *
 * Deterministic output; exit 0 when every check held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define CHECK_NAME "spin_counter"
#include "check.h"

#define NTHREADS 64
#define ITERS 20000
#define BLOCKERS 16
#define BLOCK_ROUNDS 20

static pthread_spinlock_t lock;
static long counter;      /* plain: the lock orders every access */
static _Atomic int inside;

static void enter(void)
{
	EXPECT(atomic_fetch_add(&inside, 1) == 0, "two threads hold the spin lock");
}

static void leave(void)
{
	atomic_fetch_sub(&inside, 1);
}

static void *incrementer(void *arg)
{
	long id = (long)arg;

	for (int i = 0; i < ITERS; i++) {
		if ((id + i) % 5 == 0) {
			int err;
			while ((err = pthread_spin_trylock(&lock)) != 0)
				EXPECT(err == EBUSY, "trylock: %d", err);
		} else {
			EXPECT(pthread_spin_lock(&lock) == 0, "lock");
		}
		enter();
		counter++;
		leave();
		EXPECT(pthread_spin_unlock(&lock) == 0, "unlock");
	}
	return NULL;
}

/* ---- holders that block ---- */

static pthread_spinlock_t blocking_lock;
static long blocked_counter;
static int pipefd[2];
static pthread_mutex_t other = PTHREAD_MUTEX_INITIALIZER;

static void *blocker(void *arg)
{
	long id = (long)arg;
	char c;

	for (int r = 0; r < BLOCK_ROUNDS; r++) {
		EXPECT(pthread_spin_lock(&blocking_lock) == 0, "lock");
		enter();
		switch ((id + r) % 3) {
		case 0:
			usleep(200); /* asleep with the lock */
			break;
		case 1:
			/* a system call with the lock (the bytes are there: it never waits for a writer) */
			EXPECT(read(pipefd[0], &c, 1) == 1, "read: %d", errno);
			break;
		default:
			/* waits for a mutex another thread keeps for a moment */
			EXPECT(pthread_mutex_lock(&other) == 0, "mutex");
			pthread_mutex_unlock(&other);
			break;
		}
		blocked_counter++;
		leave();
		EXPECT(pthread_spin_unlock(&blocking_lock) == 0, "unlock");
	}
	return NULL;
}

static _Atomic int holding = 1;

/* Takes and keeps the mutex for short spells while the blockers run. */
static void *mutex_holder(void *arg)
{
	(void)arg;
	while (atomic_load(&holding)) {
		pthread_mutex_lock(&other);
		usleep(100);
		pthread_mutex_unlock(&other);
		usleep(100);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[NTHREADS], m;

	EXPECT(pthread_spin_init(&lock, PTHREAD_PROCESS_PRIVATE) == 0, "init");
	EXPECT(pthread_spin_trylock(&lock) == 0, "trylock on a free lock");
	EXPECT(pthread_spin_trylock(&lock) == EBUSY, "trylock on a held lock: EBUSY");
	EXPECT(pthread_spin_unlock(&lock) == 0, "unlock");
	for (long i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, incrementer, (void *)i)) {
			perror("pthread_create");
			return 2;
		}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	EXPECT(counter == (long)NTHREADS * ITERS, "counter %ld, want %ld", counter, (long)NTHREADS * ITERS);
	EXPECT(pthread_spin_trylock(&lock) == 0 && pthread_spin_unlock(&lock) == 0, "free after");
	EXPECT(pthread_spin_destroy(&lock) == 0, "destroy");
	resultf(misses() == 0, "%d threads x %d increments: %ld", NTHREADS, ITERS, (long)NTHREADS * ITERS);

	long before = misses();
	long reads = 0;
	for (long id = 0; id < BLOCKERS; id++)
		for (int r = 0; r < BLOCK_ROUNDS; r++)
			reads += (id + r) % 3 == 1;
	if (pipe(pipefd)) {
		perror("pipe");
		return 2;
	}
	for (long i = 0; i < reads; i++)
		EXPECT(write(pipefd[1], "x", 1) == 1, "write: %d", errno);
	EXPECT(pthread_spin_init(&blocking_lock, PTHREAD_PROCESS_SHARED) == 0, "init");
	pthread_create(&m, NULL, mutex_holder, NULL);
	for (long i = 0; i < BLOCKERS; i++)
		pthread_create(&t[i], NULL, blocker, (void *)i);
	for (int i = 0; i < BLOCKERS; i++)
		pthread_join(t[i], NULL);
	atomic_store(&holding, 0);
	pthread_join(m, NULL);
	EXPECT(blocked_counter == BLOCKERS * BLOCK_ROUNDS, "counter %ld, want %d", blocked_counter,
	       BLOCKERS * BLOCK_ROUNDS);
	EXPECT(pthread_spin_destroy(&blocking_lock) == 0, "destroy");
	resultf(misses() == before, "%d threads x %d rounds holding the lock across sleep, read, mutex", BLOCKERS,
	        BLOCK_ROUNDS);

	printf("spin_counter: %s\n", failed ? "FAIL" : "PASS");
	return failed;
}
