/*
 * arch.h - the whole boundary between agent/ and arch/.
 *
 * Everything the agent needs to know about an instruction set lives behind
 * one `const struct arch_ops` per architecture.  arch/ is pure: no system
 * calls, no ptrace, no I/O.  It describes the register file as gdb sees it
 * (the order of target.xml, of the `g` packet and of a trace frame's `R`
 * block are one and the same), the breakpoint instruction, and the
 * instruction knowledge the probe strategies build on.
 */
#ifndef PROBE_ARCH_H
#define PROBE_ARCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/* One register of the gdb-visible register file. */
struct arch_reg {
	const char *name;	/* gdb's name: "rax", "xmm3", "fs_base" */
	unsigned int bitsize;	/* size as in target.xml */
	unsigned int offset;	/* byte offset inside the register block */
	const char *type;	/* target.xml type, NULL for the default */
	const char *group;	/* target.xml group, NULL for none */
	const char *feature;	/* the target.xml feature it belongs to */
};

/*
 * Optional register-file extensions the CPU may or may not have, as an
 * opaque bit set (`unsigned int features` below).  Each arch gives its
 * own bits their meaning, so the same bit means different things on
 * different arches: the agent's per-arch code detects them on the CPU,
 * the arch's own functions (nregs_for, regblock_size_for, target_xml)
 * read them, and arch-neutral code only stores and passes them on.
 * An arch names its bits ARCH_FEAT_<ARCH>_<WHAT>.
 */
#define ARCH_FEAT_X86_64_AVX	(1u << 0)	/* ymm upper halves (XSAVE) */
/* The bit's first name, still used by the agent's x86-64 ptrace and pad
 * code: prefer ARCH_FEAT_X86_64_AVX. */
#define ARCH_FEAT_AVX		ARCH_FEAT_X86_64_AVX


/*
 * Instruction engine types (see the arch_ops fields below).
 */

/* How a probe hit on one instruction is handled, fastest first. */
enum arch_strategy {
	ARCH_EMULATE,	/* the agent applies the effect itself: one stop, no slot */
	ARCH_BOOST,	/* resume at an XOL copy that jumps back: one stop */
	ARCH_STEP,	/* single-step the XOL copy, then fix up: two stops */
	ARCH_REJECT,	/* cannot be probed; insn.reason says why */
};

/*
 * The registers emulation reads and writes.  gpr[] follows gdb's register
 * numbering for the arch (x86-64: rax rbx rcx rdx rsi rdi rbp rsp r8-r15,
 * exactly the first 16 slots of the `g` block), so the agent fills it with
 * one copy.  pc and flags are separate because their gdb slots differ.
 * Every register is held in 64 bits whatever the arch's width; an arch
 * with 32-bit registers uses the low half and keeps the high half zero.
 */
struct arch_gpregs {
	uint64_t gpr[32];
	uint64_t pc;
	uint64_t flags;		/* the condition flags / status register
				 * (x86-64 eflags, aarch64 pstate, arm cpsr) */
};

/*
 * Memory as emulation sees it.  Each callback returns 0 when all `len`
 * bytes were transferred, or a negative errno (-EFAULT ...) which the
 * emulator passes back unchanged.
 */
struct arch_mem {
	void *ctx;
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	int (*write)(void *ctx, uint64_t addr, const void *buf, size_t len);
};

/*
 * One decoded and classified instruction.  The bytes are kept so the
 * other entry points need nothing else; `priv` is the arch's own decode
 * state, opaque to the agent.
 */
#define ARCH_INSN_MAX 16
struct arch_insn {
	uint64_t addr;			/* where it was decoded */
	uint8_t bytes[ARCH_INSN_MAX];
	unsigned int len;		/* bytes it occupies */
	enum arch_strategy strategy;
	const char *reason;		/* static text: why, or what it is */
	uint64_t priv[24];		/* arch-private, do not touch */
};

/*
 * A register as the assembler spells it ("eax", "r9b", "ah"): a slice of
 * one gdb register.  SDT probe notes name their operands this way.
 */
struct arch_asm_reg {
	int regnum;		/* gdb regnum of the whole register */
	unsigned int size;	/* bytes the name covers: 1, 2, 4, 8 */
	unsigned int shift;	/* bits below the slice: 8 for x86 "ah" */
};

/*
 * A USDT probe operand: where an argument's value is at the probe, as a
 * <sys/sdt.h> note spells it in the arch's assembler syntax after
 * "SIZE@" (x86-64 "-8@16(%rbp)", aarch64 "-4@[sp, 12]", arm
 * "4@[r1, #8]").  Registers are gdb regnums with the slice the name
 * covers, as asm_reg gives them.
 */
enum arch_operand_kind {
	ARCH_OPERAND_REG,	/* in a register (a part of one): reg */
	ARCH_OPERAND_IMM,	/* a constant: imm */
	ARCH_OPERAND_MEM,	/* at reg + index * scale + disp */
	ARCH_OPERAND_STATIC,	/* at a link-time address: symbol + disp */
};

struct arch_operand {
	enum arch_operand_kind kind;
	struct arch_asm_reg reg;	/* REG: the register; MEM: the base,
					 * regnum -1 when there is none */
	struct arch_asm_reg index;	/* MEM: regnum -1 when there is none */
	unsigned int scale;		/* MEM: 1, 2, 4, 8 */
	int64_t imm;			/* IMM: the constant as written */
	int64_t disp;			/* MEM, STATIC: displacement or offset */
	/* MEM, STATIC: the symbol the displacement counts from, as the
	 * sym_len bytes at sym_off in the operand's text; sym_len is 0
	 * when the displacement is a plain number.  The symbol's address
	 * is the caller's to find (the file's symbol table). */
	size_t sym_off, sym_len;
};

/*
 * Per-slot state kept between xol_prepare and xol_fixup (ARCH_STEP).
 */
struct arch_xol {
	uint64_t slot;			/* slot address */
	bool step;			/* single-step the slot (ARCH_STEP), even
					 * when the insn was classified boost */
	unsigned int insn_len;		/* bytes of the relocated instruction */
	int scratch_gpr;		/* gdb regnum borrowed as scratch, -1 */
	uint64_t scratch_value;		/* value to load before the step */
	uint64_t scratch_saved;		/* filled by the agent: original value */
};

