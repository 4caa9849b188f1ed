/*
 * arm-decode.c - A32 and Thumb (T16, T32) instructions to struct arm_insn.
 *
 * Three mask/value tables, one per encoding, tried from the top: the first
 * row with (word & mask) == value names the instruction.  Each row carries
 * the bit layout in a comment (Arm ARM names: cond, Rn, Rd, Rt, Rm), so
 * the tables can be checked against the manual by eye.  A T32 instruction
 * is matched as one word, first halfword << 16 | second.
 *
 * The engine needs to know one thing about most instructions: whether
 * they touch the pc.  Rows name the forms that do on purpose (branches,
 * literal loads, ADR, loads to the pc, LDM with the pc) and, for every
 * other group, which 4-bit fields hold registers (`pc` below, bit s for
 * the field at bits s+3..s): 15 there is the pc, and in these groups the
 * Arm ARM calls it UNPREDICTABLE, so the word is rejected.  A few groups
 * may legally read the pc through a field (`scratch`): an A32 store of
 * the pc, a load or store with a pc base and a register offset, VLDR
 * literal; those run from a slot with the pc renamed to a scratch
 * register (ARM_OP_PC_SCRATCH).  The data-processing groups have rules of
 * their own (a field of 15 can mean "no register" there: MOV has no Rn,
 * CMP no Rd), written out in dp_fields().
 *
 * Unallocated encodings inside the big groups are not all detected: such
 * a word raises SIGILL in the slot as it would in place.  The
 * differential test against objdump (tests/arch/arm-objdump-diff.sh)
 * checks lengths and pc use on every instruction of Debian's armhf libc.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>

#include "arch/nzcv.h"
#include "arch/arm/arm.h"

#define PRIV "privileged: UNDEFINED or UNPREDICTABLE in user mode"
#define F(s) (1u << (s))
#define UNPRED_PC "uses the pc where the Arm ARM makes it UNPREDICTABLE"

/* What a row needs beyond its op: the field rules of its group. */
enum row_kind {
	K_NONE,
	K_A32_DP,	/* data processing, register (imm shift) or immediate */
	K_A32_LS,	/* LDR/STR/LDRB/STRB, immediate or register offset */
	K_A32_LSX,	/* LDRH/STRH/LDRSB/LDRSH/LDRD/STRD */
	K_T16_HI,	/* ADD / MOV with high registers */
	K_T32_DP,	/* data processing, shifted register or modified imm */
};

struct arm_row {
	uint32_t mask, value;
	enum arm_op op;
	const char *name;	/* mnemonic / form: the reason users see */
	const char *reason;	/* ARM_OP_REJECT: why not */
	uint32_t pc;		/* register fields where 15 is UNPREDICTABLE */
	uint32_t scratch;	/* register fields where 15 reads the pc */
	enum row_kind kind;
};

#define EXCL_WHY "load/store exclusive: the probe's trap clears the " \
	"exclusive monitor, the store-exclusive would fail for ever"

/*
 * A32, cond != 1111.  cond is bits 31:28 and masked out of every row.
 */
