/*
 * target.c - the register file from target.xml, and the ABI registers
 * of the target's arch found in it (target.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client/target.h"

/* Value of attribute `name` inside the element [el, end), malloc'd. */
static char *attr(const char *el, const char *end, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = el; p + n + 2 < end; p++) {
		if ((p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\n') &&
		    memcmp(p, name, n) == 0 && p[n] == '=' &&
		    (p[n + 1] == '"' || p[n + 1] == '\'')) {
			const char *v = p + n + 2;
			const char *q = memchr(v, p[n + 1], (size_t)(end - v));
			if (!q)
				return NULL;
			return strndup(v, (size_t)(q - v));
		}
	}
	return NULL;
}

int target_regs_parse(struct target_regs *t, const char *xml)
{
	const char *p = xml;
	size_t cap = 0, next = 0;

	memset(t, 0, sizeof(*t));
	const char *a = strstr(xml, "<architecture>");
	if (a) {
		a += strlen("<architecture>");
		const char *b = strstr(a, "</architecture>");
		if (b)
			t->arch = strndup(a, (size_t)(b - a));
	}
	while ((p = strstr(p, "<reg "))) {
		const char *end = strchr(p, '>');
		if (!end)
			break;
		char *name = attr(p + 4, end, "name");
		char *bits = attr(p + 4, end, "bitsize");
		char *num = attr(p + 4, end, "regnum");
		if (name && bits) {
			size_t idx = num ? strtoul(num, NULL, 0) : next;
			if (idx < 4096) {
				if (idx >= cap) {
					size_t ncap = cap ? cap : 64;
					while (ncap <= idx)
						ncap *= 2;
					struct target_reg *r = realloc(t->regs, ncap * sizeof(*r));
					if (!r)
						abort();
					memset(r + cap, 0, (ncap - cap) * sizeof(*r));
					t->regs = r;
					cap = ncap;
				}
				free(t->regs[idx].name);
				t->regs[idx].name = name;
				t->regs[idx].bitsize = (unsigned int)strtoul(bits, NULL, 0);
				name = NULL;
				if (idx + 1 > t->nregs)
					t->nregs = idx + 1;
				next = idx + 1;
			}
		}
		free(name);
		free(bits);
		free(num);
		p = end;
	}
	if (t->nregs == 0) {
		target_regs_free(t);	/* the architecture's name */
		return -EINVAL;
	}
	/* The block holds the registers in number order. */
	for (size_t i = 0; i < t->nregs; i++) {
		t->regs[i].offset = t->block_size;
		t->block_size += (t->regs[i].bitsize + 7) / 8;
	}
	return 0;
}

void target_regs_free(struct target_regs *t)
{
	for (size_t i = 0; i < t->nregs; i++)
		free(t->regs[i].name);
	free(t->regs);
	free(t->arch);
	memset(t, 0, sizeof(*t));
}

int target_regnum(const struct target_regs *t, const char *name)
{
	for (size_t i = 0; i < t->nregs; i++)
		if (t->regs[i].name && strcmp(t->regs[i].name, name) == 0)
			return (int)i;
	return -1;
}

unsigned int target_abi_nargs(const struct arch_ops *ops)
{
	unsigned int n = 0;

	while (ops->arg_regs[n] >= 0)
		n++;
	return n;
}

int target_abi_arg_regnum(const struct target_regs *t,
			  const struct arch_ops *ops, unsigned int n)
{
	int r;

	if (n >= target_abi_nargs(ops))
		return -ERANGE;
	r = target_regnum(t, ops->regs[ops->arg_regs[n]].name);
	return r < 0 ? -ENOENT : r;
}

int target_abi_retval_regnum(const struct target_regs *t,
			     const struct arch_ops *ops)
{
	return target_regnum(t, ops->regs[ops->retval_regnum].name);
}
