/*
 * Read-write locks under a storm of 64 threads, and their error cases.
 *
 * Three locks (PTHREAD_RWLOCK_INITIALIZER, the writer-preferring static
 * initialiser, and one from pthread_rwlock_init with an attribute) each
 * get 64 threads that take them thousands of times in every way:
 * rdlock, tryrdlock, timedrdlock, clockrdlock, wrlock, trywrlock,
 * timedwrlock, clockwrlock. Inside, readers check that no writer is in and
 * that the protected array is consistent; writers check that they are
 * alone and rewrite the array; some yield or sleep while holding the lock.
 * The number of writes must come out exact.
 *
 * Then the semantics: EDEADLK when the writer relocks, EBUSY from the try
 * variants, ETIMEDOUT after the deadline (and not before), EINVAL for a
 * bad time or clock, reader preference (a reader gets in past a waiting
 * writer) and writer preference (it does not, and gets in once the writer
 * gives up on its deadline).
 *
 * Deterministic output; exit 0 when every check held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "rwlock_storm"
#include "check.h"

#define NTHREADS 64
#define ITERS 3000
#define SLOTS 8

struct guarded {
	pthread_rwlock_t *lock;
	const char *name;
	_Atomic int readers_in, writers_in;
	long slots[SLOTS];     /* all equal whenever no writer is in */
	long writes;           /* plain: only writers touch it */
	_Atomic long wr_done;  /* writes the threads counted */
	_Atomic long rd_done;
};

static pthread_rwlock_t lock_static = PTHREAD_RWLOCK_INITIALIZER;
static pthread_rwlock_t lock_wpref = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
static pthread_rwlock_t lock_init;

static struct guarded locks[3] = {
	{ .lock = &lock_static, .name = "PTHREAD_RWLOCK_INITIALIZER" },
	{ .lock = &lock_wpref, .name = "WRITER_NONRECURSIVE_INITIALIZER_NP" },
	{ .lock = &lock_init, .name = "pthread_rwlock_init(PREFER_WRITER_NP)" },
};

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 16;
}

static void dawdle(unsigned r)
{
	if (r % 64 == 0)
		sched_yield();
	else if (r % 512 == 1)
		usleep(50);
}

static void read_section(struct guarded *g, unsigned r)
{
	atomic_fetch_add(&g->readers_in, 1);
	EXPECT(atomic_load(&g->writers_in) == 0, "%s: a reader is in with a writer", g->name);
	long first = __atomic_load_n(&g->slots[0], __ATOMIC_RELAXED);
	dawdle(r);
	for (int i = 1; i < SLOTS; i++)
		EXPECT(__atomic_load_n(&g->slots[i], __ATOMIC_RELAXED) == first,
		       "%s: a reader saw a half-done write", g->name);
	EXPECT(atomic_load(&g->writers_in) == 0, "%s: a writer got in with a reader", g->name);
	atomic_fetch_sub(&g->readers_in, 1);
	atomic_fetch_add(&g->rd_done, 1);
}

static void write_section(struct guarded *g, unsigned r)
{
	EXPECT(atomic_fetch_add(&g->writers_in, 1) == 0, "%s: two writers in", g->name);
	EXPECT(atomic_load(&g->readers_in) == 0, "%s: a writer is in with readers", g->name);
	long v = ++g->writes;
	for (int i = 0; i < SLOTS; i++) {
		__atomic_store_n(&g->slots[i], v, __ATOMIC_RELAXED);
		if (i == SLOTS / 2)
			dawdle(r);
	}
	EXPECT(atomic_load(&g->readers_in) == 0, "%s: a reader got in with a writer", g->name);
	atomic_fetch_sub(&g->writers_in, 1);
	atomic_fetch_add(&g->wr_done, 1);
}

