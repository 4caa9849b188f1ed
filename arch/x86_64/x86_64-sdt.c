/*
 * x86_64-sdt.c - USDT probe operands in AT&T syntax
 * (arch_ops.sdt_operand_parse).
 *
 * gcc writes each argument of a <sys/sdt.h> probe as the operand the
 * value is in at the probe's nop, with the "nor" constraint:
 *
 *	%reg			a register or a part of one (%eax, %r9w, %ah)
 *	$imm			a constant
 *	disp(%base)		memory; disp is optional, a number or
 *	disp(%base,%index,s)	sym[+-number]; s is 1, 2, 4 or 8; base is
 *	(,%index,s)		optional when an index is given
 *	sym+off(%rip)		memory at a symbol of the file
 *	number, sym		memory at an absolute address
 *
 * The note's text is never assembled, so `sym(%rip)` cannot mean "from
 * the end of an instruction": it names the memory at `sym` (+ offset),
 * a STATIC operand whose address the caller finds in the file's symbol
 * table; a bare number before `(%rip)` is taken as that link-time
 * address itself.  %rsp and %rip are never an index (no SIB encodes
 * them), and an address register is 64 or 32 bits wide.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "arch/operand.h"
#include "arch/x86_64/x86_64.h"

static int reg(const char **p, struct arch_asm_reg *r, char *err,
	       size_t errsize)
{
	const char *s = *p + 1, *e = s;

	if (**p != '%')
		return arch_operand_fail(err, errsize, "expected a register at "
					 "'%s'", *p);
	while ((*e >= 'a' && *e <= 'z') || (*e >= '0' && *e <= '9'))
		e++;
	if (e == s || x86_64_arch_ops.asm_reg(s, (size_t)(e - s), r))
		return arch_operand_fail(err, errsize, "unknown register %%%.*s",
					 (int)(strcspn(s, ",)")), s);
	*p = e;
	return 0;
}

static int addr_reg(const char **p, struct arch_asm_reg *r, const char *what,
		    char *err, size_t errsize)
{
	const char *at = *p;
	int ret = reg(p, r, err, errsize);

	if (ret)
		return ret;
	if (r->size != 8 && r->size != 4)
		return arch_operand_fail(err, errsize, "%s register %.*s is not "
					 "64 or 32 bits wide", what,
					 (int)(*p - at), at);
	return 0;
}

/* [sym][+-number] | number, at *p inside `text`. */
static int disp(const char *text, const char **p, struct arch_operand *op,
		char *err, size_t errsize)
{
	const char *s = *p;
	size_t n = arch_operand_symbol(s);

	if (n) {
		op->sym_off = (size_t)(s - text);
		op->sym_len = n;
		s += n;
		if (*s != '+' && *s != '-') {
			*p = s;
			return 0;
		}
		if (!(n = arch_operand_number(s, &op->disp)))
			return arch_operand_fail(err, errsize, "expected a number "
						 "after '%c' at '%s'", *s, s);
		*p = s + n;
		return 0;
	}
	if ((n = arch_operand_number(s, &op->disp)))
		*p = s + n;
	return 0;
}

int x86_64_sdt_operand_parse(const char *s, struct arch_operand *op,
			     char *err, size_t errsize)
{
	const int pc = x86_64_arch_ops.pc_regnum, sp = x86_64_arch_ops.sp_regnum;
	const char *p = s;
	int64_t scale;
	size_t n;
	int ret;

	memset(op, 0, sizeof(*op));
	op->reg.regnum = op->index.regnum = -1;
	op->scale = 1;
	if (*p == '%') {
		op->kind = ARCH_OPERAND_REG;
		if ((ret = reg(&p, &op->reg, err, errsize)))
			return ret;
		goto end;
	}
	if (*p == '$') {
		op->kind = ARCH_OPERAND_IMM;
		if (!(n = arch_operand_number(p + 1, &op->imm)))
			return arch_operand_fail(err, errsize, "bad constant '%s'",
						 s);
		p += 1 + n;
		goto end;
	}

	if ((ret = disp(s, &p, op, err, errsize)))
		return ret;
	if (*p != '(') {
		if (p == s)
			return arch_operand_fail(err, errsize, "not an operand: "
						 "'%s'", s);
		op->kind = ARCH_OPERAND_STATIC;	/* absolute: sym or number */
		goto end;
	}
	p++;
	if (*p == '%' && (ret = addr_reg(&p, &op->reg, "base", err, errsize)))
		return ret;
	if (op->reg.regnum == pc) {
		/* sym(%rip): the note is never assembled, see above */
		if (*p != ')')
			return arch_operand_fail(err, errsize, "%%rip takes no "
						 "index in '%s'", s);
		op->kind = ARCH_OPERAND_STATIC;
		op->reg.regnum = -1;
		p++;
		goto end;
	}
	op->kind = ARCH_OPERAND_MEM;
	if (*p == ',') {
		p++;
		if ((ret = addr_reg(&p, &op->index, "index", err, errsize)))
			return ret;
		if (op->index.regnum == sp || op->index.regnum == pc)
			return arch_operand_fail(err, errsize, "%%rsp and %%rip "
						 "cannot be an index in '%s'", s);
		if (*p == ',') {
			p++;
			if (!(n = arch_operand_number(p, &scale)) ||
			    (scale != 1 && scale != 2 && scale != 4 &&
			     scale != 8))
				return arch_operand_fail(err, errsize, "scale is "
							 "not 1, 2, 4 or 8 in "
							 "'%s'", s);
			op->scale = (unsigned int)scale;
			p += n;
		}
	}
	if (op->reg.regnum < 0 && op->index.regnum < 0)
		return arch_operand_fail(err, errsize, "no base or index "
					 "register in '%s'", s);
	if (*p != ')')
		return arch_operand_fail(err, errsize, "expected ')' at '%s' in "
					 "'%s'", p, s);
	p++;
end:
	if (*p)
		return arch_operand_fail(err, errsize, "unexpected '%s' after the "
					 "operand", p);
	return 0;
}
