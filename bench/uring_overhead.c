/* SPDX-License-Identifier: MIT */
/*
 * What the io_uring engine adds to io_uring itself: the same batch of calls
 * (64-byte writes to /dev/null, read(-1)) through flexsc (post B, wait for
 * all) and through a ring this file drives with liburing
 * (get_sqe/prep/submit_and_wait/CQE loop), created with the flags flexsc
 * uses (SINGLE_ISSUER, no SQPOLL). A second raw ring with DEFER_TASKRUN and
 * a registered ring descriptor shows what a tuned ring would gain.
 */
#define _GNU_SOURCE
#include <liburing.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#include "bench.h"

struct raw_ctx {
	struct io_uring ring;
	const struct call *c;
	unsigned batch;
};

static void raw_prep(struct io_uring_sqe *sqe, const struct call *c)
{
	if (c->nr == SYS_write)
		io_uring_prep_write(sqe, (int)c->a[0], (void *)(uintptr_t)c->a[1], (unsigned)c->a[2], -1);
	else
		io_uring_prep_read(sqe, (int)c->a[0], (void *)(uintptr_t)c->a[1], (unsigned)c->a[2], -1);
}

static void raw_unit(void *ctx, uint64_t n)
{
	struct raw_ctx *r = ctx;
	struct io_uring_cqe *cqe;
	unsigned head, seen;

	for (uint64_t u = 0; u < n; u++) {
		for (unsigned i = 0; i < r->batch; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
			if (!sqe)
				die("io_uring_get_sqe: the SQ is full");
			raw_prep(sqe, r->c);
			io_uring_sqe_set_data64(sqe, i + 1);
		}
		int err = io_uring_submit_and_wait(&r->ring, r->batch);
		if (err != (int)r->batch)
			die("io_uring_submit_and_wait: %s", err < 0 ? strerror(-err) : "short submit");
		seen = 0;
		io_uring_for_each_cqe(&r->ring, head, cqe) {
			check_ret(r->c, cqe->res);
			seen++;
		}
		if (seen != r->batch)
			die("io_uring: %u completions, expected %u", seen, r->batch);
		io_uring_cq_advance(&r->ring, seen);
	}
}

static void raw_open(struct raw_ctx *r, unsigned flags, bool ring_fd)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	int err = io_uring_queue_init_params(2 * MAX_BATCH, &r->ring, &p);
	if (err)
		die("io_uring_queue_init_params(flags %#x): %s", flags, strerror(-err));
	if (ring_fd && io_uring_register_ring_fd(&r->ring) != 1)
		die("io_uring_register_ring_fd failed");
}

void bench_uring_overhead(void)
{
	static const char *const cols[] = { "call", "batch", "ns_per_call", "raw_ns_per_call", "raw_ratio",
					    "raw_tuned_ns_per_call", "sync_ns_per_call", "ratio", NULL };
	const struct setup s = { "uring", FLEXSC_ENGINE_URING, false, false, 0 };
	const struct call *calls[] = { &c_write, &c_null };
	static const unsigned bs[] = { 32, 1 };

	pin(cpu_local);
	table("uring-overhead: flexsc's io_uring engine against a raw liburing loop, one core, no SQPOLL",
	      cols);
	for (unsigned bi = 0; bi < 2; bi++) {
		for (unsigned k = 0; k < 2; k++) {
			const struct call *c = calls[k];
			unsigned batch = bs[bi];
			struct flexsc_config cfg;
			struct inst in;
			struct batch_ctx b = { .c = c, .batch = batch };
			struct raw_ctx raw = { .c = c, .batch = batch }, tuned = raw;
			struct sync_ctx sc = { c };
			unit_fn fns[4] = { batch_unit, raw_unit, raw_unit, sync_unit };
			void *ctxs[4] = { &b, &raw, &tuned, &sc };
			unsigned per[4] = { batch, batch, batch, 1 };
			uint64_t n[4];
			double v[4][MAX_REPS];
			struct stat3 st[4];

			cfg_for(&cfg, &s, batch);
			inst_open(&in, &cfg);
			b.q = in.q;
			/* raw: the flags flexsc sets up its rings with; tuned: what a tuned ring could do */
			raw_open(&raw, IORING_SETUP_SINGLE_ISSUER, false);
			raw_open(&tuned, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN, true);
			for (unsigned f = 0; f < 4; f++)
				n[f] = calibrate(fns[f], ctxs[f], 1.0);
			for (unsigned r = 0; r < opt.reps; r++)
				for (unsigned f = 0; f < 4; f++)
					v[f][r] = time_units(fns[f], ctxs[f], n[f]) / ((double)n[f] * per[f]);
			for (unsigned f = 0; f < 4; f++)
				st[f] = summarize(v[f], opt.reps);
			inst_check_routes(&in);
			inst_close(&in);
			io_uring_queue_exit(&raw.ring);
			io_uring_queue_exit(&tuned.ring);
			rec_begin("uring-overhead");
			rec_setup(&s);
			rec_str("call", c->name);
			rec_int("batch", batch);
			rec_num("ns_per_call", st[0].med, 1);
			rec_num("raw_ns_per_call", st[1].med, 1);
			rec_num("raw_ratio", st[0].med / st[1].med, 3);
			rec_num("raw_tuned_ns_per_call", st[2].med, 1);
			rec_num("raw_tuned_ratio", st[0].med / st[2].med, 3);
			rec_num("sync_ns_per_call", st[3].med, 1);
			rec_num("ratio", st[0].med / st[3].med, 3);
			rec_num("spread", st[0].spread, 3);
			rec_num("raw_spread", st[1].spread, 3);
			rec_emit();
		}
	}
}

