/* SPDX-License-Identifier: MIT */
/*
 * Who a delegated call runs as.
 *
 * The invariant: a posted call passes exactly the permission checks, and
 * has exactly the effect, that the caller's own call would have when the
 * caller issues it (its flush). It holds by construction where the kernel
 * runs the call as the caller, and by a check made from the kernel's own
 * answers, on both tasks, where another task runs it:
 *
 *  - io_uring entered by the caller (no SQPOLL): the kernel runs each
 *    request with the submitter's credentials, descriptor table and
 *    filesystem context, inline or in an io-wq worker (which the kernel
 *    keeps in step with its task). Only seccomp escapes: io_uring ops are
 *    not system calls, no filter sees them. So before each flush that
 *    uses the ring, the caller asks the kernel whether it is filtered
 *    (fx_seccomp_filtered); a filtered caller runs every call itself.
 *  - SQPOLL: the kernel's SQPOLL thread runs requests with its creator's
 *    credentials, or an SQE's personality, and the descriptor table and
 *    fs context it shared with its creator. Before each flush the caller
 *    reads its own identity: the SQEs carry its credentials (registered
 *    as a personality when they change), and the ring is used only while
 *    the caller still shares the process's original descriptor table and
 *    fs context, asked of kcmp against an anchor thread that holds them
 *    (kcmp against the SQPOLL thread itself answered "same" after an
 *    unshare while the thread still used the old table: attack_context).
 *    Any difference: the caller runs the batch itself (src/engine/uring.c).
 *  - syscall threads (and the runtime's overflow threads): credentials can
 *    change under them (glibc's set*id broadcasts) and differ per thread
 *    (raw system calls, capset, libcap, seccomp without TSYNC). So the
 *    caller records its identity with each flush, and the executor, before
 *    it runs a call, reads its own from the kernel and kcmp's its context
 *    against the caller's task; any difference and it refuses the call
 *    (FX_RET_REFUSED), which the caller then runs itself
 *    (src/engine/systhreads.c, src/threads/overflow.c).
 *
 * Nothing here depends on which library, wrapper or thread changed the
 * identity: every answer comes from the kernel at the moment of the hand-
 * over. Namespaces other than the mount namespace (which comes with the fs
 * context) are per task and not compared: the calls that depend on them
 * are marked in the system call table and never leave the caller.
 */
#define _GNU_SOURCE
#include <linux/capability.h>
#include <linux/kcmp.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/identity.h"
#include "core/internal.h"

/*
 * Asked with prctl, not read from /proc, which a filter that denies openat
 * would close: anything but "none", an error included, counts as filtered.
 */
bool fx_seccomp_filtered(void)
{
	return fx_raw_syscall6(SYS_prctl, PR_GET_SECCOMP, 0, 0, 0, 0, 0) != 0;
}

void fx_identity_read(struct fx_identity *id)
{
	memset(id, 0, sizeof(*id));
	id->seccomp = (int32_t)fx_raw_syscall6(SYS_prctl, PR_GET_SECCOMP, 0, 0, 0, 0, 0);
	if (id->seccomp)
		return;
	fx_raw_syscall6(SYS_getresuid, (long)&id->uid[0], (long)&id->uid[1], (long)&id->uid[2], 0, 0, 0);
	fx_raw_syscall6(SYS_getresgid, (long)&id->gid[0], (long)&id->gid[1], (long)&id->gid[2], 0, 0, 0);
	/* an invalid id changes nothing and returns the current one */
	id->uid[3] = (uint32_t)fx_raw_syscall6(SYS_setfsuid, -1, 0, 0, 0, 0, 0);
	id->gid[3] = (uint32_t)fx_raw_syscall6(SYS_setfsgid, -1, 0, 0, 0, 0, 0);
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct caps[2];
	if (fx_raw_syscall6(SYS_capget, (long)&hdr, (long)caps, 0, 0, 0, 0) == 0) {
		for (int i = 0; i < 2; i++) {
			id->caps[i] = caps[i].effective;
			id->caps[2 + i] = caps[i].permitted;
			id->caps[4 + i] = caps[i].inheritable;
		}
	} else {
		id->ngroups = -1;
		return;
	}
	id->personality = (int32_t)fx_raw_syscall6(SYS_personality, 0xffffffff, 0, 0, 0, 0, 0);
	long n = fx_raw_syscall6(SYS_getgroups, FX_ID_GROUPS, (long)id->groups, 0, 0, 0, 0);
	id->ngroups = n < 0 ? -1 : (int32_t)n; /* EINVAL: more than FX_ID_GROUPS */
}

bool fx_identity_same(const struct fx_identity *a, const struct fx_identity *b)
{
	return !a->seccomp && a->ngroups >= 0 && memcmp(a, b, sizeof(*a)) == 0;
}

