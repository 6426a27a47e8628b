/* SPDX-License-Identifier: MIT */
/*
 * Figures 9 and 10 of the FlexSC paper and the demo: the time per call of a
 * batch of B calls (post B, wait for all), on the caller's core and on a
 * remote one, against the synchronous call measured next to it; for the
 * remote core also the latency when the remote side sleeps, the
 * spin-before-sleep trade-off, and the futex wake-up they build on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench.h"

const char *const batch_cols[] = { "engine", "placement", "call", "batch", "ns_per_call",
					  "sync_ns_per_call", "ratio", "spread", NULL };
static const unsigned batches[] = { 1, 2, 4, 8, 16, 32, 64 };
#define NBATCHES (sizeof(batches) / sizeof(batches[0]))

/* Emits the smallest batch from which flexsc stays at or below the synchronous time. */
static void break_even(const char *bench, const struct setup *s, const struct call *c,
		       const unsigned *b, const struct pair *p, unsigned n)
{
	int be = -1;

	for (int i = (int)n - 1; i >= 0 && p[i].ratio <= 1.0; i--)
		be = (int)b[i];
	rec_begin(bench);
	rec_str("kind", "break_even");
	rec_setup(s);
	rec_str("call", c->name);
	if (be > 0)
		rec_int("break_even_batch", be);
	else
		rec_null("break_even_batch");
	if (opt.json)
		rec_emit();
	else if (be > 0)
		printf("  -> %s %s %s: at or below the synchronous time from a batch of %d on\n",
		       s->label, s->remote ? "remote" : "local", c->name, be);
	else
		printf("  -> %s %s %s: slower than the synchronous call at every batch size\n",
		       s->label, s->remote ? "remote" : "local", c->name);
}

static void sweep(const char *bench, const struct setup *s, const struct call *c)
{
	struct pair p[NBATCHES];

	for (unsigned i = 0; i < NBATCHES; i++)
		p[i] = batch_point(bench, s, c, batches[i], 1.0);
	break_even(bench, s, c, batches, p, NBATCHES);
}

/* ---- fig9: one core ------------------------------------------------------ */

void bench_fig9(void)
{
	/* Same core: a waiting caller must not spin, or the syscall thread cannot run. */
	const struct setup setups[] = {
		{ "uring", FLEXSC_ENGINE_URING, false, false, 0 },
		{ "threads", FLEXSC_ENGINE_THREADS, false, false, 0 },
		{ "sync", FLEXSC_ENGINE_SYNC, false, false, 0 },
	};

	pin(cpu_local);
	table("fig9: per-call time on one core (caller and syscall threads on the same CPU)", batch_cols);
	for (unsigned e = 0; e < 3; e++) {
		const struct call *calls[] = { &c_null, &c_getpid, &c_write, &c_pread };
		for (unsigned k = 0; k < 4; k++) {
			if (calls[k] == &c_getpid && setups[e].engine == FLEXSC_ENGINE_URING)
				continue; /* getpid has no io_uring opcode */
			sweep("fig9", &setups[e], calls[k]);
		}
	}
}

/* ---- fig10: a remote core ------------------------------------------------ */

/*
 * Ping-pong between two threads: with futexes, the cost of waking a
 * sleeping thread (the remote side's wake-up floor); spinning, the cost of
 * moving one cache line from core to core (the floor of any call handed to
 * an awake remote thread: the request goes one way, the result the other).
 */
struct pong {
	_Atomic uint32_t word;
	uint64_t rounds;
	int cpu;
	bool spin;
};

