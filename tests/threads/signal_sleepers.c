/*
 * A process-directed signal with a handler runs that handler promptly even
 * when most threads sleep where a signal does not end the wait, as the
 * kernel delivers it to any thread that accepts it. The shape of
 * memcached: main waits in poll() for a self-pipe the SIGTERM handler
 * writes to; threads started after it wait on condition variables that are
 * signalled only at the end (the maintenance threads), others in read() on
 * a pipe (the workers); a thread that blocks SIGTERM sends kill(getpid(),
 * SIGTERM). The handler must run and main's poll must see its byte within
 * 5 s, three rounds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK_NAME "signal_sleepers"
#include "check.h"

#define CONDS 4
#define READERS 2
#define ROUNDS 3

static int self_pipe[2], idle_pipe[2];
static atomic_int handled;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int done;

static void on_term(int sig)
{
	int saved = errno;
	char b = 't';

	(void)sig;
	atomic_fetch_add(&handled, 1);
	if (write(self_pipe[1], &b, 1) != 1)
		_exit(3);
	errno = saved;
}

static void *cond_sleeper(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	while (!done)
		pthread_cond_wait(&cv, &m);
	pthread_mutex_unlock(&m);
	return NULL;
}

static void *reader(void *arg)
{
	char b;

	(void)arg;
	while (read(idle_pipe[0], &b, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static void *killer(void *arg)
{
	sigset_t term;

	(void)arg;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, NULL);
	sleep_ms(200); /* main, the readers and the sleepers are all asleep by now */
	kill(getpid(), SIGTERM);
	return NULL;
}

int main(void)
{
	pthread_t conds[CONDS], readers[READERS];
	struct sigaction sa;

	if (pipe(self_pipe) || pipe(idle_pipe)) {
		perror("pipe");
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	for (int i = 0; i < READERS; i++)
		readers[i] = spawn(reader, NULL);
	for (int i = 0; i < CONDS; i++)
		conds[i] = spawn(cond_sleeper, NULL);
	for (int r = 0; r < ROUNDS; r++) {
		pthread_t k = spawn(killer, NULL);
		struct pollfd p = { .fd = self_pipe[0], .events = POLLIN };
		int n;
		do
			n = poll(&p, 1, 5000);
		while (n < 0 && errno == EINTR);
		char b = 0;
		int got = n == 1 && read(self_pipe[0], &b, 1) == 1 && b == 't';
		pthread_join(k, NULL);
		char what[96];
		snprintf(what, sizeof(what), "round %d: the SIGTERM handler ran and main's poll saw it within 5 s", r + 1);
		result(what, got);
	}
	result("the handler ran once a round", atomic_load(&handled) == ROUNDS);
	pthread_mutex_lock(&m);
	done = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&m);
	for (int i = 0; i < CONDS; i++)
		pthread_join(conds[i], NULL);
	if (write(idle_pipe[1], "xx", READERS) != READERS)
		return 1;
	for (int i = 0; i < READERS; i++)
		pthread_join(readers[i], NULL);
	result("every thread ended", 1);
	return failed;
}
