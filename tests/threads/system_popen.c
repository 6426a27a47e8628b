/*
 * system(), popen() and pclose() in a threaded program: the caller waits
 * for a shell while the rest of the process goes on (glibc 2.36 spawns
 * with clone(CLONE_VFORK) and waits in waitpid, both inside libc).
 * Every shell gets two pipes: it says "started" on descriptor 6 and reads
 * its line from descriptor 5 (the parent's other ends are close-on-exec,
 * so a shell left behind by a hang gets EOF when the test dies).
 *   1. system() of a shell that reads a line another thread writes, once
 *      it has seen the shell start; meanwhile SIGINT and SIGQUIT are
 *      ignored (POSIX: system() ignores them while it waits; the other
 *      thread looks), and afterwards back to their default;
 *   2. system(NULL) says a shell is there; system("exit 3") returns the
 *      shell's status;
 *   3. popen(..., "r") of a shell that reads a line another thread
 *      writes, and pclose() returns its status; popen(..., "w") of one
 *      that checks the line it is given;
 *   4. a thread cancelled in system() (a cancellation point: the request
 *      is made before the call, so that it is pending when the wait
 *      begins) exits with PTHREAD_CANCELED, its shell (which would wait
 *      for good) killed and reaped, SIGINT and SIGQUIT back to their
 *      default;
 *   5. pclose() is no cancellation point in glibc 2.36 (it waits with
 *      cancellation disabled): a thread cancelled there gets the shell's
 *      status and acts on the request at its next cancellation point.
 * A watchdog alarm ends a hang.
 * Under FlexSC-Threads glibc's system() and pclose() waited on the
 * carrier, where the runtime can neither see the wait nor cancel it:
 * check 4's cancellation never acted and its join hung in every
 * configuration. Checks 1 and 3 passed where the monitor handed the
 * blocked carrier's core to a spare (see docs/threads.md, "A carrier
 * blocked in the kernel").
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#define CHECK_NAME "system_popen"
#include "check.h"

/* the parent's ends: the line for the shell, and where it says it started */
static int line_w, started_r;
static int ignored_meanwhile;

static int ignored(int sig)
{
	struct sigaction sa;

	return sigaction(sig, NULL, &sa) == 0 && !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_IGN;
}

static int by_default(int sig)
{
	struct sigaction sa;

	return sigaction(sig, NULL, &sa) == 0 && !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_DFL;
}

/* Reads what the shell writes on descriptor 6: it runs. */
static void wait_started(void)
{
	char buf[16];

	if (read(started_r, buf, sizeof buf) <= 0)
		perror("started");
}

/* Once a shell has started, notes whether SIGINT and SIGQUIT are ignored, and gives it "hello". */
static void *writer(void *arg)
{
	(void)arg;
	wait_started();
	ignored_meanwhile = ignored(SIGINT) && ignored(SIGQUIT);
	if (write(line_w, "hello\n", 6) != 6)
		perror("writer");
	return NULL;
}

static void system_waits(void)
{
	pthread_t t = spawn(writer, NULL);
	int status = system("echo started >&6; read x <&5 && test \"$x\" = hello");
	pthread_join(t, NULL);
	result("system() of a shell that reads what another thread writes", WIFEXITED(status) &&
											WEXITSTATUS(status) == 0);
	result("... SIGINT and SIGQUIT ignored meanwhile", ignored_meanwhile);
	result("... and back to their default after", by_default(SIGINT) && by_default(SIGQUIT));
	result("system(NULL): a shell is there", system(NULL) != 0);
	status = system("exit 3");
	result("system(\"exit 3\"): status 3", WIFEXITED(status) && WEXITSTATUS(status) == 3);
}

