// SPDX-License-Identifier: MIT
/*
 * flexsc_exit leaves nothing behind: no thread (entries of /proc/self/task)
 * and no descriptor (entries of /proc/self/fd), on every engine, and 100
 * register/exit cycles with queues and calls in between do not grow either.
 *
 * io_uring's own workers (iou-wrk-*, iou-sqp-*) belong to the kernel's
 * io_uring context of the thread that submitted, not to flexsc; they go
 * away on their own schedule, so they are not counted. A thread that was
 * joined may stay listed for a moment while the kernel reaps it: counts
 * are retried for up to BOUND_S (a bound that only turns a leak into a
 * failure, so generous: a busy 2-CPU machine or a sanitizer can delay the
 * reaping for seconds; a count that is right ends the wait at once).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#define BOUND_S 30

static bool io_uring_worker(const char *tid)
{
	char path[300], comm[64] = "";

	snprintf(path, sizeof(path), "/proc/self/task/%s/comm", tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return true; /* gone meanwhile */
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = 0;
	fclose(f);
	return !strncmp(comm, "iou-", 4);
}

/* Threads of this process, io_uring workers left out; *named counts "flexsc-sys" ones. */
static int count_threads(int *named)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;

	CHECK(d != NULL);
	if (named)
		*named = 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || io_uring_worker(de->d_name))
			continue;
		n++;
		if (named) {
			char path[300], comm[64] = "";
			snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
			FILE *f = fopen(path, "r");
			if (f) {
				if (fgets(comm, sizeof(comm), f) && !strncmp(comm, "flexsc-sys", 10))
					(*named)++;
				fclose(f);
			}
		}
	}
	closedir(d);
	return n;
}

/* Waits (up to BOUND_S) for the thread count to come back to want. */
static void expect_threads(int want, const char *what)
{
	const struct timespec ms = { 0, 1000000L };
	int n = 0, named = 0;

	for (uint64_t end = t_now_ms() + BOUND_S * 1000u;;) {
		n = count_threads(&named);
		if (n == want && named == 0)
			return;
		if (t_now_ms() >= end)
			break;
		nanosleep(&ms, NULL);
	}
	fprintf(stderr, "%s: %d threads (%d flexsc-sys), expected %d (waited %d s)\n", what, n, named,
		want, BOUND_S);
	exit(1);
}

/* Some traffic on a queue: calls on every route, one left pending, one left done. */
static void traffic(struct flexsc_queue *q)
{
	static char buf[64];
	int p[2];
	int64_t r;

	CHECK_EQ(pipe(p), 0);
	uint64_t w[3] = { (uint64_t)p[1], (uint64_t)(uintptr_t)"abc", 3 };
	uint64_t rd[3] = { (uint64_t)p[0], (uint64_t)(uintptr_t)buf, sizeof(buf) };
	flexsc_call_t c[4];
	CHECK_EQ(flexsc_post(q, SYS_write, 3, w, NULL, &c[0]), 0);
	CHECK_EQ(flexsc_post(q, SYS_getppid, 0, NULL, NULL, &c[1]), 0);
	CHECK_EQ(flexsc_post(q, SYS_gettid, 0, NULL, NULL, &c[2]), 0);
	CHECK_EQ(flexsc_wait_all(q, c, 3, NULL, NULL), 0);
	CHECK_EQ(flexsc_post(q, SYS_read, 3, rd, NULL, &c[3]), 0);
	CHECK_EQ(flexsc_wait_one(q, c[3], &r, NULL), 0);
	CHECK_EQ(r, 3);
	/* left behind for destroy: one done, one pending */
	CHECK_EQ(flexsc_post(q, SYS_getppid, 0, NULL, NULL, &c[0]), 0);
	CHECK_EQ(flexsc_wait(q, NULL), 1);
	CHECK_EQ(flexsc_post(q, SYS_getppid, 0, NULL, NULL, &c[1]), 0);
	close(p[0]);
	close(p[1]);
}

static void *note_tid(void *arg)
{
	*(pid_t *)arg = gettid();
	return NULL;
}

int main(void)
{
	/*
	 * ThreadSanitizer starts a background thread at the first thread
	 * creation: create and join one before counting.
	 */
	pthread_t t;
	pid_t tid = 0;
	char path[64];
	CHECK_EQ(pthread_create(&t, NULL, note_tid, &tid), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	snprintf(path, sizeof(path), "/proc/self/task/%d", (int)tid);
	for (uint64_t end = t_now_ms() + BOUND_S * 1000u; access(path, F_OK) == 0;) {
		CHECK(t_now_ms() < end);
		nanosleep(&(struct timespec){ 0, 1000000L }, NULL);
	}
	int threads0 = count_threads(NULL), fds0 = t_count_fds();

	for (unsigned i = 0; i < T_NENGINES; i++) {
		enum flexsc_engine eng = t_engines[i];
		struct flexsc *fx;
		struct flexsc_queue *q, *q2;
		char what[64];

		t_open(eng, &fx, &q, NULL);
		CHECK_EQ(flexsc_queue_create(fx, &q2), 0);
		traffic(q);
		traffic(q2);
		if (eng == FLEXSC_ENGINE_AUTO || eng == FLEXSC_ENGINE_THREADS) {
			int named;
			CHECK(count_threads(&named) > threads0);
			CHECK(named > 0);
		}
		CHECK_EQ(flexsc_queue_destroy(q2), 0);
		t_close(fx, q);
		snprintf(what, sizeof(what), "%s, after flexsc_exit", flexsc_engine_name(eng));
		expect_threads(threads0, what);
		CHECK_EQ(t_count_fds(), fds0);

		/* queues left alive at flexsc_exit: exit drains them, destroy frees them */
		t_open(eng, &fx, &q, NULL);
		traffic(q);
		CHECK_EQ(flexsc_exit(fx), 0);
		snprintf(what, sizeof(what), "%s, exit with a live queue", flexsc_engine_name(eng));
		expect_threads(threads0, what);
		CHECK_EQ(flexsc_queue_destroy(q), 0); /* a dead queue keeps its own descriptors until here */
		CHECK_EQ(t_count_fds(), fds0);

		/* 100 cycles */
		for (unsigned k = 0; k < 100; k++) {
			t_open(eng, &fx, &q, NULL);
			if (k % 10 == 0)
				traffic(q);
			else
				CHECK_EQ(flexsc_syscall(q, SYS_getppid, 0, NULL), getppid());
			t_close(fx, q);
		}
		snprintf(what, sizeof(what), "%s, after 100 register/exit cycles", flexsc_engine_name(eng));
		expect_threads(threads0, what);
		CHECK_EQ(t_count_fds(), fds0);
		printf("%s: no thread or descriptor left after exit, after exit with a live queue, "
		       "and after 100 cycles (%d threads, %d fds)\n",
		       flexsc_engine_name(eng), threads0, fds0);
	}
	return 0;
}
