// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the public API (tests/fuzz/run.sh builds and runs it).
 *
 * Each input is a small program: a configuration (often out of range), then
 * a sequence of operations on up to NQ queues: posts, chains, flushes,
 * polls, waits, reaps, cancels, wakes, queue create/destroy, flexsc_exit with
 * queues alive and a new registration. Descriptors handed to the API are
 * ones the library gave out (live or spent), or made up (malformed, future
 * generations, random bits).
 *
 * Only harmless system calls ever execute. The fuzz bytes pick from an
 * allowlist (getpid, getppid, gettid, getuid, read/write/lseek/pread/fstat
 * on descriptors this file owns: a non-blocking pipe, /dev/null, /dev/zero,
 * or bad numbers; close(-1); FUTEX_WAKE and PI try-lock/unlock on its own
 * word; the signal-mask query; poll with timeout 0; nanosleep of at most
 * 100 us; getrandom, uname, sched_getaffinity), with pointers into this
 * file's own buffers and bounded lengths. Argument counts are fuzzed, but
 * never below what keeps a call harmless (read(0, ...) or FUTEX_WAIT would
 * otherwise appear), and above 6 they are refused before anything runs.
 * Other system call numbers are only ones that are not system calls.
 * Nothing can block: every descriptor is non-blocking or never blocks, and
 * every wait has a timeout of at most 200 us (flexsc_syscall waits without
 * one, for calls that cannot block). A hang is therefore a bug, which
 * libFuzzer's -timeout reports.
 *
 * Leaks: every input ends with all queues destroyed and the instance torn
 * down; LeakSanitizer checks memory, and every 256 inputs the descriptors
 * and threads of the process are counted against the first count.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <flexsc/flexsc.h>

#define NQ 3
#define NREMEMBER 256
#define MAX_OPS 400
#define BUF 8192

/* Memory the posted calls may touch: static, so it outlives every call. */
static char rbuf[BUF];
static const char wbuf[BUF];
static struct stat stbuf[4];
static struct utsname utsbuf;
static uint64_t sigbuf[4];
static cpu_set_t cpubuf;
static struct pollfd pfds[2];
static struct timespec napbuf;
static uint32_t futex_word;
static const char devnull_path[] = "/dev/null";

struct in {
	const uint8_t *p;
	size_t n;
};

