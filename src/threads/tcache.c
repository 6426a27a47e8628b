/* SPDX-License-Identifier: MIT */
/*
 * glibc's per-thread malloc cache (tcache) of exited uthreads, handed on
 * to new ones.
 *
 * The problem. glibc keeps each thread's tcache (a 640-byte table of 64
 * bins, and the small blocks freed into them, up to 7 a bin) behind a
 * pointer in libc's static TLS, `static __thread tcache_perthread_struct
 * *tcache` in malloc.c. It frees them only from NPTL's thread exit
 * (start_thread calls the private __libc_thread_freeres, which calls
 * tcache_thread_shutdown). Uthreads are not NPTL threads: every uthread
 * that called malloc left its tcache behind, about 3 kB a thread in a
 * thread-per-connection server, 700 MB a minute in the soak's churn.
 *
 * The shape. The pointer lives at the same offset from the thread pointer
 * in every thread (libc's TLS is static), so at start we find that offset
 * in the main thread, and then: when a uthread's mapping is freed (it has
 * exited, and is off every CPU), its tcache is taken out of its TLS (the
 * slot set to NULL) and put in a pool; when a uthread is made, it gets one
 * from the pool, if there is one, before it first runs. A tcache is only a
 * cache of free blocks, each of which records its own arena, and
 * malloc's fast path takes any of them whichever arena the thread uses:
 * handing one to another thread (never to two at once) is what glibc
 * itself would do if it freed the blocks and the new thread got them back.
 * So the memory is bounded by the peak number of live uthreads, as NPTL's
 * arenas are. Carriers' own kernel threads and the main uthread are NPTL
 * threads: their TCBs are never touched here, and glibc frees theirs.
 *
 * Finding the offset, verifiably. The main thread mallocs 16 blocks each
 * of 24 and 40 bytes (so that bins 0 and 1 are not full, whatever their
 * fill was) and frees the last of each: now its tcache says counts[0] and
 * counts[1] >= 1, entries[0] and entries[1] are those blocks (entries are
 * stored as they are; only the `next` links are mangled). Every 16-byte
 * aligned non-null word of libc's TLS block (dl_iterate_phdr: the
 * calling thread's block, and its PT_TLS size) is read as a table with
 * process_vm_readv on ourselves, which fails with EFAULT instead of
 * faulting where a word is no pointer. Exactly one word must match; if
 * none or several do (another glibc, tunables that disable the cache,
 * no process_vm_readv), recycling is off and threads leak as before.
 * flexsc-run --stats says which.
 *
 * Rejected: freeing an exited thread's tcache by hand, as
 * tcache_thread_shutdown does (it must walk bins whose links are mangled
 * with a layout private to glibc, and free blocks of another arena from a
 * thread that may be a carrier's scheduler context); calling glibc's
 * private __libc_thread_freeres (not exported, and it would free the
 * calling thread's state, not the dead one's); keeping the tcache with the
 * cached mapping (the mapping cache is bounded and keyed by stack size,
 * so tcaches would still leak when mappings are unmapped).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "threads/rt.h"
#include "threads/waiter.h"

#define BINS 64 /* glibc 2.26+: TCACHE_MAX_BINS */
struct tcache {  /* glibc 2.30+: tcache_perthread_struct */
	uint16_t counts[BINS];
	void *entries[BINS];
};

/*
 * At most POOL_MAX tcaches wait (8 MiB of address space reserved, touched
 * as it fills): beyond, a tcache stays where it was, leaked as before.
 */
#define POOL_MAX (1u << 20)

static long slot_off;        /* the slot's address minus the thread pointer; 0: recycling is off */
static const char *off_why = "not started";
static _Atomic int pool_lock;   /* fx_wl_lock: a fork child takes it over from a lost holder */
static void **pool;
static _Atomic size_t pool_len; /* stored after the element it counts: see fx_tcache_take */
static _Atomic uint64_t handed, kept_back;

/* Reads n bytes at addr into buf, or fails (-EFAULT) where addr is not mapped. */
static int peek(void *buf, uintptr_t addr, size_t n)
{
	struct iovec local = { buf, n }, remote = { (void *)addr, n };
	long r = fx_raw_syscall6(SYS_process_vm_readv, fx_raw_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0),
				 (long)&local, 1, (long)&remote, 1, 0);

	return r == (long)n ? 0 : r < 0 ? (int)r : -EFAULT;
}

struct module {
	uintptr_t addr;    /* an address inside libc's code */
	uintptr_t tls;     /* the calling thread's TLS block of libc */
	size_t tls_size;
};

static int find_libc(struct dl_phdr_info *info, size_t size, void *data)
{
	struct module *m = data;
	bool has = false;
	size_t tls_size = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && m->addr >= lo && m->addr < lo + ph->p_memsz)
			has = true;
		if (ph->p_type == PT_TLS)
			tls_size = ph->p_memsz;
	}
	if (!has)
		return 0;
	m->tls = (uintptr_t)info->dlpi_tls_data;
	m->tls_size = tls_size;
	return 1;
}

