// SPDX-License-Identifier: MIT
/*
 * io_uring with an SQPOLL thread pinned to CPU 1 (syscall_cpus = {1}), on
 * the uring and auto engines: the polling thread exists (iou-sqp-*); single
 * calls complete, also after the thread went idle (3 x sqpoll_idle_ms
 * between calls: the wake-up path); batches of 64 and one of 500 complete
 * with the right results, also right after an idle period; a call still in
 * flight when the queue is destroyed is waited for; and destroy/exit never
 * hang. Every call must have gone through io_uring. Skipped with one CPU.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#define IDLE_MS 10
/*
 * The bound on each wait for a call or a thread. Generous because it only
 * turns a hang into a failure: a busy 2-CPU machine or a sanitizer can stall
 * the polling thread or the owner for seconds. A wait ends once it succeeds.
 */
#define BOUND_S 30

static char path[64];
static unsigned char data[4096];

static int sqpoll_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	CHECK(d);
	while ((e = readdir(d))) {
		char p[300], comm[64] = { 0 };
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(p, "r");
		if (f && fgets(comm, sizeof(comm), f) && !strncmp(comm, "iou-sqp-", 8))
			n++;
		if (f)
			fclose(f);
	}
	closedir(d);
	return n;
}

static void one_pread(struct flexsc_queue *q, int fd, unsigned off)
{
	unsigned char buf[16];
	uint64_t a[4] = { (uint64_t)fd, P(buf), sizeof(buf), off };
	flexsc_call_t c;
	int64_t r;
	struct timespec to = { BOUND_S, 0 };

	CHECK_EQ(flexsc_post(q, SYS_pread64, 4, a, NULL, &c), 0);
	int err = flexsc_wait_one(q, c, &r, &to);
	if (err == -ETIME) {
		fprintf(stderr, "a call posted to an idle SQPOLL ring did not complete in %d s\n", BOUND_S);
		_exit(1);
	}
	CHECK_EQ(err, 0);
	CHECK_EQ(r, (long)sizeof(buf));
	CHECK(!memcmp(buf, data + off, sizeof(buf)));
}

static void batch(struct flexsc_queue *q, int fd, unsigned n)
{
	static unsigned char bufs[512][8];
	static flexsc_call_t calls[512];
	static int64_t rets[512];
	struct timespec to = { BOUND_S, 0 };

	for (unsigned i = 0; i < n; i++) {
		uint64_t a[4] = { (uint64_t)fd, P(bufs[i]), 8, (i * 7) % 4000 };
		CHECK_EQ(flexsc_post(q, SYS_pread64, 4, a, NULL, &calls[i]), 0);
	}
	CHECK_EQ(flexsc_wait_all(q, calls, n, rets, &to), 0);
	for (unsigned i = 0; i < n; i++) {
		CHECK_EQ(rets[i], 8);
		CHECK(!memcmp(bufs[i], data + (i * 7) % 4000, 8));
	}
}

static int wfd;
static void *late_writer(void *arg)
{
	(void)arg;
	usleep(100 * 1000);
	CHECK_EQ(write(wfd, "late", 4), 4);
	return NULL;
}

