// SPDX-License-Identifier: MIT
/*
 * A seccomp filter that makes openat fail with EPERM, installed before
 * flexsc_register: through prctl (libflexsc sees it), through the seccomp
 * system call with TSYNC (libflexsc sees it), and from inline assembly (as
 * a filter inherited from the parent would be: libflexsc is not told and
 * must find it by itself). In every case a posted openat fails with -EPERM
 * on every engine, io_uring executes nothing, reads of an open descriptor
 * work, the auto engine reports syscall threads and the uring engine the
 * synchronous fallback, and the fallback is announced by exactly one
 * "flexsc: warning:" line on stderr (none for threads and sync).
 * Driver: seccomp_util.h.
 */
#define _GNU_SOURCE
#include "seccomp_util.h"

static enum s_how how;

static void child(const struct svar *v)
{
	struct flexsc_config cfg;
	struct flexsc *fx;
	struct flexsc_queue *q;
	char tmpl[] = "/tmp/flexsc-seccomp-err-XXXXXX";
	bool ring = v->eng == FLEXSC_ENGINE_URING || v->eng == FLEXSC_ENGINE_AUTO;
	enum flexsc_engine want = v->eng == FLEXSC_ENGINE_AUTO ? FLEXSC_ENGINE_THREADS :
				  v->eng == FLEXSC_ENGINE_URING ? FLEXSC_ENGINE_SYNC : v->eng;

	int efd = mkstemp(tmpl);
	CHECK(efd >= 0);
	unlink(tmpl);
	int fd = open(s_file, O_RDONLY);
	CHECK(fd >= 0);
	fflush(stderr);
	int saved = dup(2);
	CHECK_EQ(dup2(efd, 2), 2);

	s_install(how, SYS_openat, EPERM);
	s_config(v, &cfg); /* not quiet: the warning is checked */
	CHECK_EQ(flexsc_register(&fx, &cfg), 0);
	CHECK_EQ(flexsc_queue_create(fx, &q), 0);
	if (flexsc_engine_in_use(fx) != want) {
		dup2(saved, 2);
		fprintf(stderr, "%s: engine in use %s, expected %s\n", v->name,
			flexsc_engine_name(flexsc_engine_in_use(fx)), flexsc_engine_name(want));
		_exit(1);
	}
	s_check_filtered(v->name, q, fd);
	CHECK_EQ(t_by_engine(q, FLEXSC_ENGINE_URING), 0);
	CHECK_EQ(flexsc_queue_destroy(q), 0);
	CHECK_EQ(flexsc_exit(fx), 0);

	fflush(stderr);
	CHECK_EQ(dup2(saved, 2), 2);
	char text[4096] = { 0 };
	CHECK(pread(efd, text, sizeof(text) - 1, 0) >= 0);
	int warnings = 0;
	for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		warnings += !strncmp(line, "flexsc: warning:", 16);
	if (warnings != (ring ? 1 : 0)) {
		fprintf(stderr, "%s: %d warning lines on stderr, expected %d:\n%s", v->name, warnings,
			ring ? 1 : 0, text);
		_exit(1);
	}
}

int main(void)
{
	static const struct { enum s_how how; const char *what; } ways[] = {
		{ S_PRCTL, "prctl filter before register: openat -EPERM, no io_uring, fallback announced once" },
		{ S_TSYNC, "TSYNC filter before register: openat -EPERM, no io_uring, fallback announced once" },
		{ S_INLINE, "unannounced filter before register: openat -EPERM, no io_uring, fallback announced once" },
	};
	int failed = 0;

	s_setup();
	for (unsigned i = 0; i < 3; i++) {
		how = ways[i].how;
		failed += s_each_engine("seccomp_before", child, ways[i].what);
	}
	s_cleanup();
	return failed ? 1 : 0;
}
