/* arch.c - the architecture the agent drives. */
#include "config.h"

#include "arch/arch.h"

const struct arch_ops *arch_host(void)
{
#if defined(__x86_64__)
	return &x86_64_arch_ops;
#else
#error "probe-agent: no arch_ops for this host yet"
#endif
}

const char *arch_strategy_name(enum arch_strategy s)
{
	switch (s) {
	case ARCH_EMULATE: return "emulate";
	case ARCH_BOOST: return "boost";
	case ARCH_STEP: return "step";
	case ARCH_REJECT: return "reject";
	}
	return "?";
}

bool arch_prefers_boost(const struct arch_ops *ops, const struct arch_insn *insn)
{
	uint8_t code[256];
	struct arch_xol xol;
	struct arch_insn copy = *insn;

	if (insn->strategy != ARCH_EMULATE || !ops->emulate_pc_only ||
	    ops->emulate_pc_only(insn))
		return false;
	/* Can a copy near the instruction run it without stepping? */
	copy.strategy = ARCH_BOOST;
	return ops->xol_prepare(&copy, insn->addr + 0x10000, code, sizeof(code),
				&xol) >= 0 && !xol.step;
}
