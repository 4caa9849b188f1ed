/*
 * aarch64-sdt.c - USDT probe operands in A64 assembler syntax
 * (arch_ops.sdt_operand_parse).
 *
 * gcc writes each argument of a <sys/sdt.h> probe as the operand the
 * value is in at the probe's nop ("nor" constraint), without the '#'
 * A64 puts before immediates, which is accepted all the same:
 *
 *	x0, w3, sp, fp, lr	a register (w: its low 32 bits)
 *	12, -1, #0x10		a constant
 *	[x1]			memory at a register
 *	[sp, 12], [x29, -8]	memory at a register plus an offset
 *	[x1, x2]		memory at a register plus a register
 *	[x1, x2, lsl 3]		... shifted left (scale 2, 4, 8)
 *
 * A64 has no absolute or pc-relative memory operand that gcc would
 * print here: a symbol is an error.  Base and index are 64-bit
 * registers (sp may be a base, never an index).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "arch/operand.h"
#include "arch/aarch64/aarch64.h"

static int reg(const char **p, struct arch_asm_reg *r, char *err, size_t errsize)
{
	return arch_operand_arm_reg(p, aarch64_arch_ops.asm_reg, r, err, errsize);
}


int aarch64_sdt_operand_parse(const char *s, struct arch_operand *op,
			      char *err, size_t errsize)
{
	const char *p = s;
	int64_t shift;
	size_t n;
	int ret;

	memset(op, 0, sizeof(*op));
	op->reg.regnum = op->index.regnum = -1;
	op->scale = 1;
	if ((n = arch_operand_arm_imm(p, &op->imm))) {
		op->kind = ARCH_OPERAND_IMM;
		p += n;
		goto end;
	}
	if (*p != '[') {
		op->kind = ARCH_OPERAND_REG;
		if ((ret = reg(&p, &op->reg, err, errsize)))
			return ret;
		goto end;
	}
	op->kind = ARCH_OPERAND_MEM;
	p++;
	if ((ret = reg(&p, &op->reg, err, errsize)))
		return ret;
	if (op->reg.size != 8)
		return arch_operand_fail(err, errsize, "base register in '%s' is "
					 "not a 64-bit register", s);
	if (*p == ',') {
		p++;
		arch_operand_skip_blanks(&p);
		if ((n = arch_operand_arm_imm(p, &op->disp))) {
			p += n;
		} else {
			if ((ret = reg(&p, &op->index, err, errsize)))
				return ret;
			if (op->index.regnum == AARCH64_SP)
				return arch_operand_fail(err, errsize, "sp cannot "
							 "be an index in '%s'", s);
			if (op->index.size != 8)
				return arch_operand_fail(err, errsize, "index "
							 "register in '%s' is not "
							 "a 64-bit register", s);
			if (*p == ',') {
				p++;
				arch_operand_skip_blanks(&p);
				if (strncmp(p, "lsl", 3) != 0)
					return arch_operand_fail(err, errsize,
						"expected 'lsl' at '%s'", p);
				p += 3;
				arch_operand_skip_blanks(&p);
				if (!(n = arch_operand_arm_imm(p, &shift)) || shift < 0 || shift > 3)
					return arch_operand_fail(err, errsize,
						"shift is not 0-3 in '%s'", s);
				op->scale = 1u << shift;
				p += n;
			}
		}
	}
	if (*p != ']')
		return arch_operand_fail(err, errsize, "expected ']' at '%s' in "
					 "'%s'", p, s);
	p++;
end:
	if (*p)
		return arch_operand_fail(err, errsize, "unexpected '%s' after the "
					 "operand", p);
	return 0;
}
