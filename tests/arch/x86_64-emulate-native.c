/*
 * x86_64-emulate-native.c - the emulator against the CPU.
 *
 * For every emulated form, thousands of random instances (random
 * registers, flags, operands and addressing modes, fixed seed) are run
 * twice: natively, in a generated code page, and through x86_64_emulate
 * on a copy of the same memory.  Registers, pc, flags and memory must
 * come out equal.
 *
 * The code page (RWX, one per run):
 *
 *   0x000  prologue: save callee-saved regs and host rsp, load rflags
 *          and the 16 GPRs from IN, jmp 0x100
 *   0x100  the instruction under test
 *   +len   landing 0 (fall through): movl $0,LANDING; jmp 0x200
 *   0x140  landing 1 (branch target):  movl $1,LANDING; jmp 0x200
 *   0x200  epilogue: store the 16 GPRs to OUT, back to the host stack,
 *          pushfq / pop OUT.flags, restore callee-saved, ret
 *   0x800  IN, OUT, host rsp, LANDING
 *
 * Pages 1 and 2 of the arena are data (memory operands) and stack; the
 * emulator sees them through arch_mem callbacks on a copy.
 *
 * Runs in a child process so a wrong instruction cannot take the
 * harness down.  Exit 0 pass, 1 mismatch, 77 no RWX memory, 99 harness.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch/x86_64/x86_64.h"

#define CASES_PER_FORM 3000
#define ARENA_SIZE 0x3000
#define INSN_AT 0x100
#define LAND1_AT 0x140
#define EPI_AT 0x200
#define DATA_AT 0x800
#define D_IN 0
#define D_INFLAGS 128
#define D_OUT 136
#define D_OUTFLAGS 264
#define D_HOSTRSP 272
#define D_LANDING 280

#define CF 0x1
#define PF 0x4
#define AF 0x10
#define ZF 0x40
#define SF 0x80
#define OF 0x800

static uint8_t *arena;
static uint8_t mem_copy[ARENA_SIZE];

#define SEED 0x9e3779b97f4a7c15ull
#include "tests/arch/xorshift.h"

static uint64_t rnd(void)
{
	return xorshift_next();
}

static unsigned int rndn(unsigned int n)
{
	return rnd() % n;
}

/* gdb numbering <-> hardware numbering (independent of the emulator's). */
static const int hw_to_gdb[16] = { 0, 2, 3, 1, 7, 6, 4, 5,
				   8, 9, 10, 11, 12, 13, 14, 15 };

struct gen {
	uint8_t b[16];
	size_t n;
	uint64_t flag_mask;	/* flags defined by the instruction */
	const char *form;
};

static void put(struct gen *g, uint8_t v)
{
	g->b[g->n++] = v;
}

static void put32(struct gen *g, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		put(g, v >> (8 * i));
}

/* ---- native runner ---- */

static size_t emit_ripmov(uint8_t *p, size_t at, bool store, int hw, size_t data)
{
	size_t n = 0;
	int32_t disp;

	p[n++] = 0x48 | ((hw >> 3) << 2);
	p[n++] = store ? 0x89 : 0x8b;
	p[n++] = ((hw & 7) << 3) | 5;
	disp = (int32_t)(data - (at + n + 4));
	memcpy(p + n, &disp, 4);
	return n + 4;
}

