/*
 * A signal sent with pthread_kill to a thread blocked on a pthread object
 * runs its handler while the thread is still blocked (POSIX, "Signal
 * Effects on Other Functions" and each function's page), and then:
 *   - pthread_mutex_lock, pthread_rwlock_rdlock/wrlock, pthread_barrier_wait,
 *     pthread_once, pthread_cond_wait: the wait goes on as if it had not
 *     been interrupted (no EINTR; the condition wait loops on its
 *     predicate, a spurious wakeup being allowed) and ends normally once
 *     the object is released;
 *   - sem_wait: after a handler without SA_RESTART it fails with EINTR;
 *     after one with SA_RESTART it goes on (glibc restarts the futex wait,
 *     as the kernel restarts FUTEX_WAIT: signal(7)) and takes the unit
 *     posted later.
 * The handlers here have no SA_RESTART except in the sem_wait step that
 * says so. A step that the signal does not reach gives up after 5 s and
 * reports FAIL, then releases the object.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CHECK_NAME "sig_blocked_objects"
#include "check.h"

static __thread volatile sig_atomic_t tls_hits;
static _Atomic int hits;

static void handler(int sig)
{
	(void)sig;
	tls_hits++;
	atomic_fetch_add(&hits, 1);
}

enum kind { MUTEX, RDLOCK, WRLOCK, BARRIER, SEM, SEM_RESTART, ONCE, COND };
static const char *names[] = { "mutex_lock", "rwlock_rdlock", "rwlock_wrlock", "barrier_wait",
			       "sem_wait (no SA_RESTART)", "sem_wait (SA_RESTART)", "once", "cond_wait" };

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t barrier;
static sem_t sem;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int predicate;
static _Atomic int once_release, once_runs, about_to_block, returned;

static void once_init(void)
{
	atomic_fetch_add(&once_runs, 1);
	while (!atomic_load(&once_release))
		sleep_ms(1);
}

static void *once_holder(void *arg)
{
	(void)arg;
	pthread_once(&once, once_init);
	return NULL;
}

struct outcome {
	int ret, err, hits;
};

static void *blocker(void *arg)
{
	enum kind k = (enum kind)(long)arg;
	struct outcome *o = calloc(1, sizeof(*o));

	atomic_store(&about_to_block, 1);
	switch (k) {
	case MUTEX: o->ret = pthread_mutex_lock(&mutex); pthread_mutex_unlock(&mutex); break;
	case RDLOCK: o->ret = pthread_rwlock_rdlock(&rwlock); pthread_rwlock_unlock(&rwlock); break;
	case WRLOCK: o->ret = pthread_rwlock_wrlock(&rwlock); pthread_rwlock_unlock(&rwlock); break;
	case BARRIER:
		o->ret = pthread_barrier_wait(&barrier);
		if (o->ret == PTHREAD_BARRIER_SERIAL_THREAD)
			o->ret = 0;
		break;
	case SEM: case SEM_RESTART:
		o->ret = sem_wait(&sem);
		o->err = o->ret ? errno : 0;
		break;
	case ONCE: o->ret = pthread_once(&once, once_init); break;
	case COND:
		pthread_mutex_lock(&mutex);
		while (!predicate)
			o->ret |= pthread_cond_wait(&cond, &mutex);
		pthread_mutex_unlock(&mutex);
		break;
	}
	o->hits = tls_hits;
	atomic_store(&returned, 1);
	return o;
}

static void step(enum kind k)
{
	pthread_t holder = 0;
	char what[128];

	atomic_store(&hits, 0);
	atomic_store(&about_to_block, 0);
	atomic_store(&returned, 0);
	on_signal(SIGUSR1, handler, k == SEM_RESTART ? SA_RESTART : 0);
	switch (k) { /* hold the object */
	case MUTEX: pthread_mutex_lock(&mutex); break;
	case RDLOCK: pthread_rwlock_wrlock(&rwlock); break;
	case WRLOCK: pthread_rwlock_rdlock(&rwlock); break;
	case BARRIER: pthread_barrier_init(&barrier, NULL, 2); break;
	case SEM: case SEM_RESTART: sem_init(&sem, 0, 0); break;
	case ONCE:
		holder = spawn(once_holder, NULL);
		while (!atomic_load(&once_runs))
			sleep_ms(1);
		break;
	case COND: predicate = 0; break;
	}
	pthread_t t = spawn(blocker, (void *)(long)k);
	while (!atomic_load(&about_to_block))
		sleep_ms(1);
	sleep_ms(100); /* blocked by now */
	int early = atomic_load(&returned);
	pthread_kill(t, SIGUSR1);
	for (int i = 0; i < 5000 && !atomic_load(&hits); i++)
		sleep_ms(1);
	int ran = atomic_load(&hits) == 1;
	sleep_ms(50);
	int still = !atomic_load(&returned); /* still waiting after the handler (not for sem without SA_RESTART) */
	switch (k) { /* release it */
	case MUTEX: pthread_mutex_unlock(&mutex); break;
	case RDLOCK: case WRLOCK: pthread_rwlock_unlock(&rwlock); break;
	case BARRIER: pthread_barrier_wait(&barrier); break;
	case SEM: case SEM_RESTART: sem_post(&sem); break;
	case ONCE: atomic_store(&once_release, 1); break;
	case COND:
		pthread_mutex_lock(&mutex);
		predicate = 1;
		pthread_cond_signal(&cond);
		pthread_mutex_unlock(&mutex);
		break;
	}
	struct outcome *o;
	pthread_join(t, (void **)&o);
	if (holder)
		pthread_join(holder, NULL);
	snprintf(what, sizeof(what), "%s: blocked until signalled", names[k]);
	result(what, !early);
	snprintf(what, sizeof(what), "%s: the handler ran on the blocked thread while it waited", names[k]);
	result(what, ran && o->hits == 1);
	if (k == SEM) {
		snprintf(what, sizeof(what), "%s: returned -1 with EINTR after the handler", names[k]);
		result(what, !still && o->ret == -1 && o->err == EINTR);
		int v = -1;
		sem_getvalue(&sem, &v);
		result("sem_wait (no SA_RESTART): the later post left the unit in the semaphore", v == 1);
	} else {
		snprintf(what, sizeof(what), "%s: went on waiting after the handler and then returned 0", names[k]);
		result(what, still && o->ret == 0 && o->err == 0);
	}
	if (k == BARRIER)
		pthread_barrier_destroy(&barrier);
	if (k == SEM || k == SEM_RESTART)
		sem_destroy(&sem);
	free(o);
}

int main(void)
{
	for (enum kind k = MUTEX; k <= COND; k++)
		step(k);
	result("once ran its initialiser once", atomic_load(&once_runs) == 1);
	return failed;
}
