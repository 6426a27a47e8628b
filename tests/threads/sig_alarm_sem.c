/*
 * A single-threaded program: sem_post from a SIGALRM handler wakes the
 * sem_wait that the signal interrupted (sem_post is async-signal-safe).
 *   1. handler installed with signal() (SA_RESTART): sem_wait goes on after
 *      the handler and returns 0 with the posted unit;
 *   2. handler installed without SA_RESTART: sem_wait fails with EINTR
 *      (glibc's, on the interrupted futex wait) and the unit stays in the
 *      semaphore (sem_trywait then takes it).
 * alarm(1) each time; a POSIX timer sends SIGTERM (default action) 8 s
 * after the start, so a sem_wait the alarm does not end kills the
 * program instead of hanging it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <semaphore.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "sig_alarm_sem"
#include "check.h"

static sem_t sem;
static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
	sem_post(&sem);
}

int main(void)
{
	int r, err;

	struct sigevent ev;
	timer_t watchdog;
	struct itimerspec in8 = { .it_value = { 8, 0 } };

	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = SIGTERM;
	if (timer_create(CLOCK_MONOTONIC, &ev, &watchdog) || timer_settime(watchdog, 0, &in8, NULL))
		return 1;
	sem_init(&sem, 0, 0);
	signal(SIGALRM, on_alarm);
	alarm(1);
	r = sem_wait(&sem);
	result("signal() handler (SA_RESTART): sem_wait returned 0 after the alarm's post", r == 0 && alarms == 1);

	on_signal(SIGALRM, on_alarm, 0);
	alarms = 0;
	alarm(1);
	r = sem_wait(&sem);
	err = errno;
	result("handler without SA_RESTART: sem_wait failed with EINTR", r == -1 && err == EINTR && alarms == 1);
	result("and the posted unit is in the semaphore", sem_trywait(&sem) == 0);
	return failed;
}
