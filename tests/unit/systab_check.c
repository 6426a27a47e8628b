// SPDX-License-Identifier: MIT
/*
 * Self-check of the system call table (src/core/systab.c): its invariants,
 * the exact set of io_uring-served calls, and spot checks of numbers,
 * classes and argument counts. Exits 0 when every check passes, 1 otherwise.
 *
 *   (built by make test, which links it like every test)
 */
/* First: under -std=c11 it sets the feature macros its own includes need. */
#include <liburing.h>

#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

/* white-box: the table is hidden inside libflexsc.so */
#include "core/systab.c"

static int failures;

#define CHECK(cond, ...)                                              \
	do {                                                          \
		if (!(cond)) {                                        \
			fprintf(stderr, "systab_check: FAIL %s:%d: ", \
				__FILE__, __LINE__);                  \
			fprintf(stderr, __VA_ARGS__);                 \
			fputc('\n', stderr);                          \
			failures++;                                   \
		}                                                     \
	} while (0)

static long find(const char *name)
{
	for (long nr = 0; nr < FX_NR_SYSCALLS; nr++)
		if (fx_systab[nr].name && !strcmp(fx_systab[nr].name, name))
			return nr;
	return -1;
}

/* Every call served by io_uring, with its opcode: nothing else is URING. */
static const struct {
	const char *name;
	unsigned op;
} uring_calls[] = {
	{ "read", IORING_OP_READ },
	{ "pread64", IORING_OP_READ },
	{ "write", IORING_OP_WRITE },
	{ "pwrite64", IORING_OP_WRITE },
	{ "readv", IORING_OP_READV },
	{ "preadv", IORING_OP_READV },
	{ "preadv2", IORING_OP_READV },
	{ "writev", IORING_OP_WRITEV },
	{ "pwritev", IORING_OP_WRITEV },
	{ "pwritev2", IORING_OP_WRITEV },
	{ "poll", IORING_OP_POLL_ADD },
	{ "epoll_wait", IORING_OP_POLL_ADD },
	{ "fsync", IORING_OP_FSYNC },
	{ "fdatasync", IORING_OP_FSYNC },
	{ "sync_file_range", IORING_OP_SYNC_FILE_RANGE },
	{ "open", IORING_OP_OPENAT },
	{ "openat", IORING_OP_OPENAT },
	{ "creat", IORING_OP_OPENAT },
	{ "openat2", IORING_OP_OPENAT2 },
	{ "close", IORING_OP_CLOSE },
	{ "statx", IORING_OP_STATX },
	{ "newfstatat", IORING_OP_STATX },
	{ "accept", IORING_OP_ACCEPT },
	{ "accept4", IORING_OP_ACCEPT },
	{ "connect", IORING_OP_CONNECT },
	{ "recvfrom", IORING_OP_RECV },
	{ "sendto", IORING_OP_SEND },
	{ "recvmsg", IORING_OP_RECVMSG },
	{ "sendmsg", IORING_OP_SENDMSG },
	{ "shutdown", IORING_OP_SHUTDOWN },
	{ "fallocate", IORING_OP_FALLOCATE },
	{ "fadvise64", IORING_OP_FADVISE },
	{ "madvise", IORING_OP_MADVISE },
	{ "rename", IORING_OP_RENAMEAT },
	{ "renameat", IORING_OP_RENAMEAT },
	{ "renameat2", IORING_OP_RENAMEAT },
	{ "unlink", IORING_OP_UNLINKAT },
	{ "unlinkat", IORING_OP_UNLINKAT },
	{ "rmdir", IORING_OP_UNLINKAT },
	{ "mkdir", IORING_OP_MKDIRAT },
	{ "mkdirat", IORING_OP_MKDIRAT },
	{ "symlink", IORING_OP_SYMLINKAT },
	{ "symlinkat", IORING_OP_SYMLINKAT },
	{ "link", IORING_OP_LINKAT },
	{ "linkat", IORING_OP_LINKAT },
	{ "splice", IORING_OP_SPLICE },
	{ "tee", IORING_OP_TEE },
	{ "epoll_ctl", IORING_OP_EPOLL_CTL },
	{ "socket", IORING_OP_SOCKET },
	{ "setxattr", IORING_OP_SETXATTR },
	{ "fsetxattr", IORING_OP_FSETXATTR },
	{ "getxattr", IORING_OP_GETXATTR },
	{ "fgetxattr", IORING_OP_FGETXATTR },
	{ "ftruncate", FX_IORING_OP_FTRUNCATE },
	{ "bind", FX_IORING_OP_BIND },
	{ "listen", FX_IORING_OP_LISTEN },
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void check_invariants(void)
{
	unsigned named = 0, uring = 0;

	for (long nr = 0; nr < FX_NR_SYSCALLS; nr++) {
		const struct fx_sysdesc *d = &fx_systab[nr];

		if (!d->name) {
			CHECK(d->cls == FLEXSC_CLASS_NONE && !d->why,
			      "%ld: unnamed entry with a class or a reason", nr);
			CHECK(!fx_sysdesc(nr), "%ld: fx_sysdesc of a hole", nr);
			continue;
		}
		named++;
		CHECK(fx_sysdesc(nr) == d, "%ld: fx_sysdesc", nr);
		CHECK(d->name[0], "%ld: empty name", nr);
		CHECK(d->cls >= FLEXSC_CLASS_URING && d->cls <= FLEXSC_CLASS_LOCAL,
		      "%ld %s: class %u", nr, d->name, d->cls);
		CHECK((d->cls == FLEXSC_CLASS_LOCAL) == (d->why != NULL),
		      "%ld %s: LOCAL iff why", nr, d->name);
		CHECK(!d->why || d->why[0], "%ld %s: empty why", nr, d->name);
		CHECK((d->cls == FLEXSC_CLASS_URING) == (d->uring_op != FX_NO_OPCODE),
		      "%ld %s: URING iff opcode", nr, d->name);
		CHECK(d->nargs <= 6, "%ld %s: %u args", nr, d->name, d->nargs);
		if (d->cls == FLEXSC_CLASS_URING) {
			uring++;
			CHECK(d->uring_op < IORING_OP_LAST ||
			      d->uring_op == FX_IORING_OP_FTRUNCATE ||
			      d->uring_op == FX_IORING_OP_BIND ||
			      d->uring_op == FX_IORING_OP_LISTEN,
			      "%ld %s: opcode %u", nr, d->name, d->uring_op);
		}
		for (long j = nr + 1; j < FX_NR_SYSCALLS; j++)
			CHECK(!fx_systab[j].name || strcmp(d->name, fx_systab[j].name),
			      "%ld and %ld share the name %s", nr, j, d->name);
	}
	CHECK(named >= 360, "only %u named entries", named);
	CHECK(uring == ARRAY_SIZE(uring_calls), "%u URING entries, expected %zu",
	      uring, ARRAY_SIZE(uring_calls));
	printf("systab_check: %u system calls, %u served by io_uring\n", named, uring);
}

static void check_uring_set(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(uring_calls); i++) {
		long nr = find(uring_calls[i].name);

		CHECK(nr >= 0, "%s missing", uring_calls[i].name);
		if (nr < 0)
			continue;
		CHECK(fx_systab[nr].cls == FLEXSC_CLASS_URING, "%s not URING",
		      uring_calls[i].name);
		CHECK(fx_systab[nr].uring_op == uring_calls[i].op,
		      "%s: opcode %u, expected %u", uring_calls[i].name,
		      fx_systab[nr].uring_op, uring_calls[i].op);
	}
}

