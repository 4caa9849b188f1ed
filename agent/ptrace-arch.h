/*
 * ptrace-arch.h - the whole boundary between the agent and one CPU's
 * ptrace interface.
 *
 * arch/ knows instructions and the register file as gdb sees it
 * (struct arch_ops); it makes no system calls.  What remains per arch on
 * the agent's side is how the kernel hands those registers over, how a
 * thread is made to run a system call or one instruction, what a SIGTRAP
 * means, and how debug registers are programmed.  That is this struct:
 * one `const struct ptrace_arch_ops` per arch, in agent/<arch>-ptrace.c,
 * of which the build links the host's alone (agent/local.am, configure's
 * AGENT_ARCH).  The agent reaches it as `agent.ptrace` and nowhere else.
 *
 * The register cache.  Each thread has `regcache_size` bytes: the gdb
 * register block (arch_ops.regs[] offsets, regblock_size_for(features)
 * bytes) at offset 0, and after it whatever the arch keeps to convert
 * (the kernel's own copies, to write back only what changed).  The
 * agent-neutral side (regs.c) tracks validity: fetch_gpr fills the
 * general registers, fetch_rest the others, flush writes back; none of
 * them is called when its work is already done.
 */
#ifndef PROBE_PTRACE_ARCH_H
#define PROBE_PTRACE_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

struct process;
struct thread;

/* What stopped a thread with SIGTRAP, from its siginfo (trap_kind). */
enum trap_kind {
	TRAP_KIND_BREAKPOINT,	/* the breakpoint instruction (arch_ops.bp_insn):
				   look up pc - bp_pc_after_trap; no hardware
				   point fired, no step ended */
	TRAP_KIND_STEP,		/* a single step ended (a hardware point may
				   have fired at the same time) */
	TRAP_KIND_HW,		/* a hardware breakpoint or watchpoint fired */
	TRAP_KIND_OTHER,	/* none of those: a SIGTRAP sent by kill(),
				   raise(), an exec... */
};

/*
 * Where a call leaves the return address, as the callee's first
 * instruction finds it (ptrace_arch_ops.ret_addr).
 */
enum ptrace_ret_addr {
	PTRACE_RET_NONE,	/* not handled: return probes are refused */
	PTRACE_RET_STACK,	/* the word at [sp], popped by the return
				   (x86-64): sp after the return is sp at
				   the entry + 8 */
	PTRACE_RET_LINK,	/* the link register (aarch64 x30): sp after
				   the return is sp at the entry; the callee
				   may save it anywhere in its frame */
};

#define PTRACE_SYSCALL_INSN_MAX 8

/*
 * How a thread is made to run a system call (syscall.c), and what the
 * kernel's stops say about the program's own.  Registers are gdb regnums.
 */
struct ptrace_syscall_abi {
	uint8_t insn[PTRACE_SYSCALL_INSN_MAX];	/* the system call instruction */
	size_t insn_len;
	int nr_regnum;		/* takes the call's number */
	int arg_regnum[6];	/* take its arguments */
	int ret_regnum;		/* holds its result, -errno on failure */
	/* Set to -1 so that the kernel restarts no system call the thread
	 * was stopped in (x86-64 orig_rax); -1 when the arch has none. */
	int restart_regnum;
	/* restart_syscall's number, for a call the kernel would restart
	 * with it (with restart_regnum). */
	long nr_restart_syscall;
	/* Holds the program's call number at syscall-entry and -exit stops
	 * (x86-64 orig_rax: rax is the result at exit). */
	int stop_nr_regnum;
	/* mmap: its number and the shift of its offset argument, 0 for a
	 * byte offset, 12 for mmap2's 4096-byte units (32-bit ARM). */
	long nr_mmap;
	unsigned int mmap_offset_shift;
	/* Bits of arch_ops.flags_regnum cleared while the call runs, so that
	 * `insn` runs in the instruction set it is encoded for (32-bit ARM:
	 * cpsr.T and ITSTATE, for an A32 svc; the entry point of a Thumb
	 * program then gives the next 4-aligned address for the site); 0
	 * where the arch has one instruction set. */
	uint64_t flags_clear;
};

