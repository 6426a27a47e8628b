// SPDX-License-Identifier: MIT
/*
 * io_uring refused for one queue only: the instance registered fine, but
 * RLIMIT_NOFILE leaves no descriptor for the queue's ring, so
 * io_uring_setup fails with EMFILE. flexsc_queue_create still succeeds,
 * says so with exactly one "flexsc: warning:" line on stderr, and the
 * queue's calls run on the fallback (syscall threads for auto, synchronous
 * for uring) with correct results; nothing goes through io_uring. With the
 * limit restored, a new queue of the same instance uses io_uring again.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"


static void child(enum flexsc_engine eng)
{
	struct flexsc *fx;
	struct flexsc_queue *q;
	struct flexsc_config cfg;
	struct rlimit old, lim;
	char tmpl[] = "/tmp/flexsc-emfile-XXXXXX", buf[16] = { 0 };
	enum flexsc_engine fb = eng == FLEXSC_ENGINE_AUTO ? FLEXSC_ENGINE_THREADS : FLEXSC_ENGINE_SYNC;
	int efd = mkstemp(tmpl), p[2];

	CHECK(efd >= 0);
	unlink(tmpl);
	CHECK_EQ(pipe(p), 0);
	fflush(stderr);
	int saved = dup(2);
	CHECK_EQ(dup2(efd, 2), 2);

	flexsc_config_init(&cfg);
	cfg.engine = eng; /* not quiet */
	CHECK_EQ(flexsc_register(&fx, &cfg), 0);
	CHECK_EQ(flexsc_engine_in_use(fx), eng);

	/* the lowest free descriptor is the last one allowed: the threads' eventfd (auto) takes it */
	int next = dup(0);
	CHECK(next >= 0);
	close(next);
	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
	lim = old;
	lim.rlim_cur = (rlim_t)next + (eng == FLEXSC_ENGINE_AUTO ? 1 : 0);
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &lim), 0);
	CHECK_EQ(flexsc_queue_create(fx, &q), 0);
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);

	uint64_t wr[3] = { (uint64_t)p[1], P("hello"), 5 }, rd[3] = { (uint64_t)p[0], P(buf), sizeof(buf) };
	for (int i = 0; i < 10; i++) {
		CHECK_EQ(flexsc_syscall(q, SYS_write, 3, wr), 5);
		CHECK_EQ(flexsc_syscall(q, SYS_read, 3, rd), 5);
		CHECK(!memcmp(buf, "hello", 5));
	}
	CHECK_EQ(t_by_engine(q, FLEXSC_ENGINE_URING), 0);
	CHECK_EQ(t_by_engine(q, fb), 20);
	CHECK_EQ(flexsc_queue_destroy(q), 0);

	/* descriptors again: the next queue has its ring */
	CHECK_EQ(flexsc_queue_create(fx, &q), 0);
	CHECK_EQ(flexsc_syscall(q, SYS_write, 3, wr), 5);
	CHECK_EQ(flexsc_syscall(q, SYS_read, 3, rd), 5);
	CHECK_EQ(t_by_engine(q, FLEXSC_ENGINE_URING), 2);
	CHECK_EQ(flexsc_queue_destroy(q), 0);
	CHECK_EQ(flexsc_exit(fx), 0);

	fflush(stderr);
	CHECK_EQ(dup2(saved, 2), 2);
	char text[2048] = { 0 };
	CHECK(pread(efd, text, sizeof(text) - 1, 0) >= 0);
	int warnings = 0, lines = 0;
	for (char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		lines++;
		warnings += !strncmp(l, "flexsc: warning:", 16);
	}
	if (warnings != 1 || lines != 1) {
		fprintf(stderr, "%s: %d warning lines of %d on stderr, expected exactly one:\n%s",
			flexsc_engine_name(eng), warnings, lines, text);
		exit(1);
	}
	printf("fallback_queue_emfile: %-5s ring setup failed with EMFILE: %d calls on %s, none via io_uring; "
	       "stderr: %s", flexsc_engine_name(eng), 20, flexsc_engine_name(fb), text);
	exit(0);
}

int main(void)
{
	static const enum flexsc_engine engines[] = { FLEXSC_ENGINE_AUTO, FLEXSC_ENGINE_URING };
	int failed = 0;

	for (unsigned i = 0; i < 2; i++) {
		int st;
		fflush(NULL);
		pid_t pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			alarm(20);
			child(engines[i]);
		}
		CHECK_EQ(waitpid(pid, &st, 0), pid);
		failed += !WIFEXITED(st) || WEXITSTATUS(st);
	}
	return failed ? 1 : 0;
}
