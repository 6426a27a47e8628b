/* SPDX-License-Identifier: MIT */
/*
 * Start and end of a process under flexsc-run: the runtime starts in a
 * constructor, before the program's own, so even a program that never
 * creates a thread makes its blocking calls exception-less; --stats prints
 * the counters at exit.
 *
 * When the runtime cannot start, the program runs on plain NPTL with a
 * warning, unless FLEXSC_REQUIRE is set (flexsc-run --require): then the
 * process exits at once with FX_EXIT_NO_RUNTIME. When it starts and
 * FLEXSC_RAN_FILE names a file, one line is appended to it, so that a test
 * can tell that the runtime really ran, in every process of a tree.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/real.h"
#include "threads/preempt.h"
#include "threads/waiter.h"

bool fx_rt_active;
/*
 * --stats (FLEXSC_STATS), read once at start: a program may empty its
 * environment before it exits (nginx's workers keep only TZ), and the
 * counters of such a process are wanted as much as any other's.
 */
static bool stats_wanted;
/*
 * Where they go: a copy of stderr taken at start, kept out of the
 * program's way (core/keptfds.c). coreutils close stderr before they exit
 * (gnulib's close_stdout), and `flexsc-run --stats -- ls` printed nothing.
 */
static int stats_fd = -1;

bool fx_sync_ours(void)
{
	static _Atomic int ours; /* 0 not known yet, 1 yes, 2 no */
	int v = atomic_load_explicit(&ours, memory_order_relaxed);

	if (fx_unlikely(!v)) {
		v = getauxval(AT_HWCAP2) & (1 << 1) /* HWCAP2_FSGSBASE */ ? 1 : 2;
		atomic_store_explicit(&ours, v, memory_order_relaxed);
	}
	return v == 1;
}

bool fx_rt_required(void)
{
	const char *v = getenv("FLEXSC_REQUIRE");

	return v && *v && strcmp(v, "0");
}

/*
 * FLEXSC_RAN_FILE: appends "PID EXECUTABLE\n" in one write (O_APPEND, so
 * the lines of concurrent processes do not mix). Raw system calls: the
 * runtime is up, and the interposed ones would be posted. A file that
 * cannot be written is reported, and fatal under FLEXSC_REQUIRE: a check
 * that reads it would otherwise fail without saying why.
 */
static void ran_mark(void)
{
	const char *path = getenv("FLEXSC_RAN_FILE");
	char exe[PATH_MAX], line[PATH_MAX + 32];

	if (!path || !*path)
		return;
	long n = fx_raw_syscall6(SYS_readlink, (long)"/proc/self/exe", (long)exe, sizeof(exe) - 1, 0, 0, 0);
	if (n < 0)
		n = 0;
	exe[n] = 0;
	int len = snprintf(line, sizeof(line), "%d %s\n", (int)getpid(), n ? exe : program_invocation_name);
	long fd = fx_raw_syscall6(SYS_openat, AT_FDCWD, (long)path,
				  O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666, 0, 0);
	long w = fd < 0 ? fd : fx_raw_syscall6(SYS_write, fd, (long)line, len, 0, 0, 0);
	if (fd >= 0)
		fx_raw_syscall6(SYS_close, fd, 0, 0, 0, 0, 0);
	if (w != len) {
		fprintf(stderr, "flexsc-run: %s: cannot write FLEXSC_RAN_FILE %s (%s)\n", program_invocation_name,
			path, w < 0 ? strerror((int)-w) : "short write");
		if (fx_rt_required())
			_exit(FX_EXIT_NO_RUNTIME);
	}
}

/*
 * Syscall threads and the runtime's own are kernel threads, whatever
 * pthread_create means to the program: these replace the library's weak
 * defaults (src/core/os.c) at link time. Not from a thread under a seccomp
 * filter the program installed (fx_rt_sealed): it may forbid clone and
 * kill the whole process for it (OpenSSH's pre-auth sandbox does), where
 * the program, which made no thread, would run on; the runtime's threads
 * start before such a filter instead (src/preload/syscall.c). A filter the
 * process started under (a container's) let the runtime start, and counts
 * not. A thread the program makes is not made here.
 */
int fx_os_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	if (fx_rt_sealed())
		return EPERM;
	return REAL(pthread_create)(t, attr, fn, arg);
}

int fx_os_pthread_join(pthread_t t, void **ret)
{
	return REAL(pthread_join)(t, ret);
}

__attribute__((constructor(101))) static void preload_start(void)
{
	fx_fork_mark_init(); /* the synchronisation objects are ours even without the runtime */
	int err = fx_rt_start();

	if (err) {
		const char *why = err == -ENOTSUP ? "the CPU or kernel lacks FSGSBASE"
				  : err == -EINVAL ? "a FLEXSC_* variable holds a value it cannot use"
						   : strerror(-err);
		if (fx_rt_required()) {
			fprintf(stderr, "flexsc-run: %s: the runtime cannot run here (%s), and FLEXSC_REQUIRE "
					"is set (flexsc-run --require): exiting with status %d instead of "
					"running on plain NPTL\n",
				program_invocation_name, why, FX_EXIT_NO_RUNTIME);
			_exit(FX_EXIT_NO_RUNTIME);
		}
		fprintf(stderr, "flexsc-run: %s: the runtime cannot run here (%s); running on plain NPTL\n",
			program_invocation_name, why);
		return;
	}
	fx_rt_active = true;
	const char *want = getenv("FLEXSC_STATS");
	stats_wanted = want && *want;
	if (stats_wanted)
		stats_fd = fx_fd_keep(fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 0));
	ran_mark();
}

