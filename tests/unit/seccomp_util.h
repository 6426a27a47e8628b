/* SPDX-License-Identifier: MIT */
/*
 * Shared by the seccomp_*.c tests: io_uring never consults seccomp filters,
 * so once the process has one the library must stop using io_uring (and
 * syscall threads that the filter does not cover). The filter here makes
 * openat fail with EPERM and allows everything else; a posted openat must
 * then fail with -EPERM on every engine, io_uring must execute nothing more,
 * and other calls (reads of a descriptor opened before) still work.
 *
 * Each engine runs in a forked child (the filter cannot be removed). The
 * children end with _exit: a sanitizer's exit-time work may need openat.
 */
#ifndef FX_SECCOMP_UTIL_H
#define FX_SECCOMP_UTIL_H

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"


struct svar {
	const char *name;
	enum flexsc_engine eng;
	bool sqpoll;
};

static const struct svar s_vars[] = {
	{ "auto", FLEXSC_ENGINE_AUTO, false },
	{ "uring", FLEXSC_ENGINE_URING, false },
	{ "uring+sqpoll", FLEXSC_ENGINE_URING, true },
	{ "threads", FLEXSC_ENGINE_THREADS, false },
	{ "sync", FLEXSC_ENGINE_SYNC, false },
};

/* syscall nr -> ERRNO(err), everything else allowed (x86-64 only) */
static inline struct sock_fprog *s_filter(long nr, int err)
{
	static struct sock_filter f[7];
	static struct sock_fprog prog;
	struct sock_filter tmpl[7] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((uint32_t)err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};

	memcpy(f, tmpl, sizeof(f));
	prog.len = 7;
	prog.filter = f;
	return &prog;
}

enum s_how {
	S_PRCTL,  /* prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER): the caller only */
	S_TSYNC,  /* syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, TSYNC): every thread */
	S_INLINE, /* the seccomp system call from inline assembly: the library is not told */
};

static inline void s_install(enum s_how how, long nr, int err)
{
	struct sock_fprog *prog = s_filter(nr, err);

	CHECK_EQ(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	switch (how) {
	case S_PRCTL:
		CHECK_EQ(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0, 0), 0);
		break;
	case S_TSYNC:
		CHECK_EQ(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, prog), 0);
		break;
	case S_INLINE: {
		long ret;
		__asm__ volatile("syscall"
				 : "=a"(ret)
				 : "a"((long)SYS_seccomp), "D"((long)SECCOMP_SET_MODE_FILTER), "S"(0L), "d"(prog)
				 : "rcx", "r11", "memory");
		CHECK_EQ(ret, 0);
		break;
	}
	}
}

static char s_dir[64], s_file[128];
static const char s_content[] = "seccomp-content";

static inline void s_setup(void)
{
	snprintf(s_dir, sizeof(s_dir), "/tmp/flexsc-seccomp-XXXXXX");
	CHECK(mkdtemp(s_dir));
	snprintf(s_file, sizeof(s_file), "%s/f", s_dir);
	int fd = open(s_file, O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, s_content, strlen(s_content)), (long)strlen(s_content));
	close(fd);
}

static inline void s_cleanup(void)
{
	unlink(s_file);
	rmdir(s_dir);
}

static inline void s_config(const struct svar *v, struct flexsc_config *cfg)
{
	flexsc_config_init(cfg);
	cfg->engine = v->eng;
	if (v->sqpoll) {
		cfg->sqpoll = true;
		cfg->nr_syscall_cpus = 1;
		cfg->syscall_cpus[0] = 1;
	}
}

/*
 * With the filter in place: a posted openat fails with -EPERM, nothing goes
 * through io_uring, and calls on a descriptor opened before still work.
 */
