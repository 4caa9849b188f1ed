/*
 * arm-ptrace.c - 32-bit ARM registers, traps and debug registers through
 * ptrace: the arm `struct ptrace_arch_ops` (see ptrace-arch.h).
 *
 * The gdb block (arch/arm: r0..r15, cpsr, d0..d31, fpscr; the
 * arm-with-neon description) comes from two requests:
 *   PTRACE_GETREGS     struct pt_regs: uregs[18] = r0..r15, cpsr, ORIG_r0
 *   PTRACE_GETVFPREGS  struct user_vfp: d0..d31 (64-bit), fpscr
 * A probe hit needs the first alone: one PTRACE_GETREGS, and one
 * PTRACE_SETREGS when it changed something.  ORIG_r0 is not in gdb's
 * block and goes back to the kernel as it came.
 *
 * Traps: Linux's ARM breakpoints are undefined instructions the kernel
 * recognises (udf #16 in A32, udf #1 and the T32 udf.w in Thumb; see
 * arch/arm/arm.h ARM_BKPT_*); each raises SIGTRAP with si_code
 * TRAP_BRKPT and the pc at the instruction itself (arch/arm/kernel/
 * ptrace.c, ptrace_break).  There is no single-step request (hw_step
 * NULL): the agent steps with temporary breakpoints (step.c), whose
 * trap is a TRAP_BRKPT too.  The debug registers' hits come as
 * TRAP_HWBKPT (ptrace_hbptriggered), si_addr the address that matched.
 *
 * Debug registers: PTRACE_GETHBPREGS / SETHBPREGS, one 32-bit word per
 * request.  Index 0 is the info word: number of breakpoint slots (bits
 * 7:0), of watchpoint slots (15:8), the longest watch (23:16, 4 or 8
 * bytes) and the debug architecture (31:24, 0 = none).  Breakpoint slot
 * i is the pair of indexes 2i+1 (address) and 2i+2 (control); watchpoint
 * slot i is -(2i+1) and -(2i+2).  The control word (the kernel's
 * arch_hw_breakpoint_ctrl): enable (bit 0), privilege (bits 2:1, 2 =
 * user), type (bits 4:3: 0 execute, 1 load, 2 store, 3 both) and the
 * byte-address select (bits 12:5, one bit per byte of the aligned word:
 * 0xf an A32 instruction, 0x3 or 0xc a Thumb one).  The kernel accepts a
 * control word only with a matching address, so a slot is written
 * address first.  A slot is disabled by a control word with the enable
 * bit clear but its other fields valid: the kernel decodes the length
 * and type of every control word it is given, and refuses 0 (EINVAL).
 */
#define LOG_DOMAIN "regs"
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <setjmp.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/arm-keeper-handler.h"
#include "agent/hw-slots.h"
#include "agent/log.h"
#include "agent/ptrace-arch.h"
#include "arch/arm/arm.h"

/* The kernel's struct pt_regs (uregs[]) and struct user_vfp. */
#define ARM_UREGS 18
#define ARM_ORIG_R0 17
struct arm_kgpr {
	uint32_t uregs[ARM_UREGS];
};

struct arm_kvfp {
	uint64_t d[32];
	uint32_t fpscr;
};

/*
 * The thread's register cache holds, after the gdb block (328 bytes):
 *   CACHE_KGPR  the pt_regs as the kernel last gave or took them
 *   CACHE_KVFP  the user_vfp likewise
 * A flush builds the kernel's views from the block and writes each one
 * only if it differs from what the kernel has.
 */
#define CACHE_KGPR 512
#define CACHE_KVFP 640
#define ARM_REGCACHE 1024
_Static_assert(CACHE_KGPR + sizeof(struct arm_kgpr) <= CACHE_KVFP,
	       "the kernel's general registers must fit");
_Static_assert(CACHE_KVFP + sizeof(struct arm_kvfp) <= ARM_REGCACHE,
	       "the kernel's vfp registers must fit");

static struct arm_kgpr *kernel_gpr(struct thread *t)
{
	return (struct arm_kgpr *)(t->regcache + CACHE_KGPR);
}

static struct arm_kvfp *kernel_vfp(struct thread *t)
{
	return (struct arm_kvfp *)(t->regcache + CACHE_KVFP);
}

static inline uint8_t *reg_ptr(uint8_t *blk, int regnum)
{
	return blk + agent.arch->regs[regnum].offset;
}