static void build_runner(void)
{
	uint8_t *p = arena;
	size_t n = 0;
	int32_t d;
	static const uint8_t saves[] = { 0x53, 0x55, 0x41, 0x54, 0x41, 0x55,
					 0x41, 0x56, 0x41, 0x57 };
	static const uint8_t restores[] = { 0x41, 0x5f, 0x41, 0x5e, 0x41, 0x5d,
					    0x41, 0x5c, 0x5d, 0x5b, 0xc3 };

	memset(arena, 0xcc, 0x1000);
	memcpy(p, saves, sizeof(saves));
	n += sizeof(saves);
	n += emit_ripmov(p + n, n, true, 4, DATA_AT + D_HOSTRSP);
	p[n++] = 0xff;				/* push IN.flags(%rip) */
	p[n++] = 0x35;
	d = (int32_t)(DATA_AT + D_INFLAGS - (n + 4));
	memcpy(p + n, &d, 4);
	n += 4;
	p[n++] = 0x9d;				/* popfq */
	for (int hw = 0; hw < 16; hw++)
		if (hw != 4)
			n += emit_ripmov(p + n, n, false, hw,
					 DATA_AT + D_IN + 8 * hw_to_gdb[hw]);
	n += emit_ripmov(p + n, n, false, 4, DATA_AT + D_IN + 8 * 7);
	p[n++] = 0xe9;
	d = (int32_t)(INSN_AT - (n + 4));
	memcpy(p + n, &d, 4);

	n = EPI_AT;
	for (int hw = 0; hw < 16; hw++)
		n += emit_ripmov(p + n, n, true, hw,
				 DATA_AT + D_OUT + 8 * hw_to_gdb[hw]);
	n += emit_ripmov(p + n, n, false, 4, DATA_AT + D_HOSTRSP);
	p[n++] = 0x9c;				/* pushfq */
	p[n++] = 0x8f;				/* pop OUT.flags(%rip) */
	p[n++] = 0x05;
	d = (int32_t)(DATA_AT + D_OUTFLAGS - (n + 4));
	memcpy(p + n, &d, 4);
	n += 4;
	memcpy(p + n, restores, sizeof(restores));
}

/* movl $v, LANDING(%rip); jmp epilogue */
static void emit_landing(size_t at, uint32_t v)
{
	uint8_t *p = arena;
	size_t n = at;
	int32_t d;

	p[n++] = 0xc7;
	p[n++] = 0x05;
	d = (int32_t)(DATA_AT + D_LANDING - (n + 8));
	memcpy(p + n, &d, 4);
	n += 4;
	memcpy(p + n, &v, 4);
	n += 4;
	p[n++] = 0xe9;
	d = (int32_t)(EPI_AT - (n + 4));
	memcpy(p + n, &d, 4);
}

static uint64_t *data_slot(size_t off)
{
	return (uint64_t *)(arena + DATA_AT + off);
}

/* ---- emulator memory: the copy of pages 1-2 ---- */

static int mem_rd(void *ctx, uint64_t addr, void *buf, size_t len)
{
	uint64_t base = (uint64_t)(uintptr_t)arena;

	if (addr < base + 0x1000 || addr + len > base + ARENA_SIZE)
		return -EFAULT;
	memcpy(buf, mem_copy + (addr - base), len);
	return 0;
}

static int mem_wr(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	uint64_t base = (uint64_t)(uintptr_t)arena;

	if (addr < base + 0x1000 || addr + len > base + ARENA_SIZE)
		return -EFAULT;
	memcpy(mem_copy + (addr - base), buf, len);
	return 0;
}

/* ---- random instruction generators ---- */

static uint64_t arena_addr(size_t off)
{
	return (uint64_t)(uintptr_t)arena + off;
}

static uint64_t land1(void)
{
	return arena_addr(LAND1_AT);
}

/*
 * A memory operand with ModRM.reg = `reg` addressing a random 8-aligned
 * spot of data page 1.  Sets the base / index registers in `r`
 * accordingly.  rip-relative, base+disp8, base+disp32, base+index*scale,
 * and SIB without base are all drawn.
 */
