/*
 * A process-directed signal goes to the main thread when it accepts it
 * (the kernel's complete_signal: kill(2) names the thread group, whose
 * leader gets the first chance; a threaded Python program relies on it
 * for Ctrl-C, its main thread waiting in Event.wait while helpers sleep).
 * Two other threads accept the signal too, asleep (nanosleep) and in a
 * read of an empty pipe; a forked child sends SIGUSR1 (a handler without
 * SA_RESTART) to the process after 100 ms while main waits:
 *   1. in sem_timedwait (5 s): it fails with EINTR, and the handler ran
 *      on main;
 *   2. in nanosleep (5 s): it fails with EINTR, and the handler ran on
 *      main.
 * The other threads' waits go on. And with a third thread computing (its
 * carrier runs with the signal unblocked: the kernel gave it the signal,
 * and its handler ran there while main's wait went on, for ever):
 *   3. SIGALRM from ualarm (100 ms) while main waits in sem_timedwait
 *      (5 s): it fails with EINTR, and the handler ran on main;
 *   4. main blocks SIGUSR1 and waits for it in sigtimedwait (5 s), the
 *      child sends it with sigqueue (a value): sigtimedwait returns it,
 *      with the value and the child's pid, and no handler ran (a thread
 *      in sigwaitinfo accepts the signals it waits for: the kernel gives
 *      the leader its first chance; the computing thread's carrier took
 *      it, and main's wait went on to its timeout).
 * A signal given to another thread is a FAIL after 5 s, not a hang.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "sig_to_main"
#include "check.h"

static pthread_t main_thread;
static volatile sig_atomic_t on_main, elsewhere;
static int p[2];

static void handler(int sig)
{
	(void)sig;
	if (pthread_equal(pthread_self(), main_thread))
		on_main++;
	else
		elsewhere++;
}

static void *sleeper(void *arg)
{
	struct timespec t = { 2, 0 };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
	return arg;
}

static _Atomic int spin_stop;

static void *spinner(void *arg)
{
	while (!atomic_load_explicit(&spin_stop, memory_order_relaxed))
		;
	return arg;
}

static void *reader(void *arg)
{
	char c;

	while (read(p[0], &c, 1) < 0 && errno == EINTR)
		;
	return arg;
}

/* A child that sends SIGUSR1 to this process after 100 ms: with kill, or with sigqueue and value. */
static pid_t send_later(int value)
{
	pid_t parent = getpid();

	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		usleep(100000);
		if (value)
			sigqueue(parent, SIGUSR1, (union sigval){ .sival_int = value });
		else
			kill(parent, SIGUSR1);
		_exit(0);
	}
	return pid;
}

int main(void)
{
	struct sigaction sa;
	sem_t sem;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler; /* no SA_RESTART */
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	main_thread = pthread_self();
	if (pipe(p) || sem_init(&sem, 0, 0))
		return 1;
	pthread_t s = spawn(sleeper, NULL), r = spawn(reader, NULL);
	sleep_ms(50); /* both asleep */

	pid_t child = send_later(0);
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	int rc = sem_timedwait(&sem, &until);
	int err = errno;
	waitpid(child, NULL, 0);
	result("sem_timedwait in main: cut short with EINTR", rc == -1 && err == EINTR);
	result("the handler ran on main", on_main == 1 && elsewhere == 0);

	on_main = elsewhere = 0;
	child = send_later(0);
	struct timespec t = { 5, 0 };
	rc = nanosleep(&t, &t);
	err = errno;
	waitpid(child, NULL, 0);
	result("nanosleep in main: cut short with EINTR", rc == -1 && err == EINTR);
	result("the handler ran on main", on_main == 1 && elsewhere == 0);

	on_main = elsewhere = 0;
	pthread_t busy = spawn(spinner, NULL);
	sleep_ms(50); /* computing */
	ualarm(100000, 0);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	rc = sem_timedwait(&sem, &until);
	err = errno;
	atomic_store(&spin_stop, 1);
	pthread_join(busy, NULL);
	result("SIGALRM, a thread computing: main's sem_timedwait cut short with EINTR", rc == -1 && err == EINTR);
	result("the handler ran on main", on_main == 1 && elsewhere == 0);

	on_main = elsewhere = 0;
	atomic_store(&spin_stop, 0);
	busy = spawn(spinner, NULL); /* made before main blocks SIGUSR1: it accepts it */
	sigset_t usr1 = sigset_of(SIGUSR1);
	siginfo_t info;
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	sleep_ms(50); /* computing */
	child = send_later(42);
	struct timespec five = { 5, 0 };
	rc = sigtimedwait(&usr1, &info, &five);
	atomic_store(&spin_stop, 1);
	pthread_join(busy, NULL);
	waitpid(child, NULL, 0);
	result("sigqueue while main waits in sigtimedwait, a thread computing: main takes it",
	       rc == SIGUSR1 && info.si_value.sival_int == 42 && info.si_pid == child);
	result("no handler ran", on_main == 0 && elsewhere == 0);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);

	result("the reader's wait went on", write(p[1], "x", 1) == 1 && pthread_join(r, NULL) == 0);
	pthread_join(s, NULL);
	return failed;
}
