/* SPDX-License-Identifier: MIT */
/*
 * The engine-equivalence harness shared by engine_files.c, engine_net.c and
 * engine_misc.c: every case runs once as a plain system call (the
 * reference) and once through flexsc on each engine (sync, threads, uring,
 * auto), each run on a fixture of its own built the same way, and the raw
 * result (>= 0 or -errno) and the observable side effects must be identical.
 *
 * A case is a row of a table: the system call, the route the io_uring
 * engine must take for these arguments, how to compare the result (exactly,
 * or "a new descriptor", "a mapping", "the fixture's child"), a setup that
 * builds the fixture and the arguments, and an observer that records side
 * effects (buffers, offsets, file contents, stat fields) as text.
 *
 * Each case runs in a forked child (a crash, a hang or a leaked descriptor
 * stays with the case); a posted call that does not complete within
 * T_CALL_TIMEOUT_MS is reported as a hang, and its queue is leaked so the
 * other engines still run. The bound is generous because it only separates
 * a hang from a slow call: fsync and friends on a disk-backed /tmp, or an
 * owner stalled on a busy machine or under a sanitizer, can take seconds. A
 * call not done after T_CALL_SLOW_MS gets a note and the rest of the bound;
 * a call that completes ends the wait at once. Once one call has hung (the
 * test fails anyway), later calls get only T_CALL_SLOW_MS and later cases
 * the short alarm: a hang costs the long bounds once, not again in every
 * case after it (tests/run.sh gives the whole program 600 s).
 * flexsc_queue_stats proves which engine executed each call: a call
 * io_uring can serve must have gone through io_uring on the uring and auto
 * engines, so the test never silently tests a fallback.
 */
#ifndef FX_ENGINE_HARNESS_H
#define FX_ENGINE_HARNESS_H

#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#define T_CALL_SLOW_MS 1500     /* then a note, and the wait goes on */
#define T_CALL_TIMEOUT_MS 30000 /* in all: only then a hang */
/* a case's whole run (five runs, each up to T_CALL_TIMEOUT_MS); the short one once a call hung */
#define T_CASE_ALARM_S 200
#define T_CASE_ALARM_AFTER_HANG_S 20
#define T_NRUNS 5 /* the reference, then the four engines */

/*
 * The kernel's answer, without libc (and without libflexsc's syscall() wrapper).
 * Arguments 4-6 are loaded inside the asm: a sanitizer's calls between an
 * assignment to a register variable and the asm would clobber r8-r10.
 */
static inline int64_t t_raw(long nr, const uint64_t a[6])
{
	long ret;
	const uint64_t *ap = a;

	__asm__ volatile("movq 24(%%rdi), %%r10\n\t"
			 "movq 32(%%rdi), %%r8\n\t"
			 "movq 40(%%rdi), %%r9\n\t"
			 "movq 16(%%rdi), %%rdx\n\t"
			 "movq 8(%%rdi), %%rsi\n\t"
			 "movq 0(%%rdi), %%rdi\n\t"
			 "syscall"
			 : "=a"(ret), "+D"(ap)
			 : "a"(nr)
			 : "rcx", "r11", "rdx", "rsi", "r8", "r9", "r10", "memory");
	return ret;
}


/* One run's fixture: everything a case's arguments may point into. */
struct fix {
	char dir[256];
	char p[4][512];        /* paths */
	int v[8];              /* descriptors and integers, by role */
	char b[4][512];        /* buffers, prefilled with '.' */
	char *big;             /* 128 KiB, prefilled with 'z' */
	struct iovec iov[4];
	struct msghdr msg;
	struct sockaddr_storage ss[2];
	socklen_t sl[2];
	struct stat st;
	char stx[512];         /* struct statx, with room */
	char how[64];          /* struct open_how */
	char ev[32];           /* struct epoll_event */
	struct timespec ts[2];
	char pfd[32];          /* struct pollfd[2] */
	int status;
	int iv[4];             /* ints the call writes */
	void *mem;
	size_t memlen;
	pid_t pid;
	uint64_t a[6];         /* the call's arguments */
};

