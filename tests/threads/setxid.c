/*
 * Dropping privileges in a threaded process, as every daemon started as
 * root does: setgroups, setgid and setuid from the main thread while other
 * threads are alive, and what every thread (and every kernel thread of
 * the process) has afterwards. Root only: exit 77 (skip) otherwise.
 *   1. threads that stay alive: some busy (computing, yielding now and
 *      then), some blocked in read() on a pipe, some in pthread_cond_wait;
 *      main waits for them by yielding (the busy threads never block, so
 *      under flexsc-run a sleeper's timer would wait for a carrier to go
 *      idle);
 *   2. initgroups of a user no group lists, with group 4242, returns 0
 *      within 5 s, and every kernel thread of the process has groups
 *      {4242} (point 4); then setgroups({4242, 65534}), setgid(65534),
 *      setuid(65534) each return 0, within 5 s (a hang is caught by a 60 s
 *      watchdog alarm, whose default action ends the process);
 *   3. then in every thread, the main one too: syscall(SYS_getresuid) and
 *      SYS_getresgid give 65534 three times, SYS_getgroups the two groups,
 *      setfsuid(-1) and setfsgid(-1) 65534, and opening a root-only 0600
 *      file fails with EACCES;
 *   4. every kernel thread of the process (/proc/self/task/N/status: Uid,
 *      Gid, Groups) has the new ids; but io_uring's workers (iou-*), which
 *      run no code of the process and take each request's submitter's
 *      credentials;
 *   5. setuid(0) now fails with EPERM, within 5 s, and changes nothing:
 *      every thread checks again.
 * Deterministic output; exit 0 when every check held.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CHECK_NAME "setxid"
#include "check.h"

#define NOBODY 65534
#define EXTRA_GROUP 4242
#define NBUSY 2
#define NCOND 2
#define NREAD 2

static char dir[64], secret[96];

/* What a thread's check found wrong: one bit per kind. */
enum { BAD_UID = 1, BAD_GID = 2, BAD_GROUPS = 4, BAD_FSID = 8, BAD_OPEN = 16 };

static int check_here(void)
{
	unsigned r = 0, e = 0, s = 0;
	gid_t g[16];
	int bad = 0;

	if (syscall(SYS_getresuid, &r, &e, &s) || r != NOBODY || e != NOBODY || s != NOBODY)
		bad |= BAD_UID;
	if (syscall(SYS_getresgid, &r, &e, &s) || r != NOBODY || e != NOBODY || s != NOBODY)
		bad |= BAD_GID;
	long n = syscall(SYS_getgroups, 16, g);
	if (n != 2 || g[0] != EXTRA_GROUP || g[1] != NOBODY)
		bad |= BAD_GROUPS;
	if (setfsuid(-1) != NOBODY || setfsgid(-1) != NOBODY)
		bad |= BAD_FSID;
	int fd = open(secret, O_RDONLY);
	if (fd >= 0 || errno != EACCES)
		bad |= BAD_OPEN;
	if (fd >= 0)
		close(fd);
	return bad;
}

/* A round of checks: main bumps `round`; each thread checks once per round and reports. */
static _Atomic int round_no, stop, started, done_round[3], bad_bits;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int cond_round; /* under lock */
static int pipes[NREAD][2];

static void report(int round)
{
	atomic_fetch_or(&bad_bits, check_here());
	atomic_fetch_add(&done_round[round], 1);
}

static void *busy(void *arg)
{
	int seen = 0;
	volatile unsigned long x = 0;

	(void)arg;
	atomic_fetch_add(&started, 1);
	while (!atomic_load(&stop)) {
		for (int i = 0; i < 200000; i++)
			x += (unsigned long)i * 7;
		int r = atomic_load(&round_no);
		if (r != seen) {
			seen = r;
			report(r);
		}
		sched_yield();
	}
	return NULL;
}

static void *reader(void *arg)
{
	int fd = *(int *)arg;
	char c;

	atomic_fetch_add(&started, 1);
	while (read(fd, &c, 1) == 1 && c != 'q')
		report(c - '0');
	return NULL;
}

