/*
 * Conformance: sleeps and clocks, what sleep_timing.c and signals_wait.c
 * do not already show (POSIX nanosleep, clock_nanosleep, clock_getres,
 * clock_gettime, sleep, usleep):
 *   1. clock_getres of CLOCK_REALTIME, CLOCK_MONOTONIC and CLOCK_BOOTTIME:
 *      a resolution above 0 and at most 1 ms; clock_gettime and
 *      clock_getres of an invalid clock id: EINVAL; CLOCK_MONOTONIC never
 *      goes back over 1000 reads in each of 4 threads;
 *   2. clock_nanosleep returns its error instead of setting errno: EINVAL
 *      for a bad tv_nsec and for CLOCK_THREAD_CPUTIME_ID; an absolute
 *      deadline already past returns 0 at once, on REALTIME and MONOTONIC;
 *   3. a thread in nanosleep(10 s), a handler with SA_RESTART for the
 *      signal: nanosleep is not restarted, fails with EINTR, and rem holds
 *      between 0 and 10 s, most of it;
 *   4. clock_nanosleep relative (MONOTONIC), interrupted: EINTR and rem
 *      most of the 10 s; absolute (REALTIME, TIMER_ABSTIME), interrupted:
 *      EINTR and rem untouched (POSIX: rem is not used for absolute sleeps);
 *   5. sleep(10) interrupted returns the unslept seconds (1..10); usleep
 *      interrupted is -1 with EINTR; sleep(0) and usleep(0) return 0;
 *   6. sleep(10) in main cut short by SIGALRM (setitimer, 1.5 s): the
 *      whole seconds left, rounded down as glibc's sleep returns them
 *      (the seconds of nanosleep's rem: 8 here, not 9).
 * The signal is sent every 10 ms until the sleep returns (the first may
 * come before it sleeps). Prints no timings.
 * Deterministic output; exit 0 when every check held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/time.h>
#include <unistd.h>

#define CHECK_NAME "posix_sleep"
#include "check.h"

static void clocks(void)
{
	static const clockid_t ids[] = { CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME };
	static const char *names[] = { "CLOCK_REALTIME", "CLOCK_MONOTONIC", "CLOCK_BOOTTIME" };
	struct timespec ts;
	char what[96];

	for (int i = 0; i < 3; i++) {
		ts.tv_sec = ts.tv_nsec = -1;
		int r = clock_getres(ids[i], &ts);

		snprintf(what, sizeof what, "clock_getres(%s): above 0, at most 1 ms", names[i]);
		result(what, r == 0 && ts.tv_sec == 0 && ts.tv_nsec > 0 && ts.tv_nsec <= 1000000);
	}
	errno = 0;
	result_err("clock_gettime(invalid clock): EINVAL", clock_gettime((clockid_t)12345, &ts) == -1 ? errno : 0, EINVAL);
	errno = 0;
	result_err("clock_getres(invalid clock): EINVAL", clock_getres((clockid_t)12345, &ts) == -1 ? errno : 0, EINVAL);
}

static void *mono_reader(void *arg)
{
	struct timespec prev, now;
	long ok = 1;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &prev);
	for (int i = 0; i < 1000; i++) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec < prev.tv_sec || (now.tv_sec == prev.tv_sec && now.tv_nsec < prev.tv_nsec))
			ok = 0;
		prev = now;
		if (i % 100 == 0)
			sched_yield();
	}
	return (void *)ok;
}

static void monotonic(void)
{
	pthread_t t[4];
	void *r;
	int ok = 1;

	for (int i = 0; i < 4; i++)
		t[i] = spawn(mono_reader, NULL);
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], &r);
		ok &= r != NULL;
	}
	result("CLOCK_MONOTONIC never goes back (4 threads x 1000 reads)", ok);
}

static void clock_nanosleep_errors(void)
{
	struct timespec bad = { 0, 1000000000L }, ts = { 0, 1000 };

	result_err("clock_nanosleep, tv_nsec 1e9: returns EINVAL", clock_nanosleep(CLOCK_MONOTONIC, 0, &bad, NULL), EINVAL);
	result_err("clock_nanosleep(CLOCK_THREAD_CPUTIME_ID): returns EINVAL",
		   clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, &ts, NULL), EINVAL);
	ts = ts_in_ms(CLOCK_REALTIME, -2000);
	result_err("clock_nanosleep(REALTIME, TIMER_ABSTIME, past): 0",
		   clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL), 0);
	ts = ts_in_ms(CLOCK_MONOTONIC, -2000);
	result_err("clock_nanosleep(MONOTONIC, TIMER_ABSTIME, past): 0",
		   clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL), 0);
	result("sleep(0) returns 0", sleep(0) == 0);
	result("usleep(0) returns 0", usleep(0) == 0);
}

enum kind { NANOSLEEP, CLOCK_REL, CLOCK_ABS, SLEEP, USLEEP };

struct sleeper {
	enum kind kind;
	atomic_int started;
	int ret, err;
	struct timespec rem;
};

static void on_usr1(int sig)
{
	(void)sig;
}

static void *sleeper(void *arg)
{
	struct sleeper *s = arg;
	struct timespec req = { 10, 0 };

	s->rem.tv_sec = 77;
	s->rem.tv_nsec = 77;
	atomic_store(&s->started, 1);
	errno = 0;
	switch (s->kind) {
	case NANOSLEEP:
		s->ret = nanosleep(&req, &s->rem);
		break;
	case CLOCK_REL:
		s->ret = clock_nanosleep(CLOCK_MONOTONIC, 0, &req, &s->rem);
		break;
	case CLOCK_ABS:
		req = ts_in_ms(CLOCK_REALTIME, 10000);
		s->ret = clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &req, &s->rem);
		break;
	case SLEEP:
		s->ret = (int)sleep(10);
		break;
	case USLEEP:
		s->ret = usleep(10000000);
		break;
	}
	s->err = errno;
	return NULL;
}

/* Runs a sleeper of kind k and signals it every 10 ms until it returns (at most 5 s). */
static void interrupt(struct sleeper *s, enum kind k)
{
	memset(s, 0, sizeof *s);
	s->kind = k;
	pthread_t t = spawn(sleeper, s);
	int joined = 0;

	while (!atomic_load(&s->started))
		sleep_ms(1);
	for (int i = 0; i < 500 && !joined; i++) {
		pthread_kill(t, SIGUSR1);
		sleep_ms(10);
		joined = pthread_tryjoin_np(t, NULL) == 0;
	}
	if (!joined)
		pthread_join(t, NULL); /* the 10 s run out */
}

