/*
 * x86_64-ptrace.c - x86-64 registers and debug registers through ptrace:
 * the x86-64 `struct ptrace_arch_ops` (see ptrace-arch.h).
 *
 * The gdb register block (arch/x86_64/x86_64-regs.c) is assembled from
 * three kernel views: PTRACE_GETREGS (user_regs_struct: general registers,
 * segments, fs_base/gs_base, orig_rax), PTRACE_GETFPREGS (the 512-byte
 * FXSAVE image: x87, SSE, MXCSR) and, with AVX, PTRACE_GETREGSET
 * NT_X86_XSTATE (the XSAVE image; ymm upper halves at byte 576).
 *
 * FXSAVE keeps an abridged x87 tag word (one bit per register, set = valid);
 * gdb expects the full two-bit tags, derived from each register's contents.
 *
 * Debug registers: DR0-DR3 hold addresses, DR7 enables them, DR6 says which
 * fired.  They are per thread and not inherited by new threads, so every
 * thread is brought up to date (hw_sync_thread) before it resumes.
 */
#define LOG_DOMAIN "regs"
#include "config.h"

#include <cpuid.h>
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <signal.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/keeper.h"
#include "agent/log.h"
#include "agent/ptrace-arch.h"
#include "arch/x86_64/x86_64.h"

/* Large enough for every XSAVE component, AMX tiles included: the kernel
 * only accepts a write of the whole area. */
#define XSAVE_MAX 32768
#define XSAVE_YMMH_OFFSET 576
#define XSAVE_XSTATE_BV_OFFSET 512

enum {
	R_RAX, R_RBX, R_RCX, R_RDX, R_RSI, R_RDI, R_RBP, R_RSP,
	R_R8, R_R9, R_R10, R_R11, R_R12, R_R13, R_R14, R_R15,
	R_RIP, R_EFLAGS, R_CS, R_SS, R_DS, R_ES, R_FS, R_GS,
	R_ST0, R_FCTRL = 32, R_FSTAT, R_FTAG, R_FISEG, R_FIOFF, R_FOSEG,
	R_FOOFF, R_FOP, R_XMM0 = 40, R_MXCSR = 56, R_ORIG_RAX, R_FS_BASE,
	R_GS_BASE, R_YMM0H,
};

/* user_regs_struct field for each general register, in gdb order. */
static const size_t gpr_offset[] = {
	offsetof(struct user_regs_struct, rax),
	offsetof(struct user_regs_struct, rbx),
	offsetof(struct user_regs_struct, rcx),
	offsetof(struct user_regs_struct, rdx),
	offsetof(struct user_regs_struct, rsi),
	offsetof(struct user_regs_struct, rdi),
	offsetof(struct user_regs_struct, rbp),
	offsetof(struct user_regs_struct, rsp),
	offsetof(struct user_regs_struct, r8),
	offsetof(struct user_regs_struct, r9),
	offsetof(struct user_regs_struct, r10),
	offsetof(struct user_regs_struct, r11),
	offsetof(struct user_regs_struct, r12),
	offsetof(struct user_regs_struct, r13),
	offsetof(struct user_regs_struct, r14),
	offsetof(struct user_regs_struct, r15),
	offsetof(struct user_regs_struct, rip),
	offsetof(struct user_regs_struct, eflags),
	offsetof(struct user_regs_struct, cs),
	offsetof(struct user_regs_struct, ss),
	offsetof(struct user_regs_struct, ds),
	offsetof(struct user_regs_struct, es),
	offsetof(struct user_regs_struct, fs),
	offsetof(struct user_regs_struct, gs),
};

static inline uint8_t *reg_ptr(uint8_t *blk, int regnum)
{
	return blk + agent.arch->regs[regnum].offset;
}

static unsigned int x86_64_detect_features(pid_t tid)
{
	unsigned int eax, ebx, ecx, edx;
	static uint8_t xsave[XSAVE_MAX];
	struct iovec iov = { xsave, sizeof(xsave) };

	if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
		return 0;
	/* AVX (bit 28) usable only when the OS saves it (OSXSAVE, bit 27). */
	if (!(ecx & (1u << 28)) || !(ecx & (1u << 27)))
		return 0;
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov) < 0 ||
	    iov.iov_len < XSAVE_YMMH_OFFSET + 256)
		return 0;
	return ARCH_FEAT_AVX;
}

/* Full two-bit x87 tag of one physical register from its 80-bit value. */
static unsigned int x87_tag(const uint8_t *raw)
{
	uint16_t exp = (raw[9] & 0x7f) << 8 | raw[8];
	uint64_t mant;

	memcpy(&mant, raw, 8);
	if (exp == 0x7fff)
		return 2;		/* special: inf, NaN */
	if (exp == 0)
		return mant == 0 ? 1 : 2;	/* zero, or denormal */
	return (mant >> 63) ? 0 : 2;	/* valid if the integer bit is set */
}

/*
 * The thread's register cache (t->regcache, X86_64_REGCACHE) holds, besides the gdb
 * block at offset 0:
 *   CACHE_ORIG    the block's x87/SSE/AVX part as last read from the kernel
 *                 (to find what gdb or the agent changed there)
 *   CACHE_FXSAVE  the XSAVE image as read: the kernel writes it here, and
 *                 fields gdb does not see (MXCSR_MASK...) go back unchanged
 *   CACHE_KGPR    the user_regs_struct as the kernel has it: GETREGS reads
 *                 into it, and a flush writes only the words that differ
 */
#define CACHE_ORIG 1024
#define CACHE_FXSAVE 2048
#define FXSAVE_SIZE 512
/* Legacy area, XSAVE header, AVX upper halves: all a short read needs. */
#define XSAVE_AVX_END (XSAVE_YMMH_OFFSET + 256)
#define CACHE_KGPR 3072
#define X86_64_REGCACHE 4096
_Static_assert(CACHE_KGPR + sizeof(struct user_regs_struct) <= X86_64_REGCACHE,
	       "the kernel's view must fit in the cache");

