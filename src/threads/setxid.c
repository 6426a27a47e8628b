/* SPDX-License-Identifier: MIT */
/*
 * The set*id family and setgroups under the runtime: every kernel thread
 * of the process ends up with the new credentials, as under NPTL.
 *
 * The problem. Linux keeps credentials per kernel thread; glibc makes
 * setuid() and friends process-wide by a broadcast: it marks every thread
 * it knows (by its TCB, struct pthread) and sends each SIGSETXID (33),
 * whose handler makes the call on its own kernel thread and clears the
 * mark in THREAD_SELF, that is the TCB %fs points at. Under the runtime
 * that is a uthread's TCB, not the carrier's own, so the carrier's mark
 * is never cleared and glibc sends again forever. And glibc knows carrier
 * 0's kernel thread only by the main thread's TCB, which is the main
 * uthread's: the signal for it goes to whichever carrier ran the main
 * uthread last, and none when the main uthread is the caller (glibc skips
 * "self"), so carrier 0 could keep the old credentials.
 *
 * The shape. The preload's wrappers of these functions (preload/setxid.c)
 * call ours, which, one change at a time:
 *  1. makes the call on the caller's kernel thread; if that fails, nothing
 *     has changed anywhere and the caller gets the error (as on NPTL,
 *     where every thread would fail alike);
 *  2. has every other carrier make the same call on itself: a SIGSETXID
 *     sent with rt_tgsigqueueinfo (SI_QUEUE, this change's number), which
 *     glibc's handler would ignore, so ours (installed in its place, with
 *     its flags) takes it; it interrupts whatever the carrier does (a busy
 *     uthread, an idle sleep, a blocking call: SA_RESTART, as glibc's).
 *     The caller waits until each has; a carrier whose result differs
 *     from the caller's aborts the process, as glibc does;
 *  3. calls libc's function, whose broadcast reaches the kernel threads
 *     glibc started and the runtime does not schedule (syscall threads,
 *     overflow threads, the signal thread, glibc's own helpers) with their
 *     own TCB; its signals to the carriers' TCBs only need accounting.
 *     Each signal that reaches a carrier runs glibc's handler with %fs at
 *     one of the carrier TCBs glibc marked (its own first, else carrier
 *     0's, else any): each mark is cleared once, and glibc is done after
 *     one round. Its call there, and glibc's last one on the caller,
 *     repeat a change already made, which succeeds again.
 * initgroups (preload/setxid.c) comes here through setgroups.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "threads/rt.h"

#define SIGSETXID 33

/* The kernel's struct sigaction on x86-64. */
struct ksigaction {
	void (*handler)(int, siginfo_t *, void *);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};

static void (*glibc_handler)(int, siginfo_t *, void *);
static _Atomic int lock;

/* The change the carriers are asked to make (step 2), valid while `pending`. */
static struct {
	long nr, a, b, c;
	_Atomic int gen;            /* which change: the signal's value */
	_Atomic uint32_t pending;   /* carriers that have not made it yet (a futex) */
	_Atomic long differs;       /* a carrier's result other than the caller's, or 0 */
} req;

/* The carriers' TCBs glibc marks in step 3, each taken by one signal. */
static struct token {
	uintptr_t tcb;
	_Atomic int taken;
} tokens[FLEXSC_MAX_CPUS + FX_SPARES_MAX_SYNC]; /* carriers and the monitor's spares */
static _Atomic int ntokens;

static long raw_call(long nr, long a, long b, long c)
{
	return fx_raw_syscall6(nr, a, b, c, 0, 0, 0);
}

static uintptr_t take(int n, uintptr_t tcb)
{
	for (int i = 0; i < n; i++) {
		int no = 0;
		if ((!tcb || tokens[i].tcb == tcb) && !atomic_load(&tokens[i].taken) &&
		    atomic_compare_exchange_strong(&tokens[i].taken, &no, 1))
			return tokens[i].tcb;
	}
	return 0;
}

/* The carrier running this kernel thread, or NULL (a thread the runtime does not schedule). */
static struct fx_carrier *this_carrier(void)
{
	struct fx_carrier *c = fx_carrier_self();

	/* a thread just cloned from a carrier has its GS base until it clears it */
	if (c && c->tid != (int)raw_call(SYS_gettid, 0, 0, 0))
		c = NULL;
	return c;
}

