/*
 * posix_spawn suspends only the calling thread until its child execs
 * (glibc's clone with CLONE_VFORK), while the rest of the process goes on:
 * here the child's file actions wait for another thread of the parent.
 *   1. posix_spawn of /bin/cat whose file actions open FIFO "started" for
 *      writing and close it again, then open FIFO "input" for reading
 *      onto its stdin (which waits for a writer), then put a pipe onto its
 *      stdout. Another thread already waits in poll() on "started" (opened
 *      for reading beforehand) when the spawn begins (it says so just
 *      before, and on one core the spawning thread runs only once it
 *      blocks): the poll ends when the child closes "started", and the
 *      thread then opens "input" and writes a line, which cat passes on
 *      (it closes "input", so that cat ends, once the line came back);
 *   2. the same through posix_spawnp, which finds cat on PATH;
 *   3. a thread's own signal mask is the spawned child's (no spawn
 *      attributes): a thread that blocks SIGUSR2 spawns this program
 *      again, which reports its mask.
 * (The thread opens the FIFOs without waiting, O_NONBLOCK and O_RDWR:
 * flexsc's io_uring route opens a FIFO without waiting for its other
 * end, which is another matter.) A watchdog process ends a hang: it kills
 * the test after 60 s and lets a child stuck on a FIFO go (check.h,
 * fifo_watchdog).
 * Under FlexSC-Threads the spawn ran on the carrier, which the kernel
 * suspended until the exec; the other thread's poll, in flight on that
 * carrier, completed but was never reaped (the monitor's poke cannot
 * interrupt the vfork wait), so the child never got past its file
 * actions: checks 1 and 2 hung with one carrier, and with two whenever
 * both threads shared one.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#define CHECK_NAME "spawn_file_actions"
#include "check.h"

extern char **environ;

static const char *const fifos[] = { "started", "input", NULL };
static char dir[64], started[128], input[128];
static sem_t ready, passed;

/* The child has started (it closed "started"), then feeds it its stdin. */
static void *opener(void *arg)
{
	int s = *(int *)arg;
	struct pollfd p = { .fd = s, .events = POLLIN };

	sem_post(&ready);
	if (poll(&p, 1, -1) != 1 || !(p.revents & POLLHUP))
		perror("opener: poll");
	int in = open(input, O_RDWR);
	if (in < 0 || write(in, "through the fifo\n", 17) != 17)
		perror("opener");
	sem_wait(&passed); /* the FIFO's data would go with its last descriptor: kept until cat has it */
	close(in);
	return NULL;
}

/* Spawns cat as described above (by path, or by name through posix_spawnp); its output. */
static void spawn_cat(int by_name, char *out, size_t len, int *status)
{
	posix_spawn_file_actions_t fa;
	char *argv[] = { "cat", NULL };
	int p[2];
	pid_t pid;

	if (pipe(p))
		exit(1);
	int s = open(started, O_RDONLY | O_NONBLOCK); /* so that the child's open does not wait */
	if (s < 0)
		exit(1);
	sem_init(&ready, 0, 0);
	sem_init(&passed, 0, 0);
	pthread_t t = spawn(opener, &s);
	sem_wait(&ready);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 3, started, O_WRONLY, 0);
	posix_spawn_file_actions_addclose(&fa, 3);
	posix_spawn_file_actions_addopen(&fa, 0, input, O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addclose(&fa, p[0]);
	posix_spawn_file_actions_addclose(&fa, p[1]);
	int err = by_name ? posix_spawnp(&pid, "cat", &fa, NULL, argv, environ)
			  : posix_spawn(&pid, "/bin/cat", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	size_t got = 0;
	ssize_t n;
	while (got + 1 < len && (n = read(p[0], out + got, len - 1 - got)) > 0) {
		got += (size_t)n;
		if (out[got - 1] == '\n')
			sem_post(&passed); /* cat has the line: the thread may close the FIFO, cat ends */
	}
	out[got] = 0;
	close(p[0]);
	*status = -1;
	if (err == 0)
		waitpid(pid, status, 0);
	else
		fprintf(stderr, "posix_spawn: %s\n", strerror(err));
	if (got == 0)
		sem_post(&passed);
	pthread_join(t, NULL);
	close(s);
	sem_destroy(&ready);
	sem_destroy(&passed);
}

/* As the spawned child: whether SIGUSR2 is blocked. */
static int report_mask(void)
{
	sigset_t cur;

	pthread_sigmask(SIG_SETMASK, NULL, &cur);
	printf("%s\n", sigismember(&cur, SIGUSR2) ? "blocked" : "unblocked");
	return 0;
}

static void *masked_spawner(void *arg)
{
	char *argv[] = { "spawn_file_actions", "--report-mask", NULL };
	char *out = arg;
	posix_spawn_file_actions_t fa;
	sigset_t s;
	int p[2], status = -1;
	pid_t pid;

	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	if (pipe(p))
		exit(1);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addclose(&fa, p[0]);
	posix_spawn_file_actions_addclose(&fa, p[1]);
	int err = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	ssize_t n = read(p[0], out, 31);
	out[n > 0 ? n : 0] = 0;
	close(p[0]);
	if (err == 0)
		waitpid(pid, &status, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	char out[64], masked[32];
	int status;

	if (argc > 1 && strcmp(argv[1], "--report-mask") == 0)
		return report_mask();
	fifo_dir_make(dir, fifos);
	fifo_path(started, sizeof started, dir, "started");
	fifo_path(input, sizeof input, dir, "input");
	pid_t wd = fifo_watchdog(60, dir, fifos);

	spawn_cat(0, out, sizeof out, &status);
	result("posix_spawn whose file actions wait for another thread", strcmp(out, "through the fifo\n") == 0);
	result("... its exit status", WIFEXITED(status) && WEXITSTATUS(status) == 0);
	spawn_cat(1, out, sizeof out, &status);
	result("posix_spawnp, the same", strcmp(out, "through the fifo\n") == 0);
	result("... its exit status", WIFEXITED(status) && WEXITSTATUS(status) == 0);

	pthread_join(spawn(masked_spawner, masked), NULL);
	result("the spawning thread's signal mask is the child's", strcmp(masked, "blocked\n") == 0);

	fifo_watchdog_end(wd, dir, fifos);
	return failed;
}
