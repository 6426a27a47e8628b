/*
 * A program with one thread, never more: its blocking calls behave as the
 * kernel's (signal(7), read(2), write(2), poll(2), epoll_wait(2),
 * fifo(7)). Under flexsc-run's default engine such a thread makes its
 * calls itself rather than posting them, so this is where that path and
 * the signals that cut it short are checked.
 *   1. read of an empty pipe, a signal from another process whose handler
 *      has no SA_RESTART: -1, EINTR, the handler ran;
 *   2. the same with SA_RESTART: the read goes on and returns the byte the
 *      other process writes after its signals;
 *   3. poll and epoll_wait with a 10-s timeout and an SA_RESTART handler:
 *      -1, EINTR (never restarted);
 *   4. a timer's SIGALRM (setitimer, the process's own) ends a read with
 *      EINTR;
 *   5. a signal the thread blocks does not end its read: the read returns
 *      the data, then the signal is pending and runs once unblocked;
 *   6. O_NONBLOCK: read of an empty pipe -1 EAGAIN; a 1 MiB write into an
 *      empty pipe writes the pipe's capacity (F_GETPIPE_SZ), a partial
 *      write, then -1 EAGAIN;
 *   7. a blocking 1 MiB write into a pipe read slowly by a child: all of
 *      it, and the child reads it all;
 *   8. open(2) of a FIFO for reading waits until a child opens it for
 *      writing, then reads what it wrote;
 *   9. poll of an empty pipe with a 100-ms timeout returns 0 after at
 *      least 100 ms.
 * The other process signals every 20 ms until told to stop (the first
 * signal may come before the call waits). Prints no timings.
 * Deterministic output; exit 0 when every check held.
 */
#define _GNU_SOURCE
#define CHECK_NAME "alone_calls"
#include "check.h"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/time.h>

static volatile sig_atomic_t handled;

static void on_sig(int sig)
{
	(void)sig;
	handled++;
}

static void install(int sig, int flags)
{
	struct sigaction sa = { .sa_handler = on_sig, .sa_flags = flags };

	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL)) {
		perror("sigaction");
		exit(1);
	}
}

/*
 * A child that sends SIGUSR1 to this process every 20 ms, `n` times (0:
 * until killed), then writes one byte into wfd when wfd >= 0, and exits.
 */
static pid_t signaller(int n, int wfd)
{
	pid_t parent = getpid(), pid = fork();

	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		for (int i = 0; n == 0 || i < n; i++) {
			sleep_ms(20);
			kill(parent, SIGUSR1);
		}
		if (wfd >= 0 && write(wfd, "x", 1) != 1)
			_exit(1);
		_exit(0);
	}
	return pid;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	wait_bounded(pid, 10000);
}

static void no_restart(void)
{
	int p[2];
	char c;

	if (pipe(p))
		exit(1);
	install(SIGUSR1, 0);
	handled = 0;
	pid_t pid = signaller(0, -1);
	ssize_t r = read(p[0], &c, 1);
	int err = errno;
	stop(pid);
	result("read, a handler without SA_RESTART: -1, EINTR", r == -1 && err == EINTR);
	result("... the handler ran", handled > 0);
	close(p[0]);
	close(p[1]);
}

static void restart(void)
{
	int p[2];
	char c = 0;

	if (pipe(p))
		exit(1);
	install(SIGUSR1, SA_RESTART);
	handled = 0;
	pid_t pid = signaller(5, p[1]);
	ssize_t r = read(p[0], &c, 1);
	int status = wait_bounded(pid, 10000);
	result("read, an SA_RESTART handler: restarted, returns the byte written after the signals",
	       r == 1 && c == 'x');
	result("... the handler ran", handled > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(p[0]);
	close(p[1]);
}

static void never_restarted(void)
{
	int p[2];

	if (pipe(p))
		exit(1);
	install(SIGUSR1, SA_RESTART);
	struct pollfd pfd = { .fd = p[0], .events = POLLIN };
	pid_t pid = signaller(0, -1);
	int r = poll(&pfd, 1, 10000);
	int err = errno;
	stop(pid);
	result("poll(10 s), an SA_RESTART handler: -1, EINTR", r == -1 && err == EINTR);

	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = p[0] }, out;
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev))
		exit(1);
	pid = signaller(0, -1);
	r = epoll_wait(ep, &out, 1, 10000);
	err = errno;
	stop(pid);
	result("epoll_wait(10 s), an SA_RESTART handler: -1, EINTR", r == -1 && err == EINTR);
	close(ep);
	close(p[0]);
	close(p[1]);
}

