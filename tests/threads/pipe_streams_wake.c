/*
 * pipe_streams_wake: pairs of threads stream checked bytes through pipes
 * and socketpairs at once, a writer and a reader each, so that both block
 * in turn, over and over, from every carrier.
 *
 * Under flexsc-run --engine threads every one of those calls goes to the
 * syscall threads, and the commit of a batch wakes one sleeping syscall
 * thread, which passes the wake on before it runs a call when work is
 * left. It used to pass it on only for work left on its own queue: when
 * two carriers committed at once and both woken threads took the first
 * carrier's calls, which then blocked, the other carrier's calls (the
 * very writes those reads waited for) stayed queued while the rest of the
 * pool slept, and every stream stopped for good (the soak's "pipe writer
 * and reader both in a call while three syscall threads sleep").
 *
 * Pipe and socket buffers are made small (4 KiB) so that most calls
 * block: before the fix this hung within the first 300 rounds in every
 * one of many runs, most often within a second.
 *
 * Every byte is checked against a pattern; the streams must all end.
 * The main thread is a watchdog for hangs only: if no stream moved a byte
 * for 30 s it reports which were in a call and exits 1 (the suite's own
 * timeout would otherwise be reached with the program hung).
 *
 * Usage: pipe_streams_wake [ROUNDS [WATCHDOG_MS]]   (300, 30000)
 */
#define _GNU_SOURCE
#define CHECK_NAME "pipe_streams_wake"
#include "check.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <sys/socket.h>

#define PAIRS 6
static int ROUNDS = 300;
#define BYTES (256 * 1024) /* a round's stream: several times a pipe's buffer */
#define CHUNK (48 * 1024)

struct pair {
	int id;
	int fd[2];
	_Atomic int round;
	_Atomic int in_write, in_read;
	int bad; /* the reader's: a byte that did not match, or an early end */
};

static struct pair pairs[PAIRS];
static int watch_ms = 30000;
static _Atomic unsigned long moved; /* bytes read, all streams: the watchdog's progress */

static unsigned char pattern(int id, int round, size_t at)
{
	return (unsigned char)(at * 131 + (size_t)round * 7 + (size_t)id * 29 + (at >> 9));
}

/* A chunk size from 1 to CHUNK bytes, varied from round to round, no clock or rand involved. */
static size_t chunk(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return 1 + (*seed >> 8) % CHUNK;
}

static void *writer(void *arg)
{
	struct pair *p = arg;
	unsigned char *buf = malloc(CHUNK);
	unsigned seed = (unsigned)p->id * 977u + 1;
	int round = atomic_load(&p->round);

	if (!buf)
		abort();
	for (size_t at = 0; at < BYTES;) {
		size_t n = chunk(&seed);
		if (n > BYTES - at)
			n = BYTES - at;
		for (size_t i = 0; i < n; i++)
			buf[i] = pattern(p->id, round, at + i);
		atomic_store(&p->in_write, 1);
		ssize_t w = p->id % 2 ? send(p->fd[1], buf, n, 0) : write(p->fd[1], buf, n);
		atomic_store(&p->in_write, 0);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			perror("write");
			break;
		}
		at += (size_t)w;
	}
	close(p->fd[1]);
	free(buf);
	return NULL;
}

static void *reader(void *arg)
{
	struct pair *p = arg;
	unsigned char *buf = malloc(CHUNK);
	unsigned seed = (unsigned)p->id * 1231u + 7;
	int round = atomic_load(&p->round);
	size_t at = 0;

	if (!buf)
		abort();
	for (;;) {
		size_t n = chunk(&seed);
		atomic_store(&p->in_read, 1);
		ssize_t r = p->id % 2 ? recv(p->fd[0], buf, n, 0) : read(p->fd[0], buf, n);
		atomic_store(&p->in_read, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			perror("read");
			p->bad = 1;
			break;
		}
		if (r == 0)
			break;
		for (ssize_t i = 0; i < r; i++)
			if (buf[i] != pattern(p->id, round, at + (size_t)i))
				p->bad = 1;
		at += (size_t)r;
		atomic_fetch_add(&moved, (unsigned long)r);
	}
	if (at != BYTES)
		p->bad = 1;
	close(p->fd[0]);
	free(buf);
	return NULL;
}

/* One pair's rounds: a fresh pipe (even ids) or socketpair (odd) and two threads each. */
static void *pair_main(void *arg)
{
	struct pair *p = arg;

	for (int r = 0; r < ROUNDS && !p->bad; r++) {
		int err = p->id % 2 ? socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p->fd) :
				      pipe2(p->fd, O_CLOEXEC);
		if (err) {
			perror("pipe2/socketpair");
			p->bad = 1;
			break;
		}
		/* small buffers: more calls block, more wakes */
		if (p->id % 2) {
			int sz = 4096;
			setsockopt(p->fd[1], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
			setsockopt(p->fd[0], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
		} else {
			fcntl(p->fd[1], F_SETPIPE_SZ, 4096);
		}
		atomic_store(&p->round, r);
		pthread_t w = spawn(writer, p), rd = spawn(reader, p);
		pthread_join(w, NULL);
		pthread_join(rd, NULL);
	}
	atomic_store(&p->round, ROUNDS);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[PAIRS];

	if (argc > 1)
		ROUNDS = atoi(argv[1]);
	if (argc > 2)
		watch_ms = atoi(argv[2]);
	for (int i = 0; i < PAIRS; i++) {
		pairs[i].id = i;
		t[i] = spawn(pair_main, &pairs[i]);
	}
	/* the watchdog: progress, not time, decides; only a stream stopped for 30 s ends the run */
	unsigned long last = 0;
	uint64_t since = now_ms();
	for (;;) {
		int running = 0;
		for (int i = 0; i < PAIRS; i++)
			running += atomic_load(&pairs[i].round) < ROUNDS;
		if (!running)
			break;
		unsigned long m = atomic_load(&moved);
		if (m != last) {
			last = m;
			since = now_ms();
		} else if (now_ms() - since > (uint64_t)watch_ms) {
			printf("%s: no stream moved a byte for 30 s (a lost wake-up):", CHECK_NAME);
			for (int i = 0; i < PAIRS; i++)
				printf(" [%d round %d%s%s]", i, atomic_load(&pairs[i].round),
				       atomic_load(&pairs[i].in_write) ? " writing" : "",
				       atomic_load(&pairs[i].in_read) ? " reading" : "");
			printf("\n");
			result("every stream ends", 0);
			fflush(stdout);
			_exit(1);
		}
		sleep_ms(50);
	}
	for (int i = 0; i < PAIRS; i++)
		pthread_join(t[i], NULL);
	int bad = 0;
	for (int i = 0; i < PAIRS; i++)
		bad |= pairs[i].bad;
	result("every stream ends", 1);
	result("every byte arrives, in order", !bad);
	return failed;
}
