/*
 * x86_64-classify.c - which strategy a probe on one instruction uses.
 *
 * The kprobe-booster reasoning, applied to user space.  A probe hit stops
 * the thread once, at the int3.  From there the agent either
 *
 *   emulate  computes the instruction's effect on the registers (and the
 *            stack, through memory callbacks) and resumes after it: no
 *            slot, the cheapest;
 *   boost    resumes at a copy in an out-of-line (XOL) slot followed by a
 *            jump back; correct for every instruction whose behaviour does
 *            not depend on where it runs, once RIP-relative operands are
 *            re-encoded for the slot;
 *   step     single-steps the copy and fixes registers up afterwards;
 *   reject   refuses the probe, with a reason a user can read.
 *
 * Classifiers are tried in a chain; each returns -ENOSYS for "not mine",
 * so a new class of emulated instruction is one more link and nothing
 * else.  The boostable opcodes are 256-bit tables written as 16 rows of
 * 16 digits, in the layout of the SDM opcode maps; the instructions that
 * are never supported, and why, are the table x86_64_never below.
 *
 * "step" is never chosen here: every instruction that runs out of line at
 * all can jump back by itself when the slot is within +-2 GiB of it (the
 * XOL area is placed so).  xol_prepare falls back to a single step only
 * when the slot is out of reach and the instruction has a RIP-relative
 * operand and uses the stack pointer (no scratch register can be saved
 * in the slot then); see x86_64-relocate.c.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>

#include "arch/x86_64/x86_64.h"

/* rflags bits */
#define CF (1u << 0)
#define PF (1u << 2)
#define ZF (1u << 6)
#define SF (1u << 7)
#define OF (1u << 11)

/*
 * The sixteen conditions, written once: condition code, mnemonic suffix,
 * and its value from the flags `f`.  Expanded below into the jcc
 * predicate (case labels), the evaluator and the names.
 */
#define X86_64_JCC(X) \
	X(0x0, "o",  (f & OF)) \
	X(0x1, "no", !(f & OF)) \
	X(0x2, "b",  (f & CF)) \
	X(0x3, "ae", !(f & CF)) \
	X(0x4, "e",  (f & ZF)) \
	X(0x5, "ne", !(f & ZF)) \
	X(0x6, "be", (f & CF) || (f & ZF)) \
	X(0x7, "a",  !(f & CF) && !(f & ZF)) \
	X(0x8, "s",  (f & SF)) \
	X(0x9, "ns", !(f & SF)) \
	X(0xa, "p",  (f & PF)) \
	X(0xb, "np", !(f & PF)) \
	X(0xc, "l",  !(f & SF) != !(f & OF)) \
	X(0xd, "ge", !(f & SF) == !(f & OF)) \
	X(0xe, "le", (f & ZF) || !(f & SF) != !(f & OF)) \
	X(0xf, "g",  !(f & ZF) && !(f & SF) == !(f & OF))

bool x86_64_jcc_eval(unsigned int cond, uint64_t f)
{
	switch (cond & 15) {
#define X(cc, name, expr) case cc: return (expr);
	X86_64_JCC(X)
#undef X
	}
	return false;
}

const char *x86_64_jcc_name(unsigned int cond)
{
	static const char *const names[16] = {
#define X(cc, name, expr) [cc] = name,
		X86_64_JCC(X)
#undef X
	};
	return names[cond & 15];
}

/* Returns the condition code of a jcc (rel8 or rel32), or -1. */
int x86_64_is_jcc(const struct x86_64_insn *in)
{
	if (in->enc != X86_64_ENC_LEGACY)
		return -1;
	if (in->map == X86_64_MAP_1BYTE) {
		switch (in->opcode) {
#define X(cc, name, expr) case 0x70 + cc:
		X86_64_JCC(X)
#undef X
			return in->opcode & 15;
		}
	} else if (in->map == X86_64_MAP_0F) {
		switch (in->opcode) {
#define X(cc, name, expr) case 0x80 + cc:
		X86_64_JCC(X)
#undef X
			return in->opcode & 15;
		}
	}
	return -1;
}

