/*
 * probe.c - probes: an address in the traced program where the agent, not
 * gdb, handles every hit.
 *
 * A probe owns a breakpoint at its address for its whole life (shared,
 * reference counted, with any gdb breakpoint there), so no thread can run
 * past it, and no other thread is stopped to handle a hit.  On a hit the
 * owner's callback runs (tracepoints collect a frame), then the displaced
 * instruction is executed without removing the breakpoint:
 *
 *   emulate  the arch emulator applies it to the registers (and stack):
 *            the thread resumes after it; one stop
 *   boost    the thread resumes in an XOL slot holding a relocated copy
 *            followed by a jump back; one stop
 *   step     the thread single-steps the slot, the agent fixes the PC up
 *            afterwards; two stops
 *
 * The strategy is the arch's classification; --tp-strategy forces another
 * where the instruction allows it, so tests run each path on the same
 * probe.  While a thread is between the two stops of the step strategy it
 * is `in_probe_step`; a signal arriving then is handled with the PC put
 * back at the probe, and the hit is not collected twice (`probe_skip`).
 */
#define LOG_DOMAIN "xol"
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/keeper.h"
#include "agent/log.h"

static const char *const strategy_names[] = {
	[PROBE_AUTO] = "auto", [PROBE_EMULATE] = "emulate",
	[PROBE_BOOST] = "boost", [PROBE_STEP] = "step", [PROBE_PAD] = "pad",
};

int probe_strategy_parse(const char *s)
{
	for (int i = 0; i < (int)(sizeof(strategy_names) / sizeof(strategy_names[0])); i++)
		if (strcmp(s, strategy_names[i]) == 0)
			return i;
	return -EINVAL;
}

struct probe *probe_at(struct process *p, uint64_t addr)
{
	for (struct probe *pr = p->probes; pr; pr = pr->next)
		if (pr->addr == addr)
			return pr;
	return NULL;
}

/*
 * The strategy a hit uses: the arch's, unless forced and possible.  auto
 * is the fastest: emulating an instruction that writes more than the PC
 * costs a register or memory write (a system call each) on every hit,
 * where an out-of-line copy costs none, so those are boosted when a slot
 * can take them (and emulated when it cannot).
 */
static enum arch_strategy choose(const struct arch_insn *insn)
{
	const struct arch_ops *arch = agent.arch;

	switch (agent.opt.tp_strategy) {
	case PROBE_AUTO:
	case PROBE_PAD:		/* the pad comes on top (probe_insert_flags) */
		if (arch_prefers_boost(arch, insn))
			return ARCH_BOOST;
		return insn->strategy;
	case PROBE_EMULATE:
		return insn->strategy;
	case PROBE_BOOST:
		return ARCH_BOOST;
	case PROBE_STEP:
		return ARCH_STEP;
	}
	return insn->strategy;
}

static int prepare_slot(struct probe *pr, enum arch_strategy s)
{
	const struct arch_ops *arch = agent.arch;
	struct arch_insn copy = pr->insn;
	uint8_t code[256];
	int n, err;

	if (!xol_slot_reuse(pr->proc, pr->addr, &pr->slot)) {
		err = xol_slot_alloc(pr->proc, pr->addr, &pr->slot);
		if (err < 0)
			return err;
	}
	copy.strategy = s;
	n = arch->xol_prepare(&copy, pr->slot, code, xol_slot_size(), &pr->xol);
	if (n < 0)
		return n;
	if (mem_write_raw(pr->proc, pr->slot, code, n) != n)
		return -EIO;
	keeper_code(pr->proc->pid, KEEPER_STEP, pr->slot, pr->addr, pr->insn.len,
		    pr->xol.insn_len, pr->xol.step ? pr->xol.scratch_gpr : -1, 0);
	pr->strategy = pr->xol.step ? ARCH_STEP : ARCH_BOOST;
	return 0;
}

int probe_insert(struct process *p, uint64_t addr,
		 int (*fn)(struct probe *, struct thread *, void *), void *arg,
		 struct probe **out, char *why, size_t whylen)
{
	return probe_insert_flags(p, addr, fn, arg, 0, out, why, whylen);
}

/*
 * probe_insert, and with PROBE_MAY_PAD (the owner copes with a hit whose
 * registers come from a pad) a jump pad on top where the instruction and
 * the process allow one, unless a strategy without pads is forced.
 */
