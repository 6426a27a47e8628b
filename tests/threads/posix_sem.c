/*
 * Conformance: what sem_pingpong.c leaves out of POSIX semaphores
 * (sem_open, sem_close, sem_unlink, sem_wait, sem_trywait, sem_timedwait,
 * sem_post, sem_getvalue):
 *   1. named: sem_open of a name that does not exist without O_CREAT is
 *      ENOENT; O_CREAT makes it with the initial value; O_CREAT|O_EXCL of
 *      an existing name is EEXIST; opening it again gives a semaphore
 *      with the same value (a post through one is seen through the other);
 *      a name without a leading slash but otherwise fine works too (glibc);
 *   2. named across fork: a forked child opens the name again and waits in
 *      sem_wait until the parent posts; the child posts back twice and the
 *      parent takes both (sem_timedwait), then sem_trywait is EAGAIN;
 *   3. sem_unlink: the name is gone (a second sem_unlink and a sem_open
 *      without O_CREAT are ENOENT) while the open semaphore still works;
 *      sem_close of it is 0;
 *   4. unnamed: a thread blocked in sem_wait is woken by one post, takes
 *      it, and the value is 0 afterwards; a post with no waiter raises the
 *      value (sem_getvalue); sem_timedwait with a deadline already past
 *      takes a unit that is there (0) and is ETIMEDOUT when none is;
 *   5. signals to a thread blocked in a semaphore wait (signal(7): the
 *      futex wait under glibc's is restarted after a handler with
 *      SA_RESTART, unless it has a timeout): sem_post from a handler with
 *      SA_RESTART (async-signal-safe) gives sem_wait its unit (0); a
 *      handler without SA_RESTART makes sem_wait fail with EINTR, and any
 *      handler makes sem_timedwait fail with EINTR.
 * Deterministic output; exit 0 when every check held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "posix_sem"
#include "check.h"

static char name[64];

static int value(sem_t *s)
{
	int v = -99;

	sem_getvalue(s, &v);
	return v;
}

static void named(void)
{
	sem_t *a, *b;
	int err;

	snprintf(name, sizeof name, "/flexsc-posix-sem-%d", (int)getpid());
	sem_unlink(name);
	errno = 0;
	a = sem_open(name, 0);
	err = errno;
	result_err("sem_open of a missing name without O_CREAT: ENOENT", a == SEM_FAILED ? err : 0, ENOENT);
	a = sem_open(name, O_CREAT | O_EXCL, 0600, 2);
	result("sem_open(O_CREAT|O_EXCL) makes it", a != SEM_FAILED);
	if (a == SEM_FAILED)
		exit(1);
	result("its value is the initial one (2)", value(a) == 2);
	errno = 0;
	b = sem_open(name, O_CREAT | O_EXCL, 0600, 0);
	err = errno;
	result_err("sem_open(O_CREAT|O_EXCL) of an existing name: EEXIST", b == SEM_FAILED ? err : 0, EEXIST);
	b = sem_open(name, 0);
	result("sem_open of the existing name", b != SEM_FAILED);
	if (b == SEM_FAILED)
		exit(1);
	sem_post(a);
	result("a post through one handle shows through the other (3)", value(b) == 3);
	sem_wait(b);
	sem_wait(b);
	sem_wait(b);
	result("three waits through the other empty it", value(a) == 0);
	sem_close(b);

	char answers[80];
	sem_t *ans;

	snprintf(answers, sizeof answers, "%s-answers", name);
	sem_unlink(answers);
	ans = sem_open(answers, O_CREAT | O_EXCL, 0600, 0);
	if (ans == SEM_FAILED)
		exit(1);
	pid_t pid = fork();

	if (pid == 0) {
		sem_t *c = sem_open(name, 0), *d = sem_open(answers, 0);

		alarm(20);
		if (c == SEM_FAILED || d == SEM_FAILED)
			_exit(2);
		if (sem_wait(c) != 0) /* until the parent posts */
			_exit(3);
		sem_post(d);
		sem_post(d);
		sem_close(c);
		sem_close(d);
		_exit(0);
	}
	sleep_ms(20);
	sem_post(a);
	struct timespec ts = ts_in_ms(CLOCK_REALTIME, 20000);
	int ok = 1, status = -1;

	for (int i = 0; i < 2; i++)
		ok &= sem_timedwait(ans, &ts) == 0;
	waitpid(pid, &status, 0);
	ok &= value(a) == 0; /* the child took the parent's post */
	sem_close(ans);
	sem_unlink(answers);
	result("child exits 0 after its sem_wait and two posts", WIFEXITED(status) && WEXITSTATUS(status) == 0);
	result("the child took the parent's post and the parent its two", ok);
	errno = 0;
	result_err("then sem_trywait is EAGAIN", sem_trywait(a) == -1 ? errno : 0, EAGAIN);

	result_err("sem_unlink", sem_unlink(name) == 0 ? 0 : errno, 0);
	errno = 0;
	result_err("sem_unlink again: ENOENT", sem_unlink(name) == -1 ? errno : 0, ENOENT);
	errno = 0;
	b = sem_open(name, 0);
	result_err("sem_open after unlink: ENOENT", b == SEM_FAILED ? errno : 0, ENOENT);
	sem_post(a);
	result("the unlinked semaphore still works", sem_trywait(a) == 0);
	result_err("sem_close", sem_close(a) == 0 ? 0 : errno, 0);

	snprintf(name, sizeof name, "flexsc-posix-sem-noslash-%d", (int)getpid());
	a = sem_open(name, O_CREAT | O_EXCL, 0600, 1);
	result("a name without a leading slash works (glibc)", a != SEM_FAILED && value(a) == 1);
	if (a != SEM_FAILED) {
		sem_close(a);
		sem_unlink(name);
	}
}

