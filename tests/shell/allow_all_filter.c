/*
 * Runs a command under a seccomp filter that allows every call, with
 * no_new_privs, as a container runtime or systemd's SystemCallFilter=
 * starts a service: `allow_all_filter COMMAND ARGS...`. The runtime then
 * starts already filtered (tests/shell/threads.sh, configuration
 * "contained"). Exit 126 when the filter cannot be installed, 127 when the
 * command cannot be run.
 */
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sock_filter allow[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_fprog prog = { 1, allow };

	if (argc < 2) {
		fprintf(stderr, "usage: allow_all_filter COMMAND [ARG...]\n");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("allow_all_filter: seccomp");
		return 126;
	}
	execvp(argv[1], argv + 1);
	perror("allow_all_filter: exec");
	return 127;
}
