// SPDX-License-Identifier: MIT
/*
 * Locale-dependent libc in threads: printf("%f"), isalpha and toupper read
 * per-thread ctype tables that glibc sets up when a thread starts; a thread
 * runtime must set them up too. Deterministic output, exit 0 on success.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define CHECK_NAME "ctype_printf"
#include "check.h"

static void *work(void *arg)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%.3f %d %c", 2.5 * (double)(long)arg, isalpha('x') != 0, toupper('q'));
	return strcmp(buf, (long)arg == 2 ? "5.000 1 Q" : "7.500 1 Q") ? (void *)1 : NULL;
}

int main(void)
{
	pthread_t t0 = spawn(work, (void *)2L), t1 = spawn(work, (void *)3L);
	void *r0, *r1;

	pthread_join(t0, &r0);
	pthread_join(t1, &r1);
	result("%f, isalpha and toupper in new threads", !r0 && !r1);
	return failed;
}
