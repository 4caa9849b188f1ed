/*
 * x86_64-pad-exec.c - a complete jump pad, executed natively in-process.
 *
 * The pad is built exactly as the agent builds it, from arch_ops only:
 *
 *   fn:   e9 <pad>              the probed function's first 5 bytes
 *         ...                   (the rest of the window, never run)
 *
 *   pad:  emit_save_regs(pc = fn)       frame of 18 words below the red zone
 *         emit_pad_handoff(table)       claim an entry, copy frame + XSAVE /
 *                                       FXSAVE (+ fs/gs base), ready, int3
 *         emit_restore_regs()           every register back from the frame
 *         relocate_window(fn, 5)        the displaced instructions, then
 *                                       jmp back to the end of the window
 *
 * A SIGTRAP handler plays the agent: it finds the entry this thread owns
 * in state PAD_READY, copies it (frame, x87/SSE/AVX image, bases), checks
 * the trap address and sets PAD_DONE.  The probed function is called by
 * an assembly trampoline (pad_call) that loads a known value into every
 * general register, rflags (DF and each arithmetic flag set or clear)
 * and xmm0-15 / ymm0-15, fills the callee's red zone with a pattern, and
 * records everything after the return.  The pad must be invisible: the
 * registers, flags, vector registers and red zone come back exactly as
 * the displaced instructions alone leave them, and the entry is free.
 *
 * Three probed functions (copied into an RWX page next to the pad):
 *   lea    48 8d 44 7f 01   lea 0x1(%rdi,%rdi,2),%rax; ret
 *   rip    48 8b 05 <d>     mov datum(%rip),%rax; ret     (disp re-encoded)
 *   frame  55 48 89 e5 ...  push %rbp; mov %rsp,%rbp; lea ...; pop; ret
 *                           (a 9-byte window of three instructions)
 *
 * Cases: XSAVE (if the OS enabled AVX) and FXSAVE, each without and
 * with rd{fs,gs}base (if the kernel enabled FSGSBASE; gs_base is set to
 * a non-zero value first); the same pads below 2 GiB, where the pc is
 * pushed as a sign-extended imm32 instead of two movl; a 2-entry table
 * with the thread's first entry taken (the claim loop moves on) and with
 * both taken (the thread spins with pause until one is freed); 4 threads
 * x 20000 calls on a 2-entry table.
 *
 * The in-process collector (emit_pad_collect, between the save and the
 * hand-off), which stores the bases with rd{fs,gs}base or, without
 * FSGSBASE, through arch_prctl: the same three functions, XSAVE and FXSAVE, in memory anywhere
 * and below 2 GiB, 2 x 12 calls into a 16-record ring (the second round
 * wraps) with no SIGTRAP at all, the ring then consumed as the agent
 * does (in order, seq == pos + 1, read, seq = pos + nrecords) and every
 * record checked like a hand-off entry; a 4-record ring with 10 calls
 * (4 records, then 6 hand-offs because the ring is full), consumed, then
 * 4 records again; 4 threads x 20000 calls into an 8-record ring that a
 * consumer thread drains meanwhile (each (thread, call) pair, passed in
 * %rdi, is seen exactly once: in a record or in a hand-off); and the
 * arguments emit_pad_collect must refuse.  Every fourth call has all vector
 * registers zero, and the image is read as the agent must read it: an
 * XSAVE component whose XSTATE_BV bit is clear is in its initial state,
 * whatever the bytes say.  Each case runs in a child process under an
 * alarm, so a crash or a hang (a lost entry) is a failure of that case.
 *
 * The collector cases are in x86_64-pad-exec-ring.c, the cases of a pad
 * that copies ranges itself instead of calling the collector (against
 * the agent's collector image) in x86_64-pad-exec-copy.c; what the files
 * share is declared in x86_64-pad-exec.h.
 *
 * Exit 0 pass, 1 failure, 77 no RWX memory, 99 harness.
 */
#include "config.h"

#include <asm/prctl.h>
#include <cpuid.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "x86_64-pad-exec.h"

static const char *const reg_names[NFRAME] = {
	"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip", "eflags",
};

extern const uint8_t padx_start[], padx_end[];
extern const uint8_t padx_lea[], padx_lea_end[];
extern const uint8_t padx_rip[], padx_rip_end[];
extern const uint8_t padx_frame[], padx_frame_end[];
extern const uint64_t padx_datum;

/*
 * pad_call(st): callee-saved registers, st and the target are kept above
 * the call's %rsp, so after loading all 15 GPRs nothing but %rsp is
 * needed to call and to find st again.
 *
 *   entry rsp E (8 mod 16) | push rbp rbx r12-r15, st, target; sub 8
 *   C = E - 72 (0 mod 16): 0 pad, 8 target, 16 st
 *   [C - 264, C - 8)       red-zone pattern (the callee's is [C-136, C-8))
 */
