/*
 * soak: a long, mixed, self-checking load for a pthread runtime.
 *
 * Plain C and pthreads, knowing nothing of flexsc; tests/soak/run.sh runs it
 * plainly (NPTL, the reference) and under build/flexsc-run. For SECONDS
 * seconds these parts run at once, each in a thread of its own with helpers:
 *
 *   churn   batches of short joinable threads (return values checked),
 *           detached ones (each counted when it ends), small stacks
 *   queue   a bounded queue, 3 producers and 3 consumers on a mutex and two
 *           condition variables with untimed waits: every item produced is
 *           consumed once (count and sum); plus a turn-taking pair on
 *           pthread_cond_timedwait (a timeout over 500 ms after the
 *           signal is a lost wake-up)
 *   sem     2 posters and 2 takers on a counting semaphore (sem_wait,
 *           sem_timedwait, sem_trywait): posted = taken at the end; a
 *           ping-pong on two semaphores with 1 s timed waits (a timeout
 *           over 500 ms after the partner's post is a lost wake-up)
 *   pipe    rounds of a fresh pipe between a writer and a reader thread,
 *   sock    and of a fresh AF_UNIX socketpair (send/recv): 64 KiB to 1 MiB
 *           in chunks of random size, every byte checked against a
 *           seeded pattern, the reader polling first every other time
 *   fork    fork + exec of /bin/true (status 0), of this program as a
 *           threaded child (--child 7: status 7), and fork without exec
 *           (the child takes a mutex the parent's threads contend for,
 *           guarded by pthread_atfork, starts and joins a thread, _exit 42)
 *   signal  SIGUSR1 by pthread_kill to threads asleep, blocked in read,
 *           in a condition wait and computing; SIGUSR2 by kill to the
 *           process; bursts of 8 queued SIGRTMIN+2 (values summed); each
 *           must reach its handler within 10 s; alarm(1) must ring after
 *           0.9 to 10 s; a 10 ms POSIX timer (SIGRTMIN+3) counts its
 *           expirations with overruns, checked against the clock at the end
 *   sleep   nanosleep, usleep, clock_nanosleep relative and absolute on
 *           CLOCK_MONOTONIC and CLOCK_REALTIME for 0.1 to 20 ms: never
 *           early, never over 10 s late
 *   timed   timed waits that must time out: pthread_cond_timedwait
 *           (realtime and monotonic), pthread_cond_clockwait, sem_timedwait,
 *           sem_clockwait, pthread_mutex_timedlock on a held mutex:
 *           ETIMEDOUT, never early
 *   cancel  pthread_cancel of threads blocked in read, poll,
 *           pthread_cond_wait, nanosleep, sem_wait, or looping on
 *           pthread_testcancel: PTHREAD_CANCELED, exactly one cleanup
 *           handler run, the condition's mutex released
 *
 * Every handler installed with SA_RESTART; every call that may still fail
 * with EINTR is retried. The main thread is the watchdog: every second it
 * checks that each part made progress within --stall seconds (default 30;
 * a part that does not is a hang or a lost wake-up: FAIL, then exit 2 at
 * once, after SOAK_STALL_HOLD seconds if set, so that a driver can take a
 * backtrace). It prints a progress line every --every seconds. After
 * --warmup seconds (default SECONDS/10, 5 to 60) it samples the descriptor
 * count (/proc/self/fd), VmRSS and Threads (/proc/self/status); again just
 * before the end, while everything still runs, and once more after every
 * thread has been joined. Leaks are growth over the warm-up sample beyond:
 *   descriptors  +16 running, +0 after the join; but io_uring rings and
 *                eventfds (a runtime's queues: the soak opens neither; two
 *                per spare carrier) only +64 (pool_fd)
 *   threads      +32 running, +0 after the join; but threads a runtime or
 *                io_uring keeps in a pool (named "flexsc-..." or "iou-...":
 *                spare carriers, syscall threads, io_uring workers) only
 *                +32 after the join (pool_thread)
 *   VmRSS        +max(64 MiB, 50%) running
 * The running bounds are also checked every second after the warm-up: a
 * leak ends the run at once (FAIL) rather than take the machine's memory.
 * --only PART,PART... runs only those parts (finding which one leaks).
 * The end: one PASS or FAIL line per check, then "soak: N passed, N failed";
 * exit status 0 only when nothing failed.
 *
 * Usage: soak [SECONDS] [--stall N] [--warmup N] [--every N] [--only PARTS]
 *        soak --child CODE   (what the fork part execs)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { P_CHURN, P_QUEUE, P_SEM, P_PIPE, P_SOCK, P_FORK, P_SIGNAL, P_SLEEP, P_TIMED, P_CANCEL, NPARTS };
static const char *const part_name[NPARTS] = {
	"churn", "queue", "sem", "pipe", "sock", "fork", "signal", "sleep", "timed", "cancel",
};

static _Atomic unsigned long progress[NPARTS];
static _Atomic int part_done[NPARTS];
static _Atomic int part_fails[NPARTS];
static _Atomic int stop;
static int enabled[NPARTS];
static int stall_s = 30;
static char self_exe[PATH_MAX];

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static int passed, failed;

/* ---- output, time, randomness ---- */

