/* SPDX-License-Identifier: MIT */
/*
 * Start-up and fork: the runtime made from the environment, and made
 * again in a forked child.
 *
 * fx_rt_start turns the process into FlexSC-Threads: its configuration
 * comes from the environment flexsc-run sets (FLEXSC_CORES,
 * FLEXSC_SYSCALL_CORES, FLEXSC_ENGINE, FLEXSC_ENTRIES, FLEXSC_ORDER,
 * FLEXSC_SPECIALIZE, FLEXSC_PIN_CARRIERS), the instance is registered and
 * tuned (tune_instance), the runtime's signal handlers installed (poke.c)
 * and the main thread becomes carrier 0 running the main uthread. The
 * other carriers and the monitor start with the program's first
 * pthread_create (fx_rt_start_carriers). In the child of a fork the
 * forking uthread's carrier becomes carrier 0 again, with a fresh
 * instance and queue (fx_rt_after_fork_child).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/fence.h"
#include "threads/overflow.h"
#include "threads/preempt.h"
#include "threads/rt.h"
#include "threads/sched.h"
#include "threads/signals.h"
#include "threads/ufutex.h"
#include "threads/waiter.h"

#ifndef HWCAP2_FSGSBASE
#define HWCAP2_FSGSBASE (1 << 1)
#endif

static _Atomic int carriers_started;
static _Atomic bool monitor_runs;
static int carrier_cpus[FLEXSC_MAX_CPUS];

static int parse_cpus(const char *s, int *out, int max)
{
	int n = 0;

	while (s && *s && n < max) {
		char *end;
		long a = strtol(s, &end, 10), b = a;
		if (end == s || a < 0)
			return -EINVAL;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s || b < a)
				return -EINVAL;
		}
		for (long i = a; i <= b && n < max; i++)
			out[n++] = (int)i;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -EINVAL;
	}
	return n;
}

/* Called before the program's first pthread_create: the other carriers. */
void fx_rt_start_carriers(void)
{
	int expect = 0;

	if (!atomic_compare_exchange_strong(&carriers_started, &expect, 1))
		return;
	fx_sig_thread_needed(); /* a uthread off its carrier takes signals through it */
	fx_create_fn *real_create = dlsym(RTLD_NEXT, "pthread_create");
	for (unsigned i = 1; i < fx_ncores; i++) {
		struct fx_carrier *c = fx_carrier_new((int)i, carrier_cpus[i]);
		if (!c || fx_spawn_carrier(c, NULL, real_create)) {
			fprintf(stderr, "flexsc-run: cannot start carrier %u\n", i);
			abort();
		}
		atomic_store(&fx_slot_owner[i], c);
		fx_carriers[i] = c;
	}
	if (fx_rt_kthread(fx_monitor_main))
		fprintf(stderr, "flexsc-run: cannot start the monitor: a carrier blocked in the kernel keeps its core\n");
	else
		atomic_store(&monitor_runs, true);
}

bool fx_rt_monitor_runs(void)
{
	return atomic_load_explicit(&monitor_runs, memory_order_relaxed);
}

/*
 * In the child of a fork made by a uthread: this kernel thread is the only
 * one left, running the forking uthread. Its carrier becomes carrier 0
 * with a fresh instance and queue (the parent's rings are shared memory
 * the child must not touch), the other carriers start again with the
 * next pthread_create, and every other uthread is gone.
 */
static struct flexsc_config rt_cfg;

/*
 * The runtime's settings of its instance, made just after it registers it.
 *
 * Under the synchronous engine a call runs on the uthread that makes it, at
 * once, as on NPTL: a batch of one. A batch of several would run the others'
 * calls on whichever uthread flushes it, its context live on the carrier
 * while they block: nothing else could run it (docs/threads.md, "The
 * synchronous engine").
 */
static void tune_instance(void)
{
	/*
	 * And a carrier's ring is made at its first call that could run
	 * there: a fork child that runs its calls itself and execs, or a
	 * thread alone, has none (a fork cost ~1 ms making one of 4,096
	 * entries, thrown away at the exec).
	 */
	fx_rt_instance->rings_later = true;
	fx_rt_inline = flexsc_engine_in_use(fx_rt_instance) == FLEXSC_ENGINE_SYNC;
	/* the synchronous engine runs every call on its uthread, at its post: nothing to hand back */
	fx_rt_instance->sync_to_owner = !fx_rt_inline;
	fx_alone_here = !fx_rt_inline && rt_cfg.engine == FLEXSC_ENGINE_AUTO && !rt_cfg.nr_syscall_cpus;
	if (fx_rt_inline) {
		fx_rt_instance->cfg.batch_threshold = 1;
		/*
		 * So a queue holds one call at a time: one page is plenty (64
		 * entries, 4 KiB populated, not 64 pages), which keeps the many
		 * spares this engine may need cheap (FX_SPARES_MAX_SYNC).
		 */
		fx_rt_instance->cfg.pages_per_queue = 1;
	}
}