static struct user_regs_struct *kernel_gpr(struct thread *t)
{
	return (struct user_regs_struct *)(t->regcache + CACHE_KGPR);
}

/* Byte ranges of the block by how the kernel gives them. */
static size_t gpr_end(void)		/* rax .. gs */
{
	return agent.arch->regs[R_ST0].offset;
}

static size_t fp_end(void)		/* st0 .. mxcsr */
{
	return agent.arch->regs[R_ORIG_RAX].offset;
}

/* Registers rax..gs are 8 bytes in the block up to rip, 4 from eflags on
 * (x86_64-regs.c); the sizes are spelled out so the copies are moves, not
 * 27 memcpy calls per hit. */
static void gpr_from_kernel(uint8_t *blk, const struct user_regs_struct *ur)
{
	for (int i = 0; i <= R_RIP; i++)
		memcpy(reg_ptr(blk, i), (const uint8_t *)ur + gpr_offset[i], 8);
	for (int i = R_EFLAGS; i <= R_GS; i++)
		memcpy(reg_ptr(blk, i), (const uint8_t *)ur + gpr_offset[i], 4);
	memcpy(reg_ptr(blk, R_ORIG_RAX), &ur->orig_rax, 8);
	memcpy(reg_ptr(blk, R_FS_BASE), &ur->fs_base, 8);
	memcpy(reg_ptr(blk, R_GS_BASE), &ur->gs_base, 8);
}

/* Into `ur`, which holds the kernel's values: eflags and the segment
 * registers keep their upper halves, which gdb does not see. */
static void gpr_to_kernel(const uint8_t *blk, struct user_regs_struct *ur)
{
	for (int i = 0; i <= R_RIP; i++)
		memcpy((uint8_t *)ur + gpr_offset[i], reg_ptr((uint8_t *)blk, i), 8);
	for (int i = R_EFLAGS; i <= R_GS; i++)
		memcpy((uint8_t *)ur + gpr_offset[i], reg_ptr((uint8_t *)blk, i), 4);
	memcpy(&ur->orig_rax, reg_ptr((uint8_t *)blk, R_ORIG_RAX), 8);
	memcpy(&ur->fs_base, reg_ptr((uint8_t *)blk, R_FS_BASE), 8);
	memcpy(&ur->gs_base, reg_ptr((uint8_t *)blk, R_GS_BASE), 8);
}

static void fp_from_fxsave(uint8_t *blk, const uint8_t *fx)
{
	uint16_t cwd, swd, fop;
	uint8_t ftw = fx[4];
	uint32_t v, mxcsr;

	memcpy(&cwd, fx, 2);
	memcpy(&swd, fx + 2, 2);
	memcpy(&fop, fx + 6, 2);
	memcpy(&mxcsr, fx + 24, 4);
	unsigned int top = (swd >> 11) & 7;
	for (int i = 0; i < 8; i++)
		memcpy(reg_ptr(blk, R_ST0 + i), fx + 32 + 16 * i, 10);
	v = cwd;
	memcpy(reg_ptr(blk, R_FCTRL), &v, 4);
	v = swd;
	memcpy(reg_ptr(blk, R_FSTAT), &v, 4);
	/* Abridged tag bit i is physical register i; st(k) is physical
	 * register (top + k) mod 8. */
	v = 0;
	for (unsigned int phys = 0; phys < 8; phys++) {
		unsigned int tag = 3;
		if (ftw & (1u << phys)) {
			unsigned int st = (phys - top) & 7;
			tag = x87_tag(fx + 32 + 16 * st);
		}
		v |= tag << (2 * phys);
	}
	memcpy(reg_ptr(blk, R_FTAG), &v, 4);
	v = 0;
	memcpy(&v, fx + 12, 2);
	memcpy(reg_ptr(blk, R_FISEG), &v, 4);
	memcpy(reg_ptr(blk, R_FIOFF), fx + 8, 4);
	v = 0;
	memcpy(&v, fx + 20, 2);
	memcpy(reg_ptr(blk, R_FOSEG), &v, 4);
	memcpy(reg_ptr(blk, R_FOOFF), fx + 16, 4);
	v = fop & 0x7ff;
	memcpy(reg_ptr(blk, R_FOP), &v, 4);
	for (int i = 0; i < 16; i++)
		memcpy(reg_ptr(blk, R_XMM0 + i), fx + 160 + 16 * i, 16);
	memcpy(reg_ptr(blk, R_MXCSR), &mxcsr, 4);
}

static void fp_to_fxsave(const uint8_t *blk, uint8_t *fx)
{
	uint32_t v;
	uint16_t w;
	uint8_t ftw = 0;

	for (int i = 0; i < 8; i++)
		memcpy(fx + 32 + 16 * i, reg_ptr((uint8_t *)blk, R_ST0 + i), 10);
	memcpy(&v, reg_ptr((uint8_t *)blk, R_FCTRL), 4);
	w = v;
	memcpy(fx, &w, 2);
	memcpy(&v, reg_ptr((uint8_t *)blk, R_FSTAT), 4);
	w = v;
	memcpy(fx + 2, &w, 2);
	memcpy(&v, reg_ptr((uint8_t *)blk, R_FTAG), 4);
	for (int phys = 0; phys < 8; phys++)
		if (((v >> (2 * phys)) & 3) != 3)
			ftw |= 1u << phys;
	fx[4] = ftw;
	memcpy(&v, reg_ptr((uint8_t *)blk, R_FOP), 4);
	w = v & 0x7ff;
	memcpy(fx + 6, &w, 2);
	memcpy(fx + 12, reg_ptr((uint8_t *)blk, R_FISEG), 2);
	memcpy(fx + 8, reg_ptr((uint8_t *)blk, R_FIOFF), 4);
	memcpy(fx + 20, reg_ptr((uint8_t *)blk, R_FOSEG), 2);
	memcpy(fx + 16, reg_ptr((uint8_t *)blk, R_FOOFF), 4);
	for (int i = 0; i < 16; i++)
		memcpy(fx + 160 + 16 * i, reg_ptr((uint8_t *)blk, R_XMM0 + i), 16);
	memcpy(fx + 24, reg_ptr((uint8_t *)blk, R_MXCSR), 4);
}

