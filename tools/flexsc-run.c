/* SPDX-License-Identifier: MIT */
/*
 * flexsc-run: runs an unmodified program on FlexSC-Threads.
 *
 *   flexsc-run [--cores LIST] [--syscall-cores LIST] [--engine auto|uring|threads|sync]
 *              [--entries N] [--specialize off|auto] [--order ORDER] [--stats] [--require]
 *              -- program args...
 *
 * It preloads libflexsc-run.so (found next to this executable, or in
 * ../lib/flexsc/ when installed), passes the configuration in FLEXSC_*
 * variables that the runtime reads at start (and that children inherit, so
 * a forked or exec'ed process runs the same way), disables glibc's rseq
 * registration (GLIBC_TUNABLES glibc.pthread.rseq=0: the rseq area lives in
 * a kernel thread's TCB, which user threads do not share), and execs the
 * program. Bad flags and unusable core lists: a message and exit code 2.
 *
 * Before the exec it checks the program the preload cannot reach (see
 * check_target): statically linked, not x86-64, or a secure execution
 * (set-user-ID and friends), following #! interpreters. It says so on
 * stderr and runs it anyway, or with --require (FLEXSC_REQUIRE=1, also
 * when already set in the environment) exits with code 2 without running
 * it; the runtime in turn exits with code 122 under FLEXSC_REQUIRE when it
 * cannot start (src/preload/init.c).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: flexsc-run [--cores LIST] [--syscall-cores LIST] "
		   "[--engine auto|uring|threads|sync] [--entries N] [--specialize off|auto] [--order ORDER]\n"
		   "       [--stats] [--require] -- program [args...]\n"
		   "  --cores LIST          CPUs that run user threads, each pinned to its CPU (default: the\n"
		   "                        current affinity, threads placed by the kernel)\n"
		   "  --syscall-cores LIST  CPUs for syscall threads and SQPOLL (default: none, batching on the user cores);\n"
		   "                        given, the user cores' threads are pinned as with --cores\n"
		   "  --engine E            where exception-less calls run (default: auto)\n"
		   "  --entries N           syscall entries per user core: 64 to 4096, a multiple of 64 (default 4096)\n"
		   "  --specialize auto     choose while running, per user core, whether its calls run there or on\n"
		   "                        the syscall cores, from measured throughput (needs --syscall-cores\n"
		   "                        and the auto engine)\n"
		   "  --order ORDER         how each batch of calls is ordered before it is issued: posted\n"
		   "                        (default), type, io-first, or io-first,type\n"
		   "  --stats               print the runtime's counters when the program exits\n"
		   "  --require             fail instead of running without the runtime (also FLEXSC_REQUIRE=1):\n"
		   "                        a program the preload cannot reach (statically linked, not x86-64,\n"
		   "                        set-user-ID or other secure execution) is not run, exit code 2;\n"
		   "                        a process whose runtime cannot start exits with code 122\n"
		   "LIST is like 0,2-3. FLEXSC_RAN_FILE=PATH: every process whose runtime starts appends\n"
		   "\"PID EXECUTABLE\" to PATH (made absolute here).\n");
}

static int die(const char *fmt, const char *arg)
{
	fprintf(stderr, "flexsc-run: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	usage(stderr);
	return 2;
}

/* Checks a CPU list against the CPUs this process may use. */
static int check_cpus(const char *list, const cpu_set_t *allowed)
{
	const char *s = list;
	int n = 0;

	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b;
		if (end == s || a < 0)
			return -1;
		b = a;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s || b < a)
				return -1;
		}
		for (long c = a; c <= b; c++, n++)
			if (c >= CPU_SETSIZE || !CPU_ISSET(c, allowed))
				return -1;
		if (*end != ',' && *end)
			return -1;
		s = *end ? end + 1 : end;
	}
	return n;
}