static void expect(long nr, const char *name, unsigned cls, int nargs)
{
	const struct fx_sysdesc *d = fx_sysdesc(nr);

	CHECK(d && !strcmp(d->name, name), "%ld is not %s", nr, name);
	if (!d)
		return;
	CHECK(d->cls == cls, "%s: class %u, expected %u", name, d->cls, cls);
	CHECK(nargs < 0 || d->nargs == nargs, "%s: %u args, expected %d", name,
	      d->nargs, nargs);
}

static void check_spots(void)
{
	const struct fx_sysdesc *d = fx_sysdesc(__NR_read);

	CHECK(d && d->cls == FLEXSC_CLASS_URING && d->uring_op == IORING_OP_READ &&
	      d->nargs == 3, "read");
	expect(__NR_getpid, "getpid", FLEXSC_CLASS_THREAD, 0);
	expect(__NR_gettid, "gettid", FLEXSC_CLASS_LOCAL, 0);
	expect(__NR_mmap, "mmap", FLEXSC_CLASS_THREAD, 6);
	expect(__NR_futex, "futex", FLEXSC_CLASS_THREAD, 6);
	expect(__NR_ioctl, "ioctl", FLEXSC_CLASS_THREAD, 3);
	expect(__NR_rt_sigprocmask, "rt_sigprocmask", FLEXSC_CLASS_LOCAL, 4);
	expect(__NR_clone, "clone", FLEXSC_CLASS_LOCAL, 5);
	expect(__NR_setuid, "setuid", FLEXSC_CLASS_LOCAL, 1);
	expect(__NR_sched_setaffinity, "sched_setaffinity", FLEXSC_CLASS_LOCAL, 3);
	expect(__NR_io_uring_enter, "io_uring_enter", FLEXSC_CLASS_LOCAL, 6);
	expect(__NR_preadv2, "preadv2", FLEXSC_CLASS_URING, 6);
	expect(__NR_tuxcall, "tuxcall", FLEXSC_CLASS_LOCAL, 0);

	/* Numbers, including those past the installed headers. */
	expect(0, "read", FLEXSC_CLASS_URING, 3);
	expect(60, "exit", FLEXSC_CLASS_LOCAL, 1);
	expect(156, "_sysctl", FLEXSC_CLASS_LOCAL, 0);
	expect(231, "exit_group", FLEXSC_CLASS_LOCAL, 1);
	expect(334, "rseq", FLEXSC_CLASS_LOCAL, 4);
	expect(335, "uretprobe", FLEXSC_CLASS_LOCAL, 0);
	expect(336, "uprobe", FLEXSC_CLASS_LOCAL, 0);
	expect(424, "pidfd_send_signal", FLEXSC_CLASS_THREAD, 4);
	expect(435, "clone3", FLEXSC_CLASS_LOCAL, 2);
	expect(449, "futex_waitv", FLEXSC_CLASS_THREAD, 5);
	expect(451, "cachestat", FLEXSC_CLASS_THREAD, 4);
	expect(455, "futex_wait", FLEXSC_CLASS_THREAD, 6);
	expect(460, "lsm_set_self_attr", FLEXSC_CLASS_LOCAL, 4);
	expect(462, "mseal", FLEXSC_CLASS_THREAD, 3);
	expect(466, "removexattrat", FLEXSC_CLASS_THREAD, 4);
	expect(469, "file_setattr", FLEXSC_CLASS_THREAD, 5);

	/* Holes and out-of-range numbers. */
	CHECK(!fx_sysdesc(-1), "-1");
	CHECK(!fx_sysdesc(337), "337");
	CHECK(!fx_sysdesc(423), "423");
	CHECK(!fx_sysdesc(512), "512");
	CHECK(!fx_sysdesc(1L << 40), "1 << 40");
}