int probe_insert_flags(struct process *p, uint64_t addr,
		       int (*fn)(struct probe *, struct thread *, void *),
		       void *arg, unsigned int flags, struct probe **out,
		       char *why, size_t whylen)
{
	const struct arch_ops *arch = agent.arch;
	uint8_t buf[ARCH_INSN_MAX];
	struct probe *pr;
	ssize_t n;
	int err;

	if (probe_at(p, addr)) {
		snprintf(why, whylen, "a probe is already at 0x%llx",
			 (unsigned long long)addr);
		return -EEXIST;
	}
	/* Only code: a breakpoint in data would corrupt it. */
	char perms[5];
	if (mem_mapping_perms(p, addr, 1, perms) < 0) {
		snprintf(why, whylen, "0x%llx is not mapped in process %d",
			 (unsigned long long)addr, p->pid);
		return -EFAULT;
	}
	if (perms[2] != 'x') {
		snprintf(why, whylen, "0x%llx is not code: its memory is %s, not executable",
			 (unsigned long long)addr, perms);
		return -EPERM;
	}
	/* Original bytes: mem_read hides gdb's breakpoints. */
	n = mem_read(p, addr, buf, arch->max_insn_len);
	if (n <= 0) {
		snprintf(why, whylen, "cannot read memory at 0x%llx",
			 (unsigned long long)addr);
		return -EFAULT;
	}
	keeper_install(p);	/* after an exec: the handler went with it */
	pr = calloc(1, sizeof(*pr));
	if (!pr)
		return -ENOMEM;
	pr->proc = p;
	pr->addr = addr;
	pr->on_hit = fn;
	pr->arg = arg;
	/* Where the arch has two instruction sets (32-bit ARM), bit 0 of the
	 * address decodes the second (Thumb): gdb gives the address without
	 * it, the symbols of the file mapped there say which. */
	uint64_t daddr = addr;
	if (agent.ptrace->flags_isa_bit && process_isa_at(p, addr) == 1)
		daddr |= 1;
	pr->code_addr = daddr;
	err = arch->insn_decode(buf, n, daddr, &pr->insn);
	if (err == 0 && pr->insn.strategy == ARCH_REJECT)
		err = -ENOTSUP;
	if (err < 0) {
		snprintf(why, whylen, "cannot probe 0x%llx: %s",
			 (unsigned long long)addr, pr->insn.reason);
		free(pr);
		return err;
	}
	enum arch_strategy s = choose(&pr->insn);
	if (s == ARCH_EMULATE) {
		pr->strategy = ARCH_EMULATE;
	} else {
		err = prepare_slot(pr, s);
		/* A forced strategy the instruction cannot take falls back on
		 * its own; its own failing is an error.  auto never trades an
		 * emulation for two stops (a copy that must be stepped). */
		if (err < 0 && s != pr->insn.strategy && pr->insn.strategy == ARCH_EMULATE) {
			pr->strategy = ARCH_EMULATE;
			err = 0;
		} else if (err == 0 && pr->strategy == ARCH_STEP &&
			   agent.opt.tp_strategy == PROBE_AUTO &&
			   pr->insn.strategy == ARCH_EMULATE) {
			pr->strategy = ARCH_EMULATE;
		}
		if (err < 0) {
			if (err == -ENOMEM)
				snprintf(why, whylen, "cannot prepare an out-of-line copy of the instruction at 0x%llx: no room for an XOL area within %llu MiB of it",
					 (unsigned long long)addr,
					 (unsigned long long)(arch->xol_reach >> 20));
			else
				snprintf(why, whylen, "cannot prepare an out-of-line copy of the instruction at 0x%llx: %s",
					 (unsigned long long)addr,
					 err == -ERANGE ? "its relocated branch cannot reach the target from the slot" :
					 err == -EINVAL ? "it cannot be relocated (it would need the register it writes)" :
					 strerror(-err));
			free(pr);
			return err;
		}
	}
	/* The arch's breakpoint for the instruction there (32-bit ARM: the
	 * instruction set and, in Thumb, the instruction's size). */
	err = bp_insert(p, addr, arch->bp_kind_at ? arch->bp_kind_at(daddr, buf, (size_t)n)
						  : arch->bp_len);
	if (err < 0) {
		snprintf(why, whylen, "cannot write a breakpoint at 0x%llx: %s",
			 (unsigned long long)addr, strerror(-err));
		free(pr);
		return err;
	}
	pr->next = p->probes;
	p->probes = pr;
	if ((flags & PROBE_NEED_PAD) ||
	    ((flags & PROBE_MAY_PAD) && (agent.opt.tp_strategy == PROBE_AUTO ||
					 agent.opt.tp_strategy == PROBE_PAD))) {
		char pwhy[160];
		pr->pad_ret_want = (flags & PROBE_PAD_RET) != 0;
		pr->pad_ret_only = (flags & PROBE_PAD_RET_ONLY) != 0;
		err = pad_attach(pr, !(flags & PROBE_PAD_COLLECT) ? PAD_STOPS :
				     (flags & PROBE_PAD_IPA) ? PAD_IPA :
				     (flags & PROBE_PAD_TIME_TID) ? PAD_REGS_TIME_TID : PAD_REGS,
				 pwhy, sizeof(pwhy));
		if (err < 0 && (flags & PROBE_NEED_PAD)) {
			snprintf(why, whylen, "no jump pad at 0x%llx: %s; use trace, "
				 "not ftrace, there", (unsigned long long)addr, pwhy);
			probe_remove(pr);
			return err;
		}
		if (err < 0)
			debug("no pad at %#llx: %s", (unsigned long long)addr, pwhy);
	}
	debug("probe at %#llx: %s%s (%s)", (unsigned long long)addr,
	      pr->pad ? "pad, else " : "", arch_strategy_name(pr->strategy),
	      pr->insn.reason);
	*out = pr;
	return 0;
}