static int find_preload(char *out, size_t len)
{
	char exe[PATH_MAX - 64]; /* room for the suffixes below */
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return -1;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	*slash = 0;
	const char *candidates[] = { "%s/libflexsc-run.so", "%s/../lib/flexsc/libflexsc-run.so" };
	for (unsigned i = 0; i < 2; i++) {
		snprintf(out, len, candidates[i], exe);
		if (access(out, R_OK) == 0)
			return 0;
	}
	return -1;
}

/*
 * The file execvp will run for name: name itself if it has a slash, else
 * the first executable regular file of that name on PATH (unset: glibc's
 * default). NULL when there is none (execvp then fails and says so).
 */
static const char *resolve(const char *name, char *out, size_t len)
{
	struct stat st;

	if (strchr(name, '/'))
		return name;
	const char *path = getenv("PATH");
	char def[256];
	if (!path) {
		if (!confstr(_CS_PATH, def, sizeof(def)))
			return NULL;
		path = def;
	}
	for (const char *p = path;; p++) {
		const char *colon = strchrnul(p, ':');
		int dirlen = (int)(colon - p);
		/* an empty element is the current directory */
		if ((size_t)snprintf(out, len, "%.*s%s%s", dirlen, p, dirlen ? "/" : "", name) < len &&
		    stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return out;
		if (!*colon)
			return NULL;
		p = colon;
	}
}

/*
 * Whether executing path (an ELF file, stat'ed as st) is a secure execution
 * (AT_SECURE), in which the dynamic loader ignores LD_PRELOAD with a slash,
 * as the kernel decides it: the set-user-ID bit, and the set-group-ID bit
 * with group execute, take effect unless the file system is mounted nosuid
 * or this process has no_new_privs; the execution is secure when the
 * resulting effective user (group) id differs from the real one (so a
 * user's own set-user-ID program, or root's for root, is not), or when the
 * file has capabilities and the real user is not root. Writes the reason.
 */
static bool secure_exec(const char *path, const struct stat *st, char *why, size_t len)
{
	struct statvfs vfs;
	bool applies = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1 &&
		       !(statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_NOSUID));
	uid_t euid = applies && (st->st_mode & S_ISUID) ? st->st_uid : geteuid();
	gid_t egid = applies && (st->st_mode & S_ISGID) && (st->st_mode & S_IXGRP) ? st->st_gid : getegid();

	if (euid != getuid()) {
		snprintf(why, len, "runs with effective user id %u, not the real %u", (unsigned)euid,
			 (unsigned)getuid());
		return true;
	}
	if (egid != getgid()) {
		snprintf(why, len, "runs with effective group id %u, not the real %u", (unsigned)egid,
			 (unsigned)getgid());
		return true;
	}
	if (applies && getuid() != 0 && getxattr(path, "security.capability", NULL, 0) > 0) {
		snprintf(why, len, "has file capabilities");
		return true;
	}
	return false;
}

/*
 * Checks that the preload can reach the program at path: writes why not
 * into why and returns false. Follows #! to the interpreter (as the kernel
 * does, at most 4 levels; the set-user-ID bit of a script is ignored by
 * Linux, its interpreter's is not). A file that cannot be read, or is
 * neither ELF nor #!, is not judged (true): the runtime, or the absence of
 * its FLEXSC_RAN_FILE line, has the last word.
 */
