/*
 * Kernel state that is per thread: each thread sees only its own.
 *   1. robust list: every thread's get_robust_list is the head in its own
 *      thread descriptor, at the main thread's offset, even after earlier
 *      threads (300, 30 at a time, joined and freed) set theirs to a copy
 *      on their stack, as stress-ng's pthread stressor does;
 *   2. a robust mutex whose owner thread exits: the next locker gets
 *      EOWNERDEAD, and after pthread_mutex_consistent the mutex works;
 *   3. sigaltstack: a new thread has none; 8 threads at a time, half of
 *      them with an alternate stack of their own, switch (usleep) and
 *      raise SIGUSR1 (SA_ONSTACK) 20 times: the handler runs on the
 *      thread's own alternate stack, or on its normal stack when it has
 *      none, and sigaltstack (libc or syscall) reports the thread's own;
 *   4. names: PR_SET_NAME in a thread is its name (PR_GET_NAME and
 *      pthread_getname_np agree, across switches); a thread created later
 *      does not see it: never named, it has its creator's (both calls,
 *      from itself and from main).
 * Deterministic output; exit 0 when every check held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CHECK_NAME "thread_kstate"
#include "check.h"

static _Atomic int bad;
static long robust_offset;

static void *robust_thread(void *arg)
{
	struct robust_list_head *head;
	size_t len;

	(void)arg;
	if (syscall(SYS_get_robust_list, 0, &head, &len) || len != sizeof(*head) ||
	    (char *)head - (char *)pthread_self() != robust_offset) {
		atomic_fetch_add(&bad, 1);
		return NULL;
	}
	struct robust_list_head copy = *head; /* what stress-ng does */
	if (syscall(SYS_set_robust_list, &copy, sizeof(copy)))
		atomic_fetch_add(&bad, 1);
	if (syscall(SYS_set_robust_list, &copy, 0) != -1 || errno != EINVAL)
		atomic_fetch_add(&bad, 1);
	struct robust_list_head *now;
	if (syscall(SYS_get_robust_list, 0, &now, &len) || now != &copy)
		atomic_fetch_add(&bad, 1);
	return NULL; /* its robust list stays set to a frame that is gone */
}

static pthread_mutex_t robust_mutex;

static void *die_holding(void *arg)
{
	(void)arg;
	if (pthread_mutex_lock(&robust_mutex))
		atomic_fetch_add(&bad, 1);
	return NULL;
}

/* ---- sigaltstack ---- */

#define ALT_SIZE (64 * 1024)
static __thread char *alt_lo;  /* this thread's alternate stack, or NULL */
static __thread _Atomic int handled, on_alt;

static void on_usr1(int sig)
{
	char here;

	(void)sig;
	handled++;
	if (alt_lo && &here >= alt_lo && &here < alt_lo + ALT_SIZE)
		on_alt++;
}

static void *alt_thread(void *arg)
{
	int mine = (int)(intptr_t)arg & 1;
	stack_t cur, ss;

	if (sigaltstack(NULL, &cur) || !(cur.ss_flags & SS_DISABLE)) {
		atomic_fetch_add(&bad, 1); /* a new thread has no alternate stack */
		return NULL;
	}
	char *mem = mine ? malloc(ALT_SIZE) : NULL;
	if (mine) {
		ss.ss_sp = mem;
		ss.ss_size = ALT_SIZE;
		ss.ss_flags = 0;
		if (sigaltstack(&ss, NULL)) {
			atomic_fetch_add(&bad, 1);
			return NULL;
		}
		alt_lo = mem;
	}
	for (int i = 0; i < 20; i++) {
		usleep(500);
		raise(SIGUSR1);
		if (syscall(SYS_sigaltstack, NULL, &cur) ||
		    (mine ? cur.ss_sp != mem || (cur.ss_flags & SS_DISABLE) : !(cur.ss_flags & SS_DISABLE)))
			atomic_fetch_add(&bad, 1);
	}
	if (handled != 20 || on_alt != (mine ? 20 : 0))
		atomic_fetch_add(&bad, 1);
	if (mine) {
		ss.ss_flags = SS_DISABLE;
		if (sigaltstack(&ss, NULL))
			atomic_fetch_add(&bad, 1);
		free(mem);
	}
	return NULL;
}

/* ---- names ---- */

static void *named_thread(void *arg)
{
	char name[16] = "", pname[16] = "";

	(void)arg;
	prctl(PR_SET_NAME, "kstate-named");
	for (int i = 0; i < 10; i++) {
		usleep(500);
		prctl(PR_GET_NAME, name);
		pthread_getname_np(pthread_self(), pname, sizeof(pname));
		if (strcmp(name, "kstate-named") || strcmp(pname, "kstate-named"))
			atomic_fetch_add(&bad, 1);
	}
	return NULL;
}

static void *later_thread(void *arg)
{
	char name[16] = "", pname[16] = "";

	usleep(200); /* to be seen from main, and maybe to move */
	prctl(PR_GET_NAME, name);
	pthread_getname_np(pthread_self(), pname, sizeof(pname));
	if (strcmp(name, (const char *)arg) || strcmp(pname, (const char *)arg))
		atomic_fetch_add(&bad, 1);
	return NULL;
}

static void spawn_join(int n, void *(*fn)(void *), void *arg, int pass_index)
{
	pthread_t t[32];

	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, fn, pass_index ? (void *)(intptr_t)i : arg)) {
			perror("pthread_create");
			exit(1);
		}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

int main(void)
{
	struct robust_list_head *head;
	size_t len;

	if (syscall(SYS_get_robust_list, 0, &head, &len)) {
		printf("thread_kstate: no robust lists here\n");
		return 0;
	}
	robust_offset = (char *)head - (char *)pthread_self();

	/* 1 */
	for (int round = 0; round < 10; round++)
		spawn_join(30, robust_thread, NULL, 0);
	result("get_robust_list is the thread's own, after 300 threads set theirs", atomic_exchange(&bad, 0) == 0);

	/* 2 */
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&robust_mutex, &ma);
	spawn_join(1, die_holding, NULL, 0);
	int r = pthread_mutex_lock(&robust_mutex);
	int ok = r == EOWNERDEAD && pthread_mutex_consistent(&robust_mutex) == 0 &&
		 pthread_mutex_unlock(&robust_mutex) == 0 && pthread_mutex_lock(&robust_mutex) == 0 &&
		 pthread_mutex_unlock(&robust_mutex) == 0;
	result("robust mutex of an exited thread: EOWNERDEAD, then usable", ok && atomic_exchange(&bad, 0) == 0);

	/* 3 */
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	for (int round = 0; round < 4; round++)
		spawn_join(8, alt_thread, NULL, 1);
	result("sigaltstack is the thread's own, across switches", atomic_exchange(&bad, 0) == 0);

	/* 4 */
	char mine[16] = "";
	prctl(PR_GET_NAME, mine);
	spawn_join(1, named_thread, NULL, 0);
	for (int i = 0; i < 4; i++)
		spawn_join(4, later_thread, mine, 0);
	for (int i = 0; i < 4; i++) {
		pthread_t t;
		char pname[16] = "";
		if (pthread_create(&t, NULL, later_thread, mine)) {
			perror("pthread_create");
			exit(1);
		}
		if (pthread_getname_np(t, pname, sizeof(pname)) || strcmp(pname, mine))
			atomic_fetch_add(&bad, 1);
		pthread_join(t, NULL);
	}
	char after[16] = "";
	prctl(PR_GET_NAME, after);
	result("PR_SET_NAME names only its thread", strcmp(mine, after) == 0 && atomic_exchange(&bad, 0) == 0);
	return failed;
}
