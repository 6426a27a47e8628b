/*
 * Per-thread identity (credentials(7), seccomp(2), unshare(2)): Linux
 * keeps credentials, seccomp filters and the fs context per thread. A
 * thread that lowers only its own effective uid with the raw setresuid
 * system call (as Samba-style servers impersonate a user per thread), one
 * that installs a seccomp filter without TSYNC, and one that unshares its
 * fs context and chroots into an empty directory, must keep that identity
 * for every call they make afterwards, wherever they run, and no other
 * thread may get it. These three and two bystanders open a 0600 file of
 * uid 1 200 times each while four more threads keep waking each other (so
 * threads move around); the impersonating thread must get EACCES every
 * time, the filtered one EPERM, the chrooted one ENOENT, the bystanders
 * (root) the file every time.
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

#define CHECK_NAME "thread_identity"
#include "check.h"

#define ROUNDS 200

#define KINDS 5

static char secret[64], empty[64];
static int wrong[KINDS];
static volatile int churning = 1;
static int pipes[4][2];

static void filter_openat_here(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) {
		perror("seccomp");
		exit(1);
	}
}

/* kind 0: impersonates uid 65534; 1: filtered; 2: chrooted; 3, 4: bystanders */
static void *opener(void *arg)
{
	int kind = (int)(long)arg;
	int want = kind == 0 ? EACCES : kind == 1 ? EPERM : kind == 2 ? ENOENT : 0;

	if (kind == 0 && syscall(SYS_setresuid, -1, 65534, -1)) {
		perror("setresuid");
		exit(1);
	}
	if (kind == 1)
		filter_openat_here();
	if (kind == 2 && (unshare(CLONE_FS) || chroot(empty) || chdir("/"))) {
		perror("unshare, chroot");
		exit(1);
	}
	for (int i = 0; i < ROUNDS; i++) {
		int fd = open(secret, O_RDONLY);
		int got = fd >= 0 ? 0 : errno;
		if (fd >= 0)
			close(fd);
		wrong[kind] += got != want;
		if (i % 8 == 0)
			sleep_ms(1); /* blocks: a thread may resume elsewhere */
		else
			sched_yield();
	}
	return NULL;
}

/* Keeps threads blocking and waking: pipe ping-pong in a ring. */
static void *churn(void *arg)
{
	int k = (int)(long)arg;
	char c = 0;

	while (churning) {
		if (write(pipes[(k + 1) % 4][1], &c, 1) != 1 || read(pipes[k][0], &c, 1) != 1)
			break;
	}
	return NULL;
}

int main(void)
{
	if (geteuid() != 0) {
		printf("skip: needs root (threads change their own credentials)\n");
		return 77;
	}
	/* a fresh directory: one a killed run left behind must not fail this one */
	char base[] = "/tmp/flexsc-tid-XXXXXX";
	if (!mkdtemp(base) || chmod(base, 0755)) {
		perror(base);
		return 1;
	}
	snprintf(secret, sizeof(secret), "%s/secret", base);
	snprintf(empty, sizeof(empty), "%s/empty", base);
	if (mkdir(empty, 0755)) {
		perror(empty);
		return 1;
	}
	int fd = open(secret, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || fchown(fd, 1, 1) || write(fd, "s", 1) != 1) {
		perror(secret);
		return 1;
	}
	close(fd);
	for (int k = 0; k < 4; k++)
		if (pipe(pipes[k]))
			return 1;
	pthread_t ch[4], op[KINDS];
	for (long k = 0; k < 4; k++)
		ch[k] = spawn(churn, (void *)k);
	for (long k = 0; k < KINDS; k++)
		op[k] = spawn(opener, (void *)k);
	for (int k = 0; k < KINDS; k++)
		pthread_join(op[k], NULL);
	churning = 0;
	for (int k = 0; k < 4; k++)
		close(pipes[k][1]);
	for (int k = 0; k < 4; k++)
		pthread_join(ch[k], NULL);
	unlink(secret);
	rmdir(empty);
	rmdir(base);
	result("the impersonating thread got EACCES every time", wrong[0] == 0);
	result("the filtered thread got EPERM every time", wrong[1] == 0);
	result("the chrooted thread got ENOENT every time", wrong[2] == 0);
	result("the bystanders opened the file every time", wrong[3] == 0 && wrong[4] == 0);
	if (wrong[0] || wrong[1] || wrong[2] || wrong[3] || wrong[4])
		fprintf(stderr, "wrong outcomes: %d %d %d %d %d of %d\n", wrong[0], wrong[1], wrong[2], wrong[3],
			wrong[4], ROUNDS);
	return failed;
}