static void say(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&out_lock);
	fputs("soak: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

/* A failed invariant in a part, as it happens: the first 10 of each part are printed. */
static void fail(int part, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n = atomic_fetch_add(&part_fails[part], 1);

	if (n >= 10)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	say("FAIL %s: %s%s", part_name[part], msg, n == 9 ? " (later ones not shown)" : "");
}

/* One final check. */
static void check(int ok, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	say("%s %s", ok ? "PASS" : "FAIL", msg);
	if (ok)
		passed++;
	else
		failed++;
}

static int64_t now_on(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t now_ns(void)
{
	return now_on(CLOCK_MONOTONIC);
}

static struct timespec ts_of(int64_t ns)
{
	struct timespec ts = { ns / 1000000000, ns % 1000000000 };

	return ts;
}

/* nanosleep for ms milliseconds, all of it (EINTR resumed) */
static void nap_ms(int ms)
{
	struct timespec ts = ts_of((int64_t)ms * 1000000), rem;

	while (nanosleep(&ts, &rem) != 0 && errno == EINTR)
		ts = rem;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static unsigned rnd_to(uint64_t *s, unsigned n)
{
	return (unsigned)(rnd(s) % n);
}

static void more(int part)
{
	atomic_fetch_add_explicit(&progress[part], 1, memory_order_relaxed);
}

static pthread_t start(void *(*fn)(void *), void *arg, int part)
{
	pthread_t t;
	int err;

	while ((err = pthread_create(&t, NULL, fn, arg)) == EAGAIN)
		nap_ms(1);
	if (err) {
		say("FAIL %s: pthread_create: %s", part_name[part], strerror(err));
		_exit(1);
	}
	return t;
}

/* ---- churn ---- */

static _Atomic long churn_ran, churn_detached_started, churn_detached_done;
static long churn_joined;

static void *churn_fn(void *arg)
{
	uintptr_t v = (uintptr_t)arg;
	char *p = malloc(64 + v % 4000);

	if (p) {
		memset(p, (int)v, 64);
		free(p);
	}
	if (v % 8 == 0)
		sched_yield();
	if (v % 16 == 1)
		nap_ms(1);
	atomic_fetch_add(&churn_ran, 1);
	return (void *)(v ^ 0x5a5a5a5aUL);
}

static void *churn_detached_fn(void *arg)
{
	churn_fn(arg);
	atomic_fetch_add(&churn_detached_done, 1);
	return NULL;
}

static void *part_churn(void *arg)
{
	pthread_attr_t det, small;
	uintptr_t seq = 0;

	(void)arg;
	pthread_attr_init(&det);
	pthread_attr_setdetachstate(&det, PTHREAD_CREATE_DETACHED);
	pthread_attr_init(&small);
	pthread_attr_setstacksize(&small, 64 * 1024);
	while (!atomic_load(&stop)) {
		pthread_t t[8];
		uintptr_t v[8];

		for (int i = 0; i < 8; i++) {
			int err;

			v[i] = ++seq;
			while ((err = pthread_create(&t[i], i == 7 ? &small : NULL, churn_fn, (void *)v[i])) == EAGAIN)
				nap_ms(1);
			if (err) {
				fail(P_CHURN, "pthread_create: %s", strerror(err));
				t[i] = 0;
			}
		}
		for (int i = 0; i < 8; i++) {
			void *r;

			if (!t[i])
				continue;
			pthread_join(t[i], &r);
			churn_joined++;
			if ((uintptr_t)r != (v[i] ^ 0x5a5a5a5aUL))
				fail(P_CHURN, "thread %lu returned %p", (unsigned long)v[i], r);
		}
		for (int i = 0; i < 4; i++) {
			pthread_t d;
			int err = pthread_create(&d, &det, churn_detached_fn, (void *)++seq);

			if (err == 0)
				atomic_fetch_add(&churn_detached_started, 1);
			else if (err != EAGAIN)
				fail(P_CHURN, "pthread_create (detached): %s", strerror(err));
		}
		more(P_CHURN);
	}
	/* every detached thread ends */
	int64_t until = now_ns() + (int64_t)stall_s * 1000000000;
	while (atomic_load(&churn_detached_done) != atomic_load(&churn_detached_started) && now_ns() < until)
		nap_ms(10);
	pthread_attr_destroy(&det);
	pthread_attr_destroy(&small);
	return NULL;
}

/* ---- queue: mutex and condition variables ---- */

#define QLEN 64
#define NPROD 3
#define NCONS 3
static struct {
	pthread_mutex_t m;
	pthread_cond_t not_empty, not_full;
	uint64_t item[QLEN];
	unsigned head, count;
	int producers_left;
} q = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, { 0 }, 0, 0, NPROD };
static _Atomic uint64_t q_put_n, q_put_sum, q_got_n, q_got_sum;

static void *q_producer(void *arg)
{
	uint64_t id = (uintptr_t)arg, seq = 0, n = 0, sum = 0;

	while (!atomic_load(&stop)) {
		uint64_t v = (id << 48) | ++seq;

		pthread_mutex_lock(&q.m);
		while (q.count == QLEN)
			pthread_cond_wait(&q.not_full, &q.m);
		q.item[(q.head + q.count++) % QLEN] = v;
		if (seq % 16 == 0)
			pthread_cond_broadcast(&q.not_empty);
		else
			pthread_cond_signal(&q.not_empty);
		pthread_mutex_unlock(&q.m);
		n++;
		sum += v * 0x9e3779b97f4a7c15ULL;
		if (seq % 256 == 0)
			sched_yield();
	}
	atomic_fetch_add(&q_put_n, n);
	atomic_fetch_add(&q_put_sum, sum);
	pthread_mutex_lock(&q.m);
	if (--q.producers_left == 0)
		pthread_cond_broadcast(&q.not_empty);
	pthread_mutex_unlock(&q.m);
	return NULL;
}

static void *q_consumer(void *arg)
{
	uint64_t n = 0, sum = 0;

	(void)arg;
	for (;;) {
		uint64_t v;

		pthread_mutex_lock(&q.m);
		while (q.count == 0 && q.producers_left > 0)
			pthread_cond_wait(&q.not_empty, &q.m);
		if (q.count == 0) {
			pthread_mutex_unlock(&q.m);
			break;
		}
		v = q.item[q.head];
		q.head = (q.head + 1) % QLEN;
		q.count--;
		pthread_cond_signal(&q.not_full);
		pthread_mutex_unlock(&q.m);
		n++;
		sum += v * 0x9e3779b97f4a7c15ULL;
		more(P_QUEUE);
	}
	atomic_fetch_add(&q_got_n, n);
	atomic_fetch_add(&q_got_sum, sum);
	return NULL;
}

/* Two threads take turns on a flag with timed waits of 1 s. */
static struct {
	pthread_mutex_t m;
	pthread_cond_t c;
	int turn;
	int64_t turn_ns; /* when turn last changed */
	long rounds;
	int quit;
} tt = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0 };
static _Atomic long tt_timeouts;

static void *q_turns(void *arg)
{
	int me = (int)(uintptr_t)arg;

	pthread_mutex_lock(&tt.m);
	while (!tt.quit) {
		while (tt.turn != me && !tt.quit) {
			int64_t dl_mono = now_ns() + 1000000000;
			struct timespec dl = ts_of(now_on(CLOCK_REALTIME) + 1000000000);
			int err = pthread_cond_timedwait(&tt.c, &tt.m, &dl);

			if (err == ETIMEDOUT) {
				atomic_fetch_add(&tt_timeouts, 1);
				/* signalled (turn_ns is stamped after the signal) 500 ms before the deadline */
				if (tt.turn == me && tt.turn_ns < dl_mono - 500000000)
					fail(P_QUEUE, "lost wake-up: pthread_cond_timedwait timed out %lld ms after it was signalled",
					     (long long)((dl_mono - tt.turn_ns) / 1000000));
			} else if (err) {
				fail(P_QUEUE, "pthread_cond_timedwait: %s", strerror(err));
			}
		}
		tt.turn = !me;
		tt.rounds++;
		pthread_cond_signal(&tt.c);
		tt.turn_ns = now_ns();
	}
	pthread_mutex_unlock(&tt.m);
	return NULL;
}

static void *part_queue(void *arg)
{
	pthread_t p[NPROD], c[NCONS], turns[2];

	(void)arg;
	for (int i = 0; i < NPROD; i++)
		p[i] = start(q_producer, (void *)(uintptr_t)(i + 1), P_QUEUE);
	for (int i = 0; i < NCONS; i++)
		c[i] = start(q_consumer, NULL, P_QUEUE);
	tt.turn_ns = now_ns();
	for (int i = 0; i < 2; i++)
		turns[i] = start(q_turns, (void *)(uintptr_t)i, P_QUEUE);
	while (!atomic_load(&stop))
		nap_ms(50);
	for (int i = 0; i < NPROD; i++)
		pthread_join(p[i], NULL);
	for (int i = 0; i < NCONS; i++)
		pthread_join(c[i], NULL);
	pthread_mutex_lock(&tt.m);
	tt.quit = 1;
	pthread_cond_broadcast(&tt.c);
	pthread_mutex_unlock(&tt.m);
	for (int i = 0; i < 2; i++)
		pthread_join(turns[i], NULL);
	return NULL;
}

/* ---- sem ---- */

static sem_t s_items, s_ping, s_pong;
static _Atomic long s_posted, s_taken, s_timeouts, s_pp_rounds;
static _Atomic int s_posters_done;
static _Atomic long ping_posted, pong_posted;
static _Atomic int64_t ping_ns, pong_ns;

static void *s_poster(void *arg)
{
	uint64_t r = (uintptr_t)arg * 7919 + 1;

	while (!atomic_load(&stop)) {
		int n = 1 + rnd_to(&r, 16);

		for (int i = 0; i < n; i++) {
			sem_post(&s_items);
			atomic_fetch_add(&s_posted, 1);
		}
		if (rnd_to(&r, 4) == 0)
			nap_ms(1);
		else
			sched_yield();
	}
	atomic_fetch_add(&s_posters_done, 1);
	return NULL;
}

static void *s_taker(void *arg)
{
	uint64_t r = (uintptr_t)arg * 104729 + 3;

	while (atomic_load(&s_posters_done) < 2) {
		int kind = rnd_to(&r, 3), rc;

		if (kind == 0) {
			/* untimed only while the posters run, or it may wait forever */
			if (atomic_load(&stop))
				continue;
			rc = sem_trywait(&s_items);
			if (rc != 0) {
				struct timespec dl = ts_of(now_on(CLOCK_REALTIME) + 100000000);

				rc = sem_timedwait(&s_items, &dl);
			}
		} else if (kind == 1) {
			struct timespec dl = ts_of(now_on(CLOCK_REALTIME) + 1000000 * (1 + rnd_to(&r, 50)));

			rc = sem_timedwait(&s_items, &dl);
		} else {
			rc = sem_trywait(&s_items);
			if (rc != 0)
				sched_yield();
		}
		if (rc == 0) {
			atomic_fetch_add(&s_taken, 1);
			more(P_SEM);
		} else if (errno == ETIMEDOUT) {
			atomic_fetch_add(&s_timeouts, 1);
		} else if (errno != EINTR && errno != EAGAIN) {
			fail(P_SEM, "sem wait: %s", strerror(errno));
		}
	}
	/* the rest */
	while (sem_trywait(&s_items) == 0)
		atomic_fetch_add(&s_taken, 1);
	return NULL;
}

/* waits on s for its partner's post; returns 0 when taken, 1 when told to quit */
static int pp_wait(sem_t *s, _Atomic long *posted, long taken, _Atomic int64_t *post_ns, const char *name)
{
	for (;;) {
		int64_t dl_mono = now_ns() + 1000000000;
		struct timespec dl = ts_of(now_on(CLOCK_REALTIME) + 1000000000);

		if (sem_timedwait(s, &dl) == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != ETIMEDOUT) {
			fail(P_SEM, "sem_timedwait(%s): %s", name, strerror(errno));
			return 1;
		}
		/* posted (post_ns is stamped after sem_post) 500 ms before the deadline */
		if (atomic_load(posted) > taken && atomic_load(post_ns) < dl_mono - 500000000)
			fail(P_SEM, "lost wake-up: sem_timedwait(%s) timed out %lld ms after the post", name,
			     (long long)((dl_mono - atomic_load(post_ns)) / 1000000));
		if (atomic_load(&stop) && atomic_load(posted) <= taken)
			return 1;
	}
}

static void *s_pong_fn(void *arg)
{
	long n = 0;

	(void)arg;
	while (pp_wait(&s_ping, &ping_posted, n, &ping_ns, "ping") == 0) {
		n++;
		atomic_fetch_add(&pong_posted, 1);
		sem_post(&s_pong);
		atomic_store(&pong_ns, now_ns());
	}
	return NULL;
}

static void *part_sem(void *arg)
{
	pthread_t t[5];
	long n = 0;

	(void)arg;
	sem_init(&s_items, 0, 0);
	sem_init(&s_ping, 0, 0);
	sem_init(&s_pong, 0, 0);
	for (int i = 0; i < 2; i++)
		t[i] = start(s_poster, (void *)(uintptr_t)(i + 1), P_SEM);
	for (int i = 0; i < 2; i++)
		t[2 + i] = start(s_taker, (void *)(uintptr_t)(i + 1), P_SEM);
	t[4] = start(s_pong_fn, NULL, P_SEM);
	while (!atomic_load(&stop)) {
		atomic_fetch_add(&ping_posted, 1);
		sem_post(&s_ping);
		atomic_store(&ping_ns, now_ns());
		if (pp_wait(&s_pong, &pong_posted, n, &pong_ns, "pong"))
			break;
		n++;
		atomic_fetch_add(&s_pp_rounds, 1);
		more(P_SEM);
	}
	for (int i = 0; i < 5; i++)
		pthread_join(t[i], NULL);
	sem_destroy(&s_items);
	sem_destroy(&s_ping);
	sem_destroy(&s_pong);
	return NULL;
}

/* ---- pipe and sock: checked streams ---- */

static unsigned char pattern(uint64_t seed, uint64_t i)
{
	uint64_t x = (seed + i) * 0x9e3779b97f4a7c15ULL;

	return (unsigned char)(x >> 56 ^ x >> 29);
}

struct stream {
	int fd, sock, part;
	uint64_t seed, got, bad;
	char *buf;
};

static void *stream_reader(void *arg)
{
	struct stream *s = arg;
	uint64_t r = s->seed | 1;

	for (int k = 0;; k++) {
		size_t want = 1 + rnd_to(&r, 65536);
		ssize_t n;

		if (k % 2) {
			struct pollfd p = { s->fd, POLLIN, 0 };
			int pr = poll(&p, 1, 30000);

			if (pr < 0 && errno == EINTR)
				continue;
			if (pr != 1) {
				fail(s->part, "poll: %d (%s)", pr, pr < 0 ? strerror(errno) : "timed out after 30 s");
				break;
			}
		}
		n = s->sock ? recv(s->fd, s->buf, want, 0) : read(s->fd, s->buf, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fail(s->part, "read: %s", strerror(errno));
			break;
		}
		if (n == 0)
			break;
		for (ssize_t i = 0; i < n; i++)
			if ((unsigned char)s->buf[i] != pattern(s->seed, s->got + (uint64_t)i))
				s->bad++;
		s->got += (uint64_t)n;
	}
	return NULL;
}

static void *part_stream(void *arg)
{
	int part = (int)(uintptr_t)arg;
	uint64_t r = 0x1234567ULL + (uint64_t)part;
	char *wbuf = malloc(65536), *rbuf = malloc(65536);

	while (!atomic_load(&stop)) {
		int fds[2], rc;
		struct stream s = { .part = part, .sock = part == P_SOCK, .seed = rnd(&r), .buf = rbuf };
		uint64_t total = 65536 + rnd_to(&r, 1 << 20), sent = 0;
		pthread_t t;

		rc = part == P_SOCK ? socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) : pipe2(fds, O_CLOEXEC);
		if (rc) {
			fail(part, "%s: %s", part == P_SOCK ? "socketpair" : "pipe2", strerror(errno));
			nap_ms(100);
			continue;
		}
		s.fd = fds[0];
		t = start(stream_reader, &s, part);
		while (sent < total) {
			size_t len = 1 + rnd_to(&r, 65536);
			ssize_t n;

			if (len > total - sent)
				len = total - sent;
			for (size_t i = 0; i < len; i++)
				wbuf[i] = (char)pattern(s.seed, sent + i);
			n = s.sock ? send(fds[1], wbuf, len, MSG_NOSIGNAL) : write(fds[1], wbuf, len);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				fail(part, "write: %s", n < 0 ? strerror(errno) : "0");
				break;
			}
			sent += (uint64_t)n;
		}
		close(fds[1]);
		pthread_join(t, NULL);
		close(fds[0]);
		if (s.got != sent || s.bad)
			fail(part, "%llu bytes written, %llu read, %llu of them wrong", (unsigned long long)sent,
			     (unsigned long long)s.got, (unsigned long long)s.bad);
		more(part);
	}
	free(wbuf);
	free(rbuf);
	return NULL;
}

