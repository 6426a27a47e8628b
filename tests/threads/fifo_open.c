/*
 * Opening a FIFO, as fifo(7) and open(2) say: without O_NONBLOCK, an open
 * for reading waits until a writer opens it and an open for writing waits
 * until a reader does; with O_NONBLOCK, one for reading returns at once
 * and one for writing fails with ENXIO while there is no reader; O_RDWR
 * opens at once (Linux). The descriptor has the FD_CLOEXEC asked for and
 * carries what the other end writes (its number is reported, not checked:
 * under load the runtime's own descriptors, made low and then moved up,
 * may take the lowest number for a moment). Each
 * side is opened by a thread while the other end is opened 100 ms later
 * by another, which sets a flag just before its open: the waiting open
 * must return after that flag.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHECK_NAME "fifo_open"
#include "check.h"

static char path[64];
static _Atomic int other_end_opening;

struct side {
	int flags;
	int fd, err;
	int saw_other; /* other_end_opening when the open returned */
};

static void *open_side(void *arg)
{
	struct side *s = arg;

	s->fd = open(path, s->flags);
	s->err = s->fd < 0 ? errno : 0;
	s->saw_other = atomic_load(&other_end_opening);
	return NULL;
}

static int lowest_free(void)
{
	int fd = dup(0);

	close(fd);
	return fd;
}

/* A thread opens with `flags`; 100 ms later this one opens the other end with other_flags. */
static void waits_for_other_end(const char *what, int flags, int other_flags)
{
	struct side s = { .flags = flags };

	atomic_store(&other_end_opening, 0);
	int want_fd = lowest_free();
	pthread_t t = spawn(open_side, &s);
	sleep_ms(100);
	atomic_store(&other_end_opening, 1);
	int other = open(path, other_flags);
	pthread_join(t, NULL);
	EXPECT(other >= 0, "%s: the other end: %s", what, strerror(errno));
	EXPECT(s.fd >= 0, "%s: %s", what, strerror(s.err));
	resultf(s.fd >= 0 && s.saw_other, "%s waits until the other end is opened", what);
	if (s.fd != want_fd) /* not a check: the runtime's own descriptors may take a low number meanwhile */
		fprintf(stderr, "%s: descriptor %d, %d was the lowest free before\n", what, s.fd, want_fd);
	int fdflags = s.fd >= 0 ? fcntl(s.fd, F_GETFD) : -1;
	resultf(fdflags >= 0 && !!(fdflags & FD_CLOEXEC) == !!(flags & O_CLOEXEC),
		"%s has FD_CLOEXEC as asked", what);
	int fl = s.fd >= 0 ? fcntl(s.fd, F_GETFL) : -1;
	resultf(fl >= 0 && !(fl & O_NONBLOCK), "%s is not O_NONBLOCK", what);
	/* data from the writing end to the reading end, then end of file */
	int w = (flags & O_ACCMODE) == O_WRONLY ? s.fd : other;
	int r = (flags & O_ACCMODE) == O_WRONLY ? other : s.fd;
	char buf[8] = { 0 };
	ssize_t wn = write(w, "hello", 5);
	close(w);
	ssize_t rn = read(r, buf, sizeof(buf));
	ssize_t eof = read(r, buf + 5, 1);
	close(r);
	resultf(wn == 5 && rn == 5 && !memcmp(buf, "hello", 5) && eof == 0,
		"%s carries the data, then end of file", what);
}

int main(void)
{
	snprintf(path, sizeof(path), "/tmp/flexsc-fifo-%d", (int)getpid());
	unlink(path);
	if (mkfifo(path, 0600)) {
		perror("mkfifo");
		return 1;
	}
	/* the runtime starts its carriers at the first pthread_create */
	struct side warm = { .flags = O_RDONLY | O_NONBLOCK };
	pthread_join(spawn(open_side, &warm), NULL);
	close(warm.fd);

	waits_for_other_end("open for writing", O_WRONLY, O_RDONLY);
	waits_for_other_end("open for reading", O_RDONLY, O_WRONLY);
	waits_for_other_end("open for reading (O_CLOEXEC)", O_RDONLY | O_CLOEXEC, O_WRONLY);

	struct side nb_r = { .flags = O_RDONLY | O_NONBLOCK }, nb_w = { .flags = O_WRONLY | O_NONBLOCK };
	pthread_join(spawn(open_side, &nb_w), NULL);
	result("O_WRONLY|O_NONBLOCK with no reader fails with ENXIO", nb_w.fd < 0 && nb_w.err == ENXIO);
	pthread_join(spawn(open_side, &nb_r), NULL);
	result("O_RDONLY|O_NONBLOCK with no writer opens at once", nb_r.fd >= 0);
	pthread_join(spawn(open_side, &nb_w), NULL);
	result("O_WRONLY|O_NONBLOCK with a reader opens", nb_w.fd >= 0);
	close(nb_r.fd);
	close(nb_w.fd);
	struct side rdwr = { .flags = O_RDWR };
	pthread_join(spawn(open_side, &rdwr), NULL);
	result("O_RDWR opens at once", rdwr.fd >= 0);
	close(rdwr.fd);
	unlink(path);
	return failed;
}
