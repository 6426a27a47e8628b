/*
 * A library with __thread variables, dlopen'ed after threads exist.
 *
 * This file is both the program and the library: the test runner also
 * builds it with -DFLEXSC_TEST_SHLIB -shared -fPIC and passes the
 * library's path as the first argument. 16 threads start before the
 * dlopen and wait; then each (and 16 more created after it) checks that
 * the library's TLS starts from its initial image in that thread, sets its
 * own values, makes blocking calls, and checks they stayed its own, with
 * distinct addresses among live threads.
 */
// flexsc-test: shlib
#define _GNU_SOURCE

#ifdef FLEXSC_TEST_SHLIB
/* ---- the library ---- */
__thread long lib_value = 12345;
__thread char lib_big[65536]; /* large: too big for any static TLS surplus */

long lib_get(void) { return lib_value; }
void lib_set(long v) { lib_value = v; lib_big[0] = (char)v; lib_big[65535] = (char)(v >> 8); }
int lib_big_ok(long v) { return lib_big[0] == (char)v && lib_big[65535] == (char)(v >> 8); }
int lib_big_zero(void) { return lib_big[0] == 0 && lib_big[65535] == 0; }
void *lib_addr(void) { return &lib_value; }

#else
/* ---- the program ---- */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "dlopen_tls"
#include "check.h"

#define EARLY 16
#define LATE 16
#define N (EARLY + LATE)

static long (*lib_get)(void);
static void (*lib_set)(long);
static int (*lib_big_ok)(long);
static int (*lib_big_zero)(void);
static void *(*lib_addr)(void);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int loaded, at_end, expected_at_end;
static void *addrs[N];

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	long mine = 1000 + id;
	int p[2];
	char c = 0;

	pthread_mutex_lock(&lock);
	while (!loaded)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);

	EXPECT(lib_get() == 12345, "thread %d: the library's __thread variable does not start at its initial value",
	       id);
	EXPECT(lib_big_zero(), "thread %d: the library's zero-initialised TLS is not zero", id);
	lib_set(mine);
	if (pipe(p)) {
		EXPECT(0, "thread %d: pipe: %s", id, strerror(errno));
		return NULL;
	}
	for (int i = 0; i < 20; i++) {
		EXPECT(write(p[1], &c, 1) == 1 && read(p[0], &c, 1) == 1, "thread %d: pipe I/O", id);
		usleep(200);
		if (lib_get() != mine || !lib_big_ok(mine)) {
			EXPECT(0, "thread %d: the library's TLS changed across blocking calls", id);
			break;
		}
	}
	close(p[0]);
	close(p[1]);

	pthread_mutex_lock(&lock);
	addrs[id] = lib_addr();
	if (++at_end == expected_at_end)
		pthread_cond_broadcast(&cond);
	while (at_end < expected_at_end)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	EXPECT(lib_get() == mine, "thread %d: the library's TLS changed while waiting", id);
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	pthread_t t[N];

	if (argc < 2) {
		fprintf(stderr, "usage: %s LIBRARY.so (this source built with -DFLEXSC_TEST_SHLIB -shared -fPIC)\n",
			argv[0]);
		return 2;
	}
	expected_at_end = N;
	for (int i = 0; i < EARLY; i++)
		pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
	usleep(20000); /* they exist, and wait */

	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	lib_get = (long (*)(void))dlsym(h, "lib_get");
	lib_set = (void (*)(long))dlsym(h, "lib_set");
	lib_big_ok = (int (*)(long))dlsym(h, "lib_big_ok");
	lib_big_zero = (int (*)(void))dlsym(h, "lib_big_zero");
	lib_addr = (void *(*)(void))dlsym(h, "lib_addr");
	if (!lib_get || !lib_set || !lib_big_ok || !lib_big_zero || !lib_addr) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		return 1;
	}
	lib_set(7); /* main's own copy */

	pthread_mutex_lock(&lock);
	loaded = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	for (int i = EARLY; i < N; i++)
		pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);

	result("library TLS initial values in threads made before and after dlopen", misses() == 0);
	qsort(addrs, N, sizeof(addrs[0]), cmp);
	int apart = 1;
	for (int i = 1; i < N; i++)
		apart &= addrs[i] != addrs[i - 1] && addrs[i] != NULL;
	result("each live thread has its own copy", apart);
	result("main's copy untouched by the threads", lib_get() == 7 && lib_big_ok(7));
	dlclose(h);
	printf("dlopen_tls: %s\n", failed ? "FAIL" : "PASS");
	return failed;
}
#endif
