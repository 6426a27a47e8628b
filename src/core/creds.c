/* SPDX-License-Identifier: MIT */
/*
 * Credentials and seccomp: a delegated call never runs with credentials
 * or filters other than the caller's current ones.
 *
 * Linux keeps credentials per kernel thread. Who executes a posted call:
 *  - io_uring without SQPOLL: the owner itself inline, or an io-wq worker
 *    that carries the credentials captured at submission: always current.
 *  - an SQPOLL thread: the credentials of the ring's creator, forever. So
 *    every change bumps fx_creds_gen, and before its next batch the owner
 *    registers an io_uring personality with its current credentials that
 *    every later SQE carries (fx_uring_sync_creds); a queue that cannot
 *    register one stops using its ring.
 *  - syscall threads: NPTL broadcasts glibc's set*id calls to every thread
 *    it knows, and ours are NPTL threads, but capset and raw system calls
 *    change only the caller. So the caller's full credentials (uids, gids,
 *    groups, capabilities) are snapshotted after every change, and each
 *    syscall thread applies the snapshot to itself before its next call
 *    (one relaxed load per call when nothing changed).
 *
 * libflexsc wraps the glibc entry points that change credentials or
 * install filters (the set*id family, setgroups, capset, prctl, syscall),
 * calling the real one and then recording the change. A program that uses
 * inline system calls calls flexsc_creds_changed() itself.
 *
 * Seccomp: io_uring ops never pass the process's filters, so no call goes
 * through a ring once a filter exists; syscall threads are filtered too
 * only when the filter was installed with TSYNC (or before they started).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/internal.h"

_Atomic uint32_t fx_creds_gen;
_Atomic uint32_t fx_seccomp_state;
bool (*fx_thread_state_call)(long nr, const long *args, long *ret);

#define FX_MAX_GROUPS 65536

static pthread_mutex_t snap_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	long ruid, euid, suid, rgid, egid, sgid;
	int ngroups;
	gid_t *groups;
	struct __user_cap_data_struct caps[2];
	bool valid;
} snap;

/* A fork child has only the forking thread: a lock another thread held is free there. */
static void snap_lock_reset(void)
{
	pthread_mutex_init(&snap_lock, NULL);
}

__attribute__((constructor)) static void creds_init(void)
{
	pthread_atfork(NULL, NULL, snap_lock_reset);
}

/* Records the calling thread's credentials as the ones every executor must use. */
static void snapshot_caller(void)
{
	uid_t r, e, s;
	gid_t gr, ge, gs;
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };

	pthread_mutex_lock(&snap_lock);
	if (!snap.groups)
		snap.groups = malloc(FX_MAX_GROUPS * sizeof(gid_t));
	fx_raw_syscall6(SYS_getresuid, (long)&r, (long)&e, (long)&s, 0, 0, 0);
	snap.ruid = r, snap.euid = e, snap.suid = s;
	fx_raw_syscall6(SYS_getresgid, (long)&gr, (long)&ge, (long)&gs, 0, 0, 0);
	snap.rgid = gr, snap.egid = ge, snap.sgid = gs;
	long n = snap.groups ? fx_raw_syscall6(SYS_getgroups, FX_MAX_GROUPS, (long)snap.groups, 0, 0, 0, 0) : -1;
	snap.ngroups = n < 0 ? -1 : (int)n;
	snap.valid = fx_raw_syscall6(SYS_capget, (long)&hdr, (long)snap.caps, 0, 0, 0, 0) == 0;
	atomic_fetch_add_explicit(&fx_creds_gen, 1, memory_order_release);
	pthread_mutex_unlock(&snap_lock);
}

/*
 * On a syscall thread: takes on the snapshot if it is newer than *seen.
 * Groups and gids first, while the thread may still hold CAP_SETGID, then
 * uids, then capabilities (which the uid change may already have dropped).
 */
void fx_creds_apply_if_stale(uint32_t *seen)
{
	/* acquire: pairs with the release in snapshot_caller */
	uint32_t gen = atomic_load_explicit(&fx_creds_gen, memory_order_acquire);

	if (fx_likely(gen == *seen))
		return;
	pthread_mutex_lock(&snap_lock);
	if (snap.valid) {
		struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };

		if (snap.ngroups >= 0)
			fx_raw_syscall6(SYS_setgroups, snap.ngroups, (long)snap.groups, 0, 0, 0, 0);
		fx_raw_syscall6(SYS_setresgid, snap.rgid, snap.egid, snap.sgid, 0, 0, 0);
		fx_raw_syscall6(SYS_setresuid, snap.ruid, snap.euid, snap.suid, 0, 0, 0);
		fx_raw_syscall6(SYS_capset, (long)&hdr, (long)snap.caps, 0, 0, 0, 0);
	}
	*seen = atomic_load_explicit(&fx_creds_gen, memory_order_relaxed);
	pthread_mutex_unlock(&snap_lock);
}

/*
 * Whether the calling thread runs under a seccomp filter. Asked with prctl,
 * not read from /proc, which may be missing or closed by that very filter
 * (one that denies openat): anything but "none", an error included, counts.
 */
