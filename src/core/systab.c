// SPDX-License-Identifier: MIT
/*
 * The classification of every x86-64 system call, up to Linux 6.18: one
 * table of designated initialisers, indexed by system call number.
 *
 *   URING   postable, and io_uring has an opcode that does the same work
 *           (the opcode is newer than some kernels: probe before use).
 *   THREAD  postable; a syscall thread of the same process runs it. The
 *           call acts on the process (its memory, descriptors, children,
 *           signals) or on an object named by its arguments, so which
 *           thread of the process enters the kernel does not matter.
 *   LOCAL   must run on the calling thread, at post time: its meaning
 *           depends on the identity of the kernel thread that makes it
 *           (pid 0, who 0, RUSAGE_THREAD, CLOCK_THREAD_CPUTIME_ID), or it
 *           changes that thread's own state (signal mask, credentials,
 *           affinity, TLS, seccomp, rseq, ...). why says which. The
 *           numbered but unimplemented calls are LOCAL too: they fail with
 *           ENOSYS at once, and there is nothing to offload.
 *
 * Who runs a delegated call: every call is taken to depend on the caller's
 * credentials, seccomp filters, descriptor table and fs context, which
 * are compared at each hand-over (core/identity.c). dep marks what that
 * comparison does not cover: FX_DEP_NS, the caller's network, IPC or UTS
 * namespace (socket creation, System V and POSIX message IPC, host
 * names), which is per thread; such a call runs on the caller, through its
 * own io_uring or synchronously, never on another thread. FX_DEP_FS and
 * FX_DEP_FILES mark the URING calls an io_uring worker may run with the
 * fs context or descriptor table it started with (systab.h).
 *
 * Two THREAD calls depend on the caller through one of their operations,
 * which the code that posts them must look at: futex (FUTEX_LOCK_PI and
 * friends store or check the caller's TID) and close_range (with
 * CLOSE_RANGE_UNSHARE it would unshare the descriptor table of the thread
 * that runs it).
 *
 * nargs is the number of registers the kernel reads (its SYSCALL_DEFINEn):
 * preadv and pwritev read a high offset word that x86-64 ignores, and the
 * calls that fail with ENOSYS read none.
 */
#if !defined(__x86_64__) || defined(__ILP32__)
#error "flexsc's system call table is for x86-64 (not x32)"
#endif

/* First: under -std=c11 it sets the feature macros its own includes need. */
#include <liburing.h>

#include <fcntl.h>
#include <linux/openat2.h>

#include <asm/unistd.h>

#include "systab.h"

/* Numbers newer than the installed kernel headers (Debian 12's stop at 450). */
#ifndef __NR_uretprobe
#define __NR_uretprobe 335
#endif
#ifndef __NR_uprobe
#define __NR_uprobe 336
#endif
#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __NR_map_shadow_stack
#define __NR_map_shadow_stack 453
#endif
#ifndef __NR_futex_wake
#define __NR_futex_wake 454
#endif
#ifndef __NR_futex_wait
#define __NR_futex_wait 455
#endif
#ifndef __NR_futex_requeue
#define __NR_futex_requeue 456
#endif
#ifndef __NR_statmount
#define __NR_statmount 457
#endif
#ifndef __NR_listmount
#define __NR_listmount 458
#endif
#ifndef __NR_lsm_get_self_attr
#define __NR_lsm_get_self_attr 459
#endif
#ifndef __NR_lsm_set_self_attr
#define __NR_lsm_set_self_attr 460
#endif
#ifndef __NR_lsm_list_modules
#define __NR_lsm_list_modules 461
#endif
#ifndef __NR_mseal
#define __NR_mseal 462
#endif
#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#endif
#ifndef __NR_getxattrat
#define __NR_getxattrat 464
#endif
#ifndef __NR_listxattrat
#define __NR_listxattrat 465
#endif
#ifndef __NR_removexattrat
#define __NR_removexattrat 466
#endif
#ifndef __NR_open_tree_attr
#define __NR_open_tree_attr 467
#endif
#ifndef __NR_file_getattr
#define __NR_file_getattr 468
#endif
#ifndef __NR_file_setattr
#define __NR_file_setattr 469
#endif

