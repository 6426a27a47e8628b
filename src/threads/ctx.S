/* SPDX-License-Identifier: MIT */
/*
 * The user-level context switch of FlexSC-Threads.
 *
 * void fx_ctx_switch(void **save_sp, void *load_sp, uint64_t load_fsbase)
 *   Saves the callee-saved registers, the SSE control/status word and the
 *   x87 control word on the current stack, stores the stack pointer in
 *   *save_sp, switches to load_sp, installs load_fsbase as the thread
 *   pointer (the incoming user thread's own glibc TCB, so its errno, its
 *   __thread variables, its stack canary and glibc's view of "self" come
 *   with it), restores and returns into the other context.
 *   rdi = save_sp, rsi = load_sp, rdx = load_fsbase.
 *
 * A new context's stack is laid out by fx_ctx_make (src/threads/uthread.c)
 * exactly as fx_ctx_switch leaves a saved one, with fx_ctx_boot as the
 * return address and the entry argument in the saved r12.
 *
 * Caller-saved registers need no saving: fx_ctx_switch is an ordinary call
 * to the compiler. wrfsbase needs FSGSBASE (Linux 5.9+), checked at start.
 */
	.text
	.globl	fx_ctx_switch
	.hidden	fx_ctx_switch
	.type	fx_ctx_switch, @function
fx_ctx_switch:
	.cfi_startproc
	pushq	%rbp
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	subq	$8, %rsp
	stmxcsr	(%rsp)		/* SSE rounding mode and exception masks */
	fnstcw	4(%rsp)		/* x87 precision and rounding */
	movq	%rsp, (%rdi)	/* the outgoing context is saved */
	movq	%rsi, %rsp	/* from here on we are on the incoming stack */
	wrfsbase %rdx		/* and in the incoming thread's TLS */
	ldmxcsr	(%rsp)
	fldcw	4(%rsp)
	addq	$8, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
	ret
	.cfi_endproc
	.size	fx_ctx_switch, .-fx_ctx_switch

/*
 * First instructions of a new context: fx_ctx_switch "returns" here with
 * the entry function in r13 and its argument in r12, on a 16-byte aligned
 * stack. The entry function never returns.
 */
	.globl	fx_ctx_boot
	.hidden	fx_ctx_boot
	.type	fx_ctx_boot, @function
fx_ctx_boot:
	.cfi_startproc
	.cfi_undefined rip	/* the outermost frame: debuggers stop here */
	xorl	%ebp, %ebp
	movq	%r12, %rdi
	call	*%r13
	ud2
	.cfi_endproc
	.size	fx_ctx_boot, .-fx_ctx_boot
	.section .note.GNU-stack,"",@progbits
