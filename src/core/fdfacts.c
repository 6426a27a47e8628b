/* SPDX-License-Identifier: MIT */
/*
 * What the io_uring route must know about a descriptor, without a system
 * call per posted call.
 *
 * io_uring waits where a call on an O_NONBLOCK descriptor fails with
 * EAGAIN, and reads a pipe or socket at its head where a positioned call
 * fails with ESPIPE (both seen on 6.18), and it serves a read that must
 * wait by polling for data, where a terminal's read ends by a timer of its
 * own (VMIN 0, VTIME above 0: the read returns 0 when the time is up). So
 * those calls run elsewhere (on the owner at once when they cannot block,
 * else the fallback route), and the route needs four facts per
 * descriptor: nonblocking, seekable, a device of its own rules, and a
 * file (regular, or a block device: its position is the kernel's to lock,
 * and its writes may be short).
 * Asking the kernel (fcntl, fstat, lseek) before every call would cost a
 * system call per call, the thing exception-less calls avoid.
 *
 * The facts are cached per descriptor number, stamped with a generation
 * that every event able to change them bumps: a change of file status
 * flags (fcntl F_SETFL, ioctl FIONBIO) and a change of what a number
 * names (close, dup2, dup3, close_range). libflexsc wraps fcntl, ioctl,
 * close, dup2, dup3 and close_range for that (close weakly:
 * FlexSC-Threads interposes it itself). A stamp older than the generation
 * is asked again, once. Every descriptor a call the library or the
 * runtime sees makes (open, socket, accept, pipe, dup, eventfd, epoll,
 * descriptors received with SCM_RIGHTS..., posted or not: fx_fd_made, and
 * the wrappers below) drops its number's entry, so a number closed where
 * nothing sees it (inside libc: fclose) and made again is asked again.
 *
 * What is still not seen (a number both closed and made again unseen, by
 * inline system calls or inside libc; O_NONBLOCK set by another process
 * on a shared file description) is caught where it changes a result: a
 * read, receive or accept that io_uring took as blocking and that waits
 * is asked about once (fcntl F_GETFL) and, if the descriptor is now
 * O_NONBLOCK, cancelled and failed with EAGAIN (engine/uring.c). A stale
 * "nonblocking" runs the call on the caller, which gives the kernel's
 * result (it may block the caller's thread). docs/design.md measures it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "core/internal.h"

#define TRACKED 65536

static _Atomic uint32_t stamp[TRACKED];
static _Atomic uint8_t facts[TRACKED];
static _Atomic uint32_t generation = 1;

void fx_fd_changed(void)
{
	/* release: pairs with the acquire in fd_facts; the change itself is done */
	if (atomic_fetch_add_explicit(&generation, 1, memory_order_release) + 1 == 0)
		atomic_fetch_add_explicit(&generation, 1, memory_order_release); /* 0 means "ask" */
}

void fx_fd_new(int fd)
{
	if (fd >= 0 && fd < TRACKED)
		atomic_store_explicit(&stamp[fd], 0, memory_order_release);
}

/* The numbers the SCM_RIGHTS messages of a received msghdr hold. */
static void received_fds(const struct msghdr *m)
{
	if (!m || !m->msg_control || m->msg_controllen < sizeof(struct cmsghdr))
		return;
	for (struct cmsghdr *c = CMSG_FIRSTHDR((struct msghdr *)m); c; c = CMSG_NXTHDR((struct msghdr *)m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			fx_fd_new(fd);
		}
	}
}

void fx_fd_made_slow(long nr, const uint64_t *a, int64_t ret)
{
	const int *two = NULL;

	switch (fx_sys_fds(nr)) {
	case FX_FDS_RET:
	case FX_FDS_RET_COPY:
		fx_fd_new((int)ret);
		break;
	case FX_FDS_PAIR_A0:
		two = (const int *)(uintptr_t)a[0];
		break;
	case FX_FDS_PAIR_A3:
		two = (const int *)(uintptr_t)a[3];
		break;
	case FX_FDS_DUP_A1:
		fx_fd_new((int)a[1]);
		break;
	case FX_FDS_FCNTL:
		if (a[1] == F_SETFL)
			fx_fd_new((int)a[0]);
		else if (a[1] == F_DUPFD || a[1] == F_DUPFD_CLOEXEC)
			fx_fd_new((int)ret);
		break;
	case FX_FDS_IOCTL:
		if (a[1] == FIONBIO)
			fx_fd_new((int)a[0]);
		break;
	case FX_FDS_RECVMSG:
		received_fds((const struct msghdr *)(uintptr_t)a[1]);
		break;
	}
	if (two) {
		fx_fd_new(two[0]);
		fx_fd_new(two[1]);
	}
}

FX_EXPORT void flexsc_fds_changed(void)
{
	fx_fd_changed();
}