__asm__(
	"	.text\n"
	"	.globl pad_call\n"
	"	.hidden pad_call\n"
	"	.type pad_call,@function\n"
	"pad_call:\n"
	"	push %rbp\n"
	"	push %rbx\n"
	"	push %r12\n"
	"	push %r13\n"
	"	push %r14\n"
	"	push %r15\n"
	"	push %rdi\n"
	"	pushq 288(%rdi)\n"
	"	sub $8,%rsp\n"
	"	mov %rsp,296(%rdi)\n"
	"	lea -8(%rsp),%rax\n"
	"	mov $32,%ecx\n"
	"	movabs $0x5a5a0000a5a50000,%rdx\n"
	"1:	sub $8,%rax\n"
	"	mov %rdx,(%rax)\n"
	"	inc %rdx\n"
	"	dec %ecx\n"
	"	jnz 1b\n"
	"	cmpq $0,304(%rdi)\n"
	"	je 2f\n"
	"	.irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
	"	vmovdqu 320+32*\\i(%rdi),%ymm\\i\n"
	"	.endr\n"
	"	cmpq $2,304(%rdi)\n"
	"	jne 3f\n"
	"	vzeroupper\n"
	"	jmp 3f\n"
	"2:\n"
	"	.irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
	"	movdqu 320+32*\\i(%rdi),%xmm\\i\n"
	"	.endr\n"
	"3:	pushq 136(%rdi)\n"		/* writes C - 8: the return slot */
	"	popfq\n"
	"	mov 0(%rdi),%rax\n"
	"	mov 8(%rdi),%rbx\n"
	"	mov 16(%rdi),%rcx\n"
	"	mov 24(%rdi),%rdx\n"
	"	mov 32(%rdi),%rsi\n"
	"	mov 48(%rdi),%rbp\n"
	"	mov 64(%rdi),%r8\n"
	"	mov 72(%rdi),%r9\n"
	"	mov 80(%rdi),%r10\n"
	"	mov 88(%rdi),%r11\n"
	"	mov 96(%rdi),%r12\n"
	"	mov 104(%rdi),%r13\n"
	"	mov 112(%rdi),%r14\n"
	"	mov 120(%rdi),%r15\n"
	"	mov 40(%rdi),%rdi\n"
	"	call *8(%rsp)\n"
	"	pushfq\n"			/* C - 8 again */
	"	xchg %rdi,24(%rsp)\n"		/* rdi = st, its slot = rdi */
	"	mov %rax,144+0(%rdi)\n"
	"	mov %rbx,144+8(%rdi)\n"
	"	mov %rcx,144+16(%rdi)\n"
	"	mov %rdx,144+24(%rdi)\n"
	"	mov %rsi,144+32(%rdi)\n"
	"	mov %rbp,144+48(%rdi)\n"
	"	mov %r8,144+64(%rdi)\n"
	"	mov %r9,144+72(%rdi)\n"
	"	mov %r10,144+80(%rdi)\n"
	"	mov %r11,144+88(%rdi)\n"
	"	mov %r12,144+96(%rdi)\n"
	"	mov %r13,144+104(%rdi)\n"
	"	mov %r14,144+112(%rdi)\n"
	"	mov %r15,144+120(%rdi)\n"
	"	mov 24(%rsp),%rax\n"
	"	mov %rax,144+40(%rdi)\n"
	"	pop %rax\n"
	"	mov %rax,144+136(%rdi)\n"
	"	cld\n"
	"	mov %rsp,144+56(%rdi)\n"
	"	cmpq $0,304(%rdi)\n"
	"	je 4f\n"
	"	.irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
	"	vmovdqu %ymm\\i,832+32*\\i(%rdi)\n"
	"	.endr\n"
	"	vzeroupper\n"
	"	jmp 5f\n"
	"4:\n"
	"	.irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
	"	movdqu %xmm\\i,832+32*\\i(%rdi)\n"
	"	.endr\n"
	"5:	lea -136(%rsp),%rsi\n"
	"	lea 1344(%rdi),%rdx\n"
	"	mov $16,%ecx\n"
	"6:	mov (%rsi),%rax\n"
	"	mov %rax,(%rdx)\n"
	"	add $8,%rsi\n"
	"	add $8,%rdx\n"
	"	dec %ecx\n"
	"	jnz 6b\n"
	"	add $24,%rsp\n"
	"	pop %r15\n"
	"	pop %r14\n"
	"	pop %r13\n"
	"	pop %r12\n"
	"	pop %rbx\n"
	"	pop %rbp\n"
	"	ret\n"
	"	.size pad_call,.-pad_call\n"
	"\n"
	/* The probed functions: copied as a block, so the rip-relative
	 * load still finds the datum in the copy. */
	"	.section .rodata.padx,\"a\"\n"
	"	.balign 64\n"
	"	.globl padx_start, padx_end, padx_datum\n"
	"	.globl padx_lea, padx_lea_end, padx_rip, padx_rip_end\n"
	"	.globl padx_frame, padx_frame_end\n"
	"	.hidden padx_start, padx_end, padx_datum\n"
	"	.hidden padx_lea, padx_lea_end, padx_rip, padx_rip_end\n"
	"	.hidden padx_frame, padx_frame_end\n"
	"padx_start:\n"
	"padx_lea:\n"
	"	lea 0x1(%rdi,%rdi,2),%rax\n"
	"	ret\n"
	"padx_lea_end:\n"
	"	.balign 16, 0xcc\n"
	"padx_rip:\n"
	"	mov padx_datum(%rip),%rax\n"
	"	ret\n"
	"padx_rip_end:\n"
	"	.balign 16, 0xcc\n"
	"padx_frame:\n"
	"	push %rbp\n"
	"	mov %rsp,%rbp\n"
	"	lea 0x1(%rdi,%rdi,2),%rax\n"
	"	pop %rbp\n"
	"	ret\n"
	"padx_frame_end:\n"
	"	.balign 16, 0xcc\n"
	"padx_datum:\n"
	"	.quad 0x0123456789abcdef\n"
	"padx_end:\n"
	"	.text\n");