__attribute__((destructor)) static void preload_stats(void)
{
	uint64_t switches = 0, syscalls = 0, sleeps = 0, steals = 0, overflowed = 0;
	uint64_t by_nr[512] = { 0 };

	if (!fx_rt_active || !stats_wanted)
		return;
	FILE *out = stats_fd >= 0 ? fdopen(stats_fd, "w") : NULL;
	if (!out)
		out = stderr;
	for (unsigned i = 0; i < fx_ncarriers; i++) {
		struct fx_carrier *c = fx_carriers[i];
		if (!c)
			continue;
		switches += c->switches;
		syscalls += c->syscalls;
		sleeps += c->idle_sleeps;
		steals += c->steals;
		overflowed += c->overflowed;
		for (unsigned n = 0; n < 512; n++)
			by_nr[n] += c->by_nr[n];
	}
	fprintf(out, "flexsc-run: %u carriers, engine %s\n", fx_ncarriers,
		flexsc_engine_name(flexsc_engine_in_use(fx_rt_instance)));
	fprintf(out, "flexsc-run: %llu exception-less calls, %llu user-level switches, "
			"%llu idle sleeps, %llu steals, %llu calls on overflow threads\n",
		(unsigned long long)syscalls, (unsigned long long)switches,
		(unsigned long long)sleeps, (unsigned long long)steals, (unsigned long long)overflowed);
	fx_tcache_report(out);
	uint64_t changes;
	unsigned in_use = fx_rt_in_use(&changes);
	if (changes)
		fprintf(out, "flexsc-run: carriers taking work: %u of %u at exit, the number changed %llu times\n",
			in_use, fx_ncores, (unsigned long long)changes);
	if (fx_preempt_count())
		fprintf(out, "flexsc-run: %llu times a thread that computed gave way to others waiting "
				"(time-slicing)\n",
			(unsigned long long)fx_preempt_count());
	uint64_t slice_looks, woken_looks, looks = fx_rt_monitor_looks(&slice_looks, &woken_looks);
	if (looks)
		fprintf(out, "flexsc-run: the monitor looked %llu times (%llu a time slice asked for, %llu after "
				"a carrier woke it)\n",
			(unsigned long long)looks, (unsigned long long)slice_looks, (unsigned long long)woken_looks);
	if (fx_rt_handoffs())
		fprintf(out, "flexsc-run: %llu cores handed from a carrier blocked in the kernel to a spare "
				"(%u spares started)\n",
			(unsigned long long)fx_rt_handoffs(), fx_ncarriers - fx_ncores);
	for (unsigned n = 0; n < 512; n++) {
		struct flexsc_sysinfo si;
		if (by_nr[n] && flexsc_sysinfo(fx_rt_instance, n, &si) == 0)
			fprintf(out, "flexsc-run:   %-16s %llu\n", si.name, (unsigned long long)by_nr[n]);
	}
	for (unsigned i = 0; i < fx_ncarriers; i++) {
		struct flexsc_stats st;
		if (fx_carriers[i] && flexsc_queue_stats(fx_carriers[i]->q, &st) == 0) {
			fprintf(out, "flexsc-run: carrier %u: batches %llu, waits %llu (%.3f ms), by engine: local %llu uring %llu threads %llu sync %llu; batch sizes",
				i, (unsigned long long)st.batches, (unsigned long long)st.waits,
				st.wait_ns / 1e6, (unsigned long long)st.by_engine[0],
				(unsigned long long)st.by_engine[1], (unsigned long long)st.by_engine[2],
				(unsigned long long)st.by_engine[3]);
			for (unsigned b = 0; b < FLEXSC_HIST_BUCKETS; b++)
				fprintf(out, " %u+:%llu", 1u << b, (unsigned long long)st.batch_hist[b]);
			fputc('\n', out);
		}
		if (fx_carriers[i] && fx_rt_specialize) {
			const struct fx_spec *sp = &fx_carriers[i]->spec;
			fprintf(out, "flexsc-run: carrier %u: specialization: windows local %llu remote %llu, "
					"%llu switches, %llu probes, %llu kept\n", i,
				(unsigned long long)sp->windows[FX_SPEC_LOCAL],
				(unsigned long long)sp->windows[FX_SPEC_REMOTE],
				(unsigned long long)sp->switches, (unsigned long long)sp->probes,
				(unsigned long long)sp->kept);
		}
	}
	fflush(out); /* the process is ending: flushed, not closed */
}

/* glibc reads the CPU from the TCB's rseq area, which a uthread's own TCB does not have */
FX_EXPORT int sched_getcpu(void)
{
	unsigned cpu;

	return getcpu(&cpu, NULL) == 0 ? (int)cpu : -1;
}