int fx_rt_after_fork_child(void)
{
	struct fx_carrier *c = fx_carrier_self();
	struct fx_uthread *self = c ? c->current : NULL;

	if (!self)
		return 0;
	c->in_rt = 1; /* the library's own close() and friends must not be posted */
	/* the generation: noticed at the first look after the fork, or here without a fork mark */
	if (fx_fork_mark)
		fx_gen();
	else
		fx_fork_gen++;
	fx_ufutex_after_fork_child();
	/* the vfork threads are the parent's (their records leak: a few, each 64 bytes) */
	atomic_store(&fx_kthreads_lock, 0);
	fx_kthreads_idle = NULL;
	fx_overflow_after_fork_child();
	flexsc_forget(fx_rt_instance);
	if (fx_bound_instance)
		flexsc_forget(fx_bound_instance); /* its carriers are gone */
	fx_bound_instance = NULL;
	int err = flexsc_register(&fx_rt_instance, &rt_cfg);
	if (!err) {
		tune_instance();
		fx_in_use_start(); /* the monitor is gone with the parent's threads: from one slot again */
	}
	atomic_store(&c->in_call, NULL);
	atomic_store(&c->call_intr, NULL);
	/* alone now: registered anew, unless the parent had stopped (a filter) */
	fx_fence_start(atomic_load(&fx_fence_mode) != FX_FENCE_ASYM);
	c->q = NULL;
	if (!err)
		err = flexsc_queue_create(fx_rt_instance, &c->q);
	for (unsigned i = 0; i < fx_ncarriers; i++)
		fx_carriers[i] = NULL;
	fx_ncarriers = fx_ncores; /* spares are gone with their threads, and so is the monitor */
	atomic_store(&fx_monitor_waiting, FX_MON_RUNS);
	for (unsigned i = 0; i < FLEXSC_MAX_CPUS; i++)
		atomic_store(&fx_slot_owner[i], NULL);
	atomic_store(&fx_slot_owner[0], c);
	fx_carriers[0] = c;
	c->index = 0;
	c->slot = 0;
	atomic_store(&c->handed, 0); /* a carrier handed over that forked before its next switch point */
	atomic_store(&c->parked, 0);
	c->pthread = (pthread_t)self->tcb; /* glibc's fork made the forking thread the only one it knows */
	c->tid = (int)fx_raw_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0);
	/*
	 * The child is a process of its own: its thread takes the CPUs the
	 * process had at start, not its carrier's one, or every program it
	 * execs (a shell's, make's compilers) ran on that one CPU.
	 */
	fx_take_start_cpus();
	c->mon_look_ns = 0; /* the parent's monitor looked at another thread */
	fx_kstate_name_forked(self); /* the child is named for the thread that forked, not its carrier */
	c->rq_head = c->rq_tail = NULL;
	atomic_store(&c->rq_len, 0);
	atomic_store(&c->rq_lock, 0);
	c->timers = NULL;
	atomic_store(&c->timer_lock, 0);
	atomic_store(&c->cancel_inbox, NULL);
	atomic_store(&c->poke_sent, 0); /* the parent's poke on its way is not the child's */
	atomic_store(&self->in_inbox, 0);
	/* its own locks, which a parent thread (a joiner, a signaller) may have held at the fork */
	atomic_store(&self->join_lock, 0);
	atomic_store(&self->cancel_lock, 0);
	self->join_waiter = NULL;
	self->cancel_waiter = NULL;
	self->intr_waiter = NULL;
	c->cancelling = NULL;
	self->cancelling_call = 0;
	atomic_store(&c->sleeping, FX_C_AWAKE);
	c->inflight = 0;
	c->prev = NULL;
	c->to_free = NULL;
	c->own = NULL; /* a bound uthread that forked: the child's threads share this carrier */
	c->in_rt = 0;
	self->home = c;
	fx_uthread_set_tid(self, c->tid);
	/* glibc's fork registered (and emptied) the forking thread's list: the kernel keeps the carrier's */
	if (fx_uthread_own_robust(self)) {
		self->robust = fx_uthread_own_robust(self);
		self->robust_len = sizeof(struct robust_list_head);
	}
	if (c->krobust)
		fx_raw_syscall6(SYS_set_robust_list, (long)c->krobust, sizeof(struct robust_list_head), 0, 0, 0, 0);
	atomic_store(&carriers_started, 0);
	atomic_store(&monitor_runs, false);
	atomic_store(&fx_rt_live_uthreads, 1);
	fx_sig_after_fork_child(self);
	return err;
}

/*
 * Registered at start, so it runs before the program's own atfork child
 * handlers: they may unlock mutexes whose waiters the parent queued.
 */
