/* SPDX-License-Identifier: MIT */
/*
 * The blocking libc calls, made exception-less for uthreads.
 *
 * Each wrapper hands its system call to fx_rt_syscall: on a uthread, the
 * call is posted to the carrier's syscall page and the uthread switches
 * away until the result is back; anywhere else (the runtime itself, a
 * thread that is not a carrier) it is the plain system call. The result
 * comes back raw (>= 0 or -errno) and becomes -1/errno here, the one place
 * that does so. Every wrapper issues exactly the system call glibc 2.36
 * issues for the same function on x86-64, so results, errno values and
 * partial transfers are the kernel's own.
 *
 * Calls that install a signal mask for their duration (ppoll, pselect,
 * epoll_pwait with a mask) must run on the calling kernel thread: a
 * syscall thread has every signal blocked. They stay direct (the carrier
 * blocks), with the uthread's mask the call's for its duration
 * (masked_begin), as do calls that cannot block (a zero timeout).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/msg.h>
#include <sys/select.h>
#include <sys/sem.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "preload/cancel.h"
#include "preload/real.h"
#include "threads/signals.h"
#include "threads/timeleft.h"
#include "threads/waiter.h"

#define A(x) ((uint64_t)(uintptr_t)(x))

/* The calls POSIX makes cancellation points, among those interposed here. */
static bool cancellation_point(long nr)
{
	switch (nr) {
	case SYS_read: case SYS_write: case SYS_pread64: case SYS_pwrite64:
	case SYS_readv: case SYS_writev: case SYS_preadv: case SYS_pwritev:
	case SYS_preadv2: case SYS_pwritev2: case SYS_openat: case SYS_close:
	case SYS_fsync: case SYS_fdatasync: case SYS_accept: case SYS_accept4:
	case SYS_connect: case SYS_recvfrom: case SYS_recvmsg: case SYS_sendto:
	case SYS_sendmsg: case SYS_poll: case SYS_ppoll: case SYS_select:
	case SYS_pselect6: case SYS_epoll_wait: case SYS_epoll_pwait2:
	case SYS_msgrcv: case SYS_msgsnd:
		return true;
	default:
		return false;
	}
}

/*
 * Without the runtime (it could not start: the program runs on NPTL), a
 * cancellation point is made one as glibc once made them: asynchronous
 * cancellation for the call's duration (pthread_setcanceltype acts on a
 * cancel already pending). The raw call alone was none: a thread
 * cancelled in a read waited for ever.
 */
static long nptl_cancellation_point(long nr, const uint64_t *a)
{
	int old;

	REAL(pthread_setcanceltype)(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
	long r = fx_raw_syscall6(nr, (long)a[0], (long)a[1], (long)a[2], (long)a[3], (long)a[4], (long)a[5]);
	REAL(pthread_setcanceltype)(old, NULL);
	return r;
}

static long call(long nr, unsigned n, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,
		 uint64_t a4, uint64_t a5)
{
	uint64_t args[6] = { a0, a1, a2, a3, a4, a5 };

	if (fx_unlikely(!fx_rt_active) && cancellation_point(nr)) {
		long r = nptl_cancellation_point(nr, args);
		fx_fd_made(nr, args, r);
		return fx_libc_ret(r);
	}
	struct fx_carrier *c = fx_rt_active ? fx_carrier_self() : NULL; /* read once: a few ns each */
	/* the same uthread after the call, wherever it ran */
	const struct fx_uthread *u = c && cancellation_point(nr) ? c->current : NULL;

	fx_testcancel_of(u);
	long r = fx_rt_syscall_on(c, nr, n, args); /* a direct call where c is NULL */
	fx_fd_made(nr, args, r); /* also when the call ran directly, not posted */
	fx_testcancel_of(u); /* a call cancelled in flight comes back -ECANCELED: the thread exits */
	return fx_libc_ret(r);
}

#define CALL0(nr) call(nr, 0, 0, 0, 0, 0, 0, 0)
#define CALL1(nr, a) call(nr, 1, A(a), 0, 0, 0, 0, 0)
#define CALL2(nr, a, b) call(nr, 2, A(a), A(b), 0, 0, 0, 0)
#define CALL3(nr, a, b, c) call(nr, 3, A(a), A(b), A(c), 0, 0, 0)
#define CALL4(nr, a, b, c, d) call(nr, 4, A(a), A(b), A(c), A(d), 0, 0)
#define CALL5(nr, a, b, c, d, e) call(nr, 5, A(a), A(b), A(c), A(d), A(e), 0)
#define CALL6(nr, a, b, c, d, e, f) call(nr, 6, A(a), A(b), A(c), A(d), A(e), A(f))

/* ---- reading and writing ---- */

FX_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	return CALL3(SYS_read, fd, buf, n);
}

