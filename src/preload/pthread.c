/* SPDX-License-Identifier: MIT */
/*
 * The pthread ABI for the program's threads: creation, joining, exit,
 * keys, cleanup handlers, names, once.
 *
 * pthread_t is the thread's TCB address, as in NPTL, so glibc's own
 * pthread_self and pthread_equal (not interposed) agree with us. Attribute
 * objects keep glibc's layout: glibc's own attribute functions fill them
 * and we read them back through its getters, copying what we keep at
 * creation. Scheduling policy, priority and affinity are kept per thread
 * and reported back, with no effect on placement or order (carriers are
 * pinned; user threads are scheduled FIFO, cooperatively): docs/threads.md
 * says so.
 *
 * Errors follow the pthread convention: a positive errno is returned.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/cancel.h"
#include "preload/real.h"
#include "threads/signals.h"
#include "threads/waiter.h"

static _Atomic int next_id = 1;

/*
 * Scheduling policy and priority of a uthread: checked as the kernel
 * checks sched_setscheduler (EINVAL outside the policy's range; EPERM for
 * a real-time policy above RLIMIT_RTPRIO without root), kept, reported
 * back, inherited; they do not order the run queues (docs/threads.md).
 */
static int sched_check(int policy, const struct sched_param *sp)
{
	if (!sp)
		return EINVAL;
	if (policy != SCHED_OTHER && policy != SCHED_FIFO && policy != SCHED_RR &&
	    policy != SCHED_BATCH && policy != SCHED_IDLE)
		return EINVAL;
	int lo = sched_get_priority_min(policy), hi = sched_get_priority_max(policy);
	if (sp->sched_priority < lo || sp->sched_priority > hi)
		return EINVAL;
	if ((policy == SCHED_FIFO || policy == SCHED_RR) && geteuid() != 0) {
		struct rlimit rl;
		if (getrlimit(RLIMIT_RTPRIO, &rl) || (rlim_t)sp->sched_priority > rl.rlim_cur)
			return EPERM;
	}
	return 0;
}

FX_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
			     void *(*start)(void *), void *arg)
{
	if (!fx_rt_active)
		return REAL(pthread_create)(thread, attr, start, arg);

	size_t stack = fx_default_stack_size(), guard = (size_t)sysconf(_SC_PAGESIZE);
	void *user_stack = NULL;
	int detach = PTHREAD_CREATE_JOINABLE, err = 0, inherit = PTHREAD_INHERIT_SCHED;
	int policy = SCHED_OTHER;
	struct sched_param sp = { 0 };
	struct fx_uthread *me = fx_uthread_self();

	if (me) {
		policy = me->sched_policy;
		sp.sched_priority = me->sched_prio;
	}
	pthread_attr_t dflt;
	if (!attr && !pthread_getattr_default_np(&dflt)) {
		/* no attribute object: glibc's default one (pthread_setattr_default_np), as NPTL */
		size_t size = 0;
		pthread_attr_getstacksize(&dflt, &size);
		pthread_attr_getguardsize(&dflt, &guard);
		if (size)
			stack = size; /* glibc's: RLIMIT_STACK at start, unless one was set */
		pthread_attr_destroy(&dflt);
	}
	if (attr) {
		void *lo;
		size_t size;

		pthread_attr_getinheritsched(attr, &inherit);
		if (inherit == PTHREAD_EXPLICIT_SCHED) {
			pthread_attr_getschedpolicy(attr, &policy);
			pthread_attr_getschedparam(attr, &sp);
			if ((err = sched_check(policy, &sp)))
				return err;
		}
		pthread_attr_getdetachstate(attr, &detach);
		pthread_attr_getstacksize(attr, &stack);
		pthread_attr_getguardsize(attr, &guard);
		/* glibc reports the top (NULL when no stack was given) less the size */
		if (!pthread_attr_getstack(attr, &lo, &size) && (uintptr_t)lo + size != 0)
			user_stack = lo;
	}
	fx_rt_start_carriers();
	struct fx_uthread *u = fx_uthread_create(stack, guard, user_stack, start, arg, &err);
	if (!u)
		return err;
	u->sched_policy = policy;
	u->sched_prio = sp.sched_priority;
	u->sched_explicit = inherit == PTHREAD_EXPLICIT_SCHED;
	sigset_t given;
	if (attr && pthread_attr_getsigmask_np(attr, &given) == 0)
		u->sigmask = fx_sig_blockable(&given); /* glibc 2.32's: the mask it starts with */
	else if (me)
		u->sigmask = me->sigmask;
	if (me) {
		memcpy(u->name, me->name, sizeof(u->name)); /* a new thread has its creator's name */
		if (me->affinity && (u->affinity = malloc(sizeof(*u->affinity))))
			*u->affinity = *me->affinity; /* and its affinity */
	}
	u->id = atomic_fetch_add(&next_id, 1);
	atomic_store(&u->detached, detach == PTHREAD_CREATE_DETACHED);
	/* before it starts: it may run, exit and (detached) be freed at once, and may read it */
	*thread = (pthread_t)u->tcb;
	err = -fx_uthread_start(u);
	if (err)
		fx_uthread_free(u); /* never started */
	return err;
}

