/*
 * What the test programs in this folder share: reporting checks, starting
 * threads, signals, children. Plain C and pthreads, like the programs,
 * which know nothing of flexsc. A program defines CHECK_NAME (its name, the
 * prefix of every line it prints) before including this, and returns
 * `failed`.
 *
 * The one convention for checks: each claim is one stdout line from
 * result() or result_err() ("NAME: what: ok" or FAIL), printed by the main
 * thread in a fixed order, so the plain run and every flexsc-run run print
 * the same lines. Conditions checked many times or on other threads (a
 * storm's inner loop) use EXPECT: a miss says where and why on stderr and
 * counts; the claim's result() line then compares misses() before and
 * after. Either one sets `failed`.
 */
#ifndef FLEXSC_THREADS_CHECK_H
#define FLEXSC_THREADS_CHECK_H

#include <dirent.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static _Atomic int failed;    /* any result() or EXPECT that did not hold */
static _Atomic long expect_misses;

/*
 * Seals the calling thread, with no_new_privs, in a seccomp filter that
 * kills the process at clone and clone3, as OpenSSH's pre-auth sandbox and
 * other "no thread after the sandbox" filters do. 0, or -1 and errno.
 */
__attribute__((unused)) static int seal_no_clone(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) ? -1 : 0;
}

/* One line per check, flushed at once: a fork or a crash must not lose or repeat it. */
__attribute__((unused)) static void result(const char *what, int ok)
{
	printf("%s: %s: %s\n", CHECK_NAME, what, ok ? "ok" : "FAIL");
	fflush(stdout);
	if (!ok)
		failed = 1;
}

/* result() with the claim formatted printf-style. */
__attribute__((unused, format(printf, 2, 3))) static void resultf(int ok, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	result(what, ok);
}

/* EXPECT(cond, fmt, ...): on any thread; when cond is false, prints the
 * place and the message to stderr and counts a miss. */
#define EXPECT(cond, ...)                                                       \
	do {                                                                    \
		if (!(cond))                                                    \
			expect_missed(__FILE__, __LINE__, __VA_ARGS__);         \
	} while (0)

__attribute__((unused, format(printf, 3, 4))) static void expect_missed(const char *file, int line,
									 const char *fmt, ...)
{
	va_list ap;

	flockfile(stderr);
	fprintf(stderr, "%s: %s:%d: ", CHECK_NAME, file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	funlockfile(stderr);
	atomic_fetch_add(&expect_misses, 1);
	failed = 1;
}

/* EXPECT_ERR(expr, want): EXPECT that a call returning an error number gives want. */
#define EXPECT_ERR(expr, want)                                                          \
	do {                                                                            \
		int e_ = (expr);                                                        \
		EXPECT(e_ == (want), "%s: %s (%d), want %s", #expr, strerror(e_), e_, #want); \
	} while (0)

/* The EXPECTs missed so far. */
__attribute__((unused)) static long misses(void)
{
	return atomic_load(&expect_misses);
}

/* A joinable thread running fn(arg); the program stops if it cannot start. */
__attribute__((unused)) static pthread_t spawn(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	int err = pthread_create(&t, NULL, fn, arg);

	if (err) {
		fprintf(stderr, "pthread_create: %s\n", strerror(err));
		exit(1);
	}
	return t;
}

__attribute__((unused)) static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The process's resident memory (VmRSS) in kB, or -1. */
__attribute__((unused)) static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kb = atol(line + 6);
	fclose(f);
	return kb;
}

/* CLOCK_MONOTONIC in milliseconds. */
__attribute__((unused)) static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* clock in nanoseconds. */
__attribute__((unused)) static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC in seconds. */
__attribute__((unused)) static double now_s(void)
{
	return (double)now_ns(CLOCK_MONOTONIC) / 1e9;
}

/* A timespec `ns` nanoseconds from now on `clock`. */
__attribute__((unused)) static struct timespec ts_in_ns(clockid_t clock, uint64_t ns)
{
	uint64_t t = now_ns(clock) + ns;

	return (struct timespec){ .tv_sec = (time_t)(t / 1000000000u), .tv_nsec = (long)(t % 1000000000u) };
}

/* The system call instruction itself, three arguments: no library sees or interposes it. */
__attribute__((unused)) static long raw3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}

/* waitpid for at most ms: the child's status, or -1 (then it is killed and reaped). */
__attribute__((unused)) static int wait_bounded(pid_t pid, unsigned ms)
{
	uint64_t t0 = now_ms();
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		if (r < 0 && errno != EINTR) {
			perror("waitpid");
			return -1;
		}
		if (now_ms() - t0 > ms) {
			fprintf(stderr, "child %d did not end in %u ms\n", (int)pid, ms);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
		usleep(500);
	}
}