static int preq(int req, pid_t tid, long addr, void *data)
{
	return ptrace((enum __ptrace_request)req, tid, (void *)addr, data) < 0 ? -errno : 0;
}

static unsigned int arm_detect_features(pid_t tid)
{
	(void)tid;
	return 0;	/* one description: core, vfp d0-d31, neon */
}

static void gpr_from_kernel(uint8_t *blk, const struct arm_kgpr *k)
{
	for (int i = 0; i <= ARM_CPSR; i++)
		memcpy(reg_ptr(blk, ARM_R0 + i), &k->uregs[i], 4);
}

static void gpr_to_kernel(const uint8_t *blk, struct arm_kgpr *k)
{
	for (int i = 0; i <= ARM_CPSR; i++)
		memcpy(&k->uregs[i], reg_ptr((uint8_t *)blk, ARM_R0 + i), 4);
}

static void vfp_from_kernel(uint8_t *blk, const struct arm_kvfp *v)
{
	for (int i = 0; i < 32; i++)
		memcpy(reg_ptr(blk, ARM_D0 + i), &v->d[i], 8);
	memcpy(reg_ptr(blk, ARM_FPSCR), &v->fpscr, 4);
}

static void vfp_to_kernel(const uint8_t *blk, struct arm_kvfp *v)
{
	for (int i = 0; i < 32; i++)
		memcpy(&v->d[i], reg_ptr((uint8_t *)blk, ARM_D0 + i), 8);
	memcpy(&v->fpscr, reg_ptr((uint8_t *)blk, ARM_FPSCR), 4);
}

static int arm_fetch_gpr(struct thread *t)
{
	int err = preq(PTRACE_GETREGS, t->tid, 0, kernel_gpr(t));

	if (err < 0)
		return err;
	gpr_from_kernel(t->regcache, kernel_gpr(t));
	return 0;
}

static int arm_fetch_rest(struct thread *t)
{
	int err = preq(PTRACE_GETVFPREGS, t->tid, 0, kernel_vfp(t));

	if (err < 0)
		return err;
	vfp_from_kernel(t->regcache, kernel_vfp(t));
	return 0;
}

static int arm_flush(struct thread *t)
{
	struct arm_kgpr k = *kernel_gpr(t);
	int err;

	gpr_to_kernel(t->regcache, &k);
	if (t->regs_pad || memcmp(&k, kernel_gpr(t), sizeof(k)) != 0) {
		if ((err = preq(PTRACE_SETREGS, t->tid, 0, &k)) < 0)
			return err;
		*kernel_gpr(t) = k;
	}
	t->regs_pad = false;
	if (t->regs_valid) {
		struct arm_kvfp v = *kernel_vfp(t);

		vfp_to_kernel(t->regcache, &v);
		if (memcmp(&v, kernel_vfp(t), sizeof(v)) != 0) {
			if ((err = preq(PTRACE_SETVFPREGS, t->tid, 0, &v)) < 0)
				return err;
			*kernel_vfp(t) = v;
		}
	}
	return 0;
}

static int arm_peek_gpr(pid_t tid, unsigned int regnum, uint64_t *value)
{
	struct arm_kgpr k;
	int err;

	if (regnum > ARM_CPSR)
		return -EINVAL;
	if ((err = preq(PTRACE_GETREGS, tid, 0, &k)) < 0)
		return err;
	*value = k.uregs[regnum];
	return 0;
}

static bool arm_is_general(unsigned int regnum)
{
	return regnum <= ARM_CPSR;
}

/*
 * The registers a jump pad saved for a hit (arch/arm/arm-pad.c): `frame`
 * holds r0-r12, sp, lr, pc (the probe, bit 0 clear) and cpsr as 64-bit
 * words, cpsr with the flags `mrs` sees (N, Z, C, V, Q, GE) and T for a
 * Thumb site.  The rest of cpsr (mode, E, A, I, F; ITSTATE is 0 at a
 * probe a pad serves) is the kernel's, read once if this thread has not
 * been read yet; ORIG_r0 too.  d0-d31 and fpscr of a stopped thread are
 * the kernel's, read when asked for.  The thread's own general registers
 * are the pad's: t->regs_pad makes a flush write them all.
 */
#define CPSR_FROM_PAD (0xf80f0000u | ARM_PSR_T)	/* NZCVQ, GE, T */
#define CPSR_USER 0x10u