static uint8_t u8(struct in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

static uint16_t u16(struct in *in)
{
	return (uint16_t)(u8(in) | u8(in) << 8);
}

static uint32_t u32(struct in *in)
{
	return (uint32_t)u16(in) | (uint32_t)u16(in) << 16;
}

static uint64_t u64(struct in *in)
{
	return (uint64_t)u32(in) | (uint64_t)u32(in) << 32;
}

/*
 * Oracles. Every API result must be one the header documents. And calls
 * whose result is known in advance carry it in their cookie (tagged, so
 * that it cannot be mistaken for the small untagged cookies of the other
 * calls): whatever collects them through flexsc_reap checks it, allowing
 * -ECANCELED, since any call may have been cancelled by a made-up
 * descriptor that happened to name it.
 */
static void bad_result(const char *what, long v)
{
	fprintf(stderr, "fuzz_api: %s returned %ld, which the API does not document\n", what, v);
	abort();
}

#define ALLOW(what, v, ...)                                                   \
	do {                                                                  \
		long _v = (v);                                                \
		const long _ok[] = { __VA_ARGS__ };                           \
		bool _found = false;                                          \
		for (unsigned _i = 0; _i < sizeof(_ok) / sizeof(_ok[0]); _i++) \
			_found = _found || _v == _ok[_i];                     \
		if (!_found)                                                  \
			bad_result(what, _v);                                 \
	} while (0)

#define COOKIE_TAG 0x5Au
#define COOKIE_UNTAGGED_MAX 0x3Fu

static void *expect_cookie(int64_t expect)
{
	return (void *)(uintptr_t)(((uint64_t)(uint32_t)(int32_t)expect << 8) | COOKIE_TAG);
}

static void check_completion(const struct flexsc_completion *c)
{
	uintptr_t v = (uintptr_t)c->cookie;

	if (v <= COOKIE_UNTAGGED_MAX)
		return;
	if ((v & 0xff) != COOKIE_TAG)
		bad_result("flexsc_reap: a cookie that was never posted", (long)v);
	int64_t expect = (int32_t)(uint32_t)(v >> 8);
	if (c->ret != expect && c->ret != -ECANCELED) {
		fprintf(stderr, "fuzz_api: call %#llx completed with %lld, expected %lld\n",
			(unsigned long long)c->call, (long long)c->ret, (long long)expect);
		abort();
	}
}

struct state {
	struct flexsc *fx;            /* NULL when registration failed or after exit */
	struct flexsc_queue *q[NQ];   /* NULL, live or dead (instance exited) */
	flexsc_call_t seen[NREMEMBER];/* descriptors handed out, live or spent */
	unsigned nseen;
	int pipe_r, pipe_w, devnull, devzero;
};

static void remember(struct state *s, flexsc_call_t c)
{
	if (c)
		s->seen[s->nseen++ % NREMEMBER] = c;
}

/* A descriptor to hand to the API: one we saw, altered, or made up. */
static flexsc_call_t pick_call(struct state *s, struct in *in)
{
	uint8_t how = u8(in);
	flexsc_call_t c = s->nseen ? s->seen[u8(in) % (s->nseen < NREMEMBER ? s->nseen : NREMEMBER)] : 0;

	switch (how % 8) {
	case 0: return 0;
	case 1: return u64(in);
	case 2: return c + ((uint64_t)1 << 32);            /* a generation not reached yet */
	case 3: return c - ((uint64_t)1 << 32);            /* an older generation */
	case 4: return (c & ~0xffffffffull) | u16(in);     /* another index */
	default: return c;
	}
}

static int pick_fd(struct state *s, struct in *in)
{
	switch (u8(in) % 7) {
	case 0: return s->pipe_r;
	case 1: return s->pipe_w;
	case 2: return s->devnull;
	case 3: return s->devzero;
	case 4: return -1;
	case 5: return 1 << 30; /* no such descriptor */
	default: return s->devnull;
	}
}

static struct timespec pick_timeout(struct in *in)
{
	uint8_t t = u8(in);

	/* 0, or up to 200 us: waits never hang the fuzzer */
	return (struct timespec){ 0, t < 128 ? 0 : (long)(t - 128) * 1600 };
}

/*
 * One harmless call: its number, its argument values, and the fewest
 * arguments it may be given without becoming harmful.
 */
struct call {
	long nr;
	unsigned need;
	uint64_t a[6];
	bool known;     /* the result is known in advance ... */
	int64_t expect; /* ... for the exact number of arguments (need) and up */
	int64_t expect_short; /* ... and with fewer than 3 (count 0) */
};

/* read/write results on the descriptors whose behaviour is certain. */
static void rw_expect(struct state *s, struct call *c, bool is_write)
{
	int fd = (int)c->a[0];

	c->known = true;
	if (fd == -1 || fd == 1 << 30 || fd == (is_write ? s->pipe_r : s->pipe_w)) {
		c->expect = c->expect_short = -EBADF;
	} else if (fd == s->devnull) {
		c->expect = is_write ? (int64_t)c->a[2] : 0;
		c->expect_short = 0;
	} else if (fd == s->devzero) {
		c->expect = (int64_t)c->a[2];
		c->expect_short = 0;
	} else {
		c->known = false; /* the pipe: depends on what is in it */
	}
}

static struct call pick_syscall(struct state *s, struct in *in)
{
	struct call c = { 0 };
	uint32_t off = u16(in) % BUF, len = u16(in) % 4097;

	if (off + len > BUF)
		len = BUF - off;
	switch (u8(in) % 20) {
	case 0: c.nr = SYS_getpid, c.known = true, c.expect = getpid(); break;
	case 1: c.nr = SYS_getppid, c.known = true, c.expect = getppid(); break;
	case 2: c.nr = SYS_gettid, c.known = true, c.expect = gettid(); break; /* local */
	case 3: c.nr = SYS_getuid, c.known = true, c.expect = getuid(); break;
	case 4:
		c.nr = SYS_read, c.need = 1;
		c.a[0] = (uint64_t)pick_fd(s, in), c.a[1] = (uint64_t)(uintptr_t)(rbuf + off), c.a[2] = len;
		rw_expect(s, &c, false);
		break;
	case 5:
		c.nr = SYS_write, c.need = 1;
		c.a[0] = (uint64_t)pick_fd(s, in), c.a[1] = (uint64_t)(uintptr_t)(wbuf + off), c.a[2] = len;
		rw_expect(s, &c, true);
		break;
	case 6:
		c.nr = SYS_close, c.need = 1;
		c.a[0] = (uint64_t)-1;
		c.known = true, c.expect = c.expect_short = -EBADF;
		break;
	case 7:
		c.nr = SYS_lseek, c.need = 1;
		c.a[0] = (uint64_t)pick_fd(s, in), c.a[1] = u16(in), c.a[2] = u8(in) % 6;
		break;
	case 8:
		c.nr = SYS_pread64, c.need = 1;
		c.a[0] = (uint64_t)pick_fd(s, in), c.a[1] = (uint64_t)(uintptr_t)(rbuf + off), c.a[2] = len;
		c.a[3] = u8(in) % 2 ? u16(in) : (uint64_t)-1;
		break;
	case 9:
		c.nr = SYS_fstat, c.need = 1;
		c.a[0] = (uint64_t)pick_fd(s, in), c.a[1] = (uint64_t)(uintptr_t)&stbuf[u8(in) % 4];
		break;
	case 10: /* query only: how is ignored when set is NULL */
		c.nr = SYS_rt_sigprocmask;
		c.a[0] = SIG_BLOCK, c.a[1] = 0, c.a[2] = (uint64_t)(uintptr_t)sigbuf, c.a[3] = 8;
		break;
	case 11:
		c.nr = SYS_futex, c.need = 2;
		c.a[0] = (uint64_t)(uintptr_t)&futex_word, c.a[1] = FUTEX_WAKE_PRIVATE, c.a[2] = u8(in) % 3;
		break;
	case 12: /* local by its arguments; never blocks */
		c.nr = SYS_futex, c.need = 2;
		c.a[0] = (uint64_t)(uintptr_t)&futex_word;
		c.a[1] = u8(in) % 2 ? FUTEX_TRYLOCK_PI_PRIVATE : FUTEX_UNLOCK_PI_PRIVATE;
		break;
	case 13:
		c.nr = SYS_poll, c.need = 0; /* poll(NULL, 0, 0) with fewer: returns at once */
		pfds[0] = (struct pollfd){ .fd = s->pipe_r, .events = POLLIN };
		pfds[1] = (struct pollfd){ .fd = s->devnull, .events = POLLOUT };
		c.a[0] = (uint64_t)(uintptr_t)pfds, c.a[1] = 1 + u8(in) % 2, c.a[2] = 0;
		break;
	case 14:
		c.nr = SYS_nanosleep, c.need = 1;
		napbuf = (struct timespec){ 0, (long)(u8(in) % 101) * 1000 };
		c.a[0] = (uint64_t)(uintptr_t)&napbuf;
		break;
	case 15:
		c.nr = SYS_getrandom;
		c.a[0] = (uint64_t)(uintptr_t)rbuf, c.a[1] = len % 257, c.a[2] = GRND_NONBLOCK;
		break;
	case 16:
		c.nr = SYS_uname;
		c.a[0] = (uint64_t)(uintptr_t)&utsbuf;
		break;
	case 17:
		c.nr = SYS_sched_getaffinity; /* local: pid 0 is the caller */
		c.a[0] = 0, c.a[1] = sizeof(cpubuf), c.a[2] = (uint64_t)(uintptr_t)&cpubuf;
		break;
	default: { /* not a system call: refused with -ENOSYS before anything runs */
		static const long bad[] = { -1, 400, 512, 100000, -100000, 1L << 40 };
		c.nr = bad[u8(in) % (sizeof(bad) / sizeof(bad[0]))];
		c.a[0] = u64(in);
		break;
	}
	}
	if (c.need == 0)
		c.expect_short = c.expect;
	return c;
}

/* nargs: usually exact, sometimes more (up to 6), or 7+ (refused). */
static unsigned pick_nargs(struct in *in, unsigned need)
{
	uint8_t b = u8(in);

	if (b < 160)
		return need ? need + (b % 3 == 0) : b % 2;
	if (b < 240)
		return need + (b % (7 - need));
	return 7 + b % 5;
}

static int post_random(struct state *s, struct flexsc_queue *q, struct in *in)
{
	struct call c = pick_syscall(s, in);
	unsigned nargs = pick_nargs(in, c.need);
	uint64_t args[8] = { 0 };
	flexsc_call_t call = 0;

	memcpy(args, c.a, sizeof(c.a));
	for (unsigned i = nargs < 6 ? nargs : 6; i < 6; i++)
		args[i] = 0;
	void *cookie = (void *)(uintptr_t)(u8(in) % (COOKIE_UNTAGGED_MAX + 1));
	if (c.known && nargs <= 6)
		cookie = expect_cookie(nargs >= 3 ? c.expect : c.expect_short);
	int err = flexsc_post(q, c.nr, nargs, u8(in) % 8 ? args : NULL, cookie, &call);
	ALLOW("flexsc_post", err, 0, -EINVAL, -ENOSYS, -EAGAIN, -ESHUTDOWN);
	if (err == 0)
		remember(s, call);
	return err;
}

/*
 * A chain of harmless ops; now and then one that opens /dev/null and uses
 * the chain's descriptor (read, lseek, fstat on it), closing it last.
 */
static void post_chain_random(struct state *s, struct flexsc_queue *q, struct in *in)
{
	struct flexsc_op ops[FLEXSC_CHAIN_MAX + 1];
	flexsc_call_t calls[FLEXSC_CHAIN_MAX + 1];
	unsigned n = u8(in) % (FLEXSC_CHAIN_MAX + 2); /* 0 and MAX+1 are refused */
	bool fd_chain = n >= 2 && u8(in) % 3 == 0;

	memset(ops, 0, sizeof(ops));
	for (unsigned i = 0; i < n; i++) {
		struct call c = pick_syscall(s, in);
		ops[i].sysnum = c.nr;
		ops[i].nargs = c.need > 3 ? c.need : 3;
		if (u8(in) % 16 == 0)
			ops[i].nargs = 7; /* refused */
		memcpy(ops[i].args, c.a, sizeof(c.a));
		if (ops[i].nargs < FLEXSC_MAX_ARGS)
			for (unsigned a = ops[i].nargs; a < FLEXSC_MAX_ARGS; a++)
				ops[i].args[a] = 0;
		/* a local call in a chain is refused; a futex op without its op is not harmless */
		if (c.nr == SYS_futex && ops[i].nargs < 2)
			ops[i].nargs = 2;
	}
	if (fd_chain) {
		ops[0] = (struct flexsc_op){ .sysnum = SYS_openat, .nargs = 4,
			.args = { (uint64_t)AT_FDCWD, (uint64_t)(uintptr_t)devnull_path,
				  O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0 } };
		for (unsigned i = 1; i + 1 < n; i++) {
			switch (u8(in) % 4) {
			case 0:
				ops[i] = (struct flexsc_op){ .sysnum = SYS_read, .nargs = 3,
					.args = { FLEXSC_CHAIN_FD, (uint64_t)(uintptr_t)rbuf, 64 } };
				break;
			case 1:
				ops[i] = (struct flexsc_op){ .sysnum = SYS_lseek, .nargs = 3,
					.args = { FLEXSC_CHAIN_FD, 0, SEEK_SET } };
				break;
			case 2:
				ops[i] = (struct flexsc_op){ .sysnum = SYS_fstat, .nargs = 2,
					.args = { FLEXSC_CHAIN_FD, (uint64_t)(uintptr_t)&stbuf[0] } };
				break;
			default:
				break; /* an op that does not use the descriptor */
			}
		}
		/*
		 * The rules say the last op closes it. Sometimes break them with a
		 * last op that uses the descriptor without closing it: refused.
		 * (Never a chain that opens without using the descriptor at all:
		 * that one is valid, and its descriptor would be ours to close.)
		 */
		if (u8(in) % 8)
			ops[n - 1] = (struct flexsc_op){ .sysnum = SYS_close, .nargs = 1,
				.args = { FLEXSC_CHAIN_FD } };
		else
			ops[n - 1] = (struct flexsc_op){ .sysnum = SYS_lseek, .nargs = 3,
				.args = { FLEXSC_CHAIN_FD, 0, SEEK_SET } };
	} else if (n >= 2 && u8(in) % 16 == 0) {
		/* FLEXSC_CHAIN_FD without a descriptor-making op 0: refused */
		ops[1].args[0] = FLEXSC_CHAIN_FD;
	}
	int err = flexsc_post_chain(q, u8(in) % 16 ? ops : NULL, n, u8(in) % 8 ? calls : NULL);
	ALLOW("flexsc_post_chain", err, 0, -EINVAL, -ENOSYS, -EAGAIN, -ESHUTDOWN);
	if (err == 0 && u8(in) % 8)
		for (unsigned i = 0; i < n; i++)
			remember(s, calls[i]);
}

static struct flexsc_queue *pick_queue(struct state *s, struct in *in)
{
	uint8_t b = u8(in);

	if (b % 32 == 31)
		return NULL;
	return s->q[b % NQ];
}

static void op_wait(struct state *s, struct flexsc_queue *q, struct in *in, uint8_t kind)
{
	flexsc_call_t calls[72];
	int64_t rets[72];
	unsigned n = 1 + u8(in) % 8, idx;
	struct timespec ts = pick_timeout(in);
	const struct timespec *tp = u8(in) % 16 ? &ts : &(struct timespec){ 0, 1000000000L }; /* bad */

	if (u8(in) % 32 == 0)
		n = 65 + u8(in) % 8; /* past the stack array of the library */
	for (unsigned i = 0; i < n; i++)
		calls[i] = pick_call(s, in);
	int err;
	switch (kind % 4) {
	case 0:
		err = flexsc_wait_one(q, calls[0], u8(in) % 2 ? &rets[0] : NULL, tp);
		ALLOW("flexsc_wait_one", err, 0, -EINVAL, -EXDEV, -ESTALE, -ETIME, -EINTR);
		break;
	case 1:
		idx = ~0u;
		err = flexsc_wait_any(q, u8(in) % 16 ? calls : NULL, u8(in) % 16 ? n : 0,
				      u8(in) % 2 ? &idx : NULL, u8(in) % 2 ? &rets[0] : NULL, tp);
		ALLOW("flexsc_wait_any", err, 0, -EINVAL, -EXDEV, -ESTALE, -ETIME, -EINTR, -ENOMEM);
		if (err == 0 && idx != ~0u && idx >= n)
			bad_result("flexsc_wait_any: index", (long)idx);
		break;
	case 2:
		err = flexsc_wait_all(q, calls, n, u8(in) % 2 ? rets : NULL, tp);
		ALLOW("flexsc_wait_all", err, 0, -EINVAL, -EXDEV, -ESTALE, -ETIME, -EINTR, -ENOMEM);
		break;
	default:
		err = flexsc_wait(q, tp);
		if (err < 0)
			ALLOW("flexsc_wait", err, -EINVAL, -ECHILD, -ETIME, -EINTR);
		break;
	}
}

static void teardown(struct state *s)
{
	for (unsigned i = 0; i < NQ; i++) {
		if (s->q[i] && flexsc_queue_destroy(s->q[i]) != 0)
			abort();
		s->q[i] = NULL;
	}
	if (s->fx && flexsc_exit(s->fx) != 0)
		abort();
	s->fx = NULL;
}

static void config_from(struct flexsc_config *cfg, struct in *in)
{
	flexsc_config_init(cfg);
	cfg->flags |= FLEXSC_QUIET;
	cfg->engine = (enum flexsc_engine)(u8(in) % 5); /* 4: invalid */
	uint8_t b = u8(in);
	if (b & 1)
		cfg->pages_per_queue = u8(in) % 4; /* 0 invalid, 1..3 */
	if (b & 2)
		cfg->batch_threshold = u8(in) % 70; /* 0 invalid */
	if (b & 4)
		cfg->batch_timeout_us = u8(in) % 4 * 50;
	if (b & 8)
		cfg->spin_us = u8(in) % 30;
	if (b & 16) {
		cfg->threads_per_cpu = u8(in) % 3; /* 0 invalid */
		cfg->max_threads = u8(in) % 5;     /* 0 invalid */
	}
	if (b & 32) {
		cfg->nr_syscall_cpus = 1 + u8(in) % 2;
		cfg->syscall_cpus[0] = (int)(u8(in) % 3) - 1; /* -1 invalid */
		cfg->syscall_cpus[1] = 0;
	}
	if (b & 64)
		cfg->sqpoll = true; /* invalid with threads and sync */
	if (b & 128)
		cfg->iowq_max_workers = u8(in) % 3;
}

/*
 * Entries of /proc/self/fd or /proc/self/task. Pipes are not counted: the
 * sanitizers' symbolizer keeps a pipe pair open once libFuzzer prints a new
 * function, and this file's own pipe is closed by itself. io_uring's own
 * worker threads are not counted either: they come and go on their own; nor
 * is the library's context anchor, one thread a process keeps from first use.
 */
static int count_entries(const char *dir, bool skip_iou)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		abort();
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (!skip_iou) {
			char path[300], target[64] = "";
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			if (readlink(path, target, sizeof(target) - 1) > 0 && !strncmp(target, "pipe:", 5))
				continue;
		}
		if (skip_iou) {
			char path[300], comm[32] = "";
			snprintf(path, sizeof(path), "%s/%s/comm", dir, de->d_name);
			FILE *f = fopen(path, "r");
			if (!f)
				continue;
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = 0;
			fclose(f);
			if (!strncmp(comm, "iou-", 4) || !strcmp(comm, "flexsc-anchor\n"))
				continue;
		}
		n++;
	}
	closedir(d);
	return n;
}

