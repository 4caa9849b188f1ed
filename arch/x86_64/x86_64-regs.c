/*
 * x86_64-regs.c - the x86-64 register file as gdb sees it.
 *
 * The table below is gdb's amd64 GNU/Linux numbering.  Its order is the
 * order of target.xml, of the `g` packet and of a trace frame's `R` block;
 * offsets are packed in that order.  The AVX upper halves exist only when
 * the CPU has AVX (XSAVE component 2); without it the block stops at gs_base.
 *
 *   regnum  registers                      bytes each
 *   0-15    rax rbx rcx rdx rsi rdi rbp rsp r8-r15   8
 *   16-17   rip, eflags                    8, 4
 *   18-23   cs ss ds es fs gs              4
 *   24-31   st0-st7                        10 (x87 extended)
 *   32-39   fctrl fstat ftag fiseg fioff foseg fooff fop   4
 *   40-56   xmm0-xmm15, mxcsr              16, 4
 *   57      orig_rax                       8  (Linux: syscall restart)
 *   58-59   fs_base gs_base                8
 *   60-75   ymm0h-ymm15h                   16 (AVX)
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/x86_64/x86_64.h"

#define F_CORE "org.gnu.gdb.i386.core"
#define F_SSE "org.gnu.gdb.i386.sse"
#define F_LINUX "org.gnu.gdb.i386.linux"
#define F_SEG "org.gnu.gdb.i386.segments"
#define F_AVX "org.gnu.gdb.i386.avx"

#define GPR(n, t) { n, 64, 0, t, "general", F_CORE }
#define SEG(n) { n, 32, 0, "int32", "general", F_CORE }
#define ST(n) { n, 80, 0, "i387_ext", "float", F_CORE }
#define FPC(n) { n, 32, 0, "int", "float", F_CORE }
#define XMM(n) { n, 128, 0, "vec128", "sse", F_SSE }
#define YMMH(n) { n, 128, 0, "uint128", NULL, F_AVX }

static struct arch_reg x86_64_regs[] = {
	GPR("rax", "int64"), GPR("rbx", "int64"), GPR("rcx", "int64"),
	GPR("rdx", "int64"), GPR("rsi", "int64"), GPR("rdi", "int64"),
	GPR("rbp", "data_ptr"), GPR("rsp", "data_ptr"),
	GPR("r8", "int64"), GPR("r9", "int64"), GPR("r10", "int64"),
	GPR("r11", "int64"), GPR("r12", "int64"), GPR("r13", "int64"),
	GPR("r14", "int64"), GPR("r15", "int64"),
	{ "rip", 64, 0, "code_ptr", "general", F_CORE },
	{ "eflags", 32, 0, "i386_eflags", "general", F_CORE },
	SEG("cs"), SEG("ss"), SEG("ds"), SEG("es"), SEG("fs"), SEG("gs"),
	ST("st0"), ST("st1"), ST("st2"), ST("st3"),
	ST("st4"), ST("st5"), ST("st6"), ST("st7"),
	FPC("fctrl"), FPC("fstat"), FPC("ftag"), FPC("fiseg"),
	FPC("fioff"), FPC("foseg"), FPC("fooff"), FPC("fop"),
	XMM("xmm0"), XMM("xmm1"), XMM("xmm2"), XMM("xmm3"),
	XMM("xmm4"), XMM("xmm5"), XMM("xmm6"), XMM("xmm7"),
	XMM("xmm8"), XMM("xmm9"), XMM("xmm10"), XMM("xmm11"),
	XMM("xmm12"), XMM("xmm13"), XMM("xmm14"), XMM("xmm15"),
	{ "mxcsr", 32, 0, "i386_mxcsr", "vector", F_SSE },
	{ "orig_rax", 64, 0, "int", "system", F_LINUX },
	{ "fs_base", 64, 0, "int", NULL, F_SEG },
	{ "gs_base", 64, 0, "int", NULL, F_SEG },
	YMMH("ymm0h"), YMMH("ymm1h"), YMMH("ymm2h"), YMMH("ymm3h"),
	YMMH("ymm4h"), YMMH("ymm5h"), YMMH("ymm6h"), YMMH("ymm7h"),
	YMMH("ymm8h"), YMMH("ymm9h"), YMMH("ymm10h"), YMMH("ymm11h"),
	YMMH("ymm12h"), YMMH("ymm13h"), YMMH("ymm14h"), YMMH("ymm15h"),
};

#define X86_64_NREGS_BASE 60
#define X86_64_NREGS_AVX 76

/* Offsets follow from the sizes; computed before main() runs, so the
 * table is complete for every reader.  A static initializer would repeat
 * every size by hand. */
