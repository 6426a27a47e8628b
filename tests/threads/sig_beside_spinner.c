/*
 * A signal sent with pthread_kill to a thread blocked in read(2) runs its
 * handler while the pipe stays empty (signal(7): the handler runs, and with
 * SA_RESTART the read goes on), also while another thread computes and
 * calls sched_yield(2) all along. 20 signals, one at a time, each given
 * 10 s; the read then returns the byte written at the end, never EINTR.
 * Then 3000 signals to the yielding thread itself, one at a time, each
 * handled within 10 s (a signal sent just as it yields, while it is
 * runnable, must not wait for some later switch).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#define CHECK_NAME "sig_beside_spinner"
#include "check.h"

#define ROUNDS 20

static int fds[2];
static _Atomic int hits, reading, done;
static _Atomic int spinner_hits;
static __thread int on_spinner;
static ssize_t rret;
static int rerr;

static void handler(int sig)
{
	(void)sig;
	atomic_fetch_add(on_spinner ? &spinner_hits : &hits, 1);
}

static void *reader(void *arg)
{
	char c;

	(void)arg;
	atomic_store(&reading, 1);
	rret = read(fds[0], &c, 1);
	rerr = rret < 0 ? errno : 0;
	return NULL;
}

static void *spinner(void *arg)
{
	volatile uint64_t x = 1;

	(void)arg;
	on_spinner = 1;
	while (!atomic_load(&done)) {
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ULL + 1;
		sched_yield();
	}
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	int handled = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	if (pipe2(fds, O_CLOEXEC))
		return 1;
	pthread_t r = spawn(reader, NULL), s = spawn(spinner, NULL);
	while (!atomic_load(&reading))
		sleep_ms(1);
	sleep_ms(100); /* blocked in read() by now */
	for (int i = 1; i <= ROUNDS; i++) {
		pthread_kill(r, SIGUSR1);
		for (int w = 0; w < 10000 && atomic_load(&hits) < i; w++)
			sleep_ms(1);
		if (atomic_load(&hits) < i)
			break;
		handled = i;
	}
	char what[96];
	snprintf(what, sizeof(what), "%d of %d handlers ran on the reader while another thread yields", handled,
		 ROUNDS);
	result(what, handled == ROUNDS);
	if (write(fds[1], "x", 1) != 1)
		return 1;
	pthread_join(r, NULL);
	result("the read went on after the handlers and returned the byte", rret == 1 && rerr == 0);
	handled = 0;
	for (int i = 1; i <= 3000; i++) {
		pthread_kill(s, SIGUSR1);
		for (int w = 0; w < 100000 && atomic_load(&spinner_hits) < i; w++)
			usleep(100);
		if (atomic_load(&spinner_hits) < i)
			break;
		handled = i;
	}
	result("3000 handlers ran on the yielding thread, each within 10 s", handled == 3000);
	atomic_store(&done, 1);
	pthread_join(s, NULL);
	return failed;
}
