// SPDX-License-Identifier: MIT
/*
 * Engine equivalence, files: every io_uring-served file and path call
 * (read, write, the p/v/v2 variants, syncs, open family, close, statx,
 * ftruncate, fallocate, fadvise64, renames, links, directories, xattrs),
 * on success and error paths, gives on every engine the result and the
 * side effects of the plain system call. EACCES cases run as nobody.
 * Harness: engine_harness.h. Usage: engine_files [NAME-SUBSTRING]; T_VERBOSE=1
 * prints each case's reference observation.
 */
#define _GNU_SOURCE
#include <linux/openat2.h>
#include <sys/xattr.h>

#include "engine_harness.h"

#define S(name) static void name(struct fix *f)
#define O(name)                                                                          \
	static void name(struct fix *f __attribute__((unused)),                          \
			 int64_t ret __attribute__((unused)), struct obs *o)

#define F10 "0123456789"
#define BAD_FD 1000
#define BAD_PTR 16

/* p[0] = dir/f holding F10; v[2] = the directory */
S(base)
{
	mkfile(f, 0, "f", F10, 0644);
	mkfile(f, 1, "new", NULL, 0);
	f->v[2] = open(f->dir, O_RDONLY | O_DIRECTORY);
	CHECK(f->v[2] >= 0);
}

/* ---- observers ---- */
O(o_read) { obytes(o, "b0", f->b[0], 16); opos(o, f->v[0]); }
O(o_readv)
{
	obytes(o, "b0", f->b[0], 8);
	obytes(o, "b1", f->b[1], 8);
	obytes(o, "b2", f->b[2], 12);
	if (f->v[0] >= 0)
		opos(o, f->v[0]);
}
O(o_file) { ofile(o, f->p[0]); opos(o, f->v[0]); }
O(o_paths) { ofile(o, f->p[0]); ofile(o, f->p[1]); ofile(o, f->p[2]); }
O(o_pipe) { oqueued(o, "pipe", f->v[0]); obytes(o, "b0", f->b[0], 8); }
O(o_closed) { oprintf(o, " getfd=%d", fcntl(f->v[0], F_GETFD) < 0 ? -errno : 0); }
O(o_statx)
{
	struct statx *x = (struct statx *)f->stx;
	struct stat st;

	if (ret)
		return;
	CHECK_EQ(fstatat(AT_FDCWD, f->p[0], &st, AT_SYMLINK_NOFOLLOW), 0);
	oprintf(o, " basic=%d mode=%o size=%llu nlink=%u ino_ok=%d uid=%u",
		(x->stx_mask & STATX_BASIC_STATS) == STATX_BASIC_STATS, x->stx_mode,
		(unsigned long long)x->stx_size, x->stx_nlink, x->stx_ino == st.st_ino, x->stx_uid);
}
O(o_xattr)
{
	char v[64];
	ssize_t n = getxattr(f->p[0], "user.k", v, sizeof(v));

	if (n < 0)
		oprintf(o, " user.k=<%s>", strerror(errno));
	else
		obytes(o, "user.k", v, n);
	obytes(o, "b0", f->b[0], 8);
}

/* ---- read ---- */
S(s_read4) { base(f); f->v[0] = openp(f, 0, O_RDONLY); ARGS(f, f->v[0], P(f->b[0]), 4); }
S(s_read100) { s_read4(f); f->a[2] = 100; }
S(s_read_at3) { s_read4(f); lseek(f->v[0], 3, SEEK_SET); }
S(s_read_eof) { s_read4(f); lseek(f->v[0], 0, SEEK_END); }
S(s_read_past) { s_read4(f); lseek(f->v[0], 50, SEEK_SET); }
S(s_read_zero) { s_read4(f); f->a[2] = 0; }
S(s_read_ebadf) { base(f); ARGS(f, BAD_FD, P(f->b[0]), 4); }
S(s_read_negfd) { base(f); ARGS(f, (uint64_t)-1, P(f->b[0]), 4); }
S(s_read_wronly) { base(f); f->v[0] = openp(f, 0, O_WRONLY); ARGS(f, f->v[0], P(f->b[0]), 4); }
S(s_read_dir) { base(f); f->v[0] = f->v[2]; ARGS(f, f->v[0], P(f->b[0]), 4); }
S(s_read_efault) { s_read4(f); f->a[1] = BAD_PTR; }
S(s_read_huge) { s_read4(f); f->a[2] = 1ull << 33; }
S(s_read_pipe) { base(f); mkpipe(f, 0); CHECK_EQ(write(f->v[1], "hello", 5), 5); ARGS(f, f->v[0], P(f->b[0]), 100); }
S(s_read_pipe_eof) { base(f); mkpipe(f, 0); close(f->v[1]); ARGS(f, f->v[0], P(f->b[0]), 100); }
S(s_read_pipe_eagain) { base(f); mkpipe(f, O_NONBLOCK); ARGS(f, f->v[0], P(f->b[0]), 100); }

/* ---- pread64 ---- */
S(s_pread) { s_read4(f); f->a[3] = 3; }
S(s_pread_part) { s_read4(f); f->a[2] = 100; f->a[3] = 5; }
S(s_pread_eof) { s_read4(f); f->a[3] = 10; }
S(s_pread_beyond) { s_read4(f); f->a[3] = 100; }
S(s_pread_neg1) { s_read4(f); f->a[3] = (uint64_t)-1; }
S(s_pread_neg5) { s_read4(f); f->a[3] = (uint64_t)-5; }
S(s_pread_ebadf) { s_read_ebadf(f); }
S(s_pread_huge) { s_read4(f); f->a[2] = 1ull << 33; f->a[3] = 2; }
S(s_pread_pipe) { s_read_pipe(f); f->a[2] = 4; f->a[3] = 0; }

/* ---- write ---- */
S(s_write)
{
	base(f);
	f->v[0] = openp(f, 0, O_RDWR);
	lseek(f->v[0], 2, SEEK_SET);
	memcpy(f->b[0], "ABC", 3);
	ARGS(f, f->v[0], P(f->b[0]), 3);
}
S(s_write_extend) { s_write(f); lseek(f->v[0], 0, SEEK_END); }
S(s_write_hole) { s_write(f); lseek(f->v[0], 20, SEEK_SET); }
S(s_write_append)
{
	s_write(f);
	close(f->v[0]);
	f->v[0] = openp(f, 0, O_WRONLY | O_APPEND);
	f->a[0] = (uint64_t)f->v[0];
}
S(s_write_rdonly) { s_write(f); close(f->v[0]); f->v[0] = openp(f, 0, O_RDONLY); f->a[0] = (uint64_t)f->v[0]; }
S(s_write_ebadf) { s_write(f); f->a[0] = BAD_FD; }
S(s_write_efault) { s_write(f); f->a[1] = BAD_PTR; }
S(s_write_pipe) { base(f); mkpipe(f, 0); memcpy(f->b[0], "hello", 5); ARGS(f, f->v[1], P(f->b[0]), 5); }
S(s_write_epipe) { s_write_pipe(f); close(f->v[0]); f->v[0] = -1; }
/* 15 of the pipe's 16 pages full: a 5000-byte write fits one more page */
S(s_write_pipe_partial)
{
	base(f);
	mkpipe(f, O_NONBLOCK);
	CHECK_EQ(write(f->v[1], f->big, 61440), 61440);
	ARGS(f, f->v[1], P(f->big), 5000);
}
S(s_write_pipe_full)
{
	s_write_pipe_partial(f);
	CHECK_EQ(write(f->v[1], f->big, 4096), 4096);
	f->a[2] = 10;
}
S(s_write_pipe_big) { base(f); mkpipe(f, O_NONBLOCK); ARGS(f, f->v[1], P(f->big), 100000); }

/* ---- pwrite64 ---- */
S(s_pwrite) { s_write(f); f->a[3] = 8; }
S(s_pwrite_hole) { s_write(f); f->a[3] = 20; }
S(s_pwrite_neg) { s_write(f); f->a[3] = (uint64_t)-1; }
S(s_pwrite_rdonly) { s_write_rdonly(f); f->a[3] = 0; }
S(s_pwrite_pipe) { s_write_pipe(f); f->a[3] = 0; }