static inline void s_check_filtered(const char *name, struct flexsc_queue *q, int fd)
{
	uint64_t u = t_by_engine(q, FLEXSC_ENGINE_URING);
	uint64_t oa[4] = { (uint64_t)AT_FDCWD, P(s_file), O_RDONLY, 0 };
	char buf[64] = { 0 };
	uint64_t rd[4] = { (uint64_t)fd, P(buf), sizeof(buf), 0 };

	for (int i = 0; i < 3; i++) {
		int64_t r = flexsc_syscall(q, SYS_openat, 4, oa);
		if (r != -EPERM) {
			fprintf(stderr, "%s: a posted openat returned %lld under a filter that makes it "
					"fail with EPERM (%d)\n", name, (long long)r, -EPERM);
			_exit(1);
		}
	}
	/* open(2) is allowed by the filter */
	uint64_t op[3] = { P(s_file), O_RDONLY, 0 };
	int64_t nfd = flexsc_syscall(q, SYS_open, 3, op);
	CHECK(nfd >= 0);
	close((int)nfd);
	CHECK_EQ(flexsc_syscall(q, SYS_pread64, 4, rd), (long)strlen(s_content));
	CHECK(!memcmp(buf, s_content, strlen(s_content)));
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(flexsc_syscall(q, SYS_read, 3, rd), (long)strlen(s_content));
	CHECK(!memcmp(buf, s_content, strlen(s_content)));
	CHECK_EQ(flexsc_syscall(q, SYS_getpid, 0, NULL), getpid());
	if (t_by_engine(q, FLEXSC_ENGINE_URING) != u) {
		fprintf(stderr, "%s: io_uring executed %llu calls after the filter was installed\n",
			name, (unsigned long long)(t_by_engine(q, FLEXSC_ENGINE_URING) - u));
		_exit(1);
	}
}

/* Forks one child per engine running fn; returns the number that failed. */
static inline int s_each_engine(const char *test, void (*fn)(const struct svar *v), const char *what)
{
	int failed = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	for (unsigned i = 0; i < sizeof(s_vars) / sizeof(s_vars[0]); i++) {
		const struct svar *v = &s_vars[i];
		int st;

		if (v->sqpoll && ncpu < 2) {
			printf("%s: %s skipped (SQPOLL on CPU 1 needs two CPUs)\n", test, v->name);
			continue;
		}
		fflush(NULL);
		pid_t pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			alarm(20);
			fn(v);
			fflush(NULL);
			_exit(0);
		}
		CHECK_EQ(waitpid(pid, &st, 0), pid);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
			printf("%s: %-13s %s\n", test, v->name, what);
		} else {
			failed++;
			fprintf(stderr, "%s: %s FAILED (%s %d)\n", test, v->name,
				WIFSIGNALED(st) ? "signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		}
	}
	return failed;
}

/*
 * A filter denying openat with EPERM installed after the instance exists
 * (how: S_PRCTL caller only, S_TSYNC every thread): posted openat must fail
 * like a direct one on every engine, and io_uring must stop running calls.
 */
static inline void s_filter_after_register(const struct svar *v, int how)
{
	struct flexsc_config cfg;
	struct flexsc *fx;
	struct flexsc_queue *q;
	uint64_t oa[4] = { (uint64_t)AT_FDCWD, P(s_file), O_RDONLY, 0 };
	bool ring = v->eng == FLEXSC_ENGINE_URING || v->eng == FLEXSC_ENGINE_AUTO;

	s_config(v, &cfg);
	t_open(v->eng, &fx, &q, &cfg);
	CHECK_EQ(flexsc_engine_in_use(fx), v->eng);
	int fd = open(s_file, O_RDONLY);
	CHECK(fd >= 0);
	int64_t r = flexsc_syscall(q, SYS_openat, 4, oa);
	CHECK(r >= 0);
	close((int)r);
	if (ring)
		CHECK_EQ(t_by_engine(q, FLEXSC_ENGINE_URING), 1); /* io_uring was in use before the filter */

	s_install(how, SYS_openat, EPERM);
	s_check_filtered(v->name, q, fd);
	if (v->sqpoll) {
		usleep(50 * 1000);
		s_check_filtered(v->name, q, fd);
	}
	t_close(fx, q);
}

#endif