FX_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	return CALL3(SYS_write, fd, buf, n);
}

FX_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	return CALL4(SYS_pread64, fd, buf, n, off);
}

FX_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	return CALL4(SYS_pwrite64, fd, buf, n, off);
}

FX_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	return CALL3(SYS_readv, fd, iov, cnt);
}

FX_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	return CALL3(SYS_writev, fd, iov, cnt);
}

FX_EXPORT ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
	return CALL5(SYS_preadv, fd, iov, cnt, off, 0);
}

FX_EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	return CALL5(SYS_pwritev, fd, iov, cnt, off, 0);
}

FX_EXPORT ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	return CALL6(SYS_preadv2, fd, iov, cnt, off, 0, flags);
}

FX_EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	return CALL6(SYS_pwritev2, fd, iov, cnt, off, 0, flags);
}

/* x86-64: off_t is 64 bits, and the *64 names are the same calls */
FX_EXPORT ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
	return pread(fd, buf, n, off);
}

FX_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	return pwrite(fd, buf, n, off);
}

FX_EXPORT ssize_t preadv64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
	return preadv(fd, iov, cnt, off);
}

FX_EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
	return pwritev(fd, iov, cnt, off);
}

FX_EXPORT ssize_t preadv64v2(int fd, const struct iovec *iov, int cnt, off64_t off, int flags)
{
	return preadv2(fd, iov, cnt, off, flags);
}

FX_EXPORT ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt, off64_t off, int flags)
{
	return pwritev2(fd, iov, cnt, off, flags);
}

/* fortified variants: the same checks glibc makes, then the same call */
FX_EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	if (n > buflen)
		REAL(__read_chk)(fd, buf, n, buflen); /* reports the overflow and aborts */
	return read(fd, buf, n);
}

FX_EXPORT ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
	if (n > buflen)
		REAL(__pread_chk)(fd, buf, n, off, buflen);
	return pread(fd, buf, n, off);
}
FX_EXPORT ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t off, size_t buflen)
{
	return __pread_chk(fd, buf, n, off, buflen);
}

/* ---- opening, closing, stat ---- */

static mode_t mode_arg(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, mode_t) : 0;
}

FX_EXPORT int open(const char *path, int flags, ...)
{
	va_list ap;

	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	return (int)CALL4(SYS_openat, AT_FDCWD, path, flags, mode);
}

FX_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;

	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	return (int)CALL4(SYS_openat, dirfd, path, flags, mode);
}

FX_EXPORT int open64(const char *path, int flags, ...)
{
	va_list ap;

	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	return (int)CALL4(SYS_openat, AT_FDCWD, path, flags, mode);
}

FX_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	va_list ap;

	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	return (int)CALL4(SYS_openat, dirfd, path, flags, mode);
}