static void *storm(void *arg)
{
	long id = (long)arg;
	struct guarded *g = &locks[id % 3];
	unsigned seed = (unsigned)id * 7919u + 1;
	int err;

	for (int i = 0; i < ITERS; i++) {
		unsigned r = rnd(&seed);
		struct timespec ts;
		switch (r % 10) {
		case 0: case 1: case 2:
			err = pthread_rwlock_rdlock(g->lock);
			EXPECT(err == 0, "rdlock: %d", err);
			read_section(g, r);
			break;
		case 3:
			err = pthread_rwlock_tryrdlock(g->lock);
			EXPECT(err == 0 || err == EBUSY, "tryrdlock: %d", err);
			if (err)
				continue;
			read_section(g, r);
			break;
		case 4:
			ts = ts_in_ns(CLOCK_REALTIME, 200000);
			err = pthread_rwlock_timedrdlock(g->lock, &ts);
			EXPECT(err == 0 || err == ETIMEDOUT, "timedrdlock: %d", err);
			if (err)
				continue;
			read_section(g, r);
			break;
		case 5:
			ts = ts_in_ns(CLOCK_MONOTONIC, 200000);
			err = pthread_rwlock_clockrdlock(g->lock, CLOCK_MONOTONIC, &ts);
			EXPECT(err == 0 || err == ETIMEDOUT, "clockrdlock: %d", err);
			if (err)
				continue;
			read_section(g, r);
			break;
		case 6: case 7:
			err = pthread_rwlock_wrlock(g->lock);
			EXPECT(err == 0, "wrlock: %d", err);
			write_section(g, r);
			break;
		case 8:
			if (r & 0x100) {
				err = pthread_rwlock_trywrlock(g->lock);
				EXPECT(err == 0 || err == EBUSY, "trywrlock: %d", err);
			} else {
				ts = ts_in_ns(CLOCK_REALTIME, 300000);
				err = pthread_rwlock_timedwrlock(g->lock, &ts);
				EXPECT(err == 0 || err == ETIMEDOUT, "timedwrlock: %d", err);
			}
			if (err)
				continue;
			write_section(g, r);
			break;
		default:
			ts = ts_in_ns(CLOCK_MONOTONIC, 300000);
			err = pthread_rwlock_clockwrlock(g->lock, CLOCK_MONOTONIC, &ts);
			EXPECT(err == 0 || err == ETIMEDOUT, "clockwrlock: %d", err);
			if (err)
				continue;
			write_section(g, r);
			break;
		}
		err = pthread_rwlock_unlock(g->lock);
		EXPECT(err == 0, "unlock: %d", err);
	}
	return NULL;
}

/* ---- semantics ---- */

struct attempt {
	pthread_rwlock_t *lock;
	int write;           /* 1: write lock */
	clockid_t clock;
	uint64_t timeout_ns; /* 0: blocking */
	int result;
	uint64_t waited_ns;
	uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC: before the call, after it returned */
	uint64_t deadline_ns;      /* a timed attempt's absolute deadline, on its clock */
	uint64_t end_on_clock;     /* that clock after the call returned */
	_Atomic int started, done;
};

static void *attempt_main(void *arg)
{
	struct attempt *a = arg;
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);

	a->start_ns = t0;
	atomic_store(&a->started, 1);
	if (a->timeout_ns) {
		struct timespec ts = ts_in_ns(a->clock, a->timeout_ns);
		a->deadline_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		if (a->clock == CLOCK_REALTIME)
			a->result = a->write ? pthread_rwlock_timedwrlock(a->lock, &ts)
					     : pthread_rwlock_timedrdlock(a->lock, &ts);
		else
			a->result = a->write ? pthread_rwlock_clockwrlock(a->lock, a->clock, &ts)
					     : pthread_rwlock_clockrdlock(a->lock, a->clock, &ts);
	} else {
		a->result = a->write ? pthread_rwlock_wrlock(a->lock) : pthread_rwlock_rdlock(a->lock);
	}
	a->end_ns = now_ns(CLOCK_MONOTONIC);
	a->end_on_clock = now_ns(a->clock);
	a->waited_ns = a->end_ns - t0;
	atomic_store(&a->done, 1);
	if (a->result == 0)
		pthread_rwlock_unlock(a->lock);
	return NULL;
}

static void start_attempt(pthread_t *t, struct attempt *a)
{
	if (pthread_create(t, NULL, attempt_main, a)) {
		perror("pthread_create");
		exit(2);
	}
	while (!atomic_load(&a->started))
		usleep(100);
}

/*
 * Polls until a->done, up to limit_ms; true if it finished. The limits are
 * generous (30 s): only a hang fails, a finished attempt returns at once.
 */
