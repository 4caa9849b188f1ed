/*
 * aarch64-ptrace.c - AArch64 registers, single-step and debug registers
 * through ptrace: the aarch64 `struct ptrace_arch_ops` (see ptrace-arch.h).
 *
 * arm64 Linux has no PTRACE_GETREGS: every register class is a regset.
 * The gdb block (arch/aarch64: x0..x30, sp, pc, cpsr, then v0..v31, fpsr,
 * fpcr) comes from two of them:
 *   NT_PRSTATUS   struct user_regs_struct: regs[31], sp, pc, pstate (64-bit;
 *                 gdb's cpsr is its low 32 bits)
 *   NT_FPREGSET   struct user_fpsimd_struct: vregs[32] (128-bit), fpsr, fpcr
 * A probe hit needs the first alone: one PTRACE_GETREGSET, and one
 * PTRACE_SETREGSET when it changed something.  SVE, SME and pointer
 * authentication registers are not exposed (the block is the base set,
 * which gdb accepts on any aarch64 CPU; the v registers still read
 * through NT_FPREGSET when the CPU has SVE).
 *
 * Traps: BRK reports TRAP_BRKPT with the pc at the BRK itself; a hardware
 * step ends with TRAP_TRACE, except a step over `svc`, which the kernel
 * reports from the system call's exit path as a plain SIGTRAP (SI_USER
 * from pid 0); the debug registers' hits come as TRAP_HWBKPT with si_addr
 * the address that matched (the instruction, or the data a load or store
 * touched).
 *
 * Debug registers: NT_ARM_HW_BREAK and NT_ARM_HW_WATCH, each a
 * user_hwdebug_state whose dbg_info low byte counts the CPU's slots.  A
 * slot is an address, aligned to 4 (execute) or 8 (data), and a control
 * word: enable (bit 0), privilege EL0 (bits 1-2 = 2), load/store (bits
 * 3-4: 1 load, 2 store, 3 both; 0 for execute) and the byte-address
 * select mask (bits 5-12: one bit per byte of the aligned doubleword).
 * A watchpoint stops the thread *before* the access completes: the pc is
 * at the load or store, and gdb (which knows aarch64 watchpoints are not
 * steppable) takes it out to step over it.
 */
#define LOG_DOMAIN "regs"
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/hw-slots.h"
#include "agent/log.h"
#include "agent/ptrace-arch.h"

#ifndef NT_ARM_TLS
#define NT_ARM_TLS 0x401
#endif
#ifndef NT_ARM_HW_BREAK
#define NT_ARM_HW_BREAK 0x402
#endif
#ifndef NT_ARM_HW_WATCH
#define NT_ARM_HW_WATCH 0x403
#endif

/* The kernel's struct user_hwdebug_state (asm/ptrace.h, which clashes
 * with glibc's sys/ptrace.h). */
struct a64_hwdebug {
	uint32_t dbg_info;
	uint32_t pad;
	struct {
		uint64_t addr;
		uint32_t ctrl;
		uint32_t pad;
	} regs[16];
};

/* gdb's aarch64 numbering (features/aarch64-core.xml, -fpu.xml), which
 * arch/aarch64's table follows. */
enum {
	A64_X0 = 0, A64_LR = 30, A64_SP = 31, A64_PC = 32, A64_CPSR = 33,
	A64_V0 = 34, A64_FPSR = 66, A64_FPCR = 67,
};

/*
 * The thread's register cache holds, after the gdb block:
 *   CACHE_KGPR  the user_regs_struct as the kernel last gave or took it
 *   CACHE_KFP   the user_fpsimd_struct likewise
 * A flush builds the kernel's views from the block and writes each one
 * only if it differs from what the kernel has.
 */
#define CACHE_KGPR 2048
#define CACHE_KFP 2560
#define A64_REGCACHE 4096
_Static_assert(CACHE_KGPR + sizeof(struct user_regs_struct) <= CACHE_KFP,
	       "the kernel's general registers must fit");
_Static_assert(CACHE_KFP + sizeof(struct user_fpsimd_struct) <= A64_REGCACHE,
	       "the kernel's fp registers must fit");

