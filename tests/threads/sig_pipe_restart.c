/*
 * SA_RESTART restarts an interrupted write(2) (signal(7)): a thread blocked
 * writing to a full pipe, signalled while blocked by a handler installed
 * with SA_RESTART, goes on writing after the handler and returns the full
 * count once a reader drains the pipe; it never fails with EINTR.
 *   1. pthread_kill to the writer;
 *   2. kill(getpid()) while every other thread blocks the signal.
 * Each step also checks that the handler ran while the write was blocked.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#define CHECK_NAME "sig_pipe_restart"
#include "check.h"

#define CHUNK 4096

static int fds[2];
static _Atomic int hits, writing, written_back;
static __thread volatile sig_atomic_t tls_hits;
static ssize_t wret;
static int werr;

static void handler(int sig)
{
	(void)sig;
	tls_hits++;
	atomic_fetch_add(&hits, 1);
}

static void *writer(void *arg)
{
	static char buf[CHUNK];
	sigset_t one;

	(void)arg;
	one = sigset_of(SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	memset(buf, 'w', sizeof(buf));
	atomic_store(&writing, 1);
	wret = write(fds[1], buf, sizeof(buf));
	werr = wret < 0 ? errno : 0;
	atomic_store(&written_back, 1);
	return (void *)(long)tls_hits;
}

static void step(const char *name, int process)
{
	char what[160], buf[65536];

	if (pipe(fds))
		exit(1);
	/* fill the pipe */
	int fl = fcntl(fds[1], F_GETFL);
	fcntl(fds[1], F_SETFL, fl | O_NONBLOCK);
	while (write(fds[1], buf, sizeof(buf)) > 0)
		;
	while (write(fds[1], buf, 1) > 0)
		;
	fcntl(fds[1], F_SETFL, fl);
	atomic_store(&hits, 0);
	atomic_store(&writing, 0);
	atomic_store(&written_back, 0);
	pthread_t t = spawn(writer, NULL);
	while (!atomic_load(&writing))
		sleep_ms(1);
	sleep_ms(100); /* blocked in write() by now */
	if (process)
		kill(getpid(), SIGUSR1);
	else
		pthread_kill(t, SIGUSR1);
	for (int i = 0; i < 5000 && !atomic_load(&hits); i++)
		sleep_ms(1);
	int ran = atomic_load(&hits) == 1;
	sleep_ms(100);
	int still = !atomic_load(&written_back);
	/* drain until the writer is done */
	long total = 0;
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	for (int i = 0; i < 5000 && !atomic_load(&written_back); i++) {
		ssize_t n = read(fds[0], buf, sizeof(buf));
		if (n > 0)
			total += n;
		else
			sleep_ms(1);
	}
	void *th;
	pthread_join(t, &th);
	snprintf(what, sizeof(what), "%s: the handler ran on the writer while it was blocked", name);
	result(what, ran && (long)th == 1);
	snprintf(what, sizeof(what), "%s: the write went on after the handler", name);
	result(what, still);
	snprintf(what, sizeof(what), "%s: and returned the full count, not EINTR", name);
	result(what, wret == CHUNK && werr == 0);
	close(fds[0]);
	close(fds[1]);
}

int main(void)
{
	sigset_t one;

	on_signal(SIGUSR1, handler, SA_RESTART);
	one = sigset_of(SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &one, NULL); /* the writer unblocks it */
	step("pthread_kill", 0);
	step("kill", 1);
	return failed;
}