static void frame_to_kernel(struct arm_kgpr *k, const uint64_t *frame)
{
	for (int i = 0; i <= ARM_PC; i++)
		k->uregs[i] = (uint32_t)frame[i];
	k->uregs[ARM_CPSR] = (k->uregs[ARM_CPSR] & ~(CPSR_FROM_PAD | ARM_PSR_IT_MASK)) |
			     ((uint32_t)frame[ARM_CPSR] & CPSR_FROM_PAD);
}

static int arm_load_pad(struct thread *t, const uint64_t *frame,
			const uint8_t *image, unsigned int image_form,
			const uint64_t *bases)
{
	struct arm_kgpr k;
	int err;

	(void)image;
	(void)image_form;
	(void)bases;
	regs_invalidate(t);
	if (kernel_gpr(t)->uregs[ARM_CPSR] == 0 &&
	    (err = preq(PTRACE_GETREGS, t->tid, 0, kernel_gpr(t))) < 0)
		return err;
	k = *kernel_gpr(t);
	frame_to_kernel(&k, frame);
	gpr_from_kernel(t->regcache, &k);
	t->gpr_valid = true;
	t->regs_pad = true;
	return 0;
}

/*
 * A record of the ring, which no stopped thread stands behind: its cpsr
 * is a user-mode one, ORIG_r0 0; the collector's image holds d0-d31 and
 * fpscr at 256, and without one they read as their initial state, zero.
 */
static int arm_load_record(uint8_t *blk, unsigned int features,
			   const uint64_t *frame, const uint8_t *image,
			   unsigned int image_form, const uint64_t *bases)
{
	struct arm_kgpr k;
	struct arm_kvfp v;

	(void)features;
	(void)image_form;
	(void)bases;
	memset(&k, 0, sizeof(k));
	k.uregs[ARM_CPSR] = CPSR_USER;
	frame_to_kernel(&k, frame);
	gpr_from_kernel(blk, &k);
	memset(&v, 0, sizeof(v));
	if (image) {
		memcpy(v.d, image, sizeof(v.d));
		memcpy(&v.fpscr, image + 256, 4);
	}
	vfp_from_kernel(blk, &v);
	return 0;
}

/* No choices: the pads' layout is fixed (arm-pad.c). */
static void arm_pad_options(struct process *p, unsigned int *image_form, bool *tp_read)
{
	(void)p;
	*image_form = 0;	/* its one form */
	*tp_read = true;	/* mrc TPIDRURO */
}

/* --- traps ---------------------------------------------------------------- */

static enum trap_kind arm_trap_kind(const siginfo_t *si)
{
	switch (si->si_code) {
	case TRAP_BRKPT:
		return TRAP_KIND_BREAKPOINT;	/* a udf breakpoint, any set */
	case TRAP_HWBKPT:
		return TRAP_KIND_HW;
	default:
		return TRAP_KIND_OTHER;		/* no hardware step to report */
	}
}

/* --- debug registers ------------------------------------------------------ */

#define HBP_ENABLE 1u
#define HBP_USER (2u << 1)
/* A disabled slot: a word's byte mask and the slot's type, not enabled. */
#define HBP_OFF_BREAK (0xfu << 5 | HBP_USER)
#define HBP_OFF_WATCH (0xfu << 5 | 3u << 3 | HBP_USER)

static int hbp_get(pid_t tid, long idx, uint32_t *v)
{
	unsigned long w = 0;
	int err = preq(PTRACE_GETHBPREGS, tid, idx, &w);

	*v = (uint32_t)w;
	return err;
}

static int hbp_set(pid_t tid, long idx, uint32_t v)
{
	unsigned long w = v;

	return preq(PTRACE_SETHBPREGS, tid, idx, &w);
}

/*
 * The counts from the info word.  A watch slot covers one aligned word
 * (4 bytes; the kernel takes 8 only where the debug architecture has
 * wide watchpoints, and the byte mask here is for a word).  Read
 * watchpoints exist (type load).
 */
static void arm_hw_caps(pid_t pid, struct ptrace_hw_caps *caps)
{
	uint32_t info = 0;

	memset(caps, 0, sizeof(*caps));
	if (hbp_get(pid, 0, &info) < 0 || (info >> 24) == 0)
		return;		/* no debug architecture: no slots */
	caps->n_break = info & 0xff;
	caps->n_watch = (info >> 8) & 0xff;
	if (caps->n_break > 16)
		caps->n_break = 16;
	if (caps->n_watch > 16)
		caps->n_watch = 16;
	caps->shared = false;
	caps->max_len = 4;
	caps->can_read_watch = true;
}

