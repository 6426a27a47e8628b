/*
 * timer_getoverrun(2) in a handler gives the overrun of the signal being
 * handled: the expirations that came between its generation and its
 * delivery (POSIX; Linux counts them when the signal is delivered). So a
 * handler that counts 1 + timer_getoverrun() per signal counts every
 * expiration once: never more than the clock allows.
 * A 1 ms timer on CLOCK_MONOTONIC signals the process while its only
 * thread blocks the signal for 200 ms, four times; each time the pending
 * signal gathers about 200 overruns. The count must not exceed the
 * elapsed milliseconds (+2), and must reach half of them.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

#define CHECK_NAME "timer_overrun"
#include "check.h"

static timer_t timer;
static _Atomic long counted, signals;

static void on_tick(int sig, siginfo_t *si, void *uc)
{
	int over = timer_getoverrun(timer);

	(void)sig;
	(void)si;
	(void)uc;
	atomic_fetch_add(&counted, 1 + (over > 0 ? over : 0));
	atomic_fetch_add(&signals, 1);
}

int main(void)
{
	struct sigaction sa;
	struct sigevent sev;
	struct itimerspec its = { { 0, 1000000 }, { 0, 1000000 } }, off;
	sigset_t one;
	char what[160];

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_tick;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGRTMIN + 1, &sa, NULL);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGRTMIN + 1;
	sigemptyset(&one);
	sigaddset(&one, SIGRTMIN + 1);
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer))
		return 1;
	uint64_t t0 = now_ms();
	timer_settime(timer, 0, &its, NULL);
	for (int i = 0; i < 4; i++) {
		pthread_sigmask(SIG_BLOCK, &one, NULL);
		sleep_ms(200);
		pthread_sigmask(SIG_UNBLOCK, &one, NULL);
		sleep_ms(20);
	}
	memset(&off, 0, sizeof(off));
	timer_settime(timer, 0, &off, NULL); /* no expiration after this */
	uint64_t elapsed = now_ms() - t0;
	sleep_ms(50); /* the last signal's handler */
	timer_delete(timer);
	long n = atomic_load(&counted);
	snprintf(what, sizeof(what), "expirations counted with overruns, at most the elapsed ms + 2%s",
		 n > (long)elapsed + 2 ? " (more)" : "");
	result(what, n <= (long)elapsed + 2);
	if (n > (long)elapsed + 2)
		printf("timer_overrun: %ld counted in %ld signals, %llu ms\n", n, atomic_load(&signals),
		       (unsigned long long)elapsed);
	result("and at least half of them", n >= (long)elapsed / 2);
	return failed;
}