__attribute__((constructor)) static void x86_64_layout(void)
{
	static bool done;
	unsigned int off = 0;

	if (done)
		return;
	for (size_t i = 0; i < sizeof(x86_64_regs) / sizeof(x86_64_regs[0]); i++) {
		x86_64_regs[i].offset = off;
		off += x86_64_regs[i].bitsize / 8;
	}
	done = true;
}

static unsigned int x86_64_nregs_for(unsigned int features)
{
	x86_64_layout();
	return (features & ARCH_FEAT_AVX) ? X86_64_NREGS_AVX : X86_64_NREGS_BASE;
}

static size_t x86_64_regblock_size_for(unsigned int features)
{
	unsigned int n = x86_64_nregs_for(features);
	const struct arch_reg *last = &x86_64_regs[n - 1];

	return last->offset + last->bitsize / 8;
}

/* Types each feature needs, written before its registers. */
static const char x86_64_core_types[] =
	"    <flags id=\"i386_eflags\" size=\"4\">\n"
	"      <field name=\"CF\" start=\"0\" end=\"0\"/>\n"
	"      <field name=\"\" start=\"1\" end=\"1\"/>\n"
	"      <field name=\"PF\" start=\"2\" end=\"2\"/>\n"
	"      <field name=\"AF\" start=\"4\" end=\"4\"/>\n"
	"      <field name=\"ZF\" start=\"6\" end=\"6\"/>\n"
	"      <field name=\"SF\" start=\"7\" end=\"7\"/>\n"
	"      <field name=\"TF\" start=\"8\" end=\"8\"/>\n"
	"      <field name=\"IF\" start=\"9\" end=\"9\"/>\n"
	"      <field name=\"DF\" start=\"10\" end=\"10\"/>\n"
	"      <field name=\"OF\" start=\"11\" end=\"11\"/>\n"
	"      <field name=\"NT\" start=\"14\" end=\"14\"/>\n"
	"      <field name=\"RF\" start=\"16\" end=\"16\"/>\n"
	"      <field name=\"VM\" start=\"17\" end=\"17\"/>\n"
	"      <field name=\"AC\" start=\"18\" end=\"18\"/>\n"
	"      <field name=\"VIF\" start=\"19\" end=\"19\"/>\n"
	"      <field name=\"VIP\" start=\"20\" end=\"20\"/>\n"
	"      <field name=\"ID\" start=\"21\" end=\"21\"/>\n"
	"    </flags>\n";

