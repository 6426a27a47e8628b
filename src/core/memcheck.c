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
 * each page is checked once with process_vm_readv and process_vm_writev on
 * the process itself (a copy of the same bytes back: they fault, or not,
 * as the kernel's own copy would; memory only read, with process_vm_readv
 * alone), and remembered in a small direct-mapped table. A page that later becomes unreadable (munmap, mprotect behind the
 * library's back) while a program still passes pointers into it is a
 * documented limit: the call faults in the library rather than failing
 * with EFAULT.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/uio.h>

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

bool fx_mem_copy_in(void *dst, const void *src, size_t len)
{
	struct iovec local = { dst, len }, remote = { (void *)src, len };
	long pid = fx_raw_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0);

	return !len || fx_raw_syscall6(SYS_process_vm_readv, pid, (long)&local, 1, (long)&remote, 1, 0) == (long)len;
}

static bool ask_kernel(void *p, size_t len)
{
	char copy[256];
	struct iovec local = { copy, len }, remote = { p, len };

	if (len > sizeof(copy) || !fx_mem_copy_in(copy, p, len))
		return false;
	long pid = fx_raw_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0);
	return fx_raw_syscall6(SYS_process_vm_writev, pid, (long)&local, 1, (long)&remote, 1, 0) == (long)len;
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
	char copy[256];

	if (!len || a + len < a || len > sizeof(copy))
		return false;
	if ((known(good, first) || known(readable, first)) && (known(good, last) || known(readable, last)))
		return true;
	if (!fx_mem_copy_in(copy, p, len))
		return false;
	remember(readable, first, last);
	return true;
}
