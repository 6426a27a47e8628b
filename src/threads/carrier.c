/* SPDX-License-Identifier: MIT */
/*
 * The runtime's kernel threads: carriers, exclusive carriers, helpers.
 *
 * A carrier is made (fx_carrier_new), started on a kernel thread of its
 * own with every signal blocked (fx_spawn_carrier), and enters the
 * runtime there (fx_carrier_enter: its GS base, CPUs, queue and scheduler
 * context). An exclusive carrier gives one uthread a kernel thread of its
 * own, made from its creator's, for per-thread kernel identity
 * (fx_rt_bind, fx_exclusive_carrier); the runtime's own helpers (the
 * signal thread, the monitor, overflow threads) are made by
 * fx_rt_kthread. What a kernel thread inherits from its maker (CPUs,
 * signal mask, identity) is what the code here takes care of, and also
 * what an exec inherits from the calling thread (fx_rt_exec_prepare).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "threads/rt.h"
#include "threads/sched.h"
#include "threads/signals.h"

struct kthread_start {
	void *(*fn)(void *);
	void *arg;
};

/* The CPUs the process could run on before the runtime set its first thread's as carrier 0's. */
cpu_set_t fx_start_cpus;

/*
 * Whether each carrier is pinned to its CPU (FLEXSC_PIN_CARRIERS=1, which
 * flexsc-run sets for --cores and --syscall-cores), or all of them may run
 * on any CPU of the program's and the kernel places them, as it places
 * NPTL's threads. A pinned carrier on a CPU that other programs keep busy
 * cannot move away: a computing carrier pinned to a CPU shared with
 * another busy process got 11 ms of CPU time in 3 s where the same
 * carrier unpinned got 228 ms.
 */
bool fx_carriers_pinned;

/* Lets the calling thread run on set (fx_start_cpus: known once the runtime started); whether it did. */
static bool take_cpus(const cpu_set_t *set)
{
	return CPU_COUNT(set) && fx_raw_syscall6(SYS_sched_setaffinity, 0, sizeof(*set), (long)set, 0, 0, 0) == 0;
}

bool fx_take_start_cpus(void)
{
	return take_cpus(&fx_start_cpus);
}

static void *kthread_main(void *p)
{
	struct kthread_start st = *(struct kthread_start *)p;

	free(p);
	/* clone copied the creator's GS base: this thread must not pass for a carrier */
	__asm__ volatile("wrgsbase %0" : : "r"(0ul));
	/*
	 * And its creator's CPU, a carrier's: the signal thread and the
	 * monitor would wait for that one CPU behind the carriers there (a
	 * second and more under load) while another was free.
	 */
	fx_take_start_cpus();
	return st.fn(st.arg);
}

bool fx_rt_exec_prepare(struct fx_exec_saved *saved, struct fx_carrier *c)
{
	/*
	 * The thread's own CPUs, as on NPTL: those it set (sched_setaffinity
	 * of itself, kept for its uthread: taskset -c 1 prog sets them, then
	 * execs), else those the process had at start.
	 */
	const cpu_set_t *mine = c && c->current && c->current->affinity ? c->current->affinity : &fx_start_cpus;

	CPU_ZERO(&saved->cpus); /* the kernel fills only its own mask's bytes */
	saved->cpus_set = CPU_COUNT(&fx_start_cpus) &&
			  fx_raw_syscall6(SYS_sched_getaffinity, 0, sizeof(saved->cpus), (long)&saved->cpus, 0, 0, 0) > 0 &&
			  take_cpus(mine);
	saved->mask_set = c && c->current && c->kextra;
	if (saved->mask_set) {
		uint64_t want = c->current->sigmask;
		fx_raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&want, 0, 8, 0, 0);
	}
	return saved->cpus_set || saved->mask_set;
}

void fx_rt_exec_failed(const struct fx_exec_saved *saved, struct fx_carrier *c)
{
	if (saved->cpus_set)
		fx_raw_syscall6(SYS_sched_setaffinity, 0, sizeof(saved->cpus), (long)&saved->cpus, 0, 0, 0);
	if (saved->mask_set)
		fx_raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&c->kmask, 0, 8, 0, 0);
}

int fx_rt_kthread(void *(*fn)(void *))
{
	return fx_rt_kthread_arg(fn, NULL);
}

/*
 * A kernel thread made by create that starts with signal mask `mask`: a
 * new thread has its maker's mask, set here with the raw call (the
 * interposed one would change a uthread's) and put back after.
 */
static int create_masked(fx_create_fn *create, pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *),
			 void *arg, uint64_t mask)
{
	uint64_t old;

	fx_raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&mask, (long)&old, 8, 0, 0);
	int err = create(t, attr, fn, arg);
	fx_raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8, 0, 0);
	return err;
}

