/*
 * Calls that Linux never ends with EINTR stay so when a handler without
 * SA_RESTART keeps interrupting their thread. signal(7): only calls that
 * wait on a "slow" device (a pipe, a socket, a terminal) fail with EINTR,
 * and "a disk is not a slow device"; close(2): Linux releases the
 * descriptor first, whatever happens; read(2) with data ready returns it.
 *
 * The main thread opens, writes, reads, stats, syncs and closes a file,
 * makes and closes pipes and sockets, and reads a socket it has just
 * written to, for a fixed number of rounds, while a second thread sends
 * it SIGUSR1 (pthread_kill) and the process SIGUSR2 (kill) every 50 us;
 * both handlers are installed without SA_RESTART, as daemons install
 * their SIGCHLD handlers.
 *
 * Under flexsc-run a call that a signal reached before it had started
 * (still in its carrier's batch, or queued for a syscall thread) failed
 * with EINTR: Ruby's TCPServer#close and File writes raised
 * Errno::EINTR, and a close that fails so leaves the descriptor open.
 */
#define _GNU_SOURCE
#include <sys/socket.h>

#define CHECK_NAME "sig_no_eintr_files"
#include "check.h"

#define ROUNDS 3000

static pthread_t target;
static _Atomic int stop;
static _Atomic long handled;
/* per kind of call: failed with EINTR, failed otherwise */
static long file_eintr, file_other, close_eintr, close_other, ready_eintr, ready_other;

static void on_sig(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled, 1);
}

static void *sender(void *arg)
{
	sigset_t both;

	sigemptyset(&both);
	sigaddset(&both, SIGUSR1);
	sigaddset(&both, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &both, NULL); /* the process's SIGUSR2 goes to the target */
	for (unsigned i = 0; !atomic_load(&stop); i++) {
		if (i % 2)
			kill(getpid(), SIGUSR2);
		else
			pthread_kill(target, SIGUSR1);
		usleep(50);
	}
	return arg;
}

static void count(long r, long *eintr, long *other)
{
	if (r < 0 && errno == EINTR)
		(*eintr)++;
	else if (r < 0)
		(*other)++;
}

int main(void)
{
	char path[] = "/tmp/flexsc-no-eintr-XXXXXX";
	char buf[512] = { 1 };
	struct stat st;
	int fd = mkstemp(path), sp[2];

	if (fd < 0 || close(fd) || socketpair(AF_UNIX, SOCK_STREAM, 0, sp)) {
		perror("mkstemp, socketpair");
		return 1;
	}
	target = pthread_self();
	on_signal(SIGUSR1, on_sig, 0);
	on_signal(SIGUSR2, on_sig, 0);
	pthread_t t = spawn(sender, NULL);

	for (int i = 0; i < ROUNDS; i++) {
		int p[2];

		fd = open(path, O_RDWR | O_APPEND);
		count(fd, &file_eintr, &file_other);
		if (fd >= 0) {
			count(write(fd, buf, sizeof(buf)), &file_eintr, &file_other);
			count(pwrite(fd, buf, sizeof(buf), 0), &file_eintr, &file_other);
			count(pread(fd, buf, sizeof(buf), 0), &file_eintr, &file_other);
			count(fstat(fd, &st), &file_eintr, &file_other);
			if (i % 100 == 0)
				count(fdatasync(fd), &file_eintr, &file_other);
			count(close(fd), &file_eintr, &file_other);
		}
		count(stat(path, &st), &file_eintr, &file_other);
		if (i % 500 == 499)
			count(truncate(path, 0), &file_eintr, &file_other);

		if (pipe(p) == 0) {
			count(close(p[0]), &close_eintr, &close_other);
			count(close(p[1]), &close_eintr, &close_other);
		}
		int s = socket(AF_INET, SOCK_STREAM, 0);
		if (s >= 0)
			count(close(s), &close_eintr, &close_other);

		count(write(sp[0], "x", 1), &ready_eintr, &ready_other);
		count(read(sp[1], buf, 1), &ready_eintr, &ready_other);
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	unlink(path);

	if (file_eintr || file_other || close_eintr || close_other || ready_eintr || ready_other)
		fprintf(stderr, "%s: EINTR/other failures: file %ld/%ld, close %ld/%ld, ready socket %ld/%ld\n",
			CHECK_NAME, file_eintr, file_other, close_eintr, close_other, ready_eintr, ready_other);
	result("the handlers ran while the calls were made", atomic_load(&handled) > 0);
	result("open, write, pwrite, pread, fstat, fdatasync, close, stat, truncate of a file never fail with EINTR",
	       file_eintr == 0);
	result("close of pipes and sockets never fails with EINTR", close_eintr == 0);
	result("write and read of a socket with data ready never fail with EINTR", ready_eintr == 0);
	result("no call failed otherwise", !file_other && !close_other && !ready_other);
	return failed;
}
