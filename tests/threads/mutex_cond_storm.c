/*
 * Mutex and condition-variable storms across cores, with no lost wake-up:
 *   1. 64 threads increment counters under one mutex (lock and trylock);
 *   2. ping-pong pairs hand a turn back and forth through condition
 *      variables: 100,000 handoffs in all;
 *   3. a barrier built from a mutex and a condition variable (broadcast),
 *      many rounds, each checked;
 *   4. timed waits that must time out (cond_timedwait on CLOCK_REALTIME and
 *      CLOCK_MONOTONIC, mutex_timedlock on a held mutex), and must not
 *      return early (a CLOCK_REALTIME deadline, as that clock can be
 *      stepped back, may instead be shown met on CLOCK_MONOTONIC);
 *   5. recursive and error-checking mutex semantics (EDEADLK, EPERM, EBUSY).
 * A lost wake-up hangs (the test runner's timeout reports it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "mutex_cond_storm"
#include "check.h"

/* ---- 1. counter storm ---- */

#define STORM_THREADS 64
#define STORM_ITERS 20000
static pthread_mutex_t storm_lock = PTHREAD_MUTEX_INITIALIZER;
static long storm_counter, storm_shadow;

static void *storm(void *arg)
{
	long id = (long)(intptr_t)arg;

	for (int i = 0; i < STORM_ITERS; i++) {
		if (i % 4 == 3 && id % 2) {
			while (pthread_mutex_trylock(&storm_lock) != 0)
				sched_yield();
		} else {
			pthread_mutex_lock(&storm_lock);
		}
		/* a non-atomic read-modify-write: lost updates show a broken mutex */
		long v = storm_counter;
		storm_shadow += 2;
		storm_counter = v + 1;
		pthread_mutex_unlock(&storm_lock);
	}
	return NULL;
}

static void test_storm(void)
{
	pthread_t t[STORM_THREADS];

	for (long i = 0; i < STORM_THREADS; i++)
		t[i] = spawn(storm, (void *)(intptr_t)i);
	for (int i = 0; i < STORM_THREADS; i++)
		pthread_join(t[i], NULL);
	long want = (long)STORM_THREADS * STORM_ITERS;
	if (storm_counter != want || storm_shadow != 2 * want)
		fprintf(stderr, "counter %ld, shadow %ld, want %ld and %ld\n", storm_counter,
			storm_shadow, want, 2 * want);
	result("64 threads x 20000 increments under one mutex", storm_counter == want &&
								  storm_shadow == 2 * want);
}

/* ---- 2. ping-pong ---- */

#define PAIRS 4
#define HANDOFFS 100000 /* in all: HANDOFFS / PAIRS per pair */
struct pair {
	pthread_mutex_t lock;
	pthread_cond_t cond[2];
	int turn;      /* 0 or 1: whose go it is */
	long handoffs; /* counted by the side that takes its turn */
	int bad;
};
static struct pair pairs[PAIRS];

struct side {
	struct pair *p;
	int me;
};

