/*
 * Sleeps in many threads at once: nanosleep, usleep, sleep, and
 * clock_nanosleep (CLOCK_MONOTONIC and CLOCK_REALTIME, relative and
 * TIMER_ABSTIME). Every sleep lasts at least as long as asked (an absolute
 * one ends at or after its deadline, on its own clock; for CLOCK_REALTIME,
 * which can be stepped, the time slept on CLOCK_MONOTONIC may show it
 * instead) and ends within a generous bound (a lost timer shows). Invalid
 * requests fail with EINVAL.
 * Prints pass/fail only, never timings.
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

#define CHECK_NAME "sleep_timing"
#include "check.h"

#define THREADS 64
#define ROUNDS 10
#define SLACK_NS 5000000000LL /* a sleep that overruns by 5 s lost its wake-up */

static _Atomic int too_short, too_long, errors;

static int64_t now(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct timespec ts_of(int64_t ns)
{
	return (struct timespec){ (time_t)(ns / 1000000000), (long)(ns % 1000000000) };
}

static void judge(const char *what, int id, int64_t asked, int64_t took)
{
	if (took < asked) {
		fprintf(stderr, "thread %d: %s slept %lld ns of %lld\n", id, what, (long long)took,
			(long long)asked);
		atomic_fetch_add(&too_short, 1);
	} else if (took - asked > SLACK_NS) {
		fprintf(stderr, "thread %d: %s overran by %lld ns\n", id, what, (long long)(took - asked));
		atomic_fetch_add(&too_long, 1);
	}
}

/*
 * An absolute CLOCK_REALTIME sleep of `asked` ns, `rt_late` ns past its
 * deadline on that clock, `mono_took` ns on CLOCK_MONOTONIC since before
 * the deadline was computed. CLOCK_REALTIME may be stepped (NTP, a
 * hypervisor's sync) during or just after the sleep: stepped back, the
 * sleep seems to end before its deadline; stepped forward, to overrun.
 * So it is short only if both clocks say so (the monotonic one less 1 ms
 * for reading two clocks), and overran only if both clocks say so.
 */
static void judge_realtime_abs(int id, int64_t asked, int64_t rt_late, int64_t mono_took)
{
	int64_t mono_late = mono_took - asked;

	if (rt_late < 0 && mono_late < -1000000) {
		fprintf(stderr, "thread %d: clock_nanosleep(REALTIME, ABSTIME) ended %lld ns before its deadline, "
			"slept %lld ns of %lld\n", id, (long long)-rt_late, (long long)mono_took, (long long)asked);
		atomic_fetch_add(&too_short, 1);
	} else if (rt_late > SLACK_NS && mono_late > SLACK_NS) {
		fprintf(stderr, "thread %d: clock_nanosleep(REALTIME, ABSTIME) overran by %lld ns\n", id,
			(long long)(rt_late < mono_late ? rt_late : mono_late));
		atomic_fetch_add(&too_long, 1);
	}
}

static void *sleeper(void *arg)
{
	int id = (int)(intptr_t)arg;
	uint32_t seed = (uint32_t)id * 2654435761u + 1;

	for (int r = 0; r < ROUNDS; r++) {
		seed = seed * 1103515245u + 12345u;
		int64_t asked = 100000 + (int64_t)(seed >> 8) % 5000000; /* 0.1 to 5.1 ms */
		int64_t t0 = now(CLOCK_MONOTONIC), t1;
		struct timespec req = ts_of(asked), abs;
		int err;

		switch ((id + r) % 6) {
		case 0:
			if (nanosleep(&req, NULL))
				atomic_fetch_add(&errors, 1);
			judge("nanosleep", id, asked, now(CLOCK_MONOTONIC) - t0);
			break;
		case 1:
			asked = asked / 1000 * 1000;
			if (usleep((useconds_t)(asked / 1000)))
				atomic_fetch_add(&errors, 1);
			judge("usleep", id, asked, now(CLOCK_MONOTONIC) - t0);
			break;
		case 2:
			if ((err = clock_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL)))
				atomic_fetch_add(&errors, 1);
			judge("clock_nanosleep(MONOTONIC)", id, asked, now(CLOCK_MONOTONIC) - t0);
			break;
		case 3:
			if ((err = clock_nanosleep(CLOCK_REALTIME, 0, &req, NULL)))
				atomic_fetch_add(&errors, 1);
			judge("clock_nanosleep(REALTIME)", id, asked, now(CLOCK_MONOTONIC) - t0);
			break;
		case 4:
			abs = ts_of(now(CLOCK_MONOTONIC) + asked);
			if ((err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL)))
				atomic_fetch_add(&errors, 1);
			t1 = now(CLOCK_MONOTONIC);
			judge("clock_nanosleep(MONOTONIC, ABSTIME)", id,
			      (int64_t)abs.tv_sec * 1000000000 + abs.tv_nsec, t1);
			break;
		case 5:
			abs = ts_of(now(CLOCK_REALTIME) + asked);
			if ((err = clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &abs, NULL)))
				atomic_fetch_add(&errors, 1);
			t1 = now(CLOCK_REALTIME);
			judge_realtime_abs(id, asked, t1 - ((int64_t)abs.tv_sec * 1000000000 + abs.tv_nsec),
					   now(CLOCK_MONOTONIC) - t0);
			break;
		}
	}
	return NULL;
}

static void *one_second(void *arg)
{
	(void)arg;
	int64_t t0 = now(CLOCK_MONOTONIC);
	if (sleep(1) != 0)
		atomic_fetch_add(&errors, 1);
	judge("sleep(1)", -1, 1000000000, now(CLOCK_MONOTONIC) - t0);
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS], s = spawn(one_second, NULL);

	for (int i = 0; i < THREADS; i++)
		t[i] = spawn(sleeper, (void *)(intptr_t)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_join(s, NULL);

	resultf(!atomic_load(&too_short) && !atomic_load(&errors),
		"%d threads x %d sleeps of 6 kinds, plus sleep(1): never short", THREADS, ROUNDS);
	result("no sleep overran by seconds (no lost wake-up)", !atomic_load(&too_long));

	/* invalid requests */
	struct timespec bad = { 0, 1000000000L }, neg = { -1, 0 }, zero = { 0, 0 };
	errno = 0;
	int ok = nanosleep(&bad, NULL) == -1 && errno == EINVAL;
	ok &= clock_nanosleep(CLOCK_MONOTONIC, 0, &bad, NULL) == EINVAL;
	ok &= clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &bad, NULL) == EINVAL;
	errno = 0;
	ok &= nanosleep(&neg, NULL) == -1 && errno == EINVAL;
	ok &= nanosleep(&zero, NULL) == 0;
	/* an absolute deadline in the past returns at once */
	struct timespec past = { 1, 0 };
	int64_t t0 = now(CLOCK_MONOTONIC);
	ok &= clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &past, NULL) == 0;
	ok &= now(CLOCK_MONOTONIC) - t0 < SLACK_NS;
	result("invalid requests fail with EINVAL, past deadlines return", ok);
	printf("sleep_timing: %s\n", failed ? "FAIL" : "PASS");
	return failed;
}
