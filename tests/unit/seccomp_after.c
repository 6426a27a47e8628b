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
	s_filter_after_register(v, S_PRCTL);
}

int main(void)
{
	s_setup();
	int failed = s_each_engine("seccomp_after", child,
				   "caller-only filter after register: openat -EPERM, no io_uring, reads ok");
	s_cleanup();
	return failed ? 1 : 0;
}