/* ---- readv / preadv / preadv2 ---- */
static void iov3(struct fix *f)
{
	f->iov[0] = (struct iovec){ f->b[0], 3 };
	f->iov[1] = (struct iovec){ f->b[1], 4 };
	f->iov[2] = (struct iovec){ f->b[2], 10 };
}
S(s_readv) { s_read4(f); iov3(f); ARGS(f, f->v[0], P(f->iov), 3); }
S(s_readv_at5) { s_readv(f); lseek(f->v[0], 5, SEEK_SET); }
S(s_readv_zero) { s_readv(f); f->a[2] = 0; }
S(s_readv_toomany) { s_readv(f); f->a[2] = 1025; }
S(s_readv_negcnt) { s_readv(f); f->a[2] = (uint64_t)-1; }
S(s_readv_ebadf) { s_readv(f); f->a[0] = BAD_FD; }
S(s_readv_badiov) { s_readv(f); f->a[1] = BAD_PTR; }
S(s_readv_badbuf) { s_readv(f); f->iov[1].iov_base = (void *)BAD_PTR; }
S(s_readv_pipe_eagain) { base(f); mkpipe(f, O_NONBLOCK); iov3(f); ARGS(f, f->v[0], P(f->iov), 3); }
S(s_preadv) { s_readv(f); f->a[3] = 2; }
S(s_preadv_beyond) { s_readv(f); f->a[3] = 11; }
S(s_preadv_neg) { s_readv(f); f->a[3] = (uint64_t)-1; }
S(s_preadv2_off) { s_readv(f); f->a[3] = 1; }
S(s_preadv2_cur) { s_readv(f); lseek(f->v[0], 4, SEEK_SET); f->a[3] = (uint64_t)-1; }
S(s_preadv2_neg2) { s_readv(f); f->a[3] = (uint64_t)-2; }
S(s_preadv2_badflags) { s_readv(f); f->a[5] = 0x80000000u; }
S(s_preadv2_hipri) { s_readv(f); f->a[5] = RWF_HIPRI; }
S(s_preadv2_nowait) { s_readv(f); f->a[5] = RWF_NOWAIT; }
S(s_preadv_pipe) { base(f); mkpipe(f, 0); CHECK_EQ(write(f->v[1], "hello", 5), 5); iov3(f); f->v[0] = f->v[0]; ARGS(f, f->v[0], P(f->iov), 3, 0); }
S(s_preadv2_pipe) { s_preadv_pipe(f); }
S(s_preadv2_pipe_cur) { s_preadv_pipe(f); f->a[3] = (uint64_t)-1; }
S(s_preadv2_nowait_pipe) { base(f); mkpipe(f, 0); iov3(f); ARGS(f, f->v[0], P(f->iov), 3, (uint64_t)-1, 0, RWF_NOWAIT); }

/* ---- writev / pwritev / pwritev2 ---- */
static void iov_w(struct fix *f)
{
	memcpy(f->b[0], "AB", 2);
	memcpy(f->b[1], "CDE", 3);
	f->iov[0] = (struct iovec){ f->b[0], 2 };
	f->iov[1] = (struct iovec){ f->b[1], 3 };
}
S(s_writev) { s_write(f); lseek(f->v[0], 1, SEEK_SET); iov_w(f); ARGS(f, f->v[0], P(f->iov), 2); }
S(s_writev_rdonly) { s_write_rdonly(f); iov_w(f); ARGS(f, f->v[0], P(f->iov), 2); }
S(s_writev_epipe) { s_write_epipe(f); iov_w(f); ARGS(f, f->v[1], P(f->iov), 2); }
S(s_pwritev) { s_writev(f); f->a[3] = 7; }
S(s_pwritev_neg) { s_writev(f); f->a[3] = (uint64_t)-7; }
S(s_pwritev2_cur) { s_writev(f); f->a[3] = (uint64_t)-1; }
S(s_pwritev2_off) { s_writev(f); f->a[3] = 0; }
S(s_pwritev2_hipri) { s_writev(f); f->a[3] = 0; f->a[5] = RWF_HIPRI; }
S(s_pwritev_pipe) { base(f); mkpipe(f, 0); iov_w(f); ARGS(f, f->v[1], P(f->iov), 2, 0); }
S(s_writev_badbuf) { s_writev(f); f->iov[1].iov_base = (void *)BAD_PTR; }
S(s_pwritev2_append) { s_writev(f); f->a[3] = 0; f->a[5] = RWF_APPEND; }

/* ---- fsync, fdatasync, sync_file_range ---- */
S(s_fsync) { s_write(f); ARGS(f, f->v[0]); }
S(s_fsync_rdonly) { s_read4(f); ARGS(f, f->v[0]); }
S(s_fsync_ebadf) { base(f); ARGS(f, BAD_FD); }
S(s_fsync_pipe) { base(f); mkpipe(f, 0); ARGS(f, f->v[0]); }
S(s_sfr) { s_write(f); ARGS(f, f->v[0], 0, 10, SYNC_FILE_RANGE_WRITE); }
S(s_sfr_wait) { s_sfr(f); f->a[3] = SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER; }
S(s_sfr_badflags) { s_sfr(f); f->a[3] = 0x80; }
S(s_sfr_negoff) { s_sfr(f); f->a[1] = (uint64_t)-4096; }
S(s_sfr_huge) { s_sfr(f); f->a[2] = 1ull << 33; }
S(s_sfr_pipe) { base(f); mkpipe(f, 0); ARGS(f, f->v[0], 0, 10, SYNC_FILE_RANGE_WRITE); }
S(s_sfr_ebadf) { s_sfr(f); f->a[0] = BAD_FD; }

/* ---- open, creat, openat, openat2 ---- */
S(s_open) { base(f); ARGS(f, P(f->p[0]), O_RDONLY); }
S(s_open_flags) { base(f); ARGS(f, P(f->p[0]), O_RDWR | O_APPEND | O_NONBLOCK | O_CLOEXEC); }
S(s_open_enoent) { base(f); ARGS(f, P(f->p[1]), O_RDONLY); }
S(s_open_creat) { base(f); ARGS(f, P(f->p[1]), O_CREAT | O_WRONLY, 0751); }
S(s_open_excl) { base(f); ARGS(f, P(f->p[0]), O_CREAT | O_EXCL | O_WRONLY, 0600); }
S(s_open_trunc) { base(f); ARGS(f, P(f->p[0]), O_WRONLY | O_TRUNC); }
S(s_open_enotdir) { base(f); pjoin(f->p[1], sizeof(f->p[1]), f->dir, "f/x"); ARGS(f, P(f->p[1]), O_RDONLY); }
S(s_open_eisdir) { base(f); ARGS(f, P(f->dir), O_WRONLY); }
S(s_open_dir_on_file) { base(f); ARGS(f, P(f->p[0]), O_RDONLY | O_DIRECTORY); }
S(s_open_efault) { base(f); ARGS(f, BAD_PTR, O_RDONLY); }
S(s_open_eloop)
{
	base(f);
	mkfile(f, 2, "loop", NULL, 0);
	CHECK_EQ(symlink("loop", f->p[2]), 0);
	ARGS(f, P(f->p[2]), O_RDONLY);
}
S(s_open_nofollow)
{
	base(f);
	mkfile(f, 2, "sym", NULL, 0);
	CHECK_EQ(symlink("f", f->p[2]), 0);
	ARGS(f, P(f->p[2]), O_RDONLY | O_NOFOLLOW);
}
S(s_open_path) { s_open_nofollow(f); f->a[1] = O_PATH | O_NOFOLLOW; }
S(s_open_tmpfile) { base(f); ARGS(f, P(f->dir), O_TMPFILE | O_RDWR, 0600); }
S(s_open_toolong)
{
	base(f);
	memset(f->big, 'n', 300);
	f->big[300] = 0;
	ARGS(f, P(f->big), O_RDONLY);
}
S(s_creat) { base(f); ARGS(f, P(f->p[1]), 0604); }
S(s_creat_existing) { base(f); ARGS(f, P(f->p[0]), 0600); }
S(s_creat_eisdir) { base(f); ARGS(f, P(f->dir), 0600); }
S(s_openat) { base(f); ARGS(f, f->v[2], P("f"), O_RDONLY); }
S(s_openat_abs) { base(f); ARGS(f, BAD_FD, P(f->p[0]), O_RDONLY); }
S(s_openat_ebadf) { base(f); ARGS(f, BAD_FD, P("f"), O_RDONLY); }
S(s_openat_enotdir) { base(f); f->v[0] = openp(f, 0, O_RDONLY); ARGS(f, f->v[0], P("x"), O_RDONLY); }
S(s_openat_creat) { base(f); ARGS(f, f->v[2], P("new"), O_CREAT | O_RDWR | O_EXCL, 0640); }
S(s_openat_cwd) { base(f); ARGS(f, AT_FDCWD, P("f"), O_WRONLY | O_CLOEXEC); }
static void how(struct fix *f, uint64_t flags, uint64_t mode, uint64_t resolve)
{
	struct open_how *h = (struct open_how *)f->how;
	h->flags = flags, h->mode = mode, h->resolve = resolve;
}
S(s_openat2) { base(f); how(f, O_RDONLY, 0, RESOLVE_BENEATH); ARGS(f, f->v[2], P("f"), P(f->how), sizeof(struct open_how)); }
S(s_openat2_exdev) { s_openat2(f); f->a[1] = P("../x"); }
S(s_openat2_small) { s_openat2(f); f->a[3] = 8; }
S(s_openat2_big) { s_openat2(f); f->a[3] = 64; }
S(s_openat2_bigdirty) { s_openat2(f); f->a[3] = 64; f->how[40] = 1; }
S(s_openat2_badresolve) { s_openat2(f); how(f, O_RDONLY, 0, 1u << 30); }
S(s_openat2_badmode) { s_openat2(f); how(f, O_RDONLY, 0644, 0); }
S(s_openat2_creat) { s_openat2(f); f->a[1] = P("new"); how(f, O_CREAT | O_WRONLY, 0640, RESOLVE_NO_SYMLINKS); }