/* The general registers only: one PTRACE_GETREGS.  Enough for a probe
 * hit, a stop reply and agent expressions on them. */
static int x86_64_fetch_gpr(struct thread *t)
{
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, kernel_gpr(t)) < 0)
		return -errno;
	gpr_from_kernel(t->regcache, kernel_gpr(t));
	return 0;
}

/* The other registers: the x87/SSE state and, with AVX, the upper halves
 * come from one short XSAVE read (the legacy area is the FXSAVE image). */
static int x86_64_fetch_rest(struct thread *t)
{
	uint8_t *blk = t->regcache;
	uint8_t *xsave = blk + CACHE_FXSAVE;
	size_t size = regs_block_size(t->proc);

	/* fp_from_fxsave() below writes every byte from st0 to mxcsr: the
	 * block packs them in that order (x86_64-regs.c). */
	if (t->proc->features & ARCH_FEAT_AVX) {
		struct iovec iov = { xsave, XSAVE_AVX_END };
		uint64_t bv = 0;

		if (ptrace(PTRACE_GETREGSET, t->tid, (void *)NT_X86_XSTATE, &iov) < 0)
			return -errno;
		memcpy(&bv, xsave + XSAVE_XSTATE_BV_OFFSET, 8);
		/* Component 2 in its initial state reads as zeros. */
		if ((bv & 4) && iov.iov_len >= XSAVE_AVX_END)
			memcpy(reg_ptr(blk, R_YMM0H), xsave + XSAVE_YMMH_OFFSET, 256);
		else
			memset(reg_ptr(blk, R_YMM0H), 0, 256);
	} else {
		if (ptrace(PTRACE_GETFPREGS, t->tid, NULL, xsave) < 0)
			return -errno;
	}
	fp_from_fxsave(blk, xsave);
	memcpy(blk + CACHE_ORIG + gpr_end(), blk + gpr_end(), size - gpr_end());
	return 0;
}

/*
 * The registers a jump pad saved for a hit (pad.c), into gdb block `blk`
 * of a process with regset `features`: `frame` holds the 16 general
 * registers in gdb order, rip and rflags; `image` the x87/SSE(/AVX)
 * image in `form` (X86_64_IMAGE_*), NULL when the record has none (its
 * tracepoints read no such register: every component reads as its
 * initial state); `bases` fs_base and gs_base, or NULL when the pad
 * cannot read them.  What the pad does not save (segment selectors, and
 * then the bases) is `kview`'s.  The FXSAVE image as used goes to `fx`.
 */
static void pad_to_block(uint8_t *blk, unsigned int features,
			 const struct user_regs_struct *kview,
			 const uint64_t *frame, const uint8_t *image, unsigned int form,
			 const uint64_t *bases, uint8_t fx[FXSAVE_SIZE], bool fp_initial)
{
	struct user_regs_struct ur = *kview;
	bool xsave = x86_64_image_is_xsave(form);

	for (int i = 0; i <= R_EFLAGS; i++)
		memcpy((uint8_t *)&ur + gpr_offset[i], &frame[i], 8);
	ur.orig_rax = (unsigned long long)-1;	/* not in a system call */
	if (bases) {
		ur.fs_base = bases[0];
		ur.gs_base = bases[1];
	}
	gpr_from_kernel(blk, &ur);
	if (!image && fp_initial)
		return;		/* the rest is the initial state already */
	/* XSAVE may skip a component in its initial state (its bit clear in
	 * XSTATE_BV): the bytes there are an earlier hit's. */
	uint64_t bv = 7;
	if (image) {
		memcpy(fx, image, FXSAVE_SIZE);
		if (xsave)
			memcpy(&bv, image + XSAVE_XSTATE_BV_OFFSET, 8);
	} else {
		static const uint32_t mxcsr_init = 0x1f80;
		memset(fx, 0, FXSAVE_SIZE);
		memcpy(fx + 24, &mxcsr_init, 4);
		bv = 0;
		xsave = true;
	}
	if (!(bv & 1)) {
		static const uint16_t fcw_init = 0x37f;
		memset(fx, 0, 24);			/* fcw .. fdp */
		memcpy(fx, &fcw_init, 2);
		memset(fx + 32, 0, 128);		/* st0-7 */
	}
	if (!(bv & 2))
		memset(fx + 160, 0, 256);		/* xmm0-15 */
	fp_from_fxsave(blk, fx);
	if (features & ARCH_FEAT_AVX) {
		if (!xsave)
			bv = 0;
		if (bv & 4)
			memcpy(reg_ptr(blk, R_YMM0H), image + XSAVE_YMMH_OFFSET, 256);
		else
			memset(reg_ptr(blk, R_YMM0H), 0, 256);
	}
}

/*
 * A hit's registers for stopped thread t (pad_to_block): what the pad
 * does not save cannot differ from the kernel's view, taken from the
 * thread's last PTRACE_GETREGS, read once if there was none.  The
 * thread's own registers are the pad's: t->regs_pad makes a flush write
 * them all.
 */
static int x86_64_load_pad(struct thread *t, const uint64_t *frame,
			   const uint8_t *image, unsigned int image_form,
			   const uint64_t *bases)
{
	uint8_t *blk = t->regcache;

	regs_invalidate(t);
	if (kernel_gpr(t)->cs == 0 &&
	    ptrace(PTRACE_GETREGS, t->tid, NULL, kernel_gpr(t)) < 0)
		return -errno;
	pad_to_block(blk, t->proc->features, kernel_gpr(t), frame, image, image_form,
		     bases, blk + CACHE_FXSAVE, false);
	memcpy(blk + CACHE_ORIG + gpr_end(), blk + gpr_end(),
	       regs_block_size(t->proc) - gpr_end());
	t->gpr_valid = true;
	t->regs_valid = true;
	t->regs_pad = true;
	return 0;
}

