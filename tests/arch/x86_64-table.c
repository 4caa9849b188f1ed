/*
 * x86_64-table.c - table tests of the x86-64 engine (cmocka).
 *
 * Each row is a byte string with its disassembly beside it and what the
 * decoder and classifier must say about it.  Relocations are checked by
 * decoding the output again and asserting its meaning, plus a few
 * byte-exact golden cases; the emitters the same way.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86_64/x86_64.h"

#define E ARCH_EMULATE
#define B ARCH_BOOST
#define R ARCH_REJECT

struct row {
	const char *disasm;
	uint8_t bytes[16];
	unsigned int n;		/* bytes given */
	int len;		/* expected length, or -errno */
	int strategy;
	bool rip;		/* RIP-relative operand */
	int disp_off;		/* offset of disp32 when rip */
	int imm_size;
};

static const struct row rows[] = {
	/* disassembly                        bytes                                   n  len strat rip doff imm */
	{ "push %rbp",                        { 0x55 },                               1, 1, E, 0, 0, 0 },
	{ "push %r15",                        { 0x41, 0x57 },                         2, 2, E, 0, 0, 0 },
	{ "mov %rsp,%rbp",                    { 0x48, 0x89, 0xe5 },                   3, 3, E, 0, 0, 0 },
	{ "sub $0x18,%rsp",                   { 0x48, 0x83, 0xec, 0x18 },             4, 4, E, 0, 0, 1 },
	{ "sub $0x1000,%rsp",                 { 0x48, 0x81, 0xec, 0, 0x10, 0, 0 },    7, 7, E, 0, 0, 4 },
	{ "endbr64",                          { 0xf3, 0x0f, 0x1e, 0xfa },             4, 4, E, 0, 0, 0 },
	{ "xor %eax,%eax",                    { 0x31, 0xc0 },                         2, 2, E, 0, 0, 0 },
	{ "nopl 0x0(%rax,%rax,1)",            { 0x0f, 0x1f, 0x44, 0, 0 },             5, 5, E, 0, 0, 0 },
	{ "cs nopw 0x0(%rax,%rax,1)",         { 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 }, 10, 10, E, 0, 0, 0 },
	{ "xchg %eax,%r8d (41 90, not nop)",  { 0x41, 0x90 },                         2, 2, B, 0, 0, 0 },
	{ "jmp .+0x10 (rel8)",                { 0xeb, 0x0e },                         2, 2, E, 0, 0, 1 },
	{ "call rel32",                       { 0xe8, 1, 2, 3, 4 },                   5, 5, E, 0, 0, 4 },
	{ "jne rel32",                        { 0x0f, 0x85, 0, 1, 0, 0 },             6, 6, E, 0, 0, 4 },
	{ "ret",                              { 0xc3 },                               1, 1, E, 0, 0, 0 },
	{ "repz ret",                         { 0xf3, 0xc3 },                         2, 2, E, 0, 0, 0 },
	{ "jmp *0x2fe2(%rip) (PLT)",          { 0xff, 0x25, 0xe2, 0x2f, 0, 0 },       6, 6, E, 1, 2, 0 },
	{ "mov 0x1234(%rip),%rax",            { 0x48, 0x8b, 0x05, 0x34, 0x12, 0, 0 }, 7, 7, E, 1, 3, 0 },
	{ "cmpb $0x0,0x10(%rip)",             { 0x80, 0x3d, 0x10, 0, 0, 0, 0 },       7, 7, E, 1, 2, 1 },
	{ "mov %fs:0x28,%rax",                { 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0 }, 9, 9, B, 0, 0, 0 },
	{ "movaps %xmm0,0x10(%rip)",          { 0x0f, 0x29, 0x05, 0x10, 0, 0, 0 },    7, 7, B, 1, 3, 0 },
	{ "movabs $0x1122334455667788,%rax",  { 0x48, 0xb8, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11 }, 10, 10, E, 0, 0, 8 },
	{ "mov $0x1,%ax (66: imm16)",         { 0x66, 0xb8, 1, 0 },                   4, 4, B, 0, 0, 2 },
	{ "movabs 0x1122334455667788,%al",    { 0xa0, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11 }, 9, 9, B, 0, 0, 8 },
	{ "addr32 mov 0x11223344,%al",        { 0x67, 0xa0, 0x44, 0x33, 0x22, 0x11 }, 6, 6, B, 0, 0, 4 },
	{ "testb $0x1,(%rdi) (grp3 /0 imm)",  { 0xf6, 0x07, 0x01 },                   3, 3, E, 0, 0, 1 },
	{ "notl (%rdi) (grp3 /2 no imm)",     { 0xf7, 0x17 },                         2, 2, B, 0, 0, 0 },
	{ "enter $0x10,$0x0",                 { 0xc8, 0x10, 0, 0 },                   4, 4, B, 0, 0, 2 },
	{ "vzeroupper",                       { 0xc5, 0xf8, 0x77 },                   3, 3, B, 0, 0, 0 },
	{ "vpshufd $0x1b,0x10(%rip),%ymm1",   { 0xc5, 0xfd, 0x70, 0x0d, 0x10, 0, 0, 0, 0x1b }, 9, 9, B, 1, 4, 1 },
	{ "vpalignr $4,%ymm2,%ymm1,%ymm0 (VEX3 0f3a)", { 0xc4, 0xe3, 0x75, 0x0f, 0xc2, 0x04 }, 6, 6, B, 0, 0, 1 },
	{ "vmovdqu64 0x40(%rax),%zmm0 (EVEX disp8*N)", { 0x62, 0xf1, 0xfe, 0x48, 0x6f, 0x40, 0x01 }, 7, 7, B, 0, 0, 0 },
	{ "pshufb 0x10(%rip),%xmm0 (0f38)",   { 0x66, 0x0f, 0x38, 0x00, 0x05, 0x10, 0, 0, 0 }, 9, 9, B, 1, 5, 0 },
	{ "roundsd $4,%xmm1,%xmm0 (0f3a)",    { 0x66, 0x0f, 0x3a, 0x0b, 0xc1, 0x04 }, 6, 6, B, 0, 0, 1 },
	{ "syscall",                          { 0x0f, 0x05 },                         2, 2, B, 0, 0, 0 },
	{ "lock cmpxchg %rcx,(%rdx)",         { 0xf0, 0x48, 0x0f, 0xb1, 0x0a },       5, 5, B, 0, 0, 0 },
	{ "mov %cr0,%rax (mod ignored)",      { 0x0f, 0x20, 0x00 },                   3, 3, R, 0, 0, 0 },
	{ "int3",                             { 0xcc },                               1, 1, R, 0, 0, 0 },
	{ "int $0x80",                        { 0xcd, 0x80 },                         2, 2, R, 0, 0, 1 },
	{ "ud2",                              { 0x0f, 0x0b },                         2, 2, R, 0, 0, 0 },
	{ "hlt",                              { 0xf4 },                               1, 1, R, 0, 0, 0 },
	{ "xbegin rel32",                     { 0xc7, 0xf8, 0, 0, 0, 0 },             6, 6, R, 0, 0, 4 },
	{ "ljmp *(%rax) (far)",               { 0xff, 0x28 },                         2, 2, R, 0, 0, 0 },
	{ "callw rel16 (66 e8: AMD)",         { 0x66, 0xe8, 0, 0 },                   4, 4, R, 0, 0, 2 },
	{ "push %es (invalid in 64-bit)",     { 0x06 },                               1, -EILSEQ, R, 0, 0, 0 },
	{ "les (is VEX c4 ..), truncated",    { 0xc4 },                               1, -ENODATA, R, 0, 0, 0 },
	{ "mov 0x0(%rip),%rax truncated",     { 0x48, 0x8b, 0x05, 0 },                4, -ENODATA, R, 0, 0, 0 },
	{ "16 prefixes: longer than 15",      { 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x90 }, 16, -EILSEQ, R, 0, 0, 0 },
};