/* The debug registers of the CPU, for gdb's Z1-Z4 (breakpoint.c). */
struct ptrace_hw_caps {
	unsigned int n_break;	/* slots for hardware breakpoints */
	unsigned int n_watch;	/* slots for watchpoints, after those */
	bool shared;		/* n_break slots hold either (x86 DR0-3);
				   n_watch is then ignored */
	unsigned int max_len;	/* bytes one slot covers at most, a power of
				   two; each piece is aligned to its length */
	bool can_read_watch;	/* read-only watchpoints (Z3) */
};

/*
 * What the keeper (keeper.c, doc/keeper.md) needs of the arch to put a
 * program back in order after the agent died.  The handler page it maps
 * in the program is laid out by keeper.c: the handler's code at 0, the
 * sigaction given to rt_sigaction at 512, a zeroed sigaction (SIG_DFL)
 * at KEEPER_PAGE_DFL, and at KEEPER_PAGE_TABLE the records: u32 count,
 * u32 0, u64 the keeper's magic, then `count` records of 64 bytes: u32
 * tid, u32 0, u64 expected pc, u64 new pc, u64 byte offset in the
 * ucontext of a general register to set (0: none), u64 its value, u64
 * only_if: set the register only where it holds this value (0: always;
 * honoured where reg_only_if says so).
 */
#define KEEPER_PAGE_DFL 992
#define KEEPER_PAGE_TABLE 1024

struct ptrace_keeper_ops {
	/*
	 * The SIGTRAP handler (SA_SIGINFO), position-independent machine
	 * code that reaches the table and the zeroed sigaction pc-relatively.
	 * It runs in each thread released by the agent's death and must:
	 * apply a record whose tid and expected pc are the thread's (pc, the
	 * register, and disarm a single step); return on the keeper's kick
	 * (SI_QUEUE, si_value = magic); disarm a single step the agent left;
	 * return to re-run a restored site that trapped (arch_ops.bp_insn no
	 * longer there); otherwise put SIG_DFL back and raise SIGTRAP again.
	 * NULL: the arch has no keeper, the agent keeps PTRACE_O_EXITKILL.
	 */
	const uint8_t *handler;
	size_t handler_len;
	size_t restorer;	/* offset in it of the rt_sigreturn restorer */

	/* Byte offset in the handler's ucontext of gdb general register
	 * `regnum` (a slot's scratch register), or -1. */
	int (*uc_gpr_offset)(int regnum);

	/* The handler honours a record's only_if (above); false: the keeper
	 * never asks it to. */
	bool reg_only_if;

	/*
	 * A thread stopped anywhere inside a slot's copy, not only at its
	 * start, goes back to the probed instruction: every instruction of a
	 * multi-instruction copy writes only registers the probed
	 * instruction writes itself, and no memory (aarch64-relocate.c).
	 * false: only a thread at the copy's start or end is moved.
	 */
	bool slot_rewind;

	/*
	 * The kernel leaves a thread's single step armed when its tracer
	 * dies, and the thread cannot disarm it itself (arm64: TIF_SINGLESTEP
	 * sets MDSCR_EL1.SS at every return to EL0 and the handler's first
	 * instruction traps again, which kills it).  The keeper then stops
	 * each thread the agent may have left stepping with a SIGSTOP it
	 * queues before the release, and, once the process has stopped,
	 * disarms it with PTRACE_SEIZE and PTRACE_DETACH and continues the
	 * process.  false (x86-64): the handler clears the trap flag.
	 */
	bool step_sticks;

	/*
	 * Jump pads (NULL where the arch has none).  pad_open writes the
	 * code that replaces a pad's trap and check: a store of PAD_DONE to
	 * the entry's ready word at `ready_off` from the pad's base register,
	 * so a thread in the pad runs on; it returns its length or -ENOSPC.
	 * pad_fix moves a thread stopped at `pc` in the trap at `trap` to
	 * where the store leaves it: 1 and *new_pc, or 0 when pc is not
	 * there.
	 */
	int (*pad_open)(uint8_t *out, size_t size, uint32_t ready_off);
	int (*pad_fix)(uint64_t trap, uint64_t pc, uint64_t *new_pc);
	/*
	 * Loads that may fault ([at, at + room): the in-process collector's,
	 * x86-64's thread pointer read as %fs:0) become a jump to where a
	 * fault there goes on, `to`: a thread the agent had stopped on a
	 * fault resumes there, and one that gets there later reads nothing
	 * (the collector's values are unavailable, the thread's id comes
	 * from the kernel) instead of taking a SIGSEGV no one fixes up.
	 * Returns the length written, or -errno when no jump fits; NULL
	 * where the arch has no collector.
	 */
	int (*load_open)(uint8_t *out, size_t size, uint64_t at, uint64_t to,
			size_t room);
};