/* Waits until t exited and its context is saved; frees it. */
static void *reclaim(struct fx_uthread *t)
{
	while (atomic_load_explicit(&t->on_cpu, memory_order_acquire))
		__builtin_ia32_pause();
	void *result = t->result;
	if (t != fx_main_uthread)
		fx_uthread_free(t);
	return result;
}

static int join(pthread_t thread, void **ret, bool try, clockid_t clock, const struct timespec *abs)
{
	struct fx_uthread *t = fx_rt_active ? fx_uthread_of((uintptr_t)thread) : NULL;
	struct fx_uthread *me = fx_uthread_self();
	uint64_t deadline;

	if (!t)
		return ESRCH;
	if (t == me)
		return EDEADLK;
	if (!try)
		fx_testcancel(); /* pthread_join is a cancellation point */
	fx_spin_lock(&t->join_lock);
	if (atomic_load(&t->detached) || (t->join_waiter && t->join_waiter->u != me)) {
		fx_spin_unlock(&t->join_lock);
		return EINVAL;
	}
	while (atomic_load(&t->state) != FX_U_EXITED) {
		if (try) {
			fx_spin_unlock(&t->join_lock);
			return EBUSY;
		}
		/*
		 * The time only matters now that it must wait, as in glibc: a
		 * finished thread is joined whatever it is, and a past one (a
		 * negative tv_sec too) times out before a bad tv_nsec is noticed.
		 */
		if (abs && abs->tv_sec < 0) {
			fx_spin_unlock(&t->join_lock);
			return ETIMEDOUT;
		}
		if (fx_deadline(clock, abs, &deadline)) {
			fx_spin_unlock(&t->join_lock);
			return EINVAL;
		}
		struct fx_waiter w;
		fx_waiter_init(&w); /* a uthread switches away; another thread sleeps on a futex */
		t->join_waiter = &w;
		fx_spin_unlock(&t->join_lock);
		int r = fx_waiter_sleep_cp(&w, deadline);
		fx_spin_lock(&t->join_lock);
		if (t->join_waiter == &w)
			t->join_waiter = NULL;
		if (r == -ETIMEDOUT && atomic_load(&t->state) != FX_U_EXITED) {
			fx_spin_unlock(&t->join_lock);
			fx_testcancel(); /* a cancellation ends the wait as a timeout */
			return ETIMEDOUT;
		}
	}
	fx_spin_unlock(&t->join_lock);
	void *result = reclaim(t);
	if (ret)
		*ret = result;
	return 0;
}

FX_EXPORT int pthread_join(pthread_t thread, void **ret)
{
	if (!fx_rt_active)
		return REAL(pthread_join)(thread, ret);
	return join(thread, ret, false, CLOCK_MONOTONIC, NULL);
}

