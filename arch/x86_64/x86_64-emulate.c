/*
 * x86_64-emulate.c - apply an emulated instruction to a register file.
 *
 * The forms are those x86_64_emulated_form() names: the instructions
 * found at function entries (push, mov, sub/add/xor/cmp/test, lea,
 * endbr64, nop) and every direct branch, ret and indirect jmp / call.
 * Each is computed exactly as the CPU does it, flags included: results
 * are checked against the CPU itself by tests/arch/x86_64-emulate-native.
 *
 * Invariants:
 *  - pure: registers are a struct arch_gpregs (gdb numbering), memory is
 *    reached through the arch_mem callbacks only;
 *  - all or nothing for registers: the work is done on a copy that is
 *    stored back only when every memory access succeeded;
 *  - the instruction's address is insn->addr, not regs->pc (they are the
 *    same when the agent calls it at a probe hit);
 *  - flags the SDM leaves undefined (AF after logic ops) are cleared, as
 *    current Intel and AMD cores do.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "arch/x86_64/x86_64.h"

#define CF (1u << 0)
#define PF (1u << 2)
#define AF (1u << 4)
#define ZF (1u << 6)
#define SF (1u << 7)
#define OF (1u << 11)
#define ARITH_FLAGS (CF | PF | AF | ZF | SF | OF)

/* Hardware register number (ModRM, opcode+r) -> gdb register number. */
int x86_64_gdb_regnum(unsigned int hw)
{
	static const int8_t map[16] = {
		0 /* rax */, 2 /* rcx */, 3 /* rdx */, 1 /* rbx */,
		7 /* rsp */, 6 /* rbp */, 4 /* rsi */, 5 /* rdi */,
		8, 9, 10, 11, 12, 13, 14, 15,
	};
	return map[hw & 15];
}

#define REG(r, hw) ((r)->gpr[x86_64_gdb_regnum(hw)])
#define RSP(r) ((r)->gpr[7])
#define RCX(r) ((r)->gpr[2])

static uint64_t mask_of(unsigned int w)
{
	return w == 8 ? ~0ull : (1ull << (8 * w)) - 1;
}

/* Writes a register result of `w` bytes: 4-byte results zero-extend. */
static void set_reg(struct arch_gpregs *r, unsigned int hw, uint64_t v,
		    unsigned int w)
{
	if (w == 8)
		REG(r, hw) = v;
	else if (w == 4)
		REG(r, hw) = (uint32_t)v;
	else
		REG(r, hw) = (REG(r, hw) & ~mask_of(w)) | (v & mask_of(w));
}

/* An 8-bit register operand: ah..bh without REX, spl..dil with it. */
static uint64_t get_reg8(const struct x86_64_insn *in, struct arch_gpregs *r,
			 unsigned int hw)
{
	if (!in->rex && hw >= 4 && hw < 8)
		return (REG(r, hw - 4) >> 8) & 0xff;
	return REG(r, hw) & 0xff;
}

static uint64_t effective_address(const struct x86_64_insn *in,
				  const struct arch_gpregs *r)
{
	uint64_t a;

	if (in->rip_relative)
		return x86_64_rip_target(in);
	a = (uint64_t)(int64_t)in->disp;
	if (in->base >= 0)
		a += r->gpr[x86_64_gdb_regnum(in->base)];
	if (in->index >= 0)
		a += r->gpr[x86_64_gdb_regnum(in->index)] * in->scale;
	return a;
}

static int mem_read(const struct arch_mem *m, uint64_t addr, unsigned int w,
		    uint64_t *v)
{
	uint8_t b[8];
	int err;

	if (!m || !m->read)
		return -EFAULT;
	if ((err = m->read(m->ctx, addr, b, w)))
		return err;
	*v = 0;
	for (unsigned int i = 0; i < w; i++)
		*v |= (uint64_t)b[i] << (8 * i);
	return 0;
}

static int push64(struct arch_gpregs *r, const struct arch_mem *m, uint64_t v)
{
	uint8_t b[8];

	for (int i = 0; i < 8; i++)
		b[i] = v >> (8 * i);
	if (!m || !m->write)
		return -EFAULT;
	RSP(r) -= 8;
	return m->write(m->ctx, RSP(r), b, 8);
}

static int pop64(struct arch_gpregs *r, const struct arch_mem *m, uint64_t *v)
{
	int err = mem_read(m, RSP(r), 8, v);

	if (!err)
		RSP(r) += 8;
	return err;
}

static unsigned int parity(uint64_t v)
{
	return !__builtin_parity((unsigned int)(v & 0xff));
}

/* ALU operations by their grp1 number; TEST is 8. */
enum { ALU_ADD = 0, ALU_OR = 1, ALU_AND = 4, ALU_SUB = 5, ALU_XOR = 6,
       ALU_CMP = 7, ALU_TEST = 8 };

static uint64_t alu(int op, uint64_t a, uint64_t b, unsigned int w,
		    uint64_t *flags)
{
	uint64_t m = mask_of(w), sign = 1ull << (8 * w - 1), res = 0;
	uint64_t f = *flags & ~(uint64_t)ARITH_FLAGS;

	a &= m;
	b &= m;
	switch (op) {
	case ALU_ADD:
		res = (a + b) & m;
		if (res < a)
			f |= CF;
		if ((a ^ res) & (b ^ res) & sign)
			f |= OF;
		f |= (a ^ b ^ res) & AF;
		break;
	case ALU_SUB:
	case ALU_CMP:
		res = (a - b) & m;
		if (a < b)
			f |= CF;
		if ((a ^ b) & (a ^ res) & sign)
			f |= OF;
		f |= (a ^ b ^ res) & AF;
		break;
	case ALU_OR:
		res = a | b;
		break;
	case ALU_AND:
	case ALU_TEST:
		res = a & b;
		break;
	case ALU_XOR:
		res = a ^ b;
		break;
	}
	if (res == 0)
		f |= ZF;
	if (res & sign)
		f |= SF;
	if (parity(res))
		f |= PF;
	*flags = f;
	return res;
}

