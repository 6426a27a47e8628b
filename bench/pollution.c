/* SPDX-License-Identifier: MIT */
/*
 * The paper's figures 2 and 3 measured as user throughput: a cache-sensitive
 * user loop over a working set of the L2 size issues a 64-byte pwrite to a
 * tmpfs file every K iterations. Synchronous: the call runs on the caller's
 * core, between iterations. Remote exception-less: the call is posted to
 * syscall threads (or SQPOLL) on cpu_remote and the loop goes on; results
 * are reaped every 16 calls and the caller blocks only when the queue is
 * full. Reported: the fraction of the syscall-free loop's throughput that
 * each keeps. K is chosen for a number of instructions between calls; the
 * instructions per iteration come from callgrind (the loop has no
 * data-dependent branches, so two runs of different lengths give it
 * exactly), or from --insn-per-iter.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

struct ws {
	uint64_t *buf;
	uint64_t mask; /* words - 1 */
	uint64_t x, j; /* the walk's random state and position */
};

/*
 * The cache-sensitive user loop: a random walk over the working set, one
 * read-modify-write per iteration, where the next address depends on the
 * value just loaded. The dependence makes each iteration wait for its load,
 * as real pointer-heavy code does, so every line a system call evicts from
 * L1/L2 shows up as lost user throughput (independent accesses would let the
 * out-of-order core hide the misses).
 */
static __attribute__((noinline)) void user_work(struct ws *w, uint64_t iters)
{
	uint64_t x = w->x, j = w->j, *b = w->buf, m = w->mask;

	for (uint64_t i = 0; i < iters; i++) {
		uint64_t v = b[j];
		b[j] = v + i;
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		j = ((v ^ x) * 0x9e3779b97f4a7c15ull >> 29) & m;
	}
	w->x = x;
	w->j = j;
}

static void ws_init(struct ws *w)
{
	size_t bytes = cache_size(2), words = 1;

	if (!bytes)
		bytes = 1 << 20;
	while (words * 2 * 8 <= bytes)
		words *= 2;
	w->buf = aligned_alloc(4096, words * 8);
	if (!w->buf)
		die("out of memory");
	for (size_t i = 0; i < words; i++)
		w->buf[i] = i;
	w->mask = words - 1;
	w->x = 88172645463325252ull;
	w->j = 0;
}