/*
 * A jump pad's entry table: memory shared by the traced process and the
 * agent, `nentries` entries of 1 << entry_shift bytes, each aligned to 64.
 * A thread in a pad takes the first free entry from (tid mod nentries)
 * on by writing its tid to the owner word (atomically), fills it, sets
 * ready to PAD_READY and traps; the agent sets PAD_DONE before resuming
 * it (or, where the trap leaves the pc on itself, aarch64's BRK, frees
 * the entry and resumes the thread past the trap itself).  The entry
 * holds at off_frame the saved registers in the layout emit_save_regs
 * documents and, where the arch stores them (x86-64), at offset 0 its
 * image of the registers emit_save_regs leaves out, in the form
 * image_form names (the arch's own values: 0 where it has one form;
 * x86-64: X86_64_IMAGE_* in arch/x86_64/x86_64.h, which describes each)
 * and at off_bases the thread-pointer bases when the pad can read them
 * (x86-64: fs_base and gs_base, with tp_read).  tp_read: the pads read
 * the thread pointer register with an instruction of their own (x86-64:
 * rdfsbase, where the kernel allows FSGSBASE; aarch64: mrs TPIDR_EL0;
 * arm: mrc TPIDRURO, always), rather than as the word the TLS ABI keeps
 * at it (x86-64 without FSGSBASE: %fs:0).  image_form and tp_read come
 * from ptrace_arch_ops.pad_options; aarch64 and arm ignore image_form
 * here: their stopped thread's v registers come from the kernel.
 */
enum { PAD_FREE = 0, PAD_READY = 1, PAD_DONE = 2 };

struct arch_pad_handoff {
	uint64_t table;
	unsigned int entry_shift;
	unsigned int nentries;		/* a power of two */
	unsigned int off_owner;		/* 32-bit tid, 0 = free */
	unsigned int off_ready;		/* 32-bit PAD_* state */
	unsigned int off_bases;
	unsigned int off_frame;
	unsigned int image_form;	/* the form in which the pad stores its
					 * image, defined by the arch (0 where
					 * the arch has one form; x86-64: the
					 * X86_64_IMAGE_* values) */
	bool tp_read;
};

/*
 * A jump pad's in-process collector: a bounded ring of records in the
 * shared memory (one producer per hitting thread, the agent consumes).
 * `head` (64-bit) is at ring, record i at ring + off_records +
 * (i mod nrecords) << record_shift; each record has a 64-bit sequence
 * word at off_seq (record i is free for position p when seq == p, full
 * when seq == p + 1; the agent sets seq = p + nrecords when it has read
 * it) and otherwise the layout of a hand-off entry: image at 0,
 * bases at off_bases, frame at off_frame.  The parts must lie apart,
 * inside the record, seq 8-aligned.  The bases are always stored (nothing
 * stops to read them later): with tp_read by the CPU's instructions,
 * without it by system calls (two more per hit).
 */
#define ARCH_PAD_COPIES 8
#define ARCH_PAD_NO_REG 0xffffu

/*
 * A load in emitted code that can fault where the program did nothing
 * wrong, and where a fault there goes on: offsets in the emitter's
 * `out`, load 0 when the code has none.  x86-64 without fsgsbase reads
 * the thread pointer as %fs:0 (the TCB's first word), which faults in
 * a thread with no TLS (fs base 0: a program without libc, a static
 * one before it sets its TLS up); its `take` is the path that does
 * without (the system call, the hand-off).  The agent resumes such a
 * fault at `take` and the program sees no signal (pad.c pad_fault).
 */
struct arch_pad_fault {
	size_t load, take;
	size_t len;		/* the load's bytes */
};

struct arch_pad_ring {
	uint64_t ring;
	unsigned int off_records;
	unsigned int record_shift;
	unsigned int nrecords;		/* a power of two */
	unsigned int off_seq, off_bases, off_frame;
	unsigned int image_form;	/* as in the hand-off */
	bool tp_read;
	/* With time_tid the record also gets the thread's id (32 bits, at
	 * off_tid) and the time of the hit (a CLOCK_REALTIME timespec, at
	 * off_time): two system calls in the process. */
	bool time_tid;
	unsigned int off_tid, off_time;
	/* With time_tid and clock_call (x86-64; others ignore it): the
	 * time comes from calling clock_call(CLOCK_REALTIME, &time), the
	 * process's vDSO clock_gettime, instead of the system call, on the
	 * pad's aligned stack; it may clobber the caller-saved registers. */
	uint64_t clock_call;
	/* With image the record also gets, at offset 0, the registers
	 * emit_save_regs leaves out (aarch64: v0-v31, fpsr, fpcr:
	 * AARCH64_PAD_IMAGE_BYTES; x86-64: the x87/SSE/AVX image in
	 * image_form).  Without it a reader of the record sees every such
	 * register in its initial state (x86-64 stores for it only what
	 * its image_form needs to say so: X86_64_IMAGE_*). */
	bool image;
	/* With ipa_call (the in-process collector's ipa_collect_site, in
	 * the process; 0: none, and the arch may have no such call) the
	 * filled record is handed to it before it is published, as
	 * ipa_collect_site(ipa_site, frame, frame_words, blocks,
	 * blocks_size) with the record's frame and its block area at
	 * off_blocks, on a 16-byte aligned stack below the frame; the
	 * record is published whatever it returns, and on IPA_TRAP (3)
	 * the pad goes on to the hand-off as with a full ring.  Arches
	 * without it refuse a ring with ipa_call (-EINVAL). */
	uint64_t ipa_call, ipa_site;
	unsigned int off_blocks, blocks_size;
	/* With ipa_wants too (ipa_site_wants), the pad first calls it as
	 * ipa_site_wants(ipa_site, frame on the stack, frame_words), before
	 * it takes a record: 0 goes straight to the restore (every
	 * condition false: no record, no state stored). */
	uint64_t ipa_wants;
	/*
	 * x86-64 (others ignore it and call ipa_call): with ipa_call,
	 * copy_fn (the collector's ipa_copy in the process, the image's
	 * ipa_copy_native: copy_fn(dst, src, len) returns the bytes it
	 * could read, a fault in it resumed by the agent) and ncopies > 0,
	 * the pad writes itself what ipa_collect_site would write for a
	 * site whose one tracepoint (gdb's number copy_tp, its IPA_PROG_*
	 * flags copy_flags) has no condition, no pass count and only
	 * these ranges to collect, and calls no collector: the site's
	 * header (IPA_RECORD, one group), the group's, then per range a
	 * memory block (struct ipa_mem_block) of `len` bytes at
	 * frame[basereg] + offset, or at `offset` (basereg
	 * ARCH_PAD_NO_REG), its avail what copy_fn returned.  The agent
	 * sets it only where those blocks fit in blocks_size (the
	 * collector would trap otherwise) and every len is > 0; the pad
	 * never traps then, and counts nothing in the collector's
	 * counters (the agent counts the records).
	 */
	uint64_t copy_fn;
	uint32_t copy_tp, copy_flags;
	unsigned int ncopies;		/* <= ARCH_PAD_COPIES */
	struct arch_pad_copy {
		unsigned int basereg;	/* a frame word, or ARCH_PAD_NO_REG */
		uint32_t len;
		uint64_t offset;
	} copies[ARCH_PAD_COPIES];
	/*
	 * tid_table: the agent's table of thread ids by thread pointer
	 * (PAD_TID_* below), which a pad with time_tid reads instead of
	 * making the gettid system call, keyed by the thread pointer
	 * register (x86-64: rdfsbase with fsgsbase, else %fs:0, tp_fault
	 * below; aarch64 TPIDR_EL0; arm TPIDRURO); on x86-64 its words
	 * after the entries also give a record's bases without fsgsbase
	 * (bases_fault).  A thread it does not name (key not found, or its
	 * tid 0: more than one thread has that thread pointer) still makes
	 * the call.  tsc_time: the time is the CPU's counter (x86-64 the
	 * TSC, aarch64 CNTVCT_EL0, arm CNTVCT) in the first 8 bytes at
	 * off_time and PAD_TIME_TSC in the next 8, where a timespec's
	 * tv_nsec would be; the agent converts it.
	 */
	uint64_t tid_table;
	bool tsc_time;
	/* x86-64 (others leave it alone), when not NULL: the key's load
	 * of the tid table's lookup (emit_pad_collect) */
	struct arch_pad_fault *tp_fault;
	/* x86-64 without fsgsbase, a record with the image and tid_table
	 * (others leave it alone), when not NULL: the fs base's load
	 * (%fs:0; the gs base then from PAD_TID_GS) */
	struct arch_pad_fault *bases_fault;
	/* x86-64 (others ignore it): with tsc_time and no ipa_call, the pad
	 * pushed a return before (emit_ret_entry: %r15 the entry, or 0):
	 * the record's TSC is also the entry's time, and %r15 is cleared
	 * so that emit_ret_stamp after it reads no counter again (the
	 * entry's time is then the entry frame's, as the stamp makes it). */
	bool stamp_entry;
	/* x86-64 (others ignore it): with prefetch > 0 the pad, and the
	 * return trampoline (emit_ret_exit), ask for the lines of the record
	 * `prefetch` positions on (prefetchw), which a later hit or return
	 * will write. */
	unsigned int prefetch;
	/* x86-64 (others ignore it): with off_flags (not 0) the pad also
	 * stores there a 32-bit word of what the record holds:
	 * PAD_REC_IMAGE when it stored the image, else 0.  A record
	 * without the image then leaves the image's lines as they were
	 * (the XSAVE header's too), and its reader goes by this word. */
	unsigned int off_flags;
};