static struct user_regs_struct *kernel_gpr(struct thread *t)
{
	return (struct user_regs_struct *)(t->regcache + CACHE_KGPR);
}

static struct user_fpsimd_struct *kernel_fp(struct thread *t)
{
	return (struct user_fpsimd_struct *)(t->regcache + CACHE_KFP);
}

static inline uint8_t *reg_ptr(uint8_t *blk, int regnum)
{
	return blk + agent.arch->regs[regnum].offset;
}

static int getregset(pid_t tid, int type, void *buf, size_t len)
{
	struct iovec iov = { buf, len };

	return ptrace(PTRACE_GETREGSET, tid, (void *)(long)type, &iov) < 0 ? -errno : 0;
}

static int setregset(pid_t tid, int type, const void *buf, size_t len)
{
	struct iovec iov = { (void *)buf, len };

	return ptrace(PTRACE_SETREGSET, tid, (void *)(long)type, &iov) < 0 ? -errno : 0;
}

static unsigned int a64_detect_features(pid_t tid)
{
	(void)tid;
	return 0;	/* the base set: core and fpsimd */
}

static void gpr_from_kernel(uint8_t *blk, const struct user_regs_struct *ur)
{
	uint32_t cpsr = (uint32_t)ur->pstate;

	for (int i = 0; i <= A64_LR; i++)
		memcpy(reg_ptr(blk, A64_X0 + i), &ur->regs[i], 8);
	memcpy(reg_ptr(blk, A64_SP), &ur->sp, 8);
	memcpy(reg_ptr(blk, A64_PC), &ur->pc, 8);
	memcpy(reg_ptr(blk, A64_CPSR), &cpsr, 4);
}

/* Into `ur`, which holds the kernel's values: pstate keeps its upper
 * half, which gdb does not see. */
static void gpr_to_kernel(const uint8_t *blk, struct user_regs_struct *ur)
{
	uint32_t cpsr;

	for (int i = 0; i <= A64_LR; i++)
		memcpy(&ur->regs[i], reg_ptr((uint8_t *)blk, A64_X0 + i), 8);
	memcpy(&ur->sp, reg_ptr((uint8_t *)blk, A64_SP), 8);
	memcpy(&ur->pc, reg_ptr((uint8_t *)blk, A64_PC), 8);
	memcpy(&cpsr, reg_ptr((uint8_t *)blk, A64_CPSR), 4);
	ur->pstate = (ur->pstate & ~0xffffffffull) | cpsr;
}

static void fp_from_kernel(uint8_t *blk, const struct user_fpsimd_struct *fp)
{
	for (int i = 0; i < 32; i++)
		memcpy(reg_ptr(blk, A64_V0 + i), &fp->vregs[i], 16);
	memcpy(reg_ptr(blk, A64_FPSR), &fp->fpsr, 4);
	memcpy(reg_ptr(blk, A64_FPCR), &fp->fpcr, 4);
}

static void fp_to_kernel(const uint8_t *blk, struct user_fpsimd_struct *fp)
{
	for (int i = 0; i < 32; i++)
		memcpy(&fp->vregs[i], reg_ptr((uint8_t *)blk, A64_V0 + i), 16);
	memcpy(&fp->fpsr, reg_ptr((uint8_t *)blk, A64_FPSR), 4);
	memcpy(&fp->fpcr, reg_ptr((uint8_t *)blk, A64_FPCR), 4);
}

static int a64_fetch_gpr(struct thread *t)
{
	int err = getregset(t->tid, NT_PRSTATUS, kernel_gpr(t),
			    sizeof(struct user_regs_struct));

	if (err < 0)
		return err;
	gpr_from_kernel(t->regcache, kernel_gpr(t));
	return 0;
}

static int a64_fetch_rest(struct thread *t)
{
	int err = getregset(t->tid, NT_FPREGSET, kernel_fp(t),
			    sizeof(struct user_fpsimd_struct));

	if (err < 0)
		return err;
	fp_from_kernel(t->regcache, kernel_fp(t));
	return 0;
}

