/* SPDX-License-Identifier: MIT */
/*
 * long fx_raw_syscall6(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
 *
 * The system call instruction itself, with the kernel's result returned as
 * is (>= 0, or -errno): no errno, no cancellation point, no libc wrapper
 * logic. Every engine executes entries through this one function.
 *
 * C ABI in:  rdi=nr rsi=a0 rdx=a1 rcx=a2 r8=a3 r9=a4 8(%rsp)=a5
 * kernel in: rax=nr rdi=a0 rsi=a1 rdx=a2 r10=a3 r8=a4 r9=a5
 * syscall clobbers rcx and r11; both are caller-saved in the C ABI.
 */
	.text
	.globl	fx_raw_syscall6
	.hidden	fx_raw_syscall6
	.type	fx_raw_syscall6, @function
fx_raw_syscall6:
	.cfi_startproc
	movq	%rdi, %rax	/* nr */
	movq	%rsi, %rdi	/* a0 */
	movq	%rdx, %rsi	/* a1 */
	movq	%rcx, %rdx	/* a2 */
	movq	%r8, %r10	/* a3 */
	movq	%r9, %r8	/* a4 */
	movq	8(%rsp), %r9	/* a5 */
	syscall
	ret
	.cfi_endproc
	.size	fx_raw_syscall6, .-fx_raw_syscall6
	.section .note.GNU-stack,"",@progbits
