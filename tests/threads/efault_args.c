/*
 * Bad pointers to the sleep and signal calls fail with EFAULT, as the
 * system calls do (nanosleep(2), clock_nanosleep(2), sigprocmask(2),
 * sigpending(2), sigsuspend(2), sigtimedwait(2)), on the main thread and
 * on another; NULL and a page mapped PROT_NONE:
 *   1. nanosleep and clock_nanosleep of such a request: EFAULT; a sleep
 *      that is not cut short leaves rem alone (the kernel writes it only
 *      when a handler cut it short): a bad rem is then no error;
 *   2. sigprocmask with a bad old set (NULL meaning none: address 8
 *      instead): EFAULT, and the new mask is in place (the kernel writes
 *      the old set out last); the old set written is the kernel's 8
 *      bytes, the rest of glibc's 128-byte sigset_t untouched (a bad new
 *      set is not tried: glibc's own wrapper reads it first, and dies);
 *   3. sigpending, sigsuspend, sigtimedwait (set, timeout) with a bad
 *      pointer: EFAULT at once.
 * Under FlexSC-Threads, which serves these without the kernel, most of
 * them died of SIGSEGV, and sigsuspend(NULL) never returned.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <sys/mman.h>

#define CHECK_NAME "efault_args"
#include "check.h"

static void *gone;

static int err_of(int r)
{
	return r == -1 ? errno : 0;
}

static bool blocked(int sig)
{
	sigset_t now;

	pthread_sigmask(SIG_BLOCK, NULL, &now);
	return sigismember(&now, sig);
}

static void checks(const char *who)
{
	void *bad[] = { NULL, gone };
	const char *name[] = { "NULL", "PROT_NONE" };
	struct timespec short_nap = { 0, 1000 };
	sigset_t usr1 = sigset_of(SIGUSR1);
	char what[160];

	for (int i = 0; i < 2; i++) {
#define CHECK_ERR(call, want)                                                        \
	do {                                                                         \
		snprintf(what, sizeof(what), "%s: %s, %s: %s", who, #call, name[i], #want); \
		errno = 0;                                                           \
		result_err(what, call, want);                                        \
	} while (0)
		CHECK_ERR(err_of(nanosleep(bad[i], NULL)), EFAULT);
		CHECK_ERR(clock_nanosleep(CLOCK_MONOTONIC, 0, bad[i], NULL), EFAULT);
		CHECK_ERR(clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, bad[i], NULL), EFAULT);
		CHECK_ERR(err_of(nanosleep(&short_nap, bad[i])), 0);
		CHECK_ERR(err_of(sigprocmask(SIG_BLOCK, &usr1, bad[i] ? bad[i] : (void *)8)), EFAULT);
		snprintf(what, sizeof(what), "%s: ... and SIGUSR1 blocked now", who);
		result(what, blocked(SIGUSR1));
		pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
		CHECK_ERR(err_of(sigpending(bad[i])), EFAULT);
		CHECK_ERR(err_of(sigsuspend(bad[i])), EFAULT);
		CHECK_ERR(err_of(sigtimedwait(bad[i], NULL, &short_nap)), EFAULT);
		CHECK_ERR(err_of(sigtimedwait(&usr1, NULL, bad[i] ? bad[i] : (void *)8)), EFAULT);
	}
	unsigned char old[sizeof(sigset_t)];
	memset(old, 0xa5, sizeof(old));
	pthread_sigmask(SIG_BLOCK, NULL, (sigset_t *)old);
	bool untouched = true;
	for (size_t b = 8; b < sizeof(old); b++)
		untouched = untouched && old[b] == 0xa5;
	snprintf(what, sizeof(what), "%s: the old set written is 8 bytes, the rest untouched", who);
	result(what, untouched);
}

static void *other(void *arg)
{
	checks("another thread");
	return arg;
}

int main(void)
{
	/* kept mapped, so that no later mapping (a thread's stack) takes its place */
	gone = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	checks("main");
	pthread_join(spawn(other, NULL), NULL);
	return failed;
}