/*
 * A record of the ring, which no stopped thread stands behind: the
 * selectors are those of every 64-bit process.  A recording's records
 * mostly carry no image, and each such one would load the same initial
 * x87/SSE/AVX state (1.5 KiB of stores): where the block's last load was
 * such a record (remembered by address, and checked by its control words,
 * which a block loaded any other way or new would not hold) only the
 * general registers are loaded.
 */
static int x86_64_load_record(uint8_t *blk, unsigned int features,
			      const uint64_t *frame, const uint8_t *image,
			      unsigned int image_form, const uint64_t *bases)
{
	static const uint8_t *initial_blk;
	const struct arch_reg *regs = agent.arch->regs;
	uint32_t fcw = 0, mxcsr = 0;

	memcpy(&fcw, blk + regs[R_FCTRL].offset, 4);
	memcpy(&mxcsr, blk + regs[R_MXCSR].offset, 4);
	bool initial = blk == initial_blk && fcw == 0x37f && mxcsr == 0x1f80;
	if (initial && !image) {
		/* The block holds a record of the same kind already: its
		 * selectors, orig_rax and x87/SSE/AVX state are every
		 * record's.  Only what the pad saved changes (the recorder's
		 * stream loads millions of these a second: nothing else is
		 * touched, not even a zeroed user_regs_struct). */
		uint64_t fsgs[2] = { 0, 0 };
		uint32_t eflags = (uint32_t)frame[R_EFLAGS];
		if (regs[R_RIP].offset == 8 * R_RIP && regs[0].offset == 0)
			memcpy(blk, frame, 8 * (R_RIP + 1));	/* packed in order */
		else
			for (int i = 0; i <= R_RIP; i++)
				memcpy(blk + regs[i].offset, &frame[i], 8);
		memcpy(blk + regs[R_EFLAGS].offset, &eflags, 4);
		if (bases)
			memcpy(fsgs, bases, 16);
		memcpy(blk + regs[R_FS_BASE].offset, &fsgs[0], 8);
		memcpy(blk + regs[R_GS_BASE].offset, &fsgs[1], 8);
		return 0;
	}
	struct user_regs_struct every = { .cs = 0x33, .ss = 0x2b };	/* __USER_CS, __USER_DS */
	uint8_t fx[FXSAVE_SIZE];
	pad_to_block(blk, features, &every, frame, image, image_form, bases, fx, initial);
	initial_blk = image ? NULL : blk;
	return 0;
}

/* PROBE_PAD_XSAVE=1: pads store the image with XSAVE (to compare).
 * PROBE_PAD_FSGSBASE=0: pads do as where the kernel does not let user
 * space use rdfsbase (the thread pointer read as %fs:0, the bases by
 * system calls), for tests and measuring on a machine where it does. */
static bool pad_xsave, pad_no_fsgsbase;

static int x86_64_read_env(char *why, size_t whylen)
{
	const char *v = getenv("PROBE_PAD_XSAVE");
	const char *f = getenv("PROBE_PAD_FSGSBASE");

	if (v && *v && strcmp(v, "0") && strcmp(v, "1")) {
		snprintf(why, whylen, "PROBE_PAD_XSAVE=%s: expected 0 or 1", v);
		return -EINVAL;
	}
	if (f && *f && strcmp(f, "0") && strcmp(f, "1")) {
		snprintf(why, whylen, "PROBE_PAD_FSGSBASE=%s: expected 0 or 1", f);
		return -EINVAL;
	}
	pad_xsave = v && !strcmp(v, "1");
	pad_no_fsgsbase = f && !strcmp(f, "0");
	return 0;
}

/* The image: FXSAVE's without AVX, else the XSAVE layout, stored by
 * FXSAVE and vextractf128 (XSAVE is a slow microcoded instruction: 39 ns
 * a hit here against 26), unless PROBE_PAD_XSAVE=1 keeps XSAVE (the
 * X86_64_IMAGE_* forms).  The bases read by rdfsbase and rdgsbase when
 * the kernel lets user space (HWCAP2_FSGSBASE). */
#define HWCAP2_FSGSBASE_BIT (1u << 1)

static void x86_64_pad_options(struct process *p, unsigned int *image_form, bool *tp_read)
{
	uint64_t hwcap2 = 0;

	*image_form = !(p->features & ARCH_FEAT_AVX) ? X86_64_IMAGE_FXSAVE :
		      pad_xsave ? X86_64_IMAGE_XSAVE : X86_64_IMAGE_XSAVE_BY_FXSAVE;
	*tp_read = !pad_no_fsgsbase && process_auxv(p, AT_HWCAP2, &hwcap2) &&
		    (hwcap2 & HWCAP2_FSGSBASE_BIT);
}

static bool changed(const uint8_t *blk, size_t from, size_t to)
{
	return memcmp(blk + from, blk + CACHE_ORIG + from, to - from) != 0;
}

/* Writes back only the classes of registers that changed since they were
 * read: a probe hit touches the general registers alone. */
