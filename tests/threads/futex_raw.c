/*
 * A program's own futex-based lock (as MariaDB's InnoDB has), through
 * syscall(SYS_futex, ...):
 *   1. 8 threads x 2,000 increments under a futex mutex whose holder
 *      sleeps 50 us now and then inside the critical section (so waiters
 *      really wait in FUTEX_WAIT): the count is exact;
 *   2. FUTEX_WAIT on a word that no longer holds the value: EAGAIN;
 *   3. FUTEX_WAIT with a 50 ms relative timeout: ETIMEDOUT after >= 50 ms;
 *   4. FUTEX_WAIT_BITSET with an absolute CLOCK_MONOTONIC timeout: ETIMEDOUT;
 *   5. FUTEX_WAKE_BITSET wakes only a waiter whose bitset matches;
 *   6. FUTEX_CMP_REQUEUE: one waiter woken, the others moved to a second
 *      word and woken from there; with a stale value: EAGAIN.
 * Every wait is bounded (timeouts of 5 to 10 s): a lost wake-up is a FAIL,
 * not a hang. No check assumes a thread has reached its wait after some
 * sleep: wakes are repeated until they reach it (see wake_bitset_until).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "futex_raw"
#include "check.h"

static long futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts,
		  _Atomic uint32_t *addr2, uint32_t val3)
{
	return syscall(SYS_futex, addr, op, val, ts, addr2, val3);
}

/* ---- 1. a futex mutex: 0 free, 1 locked, 2 locked with waiters ---- */

static _Atomic uint32_t lock_word;
static long counter;

static void lock(void)
{
	uint32_t c = 0;

	if (atomic_compare_exchange_strong(&lock_word, &c, 1))
		return;
	if (c != 2)
		c = atomic_exchange(&lock_word, 2);
	while (c) {
		struct timespec five = { 5, 0 };
		futex(&lock_word, FUTEX_WAIT_PRIVATE, 2, &five, NULL, 0);
		c = atomic_exchange(&lock_word, 2);
	}
}

