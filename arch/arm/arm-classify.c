/*
 * arm-classify.c - which strategy a probe on one A32 or Thumb instruction
 * uses.
 *
 * The kprobes ARM split (simulate / emulate / reject), with the agent's
 * names; a probe hit stops the thread once, at the breakpoint, and then
 *
 *   simulate (ARCH_EMULATE)  C code computes the effect (arm-simulate.c):
 *            every branch (B, BL, BLX, BX, CBZ/CBNZ, TBB/TBH), the literal
 *            loads, ADR, data processing that reads or writes the pc,
 *            LDR pc, LDM/POP with the pc, STM/PUSH of the pc (A32), PLD
 *            literal, NOP and IT.  All of them read or write only the
 *            general registers, cpsr and memory, which the register file
 *            holds; the condition (A32 cond, B<c>, the IT block) is
 *            honoured: a failing one skips the instruction;
 *   emulate (ARCH_STEP)  what reads the pc in a way not simulated (VLDR
 *            literal, an A32 store of the pc, a pc base with a register
 *            offset) runs from the slot with the pc renamed to a scratch
 *            register the agent loads with the pc's value, followed by a
 *            breakpoint: a second stop gives the register back;
 *   boost    everything else runs unchanged from the slot, followed by a
 *            branch back (one stop);
 *   reject   with the reason: exclusives (and what lies between a load-
 *            and a store-exclusive), SVC, BKPT, UDF, privileged and
 *            UNPREDICTABLE uses of the pc, unallocated encodings, and
 *            (arm-ops.c) a boosted or emulated instruction inside an IT
 *            block.
 *
 * Classifiers are tried in a chain, each returning -ENOSYS for "not
 * mine"; the per-encoding knowledge is in the tables of arm-decode.c.
 *
 * Exclusive sequences: LDREX opens a monitor STREX closes, failing when
 * an exception came between them; the probe's trap is one, so a probe on
 * either, or on any instruction between them, makes the store fail on
 * every retry: the loop comes back to the probe for ever.  Those are
 * rejected.  The load and the store are known from their encodings; an
 * instruction between them by looking ahead in the bytes the caller
 * gives (up to 16 instructions, gdb's window for the same problem): when
 * a store-exclusive comes before any load-exclusive or unconditional
 * branch, the instruction is inside a sequence.  The look-ahead sees no
 * further than the bytes it is given; `probe-trace insn` gives it the
 * rest of the function.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>

#include "arch/arm/arm.h"

/* Link 1: rejected by the decode tables. */
static int classify_table(const struct arm_insn *in, const uint8_t *after,
			  size_t after_size, enum arch_strategy *s,
			  const char **reason)
{
	if (in->op != ARM_OP_REJECT)
		return -ENOSYS;
	*s = ARCH_REJECT;
	*reason = in->reason;
	return 0;
}

#define EXCLUSIVE_WINDOW 16

bool arm_is_load_exclusive(const struct arm_insn *in)
{
	return in->op == ARM_OP_EXCLUSIVE && ((in->word >> 20) & 1);
}

bool arm_is_store_exclusive(const struct arm_insn *in)
{
	return in->op == ARM_OP_EXCLUSIVE && !((in->word >> 20) & 1);
}

/* Whether execution cannot fall through `in` to the next instruction
 * (conditional forms and CBZ can). */
bool arm_leaves_for_good(const struct arm_insn *in)
{
	if (in->cond != 14 && in->cond != 15)
		return false;
	switch (in->op) {
	case ARM_OP_B:
	case ARM_OP_BX:
	case ARM_OP_TBB:
	case ARM_OP_TBH:
	case ARM_OP_LDR_PC:
	case ARM_OP_LDM:
		return true;
	case ARM_OP_LDR_LIT:
	case ARM_OP_DP:
		return in->writes_pc;
	default:
		return false;
	}
}

