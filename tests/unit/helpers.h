/* SPDX-License-Identifier: MIT */
/*
 * What the unit tests share, compiled once into helpers.o, which the
 * Makefile links into every test (liburing's test/helpers.c shape): one
 * executable per behaviour; exit 0 pass, 1 fail, 77 skip (the machine lacks
 * a feature). tests/run.sh runs each with a timeout and prints the summary
 * line. A program that includes this defines _GNU_SOURCE before any include.
 *
 * The checks are macros (they name the failing line); everything else is a
 * function in helpers.c. A helper that fails a check exits 1 like CHECK.
 */
#ifndef FX_HELPERS_H
#define FX_HELPERS_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <flexsc/flexsc.h>

#define T_EXIT_PASS 0
#define T_EXIT_FAIL 1
#define T_SKIP 77

/* A pointer as a system call argument. */
#define P(x) ((uint64_t)(uintptr_t)(x))

#define CHECK(cond)                                                                   \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
			exit(T_EXIT_FAIL);                                            \
		}                                                                     \
	} while (0)

/* a == b for integers, printing both on failure */
#define CHECK_EQ(a, b)                                                                \
	do {                                                                          \
		long long _a = (long long)(a), _b = (long long)(b);                   \
		if (_a != _b) {                                                       \
			fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %lld, %s == %lld\n", \
				__FILE__, __LINE__, #a, _a, #b, _b);                  \
			exit(T_EXIT_FAIL);                                            \
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

/* CLOCK_MONOTONIC in milliseconds: for bounds on waits. */
uint64_t t_now_ms(void);

/* Sleeps ms milliseconds, the whole of them even if a signal comes. */
void t_sleep_ms(long ms);

/* An instance and one queue on the given engine, quiet (override: a config to start from). */
void t_open(enum flexsc_engine eng, struct flexsc **fx, struct flexsc_queue **q,
	    struct flexsc_config *override);
void t_close(struct flexsc *fx, struct flexsc_queue *q);

/* The queue's statistics; t_by_engine: its calls that engine ran. */
struct flexsc_stats t_stats(const struct flexsc_queue *q);
uint64_t t_by_engine(const struct flexsc_queue *q, enum flexsc_engine eng);

/* Posts a call shaped like read or write: (fd, buf, len). */
flexsc_call_t t_post_io(struct flexsc_queue *q, long nr, int fd, const void *buf, size_t len,
			void *cookie);

/* Posts a cheap call that goes to the engine (not run locally): getppid. */
flexsc_call_t t_post_cheap(struct flexsc_queue *q);

/* The descriptors this process has open. */
int t_count_fds(void);

/* This process's threads whose name (comm) starts with prefix. */
int t_count_threads_named(const char *prefix);

/* The bytes waiting in a pipe (FIONREAD). */
int t_pipe_bytes(int fd);

/* Whether some thread of this process is blocked in read(fd, ...), from
 * /proc/self/task/TID/syscall; t_wait_thread_in_read waits (up to 30 s)
 * until one is. */
bool t_thread_in_read(int fd);
void t_wait_thread_in_read(int fd);

#endif
