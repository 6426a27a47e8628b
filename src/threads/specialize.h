/* SPDX-License-Identifier: MIT */
/* Dynamic core specialization: the policy (src/threads/specialize.c). */
#ifndef FX_THREADS_SPECIALIZE_H
#define FX_THREADS_SPECIALIZE_H

#include <stdbool.h>
#include <stdint.h>

/* Where a carrier's posted calls run. */
enum fx_spec_mode {
	FX_SPEC_LOCAL = 0,  /* batched on the carrier's own core (io_uring inline, else syscall threads) */
	FX_SPEC_REMOTE = 1, /* every posted call to the syscall threads on the syscall cores */
};

/* Probe timing, in windows. */
#define FX_SPEC_BACKOFF_MIN 4
#define FX_SPEC_BACKOFF_MAX 64
#define FX_SPEC_PROBE_WINDOWS 2 /* the first window after a switch is not measured */

/* One carrier's policy state; zero is "local, nothing measured yet". */
struct fx_spec {
	enum fx_spec_mode mode;
	unsigned probe_left;      /* windows left in a probe of `mode`, 0: not probing */
	double rate[2];           /* calls per second last measured in each mode; 0: unknown */
	unsigned wait;            /* windows before the next probe may start */
	unsigned backoff;         /* what wait is set to after a probe that lost */
	/* for --stats */
	uint64_t windows[2], switches, probes, kept;
};

/* One window's measurements: calls completed and time spent idle, in it. */
struct fx_spec_window {
	uint64_t ns, calls, idle_ns;
};

enum fx_spec_mode fx_spec_decide(struct fx_spec *s, const struct fx_spec_window *w);

#endif