static void on_setxid(int sig, siginfo_t *si, void *ctx)
{
	int gen = atomic_load(&req.gen);

	if (si->si_code == SI_QUEUE && gen && si->si_value.sival_int == gen &&
	    si->si_pid == raw_call(SYS_getpid, 0, 0, 0)) {
		/* step 2: this carrier makes the change on itself */
		long r = raw_call(req.nr, req.a, req.b, req.c);
		if (r) {
			long none = 0;
			atomic_compare_exchange_strong(&req.differs, &none, r);
		}
		if (atomic_fetch_sub(&req.pending, 1) == 1)
			fx_futex_wake(&req.pending, 1);
		return;
	}
	struct fx_carrier *c = this_carrier();
	if (!c) {
		glibc_handler(sig, si, ctx); /* its own TCB is in %fs */
		return;
	}
	/* step 3 (or a broadcast of glibc's we did not prepare): one marked carrier TCB */
	int n = atomic_load(&ntokens);
	uintptr_t tcb = n ? take(n, (uintptr_t)c->pthread) : 0;
	if (!tcb && n && fx_carriers[0])
		tcb = take(n, (uintptr_t)fx_carriers[0]->pthread);
	if (!tcb && n)
		tcb = take(n, 0);
	if (!tcb)
		tcb = (uintptr_t)c->pthread;
	uintptr_t fs;
	__asm__ volatile("rdfsbase %0" : "=r"(fs));
	if (tcb)
		__asm__ volatile("wrfsbase %0" : : "r"(tcb) : "memory");
	glibc_handler(sig, si, ctx);
	__asm__ volatile("wrfsbase %0" : : "r"(fs) : "memory");
}

/* Puts on_setxid in glibc's handler's place, with its flags. Under lock. */
static int install(void)
{
	struct ksigaction old, act;

	if (glibc_handler)
		return 0;
	if (fx_raw_syscall6(SYS_rt_sigaction, SIGSETXID, 0, (long)&old, 8, 0, 0) || !(old.flags & SA_SIGINFO) ||
	    (void *)old.handler == SIG_DFL || (void *)old.handler == SIG_IGN)
		return -ENOSYS;
	glibc_handler = old.handler;
	act = old;
	act.handler = on_setxid;
	if (fx_raw_syscall6(SYS_rt_sigaction, SIGSETXID, (long)&act, 0, 8, 0, 0)) {
		glibc_handler = NULL;
		return -ENOSYS;
	}
	return 0;
}

/* Step 2: every carrier but the caller's makes the call on itself. */
static void all_carriers(struct fx_carrier *self, long nr, long a, long b, long c)
{
	long pid = raw_call(SYS_getpid, 0, 0, 0);
	int gen = atomic_load(&req.gen) + 1;

	req.nr = nr, req.a = a, req.b = b, req.c = c;
	atomic_store(&req.differs, 0);
	atomic_store(&req.pending, 1); /* ours, dropped once every signal is out */
	atomic_store(&req.gen, gen);
	for (unsigned i = 0; i < fx_ncarriers; i++) {
		struct fx_carrier *k = fx_carriers[i];
		/* one still starting (no tid yet) is glibc's to reach, in step 3 */
		if (!k || k == self || !k->tid)
			continue;
		siginfo_t si;
		memset(&si, 0, sizeof(si));
		si.si_signo = SIGSETXID;
		si.si_code = SI_QUEUE;
		si.si_pid = (pid_t)pid;
		si.si_uid = (uid_t)raw_call(SYS_getuid, 0, 0, 0);
		si.si_value.sival_int = gen;
		atomic_fetch_add(&req.pending, 1);
		long r;
		while ((r = fx_raw_syscall6(SYS_rt_tgsigqueueinfo, pid, k->tid, SIGSETXID, (long)&si, 0, 0)) == -EAGAIN) {
			struct timespec ms = { 0, 1000000 };
			raw_call(SYS_nanosleep, (long)&ms, 0, 0); /* the queue of signals is full */
		}
		if (r)
			atomic_fetch_sub(&req.pending, 1);
	}
	uint32_t p;
	if (atomic_fetch_sub(&req.pending, 1) != 1)
		while ((p = atomic_load(&req.pending)) != 0)
			fx_futex_wait(&req.pending, p, NULL);
	atomic_store(&req.gen, 0); /* a late duplicate is ignored */
	long bad = atomic_load(&req.differs);
	if (bad) {
		/* glibc aborts too: a thread that kept privileges the process dropped must not run on */
		fprintf(stderr, "flexsc-run: system call %ld succeeded on one thread and failed on "
				"another (%s); aborting, as glibc does\n", nr, strerror((int)-bad));
		abort();
	}
}

/*
 * One change: the caller's kernel thread (fails alone), then every carrier,
 * then libc's function for the rest. Returns libc's result.
 */
