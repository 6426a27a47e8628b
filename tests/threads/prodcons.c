/*
 * Bounded producer/consumer queues, several producers and consumers each:
 *   1. a ring buffer guarded by a mutex with not-full / not-empty condition
 *      variables (capacity 16: producers block often);
 *   2. a pipe as the bounded channel (8-byte records, atomic writes),
 *      consumers blocked in read(), end of input by closing the write end.
 * Every item is consumed exactly once: counts, sums and a per-producer
 * order check (one consumer sees a producer's items in the order made).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK_NAME "prodcons"
#include "check.h"

#define PRODUCERS 4
#define CONSUMERS 3
#define ITEMS 50000 /* per producer */
#define CAP 16

/* an item: producer in the high bits, sequence number in the low ones */
static uint64_t item(int p, uint64_t seq)
{
	return ((uint64_t)(p + 1) << 32) | seq;
}

struct tally {
	uint64_t count, sum, xsum;
	uint64_t last[PRODUCERS]; /* last sequence + 1 seen from each producer */
	int out_of_order;
};

static void take(struct tally *t, uint64_t v)
{
	int p = (int)(v >> 32) - 1;
	uint64_t seq = v & 0xffffffffu;

	t->count++;
	t->sum += v;
	t->xsum ^= v * 0x9e3779b97f4a7c15ull;
	if (p < 0 || p >= PRODUCERS || seq + 1 <= t->last[p])
		t->out_of_order++;
	else
		t->last[p] = seq + 1;
}

static int check_totals(const char *what, struct tally *t, int n)
{
	uint64_t count = 0, sum = 0, xsum = 0, want_sum = 0, want_xsum = 0;
	int disorder = 0;

	for (int i = 0; i < n; i++) {
		count += t[i].count;
		sum += t[i].sum;
		xsum ^= t[i].xsum;
		disorder += t[i].out_of_order;
	}
	for (int p = 0; p < PRODUCERS; p++)
		for (uint64_t s = 0; s < ITEMS; s++) {
			want_sum += item(p, s);
			want_xsum ^= item(p, s) * 0x9e3779b97f4a7c15ull;
		}
	int ok = count == (uint64_t)PRODUCERS * ITEMS && sum == want_sum && xsum == want_xsum && !disorder;
	if (!ok)
		fprintf(stderr, "%s: %llu items (want %d), sum %s, checksum %s, %d out of order\n", what,
			(unsigned long long)count, PRODUCERS * ITEMS, sum == want_sum ? "ok" : "wrong",
			xsum == want_xsum ? "ok" : "wrong", disorder);
	return ok;
}

/* ---- 1. ring buffer with condition variables ---- */

static struct {
	pthread_mutex_t lock;
	pthread_cond_t not_full, not_empty;
	uint64_t buf[CAP];
	unsigned head, len;
	int producers_left;
} q = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, { 0 }, 0, 0,
	PRODUCERS };

static void *ring_producer(void *arg)
{
	int p = (int)(intptr_t)arg;

	for (uint64_t s = 0; s < ITEMS; s++) {
		pthread_mutex_lock(&q.lock);
		while (q.len == CAP)
			pthread_cond_wait(&q.not_full, &q.lock);
		q.buf[(q.head + q.len++) % CAP] = item(p, s);
		pthread_cond_signal(&q.not_empty);
		pthread_mutex_unlock(&q.lock);
	}
	pthread_mutex_lock(&q.lock);
	if (--q.producers_left == 0)
		pthread_cond_broadcast(&q.not_empty); /* consumers waiting on an empty queue: done */
	pthread_mutex_unlock(&q.lock);
	return NULL;
}

static void *ring_consumer(void *arg)
{
	struct tally *t = arg;

	for (;;) {
		pthread_mutex_lock(&q.lock);
		while (q.len == 0 && q.producers_left)
			pthread_cond_wait(&q.not_empty, &q.lock);
		if (q.len == 0) {
			pthread_mutex_unlock(&q.lock);
			return NULL;
		}
		uint64_t v = q.buf[q.head];
		q.head = (q.head + 1) % CAP;
		q.len--;
		pthread_cond_signal(&q.not_full);
		pthread_mutex_unlock(&q.lock);
		take(t, v);
	}
}

/* ---- 2. a pipe as the queue ---- */

static int chan[2];

static void *pipe_producer(void *arg)
{
	int p = (int)(intptr_t)arg;

	for (uint64_t s = 0; s < ITEMS; s++) {
		uint64_t v = item(p, s);
		ssize_t n = write(chan[1], &v, sizeof(v));
		if (n != sizeof(v)) {
			fprintf(stderr, "producer %d: write returned %zd (%s)\n", p, n, strerror(errno));
			return (void *)1;
		}
	}
	return NULL;
}

static void *pipe_consumer(void *arg)
{
	struct tally *t = arg;
	uint64_t v;
	ssize_t n;

	/* records are written whole (8 < PIPE_BUF): every read gets whole ones */
	while ((n = read(chan[0], &v, sizeof(v))) == sizeof(v))
		take(t, v);
	if (n != 0) {
		fprintf(stderr, "consumer: read returned %zd (%s)\n", n, n < 0 ? strerror(errno) : "");
		return (void *)1;
	}
	return NULL;
}

static void run(const char *what, void *(*prod)(void *), void *(*cons)(void *), int close_after)
{
	pthread_t pt[PRODUCERS], ct[CONSUMERS];
	struct tally tallies[CONSUMERS];
	int ok = 1;

	memset(tallies, 0, sizeof(tallies));
	for (int i = 0; i < CONSUMERS; i++)
		ct[i] = spawn(cons, &tallies[i]);
	for (int i = 0; i < PRODUCERS; i++)
		pt[i] = spawn(prod, (void *)(intptr_t)i);
	for (int i = 0; i < PRODUCERS; i++) {
		void *r;
		pthread_join(pt[i], &r);
		ok &= r == NULL;
	}
	if (close_after)
		close(chan[1]);
	for (int i = 0; i < CONSUMERS; i++) {
		void *r;
		pthread_join(ct[i], &r);
		ok &= r == NULL;
	}
	result(what, ok && check_totals(what, tallies, CONSUMERS));
}

int main(void)
{
	run("ring buffer (mutex + 2 conditions), 4 producers x 50000 items, 3 consumers",
	    ring_producer, ring_consumer, 0);
	if (pipe2(chan, O_CLOEXEC)) {
		perror("pipe2");
		return 1;
	}
	run("pipe channel, 4 producers x 50000 items, 3 consumers in read()", pipe_producer,
	    pipe_consumer, 1);
	close(chan[0]);
	printf("prodcons: %s\n", failed ? "FAIL" : "PASS");
	return failed;
}
