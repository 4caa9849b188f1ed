/*
 * arm-ops.c - the A32 / Thumb instruction engine behind struct arch_ops.
 *
 * Thin glue: an arch_insn carries the decoded struct arm_insn in its
 * private area, so the later entry points never decode twice.  Bit 0 of
 * the address given to insn_decode selects Thumb (arm.h).
 *
 * IT blocks.  An instruction inside a Thumb IT block is conditional on
 * the block's condition, which the cpu keeps in cpsr.IT and advances
 * after each instruction.  The simulated forms honour it (arm-simulate.c
 * reads cpsr.IT, skips on a failing condition and advances it), so a
 * probe on them works.  A copy in a slot cannot: the slot's branch back
 * would itself run under the block's next condition (and a branch is
 * only allowed as a block's last instruction).  So a boosted or emulated
 * instruction inside a block is rejected; the IT instruction itself is
 * simulated (it only sets cpsr.IT), which is where a probe on a block
 * belongs.  Only the code before an instruction tells whether it is in
 * a block: insn_decode_in walks the function from its start; insn_decode
 * alone (no context) classifies as if outside any block.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "arch/arm/arm.h"

_Static_assert(sizeof(struct arm_insn) <= sizeof(((struct arch_insn *)0)->priv),
	       "struct arm_insn must fit in arch_insn.priv");

const struct arm_insn *arm_priv(const struct arch_insn *insn)
{
	return (const struct arm_insn *)insn->priv;
}

int arm_op_insn_decode(const uint8_t *buf, size_t size, uint64_t addr,
		       struct arch_insn *insn)
{
	struct arm_insn *in = (struct arm_insn *)insn->priv;
	bool thumb = addr & 1;
	int err, s;

	memset(insn, 0, sizeof(*insn));
	insn->addr = addr & ~1ull;
	insn->strategy = ARCH_REJECT;
	if (!thumb && (addr & 3)) {
		insn->reason = "misaligned: A32 instructions are 4-byte aligned";
		return -EILSEQ;
	}
	err = arm_decode(in, buf, size, addr, thumb);
	insn->len = in->len;
	memcpy(insn->bytes, buf, in->len && in->len <= size ? in->len : 0);
	if (err == -ENODATA) {
		insn->len = 0;
		insn->reason = thumb ? "truncated: this Thumb instruction is 4 bytes" :
				       "truncated: an A32 instruction is 4 bytes";
		return err;
	}
	if (err) {
		insn->reason = in->reason;
		return err;
	}
	s = arm_classify(in, buf + in->len, size - in->len, &insn->reason);
	if (s < 0)
		return s;
	insn->strategy = (enum arch_strategy)s;
	return 0;
}

int arm_op_insn_decode_in(const uint8_t *func, size_t func_size,
			  uint64_t func_addr, uint64_t addr,
			  struct arch_insn *insn)
{
	uint64_t start = func_addr & ~1ull, at = addr & ~1ull;
	unsigned int it = 0;
	size_t off = 0;
	int err;

	if (at < start || at - start > func_size) {
		memset(insn, 0, sizeof(*insn));
		insn->addr = at;
		insn->strategy = ARCH_REJECT;
		insn->reason = "outside the function";
		return -EILSEQ;
	}
	if (!(addr & 1))	/* A32 has no IT blocks */
		return arm_op_insn_decode(func + (at - start),
					  func_size - (at - start), addr, insn);
	/* Thumb: where the IT blocks are, from the function's start. */
	while (off < at - start) {
		uint16_t hw;

		if (off + 2 > func_size)
			break;
		hw = (uint16_t)(func[off] | func[off + 1] << 8);
		if ((hw & 0xff00) == 0xbf00 && (hw & 0xf))
			it = hw & 0xff;
		else
			it = arm_in_it(it) ? arm_it_advance(it) : 0;
		off += arm_thumb_len(hw);
	}
	if (off != at - start) {
		memset(insn, 0, sizeof(*insn));
		insn->addr = at;
		insn->strategy = ARCH_REJECT;
		insn->reason = "not an instruction boundary: the middle of a "
			       "32-bit Thumb instruction";
		return -EILSEQ;
	}
	err = arm_op_insn_decode(func + off, func_size - off, addr, insn);
	if (err || !arm_in_it(it))
		return err;
	if (insn->strategy == ARCH_BOOST || insn->strategy == ARCH_STEP) {
		insn->strategy = ARCH_REJECT;
		insn->reason = "inside an IT block: a copy in a slot cannot keep "
			       "the block's condition (probe the IT instruction)";
	}
	return 0;
}

int arm_op_insn_emulate(const struct arch_insn *insn,
			struct arch_gpregs *regs, const struct arch_mem *mem)
{
	if (insn->strategy != ARCH_EMULATE)
		return -ENOSYS;
	return arm_simulate(arm_priv(insn), regs, mem);
}

/*
 * The slot: the copy and a branch back (boost), or the copy and the
 * breakpoint of its instruction set (step: the pc renamed to a scratch
 * register, or a step the agent asked for).  32-bit ARM has no hardware
 * step: the agent resumes a step slot, and the breakpoint at
 * slot + insn_len stops it where xol_fixup expects.
 */
