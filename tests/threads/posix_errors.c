/*
 * Conformance: the error numbers of thread management calls (POSIX
 * pthread_join, pthread_detach, pthread_kill, pthread_cancel,
 * pthread_setcancelstate, pthread_setcanceltype, pthread_setconcurrency,
 * pthread_equal; glibc's pthread_tryjoin_np, pthread_timedjoin_np):
 *   1. pthread_join of the calling thread: EDEADLK (a thread joining the
 *      main thread while main joins it is not detected by glibc 2.36: both
 *      wait, so that is not checked);
 *   2. (a second joiner of a thread someone already joins: POSIX leaves
 *      it undefined and glibc 2.36 lets it wait too: not checked);
 *   3. pthread_tryjoin_np of a running thread: EBUSY; pthread_timedjoin_np
 *      of one with a near deadline: ETIMEDOUT; both join it once it ends;
 *   4. pthread_kill with signal 0 of a live thread: 0 (a check only, no
 *      signal), with an invalid signal number: EINVAL;
 *   5. pthread_setcancelstate and pthread_setcanceltype with an invalid
 *      value: EINVAL, and the old value is reported by a valid call;
 *   6. pthread_setconcurrency(-1): EINVAL; a set value is read back;
 *   7. pthread_equal: a thread equals itself, not another one; the value
 *      pthread_create returns equals the thread's own pthread_self.
 * Deterministic output; exit 0 when every check held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#define CHECK_NAME "posix_errors"
#include "check.h"

static sem_t release;
static pthread_t self_seen;

static void *park(void *arg)
{
	self_seen = pthread_self();
	sem_wait(&release);
	return arg;
}

static void joins(void)
{
	void *r;
	pthread_t t;

	result_err("pthread_join(self): EDEADLK", pthread_join(pthread_self(), &r), EDEADLK);

	t = spawn(park, (void *)6L);
	result_err("pthread_tryjoin_np of a running thread: EBUSY", pthread_tryjoin_np(t, &r), EBUSY);
	struct timespec ts = ts_in_ms(CLOCK_REALTIME, 30);

	result_err("pthread_timedjoin_np with a near deadline: ETIMEDOUT", pthread_timedjoin_np(t, &r, &ts), ETIMEDOUT);
	sem_post(&release);
	ts = ts_in_ms(CLOCK_REALTIME, 20000);
	result_err("pthread_timedjoin_np once it ends", pthread_timedjoin_np(t, &r, &ts), 0);
	result("... with its result", r == (void *)6L);
	result("pthread_create's value equals the thread's pthread_self", pthread_equal(t, self_seen));
}

static atomic_int usr1_count;

static void on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&usr1_count, 1);
}

static void kills(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	pthread_t t;
	void *r;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	t = spawn(park, NULL);
	result_err("pthread_kill(live thread, 0)", pthread_kill(t, 0), 0);
	result_err("pthread_kill(live thread, 12345): EINVAL", pthread_kill(t, 12345), EINVAL);
	result_err("pthread_kill(live thread, -1): EINVAL", pthread_kill(t, -1), EINVAL);
	sem_post(&release);
	pthread_join(t, &r);
	result("signal 0 sent nothing", atomic_load(&usr1_count) == 0);
	result_err("pthread_kill(self, 0)", pthread_kill(pthread_self(), 0), 0);
}

static void cancel_settings(void)
{
	int old = -1;

	result_err("pthread_setcancelstate(99): EINVAL", pthread_setcancelstate(99, &old), EINVAL);
	result_err("pthread_setcanceltype(99): EINVAL", pthread_setcanceltype(99, &old), EINVAL);
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	result("the old state was ENABLE", old == PTHREAD_CANCEL_ENABLE);
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
	result("then DISABLE", old == PTHREAD_CANCEL_DISABLE);
	pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old);
	result("the old type was DEFERRED", old == PTHREAD_CANCEL_DEFERRED);
	result_err("pthread_setconcurrency(-1): EINVAL", pthread_setconcurrency(-1), EINVAL);
	result_err("pthread_setconcurrency(3)", pthread_setconcurrency(3), 0);
	result("pthread_getconcurrency reads 3", pthread_getconcurrency() == 3);
	pthread_setconcurrency(0);
}

static void *nothing(void *arg)
{
	return arg;
}

static void equality(void)
{
	pthread_t t = spawn(nothing, NULL);

	result("pthread_equal(self, self)", pthread_equal(pthread_self(), pthread_self()) != 0);
	result("pthread_equal(self, another thread) is 0", pthread_equal(pthread_self(), t) == 0);
	pthread_join(t, NULL);
}

int main(void)
{
	alarm(60);
	sem_init(&release, 0, 0);
	joins();
	kills();
	cancel_settings();
	equality();
	return failed;
}
