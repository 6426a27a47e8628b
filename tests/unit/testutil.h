/* SPDX-License-Identifier: MIT */
/*
 * Shared by the test programs: one executable per behaviour; exit 0 pass,
 * 1 fail, 77 skip (the machine lacks a feature). tests/run.sh runs each
 * with a timeout and prints the summary line. A program that includes
 * this defines _GNU_SOURCE before any include.
 */
#ifndef FX_TESTUTIL_H
#define FX_TESTUTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <flexsc/flexsc.h>

#define T_SKIP 77

/* CLOCK_MONOTONIC in milliseconds: for bounds on waits */
static inline uint64_t t_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

#define CHECK(cond)                                                                   \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
			exit(1);                                                      \
		}                                                                     \
	} while (0)

/* a == b for integers, printing both on failure */
#define CHECK_EQ(a, b)                                                                \
	do {                                                                          \
		long long _a = (long long)(a), _b = (long long)(b);                   \
		if (_a != _b) {                                                       \
			fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %lld, %s == %lld\n", \
				__FILE__, __LINE__, #a, _a, #b, _b);                  \
			exit(1);                                                      \
		}                                                                     \
	} while (0)

#define SKIP(...)                                                                     \
	do {                                                                          \
		fprintf(stderr, "skip: " __VA_ARGS__);                                \
		fputc('\n', stderr);                                                  \
		exit(T_SKIP);                                                         \
	} while (0)

/* Every engine, for tests that run the same thing on each. */
static const enum flexsc_engine t_engines[] = {
	FLEXSC_ENGINE_AUTO, FLEXSC_ENGINE_URING, FLEXSC_ENGINE_THREADS, FLEXSC_ENGINE_SYNC,
};
#define T_NENGINES (sizeof(t_engines) / sizeof(t_engines[0]))

/* An instance and one queue on the given engine, quiet, or exit(1). */
static inline void t_open(enum flexsc_engine eng, struct flexsc **fx, struct flexsc_queue **q,
			  struct flexsc_config *override)
{
	struct flexsc_config c;

	if (override) {
		c = *override;
	} else {
		flexsc_config_init(&c);
	}
	c.engine = eng;
	c.flags |= FLEXSC_QUIET;
	CHECK_EQ(flexsc_register(fx, &c), 0);
	CHECK_EQ(flexsc_queue_create(*fx, q), 0);
}

static inline void t_close(struct flexsc *fx, struct flexsc_queue *q)
{
	CHECK_EQ(flexsc_queue_destroy(q), 0);
	CHECK_EQ(flexsc_exit(fx), 0);
}

#endif
