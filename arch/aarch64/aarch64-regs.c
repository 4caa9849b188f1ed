/*
 * aarch64-regs.c - the AArch64 register file as gdb sees it, and the
 * arch's struct arch_ops.
 *
 * The table is gdb's aarch64 numbering: the registers of the features
 * org.gnu.gdb.aarch64.core and org.gnu.gdb.aarch64.fpu, in the order
 * gdbserver sends them in a `g` packet.  That order is also the order of
 * target.xml and of a trace frame's `R` block; offsets are packed in it.
 *
 *   regnum  registers            bytes each
 *   0-30    x0-x30               8   (x29 frame pointer, x30 link register)
 *   31      sp                   8
 *   32      pc                   8
 *   33      cpsr                 4   (PSTATE as NT_PRSTATUS holds it)
 *   34-65   v0-v31               16  (NT_FPREGSET)
 *   66-67   fpsr, fpcr           4
 *
 * 788 bytes in all.  SVE (the z, p and ffr registers and vg) and pointer
 * authentication masks would be further features; they are not described
 * yet (no feature bit of this arch is defined), so gdb sees the v
 * registers of an SVE machine as their low 128 bits, which is what
 * NT_FPREGSET gives.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/aarch64/aarch64.h"

#define F_CORE "org.gnu.gdb.aarch64.core"
#define F_FPU "org.gnu.gdb.aarch64.fpu"

#define X(n) { "x" #n, 64, 8 * (n), "int", "general", F_CORE }
#define V(n) { "v" #n, 128, 268 + 16 * (n), "aarch64_vec", "vector", F_FPU }

static const struct arch_reg aarch64_regs[AARCH64_NREGS] = {
	X(0), X(1), X(2), X(3), X(4), X(5), X(6), X(7),
	X(8), X(9), X(10), X(11), X(12), X(13), X(14), X(15),
	X(16), X(17), X(18), X(19), X(20), X(21), X(22), X(23),
	X(24), X(25), X(26), X(27), X(28), X(29), X(30),
	{ "sp", 64, 248, "data_ptr", "general", F_CORE },
	{ "pc", 64, 256, "code_ptr", "general", F_CORE },
	{ "cpsr", 32, 264, "aarch64_pstate", "general", F_CORE },
	V(0), V(1), V(2), V(3), V(4), V(5), V(6), V(7),
	V(8), V(9), V(10), V(11), V(12), V(13), V(14), V(15),
	V(16), V(17), V(18), V(19), V(20), V(21), V(22), V(23),
	V(24), V(25), V(26), V(27), V(28), V(29), V(30), V(31),
	{ "fpsr", 32, 780, "int", "float", F_FPU },
	{ "fpcr", 32, 784, "int", "float", F_FPU },
};

#define AARCH64_REGBLOCK_SIZE 788

_Static_assert(268 + 16 * 32 == 780, "v registers end where fpsr starts");

static unsigned int aarch64_nregs_for(unsigned int features)
{
	(void)features;
	return AARCH64_NREGS;
}

static size_t aarch64_regblock_size_for(unsigned int features)
{
	(void)features;
	return AARCH64_REGBLOCK_SIZE;
}

/*
 * PSTATE as user space sees it in cpsr: the condition flags, the
 * exception-level and mask bits the kernel reports, and the EL0-visible
 * fields of the later extensions (branch target type, speculative store
 * bypass safe, data-independent timing, tag check override).
 */
static const char aarch64_core_types[] =
	"    <flags id=\"aarch64_pstate\" size=\"4\">\n"
	"      <field name=\"SP\" start=\"0\" end=\"0\"/>\n"
	"      <field name=\"EL\" start=\"2\" end=\"3\"/>\n"
	"      <field name=\"nRW\" start=\"4\" end=\"4\"/>\n"
	"      <field name=\"F\" start=\"6\" end=\"6\"/>\n"
	"      <field name=\"I\" start=\"7\" end=\"7\"/>\n"
	"      <field name=\"A\" start=\"8\" end=\"8\"/>\n"
	"      <field name=\"D\" start=\"9\" end=\"9\"/>\n"
	"      <field name=\"BTYPE\" start=\"10\" end=\"11\"/>\n"
	"      <field name=\"SSBS\" start=\"12\" end=\"12\"/>\n"
	"      <field name=\"IL\" start=\"20\" end=\"20\"/>\n"
	"      <field name=\"SS\" start=\"21\" end=\"21\"/>\n"
	"      <field name=\"PAN\" start=\"22\" end=\"22\"/>\n"
	"      <field name=\"UAO\" start=\"23\" end=\"23\"/>\n"
	"      <field name=\"DIT\" start=\"24\" end=\"24\"/>\n"
	"      <field name=\"TCO\" start=\"25\" end=\"25\"/>\n"
	"      <field name=\"V\" start=\"28\" end=\"28\"/>\n"
	"      <field name=\"C\" start=\"29\" end=\"29\"/>\n"
	"      <field name=\"Z\" start=\"30\" end=\"30\"/>\n"
	"      <field name=\"N\" start=\"31\" end=\"31\"/>\n"
	"    </flags>\n";

