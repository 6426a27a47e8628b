// SPDX-License-Identifier: MIT
/*
 * io_uring refused by the kernel: a seccomp filter (TSYNC, installed before
 * flexsc_register) makes io_uring_setup fail with EPERM, and in another run
 * with ENOSYS. flexsc_register still succeeds: the auto engine falls back to
 * syscall threads, the uring engine (also with sqpoll) to synchronous calls;
 * flexsc_engine_in_use says so; stderr (not FLEXSC_QUIET) gets exactly one
 * line starting with "flexsc: warning:"; and calls give correct results
 * without io_uring. The threads and sync engines run unchanged and silent.
 * Since the caller is under a filter, every call runs on it, on every
 * engine (no other task is known to be under the same filters:
 * docs/design.md, "Who a delegated call runs as"). kernel.io_uring_disabled
 * (global state) is not touched.
 */
#define _GNU_SOURCE
#include "seccomp_util.h"

static int err_code;

static void child(const struct svar *v)
{
	struct flexsc_config cfg;
	struct flexsc *fx;
	struct flexsc_queue *q;
	char tmpl[] = "/tmp/flexsc-fallback-err-XXXXXX";
	bool ring = v->eng == FLEXSC_ENGINE_AUTO || v->eng == FLEXSC_ENGINE_URING;
	enum flexsc_engine want = v->eng == FLEXSC_ENGINE_AUTO ? FLEXSC_ENGINE_THREADS :
				  v->eng == FLEXSC_ENGINE_URING ? FLEXSC_ENGINE_SYNC : v->eng;
	int nwarn = ring ? 1 : 0;
	int efd = mkstemp(tmpl), p[2];
	char buf[64] = { 0 };

	CHECK(efd >= 0);
	unlink(tmpl);
	int fd = open(s_file, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(pipe(p), 0);
	fflush(stderr);
	int saved = dup(2);
	CHECK_EQ(dup2(efd, 2), 2);

	s_install(S_TSYNC, SYS_io_uring_setup, err_code);
	s_config(v, &cfg);
	CHECK_EQ(flexsc_register(&fx, &cfg), 0);
	CHECK_EQ(flexsc_queue_create(fx, &q), 0);
	enum flexsc_engine got = flexsc_engine_in_use(fx);

	/* calls still give the right results */
	uint64_t rd[4] = { (uint64_t)fd, P(buf), sizeof(buf), 2 };
	CHECK_EQ(flexsc_syscall(q, SYS_pread64, 4, rd), (long)strlen(s_content) - 2);
	CHECK(!memcmp(buf, s_content + 2, strlen(s_content) - 2));
	uint64_t wr[3] = { (uint64_t)p[1], P("hello"), 5 };
	CHECK_EQ(flexsc_syscall(q, SYS_write, 3, wr), 5);
	uint64_t rp[3] = { (uint64_t)p[0], P(buf), sizeof(buf) };
	CHECK_EQ(flexsc_syscall(q, SYS_read, 3, rp), 5);
	CHECK(!memcmp(buf, "hello", 5));
	uint64_t oa[4] = { (uint64_t)AT_FDCWD, P(s_file), O_RDONLY, 0 };
	int64_t nfd = flexsc_syscall(q, SYS_openat, 4, oa);
	CHECK(nfd >= 0);
	uint64_t cl[1] = { (uint64_t)nfd };
	CHECK_EQ(flexsc_syscall(q, SYS_close, 1, cl), 0);
	CHECK_EQ(flexsc_syscall(q, SYS_close, 1, cl), -EBADF);
	CHECK_EQ(flexsc_syscall(q, SYS_getpid, 0, NULL), getpid());
	struct flexsc_stats st;
	CHECK_EQ(flexsc_queue_stats(q, &st), 0);
	CHECK_EQ(flexsc_queue_destroy(q), 0);
	CHECK_EQ(flexsc_exit(fx), 0);

	fflush(stderr);
	CHECK_EQ(dup2(saved, 2), 2);
	char text[4096] = { 0 };
	CHECK(pread(efd, text, sizeof(text) - 1, 0) >= 0);
	int warnings = 0, lines = 0;
	for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		lines++;
		warnings += !strncmp(line, "flexsc: warning:", 16);
	}
	if (got != want || warnings != nwarn || lines != nwarn || st.by_engine[FLEXSC_ENGINE_URING] ||
	    st.by_engine[FLEXSC_ENGINE_SYNC] != 7) {
		fprintf(stderr, "%s: engine %s (expected %s); %d warning lines of %d (expected %d); "
				"%llu calls via io_uring, %llu on the caller (expected 7); stderr:\n%s",
			v->name, flexsc_engine_name(got), flexsc_engine_name(want), warnings, lines, nwarn,
			(unsigned long long)st.by_engine[FLEXSC_ENGINE_URING],
			(unsigned long long)st.by_engine[FLEXSC_ENGINE_SYNC], text);
		_exit(1);
	}
	if (ring)
		printf("%s said: %s", v->name, text);
}

int main(void)
{
	int failed = 0;

	s_setup();
	err_code = EPERM;
	failed += s_each_engine("fallback_uring_denied", child,
				"io_uring_setup -> EPERM: expected engine, warned once if it fell back, results correct");
	err_code = ENOSYS;
	failed += s_each_engine("fallback_uring_denied", child,
				"io_uring_setup -> ENOSYS: expected engine, warned once if it fell back, results correct");
	s_cleanup();
	return failed ? 1 : 0;
}
