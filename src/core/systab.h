/* SPDX-License-Identifier: MIT */
/* The classification of every x86-64 system call: one table, src/core/systab.c. */
#ifndef FX_SYSTAB_H
#define FX_SYSTAB_H

#include <stdint.h>

#include <flexsc/flexsc.h>

#define FX_NR_SYSCALLS 512 /* table size: x86-64 numbers are below this */
#define FX_NO_OPCODE 0xff

/*
 * io_uring opcodes newer than Debian 12's liburing 2.3 (whose enum ends at
 * IORING_OP_SENDMSG_ZC = 48); values from the kernel's
 * include/uapi/linux/io_uring.h. Older kernels lack them: probe before use.
 */
#define FX_IORING_OP_FTRUNCATE 55 /* Linux 6.9 */
#define FX_IORING_OP_BIND 56      /* Linux 6.11 */
#define FX_IORING_OP_LISTEN 57    /* Linux 6.11 */

struct fx_sysdesc {
	const char *name;   /* NULL: no system call has this number */
	uint8_t cls;        /* enum flexsc_class */
	uint8_t nargs;      /* arguments the kernel reads */
	uint8_t uring_op;   /* IORING_OP_* serving it (cls == URING), else FX_NO_OPCODE */
	const char *why;    /* cls == LOCAL: why it must run on the calling thread */
	uint8_t dep;        /* FX_DEP_*: what ties it to the caller beyond the hand-over check */
};

#define FX_DEP_NS 1 /* the caller's network, IPC or UTS namespace: never another thread */
/*
 * Through io_uring it may run in an io-wq worker, which resolves paths
 * with the fs context (FX_DEP_FS: root, cwd, umask) and looks up or closes
 * descriptors in the table (FX_DEP_FILES) it was started with: after the
 * caller's unshare(CLONE_FS or CLONE_FILES) not the caller's (a chroot it
 * then made would not hold). On a ring only while the caller shares the
 * process's (queue.c, check_identity). The others run on the ring in the
 * caller's own context: their descriptor is looked up on its first,
 * inline, try, and a retry after a wait for readiness runs as task work
 * on the caller.
 */
#define FX_DEP_FS 2
#define FX_DEP_FILES 4

extern const struct fx_sysdesc fx_systab[FX_NR_SYSCALLS];

static inline const struct fx_sysdesc *fx_sysdesc(long nr)
{
	if (nr < 0 || nr >= FX_NR_SYSCALLS || !fx_systab[nr].name)
		return 0;
	return &fx_systab[nr];
}

/*
 * The flags of an open-family call that succeeded (open, openat, openat2,
 * creat); -1 for any other call. openat2's are read from its struct
 * open_how, which the kernel has read without a fault.
 */
int fx_open_flags(long nr, const uint64_t *args);

#endif
