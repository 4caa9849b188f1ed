/*
 * aarch64-decode.c - A64 words to struct aarch64_insn.
 *
 * Every A64 instruction is one 32-bit word, so decoding is a table of
 * (mask, value) rows tried from the top: the first row with
 * (word & mask) == value names the instruction.  Each row carries the
 * encoding's bit layout in a comment (Arm ARM names: sf, op, Rn ...), so
 * the table can be checked against the manual by eye.  The rows come in
 * the order of the manual's top-level groups, bits 28:25 (op0):
 *
 *   0000        reserved (UDF) / SME          0001, 0011  unallocated
 *   0010        SVE                           100x        data proc. immediate
 *   101x        branches, exceptions, system  x1x0        loads and stores
 *   x101        data processing, register     x111        SIMD and FP
 *
 * Only the instructions the engine must treat specially get rows of
 * their own: those that read the PC (branches, ADR/ADRP, literal loads),
 * those that cannot run out of line (with the reason), and the nops that
 * are simulated.  The branch / exception / system group is listed in
 * full, because an unknown word there may read the PC or trap: whatever
 * that group's rows do not name is rejected.  In the other groups an
 * allocated instruction runs unchanged from a slot, and the last rows
 * name the group.  Unallocated encodings inside those groups are not all
 * detected here: such a word raises SIGILL in the slot as it would in
 * place, and the agent moves the pc back to the probe (probe_fix_pc).
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>

#include "arch/nzcv.h"
#include "arch/aarch64/aarch64.h"

struct aarch64_row {
	uint32_t mask, value;
	enum aarch64_op op;
	const char *name;	/* mnemonic / form: the reason users see */
	const char *reason;	/* AARCH64_OP_REJECT: why not */
};

#define PRIV "privileged: undefined at EL0, SIGILL wherever it runs"

/*
 * The decode table.  Bit layouts: upper case are fields, 0/1 fixed bits,
 * x any.  Order matters only where rows overlap: the specific first.
 */
