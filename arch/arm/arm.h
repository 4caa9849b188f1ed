/*
 * arm.h - the 32-bit ARM (A32 and Thumb-2) instruction engine, internal
 * interface.
 *
 * An ARMv7-A core in user space runs two instruction sets: A32 (one
 * 32-bit word each, 4-aligned) and Thumb (T16 halfwords, and T32 pairs of
 * halfwords whose first one starts with 0b11101, 0b11110 or 0b11111).
 * Which one runs is CPSR.T; arch/ is told by bit 0 of the address, as a
 * Thumb function's symbol value and a BX target carry it:
 *
 *   insn_decode(buf, size, addr | 1, ...)   decodes Thumb at addr
 *   insn_decode(buf, size, addr, ...)       decodes A32 at addr
 *
 * insn->addr is the address itself (bit 0 clear), so insn->addr +
 * insn->len is always the next instruction.  insn_next_pcs answers in
 * the same convention: bit 0 of each pc says the instruction set there.
 *
 * The pieces share one decoded form, struct arm_insn:
 *
 *   decode    bytes -> struct arm_insn (op, fields, whether it reads or
 *             writes the pc), from mask/value tables (arm-decode.c)
 *   classify  insn -> simulate / emulate / boost / reject, with a reason
 *   simulate  insn + registers + memory -> registers (arch_ops.insn_emulate),
 *             honouring the condition (A32 cond, B<c>, the IT block);
 *             and the next pcs of a software single-step
 *   relocate  the slot contents: the copy and the branch back (boost), or
 *             the copy with the pc renamed to a scratch register and a
 *             breakpoint (the seed's "emulate", ARCH_STEP here)
 *   emit      fixed encodings: B / B.W, the breakpoints, LDR pc literal
 *
 * None of it performs a system call.
 */
#ifndef PROBE_ARM_H
#define PROBE_ARM_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "arch/arch.h"

/* gdb's arm-with-neon register numbers, as this build numbers them (the
 * `g` packet order; see arm-regs.c). */
enum {
	ARM_R0 = 0,
	ARM_FP = 11,		/* r11, the ARM-state frame pointer */
	ARM_IP = 12,
	ARM_SP = 13,
	ARM_LR = 14,
	ARM_PC = 15,
	ARM_CPSR = 16,
	ARM_D0 = 17,
	ARM_FPSCR = 49,
	ARM_NREGS = 50,
};

/* CPSR bits user space sees (struct arch_gpregs.flags). */
#define ARM_PSR_N (1u << 31)
#define ARM_PSR_Z (1u << 30)
#define ARM_PSR_C (1u << 29)
#define ARM_PSR_V (1u << 28)
#define ARM_PSR_Q (1u << 27)
#define ARM_PSR_T (1u << 5)
/* ITSTATE: IT[1:0] in bits 26:25, IT[7:2] in bits 15:10. */
#define ARM_PSR_IT_MASK ((3u << 25) | (0x3fu << 10))

static inline unsigned int arm_itstate(uint64_t cpsr)
{
	return (unsigned int)(((cpsr >> 25) & 3) | (((cpsr >> 10) & 0x3f) << 2));
}

static inline uint64_t arm_with_itstate(uint64_t cpsr, unsigned int it)
{
	cpsr &= ~(uint64_t)ARM_PSR_IT_MASK;
	return cpsr | (uint64_t)(it & 3) << 25 | (uint64_t)((it >> 2) & 0x3f) << 10;
}

/* ITSTATE after one instruction of the block (the Arm ARM's ITAdvance). */
static inline unsigned int arm_it_advance(unsigned int it)
{
	if ((it & 7) == 0)
		return 0;
	return (it & 0xe0) | ((it << 1) & 0x1f);
}

/* Whether an IT block is active, and the condition of its current
 * instruction. */
static inline bool arm_in_it(unsigned int it)
{
	return (it & 0xf) != 0;
}

static inline unsigned int arm_it_cond(unsigned int it)
{
	return it >> 4;
}

