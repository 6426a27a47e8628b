/*
 * Conformance: pthread_once and thread-specific data (POSIX pthread_once,
 * pthread_key_create, pthread_key_delete, pthread_setspecific,
 * pthread_getspecific; PTHREAD_DESTRUCTOR_ITERATIONS, PTHREAD_KEYS_MAX):
 *   1. pthread_once runs its routine once for one control, in the first
 *      caller, and again for another control; a routine may itself call
 *      pthread_once on a third control;
 *   2. a new thread's value of a key is NULL; values are per thread (4
 *      threads set their own and read them back after yielding);
 *   3. at thread exit (return or pthread_exit) the destructor runs once
 *      for each non-NULL value, in the exiting thread, with the value; the
 *      value reads NULL inside the destructor; no destructor runs for a
 *      NULL value;
 *   4. a destructor that sets a value again is called again, at most
 *      PTHREAD_DESTRUCTOR_ITERATIONS times in all (glibc stops there);
 *   5. pthread_key_delete runs no destructor, and a thread exiting after
 *      it runs none for that key;
 *   6. keys can be made until EAGAIN, and that is at least
 *      _POSIX_THREAD_KEYS_MAX (128) and at most PTHREAD_KEYS_MAX; deleting
 *      one lets one more be made;
 *   7. exit() from main runs no key destructor (in a forked child);
 *      pthread_exit from main runs main's (another forked child; the
 *      process then exits 0 when its last thread ends).
 * Deterministic output; exit 0 when every check held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK_NAME "posix_once_keys"
#include "check.h"

static pthread_once_t once_a = PTHREAD_ONCE_INIT, once_b = PTHREAD_ONCE_INIT, once_c = PTHREAD_ONCE_INIT;
static atomic_int ran_a, ran_b, ran_c;
static pthread_t ran_a_in;

static void init_c(void)
{
	atomic_fetch_add(&ran_c, 1);
}

static void init_a(void)
{
	ran_a_in = pthread_self();
	atomic_fetch_add(&ran_a, 1);
	pthread_once(&once_c, init_c);
}

static void init_b(void)
{
	atomic_fetch_add(&ran_b, 1);
}

static void *once_caller(void *arg)
{
	(void)arg;
	pthread_once(&once_a, init_a);
	pthread_once(&once_b, init_b);
	return NULL;
}

static void once(void)
{
	pthread_t t[4];

	pthread_once(&once_a, init_a);
	result("pthread_once ran the routine in the first caller", pthread_equal(ran_a_in, pthread_self()));
	for (int i = 0; i < 4; i++)
		t[i] = spawn(once_caller, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	result("5 callers, one control: the routine ran once", ran_a == 1);
	result("another control: its routine ran once", ran_b == 1);
	result("a routine's own pthread_once on a third control ran once", ran_c == 1);
}

static pthread_key_t key, key2;
static atomic_int dtor_calls, dtor_bad, dtor2_calls;
static _Thread_local int tls_mark;

static void dtor(void *v)
{
	atomic_fetch_add(&dtor_calls, 1);
	/* in the exiting thread (its TLS), with its value, and the value reads NULL now */
	if (v != &tls_mark || pthread_getspecific(key) != NULL)
		atomic_fetch_add(&dtor_bad, 1);
}

static void *per_thread(void *arg)
{
	long i = (long)arg;
	int ok = pthread_getspecific(key) == NULL;

	pthread_setspecific(key, (void *)(i + 1));
	for (int k = 0; k < 5; k++) {
		sched_yield();
		sleep_ms(1);
		ok &= pthread_getspecific(key) == (void *)(i + 1);
	}
	pthread_setspecific(key, NULL); /* no destructor for NULL */
	return (void *)(long)ok;
}

static void *set_mark(void *arg)
{
	pthread_setspecific(key, &tls_mark);
	if (arg)
		pthread_exit(NULL);
	return NULL;
}

static void values(void)
{
	pthread_t t[4];
	void *r;
	int ok = 1;

	pthread_key_create(&key, dtor);
	result("main's value of a new key is NULL", pthread_getspecific(key) == NULL);
	for (long i = 0; i < 4; i++)
		t[i] = spawn(per_thread, (void *)i);
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], &r);
		ok &= r != NULL;
	}
	result("4 threads: NULL at first, then each its own value", ok);
	result("no destructor for NULL values", dtor_calls == 0);
	pthread_join(spawn(set_mark, NULL), NULL);
	result("destructor ran once after return, in the thread, value NULL inside",
	       dtor_calls == 1 && dtor_bad == 0);
	pthread_join(spawn(set_mark, (void *)1), NULL);
	result("destructor ran once after pthread_exit", dtor_calls == 2 && dtor_bad == 0);
}