static const struct aarch64_row aarch64_rows[] = {
	/* ---- 101x: branches ---- */
	/* op 00101 imm26 */
	{ 0xfc000000, 0x14000000, AARCH64_OP_B, "b", NULL },
	{ 0xfc000000, 0x94000000, AARCH64_OP_BL, "bl", NULL },
	/* 0101010 0 imm19 o0 cond  (o0 = 1: BC.cond, a hint of consistency) */
	{ 0xff000000, 0x54000000, AARCH64_OP_BCOND, "b.cond", NULL },
	/* sf 011010 op imm19 Rt */
	{ 0x7f000000, 0x34000000, AARCH64_OP_CBZ, "cbz", NULL },
	{ 0x7f000000, 0x35000000, AARCH64_OP_CBNZ, "cbnz", NULL },
	/* b5 011011 op b40 imm14 Rt */
	{ 0x7f000000, 0x36000000, AARCH64_OP_TBZ, "tbz", NULL },
	{ 0x7f000000, 0x37000000, AARCH64_OP_TBNZ, "tbnz", NULL },
	/* 1101011 0 0 op(2) 11111 000000 Rn 00000 */
	{ 0xfffffc1f, 0xd61f0000, AARCH64_OP_BR, "br", NULL },
	{ 0xfffffc1f, 0xd63f0000, AARCH64_OP_BLR, "blr", NULL },
	{ 0xfffffc1f, 0xd65f0000, AARCH64_OP_RET, "ret", NULL },
	/* pointer authentication: 1101011 Z 0 op(2) 11111 00001 M Rn Rm */
	{ 0xfffff81f, 0xd61f081f, AARCH64_OP_BRA, "braaz/brabz", NULL },
	{ 0xfffff81f, 0xd63f081f, AARCH64_OP_BLRA, "blraaz/blrabz", NULL },
	{ 0xfffffbff, 0xd65f0bff, AARCH64_OP_RETA, "retaa/retab", NULL },
	{ 0xfffff800, 0xd71f0800, AARCH64_OP_BRA, "braa/brab", NULL },
	{ 0xfffff800, 0xd73f0800, AARCH64_OP_BLRA, "blraa/blrab", NULL },
	/* 1101011 0 1x0 11111 0000xx 11111 00000: ERET, ERETAA/AB, DRPS */
	{ 0xffdf0000, 0xd69f0000, AARCH64_OP_REJECT, "eret/drps",
	  PRIV " (exception return)" },
	{ 0xfe000000, 0xd6000000, AARCH64_OP_REJECT, "branch (register)",
	  "unallocated or unknown branch: it may read the pc" },

	/* ---- 101x: exception generation: 11010100 opc imm16 op2 LL ---- */
	{ 0xffe0001f, 0xd4000001, AARCH64_OP_REJECT, "svc",
	  "svc: a system call from the slot would be restarted, and seen "
	  "stopped, at the slot's address" },
	{ 0xffe0001f, 0xd4000002, AARCH64_OP_REJECT, "hvc", PRIV },
	{ 0xffe0001f, 0xd4000003, AARCH64_OP_REJECT, "smc", PRIV },
	{ 0xffe0001f, 0xd4200000, AARCH64_OP_REJECT, "brk",
	  "brk: already a breakpoint; the probe would hide the program's own trap" },
	{ 0xffe0001f, 0xd4400000, AARCH64_OP_REJECT, "hlt",
	  "hlt: halting debug, SIGILL in user space" },
	{ 0xffe0001f, 0xd4600000, AARCH64_OP_REJECT, "tcancel",
	  "tcancel: ends a memory transaction the probe's trap already aborted" },
	{ 0xffe0001c, 0xd4a00000, AARCH64_OP_REJECT, "dcps", PRIV },
	{ 0xff000000, 0xd4000000, AARCH64_OP_REJECT, "exception",
	  "unallocated exception-generating encoding" },

	/* ---- 101x: system: 1101010100 L op0(2) op1(3) CRn CRm op2 Rt ---- */
	/* NOP: hint #0 */
	{ 0xffffffff, 0xd503201f, AARCH64_OP_NOP, "nop", NULL },
	/* BTI {c,j,jc}: hint #32-38 even: 11010101000000110010 0100 xx0 11111 */
	{ 0xffffff3f, 0xd503241f, AARCH64_OP_BTI, "bti", NULL },
	/* other hints (yield, wfe, wfi, sev, paciasp, autiasp, xpaclri, csdb,
	 * esb, psb, tsb, chkfeat ...): 11010101000000110010 CRm op2 11111 */
	{ 0xfffff01f, 0xd503201f, AARCH64_OP_OTHER, "hint", NULL },
	/* clrex, dsb, dmb, isb, sb, tcommit: ... 0011 CRm op2 11111 */
	{ 0xfffff01f, 0xd503301f, AARCH64_OP_OTHER, "barrier", NULL },
	/* WFET / WFIT Xt: 110101010000001100010000 op2 Rt */
	{ 0xffffffc0, 0xd5031000, AARCH64_OP_OTHER, "wfet/wfit", NULL },
	/* MSR (immediate) to PSTATE: 1101010100000 op1 0100 CRm op2 11111.
	 * EL0 may write DIT, SSBS and TCO, plain bits that travel in SPSR
	 * across the probe's trap: they run from a slot.  SMSTART/SMSTOP
	 * (SVCR) reshape the register file under the agent; the rest are
	 * EL1 fields.  CFINV, XAFLAG, AXFLAG (op1 0, CRm 0) only move NZCV. */
	{ 0xffffffff, 0xd500401f, AARCH64_OP_OTHER, "cfinv", NULL },
	{ 0xffffffff, 0xd500403f, AARCH64_OP_OTHER, "xaflag", NULL },
	{ 0xffffffff, 0xd500405f, AARCH64_OP_OTHER, "axflag", NULL },
	{ 0xfffff0ff, 0xd503405f, AARCH64_OP_OTHER, "msr dit, #imm", NULL },
	{ 0xfffff0ff, 0xd503403f, AARCH64_OP_OTHER, "msr ssbs, #imm", NULL },
	{ 0xfffff0ff, 0xd503409f, AARCH64_OP_OTHER, "msr tco, #imm", NULL },
	{ 0xfffff0ff, 0xd503407f, AARCH64_OP_REJECT, "smstart/smstop",
	  "smstart/smstop: switches streaming SVE mode, which resizes and "
	  "zeroes the vector registers the agent holds for the hit" },
	{ 0xfff8f01f, 0xd500401f, AARCH64_OP_REJECT, "msr pstate, #imm",
	  "msr to a PSTATE field other than dit, ssbs, tco: " PRIV },
	/* TSTART / TTEST Xt: 1101010100100011 0011 000x 011 Rt */
	{ 0xfffffee0, 0xd5233060, AARCH64_OP_OTHER, "tstart/ttest", NULL },
	/* SYS / SYSL: 1101010100 L 01 op1 CRn CRm op2 Rt.  op1 = 3 is the EL0
	 * space (dc zva, dc cvau, ic ivau, the GCS push/pop): addresses come
	 * from registers, so they run from a slot. */
	{ 0xffdf0000, 0xd50b0000, AARCH64_OP_OTHER, "sys (EL0: dc, ic, gcs)", NULL },
	{ 0xffd80000, 0xd5080000, AARCH64_OP_REJECT, "sys", PRIV " (tlbi, at, EL1 dc)" },
	/* MSR SVCR, Xt (S3_3_C4_C2_2): smstart/smstop by another name */
	{ 0xffffffe0, 0xd51b4240, AARCH64_OP_REJECT, "msr svcr",
	  "msr svcr: switches streaming SVE mode, which resizes and zeroes "
	  "the vector registers the agent holds for the hit" },
	/* MRS: 1101010100 1 1 o0 op1 CRn CRm op2 Rt.  Every read is position
	 * independent (counters, tpidr, nzcv, fpcr; ID registers the kernel
	 * emulates and steps over, pc + 4, the same in a slot). */
	{ 0xfff00000, 0xd5300000, AARCH64_OP_OTHER, "mrs", NULL },
	/* MSR (register) of an EL0 register (op0 3, op1 3: nzcv, fpcr,
	 * fpsr, tpidr_el0, tpidr2_el0 ...): its effect does not depend on
	 * where it runs. */
	{ 0xffff0000, 0xd51b0000, AARCH64_OP_OTHER, "msr (EL0 register)", NULL },
	{ 0xfff00000, 0xd5100000, AARCH64_OP_REJECT, "msr", PRIV " (EL1 register)" },
	{ 0xff000000, 0xd5000000, AARCH64_OP_REJECT, "system",
	  "unallocated or unknown system instruction (sysp, msrr, mrrs ...)" },
	/* anything else in 101x: CB<cc> (cmpbr), pointer auth with a pc
	 * label (retaasppc ...), unallocated: it may read the pc. */
	{ 0x1c000000, 0x14000000, AARCH64_OP_REJECT, "branch",
	  "unallocated or unknown branch/system encoding: it may read the pc" },

	/* ---- 100x: data processing, immediate ---- */
	/* op immlo 10000 immhi Rd */
	{ 0x9f000000, 0x10000000, AARCH64_OP_ADR, "adr", NULL },
	{ 0x9f000000, 0x90000000, AARCH64_OP_ADRP, "adrp", NULL },
	{ 0x1c000000, 0x10000000, AARCH64_OP_OTHER, "data processing (immediate)", NULL },

	/* ---- x1x0: loads and stores ---- */
	/* literal: opc 011 V 00 imm19 Rt */
	{ 0xff000000, 0x18000000, AARCH64_OP_LDR_LIT, "ldr wt, literal", NULL },
	{ 0xff000000, 0x58000000, AARCH64_OP_LDR_LIT, "ldr xt, literal", NULL },
	{ 0xff000000, 0x98000000, AARCH64_OP_LDR_LIT, "ldrsw xt, literal", NULL },
	{ 0xff000000, 0xd8000000, AARCH64_OP_PRFM_LIT, "prfm, literal", NULL },
	{ 0xff000000, 0x1c000000, AARCH64_OP_LDR_LIT_FP, "ldr st, literal", NULL },
	{ 0xff000000, 0x5c000000, AARCH64_OP_LDR_LIT_FP, "ldr dt, literal", NULL },
	{ 0xff000000, 0x9c000000, AARCH64_OP_LDR_LIT_FP, "ldr qt, literal", NULL },
	{ 0x3b000000, 0x18000000, AARCH64_OP_REJECT, "literal",
	  "unallocated literal load" },
	/* exclusive register: size 001000 0 L 0 Rs o0 Rt2 Rn Rt
	 * (ldxr ldaxr stxr stlxr and their b / h forms) */
	{ 0x3fe00000, 0x08400000, AARCH64_OP_LDX, "ldxr/ldaxr", NULL },
	{ 0x3fe00000, 0x08000000, AARCH64_OP_STX, "stxr/stlxr", NULL },
	/* exclusive pair: 1 sz 001000 0 L 1 Rs o0 Rt2 Rn Rt */
	{ 0xbfe00000, 0x88600000, AARCH64_OP_LDX, "ldxp/ldaxp", NULL },
	{ 0xbfe00000, 0x88200000, AARCH64_OP_STX, "stxp/stlxp", NULL },
	/* (0 sz 001000 0 L 1 is CASP; 001000 1xx are LDAR, STLR, CAS:
	 * single instructions, fine in a slot) */
	/* memory copy / set (FEAT_MOPS): sz 011 o0 01 op1 0 Rs op2 01 Rn Rd */
	{ 0x3b200c00, 0x19000400, AARCH64_OP_REJECT, "cpy*/set*",
	  "memory copy/set: prologue, main and epilogue run as one sequence; "
	  "an interrupted one is restarted by the kernel relative to the pc" },
	{ 0x0a000000, 0x08000000, AARCH64_OP_OTHER, "load/store", NULL },

	/* ---- x101 data processing (register), x111 SIMD and FP ---- */
	{ 0x0e000000, 0x0a000000, AARCH64_OP_OTHER, "data processing (register)", NULL },
	{ 0x0e000000, 0x0e000000, AARCH64_OP_OTHER, "simd/fp", NULL },

	/* ---- 0010 SVE, 0000 with bit 31 SME ---- */
	{ 0x1e000000, 0x04000000, AARCH64_OP_OTHER, "sve", NULL },
	{ 0x9e000000, 0x80000000, AARCH64_OP_OTHER, "sme", NULL },
	/* 0 00 0000 000000000 imm16 */
	{ 0xffff0000, 0x00000000, AARCH64_OP_REJECT, "udf",
	  "udf: permanently undefined, raises SIGILL by design" },
};