/*
 * A v register viewed as gdb users know it: $v0.d.f[1], $v0.s.u[3],
 * $v0.b.s[15], $v0.q.u[0] - lanes of 64, 32, 16 and 8 bits and the
 * whole 128, each as float (where one exists), unsigned and signed.
 */
static const char aarch64_fpu_types[] =
	"    <vector id=\"a64_2f64\" type=\"ieee_double\" count=\"2\"/>\n"
	"    <vector id=\"a64_2u64\" type=\"uint64\" count=\"2\"/>\n"
	"    <vector id=\"a64_2s64\" type=\"int64\" count=\"2\"/>\n"
	"    <vector id=\"a64_4f32\" type=\"ieee_single\" count=\"4\"/>\n"
	"    <vector id=\"a64_4u32\" type=\"uint32\" count=\"4\"/>\n"
	"    <vector id=\"a64_4s32\" type=\"int32\" count=\"4\"/>\n"
	"    <vector id=\"a64_8bf16\" type=\"bfloat16\" count=\"8\"/>\n"
	"    <vector id=\"a64_8f16\" type=\"ieee_half\" count=\"8\"/>\n"
	"    <vector id=\"a64_8u16\" type=\"uint16\" count=\"8\"/>\n"
	"    <vector id=\"a64_8s16\" type=\"int16\" count=\"8\"/>\n"
	"    <vector id=\"a64_16u8\" type=\"uint8\" count=\"16\"/>\n"
	"    <vector id=\"a64_16s8\" type=\"int8\" count=\"16\"/>\n"
	"    <vector id=\"a64_1u128\" type=\"uint128\" count=\"1\"/>\n"
	"    <vector id=\"a64_1s128\" type=\"int128\" count=\"1\"/>\n"
	"    <union id=\"a64_lanes_d\">\n"
	"      <field name=\"f\" type=\"a64_2f64\"/>\n"
	"      <field name=\"u\" type=\"a64_2u64\"/>\n"
	"      <field name=\"s\" type=\"a64_2s64\"/>\n"
	"    </union>\n"
	"    <union id=\"a64_lanes_s\">\n"
	"      <field name=\"f\" type=\"a64_4f32\"/>\n"
	"      <field name=\"u\" type=\"a64_4u32\"/>\n"
	"      <field name=\"s\" type=\"a64_4s32\"/>\n"
	"    </union>\n"
	"    <union id=\"a64_lanes_h\">\n"
	"      <field name=\"bf\" type=\"a64_8bf16\"/>\n"
	"      <field name=\"f\" type=\"a64_8f16\"/>\n"
	"      <field name=\"u\" type=\"a64_8u16\"/>\n"
	"      <field name=\"s\" type=\"a64_8s16\"/>\n"
	"    </union>\n"
	"    <union id=\"a64_lanes_b\">\n"
	"      <field name=\"u\" type=\"a64_16u8\"/>\n"
	"      <field name=\"s\" type=\"a64_16s8\"/>\n"
	"    </union>\n"
	"    <union id=\"a64_lanes_q\">\n"
	"      <field name=\"u\" type=\"a64_1u128\"/>\n"
	"      <field name=\"s\" type=\"a64_1s128\"/>\n"
	"    </union>\n"
	"    <union id=\"aarch64_vec\">\n"
	"      <field name=\"d\" type=\"a64_lanes_d\"/>\n"
	"      <field name=\"s\" type=\"a64_lanes_s\"/>\n"
	"      <field name=\"h\" type=\"a64_lanes_h\"/>\n"
	"      <field name=\"b\" type=\"a64_lanes_b\"/>\n"
	"      <field name=\"q\" type=\"a64_lanes_q\"/>\n"
	"    </union>\n";

static int aarch64_target_xml(unsigned int features, char *buf, size_t size)
{
	static const struct arch_xml_types types[] = {
		{ F_CORE, aarch64_core_types },
		{ F_FPU, aarch64_fpu_types },
		{ NULL, NULL },
	};

	return arch_write_target_xml("aarch64", aarch64_regs, aarch64_nregs_for(features), types,
				     buf, size);
}

/*
 * Assembler names of the integer registers: x0-x30 (64 bits) and w0-w30
 * (their low 32 bits), sp and wsp, and the ABI aliases fp (x29) and lr
 * (x30).  The zero register has no gdb number and is not listed.
 */
