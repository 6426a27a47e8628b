/* SPDX-License-Identifier: MIT */
/*
 * The library's own descriptors (io_uring rings, eventfds): kept out of
 * the program's way.
 *
 * The program did not open them, so it must not meet them. Left where the
 * kernel puts them (the lowest free numbers: 3, 4, 5...), they moved the
 * program's own descriptors up (the first open() of a program that
 * expects 3 got 7), a `dup2(fd, 4)` silently replaced a carrier's ring, and
 * the common daemon step "close every descriptor above 2" (a loop of
 * close, `close_range(3, ~0U, 0)`, glibc's `closefrom`) closed them under
 * the runtime, which then hung.
 *
 * So each one is moved, as soon as it is made, to a high number (the
 * lowest free from FX_KEPT_BASE below the soft RLIMIT_NOFILE; bash keeps
 * its own at 255 and up the same way) and marked. The calls that end or
 * replace what a number names leave a marked one alone, as if it were not
 * the program's to touch: close gives EBADF (the number is not open as
 * far as the program is concerned), close_range closes the rest of its
 * range, dup2 and dup3 onto one give EBUSY (what Linux gives when the
 * target number is being opened at that moment). Calls made with an
 * inline system call instruction cannot be seen (docs/threads.md, Known
 * limits).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/internal.h"

#define KEPT_MAX 65536 /* numbers above are not marked: a program with 64 Ki descriptors open */
#define FX_KEPT_BASE 960 /* below 1024, FD_SETSIZE: a select() program never has them in its sets */

static _Atomic uint64_t kept[KEPT_MAX / 64];
static _Atomic unsigned nkept;

/* The lowest number a kept descriptor may take: 64 below the soft limit, at most FX_KEPT_BASE. */
static long base(void)
{
	struct rlimit rl;

	if (fx_raw_syscall6(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, (long)&rl, 0, 0) < 0 ||
	    rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= FX_KEPT_BASE + 64)
		return FX_KEPT_BASE;
	return rl.rlim_cur > 128 ? (long)rl.rlim_cur - 64 : (long)rl.rlim_cur / 2;
}

bool fx_fd_is_kept(long fd)
{
	return fd >= 0 && fd < KEPT_MAX && atomic_load_explicit(&nkept, memory_order_relaxed) &&
	       (atomic_load_explicit(&kept[fd / 64], memory_order_relaxed) & (1ull << (fd % 64)));
}

int fx_fd_keep(int fd)
{
	if (fd < 0)
		return fd;
	long high = fx_raw_syscall6(SYS_fcntl, fd, F_DUPFD_CLOEXEC, base(), 0, 0, 0);
	if (high >= 0) {
#if defined(__SANITIZE_THREAD__)
		close(fd); /* ThreadSanitizer knows descriptors by number: the next one made there is not a race */
#else
		fx_raw_syscall6(SYS_close, fd, 0, 0, 0, 0, 0);
#endif
		fd = (int)high;
	} /* else (a limit of a few descriptors): kept where it is */
	if (fd < KEPT_MAX) {
		atomic_fetch_or(&kept[fd / 64], 1ull << (fd % 64));
		atomic_fetch_add(&nkept, 1);
	}
	return fd;
}

void fx_fd_unkeep(int fd)
{
	if (fx_fd_is_kept(fd)) {
		atomic_fetch_and(&kept[fd / 64], ~(1ull << (fd % 64)));
		atomic_fetch_sub(&nkept, 1);
	}
}

void fx_fd_close_kept(int fd)
{
	if (fd >= 0) {
		fx_fd_unkeep(fd);
		fx_raw_syscall6(SYS_close, fd, 0, 0, 0, 0, 0);
	}
}

/* close_range(first, last, flags) for the numbers of the range that are not kept. */
static long close_around(unsigned long first, unsigned long last, long flags)
{
	long ret = 0;

	for (;;) { /* last <= UINT_MAX: last + 1 does not wrap */
		unsigned long end = first; /* the next kept number, or last + 1 */
		while (end <= last && end < KEPT_MAX && !fx_fd_is_kept((long)end))
			end++;
		if (end >= KEPT_MAX)
			end = last + 1;
		if (end > first) {
			long r = fx_raw_syscall6(SYS_close_range, (long)first, (long)(end - 1), flags, 0, 0, 0);
			if (r < 0 && !ret)
				ret = r;
			flags &= ~CLOSE_RANGE_UNSHARE; /* unshared once, by the first part */
		}
		if (end >= last)
			return ret;
		first = end + 1; /* over the kept one */
	}
}

bool fx_fd_guarded(long nr, const long *a, long *ret)
{
	if (!atomic_load_explicit(&nkept, memory_order_relaxed))
		return false;
	switch (nr) {
	case SYS_close:
		if (!fx_fd_is_kept((int)a[0]))
			return false;
		*ret = -EBADF;
		return true;
	case SYS_dup2:
	case SYS_dup3:
		if (!fx_fd_is_kept((int)a[1]) || (nr == SYS_dup2 && a[0] == a[1]))
			return false;
		*ret = -EBUSY;
		return true;
	case SYS_close_range: {
		unsigned long first = (unsigned)a[0], last = (unsigned)a[1];
		if (first > last || (a[2] & CLOSE_RANGE_CLOEXEC))
			return false; /* EINVAL from the kernel; or only close-on-exec set, which kept ones have */
		bool any = false;
		for (unsigned long w = first / 64; w <= (last < KEPT_MAX ? last : KEPT_MAX - 1) / 64 && !any; w++)
			any = atomic_load_explicit(&kept[w], memory_order_relaxed) != 0;
		if (!any)
			return false;
		*ret = close_around(first, last, a[2]);
		return true;
	}
	}
	return false;
}
