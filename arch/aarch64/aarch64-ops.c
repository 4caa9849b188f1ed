/*
 * aarch64-ops.c - the A64 instruction engine behind struct arch_ops.
 *
 * Thin glue: an arch_insn carries the decoded struct aarch64_insn in its
 * private area, so the later entry points (emulate, xol_prepare ...)
 * never decode twice and need nothing but the arch_insn the agent kept.
 *
 * XOL slot for a boosted instruction, before / after:
 *
 *   A:   insn                 S:   insn'          relocated for S
 *   A+4: ...                       b A+4          back (+-128 MiB)
 *
 * When A+4 is out of the B's reach, or the relocation borrows a
 * register (a SIMD&FP literal beyond +-1 MiB), the slot holds insn'
 * alone and is single-stepped: the agent loads the scratch register,
 * steps until the pc reaches S + insn_len, and xol_fixup moves the pc to
 * A+4 and gives the register back.  Relocated branches end in branches
 * of their own and need no B back.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "arch/aarch64/aarch64.h"

_Static_assert(sizeof(struct aarch64_insn) <= sizeof(((struct arch_insn *)0)->priv),
	       "struct aarch64_insn must fit in arch_insn.priv");

static const struct aarch64_insn *priv(const struct arch_insn *insn)
{
	return (const struct aarch64_insn *)insn->priv;
}

int aarch64_op_insn_decode(const uint8_t *buf, size_t size, uint64_t addr,
			   struct arch_insn *insn)
{
	struct aarch64_insn *in = (struct aarch64_insn *)insn->priv;
	int err, s;

	memset(insn, 0, sizeof(*insn));
	insn->addr = addr;
	insn->strategy = ARCH_REJECT;
	if (size < AARCH64_INSN_LEN) {
		insn->reason = "truncated: an A64 instruction is 4 bytes";
		return -ENODATA;
	}
	insn->len = AARCH64_INSN_LEN;
	memcpy(insn->bytes, buf, AARCH64_INSN_LEN);
	if (addr & 3) {
		insn->reason = "misaligned: A64 instructions are 4-byte aligned";
		return -EILSEQ;
	}
	err = aarch64_decode(in, aarch64_word(buf), addr);
	if (err) {
		insn->reason = in->reason;
		return err;
	}
	s = aarch64_classify(in, buf + 4, size - 4, &insn->reason);
	if (s < 0)
		return s;
	insn->strategy = (enum arch_strategy)s;
	return 0;
}

int aarch64_op_insn_emulate(const struct arch_insn *insn,
			    struct arch_gpregs *regs, const struct arch_mem *mem)
{
	if (insn->strategy != ARCH_EMULATE)
		return -ENOSYS;
	return aarch64_simulate(priv(insn), regs, mem);
}

int aarch64_op_xol_prepare(const struct arch_insn *insn, uint64_t slot,
			   uint8_t *out, size_t size, struct arch_xol *xol)
{
	struct aarch64_out o = { out, size, 0, slot, false };
	const struct aarch64_insn *in = priv(insn);
	struct aarch64_step st;
	bool ends;
	int err;

	if (insn->strategy != ARCH_BOOST && insn->strategy != ARCH_STEP)
		return -ENOSYS;
	memset(xol, 0, sizeof(*xol));
	xol->slot = slot;
	xol->scratch_gpr = -1;
	if ((err = aarch64_relocate(in, &o, &st, &ends)))
		return err;
	xol->insn_len = (unsigned int)o.len;
	if (st.step || insn->strategy == ARCH_STEP ||
	    (!ends && !aarch64_in_b_reach(aarch64_here(&o), in->addr + 4))) {
		xol->step = true;
		xol->scratch_gpr = st.scratch;
		xol->scratch_value = st.scratch_value;
	} else if (!ends) {
		aarch64_emit_b(&o, in->addr + 4);
	}
	return o.overflow ? -ENOSPC : (int)o.len;
}

/*
 * A step from a load-exclusive goes over the whole exclusive sequence:
 * stepping into it would clear the monitor at every step and the
 * store-exclusive would never succeed (gdb does the same for its
 * software single-step).  The sequence ends at the first
 * store-exclusive within 16 instructions; it may leave early by one
 * conditional branch.  The stops are after the store and at that
 * branch's target.  Returns 0 when the word at `addr` does not open
 * such a sequence (the caller steps it like any other).
 */
