/* SPDX-License-Identifier: MIT */
/*
 * The ROS cache-contending call: a pread of N cache lines (N = 1..128) from
 * a page-cached file into a buffer the caller then reads, so the lines move
 * between the core that runs the call and the caller's. Local: the
 * synchronous call on the caller's core. Remote: syscall threads on
 * cpu_remote, or io_uring's SQPOLL thread there. Measured: the latency of
 * one call (post, wait, read the buffer), the throughput with 16 calls in
 * flight, and how many iterations of a small loop (a dependent multiply-add)
 * the caller completes while one remote call is in flight, polling every 8.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "bench.h"

#define ROS_DEPTH 16

static volatile uint64_t sink;

/* The caller reads what the call wrote: one load per cache line. */
static void touch(const char *buf, unsigned lines)
{
	uint64_t s = 0;

	for (unsigned i = 0; i < lines; i++)
		s += *(const volatile uint64_t *)(buf + 64 * i);
	sink += s;
}

/* The small loop of user work: a dependent multiply-add, a few cycles each. */
static inline uint64_t work_step(uint64_t x)
{
	return x * 6364136223846793005ull + 1442695040888963407ull;
}

struct ros_ctx {
	struct flexsc_queue *q;
	unsigned lines;
	char *bufs; /* ROS_DEPTH buffers of 8 KiB */
	unsigned inflight, nfree;
	unsigned free_idx[ROS_DEPTH];
	double work_iters;
};

static void ros_args(const struct ros_ctx *r, unsigned b, uint64_t *a)
{
	a[0] = (uint64_t)fd_cached;
	a[1] = (uintptr_t)(r->bufs + 8192 * b);
	a[2] = 64u * r->lines;
	a[3] = 0;
}

static void ros_sync_unit(void *ctx, uint64_t n)
{
	struct ros_ctx *r = ctx;
	long len = 64l * r->lines;

	for (uint64_t i = 0; i < n; i++) {
		long ret = sc6(SYS_pread64, fd_cached, (long)r->bufs, len, 0, 0, 0);
		if (ret != len)
			die("pread returned %ld, expected %ld", ret, len);
		touch(r->bufs, r->lines);
	}
}

static void ros_lat_unit(void *ctx, uint64_t n)
{
	struct ros_ctx *r = ctx;
	uint64_t a[4];
	flexsc_call_t call;
	int64_t ret;

	ros_args(r, 0, a);
	for (uint64_t i = 0; i < n; i++) {
		check(flexsc_post(r->q, SYS_pread64, 4, a, NULL, &call), "flexsc_post");
		check(flexsc_wait_one(r->q, call, &ret, NULL), "flexsc_wait_one");
		if (ret != (int64_t)a[2])
			die("pread returned %" PRId64 ", expected %" PRIu64, ret, a[2]);
		touch(r->bufs, r->lines);
	}
}

/* Keeps ROS_DEPTH calls in flight; a unit is one completion consumed. */
static void ros_tput_unit(void *ctx, uint64_t n)
{
	struct ros_ctx *r = ctx;
	struct flexsc_completion comp[ROS_DEPTH];
	uint64_t a[4], done = 0;

	while (done < n) {
		while (r->nfree) {
			unsigned b = r->free_idx[--r->nfree];
			ros_args(r, b, a);
			check(flexsc_post(r->q, SYS_pread64, 4, a, (void *)(uintptr_t)b, NULL), "flexsc_post");
			r->inflight++;
		}
		int k = flexsc_reap(r->q, comp, ROS_DEPTH);
		check(k, "flexsc_reap");
		if (k == 0) {
			check(flexsc_wait(r->q, NULL), "flexsc_wait");
			continue;
		}
		for (int i = 0; i < k; i++) {
			unsigned b = (unsigned)(uintptr_t)comp[i].cookie;
			if (comp[i].ret != 64l * r->lines)
				die("pread returned %" PRId64 ", expected %u", comp[i].ret, 64 * r->lines);
			touch(r->bufs + 8192 * b, r->lines);
			r->free_idx[r->nfree++] = b;
			r->inflight--;
			done++;
		}
	}
}

static void ros_drain(struct ros_ctx *r)
{
	struct flexsc_completion comp[ROS_DEPTH];

	while (r->inflight) {
		int k = flexsc_reap(r->q, comp, ROS_DEPTH);
		check(k, "flexsc_reap");
		if (k == 0)
			check(flexsc_wait(r->q, NULL), "flexsc_wait");
		for (int i = 0; i < k; i++) {
			if (comp[i].ret != 64l * r->lines)
				die("pread returned %" PRId64, comp[i].ret);
			r->free_idx[r->nfree++] = (unsigned)(uintptr_t)comp[i].cookie;
			r->inflight--;
		}
	}
}

