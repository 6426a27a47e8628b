/*
 * TLS and errno isolation across 1,000 threads.
 *
 * Each thread gives its own __thread variable, C11 thread_local variable and
 * errno values of its own, then makes blocking calls (a pipe ping-pong with
 * a partner thread, usleep, nanosleep) and checks after every call that all
 * three still hold its values: a runtime that shares or mixes thread
 * pointers between threads, or restores the wrong one after a switch, shows
 * here. Each thread also sets a pthread key whose destructor must run
 * exactly once per thread with that thread's value.
 *
 * Deterministic output; exit 0 when every check held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "tls_errno"
#include "check.h"

#define NTHREADS 1000 /* even: threads work in pairs */
#define ROUNDS 8

static __thread long tls_gnu = -1;
static thread_local long tls_c11 = -2;
static pthread_key_t key;

static _Atomic int destructor_calls;
static _Atomic long destructor_sum;

/* each thread reads from its own pipe and writes into its partner's */
static int pipes[NTHREADS][2];

/* every thread waits here at the end, so all are alive at once */
static pthread_mutex_t end_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t end_cond = PTHREAD_COND_INITIALIZER;
static int at_end;
static uintptr_t tls_addr[NTHREADS], c11_addr[NTHREADS], errno_addr[NTHREADS];

static void destructor(void *v)
{
	long id = (long)(intptr_t)v - 1; /* stored as id + 1: never NULL */

	atomic_fetch_add(&destructor_calls, 1);
	atomic_fetch_add(&destructor_sum, id);
}

/* The thread's own values: tls_gnu, tls_c11, errno, the key. */
static void check_mine(int id, const char *after)
{
	EXPECT(tls_gnu == 1000000L + id, "thread %d: after %s", id, after);
	EXPECT(tls_c11 == 2000000L + id, "thread %d: after %s", id, after);
	EXPECT(errno == 3000 + id, "thread %d: after %s", id, after);
	EXPECT(pthread_getspecific(key) == (void *)(intptr_t)(id + 1), "thread %d: after %s", id, after);
}

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg, partner = id ^ 1;
	char c;

	EXPECT(tls_gnu == -1 && tls_c11 == -2, "thread %d: at start", id); /* the initial images */
	EXPECT(pthread_getspecific(key) == NULL, "thread %d: at start", id);
	tls_gnu = 1000000L + id;
	tls_c11 = 2000000L + id;
	pthread_setspecific(key, (void *)(intptr_t)(id + 1));

	/* a failing call sets this thread's errno, and only this thread's */
	if (id % 2) {
		EXPECT(read(-1, &c, 1) == -1 && errno == EBADF, "thread %d: after read(-1)", id);
	} else {
		EXPECT(open("/nonexistent/flexsc-tls-errno", O_RDONLY) == -1 && errno == ENOENT,
		       "thread %d: after open(missing)", id);
	}
	errno = 3000 + id;
	check_mine(id, "setup");

	for (int r = 0; r < ROUNDS; r++) {
		/* ping-pong: the even thread of a pair writes first */
		char out = (char)(id + r), in = 0;
		if (id % 2 == 0) {
			EXPECT(write(pipes[partner][1], &out, 1) == 1, "thread %d: after write", id);
			check_mine(id, "write");
			EXPECT(read(pipes[id][0], &in, 1) == 1, "thread %d: after read", id);
			check_mine(id, "read");
			EXPECT(in == (char)(partner + r), "thread %d: after read", id);
		} else {
			EXPECT(read(pipes[id][0], &in, 1) == 1, "thread %d: after read", id);
			check_mine(id, "read");
			EXPECT(in == (char)(partner + r), "thread %d: after read", id);
			EXPECT(write(pipes[partner][1], &out, 1) == 1, "thread %d: after write", id);
			check_mine(id, "write");
		}
		usleep(100 + (unsigned)(id % 7) * 50);
		check_mine(id, "usleep");
		struct timespec ts = { 0, 50000 };
		nanosleep(&ts, NULL);
		check_mine(id, "nanosleep");
		sched_yield();
		check_mine(id, "sched_yield");
	}

	pthread_mutex_lock(&end_lock);
	check_mine(id, "pthread_mutex_lock");
	tls_addr[id] = (uintptr_t)&tls_gnu;
	c11_addr[id] = (uintptr_t)&tls_c11;
	errno_addr[id] = (uintptr_t)&errno;
	if (++at_end == NTHREADS)
		pthread_cond_broadcast(&end_cond);
	while (at_end < NTHREADS)
		pthread_cond_wait(&end_cond, &end_lock);
	check_mine(id, "pthread_cond_wait");
	pthread_mutex_unlock(&end_lock);
	check_mine(id, "end");
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

/* Distinct addresses for threads that were all alive at once. */
static int distinct(uintptr_t *v, const char *what)
{
	qsort(v, NTHREADS, sizeof(*v), cmp);
	for (int i = 1; i < NTHREADS; i++) {
		if (v[i] == v[i - 1]) {
			fprintf(stderr, "two live threads share the address of %s\n", what);
			return 0;
		}
	}
	return 1;
}

int main(void)
{
	pthread_t t[NTHREADS];
	pthread_attr_t attr;

	if (pthread_key_create(&key, destructor)) {
		fprintf(stderr, "pthread_key_create failed\n");
		return 1;
	}
	for (int i = 0; i < NTHREADS; i++) {
		if (pipe2(pipes[i], O_CLOEXEC)) {
			perror("pipe2");
			return 1;
		}
	}
	tls_gnu = 42;
	tls_c11 = 43;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 << 10);
	for (int i = 0; i < NTHREADS; i++) {
		int err = pthread_create(&t[i], &attr, worker, (void *)(intptr_t)i);
		if (err) {
			fprintf(stderr, "pthread_create %d: %s\n", i, strerror(err));
			return 1;
		}
	}
	errno = 77;
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);

	int main_errno = errno;
	EXPECT(tls_gnu == 42 && tls_c11 == 43 && main_errno == 77, "main's TLS or errno changed: %ld %ld %d",
	       tls_gnu, tls_c11, main_errno);
	int apart = distinct(tls_addr, "tls_gnu") & distinct(c11_addr, "tls_c11") &
		    distinct(errno_addr, "errno");
	long expect_sum = (long)NTHREADS * (NTHREADS - 1) / 2;
	int calls = atomic_load(&destructor_calls);
	if (calls != NTHREADS || atomic_load(&destructor_sum) != expect_sum)
		fprintf(stderr, "key destructor: %d calls (want %d), id sum %ld (want %ld)\n", calls,
			NTHREADS, atomic_load(&destructor_sum), expect_sum);
	printf("tls_errno: %d threads, %d rounds of blocking calls each\n", NTHREADS, ROUNDS);
	result("__thread, thread_local and errno isolated", misses() == 0);
	result("live threads have distinct TLS and errno addresses", apart);
	result("key destructor ran once per thread",
	       calls == NTHREADS && atomic_load(&destructor_sum) == expect_sum);
	printf("tls_errno: %s\n", failed ? "FAIL" : "PASS");
	return failed;
}