/* ---- fork ---- */

static pthread_mutex_t fork_m = PTHREAD_MUTEX_INITIALIZER;
static long fork_m_count;
static long forks[3];

static void fork_prepare(void) { pthread_mutex_lock(&fork_m); }
static void fork_parent(void) { pthread_mutex_unlock(&fork_m); }
static void fork_child(void) { pthread_mutex_unlock(&fork_m); }

static void *fork_hammer(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		pthread_mutex_lock(&fork_m);
		fork_m_count++;
		pthread_mutex_unlock(&fork_m);
		if (fork_m_count % 64 == 0)
			nap_ms(1);
	}
	return NULL;
}

static void *fork_child_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&fork_m);
	fork_m_count++;
	pthread_mutex_unlock(&fork_m);
	return (void *)42;
}

/* waits up to stall_s for pid; the status, or -1 (killed) */
static int reap(pid_t pid)
{
	int64_t until = now_ns() + (int64_t)stall_s * 1000000000;
	int st;

	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid)
			return st;
		if (w < 0 && errno != EINTR) {
			fail(P_FORK, "waitpid: %s", strerror(errno));
			return -1;
		}
		if (now_ns() > until) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		nap_ms(2);
	}
}

static void *part_fork(void *arg)
{
	pthread_t h;
	static const char *const what[3] = { "fork+exec /bin/true", "fork+exec soak --child 7", "fork (no exec)" };
	static const int want[3] = { 0, 7, 42 };
	int k = 0;

	(void)arg;
	h = start(fork_hammer, NULL, P_FORK);
	while (!atomic_load(&stop)) {
		pid_t pid = fork();
		int st;

		if (pid < 0) {
			fail(P_FORK, "fork: %s", strerror(errno));
			nap_ms(100);
			continue;
		}
		if (pid == 0) {
			if (k == 0) {
				execl("/bin/true", "true", (char *)NULL);
				_exit(126);
			}
			if (k == 1) {
				execl(self_exe, self_exe, "--child", "7", (char *)NULL);
				_exit(126);
			}
			/* fork without exec: a mutex the parent contends for, a thread */
			pthread_t t;
			void *rv;

			pthread_mutex_lock(&fork_m);
			fork_m_count++;
			pthread_mutex_unlock(&fork_m);
			if (pthread_create(&t, NULL, fork_child_thread, NULL) != 0)
				_exit(3);
			pthread_join(t, &rv);
			_exit(rv == (void *)42 ? 42 : 4);
		}
		st = reap(pid);
		if (st == -1)
			fail(P_FORK, "%s: the child did not end within %d s (killed)", what[k], stall_s);
		else if (!WIFEXITED(st) || WEXITSTATUS(st) != want[k])
			fail(P_FORK, "%s: status 0x%x, not exit %d", what[k], st, want[k]);
		forks[k]++;
		k = (k + 1) % 3;
		more(P_FORK);
	}
	pthread_join(h, NULL);
	return NULL;
}

