// SPDX-License-Identifier: MIT
/*
 * Locale-dependent libc in threads: printf("%f"), isalpha and toupper read
 * per-thread ctype tables that glibc sets up when a thread starts; a thread
 * runtime must set them up too. Deterministic output, exit 0 on success.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static void *work(void *arg)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%.3f %d %c", 2.5 * (double)(long)arg, isalpha('x') != 0, toupper('q'));
	return strcmp(buf, (long)arg == 2 ? "5.000 1 Q" : "7.500 1 Q") ? (void *)1 : NULL;
}

int main(void)
{
	pthread_t t[2];
	void *r0, *r1;

	pthread_create(&t[0], NULL, work, (void *)2L);
	pthread_create(&t[1], NULL, work, (void *)3L);
	pthread_join(t[0], &r0);
	pthread_join(t[1], &r1);
	int ok = !r0 && !r1;
	printf("ctype_printf: %%f, isalpha and toupper in new threads: %s\n", ok ? "ok" : "FAIL");
	return ok ? 0 : 1;
}
