/*
 * ipa_copy for 32-bit ARM (see ipa.h), in A32: a byte loop whose one load
 * is the only instruction between the fault labels; r3 counts what was
 * copied.  The C of the image may be Thumb (the compiler's default):
 * its calls here interwork (bl becomes blx at the link).
 *
 * The agent, seeing SIGSEGV or SIGBUS with the PC in
 * [ipa_copy_fault_begin, ipa_copy_fault_end), sets the PC to
 * ipa_copy_fault_exit and drops the signal.  Should the agent die, the
 * keeper turns the load into `b ipa_copy_fault_exit` (arm-ptrace.c's
 * load_open).
 */
	.syntax	unified
	.arm
	.text
	.globl	ipa_copy
	.hidden	ipa_copy
	.type	ipa_copy, %function
	.globl	ipa_copy_fault_begin
	.globl	ipa_copy_fault_end
	.globl	ipa_copy_fault_exit
ipa_copy:
	mov	r3, #0
1:	cmp	r3, r2
	bhs	2f
ipa_copy_fault_begin:
	ldrb	r12, [r1, r3]
ipa_copy_fault_end:
	strb	r12, [r0, r3]
	add	r3, r3, #1
	b	1b
2:
ipa_copy_fault_exit:
	mov	r0, r3
	bx	lr
	.size	ipa_copy, . - ipa_copy

/*
 * libgcc's 64-bit division (__aeabi_ldivmod, linked in for the bytecode's
 * div and rem) calls these on a zero divisor; libgcc's own raise SIGFPE
 * through libc, which the image does not have.  The bytecode refuses a
 * zero divisor before it divides, so they only return.
 */
	.globl	__aeabi_ldiv0
	.hidden	__aeabi_ldiv0
	.type	__aeabi_ldiv0, %function
	.globl	__aeabi_idiv0
	.hidden	__aeabi_idiv0
	.type	__aeabi_idiv0, %function
__aeabi_ldiv0:
__aeabi_idiv0:
	bx	lr
	.size	__aeabi_ldiv0, . - __aeabi_ldiv0
	.section .note.GNU-stack, "", %progbits
