/*
 * A blocking call completes while other threads keep the CPU busy without
 * ever making one (as MariaDB's InnoDB readers do at a latch: wake the
 * waiters, wait, be woken, again), and those threads wait for it:
 *   two threads play futex ping-pong (each wakes the other and waits for
 *   its turn, through syscall(SYS_futex)) until a third thread's
 *   fdatasync and pread of a file return, which must happen within 60 s
 *   (generous, for a slow disk or a loaded machine: they return at once
 *   when they can, and only a call that never does fails).
 * The ping-pong stops by itself at that deadline (a FAIL, not a hang, well
 * within the test runner's per-run timeout).
 * On a runtime that issues posted calls only when it has nothing else to
 * run, the call would wait for the ping-pong and the ping-pong for the
 * call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CHECK_NAME "busy_while_io"
#include "check.h"

static _Atomic uint32_t turn;
static atomic_int io_done;
static struct timespec deadline;

static void futex_wake_all(_Atomic uint32_t *addr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static int past_deadline(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > deadline.tv_sec ||
	       (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec);
}

/* Player me (0 or 1): on its turn hands the turn over and wakes the other. */
static void *player(void *arg)
{
	uint32_t me = (uint32_t)(uintptr_t)arg;
	struct timespec tick = { 0, 100 * 1000000L };

	while (!atomic_load(&io_done) && !past_deadline()) {
		uint32_t t = atomic_load(&turn);
		if (t != me) {
			syscall(SYS_futex, &turn, FUTEX_WAIT_PRIVATE, t, &tick, NULL, 0);
			continue;
		}
		atomic_store(&turn, !me);
		futex_wake_all(&turn);
	}
	return NULL;
}

static void *io(void *arg)
{
	int fd = *(int *)arg;
	char buf[16];

	/* let the ping-pong start first */
	while (atomic_load(&turn) == 0 && !past_deadline())
		sched_yield();
	int ok = fdatasync(fd) == 0 && pread(fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf);
	atomic_store(&io_done, ok && !past_deadline() ? 1 : -1);
	futex_wake_all(&turn);
	return NULL;
}

int main(void)
{
	char path[] = "/tmp/busy_while_io-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0 || unlink(path) || write(fd, "0123456789abcdef", 16) != 16) {
		perror("scratch file");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += 60;
	pthread_t a = spawn(player, (void *)0), b = spawn(player, (void *)1), c = spawn(io, &fd);
	pthread_join(c, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	result("fdatasync and pread return while two threads play futex ping-pong",
	       atomic_load(&io_done) == 1);
	close(fd);
	return failed;
}