#define PAD_REC_IMAGE 1u

/*
 * The thread id table a pad reads (arch_pad_ring.tid_table): entries of
 * 16 bytes, { key: the thread pointer (x86-64 fs_base), 64 bits; tid,
 * 32 bits; 32 bits unused }.  A thread pointer's entry is among the
 * PAD_TID_PROBES entries from index (key * PAD_TID_HASH) >> (64 -
 * PAD_TID_BITS), with no wrap (the table has PAD_TID_PROBES - 1 more
 * entries at its end).  Key 0: free; PAD_TID_GONE: free, but a search
 * goes on past it.  Only the agent writes it, and only entries of
 * threads that cannot run then (stopped, or gone).
 */
#define PAD_TID_BITS 10
#define PAD_TID_PROBES 8
#define PAD_TID_ENTRIES ((1u << PAD_TID_BITS) + PAD_TID_PROBES - 1)
#define PAD_TID_HASH 0x9e3779b97f4a7c15ull
#define PAD_TID_GONE 1ull
/*
 * After the entries, a 32-bit word: nonzero while a thread of the
 * process has no thread pointer at %fs:0 (fs base 0, or a TCB that does
 * not point at itself), where pads read it there (x86-64 without
 * fsgsbase).  Such pads test it first and, while it is set, make the
 * system call instead (and the return push goes to the agent): the
 * load would fault in that thread.
 */
#define PAD_TID_NOTLS ((uint64_t)PAD_TID_ENTRIES * 16)
/*
 * Then a 32-bit word nonzero while every thread the agent entered has
 * the gs base in the 64-bit word at PAD_TID_GS (x86-64 programs leave
 * it 0), and that word: a record with the image takes its gs base from
 * there where the pads cannot read it (without fsgsbase), instead of
 * asking the kernel.
 */
#define PAD_TID_GS_OK (PAD_TID_NOTLS + 4)
#define PAD_TID_GS (PAD_TID_NOTLS + 8)
#define PAD_TIME_TSC (-1ll)

/*
 * A jump pad's native condition (arch_ops.emit_pad_cond): one value, a
 * register (gdb's regnum, as the probe sees it) or `size` bytes at
 * `addr` (zero-extended), converted in order (sign: ext, else zero_ext,
 * from `bits`), compared with `imm` (64-bit, signed or not as `cmp`
 * says).  The same meanings as struct ax_simple_cond, which the agent
 * turns into this.
 */
enum arch_cond_cmp {
	ARCH_CMP_EQ, ARCH_CMP_NE,
	ARCH_CMP_LT_S, ARCH_CMP_GE_S, ARCH_CMP_GT_S, ARCH_CMP_LE_S,
	ARCH_CMP_LT_U, ARCH_CMP_GE_U, ARCH_CMP_GT_U, ARCH_CMP_LE_U,
};

struct arch_pad_cond {
	bool mem;
	unsigned int regnum;
	uint64_t addr;
	unsigned int size;		/* 1, 2, 4, 8 */
	unsigned int nconv;		/* <= 4 */
	struct { bool sign; unsigned int bits; } conv[4];
	enum arch_cond_cmp cmp;
	int32_t imm;
	uint64_t pc;			/* the probe's address (its pc) */
	uint64_t skip_counter;		/* a 64-bit word counted up, atomically,
					 * by every false condition */
};

/*
 * Where a jump pad's hit lives in the agent's shared memory (pad.c): one
 * layout for a hand-off entry and a ring record, both 1 << entry_shift
 * bytes.  The image of the registers the frame leaves out is at 0
 * (image_bytes; how the arch fills it is its own), the frame of
 * frame_words 64-bit words (emit_save_regs's layout, the probe's address
 * at index frame_pc) at off_frame; a hand-off entry's owner and ready
 * words, a record's sequence word (which shares their place), the
 * thread-pointer bases (16 bytes), a record's tid and time, and where
 * the arch has one (not 0) a record's flags word, as struct
 * arch_pad_handoff and struct arch_pad_ring say.
 */