S(s_open_null) { base(f); ARGS(f, 0, O_RDONLY); }
S(s_openat_null_empty) { base(f); ARGS(f, f->v[2], 0, O_RDONLY); }

/* ---- close ---- */
S(s_close) { s_read4(f); ARGS(f, f->v[0]); }
S(s_close_ebadf) { base(f); ARGS(f, BAD_FD); }
S(s_close_neg) { base(f); ARGS(f, (uint64_t)-1); }

/* ---- statx ---- */
S(s_statx) { base(f); ARGS(f, AT_FDCWD, P(f->p[0]), AT_STATX_SYNC_AS_STAT, STATX_BASIC_STATS, P(f->stx)); }
S(s_statx_enoent) { s_statx(f); f->a[1] = P(f->p[1]); }
S(s_statx_dirfd) { s_statx(f); f->a[0] = (uint64_t)f->v[2]; f->a[1] = P("f"); }
S(s_statx_empty) { s_statx(f); f->v[0] = openp(f, 0, O_RDONLY); ARGS(f, f->v[0], P(""), AT_EMPTY_PATH, STATX_BASIC_STATS, P(f->stx)); }
S(s_statx_nullpath) { s_statx_empty(f); f->a[1] = 0; }
S(s_statx_badflags) { s_statx(f); f->a[2] = 0x40000000; }
S(s_statx_nofollow)
{
	s_statx(f);
	mkfile(f, 2, "sym", NULL, 0);
	CHECK_EQ(symlink("f", f->p[2]), 0);
	f->a[1] = P(f->p[2]);
	f->a[2] = AT_SYMLINK_NOFOLLOW;
}
S(s_statx_efault) { s_statx(f); f->a[4] = BAD_PTR; }
S(s_statx_reserved) { s_statx(f); f->a[3] = STATX__RESERVED; }

/* ---- ftruncate, fallocate, fadvise64 ---- */
S(s_ftruncate) { s_write(f); ARGS(f, f->v[0], 3); }
S(s_ftruncate_grow) { s_ftruncate(f); f->a[1] = 20; }
S(s_ftruncate_neg) { s_ftruncate(f); f->a[1] = (uint64_t)-1; }
S(s_ftruncate_rdonly) { s_read4(f); ARGS(f, f->v[0], 3); }
S(s_ftruncate_pipe) { base(f); mkpipe(f, 0); ARGS(f, f->v[1], 3); }
S(s_ftruncate_ebadf) { s_ftruncate(f); f->a[0] = BAD_FD; }
S(s_fallocate) { s_write(f); ARGS(f, f->v[0], 0, 0, 8192); }
S(s_fallocate_keep) { s_fallocate(f); f->a[1] = FALLOC_FL_KEEP_SIZE; }
S(s_fallocate_punch) { s_fallocate(f); f->a[1] = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE; f->a[2] = 2; f->a[3] = 3; }
S(s_fallocate_badmode) { s_fallocate(f); f->a[1] = 0x1000; }
S(s_fallocate_zero) { s_fallocate(f); f->a[3] = 0; }
S(s_fallocate_neg) { s_fallocate(f); f->a[2] = (uint64_t)-1; }
S(s_fallocate_rdonly) { s_read4(f); ARGS(f, f->v[0], 0, 0, 8192); }
S(s_fallocate_pipe) { base(f); mkpipe(f, 0); ARGS(f, f->v[1], 0, 0, 10); }
S(s_fadvise) { s_read4(f); ARGS(f, f->v[0], 0, 10, POSIX_FADV_WILLNEED); }
S(s_fadvise_dontneed) { s_fadvise(f); f->a[3] = POSIX_FADV_DONTNEED; }
S(s_fadvise_bad) { s_fadvise(f); f->a[3] = 99; }
S(s_fadvise_pipe) { base(f); mkpipe(f, 0); ARGS(f, f->v[0], 0, 10, POSIX_FADV_NORMAL); }
S(s_fadvise_ebadf) { s_fadvise(f); f->a[0] = BAD_FD; }
S(s_fadvise_neglen) { s_fadvise(f); f->a[2] = (uint64_t)-1; }
S(s_fadvise_biglen) { s_fadvise(f); f->a[2] = 1ull << 33; }

