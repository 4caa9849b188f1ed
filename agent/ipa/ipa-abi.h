/*
 * ipa-abi.h - what the agent and its in-process collector share.
 *
 * The in-process collector ("ipa", agent/ipa/) is a small position
 * independent image the agent copies into a traced process, next to the
 * jump pads.  A pad calls it with the registers it saved, and it does in
 * the process what a trap would have made the agent do: evaluate the
 * tracepoint's condition, count the pass count, collect memory and trace
 * state variables.  It is built freestanding: no libc, no system call, no
 * signal handler of the program touched, no allocation, only the thread's
 * stack (IPA_STACK_USE bytes at most) and the memory handed to it.
 *
 * Reading memory the program did not ask for is the one dangerous thing
 * it does, and it does it only in ipa_copy(), an arch routine whose loads
 * lie between two labels.  A load that faults raises SIGSEGV or SIGBUS,
 * which ptrace shows the agent before the program: the agent sees the PC
 * between the labels, moves it to the routine's fault exit (the count
 * copied so far in the return register) and drops the signal.  The
 * program never sees it; the value becomes <unavailable>.  That is the
 * kernel's exception-table idea, with the agent in the kernel's place.
 *
 * Everything here is plain data of fixed layout: the agent writes it
 * through its mapping of the shared memory, the collector reads it in
 * the process.  Both are built by the same compiler for the same arch.
 */
#ifndef PROBE_IPA_ABI_H
#define PROBE_IPA_ABI_H

#include <stdint.h>

#define IPA_ABI_VERSION 1

/* Stack the collector may use below the pad's frame, at most. */
#define IPA_STACK_USE 4096

/* Actions of a tracepoint as the collector runs them. */
enum ipa_action_kind {
	IPA_ACT_MEM = 1,	/* `len` bytes at reg(basereg) + offset */
	IPA_ACT_EXPR = 2,	/* an agent expression with trace ops */
	IPA_ACT_TSV = 3,	/* a `V` block of one variable */
};

#define IPA_NO_REG 0xffffu	/* IPA_ACT_MEM with an absolute address */

struct ipa_action {
	uint16_t kind;		/* enum ipa_action_kind */
	uint16_t basereg;	/* IPA_ACT_MEM: gdb regnum or IPA_NO_REG */
	uint32_t len;		/* MEM: bytes; EXPR: bytecode bytes; TSV: 0 */
	uint64_t offset;	/* MEM: address or offset; EXPR: bytecode's
				 * offset from the program; TSV: its number */
};

/*
 * One tracepoint's program, written by the agent at download and never
 * changed while a pad may run it (a new one is written elsewhere and the
 * pad's pointer switched).  Counters live apart, in struct ipa_counters.
 */
struct ipa_program {
	uint32_t version;	/* IPA_ABI_VERSION */
	uint32_t size;		/* bytes, this header included */
	uint32_t tp_number;	/* gdb's tracepoint number, for the record */
	uint32_t flags;		/* IPA_PROG_* */
	uint64_t pass_count;	/* 0: none */
	uint32_t cond_off;	/* condition bytecode, from the program start */
	uint32_t cond_len;	/* 0: no condition */
	uint32_t nactions;
	uint32_t step_budget;	/* per evaluation; 0: AX_STEP_BUDGET */
	uint32_t counters_off;	/* struct ipa_counters, from the shared base */
	uint32_t reserved;
	struct ipa_action actions[];
	/* then the bytecode of the condition and expressions */
};

#define IPA_PROG_REGS 1u	/* record the frame's registers */
#define IPA_PROG_LIVE 2u	/* traces a live variable: the record
				 * needs the hit's time and thread */

/* Changed by every hit the collector runs, with atomic operations.  The
 * agent reads skipped_cond and over_pass (monitor probes); it counts the
 * hits themselves from the records it drains, so a pad that does the
 * collector's work itself (x86-64, arch_pad_ring.copy_fn: no condition,
 * no pass count) counts nothing here. */
struct ipa_counters {
	uint64_t hits;		/* every time the pad ran the program */
	uint64_t taken;		/* condition true (or none) and under the pass count */
	uint64_t skipped_cond;	/* condition false */
	uint64_t cond_errors;	/* condition could not be evaluated */
	uint64_t over_pass;	/* hits after the pass count was reached */
	uint64_t truncated;	/* records that ran out of room (IPA_TRAP) */
	uint64_t faulted;	/* copies cut by a load that faulted: a stop each,
				 * the agent resuming the copy at its exit */
};

