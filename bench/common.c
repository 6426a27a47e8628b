/* SPDX-License-Identifier: MIT */
/*
 * What the benchmarks share: errors, clocks and pinning, statistics, the
 * record printer (a table row or a JSON line), the calls under test,
 * flexsc instances, and the measurement core that times a unit of work
 * against the synchronous baseline.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

struct bench_opt opt = { .reps = 3, .point_s = 0.2 };
int cpu_local = -1, cpu_remote = -1;

/* ---- errors, time, pinning ---------------------------------------------- */

void die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("flexsc-bench: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* An API error (a negative errno) ends the run. */
void check(int err, const char *what)
{
	if (err < 0)
		die("%s: %s", what, strerror(-err));
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

void busy_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	while (now_ns() < end)
		;
}

size_t cache_size(int level)
{
	for (int i = 0; i < 8; i++) {
		char path[96], type[32] = "";
		unsigned lvl = 0;
		size_t kb = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cache/index%d/level", cpu_local, i);
		if (!(f = fopen(path, "r")))
			break;
		if (fscanf(f, "%u", &lvl) != 1)
			lvl = 0;
		fclose(f);
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cache/index%d/type", cpu_local, i);
		if ((f = fopen(path, "r"))) {
			if (fscanf(f, "%31s", type) != 1)
				type[0] = 0;
			fclose(f);
		}
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cache/index%d/size", cpu_local, i);
		if ((int)lvl == level && strcmp(type, "Instruction") && (f = fopen(path, "r"))) {
			if (fscanf(f, "%zuK", &kb) != 1)
				kb = 0;
			fclose(f);
			return kb * 1024;
		}
	}
	return 0;
}

void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity(cpu %d): %s", cpu, strerror(errno));
}

void find_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		die("sched_getaffinity: %s", strerror(errno));
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &set))
			continue;
		if (cpu_local < 0)
			cpu_local = c;
		else if (cpu_remote < 0)
			cpu_remote = c;
	}
}

/* ---- statistics ---------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorts v in place; returns the q-quantile (nearest rank). */
double quantile(double *v, size_t n, double q)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[(size_t)(q * (double)(n - 1) + 0.5)];
}

struct stat3 summarize(double *v, size_t n)
{
	struct stat3 s;

	s.med = quantile(v, n, 0.5);
	s.spread = s.med > 0 ? (v[n - 1] - v[0]) / s.med : 0;
	return s;
}

/* ---- output: a record is one table row or one JSON line ------------------ */

#define REC_MAX 48

static struct {
	unsigned n;
	const char *key[REC_MAX];
	char val[REC_MAX][160];
	bool quote[REC_MAX];
} rec;
static const char *const *tcols; /* the columns of the table being printed */

void rec_put(const char *k, bool quote, const char *fmt, ...)
{
	va_list ap;

	if (rec.n == REC_MAX)
		die("internal: record too long");
	rec.key[rec.n] = k;
	rec.quote[rec.n] = quote;
	va_start(ap, fmt);
	vsnprintf(rec.val[rec.n], sizeof(rec.val[0]), fmt, ap);
	va_end(ap);
	rec.n++;
}

void rec_str(const char *k, const char *v) { rec_put(k, true, "%s", v); }
void rec_int(const char *k, long long v) { rec_put(k, false, "%lld", v); }
void rec_bool(const char *k, bool v) { rec_put(k, false, "%s", v ? "true" : "false"); }
void rec_null(const char *k) { rec_put(k, false, "null"); }

void rec_num(const char *k, double v, int decimals)
{
	if (isfinite(v))
		rec_put(k, false, "%.*f", decimals, v);
	else
		rec_null(k);
}

void rec_begin(const char *bench)
{
	rec.n = 0;
	rec_str("bench", bench);
}

static int col_width(const char *key)
{
	int w = (int)strlen(key) + 2;

	return w < 15 ? 15 : w; /* "io-first,type" and a margin */
}

void table(const char *title, const char *const *cols)
{
	tcols = cols;
	if (opt.json)
		return;
	printf("\n%s\n", title);
	for (unsigned i = 0; cols[i]; i++)
		printf("%*s", col_width(cols[i]), cols[i]);
	putchar('\n');
}

void rec_emit(void)
{
	if (opt.json) {
		putchar('{');
		for (unsigned i = 0; i < rec.n; i++) {
			printf("%s\"%s\":", i ? "," : "", rec.key[i]);
			if (!rec.quote[i]) {
				fputs(rec.val[i], stdout);
				continue;
			}
			putchar('"');
			for (const char *p = rec.val[i]; *p; p++) {
				if (*p == '"' || *p == '\\')
					putchar('\\');
				if ((unsigned char)*p >= 0x20)
					putchar(*p);
			}
			putchar('"');
		}
		puts("}");
	} else {
		for (unsigned c = 0; tcols && tcols[c]; c++) {
			const char *v = "-";
			for (unsigned i = 0; i < rec.n; i++)
				if (!strcmp(rec.key[i], tcols[c]))
					v = rec.val[i];
			printf("%*s", col_width(tcols[c]), v);
		}
		putchar('\n');
	}
	fflush(stdout);
}

