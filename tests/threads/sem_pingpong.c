/*
 * Unnamed POSIX semaphores across 64 threads, and their error cases.
 *
 * - Ping-pong: 32 pairs of threads bounce a turn between two semaphores
 *   thousands of times; each side checks that turns strictly alternate.
 * - Counting: 32 producers post, 32 consumers take (sem_wait, sem_trywait,
 *   sem_timedwait and sem_clockwait with short deadlines, retried); every
 *   unit is taken exactly once and the value ends at 0.
 * - A semaphore of value 1 as a lock over a plain counter: exact count.
 * - Errors: EAGAIN from sem_trywait, ETIMEDOUT after the deadline (and
 *   not before), EINVAL for a bad time, clock or initial value, EOVERFLOW
 *   at SEM_VALUE_MAX; sem_getvalue.
 * - A process-shared semaphore between two processes, and a named one
 *   (sem_open): both keep working.
 *
 * Deterministic output; exit 0 when every check held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "sem_pingpong"
#include "check.h"

#define PAIRS 32
#define BOUNCES 3000
#define PRODUCERS 32
#define CONSUMERS 32
#define UNITS 2000 /* per producer and per consumer */
#define LOCKERS 64
#define LOCK_ITERS 2000

/* ---- ping-pong ---- */

struct pair {
	sem_t ping, pong;
	long turn; /* plain: the semaphores order every access */
};
static struct pair pairs[PAIRS];

static void *pinger(void *arg)
{
	struct pair *p = arg;

	for (long i = 0; i < BOUNCES; i++) {
		EXPECT(sem_wait(&p->ping) == 0, "sem_wait: %d", errno);
		EXPECT(p->turn == 2 * i, "pinger: turn %ld, want %ld", p->turn, 2 * i);
		p->turn++;
		if (i % 100 == 0)
			sched_yield();
		EXPECT(sem_post(&p->pong) == 0, "sem_post: %d", errno);
	}
	return NULL;
}

static void *ponger(void *arg)
{
	struct pair *p = arg;

	for (long i = 0; i < BOUNCES; i++) {
		int r;
		if (i % 3 == 0) {
			while ((r = sem_trywait(&p->pong)) != 0) {
				EXPECT(errno == EAGAIN, "sem_trywait: %d", errno);
				sched_yield();
			}
		} else if (i % 3 == 1) {
			struct timespec ts = ts_in_ns(CLOCK_REALTIME, 100000);
			while ((r = sem_timedwait(&p->pong, &ts)) != 0) {
				EXPECT(errno == ETIMEDOUT, "sem_timedwait: %d", errno);
				ts = ts_in_ns(CLOCK_REALTIME, 100000);
			}
		} else {
			EXPECT(sem_wait(&p->pong) == 0, "sem_wait: %d", errno);
		}
		EXPECT(p->turn == 2 * i + 1, "ponger: turn %ld, want %ld", p->turn, 2 * i + 1);
		p->turn++;
		EXPECT(sem_post(&p->ping) == 0, "sem_post: %d", errno);
	}
	return NULL;
}

/* ---- producers and consumers ---- */

static sem_t items;
static _Atomic long produced, consumed, timeouts;
static _Atomic int taken_by[PRODUCERS * UNITS];
static _Atomic int queue[PRODUCERS * UNITS];
static _Atomic long q_head, q_tail;

static void *producer(void *arg)
{
	long id = (long)arg;

	for (long i = 0; i < UNITS; i++) {
		long slot = atomic_fetch_add(&q_tail, 1);
		atomic_store(&queue[slot], (int)(id * UNITS + i) + 1);
		atomic_fetch_add(&produced, 1);
		EXPECT(sem_post(&items) == 0, "sem_post: %d", errno);
		if (i % 64 == 0)
			sched_yield();
	}
	return NULL;
}