static void test_rows(void **state)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct arch_insn ai;
		struct x86_64_insn in;
		int err = x86_64_decode(&in, r->bytes, r->n, 0x401000);

		print_message("%-45s\n", r->disasm);
		if (r->len < 0) {
			assert_int_equal(err, r->len);
			continue;
		}
		assert_int_equal(err, 0);
		assert_int_equal(in.len, r->len);
		assert_int_equal(in.rip_relative, r->rip);
		if (r->rip)
			assert_int_equal(in.disp_off, r->disp_off);
		assert_int_equal(in.imm_size, r->imm_size);
		assert_int_equal(x86_64_arch_ops.insn_decode(r->bytes, r->n,
							     0x401000, &ai), 0);
		assert_int_equal(ai.strategy, r->strategy);
		assert_non_null(ai.reason);
	}
}

static void test_branch_targets(void **state)
{
	static const uint8_t jmp8[] = { 0xeb, 0xfe };		/* jmp . */
	static const uint8_t call[] = { 0xe8, 0xfb, 0xff, 0xff, 0xff };	/* call . */
	static const uint8_t jcc32[] = { 0x0f, 0x84, 0x10, 0, 0, 0 };	/* je .+0x16 */
	struct x86_64_insn in;

	assert_int_equal(x86_64_decode(&in, jmp8, 2, 0x1000), 0);
	assert_true(in.is_rel_branch);
	assert_int_equal(in.target, 0x1000);
	assert_int_equal(x86_64_decode(&in, call, 5, 0x1000), 0);
	assert_int_equal(in.target, 0x1000);
	assert_int_equal(x86_64_decode(&in, jcc32, 6, 0x1000), 0);
	assert_int_equal(in.target, 0x1016);
	assert_int_equal(x86_64_is_jcc(&in), 4);
	assert_string_equal(x86_64_jcc_name(4), "e");
}