FX_EXPORT int pthread_tryjoin_np(pthread_t thread, void **ret)
{
	if (!fx_rt_active)
		return REAL(pthread_tryjoin_np)(thread, ret);
	return join(thread, ret, true, CLOCK_MONOTONIC, NULL);
}

FX_EXPORT int pthread_timedjoin_np(pthread_t thread, void **ret, const struct timespec *abs)
{
	if (!fx_rt_active)
		return REAL(pthread_timedjoin_np)(thread, ret, abs);
	return join(thread, ret, false, CLOCK_REALTIME, abs);
}

FX_EXPORT int pthread_clockjoin_np(pthread_t thread, void **ret, clockid_t clock,
				   const struct timespec *abs)
{
	if (!fx_rt_active)
		return REAL(pthread_clockjoin_np)(thread, ret, clock, abs);
	if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
		return EINVAL;
	return join(thread, ret, false, clock, abs);
}

FX_EXPORT int pthread_detach(pthread_t thread)
{
	struct fx_uthread *t = fx_rt_active ? fx_uthread_of((uintptr_t)thread) : NULL;

	if (!fx_rt_active)
		return REAL(pthread_detach)(thread);
	if (!t)
		return ESRCH;
	fx_spin_lock(&t->join_lock);
	if (atomic_load(&t->detached) || t->join_waiter) {
		fx_spin_unlock(&t->join_lock);
		return EINVAL;
	}
	atomic_store(&t->detached, 1);
	bool exited = atomic_load(&t->state) == FX_U_EXITED;
	fx_spin_unlock(&t->join_lock);
	if (exited)
		reclaim(t);
	return 0;
}

/* ---- thread-specific data ---- */

/* A key is live while its sequence number is odd; values carry the sequence they were set under. */
static struct {
	_Atomic uintptr_t seq;
	void (*destructor)(void *);
} keys[FX_KEYS_MAX];

struct spec {
	uintptr_t seq;
	void *value;
};

#define SPEC_BLOCK 32
static __thread struct spec *spec_blocks[FX_KEYS_MAX / SPEC_BLOCK];
/*
 * The first 32 keys' values are in the thread itself, as in glibc's first
 * block: setting one allocates nothing. A malloc that keeps its per-thread
 * state under a key (jemalloc's) sets it from inside malloc, and a calloc
 * there re-entered it half-initialised: redis-server hung at start.
 */
static __thread struct spec spec_first[SPEC_BLOCK];

FX_EXPORT int pthread_key_create(pthread_key_t *key, void (*destructor)(void *))
{
	if (!fx_sync_ours())
		return REAL(pthread_key_create)(key, destructor);
	for (unsigned k = 0; k < FX_KEYS_MAX; k++) {
		uintptr_t seq = atomic_load(&keys[k].seq);
		if (!(seq & 1) && seq + 1 > seq &&
		    atomic_compare_exchange_strong(&keys[k].seq, &seq, seq + 1)) {
			keys[k].destructor = destructor;
			*key = k;
			return 0;
		}
	}
	return EAGAIN;
}

FX_EXPORT int pthread_key_delete(pthread_key_t key)
{
	if (!fx_sync_ours())
		return REAL(pthread_key_delete)(key);
	if (key >= FX_KEYS_MAX)
		return EINVAL;
	uintptr_t seq = atomic_load(&keys[key].seq);
	if (!(seq & 1) || !atomic_compare_exchange_strong(&keys[key].seq, &seq, seq + 1))
		return EINVAL;
	return 0;
}

FX_EXPORT void *pthread_getspecific(pthread_key_t key)
{
	if (!fx_sync_ours())
		return REAL(pthread_getspecific)(key);
	if (key >= FX_KEYS_MAX)
		return NULL;
	struct spec *b = spec_blocks[key / SPEC_BLOCK];
	if (!b)
		return NULL;
	struct spec *s = &b[key % SPEC_BLOCK];
	return s->seq == atomic_load_explicit(&keys[key].seq, memory_order_relaxed) ? s->value : NULL;
}