#define ARGS(f, ...)                                                   \
	do {                                                           \
		const uint64_t _a[6] = { __VA_ARGS__ };                \
		memcpy((f)->a, _a, sizeof(_a));                        \
	} while (0)

struct obs {
	char s[4096];
	size_t n;
};

static inline void oprintf(struct obs *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void oprintf(struct obs *o, const char *fmt, ...)
{
	va_list ap;

	if (o->n >= sizeof(o->s) - 1)
		return;
	va_start(ap, fmt);
	int k = vsnprintf(o->s + o->n, sizeof(o->s) - o->n, fmt, ap);
	va_end(ap);
	if (k > 0)
		o->n += (size_t)k < sizeof(o->s) - o->n ? (size_t)k : sizeof(o->s) - o->n - 1;
}

/* n bytes of buf, printable, escaped otherwise */
static inline void obytes(struct obs *o, const char *tag, const void *buf, long n)
{
	const unsigned char *c = buf;

	oprintf(o, " %s=\"", tag);
	for (long i = 0; i < n; i++) {
		if (c[i] >= 0x20 && c[i] < 0x7f && c[i] != '"' && c[i] != '\\')
			oprintf(o, "%c", c[i]);
		else
			oprintf(o, "\\x%02x", c[i]);
	}
	oprintf(o, "\"");
}

/* the descriptor's file position (or the error) */
static inline void opos(struct obs *o, int fd)
{
	off_t p = lseek(fd, 0, SEEK_CUR);
	oprintf(o, " pos=%ld", p < 0 ? -(long)errno : (long)p);
}

/* a file's type, mode, size, links and its first 64 bytes, or the error */
static inline void ofile(struct obs *o, const char *path)
{
	struct stat st;
	char buf[64];
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	if (!path[0])
		return;
	if (lstat(path, &st)) {
		oprintf(o, " [%s: %s]", name, strerror(errno));
		return;
	}
	oprintf(o, " [%s: mode=%o size=%ld nlink=%lu", name, st.st_mode,
		(long)st.st_size, (unsigned long)st.st_nlink);
	if (S_ISREG(st.st_mode)) {
		int fd = open(path, O_RDONLY);
		ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf), 0) : -1;
		if (fd >= 0)
			close(fd);
		if (n >= 0)
			obytes(o, "data", buf, n);
	} else if (S_ISLNK(st.st_mode)) {
		ssize_t n = readlink(path, buf, sizeof(buf));
		if (n >= 0)
			obytes(o, "target", buf, n);
	}
	oprintf(o, "]");
}

/* How many bytes wait in a pipe or socket (drains nothing). */
static inline void oqueued(struct obs *o, const char *tag, int fd)
{
	int n = -1;

	if (ioctl(fd, FIONREAD, &n))
		n = -errno;
	oprintf(o, " %s_queued=%d", tag, n);
}

/* What a new descriptor is: its flags, type, and whether it is path p[0]'s file. */
static inline void odesc(struct obs *o, const struct fix *f, int fd)
{
	struct stat st, p0;

	oprintf(o, " fd{cloexec=%d fl=%o", fcntl(fd, F_GETFD) & FD_CLOEXEC,
		fcntl(fd, F_GETFL) & ~O_LARGEFILE);
	if (fstat(fd, &st) == 0) {
		oprintf(o, " type=%o", st.st_mode & S_IFMT);
		if (f->p[0][0] && stat(f->p[0], &p0) == 0)
			oprintf(o, " is_p0=%d", st.st_ino == p0.st_ino && st.st_dev == p0.st_dev);
	}
	oprintf(o, "}");
}

typedef void (*t_setup_fn)(struct fix *f);
typedef void (*t_observe_fn)(struct fix *f, int64_t ret, struct obs *o);

