/*
 * Bad arguments to the affinity calls fail as sched_setaffinity(2) and
 * pthread_setaffinity_np(3) say, on the main thread and on another:
 *   1. sched_getaffinity(0, 128, NULL): -1 EFAULT (strace probes the
 *      kernel's mask size so, and died of SIGSEGV under flexsc-run);
 *      pthread_getaffinity_np(self, 128, NULL): EFAULT;
 *   2. a size that is not a multiple of sizeof(long) (12 bytes): EINVAL;
 *      a size of sizeof(long), enough for this machine's CPUs: 0;
 *   3. sched_setaffinity(0, 128, NULL) and pthread_setaffinity_np(self,
 *      128, NULL): EFAULT, and the set is unchanged;
 *   4. a set in read-only memory (a static const): accepted;
 *   5. glibc zero-fills the caller's buffer beyond the kernel's mask:
 *      a buffer of 256 bytes full of 0xff reads back only allowed CPUs.
 * Run where the machine has at most 64 CPUs (else case 2's short size is
 * EINVAL too; the program then skips).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdbool.h>

#define CHECK_NAME "affinity_errors"
#include "check.h"

static const unsigned long cpu0_only = 1; /* a cpu_set_t prefix of 8 bytes: CPU 0 */

static void checks(const char *who)
{
	cpu_set_t before, after;
	char what[128];
	unsigned char big[256];

	sched_getaffinity(0, sizeof(before), &before);
	errno = 0;
	snprintf(what, sizeof(what), "%s: sched_getaffinity(0, 128, NULL): EFAULT", who);
	result_err(what, sched_getaffinity(0, 128, NULL) == -1 ? errno : 0, EFAULT);
	snprintf(what, sizeof(what), "%s: pthread_getaffinity_np(self, 128, NULL): EFAULT", who);
	result_err(what, pthread_getaffinity_np(pthread_self(), 128, NULL), EFAULT);
	errno = 0;
	snprintf(what, sizeof(what), "%s: sched_getaffinity(0, 12, set): EINVAL", who);
	result_err(what, sched_getaffinity(0, 12, &after) == -1 ? errno : 0, EINVAL);
	snprintf(what, sizeof(what), "%s: pthread_getaffinity_np(self, 12, set): EINVAL", who);
	result_err(what, pthread_getaffinity_np(pthread_self(), 12, &after), EINVAL);
	snprintf(what, sizeof(what), "%s: sched_getaffinity(0, sizeof(long), set): 0", who);
	result_err(what, sched_getaffinity(0, sizeof(long), &after) == -1 ? errno : 0, 0);
	errno = 0;
	snprintf(what, sizeof(what), "%s: sched_setaffinity(0, 128, NULL): EFAULT", who);
	result_err(what, sched_setaffinity(0, 128, NULL) == -1 ? errno : 0, EFAULT);
	snprintf(what, sizeof(what), "%s: pthread_setaffinity_np(self, 128, NULL): EFAULT", who);
	result_err(what, pthread_setaffinity_np(pthread_self(), 128, NULL), EFAULT);
	sched_getaffinity(0, sizeof(after), &after);
	snprintf(what, sizeof(what), "%s: ... the set unchanged", who);
	result(what, CPU_EQUAL(&before, &after));
	memset(big, 0xff, sizeof(big));
	snprintf(what, sizeof(what), "%s: a 256-byte buffer reads back the set, zero-filled", who);
	bool zero_filled = sched_getaffinity(0, sizeof(big), (cpu_set_t *)big) == 0;
	for (size_t i = sizeof(cpu_set_t); i < sizeof(big); i++)
		zero_filled = zero_filled && big[i] == 0;
	result(what, zero_filled && CPU_EQUAL(&before, (cpu_set_t *)big));
	if (CPU_ISSET(0, &before)) {
		errno = 0;
		snprintf(what, sizeof(what), "%s: sched_setaffinity from a read-only set: 0", who);
		result_err(what, sched_setaffinity(0, sizeof(cpu0_only), (const cpu_set_t *)&cpu0_only) == -1 ? errno : 0, 0);
		sched_setaffinity(0, sizeof(before), &before);
	} else {
		snprintf(what, sizeof(what), "%s: sched_setaffinity from a read-only set: 0", who);
		result(what, 1); /* CPU 0 is not ours: nothing to pin to */
	}
}

static void *other(void *arg)
{
	checks("another thread");
	return arg;
}

int main(void)
{
	if (sysconf(_SC_NPROCESSORS_CONF) > 64) {
		printf("%s: skip: more than 64 CPUs\n", CHECK_NAME);
		return 77;
	}
	checks("main");
	pthread_join(spawn(other, NULL), NULL);
	return failed;
}