/*
 * The trace state variables, shared by every tracepoint of a process.
 * A value an expression sets is the hit's own from then on (a later read
 * or trace in the same hit sees it, whatever other threads set), and
 * is stored here too.  A live variable (the hit's time or thread, which
 * only the record knows) is traced as a V block that says which
 * (struct ipa_tsv_block.live), and the agent fills in the value; it
 * reads as 0 (the agent lets only code that drops the value read one),
 * and setting one makes the hit IPA_TRAP.
 */
#define IPA_TSVS 64
enum ipa_tsv_kind {
	IPA_TSV_PLAIN = 0,
	IPA_TSV_TIMESTAMP = 1,	/* the hit's time (the agent's us) */
	IPA_TSV_THREAD = 2,	/* the hitting thread's id */
};

struct ipa_tsvs {
	uint32_t count;		/* entries in use */
	uint32_t reserved;
	struct {
		uint32_t number;	/* gdb's number; 0: free */
		uint32_t kind;		/* enum ipa_tsv_kind */
		int64_t value;
	} v[IPA_TSVS];
};

/*
 * Record blocks the collector appends after the registers, in the order
 * the actions ran, each 8-byte aligned:
 *   IPA_BLK_MEM:  addr(8) len(4) avail(4) bytes[len]   (avail <= len
 *                 readable bytes, the rest unavailable)
 *   IPA_BLK_TSV:  number(4) pad(4) value(8)
 * preceded by a header: kind(2) reserved(2) size(4) (the whole block).
 */
enum ipa_block_kind {
	IPA_BLK_MEM = 1,
	IPA_BLK_TSV = 2,
};

struct ipa_block {
	uint16_t kind;
	uint16_t reserved;
	uint32_t size;		/* header included, a multiple of 8 */
};

struct ipa_mem_block {
	struct ipa_block h;
	uint64_t addr;
	uint32_t len;		/* bytes asked for */
	uint32_t avail;		/* of them readable, from the start */
	uint8_t bytes[];
};

struct ipa_tsv_block {
	struct ipa_block h;
	uint32_t number;
	uint32_t live;		/* enum ipa_tsv_kind: not PLAIN, the agent
				 * fills the value in from the record */
	int64_t value;
};

/* One call of the collector. */
struct ipa_hit {
	const struct ipa_program *prog;
	struct ipa_counters *counters;
	struct ipa_tsvs *tsvs;		/* NULL: none */
	const uint64_t *regs;		/* gdb's numbering, 0..nregs-1 */
	uint32_t nregs;
	uint32_t big_endian;
	uint8_t *out;			/* the record's block area */
	uint32_t out_size;
	uint32_t out_len;		/* filled by the collector */
};

/*
 * A jump pad's site: every tracepoint there, run by ipa_collect_site in
 * number order.  Written by the agent in the shared data area before the
 * pad that names it is written, and never changed while a pad may run it.
 * Offsets are from `base`, the data area's address in the process.
 */
#define IPA_SITE_PROGS 8

struct ipa_site {
	uint32_t version;	/* IPA_ABI_VERSION */
	uint32_t nprogs;	/* <= IPA_SITE_PROGS */
	uint64_t base;		/* the data area in the process */
	uint32_t tsvs_off;	/* struct ipa_tsvs; 0: none */
	uint32_t reserved;
	uint32_t prog_off[IPA_SITE_PROGS];
};

/*
 * What ipa_collect_site writes at the start of the record's block area:
 * the site's verdict (the strongest of its tracepoints': RECORD_STOP over
 * RECORD over SKIP; TRAP wins all and the record holds nothing), then
 * one group per tracepoint that recorded, each its header and the blocks
 * ipa_collect wrote (8-byte aligned throughout).
 */
struct ipa_site_out {
	uint32_t verdict;	/* enum ipa_verdict */
	uint32_t ngroups;
	uint32_t len;		/* bytes after this header */
	uint32_t reserved;
};

struct ipa_group {
	uint32_t tp_number;
	uint32_t verdict;	/* IPA_RECORD or IPA_RECORD_STOP */
	uint32_t len;		/* bytes of blocks after this header */
	uint32_t flags;		/* the program's IPA_PROG_* */
};

/* What ipa_collect returns. */
enum ipa_verdict {
	IPA_SKIP = 0,		/* condition false or past the pass count */
	IPA_RECORD = 1,		/* publish the record */
	IPA_RECORD_STOP = 2,	/* publish it; the pass count is now reached */
	IPA_TRAP = 3,		/* the agent must handle this hit itself */
};

#endif