static int finishes_within(struct attempt *a, int limit_ms)
{
	for (int i = 0; i < limit_ms * 10; i++) {
		if (atomic_load(&a->done))
			return 1;
		usleep(100);
	}
	return atomic_load(&a->done);
}

static void check_errors(void)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	struct timespec ts = ts_in_ns(CLOCK_REALTIME, 1000000000), bad = ts;
	pthread_t t;

	bad.tv_nsec = 1000000000;
	EXPECT(pthread_rwlock_wrlock(&l) == 0, "wrlock");
	EXPECT(pthread_rwlock_wrlock(&l) == EDEADLK, "wrlock by the writer: EDEADLK");
	EXPECT(pthread_rwlock_rdlock(&l) == EDEADLK, "rdlock by the writer: EDEADLK");
	EXPECT(pthread_rwlock_timedwrlock(&l, &ts) == EDEADLK, "timedwrlock by the writer: EDEADLK");
	EXPECT(pthread_rwlock_timedrdlock(&l, &ts) == EDEADLK, "timedrdlock by the writer: EDEADLK");
	EXPECT(pthread_rwlock_trywrlock(&l) == EBUSY, "trywrlock by the writer: EBUSY");
	EXPECT(pthread_rwlock_tryrdlock(&l) == EBUSY, "tryrdlock by the writer: EBUSY");
	EXPECT(pthread_rwlock_timedrdlock(&l, &bad) == EINVAL, "timedrdlock with tv_nsec 1e9: EINVAL");
	EXPECT(pthread_rwlock_timedwrlock(&l, &bad) == EINVAL, "timedwrlock with tv_nsec 1e9: EINVAL");
	EXPECT(pthread_rwlock_clockrdlock(&l, CLOCK_PROCESS_CPUTIME_ID, &ts) == EINVAL,
	       "clockrdlock on a CPU-time clock: EINVAL");
	EXPECT(pthread_rwlock_clockwrlock(&l, CLOCK_PROCESS_CPUTIME_ID, &ts) == EINVAL,
	       "clockwrlock on a CPU-time clock: EINVAL");

	/* held for writing: every other thread's attempt times out */
	struct attempt a[4] = {
		{ .lock = &l, .write = 0, .clock = CLOCK_REALTIME, .timeout_ns = 50000000 },
		{ .lock = &l, .write = 1, .clock = CLOCK_REALTIME, .timeout_ns = 50000000 },
		{ .lock = &l, .write = 0, .clock = CLOCK_MONOTONIC, .timeout_ns = 50000000 },
		{ .lock = &l, .write = 1, .clock = CLOCK_MONOTONIC, .timeout_ns = 50000000 },
	};
	pthread_t ts4[4];
	for (int i = 0; i < 4; i++)
		start_attempt(&ts4[i], &a[i]);
	for (int i = 0; i < 4; i++) {
		pthread_join(ts4[i], NULL);
		EXPECT(a[i].result == ETIMEDOUT, "timed attempt %d on a write-held lock: %d", i, a[i].result);
		/*
		 * Not early: 50 ms waited, less 1 ms for the clocks' readings; or,
		 * on CLOCK_REALTIME, which can be stepped forward while it
		 * waits, its deadline passed on that clock.
		 */
		EXPECT(a[i].waited_ns >= 49000000 ||
		       (a[i].clock == CLOCK_REALTIME && a[i].end_on_clock >= a[i].deadline_ns),
		       "timed attempt %d gave up early (%llu ns)", i, (unsigned long long)a[i].waited_ns);
	}
	/* a deadline in the past still takes a free lock */
	EXPECT(pthread_rwlock_unlock(&l) == 0, "unlock");
	struct timespec past = { 0, 0 };
	EXPECT(pthread_rwlock_timedwrlock(&l, &past) == 0, "timedwrlock with a past deadline on a free lock");
	EXPECT(pthread_rwlock_unlock(&l) == 0, "unlock");

	/* held for reading: other readers get in, writers time out */
	EXPECT(pthread_rwlock_rdlock(&l) == 0, "rdlock");
	EXPECT(pthread_rwlock_rdlock(&l) == 0, "a second rdlock by the same reader");
	EXPECT(pthread_rwlock_trywrlock(&l) == EBUSY, "trywrlock on a read-held lock: EBUSY");
	struct attempt r = { .lock = &l, .write = 0, .clock = CLOCK_REALTIME, .timeout_ns = 50000000 };
	struct attempt w = { .lock = &l, .write = 1, .clock = CLOCK_MONOTONIC, .timeout_ns = 50000000 };
	start_attempt(&t, &r);
	pthread_join(t, NULL);
	EXPECT(r.result == 0, "timedrdlock on a read-held lock: %d", r.result);
	start_attempt(&t, &w);
	pthread_join(t, NULL);
	EXPECT(w.result == ETIMEDOUT, "timedwrlock on a read-held lock: %d", w.result);
	EXPECT(pthread_rwlock_unlock(&l) == 0, "unlock");
	EXPECT(pthread_rwlock_unlock(&l) == 0, "unlock");
	EXPECT(pthread_rwlock_destroy(&l) == 0, "destroy");

	/* a blocked writer gets in once the readers leave */
	EXPECT(pthread_rwlock_init(&l, NULL) == 0, "init");
	EXPECT(pthread_rwlock_rdlock(&l) == 0, "rdlock");
	struct attempt wb = { .lock = &l, .write = 1 };
	start_attempt(&t, &wb);
	usleep(20000);
	EXPECT(!atomic_load(&wb.done), "wrlock got in with a reader");
	EXPECT(pthread_rwlock_unlock(&l) == 0, "unlock");
	EXPECT(finishes_within(&wb, 30000) && wb.result == 0, "the writer never got in: %d", wb.result);
	pthread_join(t, NULL);
	EXPECT(pthread_rwlock_destroy(&l) == 0, "destroy");
}

