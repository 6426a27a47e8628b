// SPDX-License-Identifier: MIT
/*
 * A seccomp filter installed after flexsc_register on every thread, with
 * syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC)
 * (libflexsc wraps syscall()), that makes openat fail with EPERM: a posted
 * openat then fails with -EPERM on every engine (io_uring would bypass the
 * filter, so it must be switched off; syscall threads carry this one), and
 * reads of a descriptor opened before still complete. Driver: seccomp_util.h.
 */
#define _GNU_SOURCE
#include "seccomp_util.h"

static void child(const struct svar *v)
{
	struct flexsc_config cfg;
	struct flexsc *fx;
	struct flexsc_queue *q;
	uint64_t oa[4] = { (uint64_t)AT_FDCWD, P(s_file), O_RDONLY, 0 };
	bool ring = v->eng == FLEXSC_ENGINE_URING || v->eng == FLEXSC_ENGINE_AUTO;

	s_config(v, &cfg);
	t_open(v->eng, &fx, &q, &cfg);
	CHECK_EQ(flexsc_engine_in_use(fx), v->eng);
	int fd = open(s_file, O_RDONLY);
	CHECK(fd >= 0);
	int64_t r = flexsc_syscall(q, SYS_openat, 4, oa);
	CHECK(r >= 0);
	close((int)r);
	if (ring)
		CHECK_EQ(s_uring(q), 1); /* io_uring was in use before the filter */

	s_install(S_TSYNC, SYS_openat, EPERM);
	s_check_filtered(v->name, q, fd);
	if (v->sqpoll) {
		usleep(50 * 1000);
		s_check_filtered(v->name, q, fd);
	}
	t_close(fx, q);
}

int main(void)
{
	s_setup();
	int failed = s_each_engine("seccomp_tsync", child,
				   "TSYNC filter after register: openat -EPERM, no io_uring, reads ok");
	s_cleanup();
	return failed ? 1 : 0;
}
