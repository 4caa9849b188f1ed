/*
 * x86_64-relocate.c - make instructions from address A run at address B.
 *
 * Most instructions do not care where they run and are copied as they
 * are.  The ones that do read RIP, and only in two ways:
 *
 *  - a RIP-relative memory operand (ModRM mod=00 rm=101, no SIB, disp32
 *    counted from the end of the instruction): re-encoded with a new
 *    disp32 when the operand is within +-2 GiB of B, otherwise pointed at
 *    a scratch register that holds the operand's address;
 *  - a relative branch (jmp, call, jcc, loop, jrcxz): re-targeted with a
 *    rel32 when in reach, otherwise through an absolute jump.  A relocated
 *    call pushes the ORIGINAL return address, so the callee returns into
 *    the original code, never into the copy.
 *
 * The window relocator (jump pads) copies several whole instructions and
 * refuses a window that any branch of the function lands inside of: that
 * code is overwritten by the pad's jump.
 *
 * Invariants: the output never writes below the probed code's %rsp
 * within the red zone except where the original instruction itself
 * would (a call, a push); flags are preserved by every added instruction
 * (lea, mov, push, pop, jmp only); output is bounded by the caller's
 * buffer, -ENOSPC otherwise.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "arch/x86_64/x86_64.h"

/* Copy of the instruction with a new disp32 for its RIP operand. */
static void put_with_disp(struct x86_64_out *o, const struct x86_64_insn *in,
			  uint32_t disp)
{
	uint8_t b[X86_64_MAX_INSN];

	memcpy(b, in->bytes, in->len);
	for (int i = 0; i < 4; i++)
		b[in->disp_off + i] = disp >> (8 * i);
	x86_64_put(o, b, in->len);
}

/* GPR-class instructions whose ModRM.reg names a general register. */
static bool reg_is_gpr(const struct x86_64_insn *in)
{
	if (in->enc != X86_64_ENC_LEGACY)
		return false;
	if (in->map == X86_64_MAP_1BYTE)
		return true;
	if (in->map == X86_64_MAP_0F) {
		uint8_t op = in->opcode;

		return (op >= 0x40 && op <= 0x4f) || op == 0xaf ||
		       op == 0xa3 || op == 0xab || op == 0xb3 || op == 0xbb ||
		       (op >= 0xb0 && op <= 0xb7) || (op >= 0xbc && op <= 0xbf) ||
		       op == 0xb8 || op == 0xc0 || op == 0xc1 || op == 0x02 ||
		       op == 0x03;
	}
	return in->map == X86_64_MAP_0F38 && (in->opcode == 0xf0 || in->opcode == 0xf1);
}

/* Group opcodes: ModRM.reg selects the operation, it names no register. */
static bool reg_is_extension(const struct x86_64_insn *in)
{
	if (in->map == X86_64_MAP_0F)
		return in->opcode == 0x00 || in->opcode == 0x01 ||
		       in->opcode == 0x18 || in->opcode == 0x1f ||
		       in->opcode == 0xba || in->opcode == 0xae ||
		       in->opcode == 0xc7 || (in->opcode >= 0x71 && in->opcode <= 0x73);
	switch (in->opcode) {
	case 0x80: case 0x81: case 0x83: case 0x8f: case 0xc0: case 0xc1:
	case 0xc6: case 0xc7: case 0xd0: case 0xd1: case 0xd2: case 0xd3:
	case 0xf6: case 0xf7: case 0xfe: case 0xff:
		return true;
	}
	return false;
}

/* Does the instruction read or write %rsp (explicitly or implicitly)? */
static bool uses_rsp(const struct x86_64_insn *in)
{
	uint8_t r3 = (in->modrm >> 3) & 7;

	if (in->enc == X86_64_ENC_LEGACY && in->map == X86_64_MAP_1BYTE) {
		switch (in->opcode) {
		case 0x8f:			/* pop r/m */
		case 0x9c: case 0x9d:		/* pushf, popf */
		case 0xc8: case 0xc9:		/* enter, leave */
			return true;
		case 0xff:
			if (r3 == 2 || r3 == 6)	/* call, push r/m */
				return true;
			break;
		}
	}
	return reg_is_gpr(in) && in->reg == 4 && !reg_is_extension(in);
}

