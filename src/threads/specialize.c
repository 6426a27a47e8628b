/* SPDX-License-Identifier: MIT */
/*
 * Dynamic core specialization (FlexSC section 3.6), decided per carrier
 * while the program runs (flexsc-run --syscall-cores LIST --specialize
 * auto).
 *
 * The paper's kernel schedules syscall threads on a list of cores, taking
 * the next one only when the first is busy, so the cores that run system
 * calls follow the load. Here the choice is per carrier, between two
 * places for its posted calls: its own core (batched: io_uring inline,
 * the threads engine for what io_uring cannot do) or the syscall threads
 * on the syscall cores (every posted call, so kernel work leaves the user
 * core). Which is faster depends on the workload and on the machine (how
 * much kernel work a call does against what a cross-core hand-off costs),
 * so the policy does not guess: it measures.
 *
 * Every window (FLEXSC_SPECIALIZE_MS, default 100 ms) the carrier reports
 * the calls it completed and the time it spent idle. Throughput is the
 * calls per second; the core is saturated when it was idle less than 10%
 * of the window. Running locally on a saturated core, the carrier probes
 * remote execution for two windows (the first, the switch's own, is not
 * measured) and keeps it only if it completed clearly more calls (5%);
 * running remotely, it probes local execution every so often and keeps it
 * unless it completed clearly fewer. So local wins ties: it costs no other
 * core and no hand-off latency. A probe that loses doubles the wait before
 * the next (4 to 64 windows); one that wins resets it. An unsaturated
 * local carrier never probes: its calls per second are the load's, which
 * moving them cannot raise.
 *
 * This file is the policy alone, a pure function of the measurements
 * (tests/unit/specialize_policy.c drives it); src/threads/sched.c measures
 * and applies it.
 */
#include "threads/specialize.h"

#define BUSY_SATURATED 0.9
#define MARGIN 0.05

static enum fx_spec_mode switch_to(struct fx_spec *s, enum fx_spec_mode m)
{
	s->mode = m;
	s->switches++;
	return m;
}

enum fx_spec_mode fx_spec_decide(struct fx_spec *s, const struct fx_spec_window *w)
{
	double rate = w->ns ? (double)w->calls * 1e9 / (double)w->ns : 0;
	double busy = w->ns ? 1.0 - (double)w->idle_ns / (double)w->ns : 0;
	enum fx_spec_mode cur = s->mode;
	enum fx_spec_mode other = cur == FX_SPEC_LOCAL ? FX_SPEC_REMOTE : FX_SPEC_LOCAL;

	s->windows[cur]++;
	if (!s->backoff)
		s->backoff = FX_SPEC_BACKOFF_MIN;
	if (s->probe_left) {
		if (--s->probe_left)
			return cur; /* the switch's own window */
		s->rate[cur] = rate;
		bool keep = cur == FX_SPEC_REMOTE ? rate > s->rate[other] * (1 + MARGIN)
						 : rate >= s->rate[other] * (1 - MARGIN);
		if (keep) {
			s->kept++;
			s->backoff = FX_SPEC_BACKOFF_MIN;
			s->wait = s->backoff;
			return cur;
		}
		s->backoff = s->backoff * 2 > FX_SPEC_BACKOFF_MAX ? FX_SPEC_BACKOFF_MAX : s->backoff * 2;
		s->wait = s->backoff;
		return switch_to(s, other);
	}
	s->rate[cur] = rate;
	if (s->wait) {
		s->wait--;
		return cur;
	}
	if (cur == FX_SPEC_LOCAL && busy < BUSY_SATURATED)
		return cur;
	s->probes++;
	s->probe_left = FX_SPEC_PROBE_WINDOWS;
	return switch_to(s, other);
}
