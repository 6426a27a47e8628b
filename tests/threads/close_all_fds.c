/*
 * A program may close every descriptor above 2, as daemons do at start
 * (close_range(2), glibc's closefrom, or a loop of close(2)), and then
 * open(2) gives the lowest number not open: 3 (POSIX). Threads go on
 * working after it: a pipe ping-pong between two threads, a timed
 * condition wait, a sleep.
 *   1. close_range(3, ~0U, 0), then open and pipe get 3, 4 and 5;
 *   2. close(fd) for every fd from 3 to 1023, the same.
 * An alarm of 60 s ends a hang.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/syscall.h>

#define CHECK_NAME "close_all_fds"
#include "check.h"

#define ROUNDS 200

static int ping[2], pong[2];

static void *echo(void *arg)
{
	char c;

	(void)arg;
	for (int i = 0; i < ROUNDS; i++)
		if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1)
			return (void *)1;
	return NULL;
}

static int threads_work(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
	struct timespec until;
	char c = 'x';
	void *ret;
	int ok = 1;

	if (pipe(ping) || pipe(pong))
		return 0;
	pthread_t t = spawn(echo, NULL);
	for (int i = 0; i < ROUNDS && ok; i++)
		ok = write(ping[1], &c, 1) == 1 && read(pong[0], &c, 1) == 1;
	pthread_join(t, &ret);
	ok = ok && !ret;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += 20000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&m);
	ok = ok && pthread_cond_timedwait(&cv, &m, &until) == ETIMEDOUT;
	pthread_mutex_unlock(&m);
	sleep_ms(10);
	for (int i = 0; i < 2; i++) {
		close(ping[i]);
		close(pong[i]);
	}
	return ok;
}

/* open and pipe give the lowest numbers: 3, then 4 and 5 */
static int lowest_free(void)
{
	int p[2];
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int ok = fd == 3 && pipe(p) == 0 && p[0] == 4 && p[1] == 5;

	if (!ok)
		printf("close_all_fds: got %d, then %d and %d\n", fd, p[0], p[1]);
	close(fd);
	close(p[0]);
	close(p[1]);
	return ok;
}

int main(void)
{
	alarm(60);
	result("threads work before", threads_work());
	result("close_range(3, ~0U, 0) returns 0", syscall(SYS_close_range, 3, ~0U, 0) == 0);
	result("then the lowest numbers are free", lowest_free());
	result("and threads work", threads_work());
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	result("after close() of 3 to 1023, the lowest numbers are free", lowest_free());
	result("and threads work", threads_work());
	return failed;
}