/*
 * RIP-relative operand, far from B.  In a boost slot or a pad:
 *
 *   before (at A):  op  disp32(%rip), ...
 *   after  (at B):  48 8d 64 24 80      lea -128(%rsp),%rsp   skip red zone
 *                   5x                  push %rS
 *                   48 bx <abs64>       movabs $target,%rS
 *                   op  0(%rS), ...     mod=10 rm=S disp32=0, same length
 *                   5x                  pop %rS
 *                   48 8d a4 24 80 0 0 0 lea 128(%rsp),%rsp
 *
 * S is %rsi, else %rdi (else %rbx, %rcx): one the instruction does not
 * name in ModRM.reg or VEX.vvvv; %rsi and %rdi are not implicit operands
 * of any instruction that has a ModRM memory operand (string
 * instructions have none).  When the instruction itself uses
 * %rsp the stack cannot hold S: the bytes are the bare rewritten
 * instruction and the caller must single-step it with S loaded by hand
 * (step->step).
 */
static int relocate_rip_far(const struct x86_64_insn *in, struct x86_64_out *o,
			    struct x86_64_step *step)
{
	static const uint8_t lea_down[] = { 0x48, 0x8d, 0x64, 0x24, 0x80 };
	static const uint8_t lea_up[] = { 0x48, 0x8d, 0xa4, 0x24, 0x80, 0, 0, 0 };
	uint64_t target = x86_64_rip_target(in);
	static const uint8_t candidates[] = { 6, 7, 3, 1 };	/* rsi rdi rbx rcx */
	unsigned int s = 6;
	uint8_t b[X86_64_MAX_INSN];
	bool stack = !uses_rsp(in);

	for (size_t i = 0; i < sizeof(candidates); i++) {
		s = candidates[i];
		if (s != in->reg && !(in->enc != X86_64_ENC_LEGACY &&
				      s == in->vex_vvvv))
			break;
	}
	if (in->adsize == 4)
		target &= 0xffffffffu;
	memcpy(b, in->bytes, in->len);
	b[in->modrm_off] = 0x80 | (in->modrm & 0x38) | s;	/* mod=10 rm=S */
	memset(b + in->disp_off, 0, 4);
	/* the base register's extension bit must be 0 (rsi/rdi, not r14/r15) */
	if (in->enc == X86_64_ENC_LEGACY && in->rex)
		b[in->rex_off] &= ~1;
	else if (in->enc != X86_64_ENC_LEGACY && in->bytes[in->vex_off] != 0xc5)
		b[in->vex_off + 1] |= 0x20;	/* c4 / 62 / 8f: bit 5 is ~B */

	if (!stack) {
		step->step = true;
		step->scratch_hw = s;
		step->scratch_value = target;
		x86_64_put(o, b, in->len);
		return 0;
	}
	x86_64_put(o, lea_down, sizeof(lea_down));
	x86_64_put8(o, 0x50 + s);
	x86_64_put8(o, 0x48);
	x86_64_put8(o, 0xb8 + s);
	x86_64_put64(o, target);
	x86_64_put(o, b, in->len);
	x86_64_put8(o, 0x58 + s);
	x86_64_put(o, lea_up, sizeof(lea_up));
	return 0;
}

/*
 * Relative branches.
 *
 *   jmp rel8/rel32 at A        ->  e9 <rel32>  (or ff 25 0 <abs64>)
 *
 *   call rel32 at A            ->  push $A+len          (68 imm32, or lea +
 *                                                        2 x movl)
 *                                  jmp target
 *
 *   jcc rel8/rel32 at A        ->  0f 8c <rel32>        target in reach
 *                              or  7(!c) 0e             skip the abs jump
 *                                  ff 25 0 <abs64>      jmp *target
 *
 *   loop/loopcc/jrcxz rel8     ->  e? 02                taken: +2
 *                                  eb NN                not taken: skip
 *                                  jmp target           (5 or 14 bytes)
 */