const struct fn_desc fns[] = {
	{ "lea", FN_LEA, padx_lea, padx_lea_end, 5 },
	{ "rip", FN_RIP, padx_rip, padx_rip_end, 7 },
	{ "frame", FN_FRAME, padx_frame, padx_frame_end, 9 },
};

const struct arch_ops *ops = &x86_64_arch_ops;
uint8_t *code_page, *pad_page, *ring_mem;
static uint8_t *table;

struct pad_cfg cfg;

__thread struct hit last_hit;
__thread unsigned long thread_hits;
unsigned long total_hits;
static unsigned long moved_on;	/* claims past the thread's first entry */

__thread int t_checks, t_failures;
int print_budget = 40;

uint64_t A(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static uint32_t tid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

static uint32_t *entry_word(unsigned int i, unsigned int off)
{
	return (uint32_t *)(table + ((size_t)i << ENTRY_SHIFT) + off);
}

bool check(bool ok, const char *what, const char *name)
{
	t_checks++;
	if (!ok) {
		t_failures++;
		if (__atomic_fetch_sub(&print_budget, 1, __ATOMIC_RELAXED) > 0)
			printf("FAIL %s: %s\n", name, what);
	}
	return ok;
}

/* check() with a message formatted only on failure (the stress cases). */
static bool checkf(bool ok, const char *name, const char *fmt, ...)
{
	char what[96];
	va_list ap;

	if (ok) {
		t_checks++;
		return true;
	}
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return check(false, what, name);
}

static void die_in_handler(const char *msg)
{
	ssize_t r = write(2, msg, strlen(msg));

	(void)r;
	_exit(1);
}

/*
 * The agent's side of the protocol.  No entry owned and ready means the
 * pad would trap forever: fail at once instead.
 */
static void on_trap(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	const greg_t *g = uc->uc_mcontext.gregs;
	uint32_t me = tid();
	struct hit *h = &last_hit;
	uint8_t *e = NULL;

	for (unsigned int i = 0; i < cfg.h.nentries; i++) {
		if (__atomic_load_n(entry_word(i, OFF_OWNER), __ATOMIC_ACQUIRE) == me &&
		    __atomic_load_n(entry_word(i, OFF_READY), __ATOMIC_ACQUIRE) == PAD_READY) {
			e = table + ((size_t)i << ENTRY_SHIFT);
			h->entry = i;
			break;
		}
	}
	if (!e)
		die_in_handler("FAIL handler: SIGTRAP with no entry owned and ready\n");
	memcpy(h->frame, e + OFF_FRAME, sizeof(h->frame));
	memcpy(h->image, e, IMAGE_SIZE);
	memcpy(h->bases, e + OFF_BASES, sizeof(h->bases));
	h->rip = (uint64_t)g[REG_RIP];
	h->rsp = (uint64_t)g[REG_RSP];
	h->rbx = (uint64_t)g[REG_RBX];
	h->r14 = (uint64_t)g[REG_R14];
	h->frame_matches_rbx = memcmp((const void *)(uintptr_t)h->rbx,
				      e + OFF_FRAME, sizeof(h->frame)) == 0;
	syscall(SYS_arch_prctl, ARCH_GET_FS, &h->fs);
	syscall(SYS_arch_prctl, ARCH_GET_GS, &h->gs);
	thread_hits++;
	__atomic_fetch_add(&total_hits, 1, __ATOMIC_RELAXED);
	if (h->entry != (me & (cfg.h.nentries - 1)))
		__atomic_fetch_add(&moved_on, 1, __ATOMIC_RELAXED);
	__atomic_store_n(entry_word(h->entry, OFF_READY), PAD_DONE, __ATOMIC_RELEASE);
}

struct pad_cpu cpu;

static void probe_cpu(void)
{
	unsigned int a, b, c, d;

	if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_OSXSAVE) && (c & bit_AVX)) {
		uint32_t lo, hi;

		__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
		cpu.avx = (lo & 6) == 6;
	}
	if (cpu.avx && __get_cpuid_count(0xd, 2, &a, &b, &c, &d))
		cpu.ymm_at_576 = b == IMG_YMM_HI && a == 256;
	cpu.fxsave_ymm = cpu.avx;	/* vextractf128 */
#ifndef AT_HWCAP2
#define AT_HWCAP2 26
#endif
	cpu.fsgsbase = getauxval(AT_HWCAP2) & 2;
	__asm__ volatile("stmxcsr %0" : "=m"(cpu.mxcsr));
	__asm__ volatile("fnstcw %0" : "=m"(cpu.fcw));
}

