/*
 * Process-directed signals reach a thread that only computes (no system
 * call, no blocking) promptly: the kernel delivers a signal to a thread
 * that does not block it as soon as it can, interrupting user code.
 *
 * Every thread but a busy one blocks SIGUSR1; a child process sends
 * kill(parent, SIGUSR1) 1,000 times, each time waiting (asleep in poll)
 * until the handler has written a byte to a pipe before the next. The handler must run on
 * the busy thread each time (the child makes its kill(2) with its own
 * syscall instruction, so that only the receiver is measured), and the 1,000 round trips must take less than
 * 10 s (NPTL: a few tens of ms; a delivery only at reschedule points gives
 * a few hundred a second at best). A signal not handled within 5 s ends
 * the child's wait (FAIL, not a hang).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "sig_busy_thread"
#include "check.h"

#define ROUNDS 1000

struct shared {
	_Atomic int handled;   /* handler runs */
	_Atomic int on_busy;   /* of them, on the busy thread */
	_Atomic int done;      /* the child finished: the busy thread stops */
	_Atomic int busy_ready;
	int timeouts;
	double seconds;
};

static struct shared *sh;
static int ack[2]; /* handler to child: one byte per signal handled */
static __thread int is_busy;

static void handler(int sig)
{
	(void)sig;
	if (is_busy)
		atomic_fetch_add(&sh->on_busy, 1);
	atomic_fetch_add(&sh->handled, 1);
	if (write(ack[1], "x", 1) != 1)
		abort();
}

static void *busy(void *arg)
{
	sigset_t set;
	volatile uint64_t spins = 0;

	(void)arg;
	is_busy = 1;
	set = sigset_of(SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	atomic_store(&sh->busy_ready, 1);
	while (!atomic_load_explicit(&sh->done, memory_order_relaxed))
		spins++;
	return NULL;
}

/*
 * The child's calls by its own syscall instruction: what is measured is
 * the receiving process; the sender makes no call a runtime could post.
 */
static void sender(pid_t parent)
{
	double t0 = now_s();

	for (int i = 0; i < ROUNDS; i++) {
		raw3(SYS_kill, parent, SIGUSR1, 0);
		/* the handler writes a byte: wait for it, up to 5 s, asleep (not taking a CPU) */
		struct pollfd p = { .fd = ack[0], .events = POLLIN };
		char c;
		if (raw3(SYS_poll, (long)&p, 1, 5000) != 1 || raw3(SYS_read, ack[0], (long)&c, 1) != 1) {
			sh->timeouts++;
			break;
		}
	}
	sh->seconds = now_s() - t0;
	atomic_store(&sh->done, 1); /* by the child: with one core, main does not run while the busy thread spins */
	_exit(0);
}

int main(void)
{
	sigset_t set;

	if (pipe(ack))
		return 1;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	on_signal(SIGUSR1, handler, SA_RESTART);
	set = sigset_of(SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	/* the child first: with one core, the busy thread leaves main no time to fork */
	pid_t parent = getpid();
	pid_t child = fork();
	if (child == 0) {
		while (!atomic_load(&sh->busy_ready))
			usleep(1000);
		sender(parent);
	}
	pthread_t t = spawn(busy, NULL);
	pthread_join(t, NULL); /* a wait of the runtime's: waitpid may block a whole carrier */
	int status;
	waitpid(child, &status, 0);

	result("every signal was handled within 5 s", sh->timeouts == 0 && atomic_load(&sh->handled) == ROUNDS);
	result("on the busy thread, the one that does not block it",
	       atomic_load(&sh->on_busy) == atomic_load(&sh->handled));
	result("1000 round trips in less than 10 s", sh->timeouts == 0 && sh->seconds < 10);
	if (failed)
		fprintf(stderr, "handled %d (on the busy thread %d), %.3f s, timeouts %d\n",
			atomic_load(&sh->handled), atomic_load(&sh->on_busy), sh->seconds, sh->timeouts);
	return failed;
}
