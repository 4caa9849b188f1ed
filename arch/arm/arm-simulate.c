/*
 * arm-simulate.c - apply a simulated A32 / Thumb instruction to a register
 * file, and where a software single-step of any instruction goes.
 *
 * The simulated forms are those arm-classify.c lists; each is computed
 * as the Arm ARM pseudocode does (AddWithCarry, Shift_C, BXWritePC ...).
 * 32-bit ARM Linux has no PTRACE_SINGLESTEP, so arm_next_pcs is what a
 * step is built from: a breakpoint at each address it returns.
 *
 * Invariants:
 *  - pure: registers are a struct arch_gpregs (gpr[0-14] r0-r14, pc
 *    with bit 0 clear, flags the cpsr: T says the instruction set, IT
 *    the block), memory is reached through the arch_mem callbacks;
 *  - all or nothing for registers: the work is done on a copy stored
 *    back only when every memory access succeeded (an STM may have
 *    written part of its words before a fault);
 *  - the pc an instruction reads is its address + 8 (A32) or + 4
 *    (Thumb), from insn->addr, never from regs->pc;
 *  - the condition is honoured: A32 cond, a Thumb B<c>'s own, or inside
 *    an IT block the block's (cpsr.IT); a failing one only moves the pc
 *    to the next instruction.  In Thumb, ITSTATE advances after every
 *    instruction of a block, executed or skipped.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "arch/arm/arm.h"

static bool is_thumb(const struct arm_insn *in)
{
	return in->isa != ARM_ISA_A32;
}

static uint32_t reg(const struct arm_insn *in, const struct arch_gpregs *r,
		    unsigned int n)
{
	return n == 15 ? arm_pc_value(in) : (uint32_t)r->gpr[n];
}

static void set_reg(struct arch_gpregs *r, unsigned int n, uint32_t v)
{
	r->gpr[n] = v;
}

static void set_thumb(struct arch_gpregs *r, bool t)
{
	if (t)
		r->flags |= ARM_PSR_T;
	else
		r->flags &= ~(uint64_t)ARM_PSR_T;
}

/*
 * BXWritePC: bit 0 picks the instruction set.  An A32 target with bit 1
 * set is UNPREDICTABLE; the pc keeps it, as the cpu does (it then takes
 * a prefetch abort there).
 */
static void bx_write_pc(struct arch_gpregs *r, uint32_t v)
{
	set_thumb(r, v & 1);
	r->pc = v & ~1u;
}

/* BranchWritePC: stays in the current set. */
static void branch_write_pc(const struct arm_insn *in, struct arch_gpregs *r,
			    uint32_t v)
{
	r->pc = is_thumb(in) ? v & ~1u : v & ~3u;
}

/* ALUWritePC: interworking in A32 (ARMv7), a plain branch in Thumb. */
static void alu_write_pc(const struct arm_insn *in, struct arch_gpregs *r,
			 uint32_t v)
{
	if (is_thumb(in))
		branch_write_pc(in, r, v);
	else
		bx_write_pc(r, v);
}

static int read_mem(const struct arch_mem *m, uint32_t addr, void *buf,
		    size_t len)
{
	if (!m || !m->read)
		return -EFAULT;
	return m->read(m->ctx, addr, buf, len);
}

static int read32(const struct arch_mem *m, uint32_t addr, uint32_t *v)
{
	uint8_t b[4];
	int err = read_mem(m, addr, b, 4);

	if (!err)
		*v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
		     (uint32_t)b[3] << 24;
	return err;
}

static int write32(const struct arch_mem *m, uint32_t addr, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
			 (uint8_t)(v >> 24) };

	if (!m || !m->write)
		return -EFAULT;
	return m->write(m->ctx, addr, b, 4);
}