static uint64_t fn_addr(const struct fn_desc *f)
{
	return A(code_page) + (uint64_t)(f->src - padx_start);
}

/*
 * Fresh copy of the functions, the pad for `f` and `h` in pad_page, and
 * the jump into it over f's first bytes.  Returns 0 or a negative errno.
 */
int build_pad(const struct fn_desc *f, const struct arch_pad_handoff *h,
	      const struct arch_pad_ring *r, const char *name)
{
	uint64_t fn = fn_addr(f);
	uint8_t jmp[16];
	size_t trap, inlen, save_len, off = 0, collect_len = 0, done_rel32 = 0;
	int n;

	memset(code_page, 0xcc, PAGE);
	memcpy(code_page, padx_start, (size_t)(padx_end - padx_start));
	memset(pad_page, 0xcc, PAGE);

	n = ops->emit_save_regs(pad_page, PAGE, fn);
	if (!check(n > 0, "emit_save_regs", name))
		return n ? n : -EINVAL;
	off = save_len = (size_t)n;
	if (r) {
		/* The collector; its jump to the restore is patched below. */
		n = ops->emit_pad_collect ?
		    ops->emit_pad_collect(pad_page + off, PAGE - off, r, &done_rel32) :
		    -ENOSYS;
		if (!check(n > 0 && done_rel32 + 4 <= (size_t)n,
			   "emit_pad_collect (rel32 inside)", name))
			return n < 0 ? n : -EINVAL;
		done_rel32 += off;
		collect_len = (size_t)n;
		off += collect_len;
	}
	n = ops->emit_pad_handoff(pad_page + off, PAGE - off, h, &trap);
	if (!check(n > 0 && trap < (size_t)n && pad_page[off + trap] == 0xcc,
		   "emit_pad_handoff (int3 at trap_off)", name))
		return n < 0 ? n : -EINVAL;
	off += (size_t)n;
	/* the restore comes right after the hand-off */
	if (r && !check(ops->patch_branch(pad_page, done_rel32, off) == 0,
			"patch_branch", name))
		return -EINVAL;
	n = ops->emit_restore_regs(pad_page + off, PAGE - off);
	if (!check(n > 0, "emit_restore_regs", name))
		return n ? n : -EINVAL;
	off += (size_t)n;
	n = ops->relocate_window(f->src, (size_t)(f->src_end - f->src), fn, fn,
				 ops->pad_jump_len, A(pad_page) + off,
				 pad_page + off, PAGE - off, &inlen);
	if (!check(n > 0 && inlen == f->window, "relocate_window", name))
		return n < 0 ? n : -EINVAL;
	n = ops->emit_jump(jmp, sizeof(jmp), fn, A(pad_page));
	if (!check(n == (int)ops->pad_jump_len && n == 5, "emit_jump", name))
		return n < 0 ? n : -EINVAL;
	memcpy((void *)(uintptr_t)fn, jmp, (size_t)n);
	__builtin___clear_cache((char *)code_page, (char *)code_page + PAGE);
	__builtin___clear_cache((char *)pad_page, (char *)pad_page + PAGE);

	cfg.fn = fn;
	cfg.trap_rip = A(pad_page) + save_len + collect_len + trap + 1;
	cfg.h = *h;
	if (r)
		cfg.r = *r;
	return 0;
}

/* An empty table; images poisoned (XSTATE_BV 0) so stale data cannot pass. */
void reset_table(unsigned int nentries)
{
	for (unsigned int i = 0; i < nentries; i++) {
		uint8_t *e = table + ((size_t)i << ENTRY_SHIFT);

		memset(e, 0, (size_t)1 << ENTRY_SHIFT);
		memset(e, 0xee, IMAGE_SIZE);
		*(uint64_t *)(e + IMG_XSTATE_BV) = 0;
		((uint64_t *)(e + OFF_BASES))[0] = BASES_UNTOUCHED;
		((uint64_t *)(e + OFF_BASES))[1] = BASES_UNTOUCHED;
	}
}

struct arch_pad_handoff handoff(unsigned int nentries, bool xsave,
				bool fsgsbase)
{
	struct arch_pad_handoff h = {
		.table = A(table), .entry_shift = ENTRY_SHIFT,
		.nentries = nentries, .off_owner = OFF_OWNER,
		.off_ready = OFF_READY, .off_bases = OFF_BASES,
		.off_frame = OFF_FRAME, .image_form = image_form_of(xsave, false),
		.tp_read = fsgsbase,
	};

	return h;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ull;
	x ^= x >> 29;
	return x;
}

/* Each arithmetic flag and DF set or clear by the seed, all set and all
 * clear among them (IF and bit 1 always): the pad puts back each one. */
#define FLAGS_CLEAR 0x202ull

static uint64_t flags_of(uint64_t seed)
{
	static const uint64_t bit[] = { 0x1, 0x4, 0x10, 0x40, 0x80, 0x400, 0x800 };
	uint64_t m = seed % 8 == 1 ? ~0ull : seed % 8 == 2 ? 0 : mix(seed ^ 0x9e37);
	uint64_t f = FLAGS_CLEAR;

	for (size_t i = 0; i < sizeof(bit) / sizeof(bit[0]); i++)
		if (m >> i & 1)
			f |= bit[i];	/* CF PF AF ZF SF DF OF */
	return f;
}