/* Instructions retired by user_work per iteration, from two callgrind runs of this program. */
static double callgrind_insn(uint64_t iters)
{
	char self[512], arg[32], out[8192];
	int pfd[2];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (len <= 0 || pipe(pfd))
		return NAN;
	self[len] = 0;
	snprintf(arg, sizeof(arg), "%" PRIu64, iters);
	pid_t pid = fork();
	if (pid < 0)
		return NAN;
	if (pid == 0) {
		dup2(pfd[1], 2);
		close(pfd[0]);
		int devnull = open("/dev/null", O_WRONLY);
		dup2(devnull, 1);
		execlp("valgrind", "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", self, "_loop",
		       arg, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	size_t got = 0;
	ssize_t k;
	while ((k = read(pfd[0], out + got, sizeof(out) - 1 - got)) > 0)
		got += (size_t)k;
	out[got] = 0;
	close(pfd[0]);
	int status;
	waitpid(pid, &status, 0);
	const char *p = strstr(out, "Collected :");
	if (!WIFEXITED(status) || WEXITSTATUS(status) || !p)
		return NAN;
	return strtod(p + strlen("Collected :"), NULL);
}

static double insn_per_iter(void)
{
	if (opt.insn_per_iter > 0)
		return opt.insn_per_iter;
	double a = callgrind_insn(100000), b = callgrind_insn(300000);
	return isfinite(a) && isfinite(b) && b > a ? (b - a) / 200000 : NAN;
}

struct poll_ctx {
	struct ws *w;
	uint64_t k;        /* iterations between calls */
	struct flexsc_queue *q;
	uint64_t n, inflight; /* calls made; posted and not reaped */
	uint64_t full;        /* posts that found the queue full and waited */
	uint64_t args[4];
};

static void free_unit(void *ctx, uint64_t n)
{
	struct poll_ctx *p = ctx;

	user_work(p->w, n * p->k);
}

static void psync_unit(void *ctx, uint64_t n)
{
	struct poll_ctx *p = ctx;

	for (uint64_t i = 0; i < n; i++) {
		user_work(p->w, p->k);
		long r = sc6(SYS_pwrite64, fd_scratch, (long)wbuf, 64, (long)((p->n++ & 1023) * 64), 0, 0);
		if (r != 64)
			die("pwrite returned %ld, expected 64", r);
	}
}

static void preap(struct poll_ctx *p, bool block)
{
	struct flexsc_completion c[64];
	int k;

	if (block)
		check(flexsc_wait(p->q, NULL), "flexsc_wait");
	while ((k = flexsc_reap(p->q, c, 64)) > 0) {
		for (int i = 0; i < k; i++)
			if (c[i].ret != 64)
				die("posted pwrite returned %" PRId64 ", expected 64", c[i].ret);
		p->inflight -= (uint64_t)k;
	}
	check(k, "flexsc_reap");
}

/* Post and go on; collect results every 16 calls, block only when the queue is full. */
static void premote_unit(void *ctx, uint64_t n)
{
	struct poll_ctx *p = ctx;
	int err;

	for (uint64_t i = 0; i < n; i++) {
		user_work(p->w, p->k);
		p->args[3] = (p->n++ & 1023) * 64;
		while ((err = flexsc_post(p->q, SYS_pwrite64, 4, p->args, NULL, NULL)) == -EAGAIN) {
			p->full++;
			preap(p, true);
		}
		check(err, "flexsc_post");
		if (++p->inflight % 16 == 0)
			preap(p, false);
	}
}

static void emit(const struct setup *s, const struct ws *w, uint64_t k, double ipi, struct stat3 mode,
		 struct stat3 sync, struct stat3 free_, double full_per_call)
{
	rec_begin("pollution");
	if (s) {
		rec_setup(s);
	} else {
		rec_str("engine", "sync");
		rec_str("placement", "local");
		rec_int("caller_cpu", cpu_local);
	}
	rec_str("call", "pwrite64");
	rec_int("batch", 1);
	rec_int("iters_between_calls", (long long)k);
	rec_num("insn_per_iter", ipi, 2);
	rec_num("insn_between_calls", (double)k * ipi, 0);
	/* a "call" here is one period: k iterations of the loop and one pwrite */
	rec_num("ns_per_call", mode.med, 1);
	rec_num("sync_ns_per_call", sync.med, 1);
	rec_num("ratio", mode.med / sync.med, 3);
	rec_num("free_ns", free_.med, 1);
	rec_num("kept", free_.med / mode.med, 3);
	rec_num("sync_kept", free_.med / sync.med, 3);
	rec_num("spread", mode.spread, 3);
	rec_num("free_spread", free_.spread, 3);
	if (s)
		rec_num("queue_full_per_call", full_per_call, 4);
	rec_int("working_set", (long long)(w->mask + 1) * 8);
	rec_emit();
}

void bench_pollution(void)
{
	if (cpu_remote < 0) {
		note("\npollution: skipped: only one CPU is available");
		return;
	}
	struct ws w;
	const struct setup setups[] = {
		{ "threads", FLEXSC_ENGINE_THREADS, false, true, 20 },
		{ "uring-sqpoll", FLEXSC_ENGINE_URING, true, true, 20 },
	};
	static const double targets[] = { 250, 500, 1000, 2000, 4000, 8000, 16000, 64000 };
	static const uint64_t fixed_k[] = { 16, 32, 64, 128, 256, 512, 1024, 4096 };
	static const char *const cols[] = { "engine", "iters_between_calls", "insn_between_calls", "ns_per_call",
					    "free_ns", "kept", "sync_kept", "queue_full_per_call", NULL };

	ws_init(&w);
	double ipi = insn_per_iter();
	pin(cpu_local);
	if (!opt.json)
		printf("\npollution: user loop of dependent random RMWs over %zu KiB (the L2 size); "
		       "%.2f instructions/iteration (%s)\n", (size_t)(w.mask + 1) * 8 / 1024, ipi,
		       opt.insn_per_iter > 0 ? "--insn-per-iter" : "callgrind");
	table("pollution: fraction of the syscall-free user throughput kept, one 64-byte pwrite per period "
	      "(ns_per_call: one period)", cols);
	for (unsigned t = 0; t < 8; t++) {
		uint64_t k = isfinite(ipi) ? (uint64_t)(targets[t] / ipi + 0.5) : fixed_k[t];
		if (k < 1)
			k = 1;
		for (unsigned e = 0; e < 2; e++) {
			struct flexsc_config cfg;
			struct inst in;
			struct poll_ctx pf = { .w = &w, .k = k }, ps = pf, pr = pf;

			cfg_for(&cfg, &setups[e], 1);
			inst_open(&in, &cfg);
			pr.q = in.q;
			pr.args[0] = (uint64_t)fd_scratch;
			pr.args[1] = (uintptr_t)wbuf;
			pr.args[2] = 64;
			/* three-way: syscall-free, synchronous, remote, alternately */
			uint64_t nf = calibrate(free_unit, &pf, 1.0), ns = calibrate(psync_unit, &ps, 1.0);
			uint64_t nr = calibrate(premote_unit, &pr, 1.0);
			double vf[MAX_REPS], vs[MAX_REPS], vr[MAX_REPS];
			uint64_t posted0 = pr.n, full0 = pr.full;
			for (unsigned r = 0; r < opt.reps; r++) {
				vf[r] = time_units(free_unit, &pf, nf) / (double)nf;
				vs[r] = time_units(psync_unit, &ps, ns) / (double)ns;
				vr[r] = time_units(premote_unit, &pr, nr) / (double)nr;
			}
			double full = (double)(pr.full - full0) / (double)(pr.n - posted0);
			while (pr.inflight)
				preap(&pr, true);
			inst_check_routes(&in);
			inst_close(&in);
			struct stat3 sf = summarize(vf, opt.reps), ss = summarize(vs, opt.reps);
			struct stat3 sr = summarize(vr, opt.reps);
			if (e == 0)
				emit(NULL, &w, k, ipi, ss, ss, sf, 0);
			emit(&setups[e], &w, k, ipi, sr, ss, sf, full);
		}
	}
	free(w.buf);
}

void pollution_loop(uint64_t iters)
{
	struct ws w;

	ws_init(&w);
	user_work(&w, iters);
	free(w.buf);
}