/* One row of a 256-bit opcode table: 16 digits, opcode x0 first. */
#define ROW(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p) \
	((a) << 0 | (b) << 1 | (c) << 2 | (d) << 3 | (e) << 4 | (f) << 5 | \
	 (g) << 6 | (h) << 7 | (i) << 8 | (j) << 9 | (k) << 10 | (l) << 11 | \
	 (m) << 12 | (n) << 13 | (o) << 14 | (p) << 15)

/*
 * Opcodes that run correctly from a slot (1 = boostable).  What is 0 here
 * is emulated (branches, ret), is a prefix or escape, is invalid in 64-bit
 * mode, or is in x86_64_never.
 */
static const uint16_t x86_64_boost_1byte[16] = {
	/*      0 1 2 3 4 5 6 7 8 9 a b c d e f */
	ROW(1,1,1,1,1,1,0,0,1,1,1,1,1,1,0,0),	/* 0x add, or */
	ROW(1,1,1,1,1,1,0,0,1,1,1,1,1,1,0,0),	/* 1x adc, sbb */
	ROW(1,1,1,1,1,1,0,0,1,1,1,1,1,1,0,0),	/* 2x and, sub */
	ROW(1,1,1,1,1,1,0,0,1,1,1,1,1,1,0,0),	/* 3x xor, cmp */
	ROW(0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0),	/* 4x REX */
	ROW(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1),	/* 5x push, pop */
	ROW(0,0,0,1,0,0,0,0,1,1,1,1,1,1,1,1),	/* 6x movsxd, push imm, imul, ins, outs */
	ROW(0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0),	/* 7x jcc: emulated */
	ROW(1,1,0,1,1,1,1,1,1,1,1,1,1,1,1,1),	/* 8x grp1, test, xchg, mov, lea, pop */
	ROW(1,1,1,1,1,1,1,1,1,1,0,1,1,1,1,1),	/* 9x xchg, cbw, cwd, fwait, pushf, popf */
	ROW(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1),	/* ax moffs, string ops */
	ROW(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1),	/* bx mov imm */
	ROW(1,1,0,0,0,0,1,1,1,1,0,0,0,0,0,0),	/* cx grp2, mov, enter, leave */
	ROW(1,1,1,1,0,0,0,1,1,1,1,1,1,1,1,1),	/* dx grp2, xlat, x87 */
	ROW(0,0,0,0,1,1,1,1,0,0,0,0,1,1,1,1),	/* ex in, out (branches emulated) */
	ROW(0,0,0,0,0,1,1,1,1,1,0,0,1,1,1,1),	/* fx cmc, grp3, flags, grp4, grp5 */
};

static const uint16_t x86_64_boost_0f[16] = {
	/*      0 1 2 3 4 5 6 7 8 9 a b c d e f */
	ROW(1,1,1,1,0,1,0,0,0,0,0,0,0,1,1,1),	/* 0x grp6, grp7, lar, lsl, syscall, prefetch, 3DNow */
	ROW(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1),	/* 1x SSE moves, hint nops */
	ROW(0,0,0,0,0,0,0,0,1,1,1,1,1,1,1,1),	/* 2x SSE (mov cr/dr privileged) */
	ROW(0,1,0,1,0,0,0,0,0,0,0,0,0,0,0,0),	/* 3x rdtsc, rdpmc */
	ROW(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1),	/* 4x cmovcc */
	ROW(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1),	/* 5x */
	ROW(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1),	/* 6x */
	ROW(1,1,1,1,1,1,1,1,1,1,0,0,1,1,1,1),	/* 7x */
	ROW(0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0),	/* 8x jcc rel32: emulated */
	ROW(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1),	/* 9x setcc */
	ROW(1,1,1,1,1,1,0,0,1,1,0,1,1,1,1,1),	/* ax push/pop fs gs, cpuid, bt, shld, shrd, grp15 */
	ROW(1,1,1,1,1,1,1,1,1,0,1,1,1,1,1,1),	/* bx cmpxchg, movzx, popcnt, grp8, bsf */
	ROW(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1),	/* cx xadd, grp9, bswap */
	ROW(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1),	/* dx */
	ROW(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1),	/* ex */
	ROW(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,0),	/* fx (ud0 never) */
};

