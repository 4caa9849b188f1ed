/*
 * ax-plan.h - straight-line actions run without the interpreter.
 *
 * probe-trace records the values of every frame through trace state
 * variables: one action per probe made only of
 *
 *     tracev N                         $trace_timestamp, $probe_thread
 *     reg R; setv N; pop; tracev N     an argument, into $probe_argK
 *
 * then `end`.  Run for every frame of a recording (millions a second),
 * the interpreter's decode, checks and step budget per instruction cost
 * more than the work.  ax_plan_compile() recognises exactly this shape
 * once, when the action is defined, and ax_plan_run() then does only the
 * callbacks, in the same order and with the same results as ax_eval().
 * Anything else (a constant, arithmetic, memory, a setv without its pop)
 * is refused and the interpreter runs it as before.
 *
 * Pure: no system call; ax_plan_compile allocates the plan.
 */
#ifndef PROBE_AX_PLAN_H
#define PROBE_AX_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "protocol/ax.h"

enum ax_plan_kind {
	AXP_TRACEV,	/* tracev tsv */
	AXP_SETV_REG,	/* reg reg; setv tsv; pop */
};

struct ax_plan_step {
	enum ax_plan_kind kind;
	uint16_t tsv;
	uint16_t reg;
	uint32_t pc;	/* the instruction's offset, for error reports */
};

struct ax_plan {
	size_t nsteps, nregs;	/* nregs: the AXP_SETV_REG steps */
	struct ax_plan_step step[];
};

/* The plan of action `code` (`len` bytes), or NULL when it is not of the
 * shape above (or on no memory): then run it with ax_eval. */
struct ax_plan *ax_plan_compile(const uint8_t *code, size_t len);

/* Runs `plan` as ax_eval would run its code (`code`, `len`): same
 * callbacks in the same order, same return value and *res.  The
 * registers and variables are checked first, with no side effect; if
 * one is missing the code goes to ax_eval, which reports it as usual. */
int ax_plan_run(const struct ax_plan *plan, const uint8_t *code, size_t len,
		const struct ax_ctx *ctx, struct ax_result *res);

#endif
