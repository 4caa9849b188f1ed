/*
 * ipa_copy for x86-64 (see ipa.h): rep movsb, whose one faulting
 * instruction leaves the count still to copy in %rcx.
 *
 * The agent, seeing SIGSEGV or SIGBUS with the PC in
 * [ipa_copy_fault_begin, ipa_copy_fault_end), sets the PC to
 * ipa_copy_fault_exit and drops the signal; the registers are as the
 * fault left them.
 */
	.text
	.globl	ipa_copy
	.hidden	ipa_copy
	.type	ipa_copy, %function
	.globl	ipa_copy_fault_begin
	.globl	ipa_copy_fault_end
	.globl	ipa_copy_fault_exit
/*
 * ipa_copy_native: the same routine, exported for the jump pads, which
 * call it themselves where they do the collector's work
 * (arch_pad_ring.copy_fn).  It clobbers rax, rcx, rdi and rsi only, and
 * wants DF clear.
 */
	.globl	ipa_copy_native
	.type	ipa_copy_native, %function
ipa_copy:
ipa_copy_native:
	movq	%rdx, %rcx
	movq	%rdx, %rax
ipa_copy_fault_begin:
	rep movsb
ipa_copy_fault_end:
	ret
ipa_copy_fault_exit:
	subq	%rcx, %rax		/* asked - left */
	ret
	.size	ipa_copy, . - ipa_copy
	.size	ipa_copy_native, . - ipa_copy_native
	.section .note.GNU-stack, "", %progbits