enum arm_isa {
	ARM_ISA_A32,
	ARM_ISA_T16,
	ARM_ISA_T32,
};

/*
 * What the decoder recognised.  ARM_OP_OTHER is an instruction the engine
 * needs to know nothing about: it neither reads nor writes the pc, and
 * runs unchanged from a slot.
 */
enum arm_op {
	ARM_OP_OTHER = 0,
	/* ---- simulated (ARCH_EMULATE) ---- */
	ARM_OP_B,		/* B, B<c>, B.W: target */
	ARM_OP_BL,		/* BL: lr = return, target in the same set */
	ARM_OP_BLX_IMM,		/* BLX label: target in the other set */
	ARM_OP_BX,		/* BX rm: interworking */
	ARM_OP_BLX_REG,		/* BLX rm */
	ARM_OP_CBZ, ARM_OP_CBNZ,
	ARM_OP_TBB, ARM_OP_TBH,	/* table branch: [rn + rm] / [rn + 2 rm] */
	ARM_OP_LDR_LIT,		/* LDR{B,H,SB,SH,D} rt, [pc, #+-imm] */
	ARM_OP_ADR,		/* rd = Align(pc, 4) +- imm */
	ARM_OP_DP,		/* data processing with the pc as an operand
				 * or destination: opc, rd, rn, rm / imm */
	ARM_OP_LDR_PC,		/* LDR pc, [rn, +-imm / +-rm shifted] */
	ARM_OP_LDM,		/* LDM / POP with the pc in the list */
	ARM_OP_STM_PC,		/* STM / PUSH storing the pc (A32) */
	ARM_OP_PLD_LIT,		/* PLD / PLI literal: a hint */
	ARM_OP_NOP,		/* NOP (and the T16 hints that do nothing) */
	ARM_OP_IT,		/* IT: sets ITSTATE */
	/* ---- emulated: pc renamed to a scratch register (ARCH_STEP) ---- */
	ARM_OP_PC_SCRATCH,
	/* ---- rejected, reason in insn->reason ---- */
	ARM_OP_REJECT,
	ARM_OP_EXCLUSIVE,	/* LDREX / STREX family */
};

/* Data-processing opcodes, A32 bits 24:21 (and T32's where they agree). */
enum arm_dp {
	ARM_DP_AND, ARM_DP_EOR, ARM_DP_SUB, ARM_DP_RSB,
	ARM_DP_ADD, ARM_DP_ADC, ARM_DP_SBC, ARM_DP_RSC,
	ARM_DP_TST, ARM_DP_TEQ, ARM_DP_CMP, ARM_DP_CMN,
	ARM_DP_ORR, ARM_DP_MOV, ARM_DP_BIC, ARM_DP_MVN,
};

/* The shift of a register operand (A32 bits 6:5). */
enum arm_shift { ARM_LSL, ARM_LSR, ARM_ASR, ARM_ROR };

/*
 * One decoded instruction.  Register fields are 4-bit numbers, 15 the pc;
 * `word` is the A32 word, the T16 halfword, or a T32 instruction as
 * first halfword << 16 | second.
 */
struct arm_insn {
	uint64_t addr;			/* bit 0 clear */
	uint32_t word;
	enum arm_isa isa;
	uint8_t len;			/* 2 or 4 */
	enum arm_op op;
	const char *name;		/* mnemonic / form, from the table */
	const char *reason;		/* ARM_OP_REJECT: why */
	bool reads_pc, writes_pc;	/* as the instruction's operands say */
	uint8_t cond;			/* 14 (al) unless conditional by itself */
	uint8_t rd, rn, rm, rt, rt2;
	uint16_t reglist;		/* LDM / STM */
	uint8_t dp;			/* enum arm_dp */
	bool setflags;			/* S */
	bool imm_form;			/* DP / load: immediate operand */
	uint32_t imm;			/* DP immediate (expanded), offset */
	bool imm_carry_valid;		/* the expansion sets the carry */
	bool imm_carry;
	uint8_t shift_type, shift_n;	/* register operand: LSL #n ... */
	bool add;			/* U: add the offset */
	bool pre, wback;		/* P, W of a load / store */
	uint8_t size;			/* literal load: 1, 2, 4 or 8 bytes */
	bool sign;			/* literal load: sign-extends */
	uint8_t it;			/* IT: firstcond:mask */
	uint32_t target;		/* direct branch, ADR, literal: the
					 * address (bit 0: Thumb target) */
	uint32_t scratch_fields;	/* ARM_OP_PC_SCRATCH: bit s set for each
					 * 4-bit field at s that holds the pc */
};

