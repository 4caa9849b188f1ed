/*
 * aarch64-run.h - run one piece of A64 code from a given register file
 * and catch the register file it ends with (tests/arch, aarch64 only).
 *
 * The differential tests (aarch64-simulate-native.c,
 * aarch64-relocate-exec.c) are cross-compiled and run under
 * qemu-aarch64-static, or natively on an arm64 host; see
 * tlib_cross_arch_test in tests/lib/common.sh.  a64_run enters the code through a signal return
 * (every register, sp, pc and NZCV are loaded at once, none is left to
 * the harness) and leaves it through the first signal the code raises:
 * a UDF word (SIGILL), a branch into memory that is not executable
 * (SIGSEGV), a misaligned pc (SIGBUS), or the watchdog (SIGVTALRM, for a
 * branch to itself).  That signal's context is the result.  Handlers run
 * on an alternate stack, so sp may hold anything.
 */
#ifndef PROBE_TESTS_AARCH64_RUN_H
#define PROBE_TESTS_AARCH64_RUN_H

#include <stdbool.h>
#include <stdint.h>

/* PSTATE bits compared by the tests: NZCV and BTYPE. */
#define A64_PSTATE_NZCV 0xf0000000ull
#define A64_PSTATE_BTYPE 0xc00ull

struct a64_state {
	uint64_t x[31];
	uint64_t sp, pc, pstate;
	unsigned __int128 v[32];	/* SIMD&FP registers (with_v) */
	int sig;			/* a64_run: the signal that ended it */
};

/* Installs the handlers and the alternate stack.  Returns 0 or -errno. */
int a64_run_init(void);

/*
 * Runs from `in` (pc, x0-x30, sp, NZCV and BTYPE of in->pstate, and the
 * v registers when `with_v`) until the first signal, and fills *out
 * with the state at that signal.  Returns 0, or -ETIMEDOUT when the
 * watchdog ended it (out is filled all the same).
 */
int a64_run(const struct a64_state *in, struct a64_state *out, bool with_v);

/* Prints a state, one line per group of registers, each line indented. */
void a64_print_state(const char *title, const struct a64_state *s, bool with_v);

#endif