/* The X-macro evaluator against the SDM's definitions, all flag sets. */
static void test_jcc_eval(void **state)
{
	for (unsigned int f = 0; f < 0x1000; f++) {
		bool cf = f & 1, pf = f & 4, zf = f & 0x40, sf = f & 0x80,
		     of = f & 0x800;
		bool expect[16] = { of, !of, cf, !cf, zf, !zf, cf || zf,
				    !cf && !zf, sf, !sf, pf, !pf, sf != of,
				    sf == of, zf || sf != of, !zf && sf == of };

		for (unsigned int cc = 0; cc < 16; cc++)
			assert_int_equal(x86_64_jcc_eval(cc, f), expect[cc]);
	}
}

/* Fake memory for emulation: a 64-byte stack at 0x7000. */
static uint8_t stack_mem[64];

static int rd(void *ctx, uint64_t a, void *b, size_t n)
{
	if (a < 0x7000 || a + n > 0x7000 + sizeof(stack_mem))
		return -EFAULT;
	memcpy(b, stack_mem + (a - 0x7000), n);
	return 0;
}

static int wr(void *ctx, uint64_t a, const void *b, size_t n)
{
	if (a < 0x7000 || a + n > 0x7000 + sizeof(stack_mem))
		return -EFAULT;
	memcpy(stack_mem + (a - 0x7000), b, n);
	return 0;
}

/* Stepping out of a pad: pushfq and popfq are done by hand, without the
 * step's trap flag (or RF); everything else steps. */
static void test_pad_step(void **state)
{
	static const uint8_t pushf[] = { 0x9c }, popf[] = { 0x9d };
	static const uint8_t mov[] = { 0x48, 0x89, 0xe5 };	/* mov %rsp,%rbp */
	struct arch_mem m = { NULL, rd, wr };
	struct arch_gpregs r = { .pc = 0x1000, .flags = 0x10346 };	/* RF TF ZF PF ... */
	uint64_t v;

	(void)state;
	r.gpr[7] = 0x7040;
	assert_int_equal(x86_64_arch_ops.pad_step(pushf, 1, &r, &m), ARCH_PAD_DONE);
	assert_int_equal(r.gpr[7], 0x7038);
	assert_int_equal(r.pc, 0x1001);
	assert_int_equal(rd(NULL, 0x7038, &v, 8), 0);
	assert_int_equal(v, 0x246);
	v = 0x10397;				/* TF and RF set in the image */
	assert_int_equal(wr(NULL, 0x7038, &v, 8), 0);
	assert_int_equal(x86_64_arch_ops.pad_step(popf, 1, &r, &m), ARCH_PAD_DONE);
	assert_int_equal(r.gpr[7], 0x7040);
	assert_int_equal(r.pc, 0x1002);
	assert_int_equal(r.flags, 0x297);
	r.gpr[7] = 0x7000;			/* pushfq below the fake stack */
	assert_int_equal(x86_64_arch_ops.pad_step(pushf, 1, &r, &m), -EFAULT);
	assert_int_equal(r.gpr[7], 0x7000);
	assert_int_equal(x86_64_arch_ops.pad_step(mov, 3, &r, &m), ARCH_PAD_STEP);
	assert_int_equal(x86_64_arch_ops.pad_step(mov, 0, &r, &m), ARCH_PAD_STEP);
}