FX_EXPORT int creat(const char *path, mode_t mode)
{
	return (int)CALL4(SYS_openat, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}
FX_EXPORT int creat64(const char *path, mode_t mode)
{
	return creat(path, mode);
}

FX_EXPORT int __open_2(const char *path, int flags)
{
	if (flags & O_CREAT)
		REAL(__open_2)(path, flags); /* glibc's diagnosis: O_CREAT needs a mode */
	return open(path, flags);
}
FX_EXPORT int __open64_2(const char *path, int flags)
{
	return __open_2(path, flags);
}

FX_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	if (flags & O_CREAT)
		REAL(__openat_2)(dirfd, path, flags);
	return openat(dirfd, path, flags);
}
FX_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	return __openat_2(dirfd, path, flags);
}

FX_EXPORT int close(int fd)
{
	long a[1] = { fd }, g;

	if (fx_fd_guarded(SYS_close, a, &g))
		return (int)fx_libc_ret(g); /* the library's own: not the program's to close */
	int r = (int)CALL1(SYS_close, fd);

	fx_fd_changed(); /* also when the call ran directly, not posted */
	return r;
}

FX_EXPORT int stat(const char *path, struct stat *st)
{
	return (int)CALL4(SYS_newfstatat, AT_FDCWD, path, st, 0);
}

FX_EXPORT int lstat(const char *path, struct stat *st)
{
	return (int)CALL4(SYS_newfstatat, AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}

FX_EXPORT int fstat(int fd, struct stat *st)
{
	return (int)CALL2(SYS_fstat, fd, st);
}

FX_EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	return (int)CALL4(SYS_newfstatat, dirfd, path, st, flags);
}

/* struct stat64 is struct stat on x86-64 */
FX_EXPORT int stat64(const char *path, struct stat64 *st)
{
	return (int)CALL4(SYS_newfstatat, AT_FDCWD, path, st, 0);
}

FX_EXPORT int lstat64(const char *path, struct stat64 *st)
{
	return (int)CALL4(SYS_newfstatat, AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}

FX_EXPORT int fstat64(int fd, struct stat64 *st)
{
	return (int)CALL2(SYS_fstat, fd, st);
}

FX_EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	return (int)CALL4(SYS_newfstatat, dirfd, path, st, flags);
}

FX_EXPORT int statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *buf)
{
	return (int)CALL5(SYS_statx, dirfd, path, flags, mask, buf);
}

FX_EXPORT int fsync(int fd)
{
	return (int)CALL1(SYS_fsync, fd);
}

FX_EXPORT int fdatasync(int fd)
{
	return (int)CALL1(SYS_fdatasync, fd);
}

/* ---- sockets ---- */

FX_EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	return (int)CALL3(SYS_accept, fd, addr, len);
}

FX_EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	return (int)CALL4(SYS_accept4, fd, addr, len, flags);
}

FX_EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	return (int)CALL3(SYS_connect, fd, addr, len);
}

FX_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
	return CALL6(SYS_recvfrom, fd, buf, n, flags, NULL, NULL);
}

FX_EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *addr,
			   socklen_t *len)
{
	return CALL6(SYS_recvfrom, fd, buf, n, flags, addr, len);
}

FX_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	return CALL3(SYS_recvmsg, fd, msg, flags);
}

FX_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	return CALL6(SYS_sendto, fd, buf, n, flags, NULL, 0);
}

FX_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags,
			 const struct sockaddr *addr, socklen_t len)
{
	return CALL6(SYS_sendto, fd, buf, n, flags, addr, len);
}

FX_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	return CALL3(SYS_sendmsg, fd, msg, flags);
}

FX_EXPORT int shutdown(int fd, int how)
{
	return (int)CALL2(SYS_shutdown, fd, how);
}

FX_EXPORT ssize_t sendfile(int out, int in, off_t *off, size_t count)
{
	return CALL4(SYS_sendfile, out, in, off, count);
}
FX_EXPORT ssize_t sendfile64(int out, int in, off64_t *off, size_t count)
{
	return CALL4(SYS_sendfile, out, in, off, count);
}

