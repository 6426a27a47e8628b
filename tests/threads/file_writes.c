/*
 * Threads reading and writing files, and the signals writes raise, as
 * read(2), write(2), setrlimit(2) and pipe(7) say:
 *   1. 4 threads each write 3,000 lines to one descriptor of a file opened
 *      without O_APPEND (a redirected stdout): the kernel moves the shared
 *      position under a lock, so all 12,000 lines are there, whole, and the
 *      file has exactly their bytes;
 *   2. 4 threads read that descriptor to its end, from the start: the bytes
 *      they read add up to the file's size (none read twice);
 *   3. under RLIMIT_FSIZE (10,240 bytes), a thread writing 4,096-byte
 *      blocks: the process dies of SIGXFSZ; with SIGXFSZ ignored, the write
 *      that crosses the limit is short (2,048) and the next fails with
 *      EFBIG, 10,240 bytes counted and in the file;
 *   4. a thread writing to a pipe whose reader is gone, sending on a
 *      socket whose peer is gone (send without MSG_NOSIGNAL), writing to
 *      such a socket: each process dies of SIGPIPE; with MSG_NOSIGNAL the
 *      send fails with EPIPE and the process lives.
 * Each of 3 and 4 runs in a forked child. Under FlexSC-Threads io_uring
 * read and wrote at the shared position without the kernel's lock (lines
 * lost, data read twice), continued short writes and counted bytes never
 * written, and the signals went to a syscall thread or nowhere.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/socket.h>

#define CHECK_NAME "file_writes"
#include "check.h"

#define WRITERS 4
#define LINES 3000

static int fd;
static _Atomic long total_read;

static void *writer(void *arg)
{
	char line[64];

	for (int i = 0; i < LINES; i++) {
		int n = snprintf(line, sizeof(line), "writer %ld line %04d of %d\n", (long)(intptr_t)arg, i, LINES);
		EXPECT(write(fd, line, (size_t)n) == n, "write: %s", strerror(errno));
	}
	return NULL;
}

static void *reader(void *arg)
{
	char buf[512];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		atomic_fetch_add(&total_read, n);
	return arg;
}

static void shared_position(void)
{
	char path[] = "/tmp/flexsc-file-writes-XXXXXX";
	pthread_t t[WRITERS];
	long lines = 0, bytes = 0, whole = 0;

	fd = mkstemp(path);
	if (fd < 0) {
		result("a file to write", 0);
		return;
	}
	unlink(path);
	for (long i = 0; i < WRITERS; i++)
		t[i] = spawn(writer, (void *)(intptr_t)i);
	for (int i = 0; i < WRITERS; i++)
		pthread_join(t[i], NULL);
	struct stat st;
	fstat(fd, &st);
	FILE *f = fdopen(dup(fd), "r");
	char line[128];
	rewind(f);
	while (f && fgets(line, sizeof(line), f)) {
		long w;
		int i, of;
		lines++;
		bytes += (long)strlen(line);
		whole += sscanf(line, "writer %ld line %d of %d\n", &w, &i, &of) == 3 && of == LINES;
	}
	if (f)
		fclose(f);
	resultf(lines == WRITERS * LINES && whole == lines, "4 threads writing at one position: all %d lines, whole",
		WRITERS * LINES);
	result("... the file has exactly their bytes", bytes == st.st_size);

	lseek(fd, 0, SEEK_SET);
	for (long i = 0; i < WRITERS; i++)
		t[i] = spawn(reader, NULL);
	for (int i = 0; i < WRITERS; i++)
		pthread_join(t[i], NULL);
	result("4 threads reading at one position: the bytes read add up to the file's size",
	       atomic_load(&total_read) == st.st_size);
	close(fd);
}

struct fsize_run {
	bool ignore;
	long counted;
	int last_err;
	ssize_t short_write;
};

static void *fsize_writer(void *arg)
{
	struct fsize_run *r = arg;
	char block[4096];

	memset(block, 'x', sizeof(block));
	for (int i = 0; i < 5; i++) {
		ssize_t n = write(fd, block, sizeof(block));
		if (n < 0) {
			r->last_err = errno;
			break;
		}
		if (n < (ssize_t)sizeof(block))
			r->short_write = n;
		r->counted += n;
	}
	return NULL;
}

/* The child: writes past RLIMIT_FSIZE on a thread; exit 0 when the results were as asked. */
static int fsize_child(void *arg)
{
	struct fsize_run r = { .ignore = arg != NULL };
	struct rlimit lim = { 10240, 10240 };
	char path[] = "/tmp/flexsc-file-fsize-XXXXXX";

	fd = mkstemp(path);
	if (fd < 0)
		return 2;
	unlink(path);
	if (r.ignore)
		signal(SIGXFSZ, SIG_IGN);
	setrlimit(RLIMIT_FSIZE, &lim);
	pthread_join(spawn(fsize_writer, &r), NULL);
	struct stat st;
	fstat(fd, &st);
	return r.counted == 10240 && st.st_size == 10240 && r.short_write == 2048 && r.last_err == EFBIG ? 0 : 3;
}