static const struct arm_row a32_rows[] = {
	/* ---- miscellaneous: cond 00010 op 0 xxxx xxxx xxxx 0 op2 xxxx ---- */
	/* cond 0001 0010 1111 1111 1111 0001 Rm */
	{ 0x0ffffff0, 0x012fff10, ARM_OP_BX, "bx", NULL, 0, 0, K_NONE },
	{ 0x0ffffff0, 0x012fff30, ARM_OP_BLX_REG, "blx (register)", NULL, 0, 0, K_NONE },
	{ 0x0ffffff0, 0x012fff20, ARM_OP_REJECT, "bxj",
	  "bxj: Jazelle entry, not simulated (Linux runs it as bx)", 0, 0, K_NONE },
	/* cond 0001 0010 imm12 0111 imm4 */
	{ 0x0ff000f0, 0x01200070, ARM_OP_REJECT, "bkpt",
	  "bkpt: the program's own breakpoint", 0, 0, K_NONE },
	{ 0x0ff000f0, 0x01400070, ARM_OP_REJECT, "hvc", PRIV, 0, 0, K_NONE },
	{ 0x0ff000f0, 0x01600070, ARM_OP_REJECT, "smc", PRIV, 0, 0, K_NONE },
	{ 0x0fffffff, 0x0160006e, ARM_OP_REJECT, "eret", PRIV, 0, 0, K_NONE },
	/* cond 0001 0110 1111 Rd 1111 0001 Rm */
	{ 0x0fff0ff0, 0x016f0f10, ARM_OP_OTHER, "clz", NULL, F(12) | F(0), 0, K_NONE },
	/* cond 0001 0op0 Rn Rd 0000 0101 Rm: qadd qsub qdadd qdsub */
	{ 0x0f9000f0, 0x01000050, ARM_OP_OTHER, "qadd/qsub", NULL,
	  F(16) | F(12) | F(0), 0, K_NONE },
	/* cond 0001 0op0 Rd Ra Rm 1yx0 Rn: smla<x><y>, smulw ... */
	{ 0x0f900090, 0x01000080, ARM_OP_OTHER, "halfword multiply", NULL,
	  F(16) | F(12) | F(8) | F(0), 0, K_NONE },
	/* cond 0001 0000 1111 Rd 0000 0000 0000: mrs Rd, apsr */
	{ 0x0fff0fff, 0x010f0000, ARM_OP_OTHER, "mrs", NULL, F(12), 0, K_NONE },
	/* cond 0001 0010 mask 1111 0000 0000 Rn: msr apsr, Rn */
	{ 0x0ff0fff0, 0x0120f000, ARM_OP_OTHER, "msr (register)", NULL, F(0), 0, K_NONE },
	{ 0x0f900080, 0x01000000, ARM_OP_REJECT, "misc",
	  "msr spsr / banked register, or unallocated: " PRIV, 0, 0, K_NONE },

	/* ---- synchronisation: cond 0001 xxxx xxxx xxxx xxxx 1001 xxxx ---- */
	/* cond 0001 1sz1 Rn Rt 1100 1001 1111: lda{,b,h}; cond 0001 1sz0 Rn
	 * 1111 1100 1001 Rt: stl{,b,h} (acquire / release, not exclusive) */
	{ 0x0f900ff0, 0x01900c90, ARM_OP_OTHER, "lda", NULL, F(16) | F(12), 0, K_NONE },
	{ 0x0f900ff0, 0x01800c90, ARM_OP_OTHER, "stl", NULL, F(16) | F(0), 0, K_NONE },
	/* cond 0001 1xxL Rn Rt 111x 1001 xxxx: ldrex strex ldaex stlex ... */
	{ 0x0f8000f0, 0x01800090, ARM_OP_EXCLUSIVE, "ldrex/strex", EXCL_WHY, 0, 0, K_NONE },
	/* cond 0001 0B00 Rn Rt 0000 1001 Rt2: swp, swpb */
	{ 0x0fb00ff0, 0x01000090, ARM_OP_OTHER, "swp/swpb", NULL,
	  F(16) | F(12) | F(0), 0, K_NONE },
	/* cond 0000 xxxx Rd Ra Rm 1001 Rn: mul mla umull ... */
	{ 0x0f0000f0, 0x00000090, ARM_OP_OTHER, "multiply", NULL,
	  F(16) | F(12) | F(8) | F(0), 0, K_NONE },

	/* ---- extra loads and stores: cond 000P UIWL Rn Rt imm4 1 op 1 imm4/Rm ---- */
	/* literal: P 1, I 1, W 0, Rn 1111 */
	{ 0x0f7f00f0, 0x014f00d0, ARM_OP_LDR_LIT, "ldrd (literal)", NULL, 0, 0, K_NONE },
	{ 0x0f7f00f0, 0x015f00b0, ARM_OP_LDR_LIT, "ldrh (literal)", NULL, 0, 0, K_NONE },
	{ 0x0f7f00f0, 0x015f00d0, ARM_OP_LDR_LIT, "ldrsb (literal)", NULL, 0, 0, K_NONE },
	{ 0x0f7f00f0, 0x015f00f0, ARM_OP_LDR_LIT, "ldrsh (literal)", NULL, 0, 0, K_NONE },
	/* immediate offset (I 1) and register offset (I 0, Rm) */
	{ 0x0e4000f0, 0x004000b0, ARM_OP_OTHER, "ldrh/strh", NULL, F(12), F(16), K_A32_LSX },
	{ 0x0e4000f0, 0x004000d0, ARM_OP_OTHER, "ldrsb/ldrd", NULL, F(12), F(16), K_A32_LSX },
	{ 0x0e4000f0, 0x004000f0, ARM_OP_OTHER, "ldrsh/strd", NULL, F(12), F(16), K_A32_LSX },
	{ 0x0e4000f0, 0x000000b0, ARM_OP_OTHER, "ldrh/strh", NULL, F(12) | F(0), F(16), K_A32_LSX },
	{ 0x0e4000f0, 0x000000d0, ARM_OP_OTHER, "ldrsb/ldrd", NULL, F(12) | F(0), F(16), K_A32_LSX },
	{ 0x0e4000f0, 0x000000f0, ARM_OP_OTHER, "ldrsh/strd", NULL, F(12) | F(0), F(16), K_A32_LSX },

	/* ---- data processing: cond 00I opc S Rn Rd operand2 ---- */
	/* cond 0011 0000 imm4 Rd imm12: movw; 0011 0100: movt */
	{ 0x0fb00000, 0x03000000, ARM_OP_OTHER, "movw/movt", NULL, F(12), 0, K_NONE },
	/* cond 0011 0010 0000 1111 0000 0000 0000: nop */
	{ 0x0fffffff, 0x0320f000, ARM_OP_NOP, "nop", NULL, 0, 0, K_NONE },
	/* cond 0011 0010 0000 1111 0000 op: yield wfe wfi sev csdb dbg */
	{ 0x0fffff00, 0x0320f000, ARM_OP_OTHER, "hint", NULL, 0, 0, K_NONE },
	/* cond 0011 0010 mask 1111 imm12: msr apsr, #imm */
	{ 0x0ff0f000, 0x0320f000, ARM_OP_OTHER, "msr (immediate)", NULL, 0, 0, K_NONE },
	{ 0x0fb00000, 0x03200000, ARM_OP_REJECT, "msr spsr",
	  "msr spsr, #imm: " PRIV, 0, 0, K_NONE },
	/* register-shifted register: cond 000 opc S Rn Rd Rs 0 type 1 Rm */
	{ 0x0e000090, 0x00000010, ARM_OP_OTHER, "data processing (register-shifted register)",
	  NULL, F(16) | F(12) | F(8) | F(0), 0, K_NONE },
	{ 0x0e000010, 0x00000000, ARM_OP_OTHER, "data processing (register)", NULL, 0, 0, K_A32_DP },
	{ 0x0e000000, 0x02000000, ARM_OP_OTHER, "data processing (immediate)", NULL, 0, 0, K_A32_DP },

	/* ---- media: cond 011 xxxxx xxxx xxxx xxxx xxx1 xxxx ---- */
	/* cond 0111 1111 imm12 1111 imm4 */
	{ 0x0ff000f0, 0x07f000f0, ARM_OP_REJECT, "udf",
	  "udf: permanently undefined (udf #16 is Linux's ARM breakpoint)", 0, 0, K_NONE },
	{ 0x0f800010, 0x06000010, ARM_OP_OTHER, "parallel add/subtract", NULL,
	  F(16) | F(12) | F(0), 0, K_NONE },
	{ 0x0f800010, 0x06800010, ARM_OP_OTHER, "pack/saturate/reverse/extend", NULL,
	  F(12) | F(0), 0, K_NONE },
	{ 0x0f800010, 0x07000010, ARM_OP_OTHER, "signed multiply/divide", NULL,
	  F(16) | F(8) | F(0), 0, K_NONE },
	{ 0x0ff000f0, 0x07800010, ARM_OP_OTHER, "usad8/usada8", NULL,
	  F(16) | F(8) | F(0), 0, K_NONE },
	{ 0x0fa00070, 0x07a00050, ARM_OP_OTHER, "sbfx/ubfx", NULL, F(12) | F(0), 0, K_NONE },
	{ 0x0fe00070, 0x07c00010, ARM_OP_OTHER, "bfc/bfi", NULL, F(12), 0, K_NONE },
	{ 0x0e000010, 0x06000010, ARM_OP_REJECT, "media",
	  "unallocated media instruction", 0, 0, K_NONE },

	/* ---- load/store word and byte: cond 01I PUBW L Rn Rt offset ---- */
	/* cond 0101 U0W1 1111 Rt imm12 (P 1, W 0): ldr, ldrb literal */
	{ 0x0f7f0000, 0x051f0000, ARM_OP_LDR_LIT, "ldr (literal)", NULL, 0, 0, K_NONE },
	{ 0x0f7f0000, 0x055f0000, ARM_OP_LDR_LIT, "ldrb (literal)", NULL, 0, 0, K_NONE },
	/* cond 01I PU0W 1 Rn 1111 offset: ldr pc */
	{ 0x0c50f000, 0x0410f000, ARM_OP_LDR_PC, "ldr pc", NULL, 0, 0, K_NONE },
	{ 0x0c000000, 0x04000000, ARM_OP_OTHER, "load/store word/byte", NULL, 0, 0, K_A32_LS },

	/* ---- block transfer: cond 100 PUSW L Rn register_list ---- */
	{ 0x0e400000, 0x08400000, ARM_OP_REJECT, "ldm/stm ^",
	  "ldm/stm of user registers or exception return: " PRIV, 0, 0, K_NONE },
	{ 0x0e108000, 0x08108000, ARM_OP_LDM, "ldm/pop with pc", NULL, F(16), 0, K_NONE },
	{ 0x0e108000, 0x08008000, ARM_OP_STM_PC, "stm/push with pc", NULL, F(16), 0, K_NONE },
	{ 0x0e000000, 0x08000000, ARM_OP_OTHER, "ldm/stm", NULL, F(16), 0, K_NONE },

	/* ---- branches: cond 101 L imm24 ---- */
	{ 0x0f000000, 0x0a000000, ARM_OP_B, "b", NULL, 0, 0, K_NONE },
	{ 0x0f000000, 0x0b000000, ARM_OP_BL, "bl", NULL, 0, 0, K_NONE },

	/* ---- coprocessor, VFP, svc: cond 11xx ---- */
	{ 0x0f000000, 0x0f000000, ARM_OP_REJECT, "svc",
	  "svc: a system call, which must run in place", 0, 0, K_NONE },
	/* cond 1101 UD0L 1111 Vd 101x imm8: vldr / vstr [pc, #imm] */
	{ 0x0f2f0e00, 0x0d0f0a00, ARM_OP_PC_SCRATCH, "vldr/vstr (literal)", NULL, 0, F(16), K_NONE },
	/* cond 1100 010L Rt2 Rt 101x ...: vmov two core registers */
	{ 0x0fe00e00, 0x0c400a00, ARM_OP_OTHER, "vmov (core registers)", NULL,
	  F(16) | F(12), 0, K_NONE },
	/* cond 110P UDWL Rn Vd 101x imm8: vldm vstm vldr vstr vpush vpop */
	{ 0x0e000e00, 0x0c000a00, ARM_OP_OTHER, "vldm/vstm/vldr/vstr", NULL, F(16), 0, K_NONE },
	/* cond 1100 010L Rt2 Rt coproc opc1 CRm: mcrr / mrrc (cp15 counters) */
	{ 0x0fe00000, 0x0c400000, ARM_OP_OTHER, "mcrr/mrrc", NULL, F(16) | F(12), 0, K_NONE },
	{ 0x0e000000, 0x0c000000, ARM_OP_REJECT, "ldc/stc",
	  "coprocessor load/store: no such coprocessor in user space", 0, 0, K_NONE },
	/* cond 1110 opc1 L CRn Rt coproc opc2 1 CRm: mrc (Rt 15: apsr_nzcv) */
	{ 0x0f100010, 0x0e100010, ARM_OP_OTHER, "mrc/vmov/vmrs", NULL, 0, 0, K_NONE },
	{ 0x0f100010, 0x0e000010, ARM_OP_OTHER, "mcr/vmov/vmsr", NULL, F(12), 0, K_NONE },
	{ 0x0f000010, 0x0e000000, ARM_OP_OTHER, "vfp data processing", NULL, 0, 0, K_NONE },
};

