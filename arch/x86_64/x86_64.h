/*
 * x86_64.h - the x86-64 instruction engine, internal interface.
 *
 * Five pure pieces share one decoded form, struct x86_64_insn:
 *
 *   decode    bytes -> struct x86_64_insn (length and fields)
 *   classify  insn  -> emulate / boost / step / reject, with a reason
 *   emulate   insn + register file + memory callbacks -> new register file
 *   relocate  insn(s) at address A -> equivalent bytes that run at B
 *   emit      the fixed sequences: jmp rel32, absolute jmp, int3,
 *             red-zone-safe register save / restore
 *
 * None of them performs a system call or touches memory other than the
 * buffers they are given.  Offsets inside struct x86_64_insn are byte
 * offsets from the first byte of the instruction, so the relocator can
 * patch a copy without decoding it again.
 */
#ifndef PROBE_X86_64_H
#define PROBE_X86_64_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "arch/arch.h"

#define X86_64_MAX_INSN 15

/* Legacy prefixes seen, as bits of x86_64_insn.prefixes. */
enum x86_64_prefix {
	X86_64_PFX_LOCK = 1u << 0,	/* f0 */
	X86_64_PFX_REPNE = 1u << 1,	/* f2 */
	X86_64_PFX_REP = 1u << 2,	/* f3 */
	X86_64_PFX_OPSIZE = 1u << 3,	/* 66 */
	X86_64_PFX_ADSIZE = 1u << 4,	/* 67 */
	X86_64_PFX_CS = 1u << 5,	/* 2e (also a branch hint) */
	X86_64_PFX_SS = 1u << 6,	/* 36 */
	X86_64_PFX_DS = 1u << 7,	/* 3e (also notrack / branch hint) */
	X86_64_PFX_ES = 1u << 8,	/* 26 */
	X86_64_PFX_FS = 1u << 9,	/* 64: thread pointer, base not in regs */
	X86_64_PFX_GS = 1u << 10,	/* 65 */
};

/* Which opcode map the opcode byte belongs to. */
enum x86_64_map {
	X86_64_MAP_1BYTE = 0,
	X86_64_MAP_0F = 1,
	X86_64_MAP_0F38 = 2,
	X86_64_MAP_0F3A = 3,
	X86_64_MAP_3DNOW = 4,	/* 0f 0f modrm ... suffix-opcode */
	X86_64_MAP_EVEX5 = 5,	/* EVEX maps 5 and 6 (FP16) */
	X86_64_MAP_EVEX6 = 6,
	X86_64_MAP_XOP8 = 8,	/* AMD XOP maps 8, 9, 0a */
	X86_64_MAP_XOP9 = 9,
	X86_64_MAP_XOPA = 10,
};

enum x86_64_encoding {
	X86_64_ENC_LEGACY = 0,
	X86_64_ENC_VEX,
	X86_64_ENC_EVEX,
	X86_64_ENC_XOP,
};

/*
 * One decoded instruction.  Register numbers are the hardware numbers with
 * the REX/VEX extension bit folded in (0 = rax ... 15 = r15).
 */
struct x86_64_insn {
	uint64_t addr;			/* where it was decoded */
	uint8_t bytes[X86_64_MAX_INSN];
	uint8_t len;

	unsigned int prefixes;		/* enum x86_64_prefix bits */
	uint8_t rex;			/* the REX byte, 0 if none; VEX-family
					 * R/X/B/W bits are folded in here */
	uint8_t rex_off;		/* offset of a real REX byte */
	uint8_t vex_off;		/* offset of c4 / c5 / 62 / 8f */
	enum x86_64_encoding enc;
	enum x86_64_map map;
	uint8_t opcode;
	uint8_t opcode_off;		/* offset of the opcode byte */
	uint8_t vex_w, vex_l, vex_pp;	/* VEX / EVEX / XOP payload */
	uint8_t vex_vvvv;		/* extra register operand, 0..15 */

	uint8_t opsize;			/* operand size in bytes: 2, 4 or 8 */
	uint8_t adsize;			/* address size in bytes: 4 or 8 */

	bool has_modrm;
	uint8_t modrm, modrm_off;
	uint8_t mod;			/* 0..3 */
	uint8_t reg;			/* ModRM.reg with REX.R (0..15) */
	uint8_t rm;			/* ModRM.rm with REX.B (0..15), when mod == 3
					 * or no SIB; the base register otherwise */
	bool has_sib;
	uint8_t sib;
	int8_t base;			/* memory operand base, -1 none */
	int8_t index;			/* memory operand index, -1 none */
	uint8_t scale;			/* 1, 2, 4, 8 */