void note(const char *fmt, ...)
{
	va_list ap;

	if (opt.json)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* ---- the calls ----------------------------------------------------------- */

struct call c_null, c_getpid, c_write, c_pread;
int fd_cached, fd_scratch;
char wbuf[64];
static int fd_devnull;
static const char *cached_path_dir;
static _Alignas(64) char iobuf[8192];

/* A file made and unlinked in dir, size bytes, read once so it is cached. */
static int tmp_file(const char *dir, size_t size)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/flexsc-bench.XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	unlink(path);
	char *buf = calloc(1, size);
	if (!buf || pwrite(fd, buf, size, 0) != (ssize_t)size || pread(fd, buf, size, 0) != (ssize_t)size)
		die("cannot fill a %zu-byte file in %s", size, dir);
	free(buf);
	return fd;
}

void setup_calls(void)
{
	struct stat st;

	fd_devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd_devnull < 0)
		die("open /dev/null: %s", strerror(errno));
	/* a page-cached regular file on the root fs; /dev/shm (tmpfs) for the pwrite target */
	cached_path_dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	fd_cached = tmp_file(cached_path_dir, 65536);
	if (fd_cached < 0)
		die("cannot create a file in %s: %s", cached_path_dir, strerror(-fd_cached));
	fd_scratch = stat("/dev/shm", &st) == 0 ? tmp_file("/dev/shm", 65536) : -1;
	if (fd_scratch < 0)
		fd_scratch = tmp_file(cached_path_dir, 65536);
	if (fd_scratch < 0)
		die("cannot create a scratch file: %s", strerror(-fd_scratch));
	memset(wbuf, 'x', sizeof(wbuf));
	c_null = (struct call){ "null", SYS_read, 3, { (uint64_t)-1, 0, 0 }, -EBADF };
	c_getpid = (struct call){ "getpid", SYS_getpid, 0, { 0 }, getpid() };
	c_write = (struct call){ "write64", SYS_write, 3,
				 { (uint64_t)fd_devnull, (uintptr_t)wbuf, 64 }, 64 };
	c_pread = (struct call){ "pread4k", SYS_pread64, 4,
				 { (uint64_t)fd_cached, (uintptr_t)iobuf, 4096, 0 }, 4096 };
}

/* ---- flexsc instances ---------------------------------------------------- */

/* The configuration of a measurement: batching by threshold only, no time bound. */
static void cfg_make(struct flexsc_config *c, enum flexsc_engine e, int sys_cpu, bool sqpoll,
		     unsigned batch)
{
	flexsc_config_init(c);
	c->engine = e;
	c->flags = FLEXSC_QUIET;
	if (sys_cpu >= 0) {
		c->nr_syscall_cpus = 1;
		c->syscall_cpus[0] = sys_cpu;
	}
	c->sqpoll = sqpoll;
	c->batch_threshold = batch;
	c->batch_timeout_us = 0;
}

void inst_open(struct inst *in, const struct flexsc_config *c)
{
	check(flexsc_register(&in->fx, c), "flexsc_register");
	in->engine = flexsc_engine_in_use(in->fx);
	if (in->engine != c->engine)
		die("engine %s fell back to %s: refusing to measure the fallback",
		    flexsc_engine_name(c->engine), flexsc_engine_name(in->engine));
	check(flexsc_queue_create(in->fx, &in->q), "flexsc_queue_create");
}

/* Every posted call must have gone to the instance's engine, and completed. */
struct flexsc_stats inst_check_routes(struct inst *in)
{
	struct flexsc_stats st;

	check(flexsc_queue_stats(in->q, &st), "flexsc_queue_stats");
	if (st.by_engine[in->engine] != st.posted || st.completed != st.posted)
		die("engine %s: %" PRIu64 " posted, %" PRIu64 " completed, %" PRIu64
		    " on the engine (uring %" PRIu64 ", threads %" PRIu64 ", sync %" PRIu64 ", local %" PRIu64 ")",
		    flexsc_engine_name(in->engine), st.posted, st.completed, st.by_engine[in->engine],
		    st.by_engine[FLEXSC_ENGINE_URING], st.by_engine[FLEXSC_ENGINE_THREADS],
		    st.by_engine[FLEXSC_ENGINE_SYNC], st.by_engine[FLEXSC_ENGINE_AUTO]);
	return st;
}

