// SPDX-License-Identifier: MIT
/*
 * Credentials dropped through glibc (setgroups, setgid, setuid to nobody)
 * after the instance and queue were created as root: a posted open of a
 * root-only file fails with -EACCES on every engine (sync, threads, uring,
 * uring with SQPOLL, auto). Driver: creds_util.h. Needs root.
 */
#define _GNU_SOURCE
#include <grp.h>

#include "creds_util.h"

static void drop(void)
{
	CHECK_EQ(setgroups(0, NULL), 0);
	CHECK_EQ(setgid(65534), 0);
	CHECK_EQ(setuid(65534), 0);
}

int main(void)
{
	c_setup(0);
	return c_run_all("creds_setuid", "setgroups+setgid+setuid(65534)", drop, 65534);
}
