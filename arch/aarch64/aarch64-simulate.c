/*
 * aarch64-simulate.c - apply a simulated A64 instruction to a register
 * file, and where a step of any instruction may go.
 *
 * The simulated forms are those that read the PC (aarch64-classify.c):
 * B, BL, B.cond, CBZ/CBNZ, TBZ/TBNZ, BR, BLR, RET, ADR, ADRP, the integer
 * literal loads (LDR Wt/Xt, LDRSW) and PRFM literal, plus NOP and BTI,
 * which only advance the PC.  Each is computed as the Arm ARM pseudocode
 * does; the results are compared with the CPU's under qemu by the
 * cross test bed.
 *
 * Invariants:
 *  - pure: registers are a struct arch_gpregs (gdb numbering: gpr[0-30]
 *    are x0-x30, gpr[31] is sp, flags is PSTATE as cpsr shows it), memory
 *    is reached through the arch_mem callbacks only;
 *  - all or nothing: the work is done on a copy stored back only when
 *    every memory access succeeded;
 *  - register number 31 in every simulated form is the zero register
 *    (reads 0, writes are dropped), never sp;
 *  - the instruction's address is insn->addr, not regs->pc;
 *  - PSTATE.BTYPE is what the CPU leaves: 0 after every form but the
 *    indirect branches, which set it for the landing pad at their
 *    target (BLR 0b10, BR 0b01).  The trap at a BTI-guarded function
 *    entry keeps the BTYPE of the call that got there; resuming past
 *    the entry with it still set would fault (SIGILL) at the next
 *    instruction.  The real BR sets 0b11 from a guarded page unless it
 *    goes through x16/x17; which pages are guarded is not known here,
 *    and 0b01 is the value every landing pad accepts.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "arch/aarch64/aarch64.h"

static uint64_t xreg(const struct arch_gpregs *r, unsigned int n)
{
	return n == 31 ? 0 : r->gpr[n];
}

static void set_xreg(struct arch_gpregs *r, unsigned int n, uint64_t v)
{
	if (n != 31)
		r->gpr[n] = v;
}

/*
 * Where an indirect branch to `v` goes: the Arm ARM's BranchAddr at EL0
 * under Linux, which enables top-byte-ignore for the lower half
 * (TCR_EL1.TBI0) without TBID0, so it applies to instruction addresses
 * too.  A target with bit 55 clear loses its top byte (a tag): `br` to
 * 0x2c00005508faab18 runs 0x5508faab18.  With bit 55 set (TBI1 is the
 * kernel's, off without KASAN) the value is the pc as it is, and faults.
 */
static uint64_t branch_addr(uint64_t v)
{
	return (v >> 55) & 1 ? v : v & 0x00ffffffffffffffull;
}

static void set_btype(struct arch_gpregs *r, unsigned int btype)
{
	r->flags = (r->flags & ~(uint64_t)AARCH64_PSTATE_BTYPE) |
		   (uint64_t)btype << AARCH64_PSTATE_BTYPE_SHIFT;
}

/* The value CBZ / CBNZ test: the W or X register. */
static uint64_t cb_value(const struct aarch64_insn *in,
			 const struct arch_gpregs *r)
{
	uint64_t v = xreg(r, in->rd);

	return in->sf ? v : (uint32_t)v;
}

/* Whether a conditional form branches; false for the unconditional. */
static bool taken(const struct aarch64_insn *in, const struct arch_gpregs *r)
{
	switch (in->op) {
	case AARCH64_OP_BCOND:
		return aarch64_cond_eval(in->cond, r->flags);
	case AARCH64_OP_CBZ:
		return cb_value(in, r) == 0;
	case AARCH64_OP_CBNZ:
		return cb_value(in, r) != 0;
	case AARCH64_OP_TBZ:
		return !((xreg(r, in->rd) >> in->bit) & 1);
	case AARCH64_OP_TBNZ:
		return (xreg(r, in->rd) >> in->bit) & 1;
	default:
		return false;
	}
}