void inst_close(struct inst *in)
{
	check(flexsc_queue_destroy(in->q), "flexsc_queue_destroy");
	check(flexsc_exit(in->fx), "flexsc_exit");
}

/* ---- the measurement core ------------------------------------------------ */

double time_units(unit_fn f, void *ctx, uint64_t n)
{
	uint64_t t0 = now_ns();

	f(ctx, n);
	return (double)(now_ns() - t0);
}

/* How many units take about opt.point_s * scale seconds. */
uint64_t calibrate(unit_fn f, void *ctx, double scale)
{
	double target = opt.point_s * scale * 1e9;

	for (uint64_t n = 1;; n *= 2) {
		double t = time_units(f, ctx, n);
		if (t >= target / 8 || n >= (1ull << 40)) {
			double k = n * target / (t > 1 ? t : 1);
			return k < 1 ? 1 : (uint64_t)k;
		}
	}
}

/*
 * Measures f (calls_f calls per unit) against the baseline s (calls_s per
 * unit), alternately, opt.reps times each; ns per call, medians.
 */
struct pair measure_pair(unit_fn f, void *fctx, unsigned calls_f, unit_fn s, void *sctx,
				unsigned calls_s, double scale)
{
	double vf[MAX_REPS], vs[MAX_REPS];
	uint64_t nf = calibrate(f, fctx, scale), ns = calibrate(s, sctx, scale);
	struct pair p;

	for (unsigned r = 0; r < opt.reps; r++) {
		vs[r] = time_units(s, sctx, ns) / ((double)ns * calls_s);
		vf[r] = time_units(f, fctx, nf) / ((double)nf * calls_f);
	}
	p.fx = summarize(vf, opt.reps);
	p.sync = summarize(vs, opt.reps);
	p.ratio = p.fx.med / p.sync.med;
	return p;
}

void sync_unit(void *ctx, uint64_t n)
{
	const struct call *c = ((struct sync_ctx *)ctx)->c;

	for (uint64_t i = 0; i < n; i++)
		check_ret(c, call_sync(c));
}

/* One unit: post a batch (the threshold flushes it), then wait for all of it. */
void batch_unit(void *ctx, uint64_t n)
{
	struct batch_ctx *b = ctx;
	const struct call *c = b->c;

	for (uint64_t u = 0; u < n; u++) {
		for (unsigned i = 0; i < b->batch; i++)
			check(flexsc_post(b->q, c->nr, c->nargs, c->a, NULL, &b->calls[i]), "flexsc_post");
		check(flexsc_wait_all(b->q, b->calls, b->batch, b->rets, NULL), "flexsc_wait_all");
		for (unsigned i = 0; i < b->batch; i++)
			check_ret(c, b->rets[i]);
	}
}

void rec_setup(const struct setup *s)
{
	rec_str("engine", s->label);
	rec_str("placement", s->remote ? "remote" : "local");
	rec_int("caller_cpu", cpu_local);
	rec_int("syscall_cpu", s->remote ? cpu_remote : cpu_local);
	rec_bool("sqpoll", s->sqpoll);
	rec_int("spin_us", s->spin_us);
}

void cfg_for(struct flexsc_config *c, const struct setup *s, unsigned batch)
{
	cfg_make(c, s->engine, s->remote ? cpu_remote : cpu_local, s->sqpoll, batch);
	c->spin_us = s->spin_us;
}

/* One point of figures 9/10, the WSC sweep and the demo: B calls per batch against sync. */
struct pair batch_point(const char *bench, const struct setup *s, const struct call *c,
			       unsigned batch, double scale)
{
	struct flexsc_config cfg;
	struct inst in;
	struct batch_ctx b = { .c = c, .batch = batch };
	struct sync_ctx sc = { c };

	cfg_for(&cfg, s, batch);
	inst_open(&in, &cfg);
	b.q = in.q;
	struct pair p = measure_pair(batch_unit, &b, batch, sync_unit, &sc, 1, scale);
	inst_check_routes(&in);
	inst_close(&in);

	rec_begin(bench);
	rec_setup(s);
	rec_str("call", c->name);
	rec_int("batch", batch);
	rec_pair(&p, "sync_ns_per_call", "sync_spread");
	rec_emit();
	return p;
}

void rec_pair(const struct pair *p, const char *base_ns_key, const char *base_spread_key)
{
	rec_num("ns_per_call", p->fx.med, 1);
	rec_num(base_ns_key, p->sync.med, 1);
	rec_num("ratio", p->ratio, 3);
	rec_num("spread", p->fx.spread, 3);
	rec_num(base_spread_key, p->sync.spread, 3);
	rec_int("reps", opt.reps);
}