/* A32, cond 1111: the unconditional instructions. */
static const struct arm_row a32_uncond_rows[] = {
	/* 1111 101H imm24 */
	{ 0xfe000000, 0xfa000000, ARM_OP_BLX_IMM, "blx (immediate)", NULL, 0, 0, K_NONE },
	/* 1111 0101 U101 1111 1111 imm12: pld [pc]; 1111 0100 U101 1111: pli */
	{ 0xff7ff000, 0xf55ff000, ARM_OP_PLD_LIT, "pld (literal)", NULL, 0, 0, K_NONE },
	{ 0xff7ff000, 0xf45ff000, ARM_OP_PLD_LIT, "pli (literal)", NULL, 0, 0, K_NONE },
	/* 1111 0101 UR01 Rn 1111 imm12: pld / pldw; 1111 0100 U101: pli */
	{ 0xff30f000, 0xf510f000, ARM_OP_OTHER, "pld/pldw", NULL, F(16), 0, K_NONE },
	{ 0xff70f000, 0xf450f000, ARM_OP_OTHER, "pli", NULL, F(16), 0, K_NONE },
	/* 1111 0111 UR01 Rn 1111 imm5 type 0 Rm; 1111 0110 U101: pli */
	{ 0xff30f010, 0xf710f000, ARM_OP_OTHER, "pld/pldw (register)", NULL, F(16) | F(0), 0, K_NONE },
	{ 0xff70f010, 0xf650f000, ARM_OP_OTHER, "pli (register)", NULL, F(16) | F(0), 0, K_NONE },
	/* 1111 0101 0111 1111 1111 0000 op option: clrex dsb dmb isb sb */
	{ 0xffffff00, 0xf57ff000, ARM_OP_OTHER, "clrex/dsb/dmb/isb", NULL, 0, 0, K_NONE },
	/* 1111 001x: advanced SIMD data processing */
	{ 0xfe000000, 0xf2000000, ARM_OP_OTHER, "advanced simd", NULL, 0, 0, K_NONE },
	/* 1111 0100 xxx0 Rn Vd ... Rm (Rm 15: no writeback) */
	{ 0xff100000, 0xf4000000, ARM_OP_OTHER, "vld/vst (elements)", NULL, F(16), 0, K_NONE },
	/* 1111 0001 0000 0001 0000 00E0 0000 0000 */
	{ 0xfffffdff, 0xf1010000, ARM_OP_OTHER, "setend", NULL, 0, 0, K_NONE },
	{ 0xfff10020, 0xf1000000, ARM_OP_REJECT, "cps", PRIV, 0, 0, K_NONE },
	{ 0xfe000000, 0xf8000000, ARM_OP_REJECT, "srs/rfe", PRIV, 0, 0, K_NONE },
	{ 0xf0000000, 0xf0000000, ARM_OP_REJECT, "unconditional",
	  "unallocated, or a coprocessor instruction no user-space coprocessor "
	  "has (ldc2, mcr2 ...)", 0, 0, K_NONE },
};

/* T16: one halfword, in the low 16 bits of the word. */
static const struct arm_row t16_rows[] = {
	/* 0100 0100 DN Rm Rdn: add (high registers) */
	{ 0xff00, 0x4400, ARM_OP_OTHER, "add (high registers)", NULL, 0, 0, K_T16_HI },
	/* 0100 0101 N Rm Rn: cmp (high registers) */
	{ 0xff00, 0x4500, ARM_OP_OTHER, "cmp (high registers)", NULL, 0, 0, K_T16_HI },
	/* 0100 0110 D Rm Rd: mov (high registers) */
	{ 0xff00, 0x4600, ARM_OP_OTHER, "mov (high registers)", NULL, 0, 0, K_T16_HI },
	/* 0100 0111 0 Rm 000: bx; 0100 0111 1 Rm 000: blx */
	{ 0xff80, 0x4700, ARM_OP_BX, "bx", NULL, 0, 0, K_NONE },
	{ 0xff80, 0x4780, ARM_OP_BLX_REG, "blx (register)", NULL, 0, 0, K_NONE },
	/* 0100 1 Rt imm8: ldr Rt, [pc, #imm8 * 4] */
	{ 0xf800, 0x4800, ARM_OP_LDR_LIT, "ldr (literal)", NULL, 0, 0, K_NONE },
	/* 1010 0 Rd imm8: adr Rd, Align(pc, 4) + imm8 * 4 */
	{ 0xf800, 0xa000, ARM_OP_ADR, "adr", NULL, 0, 0, K_NONE },
	/* 1011 op 0 i 1 imm5 Rn: cbz / cbnz */
	{ 0xfd00, 0xb100, ARM_OP_CBZ, "cbz", NULL, 0, 0, K_NONE },
	{ 0xfd00, 0xb900, ARM_OP_CBNZ, "cbnz", NULL, 0, 0, K_NONE },
	/* 1011 1101 list: pop {..., pc} */
	{ 0xff00, 0xbd00, ARM_OP_LDM, "pop with pc", NULL, 0, 0, K_NONE },
	/* 1011 1110 imm8 */
	{ 0xff00, 0xbe00, ARM_OP_REJECT, "bkpt",
	  "bkpt: the program's own breakpoint", 0, 0, K_NONE },
	/* 1011 1111 0000 0000: nop; 1011 1111 op 0000: hints; else it */
	{ 0xffff, 0xbf00, ARM_OP_NOP, "nop", NULL, 0, 0, K_NONE },
	{ 0xff0f, 0xbf00, ARM_OP_OTHER, "hint", NULL, 0, 0, K_NONE },
	{ 0xff00, 0xbf00, ARM_OP_IT, "it", NULL, 0, 0, K_NONE },
	/* 1011 0110 011 im 0 A I F: cps */
	{ 0xffe8, 0xb660, ARM_OP_REJECT, "cps", PRIV, 0, 0, K_NONE },
	/* 1101 1110 imm8: udf; 1101 1111 imm8: svc */
	{ 0xff00, 0xde00, ARM_OP_REJECT, "udf",
	  "udf: permanently undefined (udf #1 is Linux's Thumb breakpoint)", 0, 0, K_NONE },
	{ 0xff00, 0xdf00, ARM_OP_REJECT, "svc",
	  "svc: a system call, which must run in place", 0, 0, K_NONE },
	/* 1101 cond imm8: b<c>; 1110 0 imm11: b */
	{ 0xf000, 0xd000, ARM_OP_B, "b<c>", NULL, 0, 0, K_NONE },
	{ 0xf800, 0xe000, ARM_OP_B, "b", NULL, 0, 0, K_NONE },
	/* low registers, sp-relative, push/pop without pc, stm/ldm: position
	 * independent */
	{ 0x0000, 0x0000, ARM_OP_OTHER, "16-bit", NULL, 0, 0, K_NONE },
};

