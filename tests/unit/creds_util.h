/* SPDX-License-Identifier: MIT */
/*
 * Shared by the creds_*.c tests: a posted call never runs with credentials
 * other than the caller's current ones, whichever engine executes it.
 *
 * For each engine (sync, threads, uring, uring with an SQPOLL thread on
 * CPU 1 when there are two CPUs, auto), a forked child creates the instance
 * and its queue as root, checks that a posted open of a protected file
 * succeeds, changes its credentials the way the test says, and checks that
 * the same posted open (and openat) now fails with -EACCES, that a posted
 * geteuid reports the new euid, and that a file everybody may read still
 * opens (the engine still works). On the io_uring engines the opens must
 * really have gone through io_uring. With SQPOLL the polling thread is
 * given time to go idle before the call that must see the change.
 */
#ifndef FX_CREDS_UTIL_H
#define FX_CREDS_UTIL_H

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define SQPOLL_IDLE_MS 10

struct cvar {
	const char *name;
	enum flexsc_engine eng;
	bool sqpoll;
};

static const struct cvar c_vars[] = {
	{ "sync", FLEXSC_ENGINE_SYNC, false },
	{ "threads", FLEXSC_ENGINE_THREADS, false },
	{ "uring", FLEXSC_ENGINE_URING, false },
	{ "uring+sqpoll", FLEXSC_ENGINE_URING, true },
	{ "auto", FLEXSC_ENGINE_AUTO, false },
};

static char c_dir[64], c_secret[128], c_public[128];

/* dir (0755) with a 0600 secret owned by owner and a public 0644 file */
static inline void c_setup(uid_t owner)
{
	int fd;

	if (geteuid() != 0)
		SKIP("needs root (the test changes credentials)");
	snprintf(c_dir, sizeof(c_dir), "/tmp/flexsc-creds-XXXXXX");
	CHECK(mkdtemp(c_dir));
	CHECK_EQ(chmod(c_dir, 0755), 0);
	snprintf(c_secret, sizeof(c_secret), "%s/secret", c_dir);
	snprintf(c_public, sizeof(c_public), "%s/public", c_dir);
	fd = open(c_secret, O_WRONLY | O_CREAT, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "s", 1), 1);
	CHECK_EQ(fchown(fd, owner, owner), 0);
	CHECK_EQ(fchmod(fd, 0600), 0);
	close(fd);
	fd = open(c_public, O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0);
	close(fd);
}

static inline void c_cleanup(void)
{
	unlink(c_secret);
	unlink(c_public);
	rmdir(c_dir);
}

static inline int64_t c_open(struct flexsc_queue *q, const char *path)
{
	uint64_t a[3] = { P(path), O_RDONLY, 0 };
	int64_t r = flexsc_syscall(q, SYS_open, 3, a);

	if (r >= 0)
		close((int)r);
	return r;
}

static inline int64_t c_openat(struct flexsc_queue *q, const char *path)
{
	uint64_t a[4] = { (uint64_t)AT_FDCWD, P(path), O_RDONLY, 0 };
	int64_t r = flexsc_syscall(q, SYS_openat, 4, a);

	if (r >= 0)
		close((int)r);
	return r;
}

/* The child: exits 0 on success, 1 on a failed check. */
static inline void c_child(const struct cvar *v, void (*change)(void), long want_euid)
{
	struct flexsc *fx;
	struct flexsc_queue *q;
	struct flexsc_config cfg;
	bool ring = v->eng == FLEXSC_ENGINE_URING || v->eng == FLEXSC_ENGINE_AUTO;

	alarm(20);
	flexsc_config_init(&cfg);
	if (v->sqpoll) {
		cfg.sqpoll = true;
		cfg.sqpoll_idle_ms = SQPOLL_IDLE_MS;
		cfg.nr_syscall_cpus = 1;
		cfg.syscall_cpus[0] = 1;
	}
	t_open(v->eng, &fx, &q, &cfg);
	CHECK_EQ(flexsc_engine_in_use(fx), v->eng);

	/* as root: the protected file opens */
	uint64_t u0 = t_by_engine(q, FLEXSC_ENGINE_URING);
	CHECK(c_open(q, c_secret) >= 0);
	CHECK(c_openat(q, c_secret) >= 0);
	CHECK_EQ(flexsc_syscall(q, SYS_geteuid, 0, NULL), 0);
	if (ring)
		CHECK_EQ(t_by_engine(q, FLEXSC_ENGINE_URING) - u0, 2);

	change();
	if (v->sqpoll)
		usleep(5 * SQPOLL_IDLE_MS * 1000); /* the SQPOLL thread goes to sleep */

	uint64_t u1 = t_by_engine(q, FLEXSC_ENGINE_URING);
	int64_t r1 = c_open(q, c_secret), r2 = c_openat(q, c_secret);
	if (r1 != -EACCES || r2 != -EACCES) {
		fprintf(stderr, "%s: after the change, posted open returned %lld and openat %lld, "
				"expected -EACCES (%d)\n", v->name, (long long)r1, (long long)r2, -EACCES);
		exit(1);
	}
	CHECK_EQ(flexsc_syscall(q, SYS_geteuid, 0, NULL), want_euid);
	CHECK(c_open(q, c_public) >= 0);
	if (ring && t_by_engine(q, FLEXSC_ENGINE_URING) - u1 != 3) {
		fprintf(stderr, "%s: the opens after the change did not go through io_uring (%llu of 3)\n",
			v->name, (unsigned long long)(t_by_engine(q, FLEXSC_ENGINE_URING) - u1));
		exit(1);
	}
	if (v->sqpoll) {
		/* again after another idle period, and a batch */
		usleep(5 * SQPOLL_IDLE_MS * 1000);
		CHECK_EQ(c_open(q, c_secret), -EACCES);
	}
	t_close(fx, q);
	exit(0);
}

/* Runs the check on every engine; returns the exit code. */
static inline int c_run_all(const char *test, const char *how, void (*change)(void), long want_euid)
{
	int failed = 0, ran = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	for (unsigned i = 0; i < sizeof(c_vars) / sizeof(c_vars[0]); i++) {
		const struct cvar *v = &c_vars[i];
		int st;

		if (v->sqpoll && ncpu < 2) {
			printf("%s: %s skipped (SQPOLL on CPU 1 needs two CPUs)\n", test, v->name);
			continue;
		}
		fflush(NULL);
		pid_t pid = fork();
		CHECK(pid >= 0);
		if (pid == 0)
			c_child(v, change, want_euid);
		CHECK_EQ(waitpid(pid, &st, 0), pid);
		ran++;
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
			printf("%s: %-13s protected open ok as root, -EACCES after %s\n", test, v->name, how);
		} else {
			failed++;
			fprintf(stderr, "%s: %s FAILED (%s %d)\n", test, v->name,
				WIFSIGNALED(st) ? "signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		}
	}
	c_cleanup();
	printf("%s: %d engines, %d failed\n", test, ran, failed);
	return failed ? 1 : 0;
}

#endif