/*
 * Every call that makes, copies or closes a descriptor, or changes a
 * descriptor's flags, from the man pages (section 2, RETURN VALUE: "a new
 * file descriptor"); nothing else has an fds column. bpf, seccomp and
 * landlock_create_ruleset return a descriptor for some operations only
 * and stay out (systab.h).
 */
static const struct {
	const char *name;
	unsigned fds;
} fd_calls[] = {
	{ "open", FX_FDS_RET }, { "openat", FX_FDS_RET }, { "openat2", FX_FDS_RET },
	{ "creat", FX_FDS_RET }, { "socket", FX_FDS_RET }, { "eventfd", FX_FDS_RET },
	{ "eventfd2", FX_FDS_RET }, { "epoll_create", FX_FDS_RET }, { "epoll_create1", FX_FDS_RET },
	{ "signalfd", FX_FDS_RET }, { "signalfd4", FX_FDS_RET }, { "timerfd_create", FX_FDS_RET },
	{ "memfd_create", FX_FDS_RET }, { "memfd_secret", FX_FDS_RET }, { "inotify_init", FX_FDS_RET },
	{ "inotify_init1", FX_FDS_RET }, { "fanotify_init", FX_FDS_RET }, { "pidfd_open", FX_FDS_RET },
	{ "pidfd_getfd", FX_FDS_RET }, { "userfaultfd", FX_FDS_RET }, { "perf_event_open", FX_FDS_RET },
	{ "open_by_handle_at", FX_FDS_RET }, { "io_uring_setup", FX_FDS_RET }, { "mq_open", FX_FDS_RET },
	{ "fsopen", FX_FDS_RET }, { "fsmount", FX_FDS_RET }, { "fspick", FX_FDS_RET },
	{ "open_tree", FX_FDS_RET }, { "open_tree_attr", FX_FDS_RET },
	{ "accept", FX_FDS_RET_COPY }, { "accept4", FX_FDS_RET_COPY }, { "dup", FX_FDS_RET_COPY },
	{ "pipe", FX_FDS_PAIR_A0 }, { "pipe2", FX_FDS_PAIR_A0 }, { "socketpair", FX_FDS_PAIR_A3 },
	{ "dup2", FX_FDS_DUP_A1 }, { "dup3", FX_FDS_DUP_A1 },
	{ "close", FX_FDS_CLOSE }, { "close_range", FX_FDS_CLOSE },
	{ "fcntl", FX_FDS_FCNTL }, { "ioctl", FX_FDS_IOCTL }, { "recvmsg", FX_FDS_RECVMSG },
};