/* arm-decode.c */
int arm_decode(struct arm_insn *insn, const uint8_t *buf, size_t size,
	       uint64_t addr, bool thumb);
bool arm_cond_eval(unsigned int cond, uint64_t cpsr);
const char *arm_cond_name(unsigned int cond);
/* Bytes of the Thumb instruction whose first halfword is hw1: 2 or 4. */
static inline unsigned int arm_thumb_len(uint16_t hw1)
{
	return (hw1 >> 11) >= 0x1d ? 4 : 2;
}
uint32_t arm_expand_imm_c(uint32_t imm12, bool carry_in, bool *carry_out);
uint32_t arm_thumb_expand_imm_c(uint32_t imm12, bool carry_in, bool *carry_out);

/* arm-classify.c: `after` holds the bytes that follow the instruction
 * (the look-ahead of the exclusive-sequence rule). */
int arm_classify(const struct arm_insn *insn, const uint8_t *after,
		 size_t after_size, const char **reason);
bool arm_is_load_exclusive(const struct arm_insn *insn);
bool arm_is_store_exclusive(const struct arm_insn *insn);
bool arm_leaves_for_good(const struct arm_insn *insn);

/* arm-simulate.c */
int arm_simulate(const struct arm_insn *insn, struct arch_gpregs *regs,
		 const struct arch_mem *mem);
int arm_next_pcs(const struct arm_insn *insn, const struct arch_gpregs *regs,
		 const struct arch_mem *mem, uint64_t pcs[2]);
/* The value an instruction at `in` reads for the pc: A32 addr + 8, Thumb
 * addr + 4. */
static inline uint32_t arm_pc_value(const struct arm_insn *in)
{
	return (uint32_t)in->addr + (in->isa == ARM_ISA_A32 ? 8 : 4);
}

/* arm-emit.c */
#define ARM_BKPT_A32 0xe7f001f0u	/* udf #16: Linux's ARM breakpoint */
#define ARM_BKPT_T16 0xde01u		/* udf #1: Linux's Thumb breakpoint */
#define ARM_BKPT_T32 0xf7f0a000u	/* udf.w: Linux's Thumb-2 breakpoint */
/* gdb's Z0 kinds for them (its arm_breakpoint_kind_from_pc): the size. */
#define ARM_BP_KIND_T16 2
#define ARM_BP_KIND_T32 3
#define ARM_BP_KIND_A32 4
#define ARM_NOP_A32 0xe320f000u
struct arm_out {
	uint8_t *buf;
	size_t size, len;
	uint64_t at;			/* address of buf[0] */
	bool overflow;
};
void arm_put16(struct arm_out *o, uint16_t h);
void arm_put32(struct arm_out *o, uint32_t w);	/* A32 word */
void arm_put_t32(struct arm_out *o, uint32_t w);	/* hw1 << 16 | hw2 */
bool arm_in_b_reach(uint64_t from, uint64_t to);	/* A32 B: +-32 MiB */
bool arm_in_bw_reach(uint64_t from, uint64_t to);	/* T32 B.W: +-16 MiB */
uint32_t arm_enc_b(uint64_t from, uint64_t to, unsigned int cond);
uint32_t arm_enc_bw(uint64_t from, uint64_t to);
/* A jump from `o`'s position to `to` (bit 0: a Thumb target), in the set
 * `thumb`: B / B.W within reach, else LDR pc, =to. */
