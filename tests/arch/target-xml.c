/*
 * target-xml.c - prints an arch's target.xml (every feature bit set), for
 * the scripts that check it with an XML parser and with gdb itself.
 *
 *   tests/arch/target-xml GDB-ARCH      e.g. aarch64, i386:x86-64
 */
#include "config.h"

#include <stdio.h>

#include "arch/arch.h"

int main(int argc, char **argv)
{
	static char xml[65536];
	const struct arch_ops *ops;
	int n;

	if (argc != 2 || !(ops = arch_for_gdb_arch(argv[1]))) {
		fprintf(stderr, "usage: target-xml GDB-ARCH (an arch of this build)\n");
		return 99;
	}
	n = ops->target_xml(~0u, xml, sizeof(xml));
	if (n < 0) {
		fprintf(stderr, "target-xml: %s: error %d\n", argv[1], n);
		return 1;
	}
	fwrite(xml, 1, (size_t)n, stdout);
	return 0;
}