/* The word of the calling thread's libc TLS that points at its tcache, or 0 (*why says why). */
static uintptr_t find_slot(void *(*lmalloc)(size_t), void (*lfree)(void *), const char **why)
{
	void *a[16] = { 0 }, *b[16] = { 0 };
	struct module m = { .addr = (uintptr_t)lfree };
	uintptr_t found = 0;
	unsigned matches = 0;

	if (!dl_iterate_phdr(find_libc, &m) || !m.tls || m.tls_size < sizeof(void *)) {
		*why = "libc's TLS block not found";
		return 0;
	}
	for (int i = 0; i < 16; i++) {
		a[i] = lmalloc(24); /* bin 0 */
		b[i] = lmalloc(40); /* bin 1 */
	}
	if (!a[15] || !b[15]) {
		*why = "malloc failed";
		goto out;
	}
	lfree(a[15]);
	lfree(b[15]);
	for (uintptr_t w = m.tls; w + sizeof(void *) <= m.tls + m.tls_size; w += sizeof(void *)) {
		uintptr_t v = *(const uintptr_t *)w;
		struct tcache t;
		if (!v || (v & 15) || peek(&t, v, sizeof(t)))
			continue;
		if (t.counts[0] >= 1 && t.counts[1] >= 1 && t.entries[0] == a[15] && t.entries[1] == b[15]) {
			found = w;
			matches++;
		}
	}
	a[15] = b[15] = NULL;
	if (matches != 1) {
		*why = matches ? "several words of libc's TLS look like malloc's per-thread cache"
			       : "malloc's per-thread cache not found in libc's TLS";
		found = 0;
	}
out:
	for (int i = 0; i < 16; i++) {
		lfree(a[i]);
		lfree(b[i]);
	}
	return found;
}

int fx_tcache_init(void)
{
	void *(*lmalloc)(size_t) = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "__libc_malloc");
	void (*lfree)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "__libc_free");
	uintptr_t tp;

	if (slot_off || pool)
		return 0;
	if (!lmalloc || !lfree) {
		off_why = "glibc's __libc_malloc not found";
		return -ENOSYS;
	}
	uintptr_t slot = find_slot(lmalloc, lfree, &off_why);
	if (!slot)
		return -ENOENT;
	__asm__ volatile("rdfsbase %0" : "=r"(tp));
	void *p = mmap(NULL, POOL_MAX * sizeof(void *), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		off_why = "no memory for the pool";
		return -ENOMEM;
	}
	pool = p;
	slot_off = (long)(slot - tp);
	return 0;
}

void fx_tcache_give(uintptr_t tcb)
{
	void **slot = (void **)(tcb + slot_off);
	void *t = NULL;

	if (!slot_off || !atomic_load_explicit(&pool_len, memory_order_relaxed))
		return;
	fx_wl_lock(&pool_lock);
	size_t n = atomic_load_explicit(&pool_len, memory_order_relaxed);
	if (n) {
		t = pool[n - 1];
		atomic_store_explicit(&pool_len, n - 1, memory_order_release);
	}
	fx_wl_unlock(&pool_lock);
	if (t) {
		*slot = t;
		atomic_fetch_add_explicit(&handed, 1, memory_order_relaxed);
	}
}

void fx_tcache_take(uintptr_t tcb)
{
	void **slot = (void **)(tcb + slot_off);
	void *t;

	if (!slot_off || !(t = *slot))
		return;
	fx_wl_lock(&pool_lock);
	size_t n = atomic_load_explicit(&pool_len, memory_order_relaxed);
	if (n < POOL_MAX) {
		pool[n] = t;
		/*
		 * release: a fork child that takes the lock over from a lost
		 * holder sees no count without its element (a pop cut short
		 * leaves the element counted: its taker is not in the child)
		 */
		atomic_store_explicit(&pool_len, n + 1, memory_order_release);
		*slot = NULL;
	}
	fx_wl_unlock(&pool_lock);
	if (*slot)
		atomic_fetch_add_explicit(&kept_back, 1, memory_order_relaxed);
}

void fx_tcache_report(FILE *out)
{
	if (!slot_off) {
		fprintf(out, "flexsc-run: malloc's per-thread caches of exited threads are not recycled (%s): "
			   "each thread that called malloc leaves its own behind\n", off_why);
		return;
	}
	fprintf(out, "flexsc-run: malloc's per-thread caches (at %%fs%+ld): %llu handed to new threads, "
			"%zu pooled, %llu left behind (pool full)\n",
		slot_off, (unsigned long long)atomic_load(&handed), atomic_load(&pool_len),
		(unsigned long long)atomic_load(&kept_back));
}