	uint8_t disp_off, disp_size;	/* 0 size: no displacement */
	int32_t disp;
	bool rip_relative;		/* disp is relative to the next insn */

	uint8_t imm_off, imm_size;	/* first immediate */
	int64_t imm;			/* sign-extended */
	uint8_t imm2_off, imm2_size;	/* second immediate (enter, extrq) */
	int64_t imm2;

	bool is_rel_branch;		/* imm is a rel8 / rel16 / rel32 target */
	uint64_t target;		/* addr + len + imm, if is_rel_branch */
};

/*
 * An output buffer for the emitters: writes past `size` are counted but
 * dropped, so a sequence is emitted without checks and `overflow` tested
 * once at the end.  `at` is the address buf[0] will run at.
 */
struct x86_64_out {
	uint8_t *buf;
	size_t size, len;
	uint64_t at;
	bool overflow;
};

static inline void x86_64_put(struct x86_64_out *o, const void *p, size_t n)
{
	if (o->len + n > o->size) {
		o->overflow = true;
	} else {
		for (size_t i = 0; i < n; i++)
			o->buf[o->len + i] = ((const uint8_t *)p)[i];
	}
	o->len += n;
}

static inline void x86_64_put8(struct x86_64_out *o, uint8_t b)
{
	x86_64_put(o, &b, 1);
}

static inline void x86_64_put32(struct x86_64_out *o, uint32_t v)
{
	uint8_t b[4] = { v, v >> 8, v >> 16, v >> 24 };

	x86_64_put(o, b, 4);
}

static inline void x86_64_put64(struct x86_64_out *o, uint64_t v)
{
	x86_64_put32(o, (uint32_t)v);
	x86_64_put32(o, (uint32_t)(v >> 32));
}

/* Address of the next byte emitted. */
static inline uint64_t x86_64_here(const struct x86_64_out *o)
{
	return o->at + o->len;
}

/*
 * The forms of a pad's image (arch_pad_handoff.image_form,
 * arch_pad_ring.image_form): the x87, SSE and (with AVX) AVX registers
 * the frame leaves out, at the entry's or record's offset 0, 64-aligned.
 *
 *   FXSAVE             FXSAVE64's 512 bytes: x87 and SSE, no AVX.
 *   XSAVE              XSAVE64 with the mask 7 (x87, SSE, AVX), up to
 *                      832 bytes: the legacy area, the header at 512
 *                      (XSTATE_BV says which components it stored; one in
 *                      its initial state may be skipped, its bytes left as
 *                      they were), the ymm upper halves at 576.
 *   XSAVE_BY_FXSAVE    the XSAVE layout without XSAVE: FXSAVE64 (the
 *                      legacy area), the 16 ymm upper halves by
 *                      vextractf128 at 576, and XSTATE_BV 7 (every
 *                      component as stored; XCOMP_BV and the rest of the
 *                      header not written).  The same bytes a reader takes
 *                      from an XSAVE image; XSAVE costs about 39 ns where
 *                      this costs 26 (bench/README.md).  The return
 *                      trampoline (emit_ret_exit) stores this form's image
 *                      with XSAVE: a reader finds the same layout.
 *
 * A record without the image (arch_pad_ring.image false) in an XSAVE
 * layout and with no off_flags word gets only the header's XSTATE_BV,
 * as 0: its reader sees every component in its initial state.
 */
enum {
	X86_64_IMAGE_FXSAVE = 0,
	X86_64_IMAGE_XSAVE = 1,
	X86_64_IMAGE_XSAVE_BY_FXSAVE = 2,
};

/* Whether an image of `form` has the XSAVE layout (header, AVX). */
static inline bool x86_64_image_is_xsave(unsigned int form)
{
	return form != X86_64_IMAGE_FXSAVE;
}

/* Bytes an image of `form` may cover: up to AVX's, or FXSAVE's. */
static inline unsigned int x86_64_image_bytes(unsigned int form)
{
	return x86_64_image_is_xsave(form) ? 832 : 512;
}

