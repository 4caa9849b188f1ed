/*
 * ax-plan.c - straight-line actions run without the interpreter (see
 * ax-plan.h for the shape and why).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/ax-plan.h"

/* Up to this many steps: probe-trace's longest is 2 + 3 * its argument
 * registers plus the return value (a dozen). */
#define AXP_MAX_STEPS 64

static uint16_t imm16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

struct ax_plan *ax_plan_compile(const uint8_t *code, size_t len)
{
	struct ax_plan_step steps[AXP_MAX_STEPS];
	size_t n = 0, nregs = 0, pc = 0;

	for (;;) {
		if (pc >= len)
			return NULL;	/* no `end` */
		if (code[pc] == AX_OP_END) {
			if (pc + 1 != len)
				return NULL;	/* code after the end */
			break;
		}
		if (n == AXP_MAX_STEPS)
			return NULL;
		/* tracev N: 2e NN NN */
		if (code[pc] == AX_OP_TRACEV && len - pc >= 3) {
			steps[n++] = (struct ax_plan_step){ AXP_TRACEV, imm16(code + pc + 1), 0,
							   (uint32_t)pc };
			pc += 3;
			continue;
		}
		/* reg R; setv N; pop: 26 RR RR 2d NN NN 29 */
		if (code[pc] == AX_OP_REG && len - pc >= 7 &&
		    code[pc + 3] == AX_OP_SETV && code[pc + 6] == AX_OP_POP) {
			steps[n++] = (struct ax_plan_step){ AXP_SETV_REG, imm16(code + pc + 4),
							   imm16(code + pc + 1), (uint32_t)pc };
			nregs++;
			pc += 7;
			continue;
		}
		return NULL;
	}
	if (n == 0)
		return NULL;
	struct ax_plan *p = malloc(sizeof(*p) + n * sizeof(p->step[0]));
	if (!p)
		return NULL;
	p->nsteps = n;
	p->nregs = nregs;
	memcpy(p->step, steps, n * sizeof(steps[0]));
	return p;
}

/* The interpreter's failure, said and returned the way it does (ax.c
 * vm_fail, errno_of). */
static int plan_fail(struct ax_result *res, const struct ax_plan_step *s,
		     enum ax_error e, int err, const char *what, unsigned int num)
{
	res->error = e;
	res->sys_errno = -err;
	res->pc = s->pc;
	snprintf(res->message, sizeof(res->message), "%s %u at offset %u", what,
		 num, s->pc);
	return e == AX_ERR_TSV ? -ENOENT : err;
}

int ax_plan_run(const struct ax_plan *plan, const uint8_t *code, size_t len,
		const struct ax_ctx *ctx, struct ax_result *res)
{
	uint32_t steps = (uint32_t)(plan->nsteps + 2 * plan->nregs + 1);
	uint64_t v;
	int r;

	/* What the interpreter would stop at before the first instruction
	 * or at its budget: its own words for it. */
	if (!ctx->read_reg || !ctx->tsv_set || !ctx->trace_tsv ||
	    (ctx->step_budget && ctx->step_budget < steps))
		return ax_eval(code, len, ctx, res);
	res->error = AX_OK;
	res->sys_errno = 0;
	res->has_value = false;
	res->value = 0;
	res->message[0] = '\0';
	res->steps = steps;
	/* In order, each failure where the interpreter's would be: what
	 * the steps before it did stays done, as there. */
	for (size_t i = 0; i < plan->nsteps; i++) {
		const struct ax_plan_step *s = &plan->step[i];
		if (s->kind == AXP_SETV_REG) {
			if ((r = ctx->read_reg(ctx, s->reg, &v)) < 0)
				return plan_fail(res, s, AX_ERR_REGISTER, r,
						 "bad register number", s->reg);
			if ((r = ctx->tsv_set(ctx, s->tsv, (int64_t)v)) < 0) {
				struct ax_plan_step at = *s;
				at.pc += 3;
				return plan_fail(res, &at, AX_ERR_TSV, r,
						 "unknown trace state variable", s->tsv);
			}
			continue;
		}
		if ((r = ctx->trace_tsv(ctx, s->tsv)) < 0)
			return plan_fail(res, s, r == -ENOENT ? AX_ERR_TSV : AX_ERR_COLLECT, r,
					 r == -ENOENT ? "unknown trace state variable"
						      : "cannot collect trace state variable",
					 s->tsv);
	}
	res->pc = len - 1;	/* the `end` */
	return 0;
}
