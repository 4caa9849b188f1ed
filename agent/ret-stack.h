/*
 * ret-stack.h - a thread's shadow stack of return probes (retprobe.c),
 * and the rules that say which entries are stale.
 *
 * Each entry is a frame whose return address the agent replaced by the
 * trampoline: the real address, and the stack pointer at the entry (on
 * x86-64 the stack slot of the return address).  longjmp and exceptions
 * leave entries of frames that are gone; those are found by comparing
 * stack pointers, as the kernel's uretprobes do, and, where the return
 * address lives on the stack, by whether the slot still holds the
 * trampoline.  That memory read is behind a callback, so the rules run
 * (and are unit-tested, tests/unit/test-ret-stack.c) without a process.
 */
#ifndef AGENT_RET_STACK_H
#define AGENT_RET_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ret_entry {
	uint64_t slot;		/* sp at entry: on x86-64 the stack slot of
				   the return address */
	uint64_t ret;		/* the real return address */
	uint64_t entry_ns;	/* CLOCK_MONOTONIC at the entry hit */
	uint64_t func;		/* the tracepoint's address */
	uint32_t run;		/* the trace run that pushed it */
};

struct ret_stack {
	struct ret_entry *e;
	size_t n, cap;
	bool shown;		/* real addresses in the stack while gdb looks */
	/* Link register: where ret_show wrote real addresses, and which
	 * (ret_resume puts the trampoline back there only). */
	uint64_t *shown_at, *shown_val;
	size_t nshown, shown_cap;
	uint64_t lr_shown;	/* the real address put in x30, 0 if none */
	/* Link register, returns taken in the process: that stack's
	 * entries as ret_show found them (entry_ns: the counter at the
	 * entry, func: tracepoint address | run << 48) and what it wrote,
	 * until ret_resume; NULL when none were shown. */
	struct ret_stack *iview;
};

/* Whether stack slot `slot` still holds the trampoline's address. */
typedef bool ret_holds_tramp_fn(uint64_t slot, void *arg);

/* Removes entry i, keeping the order of the others. */
void ret_stack_drop(struct ret_stack *rs, size_t i);

/* The newest entry of slot `slot`, or -1. */
int ret_stack_find(const struct ret_stack *rs, uint64_t slot);

/*
 * At an entry with stack pointer `sp`, drops the entries whose frame is
 * gone.  Stack (`link` false): slot at or below sp and the trampoline no
 * longer there (an entry of a frame on another stack, a sigaltstack
 * above, stays).  Link register (`link`): slot at or below sp, strictly
 * below for a tail call (`chained`: the return address is already the
 * trampoline, and the entry of this very sp is the caller's).
 */
void ret_stack_drop_stale_entry(struct ret_stack *rs, uint64_t sp, bool link,
				bool chained, ret_holds_tramp_fn *holds,
				void *arg);

/*
 * At a return through entry `i` (stack slot `slot`), drops the newer
 * entries below that slot whose frames are gone: longjmp'd past.  Stack:
 * those whose slot no longer holds the trampoline.  Link register: all.
 */
void ret_stack_drop_stale_return(struct ret_stack *rs, size_t i,
				 uint64_t slot, bool link,
				 ret_holds_tramp_fn *holds, void *arg);

#endif
