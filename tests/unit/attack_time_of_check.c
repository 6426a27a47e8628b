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

#include "attack.h"

static flexsc_call_t posted;
static uint64_t args[4] = { (uint64_t)AT_FDCWD, P("/dev/null"), O_RDONLY, 0 };

static void install(void)
{
	a_filter_openat(SECCOMP_RET_ERRNO | EPERM, SECCOMP_FILTER_FLAG_TSYNC);
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