static int x86_64_flush(struct thread *t)
{
	uint8_t *blk = t->regcache;
	struct user_regs_struct ur = *kernel_gpr(t);
	const uint64_t *now = (const uint64_t *)&ur;
	const uint64_t *was = (const uint64_t *)kernel_gpr(t);
	size_t diff[3], ndiff = 0;

	gpr_to_kernel(blk, &ur);
	keeper_regs_set(t->tid, ur.rip, ur.rsp);
	/* A probe hit changes one or two registers (pc, maybe rax or sp):
	 * PTRACE_POKEUSER for each costs less than one PTRACE_SETREGS
	 * (bench/ptrace-cost).  A thread leaving a jump pad gets them all. */
	for (size_t i = 0; i < sizeof(ur) / 8 && ndiff < 3 && !t->regs_pad; i++)
		if (now[i] != was[i])
			diff[ndiff++] = i * 8;
	if (ndiff < 3 && !t->regs_pad) {
		for (size_t i = 0; i < ndiff; i++)
			if (ptrace(PTRACE_POKEUSER, t->tid, (void *)diff[i],
				   (void *)now[diff[i] / 8]) < 0)
				return -errno;
	} else if (ptrace(PTRACE_SETREGS, t->tid, NULL, &ur) < 0) {
		return -errno;
	}
	t->regs_pad = false;
	*kernel_gpr(t) = ur;
	bool fp_written = false;
	if (t->regs_valid && changed(blk, gpr_end(), fp_end())) {
		uint8_t fx[FXSAVE_SIZE];
		memcpy(fx, blk + CACHE_FXSAVE, FXSAVE_SIZE);
		fp_to_fxsave(blk, fx);
		if (ptrace(PTRACE_SETFPREGS, t->tid, NULL, fx) < 0)
			return -errno;
		memcpy(blk + CACHE_FXSAVE, fx, FXSAVE_SIZE);
		fp_written = true;
	}
	if (t->regs_valid && (t->proc->features & ARCH_FEAT_AVX) &&
	    changed(blk, agent.arch->regs[R_YMM0H].offset,
		    agent.arch->regs[R_YMM0H].offset + 256)) {
		/* The kernel takes only the whole XSAVE area (AMX makes it
		 * over 11 KiB): read it all, change the upper halves. */
		static uint8_t xsave[XSAVE_MAX];
		struct iovec iov = { xsave, sizeof(xsave) };
		uint64_t bv;

		if (ptrace(PTRACE_GETREGSET, t->tid, (void *)NT_X86_XSTATE, &iov) < 0)
			return -errno;
		memcpy(xsave + XSAVE_YMMH_OFFSET, reg_ptr(blk, R_YMM0H), 256);
		memcpy(&bv, xsave + XSAVE_XSTATE_BV_OFFSET, 8);
		bv |= 4;
		memcpy(xsave + XSAVE_XSTATE_BV_OFFSET, &bv, 8);
		if (ptrace(PTRACE_SETREGSET, t->tid, (void *)NT_X86_XSTATE, &iov) < 0)
			return -errno;
		fp_written = true;
	}
	/* Unchanged x87/SSE/AVX registers (a probe hit) are still as read. */
	if (fp_written)
		memcpy(blk + CACHE_ORIG + gpr_end(), blk + gpr_end(),
		       regs_block_size(t->proc) - gpr_end());
	return 0;
}

static int x86_64_peek_gpr(pid_t tid, unsigned int regnum, uint64_t *value)
{
	size_t off;

	if (regnum <= R_GS)
		off = gpr_offset[regnum];
	else if (regnum == R_ORIG_RAX)
		off = offsetof(struct user_regs_struct, orig_rax);
	else if (regnum == R_FS_BASE || regnum == R_GS_BASE)
		off = regnum == R_FS_BASE ? offsetof(struct user_regs_struct, fs_base)
					  : offsetof(struct user_regs_struct, gs_base);
	else
		return -EINVAL;
	errno = 0;
	long v = ptrace(PTRACE_PEEKUSER, tid, (void *)off, NULL);
	if (errno)
		return -errno;
	/* eflags and the selectors are 32 bits in gdb's view. */
	*value = regnum >= R_EFLAGS && regnum <= R_GS ? (uint32_t)v : (uint64_t)v;
	return 0;
}

static bool x86_64_is_general(unsigned int regnum)
{
	return regnum <= R_GS || (regnum >= R_ORIG_RAX && regnum <= R_GS_BASE);
}

/* --- debug registers -------------------------------------------------------- */

#define DR_OFFSET(i) (offsetof(struct user, u_debugreg) + (i) * sizeof(long))

/* DR7 length field: 1 -> 00, 2 -> 01, 4 -> 11, 8 -> 10. */
static unsigned int dr7_len_bits(unsigned int len)
{
	switch (len) {
	case 1: return 0;
	case 2: return 1;
	case 8: return 2;
	default: return 3;
	}
}

/* x86 has DR0-DR3 for either kind, up to 8 bytes each, and no watchpoint
 * for reads alone. */
static void x86_64_hw_caps(pid_t pid, struct ptrace_hw_caps *caps)
{
	(void)pid;
	*caps = (struct ptrace_hw_caps){ .n_break = 4, .shared = true,
					 .max_len = 8, .can_read_watch = false };
}

/* DR7 R/W field for a slot's kind. */
static int dr7_rw_bits(enum hw_kind kind)
{
	switch (kind) {
	case HW_EXEC: return 0;
	case HW_WRITE: return 1;
	case HW_ACCESS: return 3;
	default: return -EINVAL;	/* no read-only watch (hw_caps) */
	}
}

static int x86_64_hw_sync(struct thread *t)
{
	struct process *p = t->proc;
	unsigned long dr7 = 0;

	for (int i = 0; i < 4; i++) {
		const struct hw_slot *s = &p->slots[i];
		int rw = dr7_rw_bits(s->kind);
		if (!s->refs)
			continue;
		if (rw < 0)
			return rw;
		if (ptrace(PTRACE_POKEUSER, t->tid, (void *)DR_OFFSET(i),
			   (void *)(unsigned long)s->addr) < 0)
			return -errno;
		dr7 |= 1ul << (2 * i);
		dr7 |= (unsigned long)rw << (16 + 4 * i);
		dr7 |= (unsigned long)dr7_len_bits(s->len) << (18 + 4 * i);
	}
	if (ptrace(PTRACE_POKEUSER, t->tid, (void *)DR_OFFSET(7),
		   (void *)dr7) < 0)
		return -errno;
	return 0;
}