static void test_emulate_call_push(void **state)
{
	static const uint8_t call[] = { 0xe8, 0x10, 0, 0, 0 };	/* call .+0x15 */
	static const uint8_t push[] = { 0x41, 0x54 };		/* push %r12 */
	struct arch_mem m = { NULL, rd, wr };
	struct arch_gpregs r = { .pc = 0x1000 };
	struct arch_insn ai;
	uint64_t v;

	r.gpr[7] = 0x7040;
	r.gpr[12] = 0xabcdef;
	assert_int_equal(x86_64_arch_ops.insn_decode(call, 5, 0x1000, &ai), 0);
	assert_int_equal(x86_64_arch_ops.insn_emulate(&ai, &r, &m), 0);
	assert_int_equal(r.pc, 0x1015);
	assert_int_equal(r.gpr[7], 0x7038);
	memcpy(&v, stack_mem + 0x38, 8);
	assert_int_equal(v, 0x1005);

	assert_int_equal(x86_64_arch_ops.insn_decode(push, 2, 0x1015, &ai), 0);
	assert_int_equal(x86_64_arch_ops.insn_emulate(&ai, &r, &m), 0);
	assert_int_equal(r.gpr[7], 0x7030);
	memcpy(&v, stack_mem + 0x30, 8);
	assert_int_equal(v, 0xabcdef);

	/* a failing write leaves the registers untouched */
	r.gpr[7] = 0x7000;
	r.pc = 0x1015;
	assert_int_equal(x86_64_arch_ops.insn_emulate(&ai, &r, &m), -EFAULT);
	assert_int_equal(r.gpr[7], 0x7000);
	assert_int_equal(r.pc, 0x1015);
}

/* Relocation: decode the output and check what it means. */
static void test_relocate_rip_near(void **state)
{
	/* mov 0x100(%rip),%rax at 0x400000 -> operand at 0x400107 */
	static const uint8_t mov[] = { 0x48, 0x8b, 0x05, 0x00, 0x01, 0, 0 };
	uint8_t buf[64];
	struct x86_64_out o = { buf, sizeof(buf), 0, 0x500000, false };
	struct x86_64_insn in, out;
	struct x86_64_step st;

	assert_int_equal(x86_64_decode(&in, mov, 7, 0x400000), 0);
	assert_int_equal(x86_64_relocate(&in, &o, &st), 0);
	assert_int_equal(o.len, 7);
	assert_int_equal(x86_64_decode(&out, buf, o.len, 0x500000), 0);
	assert_true(out.rip_relative);
	assert_int_equal(x86_64_rip_target(&out), 0x400107);
	/* golden: 48 8b 05 <0x400107 - 0x500007 = 0xfff00100> */
	static const uint8_t golden[] = { 0x48, 0x8b, 0x05, 0x00, 0x01, 0xf0, 0xff };
	assert_memory_equal(buf, golden, 7);
}

static void test_relocate_call_far(void **state)
{
	/* call 0x400100 at 0x400000, copy at 0x7f0000000000 */
	static const uint8_t call[] = { 0xe8, 0xfb, 0x00, 0, 0 };
	uint8_t buf[64];
	struct x86_64_out o = { buf, sizeof(buf), 0, 0x7f0000000000ull, false };
	struct x86_64_insn in, a, b;
	struct x86_64_step st;
	uint64_t target;

	assert_int_equal(x86_64_decode(&in, call, 5, 0x400000), 0);
	assert_int_equal(in.target, 0x400100);
	assert_int_equal(x86_64_relocate(&in, &o, &st), 0);
	/* push $0x400005 (the ORIGINAL return address) */
	assert_int_equal(x86_64_decode(&a, buf, o.len, o.at), 0);
	assert_int_equal(a.opcode, 0x68);
	assert_int_equal(a.imm, 0x400005);
	/* jmp *0(%rip) with the absolute target after it */
	assert_int_equal(x86_64_decode(&b, buf + a.len, o.len - a.len, o.at + a.len), 0);
	assert_int_equal(b.opcode, 0xff);
	assert_int_equal((b.modrm >> 3) & 7, 4);
	assert_true(b.rip_relative);
	memcpy(&target, buf + a.len + b.len, 8);
	assert_int_equal(target, 0x400100);
	assert_int_equal(o.len, 5 + 6 + 8);
}