static void *consumer(void *arg)
{
	long id = (long)arg;

	for (long i = 0; i < UNITS; i++) {
		int r;
		switch ((id + i) % 4) {
		case 0:
			r = sem_wait(&items);
			EXPECT(r == 0, "sem_wait: %d", errno);
			break;
		case 1:
			while ((r = sem_trywait(&items)) != 0) {
				EXPECT(errno == EAGAIN, "sem_trywait: %d", errno);
				sched_yield();
			}
			break;
		case 2: {
			struct timespec ts = ts_in_ns(CLOCK_REALTIME, 50000);
			while ((r = sem_timedwait(&items, &ts)) != 0) {
				EXPECT(errno == ETIMEDOUT, "sem_timedwait: %d", errno);
				atomic_fetch_add(&timeouts, 1);
				ts = ts_in_ns(CLOCK_REALTIME, 50000);
			}
			break;
		}
		default: {
			struct timespec ts = ts_in_ns(CLOCK_MONOTONIC, 50000);
			while ((r = sem_clockwait(&items, CLOCK_MONOTONIC, &ts)) != 0) {
				EXPECT(errno == ETIMEDOUT, "sem_clockwait: %d", errno);
				atomic_fetch_add(&timeouts, 1);
				ts = ts_in_ns(CLOCK_MONOTONIC, 50000);
			}
			break;
		}
		}
		/*
		 * Every unit was posted after its item was queued, so as many
		 * items as units taken have been queued: this slot's is queued
		 * or about to be (its producer took the slot and has yet to
		 * store into it).
		 */
		long slot = atomic_fetch_add(&q_head, 1);
		EXPECT(slot < (long)PRODUCERS * UNITS, "consumer %ld: more units taken than posted", id);
		if (slot >= (long)PRODUCERS * UNITS)
			break;
		int item;
		uint64_t give_up = now_ns(CLOCK_MONOTONIC) + 30000000000u; /* only a lost item waits that long */
		while (!(item = atomic_exchange(&queue[slot], 0)) && now_ns(CLOCK_MONOTONIC) < give_up)
			sched_yield();
		EXPECT(item > 0, "consumer %ld: took a unit with no item queued (slot %ld)", id, slot);
		if (item > 0)
			EXPECT(atomic_fetch_add(&taken_by[item - 1], 1) == 0, "item %d taken twice", item - 1);
		atomic_fetch_add(&consumed, 1);
	}
	return NULL;
}

/* ---- a semaphore as a lock ---- */

static sem_t mutex;
static long counter; /* plain */

static void *locker(void *arg)
{
	(void)arg;
	for (int i = 0; i < LOCK_ITERS; i++) {
		EXPECT(sem_wait(&mutex) == 0, "sem_wait: %d", errno);
		long v = counter;
		if (i % 128 == 0)
			sched_yield();
		counter = v + 1;
		EXPECT(sem_post(&mutex) == 0, "sem_post: %d", errno);
	}
	return NULL;
}

/* ---- errors and timeouts ---- */

struct timed {
	sem_t *sem;
	int clock_variant; /* 0: sem_timedwait; 1: sem_clockwait MONOTONIC; 2: REALTIME */
	uint64_t timeout_ns;
	int result, err;
	uint64_t waited_ns;
	uint64_t deadline_ns, end_on_clock; /* on the wait's own clock */
};

static void *timed_main(void *arg)
{
	struct timed *t = arg;
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	clockid_t clock = t->clock_variant == 1 ? CLOCK_MONOTONIC : CLOCK_REALTIME;
	struct timespec ts = ts_in_ns(clock, t->timeout_ns);

	t->deadline_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	t->result = t->clock_variant ? sem_clockwait(t->sem, clock, &ts) : sem_timedwait(t->sem, &ts);
	t->err = errno;
	t->waited_ns = now_ns(CLOCK_MONOTONIC) - t0;
	t->end_on_clock = now_ns(clock);
	return NULL;
}

