/*
 * fork from a threaded program:
 *   1. with worker threads running (malloc, mutexes, pipe I/O), fork; the
 *      child (one thread) creates threads of its own, does pipe I/O and
 *      mutex work, sends its result to the parent and exits with a status;
 *      pthread_atfork handlers run in the parent and the child;
 *   2. fork + exec of /bin/echo, its output read through a pipe;
 *   3. fork + exec of this program with an argument: a threaded child that
 *      prints and exits with a status of its own.
 * The parent checks statuses and outputs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK_NAME "fork_exec"
#include "check.h"

/* ---- busy workers in the parent while it forks ---- */

static _Atomic int stop;
static pthread_mutex_t work_lock = PTHREAD_MUTEX_INITIALIZER;
static long work_done;

static void *busy(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		void *p = malloc(1000);
		pthread_mutex_lock(&work_lock);
		work_done++;
		pthread_mutex_unlock(&work_lock);
		free(p);
		usleep(200);
	}
	return NULL;
}

/* ---- atfork handlers: the usual way to keep a lock usable in the child ---- */

static _Atomic int prepared, in_parent, in_child;

static void at_prepare(void)
{
	pthread_mutex_lock(&work_lock);
	atomic_fetch_add(&prepared, 1);
}

static void at_parent(void)
{
	atomic_fetch_add(&in_parent, 1);
	pthread_mutex_unlock(&work_lock);
}

static void at_child(void)
{
	atomic_fetch_add(&in_child, 1);
	pthread_mutex_unlock(&work_lock);
}

/* ---- the child's own threads ---- */

#define CHILD_THREADS 4
static int child_pipe[2];
static pthread_mutex_t child_lock = PTHREAD_MUTEX_INITIALIZER;
static long child_sum;

static void *child_writer(void *arg)
{
	long id = (long)(intptr_t)arg;

	for (long i = 0; i < 100; i++) {
		long v = id * 1000 + i;
		if (write(child_pipe[1], &v, sizeof(v)) != sizeof(v))
			return (void *)1;
	}
	return NULL;
}

static void *child_reader(void *arg)
{
	(void)arg;
	long v, sum = 0;

	for (int i = 0; i < CHILD_THREADS * 100; i++) {
		if (read(child_pipe[0], &v, sizeof(v)) != sizeof(v))
			return (void *)1;
		sum += v;
	}
	pthread_mutex_lock(&child_lock);
	child_sum += sum;
	pthread_mutex_unlock(&child_lock);
	return NULL;
}

/* In the forked child: threads, I/O, a mutex; the sum to `out`; exit 42. */
static void child_main(int out)
{
	pthread_t w[CHILD_THREADS], r;
	int bad = 0;

	if (atomic_load(&in_child) != 1)
		bad = 1;
	/* the atfork handlers keep this lock usable; malloc's are glibc's business */
	pthread_mutex_lock(&work_lock);
	work_done = -1;
	pthread_mutex_unlock(&work_lock);
	free(malloc(12345));
	if (pipe(child_pipe))
		_exit(3);
	/* the writers fill the pipe (3,200 bytes: it never blocks), then a reader empties it */
	for (long i = 0; i < CHILD_THREADS; i++)
		w[i] = spawn(child_writer, (void *)(intptr_t)i);
	for (int i = 0; i < CHILD_THREADS; i++) {
		void *ret;
		pthread_join(w[i], &ret);
		bad |= ret != NULL;
	}
	r = spawn(child_reader, NULL);
	void *ret;
	pthread_join(r, &ret);
	bad |= ret != NULL;
	char msg[64];
	int len = snprintf(msg, sizeof(msg), "child sum %ld atfork %d%s", child_sum,
			   atomic_load(&in_child), bad ? " bad" : "");
	if (write(out, msg, (size_t)len) != len)
		_exit(4);
	exit(bad ? 5 : 42);
}