static void test_relocate_jcc_far(void **state)
{
	static const uint8_t jl[] = { 0x7c, 0x10 };	/* jl .+0x12 */
	uint8_t buf[64];
	struct x86_64_out o = { buf, sizeof(buf), 0, 0x7f0000000000ull, false };
	struct x86_64_insn in, a;
	struct x86_64_step st;

	assert_int_equal(x86_64_decode(&in, jl, 2, 0x400000), 0);
	assert_int_equal(x86_64_relocate(&in, &o, &st), 0);
	/* jge +14 over the absolute jump */
	assert_int_equal(x86_64_decode(&a, buf, o.len, o.at), 0);
	assert_int_equal(x86_64_is_jcc(&a), 0xd);
	assert_int_equal(a.target, o.at + 2 + 14);
	assert_int_equal(o.len, 2 + 14);
}

static void test_emitters(void **state)
{
	uint8_t buf[256];
	struct x86_64_insn in;
	int n;

	n = x86_64_arch_ops.emit_jump(buf, sizeof(buf), 0x1000, 0x2000);
	assert_int_equal(n, 5);
	static const uint8_t jmp[] = { 0xe9, 0xfb, 0x0f, 0, 0 };
	assert_memory_equal(buf, jmp, 5);
	assert_int_equal(x86_64_arch_ops.emit_jump(buf, sizeof(buf), 0x1000,
						   0x7f0000000000ull), -ERANGE);
	assert_int_equal(x86_64_arch_ops.emit_jump(buf, 4, 0x1000, 0x2000), -ENOSPC);
	assert_int_equal(x86_64_arch_ops.emit_jump_abs(buf, sizeof(buf), 0x1122), 14);

	/* save: first instruction steps over the red zone; all decode */
	n = x86_64_arch_ops.emit_save_regs(buf, sizeof(buf), 0x7f0011223344ull);
	assert_true(n > 0);
	assert_int_equal(x86_64_decode(&in, buf, n, 0), 0);
	assert_int_equal(in.opcode, 0x8d);		/* lea -128(%rsp),%rsp */
	assert_int_equal(in.disp, -128);
	assert_int_equal(in.base, 4);
	for (int off = 0; off < n; off += in.len)
		assert_int_equal(x86_64_decode(&in, buf + off, n - off, off), 0);
	n = x86_64_arch_ops.emit_restore_regs(buf, sizeof(buf));
	assert_true(n > 0);
	int off = 0;
	for (; off < n; off += in.len)
		assert_int_equal(x86_64_decode(&in, buf + off, n - off, off), 0);
	/* last: lea 128(%rsp),%rsp */
	assert_int_equal(in.opcode, 0x8d);
	assert_int_equal(in.disp, 128);
	assert_int_equal(x86_64_arch_ops.emit_save_regs(buf, 8, 0), -ENOSPC);
}

/* The collector leaves its exit branch for the caller: patch_branch
 * points it at any offset of the same code, within the branch's reach. */