static void *pingpong(void *arg)
{
	struct side *s = arg;
	struct pair *p = s->p;

	pthread_mutex_lock(&p->lock);
	for (int i = 0; i < HANDOFFS / PAIRS / 2; i++) {
		while (p->turn != s->me)
			pthread_cond_wait(&p->cond[s->me], &p->lock);
		if (p->handoffs % 2 != s->me)
			p->bad = 1;
		p->handoffs++;
		p->turn = !s->me;
		pthread_cond_signal(&p->cond[!s->me]);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static void test_pingpong(void)
{
	pthread_t t[PAIRS][2];
	struct side sides[PAIRS][2];
	long total = 0;
	int bad = 0;

	for (int i = 0; i < PAIRS; i++) {
		pthread_mutex_init(&pairs[i].lock, NULL);
		pthread_cond_init(&pairs[i].cond[0], NULL);
		pthread_cond_init(&pairs[i].cond[1], NULL);
		for (int j = 0; j < 2; j++) {
			sides[i][j] = (struct side){ &pairs[i], j };
			t[i][j] = spawn(pingpong, &sides[i][j]);
		}
	}
	for (int i = 0; i < PAIRS; i++) {
		pthread_join(t[i][0], NULL);
		pthread_join(t[i][1], NULL);
		total += pairs[i].handoffs;
		bad |= pairs[i].bad;
	}
	if (total != HANDOFFS || bad)
		fprintf(stderr, "ping-pong: %ld handoffs (want %d), out of turn: %d\n", total, HANDOFFS, bad);
	result("4 ping-pong pairs, 100000 condition-variable handoffs", total == HANDOFFS && !bad);
}

/* ---- 3. barrier from a mutex and a broadcast ---- */

#define BAR_THREADS 16
#define BAR_ROUNDS 2000
static pthread_mutex_t bar_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bar_cond = PTHREAD_COND_INITIALIZER;
static int bar_count;
static unsigned long bar_generation;
static long bar_slots[BAR_THREADS];
static _Atomic int bar_bad;

static void barrier_wait(void)
{
	pthread_mutex_lock(&bar_lock);
	unsigned long gen = bar_generation;
	if (++bar_count == BAR_THREADS) {
		bar_count = 0;
		bar_generation++;
		pthread_cond_broadcast(&bar_cond);
	} else {
		while (gen == bar_generation)
			pthread_cond_wait(&bar_cond, &bar_lock);
	}
	pthread_mutex_unlock(&bar_lock);
}

static void *barrier_worker(void *arg)
{
	int id = (int)(intptr_t)arg;

	for (long r = 1; r <= BAR_ROUNDS; r++) {
		bar_slots[id] = r * (id + 1);
		barrier_wait();
		/* every slot written in this round before anyone passed */
		for (int j = 0; j < BAR_THREADS; j++)
			if (bar_slots[j] != r * (j + 1))
				atomic_store(&bar_bad, 1);
		barrier_wait(); /* nobody writes the next round while others read */
	}
	return NULL;
}

static void test_barrier(void)
{
	pthread_t t[BAR_THREADS];

	for (int i = 0; i < BAR_THREADS; i++)
		t[i] = spawn(barrier_worker, (void *)(intptr_t)i);
	for (int i = 0; i < BAR_THREADS; i++)
		pthread_join(t[i], NULL);
	int ok = !atomic_load(&bar_bad) && bar_generation == 2 * BAR_ROUNDS;
	if (!ok)
		fprintf(stderr, "barrier: generation %lu (want %d), bad %d\n", bar_generation,
			2 * BAR_ROUNDS, atomic_load(&bar_bad));
	result("16 threads x 4000 cond+mutex barrier rounds", ok);
}

/* ---- 4. timeouts ---- */

static struct timespec in_ms(clockid_t clock, int ms)
{
	int64_t t = (int64_t)now_ns(clock) + (int64_t)ms * 1000000;

	return (struct timespec){ (time_t)(t / 1000000000), (long)(t % 1000000000) };
}

static int64_t ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

/*
 * Whether a wait that timed out did so in time: `late` ns after its absolute
 * deadline on `clock`, having lasted `waited` ns of CLOCK_MONOTONIC for a
 * timeout of `ms`. A CLOCK_REALTIME deadline can seem unmet when that
 * clock is stepped back (NTP, a hypervisor's sync) as the wait ends, so
 * there the monotonic time waited also shows it (less 1 ms for reading
 * two clocks). A CLOCK_MONOTONIC deadline is judged on its own clock only.
 */
static int not_early(clockid_t clock, int64_t late, int64_t waited, int ms)
{
	if (late >= 0)
		return 1;
	return clock == CLOCK_REALTIME && waited >= (int64_t)ms * 1000000 - 1000000;
}

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t holder_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t holder_cond = PTHREAD_COND_INITIALIZER;
static int holder_state; /* 1: holds `held`; 2: may release it */

static void *holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&held);
	pthread_mutex_lock(&holder_lock);
	holder_state = 1;
	pthread_cond_broadcast(&holder_cond);
	while (holder_state != 2)
		pthread_cond_wait(&holder_cond, &holder_lock);
	pthread_mutex_unlock(&holder_lock);
	pthread_mutex_unlock(&held);
	return NULL;
}

