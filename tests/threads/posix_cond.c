/*
 * Conformance: condition variables (POSIX pthread_cond_wait,
 * pthread_cond_timedwait, pthread_cond_signal, pthread_cond_broadcast,
 * pthread_condattr_setclock; glibc's pthread_cond_clockwait):
 *   1. attributes: the default clock is CLOCK_REALTIME; setclock takes
 *      CLOCK_MONOTONIC and refuses CPU-time clocks (EINVAL); the default
 *      pshared is PRIVATE, and 99 is EINVAL;
 *   2. a signal with no waiter is not remembered: a later timedwait times
 *      out (ETIMEDOUT) with the mutex held again on return (an
 *      error-checking mutex: unlock succeeds);
 *   3. timedwait times out, not early, on CLOCK_REALTIME (the default) and
 *      on CLOCK_MONOTONIC (condattr); clockwait on either clock likewise;
 *      clockwait on CLOCK_PROCESS_CPUTIME_ID is EINVAL; a deadline already
 *      past times out at once;
 *   4. signal wakes waiters one at a time: 4 threads wait for a token, 4
 *      signals each with one more token let exactly 4 through, and each
 *      waiter returns holding the mutex;
 *   5. broadcast wakes every waiter: 6 threads waiting on one flag all
 *      return after one broadcast;
 *   6. a waiter on a monotonic condition is woken by signal long before
 *      its 30 s deadline;
 *   7. waiting with an error-checking mutex the caller does not hold is
 *      EPERM (glibc returns the unlock's error);
 *   8. destroy of a condition nobody waits on is 0, and it can be
 *      initialised and used again.
 * Deterministic output; exit 0 when every check held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <unistd.h>

#define CHECK_NAME "posix_cond"
#include "check.h"

static pthread_mutex_t mu;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int tokens, flag, inside, held_ok = 1, through;

static void attributes(void)
{
	pthread_condattr_t a;
	clockid_t c = -1;
	int v = -1;

	pthread_condattr_init(&a);
	pthread_condattr_getclock(&a, &c);
	result("condattr default clock is CLOCK_REALTIME", c == CLOCK_REALTIME);
	result_err("condattr_setclock(CLOCK_MONOTONIC)", pthread_condattr_setclock(&a, CLOCK_MONOTONIC), 0);
	pthread_condattr_getclock(&a, &c);
	result("condattr_getclock reads back CLOCK_MONOTONIC", c == CLOCK_MONOTONIC);
	result_err("condattr_setclock(CLOCK_PROCESS_CPUTIME_ID) is EINVAL",
		   pthread_condattr_setclock(&a, CLOCK_PROCESS_CPUTIME_ID), EINVAL);
	result_err("condattr_setclock(CLOCK_THREAD_CPUTIME_ID) is EINVAL",
		   pthread_condattr_setclock(&a, CLOCK_THREAD_CPUTIME_ID), EINVAL);
	pthread_condattr_getpshared(&a, &v);
	result("condattr default pshared is PRIVATE", v == PTHREAD_PROCESS_PRIVATE);
	result_err("condattr_setpshared(99) is EINVAL", pthread_condattr_setpshared(&a, 99), EINVAL);
	pthread_condattr_destroy(&a);
}

static void timeouts(void)
{
	pthread_condattr_t a;
	pthread_cond_t mono;
	struct timespec ts, t0, t1;
	int err;

	pthread_mutex_lock(&mu);
	pthread_cond_signal(&cv);
	ts = ts_in_ms(CLOCK_REALTIME, 50);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = pthread_cond_timedwait(&cv, &mu, &ts);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	result_err("a signal before the wait is not remembered: ETIMEDOUT", err, ETIMEDOUT);
	result("realtime timedwait lasted at least 50 ms", ms_between(t0, t1) >= 49);
	result_err("the mutex is held after ETIMEDOUT (unlock by the owner)", pthread_mutex_unlock(&mu), 0);

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&mono, &a);
	pthread_condattr_destroy(&a);
	pthread_mutex_lock(&mu);
	ts = ts_in_ms(CLOCK_MONOTONIC, 50);
	err = pthread_cond_timedwait(&mono, &mu, &ts);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	result_err("monotonic condition: timedwait ETIMEDOUT", err, ETIMEDOUT);
	result("monotonic timedwait ended at or after its deadline",
	       t1.tv_sec > ts.tv_sec || (t1.tv_sec == ts.tv_sec && t1.tv_nsec >= ts.tv_nsec));

	ts = ts_in_ms(CLOCK_MONOTONIC, 30);
	err = pthread_cond_clockwait(&cv, &mu, CLOCK_MONOTONIC, &ts);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	result_err("clockwait(CLOCK_MONOTONIC) ETIMEDOUT", err, ETIMEDOUT);
	result("clockwait(CLOCK_MONOTONIC) ended at or after its deadline",
	       t1.tv_sec > ts.tv_sec || (t1.tv_sec == ts.tv_sec && t1.tv_nsec >= ts.tv_nsec));
	ts = ts_in_ms(CLOCK_REALTIME, 30);
	result_err("clockwait(CLOCK_REALTIME) on a monotonic condition ETIMEDOUT",
		   pthread_cond_clockwait(&mono, &mu, CLOCK_REALTIME, &ts), ETIMEDOUT);
	ts = ts_in_ms(CLOCK_MONOTONIC, 30);
	result_err("clockwait(CLOCK_PROCESS_CPUTIME_ID) is EINVAL",
		   pthread_cond_clockwait(&cv, &mu, CLOCK_PROCESS_CPUTIME_ID, &ts), EINVAL);
	ts = ts_in_ms(CLOCK_REALTIME, -1000);
	result_err("a deadline in the past: ETIMEDOUT", pthread_cond_timedwait(&cv, &mu, &ts), ETIMEDOUT);
	result_err("the mutex is still held (unlock by the owner)", pthread_mutex_unlock(&mu), 0);
	pthread_cond_destroy(&mono);
}

static void *token_waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	inside++;
	while (tokens == 0)
		pthread_cond_wait(&cv, &mu);
	tokens--;
	through++;
	if (pthread_mutex_unlock(&mu) != 0) /* error-checking: EPERM unless we hold it */
		held_ok = 0;
	return NULL;
}