static uint64_t gen_mem(struct gen *g, struct arch_gpregs *r, int reg,
			uint8_t *rex, size_t rex_at)
{
	uint64_t target = arena_addr(0x1000 + 8 * rndn(0x1f0) + 0x40);
	int mode = rndn(5), base, index;
	int64_t disp;

	*rex |= (reg >> 3) << 2;
	switch (mode) {
	case 0: {	/* rip-relative: disp from the end of the insn, fixed up later */
		put(g, (reg & 7) << 3 | 5);
		put32(g, 0);
		return target;
	}
	case 1:
	case 2:
		base = rndn(16);
		if (base == 4)
			base = 3;
		disp = mode == 1 ? (int8_t)rnd() : (int32_t)(rnd() % 0x100000) - 0x80000;
		r->gpr[hw_to_gdb[base]] = target - disp;
		*rex |= base >> 3;
		put(g, (mode == 1 ? 0x40 : 0x80) | (reg & 7) << 3 | (base & 7));
		if ((base & 7) == 4)
			put(g, 0x24);	/* SIB: r12 base needs one */
		if (mode == 1)
			put(g, (uint8_t)disp);
		else
			put32(g, (uint32_t)disp);
		return target;
	case 3: {
		unsigned int ss = rndn(4);
		uint64_t iv;

		base = rndn(16);
		do
			index = rndn(16);
		while (index == 4 || index == base);
		if (base == 4 && reg == 4) /* keep rsp valid as the stack */
			base = 3;
		if (base == index)
			index = (index + 1) & 15;
		if (index == 4)
			index = 5;
		if (base == index)
			base = 3 == index ? 2 : 3;
		disp = (int8_t)rnd();
		iv = rnd() % 64;
		r->gpr[hw_to_gdb[index]] = iv;
		if (base == 4) {
			/* base rsp stays the stack pointer: derive index */
			uint64_t sp = r->gpr[7];

			ss = 0;
			disp = 0;
			r->gpr[hw_to_gdb[index]] = target - sp;
		} else {
			r->gpr[hw_to_gdb[base]] = target - disp - (iv << ss);
		}
		*rex |= (base >> 3) | (index >> 3) << 1;
		put(g, 0x40 | (reg & 7) << 3 | 4);
		put(g, ss << 6 | (index & 7) << 3 | (base & 7));
		put(g, (uint8_t)disp);
		return target;
	}
	default: {	/* [index*scale + disp32], no base */
		unsigned int ss = rndn(4);

		do
			index = rndn(16);
		while (index == 4);
		disp = (int32_t)(rnd() % 0x10000);
		r->gpr[hw_to_gdb[index]] = (target - disp) >> ss;
		target = (r->gpr[hw_to_gdb[index]] << ss) + disp;
		*rex |= (index >> 3) << 1;
		put(g, (reg & 7) << 3 | 4);
		put(g, ss << 6 | (index & 7) << 3 | 5);
		put32(g, (uint32_t)disp);
		return target;
	}
	}
	(void)rex_at;
}

/* After the whole instruction is known: fix a rip-relative disp. */
static void fix_rip(struct gen *g, size_t modrm_at, uint64_t target)
{
	if ((g->b[modrm_at] & 0xc7) == 0x05) {
		int32_t d = (int32_t)(target - (arena_addr(INSN_AT) + g->n));

		memcpy(g->b + modrm_at + 1, &d, 4);
	}
}

/*
 * Emits [66] [REX] opcode(s) modrm-memory [imm] and returns the memory
 * target.  `w`: operand size 2, 4, 8 (or 1: no prefix).
 */
static uint64_t gen_mem_insn(struct gen *g, struct arch_gpregs *r, unsigned int w,
			     const uint8_t *op, size_t opn, int reg, int imm_size,
			     bool force_rex)
{
	uint8_t rex = 0x40 | (w == 8 ? 8 : 0);
	size_t rex_at, modrm_at;
	uint64_t target;

	if (w == 2)
		put(g, 0x66);
	rex_at = g->n;
	put(g, 0);		/* placeholder for REX */
	for (size_t i = 0; i < opn; i++)
		put(g, op[i]);
	modrm_at = g->n;
	target = gen_mem(g, r, reg, &rex, rex_at);
	for (int i = 0; i < imm_size; i++)
		put(g, rnd());
	if (rex == 0x40 && !force_rex) {
		memmove(g->b + rex_at, g->b + rex_at + 1, g->n - rex_at - 1);
		g->n--;
		modrm_at--;
	} else {
		g->b[rex_at] = rex;
	}
	fix_rip(g, modrm_at, target);
	return target;
}

