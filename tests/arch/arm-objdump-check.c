/*
 * arm-objdump-check.c - decodes every instruction of an
 * `arm-linux-gnueabihf-objdump -d` listing (stdin) with the arm engine,
 * in the instruction set objdump used for it: one 8-digit word is A32,
 * one 4-digit halfword T16, two of them ("f8d1 3004") T32.  For each it
 * prints
 *
 *   ADDR ISA OBJDUMP_LEN LEN STRATEGY R W <tab> REASON <tab> OBJDUMP_TEXT
 *
 * where R and W are 1 when the decoder says the instruction reads or
 * writes the pc, and OBJDUMP_TEXT is the rest of objdump's line (the
 * mnemonic, operands and comment), so arm-objdump-diff.sh compares
 * them line by line (addresses repeat across the sections of .o files).
 * Each instruction is classified with the instructions that follow it
 * at consecutive addresses in the same set (up to 16), as `probe-trace
 * insn` does with the rest of a function.  Exit: 0, or 99 on unreadable input.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arm/arm.h"

static int hexlen(const char *p)
{
	int n = 0;

	while ((p[n] >= '0' && p[n] <= '9') || (p[n] >= 'a' && p[n] <= 'f'))
		n++;
	return n;
}

struct line {
	unsigned long long addr;
	bool thumb;
	const char *isa;
	unsigned int odlen;
	uint8_t b[4];
	char *text;		/* objdump's mnemonic, operands, comment */
};

#define LOOKAHEAD 16

int main(void)
{
	struct line *v = NULL;
	size_t n = 0, cap = 0;
	char line[4096];

	while (fgets(line, sizeof(line), stdin)) {
		struct line l;
		char *p = line, *end;
		unsigned int v1, v2;
		int n1, n2;

		while (*p == ' ')
			p++;
		l.addr = strtoull(p, &end, 16);
		if (end == p || end[0] != ':' || end[1] != '\t')
			continue;
		p = end + 2;
		n1 = hexlen(p);
		if (n1 != 8 && n1 != 4)
			continue;
		if (sscanf(p, "%x", &v1) != 1)
			return 99;
		memset(l.b, 0, sizeof(l.b));
		l.b[0] = (uint8_t)v1;
		l.b[1] = (uint8_t)(v1 >> 8);
		if (n1 == 8) {
			l.thumb = false;
			l.odlen = 4;
			l.isa = "a32";
			l.b[2] = (uint8_t)(v1 >> 16);
			l.b[3] = (uint8_t)(v1 >> 24);
		} else {
			l.thumb = true;
			n2 = p[4] == ' ' ? hexlen(p + 5) : 0;
			if (n2 == 4 && sscanf(p + 5, "%x", &v2) == 1) {
				l.odlen = 4;
				l.isa = "t32";
				l.b[2] = (uint8_t)v2;
				l.b[3] = (uint8_t)(v2 >> 8);
			} else {
				l.odlen = 2;
				l.isa = "t16";
			}
		}
		p += l.odlen == 4 && l.thumb ? 9 : n1;
		while (*p == ' ')
			p++;
		p[strcspn(p, "\n")] = '\0';
		if (!(l.text = strdup(p)))
			return 99;
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			if (!(v = realloc(v, cap * sizeof(*v))))
				return 99;
		}
		v[n++] = l;
	}
	if (ferror(stdin))
		return 99;
	for (size_t i = 0; i < n; i++) {
		/* the instruction and the ones after it in the same run of
		 * addresses and instruction set: the look-ahead of the
		 * exclusive-sequence rule */
		uint8_t buf[4 * (LOOKAHEAD + 1)];
		size_t len = 0;
		struct arch_insn insn;
		const struct arm_insn *in;
		int err;

		for (size_t k = i; k < n && k <= i + LOOKAHEAD &&
		     v[k].thumb == v[i].thumb &&
		     v[k].addr == v[i].addr + len; k++) {
			memcpy(buf + len, v[k].b, v[k].odlen);
			len += v[k].odlen;
		}
		/* decoded from objdump's own bytes only: its length is the
		 * one compared */
		err = arm_arch_ops.insn_decode(v[i].b, v[i].odlen,
					       v[i].addr | v[i].thumb, &insn);
		if (!err)
			err = arm_arch_ops.insn_decode(buf, len,
						       v[i].addr | v[i].thumb, &insn);
		in = arm_priv(&insn);
		printf("%llx %s %u %u %s %d %d\t%s\t%s\n", v[i].addr, v[i].isa,
		       v[i].odlen, err == -ENODATA ? 4 : insn.len,
		       err ? "reject" : arch_strategy_name(insn.strategy),
		       in->reads_pc, in->writes_pc,
		       insn.reason ? insn.reason : "", v[i].text);
		free(v[i].text);
	}
	free(v);
	return 0;
}