struct arch_pad_layout {
	unsigned int entry_shift;
	unsigned int image_bytes;
	unsigned int off_owner, off_ready, off_seq;
	unsigned int off_bases, off_frame, off_tid, off_time;
	unsigned int off_flags;
	unsigned int frame_words, frame_pc;
};

/*
 * Return probes with no stop (x86-64, aarch64, arm): a per-thread shadow
 * stack in the process, in memory private to it (a fork child gets its
 * own copy, as of its stack), found by the thread pointer (x86-64: the
 * fs base; aarch64: TPIDR_EL0; arm: TPIDRURO) with no system call.  At `area`:
 *
 *   0      header: RET_PAD_* words (flags and counters, 64-bit each)
 *   4096   RET_PAD_SLOTS thread slots of 4096 bytes, open addressed
 *          from a hash of the key: key (the thread pointer, 0 = free;
 *          claimed by compare-and-swap, never given back while the
 *          process lives), tid (32 bits, at 8, read once by gettid at
 *          the claim), depth n (32 bits, at 12), then RET_PAD_DEPTH
 *          entries of 32 bytes from offset 64: { slot, real return
 *          address, counter at entry, tracepoint address | run << 48 }.
 *          The slot is the stack slot of the return address (x86-64)
 *          or, where the call leaves it in a link register (aarch64),
 *          sp at the function's entry, which is sp after its return.
 *
 * The entry pad (emit_ret_entry) pushes an entry and writes `tramp` into
 * the stack slot (aarch64: into the frame's x30, which the restore
 * loads); the trampoline (emit_ret_exit, at `tramp`) pops, writes one
 * ring record per entry of the slot (frame pc = tramp, the other
 * registers as the return leaves them; the descriptor RET_REC_*, with
 * the real address, in the record's block area) and jumps to the real
 * address (aarch64: with x30 = the real address, as `ret` leaves it).
 * Only the owning thread and, while it is stopped, the agent write a
 * slot's entries.  The counter is the TSC (x86-64), CNTVCT_EL0 (aarch64)
 * or CNTVCT (arm), which the agent converts (ptrace_arch_ops.counter_read).
 * arm keeps the 64-bit words with 32-bit values (high halves 0).
 */
enum {
	RET_PAD_ON = 8,		/* header: nonzero while records are taken */
	RET_PAD_FALLBACKS = 16,	/* entries sent to the agent (table full, deep) */
	RET_PAD_LOST = 24,	/* returns that waited for room (ring full) */
	RET_PAD_ORPHANS = 32,	/* trampoline runs with no entry (a bug) */
	RET_PAD_IMAGE = 40,	/* header: nonzero when a return probe reads a
				   register outside the frame: the trampoline
				   stores the x87/SSE(/AVX) image too */
	RET_PAD_SLOTS = 256,
	RET_PAD_SLOT_SIZE = 4096,
	RET_PAD_DEPTH = 126,
	RET_PAD_ENTRY_SIZE = 32,
	RET_PAD_ENTRY_SHIFT = 5,	/* log2 RET_PAD_ENTRY_SIZE */
	RET_PAD_AREA_SIZE = 4096 + RET_PAD_SLOTS * RET_PAD_SLOT_SIZE,
	/* a thread's slot */
	RET_SLOT_KEY = 0,	/* the thread pointer, 0: free */
	RET_SLOT_TID = 8,	/* 32 bits */
	RET_SLOT_DEPTH = 12,	/* n, 32 bits */
	RET_SLOT_ENTRIES = 64,	/* entry 0 */
	/* an entry */
	RET_ENTRY_SLOT = 0,	/* the slot (or sp at the entry) */
	RET_ENTRY_RET = 8,	/* the real return address */
	RET_ENTRY_TIME = 16,	/* the counter at the entry */
	RET_ENTRY_FUNC = 24,	/* tracepoint address | run << 48 */
	/* the return's descriptor, at the record's off_blocks */
	RET_REC_FUNC = 0,	/* tracepoint address | run << 48 */
	RET_REC_TICKS = 8,	/* counter ticks from entry to return */
	RET_REC_TSC = 16,	/* the counter at the return */
	RET_REC_TID = 24,	/* 32 bits */
	RET_REC_MAGIC = 28,	/* 32 bits: RET_REC_MAGIC_VALUE, or
				   RET_REC_MAGIC_BARE: the record holds no
				   image (RET_PAD_IMAGE was 0; with XSAVE its
				   XSTATE_BV is 0, all in the initial state) */
	RET_REC_MAGIC_VALUE = 0x4e544552,	/* "RETN" */
	RET_REC_MAGIC_BARE = 0x42544552,	/* "RETB" */
	RET_REC_RET = 32,	/* the real return address */
	RET_REC_SIZE = 40,
};

/*
 * Latency histograms the trampoline keeps itself (arch_ops.ret_hist; the
 * agent's Qprobe.hist): a return whose entry's RET_ENTRY_FUNC equals an
 * in-use histogram's RET_HIST_FUNC adds its latency there and writes no
 * record.  A page of the pads' shared memory: a header, then
 * RET_HIST_MAX histograms of RET_HIST_SIZE bytes.  The latency in ns is
 * (ticks * RET_HIST_MULT) >> 32, 0 when the counter went back (another
 * CPU's); bucket ZERO holds 0 ns, B + 8k the range [2^k, 2^(k+1)) ns,
 * the last one everything above.  Updates are atomic (threads share a
 * histogram); SUM adds the nanoseconds.
 */
enum {
	RET_HIST_N = 0,		/* header: histograms in use, 32 bits */
	RET_HIST_MULT = 8,	/* header: ns per tick, 32.32 fixed point */
	RET_HIST_FIRST = 64,	/* the first histogram */
	RET_HIST_SIZE = 512,
	RET_HIST_MAX = 7,
	RET_HIST_BYTES = 4096,
	/* a histogram */
	RET_HIST_FUNC = 0,	/* tracepoint address | run << 48 */
	RET_HIST_SUM = 8,
	RET_HIST_ZERO = 16,
	RET_HIST_B = 24,
	RET_HIST_BUCKETS = 61,	/* B's */
};

/* A slot's index: the top 8 bits (RET_PAD_SLOTS) of the key times this,
 * then the next ones, wrapping. */
#define RET_PAD_HASH PAD_TID_HASH
#define RET_PAD_HASH_SHIFT 56