/* A reader holds; a writer waits; does another reader get past the writer? */
static void check_preference(pthread_rwlock_t *l, int writer_preferring, const char *name)
{
	pthread_t tw, tr;
	struct attempt w = { .lock = l, .write = 1 };

	EXPECT(pthread_rwlock_rdlock(l) == 0, "%s: rdlock", name);
	start_attempt(&tw, &w);
	usleep(20000); /* the writer is waiting by now */
	int err = pthread_rwlock_tryrdlock(l);
	if (writer_preferring) {
		/* once the writer waits (it may be slow to start: 30 s), readers stay out */
		for (int i = 0; i < 30000 && err == 0; i++) {
			pthread_rwlock_unlock(l);
			usleep(1000);
			err = pthread_rwlock_tryrdlock(l);
		}
		EXPECT(err == EBUSY, "%s: tryrdlock past a waiting writer: %d (want EBUSY)", name, err);
	} else {
		EXPECT(err == 0, "%s: tryrdlock past a waiting writer: %d (want 0)", name, err);
		if (!err)
			pthread_rwlock_unlock(l);
	}
	/* a reader that cannot wait long */
	struct attempt r = { .lock = l, .write = 0, .clock = CLOCK_REALTIME, .timeout_ns = 30000000 };
	start_attempt(&tr, &r);
	pthread_join(tr, NULL);
	EXPECT(r.result == (writer_preferring ? ETIMEDOUT : 0), "%s: timedrdlock past a waiting writer: %d",
	       name, r.result);
	EXPECT(!atomic_load(&w.done), "%s: the writer got in with a reader", name);
	EXPECT(pthread_rwlock_unlock(l) == 0, "%s: unlock", name);
	EXPECT(finishes_within(&w, 30000) && w.result == 0, "%s: the writer never got in", name);
	pthread_join(tw, NULL);
}

/*
 * Writer-preferring: readers queued behind a writer get in when the writer
 * gives up. Judged by times, not by sampling who is done: the writer's
 * absolute CLOCK_MONOTONIC deadline against the moment the reader's rdlock
 * returned (it must not be before). A round where the writer was never seen
 * waiting, or the reader started only after the writer's deadline (main was
 * descheduled that long), shows nothing and is run again, 3 rounds at most.
 */