/*
 * route: which engine the uring engine must use for these arguments:
 *   'U' io_uring (if the kernel's probe has the opcode), 'F' the fallback
 *   (a URING-class call whose arguments io_uring cannot take), 'T' a
 *   THREAD-class call, 'A' either (the case's point is the result), 'N'
 *   on the owner at post time, on every engine (a call on a descriptor
 *   that cannot block: O_NONBLOCK, or MSG_DONTWAIT). On the auto engine,
 *   the quick calls (newfstatat, fstat, statx: src/api/queue.c) run on
 *   the owner at post time whatever the route says.
 * rk: 'E' exact result, 'D' a new descriptor (described, then closed),
 *   'P' an address (a mapping), 'C' the pid of the fixture's child, 'K' the
 *   pid of some child of the case.
 * nobody: run the case with uid/gid 65534 and no groups (EACCES cases).
 */
struct tcase {
	const char *name;
	long nr;
	char route;
	char rk;
	t_setup_fn setup;
	t_observe_fn observe;
	bool nobody;
};

/*
 * A divergence of io_uring itself that no argument reveals, so the library
 * cannot route around it: reported, not failed, on the uring and auto
 * engines only.
 */
struct t_known {
	const char *name;
	const char *why;
};
static const struct t_known *t_known_list;

static const char *t_known_why(const char *name)
{
	for (const struct t_known *k = t_known_list; k && k->name; k++)
		if (!strcmp(k->name, name))
			return k->why;
	return NULL;
}

static char t_top[128];

struct t_shared {
	unsigned cases, runs, uring_calls, fallback_calls, thread_calls, failed;
	unsigned hangs; /* calls reported hung, cases killed by the alarm: by any case */
};
static struct t_shared *t_sh;

static int t_rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

/* dst = a "/" b */
static inline void pjoin(char *dst, size_t n, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	CHECK(la + lb + 2 <= n);
	memcpy(dst, a, la);
	dst[la] = '/';
	memcpy(dst + la + 1, b, lb + 1);
}

static inline void mkfile(struct fix *f, int i, const char *name, const char *data, mode_t mode)
{
	pjoin(f->p[i], sizeof(f->p[i]), f->dir, name);
	if (!data)
		return;
	int fd = open(f->p[i], O_WRONLY | O_CREAT | O_TRUNC, mode);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, data, strlen(data)), (long)strlen(data));
	CHECK_EQ(fchmod(fd, mode), 0);
	close(fd);
}

static inline int openp(struct fix *f, int i, int flags)
{
	int fd = open(f->p[i], flags, 0644);
	CHECK(fd >= 0);
	return fd;
}

/* mkpipe: v[0] read end, v[1] write end */
static inline void mkpipe(struct fix *f, int flags)
{
	int p[2];
	CHECK_EQ(pipe2(p, flags), 0);
	f->v[0] = p[0], f->v[1] = p[1];
}

static const char *t_run_name(int r)
{
	static const char *n[T_NRUNS] = { "reference", "sync", "threads", "uring", "auto" };
	return n[r];
}

static const enum flexsc_engine t_run_engine[T_NRUNS] = {
	FLEXSC_ENGINE_SYNC, FLEXSC_ENGINE_SYNC, FLEXSC_ENGINE_THREADS, FLEXSC_ENGINE_URING,
	FLEXSC_ENGINE_AUTO,
};

static void t_drop_to_nobody(void)
{
	CHECK_EQ(setgroups(0, NULL), 0);
	CHECK_EQ(setgid(65534), 0);
	CHECK_EQ(setuid(65534), 0);
}

/* Which engine ran the one call, from the stats delta; NULL if it was not the expected one. */
static bool t_quick_call(long nr)
{
	return nr == SYS_newfstatat || nr == SYS_fstat || nr == SYS_statx;
}

/*
 * Calls whose meaning depends on the caller's network, IPC or UTS
 * namespace, which is per thread (namespaces(7)): no other thread may run
 * them, so where io_uring does not take them they run on the caller.
 */
