# sdt-malformed.s - a stapsdt note whose descriptor ends before its
# strings do: `probe-trace list` must refuse the file, not read past the
# note (tests/client/list-sdt.sh).

	.text
	.globl main
	.type main, @function
main:
	xorl %eax, %eax
	ret
	.size main, . - main

	.section .note.stapsdt, "", "note"
	.balign 4
	.4byte 2f - 1f, 4f - 3f, 3
1:	.asciz "stapsdt"
2:	.balign 4
3:	.8byte main, 0, 0
	.ascii "prov"		# no NUL: the provider never ends
4:	.balign 4

	.section .note.GNU-stack, "", @progbits
