/*
 * A process-directed signal is not lost when the thread it was going to
 * exits: the kernel keeps such a signal pending for the process and gives
 * it to any thread that does not block it, so a thread that blocks it
 * again, or exits, before its handler runs leaves it to the others.
 *
 * Main blocks SIGUSR1. Short-lived threads, one after another, unblock it
 * and exit (every other one computes for a moment and blocks it again
 * first); at the end main unblocks it. A
 * child process sends kill(parent, SIGUSR1) 300 times, each time waiting
 * (up to 5 s) until the handler has counted it. Every signal must be
 * handled: none may stay with a thread that exited or blocked it.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "sig_exit_pending"
#include "check.h"

#define ROUNDS 300

struct shared {
	_Atomic int handled;
	_Atomic int sent;
	_Atomic int done;
	int lost_at;
};

static struct shared *sh;

static void handler(int sig)
{
	(void)sig;
	atomic_fetch_add(&sh->handled, 1);
}

static void *brief(void *arg)
{
	sigset_t set;
	volatile uint64_t spins = 0;

	set = sigset_of(SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	if ((long)arg & 1) {
		/* every other one blocks it again before it exits */
		for (int i = 0; i < 1000; i++)
			spins++;
		pthread_sigmask(SIG_BLOCK, &set, NULL);
	}
	return NULL; /* the others exit with it unblocked */
}

int main(void)
{
	sigset_t set;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	sh->lost_at = -1;
	on_signal(SIGUSR1, handler, SA_RESTART);
	set = sigset_of(SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	pid_t parent = getpid();
	pid_t child = fork();
	if (child == 0) {
		for (int i = 0; i < ROUNDS; i++) {
			kill(parent, SIGUSR1);
			atomic_store(&sh->sent, i + 1);
			double start = now_s();
			while (atomic_load(&sh->handled) <= i && now_s() - start < 5)
				usleep(50); /* not spinning: it may share the parent's CPU */
			if (atomic_load(&sh->handled) <= i) {
				sh->lost_at = i;
				break;
			}
		}
		atomic_store(&sh->done, 1);
		_exit(0);
	}
	/* threads come and go; main lets signals in only between them, briefly */
	for (long n = 0; !atomic_load(&sh->done); n++) {
		pthread_t t = spawn(brief, (void *)n);
		pthread_join(t, NULL);
		if (atomic_load(&sh->handled) < atomic_load(&sh->sent) && !atomic_load(&sh->done)) {
			/* one is pending for the process (or lost): main takes it when it unblocks */
			usleep(200);
		}
	}
	int status;
	waitpid(child, &status, 0);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL); /* anything still pending for the process runs now */
	result("every process-directed signal was handled (none lost with a thread that blocked it or exited)",
	       sh->lost_at < 0 && atomic_load(&sh->handled) == ROUNDS);
	if (failed)
		fprintf(stderr, "lost at signal %d; handled %d\n", sh->lost_at, atomic_load(&sh->handled));
	return failed;
}