static int most_of_10s(struct timespec r)
{
	return r.tv_sec >= 4 && (r.tv_sec < 10 || (r.tv_sec == 10 && r.tv_nsec == 0)) && r.tv_nsec >= 0 &&
	       r.tv_nsec < 1000000000L;
}

static void interrupted(void)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	struct sleeper s;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);

	interrupt(&s, NANOSLEEP);
	result("nanosleep with an SA_RESTART handler: -1, EINTR (never restarted)", s.ret == -1 && s.err == EINTR);
	result("... rem holds most of the 10 s", most_of_10s(s.rem));
	interrupt(&s, CLOCK_REL);
	result_err("clock_nanosleep relative, interrupted: returns EINTR", s.ret, EINTR);
	result("... rem holds most of the 10 s", most_of_10s(s.rem));
	interrupt(&s, CLOCK_ABS);
	result_err("clock_nanosleep TIMER_ABSTIME, interrupted: returns EINTR", s.ret, EINTR);
	result("... rem untouched", s.rem.tv_sec == 77 && s.rem.tv_nsec == 77);
	interrupt(&s, SLEEP);
	result("sleep(10), interrupted: returns the unslept seconds (1..10)", s.ret >= 1 && s.ret <= 10);
	interrupt(&s, USLEEP);
	result("usleep, interrupted: -1, EINTR", s.ret == -1 && s.err == EINTR);
}

static void sleep_left(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct itimerval in_1_5s = { { 0, 0 }, { 1, 500000 } };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	double t0 = now_s();
	setitimer(ITIMER_REAL, &in_1_5s, NULL);
	unsigned left = sleep(10);
	double slept = now_s() - t0;
	alarm(60); /* setitimer replaced main's */
	result("sleep(10) cut short after about 1.5 s: the whole seconds left, rounded down",
	       slept < 9 && left == (unsigned)(10 - slept));
}

int main(void)
{
	alarm(60);
	clocks();
	monotonic();
	clock_nanosleep_errors();
	interrupted();
	sleep_left();
	return failed;
}
