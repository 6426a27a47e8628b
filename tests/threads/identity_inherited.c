/*
 * A new thread starts with its creator's per-thread identity (clone(2):
 * credentials, capability sets and securebits, the seccomp filter,
 * no_new_privs and namespaces are copied from the calling thread). A
 * program that sandboxes itself in main and then starts its workers
 * relies on it. Each case runs in a forked child (the changes cannot be
 * undone), main already having a thread made before the change:
 *   1. prctl(PR_SET_NO_NEW_PRIVS) and a seccomp filter without TSYNC that
 *      makes mkdir fail with EPERM: a thread made after, and one that
 *      thread makes, are filtered too; the thread made before is not;
 *   2. the raw setresuid(65534) system call (per thread, unlike glibc's):
 *      the threads made after are uid 65534 and cannot open a 0600 file
 *      of root's; the one made before is still root;
 *   3. unshare(CLONE_NEWNET): the thread made after is in the new network
 *      namespace, the one made before in the old.
 * identity_one_thread.c checks changes in a process of one thread.
 * Runs as root only (prints a skip line and exits 77 otherwise).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CHECK_NAME "identity_inherited"
#include "check.h"

static char dir[64], secret[80];
static int gate[2];

/* What a thread sees of its identity, as one line. */
struct look {
	long uid;
	int nnp, seccomp, mkdir_errno, open_errno;
	char net[64];
};

static void look_now(struct look *l)
{
	char path[128];

	l->uid = syscall(SYS_getuid);
	l->nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	l->seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
	snprintf(path, sizeof(path), "%s/d", dir);
	l->mkdir_errno = mkdir(path, 0700) ? errno : 0;
	if (!l->mkdir_errno)
		rmdir(path);
	int fd = open(secret, O_RDONLY);
	l->open_errno = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	memset(l->net, 0, sizeof(l->net));
	if (readlink("/proc/thread-self/ns/net", l->net, sizeof(l->net) - 1) < 0)
		strcpy(l->net, "?");
}

static struct look before, after, grandchild;

/* Made before the change: waits for the gate, then looks. */
static void *early(void *arg)
{
	char c;

	if (read(gate[0], &c, 1) != 1)
		return arg;
	look_now(&before);
	return NULL;
}

static void *late_child(void *arg)
{
	look_now(&grandchild);
	return arg;
}

/* Made after the change: looks, and makes one more that looks. */
static void *late(void *arg)
{
	look_now(&after);
	pthread_join(spawn(late_child, NULL), NULL);
	return arg;
}

static int change_seccomp(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mkdir, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

static int change_uid(void)
{
	return (int)syscall(SYS_setresuid, 65534, 65534, 65534);
}

static int change_net(void)
{
	return unshare(CLONE_NEWNET);
}

/* In a child: a thread, the change, a thread and its thread; one line of what each saw. */
static int with_threads(void *arg)
{
	int (*change)(void) = (int (*)(void))arg;
	struct look mine;

	if (pipe(gate))
		return 1;
	pthread_t e = spawn(early, NULL);
	if (change()) {
		printf("the change failed: %s\n", strerror(errno));
		fflush(stdout);
		return 1;
	}
	look_now(&mine);
	pthread_join(spawn(late, NULL), NULL);
	if (write(gate[1], "x", 1) != 1)
		return 1;
	pthread_join(e, NULL);
	printf("%s\n", memcmp(&after, &mine, sizeof(mine)) ? "after-differs" : "after-same");
	printf("%s\n", memcmp(&grandchild, &mine, sizeof(mine)) ? "grandchild-differs" : "grandchild-same");
	printf("%s\n", memcmp(&before, &mine, sizeof(mine)) ? "before-differs" : "before-same");
	printf("uid %ld/%ld/%ld nnp %d/%d/%d seccomp %d/%d/%d mkdir %d/%d/%d open %d/%d/%d\n", mine.uid,
	       after.uid, before.uid, mine.nnp, after.nnp, before.nnp, mine.seccomp, after.seccomp,
	       before.seccomp, mine.mkdir_errno, after.mkdir_errno, before.mkdir_errno, mine.open_errno,
	       after.open_errno, before.open_errno);
	fflush(stdout); /* the child ends with _exit */
	return 0;
}

static void inherited(const char *what, int (*change)(void))
{
	char out[1024];
	int st = run_captured(with_threads, (void *)change, out, sizeof(out));

	int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0 && strstr(out, "after-same\n") &&
		  strstr(out, "grandchild-same\n") && strstr(out, "before-differs\n");
	resultf(ok, "%s: threads made after have it, the one made before does not", what);
	if (!ok)
		fprintf(stderr, "%s: status %x: %s", what, st, out);
}

int main(void)
{
	if (geteuid() != 0) {
		printf("%s: skip: needs root\n", CHECK_NAME);
		return 77;
	}
	snprintf(dir, sizeof(dir), "/tmp/identity_inherited-XXXXXX");
	if (!mkdtemp(dir) || chmod(dir, 0777))
		return 1;
	snprintf(secret, sizeof(secret), "%s/secret", dir);
	int fd = open(secret, O_CREAT | O_WRONLY, 0600);
	if (fd < 0)
		return 1;
	close(fd);

	inherited("no_new_privs and a seccomp filter", change_seccomp);
	inherited("the raw setresuid(65534)", change_uid);
	inherited("unshare(CLONE_NEWNET)", change_net);

	unlink(secret);
	rmdir(dir);
	return failed;
}
