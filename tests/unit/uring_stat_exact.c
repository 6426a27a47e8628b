// SPDX-License-Identifier: MIT
/*
 * newfstatat through io_uring (STATX, converted by the engine into struct
 * stat) gives byte for byte what the system call gives, on the same files:
 * a regular file, a directory, a symlink (followed and not), a character
 * device (st_rdev), a FIFO, a socket, a descriptor with AT_EMPTY_PATH, and
 * a device number that needs the high bits of the encoding (/dev/null's
 * is small: a loop or tmpfs device may not be, so every mounted root we
 * can stat counts). The whole struct is compared, padding included (both
 * buffers are filled with different bytes first). Every call must have
 * gone through io_uring.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "helpers.h"


static struct flexsc *fx;
static struct flexsc_queue *q;
static int compared;

static void same(int dirfd, const char *path, int flags)
{
	struct stat want, got;
	uint64_t a[4] = { (uint64_t)dirfd, P(path), P(&got), (uint64_t)flags };
	uint64_t before = t_by_engine(q, FLEXSC_ENGINE_URING);

	memset(&want, 0xaa, sizeof(want));
	memset(&got, 0x55, sizeof(got));
	long w = syscall(SYS_newfstatat, dirfd, path, &want, flags);
	int64_t r = flexsc_syscall(q, SYS_newfstatat, 4, a);
	CHECK_EQ(t_by_engine(q, FLEXSC_ENGINE_URING), before + 1);
	CHECK_EQ(r, w == 0 ? 0 : -errno);
	if (r == 0 && memcmp(&want, &got, sizeof(want))) {
		fprintf(stderr, "newfstatat(%s, %#x) differs: dev %lx/%lx ino %lu/%lu rdev %lx/%lx\n",
			path, flags, (unsigned long)want.st_dev, (unsigned long)got.st_dev,
			(unsigned long)want.st_ino, (unsigned long)got.st_ino,
			(unsigned long)want.st_rdev, (unsigned long)got.st_rdev);
		exit(1);
	}
	compared++;
}

int main(void)
{
	char dir[] = "/tmp/flexsc-stat-XXXXXX", p[300];
	struct flexsc_sysinfo info;

	t_open(FLEXSC_ENGINE_URING, &fx, &q, NULL);
	CHECK_EQ(flexsc_sysinfo(fx, SYS_newfstatat, &info), 0);
	if (!info.uring_supported)
		SKIP("io_uring is not available");
	CHECK(mkdtemp(dir));
	int d = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(d >= 0);
	int f = openat(d, "file", O_CREAT | O_RDWR, 0640);
	CHECK(f >= 0);
	CHECK_EQ(write(f, "0123456789", 10), 10);
	CHECK_EQ(symlinkat("file", d, "link"), 0);
	CHECK_EQ(mkfifoat(d, "fifo", 0600), 0);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", dir);
	CHECK_EQ(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);

	same(d, "file", 0);
	same(d, "link", 0);
	same(d, "link", AT_SYMLINK_NOFOLLOW);
	same(d, "fifo", 0);
	same(d, "sock", 0);
	same(AT_FDCWD, dir, 0);
	same(f, "", AT_EMPTY_PATH);
	same(s, "", AT_EMPTY_PATH);
	same(AT_FDCWD, "/dev/null", 0);
	same(AT_FDCWD, "/", 0);
	same(AT_FDCWD, "/proc/self", AT_SYMLINK_NOFOLLOW);
	same(AT_FDCWD, "/sys", 0);
	same(AT_FDCWD, "/dev/shm", 0);
	same(d, "missing", 0);

	close(s);
	close(f);
	snprintf(p, sizeof(p), "%s/sock", dir);
	unlink(p);
	unlinkat(d, "fifo", 0);
	unlinkat(d, "link", 0);
	unlinkat(d, "file", 0);
	close(d);
	rmdir(dir);
	t_close(fx, q);
	printf("uring_stat_exact: %d paths, struct stat identical through io_uring\n", compared);
	return 0;
}
