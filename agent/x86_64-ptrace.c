/*
 * x86_64-ptrace.c - x86-64 registers and debug registers through ptrace.
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
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <signal.h>
#include <sys/user.h>

#include "agent/agent.h"
#include "agent/keeper.h"
#include "agent/log.h"

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

unsigned int regs_detect_features(pid_t tid)
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

size_t regs_block_size(const struct process *p)
{
	return agent.arch->regblock_size_for(p->features);
}

void regs_invalidate(struct thread *t)
{
	t->regs_valid = false;
	t->gpr_valid = false;
	t->regs_dirty = false;
	t->regs_pad = false;
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
 * The thread's register cache (t->regcache, 4 KiB) holds, besides the gdb
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
int regs_fetch_gpr(struct thread *t)
{
	if (t->regs_valid || t->gpr_valid)
		return 0;
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, kernel_gpr(t)) < 0)
		return -errno;
	gpr_from_kernel(t->regcache, kernel_gpr(t));
	t->gpr_valid = true;
	return 0;
}

/* Every register: the x87/SSE state and, with AVX, the upper halves come
 * from one short XSAVE read (the legacy area is the FXSAVE image). */
int regs_fetch(struct thread *t)
{
	uint8_t *blk = t->regcache;
	uint8_t *xsave = blk + CACHE_FXSAVE;
	size_t size = regs_block_size(t->proc);
	int err;

	if (t->regs_valid)
		return 0;
	if ((err = regs_fetch_gpr(t)) < 0)
		return err;
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
	t->regs_valid = true;
	return 0;
}

/*
 * The registers a jump pad saved for a hit (pad.c): `frame` holds the 16
 * general registers in gdb order, rip and rflags; `image` the FXSAVE64
 * or XSAVE64 (x87, SSE, AVX) image; `bases` fs_base and gs_base, or NULL
 * when the pad cannot read them.  What the pad does not save (segment
 * selectors, and then the bases) cannot differ from the kernel's view:
 * taken from the thread's last PTRACE_GETREGS, read once if there was
 * none.  The thread's own registers are the pad's: t->regs_pad makes a
 * flush write them all.
 */
int regs_load_pad(struct thread *t, const uint64_t *frame, const uint8_t *image,
		  bool xsave, const uint64_t *bases, bool may_fetch)
{
	uint8_t *blk = t->regcache;
	struct user_regs_struct ur;

	regs_invalidate(t);
	if (kernel_gpr(t)->cs == 0 && may_fetch &&
	    ptrace(PTRACE_GETREGS, t->tid, NULL, kernel_gpr(t)) < 0)
		return -errno;
	if (kernel_gpr(t)->cs == 0) {
		/* A record of the in-process collector, for no particular
		 * stopped thread: the selectors of every 64-bit process. */
		memset(kernel_gpr(t), 0, sizeof(*kernel_gpr(t)));
		kernel_gpr(t)->cs = 0x33;	/* __USER_CS */
		kernel_gpr(t)->ss = 0x2b;	/* __USER_DS */
	}
	ur = *kernel_gpr(t);
	for (int i = 0; i <= R_EFLAGS; i++)
		memcpy((uint8_t *)&ur + gpr_offset[i], &frame[i], 8);
	ur.orig_rax = (unsigned long long)-1;	/* not in a system call */
	if (bases) {
		ur.fs_base = bases[0];
		ur.gs_base = bases[1];
	}
	gpr_from_kernel(blk, &ur);
	/* XSAVE may skip a component in its initial state (its bit clear in
	 * XSTATE_BV): the bytes there are an earlier hit's. */
	uint8_t fx[FXSAVE_SIZE];
	uint64_t bv = 7;
	memcpy(fx, image, FXSAVE_SIZE);
	if (xsave)
		memcpy(&bv, image + XSAVE_XSTATE_BV_OFFSET, 8);
	if (!(bv & 1)) {
		static const uint16_t fcw_init = 0x37f;
		memset(fx, 0, 24);			/* fcw .. fdp */
		memcpy(fx, &fcw_init, 2);
		memset(fx + 32, 0, 128);		/* st0-7 */
	}
	if (!(bv & 2))
		memset(fx + 160, 0, 256);		/* xmm0-15 */
	memcpy(blk + CACHE_FXSAVE, fx, FXSAVE_SIZE);
	fp_from_fxsave(blk, fx);
	if (t->proc->features & ARCH_FEAT_AVX) {
		if (!xsave)
			bv = 0;
		if (bv & 4)
			memcpy(reg_ptr(blk, R_YMM0H), image + XSAVE_YMMH_OFFSET, 256);
		else
			memset(reg_ptr(blk, R_YMM0H), 0, 256);
	}
	memcpy(blk + CACHE_ORIG + gpr_end(), blk + gpr_end(),
	       regs_block_size(t->proc) - gpr_end());
	t->gpr_valid = true;
	t->regs_valid = true;
	t->regs_pad = true;
	return 0;
}

