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
 * them line by line (addresses repeat across the sections of .o files).  Exit: 0, or 99 on unreadable input.
 */
#include "config.h"

#include <errno.h>
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

int main(void)
{
	char line[4096];

	while (fgets(line, sizeof(line), stdin)) {
		unsigned long long addr;
		char *p = line, *end;
		uint8_t b[4];
		unsigned int v1, v2, odlen;
		struct arch_insn insn;
		const struct arm_insn *in;
		const char *isa;
		int n1, n2, err;
		bool thumb;

		while (*p == ' ')
			p++;
		addr = strtoull(p, &end, 16);
		if (end == p || end[0] != ':' || end[1] != '\t')
			continue;
		p = end + 2;
		n1 = hexlen(p);
		if (n1 != 8 && n1 != 4)
			continue;
		if (sscanf(p, "%x", &v1) != 1)
			return 99;
		if (n1 == 8) {
			thumb = false;
			odlen = 4;
			isa = "a32";
			b[0] = (uint8_t)v1;
			b[1] = (uint8_t)(v1 >> 8);
			b[2] = (uint8_t)(v1 >> 16);
			b[3] = (uint8_t)(v1 >> 24);
		} else {
			thumb = true;
			b[0] = (uint8_t)v1;
			b[1] = (uint8_t)(v1 >> 8);
			n2 = p[4] == ' ' ? hexlen(p + 5) : 0;
			if (n2 == 4 && sscanf(p + 5, "%x", &v2) == 1) {
				odlen = 4;
				isa = "t32";
				b[2] = (uint8_t)v2;
				b[3] = (uint8_t)(v2 >> 8);
			} else {
				odlen = 2;
				isa = "t16";
				b[2] = b[3] = 0;
			}
		}
		err = arm_arch_ops.insn_decode(b, odlen, addr | thumb, &insn);
		in = arm_priv(&insn);
		p += odlen == 4 && thumb ? 9 : n1;
		while (*p == ' ')
			p++;
		p[strcspn(p, "\n")] = '\0';
		printf("%llx %s %u %u %s %d %d\t%s\t%s\n", addr, isa, odlen,
		       err == -ENODATA ? 4 : insn.len,
		       err ? "reject" : arch_strategy_name(insn.strategy),
		       in->reads_pc, in->writes_pc,
		       insn.reason ? insn.reason : "", p);
	}
	return ferror(stdin) ? 99 : 0;
}