FX_EXPORT ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags)
{
	if (n > buflen)
		REAL(__recv_chk)(fd, buf, n, buflen, flags);
	return recv(fd, buf, n, flags);
}

FX_EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags,
				 struct sockaddr *addr, socklen_t *len)
{
	if (n > buflen)
		REAL(__recvfrom_chk)(fd, buf, n, buflen, flags, addr, len);
	return recvfrom(fd, buf, n, flags, addr, len);
}

/* ---- waiting for descriptors ---- */

/*
 * ppoll, pselect and epoll_pwait with a signal mask run on the carrier,
 * the kernel installing the mask for the call (a syscall thread blocks
 * every signal). A signal every carrier blocked went to the runtime's
 * signal thread, which keeps it for the process until a uthread lets it
 * in with pthread_sigmask: such a call never saw it (GNU make blocks
 * SIGCHLD and waits for it in pselect). So for the call the uthread's
 * mask is the call's: the runtime hands it what that mask lets in and
 * raises it on the carrier, whose kernel mask still blocks it until the
 * call installs its own, so it ends the call, as the kernel's pending
 * signal would; one the signal thread takes meanwhile comes through the
 * poke, which the call's mask must not block.
 *
 * The call can also end with EINTR when no handler of the program ran:
 * woken by a signal for the process that the signal thread (which waits
 * for every signal) took first, or by the runtime's own poke. On NPTL
 * nothing interrupted it, so it goes on for the time it has left (the
 * signal the signal thread took then comes through the poke and ends it,
 * its handler run, as it should have).
 */
struct masked_wait {
	sigset_t call;          /* the mask the kernel installs for the call */
	struct fx_uthread *u;   /* NULL: not on a uthread (nothing to put back, no retry) */
	uint64_t saved;         /* u's mask before the call */
	uint64_t start;         /* CLOCK_MONOTONIC when it began, for the time left */
};

static void masked_begin(struct masked_wait *m, const sigset_t *mask)
{
	m->call = *mask;
	sigdelset(&m->call, FX_SIG_POKE);
	sigdelset(&m->call, FX_SIG_INTERRUPT);
	m->u = NULL;
	if (!fx_on_uthread())
		return;
	struct fx_uthread *u = m->u = fx_uthread_self();
	m->start = fx_now_ns();
	m->saved = u->sigmask;
	u->sigmask = fx_sig_blockable(mask);
	fx_sig_mask_changed(u); /* the process's pending ones it now takes */
	fx_raise_pending();
	u->handled = 0; /* after the handlers the old mask let run at once: those before the call */
}

/* After the call returned r: whether it goes on (EINTR, no handler of the program ran). */
static bool masked_again(struct masked_wait *m, int r)
{
	if (r != -1 || errno != EINTR || !m->u || m->u->handled)
		return false;
	fx_raise_pending(); /* one handed to the uthread since: it ends the next call */
	return true;
}

static void masked_end(struct masked_wait *m)
{
	struct fx_uthread *u = m->u;

	if (!u)
		return;
	int err = errno;
	uint64_t during = u->sigmask;
	u->sigmask = m->saved;
	if (m->saved & ~during)
		fx_sig_mask_blocked(u, m->saved & ~during);
	errno = err;
}

/* What is left of the timeout ts that began at m->start (ts itself on the first call). */
static const struct timespec *ts_left(const struct masked_wait *m, const struct timespec *ts, bool again,
				      struct timespec *left)
{
	return again ? fx_ts_left(ts, m->start, left) : ts;
}

/* The same for a timeout in milliseconds (negative: none). */
static int ms_left(const struct masked_wait *m, int timeout, bool again)
{
	return again ? fx_ms_left(timeout, m->start) : timeout;
}

/*
 * The kernel writes the time left back into the timeout ppoll and
 * pselect6 are given, which POSIX makes const: glibc hands it a copy.
 */
