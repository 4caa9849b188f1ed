/*
 * aarch64-relocate.c - one A64 instruction at address A rewritten to run
 * at a slot S.
 *
 * Only the PC readers change; every other word is copied.  Offsets are
 * re-encoded when the target is within the form's reach from S, else
 * the value the instruction would compute at A (all known at decode
 * time) is built with MOVZ/MOVK in the register the instruction writes
 * anyway, so nothing else is touched:
 *
 *   at A                       at S
 *   b     T                    b     T
 *   bl    T                    movz/movk x30, #A+4 ; b T
 *   b.cc  T   (cbz, tbz ...)   b.cc  S+8 ; b A+4 ; b T
 *   blr   xn  (n != 30)        movz/movk x30, #A+4 ; br xn
 *   blraa xn, xm               movz/movk x30, #A+4 ; braa xn, xm
 *   br, ret, braa, retaa       (copied: they never come back)
 *   adr(p) xd, T               movz/movk xd, #T
 *   ldr   wt/xt, T             ldr wt/xt, T   (T within +-1 MiB of S)
 *                              movz/movk xt, #T ; ldr wt/xt, [xt]
 *   ldrsw xt, T                likewise with ldrsw xt, [xt]
 *   prfm  T                    prfm T, or nop (a prefetch is a hint)
 *   ldr   st/dt/qt, T          ldr st/dt/qt, T (within +-1 MiB), or
 *                              ldr st/dt/qt, [x16] single-stepped with
 *                              x16 = T loaded by the agent (a v register
 *                              cannot hold an address)
 *
 * The branch forms end in branches (`ends_in_branch`); for the others
 * the caller appends the B back to A+4, or single-steps the slot when
 * A+4 is out of the B's reach.  BLR x30 and BLRAA with x30 have no free
 * register for the target while x30 is set: -EINVAL, they are simulated
 * (or, for the pointer-authenticated call, rejected).
 */
#include "config.h"

#include <errno.h>

#include "arch/aarch64/aarch64.h"

#define SCRATCH 16	/* x16 (IP0): the register a step borrows */

/* The literal / conditional-branch offset fields, re-encoded. */
static uint32_t with_imm19(uint32_t w, int64_t bytes)
{
	return (w & ~(0x7ffffu << 5)) | ((uint32_t)(bytes >> 2) & 0x7ffff) << 5;
}

static uint32_t with_imm14(uint32_t w, int64_t bytes)
{
	return (w & ~(0x3fffu << 5)) | ((uint32_t)(bytes >> 2) & 0x3fff) << 5;
}

static int branch(struct aarch64_out *o, uint64_t to)
{
	if (!aarch64_in_b_reach(aarch64_here(o), to))
		return -ERANGE;
	aarch64_emit_b(o, to);
	return 0;
}

/* The conditional forms: the same test to S+8, else back, then the jump. */
static int relocate_cond(const struct aarch64_insn *in, struct aarch64_out *o)
{
	bool tb = in->op == AARCH64_OP_TBZ || in->op == AARCH64_OP_TBNZ;
	int err;

	aarch64_put32(o, tb ? with_imm14(in->word, 8) : with_imm19(in->word, 8));
	if ((err = branch(o, in->addr + 4)))
		return err;
	return branch(o, in->target);
}

/* A literal load out of its reach: Rt = address, then load through it. */
static void literal_via_rt(const struct aarch64_insn *in, struct aarch64_out *o)
{
	uint32_t ldr;

	if (in->sign)
		ldr = 0xb9800000u;	/* ldrsw xt, [xn] */
	else if (in->size == 8)
		ldr = 0xf9400000u;	/* ldr xt, [xn] */
	else
		ldr = 0xb9400000u;	/* ldr wt, [xn] */
	aarch64_emit_mov_imm(o, in->rd, in->target);
	aarch64_put32(o, ldr | (uint32_t)in->rd << 5 | in->rd);
}

int aarch64_relocate(const struct aarch64_insn *in, struct aarch64_out *o,
		     struct aarch64_step *step, bool *ends)
{
	uint64_t here = aarch64_here(o);
	uint32_t ldr;

	step->step = false;
	step->scratch = -1;
	step->scratch_value = 0;
	*ends = false;
	switch (in->op) {
	case AARCH64_OP_REJECT:
	case AARCH64_OP_LDX:
	case AARCH64_OP_STX:
		return -EINVAL;
	case AARCH64_OP_B:
		*ends = true;
		return branch(o, in->target);
	case AARCH64_OP_BL:
		*ends = true;
		aarch64_emit_mov_imm(o, AARCH64_LR, in->addr + 4);
		return branch(o, in->target);
	case AARCH64_OP_BCOND:
	case AARCH64_OP_CBZ:
	case AARCH64_OP_CBNZ:
	case AARCH64_OP_TBZ:
	case AARCH64_OP_TBNZ:
		*ends = true;
		return relocate_cond(in, o);
	case AARCH64_OP_BR:
	case AARCH64_OP_RET:
	case AARCH64_OP_BRA:
	case AARCH64_OP_RETA:
		*ends = true;
		aarch64_put32(o, in->word);
		return 0;
	case AARCH64_OP_BLR:
		if (in->rn == AARCH64_LR)
			return -EINVAL;
		*ends = true;
		aarch64_emit_mov_imm(o, AARCH64_LR, in->addr + 4);
		aarch64_put32(o, 0xd61f0000u | (uint32_t)in->rn << 5);	/* br xn */
		return 0;
	case AARCH64_OP_BLRA:
		if (in->rn == AARCH64_LR || (!in->zmod && in->rm == AARCH64_LR))
			return -EINVAL;
		*ends = true;
		aarch64_emit_mov_imm(o, AARCH64_LR, in->addr + 4);
		aarch64_put32(o, in->word & ~(1u << 21));	/* blraa -> braa */
		return 0;
	case AARCH64_OP_ADR:
	case AARCH64_OP_ADRP:
		if (in->rd == 31)
			aarch64_put32(o, AARCH64_NOP);	/* to xzr: no effect */
		else
			aarch64_emit_mov_imm(o, in->rd, in->target);
		return 0;
	case AARCH64_OP_LDR_LIT:
		if (aarch64_in_lit_reach(here, in->target))
			aarch64_put32(o, with_imm19(in->word, (int64_t)(in->target - here)));
		else if (in->rd == 31)
			aarch64_put32(o, AARCH64_NOP);	/* to xzr from the file */
		else
			literal_via_rt(in, o);
		return 0;
	case AARCH64_OP_PRFM_LIT:
		if (aarch64_in_lit_reach(here, in->target))
			aarch64_put32(o, with_imm19(in->word, (int64_t)(in->target - here)));
		else
			aarch64_put32(o, AARCH64_NOP);
		return 0;
	case AARCH64_OP_LDR_LIT_FP:
		if (aarch64_in_lit_reach(here, in->target)) {
			aarch64_put32(o, with_imm19(in->word, (int64_t)(in->target - here)));
			return 0;
		}
		switch (in->size) {
		case 4: ldr = 0xbd400000u; break;	/* ldr st, [xn] */
		case 8: ldr = 0xfd400000u; break;	/* ldr dt, [xn] */
		default: ldr = 0x3dc00000u; break;	/* ldr qt, [xn] */
		}
		aarch64_put32(o, ldr | SCRATCH << 5 | in->rd);
		step->step = true;
		step->scratch = SCRATCH;
		step->scratch_value = in->target;
		return 0;
	default:
		/* position independent, BTI included: the slot's page is not
		 * guarded, there it is a nop */
		aarch64_put32(o, in->word);
		return 0;
	}
}
