/*
 * hit.c - a thread hit a probe: what happens next.
 *
 * A probe's breakpoint (probe_hit) or its jump pad (pad_hit) brought the
 * thread here.  The probe's owner (tracepoint, return probe, conditional
 * breakpoint) handles the hit; then the displaced instruction runs
 * (probe.c), the thread is parked while the trace buffer is full, or gdb
 * hears of the stop when it has a breakpoint of its own at that address.
 * one_instruction_done() decides what follows a single step taken for
 * while-stepping or for gdb.
 */
#define LOG_DOMAIN "inferior"
#include "config.h"

#include <string.h>

#include "agent/agent.h"
#include "agent/inferior.h"
#include "agent/log.h"
#include "agent/regblock.h"

/* A thread that single-steps for while-stepping, or for gdb, finished an
 * instruction: collect, then step on, run on, or report gdb's step. */
enum wait_outcome one_instruction_done(struct thread *t)
{
	if (t->ws_left) {
		trace_step_frame(t);
		trace_after_hit();
		if (!t->user_stepping)
			return WAIT_RESUME;
	}
	if (t->user_stepping && t->range_end) {
		/* Range stepping (vCont;r) over a probe: on while inside. */
		uint64_t pc = regs_get_pc(t);
		if (pc >= t->range_start && pc < t->range_end)
			return WAIT_RESUME;
		t->range_end = 0;
	}
	return t->user_stepping ? WAIT_REPORT : WAIT_RESUME;
}

/*
 * A thread hit a probe.  The owner handles the hit, then the displaced
 * instruction runs (probe.c).  When gdb has its own breakpoint here too,
 * or the owner wants gdb to know, the stop is reported first with the PC
 * at the probe; the hit is then not handled again when gdb resumes.
 */
static enum wait_outcome probe_hit_finish(struct probe *pr, struct thread *t,
					  struct sw_breakpoint *b,
					  struct stop_event *ev, bool skip,
					  int report);

enum wait_outcome probe_hit(struct probe *pr, struct thread *t,
				   struct sw_breakpoint *b, struct stop_event *ev)
{
	uint8_t *blk = regs_block_gpr(t);
	bool skip = t->probe_skip == pr->addr;
	int report = 0;

	if (!blk)
		return WAIT_REPORT;
	pr->hits_stopped++;
	regblock_set(agent.arch, blk, agent.arch->pc_regnum, pr->addr);
	t->regs_dirty = true;
	t->probe_skip = 0;
	if (!skip && pr->on_hit)
		report = pr->on_hit(pr, t, pr->arg);
	if (report == PROBE_HIT_WAIT) {
		/* The PC is back on the probe: the thread hits it again once
		 * unparked, as if it had not arrived yet. */
		t->parked = true;
		return WAIT_PARKED;
	}
	return probe_hit_finish(pr, t, b, ev, skip, report);
}

/* The rest of a hit, once the owner had it (`report`: it wants gdb told). */
static enum wait_outcome probe_hit_finish(struct probe *pr, struct thread *t,
					  struct sw_breakpoint *b,
					  struct stop_event *ev, bool skip,
					  int report)
{
	int r;
	/* `skip` spares the collection only: a breakpoint of gdb's here
	 * reports every time the thread arrives with it inserted, as the
	 * CPU would (a stop dropped while everything stopped comes back
	 * this way; gdb steps over its breakpoints with them removed). */
	bool gdb_stop = b && b->gdb_refs && bp_condition_holds(b, t);

	if ((!skip && report) || gdb_stop) {
		t->probe_skip = pr->addr;
		if (gdb_stop)
			ev->reason = REASON_SWBREAK;
		return WAIT_REPORT;
	}
	r = probe_execute(pr, t);
	trace_after_hit();
	if (r == PROBE_EXEC_RUN || r == PROBE_EXEC_STEP)
		return WAIT_RESUME;
	if (r == PROBE_EXEC_DONE)
		return one_instruction_done(t);
	debug("probe at %#llx: the displaced instruction failed: %s",
	      (unsigned long long)pr->addr, strerror(-r));
	return WAIT_REPORT;	/* a fault to show */
}

/*
 * A hit through a jump pad (pad.c): the registers at the probe are in the
 * cache already.  Usually the thread just runs on in its pad; when gdb
 * must hear of the stop, or the thread must step, it leaves the pad for
 * the probe's address first and goes on as after a breakpoint hit.
 */
enum wait_outcome pad_hit(struct probe *pr, struct thread *t,
				 struct sw_breakpoint *b, struct stop_event *ev)
{
	bool skip = t->probe_skip == pr->addr;
	int report = 0;

	pr->hits_stopped++;
	t->probe_skip = 0;
	if (!skip && pr->on_hit)
		report = pr->on_hit(pr, t, pr->arg);
	if (report == PROBE_HIT_WAIT) {
		/* Out of the pad, back at the probe with the registers it
		 * had there: unparked, it enters the pad again. */
		if (pad_leave(t) < 0)
			return WAIT_REPORT;
		t->parked = true;
		return WAIT_PARKED;
	}
	bool gdb_stop = b && b->gdb_refs && bp_condition_holds(b, t);
	if (!report && !gdb_stop && !t->ws_left && !t->user_stepping) {
		pad_continue(t);
		trace_after_hit();
		return WAIT_RESUME;
	}
	if (pad_leave(t) < 0)
		return WAIT_REPORT;
	if (t->ws_left || t->user_stepping)
		pad_before_step(pr);
	return probe_hit_finish(pr, t, b, ev, skip, report);
}
