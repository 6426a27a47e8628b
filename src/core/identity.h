/* SPDX-License-Identifier: MIT */
/*
 * Who a delegated call runs as (src/core/identity.c): the per-task kernel
 * state a call's permission checks and effects read, taken from the kernel
 * on the task itself, so that two tasks can be compared at the moment a
 * call changes hands.
 */
#ifndef FX_IDENTITY_H
#define FX_IDENTITY_H

#include <stdbool.h>
#include <stdint.h>

#define FX_ID_GROUPS 64 /* supplementary groups kept; a task with more never matches another */

/*
 * Zero-filled before it is read, so that two records compare with memcmp.
 * With a seccomp filter only `seccomp` is read: such a task hands no call
 * to anybody.
 */
struct fx_identity {
	int32_t seccomp;     /* PR_GET_SECCOMP: 0 none, else a mode (or -errno: counts as filtered) */
	uint32_t uid[4];     /* real, effective, saved, fs */
	uint32_t gid[4];
	uint32_t caps[6];    /* effective, permitted, inheritable: two words each (v3) */
	int32_t personality; /* STICKY_TIMEOUTS changes what select writes back */
	int32_t ngroups;     /* -1: more than FX_ID_GROUPS, or unreadable */
	uint32_t groups[FX_ID_GROUPS];
};

/*
 * Reads the calling task's identity. Seccomp is asked first and alone:
 * under a filter nothing more is asked (the filter could deny or kill the
 * probes), and the record says filtered.
 */
void fx_identity_read(struct fx_identity *id);

/* Whether a task with identity a runs every delegable call exactly as b would. */
bool fx_identity_same(const struct fx_identity *a, const struct fx_identity *b);

/* Whether the calling task is under a seccomp filter (or cannot tell). */
bool fx_seccomp_filtered(void);

/*
 * Whether the calling task and task tid share their descriptor table and
 * their filesystem context (root, cwd, umask, and with it the mount
 * namespace), as kcmp(2) sees it. False where kcmp is unavailable.
 */
bool fx_shares_context(int tid);

/* The same for task self (the caller's tid) and what: FX_SHARE_* (one kcmp each). */
#define FX_SHARE_FILES 1
#define FX_SHARE_FS 2
bool fx_task_shares(int self, int tid, unsigned what);

/*
 * A thread of this process that keeps the descriptor table and fs context
 * the caller had when the thread was made (by the first get since the
 * last put let it go): its tid, or -1 (it could not be made). Each get
 * that returned a tid is paired with a put of that tid; the thread exits
 * at the last.
 */
int fx_context_anchor_get(void);
void fx_context_anchor_put(int tid);

/* A result no system call returns: an executor refused the call, and its owner runs it itself. */
#define FX_RET_REFUSED INT64_MIN

#endif
