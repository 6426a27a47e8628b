/*
 * Conformance: pthread_atfork, fork from a thread, posix_spawn (POSIX
 * pthread_atfork, fork, posix_spawn, posix_spawnp,
 * posix_spawn_file_actions_*, posix_spawnattr_*), what fork_exec.c and
 * vfork_exec.c do not already show:
 *   1. three handler sets registered A, B, C: prepare runs C, B, A; the
 *      parent's and the child's run A, B, C (each side records its order;
 *      the child sends its record through a pipe);
 *   2. fork from a thread that is not main: the child has one thread, the
 *      forking one (pthread_self equals the parent's value for it); a busy
 *      thread of the parent does not run in the child (its counter stays);
 *      the child can create and join a thread, and exits with a status;
 *      the parent's main, blocked in pthread_join meanwhile, goes on;
 *   3. posix_spawn of /bin/sh -c with file actions: dup2 of a pipe onto
 *      stdout, close of the pipe's ends, open of a file onto descriptor 5
 *      (the child writes through it); the parent reads the output and the
 *      exit status;
 *   4. posix_spawnp finds "sh" on PATH; posix_spawn of a file that does not
 *      exist returns ENOENT (glibc reports the exec failure);
 *   5. spawn attributes, checked by this program run again as the child
 *      (/proc/self/exe with an argument): POSIX_SPAWN_SETSIGMASK gives it
 *      SIGUSR1 blocked; POSIX_SPAWN_SETSIGDEF gives it SIG_DFL for a
 *      signal the parent ignores, which it otherwise inherits ignored;
 *      POSIX_SPAWN_SETPGROUP 0 puts it in a process group of its own.
 * Deterministic output; exit 0 when every check held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK_NAME "posix_spawn_atfork"
#include "check.h"

extern char **environ;

static char order[32];
static int norder;

static void rec(char c)
{
	if (norder < (int)sizeof order - 1)
		order[norder++] = c;
}

static void prep_a(void) { rec('a'); }
static void prep_b(void) { rec('b'); }
static void prep_c(void) { rec('c'); }
static void par_a(void) { rec('A'); }
static void par_b(void) { rec('B'); }
static void par_c(void) { rec('C'); }
static void chi_a(void) { rec('1'); }
static void chi_b(void) { rec('2'); }
static void chi_c(void) { rec('3'); }

static void atfork_order(void)
{
	int p[2], status = -1;
	char child[32] = "";

	pthread_atfork(prep_a, par_a, chi_a);
	pthread_atfork(prep_b, par_b, chi_b);
	pthread_atfork(prep_c, par_c, chi_c);
	if (pipe(p))
		exit(1);
	norder = 0;
	pid_t pid = fork();

	if (pid == 0) {
		/* the child's record: the prepare handlers (run before fork) then its own */
		if (write(p[1], order, (size_t)norder) != norder)
			_exit(2);
		_exit(0);
	}
	close(p[1]);
	ssize_t n = read(p[0], child, sizeof child - 1);

	close(p[0]);
	if (n > 0)
		child[n] = 0;
	waitpid(pid, &status, 0);
	order[norder] = 0;
	result("prepare handlers C, B, A, then the parent's A, B, C", strcmp(order, "cbaABC") == 0);
	result("in the child: prepare C, B, A, then the child's A, B, C", strcmp(child, "cba123") == 0);
}

static atomic_long busy_count;
static atomic_int busy_stop;
static pthread_t forker_self;

static void *busy(void *arg)
{
	(void)arg;
	while (!atomic_load(&busy_stop)) {
		atomic_fetch_add(&busy_count, 1);
		sleep_ms(1);
	}
	return NULL;
}

static void *child_thread(void *arg)
{
	return arg;
}