void prepare(struct call_state *st, const struct fn_desc *f,
	     uint64_t seed)
{
	memset(st, 0, sizeof(*st));
	for (int r = 0; r < 16; r++)
		st->in[r] = mix(seed * 16 + r + 1);
	st->in[R_RSP] = st->in[R_RIP] = 0;
	st->in[R_FLAGS] = flags_of(seed);
	st->target = cfg.fn;
	st->avx = cpu.avx;
	if (seed % 4 == 0)
		return;		/* all vectors zero: maybe in init state */
	for (int i = 0; i < 16; i++)
		for (int b = 0; b < 32; b++)
			st->vin[i][b] = (uint8_t)(mix(seed) >> (b % 8 * 8)) ^
					(uint8_t)(i * 32 + b);
	if (cpu.avx && seed % 4 == 2) {
		/* The upper halves cleared by vzeroupper before the call:
		 * in their initial state (the image must read them as zero). */
		st->avx = 2;
		for (int i = 0; i < 16; i++)
			memset(st->vin[i] + 16, 0, 16);
	}
}

static uint64_t expected_rax(const struct fn_desc *f, const struct call_state *st)
{
	return f->kind == FN_RIP ? padx_datum : st->in[R_RDI] * 3 + 1;
}

/* What the caller sees: only rax changed, nothing else, red zone kept. */
void check_return(const struct fn_desc *f, const struct call_state *st,
		  const char *name)
{
	check(st->out[R_RAX] == expected_rax(f, st), "result in rax", name);
	for (int r = 1; r < 16; r++) {
		if (r == R_RSP)
			continue;
		checkf(st->out[r] == st->in[r], name, "%s after the return",
		       reg_names[r]);
	}
	check(st->out[R_RSP] == st->call_rsp, "rsp after the return", name);
	check(st->out[R_FLAGS] == st->in[R_FLAGS], "rflags after the return", name);
	for (int i = 0; i < 16; i++) {
		checkf(memcmp(st->vout[i], st->vin[i], cpu.avx ? 32 : 16) == 0,
		       name, "%smm%d after the return", cpu.avx ? "y" : "x", i);
	}
	/* frame's own push %rbp is the one write allowed there */
	for (int j = 0; j < 16; j++) {
		uint64_t want = RZ + 15 - j;

		if (j == 15 && f->kind == FN_FRAME)
			want = st->in[R_RBP];
		checkf(st->redzone[j] == want, name, "red zone at entry rsp - %d",
		       128 - 8 * j);
	}
}

/*
 * A register out of the image, read as the agent must: with XSAVE, a
 * component whose XSTATE_BV bit is clear was in its initial state and
 * not written (the bytes are stale), so it reads as zeros (x87: FCW
 * 0x37f).  `comp` is the component: 0 x87, 1 SSE, 2 AVX.
 */
static void image_read(const struct hit *h, int comp, size_t off, void *buf,
		       size_t len)
{
	uint64_t bv = *(const uint64_t *)(h->image + IMG_XSTATE_BV);

	if (x86_64_image_is_xsave(cfg.h.image_form) && !(bv & (1ull << comp))) {
		memset(buf, 0, len);
		if (comp == 0 && off == IMG_FCW)
			*(uint16_t *)buf = 0x37f;
	} else {
		memcpy(buf, h->image + off, len);
	}
}

unsigned long fxsave_ymm_avx_initial;

