/*
 * Barriers: 64 threads through thousands of rounds of one barrier.
 *
 * In every round each thread marks its arrival, waits, and then checks
 * that all 64 arrived before anyone left, and that nobody of the next
 * round got in ahead (the barrier is reused at once: fast threads enter
 * round r+1 while slow ones still leave round r). Exactly one thread per
 * round gets PTHREAD_BARRIER_SERIAL_THREAD. Some threads yield or sleep
 * between rounds so that rounds overlap in every way.
 *
 * Then: a barrier of count 1 lets every caller through as the serial
 * thread, count 0 is EINVAL, a process-shared barrier works, and a
 * barrier can be destroyed and reinitialised between runs.
 *
 * Deterministic output; exit 0 when every check held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK_NAME "barrier_rounds"
#include "check.h"

#define NTHREADS 64
#define ROUNDS 3000

static pthread_barrier_t barrier;
static _Atomic int arrived[ROUNDS];
static _Atomic int serial[ROUNDS];
static _Atomic int left[ROUNDS];

static void *runner(void *arg)
{
	long id = (long)arg;
	unsigned seed = (unsigned)id * 2654435761u + 7;

	for (int r = 0; r < ROUNDS; r++) {
		seed = seed * 1103515245u + 12345u;
		unsigned x = seed >> 16;
		if (x % 97 == 0)
			usleep(x % 200);
		else if (x % 13 == 0)
			sched_yield();
		atomic_fetch_add(&arrived[r], 1);
		int ret = pthread_barrier_wait(&barrier);
		EXPECT(ret == 0 || ret == PTHREAD_BARRIER_SERIAL_THREAD, "round %d: wait returned %d", r, ret);
		if (ret == PTHREAD_BARRIER_SERIAL_THREAD)
			atomic_fetch_add(&serial[r], 1);
		EXPECT(atomic_load(&arrived[r]) == NTHREADS, "round %d: left with %d of %d arrived", r,
		       atomic_load(&arrived[r]), NTHREADS);
		/* round r completed only once every thread had left round r-1 */
		if (r > 0)
			EXPECT(atomic_load(&left[r - 1]) == NTHREADS, "round %d: someone still in round %d", r, r - 1);
		atomic_fetch_add(&left[r], 1);
	}
	return NULL;
}

/* Two processes through one process-shared barrier in shared memory. */
static void check_pshared(void)
{
	pthread_barrierattr_t attr;
	pthread_barrier_t *b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int serials = 0, status;

	EXPECT(b != MAP_FAILED, "mmap");
	if (b == MAP_FAILED)
		return;
	pthread_barrierattr_init(&attr);
	pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	EXPECT(pthread_barrier_init(b, &attr, 2) == 0, "process-shared init");
	pthread_barrierattr_destroy(&attr);
	pid_t pid = fork();
	if (pid == 0) {
		for (int r = 0; r < 200; r++)
			serials += pthread_barrier_wait(b) == PTHREAD_BARRIER_SERIAL_THREAD;
		_exit(serials);
	}
	EXPECT(pid > 0, "fork");
	for (int r = 0; r < 200; r++)
		serials += pthread_barrier_wait(b) == PTHREAD_BARRIER_SERIAL_THREAD;
	EXPECT(waitpid(pid, &status, 0) == pid && WIFEXITED(status), "the child");
	EXPECT(serials + WEXITSTATUS(status) == 200, "process-shared: %d serial returns in 200 rounds",
	       serials + WEXITSTATUS(status));
	EXPECT(pthread_barrier_destroy(b) == 0, "process-shared destroy");
	munmap(b, sizeof(*b));
}

int main(void)
{
	pthread_t t[NTHREADS];

	for (int run = 0; run < 2; run++) {
		for (int r = 0; r < ROUNDS; r++)
			arrived[r] = serial[r] = left[r] = 0;
		EXPECT(pthread_barrier_init(&barrier, NULL, NTHREADS) == 0, "init");
		for (long i = 0; i < NTHREADS; i++)
			if (pthread_create(&t[i], NULL, runner, (void *)i)) {
				perror("pthread_create");
				return 2;
			}
		for (int i = 0; i < NTHREADS; i++)
			pthread_join(t[i], NULL);
		for (int r = 0; r < ROUNDS; r++) {
			EXPECT(serial[r] == 1, "run %d round %d: %d serial threads", run, r, serial[r]);
			EXPECT(left[r] == NTHREADS, "run %d round %d: %d left", run, r, left[r]);
		}
		EXPECT(pthread_barrier_destroy(&barrier) == 0, "destroy after the last round");
	}
	resultf(misses() == 0, "%d threads x %d rounds, twice: one serial thread a round, nobody early or late",
	        NTHREADS, ROUNDS);

	long before = misses();
	pthread_barrier_t one, zero;
	EXPECT(pthread_barrier_init(&zero, NULL, 0) == EINVAL, "count 0: EINVAL");
	EXPECT(pthread_barrier_init(&one, NULL, 1) == 0, "count 1");
	for (int i = 0; i < 5; i++)
		EXPECT(pthread_barrier_wait(&one) == PTHREAD_BARRIER_SERIAL_THREAD, "count 1: serial every time");
	EXPECT(pthread_barrier_destroy(&one) == 0, "destroy");

	check_pshared();
	result("count 1, count 0, process-shared", misses() == before);

	printf("barrier_rounds: %s\n", failed ? "FAIL" : "PASS");
	return failed;
}
