/*
 * aarch64-classify.c - which strategy a probe on one A64 instruction uses.
 *
 * The ARM kprobes split (simulate / emulate / reject), applied to user
 * space with the agent's names: a probe hit stops the thread once, at
 * the BRK, and from there
 *
 *   simulate (ARCH_EMULATE)  C code computes the effect of every
 *            instruction that reads the PC: branches, ADR/ADRP, literal
 *            loads.  Their effect depends on where they are, and the
 *            register file holds all they touch (x0-x30, sp, pc, NZCV);
 *   boost    everything else runs unchanged from an out-of-line slot
 *            followed by a B back (+-128 MiB); the PC readers are
 *            re-encoded for the slot when a strategy forces them there
 *            (aarch64-relocate.c);
 *   reject   what cannot run out of line, with the reason.
 *
 * Classifiers are tried in a chain, each returning -ENOSYS for "not
 * mine".  The per-encoding knowledge (what is rejected and why) is in
 * the decode table of aarch64-decode.c; this file adds what a table
 * cannot say, the exclusive sequences.
 *
 * Exclusive sequences.  LDXR/LDAXR/LDXP open an exclusive monitor that
 * STXR/STLXR/STXP close, failing (status 1) when anything happened in
 * between, and the probe's trap is an exception taken and returned from,
 * which clears the monitor.  A probe on the load, on the store or on any
 * instruction between them therefore makes the store fail on every
 * iteration: the loop retries into the probe again, for ever.  Those
 * instructions are rejected.  The load and the store are known from
 * their encodings; an instruction between them is recognised by looking
 * ahead in the bytes the caller gives (up to 16 instructions, gdb's
 * window for the same problem): when a store-exclusive comes before any
 * load-exclusive or unconditional branch, the instruction is inside a
 * sequence.  The look-ahead can see no further than the bytes it is
 * given; `probe-trace insn` gives it the rest of the function.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>

#include "arch/aarch64/aarch64.h"

#define EXCLUSIVE_WINDOW 16

/* Link 1: rejected by the decode table (exceptions, privileged, MOPS,
 * unallocated). */
static int classify_table(const struct aarch64_insn *in,
			  const uint8_t *after, size_t after_size,
			  enum arch_strategy *s, const char **reason)
{
	if (in->op != AARCH64_OP_REJECT)
		return -ENOSYS;
	*s = ARCH_REJECT;
	*reason = in->reason;
	return 0;
}

/* Whether execution cannot fall through `in` to the next word. */
static bool leaves_for_good(const struct aarch64_insn *in)
{
	switch (in->op) {
	case AARCH64_OP_B:
	case AARCH64_OP_BR:
	case AARCH64_OP_RET:
	case AARCH64_OP_BRA:
	case AARCH64_OP_RETA:
		return true;
	default:
		return false;
	}
}

/* Link 2: the exclusive sequences (see the top of the file). */
static int classify_exclusive(const struct aarch64_insn *in,
			      const uint8_t *after, size_t after_size,
			      enum arch_strategy *s, const char **reason)
{
	struct aarch64_insn next;

	if (in->op == AARCH64_OP_LDX || in->op == AARCH64_OP_STX) {
		*s = ARCH_REJECT;
		*reason = in->op == AARCH64_OP_LDX ?
			"load-exclusive: the probe's trap clears the exclusive "
			"monitor, the store-exclusive would fail for ever" :
			"store-exclusive: the probe's trap clears the exclusive "
			"monitor, the store would fail for ever";
		return 0;
	}
	if (leaves_for_good(in))
		return -ENOSYS;
	for (size_t i = 0; i < EXCLUSIVE_WINDOW && (i + 1) * 4 <= after_size; i++) {
		aarch64_decode(&next, aarch64_word(after + 4 * i),
			       in->addr + 4 * (i + 1));
		if (next.op == AARCH64_OP_STX) {
			*s = ARCH_REJECT;
			*reason = "between a load-exclusive and its store: the "
				  "probe's trap clears the exclusive monitor, the "
				  "store would fail for ever";
			return 0;
		}
		if (next.op == AARCH64_OP_LDX || leaves_for_good(&next))
			break;
	}
	return -ENOSYS;
}

/* Link 3: simulated, i.e. the PC readers whose effect the register file
 * holds, and the nops. */
static int classify_simulate(const struct aarch64_insn *in,
			  const uint8_t *after, size_t after_size,
			     enum arch_strategy *s, const char **reason)
{
	switch (in->op) {
	case AARCH64_OP_B:
	case AARCH64_OP_BL:
	case AARCH64_OP_BCOND:
	case AARCH64_OP_CBZ:
	case AARCH64_OP_CBNZ:
	case AARCH64_OP_TBZ:
	case AARCH64_OP_TBNZ:
	case AARCH64_OP_BR:
	case AARCH64_OP_BLR:
	case AARCH64_OP_RET:
	case AARCH64_OP_ADR:
	case AARCH64_OP_ADRP:
	case AARCH64_OP_LDR_LIT:
	case AARCH64_OP_PRFM_LIT:
	case AARCH64_OP_NOP:
	case AARCH64_OP_BTI:
		*s = ARCH_EMULATE;
		*reason = in->name;
		return 0;
	default:
		return -ENOSYS;
	}
}

/* Link 4: boosted: runs from the slot, re-encoded where it reads the PC. */
static int classify_boost(const struct aarch64_insn *in,
			  const uint8_t *after, size_t after_size,
			  enum arch_strategy *s, const char **reason)
{
	*s = ARCH_BOOST;
	switch (in->op) {
	case AARCH64_OP_LDR_LIT_FP:
		/* The simulator's register file has no v registers. */
		*reason = "simd/fp literal load: re-encoded for the slot (stepped "
			  "with a borrowed register beyond the literal's +-1 MiB)";
		break;
	case AARCH64_OP_BRA:
	case AARCH64_OP_RETA:
		/* Authentication needs the process's keys: the CPU does it. */
		*reason = "pointer-authenticated branch: runs from the slot, "
			  "never comes back";
		break;
	case AARCH64_OP_BLRA:
		*reason = "pointer-authenticated call: the slot sets lr to the "
			  "return address, then branches";
		break;
	default:
		*reason = "runs unchanged from the slot";
		break;
	}
	return 0;
}

int aarch64_classify(const struct aarch64_insn *in, const uint8_t *after,
		     size_t after_size, const char **reason)
{
	static int (*const chain[])(const struct aarch64_insn *,
				    const uint8_t *, size_t,
				    enum arch_strategy *, const char **) = {
		classify_table,
		classify_exclusive,
		classify_simulate,
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