/* Writes back each regset that differs from the kernel's copy: a probe
 * hit changes the general registers alone, so one PTRACE_SETREGSET. */
static int a64_flush(struct thread *t)
{
	struct user_regs_struct ur = *kernel_gpr(t);
	int err;

	gpr_to_kernel(t->regcache, &ur);
	if (t->regs_pad || memcmp(&ur, kernel_gpr(t), sizeof(ur)) != 0) {
		if ((err = setregset(t->tid, NT_PRSTATUS, &ur, sizeof(ur))) < 0)
			return err;
		*kernel_gpr(t) = ur;
	}
	t->regs_pad = false;
	if (t->regs_valid) {
		struct user_fpsimd_struct fp = *kernel_fp(t);

		fp_to_kernel(t->regcache, &fp);
		if (memcmp(&fp, kernel_fp(t), sizeof(fp)) != 0) {
			if ((err = setregset(t->tid, NT_FPREGSET, &fp, sizeof(fp))) < 0)
				return err;
			*kernel_fp(t) = fp;
		}
	}
	return 0;
}

static int a64_peek_gpr(pid_t tid, unsigned int regnum, uint64_t *value)
{
	struct user_regs_struct ur;
	int err;

	if (regnum > A64_CPSR)
		return -EINVAL;
	if ((err = getregset(tid, NT_PRSTATUS, &ur, sizeof(ur))) < 0)
		return err;
	*value = regnum <= A64_LR ? ur.regs[regnum] : regnum == A64_SP ? ur.sp
		 : regnum == A64_PC ? ur.pc : (uint32_t)ur.pstate;
	return 0;
}

/*
 * The registers a jump pad saved for a hit (aarch64-pad.c): `frame` holds
 * x0-x30, sp, pc (the probe) and nzcv.  The pad touches nothing else: the
 * rest of pstate is the kernel's (read once if this thread has not been
 * read yet; BTYPE is 0 after the B that entered the pad), and the v
 * registers, fpsr and fpcr of a stopped thread are the kernel's, read
 * when asked for.  The thread's own general registers are the pad's:
 * t->regs_pad makes a flush write them all.
 */
#define PSTATE_KEPT (~0xf0000c00ull)	/* all but NZCV and BTYPE */

static void frame_to_kernel(struct user_regs_struct *ur, const uint64_t *frame)
{
	for (int i = 0; i <= A64_LR; i++)
		ur->regs[i] = frame[i];
	ur->sp = frame[A64_SP];
	ur->pc = frame[A64_PC];
	ur->pstate = (ur->pstate & PSTATE_KEPT) | (frame[A64_CPSR] & 0xf0000000ull);
}

static int a64_load_pad(struct thread *t, const uint64_t *frame,
			const uint8_t *image, unsigned int image_form,
			const uint64_t *bases)
{
	struct user_regs_struct ur;
	int err;

	(void)image;
	(void)image_form;
	(void)bases;
	regs_invalidate(t);
	if (kernel_gpr(t)->pc == 0 &&
	    (err = getregset(t->tid, NT_PRSTATUS, kernel_gpr(t), sizeof(ur))) < 0)
		return err;
	ur = *kernel_gpr(t);
	frame_to_kernel(&ur, frame);
	gpr_from_kernel(t->regcache, &ur);
	t->gpr_valid = true;
	t->regs_pad = true;
	return 0;
}

/*
 * A record of the ring, which no stopped thread stands behind: the rest
 * of pstate reads 0 (EL0t, no mask that user space could see change),
 * and the collector's image holds v0-v31, fpsr at 512 and fpcr at 516;
 * without one they read as their initial state, zero.
 */
