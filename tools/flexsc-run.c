/* SPDX-License-Identifier: MIT */
/*
 * flexsc-run: runs an unmodified program on FlexSC-Threads.
 *
 *   flexsc-run [--cores LIST] [--syscall-cores LIST] [--engine auto|uring|threads|sync]
 *              [--entries N] [--specialize off|auto] [--order ORDER] [--stats] -- program args...
 *
 * It preloads libflexsc-run.so (found next to this executable, or in
 * ../lib/flexsc/ when installed), passes the configuration in FLEXSC_*
 * variables that the runtime reads at start (and that children inherit, so
 * a forked or exec'ed process runs the same way), disables glibc's rseq
 * registration (GLIBC_TUNABLES glibc.pthread.rseq=0: the rseq area lives in
 * a kernel thread's TCB, which user threads do not share), and execs the
 * program. Bad flags and unusable core lists: a message and exit code 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: flexsc-run [--cores LIST] [--syscall-cores LIST] "
		   "[--engine auto|uring|threads|sync] [--entries N] [--specialize off|auto] [--order ORDER]\n"
		   "       [--stats] -- program [args...]\n"
		   "  --cores LIST          CPUs that run user threads (default: the current affinity)\n"
		   "  --syscall-cores LIST  CPUs for syscall threads and SQPOLL (default: none, batching on the user cores)\n"
		   "  --engine E            where exception-less calls run (default: auto)\n"
		   "  --entries N           syscall entries per user core: 64 to 4096, a multiple of 64 (default 4096)\n"
		   "  --specialize auto     choose while running, per user core, whether its calls run there or on\n"
		   "                        the syscall cores, from measured throughput (needs --syscall-cores)\n"
		   "  --order ORDER         how each batch of calls is ordered before it is issued: posted\n"
		   "                        (default), type, io-first, or io-first,type\n"
		   "  --stats               print the runtime's counters when the program exits\n"
		   "LIST is like 0,2-3.\n");
}

static int die(const char *fmt, const char *arg)
{
	fprintf(stderr, "flexsc-run: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	usage(stderr);
	return 2;
}

/* Checks a CPU list against the CPUs this process may use. */
static int check_cpus(const char *list, const cpu_set_t *allowed)
{
	const char *s = list;
	int n = 0;

	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b;
		if (end == s || a < 0)
			return -1;
		b = a;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s || b < a)
				return -1;
		}
		for (long c = a; c <= b; c++, n++)
			if (c >= CPU_SETSIZE || !CPU_ISSET(c, allowed))
				return -1;
		if (*end != ',' && *end)
			return -1;
		s = *end ? end + 1 : end;
	}
	return n;
}

static int find_preload(char *out, size_t len)
{
	char exe[PATH_MAX - 64]; /* room for the suffixes below */
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return -1;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	*slash = 0;
	const char *candidates[] = { "%s/libflexsc-run.so", "%s/../lib/flexsc/libflexsc-run.so" };
	for (unsigned i = 0; i < 2; i++) {
		snprintf(out, len, candidates[i], exe);
		if (access(out, R_OK) == 0)
			return 0;
	}
	return -1;
}

static void append_env(const char *name, const char *value, char sep)
{
	const char *old = getenv(name);
	char *buf;

	if (old && *old) {
		if (asprintf(&buf, "%s%c%s", value, sep, old) < 0)
			exit(2);
		setenv(name, buf, 1);
		free(buf);
	} else {
		setenv(name, value, 1);
	}
}

int main(int argc, char **argv)
{
	const char *cores = NULL, *syscall_cores = NULL, *engine = "auto", *entries = "4096",
		   *specialize = "off", *order = "posted";
	bool stats = false;
	int i;
	cpu_set_t allowed;

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		return die("cannot read the CPU affinity: %s", strerror(errno));
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			i++;
			break;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--stats")) {
			stats = true;
		} else if (!strcmp(a, "--cores") || !strcmp(a, "--syscall-cores") || !strcmp(a, "--engine") ||
			   !strcmp(a, "--entries") || !strcmp(a, "--specialize") || !strcmp(a, "--order")) {
			if (i + 1 >= argc)
				return die("%s needs a value", a);
			const char *v = argv[++i];
			if (!strcmp(a, "--cores"))
				cores = v;
			else if (!strcmp(a, "--syscall-cores"))
				syscall_cores = v;
			else if (!strcmp(a, "--entries"))
				entries = v;
			else if (!strcmp(a, "--specialize"))
				specialize = v;
			else if (!strcmp(a, "--order"))
				order = v;
			else
				engine = v;
		} else if (a[0] == '-') {
			return die("unknown option %s", a);
		} else {
			break; /* the program, without "--" */
		}
	}
	if (i >= argc)
		return die("%s", "no program to run");
	if (strcmp(engine, "auto") && strcmp(engine, "uring") && strcmp(engine, "threads") &&
	    strcmp(engine, "sync"))
		return die("unknown engine '%s' (auto, uring, threads or sync)", engine);
	char *end;
	long nentries = strtol(entries, &end, 10);
	if (end == entries || *end || nentries < 64 || nentries > 4096 || nentries % 64)
		return die("--entries '%s' is not a multiple of 64 from 64 to 4096", entries);
	if (strcmp(specialize, "off") && strcmp(specialize, "auto"))
		return die("unknown --specialize '%s' (off or auto)", specialize);
	if (!strcmp(specialize, "auto") && (!syscall_cores || strcmp(engine, "auto")))
		return die("%s", "--specialize auto needs --syscall-cores, and the auto engine");
	if (strcmp(order, "posted") && strcmp(order, "type") && strcmp(order, "io-first") &&
	    strcmp(order, "io-first,type") && strcmp(order, "type,io-first"))
		return die("unknown --order '%s' (posted, type, io-first or io-first,type)", order);
	if (cores && check_cpus(cores, &allowed) <= 0)
		return die("--cores '%s' names no CPU, or one this process may not use", cores);
	if (syscall_cores && check_cpus(syscall_cores, &allowed) <= 0)
		return die("--syscall-cores '%s' names no CPU, or one this process may not use",
			   syscall_cores);

	char preload[PATH_MAX], list[4096] = "";
	if (find_preload(preload, sizeof(preload)))
		return die("%s", "cannot find libflexsc-run.so next to flexsc-run or in ../lib/flexsc");
	if (!cores) {
		/* explicit, so that children keep the list though carrier 0 pins its thread */
		for (int c = 0, n = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &allowed))
				n += snprintf(list + n, sizeof(list) - (size_t)n, "%s%d", n ? "," : "", c);
		cores = list;
	}
	setenv("FLEXSC_CORES", cores, 1);
	if (syscall_cores)
		setenv("FLEXSC_SYSCALL_CORES", syscall_cores, 1);
	else
		unsetenv("FLEXSC_SYSCALL_CORES");
	setenv("FLEXSC_ENGINE", engine, 1);
	setenv("FLEXSC_ENTRIES", entries, 1);
	setenv("FLEXSC_SPECIALIZE", specialize, 1);
	setenv("FLEXSC_ORDER", order, 1);
	if (stats)
		setenv("FLEXSC_STATS", "1", 1);
	else
		unsetenv("FLEXSC_STATS");
	append_env("LD_PRELOAD", preload, ':');
	append_env("GLIBC_TUNABLES", "glibc.pthread.rseq=0", ':');
	execvp(argv[i], &argv[i]);
	fprintf(stderr, "flexsc-run: cannot run %s: %s\n", argv[i], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
