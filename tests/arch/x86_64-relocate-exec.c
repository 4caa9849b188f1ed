/*
 * x86_64-relocate-exec.c - relocated code must do what the original did.
 *
 * Real sequences (RIP-relative loads, stores, lea, compares with an
 * immediate after the displacement, SSE and VEX operands, jmp / call /
 * jcc / loop leaving the copied range, indirect calls through memory)
 * are placed at ORIG and called as functions `rax = f(rdi, rsi)`.  Their
 * first `reloc_len` bytes are then relocated to a NEAR address (within
 * +-2 GiB: displacements re-encoded) and to a FAR one (more than 2 GiB
 * away: scratch-register sequences and absolute jumps), followed by a
 * jump back into ORIG; each copy is called with the same inputs.  Return
 * values and the data the code touches must be equal.
 *
 * Also checked: the boost slot built through x86_64_arch_ops.xol_prepare,
 * the far-slot fallback to a single step for an instruction that uses
 * %rsp, and the jump-pad window relocator, including its refusal of a
 * window that a branch lands inside.
 *
 * Exit 0 pass, 1 failure, 77 no RWX memory or no far mapping, 99 harness.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arch/x86_64/x86_64.h"

#define PAGE 0x1000
#define T_AT 0x400	/* target function: mov $42,%eax; ret */
#define D_AT 0x800	/* data */

static uint8_t *orig, *near_, *far_;
static int failures, checks;