int arm_op_xol_prepare(const struct arch_insn *insn, uint64_t slot,
		       uint8_t *out, size_t size, struct arch_xol *xol)
{
	const struct arm_insn *in = arm_priv(insn);
	struct arm_out o = { out, size, 0, slot, false };
	struct arm_slot st;
	bool thumb = in->isa != ARM_ISA_A32;
	int err;

	if (insn->strategy != ARCH_BOOST && insn->strategy != ARCH_STEP)
		return -ENOSYS;
	if (slot & 3)
		return -EINVAL;
	memset(xol, 0, sizeof(*xol));
	xol->slot = slot;
	xol->scratch_gpr = -1;
	if ((err = arm_relocate(in, &o, &st)))
		return err;
	xol->insn_len = (unsigned int)st.insn_len;
	if (st.step || insn->strategy == ARCH_STEP) {
		xol->step = true;
		xol->scratch_gpr = st.scratch;
		xol->scratch_value = st.scratch_value;
		if (thumb)
			arm_put16(&o, ARM_BKPT_T16);
		else
			arm_put32(&o, ARM_BKPT_A32);
	} else {
		arm_emit_jump_from(&o, thumb, (insn->addr + insn->len) |
				   (thumb ? 1 : 0));
	}
	return o.overflow ? -ENOSPC : (int)o.len;
}

/*
 * A step from a load-exclusive goes over the whole exclusive sequence:
 * a breakpoint inside it is an exception that clears the monitor, and
 * the store-exclusive would fail on every retry (gdb's software
 * single-step does the same).  The sequence ends at the first
 * store-exclusive within 16 instructions; it may leave early by one
 * conditional branch (B<c>, CBZ, CBNZ).  The stops are after the store
 * and at that branch's target.  Returns 0 when the load does not open
 * such a sequence (the caller steps it like any other instruction).
 */
#define EXCLUSIVE_WINDOW 16

static int exclusive_next_pcs(const struct arm_insn *ldrex,
			      const struct arch_mem *mem, uint64_t pcs[2])
{
	bool thumb = ldrex->isa != ARM_ISA_A32;
	uint64_t at = ldrex->addr + ldrex->len, exit = 0;
	unsigned int exits = 0;

	if (!mem || !mem->read)
		return 0;
	for (int i = 0; i < EXCLUSIVE_WINDOW; i++) {
		struct arm_insn in;
		uint8_t b[4];
		int err;

		if ((err = mem->read(mem->ctx, at, b, 2)))
			return err;
		if ((!thumb || arm_thumb_len((uint16_t)(b[0] | b[1] << 8)) == 4) &&
		    (err = mem->read(mem->ctx, at + 2, b + 2, 2)))
			return err;
		arm_decode(&in, b, 4, at | thumb, thumb);
		if (arm_is_store_exclusive(&in)) {
			pcs[0] = (at + in.len) | thumb;
			if (exits && exit != pcs[0]) {
				pcs[1] = exit;
				return 2;
			}
			return 1;
		}
		if (arm_is_load_exclusive(&in) || arm_leaves_for_good(&in))
			return 0;
		if (in.op == ARM_OP_B || in.op == ARM_OP_CBZ ||
		    in.op == ARM_OP_CBNZ) {
			if (exits++)
				return 0;	/* more than one way out */
			exit = in.target;
		} else if (in.writes_pc) {
			return 0;		/* an indirect way out */
		}
		at += in.len;
	}
	return 0;
}

int arm_op_insn_next_pcs(const struct arch_insn *insn,
			 const struct arch_gpregs *regs,
			 const struct arch_mem *mem, uint64_t pcs[2])
{
	const struct arm_insn *in = arm_priv(insn);
	int n;

	if (arm_is_load_exclusive(in) && !arm_in_it(arm_itstate(regs->flags)) &&
	    (n = exclusive_next_pcs(in, mem, pcs)) != 0)
		return n;
	return arm_next_pcs(in, regs, mem, pcs);
}

/*
 * A return address follows a call: A32 BL (cond 1011 imm24), BLX label
 * (1111 101H), BLX Rm (cond 0001 0010 1111 1111 1111 0011 Rm); Thumb BL
 * and BLX label (11110 ... | 11x1 / 11x0 ...), T16 BLX Rm (0100 0111 1
 * Rm 000).  The return address's bit 0 (Thumb) is the caller's business:
 * `before` ends just below it.
 */
bool arm_op_follows_call(const uint8_t *before, size_t n)
{
	uint32_t w;
	uint16_t h1, h2;

	if (n >= 2) {
		h2 = (uint16_t)(before[n - 2] | before[n - 1] << 8);
		if ((h2 & 0xff87) == 0x4780)
			return true;
	}
	if (n < 4)
		return false;
	w = (uint32_t)before[n - 4] | (uint32_t)before[n - 3] << 8 |
	    (uint32_t)before[n - 2] << 16 | (uint32_t)before[n - 1] << 24;
	if (((w & 0x0f000000u) == 0x0b000000u && (w >> 28) != 15) ||
	    (w & 0xfe000000u) == 0xfa000000u ||
	    (w & 0x0ffffff0u) == 0x012fff30u)
		return true;
	h1 = (uint16_t)(before[n - 4] | before[n - 3] << 8);
	h2 = (uint16_t)(before[n - 2] | before[n - 1] << 8);
	return (h1 & 0xf800) == 0xf000 && (h2 & 0xc000) == 0xc000;
}
