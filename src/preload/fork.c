/* SPDX-License-Identifier: MIT */
/*
 * fork: only the calling thread survives in the child (POSIX). glibc's
 * fork does its own part (atfork handlers, malloc and stdio locks, its
 * thread lists); then the runtime rebuilds itself around the one uthread
 * left (fx_rt_after_fork_child): a fresh flexsc instance and queue, since
 * io_uring rings are memory shared with the parent, and carriers started
 * again with the child's first pthread_create.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "preload/real.h"

FX_PUBLIC pid_t fork(void)
{
	pid_t pid = REAL(fork)();

	if (pid == 0 && fx_rt_active) {
		int err = fx_rt_after_fork_child();
		if (err) {
			fprintf(stderr, "flexsc-run: the forked child cannot rebuild the runtime (%s)\n",
				strerror(-err));
			_exit(127);
		}
	}
	return pid;
}
