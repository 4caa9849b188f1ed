/*
 * step.c - running a stopped thread for one instruction.
 *
 * Every single-step the agent makes goes through thread_step(): gdb's
 * steps and range steps, while-stepping collection, a probe's step
 * strategy, and a system call the agent makes the program run.  The
 * kernel steps on x86-64 and aarch64 (agent.ptrace->hw_step).
 *
 * Where it cannot (32-bit ARM Linux has no ptrace single-step request)
 * the step is done in software, as gdbserver does for gdb:
 *
 *   1. decode the instruction at the pc, in the instruction set cpsr.T
 *      says (bit 0 of the address given to insn_decode), reading memory
 *      with gdb's and the probes' breakpoints hidden;
 *   2. ask the arch where it may go (arch_ops.insn_next_pcs: one pc, or
 *      two for a conditional branch; bit 0 the instruction set there);
 *   3. plant a temporary breakpoint at each (breakpoint.c, counted in
 *      step_refs beside the other references there, in the encoding the
 *      arch chooses for the instruction at that address: arm's A32 udf,
 *      or the Thumb udf of the instruction's size), and continue;
 *   4. at the thread's next stop, whatever it is, take them out
 *      (thread_step_stopped, called for every wait status of such a
 *      thread): a breakpoint trap at one of them is the end of the step,
 *      which the caller then takes as trap_kind STEP.  A signal, an
 *      event or an exit ends the step without it, as a hardware step
 *      interrupted by a signal does.
 *
 * Other threads run meanwhile and may reach a temporary breakpoint that
 * is not theirs (thread_step_foreign): such a thread is parked, its pc
 * still on the breakpoint, and resumed once the step's breakpoints are
 * gone, so it runs the real instruction: not from here, in the middle of
 * classifying a status (an all-stop stop may be under way), but by
 * inferior_status once that status is dealt with and the program runs
 * on (process.step_unpark); when everything stops instead, gdb's next
 * resume starts them.  Two threads
 * stepping to the same address share the breakpoint, each with its
 * reference, and each sees its own step end there.
 *
 * Known limits: a step over a system call that blocks keeps the threads
 * parked behind it until the call returns; a step over a fork or clone
 * whose event stop comes first is taken up again after the event, one
 * instruction later than a hardware step would end; and a signal
 * delivered with the step runs its handler to the end before the step's
 * breakpoint (a hardware step stops at the handler's first
 * instruction).
 */
#define LOG_DOMAIN "step"
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "agent/agent.h"
#include "agent/keeper.h"
#include "agent/log.h"

static int step_mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return mem_read(ctx, addr, buf, len) == (ssize_t)len ? 0 : -EFAULT;
}

static int step_mem_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	(void)ctx;
	(void)addr;
	(void)buf;
	(void)len;
	return -EPERM;	/* next pcs never store */
}

/* Where the instruction at the thread's pc may go: 1 or 2 pcs (bit 0
 * the instruction set there), or -errno. */
static int next_pcs(struct thread *t, uint64_t pcs[2])
{
	const struct arch_ops *arch = agent.arch;
	uint8_t *blk = regs_block_gpr(t);
	struct arch_gpregs g;
	struct arch_insn insn;
	uint8_t buf[ARCH_INSN_MAX];
	ssize_t n;
	int err;

	if (!blk)
		return -ESRCH;
	regs_to_gpregs(blk, &g);
	uint64_t pc = g.pc;
	uint64_t at = pc | ((g.flags & agent.ptrace->flags_isa_bit) ? 1 : 0);
	n = mem_read(t->proc, pc, buf, arch->max_insn_len);
	if (n <= 0)
		return -EFAULT;
	memset(&insn, 0, sizeof(insn));
	err = arch->insn_decode(buf, (size_t)n, at, &insn);
	if (err < 0 || !insn.len) {
		debug("thread %d: cannot decode at %#llx to step it: %s", t->tid,
		      (unsigned long long)pc, err < 0 ? strerror(-err) : "no length");
		return err < 0 ? err : -EINVAL;
	}
	struct arch_mem mem = { t->proc, step_mem_read, step_mem_write };
	err = arch->insn_next_pcs(&insn, &g, &mem, pcs);
	if (err < 0) {
		/* The next pcs need memory that cannot be read (a pop from
		 * a bad stack): the instruction will fault, and the signal
		 * ends the step; after it, the next instruction. */
		debug("thread %d: next pcs at %#llx: %s", t->tid,
		      (unsigned long long)pc, strerror(-err));
		pcs[0] = (pc + insn.len) | (at & 1);
		return 1;
	}
	return err;
}