void x86_64_jmp(struct x86_64_out *o, uint64_t to);
void x86_64_jmp_abs(struct x86_64_out *o, uint64_t to);
void x86_64_push_imm64(struct x86_64_out *o, uint64_t v);
int x86_64_emit_pad_handoff(uint8_t *out, size_t size,
			    const struct arch_pad_handoff *h, size_t *trap_off);
int x86_64_emit_pad_collect(uint8_t *out, size_t size,
			    const struct arch_pad_ring *r, size_t *done);
int x86_64_patch_branch(uint8_t *code, size_t at, size_t to);
int x86_64_emit_pad_cond(uint8_t *out, size_t size, const struct arch_pad_cond *c,
			 size_t *skip, size_t *load, size_t *take);
int x86_64_emit_ret_entry(uint8_t *out, size_t size, const struct arch_ret_pad *r,
			  size_t *fallback_at, size_t *done_at);
int x86_64_emit_ret_exit(uint8_t *out, size_t size, const struct arch_ret_pad *r,
			 size_t *trap_off);
int x86_64_emit_ret_stamp(uint8_t *out, size_t size);
int x86_64_emit_touch(uint8_t *out, size_t size, uint64_t at, uint64_t start,
		      uint64_t pages, uint32_t page, uint64_t resume, size_t *trap_off);

/* x86_64-sdt.c */
int x86_64_sdt_operand_parse(const char *text, struct arch_operand *op,
			     char *err, size_t errsize);

/* x86_64-decode.c */
int x86_64_decode(struct x86_64_insn *insn, const uint8_t *buf, size_t size,
		  uint64_t addr);
uint64_t x86_64_rip_target(const struct x86_64_insn *insn);

/* x86_64-classify.c */
int x86_64_classify(const struct x86_64_insn *insn, const char **reason);
bool x86_64_jcc_eval(unsigned int cond, uint64_t eflags);
int x86_64_is_jcc(const struct x86_64_insn *insn);
const char *x86_64_emulated_form(const struct x86_64_insn *insn);
int x86_64_gdb_regnum(unsigned int hw);
const char *x86_64_jcc_name(unsigned int cond);

/* x86_64-emulate.c */
int x86_64_emulate(const struct x86_64_insn *insn, struct arch_gpregs *regs,
		   const struct arch_mem *mem);

/* x86_64-relocate.c */
struct x86_64_step {
	bool step;		/* must be single-stepped: far RIP-relative + rsp */
	int scratch_hw;		/* hardware number of the scratch register */
	uint64_t scratch_value;	/* what it must hold during the step */
};
int x86_64_relocate(const struct x86_64_insn *insn, struct x86_64_out *o,
		    struct x86_64_step *step);
int x86_64_relocate_window(const uint8_t *code, size_t code_size,
			   uint64_t code_addr, uint64_t from, size_t min_len,
			   uint64_t to, uint8_t *out, size_t size,
			   size_t *inlen, size_t *outlen);

/* x86_64-ops.c: the arch_ops entry points */
int x86_64_op_insn_decode(const uint8_t *buf, size_t size, uint64_t addr,
			  struct arch_insn *insn);
int x86_64_op_insn_emulate(const struct arch_insn *insn,
			   struct arch_gpregs *regs, const struct arch_mem *mem);
int x86_64_op_xol_prepare(const struct arch_insn *insn, uint64_t slot,
			  uint8_t *out, size_t size, struct arch_xol *xol);
bool x86_64_op_follows_call(const uint8_t *before, size_t n);
bool x86_64_op_emulate_pc_only(const struct arch_insn *insn);
int x86_64_op_pad_step(const uint8_t *insn, size_t len, struct arch_gpregs *regs,
		       const struct arch_mem *mem);
int x86_64_op_relocate_window(const uint8_t *func, size_t func_size,
			      uint64_t func_addr, uint64_t from, size_t min_len,
			      uint64_t to, uint8_t *out, size_t size,
			      size_t *inlen);

/* x86_64-emit.c */
int x86_64_emit_jmp_rel32(uint8_t *out, size_t size, uint64_t from,
			  uint64_t to);
int x86_64_emit_jmp_abs(uint8_t *out, size_t size, uint64_t to);
int x86_64_emit_int3(uint8_t *out, size_t size);
int x86_64_emit_save_regs(uint8_t *out, size_t size, uint64_t pc);
int x86_64_emit_restore_regs(uint8_t *out, size_t size);
bool x86_64_in_rel32(uint64_t from_next, uint64_t to);

#endif