static int a64_load_record(uint8_t *blk, unsigned int features,
			   const uint64_t *frame, const uint8_t *image,
			   unsigned int image_form, const uint64_t *bases)
{
	struct user_regs_struct ur;
	struct user_fpsimd_struct fp;

	(void)features;
	(void)image_form;
	(void)bases;
	memset(&ur, 0, sizeof(ur));
	frame_to_kernel(&ur, frame);
	gpr_from_kernel(blk, &ur);
	memset(&fp, 0, sizeof(fp));
	if (image) {
		memcpy(fp.vregs, image, sizeof(fp.vregs));
		memcpy(&fp.fpsr, image + 512, 4);
		memcpy(&fp.fpcr, image + 516, 4);
	}
	fp_from_kernel(blk, &fp);
	return 0;
}

/* No choices: the pads' layout is fixed (aarch64-pad.c). */
static void a64_pad_options(struct process *p, unsigned int *image_form, bool *tp_read)
{
	(void)p;
	*image_form = 0;	/* its one form */
	*tp_read = true;	/* mrs TPIDR_EL0 */
}

static bool a64_is_general(unsigned int regnum)
{
	return regnum <= A64_CPSR;
}

/* --- single-step and traps --------------------------------------------- */

static int a64_hw_step(pid_t tid, int sig)
{
	return ptrace(PTRACE_SINGLESTEP, tid, NULL, (void *)(long)sig) < 0 ? -errno : 0;
}

static enum trap_kind a64_trap_kind(const siginfo_t *si)
{
	switch (si->si_code) {
	case TRAP_BRKPT:
		return TRAP_KIND_BREAKPOINT;
	case TRAP_TRACE:
		return TRAP_KIND_STEP;
	case TRAP_HWBKPT:
		return TRAP_KIND_HW;
	case SI_USER:
		/* A step over `svc` ends in the system call's exit path,
		 * which raises a bare SIGTRAP; kill() names its sender. */
		return si->si_pid == 0 ? TRAP_KIND_STEP : TRAP_KIND_OTHER;
	default:
		return TRAP_KIND_OTHER;
	}
}

/* --- debug registers ---------------------------------------------------- */

#define CTRL_ENABLE 1u
#define CTRL_EL0 (2u << 1)

static unsigned int slot_count(pid_t tid, int type)
{
	struct a64_hwdebug d;

	memset(&d, 0, sizeof(d));
	if (getregset(tid, type, &d, sizeof(d)) < 0)
		return 0;
	unsigned int n = d.dbg_info & 0xff;
	return n > 16 ? 16 : n;
}

/* Breakpoint slots first, then watchpoint slots (breakpoint.c lays them
 * out so); a watch slot covers up to 8 bytes of one doubleword, and
 * aarch64 watches reads alone too. */
static void a64_hw_caps(pid_t pid, struct ptrace_hw_caps *caps)
{
	*caps = (struct ptrace_hw_caps){
		.n_break = slot_count(pid, NT_ARM_HW_BREAK),
		.n_watch = slot_count(pid, NT_ARM_HW_WATCH),
		.shared = false,
		.max_len = 8,
		.can_read_watch = true,
	};
}

static uint32_t watch_ctrl(const struct hw_slot *s)
{
	uint32_t lsc;
	unsigned int off = s->addr & 7;
	uint32_t bas = ((1u << s->len) - 1) << off;

	switch (s->kind) {
	case HW_READ: lsc = 1; break;
	case HW_WRITE: lsc = 2; break;
	default: lsc = 3; break;
	}
	return (bas & 0xff) << 5 | lsc << 3 | CTRL_EL0 | CTRL_ENABLE;
}

static int a64_hw_sync(struct thread *t)
{
	struct process *p = t->proc;
	const struct ptrace_hw_caps *c = &p->hw_caps;
	struct a64_hwdebug d;
	size_t head = offsetof(struct a64_hwdebug, regs);
	int err;

	/* Breakpoints: 4 bytes at a 4-aligned address (BAS 0xf). */
	memset(&d, 0, sizeof(d));
	for (unsigned int i = 0; i < c->n_break && i < 16; i++) {
		const struct hw_slot *s = &p->slots[i];
		if (!s->refs)
			continue;
		d.regs[i].addr = s->addr & ~3ull;
		d.regs[i].ctrl = 0xfu << 5 | CTRL_EL0 | CTRL_ENABLE;
	}
	if (c->n_break &&
	    (err = setregset(t->tid, NT_ARM_HW_BREAK, &d,
			     head + c->n_break * sizeof(d.regs[0]))) < 0)
		return err;
	/* Watchpoints: the doubleword and a byte mask within it. */
	memset(&d, 0, sizeof(d));
	for (unsigned int i = 0; i < c->n_watch && i < 16; i++) {
		const struct hw_slot *s = &p->slots[c->n_break + i];
		if (!s->refs)
			continue;
		d.regs[i].addr = s->addr & ~7ull;
		d.regs[i].ctrl = watch_ctrl(s);
	}
	if (c->n_watch &&
	    (err = setregset(t->tid, NT_ARM_HW_WATCH, &d,
			     head + c->n_watch * sizeof(d.regs[0]))) < 0)
		return err;
	return 0;
}

