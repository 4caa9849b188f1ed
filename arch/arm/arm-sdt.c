/*
 * arm-sdt.c - USDT probe operands in A32 / Thumb assembler syntax
 * (arch_ops.sdt_operand_parse).
 *
 * gcc writes each argument of a <sys/sdt.h> probe as the operand the
 * value is in at the probe's nop ("nor" constraint):
 *
 *	r0, r7, sp, fp, ip, lr	a register
 *	#12, #-1, 12		a constant ('#' as gas prints it, or not)
 *	[r1]			memory at a register
 *	[r1, #8], [fp, #-12]	memory at a register plus an offset
 *	[r1, r2]		memory at a register plus a register
 *
 * An A32 or Thumb memory operand has no absolute or symbolic form gcc
 * would print here: a symbol is an error.  The pc is refused as a base
 * (its value depends on where the operand's instruction is, which a
 * probe's note does not say).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "arch/operand.h"
#include "arch/arm/arm.h"

static int reg(const char **p, struct arch_asm_reg *r, char *err, size_t errsize)
{
	return arch_operand_arm_reg(p, arm_asm_reg, r, err, errsize);
}


int arm_sdt_operand_parse(const char *s, struct arch_operand *op,
			  char *err, size_t errsize)
{
	const char *p = s;
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
	if (*p == '#')
		return arch_operand_fail(err, errsize, "bad constant '%s'", s);
	if (*p != '[') {
		op->kind = ARCH_OPERAND_REG;
		if ((ret = reg(&p, &op->reg, err, errsize)))
			return ret;
		goto end;
	}
	op->kind = ARCH_OPERAND_MEM;
	p++;
	arch_operand_skip_blanks(&p);
	if ((ret = reg(&p, &op->reg, err, errsize)))
		return ret;
	if (op->reg.regnum == ARM_PC)
		return arch_operand_fail(err, errsize, "pc as a base in '%s': its "
					 "value depends on the instruction", s);
	arch_operand_skip_blanks(&p);
	if (*p == ',') {
		p++;
		arch_operand_skip_blanks(&p);
		if ((n = arch_operand_arm_imm(p, &op->disp))) {
			p += n;
		} else if (*p == '#') {
			return arch_operand_fail(err, errsize, "bad offset in '%s'", s);
		} else {
			if ((ret = reg(&p, &op->index, err, errsize)))
				return ret;
			if (op->index.regnum == ARM_PC)
				return arch_operand_fail(err, errsize, "pc cannot "
							 "be an index in '%s'", s);
		}
		arch_operand_skip_blanks(&p);
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