/* DR6 bits 0-3 say which of DR0-3 fired. */
static int x86_64_hw_fired(struct thread *t, const siginfo_t *si)
{
	(void)si;
	errno = 0;
	unsigned long dr6 = ptrace(PTRACE_PEEKUSER, t->tid, (void *)DR_OFFSET(6), NULL);

	if (errno)
		return -errno;
	if (!(dr6 & 0xf))
		return -ENOENT;
	/* DR6 is sticky: clear it for the next trap. */
	ptrace(PTRACE_POKEUSER, t->tid, (void *)DR_OFFSET(6), NULL);
	for (int i = 0; i < 4; i++)
		if ((dr6 & (1ul << i)) && t->proc->slots[i].refs)
			return i;
	return -ENOENT;
}

/* --- libthread_db ---------------------------------------------------------------- */

/* prgregset_t is user_regs_struct and prfpregset_t the FXSAVE image:
 * what GETREGS and GETFPREGS give. */
static int x86_64_ps_getregs(pid_t lwp, void *regs, bool fp)
{
	return ptrace(fp ? PTRACE_GETFPREGS : PTRACE_GETREGS, lwp, NULL, regs) < 0
		       ? -errno : 0;
}

static int x86_64_ps_setregs(pid_t lwp, const void *regs, bool fp)
{
	return ptrace(fp ? PTRACE_SETFPREGS : PTRACE_SETREGS, lwp, NULL,
		      (void *)regs) < 0 ? -errno : 0;
}

/* The TSC, which the in-process return pads read (rdtsc). */
static uint64_t x86_64_counter_read(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

/* Whether the TSC can stamp a hit for the agent to turn into the time:
 * one constant rate on every CPU, counting in deep sleep too. */
static bool x86_64_counter_is_clock(void)
{
	char line[8192];
	bool usable = false;
	FILE *f = fopen("/proc/cpuinfo", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags", 5)) {
			usable = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
			break;
		}
	fclose(f);
	return usable;
}

/* The thread pointer is the fs base (idx 25, FS); gs base for 26 (GS). */
static int x86_64_thread_area(pid_t lwp, int idx, uint64_t *base)
{
	size_t off = idx == 26 ? offsetof(struct user_regs_struct, gs_base)
			       : offsetof(struct user_regs_struct, fs_base);

	errno = 0;
	long v = ptrace(PTRACE_PEEKUSER, lwp, (void *)off, NULL);
	if (errno)
		return -errno;
	*base = (uint64_t)v;
	return 0;
}

/* --- single-step ---------------------------------------------------------------- */

static int x86_64_hw_step(pid_t tid, int sig)
{
	return ptrace(PTRACE_SINGLESTEP, tid, NULL, (void *)(long)sig) < 0 ? -errno : 0;
}

/*
 * int3 traps with SI_KERNEL.  A step ends with TRAP_TRACE, or with
 * TRAP_BRKPT when the stepped instruction was `syscall` (the kernel
 * reports that step from the system call's exit path; icebp too).  The
 * debug registers' hits come as TRAP_HWBKPT.
 */
static enum trap_kind x86_64_trap_kind(const siginfo_t *si)
{
	switch (si->si_code) {
	case SI_KERNEL:
		return TRAP_KIND_BREAKPOINT;
	case TRAP_TRACE:
	case TRAP_BRKPT:
		return TRAP_KIND_STEP;
	case TRAP_HWBKPT:
		return TRAP_KIND_HW;
	default:
		return TRAP_KIND_OTHER;
	}
}

/*
 * Whether the debug registers fire on this machine.  Some hypervisors let
 * a tracer write DR0-DR7 but never deliver the debug exception: every
 * hardware breakpoint and watchpoint would then be accepted and silently
 * never hit.  A child stops itself, gets an execute breakpoint on a
 * function, and runs it: a SIGTRAP at that address means they work.
 * About a millisecond; breakpoint.c asks once.
 */
static void __attribute__((noinline, used)) hw_selftest_target(void)
{
	__asm__ volatile("" ::: "memory");
}

static int x86_64_hw_works(void)
{
	pid_t pid = fork();
	int status, ret = -ENODEV;

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		hw_selftest_target();
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		ret = -ECHILD;
		goto out;
	}
	if (ptrace(PTRACE_POKEUSER, pid, (void *)DR_OFFSET(0),
		   (void *)(uintptr_t)hw_selftest_target) < 0 ||
	    ptrace(PTRACE_POKEUSER, pid, (void *)DR_OFFSET(7), (void *)1ul) < 0) {
		ret = -errno;
		goto out;
	}
	if (ptrace(PTRACE_CONT, pid, NULL, NULL) < 0 ||
	    waitpid(pid, &status, 0) != pid) {
		ret = -ECHILD;
		goto out;
	}
	if (WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP) {
		struct user_regs_struct r;
		if (ptrace(PTRACE_GETREGS, pid, NULL, &r) == 0 &&
		    r.rip == (uintptr_t)hw_selftest_target)
			ret = 0;
	}
out:
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return ret;
}

/* --- the keeper --------------------------------------------------------------- */