/* T32: hw1 << 16 | hw2. */
static const struct arm_row t32_rows[] = {
	/* ---- load/store multiple: 1110 100 op 0 W L Rn | P M 0 list ---- */
	{ 0xffc00000, 0xe8000000, ARM_OP_REJECT, "srs/rfe", PRIV, 0, 0, K_NONE },
	{ 0xffc00000, 0xe9800000, ARM_OP_REJECT, "srs/rfe", PRIV, 0, 0, K_NONE },
	{ 0xfe508000, 0xe8108000, ARM_OP_LDM, "ldm.w/pop.w with pc", NULL, F(16), 0, K_NONE },
	{ 0xfe508000, 0xe8008000, ARM_OP_REJECT, "stm.w with pc",
	  "stm with the pc in the list: UNPREDICTABLE in Thumb", 0, 0, K_NONE },
	{ 0xfe400000, 0xe8000000, ARM_OP_OTHER, "ldm.w/stm.w", NULL, F(16), 0, K_NONE },

	/* ---- dual, exclusive, table branch: 1110 100x x1xx ---- */
	/* 1110 1000 1101 Rn | 1111 0000 000H Rm */
	{ 0xfff0fff0, 0xe8d0f000, ARM_OP_TBB, "tbb", NULL, 0, 0, K_NONE },
	{ 0xfff0fff0, 0xe8d0f010, ARM_OP_TBH, "tbh", NULL, 0, 0, K_NONE },
	/* 1110 1000 010L Rn | Rt Rd imm8: ldrex / strex */
	{ 0xffe00000, 0xe8400000, ARM_OP_EXCLUSIVE, "ldrex/strex", EXCL_WHY, 0, 0, K_NONE },
	/* 1110 1000 110L Rn | Rt Rt2 op3 Rd: op3 10xx lda/stl, 01xx 11xx
	 * exclusive */
	{ 0xffe000c0, 0xe8c00080, ARM_OP_OTHER, "lda/stl", NULL, F(16) | F(12), 0, K_NONE },
	{ 0xffe00000, 0xe8c00000, ARM_OP_EXCLUSIVE, "ldrex{b,h,d}/strex{b,h,d}",
	  EXCL_WHY, 0, 0, K_NONE },
	/* 1110 1001 U101 1111 | Rt Rt2 imm8: ldrd literal */
	{ 0xff7f0000, 0xe95f0000, ARM_OP_LDR_LIT, "ldrd (literal)", NULL, 0, 0, K_NONE },
	/* 1110 100P U1WL Rn | Rt Rt2 imm8 */
	{ 0xfe400000, 0xe8400000, ARM_OP_OTHER, "ldrd/strd", NULL,
	  F(16) | F(12) | F(8), 0, K_NONE },

	/* ---- 1110 101 op S Rn | 0 imm3 Rd imm2 type Rm: shifted register ---- */
	{ 0xfe000000, 0xea000000, ARM_OP_OTHER, "data processing (shifted register)",
	  NULL, 0, 0, K_T32_DP },

	/* ---- coprocessor, VFP, advanced SIMD: 111x 11xx ---- */
	{ 0xef000000, 0xef000000, ARM_OP_OTHER, "advanced simd", NULL, 0, 0, K_NONE },
	{ 0xff100000, 0xf9000000, ARM_OP_OTHER, "vld/vst (elements)", NULL, F(16), 0, K_NONE },
	/* 1110 1101 UD0L 1111 | Vd 101x imm8: vldr / vstr [pc, #imm] */
	{ 0xff2f0e00, 0xed0f0a00, ARM_OP_PC_SCRATCH, "vldr/vstr (literal)", NULL, 0, F(16), K_NONE },
	{ 0xffe00e00, 0xec400a00, ARM_OP_OTHER, "vmov (core registers)", NULL,
	  F(16) | F(12), 0, K_NONE },
	{ 0xfe000e00, 0xec000a00, ARM_OP_OTHER, "vldm/vstm/vldr/vstr", NULL, F(16), 0, K_NONE },
	{ 0xffe00000, 0xec400000, ARM_OP_OTHER, "mcrr/mrrc", NULL, F(16) | F(12), 0, K_NONE },
	{ 0xfe000000, 0xec000000, ARM_OP_REJECT, "ldc/stc",
	  "coprocessor load/store: no such coprocessor in user space", 0, 0, K_NONE },
	{ 0xff100010, 0xee100010, ARM_OP_OTHER, "mrc/vmov/vmrs", NULL, 0, 0, K_NONE },
	{ 0xff100010, 0xee000010, ARM_OP_OTHER, "mcr/vmov/vmsr", NULL, F(12), 0, K_NONE },
	{ 0xff000010, 0xee000000, ARM_OP_OTHER, "vfp data processing", NULL, 0, 0, K_NONE },
	{ 0xec000000, 0xec000000, ARM_OP_REJECT, "coprocessor",
	  "coprocessor instruction no user-space coprocessor has (ldc2, mcr2 ...)",
	  0, 0, K_NONE },

	/* ---- branches and miscellaneous control: 11110 xxx | 1xxx ---- */
	/* 1111 0011 100R Rn | 10x0 mask 0000 0000: msr */
	{ 0xfff0d000, 0xf3808000, ARM_OP_OTHER, "msr", NULL, F(16), 0, K_NONE },
	{ 0xfff0d000, 0xf3908000, ARM_OP_REJECT, "msr spsr", PRIV, 0, 0, K_NONE },
	/* 1111 0011 1010 1111 | 10x0 x000 op: nop.w, hints; else cps */
	{ 0xffffffff, 0xf3af8000, ARM_OP_NOP, "nop.w", NULL, 0, 0, K_NONE },
	{ 0xfff0d700, 0xf3a08000, ARM_OP_OTHER, "hint.w", NULL, 0, 0, K_NONE },
	{ 0xfff0d000, 0xf3a08000, ARM_OP_REJECT, "cps.w", PRIV, 0, 0, K_NONE },
	/* 1111 0011 1011 1111 | 10x0 1111 op option: clrex dsb dmb isb */
	{ 0xfff0d000, 0xf3b08000, ARM_OP_OTHER, "clrex/dsb/dmb/isb", NULL, 0, 0, K_NONE },
	{ 0xfff0d000, 0xf3c08000, ARM_OP_REJECT, "bxj",
	  "bxj: Jazelle entry, not simulated (Linux runs it as bx)", 0, 0, K_NONE },
	{ 0xfff0d000, 0xf3d08000, ARM_OP_REJECT, "subs pc, lr / eret", PRIV, 0, 0, K_NONE },
	/* 1111 0011 111R 1111 | 10x0 Rd ...: mrs */
	{ 0xfff0d000, 0xf3e08000, ARM_OP_OTHER, "mrs", NULL, F(8), 0, K_NONE },
	{ 0xfff0d000, 0xf3f08000, ARM_OP_REJECT, "mrs spsr", PRIV, 0, 0, K_NONE },
	/* 1111 0111 1110 imm4 | 1000 imm12: hvc; 1111 0111 1111 imm4 | 1000: smc */
	{ 0xfff0f000, 0xf7e08000, ARM_OP_REJECT, "hvc", PRIV, 0, 0, K_NONE },
	{ 0xfff0f000, 0xf7f08000, ARM_OP_REJECT, "smc", PRIV, 0, 0, K_NONE },
	/* 1111 0111 1111 imm4 | 1010 imm12: udf.w */
	{ 0xfff0f000, 0xf7f0a000, ARM_OP_REJECT, "udf.w",
	  "udf.w: permanently undefined (Linux's Thumb-2 breakpoint)", 0, 0, K_NONE },
	{ 0xfb80d000, 0xf3808000, ARM_OP_REJECT, "misc control",
	  "unallocated miscellaneous control instruction", 0, 0, K_NONE },
	/* 11110 S cond imm6 | 10 J1 0 J2 imm11: b<c>.w (cond not 111x) */
	{ 0xf800d000, 0xf0008000, ARM_OP_B, "b<c>.w", NULL, 0, 0, K_NONE },
	/* 11110 S imm10 | 10 J1 1 J2 imm11: b.w */
	{ 0xf800d000, 0xf0009000, ARM_OP_B, "b.w", NULL, 0, 0, K_NONE },
	/* 11110 S imm10 | 11 J1 1 J2 imm11: bl */
	{ 0xf800d000, 0xf000d000, ARM_OP_BL, "bl", NULL, 0, 0, K_NONE },
	/* 11110 S imm10H | 11 J1 0 J2 imm10L 0: blx */
	{ 0xf800d001, 0xf000c000, ARM_OP_BLX_IMM, "blx (immediate)", NULL, 0, 0, K_NONE },
	{ 0xf800d001, 0xf000c001, ARM_OP_REJECT, "blx",
	  "blx with an odd offset: UNDEFINED", 0, 0, K_NONE },

	/* ---- data processing, immediate: 11110 xxx | 0xxx ---- */
	/* 11110 i 0 op S Rn | 0 imm3 Rd imm8: modified immediate */
	{ 0xfa008000, 0xf0000000, ARM_OP_OTHER, "data processing (modified immediate)",
	  NULL, 0, 0, K_T32_DP },
	/* 11110 i 10 0000 1111 | 0 imm3 Rd imm8: adr.w (addw Rd, pc) */
	{ 0xfbff8000, 0xf20f0000, ARM_OP_ADR, "adr.w", NULL, 0, 0, K_NONE },
	/* 11110 i 10 1010 1111 | 0 imm3 Rd imm8: adr.w (subw Rd, pc) */
	{ 0xfbff8000, 0xf2af0000, ARM_OP_ADR, "adr.w", NULL, 0, 0, K_NONE },
	/* 11110 i 10 x100 imm4 | 0 imm3 Rd imm8: movw / movt */
	{ 0xfb708000, 0xf2400000, ARM_OP_OTHER, "movw/movt", NULL, F(8), 0, K_NONE },
	/* 11110 0 11 0110 Rn | 0 imm3 Rd imm2 0 msb: bfi (Rn 1111: bfc) */
	{ 0xfff08000, 0xf3600000, ARM_OP_OTHER, "bfi/bfc", NULL, F(8), 0, K_NONE },
	{ 0xfa008000, 0xf2000000, ARM_OP_OTHER, "data processing (plain immediate)",
	  NULL, F(16) | F(8), 0, K_NONE },

	/* ---- loads and stores: 1111 100x ---- */
	/* 1111 100S U001 1111 | 1111 imm12: pld / pli literal */
	{ 0xfe7ff000, 0xf81ff000, ARM_OP_PLD_LIT, "pld/pli (literal)", NULL, 0, 0, K_NONE },
	/* 1111 100S U011 1111 | 1111: unallocated hint, literal */
	{ 0xfe7ff000, 0xf83ff000, ARM_OP_PLD_LIT, "memory hint (literal)", NULL, 0, 0, K_NONE },
	/* 1111 100S U ss1 1111 | Rt imm12: ldr{,b,h,sb,sh} literal */
	{ 0xff7f0000, 0xf85f0000, ARM_OP_LDR_LIT, "ldr.w (literal)", NULL, 0, 0, K_NONE },
	{ 0xff7f0000, 0xf81f0000, ARM_OP_LDR_LIT, "ldrb (literal)", NULL, 0, 0, K_NONE },
	{ 0xff7f0000, 0xf83f0000, ARM_OP_LDR_LIT, "ldrh (literal)", NULL, 0, 0, K_NONE },
	{ 0xff7f0000, 0xf91f0000, ARM_OP_LDR_LIT, "ldrsb (literal)", NULL, 0, 0, K_NONE },
	{ 0xff7f0000, 0xf93f0000, ARM_OP_LDR_LIT, "ldrsh (literal)", NULL, 0, 0, K_NONE },
	{ 0xfe1f0000, 0xf81f0000, ARM_OP_REJECT, "load (literal)",
	  "unallocated literal load", 0, 0, K_NONE },
	/* 1111 1000 xxx0 1111: a store with a pc base */
	{ 0xff1f0000, 0xf80f0000, ARM_OP_REJECT, "store [pc]",
	  "store with the pc as base: UNDEFINED in Thumb", 0, 0, K_NONE },
	/* 1111 1000 x101 Rn | 1111 ...: ldr pc, [Rn ...] */
	{ 0xff70f000, 0xf850f000, ARM_OP_LDR_PC, "ldr.w pc", NULL, 0, 0, K_NONE },
	/* byte / halfword loads to Rt 1111, 1111 100x x0x1 Rn | 1111 ...:
	 * pld, pldw, pli with imm12, with a negative imm8 (1100 imm8), or
	 * with a register; the other imm8 forms load the pc: UNPREDICTABLE */
	{ 0xfed0f000, 0xf890f000, ARM_OP_OTHER, "pld/pldw/pli", NULL, 0, 0, K_NONE },
	{ 0xfed0ff00, 0xf810fc00, ARM_OP_OTHER, "pld/pldw/pli", NULL, 0, 0, K_NONE },
	{ 0xfed0ffc0, 0xf810f000, ARM_OP_OTHER, "pld/pldw/pli (register)", NULL, F(0), 0, K_NONE },
	{ 0xfe50f000, 0xf810f000, ARM_OP_REJECT, "ldrb/ldrh pc", UNPRED_PC, 0, 0, K_NONE },
	/* 1111 100S 0ssL Rn | Rt 0000 00 imm2 Rm: register offset */
	{ 0xfe800fc0, 0xf8000000, ARM_OP_OTHER, "load/store (register)", NULL,
	  F(12) | F(0), 0, K_NONE },
	{ 0xfe800800, 0xf8000000, ARM_OP_REJECT, "load/store",
	  "unallocated load/store encoding", 0, 0, K_NONE },
	{ 0xfe000000, 0xf8000000, ARM_OP_OTHER, "load/store (single)", NULL, F(12), 0, K_NONE },

	/* ---- data processing (register), multiply, divide: 1111 101x ---- */
	/* 1111 1011 1x01 Rn | 1111 Rd 1111 Rm: sdiv / udiv */
	{ 0xffd0f0f0, 0xfb90f0f0, ARM_OP_OTHER, "sdiv/udiv", NULL, F(16) | F(8) | F(0), 0, K_NONE },
	/* 1111 1011 1xxx Rn | RdLo RdHi op Rm: long multiply */
	{ 0xff800000, 0xfb800000, ARM_OP_OTHER, "long multiply", NULL,
	  F(16) | F(12) | F(8) | F(0), 0, K_NONE },
	/* 1111 1011 0xxx Rn | Ra Rd op Rm: multiply (Ra 15: none) */
	{ 0xff800000, 0xfb000000, ARM_OP_OTHER, "multiply", NULL, F(16) | F(8) | F(0), 0, K_NONE },
	/* 1111 1010 xxxx Rn | 1111 Rd op Rm: shifts, extends, parallel, misc
	 * (Rn 15: the extend without add) */
	{ 0xff000000, 0xfa000000, ARM_OP_OTHER, "data processing (register)", NULL,
	  F(8) | F(0), 0, K_NONE },
};

