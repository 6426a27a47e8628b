/*
 * Process-shared mutexes and condition variables (PTHREAD_PROCESS_SHARED,
 * in MAP_SHARED memory) between a parent and its forked child (POSIX
 * pthread_mutexattr_setpshared, pthread_condattr_setpshared):
 *   0. within the process: a recursive process-shared mutex held by main
 *      is EBUSY to another thread's trylock (ownership is the thread's);
 *   1. the parent holds the mutex: the child's trylock is EBUSY, and its
 *      lock waits until the parent unlocks;
 *   2. the child waits on a condition variable for a flag the parent sets
 *      and signals (and the parent then for the child's answer);
 *   3. a thread of the child cancelled in pthread_cond_wait on the shared
 *      condition holds the (error-checking) mutex in its cleanup handler:
 *      its unlock there succeeds, and the parent can take the mutex after.
 * The child reports through its exit status.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK_NAME "pshared_fork"
#include "check.h"

struct shared {
	pthread_mutex_t m;
	pthread_cond_t c;
	int flag, answer;
	_Atomic int stage;
	int unlock_err;
};

static struct shared *sh;

static int child_exit(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void wait_stage(int s)
{
	while (atomic_load(&sh->stage) < s)
		sleep_ms(1);
}

static void *trylock_thread(void *m)
{
	return (void *)(long)pthread_mutex_trylock(m);
}

static void unlock_in_cleanup(void *arg)
{
	(void)arg;
	sh->unlock_err = pthread_mutex_unlock(&sh->m);
}

static void *cond_waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&sh->m);
	pthread_cleanup_push(unlock_in_cleanup, NULL);
	atomic_store(&sh->stage, 1);
	while (!sh->flag)
		pthread_cond_wait(&sh->c, &sh->m);
	pthread_cleanup_pop(1);
	return NULL;
}

int main(void)
{
	pthread_mutexattr_t ma;
	pthread_condattr_t ca;
	pid_t pid;

	sh = mmap(NULL, 2 * sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&sh->m, &ma);
	pthread_condattr_init(&ca);
	pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
	pthread_cond_init(&sh->c, &ca);

	/* 0. another thread of this process */
	pthread_mutex_t *rm = (pthread_mutex_t *)(sh + 1);
	pthread_mutexattr_t ra;
	void *r0 = NULL;
	pthread_mutexattr_init(&ra);
	pthread_mutexattr_setpshared(&ra, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_settype(&ra, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(rm, &ra);
	pthread_mutex_lock(rm);
	pthread_join(spawn(trylock_thread, rm), &r0);
	pthread_mutex_unlock(rm);
	result("another thread's trylock of a held recursive shared mutex is EBUSY", r0 == (void *)EBUSY);

	/* 1. trylock and lock against the parent's hold */
	pthread_mutex_lock(&sh->m);
	pid = fork();
	if (pid == 0) {
		int e1 = pthread_mutex_trylock(&sh->m);
		atomic_store(&sh->stage, 1);
		int e2 = pthread_mutex_lock(&sh->m); /* until the parent unlocks */
		int e3 = e2 ? e2 : pthread_mutex_unlock(&sh->m);
		_exit(e1 == EBUSY && e2 == 0 && e3 == 0 ? 0 : 1);
	}
	wait_stage(1);
	sleep_ms(50);
	pthread_mutex_unlock(&sh->m);
	result("the child's trylock of the parent's mutex is EBUSY; its lock waits for the unlock",
	       child_exit(pid) == 0);

	/* 2. condition variable across processes */
	atomic_store(&sh->stage, 0);
	pid = fork();
	if (pid == 0) {
		int ok = 1;
		pthread_mutex_lock(&sh->m);
		atomic_store(&sh->stage, 1);
		while (!sh->flag)
			if (pthread_cond_wait(&sh->c, &sh->m))
				ok = 0;
		sh->answer = 42;
		pthread_cond_signal(&sh->c);
		if (pthread_mutex_unlock(&sh->m))
			ok = 0;
		_exit(ok ? 0 : 1);
	}
	wait_stage(1);
	pthread_mutex_lock(&sh->m);
	sh->flag = 1;
	pthread_cond_signal(&sh->c);
	while (!sh->answer)
		pthread_cond_wait(&sh->c, &sh->m);
	pthread_mutex_unlock(&sh->m);
	result("a condition variable signalled across processes, both ways",
	       child_exit(pid) == 0 && sh->answer == 42);

	/* 3. a cancelled waiter in the child unlocks in its cleanup handler */
	sh->flag = 0;
	sh->unlock_err = -1;
	atomic_store(&sh->stage, 0);
	pid = fork();
	if (pid == 0) {
		void *r = NULL;
		pthread_t t = spawn(cond_waiter, NULL);
		wait_stage(1);
		sleep_ms(50);
		pthread_cancel(t);
		pthread_join(t, &r);
		_exit(r == PTHREAD_CANCELED && sh->unlock_err == 0 ? 0 : 1);
	}
	int st = child_exit(pid);
	int err = pthread_mutex_trylock(&sh->m);
	if (!err)
		pthread_mutex_unlock(&sh->m);
	result("a child's thread cancelled in the shared condition wait owns the mutex in its cleanup",
	       st == 0 && sh->unlock_err == 0 && err == 0);

	printf("pshared_fork: %s\n", failed ? "FAIL" : "PASS");
	return failed;
}