static const char x86_64_sse_types[] =
	"    <vector id=\"v8bf16\" type=\"bfloat16\" count=\"8\"/>\n"
	"    <vector id=\"v8h\" type=\"ieee_half\" count=\"8\"/>\n"
	"    <vector id=\"v4f\" type=\"ieee_single\" count=\"4\"/>\n"
	"    <vector id=\"v2d\" type=\"ieee_double\" count=\"2\"/>\n"
	"    <vector id=\"v16i8\" type=\"int8\" count=\"16\"/>\n"
	"    <vector id=\"v8i16\" type=\"int16\" count=\"8\"/>\n"
	"    <vector id=\"v4i32\" type=\"int32\" count=\"4\"/>\n"
	"    <vector id=\"v2i64\" type=\"int64\" count=\"2\"/>\n"
	"    <union id=\"vec128\">\n"
	"      <field name=\"v8_bfloat16\" type=\"v8bf16\"/>\n"
	"      <field name=\"v8_half\" type=\"v8h\"/>\n"
	"      <field name=\"v4_float\" type=\"v4f\"/>\n"
	"      <field name=\"v2_double\" type=\"v2d\"/>\n"
	"      <field name=\"v16_int8\" type=\"v16i8\"/>\n"
	"      <field name=\"v8_int16\" type=\"v8i16\"/>\n"
	"      <field name=\"v4_int32\" type=\"v4i32\"/>\n"
	"      <field name=\"v2_int64\" type=\"v2i64\"/>\n"
	"      <field name=\"uint128\" type=\"uint128\"/>\n"
	"    </union>\n"
	"    <flags id=\"i386_mxcsr\" size=\"4\">\n"
	"      <field name=\"IE\" start=\"0\" end=\"0\"/>\n"
	"      <field name=\"DE\" start=\"1\" end=\"1\"/>\n"
	"      <field name=\"ZE\" start=\"2\" end=\"2\"/>\n"
	"      <field name=\"OE\" start=\"3\" end=\"3\"/>\n"
	"      <field name=\"UE\" start=\"4\" end=\"4\"/>\n"
	"      <field name=\"PE\" start=\"5\" end=\"5\"/>\n"
	"      <field name=\"DAZ\" start=\"6\" end=\"6\"/>\n"
	"      <field name=\"IM\" start=\"7\" end=\"7\"/>\n"
	"      <field name=\"DM\" start=\"8\" end=\"8\"/>\n"
	"      <field name=\"ZM\" start=\"9\" end=\"9\"/>\n"
	"      <field name=\"OM\" start=\"10\" end=\"10\"/>\n"
	"      <field name=\"UM\" start=\"11\" end=\"11\"/>\n"
	"      <field name=\"PM\" start=\"12\" end=\"12\"/>\n"
	"      <field name=\"FZ\" start=\"15\" end=\"15\"/>\n"
	"    </flags>\n";

static int x86_64_target_xml(unsigned int features, char *buf, size_t size)
{
	static const struct arch_xml_types types[] = {
		{ F_CORE, x86_64_core_types },
		{ F_SSE, x86_64_sse_types },
		{ NULL, NULL },
	};

	return arch_write_target_xml("i386:x86-64", x86_64_regs, x86_64_nregs_for(features), types,
				     buf, size);
}

/*
 * Assembler names of the integer registers (AT&T spelling without "%"):
 * each of the sixteen GPRs under its 64-, 32-, 16- and 8-bit names, the
 * four legacy high bytes (bits 8-15 of rax rbx rcx rdx, shift 8), and
 * rip, which only appears as a base ("sym(%rip)").  The 8-bit names of
 * rsi rdi rbp rsp (sil dil bpl spl) exist only with a REX prefix; an
 * operand string does not care.
 */
#define LEGACY(n, q, d, w, b) \
	{ q, { n, 8, 0 } }, { d, { n, 4, 0 } }, \
	{ w, { n, 2, 0 } }, { b, { n, 1, 0 } }
#define NUMBERED(n, q) \
	{ q, { n, 8, 0 } }, { q "d", { n, 4, 0 } }, \
	{ q "w", { n, 2, 0 } }, { q "b", { n, 1, 0 } }

static const struct {
	const char *name;
	struct arch_asm_reg reg;
} x86_64_asm_regs[] = {
	LEGACY(0, "rax", "eax", "ax", "al"),
	LEGACY(1, "rbx", "ebx", "bx", "bl"),
	LEGACY(2, "rcx", "ecx", "cx", "cl"),
	LEGACY(3, "rdx", "edx", "dx", "dl"),
	LEGACY(4, "rsi", "esi", "si", "sil"),
	LEGACY(5, "rdi", "edi", "di", "dil"),
	LEGACY(6, "rbp", "ebp", "bp", "bpl"),
	LEGACY(7, "rsp", "esp", "sp", "spl"),
	NUMBERED(8, "r8"), NUMBERED(9, "r9"),
	NUMBERED(10, "r10"), NUMBERED(11, "r11"),
	NUMBERED(12, "r12"), NUMBERED(13, "r13"),
	NUMBERED(14, "r14"), NUMBERED(15, "r15"),
	{ "ah", { 0, 1, 8 } }, { "bh", { 1, 1, 8 } },
	{ "ch", { 2, 1, 8 } }, { "dh", { 3, 1, 8 } },
	{ "rip", { 16, 8, 0 } },
};

static int x86_64_asm_reg(const char *name, size_t len, struct arch_asm_reg *r)
{
	for (size_t i = 0; i < sizeof(x86_64_asm_regs) / sizeof(x86_64_asm_regs[0]); i++) {
		const char *n = x86_64_asm_regs[i].name;

		if (strlen(n) == len && memcmp(n, name, len) == 0) {
			*r = x86_64_asm_regs[i].reg;
			return 0;
		}
	}
	return -ENOENT;
}