/*
 * The slot whose hit si_addr reports.  An execute slot matches its own
 * address.  A data access may start below the watched bytes (a 16-byte
 * stp over an 8-byte watch) and the address the CPU reports is then
 * somewhere in the access: a slot whose doubleword holds the address
 * wins, else the armed watch slot nearest above it (hw_slots_hit).
 */
static int a64_hw_fired(struct thread *t, const siginfo_t *si)
{
	if (si->si_code != TRAP_HWBKPT)
		return -ENOENT;
	return hw_slots_hit(t->proc->slots, &t->proc->hw_caps,
			    (uint64_t)(uintptr_t)si->si_addr, 8);
}

/* --- libthread_db ------------------------------------------------------- */

/* prgregset_t is the NT_PRSTATUS layout and prfpregset_t NT_FPREGSET's. */
static int a64_ps_getregs(pid_t lwp, void *regs, bool fp)
{
	return fp ? getregset(lwp, NT_FPREGSET, regs, sizeof(struct user_fpsimd_struct))
		  : getregset(lwp, NT_PRSTATUS, regs, sizeof(struct user_regs_struct));
}

static int a64_ps_setregs(pid_t lwp, const void *regs, bool fp)
{
	return fp ? setregset(lwp, NT_FPREGSET, regs, sizeof(struct user_fpsimd_struct))
		  : setregset(lwp, NT_PRSTATUS, regs, sizeof(struct user_regs_struct));
}

/* The thread pointer is TPIDR_EL0, whatever libthread_db's index. */
/* The virtual counter the in-process return pads read (CNTVCT_EL0,
 * readable at EL0 on Linux), and its rate. */
static uint64_t a64_counter_read(void)
{
	uint64_t v;

	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v));
	return v;
}

static uint64_t a64_counter_hz(void)
{
	uint64_t v;

	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(v));
	return v;
}

/* The generic timer's system counter has one rate on every CPU and counts
 * in every power state the kernel uses: recording pads stamp hits with
 * it (arch_pad_ring.tsc_time) rather than calling clock_gettime. */
static bool a64_counter_is_clock(void)
{
	return true;
}

static int a64_thread_area(pid_t lwp, int idx, uint64_t *base)
{
	(void)idx;
	return getregset(lwp, NT_ARM_TLS, base, sizeof(*base));
}

/* --- the keeper -------------------------------------------------------- */

/*
 * The keeper's SIGTRAP handler (ptrace_keeper_ops), position-independent,
 * at the start of its page (the record table at KEEPER_PAGE_TABLE, a
 * zeroed sigaction at KEEPER_PAGE_DFL).  x0 = signal, x1 = siginfo, x2 =
 * ucontext, x30 = the restorer; every register but x30 and sp may be
 * clobbered (rt_sigreturn reloads them all), and a system call changes
 * only x0.  The ucontext's uc_mcontext is the kernel's struct sigcontext
 * (fault_address, regs[31], sp, pc, pstate) at offset 176, after the
 * 128-byte sigset glibc reserves: pc at 440, pstate at 448 (asserted
 * below).  siginfo: si_code at 8, si_pid at 16, si_value at 24.
 *
 * A record's register is set only where it holds the record's only_if
 * value, when that is not 0 (the link register that may still hold the
 * return trampoline's address).  A BRK leaves the pc at the BRK, so a thread that trapped on a site the
 * keeper restored just returns and runs the program's instruction.  A
 * step the agent left comes as TRAP_TRACE, or, for a step over `svc`, as
 * a bare SIGTRAP (SI_USER from pid 0): PSTATE.SS is cleared in the
 * ucontext.  That alone does not disarm it: the kernel keeps
 * TIF_SINGLESTEP, so the keeper has already detached such threads
 * itself (step_sticks) before they run this.  Assembled with
 * aarch64-linux-gnu-as, words checked with aarch64-linux-gnu-objdump.
 */
