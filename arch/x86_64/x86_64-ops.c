/*
 * x86_64-ops.c - the instruction engine behind struct arch_ops.
 *
 * Thin glue: an arch_insn carries the decoded struct x86_64_insn in its
 * private area, so the later entry points (emulate, xol_prepare, ...)
 * never decode twice and need nothing but the arch_insn the agent kept.
 *
 * XOL slot for a boosted instruction, before / after:
 *
 *   A:   insn                 slot:  insn'          relocated for the slot
 *   A+n: ...                         jmp A+n        e9 rel32 or ff 25 abs64
 *
 * For a step (far RIP-relative operand in an instruction that uses %rsp)
 * the slot holds insn' alone; the agent loads the scratch register,
 * single-steps, and xol_fixup moves pc to A+n and restores the register.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "arch/x86_64/x86_64.h"

_Static_assert(sizeof(struct x86_64_insn) <= sizeof(((struct arch_insn *)0)->priv),
	       "struct x86_64_insn must fit in arch_insn.priv");

static const struct x86_64_insn *priv(const struct arch_insn *insn)
{
	return (const struct x86_64_insn *)insn->priv;
}

int x86_64_op_insn_decode(const uint8_t *buf, size_t size, uint64_t addr,
			  struct arch_insn *insn)
{
	struct x86_64_insn *in = (struct x86_64_insn *)insn->priv;
	int err, s;

	memset(insn, 0, sizeof(*insn));
	insn->addr = addr;
	insn->strategy = ARCH_REJECT;
	err = x86_64_decode(in, buf, size, addr);
	if (err == -ENODATA) {
		insn->reason = "truncated: more bytes needed to decode";
		return err;
	}
	if (err) {
		insn->reason = "not a valid x86-64 instruction";
		return -EILSEQ;
	}
	insn->len = in->len;
	memcpy(insn->bytes, in->bytes, in->len);
	s = x86_64_classify(in, &insn->reason);
	if (s < 0)
		return s;
	insn->strategy = (enum arch_strategy)s;
	return 0;
}

int x86_64_op_insn_emulate(const struct arch_insn *insn,
			   struct arch_gpregs *regs, const struct arch_mem *mem)
{
	if (insn->strategy != ARCH_EMULATE)
		return -ENOSYS;
	return x86_64_emulate(priv(insn), regs, mem);
}

int x86_64_op_xol_prepare(const struct arch_insn *insn, uint64_t slot,
			  uint8_t *out, size_t size, struct arch_xol *xol)
{
	struct x86_64_out o = { out, size, 0, slot, false };
	const struct x86_64_insn *in = priv(insn);
	struct x86_64_step st;
	int err;

	if (insn->strategy != ARCH_BOOST && insn->strategy != ARCH_STEP)
		return -ENOSYS;
	memset(xol, 0, sizeof(*xol));
	xol->slot = slot;
	xol->scratch_gpr = -1;
	if ((err = x86_64_relocate(in, &o, &st)))
		return err;
	xol->insn_len = o.len;
	if (st.step || insn->strategy == ARCH_STEP) {
		xol->step = true;
		if (st.scratch_hw >= 0) {
			xol->scratch_gpr = x86_64_gdb_regnum(st.scratch_hw);
			xol->scratch_value = st.scratch_value;
		}
	} else {
		x86_64_jmp(&o, in->addr + in->len);
	}
	return o.overflow ? -ENOSPC : (int)o.len;
}

int x86_64_op_relocate_window(const uint8_t *func, size_t func_size,
			      uint64_t func_addr, uint64_t from, size_t min_len,
			      uint64_t to, uint8_t *out, size_t size,
			      size_t *inlen)
{
	size_t outlen;
	int err;

	err = x86_64_relocate_window(func, func_size, func_addr, from, min_len,
				     to, out, size, inlen, &outlen);
	return err ? err : (int)outlen;
}

/*
 * The calls that push a return address, ending right at it:
 *   e8 rel32                 call rel32        5 bytes
 *   [pfx] [rex] ff /2 ...    call *r/m64       2 (ff d0) to 7+ bytes
 * Every length that decodes to a whole instruction ending at `before + n`
 * is tried; data bytes can look like a call, so this only rules out.
 */
bool x86_64_op_emulate_pc_only(const struct arch_insn *insn)
{
	/* The emulated forms (x86_64_emulated_form) that change rip only. */
	static const char *const pc_only[] = {
		"nop", "nop r/m", "pause", "endbr64", "endbr32",
		"jmp rel8", "jmp rel32", "jcc rel8", "jcc rel32",
		"jmp *reg", "jmp *mem",
	};

	if (insn->strategy != ARCH_EMULATE || !insn->reason)
		return false;
	for (size_t i = 0; i < sizeof(pc_only) / sizeof(pc_only[0]); i++)
		if (strcmp(insn->reason, pc_only[i]) == 0)
			return true;
	return false;
}

bool x86_64_op_follows_call(const uint8_t *before, size_t n)
{
	struct x86_64_insn in;

	for (size_t k = 2; k <= n && k <= X86_64_MAX_INSN; k++) {
		if (x86_64_decode(&in, before + n - k, k, 0) < 0 || in.len != k ||
		    in.enc != X86_64_ENC_LEGACY || in.map != X86_64_MAP_1BYTE)
			continue;
		if (in.opcode == 0xe8 || (in.opcode == 0xff && (in.reg & 7) == 2))
			return true;
	}
	return false;
}

/*
 * A thread stepped out of a jump pad: the pad's pushfq and popfq are done
 * here.  Stepped, pushfq would save the trap flag the step sets, and
 * popfq put it back for good (the kernel cannot tell it from the
 * program's own): the thread would trap on after the pad.  The image
 * pushfq makes has RF and TF clear, as the CPU's has outside a step.
 */
#define X86_TF 0x100u
#define X86_RF 0x10000u

int x86_64_op_pad_step(const uint8_t *insn, size_t len, struct arch_gpregs *regs,
		       const struct arch_mem *mem)
{
	uint64_t sp = regs->gpr[7], v;
	int err;

	if (len < 1 || (insn[0] != 0x9c && insn[0] != 0x9d))
		return ARCH_PAD_STEP;
	if (insn[0] == 0x9c) {
		v = regs->flags & ~(uint64_t)(X86_TF | X86_RF);
		if ((err = mem->write(mem->ctx, sp - 8, &v, 8)) < 0)
			return err;
		regs->gpr[7] = sp - 8;
	} else {
		if ((err = mem->read(mem->ctx, sp, &v, 8)) < 0)
			return err;
		regs->flags = (uint32_t)v & ~(X86_TF | X86_RF);
		regs->gpr[7] = sp + 8;
	}
	regs->pc += 1;
	return ARCH_PAD_DONE;
}