static void dtor_again(void *v)
{
	int n = atomic_fetch_add(&dtor2_calls, 1) + 1;

	(void)v;
	pthread_setspecific(key2, (void *)(long)(n + 1)); /* set again, every time */
}

static void *set_again(void *arg)
{
	(void)arg;
	pthread_setspecific(key2, (void *)1L);
	return NULL;
}

static void iterations(void)
{
	pthread_key_create(&key2, dtor_again);
	pthread_join(spawn(set_again, NULL), NULL);
	result("a destructor that sets the value again runs PTHREAD_DESTRUCTOR_ITERATIONS times",
	       dtor2_calls == PTHREAD_DESTRUCTOR_ITERATIONS);
	pthread_key_delete(key2);
}

static atomic_int dtor3_calls;
static pthread_key_t key3;
static atomic_int go;

static void dtor3(void *v)
{
	(void)v;
	atomic_fetch_add(&dtor3_calls, 1);
}

static void *set_then_wait(void *arg)
{
	(void)arg;
	pthread_setspecific(key3, (void *)1L);
	while (!atomic_load(&go))
		sleep_ms(1);
	return NULL;
}

static void delete(void)
{
	pthread_key_create(&key3, dtor3);
	pthread_setspecific(key3, (void *)1L);
	pthread_t t = spawn(set_then_wait, NULL);

	sleep_ms(20);
	result_err("pthread_key_delete", pthread_key_delete(key3), 0);
	result("... runs no destructor", dtor3_calls == 0);
	atomic_store(&go, 1);
	pthread_join(t, NULL);
	result("a thread exiting after the delete runs none for it", dtor3_calls == 0);
}

static void keys_max(void)
{
	static pthread_key_t keys[PTHREAD_KEYS_MAX + 1];
	int n = 0, err = 0;

	while (n <= PTHREAD_KEYS_MAX && (err = pthread_key_create(&keys[n], NULL)) == 0)
		n++;
	result_err("pthread_key_create until it fails: EAGAIN", err, EAGAIN);
	/* the program holds one key already (key) */
	result("keys made: at least _POSIX_THREAD_KEYS_MAX, at most PTHREAD_KEYS_MAX",
	       n + 1 >= _POSIX_THREAD_KEYS_MAX && n <= PTHREAD_KEYS_MAX);
	pthread_key_delete(keys[n / 2]);
	result_err("after one delete, one more key", pthread_key_create(&keys[n / 2], NULL), 0);
	result_err("and then EAGAIN again", pthread_key_create(&keys[n], NULL), EAGAIN);
	for (int i = 0; i < n; i++)
		pthread_key_delete(keys[i]);
}

static int pipe_fd;

static void write_dtor(void *v)
{
	(void)v;
	if (write(pipe_fd, "D", 1) != 1)
		_exit(5);
}

static void *child_worker(void *arg)
{
	(void)arg;
	sleep_ms(20);
	return NULL;
}

/* A child whose main sets a key with a destructor, then ends by exit() or pthread_exit. */
static void main_exit(int by_pthread_exit)
{
	int p[2], status = -1;
	char buf[8];

	if (pipe(p))
		exit(1);
	pid_t pid = fork();

	if (pid == 0) {
		pthread_key_t k;

		alarm(20);
		close(p[0]);
		pipe_fd = p[1];
		pthread_key_create(&k, write_dtor);
		pthread_setspecific(k, (void *)1L);
		if (by_pthread_exit) {
			pthread_t t;

			pthread_create(&t, NULL, child_worker, NULL);
			pthread_exit(NULL);
		}
		exit(0);
	}
	close(p[1]);
	ssize_t n = read(p[0], buf, sizeof buf);

	close(p[0]);
	waitpid(pid, &status, 0);
	if (by_pthread_exit) {
		result("pthread_exit from main runs main's destructor", n == 1);
		result("... and the process exits 0 after its last thread", WIFEXITED(status) && WEXITSTATUS(status) == 0);
	} else {
		result("exit() from main runs no key destructor", n == 0);
		result("... and the process exits 0", WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
}

int main(void)
{
	alarm(60);
	once();
	values();
	iterations();
	delete();
	keys_max();
	main_exit(0);
	main_exit(1);
	return failed;
}
