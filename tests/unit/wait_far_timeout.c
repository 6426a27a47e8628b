// SPDX-License-Identifier: MIT
/*
 * A timeout far in the future waits: 2^34 s, LONG_MAX s and the largest
 * valid timespec must neither overflow into an early -ETIME nor into a
 * zero timeout. Each wait (flexsc_wait_one, _any, _all and flexsc_wait) is
 * for a read of an empty pipe that another thread fills after 400 ms: the
 * wait must end with the read's result, after the write, on every engine
 * that runs the read away from the owner (sync would block the owner in
 * the read itself). Ordinary short timeouts still expire.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helpers.h"

#define DELAY_MS 400

static int failures;

struct writer {
	int fd;
	uint64_t wrote_ms;
};

static void *write_later(void *arg)
{
	struct writer *w = arg;
	struct timespec d = { 0, DELAY_MS * 1000000L };

	nanosleep(&d, NULL);
	w->wrote_ms = t_now_ms();
	CHECK_EQ(write(w->fd, "x", 1), 1);
	return NULL;
}

enum how { ONE, ANY, ALL, WAIT, NHOW };
static const char *const how_name[NHOW] = { "wait_one", "wait_any", "wait_all", "wait" };

static void far_wait(enum flexsc_engine eng, enum how how, const struct timespec *ts)
{
	struct flexsc *fx;
	struct flexsc_queue *q;
	int p[2];
	char buf[4];
	pthread_t t;
	struct writer w = { 0, 0 };
	flexsc_call_t c;
	int64_t ret = -1;
	unsigned index = 99;

	t_open(eng, &fx, &q, NULL);
	CHECK_EQ(pipe(p), 0);
	w.fd = p[1];
	uint64_t args[3] = { (uint64_t)p[0], (uint64_t)buf, sizeof(buf) };
	CHECK_EQ(flexsc_post(q, SYS_read, 3, args, NULL, &c), 0);
	CHECK_EQ(pthread_create(&t, NULL, write_later, &w), 0);
	uint64_t t0 = t_now_ms();
	int err;
	switch (how) {
	case ONE: err = flexsc_wait_one(q, c, &ret, ts); break;
	case ANY: err = flexsc_wait_any(q, &c, 1, &index, &ret, ts); break;
	case ALL: err = flexsc_wait_all(q, &c, 1, &ret, ts); break;
	default:
		/* it may return once per completion of the ring's own wake-ups: until the read is done */
		do
			err = flexsc_wait(q, ts);
		while (err == 0);
		if (err > 0)
			err = flexsc_poll(q, c, &ret);
		break;
	}
	uint64_t t1 = t_now_ms();
	CHECK_EQ(pthread_join(t, NULL), 0);
	if (err != 0 || ret != 1 || t1 < w.wrote_ms) {
		fprintf(stderr, "%s, %s, timeout {%lld, %ld}: %d (ret %lld) after %llu ms, the write came at %llu ms\n",
			flexsc_engine_name(eng), how_name[how], (long long)ts->tv_sec, ts->tv_nsec, err,
			(long long)ret, (unsigned long long)(t1 - t0), (unsigned long long)(w.wrote_ms - t0));
		failures++;
		if (err == 0 || err > 0)
			ret = 1; /* collected */
		else
			CHECK_EQ(flexsc_wait_one(q, c, &ret, NULL), 0); /* collect it before the teardown */
	} else if (how == ANY) {
		CHECK_EQ(index, 0);
	}
	close(p[0]);
	close(p[1]);
	t_close(fx, q);
}

/* A short timeout still expires, and the call can be collected afterwards. */
static void short_timeout_expires(enum flexsc_engine eng)
{
	struct flexsc *fx;
	struct flexsc_queue *q;
	int p[2];
	char buf[4];
	flexsc_call_t c;
	int64_t ret;
	const struct timespec ts = { 0, 50 * 1000000L };

	t_open(eng, &fx, &q, NULL);
	CHECK_EQ(pipe(p), 0);
	uint64_t args[3] = { (uint64_t)p[0], (uint64_t)buf, sizeof(buf) };
	CHECK_EQ(flexsc_post(q, SYS_read, 3, args, NULL, &c), 0);
	uint64_t t0 = t_now_ms();
	CHECK_EQ(flexsc_wait_one(q, c, &ret, &ts), -ETIME);
	CHECK(t_now_ms() - t0 >= 50);
	CHECK_EQ(write(p[1], "x", 1), 1);
	CHECK_EQ(flexsc_wait_one(q, c, &ret, NULL), 0);
	CHECK_EQ(ret, 1);
	close(p[0]);
	close(p[1]);
	t_close(fx, q);
}

int main(void)
{
	static const enum flexsc_engine engines[] = {
		FLEXSC_ENGINE_AUTO, FLEXSC_ENGINE_URING, FLEXSC_ENGINE_THREADS,
	};
	static const struct timespec far[] = {
		{ 1LL << 34, 0 },                  /* 2^34 s: the ns count alone fits in 64 bits */
		{ 18446744073LL, 709551615L },     /* UINT64_MAX ns exactly */
		{ 18446744074LL, 0 },              /* just past it */
		{ 1LL << 62, 0 },
		{ LONG_MAX, 999999999L },          /* the largest valid timespec */
	};

	for (unsigned e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		for (unsigned i = 0; i < sizeof(far) / sizeof(far[0]); i++)
			far_wait(engines[e], (enum how)(i % NHOW), &far[i]);
		/* every kind of wait with the largest timeout */
		for (int h = 0; h < NHOW; h++)
			far_wait(engines[e], (enum how)h, &far[4]);
		short_timeout_expires(engines[e]);
	}
	return failures ? 1 : 0;
}