/* The conditions (arch/nzcv.c, shared with A64); 1111 is the
 * unconditional space here, with no suffix. */
bool arm_cond_eval(unsigned int cond, uint64_t cpsr)
{
	return nzcv_cond_holds(cond, cpsr);
}

const char *arm_cond_name(unsigned int cond)
{
	return (cond & 15) == 15 ? "" : nzcv_cond_name(cond);
}

static uint32_t ror32(uint32_t v, unsigned int n)
{
	n &= 31;
	return n ? (v >> n) | (v << (32 - n)) : v;
}

/* A32ExpandImm_C: imm8 rotated right by twice the 4-bit rotation. */
uint32_t arm_expand_imm_c(uint32_t imm12, bool carry_in, bool *carry_out)
{
	uint32_t v = ror32(imm12 & 0xff, 2 * ((imm12 >> 8) & 15));

	*carry_out = (imm12 >> 8) & 15 ? v >> 31 : carry_in;
	return v;
}

/* ThumbExpandImm_C: the four replicated patterns, or a rotated 1bcdefgh. */
uint32_t arm_thumb_expand_imm_c(uint32_t imm12, bool carry_in, bool *carry_out)
{
	uint32_t b = imm12 & 0xff, v;

	if (!(imm12 & 0xc00)) {
		switch ((imm12 >> 8) & 3) {
		case 0: v = b; break;
		case 1: v = b << 16 | b; break;
		case 2: v = b << 24 | b << 8; break;
		default: v = b << 24 | b << 16 | b << 8 | b; break;
		}
		*carry_out = carry_in;
		return v;
	}
	v = ror32(0x80 | (imm12 & 0x7f), (imm12 >> 7) & 31);
	*carry_out = v >> 31;
	return v;
}

