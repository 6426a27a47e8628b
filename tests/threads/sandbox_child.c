/*
 * A forked child that seals itself in as OpenSSH's pre-auth child does
 * (sshd's sandbox-seccomp-filter.c): it drops to nobody when root, sets
 * RLIMIT_FSIZE and RLIMIT_NPROC to 0 and RLIMIT_NOFILE to the descriptors
 * it has, sets no_new_privs and installs a seccomp filter that kills the
 * process at clone or clone3. Then, making no thread, it waits as usual:
 * a nanosleep, a poll for a byte its parent writes 50 ms later, a pause
 * that the parent's SIGUSR1 ends (its handler runs), and exits 0.
 * setrlimit(2): with RLIMIT_NPROC at 0 a clone fails with EAGAIN (root is
 * exempt: hence nobody); seccomp(2): SECCOMP_RET_KILL_PROCESS kills the
 * process with SIGSYS. On NPTL nothing clones, so the child exits 0.
 * Under flexsc-run the runtime's own threads must be there before, or not
 * be needed: the signal thread, started at the child's first wait from
 * the filtered thread, killed it (sshd reset every connection).
 */
#define _GNU_SOURCE
#include <grp.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/resource.h>

#define CHECK_NAME "sandbox_child"
#include "check.h"

static volatile sig_atomic_t got_usr1;

static void on_usr1(int sig)
{
	(void)sig;
	got_usr1 = 1;
}

/* The child: 0, or the step that failed (its exit status). */
static int sandboxed(int rd, int report)
{
	struct rlimit zero = { 0, 0 }, fds;
	struct timespec nap = { 0, 20 * 1000000 };
	struct pollfd p = { rd, POLLIN, 0 };
	char c;

	if (getuid() == 0 && (setgroups(0, NULL) || setgid(65534) || setuid(65534)))
		return 10;
	fds.rlim_cur = fds.rlim_max = (rlim_t)(rd > report ? rd : report) + 1;
	if (setrlimit(RLIMIT_FSIZE, &zero) || setrlimit(RLIMIT_NOFILE, &fds) ||
	    setrlimit(RLIMIT_NPROC, &zero))
		return 11;
	if (seal_no_clone())
		return 12;
	if (write(report, "s", 1) != 1) /* sealed: the parent may go on */
		return 13;
	if (nanosleep(&nap, NULL))
		return 14;
	if (poll(&p, 1, 10000) != 1 || read(rd, &c, 1) != 1 || c != 'x')
		return 15;
	if (write(report, "p", 1) != 1)
		return 16;
	while (!got_usr1)
		pause();
	return 0;
}

int main(void)
{
	int to_child[2], from_child[2], status = -1;
	char c = 0;

	on_signal(SIGUSR1, on_usr1, 0);
	if (pipe(to_child) || pipe(from_child))
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		close(to_child[1]);
		close(from_child[0]);
		_exit(sandboxed(to_child[0], from_child[1]));
	}
	close(to_child[0]);
	close(from_child[1]);
	bool sealed = read(from_child[0], &c, 1) == 1 && c == 's';
	if (!sealed) {
		int w = wait_bounded(pid, 10000);
		printf("%s: skip: the child could not seal itself in (status %#x)\n", CHECK_NAME, w);
		return WIFEXITED(w) && WEXITSTATUS(w) >= 10 && WEXITSTATUS(w) <= 12 ? 77 : 1;
	}
	sleep_ms(50);
	result("the byte written", write(to_child[1], "x", 1) == 1);
	result("the child's poll saw it", read(from_child[0], &c, 1) == 1 && c == 'p');
	sleep_ms(50);
	kill(pid, SIGUSR1);
	status = wait_bounded(pid, 10000);
	resultf(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		"the sealed child exits 0 (status %s %d)", WIFSIGNALED(status) ? "signal" : "exit",
		WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	return failed;
}
