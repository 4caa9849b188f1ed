/*
 * aarch64-objdump-check.c - classifies every instruction of an
 * `aarch64-linux-gnu-objdump -d` listing (stdin) with
 * aarch64_arch_ops.insn_decode, whole sections and not only the
 * functions a symbol table names: the .plt, the local functions of a
 * stripped library, .init and .fini.
 *
 * Each word is decoded at its address with the words that follow it in
 * the same run of consecutive addresses (up to 16, the look-ahead of the
 * exclusive-sequence rule), as `probe-trace insn` does with the rest of
 * a function.  The output has `probe-trace insn`'s line format, one line
 * per instruction,
 *
 *       9dbd0   4  boost    fd7bbfa9    runs unchanged from the slot
 *
 * so aarch64-objdump-diff.sh compares either against objdump's
 * mnemonics.  Exit: 0, or 99 on unreadable input.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/aarch64/aarch64.h"

#define LOOKAHEAD 16

struct word {
	unsigned long long addr;
	uint32_t w;
};

int main(void)
{
	struct word *v = NULL;
	size_t n = 0, cap = 0;
	char line[4096];

	while (fgets(line, sizeof(line), stdin)) {
		unsigned long long addr;
		unsigned int w;
		char *p = line, *end;

		while (*p == ' ')
			p++;
		addr = strtoull(p, &end, 16);
		if (end == p || end[0] != ':' || end[1] != '\t')
			continue;
		if (sscanf(end + 2, "%8x", &w) != 1)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				return 99;
		}
		v[n++] = (struct word){ addr, w };
	}
	if (ferror(stdin))
		return 99;
	for (size_t i = 0; i < n; i++) {
		uint8_t buf[4 * (LOOKAHEAD + 1)];
		struct arch_insn insn;
		size_t len = 0;

		for (size_t k = i; k < n && k <= i + LOOKAHEAD &&
		     v[k].addr == v[i].addr + 4 * (k - i); k++, len += 4) {
			buf[len] = (uint8_t)v[k].w;
			buf[len + 1] = (uint8_t)(v[k].w >> 8);
			buf[len + 2] = (uint8_t)(v[k].w >> 16);
			buf[len + 3] = (uint8_t)(v[k].w >> 24);
		}
		aarch64_arch_ops.insn_decode(buf, len, v[i].addr, &insn);
		printf("  %llx 4 %s %02x%02x%02x%02x %s\n", v[i].addr,
		       arch_strategy_name(insn.strategy), buf[0], buf[1], buf[2],
		       buf[3], insn.reason ? insn.reason : "");
	}
	free(v);
	return 0;
}
