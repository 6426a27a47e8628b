// SPDX-License-Identifier: MIT
/*
 * Credentials changed by raw system call, which changes the calling thread
 * only: syscall(SYS_setresuid, 65534, 65534, 65534) through libc's
 * syscall() (libflexsc wraps it and makes the syscall threads follow), and
 * the same from inline assembly followed by flexsc_creds_changed(). In both
 * cases a posted open of a root-only file fails with -EACCES on every
 * engine afterwards. Driver: creds_util.h. Needs root.
 */
#define _GNU_SOURCE
#include "creds_util.h"

static void via_syscall(void)
{
	CHECK_EQ(syscall(SYS_setresuid, 65534, 65534, 65534), 0);
}

static void via_asm(void)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"((long)SYS_setresuid), "D"(65534L), "S"(65534L), "d"(65534L)
			 : "rcx", "r11", "memory");
	CHECK_EQ(ret, 0);
	flexsc_creds_changed();
}

int main(void)
{
	c_setup(0);
	int r = c_run_all("creds_syscall", "syscall(SYS_setresuid)", via_syscall, 65534);
	c_setup(0);
	return c_run_all("creds_syscall", "inline setresuid + flexsc_creds_changed()", via_asm, 65534) | r;
}
