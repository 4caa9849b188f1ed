/*
 * aarch64.h - the AArch64 (A64) instruction engine, internal interface.
 *
 * A64 instructions are one little-endian 32-bit word each, so "decoding"
 * is matching the word against mask/value rows (aarch64-decode.c) and
 * pulling the few fields the engine needs; there are no lengths to find.
 * The pieces share one decoded form, struct aarch64_insn:
 *
 *   decode    word -> struct aarch64_insn (op and fields)
 *   classify  insn -> simulate / boost / reject, with a reason
 *   simulate  insn + register file + memory callbacks -> new register
 *             file (arch_ops.insn_emulate), and the next pcs of a step
 *   relocate  insn at address A -> equivalent words that run at a slot S
 *   emit      the fixed words: B, BRK, MOVZ/MOVK, LDR literal + BR
 *
 * Like the kprobes ARM design (simulate / emulate / reject), every
 * instruction that reads the PC is simulated by C code or re-encoded
 * for the slot; everything else runs unchanged from an out-of-line slot
 * followed by a B back (boost).  None of it performs a system call.
 */
#ifndef PROBE_AARCH64_H
#define PROBE_AARCH64_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "arch/arch.h"

#define AARCH64_INSN_LEN 4

/* gdb's aarch64 register numbers (the `g` packet order). */
enum {
	AARCH64_X0 = 0,
	AARCH64_FP = 29,	/* x29, the frame pointer */
	AARCH64_LR = 30,	/* x30, the link register */
	AARCH64_SP = 31,
	AARCH64_PC = 32,
	AARCH64_CPSR = 33,
	AARCH64_V0 = 34,
	AARCH64_FPSR = 66,
	AARCH64_FPCR = 67,
	AARCH64_NREGS = 68,
};

/* PSTATE bits in the cpsr the agent sees (struct arch_gpregs.flags). */
#define AARCH64_PSTATE_N (1u << 31)
#define AARCH64_PSTATE_Z (1u << 30)
#define AARCH64_PSTATE_C (1u << 29)
#define AARCH64_PSTATE_V (1u << 28)
#define AARCH64_PSTATE_BTYPE_SHIFT 10
#define AARCH64_PSTATE_BTYPE (3u << AARCH64_PSTATE_BTYPE_SHIFT)

/*
 * What the decoder recognised.  The PC readers (branches, ADR/ADRP,
 * literal loads) come first; they are the forms simulate and relocate
 * know.  AARCH64_OP_OTHER is an allocated instruction the engine needs
 * to know nothing about: it runs unchanged from a slot.
 */
enum aarch64_op {
	AARCH64_OP_OTHER = 0,
	/* read the PC */
	AARCH64_OP_B, AARCH64_OP_BL, AARCH64_OP_BCOND,
	AARCH64_OP_CBZ, AARCH64_OP_CBNZ, AARCH64_OP_TBZ, AARCH64_OP_TBNZ,
	AARCH64_OP_BR, AARCH64_OP_BLR, AARCH64_OP_RET,
	AARCH64_OP_BRA, AARCH64_OP_BLRA, AARCH64_OP_RETA,	/* pointer auth */
	AARCH64_OP_ADR, AARCH64_OP_ADRP,
	AARCH64_OP_LDR_LIT,	/* LDR Wt / Xt / LDRSW Xt, =literal */
	AARCH64_OP_LDR_LIT_FP,	/* LDR St / Dt / Qt, =literal */
	AARCH64_OP_PRFM_LIT,
	/* change nothing but the PC (and PSTATE.BTYPE) */
	AARCH64_OP_NOP, AARCH64_OP_BTI,
	/* never run out of line (the reason is in the decode table) */
	AARCH64_OP_REJECT,
	/* load / store exclusive: rejected, and so is what lies between */
	AARCH64_OP_LDX, AARCH64_OP_STX,
};

/*
 * One decoded instruction.  Register fields are the 5-bit numbers of the
 * encoding; whether 31 means sp or zr depends on the op (every op here
 * reads it as the zero register, except the base of a load, which is
 * never a simulated form).
 */