void arm_emit_jump_from(struct arm_out *o, bool thumb, uint64_t to);
int arm_emit_jump(uint8_t *out, size_t size, uint64_t from, uint64_t to);
int arm_emit_jump_abs(uint8_t *out, size_t size, uint64_t to);
/* A pad's site beyond B / B.W: a literal load into the pc, 8 bytes (10 at
 * a Thumb site 2 mod 4). */
#define ARM_PAD_FAR_JUMP_MAX 10
int arm_emit_jump_far(uint8_t *out, size_t size, uint64_t from, uint64_t to);

/* arm-relocate.c */
struct arm_slot {
	bool step;		/* ends in a breakpoint, the agent fixes up */
	int scratch;		/* register the agent loads, -1 none */
	uint64_t scratch_value;
	size_t insn_len;	/* bytes before the breakpoint / branch back */
};
int arm_relocate(const struct arm_insn *insn, struct arm_out *o,
		 struct arm_slot *slot);

/* arm-pad.c: jump pads (the frame: r0-r12, sp, lr, pc, cpsr as 64-bit
 * words; the image: d0-d31, fpscr) */
#define ARM_PAD_FRAME_WORDS 17
#define ARM_PAD_IMAGE_BYTES 264
/* Bytes a Thumb window starts with: the switch from the pad's A32. */
#define ARM_PAD_THUMB_SWITCH 8
int arm_emit_save_regs(uint8_t *out, size_t size, uint64_t pc);
int arm_emit_restore_regs(uint8_t *out, size_t size);
int arm_emit_pad_collect(uint8_t *out, size_t size, const struct arch_pad_ring *r,
			 size_t *done);
int arm_patch_branch(uint8_t *code, size_t at, size_t to);
int arm_emit_pad_handoff(uint8_t *out, size_t size, const struct arch_pad_handoff *h,
			 size_t *trap_off);
int arm_relocate_window(const uint8_t *func, size_t func_size, uint64_t func_addr,
			uint64_t from, size_t min_len, uint64_t to, uint8_t *out,
			size_t size, size_t *inlen);
int arm_callee_step(const uint8_t *insn, size_t len, struct arch_gpregs *regs,
		    const struct arch_mem *mem);
int arm_pad_step(const uint8_t *insn, size_t len, struct arch_gpregs *regs,
		 const struct arch_mem *mem);
extern const struct arch_pad_layout arm_pad_layout;

/* arm-retpad.c: return probes with no stop (struct arch_ret_pad) */
int arm_emit_ret_entry(uint8_t *out, size_t size, const struct arch_ret_pad *r,
		       size_t *fallback_at, size_t *done_at);
int arm_emit_ret_exit(uint8_t *out, size_t size, const struct arch_ret_pad *r,
		      size_t *trap_off);
int arm_emit_ret_stamp(uint8_t *out, size_t size);

/* arm-sdt.c */
int arm_sdt_operand_parse(const char *text, struct arch_operand *op,
			  char *err, size_t errsize);
int arm_asm_reg(const char *name, size_t len, struct arch_asm_reg *r);

/* arm-ops.c: the arch_ops entry points */
int arm_op_insn_decode(const uint8_t *buf, size_t size, uint64_t addr,
		       struct arch_insn *insn);
int arm_op_insn_decode_in(const uint8_t *func, size_t func_size,
			  uint64_t func_addr, uint64_t addr,
			  struct arch_insn *insn);
int arm_op_insn_emulate(const struct arch_insn *insn,
			struct arch_gpregs *regs, const struct arch_mem *mem);
int arm_op_xol_prepare(const struct arch_insn *insn, uint64_t slot,
		       uint8_t *out, size_t size, struct arch_xol *xol);
int arm_op_insn_next_pcs(const struct arch_insn *insn,
			 const struct arch_gpregs *regs,
			 const struct arch_mem *mem, uint64_t pcs[2]);
bool arm_op_follows_call(const uint8_t *before, size_t n);
bool arm_op_emulate_pc_only(const struct arch_insn *insn);
const struct arm_insn *arm_priv(const struct arch_insn *insn);

#endif