static void atfork_child(void)
{
	int err = fx_rt_after_fork_child();

	if (err) {
		fprintf(stderr, "flexsc-run: the forked child cannot rebuild the runtime (%s)\n",
			strerror(-err));
		_exit(127);
	}
}

void fx_rt_start_cpus(cpu_set_t *set)
{
	if (CPU_COUNT(&fx_start_cpus))
		*set = fx_start_cpus;
	else
		fx_rt_cpus(set);
}

/* The CPUs the program's threads may run on: its carriers'. */
void fx_rt_cpus(cpu_set_t *set)
{
	CPU_ZERO(set);
	for (unsigned i = 0; i < fx_ncores; i++)
		if (carrier_cpus[i] >= 0 && carrier_cpus[i] < CPU_SETSIZE)
			CPU_SET(carrier_cpus[i], set);
}

static enum flexsc_engine engine_from_env(const char *s)
{
	if (!s || !strcmp(s, "auto"))
		return FLEXSC_ENGINE_AUTO;
	if (!strcmp(s, "uring"))
		return FLEXSC_ENGINE_URING;
	if (!strcmp(s, "threads"))
		return FLEXSC_ENGINE_THREADS;
	if (!strcmp(s, "sync"))
		return FLEXSC_ENGINE_SYNC;
	return (enum flexsc_engine)-1;
}

/* flexsc-run --order: posted (the default), type, io-first, or both, comma-separated. */
static int order_from_env(const char *s)
{
	if (!s || !strcmp(s, "posted"))
		return 0;
	if (!strcmp(s, "type"))
		return FLEXSC_ORDER_BY_TYPE;
	if (!strcmp(s, "io-first"))
		return FLEXSC_ORDER_IO_FIRST;
	if (!strcmp(s, "io-first,type") || !strcmp(s, "type,io-first"))
		return FLEXSC_ORDER_IO_FIRST | FLEXSC_ORDER_BY_TYPE;
	return -1;
}

/*
 * Turns the process into FlexSC-Threads: the main thread becomes carrier 0
 * running the main uthread. Configuration comes from the environment that
 * flexsc-run sets (FLEXSC_CORES, FLEXSC_SYSCALL_CORES, FLEXSC_ENGINE).
 * Returns 0, or -errno when the runtime cannot run here (the program then
 * runs on plain NPTL).
 */
