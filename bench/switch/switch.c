/* SPDX-License-Identifier: MIT */
/*
 * switch: the cost of handing the CPU from one thread to another.
 *
 * An ordinary pthread program: it knows nothing of flexsc. Run plainly it
 * measures kernel thread switches (NPTL: futex waits and wakes, the
 * scheduler); run under `flexsc-run --cores 0` the very same binary
 * measures FlexSC-Threads' user-level switches, because the runtime
 * interposes pthread_mutex_*, pthread_cond_* and sched_yield.
 *
 *   switch [--label NAME] [--tests LIST] [--cpus A,B] [--reps N] [--ms MS]
 *
 * Tests (LIST: comma-separated, default all three):
 *   condvar_same_cpu   a mutex+condvar ping-pong between two threads pinned to CPU A
 *   condvar_cross_cpu  the same with one thread on CPU A, the other on CPU B
 *   yield_same_cpu     two threads on CPU A alternating with sched_yield()
 *
 * A round trip is A -> B -> A: two switches. Each test runs N repetitions
 * (fresh threads each time) of about MS milliseconds after a calibration
 * run, and prints one JSON object per line with the median, minimum and
 * maximum over the repetitions:
 *   {"bench":"switch","runtime":NAME,"test":...,"ns_per_roundtrip":...,"ns_per_switch":...}
 *
 * Pinning uses pthread_attr_setaffinity_np at creation: NPTL applies it;
 * FlexSC-Threads accepts it and ignores it (its carriers are pinned by
 * --cores). The CPUs the two threads last ran on (sched_getcpu) are
 * reported as ran_on, so a run can be checked for what it measured.
 *
 * Nothing here spins without yielding: under a cooperative runtime with
 * one carrier a busy-wait would never let the other thread run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

enum test { CONDVAR, YIELD };

struct pingpong {
	enum test kind;
	long warmup, iters;

	/* condvar ping-pong: whose turn it is, under m; c[i] wakes thread i */
	pthread_mutex_t m;
	pthread_cond_t c[2];
	int turn;

	/* yield ping-pong */
	_Alignas(64) _Atomic int yturn;
	_Alignas(64) _Atomic long yields;

	/* results (thread 0 times the run) */
	uint64_t elapsed_ns;
	int cpu[2];
};

struct arg {
	struct pingpong *pp;
	int id;
};

static void *condvar_side(void *p)
{
	struct arg *a = p;
	struct pingpong *pp = a->pp;
	int me = a->id, other = !me;
	uint64_t t0 = 0;

	pthread_mutex_lock(&pp->m);
	for (long i = 0; i < pp->warmup + pp->iters; i++) {
		if (me == 0 && i == pp->warmup)
			t0 = now_ns();
		while (pp->turn != me)
			pthread_cond_wait(&pp->c[me], &pp->m);
		pp->turn = other;
		pthread_cond_signal(&pp->c[other]);
	}
	/* thread 0 has handed over for the last time: wait for the last return */
	if (me == 0)
		while (pp->turn != me)
			pthread_cond_wait(&pp->c[me], &pp->m);
	pthread_mutex_unlock(&pp->m);
	if (me == 0)
		pp->elapsed_ns = now_ns() - t0;
	pp->cpu[me] = sched_getcpu();
	return NULL;
}

static void *yield_side(void *p)
{
	struct arg *a = p;
	struct pingpong *pp = a->pp;
	int me = a->id, other = !me;
	long yields = 0;
	uint64_t t0 = 0;

	for (long i = 0; i < pp->warmup + pp->iters; i++) {
		if (me == 0 && i == pp->warmup) {
			t0 = now_ns();
			yields = 0;
		}
		while (atomic_load_explicit(&pp->yturn, memory_order_acquire) != me) {
			sched_yield();
			yields++;
		}
		atomic_store_explicit(&pp->yturn, other, memory_order_release);
	}
	if (me == 0) {
		while (atomic_load_explicit(&pp->yturn, memory_order_acquire) != me) {
			sched_yield();
			yields++;
		}
		pp->elapsed_ns = now_ns() - t0;
	}
	atomic_fetch_add(&pp->yields, yields);
	pp->cpu[me] = sched_getcpu();
	return NULL;
}

/* One run with fresh threads; returns 0 or an errno. */
static int run_once(enum test kind, int cpu_a, int cpu_b, long iters, struct pingpong *pp)
{
	pthread_t t[2];
	struct arg args[2];
	int err;

	memset(pp, 0, sizeof(*pp));
	pp->kind = kind;
	pp->iters = iters;
	pp->warmup = iters / 10 + 100;
	pthread_mutex_init(&pp->m, NULL);
	pthread_cond_init(&pp->c[0], NULL);
	pthread_cond_init(&pp->c[1], NULL);
	for (int i = 0; i < 2; i++) {
		pthread_attr_t attr;
		cpu_set_t set;

		pthread_attr_init(&attr);
		CPU_ZERO(&set);
		CPU_SET(i == 0 ? cpu_a : cpu_b, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		args[i] = (struct arg){ pp, i };
		err = pthread_create(&t[i], &attr, kind == CONDVAR ? condvar_side : yield_side, &args[i]);
		pthread_attr_destroy(&attr);
		if (err) {
			if (i == 1) {
				/* let thread 0 finish alone: it never will; report instead */
				fprintf(stderr, "switch: pthread_create: %s\n", strerror(err));
				exit(1);
			}
			return err;
		}
	}
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	pthread_cond_destroy(&pp->c[0]);
	pthread_cond_destroy(&pp->c[1]);
	pthread_mutex_destroy(&pp->m);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: switch [--label NAME] [--tests LIST] [--cpus A,B] [--reps N] [--ms MS]\n"
		   "  tests: condvar_same_cpu,condvar_cross_cpu,yield_same_cpu (default: all)\n");
}

