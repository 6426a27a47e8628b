// SPDX-License-Identifier: MIT
/*
 * Attack on the time of check: the caller posts an openat (not yet
 * flushed: the batch waits for more calls), then installs a seccomp filter
 * on every thread (inline, TSYNC) that fails openat with EPERM, then waits
 * for the call. The call is issued at that wait's flush, after the filter,
 * so it must fail as the caller's own openat made then does; a route
 * chosen when it was posted must not carry it past the filter. Driver:
 * attack.h.
 */
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>

#include "attack.h"

static flexsc_call_t posted;
static uint64_t args[4] = { (uint64_t)AT_FDCWD, P("/dev/null"), O_RDONLY, 0 };

static void install(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	CHECK_EQ(a_raw(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0), 0);
	CHECK_EQ(a_raw(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, (long)&prog, 0), 0);
}

/* Posted before the filter, waited for after it. */
static int64_t probe(struct flexsc_queue *q)
{
	int64_t r;

	if (!q) {
		install();
		r = a_raw(SYS_openat, (long)args[0], (long)args[1], (long)args[2], 0);
	} else {
		CHECK_EQ(flexsc_post(q, SYS_openat, 4, args, NULL, &posted), 0);
		install();
		CHECK_EQ(flexsc_wait_one(q, posted, &r, NULL), 0);
	}
	if (r >= 0)
		close((int)r);
	return r < 0 ? r : 0;
}

static void nothing(void)
{
}

int main(void)
{
	a_need_root();
	return a_run("attack_time_of_check", "posted, filtered, flushed", NULL, nothing, probe) ? 1 : 0;
}
