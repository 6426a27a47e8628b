// SPDX-License-Identifier: MIT
/*
 * Attack: identity changes no library sees, made with the inline system
 * call after the library is registered, as libseccomp, libcap or a
 * program's own syscall() would make them:
 *  - a seccomp filter on the caller only (no TSYNC) that fails openat with
 *    EPERM; then the same with TSYNC (every thread);
 *  - capset dropping every capability while the uid stays 0;
 *  - setresuid to 65534 on the caller only (which also drops its
 *    capabilities), also for an SQPOLL ring that runs as its creator;
 *  - setgroups to none with an unchanged uid, after capset dropped
 *    CAP_DAC_OVERRIDE: a file readable only by its group.
 * The probe is an open of a 0600 file of uid 1 (or of that group-only
 * file): posted, its outcome must be the direct call's on every engine.
 * Driver: attack.h.
 */
#define _GNU_SOURCE
#include <linux/capability.h>
#include <grp.h>
#include <sys/prctl.h>

#include "attack.h"

static char dir[64], secret[128], group_file[128];

static void setup(void)
{
	a_secret_reset(secret);
	int fd = open(group_file, O_WRONLY | O_CREAT | O_TRUNC, 0040);
	CHECK(fd >= 0);
	CHECK_EQ(fchown(fd, 1, 4242), 0);
	CHECK_EQ(fchmod(fd, 0040), 0);
	close(fd);
	gid_t g = 4242;
	CHECK_EQ(setgroups(1, &g), 0); /* every thread, before the library starts its own */
}

static void seccomp_caller(void) { a_filter_openat(SECCOMP_RET_ERRNO | EPERM, 0); }
static void seccomp_tsync(void) { a_filter_openat(SECCOMP_RET_ERRNO | EPERM, SECCOMP_FILTER_FLAG_TSYNC); }

static void drop_caps(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = { { 0 } };

	CHECK_EQ(a_raw(SYS_capset, (long)&h, (long)d, 0, 0), 0);
}

static void setresuid_nobody(void)
{
	CHECK_EQ(a_raw(SYS_setresuid, 65534, 65534, 65534, 0), 0);
}

static void drop_caps_and_groups(void)
{
	CHECK_EQ(a_raw(SYS_setgroups, 0, 0, 0, 0), 0);
	drop_caps();
}

static int64_t probe_openat(struct flexsc_queue *q)
{
	struct a_call c = { SYS_openat, 4, { (uint64_t)AT_FDCWD, P(secret), O_RDONLY, 0 } };
	return a_probe(q, &c);
}

static int64_t probe_group_file(struct flexsc_queue *q)
{
	struct a_call c = { SYS_openat, 4, { (uint64_t)AT_FDCWD, P(group_file), O_RDONLY, 0 } };
	return a_probe(q, &c);
}

int main(void)
{
	a_need_root();
	a_secret(dir, sizeof(dir), secret, sizeof(secret));
	snprintf(group_file, sizeof(group_file), "%s/group", dir);
	int failed = a_run("attack_raw_changes", "seccomp, caller only", setup, seccomp_caller, probe_openat) +
		     a_run("attack_raw_changes", "seccomp, TSYNC", setup, seccomp_tsync, probe_openat) +
		     a_run("attack_raw_changes", "capset: none", setup, drop_caps, probe_openat) +
		     a_run("attack_raw_changes", "setresuid 65534", setup, setresuid_nobody, probe_openat) +
		     a_run("attack_raw_changes", "setgroups: none", setup, drop_caps_and_groups, probe_group_file);
	unlink(group_file);
	a_secret_remove(dir, secret);
	return failed ? 1 : 0;
}