static struct timespec *ts_copy(const struct timespec *ts, struct timespec *copy)
{
	if (!ts)
		return NULL;
	*copy = *ts;
	return copy;
}

FX_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	if (timeout == 0)
		return (int)fx_libc_ret(fx_raw_syscall6(SYS_poll, (long)fds, (long)n, 0, 0, 0, 0));
	return (int)CALL3(SYS_poll, fds, n, timeout);
}

FX_EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		REAL(__poll_chk)(fds, n, timeout, fdslen);
	return poll(fds, n, timeout);
}

FX_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask)
{
	if (mask) {
		struct masked_wait m;
		struct timespec left;
		bool again = false;
		int r;
		masked_begin(&m, mask);
		do
			r = REAL(ppoll)(fds, n, ts_left(&m, ts, again, &left), &m.call);
		while ((again = masked_again(&m, r)));
		masked_end(&m);
		return r;
	}
	if (ts && !ts->tv_sec && !ts->tv_nsec)
		return REAL(ppoll)(fds, n, ts, mask);
	struct timespec copy;
	return (int)CALL5(SYS_ppoll, fds, n, ts_copy(ts, &copy), NULL, _NSIG / 8);
}

FX_EXPORT int select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
	if (tv && !tv->tv_sec && !tv->tv_usec)
		return REAL(select)(n, r, w, e, tv);
	return (int)CALL5(SYS_select, n, r, w, e, tv);
}

FX_EXPORT int pselect(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *ts,
		      const sigset_t *mask)
{
	if (mask) {
		struct masked_wait m;
		struct timespec left;
		bool again = false;
		int ret;
		masked_begin(&m, mask);
		do
			ret = REAL(pselect)(n, r, w, e, ts_left(&m, ts, again, &left), &m.call);
		while ((again = masked_again(&m, ret)));
		masked_end(&m);
		return ret;
	}
	if (ts && !ts->tv_sec && !ts->tv_nsec)
		return REAL(pselect)(n, r, w, e, ts, mask);
	struct timespec copy;
	return (int)CALL6(SYS_pselect6, n, r, w, e, ts_copy(ts, &copy), NULL);
}

FX_EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
	if (timeout == 0)
		return REAL(epoll_wait)(epfd, ev, max, timeout);
	return (int)CALL4(SYS_epoll_wait, epfd, ev, max, timeout);
}

FX_EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout, const sigset_t *mask)
{
	if (mask) {
		struct masked_wait m;
		bool again = false;
		int r;
		masked_begin(&m, mask);
		do
			r = REAL(epoll_pwait)(epfd, ev, max, ms_left(&m, timeout, again), &m.call);
		while ((again = masked_again(&m, r)));
		masked_end(&m);
		return r;
	}
	return epoll_wait(epfd, ev, max, timeout);
}

FX_EXPORT int epoll_pwait2(int epfd, struct epoll_event *ev, int max, const struct timespec *ts,
			   const sigset_t *mask)
{
	if (mask) {
		struct masked_wait m;
		struct timespec left;
		bool again = false;
		int r;
		masked_begin(&m, mask);
		do
			r = REAL(epoll_pwait2)(epfd, ev, max, ts_left(&m, ts, again, &left), &m.call);
		while ((again = masked_again(&m, r)));
		masked_end(&m);
		return r;
	}
	/* glibc hands ts to the kernel as it is (a bad pointer: EFAULT) */
	return (int)CALL6(SYS_epoll_pwait2, epfd, ev, max, ts, NULL, _NSIG / 8);
}

/* ---- System V IPC: on the caller (its IPC namespace), seen by the runtime ---- */

/*
 * The kernel never restarts these waits after a handler (signal(7)), so
 * as calls the runtime did not see, the monitor's poke ended them with
 * EINTR when no handler of the program had run; seen, they go on for the
 * time they have left (fx_rt_syscall). msgrcv and msgsnd are
 * cancellation points.
 */