int fx_rt_start(void)
{
	struct flexsc_config cfg;
	cpu_set_t mine;
	int err, n;

	if (!(getauxval(AT_HWCAP2) & HWCAP2_FSGSBASE))
		return -ENOTSUP;
	fx_rt_gs_readable = true;
	err = fx_uthread_init();
	if (err)
		return err;
	flexsc_config_init(&cfg);
	/*
	 * Programs block in calls io_uring has no opcode for (poll, epoll_wait,
	 * waitpid) from many threads at once, and under --engine threads in
	 * every call: each holds a syscall thread, as it would hold its own
	 * kernel thread on NPTL. A cap below the program's blocked threads
	 * would leave calls queued behind them for good.
	 */
	cfg.max_threads = 16384;
	/*
	 * None started ahead: the first call sent to them starts one. A thread
	 * alone makes its own calls and may never need one, and a process with
	 * one thread keeps the kernel's cheaper descriptor lookups (no other
	 * thread shares its descriptor table: "A thread alone" in
	 * docs/threads.md).
	 */
	cfg.threads_per_cpu = 0;
	/*
	 * Syscall entries per carrier (flexsc-run --entries; default the most a
	 * queue can have): each blocked thread holds one, and calls beyond
	 * them go to overflow threads.
	 */
	const char *entries = getenv("FLEXSC_ENTRIES");
	long nentries = entries ? strtol(entries, NULL, 10) : 64 * FLEXSC_ENTRIES_PER_PAGE;
	if (nentries < FLEXSC_ENTRIES_PER_PAGE || nentries % FLEXSC_ENTRIES_PER_PAGE ||
	    nentries > 64 * FLEXSC_ENTRIES_PER_PAGE)
		return -EINVAL;
	cfg.pages_per_queue = (unsigned)(nentries / FLEXSC_ENTRIES_PER_PAGE);
	cfg.interrupt_signal = FX_SIG_INTERRUPT;
	struct sigaction act = { .sa_handler = fx_interrupted }; /* no SA_RESTART: that is the point */
	sigemptyset(&act.sa_mask);
	fx_real_sigaction(FX_SIG_INTERRUPT, &act, NULL);
	struct sigaction poke = { .sa_sigaction = fx_poked, .sa_flags = SA_RESTART | SA_SIGINFO };
	/*
	 * The program's signals blocked while the poke's handler runs, inside
	 * the runtime: one sent to the process and taken there ran its handler
	 * on the uthread the poke interrupted, not on the thread waiting for it
	 * (fx_sig_for_leader passed nothing on from inside the runtime then).
	 * The handler's return lets them in, back in the program's code.
	 */
	uint64_t program = fx_sig_idle_mask();
	memcpy(&poke.sa_mask, &program, sizeof(program));
	fx_real_sigaction(FX_SIG_POKE, &poke, NULL);
	cfg.engine = engine_from_env(getenv("FLEXSC_ENGINE"));
	if ((int)cfg.engine < 0)
		return -EINVAL;
	n = parse_cpus(getenv("FLEXSC_SYSCALL_CORES"), cfg.syscall_cpus, FLEXSC_MAX_CPUS);
	if (n < 0)
		return -EINVAL;
	cfg.nr_syscall_cpus = (unsigned)n;
	int order = order_from_env(getenv("FLEXSC_ORDER"));
	if (order < 0)
		return -EINVAL;
	cfg.flags |= (unsigned)order;
	/*
	 * An engine that cannot run here (io_uring under a container's seccomp
	 * filter) is said by --stats, not on the program's stderr, which the
	 * program alone writes to on NPTL.
	 */
	cfg.flags |= FLEXSC_QUIET;
	/* dynamic core specialization: between the carrier's core and the syscall cores */
	const char *spec = getenv("FLEXSC_SPECIALIZE");
	if (spec && *spec && strcmp(spec, "off")) {
		if (strcmp(spec, "auto") || !n || cfg.engine != FLEXSC_ENGINE_AUTO)
			return -EINVAL;
		fx_rt_specialize = true;
		const char *ms = getenv("FLEXSC_SPECIALIZE_MS");
		long v = ms ? strtol(ms, NULL, 10) : 100;
		if (v < 1 || v > 10000)
			return -EINVAL;
		fx_spec_window_ns = (uint64_t)v * 1000000ull;
	}
	/*
	 * Started under a seccomp filter (a container's, systemd's
	 * SystemCallFilter=): io_uring would bypass it and a syscall thread
	 * is not known to be under it, so every call must run on its caller
	 * (src/core/identity.c). The synchronous engine does that by design;
	 * the others rerouted every call at each flush, and a ping-pong of
	 * threads over pipes hung.
	 */
	bool filtered = fx_seccomp_filtered();
	/* while the process has one thread: registering later costs an RCU grace period */
	fx_fence_start(filtered);
	if (filtered) {
		cfg.engine = FLEXSC_ENGINE_SYNC;
		cfg.nr_syscall_cpus = 0; /* nothing to send there, nor to specialize for */
		fx_rt_specialize = false;
	}
	n = parse_cpus(getenv("FLEXSC_CORES"), carrier_cpus, FLEXSC_MAX_CPUS);
	if (n < 0)
		return -EINVAL;
	const char *pin = getenv("FLEXSC_PIN_CARRIERS");
	fx_carriers_pinned = pin && !strcmp(pin, "1");
	sched_getaffinity(0, sizeof(mine), &mine);
	fx_start_cpus = mine;
	if (n == 0) {
		for (int cpu = 0; cpu < CPU_SETSIZE && n < FLEXSC_MAX_CPUS; cpu++)
			if (CPU_ISSET(cpu, &mine))
				carrier_cpus[n++] = cpu;
	}
	fx_ncarriers = fx_ncores = (unsigned)n;
	rt_cfg = cfg;
	err = flexsc_register(&fx_rt_instance, &cfg);
	if (err)
		return err;
	tune_instance();
	fx_in_use_start();
	fx_spares_max = fx_rt_inline ? FX_SPARES_MAX_SYNC : FX_SPARES_MAX;
	fx_carriers = calloc(fx_ncarriers + fx_spares_max, sizeof(*fx_carriers));
	if (!fx_carriers)
		return -ENOMEM;

	struct fx_carrier *c0 = fx_carrier_new(0, carrier_cpus[0]);
	fx_main_uthread = fx_uthread_adopt_current();
	if (!c0 || !fx_main_uthread)
		return -ENOMEM;
	err = fx_carrier_enter(c0);
	if (err)
		return err;
	fx_carriers[0] = c0;
	atomic_store(&fx_slot_owner[0], c0);
	c0->pthread = (pthread_t)fx_main_uthread->tcb; /* glibc's main thread */
	fx_main_uthread->sigmask = c0->kmask;
	atomic_store(&fx_main_uthread->on_cpu, 1);
	atomic_store(&fx_main_uthread->state, FX_U_RUNNING);
	fx_main_uthread->home = c0;
	c0->current = fx_main_uthread;
	fx_kstate_start(c0, fx_main_uthread);
	atomic_store(&fx_rt_live_uthreads, 1);
	fx_sig_register(fx_main_uthread);
	fx_preempt_init();
	pthread_atfork(NULL, NULL, atfork_child);
	return 0;
}