/* Each takes further columns at the end, as designated initialisers (.fds = ...). */
#define U(nm, n, op, ...) \
	{ .name = #nm, .cls = FLEXSC_CLASS_URING, .nargs = n, .uring_op = op, __VA_ARGS__ }
/* URING, and an io-wq worker may resolve its path (UP), a descriptor (UD), or both (UPD): FX_DEP_FS, FX_DEP_FILES */
#define UP(nm, n, op, ...) \
	{ .name = #nm, .cls = FLEXSC_CLASS_URING, .nargs = n, .uring_op = op, .dep = FX_DEP_FS, __VA_ARGS__ }
#define UD(nm, n, op, ...) \
	{ .name = #nm, .cls = FLEXSC_CLASS_URING, .nargs = n, .uring_op = op, .dep = FX_DEP_FILES, __VA_ARGS__ }
#define UPD(nm, n, op, ...) \
	{ .name = #nm, .cls = FLEXSC_CLASS_URING, .nargs = n, .uring_op = op, \
	  .dep = FX_DEP_FS | FX_DEP_FILES, __VA_ARGS__ }
#define UN(nm, n, op, ...) \
	{ .name = #nm, .cls = FLEXSC_CLASS_URING, .nargs = n, .uring_op = op, .dep = FX_DEP_NS, __VA_ARGS__ }
#define T(nm, n, ...) \
	{ .name = #nm, .cls = FLEXSC_CLASS_THREAD, .nargs = n, .uring_op = FX_NO_OPCODE, __VA_ARGS__ }
/* THREAD, but what it does depends on the caller's network, IPC or UTS namespace */
#define TN(nm, n, ...) \
	{ .name = #nm, .cls = FLEXSC_CLASS_THREAD, .nargs = n, .uring_op = FX_NO_OPCODE, \
	  .dep = FX_DEP_NS, __VA_ARGS__ }
#define L(nm, n, reason, ...) \
	{ .name = #nm, .cls = FLEXSC_CLASS_LOCAL, .nargs = n, .uring_op = FX_NO_OPCODE, \
	  .why = reason, __VA_ARGS__ }
/* Numbered, but no entry point on x86-64 (sys_ni_syscall): ENOSYS. */
#define N(nm) \
	{ .name = #nm, .cls = FLEXSC_CLASS_LOCAL, .nargs = 0, .uring_op = FX_NO_OPCODE, \
	  .why = "not implemented on x86-64: fails with ENOSYS at once" }

#define WHY_SELF "acts on the calling thread (pid 0 means caller)"
#define WHY_CREDS "kernel credentials are per thread (glibc broadcasts them)"
#define WHY_CLONE "copies the calling thread's registers and stack"
#define WHY_EXEC "replaces the process image from the calling thread"
#define WHY_VDSO "reads a clock through the vDSO: cheaper than posting"
#define WHY_CLOCK "thread CPU-time clocks name the calling thread; vDSO anyway"
#define WHY_IOPORT "I/O port permissions are per thread"
#define WHY_MEMPOL "the task memory policy is per thread"
#define WHY_KEYS "thread and session keyrings belong to the calling thread"
#define WHY_UPROBE "entered only from a uprobe trampoline on the calling thread"
#define WHY_URING "the ring's submitter and task work are the calling thread"
#define WHY_LSM "LSM attributes of the calling thread"

const struct fx_sysdesc fx_systab[FX_NR_SYSCALLS] = {
	[__NR_read] = U(read, 3, IORING_OP_READ, .restart = FX_RESTART_NOT_TIMED, .waits = FX_WAITS_NOT_ON_FILE, .timeout = FX_TIMEOUT_SO_RCV),
	[__NR_write] = U(write, 3, IORING_OP_WRITE, .restart = FX_RESTART_NOT_TIMED, .waits = FX_WAITS_NOT_ON_FILE, .timeout = FX_TIMEOUT_SO_SND),
	[__NR_open] = UP(open, 3, IORING_OP_OPENAT, .fds = FX_FDS_RET, .waits = FX_WAITS_NEVER),
	[__NR_close] = UD(close, 1, IORING_OP_CLOSE, .fds = FX_FDS_CLOSE, .waits = FX_WAITS_NEVER),
	[__NR_stat] = T(stat, 2, .waits = FX_WAITS_NEVER),
	[__NR_fstat] = T(fstat, 2, .waits = FX_WAITS_NEVER),
	[__NR_lstat] = T(lstat, 2, .waits = FX_WAITS_NEVER),
	[__NR_poll] = U(poll, 3, IORING_OP_POLL_ADD, .restart = FX_RESTART_NEVER, .timeout = FX_TIMEOUT_MS_A2),
	[__NR_lseek] = T(lseek, 3, .waits = FX_WAITS_NEVER),
	[__NR_mmap] = T(mmap, 6),
	[__NR_mprotect] = T(mprotect, 3),
	[__NR_munmap] = T(munmap, 2),
	[__NR_brk] = T(brk, 1),
	[__NR_rt_sigaction] = L(rt_sigaction, 4, "installs a handler the caller relies on; cheap"),
	[__NR_rt_sigprocmask] = L(rt_sigprocmask, 4, "changes the calling thread's signal mask"),
	[__NR_rt_sigreturn] = L(rt_sigreturn, 0, "restores the calling thread's signal frame"),
	[__NR_ioctl] = T(ioctl, 3, .fds = FX_FDS_IOCTL),
	[__NR_pread64] = U(pread64, 4, IORING_OP_READ, .waits = FX_WAITS_NOT_ON_FILE),
	[__NR_pwrite64] = U(pwrite64, 4, IORING_OP_WRITE, .waits = FX_WAITS_NOT_ON_FILE),
	[__NR_readv] = U(readv, 3, IORING_OP_READV, .restart = FX_RESTART_NOT_TIMED, .waits = FX_WAITS_NOT_ON_FILE, .timeout = FX_TIMEOUT_SO_RCV),
	[__NR_writev] = U(writev, 3, IORING_OP_WRITEV, .restart = FX_RESTART_NOT_TIMED, .waits = FX_WAITS_NOT_ON_FILE, .timeout = FX_TIMEOUT_SO_SND),
	[__NR_access] = T(access, 2, .waits = FX_WAITS_NEVER),
	[__NR_pipe] = T(pipe, 1, .fds = FX_FDS_PAIR_A0),
	[__NR_select] = T(select, 5, .restart = FX_RESTART_NEVER),
	[__NR_sched_yield] = L(sched_yield, 0, "yields the calling thread's CPU"),
	[__NR_mremap] = T(mremap, 5),
	[__NR_msync] = T(msync, 3),
	[__NR_mincore] = T(mincore, 3),
	[__NR_madvise] = U(madvise, 3, IORING_OP_MADVISE, .waits = FX_WAITS_NEVER),
	[__NR_shmget] = TN(shmget, 3),
	[__NR_shmat] = TN(shmat, 3),
	[__NR_shmctl] = TN(shmctl, 3),
	[__NR_dup] = T(dup, 1, .fds = FX_FDS_RET_COPY),
	[__NR_dup2] = T(dup2, 2, .fds = FX_FDS_DUP_A1),
	[__NR_pause] = L(pause, 0, "waits for a signal to the calling thread", .restart = FX_RESTART_NEVER),
	[__NR_nanosleep] = T(nanosleep, 2, .restart = FX_RESTART_NEVER),
	[__NR_getitimer] = T(getitimer, 2),
	[__NR_alarm] = T(alarm, 1),
	[__NR_setitimer] = T(setitimer, 3),
	[__NR_getpid] = T(getpid, 0),
	[__NR_sendfile] = T(sendfile, 4),
	[__NR_socket] = UN(socket, 3, IORING_OP_SOCKET, .fds = FX_FDS_RET, .waits = FX_WAITS_NEVER),
	[__NR_connect] = U(connect, 3, IORING_OP_CONNECT, .restart = FX_RESTART_NOT_TIMED, .timeout = FX_TIMEOUT_SO_SND),
	[__NR_accept] = U(accept, 3, IORING_OP_ACCEPT, .fds = FX_FDS_RET_COPY, .restart = FX_RESTART_NOT_TIMED, .timeout = FX_TIMEOUT_SO_RCV),
	[__NR_sendto] = U(sendto, 6, IORING_OP_SEND, .restart = FX_RESTART_NOT_TIMED, .timeout = FX_TIMEOUT_SO_SND),
	[__NR_recvfrom] = U(recvfrom, 6, IORING_OP_RECV, .restart = FX_RESTART_NOT_TIMED, .timeout = FX_TIMEOUT_SO_RCV),
	[__NR_sendmsg] = U(sendmsg, 3, IORING_OP_SENDMSG, .restart = FX_RESTART_NOT_TIMED, .timeout = FX_TIMEOUT_SO_SND),
	[__NR_recvmsg] = U(recvmsg, 3, IORING_OP_RECVMSG, .fds = FX_FDS_RECVMSG, .restart = FX_RESTART_NOT_TIMED, .timeout = FX_TIMEOUT_SO_RCV),
	[__NR_shutdown] = U(shutdown, 2, IORING_OP_SHUTDOWN, .waits = FX_WAITS_NEVER),
	[__NR_bind] = U(bind, 3, FX_IORING_OP_BIND, .waits = FX_WAITS_NEVER),
	[__NR_listen] = U(listen, 2, FX_IORING_OP_LISTEN, .waits = FX_WAITS_NEVER),
	[__NR_getsockname] = T(getsockname, 3),
	[__NR_getpeername] = T(getpeername, 3),
	[__NR_socketpair] = TN(socketpair, 4, .fds = FX_FDS_PAIR_A3),
	[__NR_setsockopt] = T(setsockopt, 5),
	[__NR_getsockopt] = T(getsockopt, 5),
	[__NR_clone] = L(clone, 5, WHY_CLONE),
	[__NR_fork] = L(fork, 0, WHY_CLONE),
	[__NR_vfork] = L(vfork, 0, WHY_CLONE),
	[__NR_execve] = L(execve, 3, WHY_EXEC),
	[__NR_exit] = L(exit, 1, "ends the calling thread"),
	[__NR_wait4] = T(wait4, 4),
	[__NR_kill] = T(kill, 2),
	[__NR_uname] = TN(uname, 1),
	[__NR_semget] = TN(semget, 3),
	[__NR_semop] = TN(semop, 3, .restart = FX_RESTART_NEVER),
	[__NR_semctl] = TN(semctl, 4),
	[__NR_shmdt] = TN(shmdt, 1),
	[__NR_msgget] = TN(msgget, 2),
	[__NR_msgsnd] = TN(msgsnd, 4, .restart = FX_RESTART_NEVER),
	[__NR_msgrcv] = TN(msgrcv, 5, .restart = FX_RESTART_NEVER),
	[__NR_msgctl] = TN(msgctl, 3),
	[__NR_fcntl] = T(fcntl, 3, .fds = FX_FDS_FCNTL),
	[__NR_flock] = T(flock, 2),
	[__NR_fsync] = UD(fsync, 1, IORING_OP_FSYNC, .waits = FX_WAITS_NEVER),
	[__NR_fdatasync] = UD(fdatasync, 1, IORING_OP_FSYNC, .waits = FX_WAITS_NEVER),
	[__NR_truncate] = T(truncate, 2, .waits = FX_WAITS_NEVER),
	[__NR_ftruncate] = UD(ftruncate, 2, FX_IORING_OP_FTRUNCATE, .waits = FX_WAITS_NEVER),
	[__NR_getdents] = T(getdents, 3),
	[__NR_getcwd] = T(getcwd, 2),
	[__NR_chdir] = T(chdir, 1),
	[__NR_fchdir] = T(fchdir, 1),
	[__NR_rename] = UP(rename, 2, IORING_OP_RENAMEAT, .waits = FX_WAITS_NEVER),
	[__NR_mkdir] = UP(mkdir, 2, IORING_OP_MKDIRAT, .waits = FX_WAITS_NEVER),
	[__NR_rmdir] = UP(rmdir, 1, IORING_OP_UNLINKAT, .waits = FX_WAITS_NEVER),
	[__NR_creat] = UP(creat, 2, IORING_OP_OPENAT, .fds = FX_FDS_RET, .waits = FX_WAITS_NEVER),
	[__NR_link] = UP(link, 2, IORING_OP_LINKAT, .waits = FX_WAITS_NEVER),
	[__NR_unlink] = UP(unlink, 1, IORING_OP_UNLINKAT, .waits = FX_WAITS_NEVER),
	[__NR_symlink] = UP(symlink, 2, IORING_OP_SYMLINKAT, .waits = FX_WAITS_NEVER),
	[__NR_readlink] = T(readlink, 3, .waits = FX_WAITS_NEVER),
	[__NR_chmod] = T(chmod, 2, .waits = FX_WAITS_NEVER),
	[__NR_fchmod] = T(fchmod, 2, .waits = FX_WAITS_NEVER),
	[__NR_chown] = T(chown, 3, .waits = FX_WAITS_NEVER),
	[__NR_fchown] = T(fchown, 3, .waits = FX_WAITS_NEVER),
	[__NR_lchown] = T(lchown, 3, .waits = FX_WAITS_NEVER),
	[__NR_umask] = T(umask, 1),
	[__NR_gettimeofday] = L(gettimeofday, 2, WHY_VDSO),
	[__NR_getrlimit] = T(getrlimit, 2),
	[__NR_getrusage] = L(getrusage, 2, "RUSAGE_THREAD reports the calling thread"),
	[__NR_sysinfo] = T(sysinfo, 1),
	[__NR_times] = T(times, 1),
	[__NR_ptrace] = L(ptrace, 4, "the tracer is the calling thread"),
	[__NR_getuid] = T(getuid, 0),
	[__NR_syslog] = T(syslog, 3),
	[__NR_getgid] = T(getgid, 0),
	[__NR_setuid] = L(setuid, 1, WHY_CREDS),
	[__NR_setgid] = L(setgid, 1, WHY_CREDS),
	[__NR_geteuid] = T(geteuid, 0),
	[__NR_getegid] = T(getegid, 0),
	[__NR_setpgid] = T(setpgid, 2),
	[__NR_getppid] = T(getppid, 0),
	[__NR_getpgrp] = T(getpgrp, 0),
	[__NR_setsid] = T(setsid, 0),
	[__NR_setreuid] = L(setreuid, 2, WHY_CREDS),
	[__NR_setregid] = L(setregid, 2, WHY_CREDS),
	[__NR_getgroups] = T(getgroups, 2),
	[__NR_setgroups] = L(setgroups, 2, WHY_CREDS),
	[__NR_setresuid] = L(setresuid, 3, WHY_CREDS),
	[__NR_getresuid] = T(getresuid, 3),
	[__NR_setresgid] = L(setresgid, 3, WHY_CREDS),
	[__NR_getresgid] = T(getresgid, 3),
	[__NR_getpgid] = T(getpgid, 1),
	[__NR_setfsuid] = L(setfsuid, 1, WHY_CREDS),
	[__NR_setfsgid] = L(setfsgid, 1, WHY_CREDS),
	[__NR_getsid] = T(getsid, 1),
	[__NR_capget] = L(capget, 2, "pid 0 reads the calling thread's capabilities"),
	[__NR_capset] = L(capset, 2, "capabilities are per thread"),
	[__NR_rt_sigpending] = L(rt_sigpending, 2, "signals pending for the calling thread"),
	[__NR_rt_sigtimedwait] = L(rt_sigtimedwait, 4, "takes signals sent to the calling thread", .restart = FX_RESTART_NEVER),
	[__NR_rt_sigqueueinfo] = T(rt_sigqueueinfo, 3),
	[__NR_rt_sigsuspend] = L(rt_sigsuspend, 2, "swaps the calling thread's mask and waits", .restart = FX_RESTART_NEVER),
	[__NR_sigaltstack] = L(sigaltstack, 2, "sets the calling thread's signal stack"),
	[__NR_utime] = T(utime, 2),
	[__NR_mknod] = T(mknod, 3),
	[__NR_uselib] = N(uselib),
	[__NR_personality] = L(personality, 1, "the execution domain is per thread"),
	[__NR_ustat] = T(ustat, 2),
	[__NR_statfs] = T(statfs, 2, .waits = FX_WAITS_NEVER),
	[__NR_fstatfs] = T(fstatfs, 2, .waits = FX_WAITS_NEVER),
	[__NR_sysfs] = T(sysfs, 3),
	[__NR_getpriority] = L(getpriority, 2, "who 0 means the calling thread"),
	[__NR_setpriority] = L(setpriority, 3, "who 0 means the calling thread"),
	[__NR_sched_setparam] = L(sched_setparam, 2, WHY_SELF),
	[__NR_sched_getparam] = L(sched_getparam, 2, WHY_SELF),
	[__NR_sched_setscheduler] = L(sched_setscheduler, 3, WHY_SELF),
	[__NR_sched_getscheduler] = L(sched_getscheduler, 1, WHY_SELF),
	[__NR_sched_get_priority_max] = T(sched_get_priority_max, 1),
	[__NR_sched_get_priority_min] = T(sched_get_priority_min, 1),
	[__NR_sched_rr_get_interval] = L(sched_rr_get_interval, 2, WHY_SELF),
	[__NR_mlock] = T(mlock, 2),
	[__NR_munlock] = T(munlock, 2),
	[__NR_mlockall] = T(mlockall, 1),
	[__NR_munlockall] = T(munlockall, 0),
	[__NR_vhangup] = T(vhangup, 0),
	[__NR_modify_ldt] = L(modify_ldt, 3, "edits the LDT the calling thread's segments use"),
	[__NR_pivot_root] = T(pivot_root, 2),
	[__NR__sysctl] = N(_sysctl),
	[__NR_prctl] = L(prctl, 5, "most options act on the calling thread"),
	[__NR_arch_prctl] = L(arch_prctl, 2, "sets the calling thread's FS/GS base and CPU state"),
	[__NR_adjtimex] = T(adjtimex, 1),
	[__NR_setrlimit] = T(setrlimit, 2),
	[__NR_chroot] = T(chroot, 1),
	[__NR_sync] = T(sync, 0),
	[__NR_acct] = T(acct, 1),
	[__NR_settimeofday] = T(settimeofday, 2),
	[__NR_mount] = T(mount, 5),
	[__NR_umount2] = T(umount2, 2),
	[__NR_swapon] = T(swapon, 2),
	[__NR_swapoff] = T(swapoff, 1),
	[__NR_reboot] = T(reboot, 4),
	[__NR_sethostname] = TN(sethostname, 2),
	[__NR_setdomainname] = TN(setdomainname, 2),
	[__NR_iopl] = L(iopl, 1, WHY_IOPORT),
	[__NR_ioperm] = L(ioperm, 3, WHY_IOPORT),
	[__NR_create_module] = N(create_module),
	[__NR_init_module] = T(init_module, 3),
	[__NR_delete_module] = T(delete_module, 2),
	[__NR_get_kernel_syms] = N(get_kernel_syms),
	[__NR_query_module] = N(query_module),
	[__NR_quotactl] = T(quotactl, 4),
	[__NR_nfsservctl] = N(nfsservctl),
	[__NR_getpmsg] = N(getpmsg),
	[__NR_putpmsg] = N(putpmsg),
	[__NR_afs_syscall] = N(afs_syscall),
	[__NR_tuxcall] = N(tuxcall),
	[__NR_security] = N(security),
	[__NR_gettid] = L(gettid, 0, "identity of the calling thread"),
	[__NR_readahead] = T(readahead, 3),
	[__NR_setxattr] = UP(setxattr, 5, IORING_OP_SETXATTR, .waits = FX_WAITS_NEVER),
	[__NR_lsetxattr] = T(lsetxattr, 5),
	[__NR_fsetxattr] = UD(fsetxattr, 5, IORING_OP_FSETXATTR, .waits = FX_WAITS_NEVER),
	[__NR_getxattr] = UP(getxattr, 4, IORING_OP_GETXATTR, .waits = FX_WAITS_NEVER),
	[__NR_lgetxattr] = T(lgetxattr, 4),
	[__NR_fgetxattr] = UD(fgetxattr, 4, IORING_OP_FGETXATTR, .waits = FX_WAITS_NEVER),
	[__NR_listxattr] = T(listxattr, 3),
	[__NR_llistxattr] = T(llistxattr, 3),
	[__NR_flistxattr] = T(flistxattr, 3),
	[__NR_removexattr] = T(removexattr, 2),
	[__NR_lremovexattr] = T(lremovexattr, 2),
	[__NR_fremovexattr] = T(fremovexattr, 2),
	[__NR_tkill] = T(tkill, 2),
	[__NR_time] = L(time, 1, WHY_VDSO),
	[__NR_futex] = T(futex, 6), /* the PI ops record the caller's TID: see above */
	[__NR_sched_setaffinity] = L(sched_setaffinity, 3, WHY_SELF),
	[__NR_sched_getaffinity] = L(sched_getaffinity, 3, WHY_SELF),
	[__NR_set_thread_area] = N(set_thread_area),
	[__NR_io_setup] = T(io_setup, 2),
	[__NR_io_destroy] = T(io_destroy, 1),
	[__NR_io_getevents] = T(io_getevents, 5, .restart = FX_RESTART_NEVER, .timeout = FX_TIMEOUT_TS_A4),
	[__NR_io_submit] = T(io_submit, 3),
	[__NR_io_cancel] = T(io_cancel, 3),
	[__NR_get_thread_area] = N(get_thread_area),
	[__NR_lookup_dcookie] = N(lookup_dcookie),
	[__NR_epoll_create] = T(epoll_create, 1, .fds = FX_FDS_RET),
	[__NR_epoll_ctl_old] = N(epoll_ctl_old),
	[__NR_epoll_wait_old] = N(epoll_wait_old),
	[__NR_remap_file_pages] = T(remap_file_pages, 5),
	[__NR_getdents64] = T(getdents64, 3, .waits = FX_WAITS_NEVER),
	[__NR_set_tid_address] = L(set_tid_address, 1, "sets the calling thread's clear_child_tid"),
	[__NR_restart_syscall] = L(restart_syscall, 0, "restarts the caller's interrupted call"),
	[__NR_semtimedop] = TN(semtimedop, 4, .restart = FX_RESTART_NEVER, .timeout = FX_TIMEOUT_TS_A3),
	[__NR_fadvise64] = UD(fadvise64, 4, IORING_OP_FADVISE, .waits = FX_WAITS_NEVER),
	[__NR_timer_create] = L(timer_create, 3, "CPU-time clocks may name the calling thread"),
	[__NR_timer_settime] = T(timer_settime, 4),
	[__NR_timer_gettime] = T(timer_gettime, 2),
	[__NR_timer_getoverrun] = T(timer_getoverrun, 1),
	[__NR_timer_delete] = T(timer_delete, 1),
	[__NR_clock_settime] = T(clock_settime, 2),
	[__NR_clock_gettime] = L(clock_gettime, 2, WHY_CLOCK),
	[__NR_clock_getres] = L(clock_getres, 2, WHY_CLOCK),
	[__NR_clock_nanosleep] = T(clock_nanosleep, 4, .restart = FX_RESTART_NEVER),
	[__NR_exit_group] = L(exit_group, 1, "ends the process from the calling thread"),
	[__NR_epoll_wait] = U(epoll_wait, 4, IORING_OP_POLL_ADD, .restart = FX_RESTART_NEVER, .timeout = FX_TIMEOUT_MS_A3),
	[__NR_epoll_ctl] = UD(epoll_ctl, 4, IORING_OP_EPOLL_CTL, .waits = FX_WAITS_NEVER),
	[__NR_tgkill] = T(tgkill, 3),
	[__NR_utimes] = T(utimes, 2),
	[__NR_vserver] = N(vserver),
	[__NR_mbind] = T(mbind, 6),
	[__NR_set_mempolicy] = L(set_mempolicy, 3, WHY_MEMPOL),
	[__NR_get_mempolicy] = L(get_mempolicy, 5, WHY_MEMPOL),
	[__NR_mq_open] = TN(mq_open, 4, .fds = FX_FDS_RET),
	[__NR_mq_unlink] = TN(mq_unlink, 1),
	[__NR_mq_timedsend] = T(mq_timedsend, 5),
	[__NR_mq_timedreceive] = T(mq_timedreceive, 5),
	[__NR_mq_notify] = T(mq_notify, 2),
	[__NR_mq_getsetattr] = T(mq_getsetattr, 3),
	[__NR_kexec_load] = T(kexec_load, 4),
	[__NR_waitid] = T(waitid, 5),
	[__NR_add_key] = L(add_key, 5, WHY_KEYS),
	[__NR_request_key] = L(request_key, 4, WHY_KEYS),
	[__NR_keyctl] = L(keyctl, 5, WHY_KEYS),
	[__NR_ioprio_set] = L(ioprio_set, 3, "who 0 means the calling thread"),
	[__NR_ioprio_get] = L(ioprio_get, 2, "who 0 means the calling thread"),
	[__NR_inotify_init] = T(inotify_init, 0, .fds = FX_FDS_RET),
	[__NR_inotify_add_watch] = T(inotify_add_watch, 3),
	[__NR_inotify_rm_watch] = T(inotify_rm_watch, 2),
	[__NR_migrate_pages] = T(migrate_pages, 4),
	[__NR_openat] = UPD(openat, 4, IORING_OP_OPENAT, .fds = FX_FDS_RET, .waits = FX_WAITS_NEVER),
	[__NR_mkdirat] = UPD(mkdirat, 3, IORING_OP_MKDIRAT, .waits = FX_WAITS_NEVER),
	[__NR_mknodat] = T(mknodat, 4),
	[__NR_fchownat] = T(fchownat, 5, .waits = FX_WAITS_NEVER),
	[__NR_futimesat] = T(futimesat, 3),
	[__NR_newfstatat] = UPD(newfstatat, 4, IORING_OP_STATX, .waits = FX_WAITS_NEVER),
	[__NR_unlinkat] = UPD(unlinkat, 3, IORING_OP_UNLINKAT, .waits = FX_WAITS_NEVER),
	[__NR_renameat] = UPD(renameat, 4, IORING_OP_RENAMEAT, .waits = FX_WAITS_NEVER),
	[__NR_linkat] = UPD(linkat, 5, IORING_OP_LINKAT, .waits = FX_WAITS_NEVER),
	[__NR_symlinkat] = UPD(symlinkat, 3, IORING_OP_SYMLINKAT, .waits = FX_WAITS_NEVER),
	[__NR_readlinkat] = T(readlinkat, 4, .waits = FX_WAITS_NEVER),
	[__NR_fchmodat] = T(fchmodat, 3, .waits = FX_WAITS_NEVER),
	[__NR_faccessat] = T(faccessat, 3, .waits = FX_WAITS_NEVER),
	[__NR_pselect6] = T(pselect6, 6, .restart = FX_RESTART_NEVER),
	[__NR_ppoll] = T(ppoll, 5, .restart = FX_RESTART_NEVER),
	[__NR_unshare] = L(unshare, 1, "detaches the calling thread's namespaces, files or fs"),
	[__NR_set_robust_list] = L(set_robust_list, 2, "registers the caller's robust futex list"),
	[__NR_get_robust_list] = L(get_robust_list, 3, WHY_SELF),
	[__NR_splice] = UD(splice, 6, IORING_OP_SPLICE),
	[__NR_tee] = UD(tee, 4, IORING_OP_TEE),
	[__NR_sync_file_range] = UD(sync_file_range, 4, IORING_OP_SYNC_FILE_RANGE, .waits = FX_WAITS_NEVER),
	[__NR_vmsplice] = T(vmsplice, 4),
	[__NR_move_pages] = T(move_pages, 6),
	[__NR_utimensat] = T(utimensat, 4, .waits = FX_WAITS_NEVER),
	[__NR_epoll_pwait] = T(epoll_pwait, 6, .restart = FX_RESTART_NEVER, .timeout = FX_TIMEOUT_MS_A3),
	[__NR_signalfd] = T(signalfd, 3, .fds = FX_FDS_RET),
	[__NR_timerfd_create] = T(timerfd_create, 2, .fds = FX_FDS_RET),
	[__NR_eventfd] = T(eventfd, 1, .fds = FX_FDS_RET),
	[__NR_fallocate] = UD(fallocate, 4, IORING_OP_FALLOCATE, .waits = FX_WAITS_NEVER),
	[__NR_timerfd_settime] = T(timerfd_settime, 4),
	[__NR_timerfd_gettime] = T(timerfd_gettime, 2),
	[__NR_accept4] = U(accept4, 4, IORING_OP_ACCEPT, .fds = FX_FDS_RET_COPY, .restart = FX_RESTART_NOT_TIMED, .timeout = FX_TIMEOUT_SO_RCV),
	[__NR_signalfd4] = T(signalfd4, 4, .fds = FX_FDS_RET),
	[__NR_eventfd2] = T(eventfd2, 2, .fds = FX_FDS_RET),
	[__NR_epoll_create1] = T(epoll_create1, 1, .fds = FX_FDS_RET),
	[__NR_dup3] = T(dup3, 3, .fds = FX_FDS_DUP_A1),
	[__NR_pipe2] = T(pipe2, 2, .fds = FX_FDS_PAIR_A0),
	[__NR_inotify_init1] = T(inotify_init1, 1, .fds = FX_FDS_RET),
	[__NR_preadv] = U(preadv, 5, IORING_OP_READV, .waits = FX_WAITS_NOT_ON_FILE),
	[__NR_pwritev] = U(pwritev, 5, IORING_OP_WRITEV, .waits = FX_WAITS_NOT_ON_FILE),
	[__NR_rt_tgsigqueueinfo] = T(rt_tgsigqueueinfo, 4),
	[__NR_perf_event_open] = L(perf_event_open, 5, "pid 0 monitors the calling thread", .fds = FX_FDS_RET),
	[__NR_recvmmsg] = T(recvmmsg, 5, .restart = FX_RESTART_NOT_TIMED, .timeout = FX_TIMEOUT_SO_RCV),
	[__NR_fanotify_init] = T(fanotify_init, 2, .fds = FX_FDS_RET),
	[__NR_fanotify_mark] = T(fanotify_mark, 5),
	[__NR_prlimit64] = T(prlimit64, 4),
	[__NR_name_to_handle_at] = T(name_to_handle_at, 5),
	[__NR_open_by_handle_at] = T(open_by_handle_at, 3, .fds = FX_FDS_RET),
	[__NR_clock_adjtime] = T(clock_adjtime, 2),
	[__NR_syncfs] = T(syncfs, 1),
	[__NR_sendmmsg] = T(sendmmsg, 4, .restart = FX_RESTART_NOT_TIMED, .timeout = FX_TIMEOUT_SO_SND),
	[__NR_setns] = L(setns, 2, "moves the calling thread into a namespace"),
	[__NR_getcpu] = L(getcpu, 3, "the CPU and node of the calling thread"),
	[__NR_process_vm_readv] = T(process_vm_readv, 6),
	[__NR_process_vm_writev] = T(process_vm_writev, 6),
	[__NR_kcmp] = T(kcmp, 5),
	[__NR_finit_module] = T(finit_module, 3),
	[__NR_sched_setattr] = L(sched_setattr, 3, WHY_SELF),
	[__NR_sched_getattr] = L(sched_getattr, 4, WHY_SELF),
	[__NR_renameat2] = UPD(renameat2, 5, IORING_OP_RENAMEAT, .waits = FX_WAITS_NEVER),
	[__NR_seccomp] = L(seccomp, 3, "installs a filter on the calling thread"),
	[__NR_getrandom] = T(getrandom, 3),
	[__NR_memfd_create] = T(memfd_create, 2, .fds = FX_FDS_RET),
	[__NR_kexec_file_load] = T(kexec_file_load, 5),
	[__NR_bpf] = T(bpf, 3),
	[__NR_execveat] = L(execveat, 5, WHY_EXEC),
	[__NR_userfaultfd] = T(userfaultfd, 1, .fds = FX_FDS_RET),
	[__NR_membarrier] = T(membarrier, 3),
	[__NR_mlock2] = T(mlock2, 3),
	[__NR_copy_file_range] = T(copy_file_range, 6),
	[__NR_preadv2] = U(preadv2, 6, IORING_OP_READV, .waits = FX_WAITS_NOT_ON_FILE),
	[__NR_pwritev2] = U(pwritev2, 6, IORING_OP_WRITEV, .waits = FX_WAITS_NOT_ON_FILE),
	[__NR_pkey_mprotect] = T(pkey_mprotect, 4),
	[__NR_pkey_alloc] = L(pkey_alloc, 2, "sets the key's rights in the caller's PKRU"),
	[__NR_pkey_free] = T(pkey_free, 1),
	[__NR_statx] = UPD(statx, 5, IORING_OP_STATX, .waits = FX_WAITS_NEVER),
	[__NR_io_pgetevents] = T(io_pgetevents, 6, .restart = FX_RESTART_NEVER, .timeout = FX_TIMEOUT_TS_A4),
	[__NR_rseq] = L(rseq, 4, "registers the calling thread's rseq area"),
	[__NR_uretprobe] = L(uretprobe, 0, WHY_UPROBE),
	[__NR_uprobe] = L(uprobe, 0, WHY_UPROBE),

	/* 337-423 are unused; from 424 the numbers are common to every architecture */
	[__NR_pidfd_send_signal] = T(pidfd_send_signal, 4),
	[__NR_io_uring_setup] = L(io_uring_setup, 2, WHY_URING, .fds = FX_FDS_RET),
	[__NR_io_uring_enter] = L(io_uring_enter, 6, WHY_URING),
	[__NR_io_uring_register] = L(io_uring_register, 4, WHY_URING),
	[__NR_open_tree] = T(open_tree, 3, .fds = FX_FDS_RET),
	[__NR_move_mount] = T(move_mount, 5),
	[__NR_fsopen] = T(fsopen, 2, .fds = FX_FDS_RET),
	[__NR_fsconfig] = T(fsconfig, 5),
	[__NR_fsmount] = T(fsmount, 3, .fds = FX_FDS_RET),
	[__NR_fspick] = T(fspick, 3, .fds = FX_FDS_RET),
	[__NR_pidfd_open] = T(pidfd_open, 2, .fds = FX_FDS_RET),
	[__NR_clone3] = L(clone3, 2, WHY_CLONE),
	[__NR_close_range] = T(close_range, 3, .fds = FX_FDS_CLOSE), /* CLOSE_RANGE_UNSHARE: see above */
	[__NR_openat2] = UPD(openat2, 4, IORING_OP_OPENAT2, .fds = FX_FDS_RET, .waits = FX_WAITS_NEVER),
	[__NR_pidfd_getfd] = T(pidfd_getfd, 3, .fds = FX_FDS_RET),
	[__NR_faccessat2] = T(faccessat2, 4, .waits = FX_WAITS_NEVER),
	[__NR_process_madvise] = T(process_madvise, 5),
	[__NR_epoll_pwait2] = T(epoll_pwait2, 6, .restart = FX_RESTART_NEVER, .timeout = FX_TIMEOUT_TS_A3),
	[__NR_mount_setattr] = T(mount_setattr, 5),
	[__NR_quotactl_fd] = T(quotactl_fd, 4),
	[__NR_landlock_create_ruleset] = T(landlock_create_ruleset, 3),
	[__NR_landlock_add_rule] = T(landlock_add_rule, 4),
	[__NR_landlock_restrict_self] = L(landlock_restrict_self, 2, "restricts the calling task"),
	[__NR_memfd_secret] = T(memfd_secret, 1, .fds = FX_FDS_RET),
	[__NR_process_mrelease] = T(process_mrelease, 2),
	[__NR_futex_waitv] = T(futex_waitv, 5),
	[__NR_set_mempolicy_home_node] = T(set_mempolicy_home_node, 4), /* VMA policies only */
	[__NR_cachestat] = T(cachestat, 4),
	[__NR_fchmodat2] = T(fchmodat2, 4),
	[__NR_map_shadow_stack] = T(map_shadow_stack, 3), /* a mapping in the mm */
	[__NR_futex_wake] = T(futex_wake, 4),
	[__NR_futex_wait] = T(futex_wait, 6),
	[__NR_futex_requeue] = T(futex_requeue, 4),
	[__NR_statmount] = T(statmount, 4),
	[__NR_listmount] = T(listmount, 4),
	[__NR_lsm_get_self_attr] = L(lsm_get_self_attr, 4, WHY_LSM),
	[__NR_lsm_set_self_attr] = L(lsm_set_self_attr, 4, WHY_LSM),
	[__NR_lsm_list_modules] = T(lsm_list_modules, 3),
	[__NR_mseal] = T(mseal, 3),
	[__NR_setxattrat] = T(setxattrat, 6),
	[__NR_getxattrat] = T(getxattrat, 6),
	[__NR_listxattrat] = T(listxattrat, 5),
	[__NR_removexattrat] = T(removexattrat, 4),
	[__NR_open_tree_attr] = T(open_tree_attr, 5, .fds = FX_FDS_RET),
	[__NR_file_getattr] = T(file_getattr, 5),
	[__NR_file_setattr] = T(file_setattr, 5),
};

int fx_open_flags(long nr, const uint64_t *args)
{
	switch (nr) {
	case __NR_open: return (int)args[1];
	case __NR_openat: return (int)args[2];
	case __NR_openat2: return (int)((const struct open_how *)(uintptr_t)args[2])->flags;
	case __NR_creat: return O_CREAT | O_WRONLY | O_TRUNC;
	}
	return -1;
}
