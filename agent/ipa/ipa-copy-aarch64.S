/*
 * ipa_copy for aarch64 (see ipa.h): a byte loop whose one load is the
 * only instruction between the fault labels; x3 counts what was copied.
 *
 * The agent, seeing SIGSEGV or SIGBUS with the PC in
 * [ipa_copy_fault_begin, ipa_copy_fault_end), sets the PC to
 * ipa_copy_fault_exit and drops the signal.
 */
	.text
	.globl	ipa_copy
	.hidden	ipa_copy
	.type	ipa_copy, %function
	.globl	ipa_copy_fault_begin
	.globl	ipa_copy_fault_end
	.globl	ipa_copy_fault_exit
ipa_copy:
	mov	x3, #0
1:	cmp	x3, x2
	b.hs	2f
ipa_copy_fault_begin:
	ldrb	w4, [x1, x3]
ipa_copy_fault_end:
	strb	w4, [x0, x3]
	add	x3, x3, #1
	b	1b
2:
ipa_copy_fault_exit:
	mov	x0, x3
	ret
	.size	ipa_copy, . - ipa_copy
	.section .note.GNU-stack, "", %progbits