/* A thread that waits on a condition nobody signals: it must time out. */
static void *timed_waiter(void *arg)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c;
	pthread_condattr_t ca;
	clockid_t clock = (clockid_t)(intptr_t)arg;
	int ok = 1;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, clock);
	pthread_cond_init(&c, &ca);
	pthread_mutex_lock(&m);
	for (int i = 0; i < 3; i++) {
		int ms = 30 + 10 * i;
		int64_t t0 = (int64_t)now_ns(CLOCK_MONOTONIC);
		struct timespec abs = in_ms(clock, ms);
		int err = pthread_cond_timedwait(&c, &m, &abs);
		int64_t late = (int64_t)now_ns(clock) - ts_ns(&abs), waited = (int64_t)now_ns(CLOCK_MONOTONIC) - t0;
		/* a wait may end spuriously with 0, but never ETIMEDOUT early */
		if (err == 0)
			continue;
		if (err != ETIMEDOUT || !not_early(clock, late, waited, ms)) {
			fprintf(stderr, "cond_timedwait (clock %d): %s, %lld ns after the deadline, %lld ns waited\n",
				(int)clock, strerror(err), (long long)late, (long long)waited);
			ok = 0;
		}
		/* the mutex is held again after the timeout */
		if (pthread_mutex_trylock(&m) != EBUSY) {
			fprintf(stderr, "cond_timedwait returned without the mutex\n");
			ok = 0;
		}
	}
	pthread_mutex_unlock(&m);
	pthread_cond_destroy(&c);
	return (void *)(intptr_t)ok;
}

static void test_timeouts(void)
{
	pthread_t waiters[8], h;
	int ok = 1;

	for (int i = 0; i < 8; i++)
		waiters[i] = spawn(timed_waiter, (void *)(intptr_t)(i % 2 ? CLOCK_MONOTONIC : CLOCK_REALTIME));
	for (int i = 0; i < 8; i++) {
		void *r;
		pthread_join(waiters[i], &r);
		ok &= (int)(intptr_t)r;
	}
	result("pthread_cond_timedwait times out, not early (realtime, monotonic)", ok);

	/* pthread_mutex_timedlock on a mutex another thread holds */
	h = spawn(holder, NULL);
	pthread_mutex_lock(&holder_lock);
	while (holder_state != 1)
		pthread_cond_wait(&holder_cond, &holder_lock);
	pthread_mutex_unlock(&holder_lock);
	int64_t t0 = (int64_t)now_ns(CLOCK_MONOTONIC);
	struct timespec abs = in_ms(CLOCK_REALTIME, 50);
	int err = pthread_mutex_timedlock(&held, &abs);
	int64_t late = (int64_t)now_ns(CLOCK_REALTIME) - ts_ns(&abs), waited = (int64_t)now_ns(CLOCK_MONOTONIC) - t0;
	int tok = err == ETIMEDOUT && not_early(CLOCK_REALTIME, late, waited, 50);
	if (!tok)
		fprintf(stderr, "mutex_timedlock: %s, %lld ns after the deadline, %lld ns waited\n",
			strerror(err), (long long)late, (long long)waited);
	pthread_mutex_lock(&holder_lock);
	holder_state = 2;
	pthread_cond_broadcast(&holder_cond);
	pthread_mutex_unlock(&holder_lock);
	/* and once it is released, a timed lock gets it (30 s: only a lost wake-up waits that long) */
	abs = in_ms(CLOCK_REALTIME, 30000);
	err = pthread_mutex_timedlock(&held, &abs);
	if (err) {
		fprintf(stderr, "mutex_timedlock after release: %s\n", strerror(err));
		tok = 0;
	} else {
		pthread_mutex_unlock(&held);
	}
	pthread_join(h, NULL);
	result("pthread_mutex_timedlock times out on a held mutex, then gets it", tok);
}

