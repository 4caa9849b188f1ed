/*
 * operand.h - pieces every arch's USDT operand parser needs
 * (arch_ops.sdt_operand_parse): numbers and symbols as assemblers write
 * them, and the error text.  Only arch/ files use it; the syntax of an
 * operand itself belongs to each arch (arch/<arch>/<arch>-sdt.c).
 */
#ifndef PROBE_ARCH_OPERAND_H
#define PROBE_ARCH_OPERAND_H

#include <stddef.h>
#include <stdint.h>

/*
 * A number as assemblers write it: optional sign, then decimal, 0x hex or
 * 0 octal.  Stores it in *v and returns the bytes used; 0 when `s` does
 * not start with a number or it does not fit in 64 bits.
 */
size_t arch_operand_number(const char *s, int64_t *v);

/* Bytes of the symbol name at `s` ([A-Za-z_.][A-Za-z0-9_.$]*), 0 if none. */
size_t arch_operand_symbol(const char *s);

/*
 * The Arm assemblers' pieces (arch/arm, arch/aarch64): a register's name
 * (lower-case letters and digits) is parsed at *p by `asm_reg`
 * (arch_ops.asm_reg) and *p moved past it, or "unknown register" is the
 * error; an immediate may start with '#' (returns the bytes used, 0 if
 * none); blanks are spaces.
 */
struct arch_asm_reg;
int arch_operand_arm_reg(const char **p,
			 int (*asm_reg)(const char *, size_t, struct arch_asm_reg *),
			 struct arch_asm_reg *r, char *err, size_t errsize);
size_t arch_operand_arm_imm(const char *s, int64_t *v);
void arch_operand_skip_blanks(const char **p);

/* Writes the message into `err` (snprintf-style, if errsize) and returns
 * -EINVAL, so a parser can `return arch_operand_fail(...)`. */
int arch_operand_fail(char *err, size_t errsize, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
