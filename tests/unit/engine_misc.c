// SPDX-License-Identifier: MIT
/*
 * Engine equivalence, the rest: splice, tee, epoll_ctl and madvise (served
 * by io_uring), and a sample of THREAD-class calls (lseek, fcntl, dup,
 * fstat, newfstatat, getdents64, ioctl FIONREAD, mmap, munmap, getpid,
 * getuid, nanosleep, poll, wait4 of a child), on success and error paths:
 * every engine gives the plain system call's result and side effects.
 * Harness: engine_harness.h. Usage: engine_misc [NAME-SUBSTRING].
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "engine_harness.h"

#define S(name) static void name(struct fix *f)
#define O(name)                                                                          \
	static void name(struct fix *f __attribute__((unused)),                          \
			 int64_t ret __attribute__((unused)), struct obs *o)

#define F10 "0123456789"
#define BAD_FD 1000
#define BAD_PTR 16

/* p[0] = dir/f holding F10, v[3] opened O_RDWR; v[2] = the directory */
S(base)
{
	mkfile(f, 0, "f", F10, 0644);
	f->v[3] = openp(f, 0, O_RDWR);
	f->v[2] = open(f->dir, O_RDONLY | O_DIRECTORY);
	CHECK(f->v[2] >= 0);
}

O(o_file) { ofile(o, f->p[0]); opos(o, f->v[3]); }
O(o_pipes)
{
	if (f->v[0] >= 0)
		oqueued(o, "p0", f->v[0]);
	if (f->v[4] >= 0)
		oqueued(o, "p1", f->v[4]);
	ofile(o, f->p[0]);
	opos(o, f->v[3]);
	oprintf(o, " off=%lld", (long long)f->iv[0]);
}

/* ---- splice, tee: v[0]/v[1] pipe 1 (holding "hello"), v[4]/v[5] pipe 2 ---- */
static void pipes(struct fix *f, int flags)
{
	int p[2];

	base(f);
	mkpipe(f, flags);
	CHECK_EQ(pipe2(p, flags), 0);
	f->v[4] = p[0], f->v[5] = p[1];
}
S(s_splice_pipe_to_file)
{
	pipes(f, 0);
	CHECK_EQ(write(f->v[1], "hello", 5), 5);
	lseek(f->v[3], 2, SEEK_SET);
	ARGS(f, f->v[0], 0, f->v[3], 0, 100, 0);
}
S(s_splice_file_to_pipe) { pipes(f, 0); lseek(f->v[3], 3, SEEK_SET); ARGS(f, f->v[3], 0, f->v[5], 0, 4, 0); }
S(s_splice_off_in)
{
	s_splice_file_to_pipe(f);
	f->iv[0] = 1;
	/* loff_t is 64 bits: iv[0..1] */
	int64_t off = 1;
	memcpy(f->iv, &off, sizeof(off));
	f->a[1] = P(f->iv);
}
S(s_splice_pipe_to_pipe) { pipes(f, 0); CHECK_EQ(write(f->v[1], "hello", 5), 5); ARGS(f, f->v[0], 0, f->v[5], 0, 3, 0); }
S(s_splice_files) { pipes(f, 0); ARGS(f, f->v[3], 0, f->v[3], 0, 3, 0); }
S(s_splice_eof) { pipes(f, 0); close(f->v[1]); f->v[1] = -1; ARGS(f, f->v[0], 0, f->v[3], 0, 10, 0); }
S(s_splice_f_nonblock) { pipes(f, 0); ARGS(f, f->v[0], 0, f->v[3], 0, 10, SPLICE_F_NONBLOCK); }
S(s_splice_o_nonblock) { pipes(f, O_NONBLOCK); ARGS(f, f->v[0], 0, f->v[5], 0, 10, 0); }
S(s_splice_ebadf) { pipes(f, 0); ARGS(f, BAD_FD, 0, f->v[5], 0, 10, 0); }
S(s_splice_huge) { s_splice_file_to_pipe(f); f->a[4] = 1ull << 33; }
S(s_splice_zero) { s_splice_file_to_pipe(f); f->a[4] = 0; }
S(s_tee) { pipes(f, 0); CHECK_EQ(write(f->v[1], "hello", 5), 5); ARGS(f, f->v[0], f->v[5], 100, 0); }
S(s_tee_short) { s_tee(f); f->a[2] = 2; }
S(s_tee_not_pipe) { s_tee(f); f->a[1] = (uint64_t)f->v[3]; }
S(s_tee_same_pipe) { s_tee(f); f->a[1] = (uint64_t)f->v[1]; }
S(s_tee_f_nonblock) { pipes(f, 0); ARGS(f, f->v[0], f->v[5], 10, SPLICE_F_NONBLOCK); }
S(s_tee_o_nonblock) { pipes(f, O_NONBLOCK); ARGS(f, f->v[0], f->v[5], 10, 0); }
S(s_tee_eof) { pipes(f, 0); close(f->v[1]); f->v[1] = -1; ARGS(f, f->v[0], f->v[5], 10, 0); }
S(s_tee_ebadf) { s_tee(f); f->a[0] = BAD_FD; }