static uint32_t watch_ctrl(const struct hw_slot *s)
{
	uint32_t type;
	uint32_t bas = ((1u << s->len) - 1) << (s->addr & 3);

	switch (s->kind) {
	case HW_READ: type = 1; break;
	case HW_WRITE: type = 2; break;
	default: type = 3; break;
	}
	return (bas & 0xf) << 5 | type << 3 | HBP_USER | HBP_ENABLE;
}

/* An execute slot: the halfword or word the instruction starts at.  gdb
 * gives the address without the Thumb bit; a halfword-aligned address
 * that is not word-aligned is Thumb code (BAS 0xc), a word-aligned one
 * takes the whole word (0xf), which matches both an A32 instruction and
 * a Thumb one at its start. */
static uint32_t break_ctrl(const struct hw_slot *s)
{
	uint32_t bas = (s->addr & 2) ? 0xcu : 0xfu;

	return bas << 5 | HBP_USER | HBP_ENABLE;
}

static int arm_hw_sync(struct thread *t)
{
	struct process *p = t->proc;
	const struct ptrace_hw_caps *c = &p->hw_caps;
	int err;

	for (unsigned int i = 0; i < c->n_break; i++) {
		const struct hw_slot *s = &p->slots[i];
		long a = 2 * (long)i + 1;
		if (!s->refs) {
			if ((err = hbp_set(t->tid, a + 1, HBP_OFF_BREAK)) < 0)
				return err;
			continue;
		}
		if ((err = hbp_set(t->tid, a, (uint32_t)s->addr & ~3u)) < 0 ||
		    (err = hbp_set(t->tid, a + 1, break_ctrl(s))) < 0)
			return err;
	}
	for (unsigned int i = 0; i < c->n_watch; i++) {
		const struct hw_slot *s = &p->slots[c->n_break + i];
		long a = -(2 * (long)i + 1);
		if (!s->refs) {
			if ((err = hbp_set(t->tid, a - 1, HBP_OFF_WATCH)) < 0)
				return err;
			continue;
		}
		if ((err = hbp_set(t->tid, a, (uint32_t)s->addr & ~3u)) < 0 ||
		    (err = hbp_set(t->tid, a - 1, watch_ctrl(s))) < 0)
			return err;
	}
	return 0;
}

/*
 * The slot that fired.  The kernel names it in si_errno (ptrace_hbptriggered:
 * the number of its address register, 2i+1 for breakpoint i and -(2i+1)
 * for watchpoint i); else by si_addr: an execute slot its word, a watch
 * slot the word it watches, else the armed watch slot nearest above the
 * address (an access that starts below the watched bytes; hw_slots_hit).
 */
static int arm_hw_fired(struct thread *t, const siginfo_t *si)
{
	const struct process *p = t->proc;
	const struct ptrace_hw_caps *c = &p->hw_caps;

	if (si->si_code != TRAP_HWBKPT)
		return -ENOENT;
	int num = si->si_errno;
	if (num > 0 && (num & 1) && (unsigned int)(num - 1) / 2 < c->n_break &&
	    p->slots[(num - 1) / 2].refs)
		return (num - 1) / 2;
	if (num < 0 && (-num & 1) && (unsigned int)(-num - 1) / 2 < c->n_watch &&
	    p->slots[c->n_break + (-num - 1) / 2].refs)
		return (int)c->n_break + (-num - 1) / 2;
	return hw_slots_hit(p->slots, c, (uint32_t)(uintptr_t)si->si_addr, 4);
}

/* --- libthread_db ---------------------------------------------------------- */

/* prgregset_t is the 18-word pt_regs; prfpregset_t the FPA's struct
 * user_fpregs (PTRACE_GETFPREGS), as glibc's arm procfs.h has them. */
static int arm_ps_getregs(pid_t lwp, void *regs, bool fp)
{
	return preq(fp ? PTRACE_GETFPREGS : PTRACE_GETREGS, lwp, 0, regs);
}

static int arm_ps_setregs(pid_t lwp, const void *regs, bool fp)
{
	return preq(fp ? PTRACE_SETFPREGS : PTRACE_SETREGS, lwp, 0, (void *)regs);
}

