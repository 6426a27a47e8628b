// SPDX-License-Identifier: MIT
/*
 * Quick calls (newfstatat, fstat, statx) on the auto engine run on the
 * owner at post time, timed; one slower than the threshold sends them the
 * usual way (io_uring for newfstatat and statx, a syscall thread for fstat)
 * for a second. Checked with the queue's counters:
 *   1. with the default threshold (200 us), the first stat runs in place
 *      ("local"); with a threshold no stat reaches (60 s), 100 stats of a
 *      cached file all do, with the system call's results (with 200 us, one
 *      preempted stat would send the rest of the second the usual way);
 *   2. with FLEXSC_QUICK_SLOW_NS=0 (every call counts as slow; read at
 *      registration), the first stat runs in place and the next ones do
 *      not: newfstatat goes through io_uring, fstat to a syscall thread;
 *   3. on the uring engine, the same stat is never run in place.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helpers.h"


static int64_t stat_of(struct flexsc_queue *q, const char *path, struct stat *st)
{
	uint64_t a[4] = { (uint64_t)AT_FDCWD, P(path), P(st), 0 };

	return flexsc_syscall(q, SYS_newfstatat, 4, a);
}

int main(void)
{
	struct flexsc *fx;
	struct flexsc_queue *q;
	struct flexsc_sysinfo info;
	struct stat want, got;
	const char *path = "/proc/self/exe";

	CHECK_EQ(stat(path, &want), 0);

	/* 1 */
	unsetenv("FLEXSC_QUICK_SLOW_NS");
	t_open(FLEXSC_ENGINE_AUTO, &fx, &q, NULL);
	CHECK_EQ(flexsc_sysinfo(fx, SYS_newfstatat, &info), 0);
	struct flexsc_stats b = t_stats(q);
	CHECK_EQ(stat_of(q, path, &got), 0);
	CHECK_EQ(got.st_ino, want.st_ino);
	struct flexsc_stats a = t_stats(q);
	CHECK_EQ(a.by_engine[FLEXSC_ENGINE_AUTO] - b.by_engine[FLEXSC_ENGINE_AUTO], 1);
	t_close(fx, q);

	setenv("FLEXSC_QUICK_SLOW_NS", "60000000000", 1);
	t_open(FLEXSC_ENGINE_AUTO, &fx, &q, NULL);
	b = t_stats(q);
	for (int i = 0; i < 100; i++) {
		CHECK_EQ(stat_of(q, path, &got), 0);
		CHECK_EQ(got.st_ino, want.st_ino);
	}
	a = t_stats(q);
	CHECK_EQ(a.by_engine[FLEXSC_ENGINE_AUTO] - b.by_engine[FLEXSC_ENGINE_AUTO], 100);
	CHECK_EQ(stat_of(q, "/nonexistent/flexsc", &got), -ENOENT);
	t_close(fx, q);

	/* 2 */
	setenv("FLEXSC_QUICK_SLOW_NS", "0", 1);
	t_open(FLEXSC_ENGINE_AUTO, &fx, &q, NULL);
	b = t_stats(q);
	CHECK_EQ(stat_of(q, path, &got), 0);
	a = t_stats(q);
	CHECK_EQ(a.by_engine[FLEXSC_ENGINE_AUTO] - b.by_engine[FLEXSC_ENGINE_AUTO], 1);
	b = a;
	CHECK_EQ(stat_of(q, path, &got), 0);
	CHECK_EQ(got.st_ino, want.st_ino);
	a = t_stats(q);
	CHECK_EQ(a.by_engine[FLEXSC_ENGINE_AUTO] - b.by_engine[FLEXSC_ENGINE_AUTO], 0);
	if (info.uring_supported)
		CHECK_EQ(a.by_engine[FLEXSC_ENGINE_URING] - b.by_engine[FLEXSC_ENGINE_URING], 1);
	b = a;
	int fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	uint64_t fa[2] = { (uint64_t)fd, P(&got) };
	CHECK_EQ(flexsc_syscall(q, SYS_fstat, 2, fa), 0);
	CHECK_EQ(got.st_ino, want.st_ino);
	a = t_stats(q);
	CHECK_EQ(a.by_engine[FLEXSC_ENGINE_THREADS] - b.by_engine[FLEXSC_ENGINE_THREADS], 1);
	close(fd);
	t_close(fx, q);
	unsetenv("FLEXSC_QUICK_SLOW_NS");

	/* 3 */
	t_open(FLEXSC_ENGINE_URING, &fx, &q, NULL);
	b = t_stats(q);
	CHECK_EQ(stat_of(q, path, &got), 0);
	a = t_stats(q);
	CHECK_EQ(a.by_engine[FLEXSC_ENGINE_AUTO] - b.by_engine[FLEXSC_ENGINE_AUTO], 0);
	t_close(fx, q);

	printf("quick_calls: stats run in place on the auto engine, the usual way after a slow one\n");
	return 0;
}
