// SPDX-License-Identifier: MIT
/*
 * Attack: credentials are per thread in Linux. The caller lowers its own
 * effective uid to 65534 with the inline setresuid (as Samba-style servers
 * impersonate a user per thread), and then another thread of the process
 * makes a credential change of its own (it raises its effective uid back
 * to 0, which it already is, and sets its capabilities). The caller's own
 * open of a 0600 file of uid 1 fails with EACCES; posted, it must fail
 * too: no executor runs it with the other thread's credentials (a process-
 * wide snapshot of the last change would have). Driver: attack.h.
 */
#define _GNU_SOURCE
#include <linux/capability.h>
#include <pthread.h>

#include "attack.h"

static char dir[64], secret[128];

static void setup(void)
{
	a_secret_reset(secret);
}

static void *other_thread(void *arg)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	(void)arg;
	CHECK_EQ(a_raw(SYS_setresuid, -1, 0, -1, 0), 0);
	CHECK_EQ(a_raw(SYS_capget, (long)&h, (long)d, 0, 0), 0);
	CHECK_EQ(a_raw(SYS_capset, (long)&h, (long)d, 0, 0), 0);
	return NULL;
}

static void impersonate(void)
{
	pthread_t t;

	CHECK_EQ(a_raw(SYS_setresuid, -1, 65534, -1, 0), 0);
	CHECK_EQ(pthread_create(&t, NULL, other_thread, NULL), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
}

static int64_t probe_open(struct flexsc_queue *q)
{
	struct a_call c = { SYS_openat, 4, { (uint64_t)AT_FDCWD, P(secret), O_RDONLY, 0 } };
	return a_probe(q, &c);
}

static void *impersonator(void *arg)
{
	impersonate();
	return arg;
}

/* The other direction: the caller is root, another thread impersonates. */
static void other_impersonates(void)
{
	pthread_t t;

	CHECK_EQ(pthread_create(&t, NULL, impersonator, NULL), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
}

int main(void)
{
	a_need_root();
	a_secret(dir, sizeof(dir), secret, sizeof(secret));
	int failed = a_run("attack_thread_identity", "caller euid 65534", setup, impersonate, probe_open) +
		     a_run("attack_thread_identity", "another thread euid 65534", setup, other_impersonates,
			   probe_open);
	a_secret_remove(dir, secret);
	return failed ? 1 : 0;
}