static void unlock(void)
{
	if (atomic_exchange(&lock_word, 0) == 2)
		futex(&lock_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *incrementer(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2000; i++) {
		lock();
		long v = counter;
		if (i % 100 == 0)
			usleep(50); /* the holder sleeps: others pile up in FUTEX_WAIT */
		counter = v + 1;
		unlock();
	}
	return NULL;
}

/* ---- 5 and 6: waiters that report how their wait ended ---- */

static _Atomic uint32_t word_a, word_b;
static _Atomic int waiting;

struct waiter_arg {
	_Atomic uint32_t *addr;
	uint32_t bitset;
	long ret;
};

static void *bit_waiter(void *p)
{
	struct waiter_arg *w = p;
	struct timespec abs;

	clock_gettime(CLOCK_MONOTONIC, &abs);
	abs.tv_sec += 10; /* a lost wake-up is ETIMEDOUT, not a hang */
	w->ret = futex(w->addr, FUTEX_WAIT_BITSET_PRIVATE, 0, &abs, NULL, w->bitset);
	return NULL;
}

static void *plain_waiter(void *p)
{
	struct waiter_arg *w = p;
	struct timespec ten = { 10, 0 };

	atomic_fetch_add(&waiting, 1);
	w->ret = futex(w->addr, FUTEX_WAIT_PRIVATE, 0, &ten, NULL, 0);
	return NULL;
}

/*
 * No sleep can tell that a waiter is queued in its FUTEX_WAIT yet. So the
 * wakes below are repeated every millisecond (for up to 5 s) until they
 * reach whom they must: a waiter that was late is reached by a later try;
 * one that was wrongly woken earlier, or lost, is never reached, which
 * fails the check.
 */
static long wake_bitset_until(_Atomic uint32_t *addr, uint32_t bitset)
{
	long n = 0;

	for (int i = 0; i < 5000 && n == 0; i++) {
		n = futex(addr, FUTEX_WAKE_BITSET_PRIVATE, 1, NULL, NULL, bitset);
		if (n == 0)
			usleep(1000);
	}
	return n;
}

int main(void)
{
	pthread_t t[8];

	for (int i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, incrementer, NULL);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	result("futex mutex: 8 x 2,000 increments, exact", counter == 16000);

	_Atomic uint32_t w = 1;
	long r = futex(&w, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	result("FUTEX_WAIT on a changed word: EAGAIN", r == -1 && errno == EAGAIN);

	struct timespec tenth = { 0, 50000000L };
	double t0 = now_s();
	r = futex(&w, FUTEX_WAIT_PRIVATE, 1, &tenth, NULL, 0);
	result("FUTEX_WAIT, 50 ms: ETIMEDOUT", r == -1 && errno == ETIMEDOUT && now_s() - t0 >= 0.049);

	struct timespec abs;
	clock_gettime(CLOCK_MONOTONIC, &abs);
	abs.tv_nsec += 50000000L;
	if (abs.tv_nsec >= 1000000000L)
		abs.tv_sec++, abs.tv_nsec -= 1000000000L;
	r = futex(&w, FUTEX_WAIT_BITSET_PRIVATE, 1, &abs, NULL, FUTEX_BITSET_MATCH_ANY);
	result("FUTEX_WAIT_BITSET, absolute deadline: ETIMEDOUT", r == -1 && errno == ETIMEDOUT);

	/*
	 * 5: two waiters with bitsets 1 and 2. A wake for bitset 2 wakes the
	 * second; the first, still queued, is then woken by a wake for bitset 1
	 * (had the first wake reached it too, nobody would be left for this one).
	 */
	struct waiter_arg b1 = { &word_a, 1, -2 }, b2 = { &word_a, 2, -2 };
	pthread_create(&t[0], NULL, bit_waiter, &b1);
	pthread_create(&t[1], NULL, bit_waiter, &b2);
	long n2 = wake_bitset_until(&word_a, 2);
	pthread_join(t[1], NULL);
	long n1 = wake_bitset_until(&word_a, 1);
	pthread_join(t[0], NULL);
	result("FUTEX_WAKE_BITSET wakes only the matching waiter",
	       n2 == 1 && b2.ret == 0 && n1 == 1 && b1.ret == 0);

	/*
	 * 6: three waiters on a. CMP_REQUEUE wakes one and moves the others to
	 * b, whose wake then ends exactly those two. It returns how many it
	 * woke and moved, waking first: while some waiter is not queued yet it
	 * is repeated (waking no more once one is woken) until all three are
	 * accounted for.
	 */
	struct waiter_arg q[3] = { { &word_a, 0, -2 }, { &word_a, 0, -2 }, { &word_a, 0, -2 } };
	atomic_store(&waiting, 0);
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, plain_waiter, &q[i]);
	for (int i = 0; i < 5000 && atomic_load(&waiting) < 3; i++)
		usleep(1000);
	r = futex(&word_a, FUTEX_CMP_REQUEUE_PRIVATE, 1, (const struct timespec *)(uintptr_t)10, &word_b, 1);
	int stale = r == -1 && errno == EAGAIN;
	long woken = 0, moved = 0;
	for (int i = 0; i < 5000 && woken + moved < 3; i++) {
		r = futex(&word_a, FUTEX_CMP_REQUEUE_PRIVATE, woken ? 0 : 1,
			  (const struct timespec *)(uintptr_t)10, &word_b, 0);
		if (r < 0)
			break;
		if (!woken && r > 0)
			woken = 1, r--;
		moved += r;
		if (woken + moved < 3)
			usleep(1000);
	}
	long n = futex(&word_b, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	result("FUTEX_CMP_REQUEUE with a stale value: EAGAIN", stale);
	result("FUTEX_CMP_REQUEUE: one woken, two moved and woken from the second word",
	       woken == 1 && moved == 2 && n == 2 && q[0].ret == 0 && q[1].ret == 0 && q[2].ret == 0);
	return failed;
}
