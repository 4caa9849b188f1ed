/*
 * step.c - running a stopped thread for one instruction.
 *
 * Every single-step the agent makes goes through thread_step(): gdb's
 * steps and range steps, while-stepping collection, a probe's step
 * strategy, and a system call the agent makes the program run.  The
 * kernel steps on x86-64 and aarch64 (agent.ptrace->hw_step).  Where it
 * cannot (32-bit ARM Linux has no ptrace single-step request) the step is to be
 * done in software: decode the instruction at the PC, ask the arch where
 * it may go (arch_ops.insn_next_pcs), plant temporary breakpoints there,
 * continue, and take them out again at the next stop, which then counts
 * as the end of the step (trap_kind STEP).  No arch of the tree needs
 * that yet: such a step fails with -ENOSYS until the first one does.
 */
#define LOG_DOMAIN "step"
#include "config.h"

#include <errno.h>

#include "agent/agent.h"
#include "agent/keeper.h"
#include "agent/log.h"

int thread_step(struct thread *t, int sig)
{
	if (agent.ptrace->hw_step) {
		keeper_stepping(t->tid, true);
		return agent.ptrace->hw_step(t->tid, sig);
	}
	debug("thread %d: no single-step on %s", t->tid, agent.arch->name);
	return -ENOSYS;
}