/* Descriptors and threads must not grow across inputs. */
static void check_no_growth(void)
{
	static int fds0 = -1, threads0 = -1;
	int fds = count_entries("/proc/self/fd", false);
	int threads = count_entries("/proc/self/task", true);

	if (fds0 < 0) {
		fds0 = fds, threads0 = threads;
		return;
	}
	/* a joined thread may stay listed for a moment */
	for (unsigned i = 0; threads > threads0 && i < 2000; i++) {
		nanosleep(&(struct timespec){ 0, 1000000L }, NULL);
		threads = count_entries("/proc/self/task", true);
	}
	if (fds != fds0 || threads > threads0) {
		fprintf(stderr, "fuzz_api: leak: %d descriptors (first %d), %d threads (first %d)\n",
			fds, fds0, threads, threads0);
		DIR *d = opendir("/proc/self/fd");
		struct dirent *de;
		while (d && (de = readdir(d))) {
			char path[300], target[300] = "";
			snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
			if (readlink(path, target, sizeof(target) - 1) > 0)
				fprintf(stderr, "  fd %s -> %s\n", de->d_name, target);
		}
		if (d)
			closedir(d);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned long runs;
	struct in in = { data, size };
	struct state s = { 0 };
	struct flexsc_config cfg;
	int p[2];

	if (runs++ % 256 == 0)
		check_no_growth();
	if (pipe2(p, O_NONBLOCK | O_CLOEXEC))
		abort();
	s.pipe_r = p[0], s.pipe_w = p[1];
	s.devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	s.devzero = open("/dev/zero", O_RDWR | O_CLOEXEC);
	if (s.devnull < 0 || s.devzero < 0)
		abort();
	futex_word = 0;

	config_from(&cfg, &in);
	if (flexsc_register(&s.fx, u8(&in) % 32 ? &cfg : NULL) != 0)
		s.fx = NULL;
	if (s.fx && flexsc_queue_create(s.fx, &s.q[0]) != 0)
		abort();

	for (unsigned op = 0; op < MAX_OPS && in.n; op++) {
		uint8_t kind = u8(&in);
		struct flexsc_queue *q = pick_queue(&s, &in);
		struct flexsc_completion comp[64];
		struct flexsc_stats st;
		struct flexsc_sysinfo si;
		int64_t r;
		unsigned slot;
		int err;

		switch (kind % 16) {
		case 0: case 1: case 2: case 3:
			post_random(&s, q, &in);
			break;
		case 4:
			post_chain_random(&s, q, &in);
			break;
		case 5:
			err = flexsc_flush(q);
			if (err < 0) /* -ESHUTDOWN: an exited instance, as flexsc_post says */
				ALLOW("flexsc_flush", err, -EINVAL, -ESHUTDOWN);
			break;
		case 6:
			err = flexsc_poll(q, pick_call(&s, &in), u8(&in) % 2 ? &r : NULL);
			ALLOW("flexsc_poll", err, 0, -EINPROGRESS, -EINVAL, -EXDEV, -ESTALE);
			break;
		case 7:
			op_wait(&s, q, &in, u8(&in));
			break;
		case 8: {
			unsigned max = u8(&in) % 65;
			err = flexsc_reap(q, u8(&in) % 16 ? comp : NULL, max);
			if (err < 0)
				ALLOW("flexsc_reap", err, -EINVAL);
			if (err > (int)max)
				bad_result("flexsc_reap: more than max", err);
			for (int k = 0; k < err; k++)
				check_completion(&comp[k]);
			break;
		}
		case 9:
			err = flexsc_cancel(q, pick_call(&s, &in));
			ALLOW("flexsc_cancel", err, 0, -EINVAL, -EXDEV, -ESTALE, -EALREADY, -EBUSY);
			break;
		case 10: { /* a synchronous call: only harmless ones, which never block */
			struct call c = pick_syscall(&s, &in);
			uint64_t args[6];
			memcpy(args, c.a, sizeof(args));
			unsigned nargs = pick_nargs(&in, c.need);
			int64_t v = flexsc_syscall(q, c.nr, nargs, args);
			if (c.known && nargs <= 6 && v != (nargs >= 3 ? c.expect : c.expect_short) &&
			    v != -EAGAIN && v != -ESHUTDOWN && !(v == -EINVAL && !q)) {
				fprintf(stderr, "fuzz_api: flexsc_syscall(%ld, %u args) returned %lld, "
						"expected %lld\n", c.nr, nargs, (long long)v,
					(long long)(nargs >= 3 ? c.expect : c.expect_short));
				abort();
			}
			break;
		}
		case 11:
			slot = u8(&in) % NQ;
			if (s.q[slot]) {
				if (flexsc_queue_destroy(s.q[slot]) != 0)
					abort();
				s.q[slot] = NULL;
			} else if (s.fx) {
				if (flexsc_queue_create(s.fx, &s.q[slot]) != 0)
					s.q[slot] = NULL;
			}
			break;
		case 12:
			ALLOW("flexsc_queue_wake", flexsc_queue_wake(q), 0, -EINVAL);
			break;
		case 13:
			err = flexsc_queue_stats(q, u8(&in) % 16 ? &st : NULL);
			ALLOW("flexsc_queue_stats", err, 0, -EINVAL);
			if (err == 0 && st.completed > st.posted)
				bad_result("flexsc_queue_stats: completed > posted", (long)st.completed);
			err = flexsc_sysinfo(u8(&in) % 2 ? s.fx : NULL, (long)(int16_t)u16(&in), &si);
			ALLOW("flexsc_sysinfo", err, 0, -ENOSYS);
			break;
		case 14: /* exit with queues alive (they turn dead), then maybe register anew */
			if (u8(&in) % 4)
				break;
			if (s.fx && flexsc_exit(s.fx) != 0)
				abort();
			s.fx = NULL;
			if (u8(&in) % 2) {
				config_from(&cfg, &in);
				if (flexsc_register(&s.fx, &cfg) != 0)
					s.fx = NULL;
			}
			break;
		default: /* drain a queue through the ordinary API, with a bound */
			for (unsigned i = 0; i < 4; i++) {
				struct timespec ts = { 0, 200000 };
				if (flexsc_wait(q, &ts) <= 0)
					break;
				err = flexsc_reap(q, comp, 64);
				for (int k = 0; k < err; k++)
					check_completion(&comp[k]);
			}
			break;
		}
	}
	teardown(&s);
	close(s.pipe_r), close(s.pipe_w), close(s.devnull), close(s.devzero);
	return 0;
}
