/*
 * x86_64-objdump-check.c - reads `objdump -d --insn-width=16` output on
 * stdin and decodes every instruction objdump decoded, from the bytes
 * objdump printed, with x86_64_decode.  An instruction agrees when the
 * decoder consumes exactly the bytes objdump shows.  Lines objdump could
 * not decode ("(bad)", ".byte") are counted apart and not compared.
 *
 * Prints "checked N agree N skipped N" and the first disagreements.
 * Exit: 0 all agree, 1 some disagree, 99 on unreadable input.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/x86_64.h"

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int main(int argc, char **argv)
{
	const char *label = argc > 1 ? argv[1] : "stdin";
	unsigned long checked = 0, agree = 0, skipped = 0, shown = 0;
	unsigned long lone_prefix = 0;
	char line[4096];

	while (fgets(line, sizeof(line), stdin)) {
		char *p = line, *tab1, *tab2, *end;
		uint8_t bytes[32];
		size_t n = 0;
		struct x86_64_insn in;
		unsigned long long addr;
		int err;

		while (*p == ' ')
			p++;
		addr = strtoull(p, &end, 16);
		if (end == p || *end != ':' || end[1] != '\t')
			continue;
		tab1 = end + 2;
		tab2 = strchr(tab1, '\t');
		if (!tab2)
			continue;	/* bytes only: a continuation line */
		for (p = tab1; p < tab2 && n < sizeof(bytes);) {
			int h = hexval(p[0]), l;

			if (h < 0) {
				p++;
				continue;
			}
			l = hexval(p[1]);
			if (l < 0)
				break;
			bytes[n++] = h << 4 | l;
			p += 2;
		}
		if (strstr(tab2, "(bad)") || strncmp(tab2 + 1, ".byte", 5) == 0) {
			skipped++;
			continue;
		}
		/* objdump shows a REX or legacy prefix that another prefix
		 * overrides as an instruction of its own; the CPU does not. */
		if (n == 1 && tab2[1] != '(' && ((bytes[0] & 0xf0) == 0x40 ||
		    bytes[0] == 0x66 || bytes[0] == 0x67 || bytes[0] == 0x2e ||
		    bytes[0] == 0x3e || bytes[0] == 0x26 || bytes[0] == 0x36 ||
		    bytes[0] == 0x64 || bytes[0] == 0x65 || bytes[0] == 0xf0 ||
		    bytes[0] == 0xf2 || bytes[0] == 0xf3)) {
			lone_prefix++;
			continue;
		}
		checked++;
		err = x86_64_decode(&in, bytes, n, addr);
		if (!err && in.len == n) {
			agree++;
			continue;
		}
		if (shown++ < 20) {
			printf("%s: MISMATCH %llx objdump %zu bytes, decoder %s %d:",
			       label, addr, n, err ? "error" : "length",
			       err ? err : in.len);
			for (size_t i = 0; i < n; i++)
				printf(" %02x", bytes[i]);
			printf("\t%s", tab2 + 1);
		}
	}
	if (ferror(stdin))
		return 99;
	printf("%s: checked %lu agree %lu disagree %lu; not compared: "
	       "objdump (bad)/.byte %lu, lone prefix %lu\n", label, checked,
	       agree, checked - agree, skipped, lone_prefix);
	return agree == checked ? 0 : 1;
}
