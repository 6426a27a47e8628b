// SPDX-License-Identifier: MIT
/*
 * The time a call has left when the runtime starts it again.
 *
 * The runtime starts a call again when something of its own cut it short
 * with EINTR, no handler of the program having run: the monitor's poke
 * (a carrier blocked in a call while others' calls wait on its ring), its
 * interrupt, or io_uring's task work, which the kernel announces to the
 * ring's thread as a signal would and which ends the waits the kernel
 * never restarts (semtimedop and epoll_pwait2 on a carrier with calls in
 * flight failed with EINTR at once). On NPTL nothing cut the call short,
 * so it goes on for the time it has left, not its whole timeout again
 * (an epoll_wait whose carrier the monitor poked every 1-100 ms never
 * timed out). The system call table's timeout column (core/systab.h)
 * says where a call's timeout is.
 *
 * A socket's own timeout (SO_RCVTIMEO, SO_SNDTIMEO) cannot be shortened
 * for one call: once it is up the call ends as it would have (EAGAIN,
 * EINPROGRESS for a TCP connect) unless the socket is ready by then;
 * before, the call starts again with the socket's whole timeout, so it
 * may end up to one timeout late when nothing cuts it short again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>

#include "threads/timeleft.h"

int fx_ms_left(int ms, uint64_t start)
{
	if (ms <= 0)
		return ms;
	uint64_t spent = fx_now_ns() - start, total = (uint64_t)ms * 1000000u;
	/* rounded up: a call must not end before its time */
	return spent < total ? (int)((total - spent + 999999u) / 1000000u) : 0;
}

const struct timespec *fx_ts_left(const struct timespec *ts, uint64_t start, struct timespec *left)
{
	if (!ts || ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000L)
		return ts;
	uint64_t total = fx_ts_ns_sat(ts), spent = fx_now_ns() - start;
	uint64_t rest = spent < total ? total - spent : 0;
	left->tv_sec = (time_t)(rest / 1000000000u);
	left->tv_nsec = (long)(rest % 1000000000u);
	return left;
}

static unsigned arg_of(unsigned kind)
{
	switch (kind) {
	case FX_TIMEOUT_MS_A2:
		return 2;
	case FX_TIMEOUT_MS_A3: case FX_TIMEOUT_TS_A3:
		return 3;
	case FX_TIMEOUT_TS_A4:
		return 4;
	default:
		return 0; /* the socket */
	}
}

void fx_timeout_begin_slow(struct fx_time_left *t, unsigned kind, const uint64_t *args)
{
	t->arg = args[arg_of(kind)];
	switch (kind) {
	case FX_TIMEOUT_MS_A2: case FX_TIMEOUT_MS_A3:
		if ((int)t->arg <= 0) /* 0 does not wait; negative waits for ever */
			return;
		break;
	case FX_TIMEOUT_TS_A3: case FX_TIMEOUT_TS_A4:
		if (!t->arg)
			return;
		break;
	default:
		if (!fx_fd_timed((int)t->arg))
			return;
	}
	t->kind = (uint8_t)kind;
	t->start = fx_now_ns();
}

/* The socket's timeout for the call's direction, in ns; 0 when it has none (or is no socket). */
static uint64_t socket_timeout(int fd, bool send)
{
	struct timeval tv;
	socklen_t len = sizeof(tv);

	if (fx_raw_syscall6(SYS_getsockopt, fd, SOL_SOCKET, send ? SO_SNDTIMEO : SO_RCVTIMEO, (long)&tv,
			    (long)&len, 0) < 0 || tv.tv_sec < 0)
		return 0;
	return (uint64_t)tv.tv_sec * 1000000000u + (uint64_t)tv.tv_usec * 1000u;
}

void fx_timeout_afresh(struct fx_time_left *t, long nr, uint64_t *args)
{
	if (t->kind != FX_TIMEOUT_NONE)
		args[arg_of(t->kind)] = t->arg;
	fx_timeout_begin(t, nr, args);
}

/*
 * connect(2): a TCP connect whose timeout is up goes on in the background
 * (EINPROGRESS); a Unix one does not (EAGAIN).
 */
static bool is_unix(int fd)
{
	int domain = -1;
	socklen_t len = sizeof(domain);

	fx_raw_syscall6(SYS_getsockopt, fd, SOL_SOCKET, SO_DOMAIN, (long)&domain, (long)&len, 0);
	return domain == AF_UNIX;
}

bool fx_timeout_again(struct fx_time_left *t, long nr, uint64_t *args, long *ret)
{
	switch (t->kind) {
	case FX_TIMEOUT_NONE:
		return true;
	case FX_TIMEOUT_MS_A2: case FX_TIMEOUT_MS_A3:
		args[arg_of(t->kind)] = (uint64_t)(long)fx_ms_left((int)t->arg, t->start);
		return true;
	case FX_TIMEOUT_TS_A3: case FX_TIMEOUT_TS_A4:
		/* valid: the kernel read it without EINVAL or EFAULT before its wait was cut short */
		args[arg_of(t->kind)] = (uint64_t)(uintptr_t)fx_ts_left((const struct timespec *)(uintptr_t)t->arg,
									 t->start, &t->left);
		return true;
	default: {
		int fd = (int)t->arg;
		bool send = t->kind == FX_TIMEOUT_SO_SND;
		uint64_t total = socket_timeout(fd, send);
		if (!total || fx_now_ns() - t->start < total)
			return true;
		/* up: what came meanwhile is still taken (the call, ready, does not wait) */
		struct pollfd p = { fd, send ? POLLOUT : POLLIN, 0 };
		if (fx_raw_syscall6(SYS_poll, (long)&p, 1, 0, 0, 0, 0) == 1)
			return true;
		*ret = nr == SYS_connect && !is_unix(fd) ? -EINPROGRESS : -EAGAIN;
		return false;
	}
	}
}
