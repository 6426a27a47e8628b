/*
 * A program whose seccomp filter kills the process at membarrier(2), a
 * call it never makes itself, keeps running while its threads signal
 * each other (seccomp(2): SECCOMP_RET_KILL_PROCESS; pthread_kill(3)).
 *   1. a child forked while two threads of the parent signal each other
 *      installs the filter, then its own two threads signal each other
 *      2,000 times: it exits 0;
 *   2. in the parent, while signals go to a thread that runs, two threads
 *      install the filter at the same moment (SECCOMP_FILTER_FLAG_TSYNC,
 *      every thread then has it), then 2,000 more signals: the process
 *      lives, and every signal's handler ran.
 * The child's threads are made after its filter: under flexsc-run each
 * gets a kernel thread of its own, and its reads block nobody else.
 * A child that does not end within 30 s counts as a failure (killed).
 * Deterministic output; exit 0 when every check held.
 */
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>

#define CHECK_NAME "seccomp_membarrier"
#include "check.h"

#define ROUNDS 2000

static _Atomic long handled;
static _Atomic int stop_signals, go_install, installed_ok;
static pthread_t receiver_thread;

static void on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled, 1);
}

/* Installs the filter; the caller has no_new_privs (set first with nnp). */
static int install_filter(unsigned flags, int nnp)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_membarrier, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (nnp && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog) == 0 ? 0 : -1;
}

/* A thread that waits in reads of a pipe, taking signals meanwhile, until a byte comes. */
static void *receiver(void *arg)
{
	int *p = arg;
	char c;

	while (read(p[0], &c, 1) != 1)
		;
	return NULL;
}

/* A thread that takes signals while it runs (yields), until told to stop. */
static _Atomic int stop_spinner;
static void *spinner(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop_spinner))
		sched_yield();
	return NULL;
}

/* Signals the receiver n times, each after its last handler ran; 0 if every one was handled. */
static int signal_rounds(long n)
{
	long start = atomic_load(&handled);

	for (long i = 0; i < n; i++) {
		pthread_kill(receiver_thread, SIGUSR1);
		uint64_t until = now_ms() + 10000;
		while (atomic_load(&handled) < start + i + 1 && now_ms() < until)
			sched_yield();
	}
	return atomic_load(&handled) == start + n ? 0 : -1;
}

static void *installer(void *arg)
{
	(void)arg;
	while (!atomic_load(&go_install))
		;
	if (install_filter(SECCOMP_FILTER_FLAG_TSYNC, 0) == 0)
		atomic_fetch_add(&installed_ok, 1);
	return NULL;
}

static void *background_signals(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop_signals)) {
		pthread_kill(receiver_thread, SIGUSR1);
		sleep_ms(1);
	}
	return NULL;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 }; /* no SA_RESTART: reads end, and go on */
	int p[2];

	sigaction(SIGUSR1, &sa, NULL);
	if (pipe(p))
		return 1;
	receiver_thread = spawn(receiver, p);
	pthread_t bg = spawn(background_signals, NULL);

	/* 1: a child forked meanwhile seals itself, then signals between its own threads */
	pid_t pid = fork();
	if (pid == 0) {
		atomic_store(&stop_signals, 0);
		if (install_filter(0, 1))
			_exit(2);
		int q[2];
		if (pipe(q))
			_exit(3);
		receiver_thread = spawn(receiver, q);
		int r = signal_rounds(ROUNDS);
		atomic_store(&stop_signals, 1);
		if (write(q[1], "x", 1) != 1)
			_exit(4);
		pthread_join(receiver_thread, NULL);
		_exit(r ? 5 : 0);
	}
	int status = -1;
	uint64_t until = now_ms() + 30000;
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (now_ms() > until) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			fprintf(stderr, "seccomp_membarrier: the child did not end within 30 s\n");
			break;
		}
		sleep_ms(10);
	}
	result("a child forked amid signals, sealed against membarrier: its signals go on, exit 0",
	       WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		fprintf(stderr, "seccomp_membarrier: child status %#x\n", status);

	/* 2: two threads seal the process at once (TSYNC), amid signals to a running thread */
	if (write(p[1], "x", 1) != 1)
		return 1;
	pthread_join(receiver_thread, NULL);
	receiver_thread = spawn(spinner, NULL);
	/* no_new_privs first, which the installers then inherit, as seccomp(2) wants of them */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return 1;
	pthread_t a = spawn(installer, NULL), b = spawn(installer, NULL);
	sleep_ms(20);
	atomic_store(&go_install, 1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	result("two threads install the filter at once", atomic_load(&installed_ok) == 2);
	atomic_store(&stop_signals, 1); /* counted from here: only signal_rounds sends */
	pthread_join(bg, NULL);
	result("2,000 signals after: every handler ran", signal_rounds(ROUNDS) == 0);
	atomic_store(&stop_spinner, 1);
	pthread_join(receiver_thread, NULL);
	return failed;
}