/* What the agent saw in the entry and in the trapped context. */
void check_hit(const struct fn_desc *f, const struct call_state *st,
	       const struct hit *h, const char *name)
{
	uint64_t entry_rsp = st->call_rsp - 8;
	uint64_t frame = entry_rsp - 128 - 8 * NFRAME;
	uint64_t bv = *(const uint64_t *)(h->image + IMG_XSTATE_BV);

	for (int r = 0; r < 16; r++) {
		if (r == R_RSP)
			continue;
		checkf(h->frame[r] == st->in[r], name, "frame %s", reg_names[r]);
	}
	check(h->frame[R_RSP] == entry_rsp, "frame rsp = the return slot", name);
	check(h->frame[R_RIP] == cfg.fn, "frame rip = the function", name);
	check(h->frame[R_FLAGS] == st->in[R_FLAGS], "frame eflags", name);
	if (!h->from_ring) {
		check(h->rip == cfg.trap_rip, "trap rip right after the pad's int3", name);
		check(h->rbx == frame, "rbx = the frame, below the red zone", name);
		check(h->rsp == (frame & ~15ull), "rsp = the frame rounded down to 16",
		      name);
		check(h->frame_matches_rbx, "entry frame = the frame on the stack", name);
		check(h->r14 == A(table) + ((uint64_t)h->entry << ENTRY_SHIFT),
		      "r14 = the entry", name);
	}

	for (int i = 0; i < 16; i++) {
		uint8_t v[16];

		image_read(h, 1, IMG_XMM + 16 * i, v, 16);
		checkf(memcmp(v, st->vin[i], 16) == 0, name, "image xmm%d", i);
	}
	{
		uint16_t fcw;

		image_read(h, 0, IMG_FCW, &fcw, 2);
		check(fcw == cpu.fcw, "image x87 control word", name);
	}
	/* MXCSR is written whenever SSE or AVX is requested */
	check(*(const uint32_t *)(h->image + IMG_MXCSR) == cpu.mxcsr,
	      "image mxcsr", name);
	if (x86_64_image_is_xsave(cfg.h.image_form)) {
		check((bv & ~7ull) == 0, "XSTATE_BV: no bit beyond AVX", name);
		/* FXSAVE + vextractf128: every component as stored, the
		 * upper halves too when initial (zeros, not the poison). */
		if (cfg.h.image_form == X86_64_IMAGE_XSAVE_BY_FXSAVE) {
			check(bv == 7, "XSTATE_BV = 7 (FXSAVE + vextractf128)", name);
			if (st->avx == 2 && ++fxsave_ymm_avx_initial)
				check(h->image[IMG_YMM_HI] == 0 &&
				      h->image[IMG_YMM_HI + 255] == 0,
				      "upper halves after vzeroupper stored as zeros", name);
		}
		if (cpu.avx && cpu.ymm_at_576) {
			for (int i = 0; i < 16; i++) {
				uint8_t v[16];

				image_read(h, 2, IMG_YMM_HI + 16 * i, v, 16);
				checkf(memcmp(v, st->vin[i] + 16, 16) == 0, name,
				       "image ymm%d upper half", i);
			}
		}
	} else {
		check(*(const uint16_t *)(h->image + IMG_FCW) != 0xeeee,
		      "FXSAVE wrote the x87 control word", name);
		check(bv == 0 && h->image[IMG_XSTATE_BV + 8] == 0xee &&
		      h->image[IMG_YMM_HI] == 0xee,
		      "FXSAVE stays within 512 bytes", name);
	}

	if (cfg.h.tp_read || h->from_ring) {
		check(h->bases[0] == h->fs && h->fs, "fs_base = ARCH_GET_FS", name);
		check(h->bases[1] == h->gs, "gs_base = ARCH_GET_GS", name);
	} else {
		check(h->bases[0] == BASES_UNTOUCHED && h->bases[1] == BASES_UNTOUCHED,
		      "bases untouched without fsgsbase", name);
	}
}

/* Every entry free, except those deliberately held by FAKE_OWNER. */
void check_table(unsigned int nentries, unsigned int fake_mask,
		 const char *name)
{
	for (unsigned int i = 0; i < nentries; i++) {
		uint32_t owner = *entry_word(i, OFF_OWNER);
		uint32_t ready = *entry_word(i, OFF_READY);

		if (fake_mask & (1u << i))
			check(owner == FAKE_OWNER && ready == PAD_FREE,
			      "a held entry left alone", name);
		else
			check(owner == 0 && ready == PAD_FREE,
			      "entry free after the call", name);
	}
}

/* One call through the pad with the full set of checks. */
static void call_and_check(const struct fn_desc *f, uint64_t seed,
			   unsigned int fake_mask, const char *name)
{
	struct call_state st;
	unsigned long before = thread_hits;

	prepare(&st, f, seed);
	memset(&last_hit, 0, sizeof(last_hit));
	pad_call(&st);
	check_return(f, &st, name);
	if (check(thread_hits == before + 1, "one SIGTRAP per call", name))
		check_hit(f, &st, &last_hit, name);
	check_table(cfg.h.nentries, fake_mask, name);
}

/* ---- Cases; each runs in its own child (see run_case). ---- */

static int case_native(const void *arg)
{
	const struct fn_desc *f = arg;
	struct call_state st;
	char name[64];

	/* The trampoline and the functions without a pad: the baseline. */
	snprintf(name, sizeof(name), "%s unpatched", f->name);
	memcpy(code_page, padx_start, (size_t)(padx_end - padx_start));
	cfg.fn = fn_addr(f);
	for (uint64_t seed = 1; seed <= 4; seed++) {
		prepare(&st, f, seed);
		pad_call(&st);
		check_return(f, &st, name);
	}
	check(thread_hits == 0, "no SIGTRAP", name);
	return 0;
}

static int case_mode(const void *arg)
{
	const struct mode *m = arg;
	struct arch_pad_handoff h = handoff(16, m->xsave, m->fsgsbase);
	uint64_t old_gs = 0;
	char name[96];

	snprintf(name, sizeof(name), "%s %s%s @%p", m->f->name,
		 m->xsave ? "xsave" : "fxsave", m->fsgsbase ? " fsgsbase" : "",
		 (void *)m->pages);
	code_page = m->pages;
	pad_page = m->pages + PAGE;
	reset_table(16);
	if (build_pad(m->f, &h, NULL, name))
		return 0;
	/* A gs base worth comparing (glibc does not use %gs). */
	if (m->fsgsbase) {
		syscall(SYS_arch_prctl, ARCH_GET_GS, &old_gs);
		syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)A(&print_budget));
	}
	for (uint64_t seed = 1; seed <= 16; seed++) {
		reset_table(16);
		call_and_check(m->f, seed, 0, name);
	}
	if (m->fsgsbase)
		syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)old_gs);
	return 0;
}

