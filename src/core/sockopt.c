/* SPDX-License-Identifier: MIT */
/*
 * Descriptors whose blocking calls carry a timeout that io_uring ignores.
 *
 * A read, write, send, receive, accept or connect on a socket with
 * SO_RCVTIMEO or SO_SNDTIMEO gives up with EAGAIN when the timeout passes.
 * io_uring arms a poll instead and waits for as long as it takes. So the
 * io_uring route must not take a call on such a descriptor.
 *
 * libflexsc wraps setsockopt to mark a descriptor whose timeouts are set
 * and unmark it when both are cleared; the completion of a call posted
 * through flexsc carries the mark to descriptors that inherit the timeout
 * (accept copies the listener's socket options, dup shares the socket) and
 * clears it on fresh ones (those whose result is one: systab.h, FX_FDS_RET). A stale mark (a descriptor closed
 * and its number reused outside flexsc) only sends calls the slower, always
 * correct way. Descriptors at or above FX_FD_TRACKED are treated as marked.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>

#include "core/internal.h"

#define FX_FD_TRACKED 65536

static _Atomic uint64_t rcv_marks[FX_FD_TRACKED / 64], snd_marks[FX_FD_TRACKED / 64];
_Atomic bool fx_fd_marks_used;

static void set_bit(_Atomic uint64_t *map, int fd, bool on)
{
	uint64_t bit = 1ull << (fd % 64);

	if (on)
		atomic_fetch_or_explicit(&map[fd / 64], bit, memory_order_relaxed);
	else
		atomic_fetch_and_explicit(&map[fd / 64], ~bit, memory_order_relaxed);
}

static bool get_bit(_Atomic uint64_t *map, int fd)
{
	return atomic_load_explicit(&map[fd / 64], memory_order_relaxed) & (1ull << (fd % 64));
}

bool fx_fd_timed(int fd)
{
	if (!atomic_load_explicit(&fx_fd_marks_used, memory_order_relaxed) || fd < 0)
		return false;
	if (fd >= FX_FD_TRACKED)
		return true;
	return get_bit(rcv_marks, fd) || get_bit(snd_marks, fd);
}

static void copy_marks(int from, int to)
{
	if (to < 0 || to >= FX_FD_TRACKED)
		return;
	bool r = from >= FX_FD_TRACKED || (from >= 0 && get_bit(rcv_marks, from));
	bool s = from >= FX_FD_TRACKED || (from >= 0 && get_bit(snd_marks, from));
	set_bit(rcv_marks, to, r);
	set_bit(snd_marks, to, s);
}

/* On the owner, when a posted call finished with ret >= 0. */
void fx_fd_track_result(const struct flexsc_entry *e, int64_t ret)
{
	int src = (int)e->args[0];

	switch (fx_sys_fds(e->sysnum)) {
	case FX_FDS_RET_COPY: /* an accepted socket inherits the listener's timeouts, a dup shares them */
		copy_marks(src, (int)ret);
		break;
	case FX_FDS_DUP_A1:
		copy_marks(src, (int)e->args[1]);
		break;
	case FX_FDS_FCNTL:
		if (e->args[1] == F_DUPFD || e->args[1] == F_DUPFD_CLOEXEC)
			copy_marks(src, (int)ret);
		break;
	case FX_FDS_RET: /* a pair or a received descriptor keeps a stale mark: only slower (above) */
		copy_marks(-1, (int)ret);
		break;
	}
}

static bool nonzero_timeout(const void *val, socklen_t len)
{
	const struct timeval *tv = val;

	/* SO_*TIMEO_OLD and _NEW both hold two 64-bit fields on x86-64 */
	return !val || len < sizeof(*tv) || tv->tv_sec || tv->tv_usec;
}

FX_EXPORT int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	static __typeof__(setsockopt) *real;

	if (!real)
		real = (__typeof__(setsockopt) *)dlsym(RTLD_NEXT, "setsockopt");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	int r = real(fd, level, name, val, len);
	if (r == 0 && level == SOL_SOCKET && fd >= 0 && fd < FX_FD_TRACKED) {
		bool on = nonzero_timeout(val, len);
		if (name == SO_RCVTIMEO_OLD || name == SO_RCVTIMEO_NEW) {
			if (on)
				atomic_store(&fx_fd_marks_used, true);
			set_bit(rcv_marks, fd, on);
		} else if (name == SO_SNDTIMEO_OLD || name == SO_SNDTIMEO_NEW) {
			if (on)
				atomic_store(&fx_fd_marks_used, true);
			set_bit(snd_marks, fd, on);
		}
	}
	return r;
}