static void check_writer_gives_up(void)
{
	for (int round = 1;; round++) {
		pthread_rwlock_t l = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
		/* 1 s: main has that long to see the writer wait and queue a reader behind it */
		struct attempt w = { .lock = &l, .write = 1, .clock = CLOCK_MONOTONIC, .timeout_ns = 1000000000 };
		struct attempt r = { .lock = &l, .write = 0 };
		pthread_t tw, tr;

		EXPECT(pthread_rwlock_rdlock(&l) == 0, "rdlock");
		start_attempt(&tw, &w);
		/* the writer waits once tryrdlock fails; until it gives up at the latest */
		int err;
		while ((err = pthread_rwlock_tryrdlock(&l)) == 0 && !atomic_load(&w.done)) {
			pthread_rwlock_unlock(&l);
			usleep(100);
		}
		if (err == 0)
			pthread_rwlock_unlock(&l);
		EXPECT(err == 0 || err == EBUSY, "tryrdlock: %d", err);
		int queued = err == EBUSY;
		if (queued)
			start_attempt(&tr, &r); /* queued behind the writer */
		pthread_join(tw, NULL);
		/* main holds its read lock throughout: the writer cannot get in */
		EXPECT(w.result == ETIMEDOUT, "the writer's timedwrlock: %d", w.result);
		if (queued) {
			EXPECT(finishes_within(&r, 30000) && r.result == 0,
			       "the reader stayed blocked after the writer gave up: %d", r.result);
			pthread_join(tr, NULL);
		}
		EXPECT(pthread_rwlock_unlock(&l) == 0, "unlock");
		if (queued && r.start_ns < w.deadline_ns) {
			/* the reader asked while the writer waited: in only once it gave up */
			EXPECT(r.end_ns >= w.deadline_ns,
			       "a reader got past a waiting writer (writer-preferring), %llu ns before its deadline",
			       (unsigned long long)(w.deadline_ns - r.end_ns));
			return;
		}
		if (round == 3) {
			EXPECT(0, "%s, 3 times", queued ? "the reader started only after the writer gave up"
			       : "the writer never waited");
			return;
		}
	}
}

int main(void)
{
	pthread_rwlockattr_t attr;
	pthread_t t[NTHREADS];

	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NP);
	if (pthread_rwlock_init(&lock_init, &attr)) {
		fprintf(stderr, "rwlock_storm: pthread_rwlock_init failed\n");
		return 2;
	}
	pthread_rwlockattr_destroy(&attr);

	for (long i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, storm, (void *)i)) {
			perror("pthread_create");
			return 2;
		}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	long ops = 0;
	for (int i = 0; i < 3; i++) {
		struct guarded *g = &locks[i];
		EXPECT(g->writes == atomic_load(&g->wr_done), "%s: %ld writes, %ld counted", g->name, g->writes,
		       atomic_load(&g->wr_done));
		EXPECT(atomic_load(&g->readers_in) == 0 && atomic_load(&g->writers_in) == 0, "%s: not empty",
		       g->name);
		EXPECT(pthread_rwlock_trywrlock(g->lock) == 0, "%s: not free after the storm", g->name);
		pthread_rwlock_unlock(g->lock);
		ops += g->wr_done + g->rd_done;
	}
	EXPECT(ops > NTHREADS * ITERS / 2, "only %ld of %d attempts got the lock", ops, NTHREADS * ITERS);
	resultf(misses() == 0, "%d threads x %d operations on 3 locks: readers never met a writer, writes exact",
	        NTHREADS, ITERS);

	long before = misses();
	check_errors();
	result("EDEADLK, EBUSY, ETIMEDOUT, EINVAL", misses() == before);

	before = misses();
	pthread_rwlock_t reader_pref = PTHREAD_RWLOCK_INITIALIZER;
	pthread_rwlock_t writer_pref = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
	check_preference(&reader_pref, 0, "PTHREAD_RWLOCK_INITIALIZER");
	check_preference(&writer_pref, 1, "WRITER_NONRECURSIVE_INITIALIZER_NP");
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_t writer_pref2;
	pthread_rwlock_init(&writer_pref2, &attr);
	check_preference(&writer_pref2, 1, "init(PREFER_WRITER_NONRECURSIVE_NP)");
	check_writer_gives_up();
	result("reader and writer preference", misses() == before);

	printf("rwlock_storm: %s\n", failed ? "FAIL" : "PASS");
	return failed;
}