static int killed_by(int st, int sig)
{
	return WIFSIGNALED(st) && WTERMSIG(st) == sig;
}

static int sv[2];

static void *pipe_write(void *arg)
{
	int *p = arg;

	EXPECT(write(p[1], "x", 1) == -1 && errno == EPIPE, "write to a pipe with no reader");
	return NULL;
}

static void *sock_send(void *arg)
{
	int flags = (int)(intptr_t)arg;

	EXPECT(send(sv[0], "x", 1, flags) == -1 && errno == EPIPE, "send to a closed peer");
	return NULL;
}

static void *sock_write(void *arg)
{
	EXPECT(write(sv[0], "x", 1) == -1 && errno == EPIPE, "write to a closed peer");
	return arg;
}

static int sigpipe_child(void *arg)
{
	long how = (long)(intptr_t)arg;
	int p[2];

	if (how == 0) {
		if (pipe(p))
			return 2;
		close(p[0]);
		pthread_join(spawn(pipe_write, p), NULL);
		return 0;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 2;
	close(sv[1]);
	if (how == 1)
		pthread_join(spawn(sock_send, (void *)(intptr_t)0), NULL);
	else if (how == 2)
		pthread_join(spawn(sock_write, NULL), NULL);
	else
		pthread_join(spawn(sock_send, (void *)(intptr_t)MSG_NOSIGNAL), NULL);
	return misses() ? 3 : 0;
}

int main(void)
{
	char out[256];

	shared_position();
	int st = run_captured(fsize_child, NULL, out, sizeof(out));
	result("a thread writing past RLIMIT_FSIZE: the process dies of SIGXFSZ", killed_by(st, SIGXFSZ));
	st = run_captured(fsize_child, (void *)1, out, sizeof(out));
	result("... SIGXFSZ ignored: a short write of 2,048, then EFBIG, 10,240 bytes in all",
	       WIFEXITED(st) && WEXITSTATUS(st) == 0);
	st = run_captured(sigpipe_child, (void *)0, out, sizeof(out));
	result("a thread writing to a pipe with no reader: SIGPIPE", killed_by(st, SIGPIPE));
	st = run_captured(sigpipe_child, (void *)1, out, sizeof(out));
	result("a thread's send to a closed peer: SIGPIPE", killed_by(st, SIGPIPE));
	st = run_captured(sigpipe_child, (void *)2, out, sizeof(out));
	result("a thread's write to a closed peer: SIGPIPE", killed_by(st, SIGPIPE));
	st = run_captured(sigpipe_child, (void *)3, out, sizeof(out));
	result("... send with MSG_NOSIGNAL: EPIPE, no signal", WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return failed;
}
