/* SPDX-License-Identifier: MIT */
/*
 * User threads: stacks with guard pages, and a glibc thread control block
 * of their own.
 *
 * The problem. glibc and compiled code keep per-thread state behind the
 * thread pointer (%fs): errno, every __thread variable of the program and
 * of each library (dlopen'ed ones too, through the DTV), the stack
 * protector canary (%fs:0x28), the pointer guard (%fs:0x30), and glibc's
 * notion of "self". Compilers cache TLS addresses across calls, so user
 * threads that shared a carrier's TCB would read each other's errno.
 *
 * The shape. Each user thread gets a TCB built by glibc's own dynamic
 * linker (_dl_allocate_tls, GLIBC_PRIVATE, the function NPTL uses), placed
 * the way NPTL places it: at the top of the thread's mapping, static TLS
 * just below, then our struct fx_uthread, then the stack down to the guard
 * page. The TCB header (self pointers, canary, pointer guard) is copied
 * from the creating thread, as NPTL does. The context switch installs the
 * TCB with wrfsbase, so a user thread resumes with its own TLS on any
 * carrier, and may migrate. Its pthread_t is the TCB address, as in NPTL.
 *
 * The kernel thread id field of the TCB (found through glibc's own
 * libthread_db descriptor) is set to the running carrier's id at every
 * switch, so glibc paths that signal "self" (raise, abort) reach the
 * kernel thread that runs the user thread.
 *
 * The robust mutex list head in the TCB is initialised as NPTL's
 * pthread_create does (glibc's robust mutexes link themselves into it), but
 * is never registered with the kernel: a carrier's kernel registration
 * stays its own, and the list is the uthread's record (kstate.c). Its
 * offset is where glibc registered the main thread's head.
 *
 * Rejected: one TCB per carrier with no migration (breaks __thread
 * variables of threads sharing a carrier), and borrowing TCBs from real
 * NPTL threads (one kernel thread per user thread, the thing we avoid).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "threads/rt.h"

#define TCB_HEADER 0x40 /* tcbhead_t up to and including the pointer guard and vgetcpu cache */

static void *(*dl_allocate_tls)(void *mem);
static void (*dl_deallocate_tls)(void *tcb, bool dealloc_tcb);
static size_t tls_static_size, tls_static_align;
static size_t tcb_size, tid_offset, list_offset;
static size_t robust_offset; /* struct pthread's robust_head; 0: unknown, left alone */
static long robust_futex_offset;
static size_t page;
static intptr_t ours_offset; /* of fx_tcb_ours from a TCB: static TLS, the same in every thread */
static void cache_after_fork(void);

/* Resolves glibc's private TLS helpers. Returns 0 or -ENOSYS. */
int fx_uthread_init(void)
{
	void (*get_static)(size_t *, size_t *) =
		dlvsym(RTLD_DEFAULT, "_dl_get_tls_static_info", "GLIBC_PRIVATE");
	const uint32_t *sizeof_pthread = dlvsym(RTLD_DEFAULT, "_thread_db_sizeof_pthread", "GLIBC_PRIVATE");
	/* libthread_db descriptors: {size in bits, count, offset} */
	const uint32_t *tid_desc = dlvsym(RTLD_DEFAULT, "_thread_db_pthread_tid", "GLIBC_PRIVATE");
	const uint32_t *list_desc = dlvsym(RTLD_DEFAULT, "_thread_db_pthread_list", "GLIBC_PRIVATE");

	dl_allocate_tls = dlvsym(RTLD_DEFAULT, "_dl_allocate_tls", "GLIBC_PRIVATE");
	dl_deallocate_tls = dlvsym(RTLD_DEFAULT, "_dl_deallocate_tls", "GLIBC_PRIVATE");
	if (!get_static || !sizeof_pthread || !tid_desc || !list_desc || !dl_allocate_tls ||
	    !dl_deallocate_tls)
		return -ENOSYS;
	get_static(&tls_static_size, &tls_static_align);
	tcb_size = sizeof_pthread[0];
	tid_offset = tid_desc[2];
	list_offset = list_desc[2];
	page = (size_t)sysconf(_SC_PAGESIZE);
	static bool atfork;
	if (!atfork && pthread_atfork(NULL, NULL, cache_after_fork) == 0)
		atfork = true;
	if (tls_static_align < 64)
		tls_static_align = 64;
	fx_tcache_init(); /* may fail: threads then leak their malloc cache, as before */

	/* glibc registered the main thread's robust_head at start: its offset in struct pthread */
	struct robust_list_head *head;
	size_t len;
	uintptr_t me;
	__asm__ volatile("rdfsbase %0" : "=r"(me));
	if (fx_raw_syscall6(SYS_get_robust_list, 0, (long)&head, (long)&len, 0, 0, 0) == 0 &&
	    len == sizeof(*head) && (uintptr_t)head >= me + 8 &&
	    (uintptr_t)head + sizeof(*head) <= me + tcb_size) {
		robust_offset = (uintptr_t)head - me;
		robust_futex_offset = head->futex_offset;
	}
	ours_offset = (intptr_t)((uintptr_t)&fx_tcb_ours - me);
	return 0;
}

