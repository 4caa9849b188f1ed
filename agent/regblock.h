/* regblock.h - single registers of a gdb register block (see regblock.c). */
#ifndef PROBE_REGBLOCK_H
#define PROBE_REGBLOCK_H

#include <stdint.h>

#include "arch/arch.h"

/* Register `regnum` of `blk`, zero-extended; its low 8 bytes if wider. */
uint64_t regblock_get(const struct arch_ops *arch, const uint8_t *blk,
		      unsigned int regnum);
/* Stores the low arch->regs[regnum].bitsize bits of `value` (at most 64). */
void regblock_set(const struct arch_ops *arch, uint8_t *blk,
		  unsigned int regnum, uint64_t value);
/* The emulator's view: gpr[i] = regnum i below pc_regnum, pc, flags. */
void regblock_to_gpregs(const struct arch_ops *arch, const uint8_t *blk,
			struct arch_gpregs *g);
void regblock_from_gpregs(const struct arch_ops *arch, uint8_t *blk,
			  const struct arch_gpregs *g);

#endif