/*
 * The keeper's SIGTRAP handler (ptrace_keeper_ops), position-independent,
 * at the start of its page (16 KiB, read/exec; the table at
 * KEEPER_PAGE_TABLE, the zeroed sigaction at KEEPER_PAGE_DFL).  rdi = signal, rsi = siginfo, rdx = ucontext;
 * every register may be clobbered (rt_sigreturn reloads them all).
 *
 *  0: 49 89 d0            mov %rdx,%r8             ucontext
 *     49 89 f1            mov %rsi,%r9             siginfo
 *     b8 ba 00 00 00      mov $SYS_gettid,%eax
 *     0f 05               syscall
 *     41 89 c2            mov %eax,%r10d           tid
 *     4c 8d 1d e9 03 00 00 lea table(%rip),%r11    (page + 1024)
 *     41 8b 0b            mov (%r11),%ecx          records
 *     49 8d 73 10         lea 16(%r11),%rsi
 * 1e: 85 c9               test %ecx,%ecx
 *     74 42               je none
 *     44 39 16            cmp %r10d,(%rsi)         rec.tid
 *     75 35               jne next
 *     48 8b 46 08         mov 8(%rsi),%rax
 *     49 39 80 a8 00 00 00 cmp %rax,rip(%r8)       rec.expect == uc rip
 *     75 28               jne next
 *     48 8b 46 10         mov 16(%rsi),%rax
 *     49 89 80 a8 00 00 00 mov %rax,rip(%r8)       rip = rec.new
 *     49 81 a0 b0 00 00 00 ff fe ff ff  andq $~TF,eflags(%r8)
 *     48 8b 46 18         mov 24(%rsi),%rax        scratch offset
 *     48 85 c0            test %rax,%rax
 *     74 08               je 1f
 *     48 8b 56 20         mov 32(%rsi),%rdx
 *     49 89 14 00         mov %rdx,(%r8,%rax)      scratch register back
 * 5b: c3               1: ret
 * 5c: 48 83 c6 40   next: add $64,%rsi
 *     ff c9               dec %ecx
 *     eb ba               jmp 1e
 * 64: 41 83 79 08 ff none: cmpl $SI_QUEUE,si_code(%r9)
 *     75 0b               jne 1f
 *     49 8b 43 08         mov 8(%r11),%rax         magic
 *     49 39 41 18         cmp %rax,si_value(%r9)
 *     75 01               jne 1f
 *     c3                  ret                      the keeper's kick
 * 76: 41 8b 41 08     1: mov si_code(%r9),%eax
 *     ff c8               dec %eax
 *     83 f8 01            cmp $1,%eax              TRAP_BRKPT or TRAP_TRACE:
 *     77 0c               ja 1f
 *     49 81 a0 b0 00 00 00 ff fe ff ff  andq $~TF,eflags(%r8)
 *     c3                  ret                      a step the agent left
 * 8d: 41 81 79 08 80 00 00 00 1: cmpl $SI_KERNEL,si_code(%r9)  int3
 *     75 18               jne dfl
 *     49 8b 80 a8 00 00 00 mov rip(%r8),%rax
 *     80 78 ff cc         cmpb $0xcc,-1(%rax)
 *     74 0b               je dfl                   the program's own int3
 *     48 ff c8            dec %rax
 *     49 89 80 a8 00 00 00 mov %rax,rip(%r8)       a restored site: again
 *     c3                  ret
 * af: 44 89 d3       dfl: mov %r10d,%ebx
 *     b8 0d 00 00 00      mov $SYS_rt_sigaction,%eax
 *     bf 05 00 00 00      mov $SIGTRAP,%edi
 *     48 8d 35 1d 03 00 00 lea zero(%rip),%rsi     (page + 992): SIG_DFL
 *     31 d2               xor %edx,%edx
 *     41 ba 08 00 00 00   mov $8,%r10d
 *     0f 05               syscall
 *     b8 27 00 00 00      mov $SYS_getpid,%eax
 *     0f 05               syscall
 *     89 c7               mov %eax,%edi
 *     89 de               mov %ebx,%esi
 *     b8 ea 00 00 00      mov $SYS_tgkill,%eax
 *     ba 05 00 00 00      mov $SIGTRAP,%edx
 *     0f 05               syscall                  pending until sigreturn
 *     c3                  ret
 * e5: b8 0f 00 00 00 restorer: mov $SYS_rt_sigreturn,%eax
 *     0f 05               syscall
 */
static const uint8_t keeper_handler[] = {
	0x49, 0x89, 0xd0, 0x49, 0x89, 0xf1, 0xb8, 0xba, 0x00, 0x00, 0x00, 0x0f,
	0x05, 0x41, 0x89, 0xc2, 0x4c, 0x8d, 0x1d, 0xe9, 0x03, 0x00, 0x00, 0x41,
	0x8b, 0x0b, 0x49, 0x8d, 0x73, 0x10, 0x85, 0xc9, 0x74, 0x42, 0x44, 0x39,
	0x16, 0x75, 0x35, 0x48, 0x8b, 0x46, 0x08, 0x49, 0x39, 0x80, 0xa8, 0x00,
	0x00, 0x00, 0x75, 0x28, 0x48, 0x8b, 0x46, 0x10, 0x49, 0x89, 0x80, 0xa8,
	0x00, 0x00, 0x00, 0x49, 0x81, 0xa0, 0xb0, 0x00, 0x00, 0x00, 0xff, 0xfe,
	0xff, 0xff, 0x48, 0x8b, 0x46, 0x18, 0x48, 0x85, 0xc0, 0x74, 0x08, 0x48,
	0x8b, 0x56, 0x20, 0x49, 0x89, 0x14, 0x00, 0xc3, 0x48, 0x83, 0xc6, 0x40,
	0xff, 0xc9, 0xeb, 0xba, 0x41, 0x83, 0x79, 0x08, 0xff, 0x75, 0x0b, 0x49,
	0x8b, 0x43, 0x08, 0x49, 0x39, 0x41, 0x18, 0x75, 0x01, 0xc3, 0x41, 0x8b,
	0x41, 0x08, 0xff, 0xc8, 0x83, 0xf8, 0x01, 0x77, 0x0c, 0x49, 0x81, 0xa0,
	0xb0, 0x00, 0x00, 0x00, 0xff, 0xfe, 0xff, 0xff, 0xc3, 0x41, 0x81, 0x79,
	0x08, 0x80, 0x00, 0x00, 0x00, 0x75, 0x18, 0x49, 0x8b, 0x80, 0xa8, 0x00,
	0x00, 0x00, 0x80, 0x78, 0xff, 0xcc, 0x74, 0x0b, 0x48, 0xff, 0xc8, 0x49,
	0x89, 0x80, 0xa8, 0x00, 0x00, 0x00, 0xc3, 0x44, 0x89, 0xd3, 0xb8, 0x0d,
	0x00, 0x00, 0x00, 0xbf, 0x05, 0x00, 0x00, 0x00, 0x48, 0x8d, 0x35, 0x1d,
	0x03, 0x00, 0x00, 0x31, 0xd2, 0x41, 0xba, 0x08, 0x00, 0x00, 0x00, 0x0f,
	0x05, 0xb8, 0x27, 0x00, 0x00, 0x00, 0x0f, 0x05, 0x89, 0xc7, 0x89, 0xde,
	0xb8, 0xea, 0x00, 0x00, 0x00, 0xba, 0x05, 0x00, 0x00, 0x00, 0x0f, 0x05,
	0xc3, 0xb8, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05,
};