static void gen_modrm_reg(struct gen *g, unsigned int w, uint8_t op, int reg,
			  int rm, int imm_size)
{
	uint8_t rex = 0x40 | (w == 8 ? 8 : 0) | (reg >> 3) << 2 | (rm >> 3);

	if (w == 2)
		put(g, 0x66);
	if (rex != 0x40 || rndn(4) == 0)
		put(g, rex);
	put(g, op);
	put(g, 0xc0 | (reg & 7) << 3 | (rm & 7));
	for (int i = 0; i < imm_size; i++)
		put(g, rnd());
}

#define ALL_ARITH (CF | PF | AF | ZF | SF | OF)
#define LOGIC (CF | PF | ZF | SF | OF)

/* Grouped in this order by generate(): stack, branch, move, alu. */
enum form {
	F_PUSH, F_POP, F_PUSH_IMM, F_NOP, F_JMP, F_CALL, F_JCC, F_RET, F_LOOP,
	F_IND, F_MOV_RR, F_MOV_LOAD, F_MOV_IMM, F_LEA, F_ALU_RR, F_CMP_RR,
	F_CMP_MEM, F_CMP_MEM8, F_ALU_IMM, F_CMP_IMM_MEM, F_NFORMS
};

static const char *const form_names[F_NFORMS] = {
	"push r64", "pop r64", "push imm", "nop/pause/endbr64", "jmp rel",
	"call rel32", "jcc rel8/rel32", "ret / ret imm16", "loop/jrcxz",
	"jmp/call *reg/*mem", "mov reg,reg", "mov mem,reg", "mov imm,reg",
	"lea", "alu reg,reg", "cmp/test reg,reg", "cmp/test mem,reg",
	"cmp/test mem8,reg8", "alu imm,reg", "cmp/test imm,mem",
};