static sem_t s;
static volatile sig_atomic_t waiting, handled;

static void *waiter(void *arg)
{
	int timed = (int)(long)arg, r;

	waiting = 1;
	if (timed) {
		struct timespec ts = ts_in_ms(CLOCK_REALTIME, 30000);

		r = sem_timedwait(&s, &ts);
	} else {
		r = sem_wait(&s);
	}
	return (void *)(long)(r == 0 ? 0 : errno);
}

static void on_usr1(int sig)
{
	(void)sig;
	if (handled++ == 0) /* once: more signals may come before the join sees it end */
		sem_post(&s);
}

static void on_usr2(int sig)
{
	(void)sig;
	handled++;
}

/*
 * A thread in sem_wait (or sem_timedwait), a handler for signal sig with
 * flags; pthread_kill every 10 ms until the wait returns (the first may
 * come before it waits). Its result (0 or the errno), with the unit given
 * by a post from main after 3 s if nothing else ended it.
 */
static int interrupted(int sig, void (*fn)(int), int flags, int timed)
{
	struct sigaction sa = { .sa_handler = fn, .sa_flags = flags };
	void *r;

	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	waiting = 0;
	handled = 0;
	pthread_t t = spawn(waiter, (void *)(long)timed);

	while (!waiting)
		sleep_ms(1);
	sleep_ms(20);
	int joined = 0;

	for (int i = 0; i < 300 && !joined; i++) {
		pthread_kill(t, sig);
		sleep_ms(10);
		joined = pthread_tryjoin_np(t, &r) == 0;
	}
	if (!joined) { /* never interrupted: let it go */
		sem_post(&s);
		pthread_join(t, &r);
	}
	return (int)(long)r;
}

static void unnamed(void)
{
	struct timespec ts;
	void *r;
	pthread_t t;

	sem_init(&s, 0, 0);
	t = spawn(waiter, NULL);
	while (!waiting)
		sleep_ms(1);
	sleep_ms(20);
	sem_post(&s);
	pthread_join(t, &r);
	result_err("a thread blocked in sem_wait is woken by a post", (int)(long)r, 0);
	result("the value is 0 after it took the unit", value(&s) == 0);
	sem_post(&s);
	sem_post(&s);
	result("two posts with no waiter: value 2", value(&s) == 2);
	ts = ts_in_ms(CLOCK_REALTIME, -1000);
	result_err("sem_timedwait with a past deadline takes a unit that is there",
		   sem_timedwait(&s, &ts) == 0 ? 0 : errno, 0);
	sem_wait(&s);
	errno = 0;
	result_err("... and is ETIMEDOUT when none is", sem_timedwait(&s, &ts) == -1 ? errno : 0, ETIMEDOUT);

	result_err("sem_post in a handler (SA_RESTART) ends sem_wait with the unit",
		   interrupted(SIGUSR1, on_usr1, SA_RESTART, 0), 0);
	result("the value is 0 again", value(&s) == 0);
	result_err("a handler without SA_RESTART: sem_wait fails with EINTR",
		   interrupted(SIGUSR2, on_usr2, 0, 0), EINTR);
	result_err("a handler with SA_RESTART: sem_timedwait fails with EINTR",
		   interrupted(SIGUSR2, on_usr2, SA_RESTART, 1), EINTR);
	result("the value is 0 again", value(&s) == 0);
	sem_destroy(&s);
}

int main(void)
{
	alarm(60);
	named();
	unnamed();
	return failed;
}