/* gdb's x86-64 register number -> index in ucontext gregs (REG_*). */
static const int8_t greg_of_gdb[16] = {
	13, 11, 14, 12, 9, 8, 10, 15, 0, 1, 2, 3, 4, 5, 6, 7,
};


#define UC_GREGS 40		/* offsetof(ucontext_t, uc_mcontext.gregs) */
#define KEEPER_RESTORER 0xe5

static int x86_64_uc_gpr_offset(int regnum)
{
	if (regnum < 0 || regnum >= 16)
		return -1;
	return UC_GREGS + 8 * greg_of_gdb[regnum];
}

/*
 * A pad's `int3; cmpl $DONE,ready(%r14); jne int3` (11 bytes) becomes
 * `movl $DONE,ready(%r14)`: a thread in the pad runs on through it.  A
 * thread after the trap goes back onto the store; one between the
 * compare and the jump goes past them.
 */
static int x86_64_pad_open(uint8_t *out, size_t size, uint32_t ready_off)
{
	uint32_t done = PAD_DONE;

	if (size < 11)
		return -ENOSPC;
	out[0] = 0x41;
	out[1] = 0xc7;
	out[2] = 0x86;
	memcpy(out + 3, &ready_off, 4);
	memcpy(out + 7, &done, 4);
	return 11;
}

/* ipa_copy's `rep movsb` (2 bytes) becomes `jmp exit` (eb rel8): the
 * count still to copy stays in %rcx, so the exit returns what was read.
 * A pad's `mov %fs:0,%reg` (9 bytes) becomes `jmp` to its path without
 * the thread pointer (eb rel8, or e9 rel32 when that is too far). */
static int x86_64_load_open(uint8_t *out, size_t size, uint64_t at, uint64_t to,
			    size_t room)
{
	int64_t rel = (int64_t)(to - (at + 2));

	if (size < 2 || room < 2)
		return -ENOSPC;
	if (rel >= -128 && rel <= 127) {
		out[0] = 0xeb;
		out[1] = (uint8_t)(int8_t)rel;
		return 2;
	}
	rel = (int64_t)(to - (at + 5));
	if (size < 5 || room < 5)
		return -ENOSPC;
	if (rel < INT32_MIN || rel > INT32_MAX)
		return -ERANGE;
	int32_t r32 = (int32_t)rel;
	out[0] = 0xe9;
	memcpy(out + 1, &r32, 4);
	return 5;
}

static int x86_64_pad_fix(uint64_t trap, uint64_t pc, uint64_t *new_pc)
{
	if (pc == trap + 1)
		*new_pc = trap;
	else if (pc == trap + 9)
		*new_pc = trap + 11;
	else
		return 0;
	return 1;
}

const struct ptrace_arch_ops ptrace_arch_host = {
	.word_size = 8,
	.regcache_size = X86_64_REGCACHE,
	.detect_features = x86_64_detect_features,
	.read_env = x86_64_read_env,
	.fetch_gpr = x86_64_fetch_gpr,
	.fetch_rest = x86_64_fetch_rest,
	.flush = x86_64_flush,
	.peek_gpr = x86_64_peek_gpr,
	.is_general = x86_64_is_general,
	.load_pad = x86_64_load_pad,
	.load_record = x86_64_load_record,
	.pad_options = x86_64_pad_options,
	.hw_step = x86_64_hw_step,
	.trap_kind = x86_64_trap_kind,
	.hw_caps = x86_64_hw_caps,
	.hw_sync = x86_64_hw_sync,
	.hw_fired = x86_64_hw_fired,
	.hw_works = x86_64_hw_works,
	.ps_getregs = x86_64_ps_getregs,
	.ps_setregs = x86_64_ps_setregs,
	.thread_area = x86_64_thread_area,
	.ret_addr = PTRACE_RET_STACK,
	.ret_link_regnum = -1,
	.counter_read = x86_64_counter_read,
	.counter_is_clock = x86_64_counter_is_clock,
	/* syscall; rax = number and result, rdi rsi rdx r10 r8 r9. */
	.syscall = {
		.insn = { 0x0f, 0x05 },
		.insn_len = 2,
		.nr_regnum = R_RAX,
		.arg_regnum = { R_RDI, R_RSI, R_RDX, R_R10, R_R8, R_R9 },
		.ret_regnum = R_RAX,
		.restart_regnum = R_ORIG_RAX,
		.nr_restart_syscall = SYS_restart_syscall,
		.stop_nr_regnum = R_ORIG_RAX,
		.nr_mmap = SYS_mmap,
		.mmap_offset_shift = 0,
	},
	.keeper = {
		.handler = keeper_handler,
		.handler_len = sizeof(keeper_handler),
		.restorer = KEEPER_RESTORER,
		.uc_gpr_offset = x86_64_uc_gpr_offset,
		.reg_only_if = false,
		.slot_rewind = false,	/* a slot holds one instruction */
		.step_sticks = false,	/* the handler clears TF */
		.pad_open = x86_64_pad_open,
		.pad_fix = x86_64_pad_fix,
		.load_open = x86_64_load_open,
	},
};