static bool t_ns_call(long nr)
{
	switch (nr) {
	case SYS_socket: case SYS_socketpair: case SYS_uname: case SYS_sethostname:
	case SYS_setdomainname: case SYS_shmget: case SYS_shmat: case SYS_shmctl: case SYS_shmdt:
	case SYS_semget: case SYS_semop: case SYS_semctl: case SYS_semtimedop: case SYS_msgget:
	case SYS_msgsnd: case SYS_msgrcv: case SYS_msgctl: case SYS_mq_open: case SYS_mq_unlink:
		return true;
	}
	return false;
}

static const char *t_route_check(enum flexsc_engine eng, long nr, char exp, bool usup,
				 const struct flexsc_stats *b, const struct flexsc_stats *a)
{
	uint64_t u = a->by_engine[FLEXSC_ENGINE_URING] - b->by_engine[FLEXSC_ENGINE_URING];
	uint64_t t = a->by_engine[FLEXSC_ENGINE_THREADS] - b->by_engine[FLEXSC_ENGINE_THREADS];
	uint64_t s = a->by_engine[FLEXSC_ENGINE_SYNC] - b->by_engine[FLEXSC_ENGINE_SYNC];
	uint64_t l = a->by_engine[FLEXSC_ENGINE_AUTO] - b->by_engine[FLEXSC_ENGINE_AUTO];
	bool ok;

	if (exp == 'U' && !usup)
		exp = 'F';
	if (u + t + s + l != 1)
		return "not exactly one call counted";
	if (exp == 'N' || (eng == FLEXSC_ENGINE_AUTO && t_quick_call(nr)))
		ok = l == 1;
	else switch (eng) {
	case FLEXSC_ENGINE_SYNC: ok = s == 1; break;
	case FLEXSC_ENGINE_THREADS: ok = t_ns_call(nr) ? s == 1 : t == 1; break;
	case FLEXSC_ENGINE_URING: ok = exp == 'U' ? u == 1 : exp == 'A' ? u + s == 1 : s == 1; break;
	default:
		ok = exp == 'U' ? u == 1 : t_ns_call(nr) ? u + s == 1 : exp == 'A' ? u + t == 1 : t == 1;
		break;
	}
	if (ok) {
		t_sh->uring_calls += (unsigned)u;
		t_sh->fallback_calls += (unsigned)s;
		t_sh->thread_calls += (unsigned)t;
		return NULL;
	}
	return u ? "went through io_uring" : t ? "went to a syscall thread" : s ? "ran synchronously" : "ran locally";
}

