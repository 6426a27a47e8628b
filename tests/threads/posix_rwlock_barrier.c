/*
 * Conformance: what rwlock_storm.c and barrier_rounds.c leave out of
 * read-write locks and barriers (POSIX pthread_rwlock_*,
 * pthread_rwlockattr_*, pthread_barrier_*, pthread_barrierattr_*; glibc's
 * pthread_rwlockattr_setkind_np):
 *   1. rwlockattr: default pshared PRIVATE, 99 is EINVAL; kind defaults to
 *      PTHREAD_RWLOCK_PREFER_READER_NP, reads back what was set, and an
 *      unknown kind is EINVAL;
 *   2. readers share: 4 threads are inside one read lock at the same time
 *      (they meet at a barrier of 4 inside it: an exclusive read lock would
 *      hang there, and the watchdog reports that); meanwhile trywrlock is
 *      EBUSY and tryrdlock 0; after they leave, trywrlock is 0 and
 *      tryrdlock by another thread EBUSY;
 *   3. a writer blocked in wrlock gets the lock when the last of 3 read
 *      holds (one thread's nested pair, another's single) is released, not
 *      before;
 *   4. barrierattr: default pshared PRIVATE, 99 is EINVAL;
 *   5. a barrier of 3, reused for 3 rounds: 2 threads wait in it and have
 *      not left 30 ms later; main's wait releases them; each round exactly
 *      one of the three gets PTHREAD_BARRIER_SERIAL_THREAD, the others 0;
 *   6. spin locks: init with either pshared value; lock, then trylock by
 *      another thread is EBUSY; unlock, then it is 0.
 * Deterministic output; exit 0 when every check held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#define CHECK_NAME "posix_rwlock_barrier"
#include "check.h"

static pthread_rwlock_t rw;
static pthread_barrier_t inside;

static void rwlock_attributes(void)
{
	pthread_rwlockattr_t a;
	int v = -1;

	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_getpshared(&a, &v);
	result("rwlockattr default pshared is PRIVATE", v == PTHREAD_PROCESS_PRIVATE);
	result_err("rwlockattr_setpshared(99) is EINVAL", pthread_rwlockattr_setpshared(&a, 99), EINVAL);
	pthread_rwlockattr_getkind_np(&a, &v);
	result("rwlockattr default kind prefers readers", v == PTHREAD_RWLOCK_PREFER_READER_NP);
	result_err("rwlockattr_setkind_np(writer nonrecursive)",
		   pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP), 0);
	pthread_rwlockattr_getkind_np(&a, &v);
	result("rwlockattr_getkind_np reads it back", v == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	result_err("rwlockattr_setkind_np(99) is EINVAL", pthread_rwlockattr_setkind_np(&a, 99), EINVAL);
	pthread_rwlockattr_destroy(&a);
}

static void *reader(void *arg)
{
	(void)arg;
	if (pthread_rwlock_rdlock(&rw) != 0)
		return (void *)1L;
	pthread_barrier_wait(&inside); /* all 4 hold it now */
	pthread_barrier_wait(&inside); /* main has tried its locks */
	pthread_rwlock_unlock(&rw);
	return NULL;
}

static void *try_rd(void *arg)
{
	(void)arg;
	int err = pthread_rwlock_tryrdlock(&rw);

	if (err == 0)
		pthread_rwlock_unlock(&rw);
	return (void *)(long)err;
}

static void readers_share(void)
{
	pthread_t t[4];
	void *r;
	int bad = 0;

	pthread_rwlock_init(&rw, NULL);
	pthread_barrier_init(&inside, NULL, 5);
	for (int i = 0; i < 4; i++)
		t[i] = spawn(reader, NULL);
	pthread_barrier_wait(&inside);
	result("4 readers hold one rwlock at once", 1);
	result_err("trywrlock while readers hold it is EBUSY", pthread_rwlock_trywrlock(&rw), EBUSY);
	int err = pthread_rwlock_tryrdlock(&rw);

	result_err("tryrdlock while readers hold it", err, 0);
	if (err == 0)
		pthread_rwlock_unlock(&rw);
	pthread_barrier_wait(&inside);
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], &r);
		bad |= r != NULL;
	}
	result("every reader's rdlock returned 0", !bad);
	result_err("trywrlock once the readers left", pthread_rwlock_trywrlock(&rw), 0);
	pthread_join(spawn(try_rd, NULL), &r);
	result_err("tryrdlock by another thread while write-held is EBUSY", (int)(long)r, EBUSY);
	pthread_rwlock_unlock(&rw);
	pthread_barrier_destroy(&inside);
}