/* Shift_C with DecodeImmShift's meaning of a zero amount. */
static uint32_t shift_c(uint32_t v, unsigned int type, unsigned int n,
			bool carry_in, bool *carry_out)
{
	*carry_out = carry_in;
	switch (type) {
	case ARM_LSL:
		if (n == 0)
			return v;
		*carry_out = (v >> (32 - n)) & 1;
		return v << n;
	case ARM_LSR:
		if (n == 0)
			n = 32;
		*carry_out = (v >> (n - 1)) & 1;
		return n == 32 ? 0 : v >> n;
	case ARM_ASR:
		if (n == 0)
			n = 32;
		*carry_out = (v >> (n - 1)) & 1;
		return n == 32 ? (uint32_t)((int32_t)v >> 31) :
				 (uint32_t)((int32_t)v >> n);
	default:
		if (n == 0) {		/* RRX */
			*carry_out = v & 1;
			return (v >> 1) | (uint32_t)carry_in << 31;
		}
		*carry_out = (v >> (n - 1)) & 1;
		return (v >> n) | (v << (32 - n));
	}
}

static uint32_t add_with_carry(uint32_t x, uint32_t y, bool carry_in,
			       bool *carry, bool *overflow)
{
	uint64_t u = (uint64_t)x + y + carry_in;
	int64_t s = (int64_t)(int32_t)x + (int32_t)y + carry_in;
	uint32_t res = (uint32_t)u;

	*carry = u >> 32;
	*overflow = (int64_t)(int32_t)res != s;
	return res;
}

/* Data processing with the pc (ARM_OP_DP): the A32 ALU, and T16 ADD/MOV. */
static void simulate_dp(const struct arm_insn *in, struct arch_gpregs *r)
{
	bool c_in = r->flags & ARM_PSR_C, carry = c_in, overflow = false;
	bool arith = true, write = true;
	uint32_t a = reg(in, r, in->rn), b, res;

	if (in->isa == ARM_ISA_T16) {
		b = reg(in, r, in->rm);
	} else if (in->imm_form) {
		b = in->imm;
		if (in->imm_carry_valid)
			carry = in->imm_carry;
	} else {
		b = shift_c(reg(in, r, in->rm), in->shift_type, in->shift_n,
			    c_in, &carry);
	}
	switch (in->dp) {
	case ARM_DP_AND: res = a & b; arith = false; break;
	case ARM_DP_EOR: res = a ^ b; arith = false; break;
	case ARM_DP_SUB: res = add_with_carry(a, ~b, true, &carry, &overflow); break;
	case ARM_DP_RSB: res = add_with_carry(~a, b, true, &carry, &overflow); break;
	case ARM_DP_ADD: res = add_with_carry(a, b, false, &carry, &overflow); break;
	case ARM_DP_ADC: res = add_with_carry(a, b, c_in, &carry, &overflow); break;
	case ARM_DP_SBC: res = add_with_carry(a, ~b, c_in, &carry, &overflow); break;
	case ARM_DP_RSC: res = add_with_carry(~a, b, c_in, &carry, &overflow); break;
	case ARM_DP_TST: res = a & b; arith = false; write = false; break;
	case ARM_DP_TEQ: res = a ^ b; arith = false; write = false; break;
	case ARM_DP_CMP:
		res = add_with_carry(a, ~b, true, &carry, &overflow);
		write = false;
		break;
	case ARM_DP_CMN:
		res = add_with_carry(a, b, false, &carry, &overflow);
		write = false;
		break;
	case ARM_DP_ORR: res = a | b; arith = false; break;
	case ARM_DP_MOV: res = b; arith = false; break;
	case ARM_DP_BIC: res = a & ~b; arith = false; break;
	default: res = ~b; arith = false; break;	/* MVN */
	}
	if (write) {
		if (in->rd == 15)
			alu_write_pc(in, r, res);
		else
			set_reg(r, in->rd, res);
	}
	if (in->setflags) {
		uint64_t f = r->flags & ~(uint64_t)(ARM_PSR_N | ARM_PSR_Z |
						    ARM_PSR_C | ARM_PSR_V);

		f |= (res >> 31) ? ARM_PSR_N : 0;
		f |= res == 0 ? ARM_PSR_Z : 0;
		f |= carry ? ARM_PSR_C : 0;
		if (arith)
			f |= overflow ? ARM_PSR_V : 0;
		else
			f |= r->flags & ARM_PSR_V;
		r->flags = f;
	}
}