/* One check of a returned error number: ok when it is `want`; a FAIL line
 * also says what came instead (strerrorname_np: "EINVAL", "0"). */
__attribute__((unused)) static void result_err(const char *what, int got, int want)
{
	if (got == want) {
		result(what, 1);
		return;
	}
	printf("%s: %s: FAIL (got %s, want %s)\n", CHECK_NAME, what,
	       got ? strerrorname_np(got) ? strerrorname_np(got) : "?" : "0",
	       want ? strerrorname_np(want) ? strerrorname_np(want) : "?" : "0");
	fflush(stdout);
	failed = 1;
}

/* A timespec `ms` milliseconds from now on `clock`. */
__attribute__((unused)) static struct timespec ts_in_ms(clockid_t clock, long ms)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

/* Milliseconds from a to b. */
__attribute__((unused)) static long ms_between(struct timespec a, struct timespec b)
{
	return (b.tv_sec - a.tv_sec) * 1000L + (b.tv_nsec - a.tv_nsec) / 1000000L;
}

/* The set holding one signal. */
__attribute__((unused)) static sigset_t sigset_of(int sig)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, sig);
	return s;
}

/* Installs fn for sig with these sa_flags and an empty sa_mask; the program stops if it cannot. */
__attribute__((unused)) static void on_signal(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL)) {
		perror("sigaction");
		exit(1);
	}
}

/* Reads fd to its end into buf, NUL-terminated; the bytes read. */
__attribute__((unused)) static size_t read_all(int fd, char *buf, size_t len)
{
	size_t n = 0;
	ssize_t r;

	while (n + 1 < len && ((r = read(fd, buf + n, len - 1 - n)) > 0 || (r < 0 && errno == EINTR)))
		if (r > 0)
			n += (size_t)r;
	buf[n] = 0;
	return n;
}

/* Runs fn(arg) in a forked child whose stdout is a pipe, and _exits with
 * what fn returns (fn may exec instead). Its stdout in out (NUL-terminated);
 * returns its wait status. The program stops if pipe or fork fails. */
__attribute__((unused)) static int run_captured(int (*fn)(void *), void *arg, char *out, size_t len)
{
	int p[2], status = -1;

	if (pipe(p)) {
		perror("pipe");
		exit(1);
	}
	fflush(stdout); /* or the child prints it again */
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		_exit(fn(arg));
	}
	close(p[1]);
	read_all(p[0], out, len);
	close(p[0]);
	if (waitpid(pid, &status, 0) != pid)
		perror("waitpid");
	return status;
}

/*
 * The runtime's monitor thread (named flexsc-monitor: docs/threads.md, "A
 * carrier blocked in the kernel"), or 0 when the program runs plainly. It
 * names itself once it runs, which may be a little after the first
 * pthread_create: under the runtime (some thread named "flexsc-...") this
 * waits up to 5 s for it.
 */
__attribute__((unused)) static int monitor_tid(void)
{
	for (int round = 0; round < 500; round++) {
		DIR *d = opendir("/proc/self/task");
		struct dirent *e;
		int tid = 0, runtime = 0;

		while (d && (e = readdir(d)) && !tid) {
			char path[300], comm[32] = "";
			snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
			FILE *f = fopen(path, "r");
			if (f && fgets(comm, sizeof(comm), f) && !strcmp(comm, "flexsc-monitor\n"))
				tid = atoi(e->d_name);
			if (!strncmp(comm, "flexsc-", 7))
				runtime = 1;
			if (f)
				fclose(f);
		}
		if (d)
			closedir(d);
		if (tid || !runtime)
			return tid;
		usleep(10000);
	}
	return 0;
}

/*
 * Counters of this process's thread tid: the times the kernel scheduled it
 * in (the third field of /proc/self/task/TID/schedstat: its wake-ups, for a
 * thread that sleeps between short runs) and the read system calls it made
 * (syscr in .../io). False when either cannot be read.
 */
__attribute__((unused)) static int task_counts(int tid, long *wakes, long *reads)
{
	char path[64], line[128];
	long ns, wait;
	int ok = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
	FILE *f = fopen(path, "r");
	if (f && fscanf(f, "%ld %ld %ld", &ns, &wait, wakes) == 3)
		ok++;
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "/proc/self/task/%d/io", tid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "syscr: %ld", reads) == 1)
			ok++;
	if (f)
		fclose(f);
	return ok == 2;
}