static void run(enum flexsc_engine eng)
{
	struct flexsc_config cfg;
	struct flexsc *fx;
	struct flexsc_queue *q;
	int fd = open(path, O_RDONLY);

	CHECK(fd >= 0);
	flexsc_config_init(&cfg);
	cfg.sqpoll = true;
	cfg.sqpoll_idle_ms = IDLE_MS;
	cfg.nr_syscall_cpus = 1;
	cfg.syscall_cpus[0] = 1;
	t_open(eng, &fx, &q, &cfg);
	CHECK_EQ(flexsc_engine_in_use(fx), eng);
	/* the thread names itself once it runs */
	for (uint64_t end = t_now_ms() + BOUND_S * 1000; sqpoll_threads() < 1 && t_now_ms() < end;)
		usleep(1000);
	if (sqpoll_threads() < 1) {
		fprintf(stderr, "%s: no iou-sqp thread: the queue has no SQPOLL ring\n", flexsc_engine_name(eng));
		_exit(1);
	}

	uint64_t t0 = t_now_ms(), worst = 0;
	for (unsigned i = 0; i < 10; i++) {
		uint64_t s = t_now_ms();
		one_pread(q, fd, i * 100);
		if (t_now_ms() - s > worst)
			worst = t_now_ms() - s;
		usleep(3 * IDLE_MS * 1000); /* the SQPOLL thread goes to sleep */
	}
	for (unsigned i = 0; i < 8; i++) {
		batch(q, fd, 64);
		if (i % 2)
			usleep(3 * IDLE_MS * 1000);
	}
	batch(q, fd, 500);
	usleep(3 * IDLE_MS * 1000);
	batch(q, fd, 500);
	CHECK_EQ(t_by_engine(q, FLEXSC_ENGINE_URING), 10 + 8 * 64 + 2 * 500);

	/* posted, done, never collected: destroy drops them */
	static char sink[5][4];
	for (unsigned i = 0; i < 5; i++) {
		uint64_t a[4] = { (uint64_t)fd, P(sink[i]), 4, 0 };
		CHECK_EQ(flexsc_post(q, SYS_pread64, 4, a, NULL, NULL), 0);
	}
	CHECK(flexsc_flush(q) >= 0); /* the time bound may have flushed some already */
	usleep(3 * IDLE_MS * 1000);
	uint64_t d0 = t_now_ms();
	t_close(fx, q);
	uint64_t destroy_ms = t_now_ms() - d0;

	/* a read still blocked when the queue is destroyed: destroy waits for it */
	int p[2];
	char buf[8];
	pthread_t th;
	CHECK_EQ(pipe(p), 0);
	wfd = p[1];
	t_open(eng, &fx, &q, &cfg);
	uint64_t a[3] = { (uint64_t)p[0], P(buf), sizeof(buf) };
	CHECK_EQ(flexsc_post(q, SYS_read, 3, a, NULL, NULL), 0);
	CHECK_EQ(flexsc_flush(q), 1);
	/*
	 * d0 before the writer starts: its write comes >= 100 ms after d0 however
	 * the threads are scheduled, so a destroy that waits for the read ends
	 * >= 100 ms after d0 (>= 50 is checked).
	 */
	d0 = t_now_ms();
	CHECK_EQ(pthread_create(&th, NULL, late_writer, NULL), 0);
	CHECK_EQ(flexsc_queue_destroy(q), 0);
	uint64_t inflight_ms = t_now_ms() - d0;
	CHECK_EQ(flexsc_exit(fx), 0);
	pthread_join(th, NULL);
	CHECK(!memcmp(buf, "late", 4));
	CHECK(inflight_ms >= 50);
	close(p[0]);
	close(p[1]);
	close(fd);
	printf("sqpoll_basic: %-5s 10 calls across idle periods (slowest %llu ms), 8x64 + 2x500 batches, "
	       "%llu calls via io_uring; destroy %llu ms, destroy with a blocked read %llu ms; total %llu ms\n",
	       flexsc_engine_name(eng), (unsigned long long)worst,
	       (unsigned long long)(10 + 8 * 64 + 2 * 500), (unsigned long long)destroy_ms,
	       (unsigned long long)inflight_ms, (unsigned long long)(t_now_ms() - t0));
}

int main(void)
{
	static const enum flexsc_engine engines[] = { FLEXSC_ENGINE_URING, FLEXSC_ENGINE_AUTO };
	cpu_set_t cpus;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP("SQPOLL on CPU 1 needs two CPUs");
	CHECK_EQ(sched_getaffinity(0, sizeof(cpus), &cpus), 0);
	if (!CPU_ISSET(1, &cpus))
		SKIP("CPU 1 is not in this process's affinity mask");
	for (unsigned i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 31 + 7);
	snprintf(path, sizeof(path), "/tmp/flexsc-sqpoll-XXXXXX");
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, data, sizeof(data)), (long)sizeof(data));
	close(fd);

	int failed = 0;
	for (unsigned i = 0; i < 2; i++) {
		int st;
		fflush(NULL);
		pid_t pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			/* a hang in destroy or exit ends here, as a failure; above the waits' BOUND_S */
			alarm(120);
			run(engines[i]);
			fflush(NULL);
			exit(0);
		}
		CHECK_EQ(waitpid(pid, &st, 0), pid);
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "sqpoll_basic: %s FAILED (%s %d)\n", flexsc_engine_name(engines[i]),
				WIFSIGNALED(st) ? "signal" : "exit",
				WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			failed++;
		}
	}
	unlink(path);
	return failed ? 1 : 0;
}