static bool bit(const uint16_t *t, uint8_t op)
{
	return (t[op >> 4] >> (op & 15)) & 1;
}

/*
 * Never supported, and why.  `reg` is the ModRM.reg the entry applies
 * to, -1 for any; `modrm` an exact ModRM byte, -1 for any.
 */
struct x86_64_never_entry {
	enum x86_64_map map;
	uint8_t opcode;
	int reg, modrm;
	const char *reason;
};

static const struct x86_64_never_entry x86_64_never[] = {
	{ X86_64_MAP_1BYTE, 0xcc, -1, -1,
	  "int3: already a breakpoint; the probe would hide the program's own trap" },
	{ X86_64_MAP_1BYTE, 0xcd, -1, -1,
	  "int n: software interrupt; the kernel would report the slot address" },
	{ X86_64_MAP_1BYTE, 0xf1, -1, -1,
	  "int1 (icebp): raises a debug trap meant for a debugger" },
	{ X86_64_MAP_1BYTE, 0xcf, -1, -1,
	  "iret: reloads cs:rip and rflags from the stack" },
	{ X86_64_MAP_1BYTE, 0xca, -1, -1,
	  "far ret: reloads cs from the stack" },
	{ X86_64_MAP_1BYTE, 0xcb, -1, -1,
	  "far ret: reloads cs from the stack" },
	{ X86_64_MAP_1BYTE, 0xff, 3, -1, "far call: loads a new cs" },
	{ X86_64_MAP_1BYTE, 0xff, 5, -1, "far jmp: loads a new cs" },
	{ X86_64_MAP_1BYTE, 0xf4, -1, -1,
	  "hlt: privileged, always faults in user mode" },
	{ X86_64_MAP_1BYTE, 0xfa, -1, -1,
	  "cli: privileged, faults in user mode" },
	{ X86_64_MAP_1BYTE, 0xfb, -1, -1,
	  "sti: privileged, faults in user mode" },
	{ X86_64_MAP_1BYTE, 0xc7, -1, 0xf8,
	  "xbegin: an int3 aborts the transaction and the abort address is relative" },
	{ X86_64_MAP_0F, 0x0b, -1, -1,
	  "ud2: raises SIGILL by design" },
	{ X86_64_MAP_0F, 0xb9, -1, -1,
	  "ud1: raises SIGILL by design" },
	{ X86_64_MAP_0F, 0xff, -1, -1,
	  "ud0: raises SIGILL by design" },
	{ X86_64_MAP_0F, 0x07, -1, -1,
	  "sysret: privileged" },
	{ X86_64_MAP_0F, 0x34, -1, -1,
	  "sysenter: not available to 64-bit user code" },
	{ X86_64_MAP_0F, 0x35, -1, -1,
	  "sysexit: privileged" },
	{ X86_64_MAP_0F, 0xaa, -1, -1,
	  "rsm: privileged" },
	{ X86_64_MAP_0F, 0x06, -1, -1,
	  "clts: privileged" },
	{ X86_64_MAP_0F, 0x08, -1, -1,
	  "invd: privileged" },
	{ X86_64_MAP_0F, 0x09, -1, -1,
	  "wbinvd: privileged" },
	{ X86_64_MAP_0F, 0x30, -1, -1,
	  "wrmsr: privileged" },
	{ X86_64_MAP_0F, 0x32, -1, -1,
	  "rdmsr: privileged" },
	{ X86_64_MAP_0F, 0x20, -1, -1, "mov from cr: privileged" },
	{ X86_64_MAP_0F, 0x21, -1, -1, "mov from dr: privileged" },
	{ X86_64_MAP_0F, 0x22, -1, -1, "mov to cr: privileged" },
	{ X86_64_MAP_0F, 0x23, -1, -1, "mov to dr: privileged" },
	{ X86_64_MAP_0F, 0x37, -1, -1, "getsec: privileged (SMX)" },
};