struct arch_ret_pad {
	uint64_t area, tramp;
	uint64_t func_run;	/* the entry's tracepoint address | run << 48 */
	bool tp_read;		/* x86-64: rdfsbase, else mov %fs:0 (the
				   TCB's self pointer the x86-64 TLS ABI
				   requires); aarch64 and arm ignore it */
	/* emit_ret_entry only, x86-64 without fsgsbase (others ignore
	 * them): where a fault of the key's load goes on (when not NULL),
	 * and the address of the PAD_TID_NOTLS word (0: none), which the
	 * entry tests before it: set, the return goes to the agent. */
	struct arch_pad_fault *tp_fault;
	uint64_t tp_notls;
	/* emit_ret_exit only: the histograms' page (RET_HIST_*), 0: none;
	 * arches without ret_hist ignore it */
	uint64_t hist;
	/* emit_ret_exit only: the ring, as struct arch_pad_ring says
	 * (time_tid, image and ipa_* are not used; x86-64 without
	 * fsgsbase: tid_table and bases_fault for the bases of a record
	 * with the image) */
	struct arch_pad_ring ring;
};

/*
 * What the agent does with the instruction at a thread's pc inside a jump
 * pad while it steps the thread out of it (arch_ops.pad_step).
 */
enum arch_pad_step {
	ARCH_PAD_STEP,		/* single-step it */
	ARCH_PAD_DONE,		/* done on the registers and memory already:
				   pc is past it */
	ARCH_PAD_REWIND,	/* the frame is complete and nothing of the
				   hit is published yet: the thread goes
				   back to the probe with the frame's
				   registers (the instruction would not make
				   progress stepped: an exclusive pair) */
};

struct arch_ops {
	const char *name;		/* "x86_64": logs, probe-trace output */
	const char *gdb_arch;		/* target.xml <architecture> */

	/*
	 * The register file.  `regs` lists every register gdb may see, in
	 * gdb's numbering (regs[i] is gdb regnum i); `nregs_for(features)`
	 * tells how many of them exist on a CPU with `features`; the block
	 * holding them is `regblock_size_for(features)` bytes.
	 */
	const struct arch_reg *regs;
	unsigned int (*nregs_for)(unsigned int features);
	size_t (*regblock_size_for)(unsigned int features);

	/*
	 * Writes the target.xml for `features` into `buf` (at most `size`
	 * bytes including the NUL).  Returns its length, or -ENOSPC.
	 */
	int (*target_xml)(unsigned int features, char *buf, size_t size);

	int pc_regnum, sp_regnum, fp_regnum;
	/* The thread pointer a thread's TLS hangs from, as gdb numbers it
	 * (x86-64: fs_base), when the register file has it (a CPU whose
	 * features leave it out has fewer registers: nregs_for); -1 none.
	 * The pads' thread table and the return pads' shadow stacks are
	 * keyed by it. */
	int tp_regnum;
	/* The other base register a pad's record holds beside the thread
	 * pointer (x86-64: gs_base, PAD_TID_GS), -1 none. */
	int tp2_regnum;
	/* Registers sent with every stop reply, -1 terminated. */
	const int *expedite;

	/* The software breakpoint, and how far the PC has moved past the
	 * breakpoint address when the trap is reported. */
	const uint8_t *bp_insn;
	size_t bp_len;
	size_t bp_pc_after_trap;

	/* ---- Instruction engine (appended; fields above are stable). ---- */

	/* Longest instruction, in bytes. */
	size_t max_insn_len;

	/*
	 * Decodes and classifies the instruction at `buf` (`size` bytes
	 * readable), which lives at `addr` in the inferior.  Returns 0 and
	 * fills *insn (len, strategy, reason); -ENODATA when `size` is too
	 * short for the instruction; -EILSEQ when the bytes are not a valid
	 * instruction (insn->reason still says what is wrong).
	 */
	int (*insn_decode)(const uint8_t *buf, size_t size, uint64_t addr,
			   struct arch_insn *insn);

	/*
	 * Applies an ARCH_EMULATE instruction to `regs` (pc included) as
	 * the CPU would, reading and writing memory through `mem` only.
	 * Returns 0; -ENOSYS if the instruction is not emulated; or the
	 * negative errno of a failing `mem` callback, in which case `regs`
	 * is unchanged (memory written before the failure may stay written).
	 */
	int (*insn_emulate)(const struct arch_insn *insn,
			    struct arch_gpregs *regs, const struct arch_mem *mem);

	/*
	 * Fills an XOL slot at address `slot` for an ARCH_BOOST or
	 * ARCH_STEP instruction: the relocated instruction, then (boost) a
	 * jump back to insn->addr + insn->len.  `xol` receives what
	 * xol_fixup needs.  Returns the number of bytes written, -ENOSPC if
	 * `size` is too small, -ENOSYS for EMULATE / REJECT instructions,
	 * -ERANGE when a relocated branch cannot reach its target (or the
	 * code after the instruction) from this slot, -EINVAL when the
	 * instruction cannot be relocated at all (aarch64 `blr x30`).
	 * ARCH_STEP: before single-stepping, the agent saves gpr
	 * xol->scratch_gpr (if >= 0) in xol->scratch_saved and loads
	 * xol->scratch_value into it.
	 */
	int (*xol_prepare)(const struct arch_insn *insn, uint64_t slot,
			   uint8_t *out, size_t size, struct arch_xol *xol);

	/*
	 * After the single step of an ARCH_STEP slot: moves pc back into
	 * the original code and restores the scratch register.  Returns 0,
	 * or -EINVAL if pc is not where the step should have left it (a
	 * signal or a fault: the agent reports it at insn->addr).
	 */
	int (*xol_fixup)(const struct arch_insn *insn, const struct arch_xol *xol,
			 struct arch_gpregs *regs);

	/* Bytes of the jump written at a jump-pad probe site. */
	size_t pad_jump_len;

	/*
	 * Writes a direct jump at `from` to `to`.  Returns its length
	 * (pad_jump_len), -ERANGE if `to` is out of its reach, -ENOSPC.
	 */
	int (*emit_jump)(uint8_t *out, size_t size, uint64_t from, uint64_t to);

	/*
	 * Writes a jump to `to` that works from anywhere and clobbers no
	 * register or stack.  Returns its length or -ENOSPC.
	 */
	int (*emit_jump_abs)(uint8_t *out, size_t size, uint64_t to);

	/*
	 * Writes a jump-pad site's jump at `from` to `to` anywhere in the
	 * address space, for a pad beyond emit_jump's reach (32-bit ARM: a
	 * literal load into the pc, the literal in the site's bytes).
	 * Returns its length, which may depend on `from` (and then is the
	 * window's least length, given to relocate_window as min_len), or
	 * -ENOSPC, -EINVAL for a `from` it cannot start at.  NULL when the
	 * arch has none: a probe whose pad is out of reach keeps its
	 * breakpoint.
	 */
	int (*emit_jump_far)(uint8_t *out, size_t size, uint64_t from, uint64_t to);

