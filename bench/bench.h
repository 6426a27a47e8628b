/* SPDX-License-Identifier: MIT */
/*
 * flexsc-bench: what the benchmarks share (bench/common.c), and their
 * entry points, one file per figure under bench/. The program is
 * tools/flexsc-bench.c plus every .c file under bench/; the method is
 * described at the top of tools/flexsc-bench.c.
 */
#ifndef FLEXSC_BENCH_H
#define FLEXSC_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flexsc/flexsc.h>

#define MAX_BATCH 64
#define MAX_REPS 101

struct bench_opt {
	bool json, quick;
	unsigned reps;
	double point_s;       /* seconds per measurement */
	double insn_per_iter; /* pollution loop; 0: ask callgrind */
};
extern struct bench_opt opt;
extern int cpu_local, cpu_remote; /* the first two CPUs we may run on; -1: none */

/* ---- errors, time, pinning (an error ends the run with exit status 1) ---- */

void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void check(int err, const char *what); /* dies on a negative errno */
uint64_t now_ns(void);                  /* CLOCK_MONOTONIC */
uint64_t cpu_ns(void);                  /* CLOCK_PROCESS_CPUTIME_ID: every thread of the process */
void sleep_ns(uint64_t ns);
void busy_ns(uint64_t ns);
void pin(int cpu);
void find_cpus(void);
size_t cache_size(int level); /* bytes of cpu_local's data or unified cache at level, 0 if unknown */

/* The synchronous baseline: the system call instruction, inline. */
static inline long sc6(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

/* ---- statistics ---------------------------------------------------------- */

struct stat3 {
	double med, spread; /* spread: (max - min) / median */
};

double quantile(double *v, size_t n, double q); /* sorts v; nearest rank */
struct stat3 summarize(double *v, size_t n);

/* ---- output: a record is one table row, or one JSON line with --json ----- */

void rec_begin(const char *bench);
void rec_put(const char *k, bool quote, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void rec_str(const char *k, const char *v);
void rec_int(const char *k, long long v);
void rec_bool(const char *k, bool v);
void rec_num(const char *k, double v, int decimals); /* null when not finite */
void rec_null(const char *k);
void rec_emit(void);
void table(const char *title, const char *const *cols); /* title and header; the columns of later rows */
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2))); /* tables only */

/* ---- the calls ----------------------------------------------------------- */

struct call {
	const char *name;
	long nr;
	unsigned nargs;
	uint64_t a[6];
	int64_t expect;
};

/*
 * null: read(-1, NULL, 0) -> -EBADF, which every engine can run (io_uring
 * has a read opcode, none for getpid); write64 to /dev/null; pread4k of a
 * page-cached file.
 */
extern struct call c_null, c_getpid, c_write, c_pread;
extern int fd_cached;  /* 64 KiB, page cached, on TMPDIR or /tmp */
extern int fd_scratch; /* 64 KiB on /dev/shm (tmpfs) where it exists: the pwrite target */
extern char wbuf[64];
void setup_calls(void);

static inline void check_ret(const struct call *c, int64_t r)
{
	if (r != c->expect)
		die("%s returned %lld, expected %lld", c->name, (long long)r, (long long)c->expect);
}

static inline int64_t call_sync(const struct call *c)
{
	return sc6(c->nr, (long)c->a[0], (long)c->a[1], (long)c->a[2], (long)c->a[3],
		   (long)c->a[4], (long)c->a[5]);
}

/* ---- flexsc configurations and instances --------------------------------- */

/* A configuration under test: an engine and where it runs. */
struct setup {
	const char *label; /* uring, threads, sync, uring-sqpoll */
	enum flexsc_engine engine;
	bool sqpoll, remote; /* remote: syscall threads / SQPOLL on cpu_remote, else on cpu_local */
	unsigned spin_us;
};

struct inst {
	struct flexsc *fx;
	struct flexsc_queue *q;
	enum flexsc_engine engine;
};

/* Batching by threshold only (batch_timeout_us = 0), FLEXSC_QUIET. */
void cfg_for(struct flexsc_config *c, const struct setup *s, unsigned batch);
void inst_open(struct inst *in, const struct flexsc_config *c); /* dies if the engine fell back */
/* Dies unless every posted call ran on the instance's engine and completed. */
struct flexsc_stats inst_check_routes(struct inst *in);
void inst_close(struct inst *in);
void rec_setup(const struct setup *s);

/* ---- the measurement core ------------------------------------------------ */

typedef void (*unit_fn)(void *ctx, uint64_t units);

double time_units(unit_fn f, void *ctx, uint64_t n);   /* ns for n units */
uint64_t calibrate(unit_fn f, void *ctx, double scale); /* units in opt.point_s * scale seconds */

struct pair {
	struct stat3 fx, sync; /* ns per call */
	double ratio;          /* fx / sync, medians */
};

/* f against the baseline s, alternately, opt.reps times each. */
struct pair measure_pair(unit_fn f, void *fctx, unsigned calls_f, unit_fn s, void *sctx,
			 unsigned calls_s, double scale);

struct sync_ctx {
	const struct call *c;
};
void sync_unit(void *ctx, uint64_t n); /* one synchronous call per unit */

struct batch_ctx {
	struct flexsc_queue *q;
	const struct call *c;
	unsigned batch;
	flexsc_call_t calls[MAX_BATCH];
	int64_t rets[MAX_BATCH];
};
void batch_unit(void *ctx, uint64_t n); /* post a batch (the threshold flushes it), wait for all */

/* The columns of a batch sweep's table (bench/batch.c). */
extern const char *const batch_cols[];

/* A pair's medians, ratio, spreads and reps as fields of the record; the keys name the baseline's. */
void rec_pair(const struct pair *p, const char *base_ns_key, const char *base_spread_key);

/* One point of a batch sweep against sync, emitted as a record. */
struct pair batch_point(const char *bench, const struct setup *s, const struct call *c,
			unsigned batch, double scale);

/* ---- the benchmarks ------------------------------------------------------ */

void bench_fig9(void);           /* bench/batch.c */
void bench_fig10(void);          /* bench/batch.c */
void bench_demo(void);           /* bench/batch.c */
void bench_wsc(void);            /* bench/wsc.c */
void bench_ros(void);            /* bench/ros.c */
void bench_pollution(void);      /* bench/pollution.c */
void pollution_loop(uint64_t iters); /* bench/pollution.c: the loop alone, for callgrind */
void bench_uring_overhead(void); /* bench/uring_overhead.c */
void bench_order(void);          /* bench/order.c */

#endif