static int simulate_literal(const struct arm_insn *in, struct arch_gpregs *r,
			    const struct arch_mem *m)
{
	uint8_t b[8];
	uint32_t v = 0;
	int err;

	if ((err = read_mem(m, in->target, b, in->size)))
		return err;
	for (unsigned int i = 0; i < in->size && i < 4; i++)
		v |= (uint32_t)b[i] << (8 * i);
	if (in->sign && in->size < 4)
		v = (uint32_t)((int32_t)(v << (32 - 8 * in->size)) >> (32 - 8 * in->size));
	if (in->size == 8) {
		set_reg(r, in->rt, v);
		set_reg(r, in->rt2, (uint32_t)b[4] | (uint32_t)b[5] << 8 |
			(uint32_t)b[6] << 16 | (uint32_t)b[7] << 24);
	} else if (in->rt == 15) {
		bx_write_pc(r, v);
	} else {
		set_reg(r, in->rt, v);
	}
	return 0;
}

static int simulate_ldr_pc(const struct arm_insn *in, struct arch_gpregs *r,
			   const struct arch_mem *m)
{
	uint32_t base = reg(in, r, in->rn), off, addr, v;
	bool unused;
	int err;

	off = in->imm_form ? in->imm :
	      shift_c(reg(in, r, in->rm), in->shift_type, in->shift_n,
		      r->flags & ARM_PSR_C, &unused);
	addr = in->add ? base + off : base - off;
	if ((err = read32(m, in->pre ? addr : base, &v)))
		return err;
	if (in->wback)
		set_reg(r, in->rn, addr);
	bx_write_pc(r, v);
	return 0;
}

/* LDM / STM: IA, IB, DA, DB from P and U; registers in ascending order. */
static uint32_t block_start(const struct arm_insn *in, uint32_t base,
			    unsigned int n)
{
	if (in->add)
		return in->pre ? base + 4 : base;
	return in->pre ? base - 4 * n : base - 4 * n + 4;
}

static int simulate_ldm(const struct arm_insn *in, struct arch_gpregs *r,
			const struct arch_mem *m)
{
	unsigned int n = (unsigned int)__builtin_popcount(in->reglist);
	uint32_t base = reg(in, r, in->rn), addr = block_start(in, base, n);
	uint32_t v[16];
	int err;

	for (unsigned int i = 0, k = 0; i < 16; i++) {
		if (!((in->reglist >> i) & 1))
			continue;
		if ((err = read32(m, addr + 4 * k++, &v[i])))
			return err;
	}
	if (in->wback)
		set_reg(r, in->rn, in->add ? base + 4 * n : base - 4 * n);
	for (unsigned int i = 0; i < 15; i++)
		if ((in->reglist >> i) & 1)
			set_reg(r, i, v[i]);
	bx_write_pc(r, v[15]);
	return 0;
}

static int simulate_stm(const struct arm_insn *in, struct arch_gpregs *r,
			const struct arch_mem *m)
{
	unsigned int n = (unsigned int)__builtin_popcount(in->reglist);
	uint32_t base = reg(in, r, in->rn), addr = block_start(in, base, n);
	int err;

	for (unsigned int i = 0, k = 0; i < 16; i++) {
		if (!((in->reglist >> i) & 1))
			continue;
		/* PCStoreValue: the instruction's address + 8 in A32 */
		if ((err = write32(m, addr + 4 * k++, reg(in, r, i))))
			return err;
	}
	if (in->wback)
		set_reg(r, in->rn, in->add ? base + 4 * n : base - 4 * n);
	return 0;
}

static int simulate_table_branch(const struct arm_insn *in,
				 struct arch_gpregs *r, const struct arch_mem *m)
{
	uint32_t base = reg(in, r, in->rn), idx = reg(in, r, in->rm);
	uint8_t b[2] = { 0, 0 };
	int err;

