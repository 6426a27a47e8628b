/*
 * A thread that computes, while another thread of the process waits in a
 * read(2) of a pipe, then faults: its SIGSEGV handler runs (signal(7): a
 * fault's signal goes to the faulting thread, and its handler runs unless
 * the thread blocks it; a blocked one kills the process) and leaves by
 * siglongjmp, and the thread then stops on a pthread_kill'ed SIGUSR1 whose
 * handler runs on it. The reader is let go afterwards. Under flexsc-run
 * the computing uthread is time-sliced while the read is out (preempt.c):
 * a preemption that found nothing else to run (one carrier, --cores 0)
 * left the carrier blocking every signal, and the fault killed the
 * process. The computing thread's wait is bounded (5 s).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#define CHECK_NAME "signal_while_computing"
#include "check.h"

static volatile sig_atomic_t handled, faulted;
static sigjmp_buf back;
static int pipefd[2];

static void on_segv(int sig)
{
	(void)sig;
	faulted = 1;
	siglongjmp(back, 1);
}

static void on_usr1(int sig)
{
	(void)sig;
	handled = 1;
}

static void *reader(void *arg)
{
	char c;

	(void)arg;
	return (void *)(intptr_t)read(pipefd[0], &c, 1);
}

static void *computer(void *arg)
{
	volatile char *none = arg; /* a PROT_NONE page */
	uint64_t t = now_ms();

	while (now_ms() < t + 100)
		; /* clock_gettime: the vDSO, no switch point; the read is out throughout */
	if (!sigsetjmp(back, 1))
		(void)*none;
	t = now_ms();
	while (!handled && now_ms() < t + 5000)
		;
	return NULL;
}

int main(void)
{
	pthread_t r, c;

	on_signal(SIGUSR1, on_usr1, 0);
	on_signal(SIGSEGV, on_segv, 0);
	void *none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (none == MAP_FAILED || pipe(pipefd))
		return 1;
	r = spawn(reader, NULL);
	c = spawn(computer, none);
	sleep_ms(200);
	pthread_kill(c, SIGUSR1);
	pthread_join(c, NULL);
	result("the computing thread's fault ran its SIGSEGV handler", faulted == 1);
	result("then its SIGUSR1 handler ran, and it stopped spinning", handled == 1);
	if (write(pipefd[1], "x", 1) != 1)
		return 1;
	void *got;
	pthread_join(r, &got);
	result("the reader's read returned its byte", (intptr_t)got == 1);
	return failed;
}
