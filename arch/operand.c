/*
 * operand.c - the lexical pieces shared by the arches' USDT operand
 * parsers (operand.h).  Pure: no allocation, no I/O.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/operand.h"

size_t arch_operand_number(const char *s, int64_t *v)
{
	const char *p = s;
	bool neg = false;
	char *end;
	uint64_t u;

	if (*p == '-' || *p == '+') {
		neg = *p == '-';
		p++;
	}
	if (*p < '0' || *p > '9')
		return 0;
	errno = 0;
	u = strtoull(p, &end, 0);
	if (errno)
		return 0;
	*v = neg ? (int64_t)(0 - u) : (int64_t)u;
	return (size_t)(end - s);
}

static bool is_sym_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       c == '.';
}

static bool is_sym_char(char c)
{
	return is_sym_start(c) || (c >= '0' && c <= '9') || c == '$';
}

size_t arch_operand_symbol(const char *s)
{
	size_t n = 0;

	if (!is_sym_start(*s))
		return 0;
	while (is_sym_char(s[n]))
		n++;
	return n;
}

int arch_operand_fail(char *err, size_t errsize, const char *fmt, ...)
{
	va_list ap;

	if (errsize) {
		va_start(ap, fmt);
		vsnprintf(err, errsize, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static size_t arm_reg_len(const char *s)
{
	size_t n = 0;

	while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9'))
		n++;
	return n;
}

int arch_operand_arm_reg(const char **p,
			 int (*asm_reg)(const char *, size_t, struct arch_asm_reg *),
			 struct arch_asm_reg *r, char *err, size_t errsize)
{
	size_t n = arm_reg_len(*p);

	if (!n || asm_reg(*p, n, r))
		return arch_operand_fail(err, errsize, "unknown register %.*s",
					 (int)(n ? n : strcspn(*p, ",]")), *p);
	*p += n;
	return 0;
}

size_t arch_operand_arm_imm(const char *s, int64_t *v)
{
	size_t hash = *s == '#';
	size_t n = arch_operand_number(s + hash, v);

	return n ? n + hash : 0;
}

void arch_operand_skip_blanks(const char **p)
{
	while (**p == ' ')
		(*p)++;
}
