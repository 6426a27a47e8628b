/*
 * Kernel threads started with glibc's own pthread_create, as a library
 * does when it looks the function up itself: jemalloc (redis-server's
 * malloc) starts its background thread with the pthread_create that
 * dlsym(RTLD_NEXT) finds from inside libjemalloc, which is glibc's, not
 * an interposed one. Such a thread must work as it does under NPTL
 * while ordinary threads run, calling mutexes, conditions, pipes,
 * nanosleep and malloc.
 *
 * Here glibc's function is taken from libc.so.6's own handle (what
 * RTLD_NEXT gives a library loaded after libc's interposers).
 *
 *   1. main holds a recursive mutex and spins (it does not give up its
 *      core) while a foreign thread it started tries it: EBUSY, its owner
 *      is main, not the foreign thread; then the foreign thread's
 *      pthread_self is what its creator got;
 *   2. two foreign threads (one started by main, one by another thread)
 *      and five ordinary threads work together for a while: a pipe
 *      ping-pong between a foreign thread and an ordinary one, a counter
 *      under a shared mutex, a condition with timed waits, nanosleep,
 *      malloc; the counter must come out exact.
 *
 * All of it runs in a forked child the parent waits for, at most 30 s:
 * a hang is a FAIL line, not a stuck test.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "foreign_kthread"
#include "check.h"

typedef int create_fn(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef int join_fn(pthread_t, void **);

static create_fn *glibc_create;
static join_fn *glibc_join;

static pthread_t glibc_spawn(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	int err = glibc_create(&t, NULL, fn, arg);

	if (err) {
		fprintf(stderr, "glibc's pthread_create: %s\n", strerror(err));
		exit(1);
	}
	return t;
}

/* ---- 1. a foreign thread and a mutex main holds ---- */

static pthread_mutex_t rec;
static _Atomic int tried, try_result = -1;
static _Atomic(pthread_t) self_seen;

static void *try_rec(void *arg)
{
	(void)arg;
	atomic_store(&self_seen, pthread_self());
	atomic_store(&try_result, pthread_mutex_trylock(&rec));
	if (atomic_load(&try_result) == 0)
		pthread_mutex_unlock(&rec);
	atomic_store(&tried, 1);
	return NULL;
}

static void check_owner(void)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&rec, &a);
	pthread_mutexattr_destroy(&a);
	pthread_mutex_lock(&rec);
	pthread_t t = glibc_spawn(try_rec, NULL);
	/* spin, no call that could switch: main stays its core's running thread */
	uint64_t t0 = now_ms();
	while (!atomic_load(&tried) && now_ms() - t0 < 10000)
		__builtin_ia32_pause();
	result("the foreign thread ran", atomic_load(&tried));
	result_err("its trylock of a recursive mutex main holds", atomic_load(&try_result), EBUSY);
	pthread_mutex_unlock(&rec);
	glibc_join(t, NULL);
	result("its pthread_self is what its creator got", pthread_equal(atomic_load(&self_seen), t));
}

/* ---- 2. foreign and ordinary threads together ---- */

#define ROUNDS 400
#define WORKERS 4
#define ITERS 400

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long counter;
static int to_echo[2], from_echo[2];
static _Atomic int bad_echo, bad_io, foreign_started;

static void count_one(void)
{
	pthread_mutex_lock(&m);
	counter++;
	pthread_mutex_unlock(&m);
}

static void churn(unsigned i)
{
	size_t n = 16 + (i * 37) % 4000;
	char *p = malloc(n);

	if (p) {
		memset(p, (int)i, n);
		free(p);
	}
}

/* ordinary thread: sends back what the foreign thread writes */
static void *echo(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		unsigned char b;
		if (read(to_echo[0], &b, 1) != 1 || write(from_echo[1], &b, 1) != 1) {
			atomic_store(&bad_io, 1);
			break;
		}
		count_one();
	}
	return NULL;
}

/* foreign thread: ping-pong with echo */
static void *pinger(void *arg)
{
	(void)arg;
	atomic_fetch_add(&foreign_started, 1);
	for (int i = 0; i < ROUNDS; i++) {
		unsigned char b = (unsigned char)i, r;
		if (write(to_echo[1], &b, 1) != 1 || read(from_echo[0], &r, 1) != 1) {
			atomic_store(&bad_io, 1);
			break;
		}
		if (r != b)
			atomic_store(&bad_echo, 1);
		count_one();
		churn((unsigned)i);
		if (i % 10 == 0)
			sleep_ms(0);
	}
	return NULL;
}

/* foreign thread: the counter, timed condition waits, nanosleep */
static void *waiter(void *arg)
{
	(void)arg;
	atomic_fetch_add(&foreign_started, 1);
	for (int i = 0; i < ITERS; i++) {
		struct timespec dl = ts_in_ms(CLOCK_REALTIME, 1);
		pthread_mutex_lock(&m);
		counter++;
		int err = pthread_cond_timedwait(&cv, &m, &dl);
		pthread_mutex_unlock(&m);
		if (err && err != ETIMEDOUT)
			atomic_store(&bad_io, 1);
		churn((unsigned)i);
		if (i % 20 == 0) {
			struct timespec ts = { 0, 100000 };
			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

/* ordinary thread: the counter, broadcasts, nanosleep, malloc */
static void *worker(void *arg)
{
	for (int i = 0; i < ITERS; i++) {
		pthread_mutex_lock(&m);
		counter++;
		if (i % 5 == 0)
			pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&m);
		churn((unsigned)i);
		if (i % 25 == 0) {
			struct timespec ts = { 0, 200000 };
			nanosleep(&ts, NULL);
		}
	}
	return arg;
}

/* ordinary thread: starts the second foreign thread and joins it */
static void *starter(void *arg)
{
	(void)arg;
	pthread_t t = glibc_spawn(waiter, NULL);
	worker(NULL);
	glibc_join(t, NULL);
	return NULL;
}

static void check_together(void)
{
	if (pipe(to_echo) || pipe(from_echo)) {
		perror("pipe");
		exit(1);
	}
	pthread_t e = spawn(echo, NULL);
	pthread_t f = glibc_spawn(pinger, NULL);
	pthread_t s = spawn(starter, NULL);
	pthread_t w[WORKERS];
	for (int i = 0; i < WORKERS; i++)
		w[i] = spawn(worker, NULL);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(w[i], NULL);
	pthread_join(s, NULL);
	pthread_join(e, NULL);
	glibc_join(f, NULL);
	result("both foreign threads ran", atomic_load(&foreign_started) == 2);
	result("pipe calls of the foreign thread and its partner", !atomic_load(&bad_io));
	result("the foreign thread read back what it wrote", !atomic_load(&bad_echo));
	long want = 2L * ROUNDS + (long)(WORKERS + 2) * ITERS;
	if (counter != want)
		fprintf(stderr, "counter %ld, want %ld\n", counter, want);
	result("the counter under the shared mutex", counter == want);
}

int main(void)
{
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

	glibc_create = libc ? (create_fn *)dlsym(libc, "pthread_create") : NULL;
	glibc_join = libc ? (join_fn *)dlsym(libc, "pthread_join") : NULL;
	if (!glibc_create || !glibc_join) {
		printf("%s: glibc's pthread_create not found (%s)\n", CHECK_NAME, dlerror());
		return 77;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		check_owner();
		check_together();
		fflush(stdout);
		_exit(failed);
	}
	int status = wait_bounded(pid, 30000);
	result("the child ended in time, exit 0", status == 0);
	return failed;
}
