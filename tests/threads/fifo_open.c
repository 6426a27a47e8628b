/*
 * open(2) of a FIFO (fifo(7)): opened for reading only, or for writing
 * only, without O_NONBLOCK, it blocks until the other end is opened too;
 * with O_NONBLOCK, a read-open returns at once and a write-open fails with
 * ENXIO while no process has it open for reading. Threads keep running
 * meanwhile.
 *   1. a thread's read-open is still waiting 200 ms later; the main
 *      thread's write-open then ends both, and the byte written is read;
 *   2. the same with the roles swapped (a thread's write-open waits);
 *   3. O_WRONLY | O_NONBLOCK with no reader: ENXIO;
 *   4. O_RDONLY | O_NONBLOCK: returns at once, and reads end-of-file.
 * A watchdog kills a hung test after 60 s.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdatomic.h>

#define CHECK_NAME "fifo_open"
#include "check.h"

static char dir[64], path[128];
static const char *const names[] = { "f", NULL };
static _Atomic int opened;
static int flags_of_thread, fd_of_thread;

static void *opener(void *arg)
{
	(void)arg;
	fd_of_thread = open(path, flags_of_thread);
	atomic_store(&opened, 1);
	return NULL;
}

/* A thread opens with tflags, the main thread with mflags 200 ms later; then mfd writes or reads. */
static void roles(const char *name, int tflags, int mflags)
{
	char what[128], c = 0;

	atomic_store(&opened, 0);
	flags_of_thread = tflags;
	pthread_t t = spawn(opener, NULL);
	sleep_ms(200);
	int waited = !atomic_load(&opened);
	int fd = open(path, mflags);
	pthread_join(t, NULL);
	int rfd = tflags == O_RDONLY ? fd_of_thread : fd, wfd = tflags == O_RDONLY ? fd : fd_of_thread;
	int moved = write(wfd, "x", 1) == 1 && read(rfd, &c, 1) == 1 && c == 'x';
	snprintf(what, sizeof(what), "%s: the thread's open waited for the other end", name);
	result(what, waited);
	snprintf(what, sizeof(what), "%s: then both ends are open and a byte goes through", name);
	result(what, fd >= 0 && fd_of_thread >= 0 && moved);
	close(fd);
	close(fd_of_thread);
}

int main(void)
{
	fifo_dir_make(dir, names);
	fifo_path(path, sizeof(path), dir, "f");
	pid_t wd = fifo_watchdog(60, dir, names);

	roles("read-open first", O_RDONLY, O_WRONLY);
	roles("write-open first", O_WRONLY, O_RDONLY);
	errno = 0;
	int fd = open(path, O_WRONLY | O_NONBLOCK);
	result("O_WRONLY | O_NONBLOCK without a reader fails with ENXIO", fd < 0 && errno == ENXIO);
	if (fd >= 0)
		close(fd);
	fd = open(path, O_RDONLY | O_NONBLOCK);
	char c;
	result("O_RDONLY | O_NONBLOCK opens at once and reads end-of-file", fd >= 0 && read(fd, &c, 1) == 0);
	close(fd);
	fifo_watchdog_end(wd, dir, names);
	return failed;
}