	/*
	 * Writes the jump pad's register save: steps over the ABI red zone,
	 * then builds a frame of registers in gdb order on the stack (x86-64:
	 * the 16 GPRs, rip = `pc`, rflags, 8 bytes each = the `g` block's
	 * first 18 slots with eflags widened), leaves the frame's address in
	 * the first argument register and in a callee-saved register, and
	 * the stack aligned for a call.  emit_restore_regs undoes it,
	 * reloading every register but sp and pc from the (possibly edited)
	 * frame.  See x86_64-emit.c.  Return the length written or -ENOSPC.
	 */
	int (*emit_save_regs)(uint8_t *out, size_t size, uint64_t pc);
	int (*emit_restore_regs)(uint8_t *out, size_t size);

	/*
	 * Relocates the whole instructions starting at `from` that cover at
	 * least `min_len` bytes (the jump-pad window) so they run at `to`,
	 * followed by a jump back to the end of the window.  `func` /
	 * `func_size` / `func_addr` are the bytes of the enclosing function:
	 * every instruction of it is decoded, and the window is refused
	 * (-EXDEV) when a branch of the function lands inside it after its
	 * first byte.  Returns the bytes written to `out` and sets *inlen to
	 * the window's length; -EILSEQ if an instruction of the window
	 * cannot be relocated, -ERANGE if the window leaves the function,
	 * -ENOSPC.
	 */
	int (*relocate_window)(const uint8_t *func, size_t func_size,
			       uint64_t func_addr, uint64_t from, size_t min_len,
			       uint64_t to, uint8_t *out, size_t size,
			       size_t *inlen);

	/*
	 * Writes the jump pad's hand-off to the agent, run right after
	 * emit_save_regs (its frame address in the callee-saved register)
	 * and before emit_restore_regs.  It claims an entry of the shared
	 * table for the thread (see struct arch_pad_handoff), copies the
	 * frame there (x86-64: also the x87/SSE/AVX state), marks it ready,
	 * and traps, with the entry's address in pad_entry_regnum;
	 * the agent reads the entry, marks it done and resumes the thread,
	 * which frees the entry.  Sets *trap_off to the offset of the trap
	 * instruction in `out`.  Returns the length written or -ENOSPC;
	 * NULL when the arch has no jump pads.
	 */
	int (*emit_pad_handoff)(uint8_t *out, size_t size,
				const struct arch_pad_handoff *h, size_t *trap_off);

	/*
	 * Writes the jump pad's in-process collector, run right after
	 * emit_save_regs: it takes the next record of the ring (see struct
	 * arch_pad_ring), fills it and publishes it, then branches to the
	 * register restore.  That branch's target is not known yet: *done
	 * receives the offset in `out` of the branch the caller patches,
	 * with patch_branch, once it has placed the restore (which byte of
	 * the branch it names is the arch's business).  When the
	 * ring is full it falls through to the code that follows it (the
	 * hand-off: the hit stops once, and nothing is lost).  Returns the
	 * length written, -ENOSPC or -EINVAL; NULL when the arch has none.
	 */
	int (*emit_pad_collect)(uint8_t *out, size_t size,
				const struct arch_pad_ring *r, size_t *done);

	/*
	 * Points the branch at offset `at` of `code`, one that
	 * emit_pad_collect left for the caller, at offset `to` of the same
	 * code (both offsets from the start of one buffer that is copied
	 * as a whole).  Returns 0, or -ERANGE when `to` is beyond the
	 * branch's reach.  NULL when the arch has no emit_pad_collect.
	 */
	int (*patch_branch)(uint8_t *code, size_t at, size_t to);

	/*
	 * Writes a jump pad's condition check, run before emit_save_regs
	 * (see struct arch_pad_cond): a true condition falls through to the
	 * code that follows, with every register as at the probe; a false
	 * one counts itself and branches, the registers as at the probe,
	 * to the branch's target, which the caller patches with
	 * patch_branch (*skip: the offset it names), the pad's relocated
	 * code.  *load is the offset of the memory load (0: none) and
	 * *take that of the true path: a load that faults is resumed at
	 * *take by the agent (the full path evaluates the condition and
	 * says what could not be read).  Returns the length written,
	 * -ENOSPC, or -EINVAL for what it cannot encode.  NULL when the
	 * arch has none: conditions run in the in-process collector.
	 */
	int (*emit_pad_cond)(uint8_t *out, size_t size,
			     const struct arch_pad_cond *c, size_t *skip,
			     size_t *load, size_t *take);

	/*
	 * Return probes with no stop (struct arch_ret_pad): the code a jump
	 * pad runs right after emit_save_regs, at a function's entry, that
	 * pushes the return on the thread's shadow stack and points [sp]
	 * (aarch64: the frame's x30) at the trampoline.  On success it falls through; where the entry
	 * cannot be pushed (no slot, too deep) it branches to the offset
	 * *fallback_at names (patch_branch: the hand-off, where the agent
	 * takes the return on its own shadow stack).  With done_at, success
	 * branches to the offset *done_at names instead of falling through.
	 * Returns the length written, -ENOSPC or -EINVAL; NULL where
	 * returns always trap.
	 */
	int (*emit_ret_entry)(uint8_t *out, size_t size, const struct arch_ret_pad *r,
			      size_t *fallback_at, size_t *done_at);

	/*
	 * The trampoline itself, to run at r->tramp: saves the registers,
	 * pops the thread's entries of the slot it returned from (entries
	 * of frames below it are gone: longjmp), records each, restores
	 * and jumps to the real address.  A full ring traps at *trap_off
	 * (the agent drains it, the thread resumes after the trap and tries
	 * again), unless records are off (RET_PAD_ON: after the agent).
	 * Returns the length or -errno.
	 */
	int (*emit_ret_exit)(uint8_t *out, size_t size, const struct arch_ret_pad *r,
			     size_t *trap_off);
	/* emit_ret_exit keeps the histograms of r->hist (RET_HIST_*) itself
	 * (x86-64, aarch64, arm); elsewhere their returns are records the
	 * agent counts. */
	bool ret_hist;

	/*
	 * Code placed right before the register restore of a pad that
	 * pushed a return and also records or hands off the entry: the
	 * pushed entry's time taken again, so that the latency starts no
	 * earlier than the entry frame's time.  Returns the length or
	 * -ENOSPC; NULL with emit_ret_entry.
	 */
	int (*emit_ret_stamp)(uint8_t *out, size_t size);