static void popen_waits(void)
{
	char line[64] = "";

	pthread_t t = spawn(writer, NULL);
	FILE *f = popen("echo started >&6; read x <&5 && echo \"got $x\"", "r");
	if (!f || !fgets(line, sizeof line, f))
		perror("popen");
	int status = f ? pclose(f) : -1;
	pthread_join(t, NULL);
	result("popen(\"r\") of a shell that reads what another thread writes", strcmp(line, "got hello\n") == 0);
	result("... pclose() returns its status", status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0);

	f = popen("read x && test \"$x\" = given", "w");
	if (!f || fputs("given\n", f) < 0)
		perror("popen w");
	status = f ? pclose(f) : -1;
	result("popen(\"w\"): the shell reads the line", status != -1 && WIFEXITED(status) &&
							     WEXITSTATUS(status) == 0);
}

static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;

/* Once through the gate (already cancelled by then), system() of a shell that would wait for good. */
static void *system_forever(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&gate); /* no cancellation point */
	pthread_mutex_unlock(&gate);
	system("read x <&5");
	return (void *)1L; /* not cancelled */
}

/* Children of the process (those of each of its kernel threads). */
static int children(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d))) {
		char path[300];
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%s/children", e->d_name);
		FILE *f = fopen(path, "r");
		int child;
		while (f && fscanf(f, "%d", &child) == 1)
			n++;
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

/*
 * Cancelled before it calls system() (so the request is pending when
 * system() reaches its wait, however the threads are scheduled): glibc
 * spawns the shell, and its wait acts on the request.
 */
static void system_cancelled(void)
{
	void *r = NULL;

	pthread_mutex_lock(&gate);
	pthread_t t = spawn(system_forever, NULL);
	pthread_cancel(t);
	pthread_mutex_unlock(&gate);
	pthread_join(t, &r);
	result("a thread cancelled in system() exits with PTHREAD_CANCELED", r == PTHREAD_CANCELED);
	result("... its shell was killed and reaped", children() == 0);
	result("... SIGINT and SIGQUIT back to their default", by_default(SIGINT) && by_default(SIGQUIT));
}

static int pclose_status = -1;
static volatile int after_pclose;

/* popen of a shell that waits for a line; pclose; then a cancellation point. */
static void *pclose_waits(void *arg)
{
	(void)arg;
	FILE *f = popen("echo started >&6; read x <&5; exit 5", "r");
	if (!f) {
		perror("popen");
		return NULL;
	}
	pclose_status = pclose(f);
	after_pclose = 1;
	pthread_testcancel();
	return (void *)1L; /* not cancelled */
}

static void pclose_cancelled(void)
{
	void *r = NULL;
	pthread_t t = spawn(pclose_waits, NULL);

	wait_started();
	pthread_cancel(t);
	/* the shell goes on: it gets its line and exits 5 */
	if (write(line_w, "go\n", 3) != 3)
		perror("go");
	pthread_join(t, &r);
	result("a thread cancelled in pclose() gets the shell's status", after_pclose && WIFEXITED(pclose_status) &&
									       WEXITSTATUS(pclose_status) == 5);
	result("... and exits at its next cancellation point", r == PTHREAD_CANCELED);
}

/* Descriptors 5 and 6 for the shells; the parent's ends close on exec. */
static void shell_pipes(void)
{
	int line[2], started[2];

	if (pipe2(line, O_CLOEXEC) || pipe2(started, O_CLOEXEC)) {
		perror("pipe2");
		exit(1);
	}
	/* above 6 first, so that neither dup2 closes the other pipe's end */
	line_w = fcntl(line[1], F_DUPFD_CLOEXEC, 10);
	started_r = fcntl(started[0], F_DUPFD_CLOEXEC, 10);
	int lr = fcntl(line[0], F_DUPFD_CLOEXEC, 10), sw = fcntl(started[1], F_DUPFD_CLOEXEC, 10);
	close(line[0]), close(line[1]), close(started[0]), close(started[1]);
	if (line_w < 0 || started_r < 0 || lr < 0 || sw < 0 || dup2(lr, 5) < 0 || dup2(sw, 6) < 0) {
		perror("pipes");
		exit(1);
	}
	close(lr);
	close(sw);
}

int main(void)
{
	alarm(60);
	shell_pipes();
	system_waits();
	popen_waits();
	system_cancelled();
	pclose_cancelled();
	return failed;
}