/* ---- names: rename*, unlink*, rmdir, mkdir*, symlink*, link* ---- */
S(names)
{
	base(f);
	mkfile(f, 1, "g", "other", 0600);
	mkfile(f, 2, "d", NULL, 0);
	CHECK_EQ(mkdir(f->p[2], 0755), 0);
	char p[600];
	pjoin(p, sizeof(p), f->p[2], "in");
	CHECK_EQ(mkdir(p, 0755), 0);
}
S(s_rename) { names(f); unlink(f->p[1]); ARGS(f, P(f->p[0]), P(f->p[1])); }
S(s_rename_over) { names(f); ARGS(f, P(f->p[0]), P(f->p[1])); }
S(s_rename_enoent) { names(f); unlink(f->p[0]); ARGS(f, P(f->p[0]), P(f->p[1])); }
S(s_rename_eisdir) { names(f); ARGS(f, P(f->p[0]), P(f->p[2])); }
S(s_rename_einval) { names(f); pjoin(f->p[3], sizeof(f->p[3]), f->p[2], "in/x"); ARGS(f, P(f->p[2]), P(f->p[3])); }
S(s_renameat) { names(f); ARGS(f, f->v[2], P("f"), AT_FDCWD, P(f->p[1])); }
S(s_renameat_ebadf) { names(f); ARGS(f, BAD_FD, P("f"), f->v[2], P("h")); }
S(s_renameat2_noreplace) { names(f); ARGS(f, f->v[2], P("f"), f->v[2], P("g"), RENAME_NOREPLACE); }
S(s_renameat2_noreplace_ok) { s_renameat2_noreplace(f); unlink(f->p[1]); }
S(s_renameat2_exchange) { names(f); ARGS(f, f->v[2], P("f"), f->v[2], P("g"), RENAME_EXCHANGE); }
S(s_renameat2_whiteout) { names(f); ARGS(f, f->v[2], P("f"), f->v[2], P("g"), RENAME_WHITEOUT); }
S(s_renameat2_bad) { names(f); ARGS(f, f->v[2], P("f"), f->v[2], P("g"), RENAME_NOREPLACE | RENAME_EXCHANGE); }
S(s_rename_null) { names(f); ARGS(f, 0, P(f->p[1])); }
S(s_renameat2_null) { names(f); ARGS(f, f->v[2], P("f"), f->v[2], 0, 0); }
S(s_unlinkat_null) { names(f); ARGS(f, f->v[2], 0, 0); }
S(s_mkdirat_null) { names(f); ARGS(f, f->v[2], 0, 0700); }
S(s_symlinkat_null) { names(f); ARGS(f, 0, f->v[2], P("s")); }
S(s_linkat_null_empty) { names(f); f->v[0] = openp(f, 0, O_RDONLY); ARGS(f, f->v[0], 0, f->v[2], P("h"), AT_EMPTY_PATH); }
S(s_unlink) { names(f); ARGS(f, P(f->p[0])); }
S(s_unlink_enoent) { names(f); unlink(f->p[0]); ARGS(f, P(f->p[0])); }
S(s_unlink_dir) { names(f); ARGS(f, P(f->p[2])); }
S(s_rmdir) { names(f); pjoin(f->p[3], sizeof(f->p[3]), f->p[2], "in"); ARGS(f, P(f->p[3])); }
S(s_rmdir_notempty) { names(f); ARGS(f, P(f->p[2])); }
S(s_rmdir_file) { names(f); ARGS(f, P(f->p[0])); }
S(s_rmdir_enoent) { names(f); ARGS(f, P("/nonexistent-flexsc-dir")); }
S(s_unlinkat) { names(f); ARGS(f, f->v[2], P("f"), 0); }
S(s_unlinkat_rmdir) { names(f); ARGS(f, f->v[2], P("d/in"), AT_REMOVEDIR); }
S(s_unlinkat_dir) { names(f); ARGS(f, f->v[2], P("d"), 0); }
S(s_unlinkat_badflag) { names(f); ARGS(f, f->v[2], P("f"), 0x1); }
S(s_unlinkat_ebadf) { names(f); ARGS(f, BAD_FD, P("f"), 0); }
S(s_mkdir) { names(f); pjoin(f->p[3], sizeof(f->p[3]), f->dir, "m"); ARGS(f, P(f->p[3]), 0750); }
S(s_mkdir_eexist) { names(f); ARGS(f, P(f->p[2]), 0750); }
S(s_mkdir_enoent) { names(f); pjoin(f->p[3], sizeof(f->p[3]), f->dir, "no/m"); ARGS(f, P(f->p[3]), 0750); }
S(s_mkdirat) { names(f); ARGS(f, f->v[2], P("d/m"), 0700); }
S(s_mkdirat_ebadf) { names(f); ARGS(f, BAD_FD, P("m"), 0700); }
S(s_mkdirat_enotdir) { names(f); ARGS(f, f->v[2], P("f/m"), 0700); }
S(s_symlink) { names(f); unlink(f->p[1]); ARGS(f, P("target"), P(f->p[1])); }
S(s_symlink_eexist) { names(f); ARGS(f, P("target"), P(f->p[1])); }
S(s_symlink_enoent) { names(f); pjoin(f->p[3], sizeof(f->p[3]), f->dir, "no/s"); ARGS(f, P("t"), P(f->p[3])); }
S(s_symlink_empty) { names(f); unlink(f->p[1]); ARGS(f, P(""), P(f->p[1])); }
S(s_symlinkat) { names(f); unlink(f->p[1]); ARGS(f, P("f"), f->v[2], P("g")); }
S(s_symlinkat_ebadf) { names(f); ARGS(f, P("f"), BAD_FD, P("s")); }
S(s_link) { names(f); unlink(f->p[1]); ARGS(f, P(f->p[0]), P(f->p[1])); }
S(s_link_eexist) { names(f); ARGS(f, P(f->p[0]), P(f->p[1])); }
S(s_link_enoent) { s_link(f); unlink(f->p[0]); }
S(s_link_dir) { names(f); unlink(f->p[1]); ARGS(f, P(f->p[2]), P(f->p[1])); }
S(s_linkat) { names(f); unlink(f->p[1]); ARGS(f, f->v[2], P("f"), f->v[2], P("g"), 0); }
S(s_linkat_sym)
{
	s_linkat(f);
	mkfile(f, 3, "sym", NULL, 0);
	CHECK_EQ(symlink("f", f->p[3]), 0);
	f->a[1] = P("sym");
}
S(s_linkat_follow) { s_linkat_sym(f); f->a[4] = AT_SYMLINK_FOLLOW; }
S(s_linkat_empty) { s_linkat(f); f->v[0] = openp(f, 0, O_RDONLY); ARGS(f, f->v[0], P(""), f->v[2], P("g"), AT_EMPTY_PATH); }
S(s_linkat_badflags) { s_linkat(f); f->a[4] = 0x2; }
O(o_names)
{
	char p[600];

	ofile(o, f->p[0]);
	ofile(o, f->p[1]);
	ofile(o, f->p[2]);
	if (f->p[3][0])
		ofile(o, f->p[3]);
	pjoin(p, sizeof(p), f->p[2], "in");
	ofile(o, p);
	pjoin(p, sizeof(p), f->p[2], "m");
	ofile(o, p);
	pjoin(p, sizeof(p), f->dir, "m");
	ofile(o, p);
	pjoin(p, sizeof(p), f->dir, "s");
	ofile(o, p);
	pjoin(p, sizeof(p), f->dir, "h");
	ofile(o, p);
}

/* ---- xattrs ---- */
S(s_setxattr) { base(f); memcpy(f->b[0], "v1", 2); ARGS(f, P(f->p[0]), P("user.k"), P(f->b[0]), 2, 0); }
S(xattr_set)
{
	base(f);
	CHECK_EQ(setxattr(f->p[0], "user.k", "old", 3, 0), 0);
	memcpy(f->b[0], "v1", 2);
	ARGS(f, P(f->p[0]), P("user.k"), P(f->b[0]), 2, 0);
}
S(s_setxattr_create) { xattr_set(f); f->a[4] = XATTR_CREATE; }
S(s_setxattr_replace) { s_setxattr(f); f->a[4] = XATTR_REPLACE; }
S(s_setxattr_replace_ok) { xattr_set(f); f->a[4] = XATTR_REPLACE; }
S(s_setxattr_badns) { s_setxattr(f); f->a[1] = P("foo.k"); }
S(s_setxattr_emptyname) { s_setxattr(f); f->a[1] = P(""); }
S(s_setxattr_badflags) { s_setxattr(f); f->a[4] = 4; }
S(s_setxattr_enoent) { s_setxattr(f); f->a[0] = P(f->p[1]); }
S(s_setxattr_huge) { s_setxattr(f); f->a[3] = 1ull << 33; }
S(s_setxattr_nullpath) { s_setxattr(f); f->a[0] = 0; }
S(s_setxattr_nullvalue) { s_setxattr(f); f->a[2] = 0; f->a[3] = 0; }
S(s_fsetxattr) { s_setxattr(f); f->v[0] = openp(f, 0, O_RDONLY); f->a[0] = (uint64_t)f->v[0]; }
S(s_fsetxattr_ebadf) { s_setxattr(f); f->a[0] = BAD_FD; }
S(s_getxattr) { xattr_set(f); ARGS(f, P(f->p[0]), P("user.k"), P(f->b[0]), 100); }
S(s_getxattr_nullpath) { s_getxattr(f); f->a[0] = 0; }
S(s_getxattr_size0) { s_getxattr(f); f->a[2] = 0; f->a[3] = 0; }
S(s_getxattr_erange) { s_getxattr(f); f->a[3] = 1; }
S(s_getxattr_enodata) { s_getxattr(f); f->a[1] = P("user.none"); }
S(s_getxattr_enoent) { s_getxattr(f); f->a[0] = P(f->p[1]); }
S(s_fgetxattr) { s_getxattr(f); f->v[0] = openp(f, 0, O_RDONLY); f->a[0] = (uint64_t)f->v[0]; }
S(s_fgetxattr_ebadf) { s_getxattr(f); f->a[0] = BAD_FD; }
S(s_fgetxattr_pipe) { s_getxattr(f); mkpipe(f, 0); f->a[0] = (uint64_t)f->v[0]; f->a[1] = P("user.k"); }