	/*
	 * Code, to run at `at`, that stores into each of `pages` pages from
	 * `start` (`page` bytes apart, in order) the byte already there,
	 * keeps every register and the flags (and nothing within the red
	 * zone below the stack pointer), then traps (bp_insn at *trap_off)
	 * and goes on at `resume`.  The agent runs it once in a stopped
	 * thread right after the pads' shared memory is mapped: where the
	 * first user-mode store of a process into a page costs microseconds
	 * even after MAP_POPULATE (shadow paging under some hypervisors),
	 * that cost is then paid at setup instead of by the hits of the
	 * ring's first round.  Run to its end, it leaves the thread as it
	 * found it at `resume`, so a trap turned into nop_insn (the agent
	 * gone) lets the thread go on.  Returns the length, -ENOSPC,
	 * -EINVAL (no pages) or -ERANGE (`resume` out of reach); NULL: the
	 * pages are left to the hits.
	 */
	int (*emit_touch)(uint8_t *out, size_t size, uint64_t at, uint64_t start,
			  uint64_t pages, uint32_t page, uint64_t resume, size_t *trap_off);

	/*
	 * Looks up the assembler register name of `len` bytes at `name`
	 * (no "%" prefix, lower case: "rax", "r10d", "sil", "ah", "rip").
	 * Returns 0 and fills *r, or -ENOENT for a name the arch does not
	 * have.  Only the registers an address or an integer value can
	 * live in are listed.
	 */
	int (*asm_reg)(const char *name, size_t len, struct arch_asm_reg *r);

	/*
	 * Parses one USDT operand, the text after "SIZE@" (NUL-terminated,
	 * no blanks around it), into *op.  Returns 0, or -EINVAL with the
	 * reason in `err` (at most `errsize` bytes, NUL included: "unknown
	 * register %xmm0").  NULL when the arch's operands are not parsed
	 * yet.
	 */
	int (*sdt_operand_parse)(const char *text, struct arch_operand *op,
				 char *err, size_t errsize);

	/*
	 * Whether the `n` bytes at `before` (the bytes just below an address
	 * read from the stack) end with a whole call instruction, i.e. the
	 * address is plausibly a return address.  A sanity check before the
	 * agent replaces a return address (return probes): true does not
	 * prove it, false proves the probe is not at a function's entry.
	 */
	bool (*follows_call)(const uint8_t *before, size_t n);

	/*
	 * For an ARCH_EMULATE instruction: whether its emulation writes the
	 * program counter and nothing else (nops, direct jumps).  Any other
	 * write costs the agent a system call more than resuming in an
	 * out-of-line copy, so the agent's "auto" strategy boosts those
	 * instructions when it can.  NULL: always emulate.
	 */
	bool (*emulate_pc_only)(const struct arch_insn *insn);

	/* ---- For the agent's ptrace side (agent/ptrace-arch.h). ---- */

	/* gdb regnum of the flags register (x86-64 eflags, ARM cpsr): the
	 * `flags` of struct arch_gpregs.  gpr[i] is gdb regnum i for every
	 * i below pc_regnum. */
	int flags_regnum;

	/*
	 * Software single-step: the addresses execution may go to once
	 * `insn` (decoded at regs->pc) has run, reading memory through
	 * `mem` (a return address, a jump table).  Fills pcs[0] and, for
	 * a conditional branch, pcs[1]; returns how many (1 or 2), or a
	 * negative errno (-EFAULT from `mem`).  The agent asks for the
	 * hardware step wherever the kernel has one (ptrace_arch_ops.hw_step),
	 * whether or not this is set: x86-64 leaves it NULL; aarch64 has it
	 * for what a hardware step cannot do (stepping over an exclusive
	 * sequence as one); arm has it because 32-bit ARM Linux has no
	 * hardware step at all.  On arm, bit 0 of `addr` given to
	 * insn_decode selects Thumb (as a Thumb symbol's value does), and
	 * bit 0 of each pc returned here says the instruction set at that
	 * address (set: Thumb, so the agent plants the Thumb breakpoint);
	 * inside a Thumb IT block the pcs are only instructions the cpu
	 * will execute (a breakpoint on a skipped one may never trap).
	 */
	int (*insn_next_pcs)(const struct arch_insn *insn,
			     const struct arch_gpregs *regs,
			     const struct arch_mem *mem, uint64_t pcs[2]);

	/* ---- The arch's Linux user space: files and calling convention. ---- */

	/* e_machine of the arch's ELF files (EM_X86_64, EM_AARCH64, EM_ARM):
	 * how a tool that reads a program's file picks its arch. */
	uint16_t elf_machine;

	/* Bytes of a pointer, which is also a stack slot and an address in
	 * auxv or a link map: 8 or 4. */
	unsigned int ptr_size;

	/* The integer / pointer argument registers of the C calling
	 * convention, in order, as gdb regnums; -1 terminated. */
	const int *arg_regs;

	/* gdb regnum of the integer / pointer return value. */
	int retval_regnum;

	/* Bytes below the stack pointer the ABI lets a function use without
	 * moving it (x86-64: 128; aarch64 and arm: none). */
	unsigned int red_zone;

	/* ---- Where the agent may put XOL slots. ---- */

	/*
	 * How far an XOL slot may lie from the instruction it serves: every
	 * byte of a slot must be less than xol_reach bytes from the probed
	 * address (arch_xol_in_reach), so the slot's jump back to the code
	 * is a direct one (x86-64: jmp rel32, 2 GiB; aarch64: B, +-128 MiB;
	 * less a page of margin for the instruction and the jump's own
	 * place).  Farther, xol_prepare would fall back on a single step or
	 * refuse a relocated branch: the agent never hands out such a slot.
	 */
	uint64_t xol_reach;

	/*
	 * Decodes the instruction at `addr` as insn_decode does, knowing the
	 * function it lies in: the `func_size` bytes at `func_addr`, which
	 * is an instruction boundary (arm: bit 0 of both says Thumb).  For
	 * the classes that depend on the instructions before it: on arm, an
	 * instruction inside a Thumb IT block is rejected unless it is
	 * simulated (a slot cannot keep the block's condition), and only the
	 * code from the function's start tells where a block is.  Returns
	 * what insn_decode returns, or -EILSEQ when `addr` is not an
	 * instruction boundary of the function.  NULL for an arch whose
	 * classes need no context: use arch_insn_decode_in(), which falls
	 * back on insn_decode.
	 */
	int (*insn_decode_in)(const uint8_t *func, size_t func_size,
			      uint64_t func_addr, uint64_t addr,
			      struct arch_insn *insn);
	/* ---- Jump pads: how the agent lays out and leaves them. ---- */

	/* The shared memory's layout (NULL when the arch has no pads). */
	const struct arch_pad_layout *pad_layout;

	/* gdb regnum holding the hand-off entry's address at the pad's trap
	 * (x86-64 r14, aarch64 x20), and the one holding the frame's address
	 * from the end of emit_save_regs to emit_restore_regs (rbx, x19). */
	int pad_entry_regnum, pad_frame_regnum;

