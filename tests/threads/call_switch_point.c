/*
 * Threads that never stop calling do not starve the others.
 *
 * Eight pairs of threads ping-pong a byte over two pipes without end (each
 * read waits for the partner's write), so there are always more of them
 * than cores; main sleeps 50 ms, then tells them to stop and joins them.
 * On NPTL the kernel shares the cores among all of them, and main's sleep
 * ends on time. A runtime that lets a thread keep its core for as long as
 * it only makes system calls, none of them waiting long, never runs main
 * again: it hangs. Each byte carries its sender's round number, which the
 * partner checks.
 *
 * Deterministic output; exit 0 when every check held.
 */
#define _GNU_SOURCE
#include <stdatomic.h>

#define CHECK_NAME "call_switch_point"
#include "check.h"

#define PAIRS 8
#define THREADS (2 * PAIRS)

static int pipes[THREADS][2]; /* thread i reads pipes[i][0]; its partner i ^ 1 writes pipes[i][1] */
static _Atomic int stop;
static _Atomic int wrong;

static void *pingpong(void *arg)
{
	int id = (int)(intptr_t)arg, partner = id ^ 1;
	unsigned char out = 0, in;

	for (unsigned round = 0;; round++) {
		out = (unsigned char)round;
		if (write(pipes[partner][1], &out, 1) != 1 || read(pipes[id][0], &in, 1) != 1) {
			atomic_fetch_add(&wrong, 1);
			return NULL;
		}
		if (in != out) /* the partner is in the same round */
			atomic_fetch_add(&wrong, 1);
		if (atomic_load(&stop))
			break;
	}
	/* the partner may be in its next round, waiting for its byte */
	out = (unsigned char)(out + 1);
	if (write(pipes[partner][1], &out, 1) != 1)
		atomic_fetch_add(&wrong, 1);
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];

	for (int i = 0; i < THREADS; i++) {
		if (pipe(pipes[i])) {
			perror("pipe");
			return 1;
		}
	}
	for (int i = 0; i < THREADS; i++)
		t[i] = spawn(pingpong, (void *)(intptr_t)i);
	sleep_ms(50);
	atomic_store(&stop, 1);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	result("main's sleep ends while 16 threads ping-pong over pipes, and stops them", 1);
	result("every byte came from the partner's same round", atomic_load(&wrong) == 0);
	return failed;
}