/* ---- epoll_ctl: v[6] the epoll instance, v[0]/v[1] a pipe holding "x" ---- */
static void ep(struct fix *f, uint32_t events)
{
	struct epoll_event *e = (struct epoll_event *)f->ev;

	base(f);
	mkpipe(f, 0);
	CHECK_EQ(write(f->v[1], "x", 1), 1);
	f->v[6] = epoll_create1(0);
	CHECK(f->v[6] >= 0);
	e->events = events;
	e->data.u64 = 0x1234567890ull;
}
S(s_epoll_add) { ep(f, EPOLLIN); ARGS(f, f->v[6], EPOLL_CTL_ADD, f->v[0], P(f->ev)); }
S(s_epoll_add_twice)
{
	s_epoll_add(f);
	CHECK_EQ(epoll_ctl(f->v[6], EPOLL_CTL_ADD, f->v[0], (struct epoll_event *)f->ev), 0);
}
S(s_epoll_mod) { s_epoll_add_twice(f); f->a[1] = EPOLL_CTL_MOD; ((struct epoll_event *)f->ev)->events = EPOLLOUT; }
S(s_epoll_mod_missing) { s_epoll_add(f); f->a[1] = EPOLL_CTL_MOD; }
S(s_epoll_del) { s_epoll_add_twice(f); f->a[1] = EPOLL_CTL_DEL; }
S(s_epoll_del_missing) { s_epoll_add(f); f->a[1] = EPOLL_CTL_DEL; }
S(s_epoll_self) { s_epoll_add(f); f->a[2] = (uint64_t)f->v[6]; }
S(s_epoll_file_eperm) { s_epoll_add(f); f->a[2] = (uint64_t)f->v[3]; }
S(s_epoll_not_epoll) { s_epoll_add(f); f->a[0] = (uint64_t)f->v[1]; }
S(s_epoll_ebadf) { s_epoll_add(f); f->a[2] = BAD_FD; }
S(s_epoll_efault) { s_epoll_add(f); f->a[3] = BAD_PTR; }
S(s_epoll_bad_op) { s_epoll_add(f); f->a[1] = 99; }
S(s_epoll_exclusive_mod) { ep(f, EPOLLIN | EPOLLEXCLUSIVE); CHECK_EQ(epoll_ctl(f->v[6], EPOLL_CTL_ADD, f->v[0], (struct epoll_event *)f->ev), 0); ARGS(f, f->v[6], EPOLL_CTL_MOD, f->v[0], P(f->ev)); }
/* epoll_wait: the pipe registered for `events`, the result into ev (room for 2) */
static void epw(struct fix *f, uint32_t events, int timeout)
{
	ep(f, events);
	CHECK_EQ(epoll_ctl(f->v[6], EPOLL_CTL_ADD, f->v[0], (struct epoll_event *)f->ev), 0);
	memset(f->ev, 0x55, sizeof(f->ev));
	ARGS(f, f->v[6], P(f->ev), 2, (uint64_t)timeout);
}
S(s_epw_ready) { epw(f, EPOLLIN, 1000); }
S(s_epw_ready_now) { epw(f, EPOLLIN, 0); }
S(s_epw_nothing_20ms) { epw(f, EPOLLIN, 20); CHECK_EQ(read(f->v[0], f->b[0], 1), 1); }
S(s_epw_maxevents_einval) { epw(f, EPOLLIN, 1000); f->a[2] = 0; }
S(s_epw_not_epoll_einval) { epw(f, EPOLLIN, 1000); f->a[0] = (uint64_t)f->v[0]; }
S(s_epw_ebadf) { epw(f, EPOLLIN, 1000); f->a[0] = BAD_FD; }
S(s_epw_efault) { epw(f, EPOLLIN, 1000); f->a[1] = BAD_PTR; }
O(o_epw)
{
	const struct epoll_event *e = (const struct epoll_event *)f->ev;
	oprintf(o, " {ev=%x data=%llx}", e[0].events, (unsigned long long)e[0].data.u64);
}
O(o_epoll)
{
	struct epoll_event e[4];
	int n = epoll_wait(f->v[6], e, 4, 0);

	oprintf(o, " ready=%d", n);
	for (int i = 0; i < n; i++)
		oprintf(o, " {ev=%x data=%llx}", e[i].events, (unsigned long long)e[i].data.u64);
}