static bool changed(const uint8_t *blk, size_t from, size_t to)
{
	return memcmp(blk + from, blk + CACHE_ORIG + from, to - from) != 0;
}

/* Writes back only the classes of registers that changed since they were
 * read: a probe hit touches the general registers alone. */
int regs_flush(struct thread *t)
{
	uint8_t *blk = t->regcache;

	if (!t->regs_dirty || !(t->regs_valid || t->gpr_valid))
		return 0;
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
	t->regs_dirty = false;
	return 0;
}

bool regs_is_general(unsigned int regnum)
{
	return regnum <= R_GS || (regnum >= R_ORIG_RAX && regnum <= R_GS_BASE);
}

int regs_read_gdb(struct thread *t, unsigned int regnum, uint64_t *value)
{
	const struct arch_ops *arch = agent.arch;
	uint8_t *blk;

	if (regnum >= arch->nregs_for(t->proc->features) ||
	    arch->regs[regnum].bitsize > 64)
		return -EINVAL;
	blk = regs_is_general(regnum) ? regs_block_gpr(t) : regs_block(t);
	if (!blk)
		return -ESRCH;
	*value = 0;
	memcpy(value, blk + arch->regs[regnum].offset, arch->regs[regnum].bitsize / 8);
	return 0;
}

uint8_t *regs_block_gpr(struct thread *t)
{
	if (regs_fetch_gpr(t) < 0)
		return NULL;
	return t->regcache;
}

uint8_t *regs_block(struct thread *t)
{
	if (regs_fetch(t) < 0)
		return NULL;
	return t->regcache;
}

uint64_t regs_get_pc(struct thread *t)
{
	uint64_t pc = 0;
	uint8_t *blk = regs_block_gpr(t);

	if (blk)
		memcpy(&pc, reg_ptr(blk, R_RIP), 8);
	return pc;
}