static void pwait(struct pong *p, uint32_t v)
{
	while (atomic_load(&p->word) == v) {
		if (p->spin)
			__builtin_ia32_pause();
		else
			syscall(SYS_futex, &p->word, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
	}
}

static void pwake(struct pong *p, uint32_t v)
{
	atomic_store(&p->word, v);
	if (!p->spin)
		syscall(SYS_futex, &p->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *pong_main(void *arg)
{
	struct pong *p = arg;

	pin(p->cpu);
	for (uint64_t i = 0; i < p->rounds; i++) {
		pwait(p, 0);
		pwake(p, 0);
	}
	return NULL;
}

/* ns for one hand-over: half a round trip */
static double pingpong(int cpu_a, int cpu_b, uint64_t rounds, bool spin)
{
	struct pong p = { .rounds = rounds, .cpu = cpu_b, .spin = spin };
	pthread_t t;
	int err;

	pin(cpu_a);
	if ((err = pthread_create(&t, NULL, pong_main, &p)))
		die("pthread_create: %s", strerror(err));
	uint64_t t0 = now_ns();
	for (uint64_t i = 0; i < rounds; i++) {
		pwake(&p, 1);
		pwait(&p, 1);
	}
	uint64_t t1 = now_ns();
	pthread_join(t, NULL);
	return (double)(t1 - t0) / (double)rounds / 2;
}

/* Latency of one call after gap_ns of quiet; alternates with the synchronous call. */
static void single_call_latency(const char *kind, const struct setup *s, const struct call *c,
				uint64_t gap_ns, unsigned samples, const struct flexsc_config *cfg)
{
	struct inst in;
	double *lf = calloc(samples, sizeof(double)), *ls = calloc(samples, sizeof(double));

	if (!lf || !ls)
		die("out of memory");
	inst_open(&in, cfg);
	flexsc_call_t call;
	int64_t ret;
	uint64_t cpu_f = 0, cpu_s = 0;
	for (unsigned i = 0; i < samples; i++) {
		sleep_ns(gap_ns);
		uint64_t c0 = cpu_ns(), t0 = now_ns();
		check_ret(c, call_sync(c));
		uint64_t t1 = now_ns();
		cpu_s += cpu_ns() - c0;
		ls[i] = (double)(t1 - t0);
		sleep_ns(gap_ns);
		c0 = cpu_ns();
		t0 = now_ns();
		check(flexsc_post(in.q, c->nr, c->nargs, c->a, NULL, &call), "flexsc_post");
		check(flexsc_wait_one(in.q, call, &ret, NULL), "flexsc_wait_one");
		t1 = now_ns();
		cpu_f += cpu_ns() - c0;
		check_ret(c, ret);
		lf[i] = (double)(t1 - t0);
	}
	inst_check_routes(&in);
	inst_close(&in);
	rec_begin("fig10");
	rec_str("kind", kind);
	rec_setup(s);
	rec_int("sqpoll_idle_ms", cfg->sqpoll_idle_ms);
	rec_str("call", c->name);
	rec_int("batch", 1);
	rec_int("gap_us", (long long)(gap_ns / 1000));
	rec_int("samples", samples);
	double p50 = quantile(lf, samples, 0.5), p99 = quantile(lf, samples, 0.99);
	double s50 = quantile(ls, samples, 0.5), s99 = quantile(ls, samples, 0.99);
	rec_num("ns_per_call", p50, 0);
	rec_num("sync_ns_per_call", s50, 0);
	rec_num("ratio", p50 / s50, 2);
	rec_num("p50_ns", p50, 0);
	rec_num("p99_ns", p99, 0);
	rec_num("sync_p50_ns", s50, 0);
	rec_num("sync_p99_ns", s99, 0);
	/* CPU time of the whole process (caller, syscall threads, SQPOLL thread) from post to result */
	rec_num("cpu_ns_per_call", (double)cpu_f / samples, 0);
	rec_num("sync_cpu_ns_per_call", (double)cpu_s / samples, 0);
	rec_emit();
	free(lf);
	free(ls);
}

/*
 * The caller computes for gap_ns between calls (a busy loop: on a VM a
 * nanosleep alone costs tens of microseconds of CPU, which would drown the
 * difference), so the process CPU time per call (every thread, the SQPOLL
 * kernel thread included) minus the synchronous reference's is what the
 * remote side and the waits burn.
 */

static void spin_point(const struct setup *s, const struct call *c, uint64_t gap_ns, unsigned samples)
{
	struct flexsc_config cfg;
	struct inst in;
	double *lat = calloc(samples, sizeof(double)), *slat = calloc(samples, sizeof(double));
	flexsc_call_t call;
	int64_t ret;

	if (!lat || !slat)
		die("out of memory");
	cfg_for(&cfg, s, 1);
	inst_open(&in, &cfg);
	/* the synchronous reference: same gap, same clock reads */
	uint64_t c0 = cpu_ns(), w0 = now_ns();
	for (unsigned i = 0; i < samples; i++) {
		busy_ns(gap_ns);
		uint64_t t0 = now_ns();
		check_ret(c, call_sync(c));
		slat[i] = (double)(now_ns() - t0);
	}
	double sync_cpu = (double)(cpu_ns() - c0) / samples, sync_wall = (double)(now_ns() - w0) / samples;
	c0 = cpu_ns();
	w0 = now_ns();
	for (unsigned i = 0; i < samples; i++) {
		busy_ns(gap_ns);
		uint64_t t0 = now_ns();
		check(flexsc_post(in.q, c->nr, c->nargs, c->a, NULL, &call), "flexsc_post");
		check(flexsc_wait_one(in.q, call, &ret, NULL), "flexsc_wait_one");
		lat[i] = (double)(now_ns() - t0);
		check_ret(c, ret);
	}
	double fx_cpu = (double)(cpu_ns() - c0) / samples, fx_wall = (double)(now_ns() - w0) / samples;
	inst_check_routes(&in);
	inst_close(&in);
	rec_begin("fig10");
	rec_str("kind", "spin");
	rec_setup(s);
	rec_int("sqpoll_idle_ms", cfg.sqpoll_idle_ms);
	rec_str("call", c->name);
	rec_int("batch", 1);
	rec_int("gap_us", (long long)(gap_ns / 1000));
	rec_int("samples", samples);
	double p50 = quantile(lat, samples, 0.5), s50 = quantile(slat, samples, 0.5);
	rec_num("ns_per_call", p50, 0);
	rec_num("sync_ns_per_call", s50, 0);
	rec_num("ratio", p50 / s50, 2);
	rec_num("p50_ns", p50, 0);
	rec_num("p99_ns", quantile(lat, samples, 0.99), 0);
	rec_num("sync_p99_ns", quantile(slat, samples, 0.99), 0);
	rec_num("cpu_ns_per_call", fx_cpu, 0);
	rec_num("sync_cpu_ns_per_call", sync_cpu, 0);
	rec_num("extra_cpu_ns_per_call", fx_cpu - sync_cpu, 0);
	rec_num("period_ns", fx_wall, 0);
	rec_num("sync_period_ns", sync_wall, 0);
	rec_emit();
	free(lat);
	free(slat);
}

void bench_fig10(void)
{
	if (cpu_remote < 0) {
		rec_begin("fig10");
		rec_str("skipped", "only one CPU is available: no remote core");
		if (opt.json)
			rec_emit();
		else
			printf("\nfig10: skipped: only one CPU is available\n");
		return;
	}
	const struct setup thr = { "threads", FLEXSC_ENGINE_THREADS, false, true, 20 };
	const struct setup sqp = { "uring-sqpoll", FLEXSC_ENGINE_URING, true, true, 20 };

	pin(cpu_local);
	table("fig10: per-call time, syscalls executed on a remote core (remote side awake)", batch_cols);
	const struct call *calls[] = { &c_null, &c_getpid, &c_write, &c_pread };
	for (unsigned k = 0; k < 4; k++) {
		sweep("fig10", &thr, calls[k]);
		if (calls[k] != &c_getpid)
			sweep("fig10", &sqp, calls[k]);
	}

	static const char *const lat_cols[] = { "kind", "engine", "call", "gap_us", "p50_ns", "p99_ns",
						"sync_p50_ns", "sync_p99_ns", "ratio", "cpu_ns_per_call", NULL };
	table("fig10: a single call when the remote side has gone to sleep (20 ms between calls)", lat_cols);
	unsigned samples = opt.quick ? 15 : 40 * opt.reps;
	struct flexsc_config cfg;
	cfg_for(&cfg, &thr, 1);
	single_call_latency("asleep", &thr, &c_null, 20000000, samples, &cfg);
	cfg_for(&cfg, &sqp, 1);
	single_call_latency("asleep", &sqp, &c_null, 20000000, samples, &cfg);

	static const char *const spin_cols[] = { "engine", "spin_us", "gap_us", "p50_ns", "p99_ns",
						 "sync_ns_per_call", "cpu_ns_per_call", "extra_cpu_ns_per_call", NULL };
	table("fig10: spin before sleep, one null call after every 50 us of caller work (CPU = whole process)",
	      spin_cols);
	unsigned n = opt.quick ? 300 : 1000 * opt.reps;
	static const unsigned spins[] = { 0, 5, 20, 100, 1000 };
	for (unsigned i = 0; i < 5; i++) {
		struct setup s = thr;
		s.spin_us = spins[i];
		spin_point(&s, &c_null, 50000, n);
	}
	for (unsigned i = 0; i < 5; i++) {
		struct setup s = sqp;
		s.spin_us = spins[i];
		spin_point(&s, &c_null, 50000, n);
	}

	static const char *const pp_cols[] = { "kind", "cpus", "ns_per_handover", NULL };
	table("fig10: reference: thread ping-pong, one hand-over (futex: wake a sleeping thread; spin: "
	      "one cache line moves)", pp_cols);
	static const struct {
		const char *kind;
		bool remote, spin;
	} pp[] = {
		{ "futex_same_core", false, false },
		{ "futex_cross_core", true, false },
		{ "spin_cross_core", true, true },
	};
	for (unsigned k = 0; k < 3; k++) {
		uint64_t rounds = (opt.quick ? 2000 : 20000) * (pp[k].spin ? 20 : 1);
		double v[MAX_REPS];
		int other = pp[k].remote ? cpu_remote : cpu_local;
		for (unsigned r = 0; r < opt.reps; r++)
			v[r] = pingpong(cpu_local, other, rounds, pp[k].spin);
		struct stat3 st = summarize(v, opt.reps);
		rec_begin("fig10");
		rec_str("kind", pp[k].kind);
		rec_put("cpus", true, "%d,%d", cpu_local, other);
		rec_num("ns_per_handover", st.med, 0);
		rec_num("spread", st.spread, 3);
		rec_emit();
	}
	pin(cpu_local);
}

/* ---- demo: the headline comparison -------------------------------------- */

void bench_demo(void)
{
	const struct setup setups[] = {
		{ "uring", FLEXSC_ENGINE_URING, false, false, 0 },
		{ "threads", FLEXSC_ENGINE_THREADS, false, false, 0 },
		{ "sync", FLEXSC_ENGINE_SYNC, false, false, 0 },
		{ "threads", FLEXSC_ENGINE_THREADS, false, true, 20 },
		{ "uring-sqpoll", FLEXSC_ENGINE_URING, true, true, 20 },
	};
	const struct call *calls[] = { &c_null, &c_write };
	static const char *const cols[] = { "call", "engine", "placement", "batch", "ns_per_call",
					    "sync_ns_per_call", "ratio", NULL };

	table("demo: ns per call against the synchronous call, measured side by side", cols);
	for (unsigned k = 0; k < 2; k++) {
		for (unsigned e = 0; e < 5; e++) {
			if (setups[e].remote && cpu_remote < 0)
				continue;
			pin(cpu_local);
			batch_point("demo", &setups[e], calls[k], 1, 0.25);
			batch_point("demo", &setups[e], calls[k], 32, 0.25);
		}
	}
	note("ratio < 1: flexsc is faster than the synchronous call. null = read(-1, NULL, 0) -> -EBADF;\n"
	     "local = caller and syscall threads on one CPU; remote = syscall threads / SQPOLL on CPU %d.",
	     cpu_remote);
}
