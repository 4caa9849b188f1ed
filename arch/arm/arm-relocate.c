/*
 * arm-relocate.c - the XOL slot contents for one A32 or Thumb instruction
 * at address A, run at a slot S.
 *
 * Only position-independent instructions are copied as they are; the
 * ones that read the pc in a way not simulated get the pc renamed to a
 * scratch register the agent loads (the kprobes "emulate" idea, with the
 * register borrowed by the agent around a second stop since a slot
 * shared by threads has no private place to save it):
 *
 *   boost (any position-independent instruction)
 *     A32:    S:   insn                    a conditional one keeps its
 *                  b     A+4               condition: the cpu skips it
 *     Thumb:  S:   insn                    (16 or 32 bits)
 *                  b.w   A+len             bit 0 kept: back in Thumb
 *     beyond reach: ldr pc, =A+4 / ldr.w pc, =(A+len)|1 (arm-emit.c)
 *
 *   emulate (ARCH_STEP, reads the pc)
 *     at A:   vldr  d0, [pc, #8]       S:   vldr  d0, [r0, #8]
 *             str   pc, [sp, #-4]!          str   r0, [sp, #-4]!
 *             ldr   r1, [pc, r2]            ldr   r1, [r0, r2]
 *             str   pc, [pc, #4]            str   r0, [r0, #4]  (every pc)
 *                                           udf   (the arch's breakpoint)
 *     with r0 (the lowest register the instruction does not name) = the
 *     pc's value (A+8 in A32; Align(A+4, 4) in Thumb, which VLDR
 *     aligns); the agent saves and restores it, xol_fixup moves the pc
 *     from S+len to A+len.
 *
 * A boosted instruction inside a Thumb IT block would run its branch
 * back under the block's condition: the classifier rejects those
 * (arm-ops.c), nothing here can tell.
 */
#include "config.h"

#include <errno.h>

#include "arch/arm/arm.h"

static bool thumb(const struct arm_insn *in)
{
	return in->isa != ARM_ISA_A32;
}

static void put_insn(struct arm_out *o, const struct arm_insn *in, uint32_t w)
{
	if (in->isa == ARM_ISA_A32)
		arm_put32(o, w);
	else if (in->isa == ARM_ISA_T16)
		arm_put16(o, (uint16_t)w);
	else
		arm_put_t32(o, w);
}

/* The lowest of r0-r12 that no 4-bit register field of the word names. */
static int free_register(uint32_t w)
{
	unsigned int used = 0;

	for (unsigned int s = 0; s <= 16; s += 4)
		used |= 1u << ((w >> s) & 15);
	for (int r = 0; r <= 12; r++)
		if (!(used & (1u << r)))
			return r;
	return -1;
}

int arm_relocate(const struct arm_insn *in, struct arm_out *o,
		 struct arm_slot *slot)
{
	uint32_t w = in->word;
	int s;

	slot->step = false;
	slot->scratch = -1;
	slot->scratch_value = 0;
	switch (in->op) {
	case ARM_OP_OTHER:
		put_insn(o, in, w);
		slot->insn_len = o->len;
		return 0;
	case ARM_OP_PC_SCRATCH:
		if ((s = free_register(w)) < 0)
			return -EINVAL;
		for (unsigned int f = 0; f < 32; f += 4)
			if (in->scratch_fields & (1u << f))
				w = (w & ~(15u << f)) | (uint32_t)s << f;
		put_insn(o, in, w);
		slot->insn_len = o->len;
		slot->step = true;
		slot->scratch = s;
		slot->scratch_value = thumb(in) ? arm_pc_value(in) & ~3u :
						  arm_pc_value(in);
		return 0;
	default:
		/* simulated (they read or write the pc: no slot), rejected */
		return -EINVAL;
	}
}