static void *forker(void *arg)
{
	int status = -1;

	(void)arg;
	forker_self = pthread_self();
	pid_t pid = fork();

	if (pid == 0) {
		alarm(20);
		long before = atomic_load(&busy_count);
		void *r = NULL;
		pthread_t t;
		int code = 0;

		if (!pthread_equal(pthread_self(), forker_self))
			code |= 1;
		sleep_ms(50);
		if (atomic_load(&busy_count) != before)
			code |= 2;
		if (pthread_create(&t, NULL, child_thread, (void *)9L) || pthread_join(t, &r) || r != (void *)9L)
			code |= 4;
		_exit(40 + code);
	}
	waitpid(pid, &status, 0);
	return (void *)(long)(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

static void fork_from_thread(void)
{
	pthread_t b = spawn(busy, NULL);
	void *r;

	pthread_join(spawn(forker, NULL), &r);
	atomic_store(&busy_stop, 1);
	pthread_join(b, NULL);
	long code = (long)r;

	result("fork from a thread: the child exits with its status", code >= 40 && code < 48);
	result("... its one thread is the forking one (pthread_self)", code >= 40 && !(code & 1));
	result("... the parent's busy thread does not run in it", code >= 40 && !(code & 2));
	result("... it creates and joins a thread", code >= 40 && !(code & 4));
}

/*
 * Spawns path with stdout on a pipe it reads to the end; with open_path,
 * also opens that file for writing onto descriptor 5, after the pipe's
 * ends are closed (so whatever numbers they had, 5 is the file).
 */
static int spawn_read(pid_t *pid, const char *path, char *const argv[], const char *open_path,
		      int use_path, char *out, size_t outlen, int *status)
{
	int p[2];
	posix_spawn_file_actions_t fa;

	if (pipe(p))
		exit(1);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addclose(&fa, p[0]);
	posix_spawn_file_actions_addclose(&fa, p[1]);
	if (open_path)
		posix_spawn_file_actions_addopen(&fa, 5, open_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int err = use_path ? posix_spawnp(pid, path, &fa, NULL, argv, environ)
			   : posix_spawn(pid, path, &fa, NULL, argv, environ);

	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	size_t got = 0;
	ssize_t n;

	while (got + 1 < outlen && (n = read(p[0], out + got, outlen - 1 - got)) > 0)
		got += (size_t)n;
	out[got] = 0;
	close(p[0]);
	*status = -1;
	if (err == 0)
		waitpid(*pid, status, 0);
	return err;
}

static void spawns(void)
{
	char out[256], file[64], buf[64] = "";
	pid_t pid;
	int status, err;

	snprintf(file, sizeof file, "/tmp/flexsc-posix-spawn-%d", (int)getpid());
	char *argv1[] = { "sh", "-c", "echo spawned; echo to-five >&5; exit 7", NULL };

	err = spawn_read(&pid, "/bin/sh", argv1, file, 0, out, sizeof out, &status);
	result_err("posix_spawn of /bin/sh with file actions", err, 0);
	result("its stdout came through the dup2'ed pipe", strcmp(out, "spawned\n") == 0);
	result("its exit status is 7", WIFEXITED(status) && WEXITSTATUS(status) == 7);
	int fd = open(file, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;

	if (n > 0)
		buf[n] = 0;
	if (fd >= 0)
		close(fd);
	unlink(file);
	result("the addopen'ed descriptor 5 wrote the file", strcmp(buf, "to-five\n") == 0);

	char *argv2[] = { "sh", "-c", "echo found", NULL };

	err = spawn_read(&pid, "sh", argv2, NULL, 1, out, sizeof out, &status);
	result("posix_spawnp finds sh on PATH", err == 0 && strcmp(out, "found\n") == 0 && WIFEXITED(status) &&
							WEXITSTATUS(status) == 0);
	char *argv3[] = { "nope", NULL };

	err = posix_spawn(&pid, "/nonexistent/flexsc-no-such-program", NULL, NULL, argv3, environ);
	if (err == 0)
		waitpid(pid, &status, 0);
	result_err("posix_spawn of a missing file: ENOENT", err, ENOENT);
}

/* As the spawned child: one letter per property, on stdout. */
static int child_report(void)
{
	sigset_t cur;
	struct sigaction sa;

	pthread_sigmask(SIG_SETMASK, NULL, &cur);
	sigaction(SIGUSR2, NULL, &sa);
	printf("%c%c%c\n", sigismember(&cur, SIGUSR1) ? 'M' : 'm',
	       sa.sa_handler == SIG_DFL ? 'D' : sa.sa_handler == SIG_IGN ? 'I' : '?',
	       getpgrp() == getpid() ? 'G' : 'g');
	return 0;
}

static void attributes(void)
{
	posix_spawnattr_t at;
	sigset_t s;
	char out[64];
	pid_t pid;
	int status, err, p[2];
	char *argv[] = { "posix_spawn_atfork", "--report", NULL };

	signal(SIGUSR2, SIG_IGN);
	for (int variant = 0; variant < 2; variant++) {
		posix_spawn_file_actions_t fa;

		if (pipe(p))
			exit(1);
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_adddup2(&fa, p[1], 1);
		posix_spawn_file_actions_addclose(&fa, p[0]);
		posix_spawn_file_actions_addclose(&fa, p[1]);
		posix_spawnattr_init(&at);
		if (variant) {
			sigemptyset(&s);
			sigaddset(&s, SIGUSR1);
			posix_spawnattr_setsigmask(&at, &s);
			sigemptyset(&s);
			sigaddset(&s, SIGUSR2);
			posix_spawnattr_setsigdefault(&at, &s);
			posix_spawnattr_setpgroup(&at, 0);
			posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
							     POSIX_SPAWN_SETPGROUP);
		}
		err = posix_spawn(&pid, "/proc/self/exe", &fa, &at, argv, environ);
		posix_spawnattr_destroy(&at);
		posix_spawn_file_actions_destroy(&fa);
		close(p[1]);
		ssize_t n = read(p[0], out, sizeof out - 1);

		out[n > 0 ? n : 0] = 0;
		close(p[0]);
		status = -1;
		if (err == 0)
			waitpid(pid, &status, 0);
		if (variant) {
			result("spawn attributes: SIGUSR1 blocked, SIGUSR2 default, own process group",
			       err == 0 && strcmp(out, "MDG\n") == 0);
		} else {
			result("no attributes: mask inherited (none), SIGUSR2 ignored, parent's group",
			       err == 0 && strcmp(out, "mIg\n") == 0);
		}
	}
	signal(SIGUSR2, SIG_DFL);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--report") == 0)
		return child_report();
	alarm(60);
	atfork_order();
	fork_from_thread();
	spawns();
	attributes();
	return failed;
}
