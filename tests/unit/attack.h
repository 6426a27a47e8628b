/* SPDX-License-Identifier: MIT */
/*
 * The attack suite's driver (tests/unit/attack_*.c): a posted call has
 * exactly the outcome the caller's own call would have.
 *
 * An attack is a change of the caller's identity (credentials, filters,
 * fs context, descriptor table, namespaces) made after the library is
 * registered and its queue made, the way programs make them: through
 * inline system calls that no library sees. Then a probe call runs once
 * as a direct system call and once posted, on every engine (sync, syscall
 * threads, io_uring, io_uring with an SQPOLL thread on CPU 1 when there
 * are two CPUs, auto), each in a forked child of its own, and its outcome
 * (the result or -errno, how many times a SIGSYS handler ran, how the
 * child ended) must be the same as the direct call's.
 *
 * Before the attack the driver posts an open once and checks that the
 * engine really ran it elsewhere than on the caller (where the engine has
 * an elsewhere), so a library that ran everything synchronously would not
 * pass for a safe one. Children end with _exit: a sanitizer's exit-time
 * work may need calls the attack denied.
 */
#ifndef FX_ATTACK_H
#define FX_ATTACK_H

#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "helpers.h"


/* The system call instruction itself (arguments 5 and 6 zero): no libc or libflexsc wrapper sees it. */
static inline long a_raw(long nr, long a0, long a1, long a2, long a3)
{
	long ret;
	register long r10 __asm__("r10") = a3;
	register long r8 __asm__("r8") = 0;
	register long r9 __asm__("r9") = 0;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a0), "S"(a1), "d"(a2), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

struct a_var {
	const char *name;
	enum flexsc_engine eng;
	bool sqpoll;
	bool direct;
};

static const struct a_var a_vars[] = {
	{ "direct", FLEXSC_ENGINE_SYNC, false, true },
	{ "sync", FLEXSC_ENGINE_SYNC, false, false },
	{ "threads", FLEXSC_ENGINE_THREADS, false, false },
	{ "uring", FLEXSC_ENGINE_URING, false, false },
	{ "uring+sqpoll", FLEXSC_ENGINE_URING, true, false },
	{ "auto", FLEXSC_ENGINE_AUTO, false, false },
};
#define A_NVARS (sizeof(a_vars) / sizeof(a_vars[0]))

/* One probe: a system call with up to four arguments. */
struct a_call {
	long nr;
	unsigned nargs;
	uint64_t args[4];
};

/* What a variant saw. */
struct a_outcome {
	int64_t ret;       /* raw result; a new descriptor counts as 0 (its number may differ) */
	int handler_runs;  /* SIGSYS handler runs during the probe */
	int status;        /* waitpid status of the child */
	bool have_ret;
};

static volatile sig_atomic_t a_sigsys_runs;
static struct flexsc *a_fx; /* the variant's instance (NULL: direct), for probes that make queues */
static struct flexsc_queue *a_q; /* the variant's queue (NULL: direct), for attacks that post first */

static void a_on_sigsys(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si;
	a_sigsys_runs++;
	/* the kernel rolled rax back to the call's number: the call returns what is left there */
	((ucontext_t *)uc)->uc_mcontext.gregs[REG_RAX] = -ENOSYS;
}

/* A handler for SIGSYS, counted by the driver (for SECCOMP_RET_TRAP). */
static inline void a_catch_sigsys(void)
{
	struct sigaction sa = { .sa_sigaction = a_on_sigsys, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGSYS, &sa, NULL), 0);
}

/*
 * Installs, with the inline system call, a seccomp filter whose action for
 * openat is action and that allows everything else; flags: 0 (the caller
 * only) or SECCOMP_FILTER_FLAG_TSYNC (every thread). Sets no_new_privs.
 */
static inline void a_filter_openat(uint32_t action, unsigned flags)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, action),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	CHECK_EQ(a_raw(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0), 0);
	CHECK_EQ(a_raw(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, (long)&prog, 0), 0);
}

/* A queue for the variant; NULL for the direct one. */
static inline struct flexsc_queue *a_queue(const struct a_var *v, struct flexsc **fx)
{
	struct flexsc_config cfg;
	struct flexsc_queue *q;

	if (v->direct)
		return NULL;
	flexsc_config_init(&cfg);
	if (v->sqpoll) {
		cfg.sqpoll = true;
		cfg.sqpoll_idle_ms = 10;
		cfg.nr_syscall_cpus = 1;
		cfg.syscall_cpus[0] = 1;
	}
	t_open(v->eng, fx, &q, &cfg);
	CHECK_EQ(flexsc_engine_in_use(*fx), v->eng);
	return q;
}

/* Before the attack: a posted open of /dev/null runs where the engine sends calls. */
static inline void a_control(const struct a_var *v, struct flexsc_queue *q)
{
	struct flexsc_stats b, a;
	uint64_t args[4] = { (uint64_t)AT_FDCWD, P("/dev/null"), O_RDONLY, 0 };

	if (!q || v->eng == FLEXSC_ENGINE_SYNC)
		return;
	CHECK_EQ(flexsc_queue_stats(q, &b), 0);
	int64_t fd = flexsc_syscall(q, SYS_openat, 4, args);
	CHECK(fd >= 0);
	close((int)fd);
	CHECK_EQ(flexsc_queue_stats(q, &a), 0);
	CHECK_EQ(a.by_engine[FLEXSC_ENGINE_SYNC], b.by_engine[FLEXSC_ENGINE_SYNC]);
	CHECK_EQ(a.by_engine[FLEXSC_ENGINE_AUTO], b.by_engine[FLEXSC_ENGINE_AUTO]);
}