static void test_patch_branch(void **state)
{
	struct arch_pad_ring r = {
		.ring = 0x10000, .off_records = 4096, .record_shift = 10,
		.nrecords = 8, .off_seq = 832, .off_bases = 840,
		.off_frame = 856, .image_form = X86_64_IMAGE_XSAVE, .tp_read = true,
	};
	static uint8_t buf[1024];
	struct x86_64_insn in;
	size_t done = 0, to;
	int n, at = -1;

	n = x86_64_arch_ops.emit_pad_collect(buf, sizeof(buf), &r, &done);
	assert_true(n > 0);
	/* decode the collector up to the instruction holding `done` */
	for (int off = 0; off < n; off += in.len) {
		assert_int_equal(x86_64_decode(&in, buf + off, n - off, off), 0);
		if (off <= (int)done && done < off + in.len)
			at = off;
		if (at >= 0)
			break;
	}
	assert_true(at >= 0);
	for (to = (size_t)n; to < (size_t)n + 300; to += 150) {
		assert_int_equal(x86_64_arch_ops.patch_branch(buf, done, to), 0);
		assert_int_equal(x86_64_decode(&in, buf + at, n - at, at), 0);
		assert_int_equal(in.opcode, 0xe9);		/* jmp rel32 */
		assert_int_equal(in.target, to);
	}
	/* backwards too: to the collector's first byte */
	assert_int_equal(x86_64_arch_ops.patch_branch(buf, done, 0), 0);
	assert_int_equal(x86_64_decode(&in, buf + at, n - at, at), 0);
	assert_int_equal(in.target, 0);
	assert_int_equal(x86_64_arch_ops.patch_branch(buf, done,
						      done + 4 + (1ull << 31)),
			 -ERANGE);
}

/* A record's TSC as the pushed return's time (stamp_entry): the stamp
 * right after the time's store, with %r15 the entry (or 0) and cleared,
 * only where asked and never with a collector's call after it. */
static int count_seq(const uint8_t *buf, int n, const uint8_t *seq, size_t len)
{
	int k = 0;

	for (int i = 0; i + (int)len <= n; i++)
		k += memcmp(buf + i, seq, len) == 0;
	return k;
}

static void test_stamp_entry(void **state)
{
	static const uint8_t time_store[] = { 0x0f, 0x31, 0x48, 0xc1, 0xe2, 0x20, 0x48, 0x09,
					      0xd0, 0x49, 0x89, 0x86, 0xf0, 0x03, 0, 0 };
	static const uint8_t stamp[] = { 0x4d, 0x85, 0xff, 0x74, 0x07,
					 0x49, 0x89, 0x47, 0x10, 0x45, 0x31, 0xff };
	struct arch_pad_ring r = {
		.ring = 0x10000, .off_records = 4096, .record_shift = 11,
		.nrecords = 8, .off_seq = 832, .off_bases = 840,
		.off_frame = 856, .image_form = X86_64_IMAGE_XSAVE, .tp_read = true,
		.time_tid = true, .tsc_time = true, .off_tid = 1000, .off_time = 1008,
	};
	static uint8_t buf[2048];
	size_t done = 0;
	int n;

	(void)state;
	n = x86_64_arch_ops.emit_pad_collect(buf, sizeof(buf), &r, &done);
	assert_true(n > 0);
	assert_int_equal(count_seq(buf, n, time_store, sizeof(time_store)), 1);
	assert_int_equal(count_seq(buf, n, stamp, sizeof(stamp)), 0);
	r.stamp_entry = true;
	n = x86_64_arch_ops.emit_pad_collect(buf, sizeof(buf), &r, &done);
	assert_true(n > 0);
	assert_int_equal(count_seq(buf, n, stamp, sizeof(stamp)), 1);
	for (int i = 0; i + (int)sizeof(time_store) <= n; i++)
		if (!memcmp(buf + i, time_store, sizeof(time_store)))
			assert_memory_equal(buf + i + sizeof(time_store), stamp, sizeof(stamp));
	/* A collector's call may still trap to the hand-off after the
	 * record: the stamp before the restore keeps its rdtsc then. */
	r.ipa_call = 0x7f0000001000ull;
	r.ipa_site = 0x7f0000002000ull;
	r.off_blocks = 1024;
	r.blocks_size = 1024;
	n = x86_64_arch_ops.emit_pad_collect(buf, sizeof(buf), &r, &done);
	assert_true(n > 0);
	assert_int_equal(count_seq(buf, n, stamp, sizeof(stamp)), 0);
}

/* The USDT operand hook on its own: kinds, registers, and the symbol
 * as a span of the text (client/sdt.c's tests cover every form). */
