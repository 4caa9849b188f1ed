/*
 * arm-regs.c - the 32-bit ARM register file as gdb sees it, and the
 * arch's struct arch_ops.
 *
 * gdb's arm-with-neon target description: the features
 * org.gnu.gdb.arm.core, org.gnu.gdb.arm.vfp (VFPv3-D32) and
 * org.gnu.gdb.arm.neon (no registers of its own: it tells gdb to show
 * the q0-q15 and s0-s31 views of the d registers).
 *
 *   regnum  registers     bytes each
 *   0-12    r0-r12        4   (r11 fp in A32 code, r7 in Thumb code)
 *   13      sp            4
 *   14      lr            4
 *   15      pc            4
 *   16      cpsr          4
 *   17-48   d0-d31        8   (NT_ARM_VFP / PTRACE_GETVFPREGS)
 *   49      fpscr         4
 *
 * 328 bytes.  gdbserver's own arm-with-neon.xml numbers cpsr 25 (gdb's
 * internal number, after the FPA registers nobody has) but sends no bytes
 * for 16-24, so its `g` packet is this same block; here the target.xml
 * numbers are the block's order, and gdb uses whichever the XML says.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/arm/arm.h"

#define F_CORE "org.gnu.gdb.arm.core"
#define F_VFP "org.gnu.gdb.arm.vfp"

#define R(n) { "r" #n, 32, 4 * (n), NULL, "general", F_CORE }
#define D(n) { "d" #n, 64, 68 + 8 * (n), "ieee_double", "float", F_VFP }

static const struct arch_reg arm_regs[ARM_NREGS] = {
	R(0), R(1), R(2), R(3), R(4), R(5), R(6), R(7),
	R(8), R(9), R(10), R(11), R(12),
	{ "sp", 32, 52, "data_ptr", "general", F_CORE },
	{ "lr", 32, 56, NULL, "general", F_CORE },
	{ "pc", 32, 60, "code_ptr", "general", F_CORE },
	{ "cpsr", 32, 64, NULL, "general", F_CORE },
	D(0), D(1), D(2), D(3), D(4), D(5), D(6), D(7),
	D(8), D(9), D(10), D(11), D(12), D(13), D(14), D(15),
	D(16), D(17), D(18), D(19), D(20), D(21), D(22), D(23),
	D(24), D(25), D(26), D(27), D(28), D(29), D(30), D(31),
	{ "fpscr", 32, 324, "int", "float", F_VFP },
};

#define ARM_REGBLOCK_SIZE 328

_Static_assert(68 + 8 * 32 == 324, "d registers end where fpscr starts");

static unsigned int arm_nregs_for(unsigned int features)
{
	(void)features;
	return ARM_NREGS;
}

static size_t arm_regblock_size_for(unsigned int features)
{
	(void)features;
	return ARM_REGBLOCK_SIZE;
}

static int arm_target_xml(unsigned int features, char *buf, size_t size)
{
	static const char end[] = "</target>\n";
	static const char neon[] = "  <feature name=\"org.gnu.gdb.arm.neon\"/>\n";
	int n = arch_write_target_xml("arm", arm_regs, arm_nregs_for(features),
				      NULL, buf, size);
	size_t at;

	if (n < 0)
		return n;
	/* the empty neon feature goes before </target> */
	at = (size_t)n - (sizeof(end) - 1);
	if (strcmp(buf + at, end) != 0)
		return -EINVAL;
	if (at + sizeof(neon) - 1 + sizeof(end) > size)
		return -ENOSPC;
	memcpy(buf + at, neon, sizeof(neon) - 1);
	memcpy(buf + at + sizeof(neon) - 1, end, sizeof(end));
	return (int)(at + sizeof(neon) - 1 + sizeof(end) - 1);
}

/*
 * Assembler names of the integer registers: r0-r15 and the APCS names
 * gcc and gas also print (a1-a4, v1-v8, sb, sl, fp, ip, sp, lr, pc).
 */
int arm_asm_reg(const char *name, size_t len, struct arch_asm_reg *r)
{
	static const struct { const char *name; int regnum; } named[] = {
		{ "sp", ARM_SP }, { "lr", ARM_LR }, { "pc", ARM_PC },
		{ "fp", 11 }, { "ip", 12 }, { "sl", 10 }, { "sb", 9 },
		{ "a1", 0 }, { "a2", 1 }, { "a3", 2 }, { "a4", 3 },
		{ "v1", 4 }, { "v2", 5 }, { "v3", 6 }, { "v4", 7 },
		{ "v5", 8 }, { "v6", 9 }, { "v7", 10 }, { "v8", 11 },
	};
	unsigned int n = 0;

	r->size = 4;
	r->shift = 0;
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		if (strlen(named[i].name) == len &&
		    memcmp(named[i].name, name, len) == 0) {
			r->regnum = named[i].regnum;
			return 0;
		}
	}
	/* r<n>, n 0-15, decimal without leading zeros */
	if (len < 2 || len > 3 || name[0] != 'r')
		return -ENOENT;
	if (len == 3 && name[1] == '0')
		return -ENOENT;
	for (size_t i = 1; i < len; i++) {
		if (name[i] < '0' || name[i] > '9')
			return -ENOENT;
		n = 10 * n + (unsigned int)(name[i] - '0');
	}
	if (n > 15)
		return -ENOENT;
	r->regnum = (int)n;
	return 0;
}