static bool check_target(const char *path, int depth, char *why, size_t len)
{
	unsigned char buf[256];
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return true;
	ssize_t n = fstat(fd, &st) ? -1 : pread(fd, buf, sizeof(buf) - 1, 0);
	if (n >= 2 && buf[0] == '#' && buf[1] == '!') {
		close(fd);
		buf[n] = 0;
		char *interp = (char *)buf + 2;
		interp += strspn(interp, " \t");
		interp[strcspn(interp, " \t\n")] = 0;
		if (!*interp || depth >= 4)
			return true;
		char inner[PATH_MAX + 256];
		if (check_target(interp, depth + 1, inner, sizeof(inner)))
			return true;
		snprintf(why, len, "its interpreter %s", inner);
		return false;
	}
	Elf64_Ehdr eh;
	if (n < (ssize_t)sizeof(eh) || memcmp(buf, ELFMAG, SELFMAG)) {
		if (n >= SELFMAG && !memcmp(buf, ELFMAG, SELFMAG))
			snprintf(why, len, "%s is not an x86-64 program (a truncated ELF file)", path);
		close(fd);
		return !(n >= SELFMAG && !memcmp(buf, ELFMAG, SELFMAG));
	}
	memcpy(&eh, buf, sizeof(eh));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) {
		close(fd);
		snprintf(why, len, "%s is not an x86-64 program (%s)", path,
			 eh.e_ident[EI_CLASS] == ELFCLASS32 ? "32-bit" : "another machine");
		return false;
	}
	bool interp = false;
	for (unsigned i = 0; i < eh.e_phnum && !interp; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) !=
		    (ssize_t)sizeof(ph))
			break;
		interp = ph.p_type == PT_INTERP;
	}
	close(fd);
	if (!interp) {
		/* no dynamic loader: nothing reads LD_PRELOAD (static-pie programs too) */
		snprintf(why, len, "%s is statically linked", path);
		return false;
	}
	char reason[128];
	if (secure_exec(path, &st, reason, sizeof(reason))) {
		snprintf(why, len, "%s %s (a secure execution, in which the loader ignores LD_PRELOAD)",
			 path, reason);
		return false;
	}
	return true;
}

static void append_env(const char *name, const char *value, char sep)
{
	const char *old = getenv(name);
	char *buf;

	if (old && *old) {
		if (asprintf(&buf, "%s%c%s", value, sep, old) < 0)
			exit(2);
		setenv(name, buf, 1);
		free(buf);
	} else {
		setenv(name, value, 1);
	}
}