static void check_errors(void)
{
	sem_t s;
	int v;
	struct timespec bad = ts_in_ns(CLOCK_REALTIME, 1000000000);

	bad.tv_nsec = 1000000000;
	EXPECT(sem_init(&s, 0, (unsigned)SEM_VALUE_MAX + 1) == -1 && errno == EINVAL,
	       "sem_init above SEM_VALUE_MAX: EINVAL");
	EXPECT(sem_init(&s, 0, 0) == 0, "sem_init");
	EXPECT(sem_trywait(&s) == -1 && errno == EAGAIN, "sem_trywait at 0: EAGAIN");
	EXPECT(sem_timedwait(&s, &bad) == -1 && errno == EINVAL, "sem_timedwait with tv_nsec 1e9: EINVAL");
	EXPECT(sem_clockwait(&s, CLOCK_MONOTONIC, &bad) == -1 && errno == EINVAL,
	       "sem_clockwait with tv_nsec 1e9: EINVAL");
	struct timespec ok = ts_in_ns(CLOCK_REALTIME, 1000000);
	EXPECT(sem_clockwait(&s, CLOCK_PROCESS_CPUTIME_ID, &ok) == -1 && errno == EINVAL,
	       "sem_clockwait on a CPU-time clock: EINVAL");
	struct timespec past = { 0, 0 };
	EXPECT(sem_timedwait(&s, &past) == -1 && errno == ETIMEDOUT, "sem_timedwait in the past: ETIMEDOUT");

	/* three threads time out on an empty semaphore, none early */
	struct timed t[3];
	pthread_t th[3];
	for (int i = 0; i < 3; i++) {
		t[i] = (struct timed){ .sem = &s, .clock_variant = i, .timeout_ns = 50000000 };
		pthread_create(&th[i], NULL, timed_main, &t[i]);
	}
	for (int i = 0; i < 3; i++) {
		pthread_join(th[i], NULL);
		EXPECT(t[i].result == -1 && t[i].err == ETIMEDOUT, "timed wait %d: %d errno %d", i, t[i].result,
		       t[i].err);
		/*
		 * Not early: 50 ms waited, less 1 ms for the clocks' readings; or,
		 * on CLOCK_REALTIME (all but variant 1), which can be stepped
		 * forward while it waits, its deadline passed on that clock.
		 */
		EXPECT(t[i].waited_ns >= 49000000 || (t[i].clock_variant != 1 && t[i].end_on_clock >= t[i].deadline_ns),
		       "timed wait %d gave up early (%llu ns)", i, (unsigned long long)t[i].waited_ns);
	}
	/* a post reaches a timed waiter before its deadline (30 s: generous, the post comes at once) */
	t[0] = (struct timed){ .sem = &s, .clock_variant = 1, .timeout_ns = 30000000000u };
	pthread_create(&th[0], NULL, timed_main, &t[0]);
	usleep(20000);
	EXPECT(sem_post(&s) == 0, "sem_post");
	pthread_join(th[0], NULL);
	EXPECT(t[0].result == 0, "timed wait woken by a post: %d errno %d", t[0].result, t[0].err);
	EXPECT(sem_getvalue(&s, &v) == 0 && v == 0, "value after the handoff: %d", v);

	/* a deadline in the past still takes an available unit */
	EXPECT(sem_post(&s) == 0 && sem_timedwait(&s, &past) == 0, "sem_timedwait in the past, value 1");
	EXPECT(sem_post(&s) == 0 && sem_post(&s) == 0 && sem_getvalue(&s, &v) == 0 && v == 2, "value 2: %d", v);
	EXPECT(sem_destroy(&s) == 0, "sem_destroy");

	EXPECT(sem_init(&s, 0, SEM_VALUE_MAX) == 0, "sem_init at SEM_VALUE_MAX");
	EXPECT(sem_post(&s) == -1 && errno == EOVERFLOW, "sem_post at SEM_VALUE_MAX: EOVERFLOW");
	EXPECT(sem_getvalue(&s, &v) == 0 && v == SEM_VALUE_MAX, "value stays SEM_VALUE_MAX: %d", v);
	EXPECT(sem_trywait(&s) == 0 && sem_post(&s) == 0, "below the maximum again");
	EXPECT(sem_destroy(&s) == 0, "sem_destroy");
}

