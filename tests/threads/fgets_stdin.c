/*
 * A thread blocked in fgets(stdin), whose read stdio makes internally (the
 * runtime does not see it), while stdin is a pipe fed by another thread of
 * the process. Under FlexSC-Threads with one carrier this hung before
 * carriers blocked in the kernel handed their core over. A watchdog alarm
 * ends a hang (SIGALRM's default action).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CHECK_NAME "fgets_stdin"
#include "check.h"

#define LINES 20

static int wfd;

static void *feeder(void *arg)
{
	(void)arg;
	for (int i = 0; i < LINES; i++) {
		char line[32];
		int n = snprintf(line, sizeof(line), "line %d\n", i);
		sleep_ms(i % 5 == 0 ? 20 : 1); /* the reader waits in fgets now and then */
		if (write(wfd, line, (size_t)n) != n)
			break;
	}
	close(wfd);
	return NULL;
}

int main(void)
{
	int p[2], lines = 0, in_order = 1;
	char buf[64];

	alarm(30); /* the watchdog */
	if (pipe(p) || dup2(p[0], 0) < 0) {
		perror("pipe");
		return 1;
	}
	close(p[0]);
	wfd = p[1];
	pthread_t t = spawn(feeder, NULL);
	while (fgets(buf, sizeof(buf), stdin)) {
		char want[32];
		snprintf(want, sizeof(want), "line %d\n", lines);
		in_order &= !strcmp(buf, want);
		lines++;
	}
	pthread_join(t, NULL);
	result("every line read by fgets", lines == LINES);
	result("in order", in_order);
	return failed;
}
