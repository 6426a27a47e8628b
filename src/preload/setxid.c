/* SPDX-License-Identifier: MIT */
/*
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

FX_PUBLIC int initgroups(const char *user, gid_t group)
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
