/* SPDX-License-Identifier: MIT */
/*
 * The CEFOS wrapped-system-call (WSC) experiment: getpid (and the null
 * call) with a threshold of M calls per flush, M = 1..32, on one core, and
 * the seed's cost model, formula (5):
 *
 *     M > T_sys / (T_sys - (T_gen + T_sche + T_sync + T_req))
 *
 * measured here as the slopes, per call, of the three phases of a batch
 * timed separately for M = 1 and M = 32:
 *   T_sys   the synchronous call;
 *   T_req   posting one request (flexsc_post);
 *   T_sche  the flush: handing the call over and, for engines that run it
 *           there (sync, io_uring without SQPOLL), running it;
 *   T_sync  the wait: the result reaching the owner and being collected;
 *   T_gen   0: flexsc makes no thread per request, its pool exists before.
 * What is left at M = 1 is the per-batch cost F, which the seed takes to be
 * one T_sys (one kernel entry per batch); M_pred_fit uses the measured F.
 *
 * Which engine is "wrapped in the kernel": only io_uring without SQPOLL,
 * where one io_uring_enter runs all M calls. The sync engine and the
 * syscall threads still execute one syscall instruction per call (on the
 * owner at flush, or on a syscall thread), so their per-call cost contains
 * T_sys itself and formula (5) has no solution; they are measured to show
 * the bookkeeping (sync) and the thread switches (threads) the model adds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "bench.h"

static double clock_cost_ns(void)
{
	double v[MAX_REPS];

	for (unsigned r = 0; r < opt.reps; r++) {
		uint64_t t0 = now_ns();
		for (int i = 0; i < 100000; i++)
			(void)now_ns();
		v[r] = (double)(now_ns() - t0) / 100000;
	}
	return summarize(v, opt.reps).med;
}

struct phases {
	double post, flush, wait; /* ns per batch, clock cost removed */
};

/*
 * Times the three phases of a batch of m calls separately: posting (the
 * threshold is above m, so nothing flushes), the flush, and the wait.
 */
static struct phases phase_times(const struct setup *s, const struct call *c, unsigned m,
				 unsigned timeout_us, double clk)
{
	struct flexsc_config cfg;
	struct inst in;
	flexsc_call_t calls[MAX_BATCH];
	int64_t rets[MAX_BATCH];
	double vp[MAX_REPS], vf[MAX_REPS], vw[MAX_REPS];
	struct phases ph;

	cfg_for(&cfg, s, MAX_BATCH + 1);
	cfg.batch_timeout_us = timeout_us;
	inst_open(&in, &cfg);
	uint64_t units = (uint64_t)(opt.point_s * 0.5 * 1e9 / (300.0 * m + 2000)) + 10;
	for (unsigned r = 0; r < opt.reps; r++) {
		uint64_t tp = 0, tf = 0, tw = 0;
		for (uint64_t u = 0; u < units; u++) {
			uint64_t t0 = now_ns();
			for (unsigned i = 0; i < m; i++)
				check(flexsc_post(in.q, c->nr, c->nargs, c->a, NULL, &calls[i]), "flexsc_post");
			uint64_t t1 = now_ns();
			int n = flexsc_flush(in.q);
			uint64_t t2 = now_ns();
			/* with a time bound a slow post (a preemption) may flush part of the batch early */
			if (n < 0 || n > (int)m || (!timeout_us && n != (int)m))
				die("flexsc_flush handed %d calls, expected %u", n, m);
			check(flexsc_wait_all(in.q, calls, m, rets, NULL), "flexsc_wait_all");
			uint64_t t3 = now_ns();
			for (unsigned i = 0; i < m; i++)
				check_ret(c, rets[i]);
			tp += t1 - t0;
			tf += t2 - t1;
			tw += t3 - t2;
		}
		vp[r] = (double)tp / units - clk;
		vf[r] = (double)tf / units - clk;
		vw[r] = (double)tw / units - clk;
	}
	inst_check_routes(&in);
	inst_close(&in);
	ph.post = summarize(vp, opt.reps).med;
	ph.flush = summarize(vf, opt.reps).med;
	ph.wait = summarize(vw, opt.reps).med;
	return ph;
}

static const unsigned wsc_m[] = { 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 20, 24, 32 };
#define NWSC (sizeof(wsc_m) / sizeof(wsc_m[0]))

