/*
 * Conformance: the siginfo of signals that wait, pending, until a thread
 * takes them with sigtimedwait (POSIX sigqueue, sigtimedwait, kill,
 * pthread_kill; realtime signals queue):
 *   1. pthread_kill of SIGUSR1 to a thread that blocks it, taken later by
 *      that thread: si_pid is ours;
 *   2. kill of SIGUSR2 to the process, every thread blocking it, taken
 *      later by main: si_code SI_USER, si_pid ours;
 *   3. sigqueue of SIGUSR2 with a value, taken later: SI_QUEUE and the value;
 *   4. three SIGRTMIN+1 queued while blocked: all three are taken, in the
 *      order sent (values 1, 2, 3), and then no fourth;
 *   5. three SIGUSR1 sent to the process (kill) while blocked: one is taken,
 *      and then none.
 * Every wait is bounded. Deterministic output; exit 0 when every check held.
 *
 * Run plainly and under flexsc-run in every configuration: the runtime
 * keeps the siginfo of a signal that waits in it (pending on a uthread or
 * on the process) and queues realtime ones, and sigtimedwait leaves the
 * process's signals still in the kernel to the signal thread, which hands
 * them on in order (docs/threads.md, Signals). Before, a pending signal
 * was a bit in a mask: siginfo lost, realtime signals of one number one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#define CHECK_NAME "posix_sigqueue"
#include "check.h"

static atomic_int stage;
static int t_sig, t_pid;

static void *later(void *arg)
{
	sigset_t set = sigset_of(SIGUSR1);
	siginfo_t info;
	struct timespec ts = { 10, 0 };

	(void)arg;
	atomic_store(&stage, 1);
	while (atomic_load(&stage) < 2)
		sleep_ms(1);
	memset(&info, 0, sizeof info);
	t_sig = sigtimedwait(&set, &info, &ts);
	t_pid = info.si_pid;
	return NULL;
}

int main(void)
{
	sigset_t block, set;
	siginfo_t info;
	struct timespec ts = { 10, 0 }, zero = { 0, 0 };
	int rt = SIGRTMIN + 1, ok = 1, sig;

	alarm(60);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGUSR2);
	sigaddset(&block, rt);
	pthread_sigmask(SIG_BLOCK, &block, NULL);

	pthread_t t = spawn(later, NULL);

	while (atomic_load(&stage) < 1)
		sleep_ms(1);
	pthread_kill(t, SIGUSR1);
	kill(getpid(), SIGUSR2);
	sleep_ms(20);
	atomic_store(&stage, 2);
	pthread_join(t, NULL);
	result("pthread_kill, taken later by the thread: si_pid ours", t_sig == SIGUSR1 && t_pid == getpid());

	set = sigset_of(SIGUSR2);
	memset(&info, 0, sizeof info);
	sig = sigtimedwait(&set, &info, &ts);
	result("kill, taken later by main: SI_USER, si_pid ours",
	       sig == SIGUSR2 && info.si_code == SI_USER && info.si_pid == getpid());

	sigqueue(getpid(), SIGUSR2, (union sigval){ .sival_int = 42 });
	memset(&info, 0, sizeof info);
	sig = sigtimedwait(&set, &info, &ts);
	result("sigqueue, taken later: SI_QUEUE and the value",
	       sig == SIGUSR2 && info.si_code == SI_QUEUE && info.si_value.sival_int == 42);

	for (int i = 1; i <= 3; i++)
		sigqueue(getpid(), rt, (union sigval){ .sival_int = i });
	set = sigset_of(rt);
	for (int i = 1; i <= 3; i++) {
		memset(&info, 0, sizeof info);
		sig = sigtimedwait(&set, &info, &ts);
		ok &= sig == rt && info.si_value.sival_int == i;
	}
	result("three queued SIGRTMIN+1: all three, in order", ok);
	errno = 0;
	result_err("... and no fourth (EAGAIN)", sigtimedwait(&set, &info, &zero) == -1 ? errno : 0, EAGAIN);

	for (int i = 0; i < 3; i++)
		kill(getpid(), SIGUSR1);
	set = sigset_of(SIGUSR1);
	sig = sigtimedwait(&set, &info, &ts);
	errno = 0;
	int again = sigtimedwait(&set, &info, &zero);

	result("three SIGUSR1 while blocked: one", sig == SIGUSR1 && again == -1 && errno == EAGAIN);
	return failed;
}