/* NPTL's default: RLIMIT_STACK, or 2 MiB when it is unlimited. */
size_t fx_default_stack_size(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_STACK, &rl) || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur < 16384)
		return 2u << 20;
	return (rl.rlim_cur + page - 1) & ~(page - 1);
}

void fx_uthread_set_tid(struct fx_uthread *u, int tid)
{
	*(int *)(u->tcb + tid_offset) = tid;
}

/*
 * Lays out a fresh context on a stack so that fx_ctx_switch "returns" into
 * fx_ctx_boot, which calls entry(arg): the frame fx_ctx_switch pops, top
 * down: return address, rbp, rbx, r12 (arg), r13 (entry), r14, r15, and
 * the control words.
 */
void *fx_ctx_make(void *stack_top, void (*entry)(void *), void *arg)
{
	extern void fx_ctx_boot(void);
	uint64_t *sp = (uint64_t *)((uintptr_t)stack_top & ~(uintptr_t)15);
	uint32_t mxcsr;
	uint16_t fpucw;

	__asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
	__asm__ volatile("fnstcw %0" : "=m"(fpucw));
	/* after fx_ctx_switch's ret, rsp is 16-byte aligned again: the ABI's state before a call */
	*--sp = (uint64_t)fx_ctx_boot;    /* return address */
	*--sp = 0;                        /* rbp */
	*--sp = 0;                        /* rbx */
	*--sp = (uint64_t)arg;            /* r12 */
	*--sp = (uint64_t)entry;          /* r13 */
	*--sp = 0;                        /* r14 */
	*--sp = 0;                        /* r15 */
	*--sp = (uint64_t)mxcsr | ((uint64_t)fpucw << 32);
	return sp;
}

static uintptr_t align_down(uintptr_t v, size_t a)
{
	return v & ~(uintptr_t)(a - 1);
}

/* Builds a TCB at tcb (zeroed memory with static TLS below it) for the calling thread's process. */
static int tcb_build(uintptr_t tcb)
{
	uintptr_t me;

	if (!dl_allocate_tls((void *)tcb))
		return -ENOMEM;
	void *dtv = *(void **)(tcb + 8);
	__asm__ volatile("rdfsbase %0" : "=r"(me));
	memcpy((void *)tcb, (void *)me, TCB_HEADER); /* canary, pointer guard, flags */
	*(uintptr_t *)(tcb + 0) = tcb;                /* header.tcb */
	*(void **)(tcb + 8) = dtv;                    /* header.dtv */
	*(uintptr_t *)(tcb + 16) = tcb;               /* header.self */
	*(int *)(tcb + ours_offset) = 1;              /* fx_tcb_ours: a carrier may run on it */
	/*
	 * glibc's list node of the thread: empty, linked to itself. A forked
	 * child's glibc unlinks "self" from its thread lists, and a zeroed
	 * node would be dereferenced.
	 */
	uintptr_t *node = (uintptr_t *)(tcb + list_offset);
	node[0] = node[1] = (uintptr_t)node;
	if (robust_offset) {
		/* as pthread_create does: an empty list; robust_prev (just before it) points at the head */
		struct robust_list_head *head = (struct robust_list_head *)(tcb + robust_offset);
		head->list.next = &head->list;
		head->futex_offset = robust_futex_offset;
		head->list_op_pending = NULL;
		*(void **)(tcb + robust_offset - 8) = head;
	}
	return 0;
}