/* Stack operations and the no-op family. */
static void gen_stack(enum form f, struct gen *g, int a)
{
	switch (f) {
	case F_PUSH:
	case F_POP:
		if (a >= 8)
			put(g, 0x41);
		put(g, (f == F_PUSH ? 0x50 : 0x58) + (a & 7));
		break;
	case F_PUSH_IMM:
		if (rndn(2)) {
			put(g, 0x6a);
			put(g, rnd());
		} else {
			put(g, 0x68);
			put32(g, rnd());
		}
		break;
	case F_NOP: {
		static const uint8_t nops[][9] = {
			{ 1, 0x90 }, { 2, 0x66, 0x90 }, { 2, 0xf3, 0x90 },
			{ 4, 0xf3, 0x0f, 0x1e, 0xfa },
			{ 3, 0x0f, 0x1f, 0x00 }, { 4, 0x0f, 0x1f, 0x40, 0x00 },
			{ 5, 0x0f, 0x1f, 0x44, 0x00, 0x00 },
			{ 8, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
		};
		unsigned int k = rndn(8);

		for (unsigned int i = 0; i < nops[k][0]; i++)
			put(g, nops[k][1 + i]);
		break;
	}
	default:
		break;
	}
}

/*
 * Relative, conditional, looping and indirect branches, and returns: each
 * lands on LAND1_AT.
 */
static void gen_branch(enum form f, struct gen *g, struct arch_gpregs *r, int a)
{
	uint8_t op[2];

	switch (f) {
	case F_JMP:
	case F_CALL:
	case F_JCC: {
		bool rel8 = f != F_CALL && rndn(2);
		unsigned int cc = rndn(16);

		if (f == F_JMP)
			put(g, rel8 ? 0xeb : 0xe9);
		else if (f == F_CALL)
			put(g, 0xe8);
		else if (rel8)
			put(g, 0x70 + cc);
		else {
			put(g, 0x0f);
			put(g, 0x80 + cc);
		}
		if (rel8)
			put(g, LAND1_AT - (INSN_AT + g->n + 1));
		else
			put32(g, LAND1_AT - (INSN_AT + g->n + 4));
		break;
	}
	case F_RET:
		if (rndn(2)) {
			put(g, 0xc3);
		} else {
			put(g, 0xc2);
			put(g, 8 * rndn(32));
			put(g, 0);
		}
		memcpy(arena + (r->gpr[7] - arena_addr(0)), &(uint64_t){ land1() }, 8);
		break;
	case F_LOOP: {
		static const uint64_t rcx[] = { 0, 1, 2 };

		put(g, 0xe0 + rndn(4));
		put(g, LAND1_AT - (INSN_AT + 2));
		if (rndn(2))
			r->gpr[2] = rcx[rndn(3)];
		break;
	}
	case F_IND: {
		int ext = rndn(2) ? 2 : 4;

		if (rndn(2)) {
			if (a == 4)
				a = 0;
			r->gpr[hw_to_gdb[a]] = land1();
			if (a >= 8)
				put(g, 0x41);
			put(g, 0xff);
			put(g, 0xc0 | ext << 3 | (a & 7));
		} else {
			uint64_t t;

			op[0] = 0xff;
			t = gen_mem_insn(g, r, 4, op, 1, ext, 0, false);
			memcpy(arena + (t - arena_addr(0)), &(uint64_t){ land1() }, 8);
		}
		break;
	}
	default:
		break;
	}
}

/* Register, memory and immediate moves, and lea. */
static void gen_move(enum form f, struct gen *g, struct arch_gpregs *r,
		     unsigned int w, int a, int b)
{
	uint8_t op[2];

	switch (f) {
	case F_MOV_RR:
		gen_modrm_reg(g, w, rndn(2) ? 0x89 : 0x8b, a, b, 0);
		break;
	case F_MOV_LOAD:
		op[0] = 0x8b;
		gen_mem_insn(g, r, w, op, 1, a, 0, false);
		break;
	case F_MOV_IMM:
		if (rndn(2)) {
			uint8_t rex = 0x40 | (w == 8 ? 8 : 0) | (a >> 3);

			if (rex != 0x40)
				put(g, rex);
			put(g, 0xb8 + (a & 7));
			for (unsigned int i = 0; i < w; i++)
				put(g, rnd());
		} else {
			gen_modrm_reg(g, w, 0xc7, 0, a, 4);
		}
		break;
	case F_LEA: {
		/* any addressing, registers stay random: no access is made */
		struct arch_gpregs keep = *r;

		op[0] = 0x8d;
		gen_mem_insn(g, r, w, op, 1, a, 0, false);
		for (int i = 0; i < 16; i++)
			if (i != 7 && rndn(3) == 0)
				r->gpr[i] = keep.gpr[i];
		break;
	}
	default:
		break;
	}
}

/* Arithmetic, logic, compare and test in register, memory and immediate forms. */
static void gen_alu(enum form f, struct gen *g, struct arch_gpregs *r,
		    unsigned int w, int a, int b)
{
	static const uint8_t alu_ops[] = { 0x01, 0x03, 0x09, 0x0b, 0x21, 0x23,
					   0x29, 0x2b, 0x31, 0x33 };
	static const uint8_t grp1[] = { 0, 1, 4, 5, 6, 7 };
	uint8_t op[2];

	switch (f) {
	case F_ALU_RR:
		op[0] = alu_ops[rndn(sizeof(alu_ops))];
		if (op[0] >= 0x09 && op[0] <= 0x33 && op[0] != 0x29 && op[0] != 0x2b)
			g->flag_mask = LOGIC;
		if (a == 4 || b == 4)	/* keep rsp a stack pointer */
			a = b = 0;
		gen_modrm_reg(g, w, op[0], a, b, 0);
		break;
	case F_CMP_RR: {
		static const uint8_t ops[] = { 0x39, 0x3b, 0x85 };

		op[0] = ops[rndn(3)];
		if (op[0] == 0x85)
			g->flag_mask = LOGIC;
		gen_modrm_reg(g, w, op[0], a, b, 0);
		break;
	}
	case F_CMP_MEM: {
		static const uint8_t ops[] = { 0x39, 0x3b, 0x85 };
		static const unsigned int ws[] = { 2, 4, 8 };

		op[0] = ops[rndn(3)];
		if (op[0] == 0x85)
			g->flag_mask = LOGIC;
		gen_mem_insn(g, r, ws[rndn(3)], op, 1, a, 0, false);
		break;
	}
	case F_CMP_MEM8: {
		static const uint8_t ops[] = { 0x38, 0x3a, 0x84 };

		op[0] = ops[rndn(3)];
		if (op[0] == 0x84)
			g->flag_mask = LOGIC;
		/* with or without REX: ah..bh vs spl..dil */
		gen_mem_insn(g, r, 1, op, 1, a, 0, rndn(2));
		break;
	}
	case F_ALU_IMM: {
		uint8_t ext = grp1[rndn(6)];
		bool ib = rndn(2);

		if (ext == 1 || ext == 4 || ext == 6)
			g->flag_mask = LOGIC;
		if (a == 4 && ext != 7)
			a = 0;	/* sub $n,%rsp is drawn via rsp-safe values */
		gen_modrm_reg(g, w, ib ? 0x83 : 0x81, ext, a, ib ? 1 : 4);
		break;
	}
	case F_CMP_IMM_MEM: {
		unsigned int k = rndn(5);
		static const unsigned int ws[] = { 2, 4, 8 };
		unsigned int ww = ws[rndn(3)];

		if (k == 0) {
			op[0] = 0x80;
			gen_mem_insn(g, r, 1, op, 1, 7, 1, false);
		} else if (k == 1) {
			op[0] = 0x83;
			gen_mem_insn(g, r, ww, op, 1, 7, 1, false);
		} else if (k == 2) {
			op[0] = 0x81;
			gen_mem_insn(g, r, ww, op, 1, 7, ww == 2 ? 2 : 4, false);
		} else if (k == 3) {
			g->flag_mask = LOGIC;
			op[0] = 0xf6;
			gen_mem_insn(g, r, 1, op, 1, 0, 1, false);
		} else {
			g->flag_mask = LOGIC;
			op[0] = 0xf7;
			gen_mem_insn(g, r, ww, op, 1, 0, ww == 2 ? 2 : 4, false);
		}
		break;
	}
	default:
		break;
	}
}

/*
 * Draws one instruction of form f into g and sets up r for it. The width
 * and the two register numbers are drawn first for every form, so that a
 * seed gives the same sequence whatever the form.
 */
static void generate(enum form f, struct gen *g, struct arch_gpregs *r)
{
	unsigned int w = rndn(2) ? 8 : 4;
	int a = rndn(16), b = rndn(16);

	g->flag_mask = ALL_ARITH;
	if (f <= F_NOP)
		gen_stack(f, g, a);
	else if (f <= F_IND)
		gen_branch(f, g, r, a);
	else if (f <= F_LEA)
		gen_move(f, g, r, w, a, b);
	else
		gen_alu(f, g, r, w, a, b);
	g->form = form_names[f];
}

static int run_case(enum form f, unsigned long *n_ok)
{
	struct arch_gpregs in, emu;
	struct arch_mem m = { NULL, mem_rd, mem_wr };
	struct x86_64_insn insn;
	struct gen g = { .n = 0 };
	uint64_t pc_native, flags_mask;
	int err;

	for (int i = 0; i < 16; i++)
		in.gpr[i] = rnd();
	/* sub/add $imm,%rsp forms stay rare; rsp is a stack pointer */
	in.gpr[7] = arena_addr(0x2000 + 8 * (0x80 + rndn(0x100)));
	in.flags = 0x202 | (rnd() & ALL_ARITH);
	memset(arena + 0x1000, 0, 0x2000);
	for (size_t i = 0x1000; i < ARENA_SIZE; i += 8)
		*(uint64_t *)(arena + i) = rnd();

	generate(f, &g, &in);
	if (f == F_ALU_IMM && rndn(8) == 0) {
		/* the function-entry form: sub/add $imm,%rsp */
		g.n = 0;
		put(&g, 0x48);
		put(&g, 0x83);
		put(&g, rndn(2) ? 0xec : 0xc4);
		put(&g, 8 * rndn(16));
		g.flag_mask = ALL_ARITH;
	}

	memcpy(arena + INSN_AT, g.b, g.n);
	emit_landing(INSN_AT + g.n, 0);
	emit_landing(LAND1_AT, 1);
	memcpy(mem_copy, arena, ARENA_SIZE);

	memcpy(data_slot(D_IN), in.gpr, 16 * 8);
	*data_slot(D_INFLAGS) = in.flags;
	*data_slot(D_LANDING) = 0x5a5a5a5a5a5a5a5aull;
	__builtin___clear_cache((char *)arena, (char *)arena + 0x1000);
	((void (*)(void))(void *)arena)();

	err = x86_64_decode(&insn, g.b, g.n, arena_addr(INSN_AT));
	if (err || insn.len != g.n || !x86_64_emulated_form(&insn)) {
		printf("FAIL %s: decode %d len %u form %s\n", g.form, err,
		       insn.len, x86_64_emulated_form(&insn) ? "yes" : "none");
		return 1;
	}
	emu = in;
	emu.pc = arena_addr(INSN_AT);
	err = x86_64_emulate(&insn, &emu, &m);

	if ((uint32_t)*data_slot(D_LANDING) > 1) {
		printf("FAIL %s: native run reached no landing\n", g.form);
		return 1;
	}
	pc_native = (uint32_t)*data_slot(D_LANDING) ? land1() :
						      arena_addr(INSN_AT + g.n);
	flags_mask = g.flag_mask;
	if (!err && memcmp(emu.gpr, data_slot(D_OUT), 16 * 8) == 0 &&
	    emu.pc == pc_native &&
	    (emu.flags & flags_mask) == (*data_slot(D_OUTFLAGS) & flags_mask) &&
	    memcmp(mem_copy + 0x1000, arena + 0x1000, 0x2000) == 0) {
		(*n_ok)++;
		return 0;
	}
	printf("FAIL %s:", g.form);
	for (size_t i = 0; i < g.n; i++)
		printf(" %02x", g.b[i]);
	printf("  emulate %d\n", err);
	for (int i = 0; i < 16; i++)
		if (emu.gpr[i] != data_slot(D_OUT)[i])
			printf("  gpr[%d] native %#llx emulated %#llx (in %#llx)\n", i,
			       (unsigned long long)data_slot(D_OUT)[i],
			       (unsigned long long)emu.gpr[i],
			       (unsigned long long)in.gpr[i]);
	printf("  pc native %#llx emulated %#llx\n",
	       (unsigned long long)pc_native, (unsigned long long)emu.pc);
	printf("  flags native %#llx emulated %#llx in %#llx mask %#llx\n",
	       (unsigned long long)*data_slot(D_OUTFLAGS),
	       (unsigned long long)emu.flags, (unsigned long long)in.flags,
	       (unsigned long long)flags_mask);
	if (memcmp(mem_copy + 0x1000, arena + 0x1000, 0x2000))
		printf("  memory differs\n");
	return 1;
}

static int child(void)
{
	unsigned long total = 0;
	int failures = 0;

	build_runner();
	for (int f = 0; f < F_NFORMS; f++) {
		unsigned long ok = 0;
		int ff = 0;

		for (int i = 0; i < CASES_PER_FORM; i++)
			if (run_case(f, &ok) && ++ff >= 5)
				break;
		printf("%-22s %5lu / %d cases equal to the CPU\n", form_names[f],
		       ok, CASES_PER_FORM);
		total += ok;
		failures += ff;
	}
	printf("total: %lu cases, %d mismatches\n", total, failures);
	return failures ? 1 : 0;
}

int main(void)
{
	pid_t pid;
	int status;

	arena = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE | PROT_EXEC,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (arena == MAP_FAILED) {
		printf("SKIP: no RWX memory: %s\n", strerror(errno));
		return 77;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 99;
	if (pid == 0) {
		alarm(120);
		int r = child();

		fflush(stdout);
		_exit(r);
	}
	if (waitpid(pid, &status, 0) < 0)
		return 99;
	if (WIFSIGNALED(status)) {
		printf("FAIL: child killed by signal %d\n", WTERMSIG(status));
		return 1;
	}
	return WEXITSTATUS(status);
}