/* what "soak --child CODE" does: a thread, a mutex, a pipe, then exit CODE */
static pthread_mutex_t child_m = PTHREAD_MUTEX_INITIALIZER;
static int child_n;

static void *child_thread(void *arg)
{
	int fd = *(int *)arg;

	pthread_mutex_lock(&child_m);
	child_n++;
	pthread_mutex_unlock(&child_m);
	return write(fd, "k", 1) == 1 ? NULL : (void *)1;
}

static int child_main(int code)
{
	int fds[2];
	char c = 0;
	pthread_t t;
	void *rv = (void *)1;

	if (pipe(fds) || pthread_create(&t, NULL, child_thread, &fds[1]))
		return 3;
	while (read(fds[0], &c, 1) < 0 && errno == EINTR)
		;
	pthread_join(t, &rv);
	pthread_mutex_lock(&child_m);
	int n = child_n;
	pthread_mutex_unlock(&child_m);
	return c == 'k' && rv == NULL && n == 1 ? code : 5;
}

/* ---- signal ---- */

struct target {
	_Atomic long got;
	pthread_t t;
};
static struct target targets[4];
static __thread struct target *my_target;
static _Atomic long usr1_n, usr1_misdirected, usr2_n, rt_n, rt_sum, alrm_n, tick_n, tick_si_n, tick_sigs;
static int target_pipe[2];
static pthread_mutex_t target_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t target_c = PTHREAD_COND_INITIALIZER;
static int target_wakes;
static timer_t tick_timer;
static _Atomic int targets_ready;

static void on_usr1(int sig)
{
	(void)sig;
	if (my_target)
		atomic_fetch_add(&my_target->got, 1);
	else
		atomic_fetch_add(&usr1_misdirected, 1);
	atomic_fetch_add(&usr1_n, 1);
}

static void on_usr2(int sig)
{
	(void)sig;
	atomic_fetch_add(&usr2_n, 1);
}

static void on_rt(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	atomic_fetch_add(&rt_sum, si->si_value.sival_int);
	atomic_fetch_add(&rt_n, 1);
}

static void on_alrm(int sig)
{
	(void)sig;
	atomic_fetch_add(&alrm_n, 1);
}

/* counted as a program would (timer_getoverrun), and from each signal's own si_overrun */
static void on_tick(int sig, siginfo_t *si, void *uc)
{
	int over = timer_getoverrun(tick_timer);

	(void)sig;
	(void)uc;
	atomic_fetch_add(&tick_n, 1 + (over > 0 ? over : 0));
	atomic_fetch_add(&tick_si_n, 1 + (si->si_overrun > 0 ? si->si_overrun : 0));
	atomic_fetch_add(&tick_sigs, 1);
}

static void *target_fn(void *arg)
{
	int kind = (int)(uintptr_t)arg;
	volatile uint64_t x = 1;

	my_target = &targets[kind];
	atomic_fetch_add(&targets_ready, 1);
	while (!atomic_load(&stop)) {
		if (kind == 0) {
			nap_ms(50);
		} else if (kind == 1) {
			char c;

			if (read(target_pipe[0], &c, 1) < 0 && errno != EINTR)
				fail(P_SIGNAL, "target read: %s", strerror(errno));
		} else if (kind == 2) {
			pthread_mutex_lock(&target_m);
			int w = target_wakes;
			while (w == target_wakes)
				pthread_cond_wait(&target_c, &target_m);
			pthread_mutex_unlock(&target_m);
		} else {
			for (int i = 0; i < 100000; i++)
				x = x * 6364136223846793005ULL + 1;
			sched_yield();
		}
	}
	return NULL;
}

static _Atomic long nudged;

/* ends the condition wait of target 2 */
static void wake_cond_target(void)
{
	pthread_mutex_lock(&target_m);
	target_wakes++;
	pthread_cond_broadcast(&target_c);
	pthread_mutex_unlock(&target_m);
}

/*
 * Waits up to 10 s until *n reaches want. A handler that has not run after
 * 100 ms may be waiting for a thread in a condition wait to run again
 * (POSIX wants it run during the wait; a runtime may defer it): target 2's
 * wait is then ended, once, and the signal counted as nudged.
 */
