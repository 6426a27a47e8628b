// SPDX-License-Identifier: MIT
/*
 * Attack: the caller leaves the filesystem context, descriptor table or
 * network namespace it shares with the rest of the process, with the
 * inline system call, as a sandbox does:
 *  - unshare(CLONE_FS), then chroot into an empty directory: an absolute
 *    path outside it no longer exists for the caller (open, access, and
 *    open with O_CREAT, which io_uring runs in a worker thread);
 *  - unshare(CLONE_FILES), then close a descriptor in its own table: a
 *    read of that number fails with EBADF for the caller only;
 *  - unshare(CLONE_NEWNET): a new socket of the caller's is in a namespace
 *    whose loopback is down, so connecting to a listener that the process
 *    opened before fails.
 * Posted, each probe must have the direct call's outcome on every engine.
 * Driver: attack.h.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>

#include "attack.h"

static char dir[64], secret[128], empty[128];
static int held_fd = -1, listener = -1;
static struct sockaddr_in addr;

static void setup(void)
{
	a_secret_reset(secret);
	held_fd = open(secret, O_RDONLY);
	CHECK(held_fd >= 0);
}

static void chroot_empty(void)
{
	CHECK_EQ(a_raw(SYS_unshare, CLONE_FS, 0, 0, 0), 0);
	CHECK_EQ(a_raw(SYS_chroot, (long)empty, 0, 0, 0), 0);
	CHECK_EQ(a_raw(SYS_chdir, (long)"/", 0, 0, 0), 0);
}

/*
 * The same after a posted open with O_CREAT: io_uring has started its
 * worker threads by then, with the caller's filesystem context as it was.
 */
static void chroot_after_worker(void)
{
	struct a_call c = { SYS_open, 3, { P(secret), O_RDONLY | O_CREAT, 0600 } };
	int64_t fd = a_probe(a_q, &c);
	CHECK(fd >= 0);
	close((int)fd);
	chroot_empty();
}

static void close_in_own_table(void)
{
	CHECK_EQ(a_raw(SYS_unshare, CLONE_FILES, 0, 0, 0), 0);
	CHECK_EQ(a_raw(SYS_close, held_fd, 0, 0, 0), 0);
}

static void new_netns(void)
{
	CHECK_EQ(a_raw(SYS_unshare, CLONE_NEWNET, 0, 0, 0), 0);
}

static int64_t probe_open(struct flexsc_queue *q)
{
	struct a_call c = { SYS_open, 3, { P(secret), O_RDONLY, 0 } };
	return a_probe(q, &c);
}

/* O_CREAT: io_uring never tries such an open inline, its worker threads do it. */
static int64_t probe_open_creat(struct flexsc_queue *q)
{
	struct a_call c = { SYS_open, 3, { P(secret), O_RDONLY | O_CREAT, 0600 } };
	return a_probe(q, &c);
}

static int64_t probe_access(struct flexsc_queue *q)
{
	struct a_call c = { SYS_access, 2, { P(secret), R_OK } };
	return a_probe(q, &c);
}

static int64_t probe_read(struct flexsc_queue *q)
{
	char b[4];
	struct a_call c = { SYS_read, 3, { (uint64_t)held_fd, P(b), sizeof(b) } };
	return a_probe(q, &c);
}

/* socket, then connect with it: the second call's result. */
static int64_t probe_connect(struct flexsc_queue *q)
{
	struct a_call s = { SYS_socket, 3, { AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0 } };
	int64_t fd = q ? flexsc_syscall(q, s.nr, s.nargs, s.args)
		       : a_raw(s.nr, (long)s.args[0], (long)s.args[1], (long)s.args[2], 0);
	if (fd < 0)
		return 1000 + fd; /* tells a failed socket from a failed connect */
	struct a_call c = { SYS_connect, 3, { (uint64_t)fd, P(&addr), sizeof(addr) } };
	int64_t r = a_probe(q, &c);
	close((int)fd);
	return r;
}

int main(void)
{
	a_need_root();
	a_secret(dir, sizeof(dir), secret, sizeof(secret));
	snprintf(empty, sizeof(empty), "%s/empty", dir);
	CHECK_EQ(mkdir(empty, 0755), 0);

	socklen_t len = sizeof(addr);
	listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK_EQ(bind(listener, (struct sockaddr *)&addr, sizeof(addr)), 0);
	CHECK_EQ(listen(listener, 64), 0);
	CHECK_EQ(getsockname(listener, (struct sockaddr *)&addr, &len), 0);

	int failed = a_run("attack_context", "chroot: open", setup, chroot_empty, probe_open) +
		     a_run("attack_context", "chroot: open with O_CREAT", setup, chroot_empty, probe_open_creat) +
		     a_run("attack_context", "chroot after a worker: open with O_CREAT", setup, chroot_after_worker,
			   probe_open_creat) +
		     a_run("attack_context", "chroot after a worker: open", setup, chroot_after_worker, probe_open) +
		     a_run("attack_context", "chroot: access", setup, chroot_empty, probe_access) +
		     a_run("attack_context", "own descriptor table: read", setup, close_in_own_table, probe_read) +
		     a_run("attack_context", "new netns: socket+connect", setup, new_netns, probe_connect);
	close(listener);
	rmdir(empty);
	a_secret_remove(dir, secret);
	return failed ? 1 : 0;
}
