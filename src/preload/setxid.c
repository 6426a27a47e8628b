/* SPDX-License-Identifier: MIT */
/*
 * The set*id family and setgroups: under the runtime every carrier must
 * change, which glibc's broadcast cannot do (src/threads/setxid.c);
 * without it, libc's.
 *
 * initgroups: glibc's calls its own setgroups, not the interposed one,
 * so its broadcast would miss the carriers (src/threads/setxid.c). Under
 * the runtime it is glibc's recipe on the interposed setgroups: the
 * user's groups as getgrouplist finds them, at most NGROUPS_MAX, and
 * fewer while the kernel says EINVAL (too many).
 */
#define _GNU_SOURCE
#include <grp.h>
#include <unistd.h>

#include "preload/real.h"

FX_EXPORT int setuid(uid_t u)
{
	return fx_rt_active ? fx_rt_setuid(u) : REAL(setuid)(u);
}

FX_EXPORT int setgid(gid_t g)
{
	return fx_rt_active ? fx_rt_setgid(g) : REAL(setgid)(g);
}

FX_EXPORT int seteuid(uid_t u)
{
	return fx_rt_active ? fx_rt_seteuid(u) : REAL(seteuid)(u);
}

FX_EXPORT int setegid(gid_t g)
{
	return fx_rt_active ? fx_rt_setegid(g) : REAL(setegid)(g);
}

FX_EXPORT int setreuid(uid_t r, uid_t e)
{
	return fx_rt_active ? fx_rt_setreuid(r, e) : REAL(setreuid)(r, e);
}

FX_EXPORT int setregid(gid_t r, gid_t e)
{
	return fx_rt_active ? fx_rt_setregid(r, e) : REAL(setregid)(r, e);
}

FX_EXPORT int setresuid(uid_t r, uid_t e, uid_t s)
{
	return fx_rt_active ? fx_rt_setresuid(r, e, s) : REAL(setresuid)(r, e, s);
}

FX_EXPORT int setresgid(gid_t r, gid_t e, gid_t s)
{
	return fx_rt_active ? fx_rt_setresgid(r, e, s) : REAL(setresgid)(r, e, s);
}

FX_EXPORT int setgroups(size_t n, const gid_t *list)
{
	return fx_rt_active ? fx_rt_setgroups(n, list) : REAL(setgroups)(n, list);
}

FX_EXPORT int initgroups(const char *user, gid_t group)
{
	if (!fx_rt_active)
		return REAL(initgroups)(user, group);
	long max = sysconf(_SC_NGROUPS_MAX);
	int n = 64;
	gid_t *groups = NULL;

	for (;;) {
		gid_t *more = realloc(groups, (size_t)n * sizeof(*groups));
		if (!more) {
			free(groups);
			errno = ENOMEM;
			return -1;
		}
		groups = more;
		int want = n;
		if (getgrouplist(user, group, groups, &want) >= 0) {
			n = want;
			break;
		}
		n = want > n ? want : 2 * n;
	}
	if (max > 0 && n > max)
		n = (int)max;
	int r;
	do
		r = setgroups((size_t)n, groups);
	while (r == -1 && errno == EINVAL && --n > 0);
	free(groups);
	return r;
}