static void own_timer(void)
{
	int p[2];
	char c;
	struct itimerval it = { .it_value = { 0, 50000 } }, off = { 0 };

	if (pipe(p))
		exit(1);
	install(SIGALRM, 0);
	handled = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	ssize_t r = read(p[0], &c, 1);
	int err = errno;
	setitimer(ITIMER_REAL, &off, NULL);
	result("read, the process's own SIGALRM (no SA_RESTART): -1, EINTR", r == -1 && err == EINTR && handled == 1);
	close(p[0]);
	close(p[1]);
}

static void blocked_signal(void)
{
	int p[2];
	char c = 0;
	sigset_t usr1 = sigset_of(SIGUSR1), pending;

	if (pipe(p))
		exit(1);
	install(SIGUSR1, 0);
	handled = 0;
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	pid_t pid = signaller(3, p[1]);
	ssize_t r = read(p[0], &c, 1);
	int status = wait_bounded(pid, 10000);
	sigpending(&pending);
	result("read with the signal blocked: not cut short, returns the byte", r == 1 && c == 'x');
	result("... the signal is pending, its handler not run",
	       sigismember(&pending, SIGUSR1) == 1 && handled == 0 && WIFEXITED(status));
	sigprocmask(SIG_UNBLOCK, &usr1, NULL);
	result("... unblocked, the handler runs once", handled == 1);
	close(p[0]);
	close(p[1]);
}

static void nonblocking(void)
{
	int p[2];
	char c;
	static char big[1 << 20];

	if (pipe2(p, O_NONBLOCK))
		exit(1);
	ssize_t r = read(p[0], &c, 1);
	result("O_NONBLOCK read of an empty pipe: -1, EAGAIN", r == -1 && errno == EAGAIN);
	int cap = fcntl(p[1], F_GETPIPE_SZ);
	r = write(p[1], big, sizeof(big));
	result("O_NONBLOCK 1 MiB write into an empty pipe: the pipe's capacity, a partial write", cap > 0 && r == cap);
	r = write(p[1], big, sizeof(big));
	result("... then, the pipe full: -1, EAGAIN", r == -1 && errno == EAGAIN);
	close(p[0]);
	close(p[1]);
}

static void slow_reader(void)
{
	int p[2];
	static char big[1 << 20];

	if (pipe(p))
		exit(1);
	pid_t pid = fork();
	if (pid < 0)
		exit(1);
	if (pid == 0) {
		char buf[4096];
		size_t got = 0;
		ssize_t n;
		close(p[1]);
		sleep_ms(50);
		while ((n = read(p[0], buf, sizeof(buf))) > 0)
			got += (size_t)n;
		_exit(got == sizeof(big) ? 0 : 1);
	}
	close(p[0]);
	memset(big, 'b', sizeof(big));
	ssize_t r = write(p[1], big, sizeof(big));
	close(p[1]);
	int status = wait_bounded(pid, 10000);
	result("blocking 1 MiB write into a pipe a child reads: all of it", r == (ssize_t)sizeof(big));
	result("... and the child read all of it", WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void fifo_open(void)
{
	char dir[] = "/tmp/alone_calls.XXXXXX", path[64], c = 0;

	if (!mkdtemp(dir))
		exit(1);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	if (mkfifo(path, 0600))
		exit(1);
	pid_t pid = fork();
	if (pid < 0)
		exit(1);
	if (pid == 0) {
		sleep_ms(50);
		int fd = open(path, O_WRONLY);
		_exit(fd >= 0 && write(fd, "y", 1) == 1 ? 0 : 1);
	}
	int fd = open(path, O_RDONLY);
	ssize_t r = fd >= 0 ? read(fd, &c, 1) : -1;
	int status = wait_bounded(pid, 10000);
	result("open of a FIFO for reading waits for its writer, then reads its byte",
	       fd >= 0 && r == 1 && c == 'y' && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (fd >= 0)
		close(fd);
	unlink(path);
	rmdir(dir);
}

static void timeout(void)
{
	int p[2];

	if (pipe(p))
		exit(1);
	struct pollfd pfd = { .fd = p[0], .events = POLLIN };
	uint64_t t0 = now_ms();
	int r = poll(&pfd, 1, 100);
	uint64_t waited = now_ms() - t0;
	result("poll of an empty pipe, 100-ms timeout: 0, after at least 100 ms", r == 0 && waited >= 100);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	no_restart();
	restart();
	never_restarted();
	own_timer();
	blocked_signal();
	nonblocking();
	slow_reader();
	fifo_open();
	timeout();
	return failed;
}
