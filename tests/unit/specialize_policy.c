// SPDX-License-Identifier: MIT
/*
 * The dynamic core specialization policy (src/threads/specialize.c), fed
 * synthetic windows of 100 ms:
 *   1. an unsaturated carrier stays local and never probes;
 *   2. a saturated one probes remote; when remote completes clearly more
 *      calls it stays remote, else it goes back local;
 *   3. a probe that loses doubles the wait before the next, up to 64
 *      windows; one that wins resets it to 4;
 *   4. running remote, it probes local and keeps it on a tie (local wins ties);
 *   5. the load changes: remote better for a while, then local again.
 * The policy is a pure function; this file includes it.
 */
#define _GNU_SOURCE /* testutil.h needs POSIX clocks */
#include <stdio.h>

#include "helpers.h"
#include "threads/specialize.c"

#define WIN 100000000ull /* 100 ms */

/* One window of a workload doing `local` calls/s locally and `remote` remotely, `busy` in [0,1]. */
static enum fx_spec_mode feed(struct fx_spec *s, double local, double remote, double busy)
{
	double rate = s->mode == FX_SPEC_LOCAL ? local : remote;
	struct fx_spec_window w = { WIN, (uint64_t)(rate * WIN / 1e9), (uint64_t)((1 - busy) * WIN) };

	return fx_spec_decide(s, &w);
}

/* Windows until the policy is in mode m (at most limit), or -1. */
static int until(struct fx_spec *s, enum fx_spec_mode m, double local, double remote, double busy, int limit)
{
	for (int i = 1; i <= limit; i++)
		if (feed(s, local, remote, busy) == m)
			return i;
	return -1;
}

int main(void)
{
	struct fx_spec s = { 0 };

	/* 1 */
	for (int i = 0; i < 1000; i++)
		CHECK_EQ(feed(&s, 50000, 90000, 0.5), FX_SPEC_LOCAL);
	CHECK_EQ(s.probes, 0);
	CHECK_EQ(s.windows[FX_SPEC_LOCAL], 1000);

	/* 2: saturated, remote much better: a probe within the first window, kept after two */
	s = (struct fx_spec){ 0 };
	CHECK_EQ(feed(&s, 50000, 90000, 0.99), FX_SPEC_REMOTE);
	CHECK_EQ(feed(&s, 50000, 90000, 0.99), FX_SPEC_REMOTE); /* the switch's own window */
	CHECK_EQ(feed(&s, 50000, 90000, 0.99), FX_SPEC_REMOTE); /* measured: kept */
	CHECK_EQ(s.kept, 1);
	/* saturated, remote only 3% better: not clearly, back to local */
	s = (struct fx_spec){ 0 };
	CHECK_EQ(feed(&s, 50000, 51500, 0.99), FX_SPEC_REMOTE);
	CHECK_EQ(feed(&s, 50000, 51500, 0.99), FX_SPEC_REMOTE);
	CHECK_EQ(feed(&s, 50000, 51500, 0.99), FX_SPEC_LOCAL);
	CHECK_EQ(s.kept, 0);

	/* 3: remote worse every time: waits of 8, 16, 32, 64, 64 windows between probes */
	int want[] = { 8, 16, 32, 64, 64 };
	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int n = until(&s, FX_SPEC_REMOTE, 50000, 30000, 0.99, 1000);
		CHECK_EQ(n, want[i] + 1); /* the wait, then the window that starts the probe */
		CHECK_EQ(until(&s, FX_SPEC_LOCAL, 50000, 30000, 0.99, 10), 2);
	}
	/* then remote wins once: the wait back to 4 */
	CHECK_EQ(until(&s, FX_SPEC_REMOTE, 50000, 90000, 0.99, 1000), 65);
	CHECK_EQ(feed(&s, 50000, 90000, 0.99), FX_SPEC_REMOTE);
	CHECK_EQ(feed(&s, 50000, 90000, 0.99), FX_SPEC_REMOTE);
	CHECK_EQ(s.backoff, FX_SPEC_BACKOFF_MIN);

	/* 4: remote now, local as good (a tie): the local probe keeps local */
	CHECK_EQ(until(&s, FX_SPEC_LOCAL, 60000, 60000, 0.99, 100), FX_SPEC_BACKOFF_MIN + 1);
	CHECK_EQ(feed(&s, 60000, 60000, 0.99), FX_SPEC_LOCAL);
	CHECK_EQ(feed(&s, 60000, 60000, 0.99), FX_SPEC_LOCAL);
	uint64_t kept = s.kept;
	CHECK_EQ(feed(&s, 60000, 60000, 0.99), FX_SPEC_LOCAL);
	CHECK_EQ(s.kept, kept);

	/* 5: remote clearly better for a while, then local clearly better */
	s = (struct fx_spec){ 0 };
	int remote_windows = 0, local_windows = 0;
	for (int i = 0; i < 300; i++)
		remote_windows += feed(&s, 40000, 80000, 0.99) == FX_SPEC_REMOTE;
	for (int i = 0; i < 300; i++)
		local_windows += feed(&s, 80000, 40000, 0.99) == FX_SPEC_LOCAL;
	CHECK(remote_windows > 270);
	CHECK(local_windows > 200);
	CHECK_EQ(s.mode, FX_SPEC_LOCAL);

	printf("specialize_policy: local while unsaturated, remote when it wins clearly, backoff 4..64\n");
	return 0;
}