/*
 * FIFOs for a test whose children wait on them, and a watchdog for its
 * hang: fifo_dir_make() makes a fresh directory (its path in dir, 64
 * bytes) and the FIFOs named in names (NULL-terminated) in it;
 * fifo_watchdog() forks a process that, once secs have passed (or the
 * test has died), kills the test with SIGKILL, then opens every FIFO for
 * reading and writing at once, which lets a child blocked opening one go
 * on to its end instead of outliving the test, and removes them. The test
 * ends it with fifo_watchdog_end(), which also removes the FIFOs.
 */
__attribute__((unused)) static void fifo_path(char *out, size_t len, const char *dir, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

__attribute__((unused)) static void fifo_dir_make(char dir[64], const char *const names[])
{
	char path[128];

	snprintf(dir, 64, "/tmp/flexsc-test-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(1);
	}
	for (int i = 0; names[i]; i++) {
		fifo_path(path, sizeof path, dir, names[i]);
		if (mkfifo(path, 0600)) {
			perror("mkfifo");
			exit(1);
		}
	}
}

__attribute__((unused)) static void fifo_dir_remove(const char *dir, const char *const names[])
{
	char path[128];

	for (int i = 0; names[i]; i++) {
		fifo_path(path, sizeof path, dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

__attribute__((unused)) static pid_t fifo_watchdog(unsigned secs, const char *dir, const char *const names[])
{
	pid_t test = getpid();
	pid_t pid = fork();

	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid > 0)
		return pid;
	/* inline system calls only from here: this process must not depend on a runtime it may have */
	struct timespec tenth = { 0, 100000000L };
	for (unsigned i = 0; i < secs * 10 && raw3(SYS_getppid, 0, 0, 0) == test; i++)
		raw3(SYS_nanosleep, (long)&tenth, 0, 0);
	if (raw3(SYS_getppid, 0, 0, 0) == test) {
		static const char msg[] = CHECK_NAME ": watchdog: the test did not end in time, killed\n";
		raw3(SYS_write, 2, (long)msg, sizeof msg - 1);
		raw3(SYS_kill, test, SIGKILL, 0);
	}
	long fds[16];
	int n = 0;
	char path[128];
	for (int i = 0; names[i] && n < 16; i++) {
		fifo_path(path, sizeof path, dir, names[i]);
		fds[n++] = raw3(SYS_open, (long)path, O_RDWR | O_NONBLOCK, 0);
	}
	struct timespec half = { 0, 500000000L }; /* the released children open theirs meanwhile */
	raw3(SYS_nanosleep, (long)&half, 0, 0);
	while (n > 0)
		if (fds[--n] >= 0)
			raw3(SYS_close, fds[n], 0, 0);
	for (int i = 0; names[i]; i++) {
		fifo_path(path, sizeof path, dir, names[i]);
		raw3(SYS_unlink, (long)path, 0, 0);
	}
	raw3(SYS_rmdir, (long)dir, 0, 0);
	raw3(SYS_exit_group, 0, 0, 0);
	__builtin_unreachable();
}

__attribute__((unused)) static void fifo_watchdog_end(pid_t wd, const char *dir, const char *const names[])
{
	kill(wd, SIGKILL);
	waitpid(wd, NULL, 0);
	fifo_dir_remove(dir, names);
}

/*
 * A watchdog for a test whose failure is a hang (a handler that never
 * returns): hang_watchdog() forks a child that kills the test with
 * SIGKILL (its exit status then differs from the plain run's) unless
 * hang_watchdog_end() closes the pipe between them within ms. Returns the
 * pipe's write end; the child's pid in *pid.
 */
__attribute__((unused)) static int hang_watchdog(int ms, pid_t *pid)
{
	int pfd[2];

	if (pipe(pfd) || (*pid = fork()) < 0) {
		perror("pipe, fork");
		exit(1);
	}
	if (*pid == 0) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		int r;
		close(pfd[1]);
		while ((r = poll(&p, 1, ms)) < 0 && errno == EINTR)
			;
		if (r == 0) {
			fprintf(stderr, "%s: not done in %d ms: a handler hangs\n", CHECK_NAME, ms);
			kill(getppid(), SIGKILL);
		}
		_exit(0);
	}
	close(pfd[0]);
	return pfd[1];
}

__attribute__((unused)) static void hang_watchdog_end(int fd, pid_t pid)
{
	close(fd);
	waitpid(pid, NULL, 0);
}


#endif