struct aarch64_insn {
	uint64_t addr;			/* where it was decoded */
	uint32_t word;
	enum aarch64_op op;
	const char *name;		/* mnemonic or form, from the table */
	const char *reason;		/* for AARCH64_OP_REJECT: why */
	uint8_t rd;			/* Rd / Rt: the register written or tested */
	uint8_t rn;			/* Rn: branch target register */
	uint8_t rm;			/* Rm: pointer-auth modifier register */
	uint8_t cond;			/* B.cond */
	uint8_t bit;			/* TBZ / TBNZ: bit number 0-63 */
	bool sf;			/* CBZ / CBNZ: 64-bit register */
	bool zmod;			/* BRAAZ / BLRAAZ: modifier is zero */
	uint8_t size;			/* literal load: bytes read (4, 8, 16) */
	bool sign;			/* LDRSW literal */
	uint64_t target;		/* branch target, ADR(P) result, literal
					 * address: all known at decode time */
};

/*
 * An output buffer for the emitters: words past `size` are counted but
 * dropped, so a sequence is emitted without checks and `overflow` tested
 * once at the end.  `at` is the address buf[0] will run at.
 */
struct aarch64_out {
	uint8_t *buf;
	size_t size, len;
	uint64_t at;
	bool overflow;
};

static inline void aarch64_put32(struct aarch64_out *o, uint32_t w)
{
	if (o->len + 4 > o->size) {
		o->overflow = true;
	} else {
		o->buf[o->len] = (uint8_t)w;
		o->buf[o->len + 1] = (uint8_t)(w >> 8);
		o->buf[o->len + 2] = (uint8_t)(w >> 16);
		o->buf[o->len + 3] = (uint8_t)(w >> 24);
	}
	o->len += 4;
}

static inline uint64_t aarch64_here(const struct aarch64_out *o)
{
	return o->at + o->len;
}

static inline uint32_t aarch64_word(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	       (uint32_t)b[3] << 24;
}

/* Sign-extends the low `bits` bits of v. */
static inline int64_t aarch64_sext(uint64_t v, unsigned int bits)
{
	uint64_t m = 1ull << (bits - 1);

	v &= (bits == 64) ? ~0ull : (1ull << bits) - 1;
	return (int64_t)((v ^ m) - m);
}

/* aarch64-decode.c */
int aarch64_decode(struct aarch64_insn *insn, uint32_t word, uint64_t addr);
bool aarch64_cond_eval(unsigned int cond, uint64_t pstate);
const char *aarch64_cond_name(unsigned int cond);

/* aarch64-classify.c */
int aarch64_classify(const struct aarch64_insn *insn, const uint8_t *after,
		     size_t after_size, const char **reason);

/* aarch64-simulate.c */
int aarch64_simulate(const struct aarch64_insn *insn, struct arch_gpregs *regs,
		     const struct arch_mem *mem);
int aarch64_next_pcs(const struct aarch64_insn *insn,
		     const struct arch_gpregs *regs, uint64_t pcs[2]);

/* aarch64-emit.c: encoders */
bool aarch64_in_b_reach(uint64_t from, uint64_t to);	/* +-128 MiB */
bool aarch64_in_lit_reach(uint64_t from, uint64_t to);	/* +-1 MiB */
uint32_t aarch64_enc_b(uint64_t from, uint64_t to, bool link);
void aarch64_emit_mov_imm(struct aarch64_out *o, unsigned int rd, uint64_t v);
void aarch64_emit_add_imm(struct aarch64_out *o, unsigned int d, unsigned int n,
			  uint64_t imm, unsigned int tmp);
void aarch64_emit_b(struct aarch64_out *o, uint64_t to);
int aarch64_emit_jump(uint8_t *out, size_t size, uint64_t from, uint64_t to);
int aarch64_emit_jump_abs(uint8_t *out, size_t size, uint64_t to);

#define AARCH64_NOP 0xd503201fu
#define AARCH64_BRK0 0xd4200000u

