/*
 * regblock.c - one register of a gdb register block, by the arch's table.
 *
 * A register block is the `g` packet's bytes: every register at
 * arch->regs[n].offset, arch->regs[n].bitsize wide, in the target's byte
 * order.  The agent reads and writes single registers of it (pc, sp, a
 * system call's arguments) and hands the general ones to the emulator as
 * a struct arch_gpregs; neither needs to know the arch, only its table:
 * x86-64 has 8-byte general registers and a 4-byte eflags, arm 4-byte
 * ones throughout.
 *
 * Every target the agent runs on is little-endian, as is the host it
 * runs on (it is the same machine): a register's value is its low
 * bytes, copied as they are.  No system calls here; tests/unit drives it
 * with every arch's table.
 */
#include "config.h"

#include <string.h>

#include "agent/regblock.h"

/* Registers wider than 64 bits (vectors, x87) are not values here. */
static unsigned int width(const struct arch_ops *arch, unsigned int regnum)
{
	unsigned int bytes = arch->regs[regnum].bitsize / 8;

	return bytes > 8 ? 8 : bytes;
}

uint64_t regblock_get(const struct arch_ops *arch, const uint8_t *blk,
		      unsigned int regnum)
{
	uint64_t v = 0;

	/* The common widths as fixed-size copies: a probe hit reads a few
	 * dozen registers this way. */
	switch (width(arch, regnum)) {
	case sizeof(uint64_t):
		memcpy(&v, blk + arch->regs[regnum].offset, sizeof(v));
		break;
	case sizeof(uint32_t): {
		uint32_t w;
		memcpy(&w, blk + arch->regs[regnum].offset, sizeof(w));
		v = w;
		break;
	}
	default:
		memcpy(&v, blk + arch->regs[regnum].offset, width(arch, regnum));
		break;
	}
	return v;
}

void regblock_set(const struct arch_ops *arch, uint8_t *blk,
		  unsigned int regnum, uint64_t value)
{
	switch (width(arch, regnum)) {
	case sizeof(uint64_t):
		memcpy(blk + arch->regs[regnum].offset, &value, sizeof(value));
		break;
	case sizeof(uint32_t): {
		uint32_t w = (uint32_t)value;
		memcpy(blk + arch->regs[regnum].offset, &w, sizeof(w));
		break;
	}
	default:
		memcpy(blk + arch->regs[regnum].offset, &value, width(arch, regnum));
		break;
	}
}

void regblock_to_gpregs(const struct arch_ops *arch, const uint8_t *blk,
			struct arch_gpregs *g)
{
	memset(g, 0, sizeof(*g));
	for (int i = 0; i < arch->pc_regnum; i++)
		g->gpr[i] = regblock_get(arch, blk, i);
	g->pc = regblock_get(arch, blk, arch->pc_regnum);
	g->flags = regblock_get(arch, blk, arch->flags_regnum);
}

void regblock_from_gpregs(const struct arch_ops *arch, uint8_t *blk,
			  const struct arch_gpregs *g)
{
	for (int i = 0; i < arch->pc_regnum; i++)
		regblock_set(arch, blk, i, g->gpr[i]);
	regblock_set(arch, blk, arch->pc_regnum, g->pc);
	regblock_set(arch, blk, arch->flags_regnum, g->flags);
}