/*
 * The generic timer's virtual counter the in-process return pads and the
 * recording pads read (CNTVCT, mrrc p15, 1; its rate CNTFRQ), where the
 * kernel lets user mode read it (CNTKCTL.PL0VCTEN: Linux sets it where
 * its vDSO reads the counter, as the armmp kernel does under qemu's
 * cortex-a15).  Elsewhere the instruction is undefined: the agent tries
 * it once under a SIGILL handler, and without it returns trap
 * (pad-ret.c) and recording pads ask the kernel for the time.  The
 * agent runs on the tracee's machine, so its reading is the pads'.
 */
static sigjmp_buf counter_jmp;

static void counter_sigill(int sig)
{
	(void)sig;
	siglongjmp(counter_jmp, 1);
}

static uint64_t arm_counter_read(void)
{
	uint32_t lo, hi;

	__asm__ volatile("isb\n\tmrrc p15, 1, %0, %1, c14" : "=r"(lo), "=r"(hi));
	return (uint64_t)hi << 32 | lo;
}

static uint64_t arm_counter_hz(void)
{
	uint32_t v;

	__asm__ volatile("mrc p15, 0, %0, c14, c0, 0" : "=r"(v));
	return v;
}

static bool arm_counter_usable(void)
{
	static int usable = -1;
	struct sigaction sa, old;
	volatile uint64_t hz = 0;

	if (usable >= 0)
		return usable;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = counter_sigill;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGILL, &sa, &old) < 0)
		return (usable = 0);
	if (!sigsetjmp(counter_jmp, 1)) {
		(void)arm_counter_read();
		hz = arm_counter_hz();
	}
	sigaction(SIGILL, &old, NULL);
	usable = hz != 0;
	if (!usable)
		debug("the CPU's virtual counter is not readable in user mode: "
		      "returns trap");
	return usable;
}

/* The thread pointer is TPIDRURO, whatever libthread_db's index. */
static int arm_thread_area(pid_t lwp, int idx, uint64_t *base)
{
	unsigned long tp = 0;
	int err;

	(void)idx;
	if ((err = preq(PTRACE_GET_THREAD_AREA, lwp, 0, &tp)) < 0)
		return err;
	*base = tp;
	return 0;
}

/* --- the keeper ------------------------------------------------------------ */

/*
 * The keeper's SIGTRAP handler is in arm-keeper-handler.h (shared with
 * its test, tests/keeper/arm-keeper-handler.sh): the ucontext and
 * siginfo offsets it uses are glibc's here.
 */
_Static_assert(offsetof(ucontext_t, uc_mcontext.arm_r0) == ARM_KEEPER_UC_R0, "ucontext r0");
_Static_assert(offsetof(ucontext_t, uc_mcontext.arm_pc) == ARM_KEEPER_UC_PC, "the handler's uc pc");
_Static_assert(offsetof(ucontext_t, uc_mcontext.arm_cpsr) == ARM_KEEPER_UC_CPSR, "the handler's uc cpsr");
_Static_assert(offsetof(siginfo_t, si_code) == 8 && offsetof(siginfo_t, si_pid) == 12 &&
	       offsetof(siginfo_t, si_value) == 20, "the handler's siginfo fields");
_Static_assert(KEEPER_PAGE_TABLE == 1024 && KEEPER_PAGE_DFL == 992,
	       "the handler's add operands");
_Static_assert(sizeof(arm_keeper_handler) == ARM_KEEPER_RESTORER + 8,
	       "the restorer is the handler's last two words");

/* r0..r14 (gdb 0-14) are uc_mcontext's arm_r0.. arm_lr; the pc is not taken. */
/*
 * A pad's hand-off wait (arch/arm/arm-pad.c: `udf #16; ldr r7, [r11];
 * dmb; cmp r7, #PAD_DONE; bne udf`, five A32 words) becomes five nops:
 * what follows frees the entry (ready, then owner) and goes on through
 * the pad.  A thread stopped anywhere in those words runs on from its
 * pc; one whose trap the agent never took gets the SIGTRAP, and the
 * handler, finding no breakpoint at pc any more, returns onto the nop.
 */
static int arm_pad_open(uint8_t *out, size_t size, uint32_t ready_off)
{
	static const uint32_t nop = 0xe320f000u;

	(void)ready_off;
	if (size < 5 * sizeof(nop))
		return -ENOSPC;
	for (int i = 0; i < 5; i++)
		memcpy(out + 4 * i, &nop, 4);
	return 5 * (int)sizeof(nop);
}