/* ---- madvise: mem = 4 anonymous pages, the first written ---- */
static void anon(struct fix *f)
{
	base(f);
	f->memlen = 4 * 4096;
	f->mem = mmap(NULL, f->memlen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(f->mem != MAP_FAILED);
	memset(f->mem, 'm', 4096);
}
S(s_madv_dontneed) { anon(f); ARGS(f, P(f->mem), 4096, MADV_DONTNEED); }
S(s_madv_willneed) { s_madv_dontneed(f); f->a[2] = MADV_WILLNEED; }
S(s_madv_free) { s_madv_dontneed(f); f->a[2] = MADV_FREE; }
S(s_madv_unaligned) { s_madv_dontneed(f); f->a[0] += 1; }
S(s_madv_bad) { s_madv_dontneed(f); f->a[2] = 9999; }
S(s_madv_zero) { s_madv_dontneed(f); f->a[1] = 0; }
S(s_madv_unmapped) { s_madv_dontneed(f); CHECK_EQ(munmap((char *)f->mem + 8192, 8192), 0); f->memlen = 8192; f->a[1] = 16384; }
S(s_madv_remove_private) { s_madv_dontneed(f); f->a[2] = MADV_REMOVE; }
S(s_madv_huge) { s_madv_dontneed(f); f->a[0] += 1; f->a[1] = 1ull << 33; /* EINVAL before touching anything */ }
S(s_madv_dontfork) { s_madv_dontneed(f); f->a[2] = MADV_DONTFORK; }
O(o_mem) { obytes(o, "page0", f->mem, 4); }

/* ---- THREAD class ---- */
S(s_lseek_set) { base(f); ARGS(f, f->v[3], 3, SEEK_SET); }
S(s_lseek_end) { s_lseek_set(f); f->a[1] = (uint64_t)-2; f->a[2] = SEEK_END; }
S(s_lseek_cur) { s_lseek_set(f); lseek(f->v[3], 4, SEEK_SET); f->a[2] = SEEK_CUR; }
S(s_lseek_data) { s_lseek_set(f); f->a[1] = 0; f->a[2] = SEEK_DATA; }
S(s_lseek_hole_enxio) { s_lseek_set(f); f->a[1] = 100; f->a[2] = SEEK_HOLE; }
S(s_lseek_bad_whence) { s_lseek_set(f); f->a[2] = 77; }
S(s_lseek_negative) { s_lseek_set(f); f->a[1] = (uint64_t)-20; f->a[2] = SEEK_CUR; }
S(s_lseek_pipe) { base(f); mkpipe(f, 0); ARGS(f, f->v[0], 0, SEEK_CUR); }
S(s_lseek_ebadf) { s_lseek_set(f); f->a[0] = BAD_FD; }
S(s_fcntl_getfl) { base(f); ARGS(f, f->v[3], F_GETFL); }
S(s_fcntl_setfl) { base(f); ARGS(f, f->v[3], F_SETFL, O_NONBLOCK | O_APPEND); }
S(s_fcntl_getfd) { base(f); fcntl(f->v[3], F_SETFD, FD_CLOEXEC); ARGS(f, f->v[3], F_GETFD); }
S(s_fcntl_dupfd) { base(f); ARGS(f, f->v[3], F_DUPFD_CLOEXEC, 100); }
S(s_fcntl_setlk)
{
	struct flock *l = (struct flock *)f->b[0];

	base(f);
	memset(l, 0, sizeof(*l));
	l->l_type = F_WRLCK, l->l_whence = SEEK_SET, l->l_start = 2, l->l_len = 3;
	ARGS(f, f->v[3], F_SETLK, P(l));
}
S(s_fcntl_ofd_getlk) { s_fcntl_setlk(f); f->a[1] = F_OFD_GETLK; }
S(s_fcntl_pipe_sz) { base(f); mkpipe(f, 0); ARGS(f, f->v[0], F_GETPIPE_SZ); }
S(s_fcntl_bad_cmd) { base(f); ARGS(f, f->v[3], 0x7fff); }
S(s_fcntl_ebadf) { base(f); ARGS(f, BAD_FD, F_GETFL); }
O(o_fcntl)
{
	struct flock *l = (struct flock *)f->b[0];

	oprintf(o, " fl=%o fd=%d", fcntl(f->v[3], F_GETFL) & ~O_LARGEFILE, fcntl(f->v[3], F_GETFD));
	if (f->a[2] == P(l))
		oprintf(o, " flock{type=%d start=%ld len=%ld pid=%d}", l->l_type, (long)l->l_start,
			(long)l->l_len, l->l_pid);
}
S(s_dup) { base(f); ARGS(f, f->v[3]); }
S(s_dup_ebadf) { base(f); ARGS(f, BAD_FD); }
S(s_fstat) { base(f); ARGS(f, f->v[3], P(&f->st)); }
S(s_fstat_ebadf) { s_fstat(f); f->a[0] = BAD_FD; }
S(s_fstat_efault) { s_fstat(f); f->a[1] = BAD_PTR; }
S(s_fstatat) { base(f); ARGS(f, f->v[2], P("f"), P(&f->st), 0); }
S(s_fstatat_enoent) { s_fstatat(f); f->a[1] = P("none"); }
S(s_fstatat_nofollow)
{
	s_fstatat(f);
	mkfile(f, 1, "sym", NULL, 0);
	CHECK_EQ(symlink("f", f->p[1]), 0);
	f->a[1] = P("sym");
	f->a[3] = AT_SYMLINK_NOFOLLOW;
}
S(s_fstatat_empty) { base(f); ARGS(f, f->v[3], P(""), P(&f->st), AT_EMPTY_PATH); }
S(s_fstatat_bad_flags) { s_fstatat(f); f->a[3] = 0x40000000; }
S(s_fstatat_efault) { s_fstatat(f); f->a[2] = BAD_PTR; }
S(s_fstatat_path_efault) { s_fstatat(f); f->a[1] = BAD_PTR; }
S(s_fstatat_null_path) { s_fstatat_empty(f); f->a[1] = 0; }
O(o_stat)
{
	if (ret == 0)
		oprintf(o, " st{mode=%o size=%ld nlink=%lu uid=%u}", f->st.st_mode, (long)f->st.st_size,
			(unsigned long)f->st.st_nlink, f->st.st_uid);
}
S(s_getdents)
{
	base(f);
	mkfile(f, 1, "alpha", "a", 0644);
	mkfile(f, 1, "beta", "b", 0644);
	mkfile(f, 1, "gamma_long_name", "c", 0644);
	ARGS(f, f->v[2], P(f->big), 65536);
}
S(s_getdents_small) { s_getdents(f); f->a[2] = 1; }
S(s_getdents_notdir) { s_getdents(f); f->a[0] = (uint64_t)f->v[3]; }
S(s_getdents_ebadf) { s_getdents(f); f->a[0] = BAD_FD; }
S(s_getdents_efault) { s_getdents(f); f->a[1] = BAD_PTR; }
S(s_getdents_end) { s_getdents(f); char buf[8192]; while (syscall(SYS_getdents64, f->v[2], buf, sizeof(buf)) > 0) ; }
static int cmpstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
O(o_dents)
{
	char *names[32];
	int n = 0;

	for (long off = 0; off < ret && n < 32;) {
		struct dirent64 *d = (struct dirent64 *)(f->big + off);
		names[n++] = d->d_name;
		off += d->d_reclen;
	}
	qsort(names, (size_t)n, sizeof(names[0]), cmpstr);
	oprintf(o, " names=");
	for (int i = 0; i < n; i++)
		oprintf(o, "%s,", names[i]);
	opos(o, f->v[2]);
}
S(s_ioctl_fionread) { base(f); mkpipe(f, 0); CHECK_EQ(write(f->v[1], "hello", 5), 5); f->iv[0] = -7; ARGS(f, f->v[0], FIONREAD, P(&f->iv[0])); }
S(s_ioctl_fionread_file) { base(f); lseek(f->v[3], 4, SEEK_SET); f->iv[0] = -7; ARGS(f, f->v[3], FIONREAD, P(&f->iv[0])); }
S(s_ioctl_fionbio) { s_ioctl_fionread(f); f->iv[0] = 1; f->a[1] = FIONBIO; }
S(s_ioctl_enotty) { base(f); ARGS(f, f->v[3], TIOCGWINSZ, P(f->b[0])); }
S(s_ioctl_efault) { s_ioctl_fionread(f); f->a[2] = BAD_PTR; }
S(s_ioctl_ebadf) { s_ioctl_fionread(f); f->a[0] = BAD_FD; }
O(o_ioctl) { oprintf(o, " int=%d fl=%o", f->iv[0], f->v[0] >= 0 ? fcntl(f->v[0], F_GETFL) : -1); }
S(s_mmap_anon) { base(f); ARGS(f, 0, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0); }
S(s_mmap_file) { base(f); ARGS(f, 0, 4096, PROT_READ, MAP_SHARED, f->v[3], 0); }
S(s_mmap_bad_flags) { s_mmap_anon(f); f->a[3] = MAP_ANONYMOUS; }
S(s_mmap_zero) { s_mmap_anon(f); f->a[1] = 0; }
S(s_mmap_ebadf) { s_mmap_file(f); f->a[4] = BAD_FD; }
S(s_mmap_eacces) { s_mmap_file(f); close(f->v[3]); f->v[3] = openp(f, 0, O_WRONLY); f->a[4] = (uint64_t)f->v[3]; }
S(s_mmap_unaligned_off) { s_mmap_file(f); f->a[5] = 100; }
O(o_mmap)
{
	if (ret < 0 && ret > -4096)
		return;
	char *m = (char *)(uintptr_t)ret;
	if (f->a[3] & MAP_ANONYMOUS) {
		oprintf(o, " zero=%d", m[0] == 0 && m[8191] == 0);
		m[0] = 1;
	} else {
		obytes(o, "mapped", m, 10);
	}
	CHECK_EQ(munmap(m, f->a[1]), 0);
}
S(s_munmap) { anon(f); ARGS(f, P(f->mem), 8192); }
S(s_munmap_unaligned) { s_munmap(f); f->a[0] += 8; }
S(s_munmap_zero) { s_munmap(f); f->a[1] = 0; }
/* page 0, below vm.mmap_min_addr: nothing (the instance included) has a mapping there */
S(s_munmap_unmapped) { base(f); ARGS(f, 0, 4096); }
O(o_munmap)
{
	unsigned char vec[4];
	oprintf(o, " mincore=%d", mincore(f->mem, f->memlen, vec) ? -errno : 0);
}
S(s_none) { base(f); ARGS(f, 0); }
S(s_nanosleep) { f->ts[0] = (struct timespec){ 0, 10 * 1000 * 1000 }; ARGS(f, P(&f->ts[0]), P(&f->ts[1])); }
S(s_nanosleep_einval) { s_nanosleep(f); f->ts[0].tv_nsec = 2000000000L; }
S(s_nanosleep_efault) { s_nanosleep(f); f->a[0] = BAD_PTR; }
O(o_nanosleep) { oprintf(o, " rem_zero_or_untouched=%d", f->ts[1].tv_sec == 0 && f->ts[1].tv_nsec == 0); }
static void polls(struct fix *f, int n, short ev0, int fd1)
{
	struct pollfd *p = (struct pollfd *)f->pfd;

	base(f);
	mkpipe(f, 0);
	p[0] = (struct pollfd){ f->v[0], ev0, 0x7777 };
	p[1] = (struct pollfd){ fd1, POLLIN, 0x7777 };
	ARGS(f, P(p), (uint64_t)n, 0);
}
S(s_poll_data) { polls(f, 1, POLLIN, -1); CHECK_EQ(write(f->v[1], "x", 1), 1); }
S(s_poll_empty) { polls(f, 1, POLLIN, -1); }
S(s_poll_timeout) { polls(f, 1, POLLIN, -1); f->a[2] = 20; }
S(s_poll_writable_and_nval) { polls(f, 2, POLLOUT, BAD_FD); ((struct pollfd *)f->pfd)[0].fd = f->v[1]; }
S(s_poll_hup) { polls(f, 1, POLLIN, -1); close(f->v[1]); f->v[1] = -1; }
S(s_poll_einval) { polls(f, 1, POLLIN, -1); f->a[1] = 1u << 30; }
S(s_poll_efault) { polls(f, 1, POLLIN, -1); f->a[0] = BAD_PTR; }
/* with a timeout: io_uring's POLL_ADD and a linked timeout for one descriptor waiting for input */
S(s_poll_wait_data) { s_poll_data(f); f->a[2] = (uint64_t)-1; }
S(s_poll_wait_timeout) { s_poll_timeout(f); }
S(s_poll_wait_hup) { s_poll_hup(f); f->a[2] = 1000; }
S(s_poll_wait_nval) { polls(f, 1, POLLIN, -1); ((struct pollfd *)f->pfd)[0].fd = BAD_FD; f->a[2] = 1000; }
S(s_poll_wait_in_out) { polls(f, 1, POLLIN | POLLOUT, -1); ((struct pollfd *)f->pfd)[0].fd = f->v[1]; f->a[2] = 1000; }
S(s_poll_wait_rdhup_unasked)
{
	int sv[2];

	polls(f, 1, POLLIN, -1);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	f->v[4] = sv[0];
	f->v[5] = sv[1];
	CHECK_EQ(shutdown(sv[1], SHUT_WR), 0);
	((struct pollfd *)f->pfd)[0].fd = sv[0];
	f->a[2] = 1000;
}
S(s_poll_wait_out_only) { s_poll_wait_in_out(f); ((struct pollfd *)f->pfd)[0].events = POLLOUT; }
S(s_poll_wait_negative_fd) { s_poll_timeout(f); ((struct pollfd *)f->pfd)[0].fd = -1; }
S(s_poll_wait_two) { s_poll_writable_and_nval(f); f->a[2] = 1000; }
S(s_poll_wait_einval) { s_poll_einval(f); f->a[2] = 1000; }
S(s_poll_wait_efault) { s_poll_efault(f); f->a[2] = 1000; }
O(o_poll)
{
	struct pollfd *p = (struct pollfd *)f->pfd;
	oprintf(o, " revents=%x,%x", (unsigned short)p[0].revents, (unsigned short)p[1].revents);
}
/* a child that exits with 7 (or, with hold, waits for our end of a pipe to close) */
static void child(struct fix *f, bool hold)
{
	int p[2];

	CHECK_EQ(pipe(p), 0);
	fflush(NULL);
	f->pid = fork();
	CHECK(f->pid >= 0);
	if (f->pid == 0) {
		char c;
		close(p[1]);
		if (hold)
			while (read(p[0], &c, 1) > 0)
				;
		_exit(7);
	}
	close(p[0]);
	f->v[7] = p[1];
	f->status = -1;
	if (!hold) { /* exited: a zombie waiting for us */
		siginfo_t si;
		CHECK_EQ(waitid(P_PID, (id_t)f->pid, &si, WEXITED | WNOWAIT), 0);
	}
}
S(s_wait4) { base(f); child(f, false); ARGS(f, (uint64_t)f->pid, P(&f->status), 0, 0); }
S(s_wait4_any) { s_wait4(f); f->a[0] = (uint64_t)-1; }
S(s_wait4_rusage) { s_wait4(f); f->a[3] = P(f->big); }
S(s_wait4_wnohang_running) { base(f); child(f, true); ARGS(f, (uint64_t)f->pid, P(&f->status), WNOHANG, 0); }
S(s_wait4_echild) { base(f); ARGS(f, 1, P(&f->status), 0, 0); f->status = -1; }
S(s_wait4_einval) { s_wait4(f); f->a[2] = 0x10; }
O(o_wait)
{
	oprintf(o, " status=%x", f->status);
	if (f->pid > 0) {
		int st;
		pid_t r = waitpid(f->pid, &st, WNOHANG);
		oprintf(o, " still_waitable=%d", r == f->pid);
	}
}

O(o_wait_any) { oprintf(o, " status=%x", f->status); }

static const struct tcase cases[] = {
	{ "splice_pipe_to_file", SYS_splice, 'U', 'E', s_splice_pipe_to_file, o_pipes, false },
	{ "splice_file_to_pipe", SYS_splice, 'U', 'E', s_splice_file_to_pipe, o_pipes, false },
	{ "splice_with_offset_pointer", SYS_splice, 'F', 'E', s_splice_off_in, o_pipes, false },
	{ "splice_pipe_to_pipe", SYS_splice, 'U', 'E', s_splice_pipe_to_pipe, o_pipes, false },
	{ "splice_no_pipe_einval", SYS_splice, 'U', 'E', s_splice_files, o_pipes, false },
	{ "splice_eof", SYS_splice, 'U', 'E', s_splice_eof, o_pipes, false },
	{ "splice_f_nonblock_empty_eagain", SYS_splice, 'U', 'E', s_splice_f_nonblock, o_pipes, false },
	{ "splice_o_nonblock_empty_eagain", SYS_splice, 'A', 'E', s_splice_o_nonblock, o_pipes, false },
	{ "splice_ebadf", SYS_splice, 'U', 'E', s_splice_ebadf, NULL, false },
	{ "splice_length_over_4g", SYS_splice, 'F', 'E', s_splice_huge, o_pipes, false },
	{ "splice_zero_length", SYS_splice, 'U', 'E', s_splice_zero, o_pipes, false },
	{ "tee", SYS_tee, 'U', 'E', s_tee, o_pipes, false },
	{ "tee_partial", SYS_tee, 'U', 'E', s_tee_short, o_pipes, false },
	{ "tee_not_a_pipe_einval", SYS_tee, 'U', 'E', s_tee_not_pipe, o_pipes, false },
	{ "tee_same_pipe_einval", SYS_tee, 'U', 'E', s_tee_same_pipe, o_pipes, false },
	{ "tee_f_nonblock_empty_eagain", SYS_tee, 'U', 'E', s_tee_f_nonblock, o_pipes, false },
	{ "tee_o_nonblock_empty_eagain", SYS_tee, 'A', 'E', s_tee_o_nonblock, o_pipes, false },
	{ "tee_eof", SYS_tee, 'U', 'E', s_tee_eof, o_pipes, false },
	{ "tee_ebadf", SYS_tee, 'U', 'E', s_tee_ebadf, NULL, false },
	{ "epoll_wait_ready", SYS_epoll_wait, 'U', 'E', s_epw_ready, o_epw, false },
	{ "epoll_wait_ready_timeout_0", SYS_epoll_wait, 'N', 'E', s_epw_ready_now, o_epw, false },
	{ "epoll_wait_nothing_20ms", SYS_epoll_wait, 'U', 'E', s_epw_nothing_20ms, o_epw, false },
	{ "epoll_wait_maxevents_0_einval", SYS_epoll_wait, 'U', 'E', s_epw_maxevents_einval, o_epw, false },
	{ "epoll_wait_not_epoll_einval", SYS_epoll_wait, 'U', 'E', s_epw_not_epoll_einval, o_epw, false },
	{ "epoll_wait_ebadf", SYS_epoll_wait, 'U', 'E', s_epw_ebadf, o_epw, false },
	{ "epoll_wait_efault", SYS_epoll_wait, 'U', 'E', s_epw_efault, NULL, false },
	{ "epoll_ctl_add", SYS_epoll_ctl, 'U', 'E', s_epoll_add, o_epoll, false },
	{ "epoll_ctl_add_twice_eexist", SYS_epoll_ctl, 'U', 'E', s_epoll_add_twice, o_epoll, false },
	{ "epoll_ctl_mod", SYS_epoll_ctl, 'U', 'E', s_epoll_mod, o_epoll, false },
	{ "epoll_ctl_mod_missing_enoent", SYS_epoll_ctl, 'U', 'E', s_epoll_mod_missing, o_epoll, false },
	{ "epoll_ctl_del", SYS_epoll_ctl, 'U', 'E', s_epoll_del, o_epoll, false },
	{ "epoll_ctl_del_missing_enoent", SYS_epoll_ctl, 'U', 'E', s_epoll_del_missing, o_epoll, false },
	{ "epoll_ctl_add_itself_einval", SYS_epoll_ctl, 'U', 'E', s_epoll_self, o_epoll, false },
	{ "epoll_ctl_regular_file_eperm", SYS_epoll_ctl, 'U', 'E', s_epoll_file_eperm, o_epoll, false },
	{ "epoll_ctl_not_epoll_einval", SYS_epoll_ctl, 'U', 'E', s_epoll_not_epoll, NULL, false },
	{ "epoll_ctl_ebadf", SYS_epoll_ctl, 'U', 'E', s_epoll_ebadf, o_epoll, false },
	{ "epoll_ctl_efault", SYS_epoll_ctl, 'U', 'E', s_epoll_efault, o_epoll, false },
	{ "epoll_ctl_bad_op", SYS_epoll_ctl, 'U', 'E', s_epoll_bad_op, o_epoll, false },
	{ "epoll_ctl_mod_exclusive_einval", SYS_epoll_ctl, 'U', 'E', s_epoll_exclusive_mod, o_epoll, false },
	{ "madvise_dontneed", SYS_madvise, 'U', 'E', s_madv_dontneed, o_mem, false },
	{ "madvise_willneed", SYS_madvise, 'U', 'E', s_madv_willneed, o_mem, false },
	{ "madvise_free", SYS_madvise, 'U', 'E', s_madv_free, NULL, false },
	{ "madvise_unaligned_einval", SYS_madvise, 'U', 'E', s_madv_unaligned, o_mem, false },
	{ "madvise_bad_advice", SYS_madvise, 'U', 'E', s_madv_bad, o_mem, false },
	{ "madvise_zero_length", SYS_madvise, 'U', 'E', s_madv_zero, o_mem, false },
	{ "madvise_unmapped_enomem", SYS_madvise, 'U', 'E', s_madv_unmapped, o_mem, false },
	{ "madvise_remove_private_einval", SYS_madvise, 'U', 'E', s_madv_remove_private, o_mem, false },
	{ "madvise_length_over_4g_unaligned", SYS_madvise, 'F', 'E', s_madv_huge, o_mem, false },
	{ "madvise_dontfork", SYS_madvise, 'U', 'E', s_madv_dontfork, o_mem, false },
	{ "lseek_set", SYS_lseek, 'T', 'E', s_lseek_set, o_file, false },
	{ "lseek_end", SYS_lseek, 'T', 'E', s_lseek_end, o_file, false },
	{ "lseek_cur", SYS_lseek, 'T', 'E', s_lseek_cur, o_file, false },
	{ "lseek_data", SYS_lseek, 'T', 'E', s_lseek_data, o_file, false },
	{ "lseek_hole_past_end_enxio", SYS_lseek, 'T', 'E', s_lseek_hole_enxio, o_file, false },
	{ "lseek_bad_whence", SYS_lseek, 'T', 'E', s_lseek_bad_whence, o_file, false },
	{ "lseek_negative_einval", SYS_lseek, 'T', 'E', s_lseek_negative, o_file, false },
	{ "lseek_pipe_espipe", SYS_lseek, 'T', 'E', s_lseek_pipe, NULL, false },
	{ "lseek_ebadf", SYS_lseek, 'T', 'E', s_lseek_ebadf, NULL, false },
	{ "fcntl_getfl", SYS_fcntl, 'T', 'E', s_fcntl_getfl, o_fcntl, false },
	{ "fcntl_setfl", SYS_fcntl, 'T', 'E', s_fcntl_setfl, o_fcntl, false },
	{ "fcntl_getfd", SYS_fcntl, 'T', 'E', s_fcntl_getfd, o_fcntl, false },
	{ "fcntl_dupfd_cloexec", SYS_fcntl, 'T', 'D', s_fcntl_dupfd, o_fcntl, false },
	{ "fcntl_setlk", SYS_fcntl, 'T', 'E', s_fcntl_setlk, o_fcntl, false },
	{ "fcntl_ofd_getlk", SYS_fcntl, 'T', 'E', s_fcntl_ofd_getlk, o_fcntl, false },
	{ "fcntl_getpipe_sz", SYS_fcntl, 'T', 'E', s_fcntl_pipe_sz, NULL, false },
	{ "fcntl_bad_cmd", SYS_fcntl, 'T', 'E', s_fcntl_bad_cmd, o_fcntl, false },
	{ "fcntl_ebadf", SYS_fcntl, 'T', 'E', s_fcntl_ebadf, NULL, false },
	{ "dup", SYS_dup, 'T', 'D', s_dup, NULL, false },
	{ "dup_ebadf", SYS_dup, 'T', 'D', s_dup_ebadf, NULL, false },
	{ "fstat", SYS_fstat, 'T', 'E', s_fstat, o_stat, false },
	{ "fstat_ebadf", SYS_fstat, 'T', 'E', s_fstat_ebadf, NULL, false },
	{ "fstat_efault", SYS_fstat, 'T', 'E', s_fstat_efault, NULL, false },
	{ "newfstatat", SYS_newfstatat, 'U', 'E', s_fstatat, o_stat, false },
	{ "newfstatat_enoent", SYS_newfstatat, 'U', 'E', s_fstatat_enoent, o_stat, false },
	{ "newfstatat_symlink_nofollow", SYS_newfstatat, 'U', 'E', s_fstatat_nofollow, o_stat, false },
	{ "newfstatat_at_empty_path", SYS_newfstatat, 'U', 'E', s_fstatat_empty, o_stat, false },
	{ "newfstatat_bad_flags", SYS_newfstatat, 'F', 'E', s_fstatat_bad_flags, o_stat, false },
	{ "newfstatat_efault", SYS_newfstatat, 'F', 'E', s_fstatat_efault, NULL, false },
	{ "newfstatat_path_efault", SYS_newfstatat, 'U', 'E', s_fstatat_path_efault, NULL, false },
	{ "newfstatat_null_path_empty", SYS_newfstatat, 'F', 'E', s_fstatat_null_path, o_stat, false },
	{ "getdents64", SYS_getdents64, 'T', 'E', s_getdents, o_dents, false },
	{ "getdents64_buffer_too_small", SYS_getdents64, 'T', 'E', s_getdents_small, o_dents, false },
	{ "getdents64_at_end", SYS_getdents64, 'T', 'E', s_getdents_end, o_dents, false },
	{ "getdents64_not_dir", SYS_getdents64, 'T', 'E', s_getdents_notdir, NULL, false },
	{ "getdents64_ebadf", SYS_getdents64, 'T', 'E', s_getdents_ebadf, NULL, false },
	{ "getdents64_efault", SYS_getdents64, 'T', 'E', s_getdents_efault, NULL, false },
	{ "ioctl_fionread_pipe", SYS_ioctl, 'T', 'E', s_ioctl_fionread, o_ioctl, false },
	{ "ioctl_fionread_file", SYS_ioctl, 'T', 'E', s_ioctl_fionread_file, o_ioctl, false },
	{ "ioctl_fionbio", SYS_ioctl, 'T', 'E', s_ioctl_fionbio, o_ioctl, false },
	{ "ioctl_enotty", SYS_ioctl, 'T', 'E', s_ioctl_enotty, NULL, false },
	{ "ioctl_efault", SYS_ioctl, 'T', 'E', s_ioctl_efault, NULL, false },
	{ "ioctl_ebadf", SYS_ioctl, 'T', 'E', s_ioctl_ebadf, NULL, false },
	{ "mmap_anonymous", SYS_mmap, 'T', 'P', s_mmap_anon, o_mmap, false },
	{ "mmap_file_shared", SYS_mmap, 'T', 'P', s_mmap_file, o_mmap, false },
	{ "mmap_no_share_type_einval", SYS_mmap, 'T', 'P', s_mmap_bad_flags, NULL, false },
	{ "mmap_zero_length_einval", SYS_mmap, 'T', 'P', s_mmap_zero, NULL, false },
	{ "mmap_ebadf", SYS_mmap, 'T', 'P', s_mmap_ebadf, NULL, false },
	{ "mmap_wronly_file_eacces", SYS_mmap, 'T', 'P', s_mmap_eacces, NULL, false },
	{ "mmap_unaligned_offset", SYS_mmap, 'T', 'P', s_mmap_unaligned_off, NULL, false },
	{ "munmap", SYS_munmap, 'T', 'E', s_munmap, o_munmap, false },
	{ "munmap_unaligned_einval", SYS_munmap, 'T', 'E', s_munmap_unaligned, o_munmap, false },
	{ "munmap_zero_length_einval", SYS_munmap, 'T', 'E', s_munmap_zero, o_munmap, false },
	{ "munmap_never_mapped_ok", SYS_munmap, 'T', 'E', s_munmap_unmapped, NULL, false },
	{ "getpid", SYS_getpid, 'T', 'E', s_none, NULL, false },
	{ "getppid", SYS_getppid, 'T', 'E', s_none, NULL, false },
	{ "getuid", SYS_getuid, 'T', 'E', s_none, NULL, false },
	{ "geteuid", SYS_geteuid, 'T', 'E', s_none, NULL, false },
	{ "getgid", SYS_getgid, 'T', 'E', s_none, NULL, false },
	{ "nobody_getuid", SYS_getuid, 'T', 'E', s_none, NULL, true },
	{ "nobody_geteuid", SYS_geteuid, 'T', 'E', s_none, NULL, true },
	{ "nobody_getgid", SYS_getgid, 'T', 'E', s_none, NULL, true },
	/*
	 * rem is not observed on success: a sleep on the owner may be interrupted
	 * by io_uring task work, and the kernel writes rem before it restarts.
	 */
	{ "nanosleep_10ms", SYS_nanosleep, 'T', 'E', s_nanosleep, NULL, false },
	{ "nanosleep_einval", SYS_nanosleep, 'T', 'E', s_nanosleep_einval, o_nanosleep, false },
	{ "nanosleep_efault", SYS_nanosleep, 'T', 'E', s_nanosleep_efault, NULL, false },
	{ "poll_pipe_readable", SYS_poll, 'N', 'E', s_poll_data, o_poll, false },
	{ "poll_pipe_empty", SYS_poll, 'N', 'E', s_poll_empty, o_poll, false },
	{ "poll_writable_and_pollnval", SYS_poll, 'N', 'E', s_poll_writable_and_nval, o_poll, false },
	{ "poll_pollhup", SYS_poll, 'N', 'E', s_poll_hup, o_poll, false },
	{ "poll_too_many_einval", SYS_poll, 'N', 'E', s_poll_einval, o_poll, false },
	{ "poll_efault", SYS_poll, 'N', 'E', s_poll_efault, NULL, false },
	{ "poll_wait_readable", SYS_poll, 'U', 'E', s_poll_wait_data, o_poll, false },
	{ "poll_wait_timeout_20ms", SYS_poll, 'U', 'E', s_poll_wait_timeout, o_poll, false },
	{ "poll_wait_pollhup", SYS_poll, 'U', 'E', s_poll_wait_hup, o_poll, false },
	{ "poll_wait_closed_pollnval", SYS_poll, 'U', 'E', s_poll_wait_nval, o_poll, false },
	{ "poll_wait_in_or_out", SYS_poll, 'U', 'E', s_poll_wait_in_out, o_poll, false },
	{ "poll_wait_peer_shut_rdhup_unasked", SYS_poll, 'U', 'E', s_poll_wait_rdhup_unasked, o_poll, false },
	{ "poll_wait_output_only", SYS_poll, 'F', 'E', s_poll_wait_out_only, o_poll, false },
	{ "poll_wait_negative_fd", SYS_poll, 'F', 'E', s_poll_wait_negative_fd, o_poll, false },
	{ "poll_wait_two_fds", SYS_poll, 'F', 'E', s_poll_wait_two, o_poll, false },
	{ "poll_wait_too_many_einval", SYS_poll, 'F', 'E', s_poll_wait_einval, o_poll, false },
	{ "poll_wait_efault", SYS_poll, 'F', 'E', s_poll_wait_efault, NULL, false },
	{ "wait4_exited_child", SYS_wait4, 'T', 'C', s_wait4, o_wait, false },
	{ "wait4_any_child", SYS_wait4, 'T', 'K', s_wait4_any, o_wait_any, false },
	{ "wait4_rusage", SYS_wait4, 'T', 'C', s_wait4_rusage, o_wait, false },
	{ "wait4_wnohang_running", SYS_wait4, 'T', 'C', s_wait4_wnohang_running, o_wait, false },
	{ "wait4_not_a_child_echild", SYS_wait4, 'T', 'C', s_wait4_echild, o_wait, false },
	{ "wait4_bad_options_einval", SYS_wait4, 'T', 'C', s_wait4_einval, o_wait, false },
};

static const struct t_known known[] = { { NULL, NULL } };

int main(int argc, char **argv)
{
	return t_run_table("engine_misc", cases, sizeof(cases) / sizeof(cases[0]), known, argc, argv);
}