/* aarch64-relocate.c */
struct aarch64_step {
	bool step;		/* must be single-stepped (no B back in reach) */
	int scratch;		/* x register the agent loads, -1 none */
	uint64_t scratch_value;
};
int aarch64_relocate(const struct aarch64_insn *insn, struct aarch64_out *o,
		     struct aarch64_step *step, bool *ends_in_branch);

/* aarch64-pad.c: a jump pad's parts, with the contracts of the arch_ops
 * fields of the same names (arch.h). */
#define AARCH64_PAD_FRAME_WORDS 34	/* x0-x30, sp, pc, nzcv */
#define AARCH64_PAD_IMAGE_BYTES 520	/* v0-v31, fpsr, fpcr */
extern const struct arch_pad_layout aarch64_pad_layout;
int aarch64_emit_pad_handoff(uint8_t *out, size_t size,
			     const struct arch_pad_handoff *h, size_t *trap_off);
int aarch64_pad_step(const uint8_t *insn, size_t len, struct arch_gpregs *regs,
		     const struct arch_mem *mem);
int aarch64_callee_step(const uint8_t *insn, size_t len, struct arch_gpregs *regs,
			const struct arch_mem *mem);
/* aarch64-cond.c: arch_ops.emit_pad_cond */
int aarch64_emit_pad_cond(uint8_t *out, size_t size, const struct arch_pad_cond *c,
			  size_t *skip, size_t *load, size_t *take);
int aarch64_emit_save_regs(uint8_t *out, size_t size, uint64_t pc);
int aarch64_emit_restore_regs(uint8_t *out, size_t size);
int aarch64_emit_pad_collect(uint8_t *out, size_t size,
			     const struct arch_pad_ring *r, size_t *done);
int aarch64_patch_branch(uint8_t *code, size_t at, size_t to);
/* A ring record's claim, shared by the pad's collection and the return
 * exit: offsets of its retry label and of its two forward branches. */
struct aarch64_ring_claim {
	size_t retry, to_notfree, to_lost;
};
void aarch64_emit_ring_claim(struct aarch64_out *o, const struct arch_pad_ring *g,
			     unsigned int mask, unsigned int tmp,
			     struct aarch64_ring_claim *c);
void aarch64_emit_ring_unclaimed(struct aarch64_out *o,
				 const struct aarch64_ring_claim *c);

/* aarch64-retpad.c: return probes with no stop (struct arch_ret_pad). */
int aarch64_emit_ret_entry(uint8_t *out, size_t size, const struct arch_ret_pad *r,
			   size_t *fallback_at, size_t *done_at);
int aarch64_emit_ret_exit(uint8_t *out, size_t size, const struct arch_ret_pad *r,
			  size_t *trap_off);
int aarch64_emit_ret_stamp(uint8_t *out, size_t size);
int aarch64_relocate_window(const uint8_t *func, size_t func_size,
			    uint64_t func_addr, uint64_t from, size_t min_len,
			    uint64_t to, uint8_t *out, size_t size, size_t *inlen);

/* aarch64-sdt.c */
int aarch64_sdt_operand_parse(const char *text, struct arch_operand *op,
			      char *err, size_t errsize);

/* aarch64-ops.c: the arch_ops entry points */
int aarch64_op_insn_decode(const uint8_t *buf, size_t size, uint64_t addr,
			   struct arch_insn *insn);
int aarch64_op_insn_emulate(const struct arch_insn *insn,
			    struct arch_gpregs *regs, const struct arch_mem *mem);
int aarch64_op_xol_prepare(const struct arch_insn *insn, uint64_t slot,
			   uint8_t *out, size_t size, struct arch_xol *xol);
int aarch64_op_insn_next_pcs(const struct arch_insn *insn,
			     const struct arch_gpregs *regs,
			     const struct arch_mem *mem, uint64_t pcs[2]);
bool aarch64_op_follows_call(const uint8_t *before, size_t n);
bool aarch64_op_emulate_pc_only(const struct arch_insn *insn);

#endif
