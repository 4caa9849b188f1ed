/*
 * arch.h - the whole boundary between agent/ and arch/.
 *
 * Everything the agent needs to know about an instruction set lives behind
 * one `const struct arch_ops` per architecture.  arch/ is pure: no system
 * calls, no ptrace, no I/O.  It describes the register file as gdb sees it
 * (the order of target.xml, of the `g` packet and of a trace frame's `R`
 * block are one and the same), the breakpoint instruction, and the
 * instruction knowledge the probe strategies build on.
 */
#ifndef PROBE_ARCH_H
#define PROBE_ARCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/* One register of the gdb-visible register file. */
struct arch_reg {
	const char *name;	/* gdb's name: "rax", "xmm3", "fs_base" */
	unsigned int bitsize;	/* size as in target.xml */
	unsigned int offset;	/* byte offset inside the register block */
	const char *type;	/* target.xml type, NULL for the default */
	const char *group;	/* target.xml group, NULL for none */
	const char *feature;	/* the target.xml feature it belongs to */
};

/* Optional register-file extensions the CPU may or may not have. */
enum arch_regset_feature {
	ARCH_FEAT_AVX = 1u << 0,	/* x86: ymm upper halves */
};

struct arch_ops {
	const char *name;		/* "x86_64": logs, probe-trace output */
	const char *gdb_arch;		/* target.xml <architecture> */

	/*
	 * The register file.  `regs` lists every register gdb may see, in
	 * gdb's numbering (regs[i] is gdb regnum i); `nregs_for(features)`
	 * tells how many of them exist on a CPU with `features`; the block
	 * holding them is `regblock_size_for(features)` bytes.
	 */
	const struct arch_reg *regs;
	unsigned int (*nregs_for)(unsigned int features);
	size_t (*regblock_size_for)(unsigned int features);

	/*
	 * Writes the target.xml for `features` into `buf` (at most `size`
	 * bytes including the NUL).  Returns its length, or -ENOSPC.
	 */
	int (*target_xml)(unsigned int features, char *buf, size_t size);

	int pc_regnum, sp_regnum, fp_regnum;
	/* Registers sent with every stop reply, -1 terminated. */
	const int *expedite;

	/* The software breakpoint, and how far the PC has moved past the
	 * breakpoint address when the trap is reported. */
	const uint8_t *bp_insn;
	size_t bp_len;
	size_t bp_pc_after_trap;
};

extern const struct arch_ops x86_64_arch_ops;

/* The architecture the agent was built for. */
const struct arch_ops *arch_host(void);

#endif