static bool thread_filtered(void)
{
	return fx_raw_syscall6(SYS_prctl, PR_GET_SECCOMP, 0, 0, 0, 0, 0) != 0;
}

/* At registration: a filter already on the caller is inherited by every thread it starts. */
void fx_creds_probe_seccomp(void)
{
	if (thread_filtered()) {
		uint32_t none = FX_SECCOMP_NONE;
		atomic_compare_exchange_strong(&fx_seccomp_state, &none, FX_SECCOMP_ALL_THREADS);
	}
}

static void seccomp_installed(bool all_threads)
{
	uint32_t want = all_threads ? FX_SECCOMP_ALL_THREADS : FX_SECCOMP_CALLER_ONLY;
	uint32_t cur = atomic_load(&fx_seccomp_state);

	while (cur < want && !atomic_compare_exchange_weak(&fx_seccomp_state, &cur, want))
		;
}

FX_EXPORT void flexsc_creds_changed(void)
{
	if (thread_filtered()) /* we cannot tell whether it reached the other threads */
		seccomp_installed(false);
	snapshot_caller();
}

void *(*fx_creds_impl)(const char *name);

/* libc's function, or the runtime's version of it when it has one (fx_creds_impl) */
#define REAL(name) \
	static __typeof__(name) *libc_fn; \
	if (!libc_fn) \
		libc_fn = (__typeof__(name) *)dlsym(RTLD_NEXT, #name); \
	__typeof__(name) *real = fx_creds_impl ? (__typeof__(name) *)fx_creds_impl(#name) : NULL; \
	if (!real) \
		real = libc_fn; \
	if (!real) { \
		errno = ENOSYS; \
		return -1; \
	}

#define WRAP_ID1(name, T) \
	FX_EXPORT int name(T a) \
	{ \
		REAL(name); \
		int r = real(a); \
		if (r == 0) \
			snapshot_caller(); \
		return r; \
	}
#define WRAP_ID2(name, T) \
	FX_EXPORT int name(T a, T b) \
	{ \
		REAL(name); \
		int r = real(a, b); \
		if (r == 0) \
			snapshot_caller(); \
		return r; \
	}
#define WRAP_ID3(name, T) \
	FX_EXPORT int name(T a, T b, T c) \
	{ \
		REAL(name); \
		int r = real(a, b, c); \
		if (r == 0) \
			snapshot_caller(); \
		return r; \
	}

WRAP_ID1(setuid, uid_t)
WRAP_ID1(setgid, gid_t)
WRAP_ID1(seteuid, uid_t)
WRAP_ID1(setegid, gid_t)
WRAP_ID2(setreuid, uid_t)
WRAP_ID2(setregid, gid_t)
WRAP_ID3(setresuid, uid_t)
WRAP_ID3(setresgid, gid_t)

FX_EXPORT int setgroups(size_t n, const gid_t *list)
{
	REAL(setgroups);
	int r = real(n, list);
	if (r == 0)
		snapshot_caller();
	return r;
}

FX_EXPORT int capset(cap_user_header_t hdr, const cap_user_data_t data)
{
	REAL(capset);
	int r = real(hdr, data);
	if (r == 0)
		snapshot_caller();
	return r;
}

FX_EXPORT int prctl(int option, ...)
{
	va_list ap;
	unsigned long a[4];

	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	long st[5] = { option, (long)a[0], (long)a[1], (long)a[2], (long)a[3] }, sr;
	if (fx_thread_state_call && fx_thread_state_call(SYS_prctl, st, &sr)) {
		if (sr < 0) {
			errno = (int)-sr;
			return -1;
		}
		return (int)sr;
	}
	REAL(prctl);
	int r = real(option, a[0], a[1], a[2], a[3]);
	if (r == 0 && option == PR_SET_SECCOMP)
		seccomp_installed(false);
	else if (r == 0 && option == PR_CAPBSET_DROP)
		snapshot_caller();
	return r;
}

FX_EXPORT long syscall(long nr, ...)
{
	va_list ap;
	long a[6];

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	long r;
	if (!fx_thread_state_call || !fx_thread_state_call(nr, a, &r))
		r = fx_raw_syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	switch (nr) {
	case SYS_seccomp:
		if (a[0] == SECCOMP_SET_MODE_FILTER || a[0] == SECCOMP_SET_MODE_STRICT)
			seccomp_installed(a[0] == SECCOMP_SET_MODE_FILTER && (a[1] & SECCOMP_FILTER_FLAG_TSYNC));
		break;
	case SYS_prctl:
		if (a[0] == PR_SET_SECCOMP)
			seccomp_installed(false);
		break;
	case SYS_setuid: case SYS_setgid: case SYS_setreuid: case SYS_setregid:
	case SYS_setresuid: case SYS_setresgid: case SYS_setgroups: case SYS_capset:
	case SYS_setfsuid: case SYS_setfsgid:
		snapshot_caller();
		break;
	}
	return r;
}