/*
 * ipa_copy's one load (agent/ipa/ipa-copy-arm.S: `ldrb r12, [r1, r3]`,
 * A32, 4 bytes) becomes `b exit`: r3 still counts what was copied, so
 * the exit returns that, and the rest reads as unavailable.
 */
static int arm_load_open(uint8_t *out, size_t size, uint64_t at, uint64_t to,
			size_t room)
{
	int64_t rel = (int64_t)to - (int64_t)at - 8;
	uint32_t b;

	if (size < 4 || room < 4)
		return -ENOSPC;
	if ((at & 3) || (rel & 3) || rel < -(1ll << 25) || rel >= (1ll << 25))
		return -ERANGE;
	b = 0xea000000u | ((uint32_t)(rel >> 2) & 0xffffffu);
	memcpy(out, &b, 4);
	return 4;
}

static int arm_uc_gpr_offset(int regnum)
{
	if (regnum < 0 || regnum > ARM_LR)
		return -1;
	return ARM_KEEPER_UC_R0 + 4 * regnum;
}

const struct ptrace_arch_ops ptrace_arch_host = {
	.word_size = 4,
	.regcache_size = ARM_REGCACHE,
	.detect_features = arm_detect_features,
	.fetch_gpr = arm_fetch_gpr,
	.fetch_rest = arm_fetch_rest,
	.flush = arm_flush,
	.peek_gpr = arm_peek_gpr,
	.is_general = arm_is_general,
	.load_pad = arm_load_pad,
	.load_record = arm_load_record,
	.pad_options = arm_pad_options,
	.hw_step = NULL,		/* software steps: step.c */
	.trap_kind = arm_trap_kind,
	.hw_caps = arm_hw_caps,
	.hw_sync = arm_hw_sync,
	.hw_fired = arm_hw_fired,
	.hw_works = NULL,
	.ps_getregs = arm_ps_getregs,
	.ps_setregs = arm_ps_setregs,
	.thread_area = arm_thread_area,
	/* BL and BLX set lr, with the Thumb bit of a Thumb caller.  The
	 * return trampoline (an A32 udf at a word-aligned address) is
	 * entered in ARM state by the function's bx lr or pop {pc}, and
	 * retprobe.c puts the caller's set back from bit 0 of the real
	 * address (flags_isa_bit). */
	.ret_addr = PTRACE_RET_LINK,
	.ret_link_regnum = ARM_LR,
	.counter_read = arm_counter_read,
	.counter_hz = arm_counter_hz,
	.counter_usable = arm_counter_usable,
	/* The system counter has one rate and counts in every power state:
	 * recording pads stamp hits with it wherever user mode reads it. */
	.counter_is_clock = arm_counter_usable,
	/*
	 * svc #0 in A32 (the injected call runs in ARM state: syscall.c
	 * clears cpsr.T and ITSTATE for it, flags_clear); r7 = number (EABI),
	 * r0..r5 arguments, r0 the result.  No restart register: like
	 * arm64, the kernel decides a restart (pc back, r0 = ORIG_r0) in
	 * do_signal before the thread stops for the tracer, and putting the
	 * registers back restarts the program's own call.  At syscall stops
	 * r7 holds the program's number.  mmap is mmap2: the offset in
	 * 4096-byte units.
	 */
	.flags_isa_bit = ARM_PSR_T,
	.syscall = {
		.insn = { 0x00, 0x00, 0x00, 0xef },
		.insn_len = 4,
		.nr_regnum = 7,
		.arg_regnum = { 0, 1, 2, 3, 4, 5 },
		.ret_regnum = 0,
		.restart_regnum = -1,
		.stop_nr_regnum = 7,
		.nr_mmap = SYS_mmap2,
		.mmap_offset_shift = 12,
		.flags_clear = ARM_PSR_T | ARM_PSR_IT_MASK,
	},
	.keeper = {
		.handler = (const uint8_t *)arm_keeper_handler,
		.handler_len = sizeof(arm_keeper_handler),
		.restorer = ARM_KEEPER_RESTORER,
		.uc_gpr_offset = arm_uc_gpr_offset,
		.reg_only_if = true,	/* lr only if it holds the trampoline */
		.slot_rewind = false,	/* one instruction, then the branch
					 * back or the breakpoint */
		.step_sticks = false,	/* no hardware step */
		.pad_open = arm_pad_open,
		/* pad_fix: none needed, see arm_pad_open. */
		.load_open = arm_load_open,
	},
};
