/*
 * 10,000 threads, each blocked in read() on its own pipe, released in a
 * random order (fixed seed); each must get the byte meant for it.
 *
 * It needs two descriptors per thread: the soft RLIMIT_NOFILE is raised
 * (and the hard one too where permitted). If the limit still does not
 * allow 10,000 pipes, it runs as many threads as the limit allows and
 * says so on stderr; stdout is the same either way. Thread stacks are
 * 64 KiB, so memory stays bounded.
 */
// flexsc-test: skip-config sync (10,000 threads blocked in read() at once: under the sync engine each call holds its carrier, and the monitor starts at most 4,096 spare carriers)
// flexsc-test: skip-config contained (a runtime started under a seccomp filter uses the synchronous engine: the same as sync)
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "pipes_10k"
#include "check.h"

#define WANT 10000
#define MARGIN 64 /* descriptors left for the runtime and libc */

static int (*pipes)[2];
static unsigned char *got;
static _Atomic int waiting;

static unsigned char byte_for(int i)
{
	return (unsigned char)(i * 131 + 7);
}

static void *reader(void *arg)
{
	int i = (int)(intptr_t)arg;
	unsigned char b = 0;
	ssize_t n;

	atomic_fetch_add(&waiting, 1);
	do
		n = read(pipes[i][0], &b, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1) {
		fprintf(stderr, "thread %d: read returned %zd (%s)\n", i, n, n < 0 ? strerror(errno) : "");
		return (void *)1;
	}
	got[i] = b;
	close(pipes[i][0]);
	return NULL;
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return 16;
	while (readdir(d))
		n++;
	closedir(d);
	return n; /* counts ".", ".." and the directory's own descriptor: a little margin */
}

/* How many pipes the descriptor limit allows, after raising it as far as permitted. */
static int pipe_budget(void)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)WANT * 2 + (rlim_t)open_fds() + MARGIN;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 0;
	if (rl.rlim_cur < need) {
		struct rlimit want = { need, rl.rlim_max > need ? rl.rlim_max : need };
		if (setrlimit(RLIMIT_NOFILE, &want)) { /* raising the hard limit needs privilege */
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	long room = (long)rl.rlim_cur - open_fds() - MARGIN;
	return room / 2 < WANT ? (int)(room / 2) : WANT;
}

int main(void)
{
	int n = pipe_budget(), bad = 0;
	pthread_attr_t attr;
	pthread_t *t;
	int *order;

	if (n < 100) {
		fprintf(stderr, "pipes_10k: the descriptor limit allows only %d pipes\n", n);
		return 1;
	}
	if (n < WANT)
		fprintf(stderr, "pipes_10k: RLIMIT_NOFILE allows %d pipes, not %d: running %d threads\n",
			n, WANT, n);
	pipes = calloc((size_t)n, sizeof(*pipes));
	got = calloc((size_t)n, 1);
	t = calloc((size_t)n, sizeof(*t));
	order = calloc((size_t)n, sizeof(*order));
	if (!pipes || !got || !t || !order)
		return 1;
	for (int i = 0; i < n; i++) {
		if (pipe2(pipes[i], O_CLOEXEC)) {
			fprintf(stderr, "pipe2 #%d: %s\n", i, strerror(errno));
			return 1;
		}
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	for (int i = 0; i < n; i++) {
		int err = pthread_create(&t[i], &attr, reader, (void *)(intptr_t)i);
		if (err) {
			fprintf(stderr, "pthread_create #%d: %s\n", i, strerror(err));
			return 1;
		}
	}
	/* all started; give the last ones time to be inside read() */
	while (atomic_load(&waiting) < n)
		usleep(1000);
	usleep(50000);

	/* release in a random order (Fisher-Yates with a fixed LCG) */
	uint64_t seed = 0x5eed1234abcdull;
	for (int i = 0; i < n; i++)
		order[i] = i;
	for (int i = n - 1; i > 0; i--) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		int j = (int)((seed >> 33) % (uint64_t)(i + 1));
		int tmp = order[i];
		order[i] = order[j];
		order[j] = tmp;
	}
	for (int k = 0; k < n; k++) {
		int i = order[k];
		unsigned char b = byte_for(i);
		if (write(pipes[i][1], &b, 1) != 1) {
			fprintf(stderr, "write to pipe #%d: %s\n", i, strerror(errno));
			return 1;
		}
		close(pipes[i][1]);
	}
	for (int i = 0; i < n; i++) {
		void *r;
		pthread_join(t[i], &r);
		if (r || got[i] != byte_for(i)) {
			if (bad++ < 10)
				fprintf(stderr, "thread %d got byte %u, want %u\n", i, got[i], byte_for(i));
		}
	}
	result("every thread blocked in read() got its own byte", !bad);
	if (bad)
		fprintf(stderr, "pipes_10k: %d of %d threads wrong\n", bad, n);
	return failed;
}