/* ---- as nobody: EACCES (fixtures are built by root, the calls run as 65534) ---- */
S(acc)
{
	base(f);
	CHECK_EQ(chmod(f->p[0], 0600), 0);                         /* root's secret */
	mkfile(f, 2, "locked", NULL, 0);
	CHECK_EQ(mkdir(f->p[2], 0700), 0);                         /* root's private directory */
	char p[600];
	pjoin(p, sizeof(p), f->p[2], "in");
	CHECK_EQ(mkdir(p, 0755), 0);
	mkfile(f, 3, "pub", "public", 0644);
	pjoin(f->p[1], sizeof(f->p[1]), f->dir, "new"); /* the fixture dir is root's, 0755 */
}
S(s_acc_open) { acc(f); ARGS(f, P(f->p[0]), O_RDONLY); }
S(s_acc_open_w) { acc(f); ARGS(f, P(f->p[3]), O_WRONLY); }
S(s_acc_creat) { acc(f); ARGS(f, P(f->p[1]), 0644); }
S(s_acc_openat) { acc(f); f->v[0] = f->v[2]; ARGS(f, f->v[2], P("f"), O_RDONLY); }
S(s_acc_openat_search) { acc(f); ARGS(f, f->v[2], P("locked/in"), O_RDONLY | O_DIRECTORY); }
S(s_acc_openat2) { acc(f); how(f, O_RDONLY, 0, 0); ARGS(f, f->v[2], P("f"), P(f->how), sizeof(struct open_how)); }
S(s_acc_mkdir) { acc(f); ARGS(f, P(f->p[1]), 0755); }
S(s_acc_mkdirat) { acc(f); ARGS(f, f->v[2], P("locked/in/x"), 0755); }
S(s_acc_unlink) { acc(f); ARGS(f, P(f->p[3])); }
S(s_acc_unlinkat) { acc(f); ARGS(f, f->v[2], P("pub"), 0); }
S(s_acc_rmdir) { acc(f); ARGS(f, P(f->p[2])); }
S(s_acc_rename) { acc(f); ARGS(f, P(f->p[3]), P(f->p[1])); }
S(s_acc_renameat2) { acc(f); ARGS(f, f->v[2], P("pub"), f->v[2], P("f"), RENAME_EXCHANGE); }
S(s_acc_symlink) { acc(f); ARGS(f, P("pub"), P(f->p[1])); }
S(s_acc_symlinkat) { acc(f); ARGS(f, P("pub"), f->v[2], P("new")); }
S(s_acc_link) { acc(f); ARGS(f, P(f->p[3]), P(f->p[1])); }
S(s_acc_linkat) { acc(f); ARGS(f, f->v[2], P("pub"), f->v[2], P("new"), 0); }
S(s_acc_statx) { acc(f); ARGS(f, f->v[2], P("locked/in"), 0, STATX_BASIC_STATS, P(f->stx)); }
S(s_acc_setxattr) { acc(f); memcpy(f->b[0], "v", 1); ARGS(f, P(f->p[3]), P("user.k"), P(f->b[0]), 1, 0); }
S(s_acc_getxattr) { acc(f); ARGS(f, f->v[2], 0, 0, 0); f->a[0] = P(f->p[2]); f->a[1] = P("user.k"); f->a[2] = P(f->b[0]); f->a[3] = 10; }
S(s_acc_getxattr_in) { s_acc_getxattr(f); pjoin(f->p[1], sizeof(f->p[1]), f->p[2], "in"); f->a[0] = P(f->p[1]); }
S(s_acc_fsetxattr) { acc(f); f->v[0] = openp(f, 3, O_RDONLY); memcpy(f->b[0], "v", 1); ARGS(f, f->v[0], P("user.k"), P(f->b[0]), 1, 0); }
S(s_acc_ftruncate) { acc(f); f->v[0] = openp(f, 3, O_RDONLY); ARGS(f, f->v[0], 1); }
O(o_acc) { ofile(o, f->p[0]); ofile(o, f->p[1]); ofile(o, f->p[3]); }

