/*
 * A forked child that seals itself in with an allow list, as OpenSSH's
 * pre-auth child does (sshd's sandbox-seccomp-filter.c): every system call
 * not on the list kills the calling thread (SECCOMP_RET_KILL_THREAD, which
 * is sshd's SECCOMP_RET_KILL). The list is sshd's, plus the three calls
 * glibc's sigpending and sigtimedwait make and the return from a handler.
 * Then the child makes these calls with pointers into pages it mapped
 * before the filter and never passed to a call, as a program's fresh
 * buffers are, and one with a bad pointer:
 *
 *   sigprocmask(SIG_BLOCK, set, old)      0, old written (sigprocmask(2))
 *   sigpending(set), in a loop of         0, until the SIGUSR1 its parent
 *     nanosleep(req, rem) of 1 ms           sends is pending (at most 10 s)
 *   sigtimedwait(set, info, 1 ms)         that SIGUSR1, info filled in
 *   sigtimedwait(set, NULL, 1 ms)         -1 EAGAIN: nothing pending now
 *   rt_sigprocmask(SIG_BLOCK, 8, 0, 8)    -1 EFAULT (syscall(2))
 *
 * and exits 0. On NPTL each wrapper makes its own system call. Under
 * flexsc-run the runtime served the signal calls and the sleep itself and
 * checked the pointers with process_vm_readv and process_vm_writev, which
 * no allow list has: the filter killed the child's thread, the runtime's
 * signal thread kept the process alive, and it hung (sshd's logins hung
 * so, 1 in 20 under load). The parent waits 10 s at most.
 */
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#define CHECK_NAME "sandbox_allowlist"
#include "check.h"

static const int allowed[] = {
	/* OpenSSH 9's pre-auth list (fstat, open, openat, stat: EACCES there, a kill here) */
	SYS_brk, SYS_clock_gettime, SYS_close, SYS_exit, SYS_exit_group, SYS_futex, SYS_geteuid, SYS_getpid,
	SYS_getrandom, SYS_gettid, SYS_gettimeofday, SYS_getuid, SYS_madvise, SYS_mmap, SYS_mprotect,
	SYS_mremap, SYS_munmap, SYS_nanosleep, SYS_clock_nanosleep, SYS_poll, SYS_ppoll, SYS_select,
	SYS_pselect6, SYS_read, SYS_rt_sigprocmask, SYS_sched_yield, SYS_shutdown, SYS_write, SYS_writev,
	/* this test's own */
	SYS_rt_sigpending, SYS_rt_sigtimedwait, SYS_rt_sigreturn,
};
#define NALLOWED (sizeof(allowed) / sizeof(allowed[0]))

static int seal_allow_list(void)
{
	struct sock_filter f[NALLOWED + 3];
	unsigned n = 0;

	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	for (unsigned i = 0; i < NALLOWED; i++) /* a match jumps over the rest to the ALLOW */
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)allowed[i],
						      (unsigned char)(NALLOWED - i), 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_THREAD);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { (unsigned short)n, f };

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) ? -1 : 0;
}

/* The child: 0, or the step that failed (its exit status). */
static int sandboxed(int report)
{
	/* one fresh page per buffer */
	char *pages = mmap(NULL, 6 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pages == MAP_FAILED)
		return 10;
	sigset_t *set = (sigset_t *)pages, *old = (sigset_t *)(pages + 4096), *pend = (sigset_t *)(pages + 2 * 4096);
	struct timespec *req = (struct timespec *)(pages + 3 * 4096), *rem = (struct timespec *)(pages + 4 * 4096);
	siginfo_t *info = (siginfo_t *)(pages + 5 * 4096);

	if (seal_allow_list())
		return 11;
	sigemptyset(set);
	sigaddset(set, SIGUSR1);
	memset(old, 0xff, sizeof(*old));
	if (sigprocmask(SIG_BLOCK, set, old) || sigismember(old, SIGUSR1) != 0)
		return 13;
	if (write(report, "s", 1) != 1) /* sealed, SIGUSR1 blocked: the parent sends it */
		return 12;
	*req = (struct timespec){ 0, 1000000 };
	int waited = 0;
	do {
		if (sigpending(pend))
			return 14;
		if (sigismember(pend, SIGUSR1) == 1)
			break;
		if (nanosleep(req, rem))
			return 15;
	} while (++waited < 10000);
	if (waited == 10000)
		return 16;
	struct timespec ms = { 0, 1000000 };
	if (sigtimedwait(set, info, &ms) != SIGUSR1 || info->si_signo != SIGUSR1)
		return 17;
	errno = 0;
	if (sigtimedwait(set, NULL, &ms) != -1 || errno != EAGAIN)
		return 18;
	errno = 0;
	if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, 8L, 0L, 8L) != -1 || errno != EFAULT)
		return 19;
	if (write(report, "d", 1) != 1)
		return 20;
	return 0;
}

int main(void)
{
	int from_child[2];
	char c = 0;

	if (pipe(from_child))
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		close(from_child[0]);
		_exit(sandboxed(from_child[1]));
	}
	close(from_child[1]);
	struct pollfd p = { from_child[0], POLLIN, 0 };
	bool sealed = poll(&p, 1, 10000) == 1 && read(from_child[0], &c, 1) == 1 && c == 's';
	if (!sealed) {
		int w = wait_bounded(pid, 10000);
		if (w != -1 && WIFEXITED(w) && WEXITSTATUS(w) == 11) {
			printf("%s: skip: the child could not seal itself in\n", CHECK_NAME);
			return 77;
		}
		resultf(0, "the child sealed itself in and blocked SIGUSR1 (%s %d)",
			w == -1 ? "hung, killed after 10 s" : WIFSIGNALED(w) ? "signal" : "exit",
			w == -1 ? 0 : WIFSIGNALED(w) ? WTERMSIG(w) : WEXITSTATUS(w));
		return failed;
	}
	kill(pid, SIGUSR1);
	int status = wait_bounded(pid, 10000);
	result("the sealed child's calls all returned (it wrote its last byte)",
	       read(from_child[0], &c, 1) == 1 && c == 'd');
	resultf(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
		"the sealed child exits 0 (%s %d)",
		status == -1 ? "hung, killed after 10 s" : WIFSIGNALED(status) ? "signal" : "exit",
		status == -1 ? 0 : WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	return failed;
}
