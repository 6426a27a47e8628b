/*
 * Identity changes in a process of one thread, which NPTL makes there,
 * each in a forked child (they cannot be undone):
 *   1. PR_SET_KEEPCAPS, setresuid(65534), capset back to the permitted
 *      set, then setresgid(65534) succeeds (setpriv --reuid --regid does
 *      this; under flexsc-run it aborted: the gid change failed on a
 *      carrier of the runtime's that had no KEEPCAPS);
 *   2. unshare(CLONE_NEWUSER) succeeds (the kernel wants a process of one
 *      thread: `unshare -r` failed with EINVAL); where the machine forbids
 *      user namespaces (EPERM: a chroot, a sysctl), it says so instead,
 *      the same line with and without flexsc-run;
 *   3. the same after setrlimit(RLIMIT_NPROC) to the limit it has (a
 *      login path sets its limits so): it takes no thread away from the
 *      process (the runtime started its signal thread for any such call,
 *      and unshare failed with EINVAL).
 * Runs as root only (prints a skip line and exits 77 otherwise).
 */
// flexsc-test: skip-config threads (every call goes to a syscall thread, which starts at the child's first call: the process is no longer one thread; docs/threads.md, "Threads made afterwards")
// flexsc-test: skip-config split (the same: --engine threads)
// flexsc-test: skip-config auto (the same: calls go to syscall threads on the syscall core)
// flexsc-test: skip-config uring (the same: --engine uring makes the carrier's ring at the first call, and io_uring's workers are threads of the process)
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CHECK_NAME "identity_one_thread"
#include "check.h"

static int keepcaps(void *arg)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	(void)arg;
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) || setresuid(65534, 65534, 65534))
		return 1;
	if (syscall(SYS_capget, &h, d))
		return 2;
	d[0].effective = d[0].permitted;
	d[1].effective = d[1].permitted;
	if (syscall(SYS_capset, &h, d))
		return 3;
	if (setresgid(65534, 65534, 65534))
		return 4;
	return getuid() == 65534 && getgid() == 65534 ? 0 : 5;
}

static int new_user_ns(void *arg)
{
	(void)arg;
	if (unshare(CLONE_NEWUSER) == 0)
		return 0;
	int err = errno;
	printf("%s\n", strerror(err));
	fflush(stdout);
	return err == EPERM ? 2 : 1;
}

static int nproc_then_new_user_ns(void *arg)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NPROC, &rl) || setrlimit(RLIMIT_NPROC, &rl))
		return 3;
	return new_user_ns(arg);
}

/* Runs fn in a child and says whether its unshare succeeded, or that the machine forbids it. */
static void userns_result(int (*fn)(void *), const char *what)
{
	char out[256];
	int st = run_captured(fn, NULL, out, sizeof(out));
	bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;

	if (WIFEXITED(st) && WEXITSTATUS(st) == 2)
		printf("%s: %s: not permitted on this machine (EPERM), not checked\n", CHECK_NAME, what);
	else
		resultf(ok, "%s succeeds%s%s", what, ok ? "" : ": ", ok ? "" : out);
}

int main(void)
{
	char out[256];

	if (geteuid() != 0) {
		printf("%s: skip: needs root\n", CHECK_NAME);
		return 77;
	}
	int st = run_captured(keepcaps, NULL, out, sizeof(out));
	resultf(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		"KEEPCAPS, setresuid, capset, then setresgid succeeds (status %x)", st);
	userns_result(new_user_ns, "unshare(CLONE_NEWUSER)");
	userns_result(nproc_then_new_user_ns, "setrlimit(RLIMIT_NPROC), then unshare(CLONE_NEWUSER)");
	return failed;
}