static int load_literal(const struct aarch64_insn *in, struct arch_gpregs *r,
			const struct arch_mem *m)
{
	uint8_t b[8];
	uint64_t v = 0;
	int err;

	if (!m || !m->read)
		return -EFAULT;
	if ((err = m->read(m->ctx, in->target, b, in->size)))
		return err;
	for (unsigned int i = 0; i < in->size; i++)
		v |= (uint64_t)b[i] << (8 * i);
	if (in->sign)
		v = (uint64_t)aarch64_sext(v, 32);
	set_xreg(r, in->rd, v);
	return 0;
}

int aarch64_simulate(const struct aarch64_insn *in, struct arch_gpregs *regs,
		     const struct arch_mem *m)
{
	struct arch_gpregs r = *regs;
	uint64_t next = in->addr + 4, t;
	int err;

	set_btype(&r, 0);
	switch (in->op) {
	case AARCH64_OP_B:
		r.pc = in->target;
		break;
	case AARCH64_OP_BL:
		r.gpr[AARCH64_LR] = next;
		r.pc = in->target;
		break;
	case AARCH64_OP_BCOND:
	case AARCH64_OP_CBZ:
	case AARCH64_OP_CBNZ:
	case AARCH64_OP_TBZ:
	case AARCH64_OP_TBNZ:
		r.pc = taken(in, &r) ? in->target : next;
		break;
	case AARCH64_OP_BR:
		r.pc = branch_addr(xreg(&r, in->rn));
		set_btype(&r, 1);
		break;
	case AARCH64_OP_BLR:
		t = xreg(&r, in->rn);	/* read before x30 is written: blr x30 */
		r.gpr[AARCH64_LR] = next;
		r.pc = branch_addr(t);
		set_btype(&r, 2);
		break;
	case AARCH64_OP_RET:
		r.pc = branch_addr(xreg(&r, in->rn));
		break;
	case AARCH64_OP_ADR:
	case AARCH64_OP_ADRP:
		set_xreg(&r, in->rd, in->target);
		r.pc = next;
		break;
	case AARCH64_OP_LDR_LIT:
		if ((err = load_literal(in, &r, m)))
			return err;
		r.pc = next;
		break;
	case AARCH64_OP_PRFM_LIT:	/* a hint: never faults, no effect */
	case AARCH64_OP_NOP:
	case AARCH64_OP_BTI:
		r.pc = next;
		break;
	default:
		return -ENOSYS;
	}
	*regs = r;
	return 0;
}

/*
 * A pointer-authenticated target without its code: user addresses have
 * bit 55 clear and 48 significant bits (Linux gives a process more only
 * when it asks for them), the PAC sits above.
 */
static uint64_t strip_pac(uint64_t v)
{
	return v & 0x0000ffffffffffffull;
}

int aarch64_next_pcs(const struct aarch64_insn *in,
		     const struct arch_gpregs *r, uint64_t pcs[2])
{
	uint64_t next = in->addr + 4;

	switch (in->op) {
	case AARCH64_OP_B:
	case AARCH64_OP_BL:
		pcs[0] = in->target;
		return 1;
	case AARCH64_OP_BCOND:
		if (in->cond >= 14) {		/* al, nv: always */
			pcs[0] = in->target;
			return 1;
		}
		/* fall through */
	case AARCH64_OP_CBZ:
	case AARCH64_OP_CBNZ:
	case AARCH64_OP_TBZ:
	case AARCH64_OP_TBNZ:
		/* both, the taken one first: a step does not need the flags */
		pcs[0] = taken(in, r) ? in->target : next;
		pcs[1] = pcs[0] == next ? in->target : next;
		return pcs[0] == pcs[1] ? 1 : 2;
	case AARCH64_OP_BR:
	case AARCH64_OP_BLR:
	case AARCH64_OP_RET:
		pcs[0] = branch_addr(xreg(r, in->rn));
		return 1;
	case AARCH64_OP_BRA:
	case AARCH64_OP_BLRA:
		pcs[0] = strip_pac(xreg(r, in->rn));
		return 1;
	case AARCH64_OP_RETA:
		pcs[0] = strip_pac(r->gpr[AARCH64_LR]);
		return 1;
	default:
		pcs[0] = next;
		return 1;
	}
}