static int32_t sext(uint32_t v, unsigned int bits)
{
	uint32_t m = 1u << (bits - 1);

	v &= bits == 32 ? ~0u : (1u << bits) - 1;
	return (int32_t)((v ^ m) - m);
}

static unsigned int nib(uint32_t w, unsigned int s)
{
	return (w >> s) & 15;
}

static void reject(struct arm_insn *in, const char *why)
{
	in->op = ARM_OP_REJECT;
	in->reason = why;
}

/* The generic field rules of a row: pc where UNPREDICTABLE, or renamed. */
static void check_fields(struct arm_insn *in, const struct arm_row *r)
{
	for (unsigned int s = 0; s < 32; s += 4) {
		if (nib(in->word, s) != 15)
			continue;
		if (r->pc & F(s)) {
			in->reads_pc = true;
			reject(in, UNPRED_PC);
			return;
		}
	}
	for (unsigned int s = 0; s < 32; s += 4) {
		if ((r->scratch & F(s)) && nib(in->word, s) == 15) {
			in->reads_pc = true;
			in->op = ARM_OP_PC_SCRATCH;
			in->scratch_fields |= F(s);
		}
	}
}

/*
 * A32 data processing: cond 00 I opc S Rn Rd operand2.  TST TEQ CMP CMN
 * (opc 10xx, S 1) write no Rd; MOV MVN (opc 1101, 1111) read no Rn.  A pc
 * operand or destination is simulated (ARM_OP_DP); S with Rd = pc is an
 * exception return (SUBS pc, lr), rejected.
 */
static void a32_dp(struct arm_insn *in)
{
	uint32_t w = in->word;
	unsigned int opc = (w >> 21) & 15;
	bool test = (opc & 0xc) == 0x8, mov = opc == ARM_DP_MOV || opc == ARM_DP_MVN;

	in->dp = (uint8_t)opc;
	in->setflags = (w >> 20) & 1;
	in->rn = (uint8_t)nib(w, 16);
	in->rd = (uint8_t)nib(w, 12);
	in->rm = (uint8_t)nib(w, 0);
	in->imm_form = (w >> 25) & 1;
	if (in->imm_form) {
		in->imm = arm_expand_imm_c(w & 0xfff, false, &in->imm_carry);
		in->imm_carry_valid = (w >> 8) & 15;
	} else {
		in->shift_type = (uint8_t)((w >> 5) & 3);
		in->shift_n = (uint8_t)((w >> 7) & 31);
	}
	in->reads_pc = (!mov && in->rn == 15) || (!in->imm_form && in->rm == 15);
	in->writes_pc = !test && in->rd == 15;
	if (!in->reads_pc && !in->writes_pc)
		return;
	/* TST..CMN have Rd (0)(0)(0)(0), MOV and MVN Rn: other values are
	 * UNPREDICTABLE (and UNDEFINED to qemu) */
	if ((test && in->rd != 0) || (mov && in->rn != 0)) {
		reject(in, "should-be-zero register field not zero: UNPREDICTABLE");
		return;
	}
	if (in->writes_pc && in->setflags) {
		reject(in, "data processing to the pc with S (subs pc, lr): an "
		       "exception return, UNPREDICTABLE in user mode");
		return;
	}
	in->op = ARM_OP_DP;
	if (in->imm_form && in->rn == 15 && !in->writes_pc && !in->setflags &&
	    (opc == ARM_DP_ADD || opc == ARM_DP_SUB))
		in->name = "adr";
	else
		in->name = in->writes_pc ? "data processing to pc" :
			   "data processing reading pc";
}

/*
 * A32 LDR/STR/LDRB/STRB: cond 01 I P U B W L Rn Rt offset.  The pc as
 * base (no writeback) or as the stored register is read: renamed in a
 * slot.  LDRB / STRB of the pc, a pc register offset, a pc base with
 * writeback: UNPREDICTABLE.  (LDR pc and the literals have rows.)
 */
static void a32_ls(struct arm_insn *in)
{
	uint32_t w = in->word;
	bool reg = (w >> 25) & 1, byte = (w >> 22) & 1, load = (w >> 20) & 1;
	bool wback = !((w >> 24) & 1) || ((w >> 21) & 1);

	in->rn = (uint8_t)nib(w, 16);
	in->rt = (uint8_t)nib(w, 12);
	if ((reg && nib(w, 0) == 15) || (in->rt == 15 && (byte || load)) ||
	    (in->rn == 15 && wback)) {
		in->reads_pc = true;
		reject(in, UNPRED_PC);
		return;
	}
	if (in->rt == 15 || in->rn == 15) {
		in->reads_pc = true;
		in->op = ARM_OP_PC_SCRATCH;
		/* both, in `str pc, [pc, #imm]` */
		in->scratch_fields = (in->rn == 15 ? F(16) : 0) |
				     (in->rt == 15 ? F(12) : 0);
	}
}

/* A32 extra loads/stores: as a32_ls, Rt 15 never allowed. */
static void a32_lsx(struct arm_insn *in, const struct arm_row *r)
{
	uint32_t w = in->word;
	bool wback = !((w >> 24) & 1) || ((w >> 21) & 1);

	if (nib(w, 16) == 15 && wback) {
		in->reads_pc = true;
		reject(in, UNPRED_PC);
		return;
	}
	check_fields(in, r);
}

/*
 * T16 ADD / CMP / MOV with high registers: 0100 01 op D Rm Rdn, the
 * register Rdn = D:Rdn.  ADD and MOV with the pc are simulated (writing
 * it is a branch that stays in Thumb); CMP with the pc is UNPREDICTABLE.
 */
static void t16_hi(struct arm_insn *in)
{
	uint32_t w = in->word;
	unsigned int op = (w >> 8) & 3;

	in->rd = in->rn = (uint8_t)(((w >> 4) & 8) | (w & 7));
	in->rm = (uint8_t)((w >> 3) & 15);
	in->reads_pc = in->rm == 15 || (op != 2 && in->rd == 15);
	in->writes_pc = op != 1 && in->rd == 15;
	if (!in->reads_pc && !in->writes_pc)
		return;
	if (op == 1 || (op == 0 && in->rd == 15 && in->rm == 15)) {
		reject(in, UNPRED_PC);
		return;
	}
	in->op = ARM_OP_DP;
	in->dp = op == 0 ? ARM_DP_ADD : ARM_DP_MOV;
	in->setflags = false;
	if (in->rd == 15)
		in->name = op == 0 ? "add pc, rm" : "mov pc, rm";
	else
		in->name = op == 0 ? "add rd, pc" : "mov rd, pc";
}

/*
 * T32 data processing, shifted register (1110 101 op S Rn | 0 imm3 Rd
 * imm2 type Rm) and modified immediate (11110 i 0 op S Rn | 0 imm3 Rd
 * imm8): Rd 15 is only the no-destination form of TST TEQ CMN CMP (op
 * 0000 0100 1000 1101 with S), Rn 15 only MOV MVN (ORR ORN with no Rn);
 * any other pc is UNPREDICTABLE.
 */
static void t32_dp(struct arm_insn *in)
{
	uint32_t w = in->word;
	unsigned int op = (w >> 21) & 15, s = (w >> 20) & 1;
	bool shifted = (w >> 27) == 0x1d;
	bool test = s && (op == 0 || op == 4 || op == 8 || op == 13);
	bool nonn = op == 2 || op == 3;

	if ((shifted && nib(w, 0) == 15) || (nib(w, 8) == 15 && !test) ||
	    (nib(w, 16) == 15 && !nonn)) {
		in->reads_pc = true;
		reject(in, UNPRED_PC);
	}
}

