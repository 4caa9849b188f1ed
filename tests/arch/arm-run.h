/*
 * arm-run.h - run a piece of A32 or Thumb code from a given register file
 * and catch the one it ends with (tests/arch, 32-bit ARM only).
 *
 * The differential tests (arm-simulate-native.c, arm-relocate-exec.c) are
 * cross-compiled and run under qemu-arm-static, or natively on a 32-bit
 * ARM host.  arm_run enters the code through a signal return (r0-r15 and
 * cpsr's NZCV and T loaded at once, none left to the harness) and leaves
 * it through the first signal the code raises: a UDF (SIGILL), a branch
 * into memory that is not executable (SIGSEGV), an alignment fault
 * (SIGBUS), or the watchdog (SIGVTALRM, for a branch to itself).  That
 * signal's context is the result.  Handlers run on an alternate stack, so
 * sp may hold anything.
 */
#ifndef PROBE_TESTS_ARM_RUN_H
#define PROBE_TESTS_ARM_RUN_H

#include <stdint.h>

#include "arch/arm/arm.h"

/* The cpsr bits arm_run loads and the tests compare. */
#define ARM_RUN_CPSR_SET (ARM_PSR_N | ARM_PSR_Z | ARM_PSR_C | ARM_PSR_V | ARM_PSR_T)

struct arm_state {
	uint32_t r[17];		/* r0-r14, pc, cpsr */
	int sig;		/* arm_run: the signal that ended it */
};

/* Installs the handlers and the alternate stack.  Returns 0 or -errno. */
int arm_run_init(void);

/* Runs from `in` until the first signal; *out is the state there. */
void arm_run(const struct arm_state *in, struct arm_state *out);

/* Prints a state, indented. */
void arm_print_state(const char *title, const struct arm_state *s);

#endif
