/*
 * x86_64-cond-exec.c - a jump pad's native condition check, run for real.
 *
 * Each case is agent-expression bytecode of the shape gdb emits for a
 * simple condition.  ax_simple_cond() turns it into a compare,
 * x86_64_emit_pad_cond() into code, which runs here in an executable page
 * between two stubs (fall through: "true", the patched branch: "false")
 * on many values of the register or the global it reads.  Every verdict
 * must be the agent-expression interpreter's on the same bytecode and
 * value, the skip counter must count the false ones, and every register
 * must come back as it was.  Shapes the native check must refuse are
 * checked to be refused.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "arch/arch.h"
#include "arch/x86_64/x86_64.h"
#include "protocol/ax.h"
#include "protocol/ax-simple.h"

static int failures, checks;

static uint64_t g_value;		/* the global a memory case reads */
static uint64_t skip_count;

struct ctx {
	struct ax_ctx ax;
	uint64_t reg;			/* register 5 (rdi) */
};

static int read_reg(const struct ax_ctx *c, unsigned regnum, uint64_t *v)
{
	if (regnum != 5)
		return -EINVAL;
	*v = ((const struct ctx *)c)->reg;
	return 0;
}

static long read_mem(const struct ax_ctx *c, uint64_t addr, void *buf, size_t len)
{
	(void)c;
	memcpy(buf, (const void *)(uintptr_t)addr, len);
	return (long)len;
}

/* rdi = the value, every other register a pattern; returns the verdict
 * and checks the registers survived. */
typedef uint64_t (*cond_fn)(uint64_t rdi);

static uint8_t *page;

