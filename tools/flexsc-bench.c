/* SPDX-License-Identifier: MIT */
/*
 * flexsc-bench: the microbenchmarks of the FlexSC paper (figures 2/3, 9 and
 * 10), the CEFOS wrapped-system-call threshold sweep and its cost model, and
 * the ROS cache-contending remote call, each measured against synchronous
 * system calls in the same run. This file is the command line; the
 * benchmarks are in bench/ (bench/bench.h says which file holds what).
 *
 * Method. Every point is a pair: the flexsc configuration and the same call
 * made with the plain syscall instruction, measured alternately, --reps
 * times each (default 3), and reported as the medians of the reps with their
 * spread ((max - min) / median). A measurement runs a calibrated number of
 * units (a unit is one batch: post B calls, wait for all of them) for about
 * 0.2 s (20 ms with --quick), so the clock is read twice per measurement,
 * not per call. The caller is pinned with sched_setaffinity; syscall threads
 * and SQPOLL threads are pinned through the flexsc configuration.
 *
 * Honesty rules: every API return value and every call result is checked
 * (a write of 64 bytes must return 64), the engine and the route each call
 * took are checked against the queue's statistics, and any mismatch ends the
 * program with exit status 1. Nothing is hard-coded: the instructions per
 * iteration of the pollution loop come from callgrind, run by this program
 * on itself (or --insn-per-iter). Each benchmark ends with a record of the
 * CPU time other processes and the hypervisor took meanwhile (noise).
 *
 * Output: a table per benchmark, or with --json one JSON object per line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bench.h"

/* ---- the machine --------------------------------------------------------- */

static void read_line(const char *path, const char *prefix, char *out, size_t len)
{
	FILE *f = fopen(path, "r");
	char line[512];

	snprintf(out, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, prefix, strlen(prefix)))
			continue;
		char *p = strchr(line, ':');
		p = p ? p + 1 : line;
		while (*p == ' ' || *p == '\t')
			p++;
		size_t l = strcspn(p, "\n");
		if (l >= len)
			l = len - 1;
		memcpy(out, p, l);
		out[l] = 0;
		break;
	}
	fclose(f);
}

static void bench_machine(void)
{
	char model[160], clk[64];
	struct utsname u;

	read_line("/proc/cpuinfo", "model name", model, sizeof(model));
	read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", "", clk, sizeof(clk));
	uname(&u);
	rec_begin("machine");
	rec_str("cpu_model", model);
	rec_put("kernel", true, "%s %s", u.sysname, u.release);
	rec_int("online_cpus", sysconf(_SC_NPROCESSORS_ONLN));
	rec_int("caller_cpu", cpu_local);
	rec_int("remote_cpu", cpu_remote);
	rec_int("l1d_bytes", (long long)cache_size(1));
	rec_int("l2_bytes", (long long)cache_size(2));
	rec_int("l3_bytes", (long long)cache_size(3));
	rec_str("clocksource", clk);
	rec_int("reps", opt.reps);
	rec_num("point_s", opt.point_s, 3);
	rec_bool("quick", opt.quick);
	if (opt.json)
		rec_emit();
	else
		printf("machine: %s, %ld CPUs online (caller on CPU %d, remote CPU %d), %s %s, clock %s\n"
		       "method: medians of %u reps of ~%.0f ms each; every point is measured next to the "
		       "synchronous call in the same run\n",
		       model, sysconf(_SC_NPROCESSORS_ONLN), cpu_local, cpu_remote, u.sysname, u.release, clk,
		       opt.reps, opt.point_s * 1e3);
}

/* ---- noise: what else ran while a benchmark did --------------------------- */

struct cpu_sample {
	uint64_t wall, own;         /* ns */
	unsigned long long busy, steal; /* clock ticks, all CPUs */
};

static struct cpu_sample cpu_sample(void)
{
	struct cpu_sample c = { now_ns(), cpu_ns(), 0, 0 };
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");

	if (f) {
		if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
			   &v[4], &v[5], &v[6], &v[7]) == 8) {
			c.busy = v[0] + v[1] + v[2] + v[5] + v[6]; /* user nice system irq softirq */
			c.steal = v[7];
		}
		fclose(f);
	}
	return c;
}

/*
 * CPU time that neither this process (its syscall threads and SQPOLL
 * thread included) nor the idle loop used while the benchmark ran: other
 * processes and kernel threads, and the time the hypervisor stole. Both as
 * a fraction of all CPUs over the wall time. Timings are only as good as
 * these are small.
 */
