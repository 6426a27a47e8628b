/* SPDX-License-Identifier: MIT */
/*
 * Whether the library may read and write a small piece of the caller's
 * memory itself, where the system call would have done it in the kernel.
 *
 * io_uring's POLL_ADD takes the descriptor and events by value, so to serve
 * poll(2) the engine reads the caller's pollfd before submission and writes
 * revents after completion; FlexSC-Threads serves sleeps, signal masks
 * and signal waits without the kernel, reading the caller's timespec or
 * sigset and writing back. The system call fails with EFAULT on a bad
 * pointer; a load from the library would crash the program instead. So
 * each page is checked once by the kernel's own copy, and remembered in a
 * small direct-mapped table. A page that later becomes unreadable (munmap,
 * mprotect behind the library's back) while a program still passes
 * pointers into it is a documented limit: the call faults in the library
 * rather than failing with EFAULT.
 *
 * The check is a system call that any sandbox lets through, since libc
 * makes it everywhere: rt_sigprocmask. Given a `how` that does not exist,
 * it copies in the new set (EFAULT if it cannot) and fails with EINVAL
 * before it changes anything: a read of 8 bytes. Given no new set, it
 * copies the thread's mask out to the old one (EFAULT if it cannot): a
 * write of 8 bytes, whose old contents are then put back. Decision: not
 * process_vm_readv and process_vm_writev, used before, which no allow list
 * has: OpenSSH's pre-auth sandbox (SECCOMP_RET_KILL) killed the thread
 * that made them, the runtime's signal thread kept the process alive, and
 * the login hung. The write's cost: for the instant between the two, a
 * thread reading those 8 bytes of the call's own output buffer would see
 * the mask.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>

#include "core/internal.h"

#define PAGE_SHIFT 12
#define SLOTS 1024

/* page number + 1 of a page known good (writable, and so readable), or readable; 0: empty */
static _Atomic uint64_t good[SLOTS], readable[SLOTS];

static bool known(_Atomic uint64_t *table, uintptr_t page)
{
	return atomic_load_explicit(&table[page % SLOTS], memory_order_relaxed) == page + 1;
}

static void remember(_Atomic uint64_t *table, uintptr_t first, uintptr_t last)
{
	atomic_store_explicit(&table[first % SLOTS], first + 1, memory_order_relaxed);
	atomic_store_explicit(&table[last % SLOTS], last + 1, memory_order_relaxed);
}

#define NO_SUCH_HOW (-1)

/* The 8 bytes at p, read by the kernel: they may be read. */
static bool kernel_reads(const void *p)
{
	return fx_raw_syscall6(SYS_rt_sigprocmask, NO_SUCH_HOW, (long)p, 0, 8, 0, 0) == -EINVAL;
}

/* The 8 bytes at p, which may be read, written by the kernel and put back: they may be written. */
static bool kernel_writes(void *p)
{
	uint64_t was;

	memcpy(&was, p, sizeof(was));
	if (fx_raw_syscall6(SYS_rt_sigprocmask, SIG_BLOCK, 0, (long)p, 8, 0, 0))
		return false;
	memcpy(p, &was, sizeof(was));
	return true;
}

/*
 * Every page of [p, p + len) may be read: the aligned words holding its
 * first and last bytes, which lie in those bytes' pages (any len).
 */
static bool readable_range(const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p;

	return kernel_reads((const void *)(a & ~(uintptr_t)7)) &&
	       kernel_reads((const void *)((a + len - 1) & ~(uintptr_t)7));
}

bool fx_mem_copy_in(void *dst, const void *src, size_t len)
{
	if (!len)
		return true;
	if ((uintptr_t)src + len < (uintptr_t)src || !readable_range(src, len))
		return false;
	memcpy(dst, src, len);
	return true;
}

/* Every page of [p, p + len) may be written (len >= 8: the words probed lie inside it). */
static bool ask_kernel(void *p, size_t len)
{
	return len >= 8 && readable_range(p, len) && kernel_writes(p) && kernel_writes((char *)p + len - 8);
}

bool fx_mem_rw_ok(void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p, first = a >> PAGE_SHIFT, last = (a + len - 1) >> PAGE_SHIFT;

	if (!len || a + len < a)
		return false;
	if (known(good, first) && known(good, last))
		return true;
	if (!ask_kernel(p, len))
		return false;
	remember(good, first, last);
	return true;
}

bool fx_mem_r_ok(const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p, first = a >> PAGE_SHIFT, last = (a + len - 1) >> PAGE_SHIFT;

	if (!len || a + len < a)
		return false;
	if ((known(good, first) || known(readable, first)) && (known(good, last) || known(readable, last)))
		return true;
	if (!readable_range(p, len))
		return false;
	remember(readable, first, last);
	return true;
}
