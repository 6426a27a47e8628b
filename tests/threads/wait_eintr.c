/*
 * A handler installed without SA_RESTART ends a blocking call with EINTR
 * (signal(7): "the call fails with the error EINTR" for fcntl F_SETLKW,
 * flock, wait(2) and mq_receive, which a handler with SA_RESTART would
 * restart), in a program that has had threads (4 made and joined first).
 * Each call, twice: main waits for a lock a forked child holds for 2 s, for
 * that child to exit, or for a message on an empty queue, and a timer
 * (setitimer, 200 ms) sends SIGALRM to the process: the call returns -1
 * with EINTR, and the handler ran once.
 * Under FlexSC-Threads the signal thread often took SIGALRM and poked the
 * carrier, whose own handler has SA_RESTART: the kernel restarted the call,
 * which then waited for the lock holder or the child (2 s) or for ever.
 */
#define _GNU_SOURCE
#include <mqueue.h>
#include <stdbool.h>
#include <sys/file.h>
#include <sys/time.h>

#define CHECK_NAME "wait_eintr"
#include "check.h"

static volatile sig_atomic_t handled;

static void on_alarm(int sig)
{
	(void)sig;
	handled++;
}

static void *brief(void *arg)
{
	sleep_ms(5);
	return arg;
}

enum what { SETLKW, FLOCK, WAITPID, MQ };

/* One try: -1 and errno, or the result; *ran: how often the handler ran. */
static int one(enum what w, int *err, int *ran)
{
	char path[] = "/tmp/flexsc-wait-eintr-XXXXXX";
	int fd = mkstemp(path), p[2], r = -2;
	struct itimerval in200 = { { 0, 0 }, { 0, 200000 } };
	char c;

	if (fd < 0 || pipe(p))
		return -3;
	pid_t kid = fork();
	if (kid == 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
		if (w == SETLKW)
			fcntl(fd, F_SETLK, &fl);
		if (w == FLOCK) {
			int f2 = open(path, O_RDWR);
			flock(f2, LOCK_EX);
		}
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		sleep(2);
		_exit(0);
	}
	if (read(p[0], &c, 1) != 1)
		return -3;
	handled = 0;
	setitimer(ITIMER_REAL, &in200, NULL);
	if (w == SETLKW) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
		r = fcntl(fd, F_SETLKW, &fl);
	} else if (w == FLOCK) {
		r = flock(fd, LOCK_EX);
	} else if (w == WAITPID) {
		r = waitpid(kid, NULL, 0);
	} else {
		char name[40], buf[16];
		struct mq_attr at = { .mq_maxmsg = 4, .mq_msgsize = 16 };
		snprintf(name, sizeof(name), "/flexsc-wait-eintr-%d", (int)getpid());
		mqd_t q = mq_open(name, O_CREAT | O_RDONLY, 0600, &at);
		if (q == (mqd_t)-1) {
			r = -4;
		} else {
			r = (int)mq_receive(q, buf, sizeof(buf), NULL);
			int e = errno;
			mq_close(q);
			mq_unlink(name);
			errno = e;
		}
	}
	*err = errno;
	*ran = handled;
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	unlink(path);
	close(fd);
	close(p[0]);
	close(p[1]);
	return r;
}

int main(void)
{
	static const char *const names[] = { "fcntl(F_SETLKW)", "flock", "waitpid", "mq_receive" };
	struct sigaction sa = { .sa_handler = on_alarm }; /* no SA_RESTART */
	pthread_t t[4];

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	for (int i = 0; i < 4; i++)
		t[i] = spawn(brief, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	for (int w = SETLKW; w <= MQ; w++) {
		bool ok = true;
		int err = 0, ran = 0, r = 0;
		for (int k = 0; k < 2 && ok; k++) {
			r = one((enum what)w, &err, &ran);
			ok = r == -1 && err == EINTR && ran == 1;
		}
		if (r == -4) {
			printf("%s: %s: no message queue here (%s), not checked\n", CHECK_NAME, names[w], strerror(err));
			continue;
		}
		resultf(ok, "%s cut short by a handler without SA_RESTART: EINTR (got %d, %s, handler ran %d)",
			names[w], r, r == -1 ? strerror(err) : "no error", ran);
	}
	return failed;
}