static const int x86_64_expedite[] = { 6, 7, 16, -1 };	/* rbp rsp rip */
/* System V AMD64 ABI: rdi rsi rdx rcx r8 r9, the result in rax. */
static const int x86_64_arg_regs[] = { 5, 4, 3, 2, 8, 9, -1 };
static const uint8_t x86_64_int3[] = { 0xcc };
static const uint8_t x86_64_nop[] = { 0x90 };

/*
 * The pads' entries and records: 1 KiB, the XSAVE image up to AVX (832
 * bytes) first, then the owner and ready words (a record's sequence word
 * in their place), fs_base and gs_base, the frame of 18 words (16 GPRs,
 * rip, rflags), a record's tid, flags and time.  A record without the
 * image is the last three lines alone (832-1023).
 */
static const struct arch_pad_layout x86_64_pad_layout = {
	.entry_shift = 10, .image_bytes = 832,
	.off_owner = 832, .off_ready = 836, .off_seq = 832,
	.off_bases = 840, .off_frame = 856, .off_tid = 1000, .off_time = 1008,
	.off_flags = 1004,
	.frame_words = 18, .frame_pc = 16,
};

const struct arch_ops x86_64_arch_ops = {
	.name = "x86_64",
	.gdb_arch = "i386:x86-64",
	.regs = x86_64_regs,
	.nregs_for = x86_64_nregs_for,
	.regblock_size_for = x86_64_regblock_size_for,
	.target_xml = x86_64_target_xml,
	.pc_regnum = 16,
	.sp_regnum = 7,
	.fp_regnum = 6,
	.tp_regnum = 58,		/* fs_base (F_SEG) */
	.tp2_regnum = 59,		/* gs_base */
	.expedite = x86_64_expedite,
	.bp_insn = x86_64_int3,
	.bp_len = 1,
	.bp_pc_after_trap = 1,
	.nop_insn = x86_64_nop,

	.max_insn_len = X86_64_MAX_INSN,
	.insn_decode = x86_64_op_insn_decode,
	.insn_emulate = x86_64_op_insn_emulate,
	.xol_prepare = x86_64_op_xol_prepare,
	.xol_fixup = arch_xol_fixup,
	.pad_jump_len = 5,
	.emit_jump = x86_64_emit_jmp_rel32,
	.emit_jump_abs = x86_64_emit_jmp_abs,
	.emit_save_regs = x86_64_emit_save_regs,
	.emit_restore_regs = x86_64_emit_restore_regs,
	.emit_pad_handoff = x86_64_emit_pad_handoff,
	.emit_pad_collect = x86_64_emit_pad_collect,
	.patch_branch = x86_64_patch_branch,
	.emit_pad_cond = x86_64_emit_pad_cond,
	.emit_ret_entry = x86_64_emit_ret_entry,
	.emit_ret_exit = x86_64_emit_ret_exit,
	.ret_hist = true,
	.emit_ret_stamp = x86_64_emit_ret_stamp,
	.emit_touch = x86_64_emit_touch,
	.relocate_window = x86_64_op_relocate_window,
	.asm_reg = x86_64_asm_reg,
	.sdt_operand_parse = x86_64_sdt_operand_parse,
	.follows_call = x86_64_op_follows_call,
	.emulate_pc_only = x86_64_op_emulate_pc_only,
	.flags_regnum = 17,		/* eflags */
	.insn_next_pcs = NULL,		/* the kernel single-steps */


	.elf_machine = EM_X86_64,
	.ptr_size = 8,
	.arg_regs = x86_64_arg_regs,
	.retval_regnum = 0,
	.red_zone = 128,

	/* jmp rel32 back from the slot (and rip-relative operands), less a
	 * page */
	.xol_reach = (1ull << 31) - 4096,

	.pad_layout = &x86_64_pad_layout,
	.pad_entry_regnum = 14,		/* r14 */
	.pad_frame_regnum = 1,		/* rbx */
	.pad_window_max = 128,		/* two jumps and the instructions */
	.pad_step = x86_64_op_pad_step,
};