	if (in->op == ARM_OP_TBB)
		err = read_mem(m, base + idx, b, 1);
	else
		err = read_mem(m, base + 2 * idx, b, 2);
	if (err)
		return err;
	r->pc = arm_pc_value(in) + 2 * ((uint32_t)b[0] | (uint32_t)b[1] << 8);
	return 0;
}

/* The condition the instruction runs under, cpsr.IT included. */
static unsigned int effective_cond(const struct arm_insn *in, uint64_t cpsr)
{
	unsigned int it = arm_itstate(cpsr);

	if (is_thumb(in) && arm_in_it(it) && in->op != ARM_OP_IT)
		return arm_it_cond(it);
	return in->cond;
}

/*
 * The effect of `in` on `r`; with `force`, as if its condition held (the
 * other way of a conditional step).
 */
static int simulate(const struct arm_insn *in, struct arch_gpregs *regs,
		    const struct arch_mem *m, bool force)
{
	struct arch_gpregs r = *regs;
	uint32_t next = (uint32_t)in->addr + in->len;
	unsigned int it = arm_itstate(r.flags);
	int err = 0;

	r.pc = next;
	if (is_thumb(in) && arm_in_it(it))
		r.flags = arm_with_itstate(r.flags, arm_it_advance(it));
	if (!force && !arm_cond_eval(effective_cond(in, regs->flags), regs->flags)) {
		*regs = r;
		return 0;
	}
	switch (in->op) {
	case ARM_OP_B:
		branch_write_pc(in, &r, in->target);
		break;
	case ARM_OP_BL:
		set_reg(&r, ARM_LR, is_thumb(in) ? next | 1 : next);
		branch_write_pc(in, &r, in->target);
		break;
	case ARM_OP_BLX_IMM:
		set_reg(&r, ARM_LR, is_thumb(in) ? next | 1 : next);
		bx_write_pc(&r, in->target);
		break;
	case ARM_OP_BX:
		bx_write_pc(&r, reg(in, regs, in->rm));
		break;
	case ARM_OP_BLX_REG: {
		uint32_t t = reg(in, regs, in->rm);	/* before lr: blx lr */

		set_reg(&r, ARM_LR, is_thumb(in) ? next | 1 : next);
		bx_write_pc(&r, t);
		break;
	}
	case ARM_OP_CBZ:
	case ARM_OP_CBNZ:
		if (force || ((uint32_t)r.gpr[in->rn] == 0) == (in->op == ARM_OP_CBZ))
			r.pc = in->target & ~1u;
		break;
	case ARM_OP_TBB:
	case ARM_OP_TBH:
		err = simulate_table_branch(in, &r, m);
		break;
	case ARM_OP_LDR_LIT:
		err = simulate_literal(in, &r, m);
		break;
	case ARM_OP_ADR:
		set_reg(&r, in->rd, in->target);
		break;
	case ARM_OP_DP:
		simulate_dp(in, &r);
		break;
	case ARM_OP_LDR_PC:
		err = simulate_ldr_pc(in, &r, m);
		break;
	case ARM_OP_LDM:
		err = simulate_ldm(in, &r, m);
		break;
	case ARM_OP_STM_PC:
		err = simulate_stm(in, &r, m);
		break;
	case ARM_OP_IT:
		r.flags = arm_with_itstate(r.flags, in->it);
		break;
	case ARM_OP_PLD_LIT:	/* a hint: no access, no fault */
	case ARM_OP_NOP:
		break;
	default:
		return -ENOSYS;
	}
	if (err)
		return err;
	*regs = r;
	return 0;
}

int arm_simulate(const struct arm_insn *in, struct arch_gpregs *regs,
		 const struct arch_mem *m)
{
	return simulate(in, regs, m, false);
}

/* Reads only: a step's look at an STM must not store. */
struct ro_mem {
	const struct arch_mem *m;
};

static int ro_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct ro_mem *ro = ctx;

	return read_mem(ro->m, (uint32_t)addr, buf, len);
}