static bool alu_writes(int op)
{
	return op != ALU_CMP && op != ALU_TEST;
}

/* The r/m operand's value: a register or memory. */
static int rm_value(const struct x86_64_insn *in, struct arch_gpregs *r,
		    const struct arch_mem *m, unsigned int w, uint64_t *v)
{
	if (in->mod == 3) {
		*v = (w == 1) ? get_reg8(in, r, in->rm) : REG(r, in->rm) & mask_of(w);
		return 0;
	}
	return mem_read(m, effective_address(in, r), w, v);
}

static int emulate_alu(const struct x86_64_insn *in, struct arch_gpregs *r,
		       const struct arch_mem *m)
{
	uint8_t op = in->opcode, r3 = (in->modrm >> 3) & 7;
	unsigned int w = in->opsize;
	uint64_t a, b, res, rmv;
	int alu_op, err;
	bool to_reg;

	if (op == 0x80 || op == 0x38 || op == 0x3a || op == 0x84 || op == 0xf6)
		w = 1;
	if ((err = rm_value(in, r, m, w, &rmv)))
		return err;

	if (op >= 0x80 && op <= 0x83) {
		alu_op = r3;
		a = rmv;
		b = (uint64_t)in->imm;
		to_reg = false;
	} else if (op == 0xf6 || op == 0xf7) {
		alu_op = ALU_TEST;
		a = rmv;
		b = (uint64_t)in->imm;
		to_reg = false;
	} else {
		uint64_t regv = (w == 1) ? get_reg8(in, r, in->reg) : REG(r, in->reg);

		alu_op = (op == 0x84 || op == 0x85) ? ALU_TEST : (op >> 3) & 7;
		to_reg = op & 2;
		a = to_reg ? regv : rmv;
		b = to_reg ? rmv : regv;
	}
	res = alu(alu_op, a, b, w, &r->flags);
	if (alu_writes(alu_op)) {
		/* only register destinations are emulated (w is 4 or 8) */
		set_reg(r, to_reg ? in->reg : in->rm, res, w);
	}
	return 0;
}

static int branch_to(struct arch_gpregs *r, bool taken, uint64_t target,
		     uint64_t next)
{
	r->pc = taken ? target : next;
	return 0;
}

int x86_64_emulate(const struct x86_64_insn *in, struct arch_gpregs *regs,
		   const struct arch_mem *m)
{
	struct arch_gpregs r = *regs;
	const char *form = x86_64_emulated_form(in);
	uint64_t next = in->addr + in->len, v;
	uint8_t op = in->opcode, r3 = (in->modrm >> 3) & 7;
	unsigned int hw;
	int cc, err = 0;

	if (!form)
		return -ENOSYS;
	r.pc = next;

	if ((cc = x86_64_is_jcc(in)) >= 0) {
		branch_to(&r, x86_64_jcc_eval(cc, r.flags), in->target, next);
		goto out;
	}
	if (in->map == X86_64_MAP_0F)
		goto out;		/* nop r/m, endbr64, endbr32 */

	switch (op) {
	case 0x50 ... 0x57:
		hw = (op & 7) | (in->rex & 1) << 3;
		err = push64(&r, m, REG(&r, hw));
		break;
	case 0x58 ... 0x5f:
		hw = (op & 7) | (in->rex & 1) << 3;
		if (!(err = pop64(&r, m, &v)))
			REG(&r, hw) = v;
		break;
	case 0x68:
	case 0x6a:
		err = push64(&r, m, (uint64_t)in->imm);
		break;
	case 0x90:
		break;
	case 0xe8:
		err = push64(&r, m, next);
		r.pc = in->target;
		break;
	case 0xe9:
	case 0xeb:
		r.pc = in->target;
		break;
	case 0xc2:
	case 0xc3:
		if (!(err = pop64(&r, m, &r.pc)) && op == 0xc2)
			RSP(&r) += (uint16_t)in->imm;
		break;
	case 0xe0:
	case 0xe1:
	case 0xe2:
		RCX(&r) -= 1;
		branch_to(&r, RCX(&r) != 0 &&
			  (op == 0xe2 || (op == 0xe1) == !!(r.flags & ZF)),
			  in->target, next);
		break;
	case 0xe3:
		branch_to(&r, RCX(&r) == 0, in->target, next);
		break;
	case 0xff:
		if ((err = rm_value(in, &r, m, 8, &v)))
			break;
		if (r3 == 2)
			err = push64(&r, m, next);
		r.pc = v;
		break;
	case 0x89:
		set_reg(&r, in->rm, REG(&r, in->reg), in->opsize);
		break;
	case 0x8b:
		if (!(err = rm_value(in, &r, m, in->opsize, &v)))
			set_reg(&r, in->reg, v, in->opsize);
		break;
	case 0xb8 ... 0xbf:
		hw = (op & 7) | (in->rex & 1) << 3;
		set_reg(&r, hw, (uint64_t)in->imm, in->opsize);
		break;
	case 0xc7:
		set_reg(&r, in->rm, (uint64_t)in->imm, in->opsize);
		break;
	case 0x8d:
		set_reg(&r, in->reg, effective_address(in, &r), in->opsize);
		break;
	default:
		err = emulate_alu(in, &r, m);
		break;
	}
out:
	if (err)
		return err;
	*regs = r;
	return 0;
}