static void check_fds(void)
{
	unsigned marked = 0;

	for (size_t i = 0; i < ARRAY_SIZE(fd_calls); i++) {
		long nr = find(fd_calls[i].name);

		CHECK(nr >= 0, "%s missing", fd_calls[i].name);
		if (nr >= 0)
			CHECK(fx_sys_fds(nr) == fd_calls[i].fds, "%s: fds %u, expected %u",
			      fd_calls[i].name, fx_sys_fds(nr), fd_calls[i].fds);
	}
	for (long nr = 0; nr < FX_NR_SYSCALLS; nr++)
		marked += fx_systab[nr].fds != FX_FDS_NONE;
	CHECK(marked == ARRAY_SIZE(fd_calls), "%u calls with an fds column, expected %zu", marked,
	      ARRAY_SIZE(fd_calls));
	CHECK(fx_sys_fds(-1) == FX_FDS_NONE && fx_sys_fds(FX_NR_SYSCALLS) == FX_FDS_NONE, "out of range");
}

/*
 * signal(7), "Interruption of system calls and library functions by
 * signal handlers": the calls never restarted after a handler, and the
 * socket calls that are not when the socket has a timeout (with read and
 * write, which take the recv and send paths on a socket). Every other
 * call is restarted with SA_RESTART.
 */
static const char *const never_restarted[] = {
	"poll", "ppoll", "select", "pselect6", "epoll_wait", "epoll_pwait", "epoll_pwait2",
	"nanosleep", "clock_nanosleep", "pause", "rt_sigsuspend", "rt_sigtimedwait",
	"msgrcv", "msgsnd", "semop", "semtimedop", "io_getevents", "io_pgetevents",
};
static const char *const not_restarted_if_timed[] = {
	"read", "readv", "recvfrom", "recvmsg", "recvmmsg", "write", "writev",
	"sendto", "sendmsg", "sendmmsg", "accept", "accept4", "connect",
};

/* The calls that never wait for an event, and those that do not on a regular file (systab.h). */
static const char *const never_wait[] = {
	"close", "fsync", "fdatasync", "sync_file_range", "fallocate", "ftruncate", "fadvise64",
	"madvise", "newfstatat", "statx", "fstat", "stat", "lstat", "access", "faccessat",
	"faccessat2", "readlink", "readlinkat", "getdents64", "lseek", "truncate", "statfs",
	"fstatfs", "chmod", "fchmod", "fchmodat", "chown", "fchown", "lchown", "fchownat",
	"utimensat", "open", "openat", "openat2", "creat", "link", "linkat", "symlink",
	"symlinkat", "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat", "rename", "renameat",
	"renameat2", "getxattr", "setxattr", "fgetxattr", "fsetxattr", "socket", "bind",
	"listen", "shutdown", "epoll_ctl",
};
static const char *const wait_not_on_file[] = {
	"read", "readv", "pread64", "preadv", "preadv2", "write", "writev", "pwrite64", "pwritev",
	"pwritev2",
};

/*
 * Where the timeout is that the kernel does not count down when a call is
 * started again (epoll_wait(2), poll(2), semop(2), io_getevents(2)), and
 * the socket calls that obey SO_RCVTIMEO or SO_SNDTIMEO (socket(7)), which
 * are those not restarted when the socket has a timeout.
 */