static int aarch64_asm_reg(const char *name, size_t len, struct arch_asm_reg *r)
{
	static const struct {
		const char *name;
		struct arch_asm_reg reg;
	} named[] = {
		{ "sp", { AARCH64_SP, 8, 0 } }, { "wsp", { AARCH64_SP, 4, 0 } },
		{ "fp", { AARCH64_FP, 8, 0 } }, { "lr", { AARCH64_LR, 8, 0 } },
	};
	unsigned int n = 0;

	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		if (strlen(named[i].name) == len &&
		    memcmp(named[i].name, name, len) == 0) {
			*r = named[i].reg;
			return 0;
		}
	}
	/* x<n> / w<n>, n 0-30, in decimal without leading zeros */
	if (len < 2 || len > 3 || (name[0] != 'x' && name[0] != 'w'))
		return -ENOENT;
	if (name[1] < '0' || name[1] > '9' || (len == 3 && name[1] == '0'))
		return -ENOENT;
	for (size_t i = 1; i < len; i++) {
		if (name[i] < '0' || name[i] > '9')
			return -ENOENT;
		n = 10 * n + (unsigned int)(name[i] - '0');
	}
	if (n > 30)
		return -ENOENT;
	r->regnum = (int)n;
	r->size = name[0] == 'x' ? 8 : 4;
	r->shift = 0;
	return 0;
}

static const int aarch64_expedite[] = { AARCH64_FP, AARCH64_SP, AARCH64_PC, -1 };
/* AAPCS64: x0-x7 carry the arguments, x0 the result. */
static const int aarch64_arg_regs[] = { 0, 1, 2, 3, 4, 5, 6, 7, -1 };
/* BRK #0 (d4200000), little-endian: what gdb and gdbserver plant for a
 * user breakpoint; Linux reports it as SIGTRAP / TRAP_BRKPT with the pc
 * still at the BRK. */
static const uint8_t aarch64_brk0[] = { 0x00, 0x00, 0x20, 0xd4 };
/* nop (hint #0) */
static const uint8_t aarch64_nop[] = { 0x1f, 0x20, 0x03, 0xd5 };

const struct arch_ops aarch64_arch_ops = {
	.name = "aarch64",
	.gdb_arch = "aarch64",
	.regs = aarch64_regs,
	.nregs_for = aarch64_nregs_for,
	.regblock_size_for = aarch64_regblock_size_for,
	.target_xml = aarch64_target_xml,
	.pc_regnum = AARCH64_PC,
	.sp_regnum = AARCH64_SP,
	.fp_regnum = AARCH64_FP,
	.tp_regnum = -1,
	.tp2_regnum = -1,
	.expedite = aarch64_expedite,
	.bp_insn = aarch64_brk0,
	.bp_len = 4,
	.bp_pc_after_trap = 0,
	.nop_insn = aarch64_nop,

	.max_insn_len = AARCH64_INSN_LEN,
	.insn_decode = aarch64_op_insn_decode,
	.insn_emulate = aarch64_op_insn_emulate,
	.xol_prepare = aarch64_op_xol_prepare,
	.xol_fixup = arch_xol_fixup,
	.pad_jump_len = 4,		/* B, +-128 MiB */
	.emit_jump = aarch64_emit_jump,
	.emit_jump_abs = aarch64_emit_jump_abs,
	.emit_save_regs = aarch64_emit_save_regs,
	.emit_restore_regs = aarch64_emit_restore_regs,
	.emit_pad_handoff = aarch64_emit_pad_handoff,
	.emit_pad_collect = aarch64_emit_pad_collect,
	.patch_branch = aarch64_patch_branch,
	.emit_pad_cond = aarch64_emit_pad_cond,
	.emit_ret_entry = aarch64_emit_ret_entry,
	.emit_ret_exit = aarch64_emit_ret_exit,
	.ret_hist = true,
	.emit_ret_stamp = aarch64_emit_ret_stamp,
	.relocate_window = aarch64_relocate_window,
	.asm_reg = aarch64_asm_reg,
	.sdt_operand_parse = aarch64_sdt_operand_parse,
	.follows_call = aarch64_op_follows_call,
	.emulate_pc_only = aarch64_op_emulate_pc_only,
	.flags_regnum = AARCH64_CPSR,
	/* The kernel single-steps aarch64 (the agent uses PTRACE_SINGLESTEP);
	 * the next pcs are there for stepping over what the hardware step
	 * cannot (an exclusive sequence). */
	.insn_next_pcs = aarch64_op_insn_next_pcs,

	.elf_machine = EM_AARCH64,
	.ptr_size = 8,
	.arg_regs = aarch64_arg_regs,
	.retval_regnum = 0,

	/* B's +-128 MiB back from the slot, less a page */
	.xol_reach = (1ull << 27) - 4096,

	/* Pads (aarch64-pad.c) are placed like slots: B reaches them. */
	.pad_layout = &aarch64_pad_layout,
	.pad_entry_regnum = 20,		/* x20 */
	.pad_frame_regnum = 19,		/* x19 */
	.pad_window_max = 64,		/* a relocated instruction and B back */
	.pad_step = aarch64_pad_step,
	.callee_step = aarch64_callee_step,
};