static const struct tcase cases[] = {
	{ "read_4", SYS_read, 'F', 'E', s_read4, o_read, false },
	{ "read_partial_100_of_10", SYS_read, 'F', 'E', s_read100, o_read, false },
	{ "read_from_position_3", SYS_read, 'F', 'E', s_read_at3, o_read, false },
	{ "read_eof", SYS_read, 'F', 'E', s_read_eof, o_read, false },
	{ "read_past_eof", SYS_read, 'F', 'E', s_read_past, o_read, false },
	{ "read_zero_bytes", SYS_read, 'F', 'E', s_read_zero, o_read, false },
	{ "read_ebadf", SYS_read, 'U', 'E', s_read_ebadf, o_read, false },
	{ "read_fd_minus1", SYS_read, 'U', 'E', s_read_negfd, o_read, false },
	{ "read_wronly_ebadf", SYS_read, 'F', 'E', s_read_wronly, o_read, false },
	{ "read_directory_eisdir", SYS_read, 'U', 'E', s_read_dir, o_read, false },
	{ "read_efault", SYS_read, 'F', 'E', s_read_efault, o_read, false },
	{ "read_count_over_4g", SYS_read, 'F', 'E', s_read_huge, o_read, false },
	{ "read_pipe", SYS_read, 'U', 'E', s_read_pipe, o_pipe, false },
	{ "read_pipe_eof", SYS_read, 'U', 'E', s_read_pipe_eof, o_pipe, false },
	{ "read_pipe_nonblock_eagain", SYS_read, 'N', 'E', s_read_pipe_eagain, o_pipe, false },
	{ "pread_4_at_3", SYS_pread64, 'U', 'E', s_pread, o_read, false },
	{ "pread_partial", SYS_pread64, 'U', 'E', s_pread_part, o_read, false },
	{ "pread_at_eof", SYS_pread64, 'U', 'E', s_pread_eof, o_read, false },
	{ "pread_beyond_eof", SYS_pread64, 'U', 'E', s_pread_beyond, o_read, false },
	{ "pread_offset_minus1_einval", SYS_pread64, 'F', 'E', s_pread_neg1, o_read, false },
	{ "pread_offset_minus5_einval", SYS_pread64, 'F', 'E', s_pread_neg5, o_read, false },
	{ "pread_ebadf", SYS_pread64, 'U', 'E', s_pread_ebadf, o_read, false },
	{ "pread_count_over_4g", SYS_pread64, 'F', 'E', s_pread_huge, o_read, false },
	{ "pread_pipe_espipe", SYS_pread64, 'A', 'E', s_pread_pipe, o_pipe, false },
	{ "write_3_at_2", SYS_write, 'F', 'E', s_write, o_file, false },
	{ "write_extend", SYS_write, 'F', 'E', s_write_extend, o_file, false },
	{ "write_after_hole", SYS_write, 'F', 'E', s_write_hole, o_file, false },
	{ "write_append", SYS_write, 'F', 'E', s_write_append, o_file, false },
	{ "write_rdonly_ebadf", SYS_write, 'F', 'E', s_write_rdonly, o_file, false },
	{ "write_ebadf", SYS_write, 'U', 'E', s_write_ebadf, o_file, false },
	{ "write_efault", SYS_write, 'F', 'E', s_write_efault, o_file, false },
	{ "write_pipe", SYS_write, 'U', 'E', s_write_pipe, o_pipe, false },
	{ "write_pipe_no_reader_epipe", SYS_write, 'U', 'E', s_write_epipe, NULL, false },
	{ "write_pipe_nonblock_partial", SYS_write, 'N', 'E', s_write_pipe_partial, o_pipe, false },
	{ "write_pipe_nonblock_full_eagain", SYS_write, 'N', 'E', s_write_pipe_full, o_pipe, false },
	{ "write_pipe_nonblock_100000", SYS_write, 'N', 'E', s_write_pipe_big, o_pipe, false },
	{ "pwrite_at_8", SYS_pwrite64, 'F', 'E', s_pwrite, o_file, false },
	{ "pwrite_after_hole", SYS_pwrite64, 'F', 'E', s_pwrite_hole, o_file, false },
	{ "pwrite_offset_minus1_einval", SYS_pwrite64, 'F', 'E', s_pwrite_neg, o_file, false },
	{ "pwrite_rdonly_ebadf", SYS_pwrite64, 'F', 'E', s_pwrite_rdonly, o_file, false },
	{ "pwrite_pipe_espipe", SYS_pwrite64, 'A', 'E', s_pwrite_pipe, o_pipe, false },
	{ "readv_3_iovecs", SYS_readv, 'F', 'E', s_readv, o_readv, false },
	{ "readv_from_position_5", SYS_readv, 'F', 'E', s_readv_at5, o_readv, false },
	{ "readv_zero_iovecs", SYS_readv, 'F', 'E', s_readv_zero, o_readv, false },
	{ "readv_1025_iovecs_einval", SYS_readv, 'F', 'E', s_readv_toomany, o_readv, false },
	{ "readv_count_minus1", SYS_readv, 'F', 'E', s_readv_negcnt, o_readv, false },
	{ "readv_ebadf", SYS_readv, 'U', 'E', s_readv_ebadf, o_readv, false },
	{ "readv_bad_iovec_array", SYS_readv, 'F', 'E', s_readv_badiov, o_readv, false },
	{ "readv_bad_buffer", SYS_readv, 'F', 'E', s_readv_badbuf, o_readv, false },
	{ "readv_pipe_nonblock_eagain", SYS_readv, 'N', 'E', s_readv_pipe_eagain, o_readv, false },
	{ "preadv_at_2", SYS_preadv, 'U', 'E', s_preadv, o_readv, false },
	{ "preadv_beyond_eof", SYS_preadv, 'U', 'E', s_preadv_beyond, o_readv, false },
	{ "preadv_offset_minus1_einval", SYS_preadv, 'F', 'E', s_preadv_neg, o_readv, false },
	{ "preadv2_at_1", SYS_preadv2, 'U', 'E', s_preadv2_off, o_readv, false },
	{ "preadv2_offset_minus1_position", SYS_preadv2, 'F', 'E', s_preadv2_cur, o_readv, false },
	{ "preadv2_offset_minus2_einval", SYS_preadv2, 'F', 'E', s_preadv2_neg2, o_readv, false },
	{ "preadv2_bad_flags", SYS_preadv2, 'U', 'E', s_preadv2_badflags, o_readv, false },
	{ "preadv2_rwf_hipri", SYS_preadv2, 'A', 'E', s_preadv2_hipri, o_readv, false },
	{ "preadv_pipe_espipe", SYS_preadv, 'A', 'E', s_preadv_pipe, o_pipe, false },
	{ "preadv2_pipe_espipe", SYS_preadv2, 'A', 'E', s_preadv2_pipe, o_pipe, false },
	{ "preadv2_pipe_offset_minus1", SYS_preadv2, 'U', 'E', s_preadv2_pipe_cur, o_pipe, false },
	{ "preadv2_rwf_nowait_cached", SYS_preadv2, 'U', 'E', s_preadv2_nowait, o_readv, false },
	{ "preadv2_rwf_nowait_empty_pipe", SYS_preadv2, 'U', 'E', s_preadv2_nowait_pipe, o_readv, false },
	{ "writev_2_iovecs", SYS_writev, 'F', 'E', s_writev, o_file, false },
	{ "writev_rdonly_ebadf", SYS_writev, 'F', 'E', s_writev_rdonly, o_file, false },
	{ "writev_pipe_epipe", SYS_writev, 'U', 'E', s_writev_epipe, NULL, false },
	{ "pwritev_at_7", SYS_pwritev, 'F', 'E', s_pwritev, o_file, false },
	{ "pwritev_negative_einval", SYS_pwritev, 'F', 'E', s_pwritev_neg, o_file, false },
	{ "pwritev2_offset_minus1_position", SYS_pwritev2, 'F', 'E', s_pwritev2_cur, o_file, false },
	{ "pwritev2_at_0", SYS_pwritev2, 'F', 'E', s_pwritev2_off, o_file, false },
	{ "pwritev2_rwf_hipri", SYS_pwritev2, 'A', 'E', s_pwritev2_hipri, o_file, false },
	{ "pwritev_pipe_espipe", SYS_pwritev, 'A', 'E', s_pwritev_pipe, o_pipe, false },
	{ "writev_bad_buffer", SYS_writev, 'F', 'E', s_writev_badbuf, o_file, false },
	{ "pwritev2_rwf_append", SYS_pwritev2, 'F', 'E', s_pwritev2_append, o_file, false },
	{ "fsync", SYS_fsync, 'U', 'E', s_fsync, o_file, false },
	{ "fsync_rdonly", SYS_fsync, 'U', 'E', s_fsync_rdonly, NULL, false },
	{ "fsync_ebadf", SYS_fsync, 'U', 'E', s_fsync_ebadf, NULL, false },
	{ "fsync_pipe_einval", SYS_fsync, 'U', 'E', s_fsync_pipe, NULL, false },
	{ "fdatasync", SYS_fdatasync, 'U', 'E', s_fsync, o_file, false },
	{ "fdatasync_ebadf", SYS_fdatasync, 'U', 'E', s_fsync_ebadf, NULL, false },
	{ "fdatasync_pipe_einval", SYS_fdatasync, 'U', 'E', s_fsync_pipe, NULL, false },
	{ "sync_file_range", SYS_sync_file_range, 'U', 'E', s_sfr, o_file, false },
	{ "sync_file_range_wait", SYS_sync_file_range, 'U', 'E', s_sfr_wait, o_file, false },
	{ "sync_file_range_bad_flags", SYS_sync_file_range, 'U', 'E', s_sfr_badflags, NULL, false },
	{ "sync_file_range_negative_offset", SYS_sync_file_range, 'U', 'E', s_sfr_negoff, NULL, false },
	{ "sync_file_range_over_4g", SYS_sync_file_range, 'F', 'E', s_sfr_huge, NULL, false },
	{ "sync_file_range_pipe_espipe", SYS_sync_file_range, 'U', 'E', s_sfr_pipe, NULL, false },
	{ "sync_file_range_ebadf", SYS_sync_file_range, 'U', 'E', s_sfr_ebadf, NULL, false },
	{ "open_rdonly", SYS_open, 'U', 'D', s_open, NULL, false },
	{ "open_flags", SYS_open, 'U', 'D', s_open_flags, NULL, false },
	{ "open_enoent", SYS_open, 'U', 'D', s_open_enoent, o_paths, false },
	{ "open_creat_mode", SYS_open, 'U', 'D', s_open_creat, o_paths, false },
	{ "open_excl_eexist", SYS_open, 'U', 'D', s_open_excl, o_paths, false },
	{ "open_trunc", SYS_open, 'U', 'D', s_open_trunc, o_paths, false },
	{ "open_enotdir", SYS_open, 'U', 'D', s_open_enotdir, NULL, false },
	{ "open_dir_wronly_eisdir", SYS_open, 'U', 'D', s_open_eisdir, NULL, false },
	{ "open_o_directory_on_file", SYS_open, 'U', 'D', s_open_dir_on_file, NULL, false },
	{ "open_efault", SYS_open, 'U', 'D', s_open_efault, NULL, false },
	{ "open_symlink_loop_eloop", SYS_open, 'U', 'D', s_open_eloop, NULL, false },
	{ "open_nofollow_eloop", SYS_open, 'U', 'D', s_open_nofollow, NULL, false },
	{ "open_o_path_nofollow", SYS_open, 'U', 'D', s_open_path, NULL, false },
	{ "open_o_tmpfile", SYS_open, 'U', 'D', s_open_tmpfile, NULL, false },
	{ "open_enametoolong", SYS_open, 'U', 'D', s_open_toolong, NULL, false },
	{ "open_null_path_efault", SYS_open, 'U', 'D', s_open_null, NULL, false },
	{ "openat_null_path", SYS_openat, 'U', 'D', s_openat_null_empty, NULL, false },
	{ "creat_new", SYS_creat, 'U', 'D', s_creat, o_paths, false },
	{ "creat_existing_truncates", SYS_creat, 'U', 'D', s_creat_existing, o_paths, false },
	{ "creat_directory_eisdir", SYS_creat, 'U', 'D', s_creat_eisdir, NULL, false },
	{ "openat_dirfd", SYS_openat, 'U', 'D', s_openat, NULL, false },
	{ "openat_absolute_ignores_dirfd", SYS_openat, 'U', 'D', s_openat_abs, NULL, false },
	{ "openat_ebadf", SYS_openat, 'U', 'D', s_openat_ebadf, NULL, false },
	{ "openat_enotdir", SYS_openat, 'U', 'D', s_openat_enotdir, NULL, false },
	{ "openat_creat_excl", SYS_openat, 'U', 'D', s_openat_creat, o_paths, false },
	{ "openat_at_fdcwd_cloexec", SYS_openat, 'U', 'D', s_openat_cwd, NULL, false },
	{ "openat2_beneath", SYS_openat2, 'U', 'D', s_openat2, NULL, false },
	{ "openat2_beneath_exdev", SYS_openat2, 'U', 'D', s_openat2_exdev, NULL, false },
	{ "openat2_size_8_einval", SYS_openat2, 'U', 'D', s_openat2_small, NULL, false },
	{ "openat2_size_64_zero_tail", SYS_openat2, 'U', 'D', s_openat2_big, NULL, false },
	{ "openat2_size_64_e2big", SYS_openat2, 'U', 'D', s_openat2_bigdirty, NULL, false },
	{ "openat2_bad_resolve", SYS_openat2, 'U', 'D', s_openat2_badresolve, NULL, false },
	{ "openat2_mode_without_creat", SYS_openat2, 'U', 'D', s_openat2_badmode, NULL, false },
	{ "openat2_creat", SYS_openat2, 'U', 'D', s_openat2_creat, o_paths, false },
	{ "close", SYS_close, 'U', 'E', s_close, o_closed, false },
	{ "close_ebadf", SYS_close, 'U', 'E', s_close_ebadf, NULL, false },
	{ "close_minus1", SYS_close, 'U', 'E', s_close_neg, NULL, false },
	{ "statx", SYS_statx, 'U', 'E', s_statx, o_statx, false },
	{ "statx_enoent", SYS_statx, 'U', 'E', s_statx_enoent, NULL, false },
	{ "statx_dirfd", SYS_statx, 'U', 'E', s_statx_dirfd, o_statx, false },
	{ "statx_at_empty_path", SYS_statx, 'U', 'E', s_statx_empty, o_statx, false },
	{ "statx_null_path_empty", SYS_statx, 'A', 'E', s_statx_nullpath, o_statx, false },
	{ "statx_bad_flags", SYS_statx, 'U', 'E', s_statx_badflags, NULL, false },
	{ "statx_symlink_nofollow", SYS_statx, 'U', 'E', s_statx_nofollow, o_statx, false },
	{ "statx_efault", SYS_statx, 'U', 'E', s_statx_efault, NULL, false },
	{ "statx_reserved_mask", SYS_statx, 'U', 'E', s_statx_reserved, NULL, false },
	{ "ftruncate_shrink", SYS_ftruncate, 'U', 'E', s_ftruncate, o_file, false },
	{ "ftruncate_grow", SYS_ftruncate, 'U', 'E', s_ftruncate_grow, o_file, false },
	{ "ftruncate_negative_einval", SYS_ftruncate, 'U', 'E', s_ftruncate_neg, o_file, false },
	{ "ftruncate_rdonly_einval", SYS_ftruncate, 'U', 'E', s_ftruncate_rdonly, o_file, false },
	{ "ftruncate_pipe_einval", SYS_ftruncate, 'U', 'E', s_ftruncate_pipe, NULL, false },
	{ "ftruncate_ebadf", SYS_ftruncate, 'U', 'E', s_ftruncate_ebadf, NULL, false },
	{ "fallocate", SYS_fallocate, 'U', 'E', s_fallocate, o_file, false },
	{ "fallocate_keep_size", SYS_fallocate, 'U', 'E', s_fallocate_keep, o_file, false },
	{ "fallocate_punch_hole", SYS_fallocate, 'U', 'E', s_fallocate_punch, o_file, false },
	{ "fallocate_bad_mode", SYS_fallocate, 'U', 'E', s_fallocate_badmode, o_file, false },
	{ "fallocate_zero_length_einval", SYS_fallocate, 'U', 'E', s_fallocate_zero, o_file, false },
	{ "fallocate_negative_offset", SYS_fallocate, 'U', 'E', s_fallocate_neg, o_file, false },
	{ "fallocate_rdonly_ebadf", SYS_fallocate, 'U', 'E', s_fallocate_rdonly, o_file, false },
	{ "fallocate_pipe_espipe", SYS_fallocate, 'U', 'E', s_fallocate_pipe, NULL, false },
	{ "fadvise_willneed", SYS_fadvise64, 'U', 'E', s_fadvise, NULL, false },
	{ "fadvise_dontneed", SYS_fadvise64, 'U', 'E', s_fadvise_dontneed, o_file, false },
	{ "fadvise_bad_advice", SYS_fadvise64, 'U', 'E', s_fadvise_bad, NULL, false },
	{ "fadvise_pipe_espipe", SYS_fadvise64, 'U', 'E', s_fadvise_pipe, NULL, false },
	{ "fadvise_ebadf", SYS_fadvise64, 'U', 'E', s_fadvise_ebadf, NULL, false },
	{ "fadvise_negative_length", SYS_fadvise64, 'F', 'E', s_fadvise_neglen, NULL, false },
	{ "fadvise_length_over_4g", SYS_fadvise64, 'F', 'E', s_fadvise_biglen, NULL, false },
	{ "rename", SYS_rename, 'U', 'E', s_rename, o_names, false },
	{ "rename_over_existing", SYS_rename, 'U', 'E', s_rename_over, o_names, false },
	{ "rename_enoent", SYS_rename, 'U', 'E', s_rename_enoent, o_names, false },
	{ "rename_file_over_dir_eisdir", SYS_rename, 'U', 'E', s_rename_eisdir, o_names, false },
	{ "rename_dir_into_itself_einval", SYS_rename, 'U', 'E', s_rename_einval, o_names, false },
	{ "renameat", SYS_renameat, 'U', 'E', s_renameat, o_names, false },
	{ "renameat_ebadf", SYS_renameat, 'U', 'E', s_renameat_ebadf, o_names, false },
	{ "renameat2_noreplace_eexist", SYS_renameat2, 'U', 'E', s_renameat2_noreplace, o_names, false },
	{ "renameat2_noreplace", SYS_renameat2, 'U', 'E', s_renameat2_noreplace_ok, o_names, false },
	{ "renameat2_exchange", SYS_renameat2, 'U', 'E', s_renameat2_exchange, o_names, false },
	{ "renameat2_whiteout", SYS_renameat2, 'U', 'E', s_renameat2_whiteout, o_names, false },
	{ "renameat2_bad_flags", SYS_renameat2, 'U', 'E', s_renameat2_bad, o_names, false },
	{ "rename_null_path", SYS_rename, 'U', 'E', s_rename_null, o_names, false },
	{ "renameat2_null_path", SYS_renameat2, 'U', 'E', s_renameat2_null, o_names, false },
	{ "unlinkat_null_path", SYS_unlinkat, 'U', 'E', s_unlinkat_null, o_names, false },
	{ "mkdirat_null_path", SYS_mkdirat, 'U', 'E', s_mkdirat_null, o_names, false },
	{ "symlinkat_null_target", SYS_symlinkat, 'U', 'E', s_symlinkat_null, o_names, false },
	{ "linkat_null_path_empty", SYS_linkat, 'U', 'E', s_linkat_null_empty, o_names, false },
	{ "unlink", SYS_unlink, 'U', 'E', s_unlink, o_names, false },
	{ "unlink_enoent", SYS_unlink, 'U', 'E', s_unlink_enoent, o_names, false },
	{ "unlink_dir_eisdir", SYS_unlink, 'U', 'E', s_unlink_dir, o_names, false },
	{ "rmdir", SYS_rmdir, 'U', 'E', s_rmdir, o_names, false },
	{ "rmdir_enotempty", SYS_rmdir, 'U', 'E', s_rmdir_notempty, o_names, false },
	{ "rmdir_file_enotdir", SYS_rmdir, 'U', 'E', s_rmdir_file, o_names, false },
	{ "rmdir_enoent", SYS_rmdir, 'U', 'E', s_rmdir_enoent, NULL, false },
	{ "unlinkat", SYS_unlinkat, 'U', 'E', s_unlinkat, o_names, false },
	{ "unlinkat_removedir", SYS_unlinkat, 'U', 'E', s_unlinkat_rmdir, o_names, false },
	{ "unlinkat_dir_eisdir", SYS_unlinkat, 'U', 'E', s_unlinkat_dir, o_names, false },
	{ "unlinkat_bad_flags", SYS_unlinkat, 'U', 'E', s_unlinkat_badflag, o_names, false },
	{ "unlinkat_ebadf", SYS_unlinkat, 'U', 'E', s_unlinkat_ebadf, o_names, false },
	{ "mkdir", SYS_mkdir, 'U', 'E', s_mkdir, o_names, false },
	{ "mkdir_eexist", SYS_mkdir, 'U', 'E', s_mkdir_eexist, o_names, false },
	{ "mkdir_enoent", SYS_mkdir, 'U', 'E', s_mkdir_enoent, o_names, false },
	{ "mkdirat", SYS_mkdirat, 'U', 'E', s_mkdirat, o_names, false },
	{ "mkdirat_ebadf", SYS_mkdirat, 'U', 'E', s_mkdirat_ebadf, o_names, false },
	{ "mkdirat_enotdir", SYS_mkdirat, 'U', 'E', s_mkdirat_enotdir, o_names, false },
	{ "symlink", SYS_symlink, 'U', 'E', s_symlink, o_names, false },
	{ "symlink_eexist", SYS_symlink, 'U', 'E', s_symlink_eexist, o_names, false },
	{ "symlink_enoent", SYS_symlink, 'U', 'E', s_symlink_enoent, NULL, false },
	{ "symlink_empty_target_enoent", SYS_symlink, 'U', 'E', s_symlink_empty, o_names, false },
	{ "symlinkat", SYS_symlinkat, 'U', 'E', s_symlinkat, o_names, false },
	{ "symlinkat_ebadf", SYS_symlinkat, 'U', 'E', s_symlinkat_ebadf, o_names, false },
	{ "link", SYS_link, 'U', 'E', s_link, o_names, false },
	{ "link_eexist", SYS_link, 'U', 'E', s_link_eexist, o_names, false },
	{ "link_enoent", SYS_link, 'U', 'E', s_link_enoent, o_names, false },
	{ "link_directory_eperm", SYS_link, 'U', 'E', s_link_dir, o_names, false },
	{ "linkat", SYS_linkat, 'U', 'E', s_linkat, o_names, false },
	{ "linkat_symlink_itself", SYS_linkat, 'U', 'E', s_linkat_sym, o_names, false },
	{ "linkat_symlink_follow", SYS_linkat, 'U', 'E', s_linkat_follow, o_names, false },
	{ "linkat_at_empty_path", SYS_linkat, 'U', 'E', s_linkat_empty, o_names, false },
	{ "linkat_bad_flags", SYS_linkat, 'U', 'E', s_linkat_badflags, o_names, false },
	{ "setxattr", SYS_setxattr, 'U', 'E', s_setxattr, o_xattr, false },
	{ "setxattr_create_eexist", SYS_setxattr, 'U', 'E', s_setxattr_create, o_xattr, false },
	{ "setxattr_replace_enodata", SYS_setxattr, 'U', 'E', s_setxattr_replace, o_xattr, false },
	{ "setxattr_replace", SYS_setxattr, 'U', 'E', s_setxattr_replace_ok, o_xattr, false },
	{ "setxattr_bad_namespace", SYS_setxattr, 'U', 'E', s_setxattr_badns, o_xattr, false },
	{ "setxattr_empty_name_erange", SYS_setxattr, 'U', 'E', s_setxattr_emptyname, o_xattr, false },
	{ "setxattr_bad_flags", SYS_setxattr, 'U', 'E', s_setxattr_badflags, o_xattr, false },
	{ "setxattr_enoent", SYS_setxattr, 'U', 'E', s_setxattr_enoent, NULL, false },
	{ "setxattr_size_over_4g", SYS_setxattr, 'F', 'E', s_setxattr_huge, o_xattr, false },
	{ "setxattr_null_path", SYS_setxattr, 'U', 'E', s_setxattr_nullpath, o_xattr, false },
	{ "setxattr_null_value", SYS_setxattr, 'U', 'E', s_setxattr_nullvalue, o_xattr, false },
	{ "fsetxattr", SYS_fsetxattr, 'U', 'E', s_fsetxattr, o_xattr, false },
	{ "fsetxattr_ebadf", SYS_fsetxattr, 'U', 'E', s_fsetxattr_ebadf, o_xattr, false },
	{ "getxattr", SYS_getxattr, 'U', 'E', s_getxattr, o_xattr, false },
	{ "getxattr_null_path", SYS_getxattr, 'U', 'E', s_getxattr_nullpath, o_xattr, false },
	{ "getxattr_size_0", SYS_getxattr, 'U', 'E', s_getxattr_size0, o_xattr, false },
	{ "getxattr_erange", SYS_getxattr, 'U', 'E', s_getxattr_erange, o_xattr, false },
	{ "getxattr_enodata", SYS_getxattr, 'U', 'E', s_getxattr_enodata, o_xattr, false },
	{ "getxattr_enoent", SYS_getxattr, 'U', 'E', s_getxattr_enoent, o_xattr, false },
	{ "fgetxattr", SYS_fgetxattr, 'U', 'E', s_fgetxattr, o_xattr, false },
	{ "fgetxattr_ebadf", SYS_fgetxattr, 'U', 'E', s_fgetxattr_ebadf, o_xattr, false },
	{ "fgetxattr_pipe", SYS_fgetxattr, 'U', 'E', s_fgetxattr_pipe, o_xattr, false },
	{ "nobody_open_0600_eacces", SYS_open, 'U', 'D', s_acc_open, o_acc, true },
	{ "nobody_open_0644_for_write", SYS_open, 'U', 'D', s_acc_open_w, o_acc, true },
	{ "nobody_creat_in_root_dir", SYS_creat, 'U', 'D', s_acc_creat, o_acc, true },
	{ "nobody_openat_0600_eacces", SYS_openat, 'U', 'D', s_acc_openat, o_acc, true },
	{ "nobody_openat_no_search", SYS_openat, 'U', 'D', s_acc_openat_search, o_acc, true },
	{ "nobody_openat2_0600_eacces", SYS_openat2, 'U', 'D', s_acc_openat2, o_acc, true },
	{ "nobody_mkdir_eacces", SYS_mkdir, 'U', 'E', s_acc_mkdir, o_acc, true },
	{ "nobody_mkdirat_no_search", SYS_mkdirat, 'U', 'E', s_acc_mkdirat, o_acc, true },
	{ "nobody_unlink_eacces", SYS_unlink, 'U', 'E', s_acc_unlink, o_acc, true },
	{ "nobody_unlinkat_eacces", SYS_unlinkat, 'U', 'E', s_acc_unlinkat, o_acc, true },
	{ "nobody_rmdir_eacces", SYS_rmdir, 'U', 'E', s_acc_rmdir, o_acc, true },
	{ "nobody_rename_eacces", SYS_rename, 'U', 'E', s_acc_rename, o_acc, true },
	{ "nobody_renameat2_eacces", SYS_renameat2, 'U', 'E', s_acc_renameat2, o_acc, true },
	{ "nobody_symlink_eacces", SYS_symlink, 'U', 'E', s_acc_symlink, o_acc, true },
	{ "nobody_symlinkat_eacces", SYS_symlinkat, 'U', 'E', s_acc_symlinkat, o_acc, true },
	{ "nobody_link_eacces", SYS_link, 'U', 'E', s_acc_link, o_acc, true },
	{ "nobody_linkat_eacces", SYS_linkat, 'U', 'E', s_acc_linkat, o_acc, true },
	{ "nobody_statx_no_search", SYS_statx, 'U', 'E', s_acc_statx, NULL, true },
	{ "nobody_setxattr_eacces", SYS_setxattr, 'U', 'E', s_acc_setxattr, o_acc, true },
	{ "nobody_getxattr_dir_0700", SYS_getxattr, 'U', 'E', s_acc_getxattr, NULL, true },
	{ "nobody_getxattr_no_search", SYS_getxattr, 'U', 'E', s_acc_getxattr_in, NULL, true },
	{ "nobody_fsetxattr_eacces", SYS_fsetxattr, 'U', 'E', s_acc_fsetxattr, o_acc, true },
	{ "nobody_ftruncate_rdonly", SYS_ftruncate, 'U', 'E', s_acc_ftruncate, o_acc, true },
};

static const struct t_known known[] = {
	{ "readv_bad_buffer",
	  "io_uring retries a short read of a regular file and does not advance the file "
	  "position when the retry faults; only a buffer that faults midway shows it" },
	{ "writev_bad_buffer",
	  "likewise for a short write whose retry faults: the file position stays behind" },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	return t_run_table("engine_files", cases, sizeof(cases) / sizeof(cases[0]), known, argc, argv);
}