/* Waits (yielding) until `inside` reaches n: the waiters are in the condition then. */
static void wait_inside(int n)
{
	for (int i = 0; i < 20000; i++) {
		pthread_mutex_lock(&mu);
		int k = inside;

		pthread_mutex_unlock(&mu);
		if (k >= n)
			return;
		sleep_ms(1);
	}
}

static void signals(void)
{
	pthread_t t[4];
	int ok = 1;

	inside = through = tokens = 0;
	for (int i = 0; i < 4; i++)
		t[i] = spawn(token_waiter, NULL);
	wait_inside(4);
	for (int i = 0; i < 4; i++) {
		pthread_mutex_lock(&mu);
		tokens++;
		pthread_cond_signal(&cv);
		pthread_mutex_unlock(&mu);
		/* each signal lets exactly one more through, once it has run */
		for (int k = 0; k < 5000; k++) {
			pthread_mutex_lock(&mu);
			int done = through;

			pthread_mutex_unlock(&mu);
			if (done == i + 1)
				break;
			sleep_ms(1);
		}
		pthread_mutex_lock(&mu);
		ok &= through == i + 1;
		pthread_mutex_unlock(&mu);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	result("4 signals let the 4 waiters through one at a time", ok && through == 4 && tokens == 0);
	result("every woken waiter held the mutex", held_ok);
}

static void *flag_waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	inside++;
	while (!flag)
		pthread_cond_wait(&cv, &mu);
	through++;
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void broadcast(void)
{
	pthread_t t[6];

	inside = through = flag = 0;
	for (int i = 0; i < 6; i++)
		t[i] = spawn(flag_waiter, NULL);
	wait_inside(6);
	pthread_mutex_lock(&mu);
	flag = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < 6; i++)
		pthread_join(t[i], NULL);
	result("one broadcast wakes all 6 waiters", through == 6);
}

static pthread_cond_t mono2;

static void *mono_waiter(void *arg)
{
	struct timespec ts = ts_in_ms(CLOCK_MONOTONIC, 30000);
	int err = 0;

	(void)arg;
	pthread_mutex_lock(&mu);
	inside++;
	while (!flag && err == 0)
		err = pthread_cond_timedwait(&mono2, &mu, &ts);
	pthread_mutex_unlock(&mu);
	return (void *)(long)err;
}

static void signal_monotonic(void)
{
	pthread_condattr_t a;
	struct timespec t0, t1;
	void *r;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&mono2, &a);
	pthread_condattr_destroy(&a);
	inside = flag = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_t t = spawn(mono_waiter, NULL);

	wait_inside(1);
	pthread_mutex_lock(&mu);
	flag = 1;
	pthread_cond_signal(&mono2);
	pthread_mutex_unlock(&mu);
	pthread_join(t, &r);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	result_err("a monotonic timedwait is woken by signal", (int)(long)r, 0);
	result("... long before its 30 s deadline", ms_between(t0, t1) < 20000);
	result_err("destroy of an idle condition", pthread_cond_destroy(&mono2), 0);
	result_err("init again after destroy", pthread_cond_init(&mono2, NULL), 0);
	pthread_mutex_lock(&mu);
	struct timespec ts = ts_in_ms(CLOCK_REALTIME, 10);

	result_err("and it works (ETIMEDOUT)", pthread_cond_timedwait(&mono2, &mu, &ts), ETIMEDOUT);
	pthread_mutex_unlock(&mu);
	pthread_cond_destroy(&mono2);
}

static void not_owner(void)
{
	struct timespec ts = ts_in_ms(CLOCK_REALTIME, 10);

	result_err("wait with an error-checking mutex not held is EPERM", pthread_cond_timedwait(&cv, &mu, &ts), EPERM);
}

int main(void)
{
	pthread_mutexattr_t ma;

	alarm(60);
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&mu, &ma);
	attributes();
	timeouts();
	signals();
	broadcast();
	signal_monotonic();
	not_owner();
	return failed;
}