FX_EXPORT int pthread_setspecific(pthread_key_t key, const void *value)
{
	if (!fx_sync_ours())
		return REAL(pthread_setspecific)(key, value);
	if (key >= FX_KEYS_MAX)
		return EINVAL;
	uintptr_t seq = atomic_load_explicit(&keys[key].seq, memory_order_relaxed);
	if (!(seq & 1))
		return EINVAL;
	struct spec **bp = &spec_blocks[key / SPEC_BLOCK];
	if (!*bp && !(*bp = key < SPEC_BLOCK ? spec_first : calloc(SPEC_BLOCK, sizeof(struct spec))))
		return ENOMEM;
	(*bp)[key % SPEC_BLOCK].seq = seq;
	(*bp)[key % SPEC_BLOCK].value = (void *)value;
	return 0;
}

/* POSIX: up to PTHREAD_DESTRUCTOR_ITERATIONS rounds while values remain. */
static void run_key_destructors(void)
{
	for (int round = 0; round < PTHREAD_DESTRUCTOR_ITERATIONS; round++) {
		bool again = false;
		for (unsigned b = 0; b < FX_KEYS_MAX / SPEC_BLOCK; b++) {
			if (!spec_blocks[b])
				continue;
			for (unsigned i = 0; i < SPEC_BLOCK; i++) {
				struct spec *s = &spec_blocks[b][i];
				unsigned k = b * SPEC_BLOCK + i;
				void *v = s->value;
				if (!v || s->seq != atomic_load(&keys[k].seq))
					continue;
				s->value = NULL;
				if (keys[k].destructor) {
					keys[k].destructor(v);
					again = true;
				}
			}
		}
		if (!again)
			break;
	}
	for (unsigned b = 0; b < FX_KEYS_MAX / SPEC_BLOCK; b++) {
		if (spec_blocks[b] == spec_first)
			memset(spec_first, 0, sizeof(spec_first));
		else
			free(spec_blocks[b]);
		spec_blocks[b] = NULL;
	}
}

/* ---- exit and cleanup handlers ---- */

/*
 * pthread_cleanup_push (C) registers a buffer that holds a sigjmp_buf; to
 * run the handler, glibc jumps into it, the macro's code calls the
 * handler and then __pthread_unwind_next, which jumps to the next one. We
 * keep that chain per thread and do the jumping.
 */
struct unwind_buf {
	struct {
		__jmp_buf jmp_buf;
		int mask_was_saved;
	} cancel_jmp_buf[1];
	union {
		void *pad[4];
		struct {
			struct unwind_buf *prev;
		} data;
	} priv;
};

static __thread struct unwind_buf *cleanup_top;
static __thread void *exit_result;

FX_EXPORT void __pthread_register_cancel(__pthread_unwind_buf_t *buf)
{
	struct unwind_buf *b = (struct unwind_buf *)buf;

	b->priv.data.prev = cleanup_top;
	cleanup_top = b;
}

FX_EXPORT void __pthread_unregister_cancel(__pthread_unwind_buf_t *buf)
{
	cleanup_top = ((struct unwind_buf *)buf)->priv.data.prev;
}

/*
 * glibc's runner of C++ thread_local destructors, looked up once at start:
 * looked up at each exit, dlvsym took the dynamic loader's lock there, on
 * which a thread cancelled asynchronously hung (cancel_async, --engine
 * sync, once in a full test run).
 */
static void (*call_tls_dtors)(void);

__attribute__((constructor)) static void find_tls_dtors(void)
{
	call_tls_dtors = (void (*)(void))dlvsym(RTLD_DEFAULT, "__call_tls_dtors", "GLIBC_PRIVATE");
}

static void __attribute__((noreturn)) finish_exit(void)
{
	run_key_destructors();
	if (call_tls_dtors)
		call_tls_dtors(); /* C++ thread_local destructors of this thread */
	fx_uthread_exit(exit_result);
}

