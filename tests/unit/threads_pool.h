/* SPDX-License-Identifier: MIT */
/* Shared by threads_pool_*.c: pipes, blocked reads, counting syscall threads. */
#ifndef FX_THREADS_POOL_H
#define FX_THREADS_POOL_H

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"


/* Threads of this process named flexsc-sys. */
static inline int sys_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	CHECK(d);
	while ((e = readdir(d))) {
		char p[300], comm[32] = { 0 };
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/proc/self/task/%s/comm", e->d_name);
		int fd = open(p, O_RDONLY);
		if (fd >= 0) {
			if (read(fd, comm, sizeof(comm) - 1) > 0 && !strncmp(comm, "flexsc-sys", 10))
				n++;
			close(fd);
		}
	}
	closedir(d);
	return n;
}

/* Threads of this process blocked in a pipe read (wchan pipe_read). */
static inline int pipe_sleepers(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	CHECK(d);
	while ((e = readdir(d))) {
		char p[300], w[64] = { 0 };
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/proc/self/task/%s/wchan", e->d_name);
		int fd = open(p, O_RDONLY);
		if (fd >= 0) {
			if (read(fd, w, sizeof(w) - 1) > 0 && strstr(w, "pipe_read"))
				n++;
			close(fd);
		}
	}
	closedir(d);
	return n;
}

#endif
