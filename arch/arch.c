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