/* The probe, direct or posted; a new descriptor is closed and counts as 0. */
static inline int64_t a_probe(struct flexsc_queue *q, const struct a_call *c)
{
	int64_t r = q ? flexsc_syscall(q, c->nr, c->nargs, c->args)
		      : a_raw(c->nr, (long)c->args[0], (long)c->args[1], (long)c->args[2], (long)c->args[3]);
	if (r >= 0 && (c->nr == SYS_open || c->nr == SYS_openat || c->nr == SYS_socket)) {
		close((int)r);
		r = 0;
	}
	return r;
}

/*
 * Runs one attack on every variant. setup runs in each child before the
 * queue is made (files, listeners); attack after it, as the caller; then
 * probe runs the call(s) and returns the outcome's result. Returns the
 * number of variants whose outcome differed from the direct call's.
 */
static inline int a_run(const char *test, const char *what, void (*setup)(void),
			void (*attack)(void), int64_t (*probe)(struct flexsc_queue *q))
{
	struct a_outcome out[A_NVARS];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int failed = 0;

	for (unsigned i = 0; i < A_NVARS; i++) {
		const struct a_var *v = &a_vars[i];
		int fds[2];

		memset(&out[i], 0, sizeof(out[i]));
		if (v->sqpoll && ncpu < 2)
			continue;
		CHECK_EQ(pipe(fds), 0);
		fflush(NULL);
		pid_t pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			struct flexsc *fx = NULL;
			close(fds[0]);
			alarm(20);
			if (setup)
				setup();
			struct flexsc_queue *q = a_queue(v, &fx);
			a_fx = fx;
			a_q = q;
			a_control(v, q);
			attack();
			if (v->sqpoll)
				usleep(50 * 1000); /* the SQPOLL thread goes idle: the next flush wakes it */
			a_sigsys_runs = 0;
			struct a_outcome o = { .ret = probe(q), .have_ret = true };
			o.handler_runs = a_sigsys_runs;
			if (write(fds[1], &o, sizeof(o)) != sizeof(o))
				_exit(3);
			_exit(0);
		}
		close(fds[1]);
		if (read(fds[0], &out[i], sizeof(out[i])) != sizeof(out[i]))
			out[i].have_ret = false;
		close(fds[0]);
		CHECK_EQ(waitpid(pid, &out[i].status, 0), pid);
	}
	for (unsigned i = 0; i < A_NVARS; i++) {
		const struct a_outcome *o = &out[i], *d = &out[0];
		if (a_vars[i].sqpoll && ncpu < 2) {
			printf("%s: %-28s %-12s skipped (SQPOLL on CPU 1 needs two CPUs)\n", test, what, a_vars[i].name);
			continue;
		}
		bool same = o->have_ret == d->have_ret && o->status == d->status &&
			    (!o->have_ret || (o->ret == d->ret && o->handler_runs == d->handler_runs));
		failed += !same;
		printf("%s: %-28s %-12s %s result %lld, SIGSYS handler %d, %s %d\n", test, what,
		       a_vars[i].name, same ? "same" : "DIFFERENT:", o->have_ret ? (long long)o->ret : 0LL,
		       o->handler_runs, WIFSIGNALED(o->status) ? "killed by signal" : "exit",
		       WIFSIGNALED(o->status) ? WTERMSIG(o->status) : WEXITSTATUS(o->status));
	}
	if (!out[0].have_ret && !WIFSIGNALED(out[0].status)) {
		fprintf(stderr, "%s: %s: the direct variant itself failed (exit %d)\n", test, what,
			WEXITSTATUS(out[0].status));
		failed++;
	}
	return failed;
}

/* (Re)makes path a 0600 file with one byte, owned by uid and gid 1. */
static inline void a_secret_reset(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "s", 1), 1);
	CHECK_EQ(fchown(fd, 1, 1), 0);
	CHECK_EQ(fchmod(fd, 0600), 0);
	close(fd);
}

/*
 * A 0600 file with one byte owned by uid and gid 1 (root opens it only by
 * CAP_DAC_OVERRIDE), in a fresh 0755 directory; the path goes to path.
 */
static inline void a_secret(char *dir, size_t dlen, char *path, size_t plen)
{
	snprintf(dir, dlen, "/tmp/flexsc-attack-XXXXXX");
	CHECK(mkdtemp(dir));
	CHECK_EQ(chmod(dir, 0755), 0);
	snprintf(path, plen, "%s/secret", dir);
	a_secret_reset(path);
}

/* Removes what a_secret made. */
static inline void a_secret_remove(const char *dir, const char *path)
{
	unlink(path);
	rmdir(dir);
}

static inline void a_need_root(void)
{
	if (geteuid() != 0)
		SKIP("needs root (the attacks change credentials and namespaces)");
}

#endif
