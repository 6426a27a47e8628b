/*
 * Memory of threads that allocate comes back: 20,000 threads, eight at a
 * time, half joined and half detached, each mallocs and frees blocks of
 * four small sizes (and frees one block main allocated), then exits, as
 * a thread-per-connection server's threads do. VmRSS after the first
 * 2,000 (the warm-up: stacks, arenas and caches at their size) and at the
 * end may differ by at most 8 MiB; NPTL stays within a few hundred kB.
 * Under flexsc-run each exited thread left glibc's per-thread malloc
 * cache behind (its 640-byte table and the blocks freed into it, about
 * 3 kB here), because glibc frees it only from NPTL's thread exit: about
 * 50 MiB more by the end (docs/threads.md, "malloc's per-thread cache").
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#define CHECK_NAME "tcache_churn"
#include "check.h"

#define THREADS 20000
#define WARM 2000
#define AT_ONCE 8
#define BOUND_KB (8 * 1024)

static _Atomic int done, bad;

static void *work(void *arg)
{
	static const size_t sizes[] = { 24, 56, 120, 250 };
	unsigned char *mine[16];

	for (int i = 0; i < 16; i++) {
		size_t n = sizes[i % 4];
		mine[i] = malloc(n);
		if (!mine[i]) {
			atomic_store(&bad, 1);
			continue;
		}
		memset(mine[i], i, n);
	}
	for (int i = 0; i < 16; i++) {
		if (mine[i] && mine[i][sizes[i % 4] - 1] != (unsigned char)i)
			atomic_store(&bad, 1);
		free(mine[i]);
	}
	free(arg); /* a block of main's, freed here: it goes into this thread's cache */
	atomic_fetch_add(&done, 1);
	return NULL;
}

int main(void)
{
	pthread_attr_t det;
	long warm = 0;
	int started = 0, ok = 1;

	pthread_attr_init(&det);
	pthread_attr_setdetachstate(&det, PTHREAD_CREATE_DETACHED);
	for (int round = 0; round < THREADS / AT_ONCE; round++) {
		pthread_t t[AT_ONCE];
		bool joinable = round % 2 == 0;

		for (int i = 0; i < AT_ONCE; i++) {
			void *gift = malloc(40);
			if (pthread_create(&t[i], joinable ? NULL : &det, work, gift)) {
				free(gift);
				ok = 0;
				t[i] = 0;
			} else {
				started++;
			}
		}
		if (joinable)
			for (int i = 0; i < AT_ONCE; i++)
				if (t[i] && pthread_join(t[i], NULL))
					ok = 0;
		while (atomic_load(&done) < started)
			sleep_ms(1);
		if (started == WARM)
			warm = rss_kb();
	}
	sleep_ms(50); /* the last detached ones are freed once their carrier switched away */
	long end = rss_kb();
	result("20000 threads that allocate started and ended", ok && started == THREADS);
	result("every block held what was written to it", !atomic_load(&bad));
	result("VmRSS grew by at most 8 MiB after the first 2000", warm > 0 && end - warm <= BOUND_KB);
	if (warm <= 0 || end - warm > BOUND_KB)
		fprintf(stderr, "VmRSS %ld kB after %d threads, %ld kB after %d\n", warm, WARM, end, THREADS);
	if (getenv("TCACHE_CHURN_VERBOSE"))
		fprintf(stderr, "VmRSS %ld kB after %d threads, %ld kB after %d\n", warm, WARM, end, THREADS);
	return failed;
}