#define EXCLUSIVE_WINDOW 16

static int exclusive_next_pcs(const struct aarch64_insn *ldx,
			      const struct arch_mem *mem, uint64_t pcs[2])
{
	uint64_t exit = 0;
	unsigned int exits = 0;

	if (!mem || !mem->read)
		return 0;
	for (unsigned int i = 1; i <= EXCLUSIVE_WINDOW; i++) {
		uint64_t at = ldx->addr + 4 * i;
		struct aarch64_insn in;
		uint8_t b[4];
		int err;

		if ((err = mem->read(mem->ctx, at, b, 4)))
			return err;
		aarch64_decode(&in, aarch64_word(b), at);
		switch (in.op) {
		case AARCH64_OP_STX:
			pcs[0] = at + 4;
			if (exits && exit != at + 4) {
				pcs[1] = exit;
				return 2;
			}
			return 1;
		case AARCH64_OP_BCOND:
		case AARCH64_OP_CBZ:
		case AARCH64_OP_CBNZ:
		case AARCH64_OP_TBZ:
		case AARCH64_OP_TBNZ:
			if (exits++)
				return 0;	/* more than one way out */
			exit = in.target;
			break;
		case AARCH64_OP_LDX:
		case AARCH64_OP_B:
		case AARCH64_OP_BL:
		case AARCH64_OP_BR:
		case AARCH64_OP_BLR:
		case AARCH64_OP_RET:
		case AARCH64_OP_BRA:
		case AARCH64_OP_BLRA:
		case AARCH64_OP_RETA:
			return 0;
		default:
			break;
		}
	}
	return 0;
}

int aarch64_op_insn_next_pcs(const struct arch_insn *insn,
			     const struct arch_gpregs *regs,
			     const struct arch_mem *mem, uint64_t pcs[2])
{
	const struct aarch64_insn *in = priv(insn);
	int n;

	if (in->op == AARCH64_OP_LDX &&
	    (n = exclusive_next_pcs(in, mem, pcs)) != 0)
		return n;
	return aarch64_next_pcs(in, regs, pcs);
}

/*
 * On aarch64 every register a simulated form writes (x0-x30, sp, pc,
 * PSTATE) goes back to the kernel in the one NT_PRSTATUS write that the
 * pc needs anyway, so a simulation costs no more than a boost unless it
 * reads memory: only the literal loads prefer a slot.
 */
bool aarch64_op_emulate_pc_only(const struct arch_insn *insn)
{
	if (insn->strategy != ARCH_EMULATE)
		return false;
	return priv(insn)->op != AARCH64_OP_LDR_LIT;
}

/*
 * A return address follows a BL, BLR or BLRAA-family word:
 *   bl     1 00101 imm26                       mask fc000000 = 94000000
 *   blr    1101011 0 0 01 11111 000000 Rn 00000  fffffc1f = d63f0000
 *   blraaz 1101011 0 0 01 11111 00001 M Rn 11111 fffff81f = d63f081f
 *   blraa  1101011 1 0 01 11111 00001 M Rn Rm    fffff800 = d73f0800
 */
bool aarch64_op_follows_call(const uint8_t *before, size_t n)
{
	uint32_t w;

	if (n < 4)
		return false;
	w = aarch64_word(before + n - 4);
	return (w & 0xfc000000u) == 0x94000000u ||
	       (w & 0xfffffc1fu) == 0xd63f0000u ||
	       (w & 0xfffff81fu) == 0xd63f081fu ||
	       (w & 0xfffff800u) == 0xd73f0800u;
}