static void run(const char *name, void (*bench)(void))
{
	struct cpu_sample a = cpu_sample();
	bench();
	struct cpu_sample b = cpu_sample();
	double tick = 1e9 / (double)sysconf(_SC_CLK_TCK), wall = (double)(b.wall - a.wall);
	double ncpu = (double)sysconf(_SC_NPROCESSORS_ONLN);
	double foreign = ((double)(b.busy - a.busy) * tick - (double)(b.own - a.own)) / (wall * ncpu);
	double steal = (double)(b.steal - a.steal) * tick / (wall * ncpu);

	rec_begin(name);
	rec_str("kind", "noise");
	rec_num("wall_s", wall / 1e9, 1);
	rec_num("own_cpu_s", (double)(b.own - a.own) / 1e9, 2);
	rec_num("foreign_cpu_frac", foreign < 0 ? 0 : foreign, 3);
	rec_num("steal_frac", steal, 3);
	if (opt.json)
		rec_emit();
	else
		printf("(%s: %.0f s; other processes used %.1f%% of the CPUs meanwhile, the hypervisor stole "
		       "%.1f%%)\n", name, wall / 1e9, 100 * (foreign < 0 ? 0 : foreign), 100 * steal);
}

/* ---- main ---------------------------------------------------------------- */

static void __attribute__((noreturn)) usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: flexsc-bench [fig9|fig10|wsc|ros|pollution|uring-overhead|order|demo|all] [--json] [--quick]\n"
		"                    [--reps N] [--insn-per-iter X]\n"
		"  fig9            per-call time on one core, batches 1..64, every engine\n"
		"  fig10           the same on a remote core; asleep latency; spin-before-sleep; futex wake-ups\n"
		"  wsc             CEFOS threshold sweep M = 1..32 and the break-even model, formula (5)\n"
		"  ros             ROS cache-contending call: local against remote, latency, throughput, overlap\n"
		"  pollution       user throughput kept with a pwrite every K iterations (paper figures 2/3)\n"
		"  uring-overhead  the io_uring engine against raw liburing at batch 32\n"
		"  order           a mixed batch ordered by type / I/O first against the order posted\n"
		"  demo            the headline comparison (default)\n"
		"  all             every benchmark above except demo\n"
		"  --json          one JSON object per line instead of tables\n"
		"  --quick         ~20 ms per measurement instead of ~200 ms\n"
		"  --reps N        repetitions per measurement, the median is reported (default 3, 1..%d)\n"
		"  --insn-per-iter X  instructions per pollution-loop iteration (default: ask callgrind)\n",
		MAX_REPS);
	exit(status);
}

static void __attribute__((noreturn, format(printf, 1, 2))) bad_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "flexsc-bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: flexsc-bench [fig9|fig10|wsc|ros|pollution|uring-overhead|order|demo|all] "
			"[--json] [--quick] [--reps N] [--insn-per-iter X]\n"
			"try 'flexsc-bench --help'\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *which = NULL;

	/* internal: the pollution loop alone, for callgrind to count its instructions */
	if (argc == 3 && !strcmp(argv[1], "_loop")) {
		find_cpus();
		pollution_loop(strtoull(argv[2], NULL, 10));
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--json")) {
			opt.json = true;
		} else if (!strcmp(a, "--quick")) {
			opt.quick = true;
		} else if (!strcmp(a, "--reps") || !strcmp(a, "--insn-per-iter")) {
			char *end;
			if (i + 1 >= argc)
				bad_usage("%s needs a value", a);
			const char *v = argv[++i];
			errno = 0;
			if (!strcmp(a, "--reps")) {
				unsigned long n = strtoul(v, &end, 10);
				if (errno || *end || end == v || n < 1 || n > MAX_REPS || v[0] == '-')
					bad_usage("--reps wants a number from 1 to 101, not '%s'", v);
				opt.reps = (unsigned)n;
			} else {
				double x = strtod(v, &end);
				if (errno || *end || end == v || !(x > 0) || !isfinite(x))
					bad_usage("--insn-per-iter wants a positive number, not '%s'", v);
				opt.insn_per_iter = x;
			}
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(0);
		} else if (a[0] == '-') {
			bad_usage("unknown option '%s'", a);
		} else if (which) {
			bad_usage("one benchmark at a time (extra '%s')", a);
		} else {
			static const char *const names[] = { "fig9", "fig10", "wsc", "ros", "pollution",
							     "uring-overhead", "order", "demo", "all", NULL };
			unsigned k = 0;
			while (names[k] && strcmp(names[k], a))
				k++;
			if (!names[k])
				bad_usage("unknown benchmark '%s'", a);
			which = a;
		}
	}
	if (!which)
		which = "demo";
	if (opt.quick)
		opt.point_s = 0.02;
	find_cpus();
	setup_calls();
	bench_machine();
	static const struct {
		const char *name;
		void (*fn)(void);
	} benches[] = {
		{ "demo", bench_demo }, { "fig9", bench_fig9 }, { "fig10", bench_fig10 }, { "wsc", bench_wsc },
		{ "ros", bench_ros }, { "pollution", bench_pollution }, { "uring-overhead", bench_uring_overhead },
		{ "order", bench_order },
	};
	bool all = !strcmp(which, "all");
	for (unsigned k = 0; k < sizeof(benches) / sizeof(benches[0]); k++)
		if (all ? k > 0 : !strcmp(which, benches[k].name))
			run(benches[k].name, benches[k].fn);
	return 0;
}