bool default_xsave(void)
{
	return cpu.avx;
}

/*
 * A 2-entry table with this thread's first choice (tid & 1) held by
 * someone else: the claim must move on to the other entry and leave the
 * held one alone.
 */
static int case_taken(const void *arg)
{
	const struct fn_desc *f = &fns[FN_LEA];
	struct arch_pad_handoff h = handoff(2, default_xsave(), cpu.fsgsbase);
	unsigned int first = tid() & 1;
	const char *name = "2 entries, first taken";

	reset_table(2);
	if (build_pad(f, &h, NULL, name))
		return 0;
	for (uint64_t seed = 1; seed <= 4; seed++) {
		reset_table(2);
		*entry_word(first, OFF_OWNER) = FAKE_OWNER;
		call_and_check(f, seed, 1u << first, name);
		check(last_hit.entry == (first ^ 1), "claimed the other entry", name);
	}
	return 0;
}

struct spin_arg {
	const struct fn_desc *f;
	struct call_state st;
	unsigned long hits;
	struct hit hit;
};

static void *spin_thread(void *p)
{
	struct spin_arg *a = p;

	prepare(&a->st, a->f, 7);
	pad_call(&a->st);
	a->hits = thread_hits;
	a->hit = last_hit;
	return NULL;
}

/*
 * Both entries held: a thread entering the pad spins (pause) until one
 * is freed, then finishes through it.
 */