static int await_count(_Atomic long *n, long want)
{
	int64_t t0 = now_ns(), until = t0 + 10000000000LL;
	int nudge = 1;

	while (atomic_load(n) < want) {
		if (now_ns() > until)
			return 0;
		if (nudge && now_ns() - t0 > 100000000) {
			nudge = 0;
			wake_cond_target();
			atomic_fetch_add(&nudged, 1);
		}
		nap_ms(1);
	}
	return 1;
}

static int64_t tick_start_ns, tick_end_ns;

static void *part_signal(void *arg)
{
	struct sigevent sev = { 0 };
	struct itimerspec its = { { 0, 10000000 }, { 0, 10000000 } };
	int64_t next_alarm = now_ns();
	long round = 0, sum = 0;

	(void)arg;
	if (pipe2(target_pipe, O_CLOEXEC))
		fail(P_SIGNAL, "pipe2: %s", strerror(errno));
	for (int i = 0; i < 4; i++)
		targets[i].t = start(target_fn, (void *)(uintptr_t)i, P_SIGNAL);
	while (atomic_load(&targets_ready) < 4)
		nap_ms(1);
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGRTMIN + 3;
	if (timer_create(CLOCK_MONOTONIC, &sev, &tick_timer) || timer_settime(tick_timer, 0, &its, NULL))
		fail(P_SIGNAL, "timer: %s", strerror(errno));
	tick_start_ns = now_ns();
	while (!atomic_load(&stop)) {
		int i = (int)(round++ % 4);
		long before = atomic_load(&usr1_n);

		/* SIGUSR1 to one thread */
		pthread_kill(targets[i].t, SIGUSR1);
		if (!await_count(&usr1_n, before + 1))
			fail(P_SIGNAL, "pthread_kill SIGUSR1 to target %d: no handler ran within 10 s", i);
		/* SIGUSR2 to the process */
		before = atomic_load(&usr2_n);
		kill(getpid(), SIGUSR2);
		if (!await_count(&usr2_n, before + 1))
			fail(P_SIGNAL, "kill SIGUSR2: no handler ran within 10 s");
		/* 8 queued real-time signals, each counted */
		before = atomic_load(&rt_n);
		for (int k = 1; k <= 8; k++) {
			union sigval v = { .sival_int = k };

			if (sigqueue(getpid(), SIGRTMIN + 2, v))
				fail(P_SIGNAL, "sigqueue: %s", strerror(errno));
			sum += k;
		}
		if (!await_count(&rt_n, before + 8))
			fail(P_SIGNAL, "sigqueue: %ld of 8 SIGRTMIN+2 handled within 10 s", atomic_load(&rt_n) - before);
		/* alarm(1) every 5 s */
		if (now_ns() >= next_alarm) {
			int64_t t0 = now_ns(), took;

			before = atomic_load(&alrm_n);
			alarm(1);
			if (!await_count(&alrm_n, before + 1))
				fail(P_SIGNAL, "alarm(1): no SIGALRM within 10 s");
			took = now_ns() - t0;
			if (took < 900000000)
				fail(P_SIGNAL, "alarm(1) rang after %lld ms", (long long)(took / 1000000));
			next_alarm = now_ns() + 5000000000LL;
		}
		/* wake the blocked targets now and then */
		if (round % 8 == 0) {
			if (write(target_pipe[1], "x", 1) != 1)
				fail(P_SIGNAL, "write: %s", strerror(errno));
			wake_cond_target();
		}
		more(P_SIGNAL);
		nap_ms(1);
	}
	timer_delete(tick_timer);
	tick_end_ns = now_ns();
	if (atomic_load(&rt_sum) != sum)
		fail(P_SIGNAL, "queued values sum to %ld, sent %ld", atomic_load(&rt_sum), sum);
	/* let the targets go */
	for (int k = 0; k < 8; k++) {
		if (write(target_pipe[1], "xxxx", 4) != 4)
			break;
		wake_cond_target();
	}
	for (int i = 0; i < 4; i++)
		pthread_join(targets[i].t, NULL);
	close(target_pipe[0]);
	close(target_pipe[1]);
	return NULL;
}

/* ---- sleep ---- */

static _Atomic long sleeps, sleep_late_max_us, sleep_late_sum_us;

static void *part_sleep(void *arg)
{
	uint64_t r = 0xfeedULL;

	(void)arg;
	while (!atomic_load(&stop)) {
		int64_t d = 100000 + rnd_to(&r, 20000000), t0, late;
		int kind = rnd_to(&r, 6);
		clockid_t c = kind == 4 || kind == 5 ? CLOCK_REALTIME : CLOCK_MONOTONIC;
		struct timespec ts = ts_of(d), rem;
		int rc;

		t0 = now_on(c);
		switch (kind) {
		case 0:
			while (nanosleep(&ts, &rem) && errno == EINTR)
				ts = rem;
			break;
		case 1:
			while (usleep((useconds_t)(d / 1000 + 1)) && errno == EINTR)
				; /* restarts the whole time: only longer */
			d = (d / 1000 + 1) * 1000;
			break;
		case 2:
		case 4:
			while ((rc = clock_nanosleep(c, 0, &ts, &rem)) == EINTR)
				ts = rem;
			if (rc)
				fail(P_SLEEP, "clock_nanosleep: %s", strerror(rc));
			break;
		default:
			ts = ts_of(t0 + d);
			while ((rc = clock_nanosleep(c, TIMER_ABSTIME, &ts, NULL)) == EINTR)
				;
			if (rc)
				fail(P_SLEEP, "clock_nanosleep (absolute): %s", strerror(rc));
			break;
		}
		late = now_on(c) - t0 - d;
		if (late < 0)
			fail(P_SLEEP, "sleep kind %d of %lld us ended %lld us early", kind, (long long)(d / 1000),
			     (long long)(-late / 1000));
		else if (late > 10000000000LL)
			fail(P_SLEEP, "sleep kind %d of %lld us ended %lld ms late", kind, (long long)(d / 1000),
			     (long long)(late / 1000000));
		if (late > 0) {
			long us = (long)(late / 1000), m = atomic_load(&sleep_late_max_us);

			atomic_fetch_add(&sleep_late_sum_us, us);
			if (us > m)
				atomic_store(&sleep_late_max_us, us);
		}
		atomic_fetch_add(&sleeps, 1);
		more(P_SLEEP);
	}
	return NULL;
}

/* ---- timed: waits that must time out ---- */

static pthread_mutex_t held_m = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int held_state; /* 1: held_m held by the holder; 2: let it go */
static long timed_n;

static void *holder_fn(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&held_m);
	atomic_store(&held_state, 1);
	while (atomic_load(&held_state) != 2)
		nap_ms(5);
	pthread_mutex_unlock(&held_m);
	return NULL;
}