/* Runs one case in the current (forked) process. Returns the number of mismatches. */
static int t_run_case(const struct tcase *tc, unsigned ci)
{
	struct fix *fx[T_NRUNS];
	struct obs *o = calloc(T_NRUNS, sizeof(*o));
	int fails = 0;
	bool hung = false;
	sigset_t pipe_set;

	/* EPIPE cases: the signal stays pending instead of killing us */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe_set, NULL);
	CHECK(o);
	for (int r = 0; r < T_NRUNS; r++) {
		fx[r] = calloc(1, sizeof(*fx[r]));
		CHECK(fx[r]);
		fx[r]->big = malloc(1 << 17);
		CHECK(fx[r]->big);
		memset(fx[r]->big, 'z', 1 << 17);
		memset(fx[r]->b, '.', sizeof(fx[r]->b));
		for (int i = 0; i < 8; i++)
			fx[r]->v[i] = -1;
		char sub[32];
		snprintf(sub, sizeof(sub), "c%u-%s", ci, t_run_name(r));
		pjoin(fx[r]->dir, sizeof(fx[r]->dir), t_top, sub);
		CHECK_EQ(mkdir(fx[r]->dir, 0755), 0);
		tc->setup(fx[r]);
	}
	if (tc->nobody)
		t_drop_to_nobody();

	for (int r = 0; r < T_NRUNS; r++) {
		struct fix *f = fx[r];
		struct flexsc *inst = NULL;
		struct flexsc_queue *q = NULL;
		int64_t ret;

		CHECK_EQ(chdir(f->dir), 0); /* AT_FDCWD and relative paths: this run's own fixture */

		if (r == 0) {
			ret = t_raw(tc->nr, f->a);
		} else {
			struct flexsc_stats before, after;
			struct flexsc_sysinfo info;
			const int slow_ms = T_CALL_SLOW_MS, rest_ms = T_CALL_TIMEOUT_MS - T_CALL_SLOW_MS;
			struct timespec to = { slow_ms / 1000, (slow_ms % 1000) * 1000000L };
			struct timespec rest = { rest_ms / 1000, (rest_ms % 1000) * 1000000L };
			flexsc_call_t call;
			enum flexsc_engine eng = t_run_engine[r];

			t_open(eng, &inst, &q, NULL);
			CHECK_EQ(flexsc_engine_in_use(inst), eng);
			CHECK_EQ(flexsc_sysinfo(inst, tc->nr, &info), 0);
			CHECK_EQ(flexsc_queue_stats(q, &before), 0);
			CHECK_EQ(flexsc_post(q, tc->nr, 6, f->a, NULL, &call), 0);
			int err = flexsc_wait_one(q, call, &ret, &to);
			int waited_ms = slow_ms;
			if (err == -ETIME && !t_sh->hangs) {
				/* slow, not yet hung: wait out the rest of the bound */
				printf("  note: %s on %s not done after %d ms, waiting up to %d ms in all\n",
				       tc->name, t_run_name(r), slow_ms, T_CALL_TIMEOUT_MS);
				fflush(stdout);
				err = flexsc_wait_one(q, call, &ret, &rest);
				waited_ms = T_CALL_TIMEOUT_MS;
			}
			if (err == -ETIME) {
				fprintf(stderr, "MISMATCH %s on %s: the call did not complete in %d ms "
						"(reference: %s)\n",
					tc->name, t_run_name(r), waited_ms, o[0].s);
				oprintf(&o[r], "HANG");
				fails++;
				hung = true;
				t_sh->hangs++;
				continue; /* the queue is leaked: the call may still write into f */
			}
			CHECK_EQ(err, 0);
			CHECK_EQ(flexsc_queue_stats(q, &after), 0);
			const char *bad = t_route_check(eng, tc->nr, tc->route, info.uring_supported, &before, &after);
			if (bad) {
				fprintf(stderr, "MISMATCH %s on %s: the call %s (expected route '%c')\n",
					tc->name, t_run_name(r), bad, tc->route);
				fails++;
			}
		}
		/* the result, normalised where two runs cannot agree on the number */
		switch (tc->rk) {
		case 'D':
			if (ret >= 0)
				oprintf(&o[r], "ret=<fd>");
			else
				oprintf(&o[r], "ret=%lld", (long long)ret);
			break;
		case 'P':
			if (ret >= 0 || ret < -4095)
				oprintf(&o[r], "ret=<addr>");
			else
				oprintf(&o[r], "ret=%lld", (long long)ret);
			break;
		case 'C':
			if (ret == f->pid && ret > 0)
				oprintf(&o[r], "ret=<child>");
			else
				oprintf(&o[r], "ret=%lld", (long long)ret);
			break;
		case 'K':
			if (ret > 0)
				oprintf(&o[r], "ret=<a child>");
			else
				oprintf(&o[r], "ret=%lld", (long long)ret);
			break;
		default:
			oprintf(&o[r], "ret=%lld", (long long)ret);
		}
		if (ret < 0 && ret > -4096)
			oprintf(&o[r], "(%s)", strerror((int)-ret));
		if (tc->observe)
			tc->observe(f, ret, &o[r]);
		if (tc->rk == 'D' && ret >= 0) {
			odesc(&o[r], f, (int)ret);
			close((int)ret);
		}
		if (inst)
			t_close(inst, q); /* after the observation: nothing maps or opens in between */
	}
	const char *known = t_known_why(tc->name);
	for (int r = 1; r < T_NRUNS; r++) {
		bool ring = t_run_engine[r] == FLEXSC_ENGINE_URING || t_run_engine[r] == FLEXSC_ENGINE_AUTO;

		if (known && ring) {
			if (strcmp(o[r].s, o[0].s))
				printf("  known divergence %s on %s (%s):\n    reference: %s\n    %-9s: %s\n",
				       tc->name, t_run_name(r), known, o[0].s, t_run_name(r), o[r].s);
			else
				printf("  note: the known divergence of %s no longer shows on %s\n", tc->name,
				       t_run_name(r));
			continue;
		}
		if (strcmp(o[r].s, o[0].s)) {
			fprintf(stderr, "MISMATCH %s on %s:\n    reference: %s\n    %-9s: %s\n", tc->name,
				t_run_name(r), o[0].s, t_run_name(r), o[r].s);
			fails++;
		}
	}
	if (getenv("T_VERBOSE"))
		printf("  %-28s %s\n", tc->name, o[0].s);
	if (hung) {
		fflush(NULL);
		_exit(fails ? 1 : 0); /* queues with calls in flight: no teardown */
	}
	for (int r = 0; r < T_NRUNS; r++) {
		free(fx[r]->big);
		free(fx[r]);
	}
	free(o);
	return fails;
}