int fx_rt_kthread_arg(void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	pthread_t t;
	struct kthread_start *st = malloc(sizeof(*st));

	if (!st)
		return -ENOMEM;
	st->fn = fn;
	st->arg = arg;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	int err = create_masked(fx_os_pthread_create, &t, &attr, kthread_main, st, FX_KTHREAD_MASK);
	if (err)
		free(st);
	pthread_attr_destroy(&attr);
	return -err;
}

/*
 * The instance of the exclusive carriers' queues: the sync engine, one
 * page each. An exclusive carrier runs one uthread, so its calls run on it
 * as that uthread's own NPTL thread would make them (and cancellation and
 * signals reach them as with the sync engine); a queue of the runtime's
 * instance would cost a ring and a syscall-thread slot per bound thread.
 */
struct flexsc *fx_bound_instance;

struct fx_carrier *fx_carrier_new(int index, int cpu)
{
	struct fx_carrier *c = aligned_alloc(FX_CACHELINE, (sizeof(*c) + FX_CACHELINE - 1) & ~(size_t)(FX_CACHELINE - 1));

	if (!c)
		return NULL;
	memset(c, 0, sizeof(*c));
	c->self = c;
	c->index = index;
	c->slot = index;
	c->cpu = cpu;
	return c;
}

/* On the carrier's own kernel thread: its identity, queue and scheduler context. */
int fx_carrier_enter(struct fx_carrier *c)
{
	fx_tcb_ours = 1; /* before %gs: from then on this thread is c */
	__asm__ volatile("wrgsbase %0" : : "r"((uintptr_t)c));
	c->tid = (int)fx_raw_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0);
	cpu_set_t set;
	CPU_ZERO(&set);
	if (c->cpu >= 0 && fx_carriers_pinned) {
		CPU_SET(c->cpu, &set);
	} else {
		/* unpinned, or an exclusive carrier: anywhere the program's threads run */
		fx_rt_cpus(&set);
		/* within the CPUs it started with (a child started by taskset inherits FLEXSC_CORES) */
		cpu_set_t both;
		CPU_AND(&both, &set, &fx_start_cpus);
		if (CPU_COUNT(&both))
			set = both;
	}
	sched_setaffinity(0, sizeof(set), &set);
	c->in_rt = 1;
	fx_raw_syscall6(SYS_rt_sigprocmask, SIG_BLOCK, 0, (long)&c->kmask, 8, 0, 0);
	size_t len;
	if (fx_raw_syscall6(SYS_get_robust_list, 0, (long)&c->krobust, (long)&len, 0, 0, 0))
		c->krobust = NULL;
	int err = flexsc_queue_create(c->own ? fx_bound_instance : fx_rt_instance, &c->q);
	c->idle = fx_sched_context_create(fx_idle_loop, c);
	c->in_rt = 0;
	return err ? err : c->idle ? 0 : -ENOMEM;
}

static void *carrier_main(void *arg);

/*
 * Starts c's kernel thread with create (libc's pthread_create), with every
 * signal blocked (the idle mask), not its maker's mask, which the kernel
 * thread would keep until its first idle sleep: its start can take
 * milliseconds (a queue, a ring), and a process-directed signal that no
 * thread accepts found it accepting, and its default action ended the
 * process (tests/threads/posix_sigmask.c's SIGUSR2, about 1 run in 20
 * with --cores 0,1 under load). 0 or an errno value.
 */
int fx_spawn_carrier(struct fx_carrier *c, const pthread_attr_t *attr, fx_create_fn *create)
{
	return create_masked(create, &c->pthread, attr, carrier_main, c, fx_sig_idle_mask());
}

static void *carrier_main(void *arg)
{
	struct fx_carrier *c = arg;

	if (fx_carrier_enter(c)) {
		fprintf(stderr, "flexsc-run: carrier %d could not start\n", c->index);
		abort();
	}
	fx_kstate_name_carrier(c);
	__asm__ volatile("rdfsbase %0" : "=r"(c->native_tcb));
	fx_ctx_switch(&c->native_sp, c->idle->sp, c->idle->tcb);
	/* only an exclusive carrier comes back, once its uthread has exited */
	c->in_rt = 1;
	fx_monitor_unwatch(c);
	flexsc_queue_destroy(c->q);
	fx_uthread_free(c->idle);
	__asm__ volatile("wrgsbase %0" : : "r"(0ul));
	free(c);
	return NULL;
}

