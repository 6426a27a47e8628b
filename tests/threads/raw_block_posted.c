/*
 * A carrier blocks in a system call the runtime does not see (an inline
 * `syscall` read of pipe 1) while a call another thread posted on the same
 * carrier is still waiting there (a libc read of pipe 2, posted just
 * before: with one carrier it is not even handed to the kernel yet, the
 * batch goes out when the carrier has nothing left to run). A third
 * thread writes pipe 2; the second thread's read must then complete and it
 * writes pipe 1, which ends the first thread's read. Under FlexSC-Threads
 * with one carrier the spare that takes the core cannot run the second
 * thread until the blocked carrier submits and reaps its call: the
 * monitor's poke (docs/threads.md, "A carrier blocked in the kernel") does.
 * Without the poke this hangs; a watchdog alarm ends a hang.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CHECK_NAME "raw_block_posted"
#include "check.h"

static int p1[2], p2[2];

static void *raw_reader(void *arg)
{
	char b = 0;

	*(long *)arg = raw3(SYS_read, p1[0], (long)&b, 1) == 1 && b == 'z';
	return NULL;
}

static void *relay(void *arg)
{
	char b;

	(void)arg;
	if (read(p2[0], &b, 1) == 1)
		(void)!write(p1[1], &b, 1);
	return NULL;
}

static void *writer(void *arg)
{
	(void)arg;
	sleep_ms(50);
	(void)!write(p2[1], "z", 1);
	return NULL;
}

int main(void)
{
	long ok = 0;

	alarm(30); /* the watchdog: SIGALRM's default action ends the process */
	if (pipe(p1) || pipe(p2)) {
		perror("pipe");
		return 1;
	}
	pthread_t r2 = spawn(relay, NULL);
	sleep_ms(10); /* the relay's read is posted by now */
	pthread_t r1 = spawn(raw_reader, &ok);
	pthread_t w = spawn(writer, NULL);
	pthread_join(r1, NULL);
	pthread_join(r2, NULL);
	pthread_join(w, NULL);
	result("the raw read got the byte relayed through the posted read", ok);
	return failed;
}