int regs_set_pc(struct thread *t, uint64_t pc)
{
	uint8_t *blk = regs_block_gpr(t);

	if (!blk)
		return -ESRCH;
	memcpy(reg_ptr(blk, R_RIP), &pc, 8);
	t->regs_dirty = true;
	/* Written at once: a detach or kill must not lose it. */
	return regs_flush(t);
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

int hw_sync_thread(struct thread *t)
{
	struct process *p = t->proc;
	unsigned long dr7 = 0;

	for (int i = 0; i < MAX_HW_SLOTS; i++) {
		const struct hw_slot *s = &p->slots[i];
		if (!s->refs)
			continue;
		if (ptrace(PTRACE_POKEUSER, t->tid, (void *)DR_OFFSET(i),
			   (void *)(unsigned long)s->addr) < 0)
			return -errno;
		dr7 |= 1ul << (2 * i);
		dr7 |= (unsigned long)s->type << (16 + 4 * i);
		dr7 |= (unsigned long)dr7_len_bits(s->len) << (18 + 4 * i);
	}
	if (ptrace(PTRACE_POKEUSER, t->tid, (void *)DR_OFFSET(7),
		   (void *)dr7) < 0)
		return -errno;
	t->dregs_dirty = false;
	return 0;
}

/* Which gdb point a fired slot belongs to: the one whose range holds it. */
static const struct hw_point *hw_point_for(struct process *p,
					   const struct hw_slot *s)
{
	for (const struct hw_point *h = p->hw_points; h; h = h->next) {
		bool exec = h->type == RSP_POINT_HW_BREAK;
		if ((s->type == 0) != exec)
			continue;
		if (s->addr >= h->addr && s->addr < h->addr + (h->len ? h->len : 1))
			return h;
	}
	return NULL;
}

bool hw_stopped_by(struct thread *t, enum stop_reason *reason, uint64_t *addr)
{
	struct process *p = t->proc;
	bool armed = false;

	/* Nothing armed, nothing to ask the kernel (a probe hit's hot path). */
	for (int i = 0; i < MAX_HW_SLOTS; i++)
		armed |= p->slots[i].refs > 0;
	if (!armed)
		return false;
	errno = 0;
	unsigned long dr6 = ptrace(PTRACE_PEEKUSER, t->tid, (void *)DR_OFFSET(6), NULL);

	if (errno)
		return false;
	if (!(dr6 & 0xf))
		return false;
	/* DR6 is sticky: clear it for the next trap. */
	ptrace(PTRACE_POKEUSER, t->tid, (void *)DR_OFFSET(6), NULL);
	for (int i = 0; i < MAX_HW_SLOTS; i++) {
		if (!(dr6 & (1ul << i)) || !p->slots[i].refs)
			continue;
		const struct hw_point *h = hw_point_for(p, &p->slots[i]);
		if (!h)
			continue;
		switch (h->type) {
		case RSP_POINT_HW_BREAK:
			*reason = REASON_HWBREAK;
			break;
		case RSP_POINT_WRITE_WATCH:
			*reason = REASON_WATCH;
			break;
		case RSP_POINT_READ_WATCH:
			*reason = REASON_RWATCH;
			break;
		default:
			*reason = REASON_AWATCH;
			break;
		}
		*addr = h->addr;
		return true;
	}
	return false;
}

/* --- system calls made by the program on the agent's behalf ------------------ */

/*
 * Runs one system call in thread `t`, which must be stopped: a `syscall`
 * instruction is written over the current PC, the registers are loaded
 * with the call, the thread single-steps it, and everything is put back.
 * orig_rax = -1 keeps the kernel from restarting a system call the thread
 * was interrupted in.  Signals that arrive meanwhile are kept for the
 * thread (pending_signal) rather than lost.
 */
int inferior_syscall(struct thread *t, long nr, const long args[6], long *ret)
{
	static const uint8_t syscall_insn[2] = { 0x0f, 0x05 };
	struct user_regs_struct saved, r;
	uint8_t code[2];
	int status, err = 0;

	if (t->regs_dirty && regs_flush(t) < 0)
		return -EIO;
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &saved) < 0)
		return -errno;
	if (mem_read_raw(t->proc, saved.rip, code, 2) != 2)
		return -EFAULT;
	keeper_inject(t->proc->pid, saved.rip, code, syscall_insn, 2);
	if (mem_write_raw(t->proc, saved.rip, syscall_insn, 2) != 2) {
		keeper_inject(t->proc->pid, 0, NULL, NULL, 0);
		return -EFAULT;
	}
	r = saved;
	r.rax = nr;
	r.orig_rax = -1;
	r.rdi = args[0];
	r.rsi = args[1];
	r.rdx = args[2];
	r.r10 = args[3];
	r.r8 = args[4];
	r.r9 = args[5];
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, &r) < 0) {
		err = -errno;
		goto out;
	}
	for (;;) {
		if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, NULL) < 0 ||
		    waitpid(t->tid, &status, __WALL) < 0) {
			err = -errno;
			goto out;
		}
		if (!WIFSTOPPED(status)) {
			err = -ESRCH;	/* killed meanwhile */
			goto out;
		}
		int sig = WSTOPSIG(status);
		if (sig == SIGTRAP && (status >> 16) == 0)
			break;
		/* A signal before the instruction ran: keep it for later. */
		if (sig != SIGSTOP && sig != SIGTRAP && sig != (SIGTRAP | 0x80))
			t->pending_signal = sig;
		else if (sig == SIGSTOP && t->stop_expected)
			t->stop_expected = false;
	}
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &r) < 0) {
		err = -errno;
		goto out;
	}
	*ret = (long)r.rax;
out:
	mem_write_raw(t->proc, saved.rip, code, 2);
	keeper_inject(t->proc->pid, 0, NULL, NULL, 0);
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, &saved) < 0 && !err)
		err = -errno;
	regs_invalidate(t);
	return err;
}

/* The emulator's view of the registers: gpr[] is the first 16 slots of
 * the block, then rip and eflags. */
void regs_to_gpregs(const uint8_t *blk, struct arch_gpregs *g)
{
	uint32_t flags;

	memset(g, 0, sizeof(*g));
	memcpy(g->gpr, blk, 16 * 8);
	memcpy(&g->pc, reg_ptr((uint8_t *)blk, R_RIP), 8);
	memcpy(&flags, reg_ptr((uint8_t *)blk, R_EFLAGS), 4);
	g->flags = flags;
}

void regs_from_gpregs(uint8_t *blk, const struct arch_gpregs *g)
{
	uint32_t flags = (uint32_t)g->flags;

	memcpy(blk, g->gpr, 16 * 8);
	memcpy(reg_ptr(blk, R_RIP), &g->pc, 8);
	memcpy(reg_ptr(blk, R_EFLAGS), &flags, 4);
}