static void __attribute__((noreturn)) unwind(void)
{
	struct unwind_buf *b = cleanup_top;

	if (!b)
		finish_exit();
	cleanup_top = b->priv.data.prev;
	/*
	 * The macro filled it with sigsetjmp(buf, 0): with no mask saved,
	 * siglongjmp reads the registers and the flag, not the whole
	 * sigjmp_buf that its prototype promises.
	 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
	siglongjmp((struct __jmp_buf_tag *)(void *)b->cancel_jmp_buf, 1);
#pragma GCC diagnostic pop
}

FX_EXPORT void __pthread_unwind_next(__pthread_unwind_buf_t *buf)
{
	(void)buf;
	unwind();
}

FX_EXPORT void pthread_exit(void *result)
{
	if (!fx_rt_active || !fx_uthread_self())
		REAL(pthread_exit)(result);
	atomic_store(&fx_uthread_self()->exiting, 1);
	exit_result = result;
	unwind();
}

/* The start routine returned: no cleanup handler can be pushed any more. */
void __attribute__((noreturn)) fx_thread_finished(void *result)
{
	atomic_store(&fx_uthread_self()->exiting, 1);
	exit_result = result;
	finish_exit();
}

/* ---- names, attributes, yielding, once ---- */

FX_EXPORT int pthread_setname_np(pthread_t thread, const char *name)
{
	struct fx_uthread *t = fx_rt_active ? fx_uthread_of((uintptr_t)thread) : NULL;

	if (!t) {
		if (fx_rt_active && fx_uthread_dead((uintptr_t)thread))
			return ESRCH; /* joined or gone: its mapping is cached */
		return REAL(pthread_setname_np)(thread, name);
	}
	if (strlen(name) >= sizeof(t->name))
		return ERANGE;
	strcpy(t->name, name);
	fx_kstate_named(t); /* the main thread's is the process's */
	return 0;
}

FX_EXPORT int pthread_getname_np(pthread_t thread, char *buf, size_t len)
{
	struct fx_uthread *t = fx_rt_active ? fx_uthread_of((uintptr_t)thread) : NULL;

	if (!t) {
		if (fx_rt_active && fx_uthread_dead((uintptr_t)thread))
			return ESRCH; /* joined or gone: its mapping is cached */
		return REAL(pthread_getname_np)(thread, buf, len);
	}
	/* never named: the process's, not its carrier's ("flexsc-carrier" on all but the first) */
	const char *name = fx_kstate_name_of(t);
	if (strlen(name) >= len)
		return ERANGE;
	strcpy(buf, name);
	return 0;
}

FX_EXPORT int pthread_getattr_np(pthread_t thread, pthread_attr_t *attr)
{
	struct fx_uthread *t = fx_rt_active ? fx_uthread_of((uintptr_t)thread) : NULL;

	if (!t && fx_rt_active && fx_uthread_dead((uintptr_t)thread))
		return ESRCH;
	if (!t || t == fx_main_uthread)
		return REAL(pthread_getattr_np)(thread, attr);
	int err = pthread_attr_init(attr);
	if (!err)
		err = pthread_attr_setstack(attr, t->stack_lo, t->stack_size);
	if (!err)
		err = pthread_attr_setguardsize(attr, t->guard);
	if (!err)
		err = pthread_attr_setdetachstate(attr, atomic_load(&t->detached) ? PTHREAD_CREATE_DETACHED
										 : PTHREAD_CREATE_JOINABLE);
	if (!err) {
		/* as NPTL reports a thread's: its policy, priority and how it got them */
		struct sched_param sp = { .sched_priority = t->sched_prio };
		pthread_attr_setinheritsched(attr, t->sched_explicit ? PTHREAD_EXPLICIT_SCHED
								     : PTHREAD_INHERIT_SCHED);
		pthread_attr_setschedpolicy(attr, t->sched_policy);
		pthread_attr_setschedparam(attr, &sp);
	}
	return err;
}

/*
 * Affinity of a uthread: carriers are pinned and run any uthread, so a
 * thread's affinity cannot move it; re-pinning its carrier (what glibc's
 * call would do) would move every other uthread with it. A uthread's set
 * is the process's at start, as a thread's on NPTL, until it sets one,
 * which is checked as the kernel would (EINVAL when it holds no CPU the
 * process may use), kept, reported back and inherited by the threads it
 * creates; docs/threads.md says so.
 */

FX_EXPORT int pthread_setaffinity_np(pthread_t thread, size_t size, const cpu_set_t *set)
{
	struct fx_uthread *t = fx_rt_active ? fx_uthread_of((uintptr_t)thread) : NULL;
	cpu_set_t allowed, both;

	if (!t) {
		if (fx_rt_active && fx_uthread_dead((uintptr_t)thread))
			return ESRCH; /* joined or gone: its mapping is cached */
		return REAL(pthread_setaffinity_np)(thread, size, set);
	}
	if (size == 0)
		return EINVAL;
	fx_rt_start_cpus(&allowed);
	CPU_ZERO(&both);
	if (!fx_mem_copy_in(&both, set, size < sizeof(both) ? size : sizeof(both)))
		return EFAULT; /* as the kernel's copy of the set */
	CPU_AND(&both, &both, &allowed);
	if (CPU_COUNT(&both) == 0)
		return EINVAL;
	if (!t->affinity && !(t->affinity = malloc(sizeof(*t->affinity))))
		return ENOMEM;
	*t->affinity = both;
	return 0;
}

FX_EXPORT int pthread_getaffinity_np(pthread_t thread, size_t size, cpu_set_t *set)
{
	struct fx_uthread *t = fx_rt_active ? fx_uthread_of((uintptr_t)thread) : NULL;
	cpu_set_t mine;

	if (!t) {
		if (fx_rt_active && fx_uthread_dead((uintptr_t)thread))
			return ESRCH; /* joined or gone: its mapping is cached */
		return REAL(pthread_getaffinity_np)(thread, size, set);
	}
	if (t->affinity)
		mine = *t->affinity;
	else
		fx_rt_start_cpus(&mine);
	/*
	 * The kernel checks the size (EINVAL) and the buffer (EFAULT), and
	 * says how many bytes its mask has: asked for this kernel thread, whose
	 * answer is then replaced. glibc zero-fills the rest of the buffer.
	 */
	long n = fx_raw_syscall6(SYS_sched_getaffinity, 0, (long)size, (long)set, 0, 0, 0);
	if (n < 0)
		return (int)-n;
	size_t have = (size_t)n < sizeof(mine) ? (size_t)n : sizeof(mine);
	memcpy(set, &mine, have);
	memset((char *)set + have, 0, size - have);
	return 0;
}

/*
 * sched_getaffinity and sched_setaffinity of the caller itself (pid 0, or
 * its kernel thread's id, a carrier's) are its uthread's, as above: the
 * carrier's pinned CPU is not the thread's (`nproc` under flexsc-run said
 * 1 where the machine has 2, and a program sizing its pools by it ran
 * with fewer threads). Another id is the kernel's.
 */
static bool own_pid(pid_t pid)
{
	return pid == 0 || pid == (pid_t)fx_raw_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0);
}

