/*
 * vfork and clone children in a threaded program, the way programs spawn
 * others: vfork, then dup2/close/write in the child, then execve (or
 * _exit when it fails):
 *   1. vfork + exec of /bin/echo, its stdout dup2'ed onto a pipe;
 *   2. vfork + exec of a program that does not exist: the child writes
 *      errno to a pipe with write() and _exits 127;
 *   3. vfork with dup2 and close of both ends of two pipes, then exec of
 *      /bin/cat: the parent feeds it and reads it back;
 *   4. while a vfork child lives (until it has read a byte), another
 *      thread of the parent keeps running: it is the one that writes that
 *      byte (on NPTL vfork suspends only the calling thread);
 *   5. clone(CLONE_VM | CLONE_VFORK) on a stack of its own, exec of
 *      /bin/echo;
 *   6. clone without CLONE_VM (a fork): the child writes to a pipe and
 *      returns 42.
 * Every child arms a watchdog first (alarm(20), and SIGKILL when the
 * thread that made it dies, both by raw system calls: a child that takes
 * itself for its parent must not be trusted with a libc call), the
 * parent's waits are bounded (10 s) and the program has a watchdog
 * (alarm(100)).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "vfork_exec"
#include "check.h"

extern char **environ;

/* A system call of the child's own, whatever libc's wrappers think it is. */
static long raw_syscall(long nr, long a, long b, long c, long d)
{
	register long r10 __asm__("r10") = d;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
}

/*
 * First thing in a child: it dies of SIGALRM in 20 s, or of SIGKILL when
 * the thread that made it dies (a child that took itself for its parent
 * may block SIGALRM again in the parent's runtime code).
 */
static void child_watchdog(void)
{
	uint64_t set = 1ull << (SIGALRM - 1);

	raw_syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0);
	raw_syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&set, 0, 8);
	alarm(20);
}

/* The child's wait status, or -1 when it did not end in 10 s (then it is killed). */
/* Reads fd to its end (or 10 s), NUL-terminated. */
static size_t read_bounded(int fd, char *buf, size_t len)
{
	size_t n = 0;
	uint64_t t0 = now_ms();

	while (n + 1 < len && now_ms() - t0 < 10000) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, 1000) <= 0)
			continue;
		ssize_t r = read(fd, buf + n, len - 1 - n);
		if (r > 0)
			n += (size_t)r;
		else if (r == 0 || errno != EINTR)
			break;
	}
	buf[n] = 0;
	return n;
}

static void make_pipe(int p[2], int flags)
{
	if (pipe2(p, flags)) {
		perror("pipe2");
		exit(1);
	}
}

/* In a child: exec argv, or report errno on errfd and _exit(127). */
static void exec_or_report(char *const argv[], int errfd)
{
	execve(argv[0], argv, environ);
	int e = errno;
	if (errfd >= 0)
		(void)!write(errfd, &e, sizeof(e));
	_exit(127);
}

static void test_exec_echo(void)
{
	int out[2], err[2], e = 0;
	char buf[256];
	char *argv[] = { "/bin/echo", "hello", "from", "vfork", NULL };

	make_pipe(out, 0);
	make_pipe(err, O_CLOEXEC);
	pid_t pid = vfork();
	if (pid == 0) {
		child_watchdog();
		dup2(out[1], 1);
		close(out[0]);
		close(out[1]);
		close(err[0]);
		exec_or_report(argv, err[1]);
	}
	close(out[1]);
	close(err[1]);
	read_bounded(out[0], buf, sizeof(buf));
	ssize_t n = read(err[0], &e, sizeof(e)); /* EOF: the exec closed it */
	close(out[0]);
	close(err[0]);
	int status = pid > 0 ? wait_bounded(pid, 10000) : -1;
	int ok = pid > 0 && n == 0 && status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
		 !strcmp(buf, "hello from vfork\n");
	if (!ok)
		fprintf(stderr, "vfork + exec /bin/echo: pid %d, status 0x%x, error bytes %zd, output '%s'\n",
			(int)pid, status, n, buf);
	result("vfork + exec /bin/echo, stdout dup2'ed onto a pipe", ok);
}

static void test_exec_fails(void)
{
	int err[2], e = 0;
	char *argv[] = { "/nonexistent/flexsc-vfork-test", NULL };

	make_pipe(err, O_CLOEXEC);
	pid_t pid = vfork();
	if (pid == 0) {
		child_watchdog();
		close(err[0]);
		exec_or_report(argv, err[1]);
	}
	close(err[1]);
	ssize_t n = -1;
	struct pollfd p = { .fd = err[0], .events = POLLIN };
	if (poll(&p, 1, 10000) == 1)
		n = read(err[0], &e, sizeof(e));
	close(err[0]);
	int status = pid > 0 ? wait_bounded(pid, 10000) : -1;
	int ok = pid > 0 && n == sizeof(e) && e == ENOENT && status != -1 && WIFEXITED(status) &&
		 WEXITSTATUS(status) == 127;
	if (!ok)
		fprintf(stderr, "vfork + failing exec: pid %d, status 0x%x, read %zd, errno %d\n", (int)pid,
			status, n, e);
	result("vfork + exec failure: errno through a pipe, _exit(127)", ok);
}