static const uint32_t keeper_handler_words[] = {
	0xaa0103e9,	/*   0: mov x9, x1                       siginfo */
	0xaa0203ea,	/*   4: mov x10, x2                      ucontext */
	0xd2801648,	/*   8: mov x8, #178                     SYS_gettid */
	0xd4000001,	/*   c: svc #0 */
	0x2a0003eb,	/*  10: mov w11, w0                      tid */
	0x10001f6c,	/*  14: adr x12, h + 1024                the table */
	0xb940018d,	/*  18: ldr w13, [x12]                   records */
	0x9100418e,	/*  1c: add x14, x12, #16 */
	0x3400034d,	/*  20: 1: cbz w13, none */
	0xb94001cf,	/*  24: ldr w15, [x14]                   rec.tid */
	0x6b0b01ff,	/*  28: cmp w15, w11 */
	0x54000281,	/*  2c: b.ne next */
	0xf94005cf,	/*  30: ldr x15, [x14, #8]               rec.expect */
	0xf940dd50,	/*  34: ldr x16, [x10, #440]             uc pc */
	0xeb1001ff,	/*  38: cmp x15, x16 */
	0x54000201,	/*  3c: b.ne next */
	0xf94009cf,	/*  40: ldr x15, [x14, #16] */
	0xf900dd4f,	/*  44: str x15, [x10, #440]             pc = rec.new */
	0xf940e150,	/*  48: ldr x16, [x10, #448] */
	0x926afa10,	/*  4c: and x16, x16, #~(1 << 21) */
	0xf900e150,	/*  50: str x16, [x10, #448]             PSTATE.SS off */
	0xf9400dcf,	/*  54: ldr x15, [x14, #24]              register offset */
	0xb400010f,	/*  58: cbz x15, 2f */
	0xf94015d0,	/*  5c: ldr x16, [x14, #40]              rec.only_if */
	0xb4000090,	/*  60: cbz x16, 3f */
	0xf86f6951,	/*  64: ldr x17, [x10, x15] */
	0xeb11021f,	/*  68: cmp x16, x17 */
	0x54000061,	/*  6c: b.ne 2f                          it holds something else */
	0xf94011d0,	/*  70: 3: ldr x16, [x14, #32] */
	0xf82f6950,	/*  74: str x16, [x10, x15]              the register's value */
	0xd65f03c0,	/*  78: 2: ret */
	0x910101ce,	/*  7c: next: add x14, x14, #64 */
	0x510005ad,	/*  80: sub w13, w13, #1 */
	0x17ffffe7,	/*  84: b 1b */
	0xb940092f,	/*  88: none: ldr w15, [x9, #8]          si_code */
	0x310005ff,	/*  8c: cmn w15, #1                      SI_QUEUE */
	0x540000c1,	/*  90: b.ne 1f */
	0xf9400590,	/*  94: ldr x16, [x12, #8]               magic */
	0xf9400d31,	/*  98: ldr x17, [x9, #24]               si_value */
	0xeb11021f,	/*  9c: cmp x16, x17 */
	0x54000041,	/*  a0: b.ne 1f */
	0xd65f03c0,	/*  a4: ret                              the keeper's kick */
	0x710009ff,	/*  a8: 1: cmp w15, #2                   TRAP_TRACE */
	0x54000080,	/*  ac: b.eq step */
	0x350000ef,	/*  b0: cbnz w15, 2f                     SI_USER ... */
	0xb9401130,	/*  b4: ldr w16, [x9, #16]               ... from pid 0: a step over svc */
	0x350001d0,	/*  b8: cbnz w16, dfl */
	0xf940e150,	/*  bc: step: ldr x16, [x10, #448] */
	0x926afa10,	/*  c0: and x16, x16, #~(1 << 21) */
	0xf900e150,	/*  c4: str x16, [x10, #448]             PSTATE.SS off */
	0xd65f03c0,	/*  c8: ret */
	0x710005ff,	/*  cc: 2: cmp w15, #1                   TRAP_BRKPT */
	0x54000101,	/*  d0: b.ne dfl */
	0xf940dd50,	/*  d4: ldr x16, [x10, #440] */
	0xb9400211,	/*  d8: ldr w17, [x16]                   the word at pc */
	0x120b3e31,	/*  dc: and w17, w17, #0xffe0001f */
	0x52ba8410,	/*  e0: mov w16, #0xd4200000 */
	0x6b10023f,	/*  e4: cmp w17, w16 */
	0x54000040,	/*  e8: b.eq dfl                         a BRK: the program's own */
	0xd65f03c0,	/*  ec: ret                              a restored site: run it */
	0xd28000a0,	/*  f0: dfl: mov x0, #5                  SIGTRAP */
	0x10001761,	/*  f4: adr x1, h + 992                  zeroes: SIG_DFL */
	0xd2800002,	/*  f8: mov x2, #0 */
	0xd2800103,	/*  fc: mov x3, #8 */
	0xd28010c8,	/* 100: mov x8, #134                     SYS_rt_sigaction */
	0xd4000001,	/* 104: svc #0 */
	0xd2801588,	/* 108: mov x8, #172                     SYS_getpid */
	0xd4000001,	/* 10c: svc #0 */
	0x2a0b03e1,	/* 110: mov w1, w11 */
	0xd28000a2,	/* 114: mov x2, #5 */
	0xd2801068,	/* 118: mov x8, #131                     SYS_tgkill */
	0xd4000001,	/* 11c: svc #0                           pending until sigreturn */
	0xd65f03c0,	/* 120: ret */
	0xd2801168,	/* 124: restorer: mov x8, #139           SYS_rt_sigreturn */
	0xd4000001,	/* 128: svc #0 */
};