static void *waiter(void *arg)
{
	int seen = 0;

	(void)arg;
	pthread_mutex_lock(&lock);
	atomic_fetch_add(&started, 1);
	for (;;) {
		while (cond_round == seen)
			pthread_cond_wait(&cond, &lock);
		seen = cond_round;
		if (seen < 0)
			break;
		pthread_mutex_unlock(&lock);
		report(seen);
		pthread_mutex_lock(&lock);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* Every thread checks once more; main too. True when all of them saw the new ids. */
static int check_round(int r, int nthreads, int nread)
{
	atomic_store(&bad_bits, 0);
	atomic_store(&round_no, r); /* the busy threads */
	for (int i = 0; i < nread; i++) {
		char c = (char)('0' + r);
		if (write(pipes[i][1], &c, 1) != 1)
			return 0;
	}
	pthread_mutex_lock(&lock);
	cond_round = r;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	double t0 = now_s();
	while (atomic_load(&done_round[r]) < nthreads && now_s() - t0 < 20)
		sched_yield();
	int bad = atomic_load(&bad_bits) | check_here();
	if (atomic_load(&done_round[r]) < nthreads)
		printf("round %d: %d of %d threads checked\n", r, atomic_load(&done_round[r]), nthreads);
	if (bad)
		printf("round %d: wrong:%s%s%s%s%s\n", r, bad & BAD_UID ? " uids" : "",
		       bad & BAD_GID ? " gids" : "", bad & BAD_GROUPS ? " groups" : "",
		       bad & BAD_FSID ? " fsids" : "", bad & BAD_OPEN ? " open" : "");
	return !bad && atomic_load(&done_round[r]) == nthreads;
}

/* Uid and Gid (all four: id) and Groups of every kernel thread of the process, from /proc. */
static int every_task_has(int id, const char *want_groups)
{
	char want_id[64], path[300], line[256];
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int ok = d != NULL, tasks = 0;

	snprintf(want_id, sizeof(want_id), "%d\t%d\t%d\t%d", id, id, id, id);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", de->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue; /* exited meanwhile */
		int seen = 0;
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = 0;
			if (!strncmp(line, "Name:\tiou-", 10)) {
				seen = -1; /* io_uring's worker: it takes each request's submitter's credentials */
				break;
			}
			if (!strncmp(line, "Uid:\t", 5) || !strncmp(line, "Gid:\t", 5)) {
				seen++;
				if (strcmp(line + 5, want_id)) {
					printf("task %s: %s\n", de->d_name, line);
					ok = 0;
				}
			} else if (!strncmp(line, "Groups:\t", 8)) {
				seen++;
				char *g = line + 8;
				while (*g && g[strlen(g) - 1] == ' ')
					g[strlen(g) - 1] = 0;
				if (strcmp(g, want_groups)) {
					printf("task %s: Groups: %s\n", de->d_name, g);
					ok = 0;
				}
			}
		}
		fclose(f);
		if (seen < 0)
			continue;
		if (seen != 3)
			ok = 0;
		tasks++;
	}
	if (d)
		closedir(d);
	return ok && tasks > 0;
}

/* Runs one call and says whether it returned want (and errno want_errno) within 5 s. */
#define TIMED(what, call, want, want_errno)                                            \
	do {                                                                           \
		fprintf(stderr, "setxid: %s\n", what);                                 \
		double t0_ = now_s();                                                  \
		errno = 0;                                                             \
		int r_ = (call);                                                       \
		int e_ = errno;                                                        \
		double dt_ = now_s() - t0_;                                            \
		result(what, r_ == (want) && (!(want_errno) || e_ == (want_errno)) && dt_ < 5); \
		if (r_ != (want) || dt_ >= 5)                                          \
			printf("  returned %d (%s) after %.3f s\n", r_, strerror(e_), dt_); \
	} while (0)

int main(void)
{
	if (geteuid() != 0) {
		printf("skip: not root (setuid and friends need it)\n");
		return 77;
	}
	/* a root-only file in a directory nobody may search and remove things from */
	snprintf(dir, sizeof(dir), "/tmp/flexsc-setxid.XXXXXX");
	if (!mkdtemp(dir) || chown(dir, NOBODY, NOBODY) || chmod(dir, 0700)) {
		perror("setxid: the test directory");
		return 1;
	}
	snprintf(secret, sizeof(secret), "%s/secret", dir);
	int fd = open(secret, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || write(fd, "x", 1) != 1 || close(fd)) {
		perror("setxid: the root-only file");
		return 1;
	}
	alarm(60); /* the watchdog: SIGALRM's default action ends the process */

	int nread = NREAD, nthreads = NBUSY + NCOND + NREAD;
	pthread_t t[NBUSY + NCOND + NREAD];
	int n = 0;
	for (int i = 0; i < NBUSY; i++)
		t[n++] = spawn(busy, NULL);
	for (int i = 0; i < NCOND; i++)
		t[n++] = spawn(waiter, NULL);
	for (int i = 0; i < nread; i++) {
		if (pipe(pipes[i])) {
			perror("pipe");
			return 1;
		}
		t[n++] = spawn(reader, &pipes[i][0]);
	}
	/*
	 * Main waits by yielding, not sleeping: a sleeper's timer fires when a
	 * carrier blocks or idles, and the busy threads only yield.
	 */
	while (atomic_load(&started) < nthreads)
		sched_yield();
	for (double t0 = now_s(); now_s() - t0 < 0.1;)
		sched_yield(); /* the others into their read and pthread_cond_wait */

	/* a user no group lists: the group given only */
	TIMED("initgroups returns 0", initgroups("flexsc-setxid-no-such-user", EXTRA_GROUP), 0, 0);
	result("every kernel thread of the process has its groups", every_task_has(0, "4242"));
	gid_t groups[2] = { EXTRA_GROUP, NOBODY }; /* in the order the kernel keeps them */
	TIMED("setgroups returns 0", setgroups(2, groups), 0, 0);
	TIMED("setgid returns 0", setgid(NOBODY), 0, 0);
	TIMED("setuid returns 0", setuid(NOBODY), 0, 0);
	result("every thread has the new ids and groups, and no root access", check_round(1, nthreads, nread));
	result("every kernel thread of the process has them", every_task_has(NOBODY, "4242 65534"));

	TIMED("setuid(0) fails with EPERM", setuid(0), -1, EPERM);
	result("nothing changed in any thread", check_round(2, nthreads, nread));
	result("nor in any kernel thread", every_task_has(NOBODY, "4242 65534"));

	atomic_store(&stop, 1);
	for (int i = 0; i < nread; i++)
		if (write(pipes[i][1], "q", 1) != 1)
			return 1;
	pthread_mutex_lock(&lock);
	cond_round = -1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	unlink(secret); /* the directory is nobody's: it may */
	rmdir(dir);
	return failed;
}
