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
	s_filter_after_register(v, S_TSYNC);
}

int main(void)
{
	s_setup();
	int failed = s_each_engine("seccomp_tsync", child,
				   "TSYNC filter after register: openat -EPERM, no io_uring, reads ok");
	s_cleanup();
	return failed ? 1 : 0;
}
