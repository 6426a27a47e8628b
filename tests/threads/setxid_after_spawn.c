/*
 * set*id after starting programs: setresuid(2) and setresgid(2) change the
 * credentials of the whole process, every thread (POSIX; glibc signals
 * each thread it knows and waits until each has made the change, nptl(7)
 * "setxid"). A program that has run posix_spawn, system and vfork (which
 * the runtime gives a kernel thread of its own) then calls
 * setresuid(-1, -1, -1) and setresgid(-1, -1, -1): "unchanged", allowed
 * to anyone, and still made on every thread. On NPTL both return 0 at once.
 * Under flexsc-run the kernel thread that ran posix_spawn was left idle
 * with every signal blocked, glibc's SIGSETXID too, and the set*id waited
 * for it for ever (each OpenSSH session process hung at its end so). Run in
 * a child, so that a hang is a failure after 10 s, with a second thread
 * waiting, as a server's would.
 */
#define _GNU_SOURCE
#include <spawn.h>

#define CHECK_NAME "setxid_after_spawn"
#include "check.h"

extern char **environ;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int done;

static void *waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	while (!done)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* The child: 0, or the step that failed (its exit status). */
static int starts_then_setxid(void)
{
	char *argv[] = { "true", NULL };
	pthread_t t;
	pid_t pid;
	int status;

	if (pthread_create(&t, NULL, waiter, NULL))
		return 10;
	if (posix_spawnp(&pid, "true", NULL, NULL, argv, environ) ||
	    waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 11;
	if (system("true") != 0)
		return 12;
	pid = vfork();
	if (pid == 0)
		_exit(0);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 13;
	if (setresuid((uid_t)-1, (uid_t)-1, (uid_t)-1))
		return 14;
	if (setresgid((gid_t)-1, (gid_t)-1, (gid_t)-1))
		return 15;
	pthread_mutex_lock(&lock);
	done = 1;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
	return pthread_join(t, NULL) ? 16 : 0;
}

int main(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(starts_then_setxid());
	int status = pid > 0 ? wait_bounded(pid, 10000) : -1;
	resultf(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
		"posix_spawn, system, vfork, then setresuid and setresgid all return (%s %d)",
		status == -1 ? "hung, killed after 10 s" : WIFSIGNALED(status) ? "signal" : "exit",
		status == -1 ? 0 : WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	return failed;
}