void probe_remove(struct probe *pr)
{
	struct process *p = pr->proc;

	/* A stopped thread inside this probe's slot goes back to the
	 * original code first: once the probe is gone nothing maps the slot
	 * to it, and a detach unmaps the slot.  (Running threads are stopped
	 * by the caller first: inferior_pause.) */
	if (pr->slot || pr->pad)
		for (struct thread *t = p->threads; t; t = t->next)
			if (t->state == THREAD_STOPPED && !t->step_probe)
				probe_fix_pc(t);
	pad_detach(pr);
	for (struct probe **pp = &p->probes; *pp; pp = &(*pp)->next)
		if (*pp == pr) {
			*pp = pr->next;
			break;
		}
	bp_remove(p, pr->addr);
	if (pr->slot)
		xol_slot_release(p, pr->addr, pr->slot);
	if (pr->on_gone)
		pr->on_gone(pr, pr->arg);
	/* Threads between the two stops of a step keep their state; the
	 * slot stays mapped until detach. */
	for (struct thread *t = p->threads; t; t = t->next)
		if (t->step_probe == pr)
			t->step_probe_gone = true;
	free(pr);
}

void probe_remove_unmapped(struct probe *pr)
{
	bp_unmapped(pr->proc, pr->addr);
	probe_remove(pr);
}

/* The program's memory is gone: tell the owner, free the probe. */
void probe_gone(struct probe *pr)
{
	if (pr->on_gone)
		pr->on_gone(pr, pr->arg);
	free(pr);
}

void probe_remove_all(struct process *p)
{
	while (p->probes)
		probe_remove(p->probes);
}

static int mem_cb_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return mem_read(ctx, addr, buf, len) == (ssize_t)len ? 0 : -EFAULT;
}

static int mem_cb_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	return mem_write(ctx, addr, buf, len) == (ssize_t)len ? 0 : -EFAULT;
}

/*
 * Executes the displaced instruction of `pr` for thread `t`, stopped at
 * the probe with its PC at the probe address.  Returns:
 *   PROBE_EXEC_RUN   registers set, resume the thread as it was going
  *   PROBE_EXEC_STEP  single-step the thread (the step strategy's first stop)
 *   PROBE_EXEC_DONE  the instruction is done and the thread must not run on
 *               (gdb is single-stepping it: report the step)
 * or a negative errno (the emulator could not access memory).
 */