/* Link 1: never supported. */
static int classify_never(const struct x86_64_insn *in,
			  enum arch_strategy *s, const char **reason)
{
	if (in->enc != X86_64_ENC_LEGACY)
		return -ENOSYS;
	for (size_t i = 0; i < sizeof(x86_64_never) / sizeof(x86_64_never[0]); i++) {
		const struct x86_64_never_entry *e = &x86_64_never[i];

		if (e->map != in->map || e->opcode != in->opcode)
			continue;
		if (e->reg >= 0 && (!in->has_modrm || ((in->modrm >> 3) & 7) != e->reg))
			continue;
		if (e->modrm >= 0 && (!in->has_modrm || in->modrm != e->modrm))
			continue;
		*s = ARCH_REJECT;
		*reason = e->reason;
		return 0;
	}
	if (in->is_rel_branch && in->opsize == 2 &&
	    in->prefixes & X86_64_PFX_OPSIZE) {
		*s = ARCH_REJECT;
		*reason = "66-prefixed near branch: Intel ignores the prefix, "
			  "AMD truncates the target to 16 bits";
		return 0;
	}
	return -ENOSYS;
}

/* True when a memory operand needs a segment base the emulator lacks. */
static bool uses_fs_gs(const struct x86_64_insn *in)
{
	return in->prefixes & (X86_64_PFX_FS | X86_64_PFX_GS);
}

/* The emulated forms; see x86_64-emulate.c for their semantics. */
const char *x86_64_emulated_form(const struct x86_64_insn *in)
{
	bool mem = in->has_modrm && in->mod != 3;
	uint8_t op = in->opcode, r3 = (in->modrm >> 3) & 7;
	bool w48 = in->opsize == 4 || in->opsize == 8;
	int cc;

	if (in->enc != X86_64_ENC_LEGACY || (in->prefixes & X86_64_PFX_LOCK))
		return NULL;
	if (in->prefixes & X86_64_PFX_ADSIZE)
		return NULL;
	if (mem && uses_fs_gs(in))
		return NULL;
	if ((cc = x86_64_is_jcc(in)) >= 0)
		return in->imm_size == 1 ? "jcc rel8" : "jcc rel32";

	if (in->map == X86_64_MAP_0F) {
		if (op == 0x1f && r3 == 0)
			return "nop r/m";
		if (op == 0x1e && (in->prefixes & X86_64_PFX_REP) &&
		    (in->modrm == 0xfa || in->modrm == 0xfb))
			return in->modrm == 0xfa ? "endbr64" : "endbr32";
		return NULL;
	}
	if (in->map != X86_64_MAP_1BYTE)
		return NULL;

	switch (op) {
	case 0x50 ... 0x57:
		return in->opsize == 2 ? NULL : "push r64";
	case 0x58 ... 0x5f:
		return in->opsize == 2 ? NULL : "pop r64";
	case 0x68:
	case 0x6a:
		return in->opsize == 2 ? NULL : "push imm";
	case 0x90:
		if (in->rex & 1)
			return NULL;	/* 41 90 is xchg %eax,%r8d */
		return (in->prefixes & X86_64_PFX_REP) ? "pause" : "nop";
	case 0xeb:
		return "jmp rel8";
	case 0xe9:
		return "jmp rel32";
	case 0xe8:
		return "call rel32";
	case 0xc3:
		return in->opsize == 2 ? NULL : "ret";
	case 0xc2:
		return in->opsize == 2 ? NULL : "ret imm16";
	case 0xe0: return "loopne rel8";
	case 0xe1: return "loope rel8";
	case 0xe2: return "loop rel8";
	case 0xe3: return "jrcxz rel8";
	case 0xff:
		if (r3 == 2 && in->opsize != 2)
			return mem ? "call *mem" : "call *reg";
		if (r3 == 4 && in->opsize != 2)
			return mem ? "jmp *mem" : "jmp *reg";
		return NULL;
	case 0x89:
	case 0x8b:
		if (!w48)
			return NULL;
		if (!mem)
			return "mov reg, reg";
		return op == 0x8b ? "mov mem, reg" : NULL;
	case 0xb8 ... 0xbf:
		return w48 ? "mov imm, reg" : NULL;
	case 0xc7:
		return (r3 == 0 && !mem && w48) ? "mov imm, reg" : NULL;
	case 0x8d:
		return (mem && w48) ? "lea" : NULL;
	case 0x01: case 0x03: case 0x09: case 0x0b:
	case 0x21: case 0x23: case 0x29: case 0x2b:
	case 0x31: case 0x33:
		return (w48 && !mem) ? "alu reg, reg" : NULL;
	case 0x39: case 0x3b: case 0x85:
		return mem ? "cmp/test mem, reg" : (w48 ? "cmp/test reg, reg" : NULL);
	case 0x38: case 0x3a: case 0x84:
		return mem ? "cmp/test mem8, reg8" : NULL;
	case 0x81: case 0x83:
		if (r3 == 2 || r3 == 3)
			return NULL;	/* adc, sbb */
		if (!mem)
			return w48 ? "alu imm, reg" : NULL;
		return r3 == 7 ? "cmp imm, mem" : NULL;
	case 0x80:
		return (mem && r3 == 7) ? "cmp imm, mem8" : NULL;
	case 0xf6:
	case 0xf7:
		return (mem && r3 == 0) ? "test imm, mem" : NULL;
	}
	return NULL;
}