/*
 * Runs every case of the table (those whose name contains argv[1], if
 * given), each in a child, and prints the summary. Returns the exit code.
 */
static int t_run_table(const char *prog, const struct tcase *cases, unsigned n,
		       const struct t_known *known, int argc, char **argv)
{
	unsigned failed = 0, ran = 0;

	t_known_list = known;

	t_sh = mmap(NULL, sizeof(*t_sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(t_sh != MAP_FAILED);
	umask(022);
	{
		struct flexsc *inst;
		struct flexsc_queue *q;

		t_open(FLEXSC_ENGINE_URING, &inst, &q, NULL);
		bool have = flexsc_engine_in_use(inst) == FLEXSC_ENGINE_URING;
		t_close(inst, q);
		if (!have)
			SKIP("io_uring is unavailable here (kernel, seccomp or sysctl): no engine to compare");
	}
	snprintf(t_top, sizeof(t_top), "/tmp/flexsc-%s-XXXXXX", prog);
	CHECK(mkdtemp(t_top));
	CHECK_EQ(chmod(t_top, 0755), 0);
	for (unsigned i = 0; i < n; i++) {
		if (argc > 1 && !strstr(cases[i].name, argv[1]))
			continue;
		if (cases[i].nobody && geteuid() != 0) {
			printf("  %s: not root, skipped\n", cases[i].name);
			continue;
		}
		ran++;
		fflush(NULL);
		pid_t pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			alarm(t_sh->hangs ? T_CASE_ALARM_AFTER_HANG_S : T_CASE_ALARM_S);
			int fails = t_run_case(&cases[i], i);
			fflush(NULL);
			exit(fails ? 1 : 0);
		}
		int st;
		CHECK_EQ(waitpid(pid, &st, 0), pid);
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			failed++;
			if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
				t_sh->hangs++;
			if (WIFSIGNALED(st))
				fprintf(stderr, "FAIL %s: killed by signal %d\n", cases[i].name, WTERMSIG(st));
			else
				fprintf(stderr, "FAIL %s\n", cases[i].name);
		}
	}
	nftw(t_top, t_rm, 16, FTW_DEPTH | FTW_PHYS);
	printf("%s: %u cases x 4 engines against the plain system call: %u failed; "
	       "io_uring executed %u calls, the synchronous fallback %u, syscall threads %u\n",
	       prog, ran, failed, t_sh->uring_calls, t_sh->fallback_calls, t_sh->thread_calls);
	if (argc <= 1 && t_sh->uring_calls == 0) {
		fprintf(stderr, "%s: io_uring executed nothing: the uring engine was not tested\n", prog);
		return 1;
	}
	return failed ? 1 : 0;
}

#endif
