/*
 * keeper.h - the keeper: a process that puts the traced programs back in
 * order when the agent dies (see keeper.c and doc/keeper.md).
 *
 * The agent tells it, through memory they share, everything it changes
 * in a program: each hook below is called *before* the change becomes
 * visible to the program (a site is registered before its breakpoint is
 * written) and withdrawn *after* the change is undone, so that whatever
 * moment the agent dies at, the keeper knows a superset of what is there.
 * Every hook is a no-op when no keeper runs.
 */
#ifndef PROBE_AGENT_KEEPER_H
#define PROBE_AGENT_KEEPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct process;

/* Starts the keeper; the agent works on without one if it cannot. */
int keeper_start(void);
bool keeper_active(void);
/* PTRACE_O_EXITKILL when no keeper runs; 0 when one does: a program the
 * agent started then outlives it, restored. */
long keeper_exitkill(void);

void keeper_process_add(pid_t pid);
void keeper_process_gone(pid_t pid);
/* The address space was replaced (exec): nothing of ours is in it. */
void keeper_process_exec(pid_t pid);

/* A patched site: `len` bytes at `addr`, `saved` the program's, `patch`
 * ours (a breakpoint, or a jump pad's jump), `trap` the site's own
 * breakpoint (`trap_len` bytes: on 32-bit ARM in the site's instruction
 * set), written first when a jump is taken out. */
void keeper_site_set(pid_t pid, uint64_t addr, const uint8_t *saved,
		     const uint8_t *patch, size_t len, const uint8_t *trap,
		     size_t trap_len);
void keeper_site_clear(pid_t pid, uint64_t addr);
/* The instruction written over a thread's pc to make it run a system
 * call (it may cover a site's bytes: restored first); len 0 when gone. */
void keeper_inject(pid_t pid, uint64_t addr, const uint8_t *saved,
		   const uint8_t *patch, size_t len);

/* Code of ours in the XOL areas a thread may stand in. */
enum keeper_code_kind {
	KEEPER_STEP,	/* a slot single-stepped by the agent: at, the slot;
			 * addr/insn_len the probed instruction; xol_len the
			 * copy's length; scratch the borrowed register */
	KEEPER_PAD,	/* a jump pad's trap: at, the int3; aux, the offset
			 * of the entry's ready word (from %r14) */
	KEEPER_TRAMP,	/* the return trampoline (an int3) */
	KEEPER_RET_ON,	/* the in-process trampoline's records-on word:
			 * at, its address (set to 0 when the agent dies);
			 * addr, the trampoline's wait for room (an int3
			 * that becomes a nop; a thread stopped after it
			 * goes on from there) */
	KEEPER_PASS,	/* a trap of the agent's own code that becomes
			 * nop_insn: at, its address; a thread stopped
			 * right after it goes on from there */
	KEEPER_LOAD,	/* loads that may fault (the in-process
			 * collector's, a pad's thread pointer): at, the
			 * first; insn_len their bytes; addr, where a
			 * fault goes on */
};
void keeper_code(pid_t pid, enum keeper_code_kind kind, uint64_t at,
		 uint64_t addr, unsigned int insn_len, unsigned int xol_len,
		 int scratch, unsigned int aux);

/* Per thread: registers the agent is about to write, the scratch
 * register's value before a stepped slot. */
void keeper_regs_set(pid_t tid, uint64_t pc, uint64_t sp);
void keeper_step(pid_t tid, uint64_t scratch_saved);
/* The thread is about to be resumed with a single step (on), or was
 * resumed without one (off): its step may be armed in between. */
void keeper_stepping(pid_t tid, bool on);
void keeper_thread_gone(pid_t tid);
/* Return probes: the thread's real return addresses and their stack
 * slots, innermost last; keeper_ret_push before the slot is hijacked. */
void keeper_ret_push(pid_t pid, pid_t tid, uint64_t slot, uint64_t ret);
void keeper_ret_set(pid_t pid, pid_t tid, size_t n, const uint64_t *slots,
		    const uint64_t *rets);

/* Installs the keeper's SIGTRAP handler in `p` (a stopped thread runs
 * the system calls), once per address space. */
int keeper_install(struct process *p);

#endif