/* Linux's major number of the memory devices: /dev/null, zero, full, random, urandom... */
#define MEM_MAJOR 1

/*
 * Two system calls, as before the third fact: sockets and pipes need no
 * lseek to be unseekable, regular files and directories are seekable
 * (a FUSE file opened FOPEN_NONSEEKABLE is taken for one: a pread of it
 * through io_uring reads at the offset where the call fails with ESPIPE).
 */
static unsigned ask_kernel(int fd)
{
	long fl = fx_raw_syscall6(SYS_fcntl, fd, F_GETFL, 0, 0, 0, 0);
	unsigned f = 0;
	struct stat st;

	if (fl >= 0 && (fl & O_NONBLOCK))
		f |= FX_FD_NONBLOCK;
	long err = fx_raw_syscall6(SYS_fstat, fd, (long)&st, 0, 0, 0, 0);
	if (err == -EBADF)
		return f; /* the call fails with EBADF on every route */
	if (err < 0) {
		/* fstat denied (OpenSSH's sandbox fails it with EACCES): lseek alone says what it can */
		if (fx_raw_syscall6(SYS_lseek, fd, 0, SEEK_CUR, 0, 0, 0) == -ESPIPE)
			f |= FX_FD_UNSEEKABLE;
		else
			f |= FX_FD_FILE; /* it has a position: taken for a file */
		return f;
	}
	if (S_ISSOCK(st.st_mode) || S_ISFIFO(st.st_mode))
		return f | FX_FD_UNSEEKABLE;
	if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))
		f |= FX_FD_FILE;
	if (S_ISCHR(st.st_mode) && major(st.st_rdev) != MEM_MAJOR)
		f |= FX_FD_DEVICE;
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) &&
	    fx_raw_syscall6(SYS_lseek, fd, 0, SEEK_CUR, 0, 0, 0) == -ESPIPE)
		f |= FX_FD_UNSEEKABLE;
	return f;
}

unsigned fx_fd_facts(int fd)
{
	if (fd < 0)
		return 0; /* names nothing: the call fails with EBADF on every route */
	if (fd >= TRACKED)
		return ask_kernel(fd);
	/* read the generation before asking: a change after it bumps it again */
	uint32_t g = atomic_load_explicit(&generation, memory_order_acquire);
	if (atomic_load_explicit(&stamp[fd], memory_order_acquire) == g)
		return atomic_load_explicit(&facts[fd], memory_order_relaxed);
	unsigned f = ask_kernel(fd);
	atomic_store_explicit(&facts[fd], (uint8_t)f, memory_order_relaxed);
	/* release: pairs with the acquire above in a later lookup */
	atomic_store_explicit(&stamp[fd], g, memory_order_release);
	return f;
}

/* ---- the libc calls that change the facts ---- */

#define NEXT(name)                                                           \
	static __typeof__(name) *real;                                       \
	if (!real)                                                           \
		real = (__typeof__(name) *)dlsym(RTLD_NEXT, #name);          \
	if (!real) {                                                         \
		errno = ENOSYS;                                              \
		return -1;                                                   \
	}

FX_EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *); /* every fcntl argument fits a pointer register */
	va_end(ap);
	NEXT(fcntl);
	int r = real(fd, cmd, arg);
	if (r >= 0 && (cmd == F_SETFL || cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC))
		fx_fd_changed();
	return r;
}

FX_EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	NEXT(fcntl64);
	int r = real(fd, cmd, arg);
	if (r >= 0 && (cmd == F_SETFL || cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC))
		fx_fd_changed();
	return r;
}

FX_EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	NEXT(ioctl);
	int r = real(fd, req, arg);
	if (r >= 0 && req == FIONBIO)
		fx_fd_changed();
	return r;
}

/* A call of the program's that would touch a kept descriptor of the library (keptfds.c): its result. */
static int guarded(long nr, long a0, long a1, long a2, int *ret)
{
	long a[3] = { a0, a1, a2 }, r;

	if (!fx_fd_guarded(nr, a, &r))
		return 0;
	if (r < 0) {
		errno = (int)-r;
		r = -1;
	}
	*ret = (int)r;
	return 1;
}

__attribute__((weak)) FX_EXPORT int close(int fd)
{
	int g;

	if (guarded(SYS_close, fd, 0, 0, &g))
		return g;
	NEXT(close);
	int r = real(fd);
	fx_fd_changed(); /* even on EINTR the number may be gone */
	return r;
}

FX_EXPORT int dup2(int from, int to)
{
	int g;

	if (guarded(SYS_dup2, from, to, 0, &g))
		return g;
	NEXT(dup2);
	int r = real(from, to);
	if (r >= 0)
		fx_fd_changed();
	return r;
}

FX_EXPORT int dup3(int from, int to, int flags)
{
	int g;

	if (guarded(SYS_dup3, from, to, flags, &g))
		return g;
	NEXT(dup3);
	int r = real(from, to, flags);
	if (r >= 0)
		fx_fd_changed();
	return r;
}

