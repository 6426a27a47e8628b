/*
 * A signal handler may wake a thread with sem_post: it is async-signal-
 * safe (POSIX), the classic way for a handler to hand work to a thread,
 * so it must work whatever the thread it interrupted was doing, also
 * inside the thread library's own locking (a wait list, the scheduler).
 *
 * Two threads wait in sem_wait, two others ping-pong through a mutex and
 * a condition variable (their waits and wake-ups keep the library's locks
 * busy), and an interval timer sends SIGALRM every 200 us for 2 s; its
 * handler, which any thread may run, calls sem_post. Every post must be
 * taken (or, posted by a handler that ran after the waiters were told to
 * stop, still be in the semaphore), no sem_wait may fail with EINTR (the
 * handler has SA_RESTART), and every handler must return: a child process
 * watches, and kills the process (SIGKILL: the exit status then differs
 * from the plain run's) when it has not finished within 30 s.
 *
 * Under flexsc-run the handler ran on a carrier inside the runtime's run
 * queue lock (the scheduler picking the next thread), and its sem_post
 * spun for ever on that lock: every run hung.
 */
#define _GNU_SOURCE
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK_NAME "sig_handler_sem_post"
#include "check.h"

#define RUN_MS 2000
#define WATCH_MS 30000

static sem_t sem;
static _Atomic int stop;
static _Atomic long posts, post_errors, takes, pings, eintrs;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turned = PTHREAD_COND_INITIALIZER;
static int turn;

static void on_alarm(int sig)
{
	(void)sig;
	if (sem_post(&sem))
		atomic_fetch_add(&post_errors, 1);
	else
		atomic_fetch_add(&posts, 1);
}

static void *waiter(void *arg)
{
	for (;;) {
		if (sem_wait(&sem)) {
			/* sem_wait(3): EINTR only after a handler without SA_RESTART (glibc) */
			if (errno == EINTR) {
				atomic_fetch_add(&eintrs, 1);
				continue;
			}
			break;
		}
		if (atomic_load(&stop))
			break;
		atomic_fetch_add(&takes, 1);
	}
	return arg;
}

static void *pinger(void *arg)
{
	int me = (int)(long)arg;

	pthread_mutex_lock(&lock);
	while (!atomic_load(&stop)) {
		while (turn != me && !atomic_load(&stop))
			pthread_cond_wait(&turned, &lock);
		turn = !me;
		atomic_fetch_add(&pings, 1);
		pthread_cond_broadcast(&turned);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	pthread_t t[4];
	pid_t watchdog;

	if (sem_init(&sem, 0, 0)) {
		perror("sem_init");
		return 1;
	}
	int watched = hang_watchdog(WATCH_MS, &watchdog);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	t[0] = spawn(waiter, NULL);
	t[1] = spawn(waiter, NULL);
	t[2] = spawn(pinger, (void *)0L);
	t[3] = spawn(pinger, (void *)1L);

	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	setitimer(ITIMER_REAL, &it, NULL);
	uint64_t end = now_ms() + RUN_MS;
	while (now_ms() < end)
		sleep_ms(10);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	sleep_ms(50); /* an alarm still on its way is handled */

	/* every post made is taken before the waiters are told to stop */
	while (atomic_load(&takes) < atomic_load(&posts))
		sleep_ms(1);
	atomic_store(&stop, 1);
	pthread_mutex_lock(&lock);
	pthread_cond_broadcast(&turned);
	pthread_mutex_unlock(&lock);
	sem_post(&sem);
	sem_post(&sem);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	/*
	 * No handler from here on (main is the only thread). A handler that
	 * ran late posted a unit that a stopping waiter took in place of one
	 * of main's last two: every post is then either taken or still there.
	 */
	sigset_t alrm;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	sigprocmask(SIG_BLOCK, &alrm, NULL);
	int left = -1;
	sem_getvalue(&sem, &left);

	result("every handler returned", 1);
	result("the handler's sem_post woke the waiters", atomic_load(&posts) > 0);
	result("sem_post succeeded in the handler", atomic_load(&post_errors) == 0);
	result("every post was taken once or is still there", atomic_load(&takes) + left == atomic_load(&posts));
	result("sem_wait was never cut short (SA_RESTART)", atomic_load(&eintrs) == 0);
	result("the ping-pong went on meanwhile", atomic_load(&pings) > 0);

	hang_watchdog_end(watched, watchdog);
	return failed;
}
