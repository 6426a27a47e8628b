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
	uint8_t fds;        /* FX_FDS_*: what it does to the descriptor table */
	uint8_t restart;    /* FX_RESTART_*: whether a handler with SA_RESTART restarts it */
	uint8_t waits;      /* FX_WAITS_*: whether it may wait for an event */
	uint8_t timeout;    /* FX_TIMEOUT_*: where its timeout is, for a restart with the time left */
};

/*
 * After a signal handler, a call the kernel was waiting in (signal(7),
 * "Interruption of system calls and library functions by signal
 * handlers"): restarted if the handler has SA_RESTART, or failing with
 * EINTR whatever the handler (the multiplexers, the sleeps, the waits for
 * signals, System V IPC, io_getevents), or so only on a socket with a
 * receive or send timeout (accept, connect, the recv and send families,
 * and read and write, which take the same path on a socket).
 */
enum fx_restart {
	FX_RESTART_SA = 0,
	FX_RESTART_NEVER,
	FX_RESTART_NOT_TIMED,
};

/*
 * Whether a call may wait for an event (data, a peer, a lock): a call that
 * never does is one a signal cannot have interrupted in its wait, so on
 * io_uring its cancellation means it did not start (threads/poke.c,
 * fx_call_never_waits). NEVER: the calls on files, directories and names
 * (a FIFO's open leaves the ring, src/engine/uring.c), descriptor making
 * and socket setup; NOT_ON_FILE: the read and write families, which wait
 * on anything but a regular file or block device.
 */
enum fx_waits {
	FX_WAITS_MAY = 0,
	FX_WAITS_NEVER,
	FX_WAITS_NOT_ON_FILE,
};

/*
 * Where a call's timeout is, for the runtime's restart of a call that
 * something of its own cut short with EINTR, no handler of the program
 * having run (threads/timeleft.h): the call goes on for the time it has
 * left, as on NPTL, where nothing cut it short. NONE: no timeout, or one
 * the kernel counts down itself (select, pselect6 and ppoll write the
 * time left back; the sleeps and futex waits resume through the kernel's
 * restart block). recvmmsg's own timeout (args[4]) is looked at only
 * between datagrams; its socket's is what it waits with. SO_RCV and SO_SND: the socket's receive or
 * send timeout, which reads and writes on a socket obey too: exactly the
 * calls whose restart column is FX_RESTART_NOT_TIMED.
 */
enum fx_timeout {
	FX_TIMEOUT_NONE = 0,
	FX_TIMEOUT_MS_A2, /* int milliseconds in args[2], negative: none (poll) */
	FX_TIMEOUT_MS_A3, /* ... in args[3] (epoll_wait, epoll_pwait) */
	FX_TIMEOUT_TS_A3, /* a relative struct timespec * in args[3], NULL: none */
	FX_TIMEOUT_TS_A4, /* ... in args[4] (io_getevents, io_pgetevents) */
	FX_TIMEOUT_SO_RCV,
	FX_TIMEOUT_SO_SND,
};

/*
 * What a call does to the descriptor table, for the facts the library
 * keeps about descriptors (core/fdfacts.c, core/sockopt.c, the queue's
 * fx_fd_changed): one value per call, the arguments deciding the rest.
 * Calls whose result is a descriptor only for some of their operations
 * (bpf, seccomp's listener, landlock_create_ruleset's version query) are
 * NONE: a number taken for a descriptor would lose a real one's facts.
 * recvmmsg's SCM_RIGHTS descriptors are not looked at (a close before the
 * number's reuse is, which is what makes facts go stale).
 */
enum fx_fds {
	FX_FDS_NONE = 0,
	FX_FDS_RET,      /* returns a new descriptor */
	FX_FDS_RET_COPY, /* returns a copy of args[0] (dup), or a socket made by it (accept) */
	FX_FDS_PAIR_A0,  /* stores two new descriptors at args[0] (pipe) */
	FX_FDS_PAIR_A3,  /* ... at args[3] (socketpair) */
	FX_FDS_DUP_A1,   /* makes args[1] a copy of args[0], closing what it was (dup2, dup3) */
	FX_FDS_CLOSE,    /* closes descriptors (close, close_range) */
	FX_FDS_FCNTL,    /* F_DUPFD* return a copy; F_SETFL changes the flags */
	FX_FDS_IOCTL,    /* FIONBIO changes the flags */
	FX_FDS_RECVMSG,  /* may receive descriptors (SCM_RIGHTS) */
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

/* The fds column of call nr (FX_FDS_NONE for a number out of the table). */
static inline unsigned fx_sys_fds(long nr)
{
	return nr >= 0 && nr < FX_NR_SYSCALLS ? fx_systab[nr].fds : FX_FDS_NONE;
}

/* The restart, waits and timeout columns of call nr (the defaults for a number out of the table). */
static inline unsigned fx_sys_restart(long nr)
{
	return nr >= 0 && nr < FX_NR_SYSCALLS ? fx_systab[nr].restart : FX_RESTART_SA;
}

static inline unsigned fx_sys_waits(long nr)
{
	return nr >= 0 && nr < FX_NR_SYSCALLS ? fx_systab[nr].waits : FX_WAITS_MAY;
}

static inline unsigned fx_sys_timeout(long nr)
{
	return nr >= 0 && nr < FX_NR_SYSCALLS ? fx_systab[nr].timeout : FX_TIMEOUT_NONE;
}

/*
 * The flags of an open-family call that succeeded (open, openat, openat2,
 * creat); -1 for any other call. openat2's are read from its struct
 * open_how, which the kernel has read without a fault.
 */
int fx_open_flags(long nr, const uint64_t *args);

#endif
