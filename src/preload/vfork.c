/* SPDX-License-Identifier: MIT */
/*
 * vfork and clone: children that share the calling thread's registers.
 *
 * A child of vfork (or of clone with or without CLONE_VM) starts with the
 * parent thread's FS and GS bases: the uthread's TCB, and the carrier.
 * Left so, it took itself for the carrier, posted its calls to the
 * parent's syscall pages (shared memory with CLONE_VM, and the io_uring
 * rings are shared mappings even without it) and spun waiting for them,
 * while the carrier, suspended by the kernel until the child execs or
 * exits, ran nothing. So:
 *   - a child clears its GS base first thing: no carrier, so everything
 *     interposed runs as direct system calls and it never touches the
 *     runtime (the TCB is the parent thread's, as under NPTL: errno too);
 *   - a vfork (or clone with CLONE_VFORK) of a uthread runs on a kernel
 *     thread of its own (fx_kthread_enter, src/threads/sched.c), which the
 *     kernel suspends instead of the carrier: the program's other threads
 *     keep running, as on NPTL, where vfork stops only the calling thread.
 *     That kernel thread blocks every signal; the child takes the
 *     uthread's mask (what it would have had from the carrier).
 *
 * vfork itself is assembly: the child returns on the parent's stack and
 * may overwrite what lies below the caller's frame, so the return address
 * is kept in a register across the system call (as glibc does), and the
 * child calls nothing that returns into this frame's callers.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/real.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* pid_t vfork(void): what the stub below defines (declared for the export list) */
FX_EXPORT pid_t vfork(void);

void *fx_vfork_enter(void);
void fx_vfork_child(void *h);
long fx_vfork_parent(long ret, void *h);

/* In the parent, before the call: the kernel thread it runs on (NULL: where it is). */
void *fx_vfork_enter(void)
{
	return fx_rt_active ? fx_kthread_enter() : NULL;
}

/* First thing in a child: no carrier, and the signal mask of the uthread that made it. */
void fx_vfork_child(void *h)
{
	const uint64_t *mask = fx_kthread_mask(h);

	if (fx_rt_active)
		__asm__ volatile("wrgsbase %0" : : "r"(0ul));
	if (mask)
		fx_raw_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)mask, 0, 8, 0, 0);
}

/* In the parent, once the child has exec'ed or exited: back to a carrier; libc's result. */
long fx_vfork_parent(long ret, void *h)
{
	fx_kthread_leave(h);
	return fx_libc_ret(ret);
}

__asm__(
	"	.text\n"
	"	.globl	vfork\n"
	"	.type	vfork, @function\n"
	"vfork:\n"
	"	.cfi_startproc\n"
	"	subq	$8, %rsp\n"            /* 16-byte aligned for the call */
	"	.cfi_adjust_cfa_offset 8\n"
	"	call	fx_vfork_enter\n"      /* returns on the kernel thread that makes the call */
	"	addq	$8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	movq	%rax, %rsi\n"          /* caller-saved, and the kernel keeps it */
	"	popq	%rdi\n"                /* the return address: the child may write over its slot */
	"	.cfi_adjust_cfa_offset -8\n"
	"	.cfi_register rip, rdi\n"
	"	movl	$" STR(SYS_vfork) ", %eax\n"
	"	syscall\n"
	"	pushq	%rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	.cfi_rel_offset rip, 0\n"
	"	testq	%rax, %rax\n"
	"	jz	1f\n"
	"	movq	%rax, %rdi\n"          /* the parent: pid or -errno, and the kernel thread */
	"	subq	$8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call	fx_vfork_parent\n"
	"	addq	$8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	"1:	movq	%rsi, %rdi\n"          /* the child */
	"	subq	$8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call	fx_vfork_child\n"
	"	addq	$8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	xorl	%eax, %eax\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size	vfork, .-vfork\n");

/* ---- clone ---- */

/* At the top of the child's stack: what the child runs, and the kernel thread of the parent. */
struct clone_start {
	int (*fn)(void *);
	void *arg;
	void *h;
};

static int clone_child(void *p)
{
	struct clone_start *s = p;

	fx_vfork_child(s->h);
	return s->fn(s->arg);
}

FX_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	va_list ap;

	va_start(ap, arg);
	/* read whatever the flags say, passed on as glibc's clone reads them */
	pid_t *ptid = va_arg(ap, pid_t *);
	void *tls = va_arg(ap, void *);
	pid_t *ctid = va_arg(ap, pid_t *);
	va_end(ap);
	if (!fx_rt_active || !fn || !stack)
		return REAL(clone)(fn, stack, flags, arg, ptid, tls, ctid);
	struct clone_start *s = (struct clone_start *)(((uintptr_t)stack - sizeof(*s)) & ~(uintptr_t)15);
	s->fn = fn;
	s->arg = arg;
	s->h = flags & CLONE_VFORK ? fx_kthread_enter() : NULL;
	void *h = s->h; /* s may be gone (the child's stack) once the call returns */
	int r = REAL(clone)(clone_child, s, flags, s, ptid, tls, ctid);
	int err = errno;
	fx_kthread_leave(h);
	errno = err;
	return r;
}