static void put_be(uint8_t *p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

struct tcase {
	const char *what;
	uint8_t code[32];
	size_t len;
	int simple;		/* 1: ax_simple_cond must take it */
};

static void run_case(const struct tcase *tc, const uint64_t *vals, size_t nvals)
{
	struct ax_simple_cond sc;
	int r = ax_simple_cond(tc->code, tc->len, &sc);

	checks++;
	if ((r == 0) != tc->simple) {
		printf("FAIL %s: ax_simple_cond %s it\n", tc->what, r == 0 ? "took" : "refused");
		failures++;
		return;
	}
	if (r < 0) {
		printf("ok %s\n", tc->what);
		return;
	}
	struct arch_pad_cond c = {
		.mem = sc.mem != 0, .regnum = sc.regnum, .addr = sc.addr,
		.size = sc.size, .nconv = sc.nconv, .cmp = (enum arch_cond_cmp)sc.op,
		.imm = (int32_t)sc.imm, .pc = 0x1234, .skip_counter = (uint64_t)(uintptr_t)&skip_count,
	};
	for (unsigned int i = 0; i < sc.nconv; i++) {
		c.conv[i].sign = sc.conv[i].sign != 0;
		c.conv[i].bits = sc.conv[i].bits;
	}
	/* [check][mov $1,%eax; ret] ... [mov $0,%eax; ret] */
	size_t skip, load, take;
	int n = x86_64_emit_pad_cond(page, 4096, &c, &skip, &load, &take);
	if (n < 0) {
		printf("FAIL %s: emit_pad_cond: %s\n", tc->what, strerror(-n));
		failures++;
		return;
	}
	static const uint8_t yes[] = { 0xb8, 1, 0, 0, 0, 0xc3 };
	static const uint8_t no[] = { 0xb8, 0, 0, 0, 0, 0xc3 };
	memcpy(page + n, yes, sizeof(yes));
	memcpy(page + 256, no, sizeof(no));
	if (x86_64_patch_branch(page, skip, 256) < 0 || (c.mem && !load) || (!c.mem && load)) {
		printf("FAIL %s: offsets\n", tc->what);
		failures++;
		return;
	}
	cond_fn f = (cond_fn)(uintptr_t)page;
	for (size_t i = 0; i < nvals; i++) {
		struct ctx ctx = { .ax = { .read_reg = read_reg, .read_mem = read_mem },
				   .reg = vals[i] };
		struct ax_result res;
		g_value = vals[i];
		if (ax_eval_cond(tc->code, tc->len, &ctx.ax, &res) < 0) {
			printf("FAIL %s: the interpreter: %s\n", tc->what, res.message);
			failures++;
			return;
		}
		uint64_t before = skip_count;
		uint64_t got;
		/* Registers the check must leave alone, flags included. */
		uint64_t rbx = 0x1111, r12 = 0x2222, r15 = 0x3333, rdx = 0x4444;
		uint64_t rbx2, r12_2, r15_2, rdx2, rdi2;
		__asm__ volatile(
			"mov %[rbx],%%rbx\n\tmov %[r12],%%r12\n\tmov %[r15],%%r15\n\t"
			"mov %[rdx],%%rdx\n\tmov %[v],%%rdi\n\tcall *%[f]\n\t"
			"mov %%rbx,%[rbx2]\n\tmov %%r12,%[r12_2]\n\tmov %%r15,%[r15_2]\n\t"
			"mov %%rdx,%[rdx2]\n\tmov %%rdi,%[rdi2]\n\t"
			: "=a"(got), [rbx2] "=m"(rbx2), [r12_2] "=m"(r12_2),
			  [r15_2] "=m"(r15_2), [rdx2] "=m"(rdx2), [rdi2] "=m"(rdi2)
			: [f] "r"(f), [v] "m"(vals[i]), [rbx] "m"(rbx), [r12] "m"(r12),
			  [r15] "m"(r15), [rdx] "m"(rdx)
			: "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11",
			  "r12", "r15", "memory", "cc");
		checks++;
		if (got != (res.value != 0) || skip_count != before + !got ||
		    rbx2 != rbx || r12_2 != r12 || r15_2 != r15 || rdx2 != rdx ||
		    rdi2 != vals[i]) {
			printf("FAIL %s: value %#llx: native %llu, interpreter %llu, "
			       "skips +%llu, registers %s\n", tc->what,
			       (unsigned long long)vals[i], (unsigned long long)got,
			       (unsigned long long)res.value,
			       (unsigned long long)(skip_count - before),
			       rbx2 == rbx && r12_2 == r12 && r15_2 == r15 &&
			       rdx2 == rdx && rdi2 == vals[i] ? "kept" : "CHANGED");
			failures++;
			return;
		}
	}
	printf("ok %s\n", tc->what);
}

int main(void)
{
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		perror("mmap");
		return 99;
	}
	static const uint64_t vals[] = {
		0, 1, 2, 5, 6, 7, 127, 128, 129, 255, 256, 0x7fff, 0x8000, 0xffff,
		0x10000, 0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ull,
		0xfffffffffffffffbull, 0xfffffffffffffffeull, 0xffffffffffffffffull,
		0x8000000000000000ull, 0x7fffffffffffffffull, 0x1234567890abcdefull,
		0xffffff80ull, 0xff80ull, 0x80ull, 0xfffffffbull, 0xfffbull, 0xfbull,
	};
	uint8_t a[8];
	put_be(a, (uint64_t)(uintptr_t)&g_value, 8);
#define C(...) { __VA_ARGS__ }
#define ADDR a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
	/* const64 &g_value, refN, [ext/zero_ext], const, compare, [log_not], end */
	static struct tcase cases[32];
	struct tcase list[] = {
		{ "reg rdi == 5", C(0x26, 0, 5, 0x22, 5, 0x13, 0x27), 7, 1 },
		{ "reg rdi != 5 (log_not)", C(0x26, 0, 5, 0x22, 5, 0x13, 0x0e, 0x27), 8, 1 },
		{ "reg rdi < 6 signed", C(0x26, 0, 5, 0x22, 6, 0x14, 0x27), 7, 1 },
		{ "reg rdi < 6 unsigned", C(0x26, 0, 5, 0x22, 6, 0x15, 0x27), 7, 1 },
		{ "6 < reg rdi signed (swapped)", C(0x22, 6, 0x26, 0, 5, 0x14, 0x27), 7, 1 },
		{ "reg rdi >= -5 signed", C(0x26, 0, 5, 0x25, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfb, 0x14, 0x0e, 0x27), 15, 1 },
		{ "reg rdi ext 32 < -5", C(0x26, 0, 5, 0x16, 32, 0x25, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfb, 0x14, 0x27), 16, 1 },
		{ "reg rdi zero_ext 16 > 0x7fff", C(0x26, 0, 5, 0x2a, 16, 0x23, 0x7f, 0xff, 0x2b, 0x15, 0x27), 11, 1 },
		{ "reg rdi ext 8 == -128", C(0x26, 0, 5, 0x16, 8, 0x22, 0x80, 0x16, 8, 0x13, 0x27), 11, 1 },
		{ "reg rdi (nonzero)", C(0x26, 0, 5, 0x27), 4, 1 },
		{ "!reg rdi", C(0x26, 0, 5, 0x0e, 0x27), 5, 1 },
		{ "ref8 ext 8 < -1", C(0x25, ADDR, 0x17, 0x16, 8, 0x22, 0xff, 0x16, 8, 0x14, 0x27), 18, 1 },
		{ "ref16 > 40000 (swapped, signed)", C(0x25, ADDR, 0x18, 0x23, 0x9c, 0x40, 0x2b, 0x14, 0x27), 16, 1 },
		{ "ref32 ext 32 == 1", C(0x25, ADDR, 0x19, 0x16, 32, 0x22, 1, 0x13, 0x27), 16, 1 },
		{ "ref64 >= -7 negated", C(0x25, ADDR, 0x1a, 0x25, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xf9, 0x14, 0x0e, 0x0e, 0x27), 23, 1 },
		{ "ref64 < 0x80000000 unsigned (constant too wide: refused)", C(0x25, ADDR, 0x1a, 0x24, 0x80, 0, 0, 0, 0x15, 0x27), 17, 0 },
		{ "reg % 5 == 2 (refused)", C(0x26, 0, 5, 0x22, 5, 0x08, 0x22, 2, 0x13, 0x27), 10, 0 },
		{ "two values (refused)", C(0x26, 0, 5, 0x26, 0, 4, 0x13, 0x27), 8, 0 },
		{ "constant only (refused)", C(0x22, 1, 0x27), 3, 0 },
		{ "no end (refused)", C(0x26, 0, 5, 0x22, 5, 0x13), 6, 0 },
	};
	size_t ncases = sizeof(list) / sizeof(list[0]);
	memcpy(cases, list, sizeof(list));
	for (size_t i = 0; i < ncases; i++)
		run_case(&cases[i], vals, sizeof(vals) / sizeof(vals[0]));
	printf("x86_64-cond-exec: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