/* The fields of the simulated forms; targets are computed here. */
static void a32_fields(struct arm_insn *in)
{
	uint32_t w = in->word, pc = arm_pc_value(in);

	switch (in->op) {
	case ARM_OP_B:
	case ARM_OP_BL:
		in->target = pc + (uint32_t)(sext(w, 24) * 4);
		in->reads_pc = in->writes_pc = true;
		break;
	case ARM_OP_BLX_IMM:
		/* 1111 101H imm24: imm24:H:0, to Thumb */
		in->target = (pc + (uint32_t)(sext(w, 24) * 4) +
			      ((w >> 23) & 2)) | 1;
		in->cond = 14;
		in->reads_pc = in->writes_pc = true;
		break;
	case ARM_OP_BX:
	case ARM_OP_BLX_REG:
		in->rm = (uint8_t)nib(w, 0);
		in->writes_pc = true;
		if (in->rm == 15) {
			in->reads_pc = true;
			if (in->op == ARM_OP_BLX_REG)
				reject(in, UNPRED_PC);
		}
		break;
	case ARM_OP_LDR_LIT:
		in->rt = (uint8_t)nib(w, 12);
		in->add = (w >> 23) & 1;
		in->reads_pc = true;
		if ((w & 0x0e000000) == 0x04000000) {	/* ldr, ldrb */
			in->imm = w & 0xfff;
			in->size = (w >> 22) & 1 ? 1 : 4;
			if (in->rt == 15) {
				in->writes_pc = true;
				if (in->size == 1)
					reject(in, UNPRED_PC);
			}
		} else {			/* ldrh ldrsb ldrsh ldrd */
			in->imm = (w >> 4 & 0xf0) | (w & 15);
			switch ((w >> 5) & 3) {
			case 1: in->size = 2; break;
			case 2: in->size = (w >> 20) & 1 ? 1 : 8; break;
			default: in->size = 2; break;
			}
			in->sign = (w >> 20) & 1 && ((w >> 5) & 3) != 1;
			in->rt2 = in->rt + 1;
			if (in->rt == 15 || (in->size == 8 && (in->rt & 1 || in->rt == 14)))
				reject(in, UNPRED_PC);
		}
		in->target = (pc & ~3u) + (in->add ? in->imm : (uint32_t)-in->imm);
		break;
	case ARM_OP_LDR_PC:
		/* cond 01 I P U 0 W 1 Rn 1111 offset */
		in->rn = (uint8_t)nib(w, 16);
		in->rt = 15;
		in->imm_form = !((w >> 25) & 1);
		in->pre = (w >> 24) & 1;
		in->add = (w >> 23) & 1;
		in->wback = !in->pre || ((w >> 21) & 1);
		in->writes_pc = true;
		if (in->imm_form) {
			in->imm = w & 0xfff;
		} else {
			in->rm = (uint8_t)nib(w, 0);
			in->shift_type = (uint8_t)((w >> 5) & 3);
			in->shift_n = (uint8_t)((w >> 7) & 31);
			if (in->rm == 15)
				reject(in, UNPRED_PC);
		}
		if (!in->pre && (w >> 21) & 1)
			reject(in, "ldrt to the pc: UNPREDICTABLE");
		else if (in->rn == 15 && in->wback)
			reject(in, UNPRED_PC);
		break;
	case ARM_OP_LDM:
	case ARM_OP_STM_PC:
		in->rn = (uint8_t)nib(w, 16);
		in->reglist = (uint16_t)w;
		in->pre = (w >> 24) & 1;
		in->add = (w >> 23) & 1;
		in->wback = (w >> 21) & 1;
		in->writes_pc = in->op == ARM_OP_LDM;
		in->reads_pc = in->op == ARM_OP_STM_PC;
		if (in->op == ARM_OP_LDM && in->wback && (in->reglist >> in->rn) & 1)
			reject(in, "ldm that writes back to a register it loads: "
			       "UNPREDICTABLE");
		break;
	case ARM_OP_PLD_LIT:
		in->reads_pc = true;
		in->cond = 14;
		break;
	default:
		break;
	}
}

static int decode_a32(struct arm_insn *in)
{
	uint32_t w = in->word;
	const struct arm_row *rows = a32_rows;
	size_t n = sizeof(a32_rows) / sizeof(a32_rows[0]);

	in->cond = (uint8_t)(w >> 28);
	if (in->cond == 15) {
		rows = a32_uncond_rows;
		n = sizeof(a32_uncond_rows) / sizeof(a32_uncond_rows[0]);
	}
	for (size_t i = 0; i < n; i++) {
		const struct arm_row *r = &rows[i];

		if ((w & r->mask) != r->value)
			continue;
		in->op = r->op;
		in->name = r->name;
		in->reason = r->reason;
		switch (r->kind) {
		case K_A32_DP:
			a32_dp(in);
			break;
		case K_A32_LS:
			a32_ls(in);
			break;
		case K_A32_LSX:
			a32_lsx(in, r);
			break;
		default:
			if (in->op == ARM_OP_OTHER || in->op == ARM_OP_PC_SCRATCH ||
			    in->op == ARM_OP_LDM || in->op == ARM_OP_STM_PC)
				check_fields(in, r);
			if (in->op != ARM_OP_REJECT)
				a32_fields(in);
			break;
		}
		return 0;
	}
	reject(in, "unallocated encoding");
	in->name = "unallocated";
	return -EILSEQ;
}

/* T16 fields. */
static void t16_fields(struct arm_insn *in)
{
	uint32_t w = in->word, pc = arm_pc_value(in);

	switch (in->op) {
	case ARM_OP_B:
		if ((w >> 12) == 0xd) {		/* 1101 cond imm8 */
			in->cond = (uint8_t)((w >> 8) & 15);
			in->target = pc + (uint32_t)(sext(w, 8) * 2);
		} else {			/* 11100 imm11 */
			in->target = pc + (uint32_t)(sext(w, 11) * 2);
		}
		in->target |= 1;
		in->reads_pc = in->writes_pc = true;
		break;
	case ARM_OP_BX:
	case ARM_OP_BLX_REG:
		in->rm = (uint8_t)((w >> 3) & 15);
		in->writes_pc = true;
		if (w & 7)
			reject(in, "bx/blx with its should-be-zero bits set: "
			       "UNPREDICTABLE");
		else if (in->rm == 15) {
			in->reads_pc = true;
			if (in->op == ARM_OP_BLX_REG)
				reject(in, UNPRED_PC);
		}
		break;
	case ARM_OP_LDR_LIT:
		in->rt = (uint8_t)((w >> 8) & 7);
		in->imm = (w & 0xff) * 4;
		in->add = true;
		in->size = 4;
		in->target = (pc & ~3u) + in->imm;
		in->reads_pc = true;
		break;
	case ARM_OP_ADR:
		in->rd = (uint8_t)((w >> 8) & 7);
		in->imm = (w & 0xff) * 4;
		in->add = true;
		in->target = (pc & ~3u) + in->imm;
		in->reads_pc = true;
		break;
	case ARM_OP_CBZ:
	case ARM_OP_CBNZ:
		in->rn = (uint8_t)(w & 7);
		in->target = (pc + (((w >> 3) & 0x1f) | ((w >> 4) & 0x20)) * 2) | 1;
		in->reads_pc = in->writes_pc = true;
		break;
	case ARM_OP_LDM:
		/* pop = ldmia sp!, list with lr's bit standing for pc */
		in->rn = ARM_SP;
		in->reglist = (uint16_t)((w & 0xff) | 0x8000);
		in->pre = false;
		in->add = true;
		in->wback = true;
		in->writes_pc = true;
		break;
	case ARM_OP_IT:
		in->it = (uint8_t)(w & 0xff);
		if ((w & 0xf0) == 0xf0 || ((w & 0xe0) == 0xe0 && (w & 0xf) != 8))
			reject(in, "it with an 'al' condition and an else, or "
			       "with the condition 1111: UNPREDICTABLE");
		break;
	default:
		break;
	}
}