/* The robust list head in u's own TCB (what glibc's robust mutexes use), or NULL when unknown. */
void *fx_uthread_own_robust(const struct fx_uthread *u)
{
	return robust_offset ? (void *)(u->tcb + robust_offset) : NULL;
}

static bool is_carrier_tid(uint32_t tid)
{
	for (unsigned i = 0; i < fx_ncarriers; i++)
		if (fx_carriers[i] && (uint32_t)fx_carriers[i]->tid == tid)
			return true;
	return false;
}

/* The kernel's handle_futex_death, for a lock word whose owner is "us": any carrier's id. */
static void robust_death(_Atomic uint32_t *word, bool pi, bool pending)
{
	uint32_t uval = atomic_load(word), mval;

	do {
		uint32_t owner = uval & FUTEX_TID_MASK;
		if (pending && !pi && !owner) {
			/* died between releasing the lock and waking a waiter */
			fx_raw_syscall6(SYS_futex, (long)word, FUTEX_WAKE, 1, 0, 0, 0);
			return;
		}
		if (!owner || !is_carrier_tid(owner))
			return;
		mval = (uval & FUTEX_WAITERS) | FUTEX_OWNER_DIED;
	} while (!atomic_compare_exchange_weak(word, &uval, mval));
	/* glibc's robust mutexes wait with shared futex operations, as the kernel wakes them */
	if (!pi && (uval & FUTEX_WAITERS))
		fx_raw_syscall6(SYS_futex, (long)word, FUTEX_WAKE, 1, 0, 0, 0);
}

/*
 * What the kernel does with the robust list of a thread that exits
 * (exit_robust_list): the robust mutexes the uthread still holds become
 * owner-dead (the next locker gets EOWNERDEAD) and one waiter of each is
 * woken. Only glibc's list in its own TCB is walked: a head the program
 * set itself may point at memory that is gone (the kernel reads it with
 * fault handling; a uthread cannot).
 */
void fx_uthread_robust_exit(struct fx_uthread *u)
{
	struct robust_list_head *head = u->robust;

	if (!head || head != fx_uthread_own_robust(u))
		return;
	uintptr_t pending = (uintptr_t)head->list_op_pending;
	uintptr_t e = (uintptr_t)head->list.next;
	struct robust_list *pend = (struct robust_list *)(pending & ~1ul);

	for (int limit = ROBUST_LIST_LIMIT; (e & ~1ul) != (uintptr_t)&head->list && limit > 0; limit--) {
		struct robust_list *entry = (struct robust_list *)(e & ~1ul);
		uintptr_t next = (uintptr_t)entry->next;
		if (entry != pend)
			robust_death((_Atomic uint32_t *)((char *)entry + head->futex_offset), e & 1, false);
		e = next;
	}
	if (pend)
		robust_death((_Atomic uint32_t *)((char *)pend + head->futex_offset), pending & 1, true);
	head->list.next = &head->list;
	head->list_op_pending = NULL;
}

/*
 * Mappings of exited and freed uthreads, kept as NPTL keeps its stack
 * cache: a handle of a thread already joined (or detached and gone) still
 * names readable memory whose struct says FX_UTHREAD_DEAD, so the pthread
 * functions answer ESRCH instead of faulting, and a later thread with the
 * same mapping size takes the mapping again. At most CACHE_MAX bytes (NPTL's
 * default, 40 MiB) are kept; the oldest are unmapped beyond that, and only
 * then does a stale handle name unmapped memory (as under NPTL).
 */