FX_EXPORT ssize_t msgrcv(int id, void *msg, size_t size, long type, int flags)
{
	return CALL5(SYS_msgrcv, id, msg, size, type, flags);
}

FX_EXPORT int msgsnd(int id, const void *msg, size_t size, int flags)
{
	return (int)CALL4(SYS_msgsnd, id, msg, size, flags);
}

/* glibc's semop is semtimedop without a timeout (what a seccomp filter sees) */
FX_EXPORT int semop(int id, struct sembuf *ops, size_t n)
{
	return (int)CALL4(SYS_semtimedop, id, ops, n, NULL);
}

FX_EXPORT int semtimedop(int id, struct sembuf *ops, size_t n, const struct timespec *ts)
{
	return (int)CALL4(SYS_semtimedop, id, ops, n, ts);
}

/* ---- the same calls through glibc's generic syscall() ---- */

/*
 * syscall(nr, ...) for the blocking calls this file interposes: posted as
 * their wrappers post them, with the program's raw arguments unchanged, so
 * the kernel's result is the one the direct call gives; the sleeps become
 * the scheduler's timers. glibc's syscall() is no cancellation point (it
 * never enables asynchronous cancellation around the call), so neither is
 * this: cancellation is held off for the call's duration, as NPTL's
 * pthread_cancel does not interrupt it. Interruption by a handler follows
 * the kernel's rules (fx_rt_syscall: EINTR, or the call starts again).
 * Calls that install a signal mask (ppoll, pselect6, epoll_pwait with one)
 * and calls that cannot block stay direct. Returns false for every other
 * call, which the caller makes directly; *ret is libc's (-1 and errno).
 */
bool fx_io_syscall(long nr, const long *a, long *ret)
{
	switch (nr) {
	case SYS_read: case SYS_write: case SYS_pread64: case SYS_pwrite64:
	case SYS_readv: case SYS_writev: case SYS_preadv: case SYS_pwritev:
	case SYS_preadv2: case SYS_pwritev2:
	case SYS_open: case SYS_openat: case SYS_creat: case SYS_close:
	case SYS_stat: case SYS_lstat: case SYS_fstat: case SYS_newfstatat: case SYS_statx:
	case SYS_fsync: case SYS_fdatasync:
	case SYS_accept: case SYS_accept4: case SYS_connect:
	case SYS_recvfrom: case SYS_recvmsg: case SYS_sendto: case SYS_sendmsg:
	case SYS_shutdown: case SYS_sendfile:
	case SYS_select:
	case SYS_msgrcv: case SYS_msgsnd: case SYS_semop: case SYS_semtimedop:
		break;
	case SYS_poll:
		if ((int)a[2] == 0)
			return false;
		break;
	case SYS_epoll_wait:
		if ((int)a[3] == 0)
			return false;
		break;
	case SYS_epoll_pwait:
		if (a[4] || (int)a[3] == 0)
			return false;
		break;
	case SYS_epoll_pwait2:
		if (a[4])
			return false;
		break;
	case SYS_ppoll:
		if (a[3])
			return false;
		break;
	case SYS_pselect6:
		/* its sixth argument points at { const sigset_t *, size_t } */
		if (a[5] && *(const void *const *)a[5])
			return false;
		break;
	case SYS_nanosleep:
		if (!fx_on_uthread())
			return false;
		break;
	case SYS_clock_nanosleep:
		if (!fx_on_uthread() || (a[0] != CLOCK_REALTIME && a[0] != CLOCK_MONOTONIC))
			return false;
		break;
	default:
		return false;
	}
	if (!fx_on_uthread())
		return false; /* the runtime, a handler, a thread that is not a uthread: as it was */
	struct fx_uthread *u = fx_uthread_self();
	int disabled = u->cancel_disabled;
	u->cancel_disabled = 1;
	if (nr == SYS_nanosleep) {
		*ret = nanosleep((const struct timespec *)a[0], (struct timespec *)a[1]);
	} else if (nr == SYS_clock_nanosleep) {
		int e = clock_nanosleep((clockid_t)a[0], (int)a[1], (const struct timespec *)a[2],
					(struct timespec *)a[3]);
		*ret = e ? (errno = e, -1) : 0;
	} else {
		uint64_t args[6];
		for (int i = 0; i < 6; i++)
			args[i] = (uint64_t)a[i];
		long r = fx_rt_syscall(nr == SYS_epoll_pwait ? SYS_epoll_wait : nr, 6, args);
		fx_fd_made(nr, args, r);
		*ret = fx_libc_ret(r);
		if (nr == SYS_close)
			fx_fd_changed();
	}
	fx_uthread_self()->cancel_disabled = disabled;
	return true;
}

