/*
 * What the test programs in this folder share: reporting one check and
 * starting a thread. Plain C and pthreads, like the programs, which know
 * nothing of flexsc. A program defines CHECK_NAME (its name, the prefix
 * of every line it prints) before including this, and returns `failed`.
 */
#ifndef FLEXSC_THREADS_CHECK_H
#define FLEXSC_THREADS_CHECK_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failed;

/* One line per check, flushed at once: a fork or a crash must not lose or repeat it. */
__attribute__((unused)) static void result(const char *what, int ok)
{
	printf("%s: %s: %s\n", CHECK_NAME, what, ok ? "ok" : "FAIL");
	fflush(stdout);
	if (!ok)
		failed = 1;
}

/* A joinable thread running fn(arg); the program stops if it cannot start. */
__attribute__((unused)) static pthread_t spawn(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	int err = pthread_create(&t, NULL, fn, arg);

	if (err) {
		fprintf(stderr, "pthread_create: %s\n", strerror(err));
		exit(1);
	}
	return t;
}

__attribute__((unused)) static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

#endif
