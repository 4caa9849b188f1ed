# sdt-bad.s - USDT notes written by hand, as no compiler would: arguments
# probe-trace cannot parse or resolve, beside a good probe, for the error
# rows of `probe-trace list` (tests/client/list-sdt.sh).  The layout is the
# one <sys/sdt.h> emits: namesz, descsz, type 3, "stapsdt", then pc,
# .stapsdt.base and semaphore as 8-byte words and three strings.

	.macro sdt_note pc, provider, name, args
	.pushsection .note.stapsdt, "", "note"
	.balign 4
	.4byte 2f - 1f, 4f - 3f, 3
1:	.asciz "stapsdt"
2:	.balign 4
3:	.8byte \pc, _.stapsdt.base, 0
	.asciz "\provider"
	.asciz "\name"
	.asciz "\args"
4:	.balign 4
	.popsection
	.endm

	.text
	.globl main
	.type main, @function
main:
good:	nop
xmm:	nop
nosym:	nop
	xorl %eax, %eax
	ret
	.size main, . - main

	sdt_note good, bad, good, "-4@%edi 8@%rsi"
	sdt_note xmm, bad, xmm, "-4@%edi 8@%xmm0"
	sdt_note nosym, bad, nosym, "-4@no_such_symbol(%rip)"

	.section .stapsdt.base, "aG", @progbits, .stapsdt.base, comdat
	.weak _.stapsdt.base
	.hidden _.stapsdt.base
_.stapsdt.base:
	.space 1

	.section .note.GNU-stack, "", @progbits
