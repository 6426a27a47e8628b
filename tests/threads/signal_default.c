/*
 * Signals left to their default action end the process at once, whatever
 * its threads are doing, as the kernel does for NPTL threads (each case in
 * a forked child, which the parent signals and waits for, 20 s at most):
 *   1. SIGTERM while main waits in pthread_join for a thread blocked in
 *      read(): killed by SIGTERM;
 *   2. SIGQUIT (default: core dump; RLIMIT_CORE 0 and not dumpable, so
 *      that no core file nor core_pattern pipe handler is made) while main
 *      sleeps: killed by SIGQUIT;
 *   3. SIGUSR1 that every thread blocks stays pending and kills nothing;
 *      SIGTERM then does;
 *   4. SIGTERM with a handler: the handler runs, the child exits 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "signal_default"
#include "check.h"

static int block_pipe[2];

static void *blocked_reader(void *arg)
{
	char c;

	(void)arg;
	if (read(block_pipe[0], &c, 1) < 0)
		perror("read");
	return NULL;
}

/* The child tells the parent it is ready by writing a byte to `ready`. */
static void child_join(int ready)
{
	if (pipe(block_pipe))
		_exit(2);
	pthread_t t = spawn(blocked_reader, NULL);
	if (write(ready, "r", 1) != 1)
		_exit(2);
	pthread_join(t, NULL);
	_exit(3); /* the reader never returns */
}

static void child_sleep(int ready)
{
	struct rlimit none = { 0, 0 };

	/*
	 * RLIMIT_CORE 0 stops a core file, but a core_pattern that pipes to a
	 * handler (systemd-coredump, apport) still runs it, which can take
	 * long before the child can be reaped. Not dumpable: no dump at all.
	 */
	setrlimit(RLIMIT_CORE, &none);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (write(ready, "r", 1) != 1)
		_exit(2);
	sleep(60); /* the parent's SIGQUIT ends it long before */
	_exit(3);
}

static void child_all_block_usr1(int ready)
{
	sigset_t s;

	s = sigset_of(SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &s, NULL); /* the reader inherits it */
	child_join(ready);
}

static volatile sig_atomic_t got_term;

static void on_term(int sig)
{
	(void)sig;
	got_term = 1;
}

static void child_handler(int ready)
{

	on_signal(SIGTERM, on_term, 0);
	if (write(ready, "r", 1) != 1)
		_exit(2);
	for (int i = 0; i < 20000 && !got_term; i++) /* 20 s: the parent's wait */
		sleep_ms(1);
	_exit(got_term ? 0 : 4);
}

/*
 * Status of the child after it got sigs[0..n) (200 ms apart); -1 if it
 * lived 20 s on (generous: a child that ends is reaped at once).
 */
static int run(void (*child)(int), const int *sigs, int n, int *alive_between)
{
	int p[2];
	char c;

	if (pipe(p))
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(p[0]);
		child(p[1]);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1)
		return -1;
	close(p[0]);
	sleep_ms(100); /* into its wait */
	*alive_between = 1;
	for (int i = 0; i < n; i++) {
		if (i) {
			sleep_ms(200);
			*alive_between &= waitpid(pid, NULL, WNOHANG) == 0;
		}
		kill(pid, sigs[i]);
	}
	for (int i = 0; i < 2000; i++) {
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		sleep_ms(10);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

static int killed_by(int st, int sig)
{
	return st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == sig;
}

int main(void)
{
	int alive, st;
	int term[] = { SIGTERM }, quit[] = { SIGQUIT }, usr1_term[] = { SIGUSR1, SIGTERM };

	st = run(child_join, term, 1, &alive);
	result("SIGTERM while main joins a blocked thread: killed by SIGTERM", killed_by(st, SIGTERM));
	st = run(child_sleep, quit, 1, &alive);
	result("SIGQUIT while main sleeps: killed by SIGQUIT", killed_by(st, SIGQUIT));
	st = run(child_all_block_usr1, usr1_term, 2, &alive);
	result("SIGUSR1 every thread blocks kills nothing; SIGTERM then does", alive && killed_by(st, SIGTERM));
	st = run(child_handler, term, 1, &alive);
	result("SIGTERM with a handler: handled, exit 0", st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return failed;
}
