// SPDX-License-Identifier: MIT
/* The unit tests' shared helpers: helpers.h says what each does. */
#define _GNU_SOURCE
#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helpers.h"

uint64_t t_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void t_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

void t_open(enum flexsc_engine eng, struct flexsc **fx, struct flexsc_queue **q,
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

void t_close(struct flexsc *fx, struct flexsc_queue *q)
{
	CHECK_EQ(flexsc_queue_destroy(q), 0);
	CHECK_EQ(flexsc_exit(fx), 0);
}

struct flexsc_stats t_stats(const struct flexsc_queue *q)
{
	struct flexsc_stats st;

	CHECK_EQ(flexsc_queue_stats(q, &st), 0);
	return st;
}

uint64_t t_by_engine(const struct flexsc_queue *q, enum flexsc_engine eng)
{
	return t_stats(q).by_engine[eng];
}

flexsc_call_t t_post_io(struct flexsc_queue *q, long nr, int fd, const void *buf, size_t len,
			void *cookie)
{
	uint64_t args[3] = { (uint64_t)fd, P(buf), len };
	flexsc_call_t c = 0;

	CHECK_EQ(flexsc_post(q, nr, 3, args, cookie, &c), 0);
	return c;
}

flexsc_call_t t_post_cheap(struct flexsc_queue *q)
{
	flexsc_call_t c = 0;

	CHECK_EQ(flexsc_post(q, SYS_getppid, 0, NULL, NULL, &c), 0);
	CHECK(c != 0);
	return c;
}

int t_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	CHECK(d != NULL);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own descriptor */
}

int t_pipe_bytes(int fd)
{
	int n = -1;

	CHECK_EQ(ioctl(fd, FIONREAD, &n), 0);
	return n;
}

int t_count_threads_named(const char *prefix)
{
	char comm[64], path[300];
	int n = 0;
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;

	CHECK(d != NULL);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strncmp(comm, prefix, strlen(prefix)))
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

bool t_thread_in_read(int fd)
{
	char want[32], line[256], path[300];
	bool found = false;
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;

	CHECK(d != NULL);
	/* the syscall file: the number (0, read), then the arguments in hex */
	snprintf(want, sizeof(want), "0 0x%x ", fd);
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/syscall", de->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(line, sizeof(line), f) && !strncmp(line, want, strlen(want)))
			found = true;
		fclose(f);
	}
	closedir(d);
	return found;
}

void t_wait_thread_in_read(int fd)
{
	for (unsigned i = 0; !t_thread_in_read(fd); i++) {
		CHECK(i < 30000); /* 30 s: the read was never taken by a syscall thread */
		t_sleep_ms(1);
	}
}