/* Link 2: the exclusive sequences (see the top of the file). */
static int classify_exclusive(const struct arm_insn *in, const uint8_t *after,
			      size_t after_size, enum arch_strategy *s,
			      const char **reason)
{
	struct arm_insn next;
	size_t off = 0;

	if (in->op == ARM_OP_EXCLUSIVE) {
		*s = ARCH_REJECT;
		*reason = arm_is_load_exclusive(in) ?
			"load-exclusive: the probe's trap clears the exclusive "
			"monitor, the store-exclusive would fail for ever" :
			"store-exclusive: the probe's trap clears the exclusive "
			"monitor, the store would fail for ever";
		return 0;
	}
	if (arm_leaves_for_good(in))
		return -ENOSYS;
	for (int i = 0; i < EXCLUSIVE_WINDOW && off < after_size; i++) {
		if (arm_decode(&next, after + off, after_size - off,
			       (in->addr + in->len + off) | (in->isa != ARM_ISA_A32),
			       in->isa != ARM_ISA_A32) == -ENODATA)
			break;
		if (arm_is_store_exclusive(&next)) {
			*s = ARCH_REJECT;
			*reason = "between a load-exclusive and its store: the "
				  "probe's trap clears the exclusive monitor, the "
				  "store would fail for ever";
			return 0;
		}
		if (arm_is_load_exclusive(&next) || arm_leaves_for_good(&next))
			break;
		off += next.len;
	}
	return -ENOSYS;
}

/* Link 3: simulated. */
static int classify_simulate(const struct arm_insn *in, const uint8_t *after,
			     size_t after_size, enum arch_strategy *s,
			     const char **reason)
{
	switch (in->op) {
	case ARM_OP_B:
	case ARM_OP_BL:
	case ARM_OP_BLX_IMM:
	case ARM_OP_BX:
	case ARM_OP_BLX_REG:
	case ARM_OP_CBZ:
	case ARM_OP_CBNZ:
	case ARM_OP_TBB:
	case ARM_OP_TBH:
	case ARM_OP_LDR_LIT:
	case ARM_OP_ADR:
	case ARM_OP_DP:
	case ARM_OP_LDR_PC:
	case ARM_OP_LDM:
	case ARM_OP_STM_PC:
	case ARM_OP_PLD_LIT:
	case ARM_OP_NOP:
	case ARM_OP_IT:
		*s = ARCH_EMULATE;
		*reason = in->name;
		return 0;
	default:
		return -ENOSYS;
	}
}

/* Link 4: emulated in the slot with the pc renamed. */
static int classify_scratch(const struct arm_insn *in, const uint8_t *after,
			    size_t after_size, enum arch_strategy *s,
			    const char **reason)
{
	if (in->op != ARM_OP_PC_SCRATCH)
		return -ENOSYS;
	*s = ARCH_STEP;
	*reason = "reads the pc: runs from the slot with the pc renamed to a "
		  "scratch register, then a breakpoint (two stops)";
	return 0;
}

/* Link 5: boosted. */
static int classify_boost(const struct arm_insn *in, const uint8_t *after,
			  size_t after_size, enum arch_strategy *s,
			  const char **reason)
{
	if (in->op != ARM_OP_OTHER)
		return -ENOSYS;
	*s = ARCH_BOOST;
	*reason = "runs unchanged from the slot";
	return 0;
}

int arm_classify(const struct arm_insn *in, const uint8_t *after,
		 size_t after_size, const char **reason)
{
	static int (*const chain[])(const struct arm_insn *, const uint8_t *,
				    size_t, enum arch_strategy *,
				    const char **) = {
		classify_table,
		classify_exclusive,
		classify_simulate,
		classify_scratch,
		classify_boost,
	};
	enum arch_strategy s;

	for (size_t i = 0; i < sizeof(chain) / sizeof(chain[0]); i++) {
		int err = chain[i](in, after, after_size, &s, reason);

		if (err == 0)
			return s;
		if (err != -ENOSYS)
			return err;
	}
	*reason = "not known to run correctly out of line";
	return ARCH_REJECT;
}