	/* Bytes relocate_window writes at most for a window of one jump
	 * (emit_jump's or emit_jump_far's): the pad's code is placed with
	 * that much room after it. */
	size_t pad_window_max;

	/* Where the arch has two instruction sets (32-bit ARM), bit 0 of the
	 * `pc` given to emit_save_regs and of the `from` given to
	 * relocate_window (and to emit_jump: the pad starts in the site's
	 * set) says the site's; a window of the second set (Thumb) then
	 * starts with this many bytes that switch from the pad's own set
	 * (A32): a thread whose registers already say Thumb resumes after
	 * them.  0 for the other arches. */
	size_t pad_window_isa_switch;

	/*
	 * Stepping a thread out of a pad: the instruction at regs->pc (its
	 * bytes at `insn`, `len` of them readable) is done here when a
	 * single step of it would go wrong (x86-64 pushfq / popfq carry the
	 * step's trap flag), or the thread must rewind (ARCH_PAD_REWIND: an
	 * exclusive load or store of the collector or hand-off, which makes
	 * no progress stepped).  Returns an enum arch_pad_step, or a
	 * negative errno from `mem` (regs unchanged then).
	 */
	int (*pad_step)(const uint8_t *insn, size_t len, struct arch_gpregs *regs,
			const struct arch_mem *mem);

	/*
	 * Stepping a thread out of the in-process collector a pad called
	 * (it has claimed a record: the thread cannot rewind there): the
	 * instruction at regs->pc is done here when a step of it makes no
	 * progress (aarch64: an exclusive load or store of the collector's
	 * atomic counters).  Returns ARCH_PAD_DONE (pc past it), or
	 * ARCH_PAD_STEP (step it), or a negative errno from `mem` (regs
	 * unchanged then).  NULL: every instruction there steps.
	 */
	int (*callee_step)(const uint8_t *insn, size_t len, struct arch_gpregs *regs,
			   const struct arch_mem *mem);

	/*
	 * Breakpoint instructions other than bp_insn, where the arch has
	 * several (32-bit ARM: one per instruction set).  Returns the bytes
	 * for gdb's Z0 `kind` (which is their size as gdb names it: arm 2 the
	 * T16 udf, 3 the T32 udf.w, 4 the A32 udf) and sets *len, or NULL for
	 * a kind the arch does not know.  NULL: bp_insn is the only one, and
	 * every kind means it.
	 */
	const uint8_t *(*bp_insn_for_kind)(unsigned int kind, size_t *len);

	/*
	 * The kind of breakpoint for the instruction at `addr` (bit 0: the
	 * instruction set, as insn_decode takes it) whose first bytes are
	 * `buf` (`size` readable): what the agent plants for its own probes
	 * and the steps of a software single-step.  NULL with
	 * bp_insn_for_kind.
	 */
	unsigned int (*bp_kind_at)(uint64_t addr, const uint8_t *buf, size_t size);

	/*
	 * An instruction that does nothing, bp_len bytes of bp_insn's
	 * instruction set: what takes the place of a trap in the agent's own
	 * code that must stop no thread any more (the in-process return
	 * trampoline's wait for room, once nobody drains the ring).  NULL:
	 * such a trap stays.
	 */
	const uint8_t *nop_insn;
};

/* ops->insn_decode_in when the arch has one, else insn_decode of the
 * bytes at `addr` up to the function's end. */
int arch_insn_decode_in(const struct arch_ops *ops, const uint8_t *func,
			size_t func_size, uint64_t func_addr, uint64_t addr,
			struct arch_insn *insn);

/*
 * Whether the `len` bytes at `at` lie within ops->xol_reach of `addr`,
 * the probed instruction: where an XOL slot (or a whole area of them) for
 * it may be.
 */
bool arch_xol_in_reach(const struct arch_ops *ops, uint64_t addr, uint64_t at,
		       uint64_t len);

/*
 * The agent's "auto" choice for an instruction the arch emulates: true
 * when the emulation writes more than the program counter (a system call
 * more per hit than resuming in an out-of-line copy) and a copy near the
 * instruction can run it without stepping.  Then auto boosts it (if the
 * process has no slot within reach after all, it emulates).
 */
bool arch_prefers_boost(const struct arch_ops *ops, const struct arch_insn *insn);

/* Printable name of a strategy: "emulate", "boost", "step", "reject". */
const char *arch_strategy_name(enum arch_strategy s);

/* arch_ops.xol_fixup for an arch whose step leaves the pc right after
 * the slot's instruction (every arch so far): the pc goes to the
 * instruction after the original, the scratch register gets its value
 * back. */
int arch_xol_fixup(const struct arch_insn *insn, const struct arch_xol *xol,
		   struct arch_gpregs *regs);

extern const struct arch_ops x86_64_arch_ops;
extern const struct arch_ops aarch64_arch_ops;
extern const struct arch_ops arm_arch_ops;

/* The architecture the agent was built for. */
const struct arch_ops *arch_host(void);

/*
 * The architectures a file or a remote target may have: every arch of
 * arch/ is in every build, whatever the host, so a workstation reads a
 * board's files with the board's arch.  Each returns NULL for an
 * architecture this build has no arch_ops for.
 */
/* By the e_machine of an ELF header. */
const struct arch_ops *arch_for_elf_machine(unsigned int e_machine);
/* By gdb's name, the <architecture> of a target.xml: "i386:x86-64".  A
 * longer name that adds ":VARIANT" to an arch's name is that arch. */
const struct arch_ops *arch_for_gdb_arch(const char *name);
/* The i-th arch of this build, from 0; NULL past the last. */
const struct arch_ops *arch_nth(size_t i);

/*
 * Writes a target.xml for the first `n` registers of `regs` into `buf`
 * (at most `size` bytes): one <feature> per run of registers that share
 * a feature, opening with the types `types` gives for it (pairs of
 * feature name and XML text, ended by a NULL name).  Returns the length,
 * or -ENOSPC.  The arches' target_xml functions call it.
 */
struct arch_xml_types {
	const char *feature, *text;
};
int arch_write_target_xml(const char *gdb_arch, const struct arch_reg *regs,
			  unsigned int n, const struct arch_xml_types *types,
			  char *buf, size_t size);

/*
 * Why arch_for_elf_machine(e_machine) is NULL, for an error message:
 * "e_machine 183 (aarch64): this build has no arch for it (it has
 * x86_64)".  Writes at most `size` bytes, NUL included; returns `buf`.
 */
const char *arch_machine_unsupported(unsigned int e_machine, char *buf,
				     size_t size);

#endif