/* Post one call, run the small loop (8 steps between polls) until it is done. */
static void ros_work_unit(void *ctx, uint64_t n)
{
	struct ros_ctx *r = ctx;
	uint64_t a[4], iters = 0, x = sink;
	flexsc_call_t call;
	int64_t ret;
	int err;

	ros_args(r, 0, a);
	for (uint64_t i = 0; i < n; i++) {
		check(flexsc_post(r->q, SYS_pread64, 4, a, NULL, &call), "flexsc_post");
		do {
			for (int k = 0; k < 8; k++)
				x = work_step(x);
			iters += 8;
		} while ((err = flexsc_poll(r->q, call, &ret)) == -EINPROGRESS);
		check(err, "flexsc_poll");
		if (ret != (int64_t)a[2])
			die("pread returned %" PRId64, ret);
		touch(r->bufs, r->lines);
	}
	sink = x;
	r->work_iters += (double)iters;
}

static double work_ns_per_iter(void)
{
	double v[MAX_REPS];
	uint64_t x = sink, n = 10000000;

	for (unsigned r = 0; r < opt.reps; r++) {
		uint64_t t0 = now_ns();
		for (uint64_t i = 0; i < n; i++) {
			x = work_step(x);
			__asm__ volatile("" : "+r"(x));
		}
		v[r] = (double)(now_ns() - t0) / (double)n;
	}
	sink = x;
	return summarize(v, opt.reps).med;
}

void bench_ros(void)
{
	if (cpu_remote < 0) {
		note("\nros: skipped: only one CPU is available");
		return;
	}
	const struct setup setups[] = {
		{ "threads", FLEXSC_ENGINE_THREADS, false, true, 20 },
		{ "uring-sqpoll", FLEXSC_ENGINE_URING, true, true, 20 },
	};
	static const char *const cols[] = { "engine", "lines", "ns_per_call", "sync_ns_per_call", "ratio",
					    "calls_per_s", "sync_calls_per_s", "work_iters_per_call",
					    "sync_lost_iters", NULL };
	char *bufs = aligned_alloc(4096, ROS_DEPTH * 8192);

	if (!bufs)
		die("out of memory");
	memset(bufs, 0, ROS_DEPTH * 8192);
	pin(cpu_local);
	double wns = work_ns_per_iter();
	table("ros: pread of N cache lines into the caller's buffer, then read by the caller; remote on another core",
	      cols);
	for (unsigned e = 0; e < 2; e++) {
		for (unsigned lines = 1; lines <= 128; lines *= 2) {
			struct flexsc_config cfg;
			struct inst in;
			struct ros_ctx r = { .lines = lines, .bufs = bufs, .nfree = ROS_DEPTH };

			for (unsigned b = 0; b < ROS_DEPTH; b++)
				r.free_idx[b] = b;
			cfg_for(&cfg, &setups[e], 1);
			inst_open(&in, &cfg);
			r.q = in.q;
			struct pair lat = measure_pair(ros_lat_unit, &r, 1, ros_sync_unit, &r, 1, 0.5);
			struct pair tput = measure_pair(ros_tput_unit, &r, 1, ros_sync_unit, &r, 1, 0.5);
			ros_drain(&r);
			uint64_t nw = calibrate(ros_work_unit, &r, 0.25);
			r.work_iters = 0;
			ros_work_unit(&r, nw);
			inst_check_routes(&in);
			inst_close(&in);
			rec_begin("ros");
			rec_setup(&setups[e]);
			rec_str("call", "pread");
			rec_int("batch", 1);
			rec_int("lines", lines);
			rec_int("bytes", 64 * lines);
			rec_num("ns_per_call", lat.fx.med, 1);
			rec_num("sync_ns_per_call", lat.sync.med, 1);
			rec_num("ratio", lat.ratio, 3);
			rec_num("spread", lat.fx.spread, 3);
			rec_int("depth", ROS_DEPTH);
			rec_num("calls_per_s", 1e9 / tput.fx.med, 0);
			rec_num("sync_calls_per_s", 1e9 / tput.sync.med, 0);
			rec_num("tput_ratio", tput.sync.med / tput.fx.med, 3);
			rec_num("work_iters_per_call", r.work_iters / (double)nw, 1);
			rec_num("work_ns_per_iter", wns, 3);
			rec_num("sync_lost_iters", lat.sync.med / wns, 1);
			rec_emit();
		}
	}
	free(bufs);
}

