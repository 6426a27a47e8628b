/*
 * Deferred cancellation of a thread that waits in the kernel at a
 * cancellation point (pthreads(7)) that is no interposed call:
 * fcntl(F_SETLKW) for a lock a forked child holds for 3 s, waitpid for
 * that child, msgrcv and mq_receive on empty queues. Main cancels the
 * thread after 100 ms and joins it (at most 2 s): the join gives
 * PTHREAD_CANCELED and the thread's cleanup handler ran. Other threads were
 * made and joined first.
 * Under FlexSC-Threads pthread_cancel sent nothing to a thread inside a
 * system call the runtime does not see: the lock wait and waitpid ran to
 * their end (3 s), uncancelled, and msgrcv and mq_receive waited for ever.
 */
#define _GNU_SOURCE
#include <mqueue.h>
#include <stdbool.h>
#include <sys/ipc.h>
#include <sys/msg.h>

#define CHECK_NAME "cancel_kernel_waits"
#include "check.h"

enum what { SETLKW, WAITPID, MSGRCV, MQ };

struct wait_in {
	enum what what;
	int fd;
	pid_t kid;
	int q;
	mqd_t mq;
	atomic_int cleaned;
	atomic_int started;
};

static void cleanup(void *arg)
{
	atomic_store(&((struct wait_in *)arg)->cleaned, 1);
}

static void *waiter(void *arg)
{
	struct wait_in *w = arg;
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	struct { long type; char text[8]; } m;
	char buf[16];

	pthread_cleanup_push(cleanup, w);
	atomic_store(&w->started, 1);
	switch (w->what) {
	case SETLKW: fcntl(w->fd, F_SETLKW, &fl); break;
	case WAITPID: waitpid(w->kid, NULL, 0); break;
	case MSGRCV: msgrcv(w->q, &m, sizeof(m.text), 0, 0); break;
	case MQ: mq_receive(w->mq, buf, sizeof(buf), NULL); break;
	}
	pthread_cleanup_pop(0);
	return NULL;
}

static void *brief(void *arg)
{
	sleep_ms(5);
	return arg;
}

int main(void)
{
	static const char *const names[] = { "fcntl(F_SETLKW)", "waitpid", "msgrcv", "mq_receive" };
	char path[] = "/tmp/flexsc-cancel-waits-XXXXXX", mqname[48];
	int fd = mkstemp(path), p[2];
	char c;

	for (int i = 0; i < 4; i++)
		pthread_join(spawn(brief, NULL), NULL);
	if (fd < 0 || pipe(p))
		return 1;
	pid_t kid = fork();
	if (kid == 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
		fcntl(fd, F_SETLK, &fl);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		sleep(3);
		_exit(0);
	}
	if (read(p[0], &c, 1) != 1)
		return 1;
	snprintf(mqname, sizeof(mqname), "/flexsc-cancel-waits-%d", (int)getpid());
	struct mq_attr at = { .mq_maxmsg = 4, .mq_msgsize = 16 };
	mqd_t mq = mq_open(mqname, O_CREAT | O_RDONLY, 0600, &at);
	int q = msgget(IPC_PRIVATE, 0600);

	for (int w = SETLKW; w <= MQ; w++) {
		if ((w == MSGRCV && q < 0) || (w == MQ && mq == (mqd_t)-1)) {
			printf("%s: %s: no queue here, not checked\n", CHECK_NAME, names[w]);
			continue;
		}
		struct wait_in in = { .what = (enum what)w, .fd = fd, .kid = kid, .q = q, .mq = mq };
		void *ret = NULL;
		pthread_t t = spawn(waiter, &in);
		while (!atomic_load(&in.started))
			sleep_ms(1);
		sleep_ms(100);
		pthread_cancel(t);
		struct timespec until = ts_in_ms(CLOCK_REALTIME, 2000);
		bool joined = pthread_timedjoin_np(t, &ret, &until) == 0;
		resultf(joined && ret == PTHREAD_CANCELED && atomic_load(&in.cleaned),
			"a thread in %s is cancelled there, its cleanup handler run", names[w]);
		if (!joined)
			break; /* it still waits: the process's end takes it */
	}
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	unlink(path);
	if (q >= 0)
		msgctl(q, IPC_RMID, NULL);
	if (mq != (mqd_t)-1)
		mq_unlink(mqname);
	return failed;
}