static void *part_timed(void *arg)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c_rt, c_mono;
	pthread_condattr_t ca;
	sem_t s;
	uint64_t r = 0xabcdefULL;
	pthread_t holder;
	static const char *const what[6] = {
		"pthread_cond_timedwait (realtime)", "pthread_cond_timedwait (monotonic)", "pthread_cond_clockwait",
		"sem_timedwait", "sem_clockwait", "pthread_mutex_timedlock",
	};

	(void)arg;
	pthread_cond_init(&c_rt, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c_mono, &ca);
	pthread_condattr_destroy(&ca);
	sem_init(&s, 0, 0);
	holder = start(holder_fn, NULL, P_TIMED);
	while (atomic_load(&held_state) != 1)
		nap_ms(1);
	while (!atomic_load(&stop)) {
		int kind = rnd_to(&r, 6), rc;
		clockid_t clk = kind == 0 || kind == 3 || kind == 5 ? CLOCK_REALTIME : CLOCK_MONOTONIC;
		int64_t d = 1000000 + rnd_to(&r, 10000000), dl = now_on(clk) + d, late;
		struct timespec ts = ts_of(dl);

		switch (kind) {
		case 0:
		case 1:
		case 2:
			pthread_mutex_lock(&m);
			do
				rc = kind == 2 ? pthread_cond_clockwait(&c_mono, &m, CLOCK_MONOTONIC, &ts)
					       : pthread_cond_timedwait(kind ? &c_mono : &c_rt, &m, &ts);
			while (rc == 0); /* spurious: the predicate (never) is false */
			pthread_mutex_unlock(&m);
			break;
		case 3:
		case 4:
			while ((rc = kind == 3 ? sem_timedwait(&s, &ts) : sem_clockwait(&s, CLOCK_MONOTONIC, &ts)) &&
			       errno == EINTR)
				;
			rc = rc ? errno : 0;
			break;
		default:
			rc = pthread_mutex_timedlock(&held_m, &ts);
			if (rc == 0)
				pthread_mutex_unlock(&held_m);
			break;
		}
		late = now_on(clk) - dl;
		if (rc != ETIMEDOUT)
			fail(P_TIMED, "%s returned %d (%s), not ETIMEDOUT", what[kind], rc, strerror(rc));
		else if (late < 0)
			fail(P_TIMED, "%s timed out %lld us early", what[kind], (long long)(-late / 1000));
		else if (late > 10000000000LL)
			fail(P_TIMED, "%s timed out %lld ms late", what[kind], (long long)(late / 1000000));
		timed_n++;
		more(P_TIMED);
	}
	atomic_store(&held_state, 2);
	pthread_join(holder, NULL);
	pthread_cond_destroy(&c_rt);
	pthread_cond_destroy(&c_mono);
	sem_destroy(&s);
	return NULL;
}

/* ---- cancel ---- */

static _Atomic long cleanups;
static _Atomic int victim_ready;
static int cancel_pipe[2];
static pthread_mutex_t cancel_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cancel_c = PTHREAD_COND_INITIALIZER;
static sem_t cancel_s;
static long cancels[6];
static const char *const cancel_what[6] = { "read", "poll", "pthread_cond_wait", "nanosleep", "sem_wait",
					     "pthread_testcancel" };

static void cleanup_count(void *arg)
{
	(void)arg;
	atomic_fetch_add(&cleanups, 1);
}

static void cleanup_unlock(void *arg)
{
	pthread_mutex_unlock(arg);
	atomic_fetch_add(&cleanups, 1);
}

static void *victim_fn(void *arg)
{
	int kind = (int)(uintptr_t)arg;
	char c;

	if (kind == 2) {
		pthread_mutex_lock(&cancel_m);
		pthread_cleanup_push(cleanup_unlock, &cancel_m);
		atomic_store(&victim_ready, 1);
		for (;;)
			pthread_cond_wait(&cancel_c, &cancel_m);
		pthread_cleanup_pop(1);
		return NULL;
	}
	pthread_cleanup_push(cleanup_count, NULL);
	atomic_store(&victim_ready, 1);
	for (;;) {
		if (kind == 0) {
			if (read(cancel_pipe[0], &c, 1) >= 0)
				fail(P_CANCEL, "read returned from an empty pipe");
		} else if (kind == 1) {
			struct pollfd p = { cancel_pipe[0], POLLIN, 0 };

			poll(&p, 1, -1);
		} else if (kind == 3) {
			struct timespec ts = { 60, 0 };

			nanosleep(&ts, NULL);
		} else if (kind == 4) {
			sem_wait(&cancel_s);
		} else {
			pthread_testcancel();
			sched_yield(); /* one carrier: let the canceller run */
		}
	}
	pthread_cleanup_pop(0);
	return NULL;
}

static void *part_cancel(void *arg)
{
	uint64_t r = 0x31337ULL;

	(void)arg;
	if (pipe2(cancel_pipe, O_CLOEXEC))
		fail(P_CANCEL, "pipe2: %s", strerror(errno));
	sem_init(&cancel_s, 0, 0);
	while (!atomic_load(&stop)) {
		int kind = rnd_to(&r, 6), delay = rnd_to(&r, 4), err;
		long before = atomic_load(&cleanups);
		pthread_t v;
		void *rv = NULL;
		struct timespec dl;

		atomic_store(&victim_ready, 0);
		v = start(victim_fn, (void *)(uintptr_t)kind, P_CANCEL);
		if (delay) { /* else at once: maybe before it blocks */
			for (int i = 0; i < 10000 && !atomic_load(&victim_ready); i++)
				nap_ms(1);
			nap_ms(delay - 1);
		}
		if ((err = pthread_cancel(v)))
			fail(P_CANCEL, "pthread_cancel: %s", strerror(err));
		dl = ts_of(now_on(CLOCK_REALTIME) + (int64_t)stall_s * 1000000000);
		err = pthread_timedjoin_np(v, &rv, &dl);
		if (err == ETIMEDOUT) {
			fail(P_CANCEL, "a thread cancelled in %s did not end within %d s", cancel_what[kind], stall_s);
			pthread_join(v, &rv); /* hangs; the watchdog reports it */
		} else if (err) {
			fail(P_CANCEL, "pthread_timedjoin_np: %s", strerror(err));
		}
		if (rv != PTHREAD_CANCELED)
			fail(P_CANCEL, "a thread cancelled in %s returned %p", cancel_what[kind], rv);
		if (atomic_load(&cleanups) != before + 1)
			fail(P_CANCEL, "cancelled in %s: %ld cleanup handlers ran, not 1", cancel_what[kind],
			     atomic_load(&cleanups) - before);
		if (kind == 2) {
			if (pthread_mutex_trylock(&cancel_m))
				fail(P_CANCEL, "cancelled in pthread_cond_wait: the mutex is still held");
			else
				pthread_mutex_unlock(&cancel_m);
		}
		cancels[kind]++;
		more(P_CANCEL);
	}
	sem_destroy(&cancel_s);
	close(cancel_pipe[0]);
	close(cancel_pipe[1]);
	return NULL;
}

/* ---- the process: descriptors, memory, threads ---- */

struct sample {
	long fds, rss_kb, threads;
	long pool; /* of threads: a runtime's or the kernel's pools (pool_thread), the rest are ours */
	long pool_fds; /* of fds: a runtime's queues (pool_fd) */
};