static int relocate_branch(const struct x86_64_insn *in, struct x86_64_out *o)
{
	uint64_t next = in->addr + in->len;
	int cc = x86_64_is_jcc(in);

	if (cc >= 0) {
		uint64_t after = x86_64_here(o) + 6;

		if (x86_64_in_rel32(after, in->target)) {
			x86_64_put8(o, 0x0f);
			x86_64_put8(o, 0x80 + cc);
			x86_64_put32(o, (uint32_t)(in->target - after));
		} else {
			x86_64_put8(o, 0x70 + (cc ^ 1));
			x86_64_put8(o, 14);
			x86_64_jmp_abs(o, in->target);
		}
		return 0;
	}
	if (in->map != X86_64_MAP_1BYTE)
		return -EILSEQ;
	switch (in->opcode) {
	case 0xe8:
		x86_64_push_imm64(o, next);
		x86_64_jmp(o, in->target);
		return 0;
	case 0xe9:
	case 0xeb:
		x86_64_jmp(o, in->target);
		return 0;
	case 0xe0: case 0xe1: case 0xe2: case 0xe3: {
		bool near = x86_64_in_rel32(x86_64_here(o) + 4 + 5, in->target);
		uint8_t lp[2];

		if (in->prefixes & X86_64_PFX_ADSIZE)
			x86_64_put8(o, 0x67);	/* ecx instead of rcx */
		lp[0] = in->opcode;
		lp[1] = 2;
		x86_64_put(o, lp, 2);
		x86_64_put8(o, 0xeb);
		x86_64_put8(o, near ? 5 : 14);
		x86_64_jmp(o, in->target);
		return 0;
	}
	}
	return -EILSEQ;
}

/*
 * jmp / call through a pointer beyond +-2 GiB of the copy.  No register
 * may change and the code never returns here, so the target goes through
 * the stack and `ret $128` lands on it with %rsp back where it was:
 *
 *   before (at A):  ff 25 <disp32>          jmp  *P(%rip)
 *                   ff 15 <disp32>          call *P(%rip)
 *   after  (at B):  [push $A+len]           call only: the return address
 *                   48 8d 64 24 80          lea -128(%rsp),%rsp
 *                   56                      push %rsi
 *                   48 be <P>               movabs $P,%rsi
 *                   48 8b 36                mov (%rsi),%rsi      the target
 *                   48 87 34 24             xchg %rsi,(%rsp)     rsi back
 *                   c2 80 00                ret $128
 */
static void jmp_via_far_pointer(struct x86_64_out *o, uint64_t p)
{
	static const uint8_t head[] = { 0x48, 0x8d, 0x64, 0x24, 0x80, 0x56,
					0x48, 0xbe };
	static const uint8_t tail[] = { 0x48, 0x8b, 0x36, 0x48, 0x87, 0x34,
					0x24, 0xc2, 0x80, 0x00 };

	x86_64_put(o, head, sizeof(head));
	x86_64_put64(o, p);
	x86_64_put(o, tail, sizeof(tail));
}

/*
 * call *r/m64 (ff /2): the copy must push the original return address.
 *
 *   before (at A):  ff /2 <r/m>              call *r/m
 *   after  (at B):  push $A+len              (68 imm32, or lea + 2 x movl)
 *                   ff /4 <r/m'>             jmp *r/m
 *
 * The push moves %rsp, so an operand based on %rsp is refused, and a
 * RIP-relative operand is re-encoded for its new place.
 */
static int relocate_indirect_call(const struct x86_64_insn *in,
				  struct x86_64_out *o)
{
	uint8_t b[X86_64_MAX_INSN];
	uint64_t next = in->addr + in->len, jmp_at;

	if (in->opsize == 2 || (in->mod == 3 && in->rm == 4) ||
	    in->base == 4 || in->index == 4)
		return -EILSEQ;
	x86_64_push_imm64(o, next);
	jmp_at = x86_64_here(o);
	memcpy(b, in->bytes, in->len);
	b[in->modrm_off] = (in->modrm & ~0x38) | (4 << 3);
	if (in->rip_relative) {
		int64_t d = (int64_t)(x86_64_rip_target(in) - (jmp_at + in->len));

		if (d != (int32_t)d || in->adsize != 8) {
			jmp_via_far_pointer(o, x86_64_rip_target(in));
			return 0;
		}
		for (int i = 0; i < 4; i++)
			b[in->disp_off + i] = (uint64_t)d >> (8 * i);
	}
	x86_64_put(o, b, in->len);
	return 0;
}

