/*
 * aarch64-emit.c - the fixed A64 words probes are built from.
 *
 * B (+-128 MiB, the only direct jump), MOVZ/MOVK to build a constant in
 * a register, and an absolute jump.  A64 has no jump that reaches any
 * address without a register: the absolute form loads the target from
 * a literal into x16, as the linker's veneers do,
 *
 *   ldr x16, 8         58000050
 *   br  x16            d61f0200
 *   .quad to
 *
 * and so clobbers x16 (IP0).  The AAPCS64 lets a veneer clobber IP0 and
 * IP1 between a call and the callee's first instruction, so this is safe
 * where a call lands (a function's entry), not in the middle of code.
 * The agent reaches its XOL slots with B only (aarch64-relocate.c).
 */
#include "config.h"

#include <errno.h>

#include "arch/aarch64/aarch64.h"

bool aarch64_in_b_reach(uint64_t from, uint64_t to)
{
	int64_t d = (int64_t)(to - from);

	return !(d & 3) && d >= -(1ll << 27) && d < (1ll << 27);
}

bool aarch64_in_lit_reach(uint64_t from, uint64_t to)
{
	int64_t d = (int64_t)(to - from);

	return !(d & 3) && d >= -(1ll << 20) && d < (1ll << 20);
}

/* B / BL: op 00101 imm26 */
uint32_t aarch64_enc_b(uint64_t from, uint64_t to, bool link)
{
	return (link ? 0x94000000u : 0x14000000u) |
	       ((uint32_t)((to - from) >> 2) & 0x3ffffffu);
}

void aarch64_emit_b(struct aarch64_out *o, uint64_t to)
{
	aarch64_put32(o, aarch64_enc_b(aarch64_here(o), to, false));
}

/*
 * Xd = v in one to four words: MOVZ of the lowest non-zero halfword (or
 * of 0), then MOVK of each other non-zero one.
 *   movz xd, #imm16, lsl #16*hw    1 10 100101 hw imm16 Rd   d2800000
 *   movk xd, #imm16, lsl #16*hw    1 11 100101 hw imm16 Rd   f2800000
 */
void aarch64_emit_mov_imm(struct aarch64_out *o, unsigned int rd, uint64_t v)
{
	bool first = true;

	if (v == 0) {
		aarch64_put32(o, 0xd2800000u | (rd & 31));
		return;
	}
	for (unsigned int hw = 0; hw < 4; hw++) {
		uint32_t imm = (uint32_t)(v >> (16 * hw)) & 0xffff;

		if (!imm)
			continue;
		aarch64_put32(o, (first ? 0xd2800000u : 0xf2800000u) |
				 hw << 21 | imm << 5 | (rd & 31));
		first = false;
	}
}

/*
 * xd = xn + imm, through xtmp when imm does not fit 12 bits:
 *   add xd, xn, #imm12             1 00 100010 0 imm12 Rn Rd    91000000
 *   add xd, xn, xtmp               1 00 01011 000 Rm 000000 Rn Rd  8b000000
 */
void aarch64_emit_add_imm(struct aarch64_out *o, unsigned int d, unsigned int n,
			  uint64_t imm, unsigned int tmp)
{
	if (imm < 4096) {
		aarch64_put32(o, 0x91000000u | (uint32_t)imm << 10 | n << 5 | d);
	} else {
		aarch64_emit_mov_imm(o, tmp, imm);
		aarch64_put32(o, 0x8b000000u | tmp << 16 | n << 5 | d);
	}
}

static int finish(const struct aarch64_out *o)
{
	return o->overflow ? -ENOSPC : (int)o->len;
}

int aarch64_emit_jump(uint8_t *out, size_t size, uint64_t from, uint64_t to)
{
	struct aarch64_out o = { out, size, 0, from, false };

	if (!aarch64_in_b_reach(from, to))
		return -ERANGE;
	aarch64_emit_b(&o, to);
	return finish(&o);
}

int aarch64_emit_jump_abs(uint8_t *out, size_t size, uint64_t to)
{
	struct aarch64_out o = { out, size, 0, 0, false };

	aarch64_put32(&o, 0x58000050u);		/* ldr x16, 8 */
	aarch64_put32(&o, 0xd61f0200u);		/* br x16 */
	aarch64_put32(&o, (uint32_t)to);
	aarch64_put32(&o, (uint32_t)(to >> 32));
	return finish(&o);
}