/* An io_uring ring or an eventfd: the soak opens neither, a runtime's queues have them. */
static int pool_fd(const char *fd)
{
	char path[320], to[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%s", fd);
	n = readlink(path, to, sizeof(to) - 1);
	if (n <= 0)
		return 0;
	to[n] = 0;
	return !strcmp(to, "anon_inode:[io_uring]") || !strcmp(to, "anon_inode:[eventfd]");
}

/*
 * Kernel threads that are not the program's: named "flexsc-..." (FlexSC's
 * carriers, spare carriers, syscall, overflow, signal and monitor
 * threads) or "iou-..." (io_uring's workers, which the kernel ends after a
 * few idle seconds). Pools grown on demand are kept for the next burst:
 * a spare carrier after the monitor handed a blocked carrier's core over,
 * a syscall thread after every one was busy. They need not go back when
 * the program's threads are joined; they are bounded as running threads
 * are (+32). On NPTL every thread is the program's.
 */
static int pool_thread(const char *tid)
{
	char path[320], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%s/comm", tid);
	f = fopen(path, "re");
	if (!f)
		return -1; /* gone meanwhile */
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = 0;
	fclose(f);
	return !strncmp(comm, "flexsc-", 7) || !strncmp(comm, "iou-", 4);
}

static struct sample sample_now(void)
{
	struct sample s = { -1, -1, -1, 0, 0 };
	DIR *d = opendir("/proc/self/fd");
	FILE *f;
	char line[256];

	if (d) {
		struct dirent *e;

		s.fds = 0;
		while ((e = readdir(d)))
			if (e->d_name[0] != '.') {
				s.fds++;
				s.pool_fds += pool_fd(e->d_name);
			}
		s.fds--; /* the directory's own */
		closedir(d);
	}
	d = opendir("/proc/self/task");
	if (d) {
		struct dirent *e;

		s.threads = 0; /* counted here, with the same list as the pools */
		while ((e = readdir(d))) {
			int pool = e->d_name[0] != '.' ? pool_thread(e->d_name) : -1;
			if (pool >= 0) {
				s.threads++;
				s.pool += pool;
			}
		}
		closedir(d);
	}
	f = fopen("/proc/self/status", "re");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			if (!strncmp(line, "VmRSS:", 6))
				s.rss_kb = atol(line + 6);
			else if (!strncmp(line, "Threads:", 8) && s.threads < 0)
				s.threads = atol(line + 8);
		}
		fclose(f);
	}
	return s;
}

/* how far VmRSS may grow over the warm-up sample: 64 MiB or half, the larger */
static long rss_bound(struct sample warm)
{
	return warm.rss_kb / 2 > 65536 ? warm.rss_kb / 2 : 65536;
}

static void *(*const part_fn[NPARTS])(void *) = {
	[P_CHURN] = part_churn, [P_QUEUE] = part_queue, [P_SEM] = part_sem,   [P_PIPE] = part_stream,
	[P_SOCK] = part_stream, [P_FORK] = part_fork,   [P_SIGNAL] = part_signal, [P_SLEEP] = part_sleep,
	[P_TIMED] = part_timed, [P_CANCEL] = part_cancel,
};

struct part_arg {
	int part;
};

static void *run_part(void *arg)
{
	int p = ((struct part_arg *)arg)->part;

	part_fn[p]((void *)(uintptr_t)p);
	atomic_store(&part_done[p], 1);
	return NULL;
}

static void progress_line(int64_t t0, const char *when)
{
	char buf[512];
	int n = 0;

	for (int p = 0; p < NPARTS; p++)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, " %s=%lu", part_name[p], atomic_load(&progress[p]));
	struct sample s = sample_now();
	say("%s t=%llds%s fds=%ld rss=%ldkB threads=%ld", when, (long long)((now_ns() - t0) / 1000000000), buf, s.fds,
	    s.rss_kb, s.threads);
}

static void stalled(int64_t t0, const char *what)
{
	const char *hold = getenv("SOAK_STALL_HOLD");

	progress_line(t0, "STALL");
	say("STALL %s (pid %d)", what, (int)getpid());
	if (hold && atoi(hold) > 0)
		nap_ms(atoi(hold) * 1000);
	say("0 passed, 1 failed");
	_exit(2);
}