int main(int argc, char **argv)
{
	const char *label = "nptl", *tests = "condvar_same_cpu,condvar_cross_cpu,yield_same_cpu";
	int cpu_a = 0, cpu_b = 1, reps = 5;
	double ms = 300;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!v) {
			usage(stderr);
			return 2;
		}
		i++;
		if (!strcmp(a, "--label"))
			label = v;
		else if (!strcmp(a, "--tests"))
			tests = v;
		else if (!strcmp(a, "--cpus")) {
			if (sscanf(v, "%d,%d", &cpu_a, &cpu_b) != 2 || cpu_a < 0 || cpu_b < 0 ||
			    cpu_a >= CPU_SETSIZE || cpu_b >= CPU_SETSIZE) {
				usage(stderr);
				return 2;
			}
		} else if (!strcmp(a, "--reps"))
			reps = atoi(v);
		else if (!strcmp(a, "--ms"))
			ms = atof(v);
		else {
			usage(stderr);
			return 2;
		}
	}
	if (reps < 1 || reps > 1000 || ms <= 0 || ms > 60000) {
		usage(stderr);
		return 2;
	}

	static const struct {
		const char *name;
		enum test kind;
		int cross;
	} all[] = {
		{ "condvar_same_cpu", CONDVAR, 0 },
		{ "condvar_cross_cpu", CONDVAR, 1 },
		{ "yield_same_cpu", YIELD, 0 },
	};
	static struct pingpong pp;
	char *list = strdup(tests);

	for (char *save = NULL, *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		unsigned k;
		for (k = 0; k < sizeof(all) / sizeof(all[0]) && strcmp(all[k].name, name); k++)
			;
		if (k == sizeof(all) / sizeof(all[0])) {
			fprintf(stderr, "switch: unknown test '%s'\n", name);
			usage(stderr);
			return 2;
		}
		int b = all[k].cross ? cpu_b : cpu_a;

		/* calibrate: iterations for about ms milliseconds */
		long iters = 2000;
		for (int tries = 0; tries < 6; tries++) {
			if (run_once(all[k].kind, cpu_a, b, iters, &pp)) {
				fprintf(stderr, "switch: cannot start threads\n");
				return 1;
			}
			if (pp.elapsed_ns >= 20000000u)
				break;
			iters *= 8;
		}
		double per = (double)pp.elapsed_ns / (double)iters;
		iters = (long)(ms * 1e6 / (per > 1 ? per : 1));
		if (iters < 1000)
			iters = 1000;

		double *rt = calloc((size_t)reps, sizeof(*rt));
		double yields_per_rt = 0;
		int ran_on[2] = { -1, -1 };
		for (int r = 0; r < reps; r++) {
			if (run_once(all[k].kind, cpu_a, b, iters, &pp)) {
				fprintf(stderr, "switch: cannot start threads\n");
				return 1;
			}
			rt[r] = (double)pp.elapsed_ns / (double)iters;
			/* both threads' yields over both threads' loops (warm-up included) */
			yields_per_rt += (double)atomic_load(&pp.yields) / (double)(iters + pp.warmup) / reps;
			ran_on[0] = pp.cpu[0];
			ran_on[1] = pp.cpu[1];
		}
		qsort(rt, (size_t)reps, sizeof(*rt), cmp_double);
		double med = reps % 2 ? rt[reps / 2] : (rt[reps / 2 - 1] + rt[reps / 2]) / 2;
		printf("{\"bench\":\"switch\",\"runtime\":\"%s\",\"test\":\"%s\",\"cpus\":[%d,%d],"
		       "\"ran_on\":[%d,%d],\"iters\":%ld,\"reps\":%d,"
		       "\"ns_per_roundtrip\":%.1f,\"ns_per_switch\":%.1f,"
		       "\"min_ns_per_roundtrip\":%.1f,\"max_ns_per_roundtrip\":%.1f",
		       label, all[k].name, cpu_a, b, ran_on[0], ran_on[1], iters, reps, med, med / 2,
		       rt[0], rt[reps - 1]);
		if (all[k].kind == YIELD)
			printf(",\"yields_per_roundtrip\":%.2f", yields_per_rt);
		printf("}\n");
		fflush(stdout);
		free(rt);
	}
	free(list);
	return 0;
}