static int ro_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	(void)ctx; (void)addr; (void)buf; (void)len;
	return 0;
}

/* The address the cpu goes to, bit 0 the Thumb state there. */
static uint64_t tagged(const struct arch_gpregs *r)
{
	return (r->pc & 0xffffffffu) | ((r->flags & ARM_PSR_T) ? 1 : 0);
}

/*
 * From `pos`, with ITSTATE `it` for the instruction there: the first
 * instruction whose condition holds under `cpsr`, or the one after the
 * block.  `same` (0-15, or -1 for any failing one) skips only the
 * instructions with that condition instead.
 */
static int it_skip(const struct arch_mem *m, uint32_t pos, unsigned int it,
		   uint64_t cpsr, int same, uint64_t *out)
{
	while (arm_in_it(it) &&
	       (same < 0 ? !arm_cond_eval(arm_it_cond(it), cpsr) :
			   (int)arm_it_cond(it) == same)) {
		uint8_t b[2];
		int err = read_mem(m, pos, b, 2);

		if (err)
			return err;
		pos += arm_thumb_len((uint16_t)(b[0] | b[1] << 8));
		it = arm_it_advance(it);
	}
	*out = pos | 1;
	return 0;
}

int arm_next_pcs(const struct arm_insn *in, const struct arch_gpregs *regs,
		 const struct arch_mem *m, uint64_t pcs[2])
{
	struct ro_mem ro = { m };
	struct arch_mem rm = { &ro, ro_read, ro_write };
	struct arch_gpregs r;
	uint32_t next = (uint32_t)in->addr + in->len;
	unsigned int it = is_thumb(in) ? arm_itstate(regs->flags) : 0;
	uint64_t cpsr = regs->flags;
	int err;

	/*
	 * A breakpoint on an instruction of an IT block whose condition
	 * fails may never trap (whether a UDF there is conditional is the
	 * core's choice), so a step inside a block stops only where the
	 * cpu will execute: gdb's rule.
	 */
	if (in->op == ARM_OP_IT) {
		if ((err = it_skip(m, next, in->it, cpsr, -1, &pcs[0])))
			return err;
		return 1;
	}
	if (arm_in_it(it) && !arm_cond_eval(arm_it_cond(it), cpsr)) {
		if ((err = it_skip(m, next, arm_it_advance(it), cpsr, -1, &pcs[0])))
			return err;
		return 1;
	}
	if (arm_in_it(it) && (it & 0xf) != 8) {
		/*
		 * It runs and is not the block's last (so it does not branch):
		 * it may change the flags.  The next one runs if its condition
		 * holds then; if not, neither do those with the same condition
		 * after it, and the first with the other one (or the end) does.
		 */
		unsigned int it2 = arm_it_advance(it);

		pcs[0] = next | 1;
		if ((err = it_skip(m, next, it2, cpsr, (int)arm_it_cond(it2), &pcs[1])))
			return err;
		return pcs[1] == pcs[0] ? 1 : 2;
	}
	switch (in->op) {
	case ARM_OP_OTHER:
	case ARM_OP_PC_SCRATCH:
	case ARM_OP_REJECT:
	case ARM_OP_EXCLUSIVE:
		pcs[0] = next | (is_thumb(in) ? 1 : 0);
		return 1;
	default:
		break;
	}
	r = *regs;
	if ((err = simulate(in, &r, &rm, false)))
		return err;
	pcs[0] = tagged(&r);
	/* a conditional one: the other way too, the actual one first */
	if (effective_cond(in, cpsr) >= 14 &&
	    in->op != ARM_OP_CBZ && in->op != ARM_OP_CBNZ)
		return 1;	/* al: one way only */
	r = *regs;
	if ((err = simulate(in, &r, &rm, true)))
		return err;
	pcs[1] = tagged(&r) != pcs[0] ? tagged(&r) : next | (is_thumb(in) ? 1 : 0);
	return pcs[1] == pcs[0] ? 1 : 2;
}