#define KEEPER_RESTORER 0x124
#define UC_PC 440
#define UC_PSTATE 448
#define UC_REGS 184
_Static_assert(offsetof(ucontext_t, uc_mcontext.pc) == UC_PC, "the handler's uc pc");
_Static_assert(offsetof(ucontext_t, uc_mcontext.pstate) == UC_PSTATE, "the handler's uc pstate");
_Static_assert(offsetof(ucontext_t, uc_mcontext.regs) == UC_REGS, "ucontext x0");
_Static_assert(offsetof(siginfo_t, si_code) == 8 && offsetof(siginfo_t, si_pid) == 16 &&
	       offsetof(siginfo_t, si_value) == 24, "the handler's siginfo fields");
_Static_assert(KEEPER_PAGE_TABLE == 1024 && KEEPER_PAGE_DFL == 992,
	       "the handler's adr operands");

/*
 * A pad's `brk #0; ldar w5, [x24]; cmp w5, #DONE; b.ne brk` (16 bytes,
 * aarch64-pad.c) becomes `movz w5, #DONE; str w5, [x20, #ready]; nop;
 * nop`: a thread in the pad runs on through it and frees its entry.  A
 * thread at the BRK runs the store; one past it goes past the four.
 */
static int a64_pad_open(uint8_t *out, size_t size, uint32_t ready_off)
{
	const uint32_t w[4] = {
		0x52800000u | PAD_DONE << 5 | 5,
		0xb9000000u | (ready_off / 4) << 10 | 20 << 5 | 5,
		0xd503201fu, 0xd503201fu,
	};

	if (size < sizeof(w) || (ready_off & 3) || ready_off >= 4 * 4096)
		return -ENOSPC;
	memcpy(out, w, sizeof(w));
	return (int)sizeof(w);
}