static int change(long nr, long a, long b, long c, int (*libc)(long, long, long, void *), void *fn)
{
	struct fx_carrier *self = this_carrier();

	/* nothing here switches uthreads: the caller stays on this kernel thread throughout */
	fx_spin_lock(&lock);
	if (install()) {
		fx_spin_unlock(&lock);
		return libc(a, b, c, fn); /* not glibc's handler: leave it to libc */
	}
	long r = raw_call(nr, a, b, c);
	if (r) {
		fx_spin_unlock(&lock);
		errno = (int)-r;
		return -1;
	}
	all_carriers(self, nr, a, b, c);
	int n = 0;
	uintptr_t me;
	__asm__ volatile("rdfsbase %0" : "=r"(me));
	for (unsigned i = 0; i < fx_ncarriers && n < FLEXSC_MAX_CPUS + FX_SPARES_MAX_SYNC; i++) {
		struct fx_carrier *k = fx_carriers[i];
		/* glibc marks every thread it knows but "self", the caller's TCB */
		if (k && k->pthread && (uintptr_t)k->pthread != me) {
			tokens[n].tcb = (uintptr_t)k->pthread;
			atomic_store(&tokens[n].taken, 0);
			n++;
		}
	}
	atomic_store(&ntokens, n);
	int ret = libc(a, b, c, fn);
	int err = errno;
	atomic_store(&ntokens, 0);
	fx_spin_unlock(&lock);
	errno = err;
	return ret;
}

/* libc's function of each kind, called with the arguments change() got. */
static int call1(long a, long b, long c, void *fn)
{
	(void)b, (void)c;
	return ((int (*)(unsigned))fn)((unsigned)a);
}

/* seteuid, setegid: the system call's second argument is theirs */
static int call_e(long a, long b, long c, void *fn)
{
	(void)a, (void)c;
	return ((int (*)(unsigned))fn)((unsigned)b);
}

static int call2(long a, long b, long c, void *fn)
{
	(void)c;
	return ((int (*)(unsigned, unsigned))fn)((unsigned)a, (unsigned)b);
}

static int call3(long a, long b, long c, void *fn)
{
	return ((int (*)(unsigned, unsigned, unsigned))fn)((unsigned)a, (unsigned)b, (unsigned)c);
}

static int call_groups(long a, long b, long c, void *fn)
{
	(void)c;
	return ((int (*)(size_t, const gid_t *))fn)((size_t)a, (const gid_t *)b);
}

static void *libc_fn(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f)
		abort();
	return f;
}

#define LIBC(name) \
	({ \
		static void *fn_; \
		if (!fn_) \
			fn_ = libc_fn(name); \
		fn_; \
	})

/* (uid_t)-1 and (gid_t)-1 as the system call takes them: "unchanged" */
#define ID(x) ((long)(unsigned)(x))

int fx_rt_setuid(uid_t u)
{
	return change(SYS_setuid, ID(u), 0, 0, call1, LIBC("setuid"));
}

int fx_rt_setgid(gid_t g)
{
	return change(SYS_setgid, ID(g), 0, 0, call1, LIBC("setgid"));
}

/* glibc's seteuid is setresuid(-1, u, -1), and refuses -1 */
int fx_rt_seteuid(uid_t u)
{
	if (u == (uid_t)-1) {
		errno = EINVAL;
		return -1;
	}
	return change(SYS_setresuid, ID(-1), ID(u), ID(-1), call_e, LIBC("seteuid"));
}

int fx_rt_setegid(gid_t g)
{
	if (g == (gid_t)-1) {
		errno = EINVAL;
		return -1;
	}
	return change(SYS_setresgid, ID(-1), ID(g), ID(-1), call_e, LIBC("setegid"));
}

int fx_rt_setreuid(uid_t r, uid_t e)
{
	return change(SYS_setreuid, ID(r), ID(e), 0, call2, LIBC("setreuid"));
}

int fx_rt_setregid(gid_t r, gid_t e)
{
	return change(SYS_setregid, ID(r), ID(e), 0, call2, LIBC("setregid"));
}

int fx_rt_setresuid(uid_t r, uid_t e, uid_t s)
{
	return change(SYS_setresuid, ID(r), ID(e), ID(s), call3, LIBC("setresuid"));
}

int fx_rt_setresgid(gid_t r, gid_t e, gid_t s)
{
	return change(SYS_setresgid, ID(r), ID(e), ID(s), call3, LIBC("setresgid"));
}

int fx_rt_setgroups(size_t n, const gid_t *list)
{
	return change(SYS_setgroups, (long)n, (long)list, 0, call_groups, LIBC("setgroups"));
}