#define CACHE_MAX (40u << 20)
static _Atomic int cache_lock;
static struct fx_uthread *cache_head; /* newest first, linked by next */
static size_t cache_bytes;

/* A forked child has only the forking thread: a lock another one held is free. */
static void cache_after_fork(void)
{
	atomic_store(&cache_lock, 0);
}

static void cache_put(struct fx_uthread *u)
{
	struct fx_uthread *drop = NULL;

	u->magic = FX_UTHREAD_DEAD;
	fx_spin_lock(&cache_lock);
	u->next = cache_head;
	cache_head = u;
	cache_bytes += u->map_size;
	if (cache_bytes > CACHE_MAX) {
		/* cut the list where the newest ones fill the budget */
		size_t kept = 0;
		for (struct fx_uthread **pp = &cache_head; *pp; pp = &(*pp)->next) {
			kept += (*pp)->map_size;
			if (kept > CACHE_MAX) {
				drop = *pp;
				*pp = NULL;
				break;
			}
		}
		for (struct fx_uthread *d = drop; d; d = d->next)
			cache_bytes -= d->map_size;
	}
	fx_spin_unlock(&cache_lock);
	while (drop) {
		struct fx_uthread *n = drop->next;
		munmap(drop->map, drop->map_size);
		drop = n;
	}
}

/* A cached mapping of map_size bytes with the same guard, or NULL. */
static uint8_t *cache_take(size_t map_size, size_t guard, bool user_stack)
{
	uint8_t *map = NULL;

	if (!cache_head)
		return NULL;
	fx_spin_lock(&cache_lock);
	for (struct fx_uthread **pp = &cache_head; *pp; pp = &(*pp)->next) {
		struct fx_uthread *c = *pp;
		if (c->map_size == map_size && c->user_stack == user_stack &&
		    (user_stack || c->guard == guard)) {
			*pp = c->next;
			cache_bytes -= map_size;
			map = c->map;
			break;
		}
	}
	fx_spin_unlock(&cache_lock);
	return map;
}

/* Whether tcb is the handle of a uthread that exited and was freed (its mapping cached). */
bool fx_uthread_dead(uintptr_t tcb)
{
	if (!tcb || !tcb_size || (fx_main_uthread && tcb == fx_main_uthread->tcb))
		return false;
	uintptr_t tls_lo = align_down(tcb + tcb_size - tls_static_size, tls_static_align);
	struct fx_uthread *u = (struct fx_uthread *)align_down(tls_lo - sizeof(struct fx_uthread), 64);
	return u->magic == FX_UTHREAD_DEAD && u->tcb == tcb;
}

/*
 * Allocates a user thread: its mapping (guard, stack, struct, static TLS,
 * TCB from bottom to top), or, with a user stack, a mapping for the rest.
 */