/* The conditions are those of A32 (arch/nzcv.c), PSTATE's flags where
 * CPSR has them. */
bool aarch64_cond_eval(unsigned int cond, uint64_t pstate)
{
	return nzcv_cond_holds(cond, pstate);
}

const char *aarch64_cond_name(unsigned int cond)
{
	return nzcv_cond_name(cond);
}

/* The fields of the PC readers; everything else needs none. */
static void fields(struct aarch64_insn *in)
{
	uint32_t w = in->word;
	uint64_t a = in->addr;
	int64_t off;

	in->rd = w & 31;
	in->rn = (w >> 5) & 31;
	in->rm = w & 31;
	switch (in->op) {
	case AARCH64_OP_B:
	case AARCH64_OP_BL:
		in->target = a + (uint64_t)(aarch64_sext(w, 26) * 4);
		break;
	case AARCH64_OP_BCOND:
		in->cond = w & 15;
		in->target = a + (uint64_t)(aarch64_sext(w >> 5, 19) * 4);
		break;
	case AARCH64_OP_CBZ:
	case AARCH64_OP_CBNZ:
		in->sf = w >> 31;
		in->target = a + (uint64_t)(aarch64_sext(w >> 5, 19) * 4);
		break;
	case AARCH64_OP_TBZ:
	case AARCH64_OP_TBNZ:
		in->bit = (uint8_t)(((w >> 31) << 5) | ((w >> 19) & 31));
		in->target = a + (uint64_t)(aarch64_sext(w >> 5, 14) * 4);
		break;
	case AARCH64_OP_BRA:
	case AARCH64_OP_BLRA:
		/* Z (bit 24) clear: the modifier is zero (BRAAZ, BLRAAZ) */
		in->zmod = !(w & (1u << 24));
		break;
	case AARCH64_OP_ADR:
		off = aarch64_sext(((w >> 5) & 0x7ffff) << 2 | ((w >> 29) & 3), 21);
		in->target = a + (uint64_t)off;
		break;
	case AARCH64_OP_ADRP:
		off = aarch64_sext(((w >> 5) & 0x7ffff) << 2 | ((w >> 29) & 3), 21);
		in->target = (a & ~0xfffull) + (uint64_t)(off * 4096);
		break;
	case AARCH64_OP_LDR_LIT:
	case AARCH64_OP_LDR_LIT_FP:
	case AARCH64_OP_PRFM_LIT:
		in->target = a + (uint64_t)(aarch64_sext(w >> 5, 19) * 4);
		switch (w >> 30) {
		case 0: in->size = 4; break;
		case 1: in->size = 8; break;
		case 2: in->size = in->op == AARCH64_OP_LDR_LIT ? 4 : 16; break;
		default: in->size = 0; break;	/* PRFM: no data */
		}
		in->sign = in->op == AARCH64_OP_LDR_LIT && (w >> 30) == 2;
		break;
	default:
		break;
	}
}

int aarch64_decode(struct aarch64_insn *in, uint32_t word, uint64_t addr)
{
	*in = (struct aarch64_insn){ .addr = addr, .word = word };
	for (size_t i = 0; i < sizeof(aarch64_rows) / sizeof(aarch64_rows[0]); i++) {
		const struct aarch64_row *r = &aarch64_rows[i];

		if ((word & r->mask) != r->value)
			continue;
		in->op = r->op;
		in->name = r->name;
		in->reason = r->reason;
		fields(in);
		return 0;
	}
	/* op0 0001 and 0011, and 0000 without bit 31 beyond UDF */
	in->op = AARCH64_OP_REJECT;
	in->name = "unallocated";
	in->reason = "unallocated encoding";
	return -EILSEQ;
}
