/* SPDX-License-Identifier: MIT */
/*
 * What the io_uring route must know about a descriptor, without a system
 * call per posted call.
 *
 * io_uring waits where a call on an O_NONBLOCK descriptor fails with
 * EAGAIN, and reads a pipe or socket at its head where a positioned call
 * fails with ESPIPE (both seen on 6.18). So those calls run elsewhere
 * (on the owner at once when they cannot block, else the fallback route),
 * and the route needs two facts per descriptor: nonblocking, and seekable. Asking the kernel (fcntl, lseek) before every call would cost
 * a system call per call, the thing exception-less calls avoid.
 *
 * The facts are cached per descriptor number, stamped with a generation
 * that every event able to change them bumps: a change of file status
 * flags (fcntl F_SETFL, ioctl FIONBIO) and a change of what a number
 * names (close, dup2, dup3, close_range, and descriptor-making calls posted
 * through flexsc). libflexsc wraps fcntl, ioctl, close, dup2, dup3 and
 * close_range for that (close weakly: FlexSC-Threads interposes it
 * itself). A stamp older than the generation is asked again, once. An
 * event the library cannot see (a descriptor closed and reused inside
 * libc, or changed by an inline system call) is a documented limit:
 * flexsc_creds_changed(3) names flexsc_fds_changed for programs that do
 * that.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/internal.h"

#define TRACKED 65536
#define FACT_NONBLOCK 1
#define FACT_UNSEEKABLE 2

static _Atomic uint32_t stamp[TRACKED];
static _Atomic uint8_t facts[TRACKED];
static _Atomic uint32_t generation = 1;

void fx_fd_changed(void)
{
	/* release: pairs with the acquire in fd_facts; the change itself is done */
	atomic_fetch_add_explicit(&generation, 1, memory_order_release);
}

FX_EXPORT void flexsc_fds_changed(void)
{
	fx_fd_changed();
}

static unsigned ask_kernel(int fd)
{
	long fl = fx_raw_syscall6(SYS_fcntl, fd, F_GETFL, 0, 0, 0, 0);
	unsigned f = 0;

	if (fl >= 0 && (fl & O_NONBLOCK))
		f |= FACT_NONBLOCK;
	if (fx_raw_syscall6(SYS_lseek, fd, 0, SEEK_CUR, 0, 0, 0) == -ESPIPE)
		f |= FACT_UNSEEKABLE;
	return f;
}

static unsigned fd_facts(int fd)
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

bool fx_fd_nonblocking(int fd)
{
	return fd_facts(fd) & FACT_NONBLOCK;
}

bool fx_fd_unseekable(int fd)
{
	return fd_facts(fd) & FACT_UNSEEKABLE;
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

__attribute__((weak)) FX_EXPORT int close(int fd)
{
	NEXT(close);
	int r = real(fd);
	fx_fd_changed(); /* even on EINTR the number may be gone */
	return r;
}

FX_EXPORT int dup2(int from, int to)
{
	NEXT(dup2);
	int r = real(from, to);
	if (r >= 0)
		fx_fd_changed();
	return r;
}

FX_EXPORT int dup3(int from, int to, int flags)
{
	NEXT(dup3);
	int r = real(from, to, flags);
	if (r >= 0)
		fx_fd_changed();
	return r;
}

FX_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	NEXT(close_range);
	int r = real(first, last, flags);
	fx_fd_changed();
	return r;
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
		return fx_fd_nonblocking(fd);
	case SYS_recvmsg: case SYS_sendmsg:
		if (e->args[2] & MSG_DONTWAIT)
			return true;
		return fx_fd_nonblocking(fd);
	case SYS_read: case SYS_write: case SYS_readv: case SYS_writev:
	case SYS_accept: case SYS_accept4: case SYS_connect:
		return fx_fd_nonblocking(fd);
	case SYS_poll:
		return (int)e->args[2] == 0;
	case SYS_epoll_wait: case SYS_epoll_pwait:
		return (int)e->args[3] == 0;
	}
	return false;
}