/* ---- sleeping: a timer in the scheduler, no system call at all ---- */

/*
 * Sleeps until the time req names; EINTR (and the time left in *rem) when a
 * handler ran. The time left is req less the time slept, so a sleep too
 * long for a 64-bit ns deadline (which then has none) reports it too.
 */
static int sleep_for(clockid_t clock, int flags, const struct timespec *req, struct timespec *rem)
{
	struct fx_uthread *u = fx_uthread_self();
	uint64_t deadline, start = 0;

	if (!fx_mem_r_ok(req, sizeof(*req)))
		return EFAULT;
	if (req->tv_nsec < 0 || req->tv_nsec >= 1000000000L || req->tv_sec < 0)
		return EINVAL;
	if (flags & TIMER_ABSTIME) {
		if (fx_deadline(clock, req, &deadline))
			return EINVAL;
	} else {
		start = fx_now_ns();
		deadline = fx_add_sat(start, fx_ts_ns_sat(req));
	}
	fx_testcancel();
	u->handled = 0;
	fx_sig_interruptible_sleep(deadline);
	fx_testcancel();
	if (!u->handled)
		return 0;
	if (rem && !(flags & TIMER_ABSTIME)) {
		if (!fx_mem_rw_ok(rem, sizeof(*rem)))
			return EFAULT; /* as the kernel's copy of the time left */
		uint64_t slept = fx_now_ns() - start;
		time_t s = (time_t)(slept / 1000000000u);
		long ns = (long)(slept % 1000000000u);
		if (s > req->tv_sec || (s == req->tv_sec && ns >= req->tv_nsec)) {
			rem->tv_sec = rem->tv_nsec = 0;
		} else {
			rem->tv_sec = req->tv_sec - s;
			rem->tv_nsec = req->tv_nsec - ns;
			if (rem->tv_nsec < 0) {
				rem->tv_nsec += 1000000000L;
				rem->tv_sec--;
			}
		}
	}
	return EINTR;
}

FX_EXPORT int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req, struct timespec *rem)
{
	if (!fx_on_uthread() || (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC))
		return REAL(clock_nanosleep)(clock, flags, req, rem);
	return sleep_for(clock, flags, req, rem); /* rem untouched unless cut short, as the kernel's */
}

FX_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
	if (!fx_on_uthread())
		return REAL(nanosleep)(req, rem);
	int err = clock_nanosleep(CLOCK_MONOTONIC, 0, req, rem);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

FX_EXPORT int usleep(useconds_t us)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000 };

	if (!fx_on_uthread())
		return REAL(usleep)(us);
	return nanosleep(&ts, NULL);
}

FX_EXPORT unsigned sleep(unsigned s)
{
	struct timespec ts = { s, 0 }, rem = { 0, 0 };

	if (!fx_on_uthread())
		return REAL(sleep)(s);
	if (nanosleep(&ts, &rem) == 0)
		return 0;
	return (unsigned)rem.tv_sec; /* interrupted: the whole seconds left, as glibc's sleep */
}
