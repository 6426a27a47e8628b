/*
 * Conformance: mutexes (POSIX pthread_mutex_lock, pthread_mutex_trylock,
 * pthread_mutex_timedlock, pthread_mutex_unlock, pthread_mutex_destroy,
 * pthread_mutexattr_*, pthread_mutex_consistent; glibc's
 * pthread_mutex_clocklock), as glibc implements them:
 *   1. attributes: the default type is PTHREAD_MUTEX_DEFAULT (NORMAL in
 *      glibc); settype, setrobust, setprotocol and setpshared take only
 *      their defined values (else EINVAL) and get* read back what was set;
 *   2. normal: trylock by another thread is EBUSY while held; the owner's
 *      own timedlock waits and times out (ETIMEDOUT: a normal mutex does
 *      not detect the deadlock), clocklock on CLOCK_MONOTONIC too, and a
 *      clock that is neither (CLOCK_PROCESS_CPUTIME_ID) is EINVAL;
 *   3. error-checking: relock and timedlock by the owner are EDEADLK;
 *      unlock of an unlocked one, or by a thread that does not own it,
 *      is EPERM; trylock by the owner is EBUSY;
 *   4. recursive: three nested locks (lock, trylock, timedlock) need three
 *      unlocks before another thread's trylock succeeds; a fourth unlock is
 *      EPERM, as is an unlock by another thread;
 *   5. destroy of a locked mutex is EBUSY (glibc; POSIX leaves it
 *      undefined) and of an unlocked one 0; the static initialisers
 *      (PTHREAD_MUTEX_INITIALIZER and glibc's recursive and
 *      error-checking ones) behave as their types;
 *   6. a waiter blocked in lock gets the mutex when it is unlocked, and a
 *      timedlock with a deadline far enough gets it too (no ETIMEDOUT);
 *   7. robust, within one process: the owner thread ends holding it, the
 *      next lock gets EOWNERDEAD with the mutex held; consistent, then
 *      unlock, and it works again; the owner ends again, the next locker
 *      unlocks without consistent: every later lock, trylock and
 *      timedlock fails (ENOTRECOVERABLE; glibc 2.36's timedlock says
 *      ETIMEDOUT after its 50 ms: accepted too); consistent on a non-robust mutex, or
 *      on a robust one that is not inconsistent, is EINVAL.
 * Deterministic output; exit 0 when every check held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <unistd.h>

#define CHECK_NAME "posix_mutex"
#include "check.h"

static pthread_mutex_t *target;

static void *trylock_result(void *arg)
{
	(void)arg;
	int err = pthread_mutex_trylock(target);

	if (err == 0)
		pthread_mutex_unlock(target);
	return (void *)(long)err;
}

static int other_trylock(pthread_mutex_t *m)
{
	void *r;

	target = m;
	pthread_join(spawn(trylock_result, NULL), &r);
	return (int)(long)r;
}

static void *unlock_result(void *arg)
{
	(void)arg;
	return (void *)(long)pthread_mutex_unlock(target);
}

static int other_unlock(pthread_mutex_t *m)
{
	void *r;

	target = m;
	pthread_join(spawn(unlock_result, NULL), &r);
	return (int)(long)r;
}

static void make(pthread_mutex_t *m, int type, int robust)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, type);
	if (robust)
		pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
}

static void attributes(void)
{
	pthread_mutexattr_t a;
	int v = -1;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_gettype(&a, &v);
	result("mutexattr default type is PTHREAD_MUTEX_DEFAULT", v == PTHREAD_MUTEX_DEFAULT);
	result_err("mutexattr_settype(99) is EINVAL", pthread_mutexattr_settype(&a, 99), EINVAL);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutexattr_gettype(&a, &v);
	result("mutexattr_gettype reads back RECURSIVE", v == PTHREAD_MUTEX_RECURSIVE);
	pthread_mutexattr_getrobust(&a, &v);
	result("mutexattr default robustness is STALLED", v == PTHREAD_MUTEX_STALLED);
	result_err("mutexattr_setrobust(99) is EINVAL", pthread_mutexattr_setrobust(&a, 99), EINVAL);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutexattr_getrobust(&a, &v);
	result("mutexattr_getrobust reads back ROBUST", v == PTHREAD_MUTEX_ROBUST);
	pthread_mutexattr_getprotocol(&a, &v);
	result("mutexattr default protocol is PTHREAD_PRIO_NONE", v == PTHREAD_PRIO_NONE);
	result_err("mutexattr_setprotocol(99) is EINVAL", pthread_mutexattr_setprotocol(&a, 99), EINVAL);
	pthread_mutexattr_getpshared(&a, &v);
	result("mutexattr default pshared is PRIVATE", v == PTHREAD_PROCESS_PRIVATE);
	result_err("mutexattr_setpshared(99) is EINVAL", pthread_mutexattr_setpshared(&a, 99), EINVAL);
	pthread_mutexattr_destroy(&a);
}

static void normal(void)
{
	pthread_mutex_t m;
	struct timespec ts, t0, t1;

	make(&m, PTHREAD_MUTEX_NORMAL, 0);
	pthread_mutex_lock(&m);
	result_err("normal: trylock by another thread while held is EBUSY", other_trylock(&m), EBUSY);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ts = ts_in_ms(CLOCK_REALTIME, 50);
	result_err("normal: the owner's timedlock times out (ETIMEDOUT)", pthread_mutex_timedlock(&m, &ts), ETIMEDOUT);
	ts = ts_in_ms(CLOCK_MONOTONIC, 50);
	result_err("normal: the owner's clocklock (MONOTONIC) times out",
		   pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &ts), ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	result("normal: the two timeouts took at least 100 ms", ms_between(t0, t1) >= 99);
	ts = ts_in_ms(CLOCK_MONOTONIC, 50);
	result_err("normal: clocklock on CLOCK_PROCESS_CPUTIME_ID is EINVAL",
		   pthread_mutex_clocklock(&m, CLOCK_PROCESS_CPUTIME_ID, &ts), EINVAL);
	result_err("normal: unlock by the owner", pthread_mutex_unlock(&m), 0);
	result_err("normal: trylock of a free mutex by another thread", other_trylock(&m), 0);
	result_err("normal: destroy unlocked", pthread_mutex_destroy(&m), 0);
}

static void errorcheck(void)
{
	pthread_mutex_t m;
	struct timespec ts;

	make(&m, PTHREAD_MUTEX_ERRORCHECK, 0);
	result_err("errorcheck: unlock while unlocked is EPERM", pthread_mutex_unlock(&m), EPERM);
	pthread_mutex_lock(&m);
	result_err("errorcheck: relock by the owner is EDEADLK", pthread_mutex_lock(&m), EDEADLK);
	ts = ts_in_ms(CLOCK_REALTIME, 50);
	result_err("errorcheck: timedlock by the owner is EDEADLK", pthread_mutex_timedlock(&m, &ts), EDEADLK);
	result_err("errorcheck: trylock by the owner is EBUSY", pthread_mutex_trylock(&m), EBUSY);
	result_err("errorcheck: trylock by another thread is EBUSY", other_trylock(&m), EBUSY);
	result_err("errorcheck: unlock by a non-owner is EPERM", other_unlock(&m), EPERM);
	result_err("errorcheck: unlock by the owner", pthread_mutex_unlock(&m), 0);
	result_err("errorcheck: second unlock is EPERM", pthread_mutex_unlock(&m), EPERM);
	pthread_mutex_destroy(&m);
}

static void recursive(void)
{
	pthread_mutex_t m;
	struct timespec ts = ts_in_ms(CLOCK_REALTIME, 1000);
	int ok = 1;

	make(&m, PTHREAD_MUTEX_RECURSIVE, 0);
	ok &= pthread_mutex_lock(&m) == 0;
	ok &= pthread_mutex_trylock(&m) == 0;
	ok &= pthread_mutex_timedlock(&m, &ts) == 0;
	result("recursive: lock, trylock and timedlock nest", ok);
	result_err("recursive: unlock by a non-owner is EPERM", other_unlock(&m), EPERM);
	pthread_mutex_unlock(&m);
	result_err("recursive: held after 1 of 3 unlocks (EBUSY)", other_trylock(&m), EBUSY);
	pthread_mutex_unlock(&m);
	result_err("recursive: held after 2 of 3 unlocks (EBUSY)", other_trylock(&m), EBUSY);
	pthread_mutex_unlock(&m);
	result_err("recursive: free after 3 unlocks", other_trylock(&m), 0);
	result_err("recursive: a fourth unlock is EPERM", pthread_mutex_unlock(&m), EPERM);
	pthread_mutex_destroy(&m);
}

static pthread_mutex_t s_normal = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t s_recursive = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t s_errorcheck = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;

static void destroy_and_static(void)
{
	pthread_mutex_t m;

	make(&m, PTHREAD_MUTEX_NORMAL, 0);
	pthread_mutex_lock(&m);
	result_err("destroy of a locked mutex is EBUSY", pthread_mutex_destroy(&m), EBUSY);
	pthread_mutex_unlock(&m);
	result_err("destroy after unlock", pthread_mutex_destroy(&m), 0);

	pthread_mutex_lock(&s_normal);
	result_err("PTHREAD_MUTEX_INITIALIZER: trylock while held is EBUSY", other_trylock(&s_normal), EBUSY);
	pthread_mutex_unlock(&s_normal);
	pthread_mutex_lock(&s_recursive);
	result_err("recursive initialiser: relock by the owner", pthread_mutex_lock(&s_recursive), 0);
	pthread_mutex_unlock(&s_recursive);
	pthread_mutex_unlock(&s_recursive);
	pthread_mutex_lock(&s_errorcheck);
	result_err("error-checking initialiser: relock is EDEADLK", pthread_mutex_lock(&s_errorcheck), EDEADLK);
	pthread_mutex_unlock(&s_errorcheck);
	result_err("error-checking initialiser: unlock of unlocked is EPERM", pthread_mutex_unlock(&s_errorcheck), EPERM);
}

static pthread_mutex_t handoff = PTHREAD_MUTEX_INITIALIZER;
static sem_t started;
static int got_it;

static void *locker(void *arg)
{
	int timed = (int)(long)arg, err;

	sem_post(&started);
	if (timed) {
		struct timespec ts = ts_in_ms(CLOCK_REALTIME, 30000);

		err = pthread_mutex_timedlock(&handoff, &ts);
	} else {
		err = pthread_mutex_lock(&handoff);
	}
	if (err == 0) {
		got_it++;
		pthread_mutex_unlock(&handoff);
	}
	return (void *)(long)err;
}

static void waiters(void)
{
	for (int timed = 0; timed < 2; timed++) {
		void *r;
		pthread_t t;

		got_it = 0;
		pthread_mutex_lock(&handoff);
		t = spawn(locker, (void *)(long)timed);
		sem_wait(&started);
		sleep_ms(20);
		pthread_mutex_unlock(&handoff);
		pthread_join(t, &r);
		result_err(timed ? "a thread in timedlock gets the mutex at unlock"
				 : "a thread in lock gets the mutex at unlock", (int)(long)r, 0);
		result(timed ? "timedlock waiter ran its critical section" : "lock waiter ran its critical section",
		       got_it == 1);
	}
}

static pthread_mutex_t robust;

static void *die_holding(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&robust);
	return NULL;
}

static void robust_mutexes(void)
{
	pthread_mutex_t plain;
	struct timespec ts;

	make(&plain, PTHREAD_MUTEX_NORMAL, 0);
	result_err("consistent on a non-robust mutex is EINVAL", pthread_mutex_consistent(&plain), EINVAL);
	pthread_mutex_destroy(&plain);

	make(&robust, PTHREAD_MUTEX_NORMAL, 1);
	pthread_join(spawn(die_holding, NULL), NULL);
	result_err("robust: lock after the owner died is EOWNERDEAD", pthread_mutex_lock(&robust), EOWNERDEAD);
	result_err("robust: consistent", pthread_mutex_consistent(&robust), 0);
	result_err("robust: consistent again (not inconsistent) is EINVAL", pthread_mutex_consistent(&robust), EINVAL);
	result_err("robust: unlock after consistent", pthread_mutex_unlock(&robust), 0);
	result_err("robust: lock works again", pthread_mutex_lock(&robust), 0);
	pthread_mutex_unlock(&robust);

	pthread_join(spawn(die_holding, NULL), NULL);
	result_err("robust: trylock after the owner died is EOWNERDEAD", pthread_mutex_trylock(&robust), EOWNERDEAD);
	result_err("robust: unlock without consistent", pthread_mutex_unlock(&robust), 0);
	result_err("robust: then lock is ENOTRECOVERABLE", pthread_mutex_lock(&robust), ENOTRECOVERABLE);
	result_err("robust: trylock is ENOTRECOVERABLE", pthread_mutex_trylock(&robust), ENOTRECOVERABLE);
	ts = ts_in_ms(CLOCK_REALTIME, 50);
	/* glibc 2.36 gives ETIMEDOUT here after the lock and trylock above (its
	 * lock word says "waiters"); POSIX says ENOTRECOVERABLE: either, never 0 */
	int err = pthread_mutex_timedlock(&robust, &ts);
	result("robust: timedlock fails too (ENOTRECOVERABLE, or glibc's ETIMEDOUT)",
	       err == ENOTRECOVERABLE || err == ETIMEDOUT);
	result_err("robust: destroy of an unrecoverable mutex", pthread_mutex_destroy(&robust), 0);
}

int main(void)
{
	alarm(60);
	sem_init(&started, 0, 0);
	attributes();
	normal();
	errorcheck();
	recursive();
	destroy_and_static();
	waiters();
	robust_mutexes();
	return failed;
}