static int decode_t16(struct arm_insn *in)
{
	for (size_t i = 0; i < sizeof(t16_rows) / sizeof(t16_rows[0]); i++) {
		const struct arm_row *r = &t16_rows[i];

		if ((in->word & r->mask) != r->value)
			continue;
		in->op = r->op;
		in->name = r->name;
		in->reason = r->reason;
		if (r->kind == K_T16_HI)
			t16_hi(in);
		else if (in->op != ARM_OP_REJECT)
			t16_fields(in);
		return 0;
	}
	return -EILSEQ;		/* not reached: the last row matches all */
}

/* T32 branch offsets: S:I1:I2:imm10:imm11:0 with Ix = !(Jx ^ S). */
static int32_t t32_branch_off(uint32_t w, bool cond_form)
{
	uint32_t s = (w >> 26) & 1, j1 = (w >> 13) & 1, j2 = (w >> 11) & 1;
	uint32_t v;

	if (cond_form)		/* S:J2:J1:imm6:imm11:0 */
		return sext(s << 20 | j2 << 19 | j1 << 18 | ((w >> 16) & 0x3f) << 12 |
			    (w & 0x7ff) << 1, 21);
	v = s << 24 | (!(j1 ^ s)) << 23 | (!(j2 ^ s)) << 22 |
	    ((w >> 16) & 0x3ff) << 12 | (w & 0x7ff) << 1;
	return sext(v, 25);
}

static void t32_fields(struct arm_insn *in)
{
	uint32_t w = in->word, pc = arm_pc_value(in);

	switch (in->op) {
	case ARM_OP_B:
		if (!((w >> 12) & 1)) {
			in->cond = (uint8_t)((w >> 22) & 15);
			in->target = (pc + (uint32_t)t32_branch_off(w, true)) | 1;
		} else {
			in->target = (pc + (uint32_t)t32_branch_off(w, false)) | 1;
		}
		in->reads_pc = in->writes_pc = true;
		break;
	case ARM_OP_BL:
		in->target = (pc + (uint32_t)t32_branch_off(w, false)) | 1;
		in->reads_pc = in->writes_pc = true;
		break;
	case ARM_OP_BLX_IMM:
		/* to A32: Align(pc, 4) + offset */
		in->target = (pc & ~3u) + (uint32_t)t32_branch_off(w, false);
		in->reads_pc = in->writes_pc = true;
		break;
	case ARM_OP_TBB:
	case ARM_OP_TBH:
		in->rn = (uint8_t)nib(w, 16);
		in->rm = (uint8_t)nib(w, 0);
		in->reads_pc = in->writes_pc = true;
		if (in->rm == 15 || in->rm == 13)
			reject(in, UNPRED_PC);
		break;
	case ARM_OP_LDR_LIT:
		in->rt = (uint8_t)nib(w, 12);
		in->add = (w >> 23) & 1;
		in->reads_pc = true;
		if ((w >> 25) == 0x74) {	/* ldrd: 1110 1001 U101 1111 */
			in->imm = (w & 0xff) * 4;
			in->size = 8;
			in->rt2 = (uint8_t)nib(w, 8);
			if (in->rt == 15 || in->rt2 == 15 || in->rt == 13 ||
			    in->rt2 == 13 || in->rt == in->rt2)
				reject(in, UNPRED_PC);
		} else {
			in->imm = w & 0xfff;
			switch ((w >> 21) & 3) {
			case 0: in->size = 1; break;
			case 1: in->size = 2; break;
			default: in->size = 4; break;
			}
			in->sign = (w >> 24) & 1;
			if (in->rt == 15) {
				in->writes_pc = true;
				if (in->size != 4)
					reject(in, UNPRED_PC);
			}
		}
		in->target = (pc & ~3u) + (in->add ? in->imm : (uint32_t)-in->imm);
		break;
	case ARM_OP_ADR:
		in->rd = (uint8_t)nib(w, 8);
		in->imm = ((w >> 15) & 0x800) | ((w >> 4) & 0x700) | (w & 0xff);
		in->add = !((w >> 23) & 1);
		in->target = (pc & ~3u) + (in->add ? in->imm : (uint32_t)-in->imm);
		in->reads_pc = true;
		if (in->rd == 15 || in->rd == 13)
			reject(in, UNPRED_PC);
		break;
	case ARM_OP_LDR_PC:
		/* 1111 1000 1101 Rn | 1111 imm12; 1111 1000 0101 Rn | 1111
		 * 1PUW imm8; 1111 1000 0101 Rn | 1111 0000 00 imm2 Rm */
		in->rn = (uint8_t)nib(w, 16);
		in->rt = 15;
		in->writes_pc = true;
		in->imm_form = true;
		if ((w >> 23) & 1) {
			in->imm = w & 0xfff;
			in->pre = in->add = true;
		} else if ((w >> 11) & 1) {
			in->imm = w & 0xff;
			in->pre = (w >> 10) & 1;
			in->add = (w >> 9) & 1;
			in->wback = (w >> 8) & 1;
			if (in->pre && in->add && !in->wback)
				reject(in, "ldrt to the pc: UNPREDICTABLE");
			if (!in->pre && !in->wback)
				reject(in, "unallocated load form");
		} else if (((w >> 6) & 0x3f) == 0) {
			in->imm_form = false;
			in->rm = (uint8_t)nib(w, 0);
			in->shift_type = ARM_LSL;
			in->shift_n = (uint8_t)((w >> 4) & 3);
			in->pre = in->add = true;
			if (in->rm == 15 || in->rm == 13)
				reject(in, UNPRED_PC);
		} else {
			reject(in, "unallocated load form");
		}
		break;
	case ARM_OP_LDM:
		in->rn = (uint8_t)nib(w, 16);
		in->reglist = (uint16_t)w;
		in->add = (w >> 23) & 1;	/* 01: IA, 10: DB */
		in->pre = !in->add;
		in->wback = (w >> 21) & 1;
		in->writes_pc = true;
		if ((in->reglist >> 14) & 1 ||
		    (in->wback && (in->reglist >> in->rn) & 1) ||
		    (in->reglist & (1u << 13)))
			reject(in, "ldm with lr and pc, sp, or the written-back "
			       "base in the list: UNPREDICTABLE");
		break;
	case ARM_OP_PLD_LIT:
		in->reads_pc = true;
		break;
	default:
		break;
	}
}

static int decode_t32(struct arm_insn *in)
{
	for (size_t i = 0; i < sizeof(t32_rows) / sizeof(t32_rows[0]); i++) {
		const struct arm_row *r = &t32_rows[i];

		if ((in->word & r->mask) != r->value)
			continue;
		in->op = r->op;
		in->name = r->name;
		in->reason = r->reason;
		if (r->kind == K_T32_DP) {
			t32_dp(in);
			return 0;
		}
		if (in->op == ARM_OP_OTHER || in->op == ARM_OP_PC_SCRATCH ||
		    in->op == ARM_OP_LDM)
			check_fields(in, r);
		if (in->op != ARM_OP_REJECT)
			t32_fields(in);
		return 0;
	}
	reject(in, "unallocated encoding");
	in->name = "unallocated";
	return -EILSEQ;
}

int arm_decode(struct arm_insn *in, const uint8_t *b, size_t size,
	       uint64_t addr, bool thumb)
{
	uint16_t hw1;

	*in = (struct arm_insn){ .addr = addr & ~1ull, .cond = 14 };
	if (!thumb) {
		if (size < 4)
			return -ENODATA;
		in->isa = ARM_ISA_A32;
		in->len = 4;
		in->word = (uint32_t)b[0] | (uint32_t)b[1] << 8 |
			   (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
		return decode_a32(in);
	}
	if (size < 2)
		return -ENODATA;
	hw1 = (uint16_t)(b[0] | b[1] << 8);
	if (arm_thumb_len(hw1) == 2) {
		in->isa = ARM_ISA_T16;
		in->len = 2;
		in->word = hw1;
		return decode_t16(in);
	}
	if (size < 4)
		return -ENODATA;
	in->isa = ARM_ISA_T32;
	in->len = 4;
	in->word = (uint32_t)hw1 << 16 | (uint32_t)(b[2] | b[3] << 8);
	return decode_t32(in);
}
