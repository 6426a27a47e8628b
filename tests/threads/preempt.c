/*
 * Threads that wait for each other by spinning, with no call at all, more
 * of them than there are CPUs. POSIX leaves the policy of SCHED_OTHER
 * threads to the implementation, but Linux time-slices them, so on NPTL a
 * thread that spins on a flag gives way to the one that will set it, and
 * programs rely on it (busy-wait barriers, spin-then-park locks of their
 * own, a thread polling a flag while a worker computes). Three parts:
 *
 * - a token ring: thread i spins until the token says i, then passes it
 *   on; each pass needs the next thread to run while the others spin;
 * - sleepers beside spinners: a thread sleeps 1 ms ten times while the
 *   other threads spin until it is done, so each sleep needs a spinner to
 *   give way when the sleep is over;
 * - registers kept: threads compute a floating-point and integer sum with
 *   no call while they are made to give way, each result compared with
 *   the same sum computed alone first.
 *
 * A watchdog (alarm) ends the program if a part does not finish within
 * 60 s: without time-slicing, the first two parts never end.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "preempt"
#include "check.h"

#define ROUNDS 3
#define SLEEPS 10
#define SUM_ITERS 60000000ul

static int nthreads;
static _Atomic int token;
static _Atomic int sleeps_done;
static const char *volatile part = "start";

static void watchdog(int sig)
{
	static const char msg[] = CHECK_NAME ": a part did not finish within 60 s: ";

	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	(void)!write(2, part, strlen(part));
	(void)!write(2, "\n", 1);
	_exit(3);
}

static void *ring_member(void *arg)
{
	int me = (int)(long)arg;

	for (int r = 0; r < ROUNDS; r++) {
		while (atomic_load_explicit(&token, memory_order_acquire) != me)
			;
		atomic_store_explicit(&token, (me + 1) % nthreads, memory_order_release);
	}
	return NULL;
}

static void *spin_until_slept(void *arg)
{
	(void)arg;
	while (atomic_load_explicit(&sleeps_done, memory_order_acquire) < SLEEPS)
		;
	return NULL;
}

static void *sleeper(void *arg)
{
	struct timespec ms = { 0, 1000000 };

	(void)arg;
	for (int i = 0; i < SLEEPS; i++) {
		nanosleep(&ms, NULL);
		atomic_fetch_add_explicit(&sleeps_done, 1, memory_order_release);
	}
	return NULL;
}

/* A sum that lives in xmm and general registers for its whole loop: no call inside. */
static double sum(unsigned long seed, unsigned long *mix)
{
	double acc = 0.0, x = (double)(seed % 7 + 1);
	unsigned long m = seed;

	for (unsigned long i = 0; i < SUM_ITERS; i++) {
		acc += x * 0.5 + (double)(m & 1023);
		x = x * 1.0000001 + 0.25;
		m = m * 6364136223846793005ul + 1442695040888963407ul;
	}
	*mix = m;
	return acc;
}

struct sum_job {
	unsigned long seed, mix;
	double acc;
};

static void *sum_thread(void *arg)
{
	struct sum_job *j = arg;

	j->acc = sum(j->seed, &j->mix);
	return NULL;
}

int main(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	nthreads = cpus < 1 ? 4 : cpus > 31 ? 64 : (int)cpus * 2 + 2;
	signal(SIGALRM, watchdog);

	pthread_t t[64];
	part = "token ring";
	alarm(60);
	for (int i = 0; i < nthreads; i++)
		t[i] = spawn(ring_member, (void *)(long)i);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	result("a token passed around spinning threads, more than CPUs", atomic_load(&token) == 0);

	part = "sleepers beside spinners";
	alarm(60);
	for (int i = 0; i < nthreads - 1; i++)
		t[i] = spawn(spin_until_slept, NULL);
	t[nthreads - 1] = spawn(sleeper, NULL);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	result("a thread's sleeps ended while others spun", atomic_load(&sleeps_done) == SLEEPS);

	part = "registers kept";
	alarm(60);
	struct sum_job jobs[64];
	int same = 1;
	for (int i = 0; i < nthreads; i++) {
		jobs[i].seed = (unsigned long)i * 977 + 13;
		t[i] = spawn(sum_thread, &jobs[i]);
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	alarm(0);
	for (int i = 0; i < nthreads; i++) {
		unsigned long mix;
		double want = sum(jobs[i].seed, &mix);
		if (memcmp(&want, &jobs[i].acc, sizeof(want)) || mix != jobs[i].mix) {
			fprintf(stderr, "thread %d: %.17g/%lx where alone %.17g/%lx\n", i, jobs[i].acc,
				jobs[i].mix, want, mix);
			same = 0;
		}
	}
	result("sums computed while other threads ran kept their registers", same);
	return failed;
}