int probe_execute(struct probe *pr, struct thread *t)
{
	uint8_t *blk = regs_block_gpr(t);
	struct arch_gpregs g;
	int err;

	if (!blk)
		return -ESRCH;
	regs_to_gpregs(blk, &g);
	if (pr->strategy == ARCH_EMULATE) {
		struct arch_mem mem = { t->proc, mem_cb_read, mem_cb_write };
		err = agent.arch->insn_emulate(&pr->insn, &g, &mem);
		if (err < 0)
			return err;
		regs_from_gpregs(blk, &g);
		t->regs_dirty = true;
		return t->user_stepping || t->ws_left ? PROBE_EXEC_DONE : PROBE_EXEC_RUN;
	}
	if (pr->strategy == ARCH_BOOST && !t->user_stepping && !t->ws_left) {
		g.pc = pr->slot;
		regs_from_gpregs(blk, &g);
		t->regs_dirty = true;
		return PROBE_EXEC_RUN;
	}
	/* Step: through the slot one instruction at a time. */
	t->step_xol = pr->xol;
	if (pr->xol.scratch_gpr >= 0) {
		t->step_xol.scratch_saved = g.gpr[pr->xol.scratch_gpr];
		keeper_step(t->tid, t->step_xol.scratch_saved);
		g.gpr[pr->xol.scratch_gpr] = pr->xol.scratch_value;
	}
	g.pc = pr->slot;
	regs_from_gpregs(blk, &g);
	t->regs_dirty = true;
	t->step_probe = pr;
	t->step_probe_gone = false;
	t->step_insn = pr->insn;
	t->step_slot = pr->slot;
	t->step_user = t->user_stepping || t->ws_left;
	return PROBE_EXEC_STEP;
}

/*
 * The single step through a slot finished (or a signal stopped it).
 * Returns PROBE_EXEC_RUN / PROBE_EXEC_STEP (more of the slot to run) / PROBE_EXEC_DONE
 * like probe_execute; the thread is no longer in the slot unless
 * PROBE_EXEC_STEP.
 */
int probe_step_done(struct thread *t, bool trapped)
{
	uint8_t *blk = regs_block_gpr(t);
	struct arch_gpregs g;
	uint64_t end = t->step_slot + t->step_xol.insn_len;

	if (!blk)
		return -ESRCH;
	regs_to_gpregs(blk, &g);
	/* The step ran the copy to its end: the arch puts pc back into the
	 * original code and undoes what it borrowed. */
	if (agent.arch->xol_fixup(&t->step_insn, &t->step_xol, &g) == 0)
		goto done;
	if (g.pc >= t->step_slot && g.pc < end) {
		if (trapped && g.pc != t->step_slot)
			return PROBE_EXEC_STEP;	/* a multi-instruction copy */
		/* Interrupted before the instruction ran: back to the probe,
		 * whose hit was already handled. */
		g.pc = t->step_insn.addr;
		t->probe_skip = t->step_insn.addr;
	}
	/* Else a branch left the slot: pc is already right.  Either way the
	 * scratch register probe_execute() loaded goes back. */
	if (t->step_xol.scratch_gpr >= 0)
		g.gpr[t->step_xol.scratch_gpr] = t->step_xol.scratch_saved;
done:
	regs_from_gpregs(blk, &g);
	t->regs_dirty = true;
	t->step_probe = NULL;
	return t->step_user ? PROBE_EXEC_DONE : PROBE_EXEC_RUN;
}

/*
 * A thread stopped inside a boost slot (a signal arrived before or after
 * the relocated instruction) must not be shown there: put its PC back in
 * the original code.  Returns true if it moved.
 */
bool probe_fix_pc(struct thread *t)
{
	struct process *p = t->proc;
	uint64_t pc;

	if (!p->xol_areas)
		return false;
	pc = regs_get_pc(t);
	if (pad_in_callee(p, pc))
		return pad_settle(t);
	if (!xol_contains(p, pc))
		return false;
	if (pad_contains(p, pc))
		return pad_settle(t);
	for (struct probe *pr = p->probes; pr; pr = pr->next) {
		if (pr->strategy == ARCH_EMULATE || pc < pr->slot ||
		    pc >= pr->slot + xol_slot_size())
			continue;
		if (pc == pr->slot) {
			regs_set_pc(t, pr->addr);
			t->probe_skip = pr->addr;
			return true;
		}
		/* Past the copy, before its jump back: the arch's fixup.  No
		 * scratch register is borrowed outside a step in progress
		 * (probe_step_done handles those). */
		struct arch_xol xol = pr->xol;
		struct arch_gpregs g;
		uint8_t *blk = regs_block_gpr(t);
		xol.scratch_gpr = -1;
		if (!blk)
			return false;
		regs_to_gpregs(blk, &g);
		if (agent.arch->xol_fixup(&pr->insn, &xol, &g) < 0)
			continue;
		regs_set_pc(t, g.pc);
		return true;
	}
	return false;
}
