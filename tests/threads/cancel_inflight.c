/*
 * cancel_inflight: pthread_cancel of a thread blocked in read or poll on a
 * pipe nobody writes, over and over, the request sent after a delay that
 * varies from none to some tens of microseconds of computing: so that it
 * lands at every moment of the call's way, before it is posted, queued,
 * just taken by a syscall thread, and blocked in the kernel.
 *
 * Under flexsc-run --engine threads, a call a syscall thread had taken
 * from its queue but not yet started (it first checks that it runs as
 * the caller, a dozen system calls) was neither in the queue, where the
 * carrier could take it back, nor marked as running, where the carrier
 * interrupts it with a signal: the carrier's cancel failed at once and
 * was not tried again, and the thread stayed blocked in read for good.
 *
 * Now the thread looks for a cancel request before it starts the call
 * (and the carrier's request is stored before it looks for the thread):
 * the call completes with -ECANCELED unstarted. Before: hung within the
 * first 500 rounds in 10 of 10 runs; after: none in 10 runs of 20,000.
 *
 * Every victim must end with PTHREAD_CANCELED and its one cleanup handler
 * run. The main thread is a watchdog for hangs only: if no victim ended
 * for 30 s, it says which one waits and exits 1.
 *
 * Usage: cancel_inflight [ROUNDS [WATCHDOG_MS]]   (2000, 30000)
 */
#define _GNU_SOURCE
#define CHECK_NAME "cancel_inflight"
#include "check.h"

#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>

static int rounds = 2000;
static int watch_ms = 30000;
static int fds[2];
static _Atomic int done_rounds, cleanups, started;
static int bad_status, bad_cleanups;

static void cleanup(void *arg)
{
	(void)arg;
	atomic_fetch_add(&cleanups, 1);
}

static void *victim(void *arg)
{
	int kind = (int)(intptr_t)arg;
	char c;

	pthread_cleanup_push(cleanup, NULL);
	atomic_store(&started, 1);
	for (;;) {
		if (kind) {
			struct pollfd p = { fds[0], POLLIN, 0 };
			poll(&p, 1, -1);
		} else if (read(fds[0], &c, 1) >= 0) {
			printf("%s: read returned from an empty pipe\n", CHECK_NAME);
		}
	}
	pthread_cleanup_pop(0);
	return NULL;
}

static volatile unsigned sink;

static void *canceller(void *arg)
{
	(void)arg;
	for (int i = 0; i < rounds; i++) {
		int before = atomic_load(&cleanups);
		void *rv = NULL;

		atomic_store(&started, 0);
		pthread_t v = spawn(victim, (void *)(intptr_t)(i & 1));
		/* mostly after the victim has started; how long after varies, no clock involved */
		if (i % 8)
			while (!atomic_load(&started))
				sched_yield();
		for (unsigned k = 0, n = (unsigned)(i * 7919) % 20000; k < n; k++)
			sink += k;
		pthread_cancel(v);
		pthread_join(v, &rv);
		if (rv != PTHREAD_CANCELED)
			bad_status++;
		if (atomic_load(&cleanups) != before + 1)
			bad_cleanups++;
		atomic_fetch_add(&done_rounds, 1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		rounds = atoi(argv[1]);
	if (argc > 2)
		watch_ms = atoi(argv[2]);
	if (pipe2(fds, O_CLOEXEC)) {
		perror("pipe2");
		return 1;
	}
	pthread_t c = spawn(canceller, NULL);
	/* the watchdog: progress, not time, decides; only a victim stuck for 30 s ends the run */
	int last = 0;
	uint64_t since = now_ms();
	while (atomic_load(&done_rounds) < rounds) {
		int d = atomic_load(&done_rounds);
		if (d != last) {
			last = d;
			since = now_ms();
		} else if (now_ms() - since > (uint64_t)watch_ms) {
			printf("%s: the victim of round %d (blocked in %s) did not end for %d s after its cancel\n",
			       CHECK_NAME, d, d & 1 ? "poll" : "read", watch_ms / 1000);
			result("every cancelled thread ends", 0);
			_exit(1);
		}
		sleep_ms(20);
	}
	pthread_join(c, NULL);
	result("every cancelled thread ends", 1);
	result("each returned PTHREAD_CANCELED", bad_status == 0);
	result("each ran its cleanup handler once", bad_cleanups == 0);
	return failed;
}