static void handle(int sig, void (*fn)(int))
{
	struct sigaction sa = { 0 };

	sa.sa_handler = fn;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

int main(int argc, char **argv)
{
	int seconds = 60, warmup = -1, every = 10;
	struct sample warm = { 0 }, end_run, end_quiet;
	pthread_t t[NPARTS];
	struct part_arg pa[NPARTS];
	struct sigaction sa = { 0 };
	int64_t t0, last_line, last_change[NPARTS];
	unsigned long last[NPARTS];
	int warm_taken = 0;
	const char *only = NULL;
	int early_end = 0;
	int64_t end_ns;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--child") && i + 1 < argc)
			return child_main(atoi(argv[i + 1]));
		else if (!strcmp(argv[i], "--stall") && i + 1 < argc)
			stall_s = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
			warmup = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--every") && i + 1 < argc)
			every = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else if (argv[i][0] != '-' && atoi(argv[i]) > 0)
			seconds = atoi(argv[i]);
		else {
			fprintf(stderr, "usage: soak [SECONDS] [--stall N] [--warmup N] [--every N] [--only PARTS]\n");
			return 2;
		}
	}
	for (int p = 0; p < NPARTS; p++) {
		const char *w = only ? strstr(only, part_name[p]) : NULL;
		size_t l = strlen(part_name[p]);

		enabled[p] = !only || (w && (w == only || w[-1] == ',') && (w[l] == 0 || w[l] == ','));
	}
	if (warmup < 0)
		warmup = seconds / 10 < 5 ? 5 : seconds / 10 > 60 ? 60 : seconds / 10;
	if (warmup >= seconds)
		warmup = seconds / 2;
	if (readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1) <= 0) {
		say("FAIL readlink /proc/self/exe: %s", strerror(errno));
		return 1;
	}
	handle(SIGUSR1, on_usr1);
	handle(SIGUSR2, on_usr2);
	handle(SIGALRM, on_alrm);
	struct sigaction tick_sa = { .sa_sigaction = on_tick, .sa_flags = SA_SIGINFO | SA_RESTART };
	sigemptyset(&tick_sa.sa_mask);
	sigaction(SIGRTMIN + 3, &tick_sa, NULL);
	sa.sa_sigaction = on_rt;
	sa.sa_flags = SA_RESTART | SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGRTMIN + 2, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	pthread_atfork(fork_prepare, fork_parent, fork_child);

	say("%d s, stall limit %d s, warm-up %d s, pid %d", seconds, stall_s, warmup, (int)getpid());
	t0 = last_line = now_ns();
	for (int p = 0; p < NPARTS; p++) {
		pa[p].part = p;
		if (enabled[p])
			t[p] = start(run_part, &pa[p], p);
		else
			part_done[p] = 1;
		last[p] = 0;
		last_change[p] = t0;
	}

	/* the watchdog */
	for (;;) {
		int64_t now;

		nap_ms(1000);
		now = now_ns();
		for (int p = 0; p < NPARTS; p++) {
			unsigned long v = atomic_load(&progress[p]);

			if (!enabled[p])
				continue;
			if (v != last[p]) {
				last[p] = v;
				last_change[p] = now;
			} else if (now - last_change[p] > (int64_t)stall_s * 1000000000) {
				char what[128];

				snprintf(what, sizeof(what), "%s: no progress for %d s (a hang or a lost wake-up)",
					 part_name[p], stall_s);
				stalled(t0, what);
			}
		}
		if (!warm_taken && now - t0 >= (int64_t)warmup * 1000000000) {
			warm = sample_now();
			warm_taken = 1;
			say("warm-up sample: fds=%ld (%ld a runtime's queues') rss=%ldkB threads=%ld (%ld a runtime's or "
			    "io_uring's)", warm.fds, warm.pool_fds, warm.rss_kb, warm.threads, warm.pool);
		}
		if (now - t0 >= (int64_t)seconds * 1000000000)
			break;
		if (warm_taken) {
			/* a leak ends the run early, before it takes the machine's memory */
			struct sample s = sample_now();

			if (s.rss_kb > warm.rss_kb + rss_bound(warm) || s.fds - s.pool_fds > warm.fds - warm.pool_fds + 16 ||
			    s.pool_fds > warm.pool_fds + 64 || s.threads > warm.threads + 32) {
				say("FAIL leak: fds=%ld rss=%ldkB threads=%ld at t=%llds: over the bounds; the run ends now",
				    s.fds, s.rss_kb, s.threads, (long long)((now - t0) / 1000000000));
				early_end = 1;
				break;
			}
		}
		if (every > 0 && now - last_line >= (int64_t)every * 1000000000) {
			progress_line(t0, "progress");
			last_line = now;
		}
	}
	end_run = sample_now();
	end_ns = now_ns();
	progress_line(t0, "end");
	atomic_store(&stop, 1);
	/* every part winds down within the stall limit */
	int64_t until = now_ns() + (int64_t)stall_s * 1000000000;
	for (int p = 0; p < NPARTS; p++) {
		while (!atomic_load(&part_done[p])) {
			if (now_ns() > until) {
				char what[128];

				snprintf(what, sizeof(what), "%s: did not wind down within %d s of the end", part_name[p],
					 stall_s);
				stalled(t0, what);
			}
			nap_ms(10);
		}
		if (enabled[p])
			pthread_join(t[p], NULL);
	}
	end_quiet = sample_now();

	/* the verdict */
	for (int p = 0; p < NPARTS; p++)
		if (enabled[p])
		check(atomic_load(&part_fails[p]) == 0 && atomic_load(&progress[p]) > 0,
		      "%s: %lu rounds, %d failures (above)", part_name[p], atomic_load(&progress[p]),
		      atomic_load(&part_fails[p]));
	if (enabled[P_CHURN])
		check(churn_joined == atomic_load(&churn_ran) - atomic_load(&churn_detached_done) &&
		      atomic_load(&churn_detached_done) == atomic_load(&churn_detached_started),
	      "churn: %ld joinable threads joined, %ld of %ld detached ones ended, %ld ran", churn_joined,
	      atomic_load(&churn_detached_done), atomic_load(&churn_detached_started), atomic_load(&churn_ran));
	if (enabled[P_QUEUE])
		check(q_put_n == q_got_n && q_put_sum == q_got_sum, "queue: %llu items produced, %llu consumed (sums %s)",
	      (unsigned long long)q_put_n, (unsigned long long)q_got_n, q_put_sum == q_got_sum ? "equal" : "differ");
	if (enabled[P_QUEUE])
		check(tt.rounds > 0, "queue: %ld turns taken with pthread_cond_timedwait, %ld timeouts", tt.rounds,
	      atomic_load(&tt_timeouts));
	if (enabled[P_SEM])
		check(s_posted == s_taken, "sem: %ld posted, %ld taken (%ld timed out), %ld ping-pongs", atomic_load(&s_posted),
	      atomic_load(&s_taken), atomic_load(&s_timeouts), atomic_load(&s_pp_rounds));
	if (enabled[P_FORK])
		check(forks[0] > 0 && forks[1] > 0 && forks[2] > 0, "fork: %ld exec /bin/true, %ld exec self, %ld without exec",
	      forks[0], forks[1], forks[2]);
	if (enabled[P_SIGNAL]) {
		long got = 0;

		for (int i = 0; i < 4; i++)
			got += atomic_load(&targets[i].got);
		check(got + atomic_load(&usr1_misdirected) == atomic_load(&usr1_n),
		      "signal: %ld SIGUSR1 by pthread_kill (asleep %ld, read %ld, cond %ld, running %ld, "
		      "on another thread %ld), %ld SIGUSR2 by kill, %ld SIGRTMIN+2 queued, %ld SIGALRM; "
		      "%ld handled only after a condition wait was ended for them",
		      atomic_load(&usr1_n), atomic_load(&targets[0].got), atomic_load(&targets[1].got),
		      atomic_load(&targets[2].got), atomic_load(&targets[3].got), atomic_load(&usr1_misdirected),
		      atomic_load(&usr2_n), atomic_load(&rt_n), atomic_load(&alrm_n), atomic_load(&nudged));
		int64_t want = (tick_end_ns - tick_start_ns) / 10000000;
		long ticks = atomic_load(&tick_n);
		check(ticks >= want * 8 / 10 - 10 && ticks <= want * 105 / 100 + 10,
		      "signal: %ld expirations of the 10 ms timer (with overruns) in %lld ms (%lld expected; %ld signals, "
		      "%ld by their si_overrun)",
		      ticks, (long long)((tick_end_ns - tick_start_ns) / 1000000), (long long)want, atomic_load(&tick_sigs),
		      atomic_load(&tick_si_n));
	}
	if (enabled[P_SLEEP])
		check(1, "sleep: %ld sleeps, late by %ld us on average, %ld us at most", atomic_load(&sleeps),
	      atomic_load(&sleeps) ? atomic_load(&sleep_late_sum_us) / atomic_load(&sleeps) : 0,
	      atomic_load(&sleep_late_max_us));
	if (enabled[P_TIMED])
		check(timed_n > 0, "timed: %ld timed waits timed out", timed_n);
	if (enabled[P_CANCEL])
		check(1, "cancel: %ld in read, %ld poll, %ld cond_wait, %ld nanosleep, %ld sem_wait, %ld testcancel", cancels[0],
	      cancels[1], cancels[2], cancels[3], cancels[4], cancels[5]);

	/* leaks */
	long rss_max = rss_bound(warm);
	double minutes = (double)(end_ns - t0) / 60e9 - warmup / 60.0;
	check(end_run.fds - end_run.pool_fds <= warm.fds - warm.pool_fds + 16 &&
		      end_quiet.fds - end_quiet.pool_fds <= warm.fds - warm.pool_fds && end_run.pool_fds <= warm.pool_fds + 64 &&
		      end_quiet.pool_fds <= warm.pool_fds + 64,
	      "descriptors: %ld after warm-up, %ld at the end, %ld once joined (bounds +16, +0); of them a runtime's "
	      "queues' (io_uring, eventfd): %ld, %ld, %ld (bound +64)",
	      warm.fds, end_run.fds, end_quiet.fds, warm.pool_fds, end_run.pool_fds, end_quiet.pool_fds);
	check(end_run.threads <= warm.threads + 32 && end_quiet.threads - end_quiet.pool <= warm.threads - warm.pool &&
		      end_quiet.pool <= warm.pool + 32,
	      "threads: %ld after warm-up, %ld at the end, %ld once joined (bounds +32, +0); of them a runtime's or "
	      "io_uring's: %ld, %ld, %ld (bound +32)",
	      warm.threads, end_run.threads, end_quiet.threads, warm.pool, end_run.pool, end_quiet.pool);
	check(end_run.rss_kb <= warm.rss_kb + rss_max,
	      "VmRSS: %ld kB after warm-up, %ld kB at the end (%+.0f kB/min), %ld kB once joined (bound +%ld kB)",
	      warm.rss_kb, end_run.rss_kb, minutes > 0 ? (double)(end_run.rss_kb - warm.rss_kb) / minutes : 0.0,
	      end_quiet.rss_kb, rss_max);
	if (early_end)
		check(0, "the run ended early, at %lld s of %d, on a leak", (long long)((end_ns - t0) / 1000000000), seconds);

	say("%d passed, %d failed", passed, failed);
	return failed ? 1 : 0;
}