struct ptrace_arch_ops {
	/* Bytes of the traced program's pointers and longs, and so of its
	 * auxv, _DYNAMIC and link_map words: 8, or 4 for an ELFCLASS32
	 * program (32-bit ARM). */
	unsigned int word_size;

	/* Bytes of a thread's register cache: at least the largest gdb
	 * block the arch has, plus the arch's private part. */
	size_t regcache_size;

	/*
	 * The arch_regset_feature bits of the CPU and kernel, found with
	 * thread `tid` (stopped, or the agent itself for a target.xml
	 * asked before any program runs).  Never fails: 0 = base set.
	 */
	unsigned int (*detect_features)(pid_t tid);

	/*
	 * The arch's own environment variables (doc/probe-agent.1,
	 * ENVIRONMENT), read once at start-up, before any program runs.
	 * Returns 0, or -EINVAL with the reason in `why`: the agent exits.
	 * NULL: none.
	 */
	int (*read_env)(char *why, size_t whylen);

	/*
	 * Fills the general registers of the block (those is_general()
	 * names) from the kernel, in as few system calls as the arch can
	 * (a probe hit needs nothing else).  Returns 0 or -errno (-ESRCH:
	 * the thread is gone).
	 */
	int (*fetch_gpr)(struct thread *t);

	/*
	 * Fills the rest of the block (floating point, vector, ...), the
	 * general registers being already current.  Returns 0 or -errno.
	 */
	int (*fetch_rest)(struct thread *t);

	/*
	 * Writes the block back to the kernel: the general registers, and
	 * the other classes only if they changed since they were read.
	 * When t->regs_pad is set every general register is written (the
	 * thread's own are the jump pad's) and regs_pad is cleared.
	 * Returns 0 or -errno; the caller clears t->regs_dirty on success.
	 */
	int (*flush)(struct thread *t);

	/*
	 * Reads general register `regnum` (one fetch_gpr fills) of stopped
	 * thread `tid` straight from the kernel, bypassing the thread's
	 * cache (which may hold a jump pad's view).  Returns 0 or -errno.
	 */
	int (*peek_gpr)(pid_t tid, unsigned int regnum, uint64_t *value);

	/* Whether gdb register `regnum` is one fetch_gpr fills. */
	bool (*is_general)(unsigned int regnum);

	/*
	 * Loads into stopped thread t's cache the registers a jump pad saved
	 * for its hit (see regs_load_pad in agent.h for the arguments),
	 * marking it valid with t->regs_pad set.  What the pad did not save
	 * is the kernel's (the arch may ask it, once).  Returns 0 or -errno.
	 * NULL when the arch has no jump pads.
	 */
	int (*load_pad)(struct thread *t, const uint64_t *frame,
			const uint8_t *image, unsigned int image_form,
			const uint64_t *bases);

	/*
	 * The same for a record of the pads' ring, which no stopped thread
	 * stands behind (the hitting thread went on long ago): fills every
	 * register of gdb block `blk` (regblock_size_for(features) bytes),
	 * what the pad did not save with the value every process has;
	 * `image` NULL: the record has none (pad_no_image), those registers
	 * read as their initial state.  Makes no system call.  Returns 0 or
	 * -errno; NULL when load_pad is.
	 */
	int (*load_record)(uint8_t *blk, unsigned int features,
			   const uint64_t *frame, const uint8_t *image,
			   unsigned int image_form, const uint64_t *bases);

	/*
	 * The arch's choices for the pads of process `p` (pad.c), passed to
	 * the emitters, load_pad and load_record: *image_form, the form in
	 * which the pads store their image, the arch's own value (struct
	 * arch_pad_handoff; 0 where the arch has one form, as aarch64 and
	 * arm; x86-64: an X86_64_IMAGE_* value, by AVX and
	 * PROBE_PAD_XSAVE), and *tp_read, the pad reads the thread-pointer
	 * register itself (x86-64: HWCAP2_FSGSBASE; aarch64 and arm:
	 * true).  NULL when load_pad is.
	 */
	void (*pad_options)(struct process *p, unsigned int *image_form, bool *tp_read);

