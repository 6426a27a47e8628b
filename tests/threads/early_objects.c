/*
 * Locks and keys a library makes and uses in its constructor, which runs
 * before the preloaded runtime's (BIND's libisc and OpenSSL do): the
 * program then uses them from threads.
 *   1. an rwlock read-locked in the constructor: main unlocks it, and a
 *      thread's timed write lock gets it;
 *   2. a mutex initialised and locked in the constructor: main unlocks it,
 *      and a thread's timed lock gets it;
 *   3. a condition variable initialised in the constructor: a thread's
 *      timed wait is signalled by main;
 *   4. a semaphore initialised and waited in the constructor: main posts,
 *      and a thread's timed wait gets it;
 *   5. a thread-specific key created and set in the constructor: main
 *      reads the value set there, a new thread reads NULL and sets its own.
 * Built twice: with FLEXSC_TEST_SHLIB as the library the program links
 * (so its constructor runs at load), and as the program. Every wait has a
 * 30 s limit: a lock left in a state nobody can read is a FAIL, not a hang
 * (generous: a wait that can end does so at once, and a loaded machine
 * must not turn a slow start into a FAIL).
 */
// flexsc-test: shlib-linked
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

extern pthread_rwlock_t early_rw;
extern pthread_mutex_t early_m;
extern pthread_cond_t early_c;
extern sem_t early_s;
extern int early_ok;
extern pthread_key_t early_key;
extern int early_value;

#ifdef FLEXSC_TEST_SHLIB

pthread_rwlock_t early_rw = PTHREAD_RWLOCK_INITIALIZER;
pthread_mutex_t early_m;
pthread_cond_t early_c;
sem_t early_s;
int early_ok;
pthread_key_t early_key;
int early_value = 42;

__attribute__((constructor)) static void early(void)
{
	early_ok = pthread_rwlock_rdlock(&early_rw) == 0 && pthread_mutex_init(&early_m, NULL) == 0 &&
		   pthread_mutex_lock(&early_m) == 0 && pthread_cond_init(&early_c, NULL) == 0 &&
		   sem_init(&early_s, 0, 1) == 0 && sem_wait(&early_s) == 0 &&
		   pthread_key_create(&early_key, NULL) == 0 &&
		   pthread_setspecific(early_key, &early_value) == 0;
}

#else

#define CHECK_NAME "early_objects"
#include "check.h"

#define LIMIT_S 30

static struct timespec in_limit(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += LIMIT_S;
	return ts;
}

static void *writer(void *arg)
{
	struct timespec ts = in_limit();
	int err = pthread_rwlock_timedwrlock(&early_rw, &ts);

	(void)arg;
	if (!err)
		pthread_rwlock_unlock(&early_rw);
	return (void *)(__INTPTR_TYPE__)err;
}

static void *locker(void *arg)
{
	struct timespec ts = in_limit();
	int err = pthread_mutex_timedlock(&early_m, &ts);

	(void)arg;
	if (!err)
		pthread_mutex_unlock(&early_m);
	return (void *)(__INTPTR_TYPE__)err;
}

static _Atomic int waiting, signalled;

static void *cond_waiter(void *arg)
{
	struct timespec ts = in_limit();
	int err = 0;

	(void)arg;
	pthread_mutex_lock(&early_m);
	atomic_store(&waiting, 1);
	while (!atomic_load(&signalled) && !err)
		err = pthread_cond_timedwait(&early_c, &early_m, &ts);
	pthread_mutex_unlock(&early_m);
	return (void *)(__INTPTR_TYPE__)err;
}

static void *sem_taker(void *arg)
{
	struct timespec ts = in_limit();

	(void)arg;
	return (void *)(__INTPTR_TYPE__)(sem_timedwait(&early_s, &ts) ? errno : 0);
}

static void *key_user(void *arg)
{
	int mine = 7;

	(void)arg;
	if (pthread_getspecific(early_key) != NULL || pthread_setspecific(early_key, &mine))
		return (void *)1;
	return pthread_getspecific(early_key) == &mine ? NULL : (void *)1;
}

static int run(void *(*fn)(void *))
{
	pthread_t t;
	void *r = (void *)1;

	if (pthread_create(&t, NULL, fn, NULL))
		return 0;
	pthread_join(t, &r);
	return r == NULL;
}

int main(void)
{
	result("the library's constructor made and took its locks", early_ok);
	result("rwlock read-locked there: unlocked here, then write-locked by a thread",
	       pthread_rwlock_unlock(&early_rw) == 0 && run(writer));
	result("mutex locked there: unlocked here, then locked by a thread",
	       pthread_mutex_unlock(&early_m) == 0 && run(locker));

	pthread_t t;
	void *r = (void *)1;
	pthread_create(&t, NULL, cond_waiter, NULL);
	while (!atomic_load(&waiting))
		sched_yield();
	pthread_mutex_lock(&early_m);
	atomic_store(&signalled, 1);
	pthread_cond_signal(&early_c);
	pthread_mutex_unlock(&early_m);
	pthread_join(t, &r);
	result("condition made there: a thread's wait is signalled", r == NULL);

	result("semaphore taken there: posted here, taken by a thread", sem_post(&early_s) == 0 && run(sem_taker));
	result("key set there: main reads its value, a thread has its own",
	       pthread_getspecific(early_key) == &early_value && run(key_user) &&
	       pthread_getspecific(early_key) == &early_value);
	return failed;
}

#endif