static const int arm_expedite[] = { ARM_FP, ARM_SP, ARM_PC, -1 };
/* AAPCS: r0-r3 carry the arguments, r0 the result. */
static const int arm_arg_regs[] = { 0, 1, 2, 3, -1 };
/* udf #16 (e7f001f0), little-endian: Linux's ARM-state breakpoint, which
 * the kernel reports as SIGTRAP with the pc at it.  Thumb code takes
 * udf #1 (de01) or, over a 32-bit instruction, the T32 udf f7f0 a000
 * (arm.h ARM_BKPT_*): gdb's breakpoint kinds 2, 3 and 4. */
static const uint8_t arm_udf16[] = { 0xf0, 0x01, 0xf0, 0xe7 };
static const uint8_t arm_udf1_t16[] = { 0x01, 0xde };
/* A32 nop (hint #0, ARMv6K and later), as long as arm_udf16 */
static const uint8_t arm_nop[] = { 0x00, 0xf0, 0x20, 0xe3 };
static const uint8_t arm_udf_t32[] = { 0xf0, 0xf7, 0x00, 0xa0 };

static const uint8_t *arm_bp_insn_for_kind(unsigned int kind, size_t *len)
{
	switch (kind) {
	case ARM_BP_KIND_T16:
		*len = sizeof(arm_udf1_t16);
		return arm_udf1_t16;
	case ARM_BP_KIND_T32:
		*len = sizeof(arm_udf_t32);
		return arm_udf_t32;
	case ARM_BP_KIND_A32:
		*len = sizeof(arm_udf16);
		return arm_udf16;
	default:
		return NULL;
	}
}

/* A32 at an even address; in Thumb the 16-bit udf over a T16
 * instruction, and the 32-bit one over a T32 instruction (whose second
 * halfword a 16-bit breakpoint would leave for a step to land in).  Both
 * cover exactly the instruction, so nothing else is overwritten. */
static unsigned int arm_bp_kind_at(uint64_t addr, const uint8_t *buf, size_t size)
{
	if (!(addr & 1))
		return ARM_BP_KIND_A32;
	if (size >= 2) {
		unsigned int hw1 = buf[0] | (unsigned int)buf[1] << 8;
		if ((hw1 >> 11) >= 0x1d)
			return ARM_BP_KIND_T32;
	}
	return ARM_BP_KIND_T16;
}

const struct arch_ops arm_arch_ops = {
	.name = "arm",
	.gdb_arch = "arm",
	.regs = arm_regs,
	.nregs_for = arm_nregs_for,
	.regblock_size_for = arm_regblock_size_for,
	.target_xml = arm_target_xml,
	.pc_regnum = ARM_PC,
	.sp_regnum = ARM_SP,
	.fp_regnum = ARM_FP,
	.tp_regnum = -1,
	.tp2_regnum = -1,
	.expedite = arm_expedite,
	.bp_insn = arm_udf16,
	.bp_len = 4,
	.bp_pc_after_trap = 0,
	.nop_insn = arm_nop,

	.max_insn_len = 4,
	.insn_decode = arm_op_insn_decode,
	.insn_emulate = arm_op_insn_emulate,
	.xol_prepare = arm_op_xol_prepare,
	.xol_fixup = arch_xol_fixup,
	.pad_jump_len = 4,		/* B / B.W */
	.emit_jump = arm_emit_jump,
	.emit_jump_abs = arm_emit_jump_abs,
	/* Beyond B / B.W: ldr pc, =pad over 8 bytes (10 at Thumb 2 mod 4). */
	.emit_jump_far = arm_emit_jump_far,
	/* Jump pads (arm-pad.c): B / B.W to an A32 body. */
	.emit_save_regs = arm_emit_save_regs,
	.emit_restore_regs = arm_emit_restore_regs,
	.emit_pad_handoff = arm_emit_pad_handoff,
	.emit_pad_collect = arm_emit_pad_collect,
	.patch_branch = arm_patch_branch,
	/* Returns with no stop (arm-retpad.c): TPIDRURO, CNTVCT. */
	.emit_ret_entry = arm_emit_ret_entry,
	.emit_ret_exit = arm_emit_ret_exit,
	.ret_hist = true,
	.emit_ret_stamp = arm_emit_ret_stamp,
	.relocate_window = arm_relocate_window,
	.asm_reg = arm_asm_reg,
	.sdt_operand_parse = arm_sdt_operand_parse,
	.follows_call = arm_op_follows_call,
	/* Every simulated form is cheaper than a slot: always simulate. */
	.emulate_pc_only = NULL,
	.flags_regnum = ARM_CPSR,
	/* 32-bit ARM Linux has no PTRACE_SINGLESTEP: every step is a
	 * breakpoint at each of these. */
	.insn_next_pcs = arm_op_insn_next_pcs,

	.elf_machine = EM_ARM,
	.ptr_size = 4,
	.arg_regs = arm_arg_regs,
	.retval_regnum = 0,

	/* Thumb B.W's +-16 MiB back from the slot (A32 B reaches 32), less
	 * a page */
	.xol_reach = (1ull << 24) - 4096,

	.insn_decode_in = arm_op_insn_decode_in,

	.pad_layout = &arm_pad_layout,
	.pad_entry_regnum = 5,		/* r5 */
	.pad_frame_regnum = 4,		/* r4 */
	/* the Thumb switch, a far window's five 16-bit instructions each
	 * rewritten as four adds (16 bytes; a literal load is 8 and a
	 * literal), the nop before the literals, theirs, and nop + ldr.w pc,
	 * =back */
	.pad_window_max = ARM_PAD_THUMB_SWITCH + 5 * 16 + 2 + 5 * 4 + 10,
	.pad_window_isa_switch = ARM_PAD_THUMB_SWITCH,
	.pad_step = arm_pad_step,
	.callee_step = arm_callee_step,
	.bp_insn_for_kind = arm_bp_insn_for_kind,
	.bp_kind_at = arm_bp_kind_at,
};