static void test_fork_threads(void)
{
	pthread_t workers[4];
	int p[2], status = 0, ok = 1;
	char buf[256];

	pthread_atfork(at_prepare, at_parent, at_child);
	atomic_store(&stop, 0);
	for (int i = 0; i < 4; i++)
		workers[i] = spawn(busy, NULL);
	usleep(20000);
	if (pipe(p)) {
		perror("pipe");
		exit(1);
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		close(p[0]);
		child_main(p[1]);
	}
	close(p[1]);
	read_all(p[0], buf, sizeof(buf));
	close(p[0]);
	if (waitpid(pid, &status, 0) != pid) {
		perror("waitpid");
		ok = 0;
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 4; i++)
		pthread_join(workers[i], NULL);
	/* sum of id * 1000 + i over 4 writers x 100 items */
	long want = 0;
	for (long id = 0; id < CHILD_THREADS; id++)
		for (long i = 0; i < 100; i++)
			want += id * 1000 + i;
	char want_msg[64];
	snprintf(want_msg, sizeof(want_msg), "child sum %ld atfork 1", want);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 42) {
		fprintf(stderr, "forked child: status 0x%x (want exit 42)\n", status);
		ok = 0;
	}
	if (strcmp(buf, want_msg)) {
		fprintf(stderr, "forked child said '%s', want '%s'\n", buf, want_msg);
		ok = 0;
	}
	if (atomic_load(&prepared) != 1 || atomic_load(&in_parent) != 1 || work_done <= 0) {
		fprintf(stderr, "parent: prepare ran %d times, parent handler %d, work %ld\n",
			atomic_load(&prepared), atomic_load(&in_parent), work_done);
		ok = 0;
	}
	result("fork with threads running; the child makes threads, does I/O, exits 42", ok);
}

/* In a forked child: execs argv (an array of char *, NULL last). */
static int exec_argv(void *argv)
{
	execv(((char **)argv)[0], (char **)argv);
	return 127;
}

static void test_exec_echo(void)
{
	char buf[256];
	char *argv[] = { "/bin/echo", "hello", "from", "exec", NULL };
	pthread_t t = spawn(busy, NULL); /* a thread alive across the fork */

	atomic_store(&stop, 0);
	int status = run_captured(exec_argv, argv, buf, sizeof(buf));
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && !strcmp(buf, "hello from exec\n");
	if (!ok)
		fprintf(stderr, "/bin/echo: status 0x%x, output '%s'\n", status, buf);
	result("fork + exec /bin/echo, output through a pipe", ok);
}

/* ---- this program as an exec'ed child ---- */

static void *self_child_thread(void *arg)
{
	return (void *)((intptr_t)arg * 2);
}

static int self_child(void)
{
	pthread_t t[8];
	long sum = 0;

	for (long i = 0; i < 8; i++)
		t[i] = spawn(self_child_thread, (void *)(intptr_t)i);
	for (int i = 0; i < 8; i++) {
		void *r;
		pthread_join(t[i], &r);
		sum += (long)(intptr_t)r;
	}
	printf("self child: sum %ld\n", sum);
	return 7;
}

static void test_exec_self(const char *self)
{
	char buf[256];
	char *argv[] = { (char *)self, "--child", NULL };
	int status = run_captured(exec_argv, argv, buf, sizeof(buf));
	int ok = WIFEXITED(status) && WEXITSTATUS(status) == 7 && !strcmp(buf, "self child: sum 56\n");

	if (!ok)
		fprintf(stderr, "%s --child: status 0x%x, output '%s'\n", self, status, buf);
	result("fork + exec of itself: a threaded child exits 7", ok);
}

int main(int argc, char **argv)
{
	char self[4096];
	ssize_t n;

	if (argc > 1 && !strcmp(argv[1], "--child"))
		return self_child();
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		perror("readlink /proc/self/exe");
		return 1;
	}
	self[n] = 0;
	test_fork_threads();
	test_exec_echo();
	test_exec_self(self);
	printf("fork_exec: %s\n", failed ? "FAIL" : "PASS");
	return failed;
}