/* Takes out the thread's temporary breakpoints (memory gets its bytes
 * back once no one else holds one), and lets the threads parked on
 * them run on. */
static void step_clear(struct thread *t, bool write)
{
	struct process *p = t->proc;
	bool parked = false;

	for (unsigned int i = 0; i < t->sstep_n; i++) {
		struct sw_breakpoint *b = bp_find(p, t->sstep_at[i]);
		if (!b || !b->step_refs)
			continue;
		b->step_refs--;
		if (!write) {
			/* The memory is gone (exec): only the count. */
			continue;
		}
		bp_remove(p, t->sstep_at[i]);
		parked = true;
	}
	t->sstep_n = 0;
	if (parked) {
		for (struct thread *o = p->threads; o; o = o->next)
			if (o->parked && o != t) {
				p->step_unpark = true;
				break;
			}
	}
}

static int step_software(struct thread *t, int sig)
{
	const struct arch_ops *arch = agent.arch;
	struct process *p = t->proc;
	uint64_t pcs[2];
	int n, err;

	if (!arch->insn_next_pcs)
		return -ENOSYS;
	if (t->sstep_n)
		step_clear(t, true);
	if ((n = next_pcs(t, pcs)) < 0)
		return n;
	for (int i = 0; i < n; i++) {
		uint64_t at = pcs[i] & ~1ull;
		uint8_t buf[ARCH_INSN_MAX];
		ssize_t got;
		unsigned int kind = arch->bp_len;

		if (i == 1 && at == (pcs[0] & ~1ull))
			break;
		if (arch->bp_kind_at) {
			got = mem_read(p, at, buf, arch->max_insn_len);
			kind = arch->bp_kind_at(pcs[i], buf, got > 0 ? (size_t)got : 0);
		}
		if ((err = bp_insert(p, at, kind)) < 0) {
			debug("thread %d: no step breakpoint at %#llx: %s", t->tid,
			      (unsigned long long)at, strerror(-err));
			step_clear(t, true);
			return err;
		}
		bp_find(p, at)->step_refs++;
		t->sstep_at[t->sstep_n++] = at;
	}
	if (ptrace(PTRACE_CONT, t->tid, NULL, (void *)(long)sig) < 0) {
		err = -errno;
		step_clear(t, true);
		return err;
	}
	debug("thread %d: stepping in software to %#llx%s", t->tid,
	      (unsigned long long)pcs[0], t->sstep_n > 1 ? " or another" : "");
	return 0;
}

int thread_step(struct thread *t, int sig)
{
	if (agent.ptrace->hw_step) {
		keeper_stepping(t->tid, true);
		return agent.ptrace->hw_step(t->tid, sig);
	}
	return step_software(t, sig);
}

bool thread_step_stopped(struct thread *t, int status)
{
	bool ended = false;

	if (!t->sstep_n)
		return false;
	if (WIFSTOPPED(status) && (status >> 16) == PTRACE_EVENT_EXEC) {
		step_clear(t, false);	/* the image with the breakpoints went */
		return false;
	}
	if (WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP && (status >> 16) == 0) {
		uint64_t pc = regs_get_pc(t) - agent.arch->bp_pc_after_trap;
		for (unsigned int i = 0; i < t->sstep_n; i++)
			if (t->sstep_at[i] == pc)
				ended = true;
	}
	step_clear(t, true);
	return ended;
}

bool thread_step_foreign(struct thread *t, uint64_t pc)
{
	struct sw_breakpoint *b = bp_find(t->proc, pc);

	return b && b->step_refs && b->refs == b->step_refs && !probe_at(t->proc, pc);
}