static int case_full(const void *arg)
{
	const struct fn_desc *f = &fns[FN_LEA];
	struct arch_pad_handoff h = handoff(2, default_xsave(), cpu.fsgsbase);
	const char *name = "2 entries, both taken";
	struct spin_arg a = { .f = f };
	pthread_t t;
	unsigned long seen;

	reset_table(2);
	if (build_pad(f, &h, NULL, name))
		return 0;
	*entry_word(0, OFF_OWNER) = FAKE_OWNER;
	*entry_word(1, OFF_OWNER) = FAKE_OWNER;
	if (pthread_create(&t, NULL, spin_thread, &a)) {
		printf("ERROR: pthread_create\n");
		return 99;
	}
	usleep(100 * 1000);
	seen = __atomic_load_n(&total_hits, __ATOMIC_RELAXED);
	check(seen == 0, "no trap while every entry is taken", name);
	__atomic_store_n(entry_word(1, OFF_OWNER), 0, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	check_return(f, &a.st, name);
	if (check(a.hits == 1, "one SIGTRAP once an entry is freed", name)) {
		check(a.hit.entry == 1, "took the freed entry", name);
		check_hit(f, &a.st, &a.hit, name);
	}
	check_table(2, 1u << 0, name);
	return 0;
}

int stress_checks, stress_failures;

static void *stress_thread(void *p)
{
	const struct fn_desc *f = &fns[FN_LEA];
	uint64_t base = (uint64_t)(uintptr_t)p * 1000003u;
	char name[48];
	struct call_state st;

	snprintf(name, sizeof(name), "threads [%lu]", (unsigned long)(uintptr_t)p);
	for (int i = 0; i < THREAD_CALLS; i++) {
		unsigned long before = thread_hits;

		prepare(&st, f, base + (uint64_t)i);
		pad_call(&st);
		check_return(f, &st, name);
		if (check(thread_hits == before + 1, "one SIGTRAP per call", name))
			check_hit(f, &st, &last_hit, name);
	}
	check(thread_hits == THREAD_CALLS, "SIGTRAPs of this thread", name);
	__atomic_fetch_add(&stress_checks, t_checks, __ATOMIC_RELAXED);
	__atomic_fetch_add(&stress_failures, t_failures, __ATOMIC_RELAXED);
	return NULL;
}

/* 4 threads, 20000 calls each, sharing a 2-entry table. */
static int case_threads(const void *arg)
{
	struct arch_pad_handoff h = handoff(2, default_xsave(), cpu.fsgsbase);
	const char *name = "4 threads x 20000, 2 entries";
	pthread_t t[THREADS];

	reset_table(2);
	if (build_pad(&fns[FN_LEA], &h, NULL, name))
		return 0;
	for (uintptr_t i = 0; i < THREADS; i++) {
		if (pthread_create(&t[i], NULL, stress_thread, (void *)(i + 1))) {
			printf("ERROR: pthread_create\n");
			return 99;
		}
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	t_checks += stress_checks;
	t_failures += stress_failures;
	check(total_hits == THREADS * THREAD_CALLS, "SIGTRAPs in all", name);
	check_table(2, 0, name);
	printf("  %lu SIGTRAPs, %lu claims past the first entry tried\n",
	       total_hits, moved_on);
	return 0;
}

/*
 * Runs `fn` in a child under an alarm; the child reports its counts
 * through a pipe.  Returns false when the case failed.
 */
static int all_checks, all_failures;

bool run_case(const char *title, int (*fn)(const void *), const void *arg)
{
	int p[2], status, counts[2] = { 0, 0 };
	pid_t pid;

	if (pipe(p) || (pid = fork()) < 0) {
		printf("ERROR: fork\n");
		exit(99);
	}
	if (pid == 0) {
		int rc;

		close(p[0]);
		alarm(60);
		rc = fn(arg);
		counts[0] = t_checks;
		counts[1] = t_failures;
		if (write(p[1], counts, sizeof(counts)) != sizeof(counts))
			_exit(99);
		_exit(rc ? rc : t_failures ? 1 : 0);
	}
	close(p[1]);
	if (read(p[0], counts, sizeof(counts)) != sizeof(counts))
		counts[0] = counts[1] = 0;
	close(p[0]);
	waitpid(pid, &status, 0);
	all_checks += counts[0];
	all_failures += counts[1];
	if (WIFSIGNALED(status)) {
		printf("FAIL %s: killed by signal %d%s\n", title, WTERMSIG(status),
		       WTERMSIG(status) == SIGALRM ? " (hung)" : "");
		all_failures++;
		return false;
	}
	if (WEXITSTATUS(status) == 99)
		exit(99);
	printf("%s %s (%d checks)\n", WEXITSTATUS(status) ? "FAIL" : "ok",
	       title, counts[0]);
	if (WEXITSTATUS(status) && !counts[1])
		all_failures++;
	return WEXITSTATUS(status) == 0;
}

static uint8_t *map_rwx(void *hint, size_t len)
{
	void *p = mmap(hint, len, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS | (hint ? MAP_FIXED_NOREPLACE : 0),
		       -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	uint8_t *pages, *low = NULL;
	char title[128];

	setvbuf(stdout, NULL, _IONBF, 0);
	probe_cpu();
	printf("avx %s, ymm image at 576 %s, fsgsbase %s\n",
	       cpu.avx ? "yes" : "no", cpu.ymm_at_576 ? "yes" : "no",
	       cpu.fsgsbase ? "yes" : "no");

	/*
	 * Functions, pad (next page: rel32 reach) and table, one mapping,
	 * wherever mmap puts it: the pad pushes the pc with movl pairs.
	 * The same below 2 GiB, if it can be had, where the pc is pushed
	 * as a sign-extended imm32.
	 */
	pages = map_rwx(NULL, 3 * PAGE + (16 << ENTRY_SHIFT));
	if (!pages) {
		printf("SKIP: no RWX memory\n");
		return 77;
	}
	ring_mem = mmap(NULL, OFF_RECORDS + (RING_MAX_RECORDS << ENTRY_SHIFT),
			PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ring_mem == MAP_FAILED) {
		printf("ERROR: mmap\n");
		return 99;
	}
	code_page = pages;
	pad_page = pages + PAGE;
	table = pages + 3 * PAGE;
	if (mprotect(table, 16 << ENTRY_SHIFT, PROT_READ | PROT_WRITE)) {
		printf("ERROR: mprotect\n");
		return 99;
	}
	if (argc > 1 && !strcmp(argv[1], "--bench")) {
		pad_bench();
		return 0;
	}
	for (uint64_t at = 0x10000000; !low && at < 0x80000000; at += 0x10000000)
		low = map_rwx((void *)(uintptr_t)at, 2 * PAGE);

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTRAP, &sa, NULL)) {
		printf("ERROR: sigaction\n");
		return 99;
	}

	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		snprintf(title, sizeof(title), "%s: unpatched baseline", fns[i].name);
		run_case(title, case_native, &fns[i]);
	}
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		for (int xs = cpu.avx ? 1 : 0; xs >= 0; xs--) {
			for (int fg = 0; fg <= (int)cpu.fsgsbase; fg++) {
				struct mode m = { &fns[i], xs, fg, pages, false };

				snprintf(title, sizeof(title), "%s: pad, %s%s, 16 calls",
					 fns[i].name, xs ? "xsave" : "fxsave",
					 fg ? ", fsgsbase" : "");
				run_case(title, case_mode, &m);
			}
		}
	}
	for (int xs = cpu.avx ? 1 : 0; low && xs >= 0; xs--) {
		for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
			struct mode m = { &fns[i], xs, cpu.fsgsbase, low, false };

			snprintf(title, sizeof(title),
				 "%s: pad below 2 GiB (pc pushed as imm32), %s, 16 calls",
				 fns[i].name, xs ? "xsave" : "fxsave");
			run_case(title, case_mode, &m);
		}
	}
	if (!low)
		printf("skip the pad below 2 GiB: no mapping there\n");
	if (!cpu.avx)
		printf("skip xsave cases: AVX not enabled by the OS\n");
	if (!cpu.fsgsbase)
		printf("skip fsgsbase cases: HWCAP2_FSGSBASE not set\n");
	run_case("2 entries: first choice taken, claim moves on", case_taken, NULL);
	run_case("2 entries: both taken, spin with pause until one is freed",
		 case_full, NULL);
	run_case("4 threads x 20000 calls, 2 entries", case_threads, NULL);

	run_collector_cases(pages, low);
	run_copy_cases();

	printf("%d checks, %d failures\n", all_checks, all_failures);
	return all_failures ? 1 : 0;
}
