/*
 * ipa-blob.S - the in-process collector's image (agent/ipa/probe-ipa.so,
 * built by agent/local.am), as bytes of the agent: ipa-image.c places
 * it.  The assembler finds the file through -I.
 */
	.section .rodata
	.balign	16
	.globl	probe_ipa_image
	.globl	probe_ipa_image_end
probe_ipa_image:
	.incbin	"probe-ipa.so"
probe_ipa_image_end:
	.section .note.GNU-stack, "", %progbits
