// SPDX-License-Identifier: MIT
/*
 * Attack: the caller sets its filesystem uid and gid to 65534 (what a file
 * server does before it acts for a user), with the inline system call.
 * Its own open, truncate and chmod of a 0600 file of uid 1 then fail with
 * EACCES or EPERM; posted, they must fail the same on every engine (a
 * thread that took credentials with setresuid would have reset fsuid to
 * its euid, root, and succeeded). Driver: attack.h.
 */
#define _GNU_SOURCE
#include "attack.h"

static char dir[64], secret[128];

static void setup(void)
{
	a_secret_reset(secret);
}

static void attack(void)
{
	CHECK_EQ(a_raw(SYS_setfsgid, 65534, 0, 0, 0), 0);
	CHECK_EQ(a_raw(SYS_setfsuid, 65534, 0, 0, 0), 0);
}

static int64_t probe_open(struct flexsc_queue *q)
{
	struct a_call c = { SYS_open, 3, { P(secret), O_RDONLY, 0 } };
	return a_probe(q, &c);
}

static int64_t probe_truncate(struct flexsc_queue *q)
{
	struct a_call c = { SYS_truncate, 2, { P(secret), 0 } };
	return a_probe(q, &c);
}

static int64_t probe_chmod(struct flexsc_queue *q)
{
	struct a_call c = { SYS_chmod, 2, { P(secret), 0666 } };
	return a_probe(q, &c);
}

int main(void)
{
	a_need_root();
	a_secret(dir, sizeof(dir), secret, sizeof(secret));
	int failed = a_run("attack_fsuid", "setfsuid: open", setup, attack, probe_open) +
		     a_run("attack_fsuid", "setfsuid: truncate", setup, attack, probe_truncate) +
		     a_run("attack_fsuid", "setfsuid: chmod 0666", setup, attack, probe_chmod);
	a_secret_remove(dir, secret);
	return failed ? 1 : 0;
}