/*
 * A new exclusive carrier for u, made from the calling kernel thread: a
 * kernel thread starts with its creator's per-thread identity
 * (credentials, capabilities, securebits, seccomp filters, no_new_privs,
 * namespaces), so k has the caller's. NULL and *err (-errno) when it
 * cannot be made. Runs with the caller's carrier in the runtime.
 */
struct fx_carrier *fx_exclusive_carrier(struct fx_uthread *u, int *err)
{
	static fx_create_fn *real_create;
	static _Atomic int lock;
	pthread_attr_t attr;

	if (!real_create)
		real_create = dlsym(RTLD_NEXT, "pthread_create");
	fx_spin_lock(&lock);
	*err = 0;
	if (!fx_bound_instance) {
		struct flexsc_config cfg;
		flexsc_config_init(&cfg);
		cfg.engine = FLEXSC_ENGINE_SYNC;
		cfg.pages_per_queue = 1;
		cfg.flags |= FLEXSC_QUIET;
		*err = flexsc_register(&fx_bound_instance, &cfg);
	}
	fx_spin_unlock(&lock);
	struct fx_carrier *k = *err ? NULL : fx_carrier_new(-1, -1);
	if (!k) {
		*err = *err ? *err : -ENOMEM;
		return NULL;
	}
	k->own = u;
	struct fx_carrier *maker = fx_carrier_self();
	k->sealed = maker && maker->sealed; /* a clone inherits its maker's filters */
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	*err = -fx_spawn_carrier(k, &attr, real_create);
	pthread_attr_destroy(&attr);
	if (*err) {
		free(k);
		return NULL;
	}
	return k;
}

/*
 * Whether the caller's identity change may be made where it runs, with no
 * carrier of its own: the process's only uthread, on the process's only
 * kernel thread. Every thread the program makes later descends from it,
 * as on NPTL, and so do the runtime's own (carriers, the signal thread...,
 * which start when first needed), so the change is the whole process's
 * anyway; a second kernel thread would even make some changes fail
 * (unshare(CLONE_NEWUSER) wants a process of one thread; a thread with
 * PR_SET_KEEPCAPS beside one without could not change its gid after its
 * uid, where NPTL's glibc makes every thread follow). Not for a seccomp
 * filter: the runtime's later threads would run under it, and it may
 * forbid what they do.
 */
static bool change_in_place(bool seccomp)
{
	char buf[2048];

	if (seccomp || atomic_load_explicit(&fx_rt_live_uthreads, memory_order_relaxed) != 1)
		return false;
	long fd = fx_raw_syscall6(SYS_openat, AT_FDCWD, (long)"/proc/self/status", O_RDONLY | O_CLOEXEC, 0, 0, 0);
	if (fd < 0)
		return false;
	long n = fx_raw_syscall6(SYS_read, fd, (long)buf, sizeof(buf) - 1, 0, 0, 0);
	fx_raw_syscall6(SYS_close, fd, 0, 0, 0, 0, 0);
	if (n <= 0)
		return false;
	buf[n] = 0;
	const char *t = strstr(buf, "\nThreads:");
	return t && strtol(t + 9, NULL, 10) == 1;
}

static _Atomic bool sealed_all; /* a filter with TSYNC: every thread has it */

bool fx_rt_sealed(void)
{
	struct fx_carrier *c = fx_carrier_self();

	return atomic_load_explicit(&sealed_all, memory_order_relaxed) || (c && c->sealed);
}

void fx_rt_note_filter(bool every_thread)
{
	struct fx_carrier *c = fx_carrier_self();

	if (every_thread)
		atomic_store(&sealed_all, true);
	else if (c)
		c->sealed = true;
	if (c && c->q)
		fx_queue_note_filter(c->q, every_thread);
}

int fx_rt_bind(bool seccomp)
{
	struct fx_carrier *c = fx_carrier_self();
	struct fx_uthread *self = c ? c->current : NULL;

	if (!self || c->in_rt || c->own == self)
		return 0;
	if (fx_in_handler(c))
		return -EINTR;
	c->in_rt = 1;
	if (change_in_place(seccomp)) {
		c->in_rt = 0;
		return 0;
	}
	if (fx_rt_sealed()) {
		/* the program's filter here may forbid the clone that a carrier of its own needs */
		c->in_rt = 0;
		return -EPERM;
	}
	int err;
	struct fx_carrier *k = fx_exclusive_carrier(self, &err);
	if (!k) {
		c->in_rt = 0;
		return err;
	}
	/* as a wake does: it resumes on k once this carrier has switched away from it */
	atomic_store_explicit(&self->state, FX_U_RUNNABLE, memory_order_relaxed);
	self->home = k;
	fx_rq_push(k, self);
	fx_kick(k);
	c->in_rt = 0;
	fx_block();
	return 0;
}