void bench_wsc(void)
{
	const struct setup setups[] = {
		{ "threads", FLEXSC_ENGINE_THREADS, false, false, 0 },
		{ "sync", FLEXSC_ENGINE_SYNC, false, false, 0 },
		{ "uring", FLEXSC_ENGINE_URING, false, false, 0 },
	};
	struct { const struct setup *s; const struct call *c; } runs[] = {
		{ &setups[0], &c_getpid }, { &setups[1], &c_getpid },
		{ &setups[0], &c_null }, { &setups[1], &c_null }, { &setups[2], &c_null },
	};
	int measured[5];

	pin(cpu_local);
	table("wsc: CEFOS threshold sweep on one core (M calls per flush)", batch_cols);
	for (unsigned r = 0; r < 5; r++) {
		struct pair p[NWSC];
		for (unsigned i = 0; i < NWSC; i++)
			p[i] = batch_point("wsc", runs[r].s, runs[r].c, wsc_m[i], 0.5);
		measured[r] = -1;
		for (int i = NWSC - 1; i >= 0 && p[i].ratio <= 1.0; i--)
			measured[r] = (int)wsc_m[i];
	}

	static const char *const model_cols[] = { "engine", "call", "T_sys", "T_req", "T_sche", "T_sync",
						  "F_batch", "M_pred_seed", "M_pred_fit", "M_measured", NULL };
	table("wsc: cost model, formula (5): M > T_sys / (T_sys - (T_gen + T_sche + T_sync + T_req)), T_gen = 0",
	      model_cols);
	double clk = clock_cost_ns();
	for (unsigned r = 0; r < 5; r++) {
		struct sync_ctx sc = { runs[r].c };
		double v[MAX_REPS];
		uint64_t n = calibrate(sync_unit, &sc, 0.5);
		for (unsigned k = 0; k < opt.reps; k++)
			v[k] = time_units(sync_unit, &sc, n) / (double)n;
		double t_sys = summarize(v, opt.reps).med;
		struct phases a = phase_times(runs[r].s, runs[r].c, 1, 0, clk);
		struct phases b = phase_times(runs[r].s, runs[r].c, 32, 0, clk);
		/* per call: the slope between batches of 1 and 32; per batch: what is left at M = 1 */
		double t_req = (b.post - a.post) / 31;
		double t_sche = (b.flush - a.flush) / 31;
		double t_sync = (b.wait - a.wait) / 31;
		double per_call = t_req + t_sche + t_sync;
		double fixed = a.post + a.flush + a.wait - per_call;
		double m_seed = t_sys > per_call ? t_sys / (t_sys - per_call) : INFINITY;
		double m_fit = t_sys > per_call ? fixed / (t_sys - per_call) : INFINITY;
		rec_begin("wsc");
		rec_str("kind", "model");
		rec_setup(runs[r].s);
		rec_str("call", runs[r].c->name);
		rec_num("T_sys", t_sys, 1);
		rec_num("T_req", t_req, 1);
		rec_num("T_sche", t_sche, 1);
		rec_num("T_sync", t_sync, 1);
		rec_num("T_gen", 0, 1);
		rec_num("F_batch", fixed, 1);
		rec_num("post_1", a.post, 1);
		rec_num("flush_1", a.flush, 1);
		rec_num("wait_1", a.wait, 1);
		rec_num("post_32", b.post, 1);
		rec_num("flush_32", b.flush, 1);
		rec_num("wait_32", b.wait, 1);
		rec_num("M_pred_seed", m_seed, 2);
		rec_num("M_pred_fit", m_fit, 2);
		if (measured[r] > 0)
			rec_int("M_measured", measured[r]);
		else
			rec_null("M_measured");
		rec_num("clock_ns", clk, 1);
		rec_emit();
	}

	/* The cost of the batch time bound: one clock read per post (fx_batch_due). */
	static const char *const post_cols[] = { "engine", "call", "batch_timeout_us", "post_ns", NULL };
	table("wsc: cost of one flexsc_post (T_req), without and with the default batch time bound", post_cols);
	for (unsigned t = 0; t < 2; t++) {
		for (unsigned e = 0; e < 3; e++) {
			const struct call *c = e == 2 ? &c_null : &c_getpid;
			struct phases a = phase_times(&setups[e], c, 32, t ? 100 : 0, clk);
			rec_begin("wsc");
			rec_str("kind", "post_cost");
			rec_setup(&setups[e]);
			rec_str("call", c->name);
			rec_int("batch_timeout_us", t ? 100 : 0);
			rec_num("post_ns", a.post / 32, 1);
			rec_emit();
		}
	}
}

