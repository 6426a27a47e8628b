/*
 * A thread blocked in a system call the runtime cannot see: read() made
 * with the program's own inline `syscall` instruction (as a library with
 * its own system call stubs does), bypassing libc. Another thread must run
 * for it to return: it writes to that pipe. Ten rounds, each answered
 * through a second pipe; between rounds the reader passes a switch point
 * (sched_yield), so the carrier it blocked gives its core back and the next
 * block needs a hand-over again.
 * Under FlexSC-Threads with one carrier this hung before carriers blocked
 * in the kernel handed their core over (docs/threads.md, "A carrier
 * blocked in the kernel"). Then the same once more in a forked child (its
 * runtime starts its carriers, and the monitor, again). A watchdog alarm
 * ends a hang (SIGALRM's default action), so a hang fails within 30 s.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK_NAME "raw_syscall_block"
#include "check.h"

#define ROUNDS 10

static int ping[2], pong[2];

static void *reader(void *arg)
{
	long *got = arg;

	for (int i = 0; i < ROUNDS; i++) {
		char b;
		long r = raw3(SYS_read, ping[0], (long)&b, 1);
		if (r != 1 || b != 'a' + i)
			break;
		(*got)++;
		if (raw3(SYS_write, pong[1], (long)&b, 1) != 1)
			break;
		sched_yield();
	}
	return NULL;
}

static void *writer(void *arg)
{
	long *answered = arg;

	for (int i = 0; i < ROUNDS; i++) {
		char b = (char)('a' + i), c;
		sleep_ms(20); /* the reader is blocked in its read by now, most often */
		if (write(ping[1], &b, 1) != 1 || read(pong[0], &c, 1) != 1 || c != b)
			break;
		(*answered)++;
	}
	return NULL;
}

/* The rounds on fresh pipes; true if all went through. */
static int rounds(void)
{
	long got = 0, answered = 0;

	if (pipe(ping) || pipe(pong)) {
		perror("pipe");
		exit(1);
	}
	pthread_t r = spawn(reader, &got);
	pthread_t w = spawn(writer, &answered);
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	for (int i = 0; i < 2; i++)
		close(ping[i]), close(pong[i]);
	return got == ROUNDS && answered == ROUNDS;
}

int main(void)
{
	alarm(30); /* the watchdog: SIGALRM's default action ends the process */
	result("raw read returned every byte, every round answered", rounds());
	pid_t pid = fork();
	if (pid == 0) {
		alarm(30);
		result("in a forked child too", rounds());
		exit(failed);
	}
	int st = 0;
	result("the child exited 0", pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
					 WEXITSTATUS(st) == 0);
	return failed;
}
