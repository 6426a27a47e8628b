/*
 * A program built against an installed libflexsc (pkg-config flexsc):
 * one call through a queue; prints "ok" when it returned the caller's
 * pid. tests/shell/install.sh and tests/deb/run.sh build it.
 */
#define _GNU_SOURCE
#include <flexsc/flexsc.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	struct flexsc *fx;
	struct flexsc_queue *q;

	if (flexsc_register(&fx, NULL) || flexsc_queue_create(fx, &q))
		return 1;
	long pid = (long)flexsc_syscall(q, SYS_getpid, 0, NULL);
	printf("%s\n", pid == getpid() ? "ok" : "wrong pid");
	flexsc_queue_destroy(q);
	return flexsc_exit(fx);
}
