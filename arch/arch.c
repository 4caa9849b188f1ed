/*
 * arch.c - choosing an architecture: the one the agent drives (the
 * host's), and the one of a file or a remote target.
 *
 * arch/ is built whole on every host, so the table below lists every
 * arch the tree has, not only the host's: probe-trace on an x86-64
 * workstation reads an aarch64 board's files with the aarch64 arch.  A
 * new arch adds its row here and its case in arch_host().
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"

static const struct arch_ops *const arch_table[] = {
	&x86_64_arch_ops,
	&aarch64_arch_ops,
	&arm_arch_ops,
};

#define ARCH_COUNT (sizeof(arch_table) / sizeof(arch_table[0]))

const struct arch_ops *arch_host(void)
{
	/* configure refuses a host with no arch; this is the backstop. */
#if defined(__x86_64__)
	return &x86_64_arch_ops;
#elif defined(__aarch64__)
	return &aarch64_arch_ops;
#elif defined(__arm__)
	return &arm_arch_ops;
#else
#error "probe-agent: no arch_ops for this host (configure should have said so)"
#endif
}

const struct arch_ops *arch_nth(size_t i)
{
	return i < ARCH_COUNT ? arch_table[i] : NULL;
}

const struct arch_ops *arch_for_elf_machine(unsigned int e_machine)
{
	for (size_t i = 0; i < ARCH_COUNT; i++)
		if (arch_table[i]->elf_machine == e_machine)
			return arch_table[i];
	return NULL;
}

const struct arch_ops *arch_for_gdb_arch(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < ARCH_COUNT; i++) {
		const char *g = arch_table[i]->gdb_arch;
		size_t n = strlen(g);

		if (strncmp(name, g, n) == 0 && (name[n] == '\0' || name[n] == ':'))
			return arch_table[i];
	}
	return NULL;
}

/* Names of the machines a user is likely to meet, for messages only. */
static const char *machine_name(unsigned int e_machine)
{
	static const struct { unsigned int em; const char *name; } names[] = {
		{ EM_386, "i386" }, { EM_X86_64, "x86-64" },
		{ EM_ARM, "arm" }, { EM_AARCH64, "aarch64" },
		{ EM_RISCV, "riscv" }, { EM_PPC, "powerpc" },
		{ EM_PPC64, "powerpc64" }, { EM_S390, "s390" },
		{ EM_MIPS, "mips" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].em == e_machine)
			return names[i].name;
	return NULL;
}

const char *arch_machine_unsupported(unsigned int e_machine, char *buf,
				     size_t size)
{
	const char *name = machine_name(e_machine);
	size_t len;
	int n;

	n = snprintf(buf, size, "e_machine %u%s%s%s: this build has no arch "
		     "for it (it has", e_machine, name ? " (" : "",
		     name ? name : "", name ? ")" : "");
	for (size_t i = 0; i < ARCH_COUNT && n >= 0; i++) {
		len = strlen(buf);
		if (len >= size)
			break;
		n = snprintf(buf + len, size - len, "%s %s", i ? "," : "",
			     arch_table[i]->name);
	}
	len = strlen(buf);
	if (len < size)
		snprintf(buf + len, size - len, ")");
	return buf;
}

int arch_insn_decode_in(const struct arch_ops *ops, const uint8_t *func,
			size_t func_size, uint64_t func_addr, uint64_t addr,
			struct arch_insn *insn)
{
	uint64_t off = (addr & ~1ull) - (func_addr & ~1ull);

	if (ops->insn_decode_in)
		return ops->insn_decode_in(func, func_size, func_addr, addr, insn);
	if (off > func_size) {
		memset(insn, 0, sizeof(*insn));
		insn->addr = addr;
		insn->strategy = ARCH_REJECT;
		insn->reason = "outside the function";
		return -EILSEQ;
	}
	return ops->insn_decode(func + off, func_size - off, addr, insn);
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

static uint64_t distance(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

bool arch_xol_in_reach(const struct arch_ops *ops, uint64_t addr, uint64_t at,
		       uint64_t len)
{
	uint64_t last = at + (len ? len - 1 : 0);

	if (last < at)		/* wraps around the address space */
		return false;
	return distance(at, addr) < ops->xol_reach &&
	       distance(last, addr) < ops->xol_reach;
}

struct xml_out {
	char *buf;
	size_t size, len;
	bool overflow;
};

static void xml_put(struct xml_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void xml_put(struct xml_out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->overflow)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->size - o->len)
		o->overflow = true;
	else
		o->len += n;
}

int arch_write_target_xml(const char *gdb_arch, const struct arch_reg *regs,
			  unsigned int n, const struct arch_xml_types *types,
			  char *buf, size_t size)
{
	struct xml_out o = { buf, size, 0, false };
	const char *open_feature = NULL;

	if (size == 0)
		return -ENOSPC;
	xml_put(&o, "<?xml version=\"1.0\"?>\n"
		    "<!DOCTYPE target SYSTEM \"gdb-target.dtd\">\n"
		    "<target>\n"
		    "  <architecture>%s</architecture>\n"
		    "  <osabi>GNU/Linux</osabi>\n", gdb_arch);
	for (unsigned int i = 0; i < n; i++) {
		const struct arch_reg *r = &regs[i];

		if (!open_feature || strcmp(open_feature, r->feature) != 0) {
			if (open_feature)
				xml_put(&o, "  </feature>\n");
			open_feature = r->feature;
			xml_put(&o, "  <feature name=\"%s\">\n", r->feature);
			for (const struct arch_xml_types *t = types; t && t->feature; t++)
				if (strcmp(t->feature, r->feature) == 0)
					xml_put(&o, "%s", t->text);
		}
		xml_put(&o, "    <reg name=\"%s\" bitsize=\"%u\" regnum=\"%u\"",
			r->name, r->bitsize, i);
		if (r->type)
			xml_put(&o, " type=\"%s\"", r->type);
		if (r->group)
			xml_put(&o, " group=\"%s\"", r->group);
		xml_put(&o, "/>\n");
	}
	if (open_feature)
		xml_put(&o, "  </feature>\n");
	xml_put(&o, "</target>\n");
	return o.overflow ? -ENOSPC : (int)o.len;
}

int arch_xol_fixup(const struct arch_insn *insn, const struct arch_xol *xol,
		   struct arch_gpregs *regs)
{
	if (regs->pc != xol->slot + xol->insn_len)
		return -EINVAL;
	regs->pc = insn->addr + insn->len;
	if (xol->scratch_gpr >= 0)
		regs->gpr[xol->scratch_gpr] = xol->scratch_saved;
	return 0;
}