/* Process-shared (sem_init pshared=1 in shared memory) and named semaphores. */
static void check_shared(void)
{
	sem_t *ss = mmap(NULL, 2 * sizeof(sem_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int status, v;

	EXPECT(ss != MAP_FAILED, "mmap");
	if (ss == MAP_FAILED)
		return;
	EXPECT(sem_init(&ss[0], 1, 0) == 0 && sem_init(&ss[1], 1, 0) == 0, "process-shared sem_init");
	pid_t pid = fork();
	if (pid == 0) {
		int bad = 0;
		for (int i = 0; i < 500; i++)
			bad += sem_wait(&ss[0]) != 0 || sem_post(&ss[1]) != 0;
		_exit(bad ? 1 : 0);
	}
	EXPECT(pid > 0, "fork");
	for (int i = 0; i < 500; i++)
		EXPECT(sem_post(&ss[0]) == 0 && sem_wait(&ss[1]) == 0, "process-shared ping-pong");
	EXPECT(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child");
	EXPECT(sem_getvalue(&ss[0], &v) == 0 && v == 0, "process-shared value: %d", v);
	sem_destroy(&ss[0]);
	sem_destroy(&ss[1]);
	munmap(ss, 2 * sizeof(sem_t));

	char name[64];
	snprintf(name, sizeof(name), "/sem_pingpong.%d", (int)getpid());
	sem_t *n = sem_open(name, O_CREAT | O_EXCL, 0600, 2);
	EXPECT(n != SEM_FAILED, "sem_open: %d", errno);
	if (n == SEM_FAILED)
		return;
	sem_unlink(name);
	EXPECT(sem_getvalue(n, &v) == 0 && v == 2, "named: value %d", v);
	EXPECT(sem_wait(n) == 0 && sem_trywait(n) == 0, "named: two waits");
	EXPECT(sem_trywait(n) == -1 && errno == EAGAIN, "named: EAGAIN at 0");
	struct timespec soon = ts_in_ns(CLOCK_REALTIME, 10000000);
	EXPECT(sem_timedwait(n, &soon) == -1 && errno == ETIMEDOUT, "named: ETIMEDOUT");
	EXPECT(sem_post(n) == 0 && sem_getvalue(n, &v) == 0 && v == 1, "named: post, value %d", v);
	sem_close(n);
}

int main(void)
{
	pthread_t t[2 * PAIRS > PRODUCERS + CONSUMERS ? 2 * PAIRS : PRODUCERS + CONSUMERS];
	int v;

	for (int i = 0; i < PAIRS; i++) {
		EXPECT(sem_init(&pairs[i].ping, 0, 1) == 0 && sem_init(&pairs[i].pong, 0, 0) == 0, "sem_init");
		pthread_create(&t[2 * i], NULL, pinger, &pairs[i]);
		pthread_create(&t[2 * i + 1], NULL, ponger, &pairs[i]);
	}
	for (int i = 0; i < 2 * PAIRS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < PAIRS; i++) {
		EXPECT(pairs[i].turn == 2 * BOUNCES, "pair %d: %ld turns", i, pairs[i].turn);
		EXPECT(sem_getvalue(&pairs[i].ping, &v) == 0 && v == 1, "pair %d: ping value %d", i, v);
		sem_destroy(&pairs[i].ping);
		sem_destroy(&pairs[i].pong);
	}
	resultf(misses() == 0, "%d pairs x %d bounces, turns alternate", PAIRS, BOUNCES);

	long before = misses();
	EXPECT(sem_init(&items, 0, 0) == 0, "sem_init");
	for (long i = 0; i < CONSUMERS; i++)
		pthread_create(&t[i], NULL, consumer, (void *)i);
	for (long i = 0; i < PRODUCERS; i++)
		pthread_create(&t[CONSUMERS + i], NULL, producer, (void *)i);
	for (int i = 0; i < PRODUCERS + CONSUMERS; i++)
		pthread_join(t[i], NULL);
	EXPECT(produced == (long)PRODUCERS * UNITS && consumed == (long)CONSUMERS * UNITS,
	       "%ld produced, %ld consumed", atomic_load(&produced), atomic_load(&consumed));
	for (long i = 0; i < (long)PRODUCERS * UNITS; i++)
		EXPECT(taken_by[i] == 1, "item %ld taken %d times", i, taken_by[i]);
	EXPECT(sem_getvalue(&items, &v) == 0 && v == 0, "value after: %d", v);
	EXPECT(sem_trywait(&items) == -1 && errno == EAGAIN, "empty after");
	sem_destroy(&items);
	resultf(misses() == before, "%d producers, %d consumers, %d units: each taken once", PRODUCERS, CONSUMERS,
	        PRODUCERS * UNITS);

	before = misses();
	EXPECT(sem_init(&mutex, 0, 1) == 0, "sem_init");
	for (int i = 0; i < LOCKERS; i++)
		pthread_create(&t[i], NULL, locker, NULL);
	for (int i = 0; i < LOCKERS; i++)
		pthread_join(t[i], NULL);
	EXPECT(counter == (long)LOCKERS * LOCK_ITERS, "counter %ld, want %ld", counter, (long)LOCKERS * LOCK_ITERS);
	sem_destroy(&mutex);
	resultf(misses() == before, "%d threads x %d increments under a binary semaphore: %ld", LOCKERS, LOCK_ITERS,
	        (long)LOCKERS * LOCK_ITERS);

	before = misses();
	check_errors();
	result("EAGAIN, ETIMEDOUT, EINVAL, EOVERFLOW", misses() == before);

	before = misses();
	check_shared();
	result("process-shared and named semaphores", misses() == before);

	printf("sem_pingpong: %s\n", failed ? "FAIL" : "PASS");
	return failed;
}
