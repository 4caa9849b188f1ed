/*
 * target.h - what probe-trace learns about the target from the agent and
 * from its own trace files: the register file (target.xml) and the ABI
 * registers of an architecture.
 */
#ifndef PROBE_CLIENT_TARGET_H
#define PROBE_CLIENT_TARGET_H

#include <stddef.h>
#include <stdint.h>

struct target_reg {
	char *name;
	unsigned int bitsize;
	size_t offset;		/* in the register block (`g` order) */
};

struct target_regs {
	char *arch;		/* <architecture>, e.g. "i386:x86-64" */
	struct target_reg *regs;	/* indexed by gdb regnum */
	size_t nregs;
	size_t block_size;
};

/* Reads the <reg> elements of a target.xml document (no includes).
 * 0 or -EINVAL (no registers). */
int target_regs_parse(struct target_regs *t, const char *xml);
void target_regs_free(struct target_regs *t);
/* gdb regnum of a register name, or -1. */
int target_regnum(const struct target_regs *t, const char *name);

/* The ABI's argument registers (in order) and return value register for
 * the architecture, by name; NULL when the architecture is unknown. */
struct target_abi {
	const char *arch_prefix;	/* matched against <architecture> */
	const char *args[8];		/* NULL-terminated */
	const char *retval;
	const char *pc;
};
const struct target_abi *target_abi_for(const char *arch);

#endif