static void test_dup2_cat(void)
{
	int in[2], out[2];
	char buf[256];
	char *argv[] = { "/bin/cat", NULL };

	make_pipe(in, 0);
	make_pipe(out, 0);
	pid_t pid = vfork();
	if (pid == 0) {
		child_watchdog();
		if (dup2(in[0], 0) != 0 || dup2(out[1], 1) != 1)
			_exit(126);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		exec_or_report(argv, -1);
	}
	close(in[0]);
	close(out[1]);
	const char msg[] = "through cat and back\n";
	ssize_t w = write(in[1], msg, strlen(msg));
	close(in[1]);
	read_bounded(out[0], buf, sizeof(buf));
	close(out[0]);
	int status = pid > 0 ? wait_bounded(pid, 10000) : -1;
	int ok = pid > 0 && w == (ssize_t)strlen(msg) && status != -1 && WIFEXITED(status) &&
		 WEXITSTATUS(status) == 0 && !strcmp(buf, msg);
	if (!ok)
		fprintf(stderr, "vfork + dup2/close + exec /bin/cat: pid %d, status 0x%x, output '%s'\n",
			(int)pid, status, buf);
	result("vfork, dup2 and close of two pipes, exec /bin/cat: fed and read back", ok);
}

/* ---- the parent's other threads run while a vfork child lives ---- */

static int feed[2];
static _Atomic int vforked;

static void *feeder(void *arg)
{
	(void)arg;
	/* until the main thread is in vfork (the child may run before or after this sees it) */
	while (!atomic_load(&vforked))
		sleep_ms(1);
	sleep_ms(20); /* a switch point: needs its carrier */
	(void)!write(feed[1], "x", 1);
	return NULL;
}

static void test_threads_run(void)
{
	make_pipe(feed, 0);
	pthread_t t = spawn(feeder, NULL);
	atomic_store(&vforked, 1);
	pid_t pid = vfork();
	if (pid == 0) {
		/* the parent's thread writes the byte this child waits for */
		char c;
		struct pollfd p = { .fd = feed[0], .events = POLLIN };
		child_watchdog();
		if (poll(&p, 1, 10000) != 1 || read(feed[0], &c, 1) != 1 || c != 'x')
			_exit(1);
		_exit(0);
	}
	int status = pid > 0 ? wait_bounded(pid, 10000) : -1;
	pthread_join(t, NULL);
	close(feed[0]);
	close(feed[1]);
	int ok = pid > 0 && status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
	if (!ok)
		fprintf(stderr, "vfork child waiting for a thread of the parent: pid %d, status 0x%x\n",
			(int)pid, status);
	result("another thread of the parent runs while the vfork child lives", ok);
}

/* ---- clone ---- */

struct clone_arg {
	int out, err;
};

static int clone_exec_child(void *p)
{
	struct clone_arg *a = p;
	char *argv[] = { "/bin/echo", "hello", "from", "clone", NULL };

	child_watchdog();
	dup2(a->out, 1);
	close(a->out);
	exec_or_report(argv, a->err);
	return 127;
}

#define CLONE_STACK (256 * 1024)

static void test_clone_vfork(void)
{
	int out[2], err[2], e = 0;
	char buf[256];
	char *stack = malloc(CLONE_STACK);

	make_pipe(out, O_CLOEXEC);
	make_pipe(err, O_CLOEXEC);
	struct clone_arg a = { dup(out[1]), err[1] }; /* the dup is not close-on-exec */
	pid_t pid = clone(clone_exec_child, stack + CLONE_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, &a);
	close(a.out);
	close(out[1]);
	close(err[1]);
	read_bounded(out[0], buf, sizeof(buf));
	ssize_t n = read(err[0], &e, sizeof(e));
	close(out[0]);
	close(err[0]);
	int status = pid > 0 ? wait_bounded(pid, 10000) : -1;
	free(stack);
	int ok = pid > 0 && n == 0 && status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
		 !strcmp(buf, "hello from clone\n");
	if (!ok)
		fprintf(stderr, "clone(CLONE_VM|CLONE_VFORK) + exec: pid %d, status 0x%x, output '%s'\n",
			(int)pid, status, buf);
	result("clone(CLONE_VM | CLONE_VFORK) + exec /bin/echo", ok);
}

static int clone_fork_child(void *p)
{
	int fd = *(int *)p;
	const char msg[] = "from a clone without CLONE_VM";

	child_watchdog();
	if (write(fd, msg, sizeof(msg) - 1) != (ssize_t)sizeof(msg) - 1)
		return 1;
	close(fd);
	return 42;
}

static void test_clone_fork(void)
{
	int out[2];
	char buf[256];
	char *stack = malloc(CLONE_STACK);

	make_pipe(out, 0);
	pid_t pid = clone(clone_fork_child, stack + CLONE_STACK, SIGCHLD, &out[1]);
	close(out[1]);
	read_bounded(out[0], buf, sizeof(buf));
	close(out[0]);
	int status = pid > 0 ? wait_bounded(pid, 10000) : -1;
	free(stack);
	int ok = pid > 0 && status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 42 &&
		 !strcmp(buf, "from a clone without CLONE_VM");
	if (!ok)
		fprintf(stderr, "clone without CLONE_VM: pid %d, status 0x%x, output '%s'\n", (int)pid,
			status, buf);
	result("clone without CLONE_VM: the child writes to a pipe and exits 42", ok);
}

/* Arguments: the numbers of the checks to run (all without any). */
int main(int argc, char **argv)
{
	void (*tests[])(void) = { test_exec_echo, test_exec_fails, test_dup2_cat,
				  test_threads_run, test_clone_vfork, test_clone_fork };
	int n = (int)(sizeof(tests) / sizeof(tests[0]));

	alarm(100); /* a hang is a failure, never a stuck run */
	for (int i = 0; i < n; i++) {
		bool want = argc < 2;
		for (int a = 1; a < argc; a++)
			want |= atoi(argv[a]) == i + 1;
		if (want)
			tests[i]();
	}
	printf("vfork_exec: %s\n", failed ? "FAIL" : "PASS");
	return failed;
}