/* ---- 5. recursive and error-checking mutexes ---- */

struct other_op {
	pthread_mutex_t *m;
	int trylock_err, unlock_err;
};

static void *other_thread(void *arg)
{
	struct other_op *op = arg;

	op->trylock_err = pthread_mutex_trylock(op->m);
	if (op->trylock_err == 0)
		pthread_mutex_unlock(op->m);
	op->unlock_err = pthread_mutex_unlock(op->m); /* not the owner */
	return NULL;
}

static void from_other_thread(pthread_mutex_t *m, struct other_op *op)
{
	op->m = m;
	pthread_join(spawn(other_thread, op), NULL);
}

static void test_kinds(void)
{
	pthread_mutexattr_t a;
	pthread_mutex_t rec, chk;
	struct other_op op;
	long before = misses();

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&rec, &a);
	EXPECT_ERR(pthread_mutex_lock(&rec), 0);
	EXPECT_ERR(pthread_mutex_lock(&rec), 0);
	EXPECT_ERR(pthread_mutex_trylock(&rec), 0);
	from_other_thread(&rec, &op);
	EXPECT_ERR(op.trylock_err, EBUSY);
	EXPECT_ERR(op.unlock_err, EPERM);
	EXPECT_ERR(pthread_mutex_unlock(&rec), 0);
	EXPECT_ERR(pthread_mutex_unlock(&rec), 0);
	from_other_thread(&rec, &op); /* still held once */
	EXPECT_ERR(op.trylock_err, EBUSY);
	EXPECT_ERR(pthread_mutex_unlock(&rec), 0);
	EXPECT_ERR(pthread_mutex_unlock(&rec), EPERM); /* not held any more */
	from_other_thread(&rec, &op);
	EXPECT_ERR(op.trylock_err, 0);
	EXPECT_ERR(pthread_mutex_destroy(&rec), 0);
	result("recursive mutex: nested locks, EBUSY and EPERM for others", misses() == before);

	before = misses();
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&chk, &a);
	EXPECT_ERR(pthread_mutex_unlock(&chk), EPERM); /* not locked */
	EXPECT_ERR(pthread_mutex_lock(&chk), 0);
	EXPECT_ERR(pthread_mutex_lock(&chk), EDEADLK);
	EXPECT_ERR(pthread_mutex_trylock(&chk), EBUSY);
	from_other_thread(&chk, &op);
	EXPECT_ERR(op.trylock_err, EBUSY);
	EXPECT_ERR(op.unlock_err, EPERM);
	EXPECT_ERR(pthread_mutex_unlock(&chk), 0);
	EXPECT_ERR(pthread_mutex_unlock(&chk), EPERM);
	EXPECT_ERR(pthread_mutex_destroy(&chk), 0);
	result("error-checking mutex: EDEADLK on relock, EPERM on foreign unlock", misses() == before);

	before = misses();
	pthread_mutex_t normal = PTHREAD_MUTEX_INITIALIZER;
	EXPECT_ERR(pthread_mutex_lock(&normal), 0);
	EXPECT_ERR(pthread_mutex_trylock(&normal), EBUSY);
	from_other_thread(&normal, &op);
	EXPECT_ERR(op.trylock_err, EBUSY);
	EXPECT_ERR(pthread_mutex_unlock(&normal), 0);
	EXPECT_ERR(pthread_mutex_trylock(&normal), 0);
	EXPECT_ERR(pthread_mutex_unlock(&normal), 0);
	result("normal mutex: trylock EBUSY while held", misses() == before);
	pthread_mutexattr_destroy(&a);
}

int main(void)
{
	test_storm();
	test_pingpong();
	test_barrier();
	test_timeouts();
	test_kinds();
	printf("mutex_cond_storm: %s\n", failed ? "FAIL" : "PASS");
	return failed;
}