struct fx_uthread *fx_uthread_create(size_t stack_size, size_t guard, void *user_stack,
				      void *(*start)(void *), void *arg, int *err)
{
	size_t tls_area = (tls_static_size + tls_static_align - 1) & ~(tls_static_align - 1);
	size_t top_area = tls_area + ((sizeof(struct fx_uthread) + 63) & ~(size_t)63) + 64;
	size_t map_size;
	uint8_t *map;

	guard = (guard + page - 1) & ~(page - 1);
	if (user_stack)
		map_size = (top_area + page - 1) & ~(page - 1);
	else
		map_size = guard + ((stack_size + top_area + page - 1) & ~(page - 1));
	uintptr_t tcb, tls_lo;
	struct fx_uthread *u;

	map = cache_take(map_size, guard, user_stack != NULL);
	if (map) {
		/* as fresh: the struct, static TLS and TCB zeroed (the stack is as it was left) */
		tcb = align_down((uintptr_t)map + map_size - tcb_size, tls_static_align);
		tls_lo = align_down(tcb + tcb_size - tls_static_size, tls_static_align);
		u = (struct fx_uthread *)align_down(tls_lo - sizeof(*u), 64);
		memset(u, 0, (size_t)((uintptr_t)map + map_size - (uintptr_t)u));
		goto build;
	}
	map = mmap(NULL, map_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (map == MAP_FAILED) {
		*err = EAGAIN;
		return NULL;
	}
	if (!user_stack && guard && mprotect(map, guard, PROT_NONE)) {
		munmap(map, map_size);
		*err = EAGAIN;
		return NULL;
	}
	tcb = align_down((uintptr_t)map + map_size - tcb_size, tls_static_align);
	tls_lo = align_down(tcb + tcb_size - tls_static_size, tls_static_align);
	u = (struct fx_uthread *)align_down(tls_lo - sizeof(*u), 64);
build:
	if (tcb_build(tcb)) {
		munmap(map, map_size);
		*err = ENOMEM;
		return NULL;
	}
	u->magic = FX_UTHREAD_MAGIC;
	u->tcb = tcb;
	u->map = map;
	u->map_size = map_size;
	u->guard = user_stack ? 0 : guard;
	u->user_stack = user_stack != NULL;
	if (user_stack) {
		u->stack_lo = user_stack;
		u->stack_size = stack_size;
	} else {
		u->stack_lo = map + guard;
		u->stack_size = align_down((uintptr_t)u, 16) - (uintptr_t)u->stack_lo;
	}
	u->start = start;
	u->arg = arg;
	u->robust = fx_uthread_own_robust(u);
	u->robust_len = sizeof(struct robust_list_head);
	fx_tcache_give(tcb); /* a malloc cache of an exited uthread, if one waits */
	return u;
}

/* The thread that is running now (the program's main thread) becomes a uthread. */
struct fx_uthread *fx_uthread_adopt_current(void)
{
	struct fx_uthread *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->magic = FX_UTHREAD_MAGIC;
	__asm__ volatile("rdfsbase %0" : "=r"(u->tcb));
	/* what glibc registered for this thread */
	if (fx_raw_syscall6(SYS_get_robust_list, 0, (long)&u->robust, (long)&u->robust_len, 0, 0, 0))
		u->robust = NULL;
	return u;
}

void fx_uthread_free(struct fx_uthread *u)
{
	free(u->affinity);
	if (!u->map) {
		free(u); /* adopted: its TCB and stack belong to NPTL */
		return;
	}
	fx_tcache_take(u->tcb); /* its malloc cache, for the next uthread (NPTL's exit would free it) */
	dl_deallocate_tls((void *)u->tcb, false);
	if (!u->user_stack) {
		/* its pages go back to the kernel; the mapping stays for the next thread */
		uintptr_t lo = (uintptr_t)u->map + u->guard, hi = align_down((uintptr_t)u, page);
		if (hi > lo)
			madvise((void *)lo, hi - lo, MADV_DONTNEED);
	}
	cache_put(u);
}

/* The uthread whose pthread_t (TCB address) is tcb; NULL for TCBs we did not make. */
struct fx_uthread *fx_uthread_of(uintptr_t tcb)
{
	if (fx_main_uthread && tcb == fx_main_uthread->tcb)
		return fx_main_uthread;
	if (!tcb || !tcb_size)
		return NULL;
	uintptr_t tls_lo = align_down(tcb + tcb_size - tls_static_size, tls_static_align);
	struct fx_uthread *u = (struct fx_uthread *)align_down(tls_lo - sizeof(struct fx_uthread), 64);
	/* a foreign TCB (a thread NPTL made) has its own stack below: readable, never our magic */
	return u->magic == FX_UTHREAD_MAGIC && u->tcb == tcb ? u : NULL;
}

/* A TCB and stack for a carrier's scheduler context. */
struct fx_uthread *fx_sched_context_create(void (*loop)(void *), void *arg)
{
	int err;
	struct fx_uthread *u = fx_uthread_create(256 << 10, page, NULL, NULL, NULL, &err);

	if (u)
		u->sp = fx_ctx_make((uint8_t *)u->stack_lo + u->stack_size, loop, arg);
	return u;
}