static atomic_int holding, released, let_go[3];

static void *nested_reader(void *arg)
{
	int n = (int)(long)arg;

	for (int i = 0; i < n; i++)
		pthread_rwlock_rdlock(&rw);
	atomic_fetch_add(&holding, 1);
	while (!atomic_load(&let_go[n]))
		sleep_ms(1);
	for (int i = 0; i < n; i++)
		pthread_rwlock_unlock(&rw);
	atomic_fetch_add(&released, 1);
	return NULL;
}

static atomic_int writer_in;

static void *writer(void *arg)
{
	(void)arg;
	int err = pthread_rwlock_wrlock(&rw);

	atomic_store(&writer_in, 1);
	if (err == 0)
		pthread_rwlock_unlock(&rw);
	return (void *)(long)err;
}

static void writer_waits(void)
{
	pthread_t a, b, w;
	void *r;

	a = spawn(nested_reader, (void *)2L);
	b = spawn(nested_reader, (void *)1L);
	while (atomic_load(&holding) < 2)
		sleep_ms(1);
	w = spawn(writer, NULL);
	sleep_ms(50);
	result("a writer waits while 3 read holds remain", !atomic_load(&writer_in));
	atomic_store(&let_go[1], 1); /* the single reader lets go */
	while (atomic_load(&released) < 1)
		sleep_ms(1);
	sleep_ms(30);
	result("... and while the nested pair remains", !atomic_load(&writer_in));
	atomic_store(&let_go[2], 1); /* the nested reader lets go of both */
	pthread_join(w, &r);
	result_err("the writer gets it after the last read unlock", (int)(long)r, 0);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	pthread_rwlock_destroy(&rw);
}

static pthread_barrier_t b3;
static atomic_int serials, zeros, others, left;

static void count_return(int v)
{
	if (v == PTHREAD_BARRIER_SERIAL_THREAD)
		atomic_fetch_add(&serials, 1);
	else if (v == 0)
		atomic_fetch_add(&zeros, 1);
	else
		atomic_fetch_add(&others, 1);
}

static void *barrier_thread(void *arg)
{
	(void)arg;
	count_return(pthread_barrier_wait(&b3));
	atomic_fetch_add(&left, 1);
	return NULL;
}

static void barriers(void)
{
	pthread_barrierattr_t a;
	pthread_t t[2];
	int v = -1, ok = 1;

	pthread_barrierattr_init(&a);
	pthread_barrierattr_getpshared(&a, &v);
	result("barrierattr default pshared is PRIVATE", v == PTHREAD_PROCESS_PRIVATE);
	result_err("barrierattr_setpshared(99) is EINVAL", pthread_barrierattr_setpshared(&a, 99), EINVAL);
	result_err("barrier_init with an attribute", pthread_barrier_init(&b3, &a, 3), 0);
	pthread_barrierattr_destroy(&a);
	for (int round = 0; round < 3; round++) {
		atomic_store(&left, 0);
		for (int i = 0; i < 2; i++)
			t[i] = spawn(barrier_thread, NULL);
		sleep_ms(30);
		ok &= atomic_load(&left) == 0;
		count_return(pthread_barrier_wait(&b3));
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
	}
	result("barrier of 3: 2 waiters stay until the third arrives", ok);
	result("each round: one PTHREAD_BARRIER_SERIAL_THREAD, two 0",
	       serials == 3 && zeros == 6 && others == 0);
	result_err("barrier_destroy", pthread_barrier_destroy(&b3), 0);
}

static pthread_spinlock_t spin;

static void *spin_try(void *arg)
{
	(void)arg;
	int err = pthread_spin_trylock(&spin);

	if (err == 0)
		pthread_spin_unlock(&spin);
	return (void *)(long)err;
}

static void spins(void)
{
	void *r;

	result_err("spin_init PRIVATE", pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE), 0);
	pthread_spin_destroy(&spin);
	result_err("spin_init SHARED", pthread_spin_init(&spin, PTHREAD_PROCESS_SHARED), 0);
	pthread_spin_lock(&spin);
	pthread_join(spawn(spin_try, NULL), &r);
	result_err("spin_trylock by another thread while held is EBUSY", (int)(long)r, EBUSY);
	pthread_spin_unlock(&spin);
	pthread_join(spawn(spin_try, NULL), &r);
	result_err("spin_trylock once free", (int)(long)r, 0);
	result_err("spin_destroy", pthread_spin_destroy(&spin), 0);
}

int main(void)
{
	alarm(60);
	rwlock_attributes();
	readers_share();
	writer_waits();
	barriers();
	spins();
	return failed;
}