/*
 * The anchor: a thread that does nothing but hold the descriptor table and
 * fs context of the thread that made it (the process's, unless that one
 * had left them), so that "does this task still share them" has a task to
 * ask kcmp about. Each ring holds it from before its first SQE (an SQPOLL
 * ring from its creation: engine/uring.c, take_anchor) to its end; the
 * thread exits when the last lets go, which waits for it to end (a library
 * user's flexsc_exit leaves no thread behind: a fork, or an unshare that
 * needs one thread, right after it finds the process as it was) and is made
 * again by the next. It waits with the application's signals blocked. A
 * fork child makes its own: a ring from before the fork names the
 * parent's, which its put leaves alone.
 */
struct anchor {
	_Atomic uint32_t run;     /* 1 while held: the thread waits on it */
	_Atomic uint32_t started; /* its maker waits on it for the tid */
	int tid;
	pthread_t thread; /* joined by the last put */
};

static pthread_mutex_t anchor_lock = PTHREAD_MUTEX_INITIALIZER;
static struct anchor *anchor; /* the live one, or NULL */
static unsigned anchor_refs;

static void *anchor_main(void *arg)
{
	struct anchor *a = arg;
	/* all but glibc's own 32 (cancellation) and 33 (set*id broadcast), which it must answer */
	uint64_t all = ~0ull & ~(3ull << 31);

	fx_raw_syscall6(SYS_rt_sigprocmask, SIG_BLOCK, (long)&all, 0, 8, 0, 0);
	fx_raw_syscall6(SYS_prctl, PR_SET_NAME, (long)"flexsc-anchor", 0, 0, 0, 0);
	a->tid = (int)fx_raw_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0);
	atomic_store(&a->started, 1);
	fx_futex_wake(&a->started, 1);
	while (atomic_load(&a->run))
		fx_futex_wait(&a->run, 1, NULL);
	return NULL;
}

static void anchor_after_fork(void)
{
	anchor = NULL; /* its thread is the parent's */
	anchor_refs = 0;
}

int fx_context_anchor_get(void)
{
	static bool atfork;
	int tid = -1;

	pthread_mutex_lock(&anchor_lock);
	if (!atfork && pthread_atfork(NULL, NULL, anchor_after_fork) == 0)
		atfork = true;
	if (!anchor) {
		struct anchor *a = calloc(1, sizeof(*a));
		if (a) {
			/*
			 * Made with the signals it blocks blocked (all but glibc's own
			 * 32 and 33, as anchor_main): it starts with its maker's
			 * mask, and a signal the program sends the process in that
			 * moment would be acted on there (the maker is a ring's
			 * owner, any thread of the program's, at its first SQE).
			 */
			uint64_t all = ~0ull & ~(3ull << 31), old;
			atomic_store(&a->run, 1);
			fx_raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&old, 8, 0, 0);
			int err = fx_os_thread_create(&a->thread, anchor_main, a);
			fx_raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8, 0, 0);
			if (err == 0) {
				while (!atomic_load(&a->started))
					fx_futex_wait(&a->started, 0, NULL);
				anchor = a;
			} else {
				free(a);
			}
		}
	}
	if (anchor) {
		anchor_refs++;
		tid = anchor->tid;
	}
	pthread_mutex_unlock(&anchor_lock);
	return tid;
}

void fx_context_anchor_put(int tid)
{
	struct anchor *done = NULL;

	pthread_mutex_lock(&anchor_lock);
	if (anchor && anchor->tid == tid && --anchor_refs == 0) {
		done = anchor;
		anchor = NULL;
	}
	pthread_mutex_unlock(&anchor_lock);
	if (done) {
		atomic_store(&done->run, 0);
		fx_futex_wake(&done->run, 1);
		fx_os_thread_join(done->thread);
		free(done);
	}
}

bool fx_shares_context(int tid)
{
	long self = fx_raw_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0);

	return fx_task_shares((int)self, tid, FX_SHARE_FILES | FX_SHARE_FS);
}

bool fx_task_shares(int self, int tid, unsigned what)
{
	return tid > 0 &&
	       (!(what & FX_SHARE_FILES) || fx_raw_syscall6(SYS_kcmp, self, tid, KCMP_FILES, 0, 0, 0) == 0) &&
	       (!(what & FX_SHARE_FS) || fx_raw_syscall6(SYS_kcmp, self, tid, KCMP_FS, 0, 0, 0) == 0);
}

/*
 * Kept for programs written against the snapshot this library used to
 * take: every hand-over now asks the kernel, so there is nothing to tell.
 */
FX_EXPORT void flexsc_creds_changed(void)
{
}