static void *map_at(void *hint)
{
	void *p = mmap(hint, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS | (hint ? MAP_FIXED_NOREPLACE : 0),
		       -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static uint64_t A(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

struct seq {
	const char *name;
	uint8_t code[64];
	size_t len;		/* bytes of code */
	size_t reloc_len;	/* leading bytes relocated */
	bool needs_avx;
};

/* rel32 / disp32 fields are written relative to ORIG by the fixups. */
#define D32(x) (x) & 0xff, ((x) >> 8) & 0xff, ((x) >> 16) & 0xff, ((x) >> 24) & 0xff

/* disp32 from the end of an instruction ending at `end` to D_AT + off */
#define RIP(end, off) D32((uint32_t)(D_AT + (off) - (end)))
#define REL(end, to) D32((uint32_t)((to) - (end)))

static const struct seq seqs[] = {
	{ "mov D(%rip),%rax",
	  { 0x48, 0x8b, 0x05, RIP(7, 0), 0xc3 }, 8, 7, false },
	{ "mov %rdi,D(%rip); mov D(%rip),%rax",
	  { 0x48, 0x89, 0x3d, RIP(7, 16), 0x48, 0x8b, 0x05, RIP(14, 16), 0xc3 },
	  15, 14, false },
	{ "lea D(%rip),%rax",
	  { 0x48, 0x8d, 0x05, RIP(7, 8), 0xc3 }, 8, 7, false },
	{ "xor %eax,%eax; cmpl $5,D(%rip); sete %al",
	  { 0x31, 0xc0, 0x83, 0x3d, RIP(9, 24), 0x05, 0x0f, 0x94, 0xc0, 0xc3 },
	  13, 12, false },
	{ "mov D(%rip),%rsi; mov %rsi,%rax (scratch avoids rsi)",
	  { 0x48, 0x8b, 0x35, RIP(7, 0), 0x48, 0x89, 0xf0, 0xc3 }, 11, 10, false },
	{ "mov D(%rip),%rax with a (meaningless) REX.B",
	  { 0x49, 0x8b, 0x05, RIP(7, 0), 0xc3 }, 8, 7, false },
	{ "add D(%rip),%rdi; mov %rdi,%rax",
	  { 0x48, 0x03, 0x3d, RIP(7, 0), 0x48, 0x89, 0xf8, 0xc3 }, 11, 10, false },
	{ "movq D(%rip),%xmm0; movq %xmm0,%rax",
	  { 0xf3, 0x0f, 0x7e, 0x05, RIP(8, 0), 0x66, 0x48, 0x0f, 0x7e, 0xc0, 0xc3 },
	  14, 13, false },
	{ "vmovq D(%rip),%xmm0 (VEX2); vmovq %xmm0,%rax",
	  { 0xc5, 0xfa, 0x7e, 0x05, RIP(8, 0), 0xc4, 0xe1, 0xf9, 0x7e, 0xc0, 0xc3 },
	  14, 13, true },
	{ "vmovq D(%rip),%xmm9 (VEX3, R); vmovq %xmm9,%rax",
	  { 0xc4, 0x41, 0x7a, 0x7e, 0x0d, RIP(9, 0), 0xc4, 0x61, 0xf9, 0x7e, 0xc8, 0xc3 },
	  15, 14, true },
	{ "jmp T",
	  { 0xe9, REL(5, T_AT) }, 5, 5, false },
	{ "call T; add $1,%rax",
	  { 0xe8, REL(5, T_AT), 0x48, 0x83, 0xc0, 0x01, 0xc3 }, 10, 5, false },
	{ "cmp %rsi,%rdi; jl +8 (rel8 out); mov $1; ret; mov $2; ret",
	  { 0x48, 0x39, 0xf7, 0x7c, 0x06, 0xb8, 1, 0, 0, 0, 0xc3,
	    0xb8, 2, 0, 0, 0, 0xc3 }, 17, 5, false },
	{ "cmp %rsi,%rdi; jae rel32 out; mov $1; ret; mov $2; ret",
	  { 0x48, 0x39, 0xf7, 0x0f, 0x83, REL(9, 15), 0xb8, 1, 0, 0, 0, 0xc3,
	    0xb8, 2, 0, 0, 0, 0xc3 }, 21, 9, false },
	{ "mov %rdi,%rcx; and $3,%ecx; loop out; mov $1; ret; mov $2; ret",
	  { 0x48, 0x89, 0xf9, 0x83, 0xe1, 0x03, 0xe2, 0x06, 0xb8, 1, 0, 0, 0, 0xc3,
	    0xb8, 2, 0, 0, 0, 0xc3 }, 20, 8, false },
	{ "call *D+32(%rip); add $1,%rax",
	  { 0xff, 0x15, RIP(6, 32), 0x48, 0x83, 0xc0, 0x01, 0xc3 }, 11, 6, false },
	{ "jmp *D+32(%rip)",
	  { 0xff, 0x25, RIP(6, 32) }, 6, 6, false },
};

static void reset(const struct seq *s)
{
	static const uint8_t t[] = { 0xb8, 42, 0, 0, 0, 0xc3 };

	memset(orig, 0xcc, PAGE);
	memcpy(orig, s->code, s->len);
	memcpy(orig + T_AT, t, sizeof(t));
	for (int i = 0; i < 32; i++)
		orig[D_AT + i] = 0x11 * (i + 1);
	*(uint64_t *)(orig + D_AT + 24) = 5;		/* cmpl $5 */
	*(uint64_t *)(orig + D_AT + 32) = A(orig + T_AT);
	__builtin___clear_cache((char *)orig, (char *)orig + PAGE);
}

typedef uint64_t (*fn)(uint64_t, uint64_t);

/* Relocates the first s->reloc_len bytes of ORIG to `to`, then jmp back. */
static int relocate_seq(const struct seq *s, uint8_t *to)
{
	struct x86_64_out o = { to, PAGE, 0, A(to), false };
	struct x86_64_insn in;
	struct x86_64_step st;
	size_t off = 0;
	int err;

	memset(to, 0xcc, PAGE);
	while (off < s->reloc_len) {
		if ((err = x86_64_decode(&in, orig + off, s->len - off, A(orig) + off)))
			return err;
		if ((err = x86_64_relocate(&in, &o, &st)))
			return err;
		if (st.step)
			return -EXDEV;
		off += in.len;
	}
	x86_64_jmp(&o, A(orig) + off);
	__builtin___clear_cache((char *)to, (char *)to + PAGE);
	return o.overflow ? -ENOSPC : 0;
}

static void check(bool ok, const char *what, const char *name)
{
	checks++;
	if (!ok) {
		failures++;
		printf("FAIL %s: %s\n", name, what);
	}
}

static void run_seq(const struct seq *s, uint8_t *where, const char *label)
{
	static const uint64_t inputs[][2] = {
		{ 1, 2 }, { 2, 1 }, { 5, 5 }, { 0, 7 }, { 9, 3 },
		{ 0x123456789ull, 0x42 }, { ~0ull, 1 }, { 3, ~0ull },
	};
	char name[160];
	uint8_t data_o[40], data_r[40];

	snprintf(name, sizeof(name), "%s [%s]", s->name, label);
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		uint64_t ro, rr;
		int err;

		reset(s);
		ro = ((fn)(void *)orig)(inputs[i][0], inputs[i][1]);
		memcpy(data_o, orig + D_AT, sizeof(data_o));
		reset(s);
		err = relocate_seq(s, where);
		if (err) {
			check(false, "relocation failed", name);
			printf("  error %d\n", err);
			return;
		}
		rr = ((fn)(void *)where)(inputs[i][0], inputs[i][1]);
		memcpy(data_r, orig + D_AT, sizeof(data_r));
		check(ro == rr, "return value differs", name);
		check(memcmp(data_o, data_r, sizeof(data_o)) == 0,
		      "data differs", name);
		if (ro != rr)
			printf("  inputs %#llx %#llx: original %#llx relocated %#llx\n",
			       (unsigned long long)inputs[i][0],
			       (unsigned long long)inputs[i][1],
			       (unsigned long long)ro, (unsigned long long)rr);
	}
}

/* The boost slot through arch_ops: relocated insn + jmp back. */
static void test_xol(void)
{
	const struct arch_ops *ops = &x86_64_arch_ops;
	const struct seq *s = &seqs[7];	/* movq D(%rip),%xmm0; ... */
	uint8_t *slots[2] = { near_, far_ };
	static const uint8_t push_rip[] = { 0xff, 0x35, 0, 0, 0, 0 };
	struct arch_insn insn;
	struct arch_xol xol;

	for (int k = 0; k < 2; k++) {
		int n;

		reset(s);
		check(ops->insn_decode(orig, s->len, A(orig), &insn) == 0 &&
		      insn.strategy == ARCH_BOOST, "decode as boost", "xol");
		memset(slots[k], 0xcc, PAGE);
		n = ops->xol_prepare(&insn, A(slots[k]), slots[k], PAGE, &xol);
		check(n > 0 && !xol.step, "xol_prepare boost", "xol");
		__builtin___clear_cache((char *)slots[k], (char *)slots[k] + PAGE);
		check(strncmp(s->name, "movq D(%rip)", 12) == 0, "seq", "xol");
		check(((fn)(void *)slots[k])(0, 0) == *(uint64_t *)(orig + D_AT),
		      k ? "far slot result" : "near slot result", "xol");
	}

	/* push D(%rip) uses %rsp: a far slot cannot save a scratch reg */
	memcpy(orig, push_rip, sizeof(push_rip));
	check(ops->insn_decode(orig, 6, A(orig), &insn) == 0 &&
	      insn.strategy == ARCH_BOOST, "push rip decode", "xol-step");
	check(ops->xol_prepare(&insn, A(near_), near_, PAGE, &xol) > 0 &&
	      !xol.step, "near slot boosts", "xol-step");
	check(ops->xol_prepare(&insn, A(far_), far_, PAGE, &xol) > 0 &&
	      xol.step && xol.scratch_gpr >= 0 &&
	      xol.scratch_value == A(orig) + 6, "far slot steps with scratch",
	      "xol-step");
	{
		struct arch_gpregs r = { .pc = A(far_) + xol.insn_len };

		xol.scratch_saved = 0x1234;
		check(ops->xol_fixup(&insn, &xol, &r) == 0 &&
		      r.pc == A(orig) + 6 && r.gpr[xol.scratch_gpr] == 0x1234,
		      "xol_fixup", "xol-step");
		r.pc = 0;
		check(ops->xol_fixup(&insn, &xol, &r) == -EINVAL,
		      "xol_fixup rejects a pc elsewhere", "xol-step");
	}
}

/*
 * Jump-pad windows.  The function:
 *   0: 55                push %rbp
 *   1: 48 89 e5          mov %rsp,%rbp
 *   4: 48 8b 05 D        mov D(%rip),%rax
 *  11: 5d                pop %rbp
 *  12: c3                ret
 * A 5-byte window from 0 covers push, mov, mov (11 bytes).  The same
 * function with `jmp +1` into byte 1 (appended, never run) is refused.
 */
static void test_window(void)
{
	const struct arch_ops *ops = &x86_64_arch_ops;
	uint8_t f[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x8b, 0x05, RIP(11, 0),
			0x5d, 0xc3, 0xeb, 0xf2 /* jmp 1 */ };
	uint8_t *pads[2] = { near_, far_ };
	size_t inlen;

	for (int k = 0; k < 2; k++) {
		int n;

		memset(orig, 0xcc, PAGE);
		memcpy(orig, f, 13);
		*(uint64_t *)(orig + D_AT) = 0xfeedface12345678ull;
		memset(pads[k], 0xcc, PAGE);
		n = ops->relocate_window(orig, 13, A(orig), A(orig), 5,
					 A(pads[k]), pads[k], PAGE, &inlen);
		check(n > 0 && inlen == 11, "window relocated", "window");
		__builtin___clear_cache((char *)pads[k], (char *)pads[k] + PAGE);
		if (n > 0)
			check(((fn)(void *)pads[k])(0, 0) == 0xfeedface12345678ull,
			      k ? "far pad result" : "near pad result", "window");
	}
	memcpy(orig, f, sizeof(f));
	check(ops->relocate_window(orig, sizeof(f), A(orig), A(orig), 5,
				   A(near_), near_, PAGE, &inlen) == -EXDEV,
	      "branch into window refused", "window");
	check(ops->relocate_window(orig, 13, A(orig), A(orig) + 11, 5,
				   A(near_), near_, PAGE, &inlen) == -ERANGE,
	      "window leaving the function refused", "window");
}

int main(void)
{
	bool avx = __builtin_cpu_supports("avx");

	setvbuf(stdout, NULL, _IONBF, 0);

	orig = map_at(NULL);
	if (!orig) {
		printf("SKIP: no RWX memory\n");
		return 77;
	}
	/* Near: within rel32 reach, the first free page from 1 MiB away
	 * (under ASan the pages just around orig are often taken). */
	for (uint64_t d = 1ull << 20; !near_ && d < (1ull << 30); d += 1ull << 20) {
		near_ = map_at(orig + d);
		if (!near_)
			near_ = map_at(orig - d);
	}
	for (uint64_t d = 8ull << 30; !far_ && d < (64ull << 30); d += 1ull << 30) {
		far_ = map_at(orig + d);
		if (!far_)
			far_ = map_at(orig - d);
	}
	if (!near_ || !far_) {
		printf("SKIP: cannot map near and far pages (orig %p, near %p, far %p)\n",
		       (void *)orig, (void *)near_, (void *)far_);
		return 77;
	}
	if (x86_64_in_rel32(A(far_), A(orig)) || !x86_64_in_rel32(A(near_), A(orig))) {
		printf("ERROR: near/far placement\n");
		return 99;
	}
	printf("orig %p near %p far %p\n", (void *)orig, (void *)near_, (void *)far_);

	for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++) {
		if (seqs[i].needs_avx && !avx) {
			printf("skip %s: no AVX\n", seqs[i].name);
			continue;
		}
		run_seq(&seqs[i], near_, "near");
		run_seq(&seqs[i], far_, "far");
	}
	test_xol();
	test_window();
	printf("%d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