FX_EXPORT int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set)
{
	if (!fx_on_uthread() || !own_pid(pid))
		return REAL(sched_getaffinity)(pid, size, set);
	int err = pthread_getaffinity_np(pthread_self(), size, set);
	return err ? (errno = err, -1) : 0;
}

FX_EXPORT int sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *set)
{
	if (!fx_on_uthread() || !own_pid(pid))
		return REAL(sched_setaffinity)(pid, size, set);
	int err = pthread_setaffinity_np(pthread_self(), size, set);
	return err ? (errno = err, -1) : 0;
}

FX_EXPORT int pthread_getschedparam(pthread_t thread, int *policy, struct sched_param *sp)
{
	struct fx_uthread *t = fx_rt_active ? fx_uthread_of((uintptr_t)thread) : NULL;

	if (!t) {
		if (fx_rt_active && fx_uthread_dead((uintptr_t)thread))
			return ESRCH; /* joined or gone: its mapping is cached */
		return REAL(pthread_getschedparam)(thread, policy, sp);
	}
	*policy = t->sched_policy;
	memset(sp, 0, sizeof(*sp));
	sp->sched_priority = t->sched_prio;
	return 0;
}

FX_EXPORT int pthread_setschedparam(pthread_t thread, int policy, const struct sched_param *sp)
{
	struct fx_uthread *t = fx_rt_active ? fx_uthread_of((uintptr_t)thread) : NULL;

	if (!t) {
		if (fx_rt_active && fx_uthread_dead((uintptr_t)thread))
			return ESRCH; /* joined or gone: its mapping is cached */
		return REAL(pthread_setschedparam)(thread, policy, sp);
	}
	int err = sched_check(policy, sp);
	if (err)
		return err;
	t->sched_policy = policy;
	t->sched_prio = sp->sched_priority;
	return 0;
}