static void test_sdt_operand(void **state)
{
	const char *text = "msg+16(%rip)";
	struct arch_operand op;
	char err[128];

	assert_non_null(x86_64_arch_ops.sdt_operand_parse);
	assert_int_equal(x86_64_arch_ops.sdt_operand_parse(text, &op, err,
							   sizeof(err)), 0);
	assert_int_equal(op.kind, ARCH_OPERAND_STATIC);
	assert_int_equal(op.reg.regnum, -1);
	assert_int_equal(op.sym_off, 0);
	assert_int_equal(op.sym_len, 3);
	assert_int_equal(op.disp, 16);

	text = "-8(%rbp,%r9,4)";
	assert_int_equal(x86_64_arch_ops.sdt_operand_parse(text, &op, err,
							   sizeof(err)), 0);
	assert_int_equal(op.kind, ARCH_OPERAND_MEM);
	assert_string_equal(x86_64_arch_ops.regs[op.reg.regnum].name, "rbp");
	assert_string_equal(x86_64_arch_ops.regs[op.index.regnum].name, "r9");
	assert_int_equal(op.scale, 4);
	assert_int_equal(op.disp, -8);
	assert_int_equal(op.sym_len, 0);

	assert_int_equal(x86_64_arch_ops.sdt_operand_parse("%ah", &op, err,
							   sizeof(err)), 0);
	assert_int_equal(op.kind, ARCH_OPERAND_REG);
	assert_string_equal(x86_64_arch_ops.regs[op.reg.regnum].name, "rax");
	assert_int_equal(op.reg.size, 1);
	assert_int_equal(op.reg.shift, 8);

	assert_int_equal(x86_64_arch_ops.sdt_operand_parse("$-3", &op, err,
							   sizeof(err)), 0);
	assert_int_equal(op.kind, ARCH_OPERAND_IMM);
	assert_int_equal(op.imm, -3);

	assert_int_equal(x86_64_arch_ops.sdt_operand_parse("%xmm0", &op, err,
							   sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown register %xmm0");
}

/* follows_call: the 16 bytes below a return address, the instruction
 * that ends there at the end (the bytes before it are filler). */
static void test_follows_call(void **state)
{
	static const struct {
		const char *disasm;
		uint8_t tail[8];
		unsigned int n;
		bool call;
	} cases[] = {
		{ "call rel32",              { 0xe8, 0x10, 0x20, 0x00, 0x00 },       5, true },
		{ "call *%rax",              { 0xff, 0xd0 },                         2, true },
		{ "call *%r11",              { 0x41, 0xff, 0xd3 },                   3, true },
		{ "call *0x10(%rbx)",        { 0xff, 0x53, 0x10 },                   3, true },
		{ "call *0x8(%rsp)",         { 0xff, 0x54, 0x24, 0x08 },             4, true },
		{ "call *0x2f8a(%rip)",      { 0xff, 0x15, 0x8a, 0x2f, 0x00, 0x00 }, 6, true },
		{ "notrack call *%rdx",      { 0x3e, 0xff, 0xd2 },                   3, true },
		{ "jmp rel32",               { 0xe9, 0x10, 0x20, 0x00, 0x00 },       5, false },
		{ "jmp *%rax",               { 0xff, 0xe0 },                         2, false },
		{ "push %rbp (saved rbp)",   { 0x00, 0x00, 0x00, 0x55 },             4, false },
		{ "ret",                     { 0xc3 },                               1, false },
		{ "stack data: 0x7ffd... high bytes", { 0x00, 0x00, 0xfd, 0x7f, 0x00, 0x00 }, 6, false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t before[16];
		/* Filler that decodes as nothing that ends in a call. */
		memset(before, 0x90, sizeof(before));
		memcpy(before + sizeof(before) - cases[i].n, cases[i].tail, cases[i].n);
		if (x86_64_op_follows_call(before, sizeof(before)) != cases[i].call)
			fail_msg("%s: follows_call should be %d", cases[i].disasm, cases[i].call);
	}
}

/* auto's choice: emulate what writes only rip, boost the rest when a
 * copy can run it. */
static void test_prefers_boost(void **state)
{
	static const struct {
		const char *disasm;
		uint8_t code[16];
		unsigned int n;
		bool boost;
	} cases[] = {
		{ "nop",                   { 0x90 },                               1, false },
		{ "endbr64",               { 0xf3, 0x0f, 0x1e, 0xfa },             4, false },
		{ "nopl 0x0(%rax)",        { 0x0f, 0x1f, 0x40, 0x00 },             4, false },
		{ "jmp rel8",              { 0xeb, 0x10 },                         2, false },
		{ "je rel32",              { 0x0f, 0x84, 0x10, 0x00, 0x00, 0x00 }, 6, false },
		{ "jmp *%rax",             { 0xff, 0xe0 },                         2, false },
		{ "push %rbp",             { 0x55 },                               1, true },
		{ "lea 0x1(%rdi,%rdi,2),%rax", { 0x48, 0x8d, 0x44, 0x3f, 0x01 },   5, true },
		{ "mov %rsp,%rbp",         { 0x48, 0x89, 0xe5 },                   3, true },
		{ "sub $0x10,%rsp",        { 0x48, 0x83, 0xec, 0x10 },             4, true },
		{ "call rel32",            { 0xe8, 0x10, 0x20, 0x00, 0x00 },       5, true },
		{ "ret",                   { 0xc3 },                               1, true },
		/* not emulated at all: the class decides, not this */
		{ "mov %eax,%fs:0x10",     { 0x64, 0x89, 0x04, 0x25, 0x10, 0x00, 0x00, 0x00 }, 8, false },
	};
	const struct arch_ops *ops = &x86_64_arch_ops;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct arch_insn insn;
		assert_int_equal(ops->insn_decode(cases[i].code, cases[i].n,
						  0x401000, &insn), 0);
		if (arch_prefers_boost(ops, &insn) != cases[i].boost)
			fail_msg("%s (%s, %s): prefers_boost should be %d",
				 cases[i].disasm, arch_strategy_name(insn.strategy),
				 insn.reason, cases[i].boost);
	}
}

/*
 * The agent hands out only slots arch_xol_in_reach accepts (agent/xol.c):
 * at its edges a boosted rip-relative load is re-encoded with its jump
 * back, no scratch register and no step.  (Beyond 2 GiB it would take a
 * scratch register and a step: x86_64-relocate-exec checks that path.)
 */
static void test_xol_reach(void **state)
{
	/* mov 0x100(%rip),%rax */
	static const uint8_t mov_rip[] = { 0x48, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00 };
	const struct arch_ops *ops = &x86_64_arch_ops;
	const uint64_t addr = 0x100000000ull, reach = ops->xol_reach;
	const uint64_t edges[] = { (addr + reach - 64) & ~63ull,
				   (addr - reach + 64) & ~63ull };
	struct arch_insn insn;
	struct arch_xol xol;
	uint8_t code[64];

	(void)state;
	assert_true(reach > (1ull << 30) && reach <= (1ull << 31));
	assert_int_equal(ops->insn_decode(mov_rip, sizeof(mov_rip), addr, &insn), 0);
	insn.strategy = ARCH_BOOST;	/* as auto chooses it (probe.c) */
	for (size_t i = 0; i < 2; i++) {
		assert_true(arch_xol_in_reach(ops, addr, edges[i], 64));
		assert_true(ops->xol_prepare(&insn, edges[i], code, sizeof(code),
					     &xol) > 0);
		assert_false(xol.step);
	}
	assert_false(arch_xol_in_reach(ops, addr, edges[0] + 4096, 64));
	assert_false(arch_xol_in_reach(ops, addr, edges[1] - 4096, 64));
	assert_false(arch_xol_in_reach(ops, addr, addr + (1ull << 31), 64));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prefers_boost),
		cmocka_unit_test(test_xol_reach),
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_branch_targets),
		cmocka_unit_test(test_jcc_eval),
		cmocka_unit_test(test_emulate_call_push),
		cmocka_unit_test(test_relocate_rip_near),
		cmocka_unit_test(test_relocate_call_far),
		cmocka_unit_test(test_relocate_jcc_far),
		cmocka_unit_test(test_emitters),
		cmocka_unit_test(test_patch_branch),
		cmocka_unit_test(test_stamp_entry),
		cmocka_unit_test(test_sdt_operand),
		cmocka_unit_test(test_follows_call),
		cmocka_unit_test(test_pad_step),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