FX_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	int r;

	if (guarded(SYS_close_range, first, last, flags, &r)) {
		fx_fd_changed();
		return r;
	}
	NEXT(close_range);
	r = real(first, last, flags);
	fx_fd_changed();
	return r;
}

/*
 * The libc calls that make descriptors and that nothing else wraps: each
 * drops the entries of the numbers it returns (the preload's own open,
 * accept and friends do the same, src/preload/io.c).
 */
#define MADE_ONE(call)                                                       \
	int r = call;                                                        \
	fx_fd_new(r);                                                        \
	return r

FX_EXPORT int pipe(int fds[2])
{
	NEXT(pipe);
	int r = real(fds);
	if (r == 0) {
		fx_fd_new(fds[0]);
		fx_fd_new(fds[1]);
	}
	return r;
}

FX_EXPORT int pipe2(int fds[2], int flags)
{
	NEXT(pipe2);
	int r = real(fds, flags);
	if (r == 0) {
		fx_fd_new(fds[0]);
		fx_fd_new(fds[1]);
	}
	return r;
}

FX_EXPORT int socketpair(int domain, int type, int proto, int fds[2])
{
	NEXT(socketpair);
	int r = real(domain, type, proto, fds);
	if (r == 0) {
		fx_fd_new(fds[0]);
		fx_fd_new(fds[1]);
	}
	return r;
}

FX_EXPORT int socket(int domain, int type, int proto)
{
	NEXT(socket);
	MADE_ONE(real(domain, type, proto));
}

FX_EXPORT int dup(int fd)
{
	NEXT(dup);
	MADE_ONE(real(fd));
}

FX_EXPORT int eventfd(unsigned initval, int flags)
{
	NEXT(eventfd);
	MADE_ONE(real(initval, flags));
}

FX_EXPORT int epoll_create(int size)
{
	NEXT(epoll_create);
	MADE_ONE(real(size));
}

FX_EXPORT int epoll_create1(int flags)
{
	NEXT(epoll_create1);
	MADE_ONE(real(flags));
}

/*
 * Told the signals a signalfd names, once it is made: the runtime's
 * signal thread must leave them in the kernel for it, and give back those
 * it took (threads/signals.c defines it; without the runtime, nothing to
 * do). After the call, not before: the kernel has read the mask then, so
 * a bad pointer gets its EFAULT, not a crash here.
 */
__attribute__((weak)) void fx_sig_for_signalfd(uint64_t set)
{
	(void)set;
}

FX_EXPORT int signalfd(int fd, const sigset_t *mask, int flags)
{
	NEXT(signalfd);
	int r = real(fd, mask, flags);
	if (r >= 0) {
		uint64_t set;
		memcpy(&set, mask, sizeof(set));
		fx_sig_for_signalfd(set);
	}
	fx_fd_new(r);
	return r;
}

FX_EXPORT int timerfd_create(int clock, int flags)
{
	NEXT(timerfd_create);
	MADE_ONE(real(clock, flags));
}

FX_EXPORT int memfd_create(const char *name, unsigned flags)
{
	NEXT(memfd_create);
	MADE_ONE(real(name, flags));
}

FX_EXPORT int inotify_init(void)
{
	NEXT(inotify_init);
	MADE_ONE(real());
}

FX_EXPORT int inotify_init1(int flags)
{
	NEXT(inotify_init1);
	MADE_ONE(real(flags));
}

/*
 * Whether e is a call that cannot block: one on an O_NONBLOCK descriptor,
 * a socket call with MSG_DONTWAIT, a poll or epoll_wait with timeout 0. It returns at once
 * (EAGAIN when it would wait), so it runs on the owner at post time: a
 * hand-off to a syscall thread would cost more than the call, and io_uring
 * would wait where the call must fail.
 */
bool fx_call_cannot_block(const struct flexsc_entry *e)
{
	int fd = (int)e->args[0];

	switch (e->sysnum) {
	case SYS_recvfrom: case SYS_sendto:
		if (e->args[3] & MSG_DONTWAIT)
			return true;
		return fx_fd_facts(fd) & FX_FD_NONBLOCK;
	case SYS_recvmsg: case SYS_sendmsg:
		if (e->args[2] & MSG_DONTWAIT)
			return true;
		return fx_fd_facts(fd) & FX_FD_NONBLOCK;
	case SYS_read: case SYS_write: case SYS_readv: case SYS_writev:
	case SYS_accept: case SYS_accept4: case SYS_connect:
		return fx_fd_facts(fd) & FX_FD_NONBLOCK;
	case SYS_poll:
		return (int)e->args[2] == 0;
	case SYS_epoll_wait: case SYS_epoll_pwait:
		return (int)e->args[3] == 0;
	}
	return false;
}