	/*
	 * Resumes stopped thread `tid` for one instruction, delivering
	 * Linux signal `sig` (0: none); the step's end comes as a SIGTRAP
	 * that trap_kind calls a step.  Returns 0 or -errno.  NULL when the
	 * kernel has no single-step for the arch (32-bit ARM): the agent
	 * steps in software with arch_ops.insn_next_pcs (step.c).
	 */
	int (*hw_step)(pid_t tid, int sig);

	/* Classifies a SIGTRAP stop by its siginfo (si_code); never fails. */
	enum trap_kind (*trap_kind)(const siginfo_t *si);

	/* Fills *caps for the threads of process `pid`; never fails (no
	 * debug registers: all counts 0). */
	void (*hw_caps)(pid_t pid, struct ptrace_hw_caps *caps);

	/*
	 * Programs t's debug registers with the slots of t->proc->slots
	 * that have refs (slot i as laid out by hw_caps; kind and length
	 * are the arch's to encode) and disables the others.  Returns 0 or
	 * -errno (-ESRCH: gone).
	 */
	int (*hw_sync)(struct thread *t);

	/*
	 * After a SIGTRAP (`si`) of t with some slot armed: the index of
	 * the slot whose hit stopped it, clearing any sticky status the
	 * arch keeps, or -ENOENT when no hardware point fired.
	 */
	int (*hw_fired)(struct thread *t, const siginfo_t *si);

	/*
	 * Whether the debug registers fire on this machine (some
	 * hypervisors accept them and never deliver the exception): 0,
	 * -ENODEV when they do not, another -errno when it cannot tell.
	 * Asked once, before the first hardware point; NULL: assume they do.
	 */
	int (*hw_works)(void);

	/*
	 * libthread_db's register callbacks (proc_service.h): copies the
	 * general registers of `lwp` (`fp` false) as a prgregset_t, or the
	 * floating-point ones (`fp` true) as a prfpregset_t, to or from
	 * `regs`.  Returns 0 or -errno.
	 */
	int (*ps_getregs)(pid_t lwp, void *regs, bool fp);
	int (*ps_setregs)(pid_t lwp, const void *regs, bool fp);

	/*
	 * ps_get_thread_area: the thread pointer libthread_db asks for with
	 * `idx` (x86-64: 25 = FS, 26 = GS; aarch64 and arm: ignored, the
	 * TLS register).  Returns 0 or -errno.
	 */
	int (*thread_area)(pid_t lwp, int idx, uint64_t *base);

	/*
	 * Return probes (retprobe.c): where a function's return address is
	 * on its first instruction, which says how the agent takes it over
	 * and how it recognises the return (see enum ptrace_ret_addr).
	 * ret_link_regnum: the gdb regnum of the link register with
	 * PTRACE_RET_LINK, -1 otherwise.
	 */
	enum ptrace_ret_addr ret_addr;
	int ret_link_regnum;

	/*
	 * The free-running counter the in-process return pads read with no
	 * system call (struct arch_ret_pad: x86-64 the TSC, aarch64
	 * CNTVCT_EL0), read by the agent on the same machine: the entry's
	 * and the return's readings become a latency and a time against
	 * the clocks (pad-ret.c).  counter_hz: its rate when the CPU says
	 * it (aarch64 CNTFRQ_EL0), 0 when the agent must measure it (the
	 * TSC).  NULL where the arch has no such pads.
	 */
	uint64_t (*counter_read)(void);
	uint64_t (*counter_hz)(void);
	/* Whether this machine lets user mode read the counter at all (32-bit
	 * ARM: only where the kernel allows it); NULL: always. */
	bool (*counter_usable)(void);
	/* Whether recording pads may stamp a hit's time with the counter
	 * (arch_pad_ring.tsc_time) instead of calling the vDSO's clock:
	 * one rate on every CPU, counting in deep sleep.  NULL: never. */
	bool (*counter_is_clock)(void);

	/* The bit of the flags register (arch_ops.flags_regnum) that selects
	 * the second instruction set, which insn_decode takes as bit 0 of
	 * the address (32-bit ARM: cpsr.T, Thumb); 0 where there is one. */
	uint64_t flags_isa_bit;

	/* The system call convention (data only). */
	struct ptrace_syscall_abi syscall;

	/* The keeper's handler and fix-ups. */
	struct ptrace_keeper_ops keeper;
};

/* The host's ops, defined by the one agent/<arch>-ptrace.c linked in. */
extern const struct ptrace_arch_ops ptrace_arch_host;

#endif