static const char *const timeout_ms_a2[] = { "poll" };
static const char *const timeout_ms_a3[] = { "epoll_wait", "epoll_pwait" };
static const char *const timeout_ts_a3[] = { "semtimedop", "epoll_pwait2" };
static const char *const timeout_ts_a4[] = { "io_getevents", "io_pgetevents" };
static const char *const timeout_so_rcv[] = {
	"read", "readv", "recvfrom", "recvmsg", "recvmmsg", "accept", "accept4",
};
static const char *const timeout_so_snd[] = {
	"write", "writev", "sendto", "sendmsg", "sendmmsg", "connect",
};

/* Exactly the calls of list (n names) have value in the column col reads; 0 for every other. */
static void check_column(const char *col, unsigned (*of)(long), const char *const *list, size_t n,
			 unsigned value)
{
	unsigned with = 0;

	for (size_t i = 0; i < n; i++) {
		long nr = find(list[i]);
		CHECK(nr >= 0, "%s missing", list[i]);
		if (nr >= 0)
			CHECK(of(nr) == value, "%s: %s %u, expected %u", list[i], col, of(nr), value);
	}
	for (long nr = 0; nr < FX_NR_SYSCALLS; nr++)
		with += of(nr) == value;
	CHECK(with == n, "%u calls with %s %u, expected %zu", with, col, value, n);
}

static unsigned restart_of(long nr) { return fx_sys_restart(nr); }
static unsigned waits_of(long nr) { return fx_sys_waits(nr); }
static unsigned timeout_of(long nr) { return fx_sys_timeout(nr); }

/* A socket's timeout is what keeps a socket call from restarting: one set of calls. */
static void check_socket_timeouts(void)
{
	for (long nr = 0; nr < FX_NR_SYSCALLS; nr++) {
		unsigned t = fx_sys_timeout(nr);
		bool so = t == FX_TIMEOUT_SO_RCV || t == FX_TIMEOUT_SO_SND;
		CHECK(so == (fx_sys_restart(nr) == FX_RESTART_NOT_TIMED), "%s: timeout %u, restart %u",
		      fx_systab[nr].name, t, fx_sys_restart(nr));
	}
	CHECK(fx_sys_timeout(-1) == FX_TIMEOUT_NONE && fx_sys_timeout(FX_NR_SYSCALLS) == FX_TIMEOUT_NONE,
	      "out of range");
}

int main(void)
{
	check_invariants();
	check_uring_set();
	check_spots();
	check_fds();
	check_column("restart", restart_of, never_restarted, ARRAY_SIZE(never_restarted), FX_RESTART_NEVER);
	check_column("restart", restart_of, not_restarted_if_timed, ARRAY_SIZE(not_restarted_if_timed),
		     FX_RESTART_NOT_TIMED);
	check_column("waits", waits_of, never_wait, ARRAY_SIZE(never_wait), FX_WAITS_NEVER);
	check_column("waits", waits_of, wait_not_on_file, ARRAY_SIZE(wait_not_on_file),
		     FX_WAITS_NOT_ON_FILE);
	check_column("timeout", timeout_of, timeout_ms_a2, ARRAY_SIZE(timeout_ms_a2), FX_TIMEOUT_MS_A2);
	check_column("timeout", timeout_of, timeout_ms_a3, ARRAY_SIZE(timeout_ms_a3), FX_TIMEOUT_MS_A3);
	check_column("timeout", timeout_of, timeout_ts_a3, ARRAY_SIZE(timeout_ts_a3), FX_TIMEOUT_TS_A3);
	check_column("timeout", timeout_of, timeout_ts_a4, ARRAY_SIZE(timeout_ts_a4), FX_TIMEOUT_TS_A4);
	check_column("timeout", timeout_of, timeout_so_rcv, ARRAY_SIZE(timeout_so_rcv), FX_TIMEOUT_SO_RCV);
	check_column("timeout", timeout_of, timeout_so_snd, ARRAY_SIZE(timeout_so_snd), FX_TIMEOUT_SO_SND);
	check_socket_timeouts();
	if (failures) {
		fprintf(stderr, "systab_check: %d failure(s)\n", failures);
		return 1;
	}
	printf("systab_check: ok\n");
	return 0;
}
