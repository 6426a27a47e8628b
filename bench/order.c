/* SPDX-License-Identifier: MIT */
/*
 * The paper's future work, measured: ordering a batch by call type
 * (FLEXSC_ORDER_BY_TYPE: "consecutively execute requests of the same type,
 * potentially yielding greater locality of execution") and issuing I/O
 * first (FLEXSC_ORDER_IO_FIRST). A unit posts 32 independent calls of four
 * kinds, interleaved as a server's batch is (one call per blocked thread):
 * pread4k of a cached file and write64 to /dev/null (I/O), fadvise(NORMAL)
 * and epoll_ctl(MOD) (no I/O; both run inline on io_uring). Each order is
 * measured against the same batch in the order posted, alternately, on
 * each engine on the caller's CPU; ratio < 1: the order helps. Timed is the
 * whole batch (post, flush, wait for all): ordering changes which results
 * come back first, never the work done.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench.h"

#define ORDER_BATCH 32
#define KINDS 4

struct mixed_ctx {
	struct flexsc_queue *q;
	const struct call *kinds[KINDS];
	flexsc_call_t calls[ORDER_BATCH];
	int64_t rets[ORDER_BATCH];
};

static void mixed_unit(void *ctx, uint64_t n)
{
	struct mixed_ctx *m = ctx;

	for (uint64_t u = 0; u < n; u++) {
		for (unsigned i = 0; i < ORDER_BATCH; i++) {
			const struct call *c = m->kinds[i % KINDS];
			check(flexsc_post(m->q, c->nr, c->nargs, c->a, NULL, &m->calls[i]), "flexsc_post");
		}
		check(flexsc_wait_all(m->q, m->calls, ORDER_BATCH, m->rets, NULL), "flexsc_wait_all");
		for (unsigned i = 0; i < ORDER_BATCH; i++)
			check_ret(m->kinds[i % KINDS], m->rets[i]);
	}
}

static void mixed_open(struct inst *in, struct mixed_ctx *m, const struct setup *s, unsigned flags,
		       const struct call *const *kinds)
{
	struct flexsc_config cfg;

	cfg_for(&cfg, s, ORDER_BATCH);
	cfg.flags |= flags;
	inst_open(in, &cfg);
	m->q = in->q;
	for (unsigned k = 0; k < KINDS; k++)
		m->kinds[k] = kinds[k];
}

void bench_order(void)
{
	const struct setup setups[] = {
		{ "sync", FLEXSC_ENGINE_SYNC, false, false, 0 },
		{ "threads", FLEXSC_ENGINE_THREADS, false, false, 0 },
		{ "uring", FLEXSC_ENGINE_URING, false, false, 0 },
	};
	const struct {
		const char *name;
		unsigned flags;
	} orders[] = {
		{ "type", FLEXSC_ORDER_BY_TYPE },
		{ "io-first", FLEXSC_ORDER_IO_FIRST },
		{ "io-first,type", FLEXSC_ORDER_IO_FIRST | FLEXSC_ORDER_BY_TYPE },
	};
	static const char *const cols[] = { "engine", "order", "batch", "ns_per_call",
					    "posted_ns_per_call", "ratio", "spread", NULL };
	int ep = epoll_create1(EPOLL_CLOEXEC), pfd[2];
	static struct epoll_event ev = { .events = EPOLLIN };

	if (ep < 0 || pipe2(pfd, O_CLOEXEC) || epoll_ctl(ep, EPOLL_CTL_ADD, pfd[0], &ev))
		die("cannot set up an epoll descriptor for epoll_ctl(MOD)");
	struct call c_fadvise = { "fadvise", SYS_fadvise64, 4,
				  { (uint64_t)fd_cached, 0, 0, POSIX_FADV_NORMAL }, 0 };
	struct call c_epoll = { "epoll_ctl", SYS_epoll_ctl, 4,
				{ (uint64_t)ep, EPOLL_CTL_MOD, (uint64_t)pfd[0], (uintptr_t)&ev }, 0 };
	const struct call *kinds[KINDS] = { &c_pread, &c_fadvise, &c_write, &c_epoll };

	table("order: a batch of 32 interleaved calls (pread4k, fadvise, write64, epoll_ctl), ordered vs posted",
	      cols);
	pin(cpu_local);
	for (unsigned e = 0; e < sizeof(setups) / sizeof(setups[0]); e++) {
		for (unsigned o = 0; o < sizeof(orders) / sizeof(orders[0]); o++) {
			struct inst ordered, posted;
			struct mixed_ctx mo, mp;

			mixed_open(&ordered, &mo, &setups[e], orders[o].flags, kinds);
			mixed_open(&posted, &mp, &setups[e], 0, kinds);
			struct pair p = measure_pair(mixed_unit, &mo, ORDER_BATCH, mixed_unit, &mp,
						     ORDER_BATCH, 0.5);
			inst_check_routes(&ordered);
			inst_check_routes(&posted);
			inst_close(&ordered);
			inst_close(&posted);
			rec_begin("order");
			rec_setup(&setups[e]);
			rec_str("order", orders[o].name);
			rec_str("calls", "pread4k,fadvise,write64,epoll_ctl");
			rec_int("batch", ORDER_BATCH);
			rec_pair(&p, "posted_ns_per_call", "posted_spread");
			rec_emit();
		}
	}
	note("ratio = ordered / posted, medians of --reps alternate measurements; < 1: the order is faster.\n"
	     "Caller and syscall threads on CPU %d.", cpu_local);
	close(ep);
	close(pfd[0]);
	close(pfd[1]);
}
