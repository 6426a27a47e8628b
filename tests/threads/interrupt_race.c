/*
 * A signal or a cancel sent to a thread just as it enters a blocking call
 * ends that call (signal(7): a handler without SA_RESTART makes a read
 * that waits fail with EINTR; pthread_cancel(3): a thread that waits at a
 * cancellation point acts on the request). The sender fires at once when
 * the other thread says it is about to call read(), after a spin of a
 * varying length, so that over the rounds the request lands before,
 * during and after the start of the call:
 *   1. 20,000 rounds of pthread_kill(SIGUSR1) to a thread about to read an
 *      empty pipe: every read fails with EINTR after its handler, or (the
 *      signal came before the call) runs the handler first and then waits
 *      for the next signal of the round; none is left waiting;
 *   2. 2,000 rounds of pthread_cancel of a new thread about to read an
 *      empty pipe: every thread ends PTHREAD_CANCELED.
 * A request that is lost leaves the reader waiting: after 10 s without an
 * answer the round's sender writes a byte, the read returns it, and the
 * round counts as a failure (the time only ends a hang; it is no timing
 * check). Under flexsc-run's synchronous engine every call runs on its
 * uthread's carrier, where the sender and the caller meet through the
 * in-place call protocol (src/threads/sched.c, core/fence.h).
 * Deterministic output; exit 0 when every check held.
 */
#define _GNU_SOURCE
#include <sched.h>

#define CHECK_NAME "interrupt_race"
#include "check.h"

#define SIG_ROUNDS 20000
#define CANCEL_ROUNDS 2000
#define RESCUE_MS 10000

static int fds[2];
static _Atomic int about_to_read; /* the round the reader is in, once it is about to call */
static _Atomic int handled;       /* SIGUSR1 handlers run */
static pthread_t reader_thread;
static _Atomic int rounds_done, lost_signals, bad_results;

static void on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled, 1);
}

static void spin(unsigned n)
{
	for (volatile unsigned i = 0; i < n; i++)
		;
}

/* Waits up to RESCUE_MS for *word to reach at least want; false if it did not. */
static int wait_for(_Atomic int *word, int want)
{
	uint64_t end = now_ms() + RESCUE_MS;

	while (atomic_load(word) < want)
		if (now_ms() > end)
			return 0;
		else
			sched_yield();
	return 1;
}

/*
 * Sends the round's signal as the reader gets to its read; again while its
 * handler runs but the read goes on (the signal came before the call).
 */
static void *sender(void *arg)
{
	(void)arg;
	for (int r = 1; r <= SIG_ROUNDS; r++) {
		if (!wait_for(&about_to_read, r))
			break;
		spin((unsigned)(r * 7919) % 600);
		while (atomic_load(&rounds_done) < r) {
			int before = atomic_load(&handled);
			pthread_kill(reader_thread, SIGUSR1);
			if (!wait_for(&handled, before + 1)) {
				atomic_fetch_add(&lost_signals, 1);
				if (write(fds[1], "x", 1) != 1) /* rescue: the reader gets a byte */
					abort();
				wait_for(&rounds_done, r);
				break;
			}
			for (int i = 0; i < 1000 && atomic_load(&rounds_done) < r; i++)
				sched_yield();
		}
	}
	return NULL;
}

static void signals_part(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 }; /* no SA_RESTART */
	char c;

	sigaction(SIGUSR1, &sa, NULL);
	reader_thread = pthread_self();
	pthread_t t = spawn(sender, NULL);
	for (int r = 1; r <= SIG_ROUNDS; r++) {
		atomic_store(&about_to_read, r);
		ssize_t n = read(fds[0], &c, 1);
		int err = errno;
		if (n == 1)
			; /* rescued: counted by the sender */
		else if (!(n == -1 && err == EINTR))
			atomic_fetch_add(&bad_results, 1);
		atomic_store(&rounds_done, r);
	}
	pthread_join(t, NULL);
	resultf(atomic_load(&lost_signals) == 0, "%d rounds of a signal at the start of read: none lost",
		SIG_ROUNDS);
	result("every read ended with EINTR or the rescue byte", atomic_load(&bad_results) == 0);
	if (atomic_load(&lost_signals))
		fprintf(stderr, "interrupt_race: %d signals lost\n", atomic_load(&lost_signals));
}

static _Atomic int cancel_ready;

static void *cancel_reader(void *arg)
{
	char c;

	(void)arg;
	atomic_store(&cancel_ready, 1);
	for (;;)
		if (read(fds[0], &c, 1) < 0 && errno != EINTR)
			return NULL;
}

static void cancels_part(void)
{
	int lost = 0, bad = 0;

	for (int r = 0; r < CANCEL_ROUNDS; r++) {
		void *ret = NULL;
		atomic_store(&cancel_ready, 0);
		pthread_t t = spawn(cancel_reader, NULL);
		while (!atomic_load(&cancel_ready))
			;
		spin((unsigned)(r * 7919) % 600);
		pthread_cancel(t);
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += RESCUE_MS / 1000;
		if (pthread_timedjoin_np(t, &ret, &until)) {
			lost++;
			if (write(fds[1], "x", 1) != 1)
				abort();
			pthread_join(t, &ret);
		}
		bad += ret != PTHREAD_CANCELED;
	}
	resultf(lost == 0, "%d rounds of a cancel at the start of read: none lost", CANCEL_ROUNDS);
	result("every reader ended PTHREAD_CANCELED", bad == 0);
	if (lost)
		fprintf(stderr, "interrupt_race: %d cancels lost\n", lost);
}

int main(void)
{
	if (pipe(fds))
		return 1;
	signals_part();
	cancels_part();
	return failed;
}