int main(int argc, char **argv)
{
	const char *cores = NULL, *syscall_cores = NULL, *engine = "auto", *entries = "4096",
		   *specialize = "off", *order = "posted";
	bool stats = false, require = false;
	int i;
	cpu_set_t allowed;

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		return die("cannot read the CPU affinity: %s", strerror(errno));
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			i++;
			break;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--stats")) {
			stats = true;
		} else if (!strcmp(a, "--require")) {
			require = true;
		} else if (!strcmp(a, "--cores") || !strcmp(a, "--syscall-cores") || !strcmp(a, "--engine") ||
			   !strcmp(a, "--entries") || !strcmp(a, "--specialize") || !strcmp(a, "--order")) {
			if (i + 1 >= argc)
				return die("%s needs a value", a);
			const char *v = argv[++i];
			if (!strcmp(a, "--cores"))
				cores = v;
			else if (!strcmp(a, "--syscall-cores"))
				syscall_cores = v;
			else if (!strcmp(a, "--entries"))
				entries = v;
			else if (!strcmp(a, "--specialize"))
				specialize = v;
			else if (!strcmp(a, "--order"))
				order = v;
			else
				engine = v;
		} else if (a[0] == '-') {
			return die("unknown option %s", a);
		} else {
			break; /* the program, without "--" */
		}
	}
	if (i >= argc)
		return die("%s", "no program to run");
	if (strcmp(engine, "auto") && strcmp(engine, "uring") && strcmp(engine, "threads") &&
	    strcmp(engine, "sync"))
		return die("unknown engine '%s' (auto, uring, threads or sync)", engine);
	char *end;
	long nentries = strtol(entries, &end, 10);
	if (end == entries || *end || nentries < 64 || nentries > 4096 || nentries % 64)
		return die("--entries '%s' is not a multiple of 64 from 64 to 4096", entries);
	if (strcmp(specialize, "off") && strcmp(specialize, "auto"))
		return die("unknown --specialize '%s' (off or auto)", specialize);
	if (!strcmp(specialize, "auto") && (!syscall_cores || strcmp(engine, "auto")))
		return die("%s", "--specialize auto needs --syscall-cores, and the auto engine");
	if (strcmp(order, "posted") && strcmp(order, "type") && strcmp(order, "io-first") &&
	    strcmp(order, "io-first,type") && strcmp(order, "type,io-first"))
		return die("unknown --order '%s' (posted, type, io-first or io-first,type)", order);
	if (cores && check_cpus(cores, &allowed) <= 0)
		return die("--cores '%s' names no CPU, or one this process may not use", cores);
	if (syscall_cores && check_cpus(syscall_cores, &allowed) <= 0)
		return die("--syscall-cores '%s' names no CPU, or one this process may not use",
			   syscall_cores);

	/* FLEXSC_REQUIRE=1 from the caller (a test harness, an outer flexsc-run) counts too */
	const char *req = getenv("FLEXSC_REQUIRE");
	if (req && *req && strcmp(req, "0"))
		require = true;

	char preload[PATH_MAX], list[4096] = "";
	if (find_preload(preload, sizeof(preload)))
		return die("%s", "cannot find libflexsc-run.so next to flexsc-run or in ../lib/flexsc");
	if (!cores) {
		/* explicit, so that children keep the list though carrier 0 pins its thread */
		for (int c = 0, n = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &allowed))
				n += snprintf(list + n, sizeof(list) - (size_t)n, "%s%d", n ? "," : "", c);
		cores = list;
	}
	/* carriers are pinned only to CPUs the user chose; otherwise the kernel places them */
	if (cores != list || syscall_cores)
		setenv("FLEXSC_PIN_CARRIERS", "1", 1);
	else
		unsetenv("FLEXSC_PIN_CARRIERS");
	setenv("FLEXSC_CORES", cores, 1);
	if (syscall_cores)
		setenv("FLEXSC_SYSCALL_CORES", syscall_cores, 1);
	else
		unsetenv("FLEXSC_SYSCALL_CORES");
	setenv("FLEXSC_ENGINE", engine, 1);
	setenv("FLEXSC_ENTRIES", entries, 1);
	setenv("FLEXSC_SPECIALIZE", specialize, 1);
	setenv("FLEXSC_ORDER", order, 1);
	if (stats)
		setenv("FLEXSC_STATS", "1", 1);
	else
		unsetenv("FLEXSC_STATS");
	if (require)
		setenv("FLEXSC_REQUIRE", "1", 1);
	/* absolute, so that a process that changes directory appends to the same file */
	const char *ran = getenv("FLEXSC_RAN_FILE");
	char cwd[PATH_MAX], *abs;
	if (ran && *ran && *ran != '/' && getcwd(cwd, sizeof(cwd))) {
		if (asprintf(&abs, "%s/%s", cwd, ran) < 0)
			return 2;
		setenv("FLEXSC_RAN_FILE", abs, 1);
		free(abs);
	}
	append_env("LD_PRELOAD", preload, ':');
	append_env("GLIBC_TUNABLES", "glibc.pthread.rseq=0", ':');

	char file[PATH_MAX], why[2 * PATH_MAX + 512];
	const char *target = resolve(argv[i], file, sizeof(file));
	if (target && !check_target(target, 0, why, sizeof(why))) {
		/* "PROGRAM is ...", or "PROGRAM: its interpreter ... is ..." for a script */
		fprintf(stderr, "flexsc-run: %s%s%s: it %s without FlexSC-Threads%s\n",
			strncmp(why, "its ", 4) ? "" : target, strncmp(why, "its ", 4) ? "" : ": ", why,
			require ? "would run" : "will run", require ? "; not run (--require)" : "");
		if (require)
			return 2;
	}
	execvp(argv[i], &argv[i]);
	fprintf(stderr, "flexsc-run: cannot run %s: %s\n", argv[i], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
