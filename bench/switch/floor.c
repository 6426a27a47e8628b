/* SPDX-License-Identifier: MIT */
/*
 * floor: what a FlexSC-Threads switch cannot go below on this machine.
 *
 * Links the runtime's own context switch (src/threads/ctx.S, unchanged)
 * and bounces between two contexts with it, with no scheduler around it:
 * the cost of fx_ctx_switch alone. Then the instructions it is made of
 * that cost the most, each in a loop: wrfsbase (installing the incoming
 * thread's TCB), stmxcsr+ldmxcsr and fnstcw+fldcw (the FP control words it
 * saves and restores), and a locked exchange (the run-queue and wait-list
 * spin locks the scheduler takes around every switch). One JSON object
 * per line: {"bench":"switch_floor","what":...,"ns":...}.
 *
 *   floor [--label NAME]
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void fx_ctx_switch(void **save_sp, void *load_sp, uint64_t load_fsbase);
void fx_ctx_boot(void);

static void *main_sp, *co_sp;
static uint64_t fsbase;

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void co(void *arg)
{
	(void)arg;
	for (;;)
		fx_ctx_switch(&co_sp, main_sp, fsbase);
}

/* the frame fx_ctx_switch pops, as fx_ctx_make (src/threads/uthread.c) lays it out */
static void *make(void *top, void (*entry)(void *), void *arg)
{
	uint64_t *sp = (uint64_t *)((uintptr_t)top & ~(uintptr_t)15);
	uint32_t mxcsr;
	uint16_t fpucw;

	__asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
	__asm__ volatile("fnstcw %0" : "=m"(fpucw));
	*--sp = (uint64_t)fx_ctx_boot;
	*--sp = 0;
	*--sp = 0;
	*--sp = (uint64_t)arg;
	*--sp = (uint64_t)entry;
	*--sp = 0;
	*--sp = 0;
	*--sp = (uint64_t)mxcsr | ((uint64_t)fpucw << 32);
	return sp;
}

static const char *label = "floor";

static void report(const char *what, double ns)
{
	printf("{\"bench\":\"switch_floor\",\"runtime\":\"%s\",\"what\":\"%s\",\"ns\":%.1f}\n", label, what, ns);
}

/* the best of 5 runs of a loop body: ns per iteration / per_iter */
#define TIME(what, n, per_iter, body)                                                 \
	do {                                                                  \
		double best = 1e30;                                           \
		for (int rep = 0; rep < 5; rep++) {                           \
			uint64_t t0 = now_ns();                               \
			for (long i = 0; i < (n); i++) {                      \
				body;                                         \
			}                                                     \
			double per = (double)(now_ns() - t0) / (double)(n) / (per_iter); \
			if (per < best)                                       \
				best = per;                                   \
		}                                                             \
		report(what, best);                                           \
	} while (0)

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--label"))
		label = argv[2];
	__asm__ volatile("rdfsbase %0" : "=r"(fsbase));
	size_t sz = 1 << 16;
	char *stack = malloc(sz);
	if (!stack)
		return 1;
	co_sp = make(stack + sz, co, NULL);

	/* a round trip is two switches */
	TIME("fx_ctx_switch", 2000000, 2, fx_ctx_switch(&main_sp, co_sp, fsbase));
	fflush(stdout);
	uint64_t fs = fsbase;
	uint32_t mx;
	uint16_t cw;
	_Atomic int lock = 0;
	TIME("wrfsbase", 5000000, 1, __asm__ volatile("wrfsbase %0" : : "r"(fs) : "memory"));
	TIME("stmxcsr+ldmxcsr", 5000000, 1, __asm__ volatile("stmxcsr %0; ldmxcsr %0" : "+m"(mx)));
	TIME("fnstcw+fldcw", 5000000, 1, __asm__ volatile("fnstcw %0; fldcw %0" : "+m"(cw)));
	TIME("xchg+store (spin lock and unlock)", 5000000, 1,
	     (atomic_exchange(&lock, 1), atomic_store_explicit(&lock, 0, memory_order_release)));
	return 0;
}
