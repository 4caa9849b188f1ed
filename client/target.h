/*
 * target.h - what probe-trace learns about the target from the agent and
 * from its own trace files: the register file (target.xml), and where
 * in it the ABI registers of the target's arch (arch_ops) are.
 */
#ifndef PROBE_CLIENT_TARGET_H
#define PROBE_CLIENT_TARGET_H

#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"

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

/*
 * The target's regnum of argument register `n` (from 0) of the C calling
 * convention of `ops`, the target's arch: the arch's register found by
 * name in the target's description, so a stub that numbers registers
 * its own way is read right.  -ERANGE when the convention passes fewer
 * arguments in registers, -ENOENT when the target has no such register.
 */
int target_abi_arg_regnum(const struct target_regs *t,
			  const struct arch_ops *ops, unsigned int n);
/* How many arguments the convention of `ops` passes in registers. */
unsigned int target_abi_nargs(const struct arch_ops *ops);
/* The target's regnum of the return-value register of `ops`, or -1. */
int target_abi_retval_regnum(const struct target_regs *t,
			     const struct arch_ops *ops);

#endif