static int a64_pad_fix(uint64_t trap, uint64_t pc, uint64_t *new_pc)
{
	if (pc == trap)
		*new_pc = trap;
	else if (pc > trap && pc < trap + 16)
		*new_pc = trap + 16;
	else
		return 0;
	return 1;
}

/*
 * ipa_copy's one load, `ldrb w4, [x1, x3]` (agent/ipa/ipa-copy-aarch64.S),
 * becomes `b exit`: x3 still counts what was copied, which the exit
 * returns.  A thread stopped on the load's fault runs the branch
 * instead; one that comes later copies nothing more.
 */
static int a64_load_open(uint8_t *out, size_t size, uint64_t at, uint64_t to,
			size_t room)
{
	int64_t d = (int64_t)(to - at);
	uint32_t w;

	if (size < 4 || room < 4)
		return -ENOSPC;
	if ((d & 3) || d < -(1ll << 27) || d >= (1ll << 27))
		return -ERANGE;
	w = 0x14000000u | ((uint32_t)(d >> 2) & 0x3ffffff);	/* b to */
	memcpy(out, &w, 4);
	return 4;
}

/* x0..x30 (gdb 0-30) are uc_mcontext.regs[]; sp and pc are not taken. */
static int a64_uc_gpr_offset(int regnum)
{
	if (regnum < 0 || regnum > A64_LR)
		return -1;
	return UC_REGS + 8 * regnum;
}

const struct ptrace_arch_ops ptrace_arch_host = {
	.word_size = 8,
	.regcache_size = A64_REGCACHE,
	.detect_features = a64_detect_features,
	.fetch_gpr = a64_fetch_gpr,
	.fetch_rest = a64_fetch_rest,
	.flush = a64_flush,
	.peek_gpr = a64_peek_gpr,
	.is_general = a64_is_general,
	.load_pad = a64_load_pad,
	.load_record = a64_load_record,
	.pad_options = a64_pad_options,
	.hw_step = a64_hw_step,
	.trap_kind = a64_trap_kind,
	.hw_caps = a64_hw_caps,
	.hw_sync = a64_hw_sync,
	.hw_fired = a64_hw_fired,
	.hw_works = NULL,
	.ps_getregs = a64_ps_getregs,
	.ps_setregs = a64_ps_setregs,
	.thread_area = a64_thread_area,
	.ret_addr = PTRACE_RET_LINK,	/* BL and BLR set x30 */
	.ret_link_regnum = A64_LR,
	.counter_read = a64_counter_read,
	.counter_is_clock = a64_counter_is_clock,
	.counter_hz = a64_counter_hz,
	/*
	 * svc #0; x8 = number, x0..x5 arguments, x0 the result.  No restart
	 * register: arm64 decides a restart (pc back by 4, x0 = orig_x0)
	 * before the thread stops for the tracer, so a call injected at
	 * that stop runs as set, and the restored registers restart the
	 * program's own.  At syscall stops x8 holds the program's number.
	 */
	.syscall = {
		.insn = { 0x01, 0x00, 0x00, 0xd4 },
		.insn_len = 4,
		.nr_regnum = 8,
		.arg_regnum = { 0, 1, 2, 3, 4, 5 },
		.ret_regnum = 0,
		.restart_regnum = -1,
		.stop_nr_regnum = 8,
		.nr_mmap = SYS_mmap,
		.mmap_offset_shift = 0,
	},
	.keeper = {
		.handler = (const uint8_t *)keeper_handler_words,
		.handler_len = sizeof(keeper_handler_words),
		.restorer = KEEPER_RESTORER,
		.uc_gpr_offset = a64_uc_gpr_offset,
		.reg_only_if = true,	/* x30 only if it holds the trampoline */
		.slot_rewind = true,	/* aarch64-relocate.c: copies of several
					 * words write only the probed
					 * instruction's own registers */
		.step_sticks = true,	/* TIF_SINGLESTEP outlives the tracer */
		.pad_open = a64_pad_open,
		.pad_fix = a64_pad_fix,
		.load_open = a64_load_open,
	},
};