/* Link 2: emulated. */
static int classify_emulate(const struct x86_64_insn *in,
			    enum arch_strategy *s, const char **reason)
{
	const char *form = x86_64_emulated_form(in);

	if (!form)
		return -ENOSYS;
	*s = ARCH_EMULATE;
	*reason = form;
	return 0;
}

/* Link 3: boosted, i.e. runs unchanged from a slot (RIP-relative fixed). */
static int classify_boost(const struct x86_64_insn *in,
			  enum arch_strategy *s, const char **reason)
{
	bool ok;

	switch (in->map) {
	case X86_64_MAP_1BYTE:
		ok = bit(x86_64_boost_1byte, in->opcode);
		if (ok && in->opcode == 0xff)
			ok = ((in->modrm >> 3) & 7) != 7;
		if (ok && in->opcode == 0xfe)
			ok = ((in->modrm >> 3) & 7) < 2;
		break;
	case X86_64_MAP_0F:
		ok = in->enc != X86_64_ENC_LEGACY || bit(x86_64_boost_0f, in->opcode);
		break;
	default:
		ok = true;	/* 0f38, 0f3a, 3DNow, VEX/EVEX/XOP maps */
		break;
	}
	if (!ok)
		return -ENOSYS;
	*s = ARCH_BOOST;
	if (in->map == X86_64_MAP_1BYTE && in->opcode == 0xff &&
	    ((in->modrm >> 3) & 7) == 2)
		*reason = "indirect call: slot pushes the original return address";
	else if (in->map == X86_64_MAP_1BYTE && in->opcode == 0xff &&
		 ((in->modrm >> 3) & 7) == 4)
		*reason = "indirect jmp: runs from the slot, never comes back";
	else if (in->rip_relative)
		*reason = "RIP-relative operand re-encoded for the slot "
			  "(step if the slot is out of +-2 GiB and it uses rsp)";
	else
		*reason = "runs unchanged from the slot";
	return 0;
}

int x86_64_classify(const struct x86_64_insn *in, const char **reason)
{
	static int (*const chain[])(const struct x86_64_insn *,
				    enum arch_strategy *, const char **) = {
		classify_never,
		classify_emulate,
		classify_boost,
	};
	enum arch_strategy s;

	for (size_t i = 0; i < sizeof(chain) / sizeof(chain[0]); i++) {
		int err = chain[i](in, &s, reason);

		if (err == 0)
			return s;
		if (err != -ENOSYS)
			return err;
	}
	*reason = "not known to run correctly out of line";
	return ARCH_REJECT;
}