int x86_64_relocate(const struct x86_64_insn *in, struct x86_64_out *o,
		    struct x86_64_step *step)
{
	memset(step, 0, sizeof(*step));
	step->scratch_hw = -1;

	if (in->is_rel_branch)
		return relocate_branch(in, o);
	if (in->enc == X86_64_ENC_LEGACY && in->map == X86_64_MAP_1BYTE &&
	    in->opcode == 0xff && ((in->modrm >> 3) & 7) == 2)
		return relocate_indirect_call(in, o);
	if (in->rip_relative) {
		uint64_t target = x86_64_rip_target(in);
		uint64_t next = x86_64_here(o) + in->len;

		if (in->adsize == 8 && x86_64_in_rel32(next, target)) {
			put_with_disp(o, in, (uint32_t)(target - next));
			return 0;
		}
		if (in->enc == X86_64_ENC_LEGACY && in->map == X86_64_MAP_1BYTE &&
		    in->opcode == 0xff && ((in->modrm >> 3) & 7) == 4 &&
		    in->opsize != 2 && in->adsize == 8) {
			jmp_via_far_pointer(o, target);
			return 0;
		}
		return relocate_rip_far(in, o, step);
	}
	x86_64_put(o, in->bytes, in->len);
	return 0;
}

/* Is `a` strictly inside the window (after its first byte)? */
static bool lands_inside(uint64_t a, uint64_t from, size_t len)
{
	return a > from && a < from + len;
}

/*
 * A jump pad's window.  Before / after:
 *
 *   A:    insn1              A:    e9 <pad>        jmp pad (written by the agent)
 *   A+k:  insn2                    (rest of the window, dead)
 *   A+n:  ...               A+n:  ...
 *
 *   pad (the caller's save / collect / restore first), then at `to`:
 *         insn1'                   relocated for its new address
 *         insn2'
 *         jmp A+n
 *
 * A call may only be the window's last instruction: its relocated form
 * pushes the original return address, which must lie outside the window.
 */
int x86_64_relocate_window(const uint8_t *code, size_t code_size,
			   uint64_t code_addr, uint64_t from, size_t min_len,
			   uint64_t to, uint8_t *out, size_t size,
			   size_t *inlen, size_t *outlen)
{
	struct x86_64_out o = { out, size, 0, to, false };
	struct x86_64_insn in;
	struct x86_64_step st;
	const char *why;
	size_t off, len = 0;
	int err;

	if (from < code_addr || from >= code_addr + code_size)
		return -ERANGE;
	off = from - code_addr;
	while (len < min_len) {
		if (off + len >= code_size)
			return -ERANGE;
		err = x86_64_decode(&in, code + off + len, code_size - off - len,
				    from + len);
		if (err)
			return err == -ENODATA ? -ERANGE : err;
		if (x86_64_classify(&in, &why) == ARCH_REJECT)
			return -EILSEQ;
		if (in.enc == X86_64_ENC_LEGACY && in.map == X86_64_MAP_1BYTE &&
		    (in.opcode == 0xe8 || (in.opcode == 0xff &&
					   ((in.modrm >> 3) & 7) == 2)) &&
		    len + in.len < min_len)
			return -EILSEQ;	/* a call must end the window */
		if ((err = x86_64_relocate(&in, &o, &st)))
			return err;
		if (st.step)
			return -EILSEQ;
		len += in.len;
	}

	/* No branch of the function may land inside the window. */
	for (size_t p = 0; p < code_size;) {
		err = x86_64_decode(&in, code + p, code_size - p, code_addr + p);
		if (err == -ENODATA)
			break;		/* trailing bytes: not an instruction */
		if (err)
			return -EILSEQ;
		if (in.is_rel_branch && lands_inside(in.target, from, len))
			return -EXDEV;
		p += in.len;
	}

	x86_64_jmp(&o, from + len);
	if (o.overflow)
		return -ENOSPC;
	*inlen = len;
	*outlen = o.len;
	return 0;
}