FX_EXPORT int pthread_setschedprio(pthread_t thread, int prio)
{
	struct fx_uthread *t = fx_rt_active ? fx_uthread_of((uintptr_t)thread) : NULL;

	if (!t) {
		if (fx_rt_active && fx_uthread_dead((uintptr_t)thread))
			return ESRCH; /* joined or gone: its mapping is cached */
		return REAL(pthread_setschedprio)(thread, prio);
	}
	struct sched_param sp = { .sched_priority = prio };
	int err = sched_check(t->sched_policy, &sp);
	if (err)
		return err;
	t->sched_prio = prio;
	return 0;
}

/*
 * A uthread's CPU-time clock: the process's (CLOCK_PROCESS_CPUTIME_ID).
 * A uthread has no kernel thread of its own, and its carrier's clock counts
 * every uthread the carrier ran and would jump back when the thread moves
 * to another carrier; the process's never goes back and is at least the
 * thread's own time (docs/threads.md).
 */
FX_EXPORT int pthread_getcpuclockid(pthread_t thread, clockid_t *clock)
{
	struct fx_uthread *t = fx_rt_active ? fx_uthread_of((uintptr_t)thread) : NULL;

	if (!t) {
		if (fx_rt_active && fx_uthread_dead((uintptr_t)thread))
			return ESRCH;
		return REAL(pthread_getcpuclockid)(thread, clock);
	}
	if (atomic_load(&t->state) == FX_U_EXITED)
		return ESRCH; /* as NPTL: an exited thread has no clock */
	*clock = CLOCK_PROCESS_CPUTIME_ID;
	return 0;
}

FX_EXPORT int sched_yield(void)
{
	if (fx_rt_active && fx_uthread_self()) {
		fx_yield();
		if (fx_uthread_self()->cancel_async)
			fx_testcancel(); /* not a cancellation point: asynchronous cancellation acts anywhere */
		return 0;
	}
	return REAL(sched_yield)();
}

/*
 * pthread_once: glibc's waits on a futex, which would put a whole carrier
 * to sleep while the initialiser may be a uthread of that very carrier.
 * 0: not run; 2: done; running: 1 | the runner's generation << 2. As in
 * glibc, a fork child whose parent was running the initialiser (in a
 * thread the child does not have) runs it again.
 */
static void once_cancelled(void *st)
{
	atomic_store_explicit((_Atomic int *)st, 0, memory_order_release);
}

FX_EXPORT int pthread_once(pthread_once_t *once, void (*init)(void))
{
	_Atomic int *st = (_Atomic int *)once;

	if (!fx_rt_active)
		return REAL(pthread_once)(once, init);
	for (;;) {
		int v = atomic_load_explicit(st, memory_order_acquire);
		int running = 1 | (int)((fx_gen() & 0x1fffffffu) << 2);
		if (v == 2)
			return 0;
		if ((v == 0 || v != running) && atomic_compare_exchange_strong(st, &v, running)) {
			/* POSIX: an initialiser cancelled leaves once as if never called */
			pthread_cleanup_push(once_cancelled, (void *)st);
			init();
			pthread_cleanup_pop(0);
			atomic_store_explicit(st, 2, memory_order_release);
			return 0;
		}
		if (fx_uthread_self())
			fx_sleep_until(fx_now_ns() + 20000);
		else
			usleep(20);
	}
}
