// SPDX-License-Identifier: MIT
/*
 * A seccomp filter installed after flexsc_register, on the calling thread
 * only, with prctl(PR_SET_NO_NEW_PRIVS) + prctl(PR_SET_SECCOMP,
 * SECCOMP_MODE_FILTER), that makes openat fail with EPERM: a posted openat
 * then fails with -EPERM on every engine (io_uring would bypass the filter
 * and syscall threads do not carry it, so both must be switched off), and
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

	s_install(S_PRCTL, SYS_openat, EPERM);
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
	int failed = s_each_engine("seccomp_after", child,
				   "caller-only filter after register: openat -EPERM, no io_uring, reads ok");
	s_cleanup();
	return failed ? 1 : 0;
}
