/*
 * inferior.c - processes and threads under ptrace, in all-stop mode.
 *
 * Every thread of every traced process is a `struct thread`.  Wait statuses
 * arrive through SIGCHLD (inferior_sigchld) and are classified into one
 * `enum wait_outcome` each (classify()), which says what happens next:
 *
 *   WAIT_IGNORE        our own SIGSTOP, or a clone's first stop: the thread
 *                      runs on if gdb had resumed it, else stays stopped
 *   WAIT_RESUME        an internal event (clone, a signal gdb lets pass, an
 *                      uncaught syscall): resume it as it was
 *   WAIT_REPORT        gdb must hear of it: in all-stop, every other thread
 *                      is stopped first (stop_all()), then the stop reply
 *                      goes out
 *   WAIT_THREAD_GONE   a thread exited; the process lives on
 *   WAIT_PROCESS_GONE  the last thread exited: report W/X
 *   WAIT_PARKED        a probe hit its owner cannot take yet (the trace
 *                      buffer is full): the thread stays stopped on the
 *                      probe's address until inferior_unpark
 *
 * Invariants:
 * - A thread that stopped for a reportable reason while we were stopping
 *   everything keeps that event as `pending`; it is reported, without
 *   running anything, the next time gdb resumes that thread.  A breakpoint
 *   hit caught that way is cancelled instead (PC moved back), since gdb may
 *   remove the breakpoint before resuming; the thread will hit it again.
 * - A signal gdb lets pass that arrives while stopping is kept in
 *   `pending_signal` and delivered with the thread's next resume.
 * - ESRCH from ptrace means the thread is gone: a state change that the
 *   next wait status confirms, never a crash.
 */
#define LOG_DOMAIN "inferior"
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/ptrace.h>

#include "agent/agent.h"
#include "agent/keeper.h"
#include "agent/log.h"
#include "agent/regblock.h"

#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128
#endif

#define TRACE_OPTIONS                                                          \
	(PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |      \
	 PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEVFORKDONE)

/* Wait statuses of threads we did not know yet (a clone child can report
 * its first stop before its parent reports the clone). */
#define MAX_ORPHANS 64
static struct {
	pid_t tid;
	int status;
} orphans[MAX_ORPHANS];
static int norphans;

static void stop_event_clear(struct stop_event *ev)
{
	free(ev->exec_path);
	memset(ev, 0, sizeof(*ev));
}

/* --- lookup --------------------------------------------------------------- */

struct process *process_find(pid_t pid)
{
	for (struct process *p = agent.processes; p; p = p->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

struct thread *thread_find(pid_t tid)
{
	for (struct process *p = agent.processes; p; p = p->next)
		for (struct thread *t = p->threads; t; t = t->next)
			if (t->tid == tid)
				return t;
	return NULL;
}

struct thread *thread_find_ptid(int64_t pid, int64_t tid)
{
	for (struct process *p = agent.processes; p; p = p->next) {
		if (pid > 0 && p->pid != pid)
			continue;
		for (struct thread *t = p->threads; t; t = t->next)
			if (t->tid == tid || (tid <= 0 && !t->zombie))
				return t;
	}
	return NULL;
}

struct process *current_process(void)
{
	if (agent.gthread)
		return agent.gthread->proc;
	if (agent.gpid) {
		struct process *p = process_find(agent.gpid);
		if (p)
			return p;
	}
	return agent.processes;
}

struct thread *current_thread(void)
{
	if (agent.gthread)
		return agent.gthread;
	struct process *p = current_process();
	return p ? p->threads : NULL;
}

/* --- creation and removal -------------------------------------------------- */

static struct thread *thread_add(struct process *p, pid_t tid)
{
	struct thread *t = calloc(1, sizeof(*t));
	struct thread **tail;

	if (!t)
		abort();
	t->proc = p;
	t->tid = tid;
	t->state = THREAD_STOPPED;
	t->dregs_dirty = true;
	t->regcache = calloc(1, regs_cache_size());
	if (!t->regcache)
		abort();
	/* Created while the process is paused: its parent was running, and
	 * it runs too once the pause is over (inferior_unpause), or its
	 * first stop, absorbed by the pause, leaves it stopped for good. */
	t->paused = p->pause_depth > 0;
	/* Keep creation order: the leader first, as gdb lists threads. */
	for (tail = &p->threads; *tail; tail = &(*tail)->next)
		;
	*tail = t;
	debug("thread %d added to process %d", tid, p->pid);
	return t;
}

static void thread_remove(struct thread *t)
{
	struct process *p = t->proc;

	for (struct thread **pp = &p->threads; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	if (agent.gthread == t)
		agent.gthread = NULL;
	if (agent.cthread == t)
		agent.cthread = NULL;
	if (agent.thread_iter == t)
		agent.thread_iter = NULL;
	debug("thread %d removed", t->tid);
	keeper_thread_gone(t->tid);
	ret_thread_free(t);
	free(t->regcache);
	free(t);
}

static struct process *process_add(pid_t pid, bool attached)
{
	struct process *p = calloc(1, sizeof(*p));
	struct process **tail;

	if (!p)
		abort();
	p->pid = pid;
	p->attached = attached;
	p->mem_fd = -1;
	keeper_process_add(pid);
	for (tail = &agent.processes; *tail; tail = &(*tail)->next)
		;
	*tail = p;
	return p;
}

/* The address space is gone (exit, exec): drop probes without touching it. */
static void forget_probes(struct process *p)
{
	trace_drain(false);	/* the pads' records are in the agent's memory */
	trace_probes_gone(p);
	keeper_process_exec(p->pid);
	while (p->probes) {
		struct probe *pr = p->probes;
		p->probes = pr->next;
		probe_gone(pr);
	}
	xol_forget_all(p);
	pad_forget(p);
	ret_process_forget(p);
	for (struct thread *t = p->threads; t; t = t->next)
		t->step_probe = NULL;
}

void process_free(struct process *p)
{
	keeper_process_gone(p->pid);
	thread_db_forget(p->pid);
	trace_process_gone(p);
	for (struct process **pp = &agent.processes; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	}
	while (p->threads)
		thread_remove(p->threads);
	while (p->breakpoints) {
		struct sw_breakpoint *b = p->breakpoints;
		p->breakpoints = b->next;
		free(b);
	}
	forget_probes(p);
	while (p->hw_points) {
		struct hw_point *h = p->hw_points;
		p->hw_points = h->next;
		free(h);
	}
	if (p->mem_fd >= 0)
		close(p->mem_fd);
	if (agent.gpid == p->pid)
		agent.gpid = 0;
	if (agent.proc_iter == p)
		agent.proc_iter = NULL;
	free(p);
}

static void orphan_take(struct thread *t)
{
	for (int i = 0; i < norphans; i++) {
		if (orphans[i].tid == t->tid) {
			/* Its first stop already came: it is stopped now, and
			 * starts with its parent unless everything stops. */
			t->new_clone = false;
			t->state = THREAD_STOPPED;
			t->start_pending = true;
			orphans[i] = orphans[--norphans];
			return;
		}
	}
}

/* --- resuming -------------------------------------------------------------- */

static int resume_thread(struct thread *t, bool step, int sig)
{
	enum __ptrace_request req = PTRACE_CONT;
	bool one = step || t->step_probe || t->ws_left;
	int err;

	if (t->dregs_dirty)
		hw_sync_thread(t);
	if (t->ret && ret_shown(t))
		ret_resume(t);	/* the trampoline back in its stack */
	if (t->probe_skip && !step && !t->ws_left)
		pad_resume_skip(t);
	if (t->regs_dirty) {
		err = regs_flush(t);
		if (err < 0)
			debug("thread %d: register write failed: %s", t->tid,
			      strerror(-err));
	}
	if (!sig && t->pending_signal) {
		sig = t->pending_signal;
		t->pending_signal = 0;
	}
	/* Between the two stops of a probe's step strategy the thread
	 * single-steps whatever gdb asked. */
	if (!one && agent.catch_syscalls)
		req = PTRACE_SYSCALL;
	regs_invalidate(t);
	if (one)
		err = thread_step(t, sig);
	else if ((err = ptrace(req, t->tid, NULL, (void *)(long)sig) < 0 ? -errno : 0) == 0)
		keeper_stepping(t->tid, false);
	if (err < 0) {
		/* ESRCH: the thread died under us; waitpid will say so. */
		debug("resume %d: %s", t->tid, strerror(-err));
		return err;
	}
	t->state = THREAD_RUNNING;
	t->stop_reported = false;
	t->stepping = one;
	debug("resumed %d (%s, signal %d)", t->tid, step ? "step" : "continue",
	      sig);
	return 0;
}

/* --- classifying wait statuses -------------------------------------------- */

static bool thread_is_last(struct thread *t)
{
	return t->proc->threads == t && t->next == NULL;
}

static void fill_signal_stop(struct thread *t, struct stop_event *ev, int sig)
{
	ev->kind = STOP_SIGNAL;
	ev->gdb_signal = signal_to_gdb(sig);
	ev->pid = t->proc->pid;
	ev->tid = t->tid;
}

/* A new process from fork/vfork: it starts with its own SIGSTOP, and a copy
 * of the parent's memory, breakpoints included. */
static struct process *adopt_fork_child(struct process *parent, pid_t child)
{
	struct process *c = process_add(child, parent->attached);
	int status;

	c->fork_child = true;
	c->hidden = true;	/* until gdb hears of the fork */
	c->features = parent->features;
	thread_add(c, child);
	/* Wait for its first stop unless it already came. */
	bool seen = false;
	for (int i = 0; i < norphans; i++)
		if (orphans[i].tid == child) {
			orphans[i] = orphans[--norphans];
			seen = true;
			break;
		}
	if (!seen && waitpid(child, &status, __WALL) < 0)
		debug("fork child %d: %s", child, strerror(errno));
	mem_open(c);
	/* The child's memory holds the parent's breakpoints: it owns copies. */
	if (bp_clone_all(parent, c) < 0)
		abort();	/* out of memory, as everywhere else here */
	return c;
}

static void release_fork_child(struct process *c)
{
	/* Its stack is a copy of the forking thread's: real return
	 * addresses back, as the breakpoints go. */
	ret_restore_process(c);
	bp_remove_all(c);
	for (struct thread *t = c->threads; t; t = t->next)
		ptrace(PTRACE_DETACH, t->tid, NULL, NULL);
	process_free(c);
}

static enum wait_outcome classify_event(struct thread *t, int status,
					struct stop_event *ev, int *resume_sig)
{
	struct process *p = t->proc;
	unsigned long msg = 0;
	int event = status >> 16;

	ptrace(PTRACE_GETEVENTMSG, t->tid, NULL, &msg);
	switch (event) {
	case PTRACE_EVENT_CLONE: {
		struct thread *n = thread_add(p, (pid_t)msg);
		n->new_clone = true;
		n->state = THREAD_RUNNING;	/* until its first stop */
		n->resumed = t->resumed;
		orphan_take(n);
		if (agent.thread_events) {
			fill_signal_stop(t, ev, SIGTRAP);
			ev->reason = REASON_CLONE;
			ev->tid = n->tid;
			return WAIT_REPORT;
		}
		return WAIT_RESUME;
	}
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK: {
		bool vfork = event == PTRACE_EVENT_VFORK;
		struct process *c = adopt_fork_child(p, (pid_t)msg);
		if (!vfork)
			pad_fork_child(c);	/* a vfork child shares the memory */
		ret_fork(t, c);

		if ((vfork && agent.report_vfork) || (!vfork && agent.report_fork)) {
			fill_signal_stop(t, ev, SIGTRAP);
			ev->reason = vfork ? REASON_VFORK : REASON_FORK;
			ev->data = (uint64_t)msg;
			return WAIT_REPORT;
		}
		release_fork_child(c);
		return WAIT_RESUME;
	}
	case PTRACE_EVENT_VFORK_DONE:
		if (agent.report_vfork) {
			fill_signal_stop(t, ev, SIGTRAP);
			ev->reason = REASON_VFORK_DONE;
			return WAIT_REPORT;
		}
		return WAIT_RESUME;
	case PTRACE_EVENT_EXEC: {
		char path[64], exe[4096];
		ssize_t n;

		/* The old image is gone: its other threads, its breakpoints
		 * and its memory file with it.  The leader's tid is the pid. */
		for (struct thread *o = p->threads, *next; o; o = next) {
			next = o->next;
			if (o != t)
				thread_remove(o);
		}
		if (t->tid != p->pid)
			t->tid = p->pid;
		t->zombie = false;	/* a non-leader exec'd: it is the leader now */
		while (p->breakpoints) {
			struct sw_breakpoint *b = p->breakpoints;
			p->breakpoints = b->next;
			free(b);
		}
		forget_probes(p);
		mem_open(p);
		p->features = regs_detect_features(t->tid);
		if (p->execs_to_skip > 0) {
			p->execs_to_skip--;
			return WAIT_RESUME;
		}
		fill_signal_stop(t, ev, SIGTRAP);
		if (agent.report_exec) {
			snprintf(path, sizeof(path), "/proc/%d/exe", p->pid);
			n = readlink(path, exe, sizeof(exe) - 1);
			exe[n > 0 ? n : 0] = '\0';
			ev->reason = REASON_EXEC;
			ev->exec_path = strdup(exe);
		}
		return WAIT_REPORT;
	}
	default:
		fill_signal_stop(t, ev, SIGTRAP);
		return WAIT_REPORT;
	}
}

/* A thread that single-steps for while-stepping, or for gdb, finished an
 * instruction: collect, then step on, run on, or report gdb's step. */
static enum wait_outcome one_instruction_done(struct thread *t)
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

static enum wait_outcome probe_hit(struct probe *pr, struct thread *t,
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

/* Whether the breakpoint instruction a trap came from is no longer at
 * `addr`: the agent took it out after the thread executed it.  A
 * breakpoint instruction of the program's own is still there, and is
 * reported. */
static bool breakpoint_gone(struct process *p, uint64_t addr)
{
	uint8_t buf[1];

	return mem_read_raw(p, addr, buf, 1) == 1 && !bp_insn_here(p, addr);
}

/*
 * A hit through a jump pad (pad.c): the registers at the probe are in the
 * cache already.  Usually the thread just runs on in its pad; when gdb
 * must hear of the stop, or the thread must step, it leaves the pad for
 * the probe's address first and goes on as after a breakpoint hit.
 */
static enum wait_outcome pad_hit(struct probe *pr, struct thread *t,
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

static enum wait_outcome classify_trap(struct thread *t, struct stop_event *ev)
{
	siginfo_t si;
	enum stop_reason reason;
	uint64_t addr;
	struct probe *ppr;

	fill_signal_stop(t, ev, SIGTRAP);
	switch (pad_trap(t, &ppr)) {
	case PAD_TRAP_RESUME:
		return WAIT_RESUME;
	case PAD_TRAP_HIT:
		return pad_hit(ppr, t, bp_find(t->proc, ppr->addr), ev);
	case PAD_TRAP_NONE:
		break;
	}
	if (t->proc->ret_tramp) {
		/* A return probe's function returned (retprobe.c). */
		enum wait_outcome o;
		if (ret_trap(t, &o))
			return o;
	}
	/*
	 * The hot path: a thread neither stepping nor in a slot, stopped just
	 * past a probe's breakpoint, hit the probe.  No other SIGTRAP leaves
	 * the PC there (the breakpoint is the probe's own), so the signal's details
	 * are not needed.
	 */
	if (!t->stepping && !t->step_probe && !t->ws_left && t->proc->probes) {
		uint64_t pc = regs_get_pc(t) - agent.arch->bp_pc_after_trap;
		struct probe *pr = probe_at(t->proc, pc);
		if (pr)
			return probe_hit(pr, t, bp_find(t->proc, pc), ev);
	}
	if (ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si) < 0)
		return WAIT_REPORT;
	/* The end of a software single-step is a breakpoint trap. */
	enum trap_kind kind = t->sstep_ended ? TRAP_KIND_STEP : agent.ptrace->trap_kind(&si);
	t->sstep_ended = false;
	/* Asked once: the arch may clear what it reads (x86 DR6).  The
	 * breakpoint instruction never comes from a hardware point. */
	bool hw = kind != TRAP_KIND_BREAKPOINT && hw_stopped_by(t, &si, &reason, &addr);

	if (kind == TRAP_KIND_STEP && t->proc->pads && !t->step_probe) {
		/* A step over a pad's jump: the probe's hit, as if by its
		 * breakpoint; the instruction is stepped out of line. */
		struct probe *pe = pad_entered(t->proc, regs_get_pc(t));
		if (pe && regs_set_pc(t, pe->addr) == 0) {
			pad_before_step(pe);
			return probe_hit(pe, t, bp_find(t->proc, pe->addr), ev);
		}
	}
	if (t->range_end && kind == TRAP_KIND_STEP && !t->step_probe &&
	    !t->ws_left && !hw) {
		/* Range stepping: on while the PC stays in the line's range. */
		uint64_t pc = regs_get_pc(t);
		if (pc >= t->range_start && pc < t->range_end)
			return WAIT_RESUME;
		t->range_end = 0;
		return WAIT_REPORT;
	}
	if (t->step_probe && kind != TRAP_KIND_BREAKPOINT) {
		/* The step through a probe's slot (step strategy). */
		switch (probe_step_done(t, true)) {
		case PROBE_EXEC_STEP:
		case PROBE_EXEC_RUN:
			return WAIT_RESUME;
		default:
			return one_instruction_done(t);
		}
	}
	if (t->ws_left && kind == TRAP_KIND_STEP)
		return one_instruction_done(t);
	if (hw) {
		ev->reason = reason;
		ev->data = addr;
		return WAIT_REPORT;
	}
	if (kind == TRAP_KIND_BREAKPOINT) {
		uint64_t pc = regs_get_pc(t) - agent.arch->bp_pc_after_trap;
		struct sw_breakpoint *b = bp_find(t->proc, pc);
		struct probe *pr = probe_at(t->proc, pc);

		if (pr)
			return probe_hit(pr, t, b, ev);
		if (thread_step_foreign(t, pc)) {
			/* Another thread's software single-step: this one
			 * waits on the real instruction until it is back. */
			debug("thread %d waits at another's step at %#llx", t->tid,
			      (unsigned long long)pc);
			t->parked = true;
			return WAIT_PARKED;
		}
		if (b && b->gdb_refs && b->nconds) {
			/* A conditional breakpoint: the agent decides.  A probe
			 * runs the displaced instruction when gdb is not told. */
			char why[200];
			if (probe_insert(t->proc, pc, NULL, NULL, &pr, why, sizeof(why)) == 0) {
				pr->owner = PROBE_OWNER_BREAKPOINT;
				b->cond_probe = pr;
				return probe_hit(pr, t, b, ev);
			}
			debug("conditional breakpoint at %#llx: %s",
			      (unsigned long long)pc, why);
		}
		if (b && b->gdb_refs) {
			regs_set_pc(t, pc);
			ev->reason = REASON_SWBREAK;
		}
		if (!b && breakpoint_gone(t->proc, pc)) {
			/* A probe removed while this trap was on its way (a
			 * pass count stopped the run during another thread's
			 * hit): the instruction is back; run it. */
			regs_set_pc(t, pc);
			return WAIT_RESUME;
		}
	}
	return WAIT_REPORT;
}

static enum wait_outcome classify_syscall(struct thread *t,
					  struct stop_event *ev)
{
	uint8_t *blk;
	uint64_t nr = 0;

	t->in_syscall = !t->in_syscall;
	blk = regs_block_gpr(t);
	/* A jump pad's own gettid is not the program's. */
	if (t->proc->pads && pad_contains(t->proc, regs_get_pc(t)))
		return WAIT_RESUME;
	if (blk)
		nr = regblock_get(agent.arch, blk, agent.ptrace->syscall.stop_nr_regnum);
	if (!agent.catch_syscalls ||
	    !(agent.catch_any_syscall ||
	      (nr < 1024 && agent.catch_syscall_set[nr])))
		return WAIT_RESUME;
	fill_signal_stop(t, ev, SIGTRAP);
	ev->reason = t->in_syscall ? REASON_SYSCALL_ENTRY : REASON_SYSCALL_RETURN;
	ev->data = nr;
	return WAIT_REPORT;
}

/*
 * Decides what a wait status means; fills `ev` for WAIT_REPORT and
 * WAIT_PROCESS_GONE, and `*resume_sig` (Linux numbering) for WAIT_RESUME.
 */
static enum wait_outcome classify(struct thread *t, int status,
				  struct stop_event *ev, int *resume_sig)
{
	struct process *p = t->proc;

	*resume_sig = 0;
	memset(ev, 0, sizeof(*ev));
	/* A software single-step's breakpoints go at any stop (step.c). */
	if (t->sstep_n) {
		if (WIFSTOPPED(status))
			regs_invalidate(t);
		t->sstep_ended = thread_step_stopped(t, status);
	}
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		bool leader = t->tid == p->pid;

		t->state = THREAD_STOPPED;	/* dead: nothing to stop or wait for */

		/* The kernel reports the leader's end only once every other
		 * thread of its group is reaped: it is the process's end.
		 * Threads still listed were cloned without CLONE_THREAD, into
		 * groups of their own; they go with the process, as in
		 * gdbserver. */
		if (!leader) {
			thread_remove(t);
			return WAIT_THREAD_GONE;
		}
		ev->pid = p->pid;
		ev->tid = p->pid;
		if (WIFEXITED(status)) {
			ev->kind = STOP_EXITED;
			ev->exit_code = WEXITSTATUS(status);
		} else {
			ev->kind = STOP_KILLED;
			ev->gdb_signal = signal_to_gdb(WTERMSIG(status));
		}
		return WAIT_PROCESS_GONE;
	}
	if (!WIFSTOPPED(status))
		return WAIT_IGNORE;

	t->state = THREAD_STOPPED;
	regs_invalidate(t);
	int sig = WSTOPSIG(status);

	if (sig == SIGTRAP && (status >> 16))
		return classify_event(t, status, ev, resume_sig);
	if (sig == (SIGTRAP | 0x80))
		return classify_syscall(t, ev);
	if (sig == SIGSTOP && t->new_clone) {
		t->new_clone = false;
		return WAIT_IGNORE;
	}
	if (sig == SIGSTOP && t->stop_expected) {
		t->stop_expected = false;
		return WAIT_IGNORE;
	}
	if (sig == SIGTRAP)
		return classify_trap(t, ev);

	/* The in-process collector's load of an unreadable address: not the
	 * program's signal (pad.c). */
	if (pad_ipa_fault(t, sig))
		return WAIT_RESUME;

	int gsig = signal_to_gdb(sig);
	if (t->step_probe) {
		/* A signal before the slot's instruction ran: the thread goes
		 * back to the probe, which will not count the hit again. */
		probe_step_done(t, false);
	}
	if (!t->user_stepping && gsig > 0 && gsig < 256 && agent.pass_signals[gsig]) {
		*resume_sig = sig;
		return WAIT_RESUME;
	}
	fill_signal_stop(t, ev, sig);
	t->last_signal = sig;
	return WAIT_REPORT;
}

/* --- all-stop ------------------------------------------------------------ */

/* Processes one status of a thread that we are stopping (stop_all) or that
 * came while everything is stopped.  Never resumes anything. */
static void absorb_status(struct thread *t, int status)
{
	struct stop_event ev;
	int sig;
	enum wait_outcome o = classify(t, status, &ev, &sig);

	switch (o) {
	case WAIT_IGNORE:
	case WAIT_PARKED:
		break;
	case WAIT_RESUME:
		if (sig)
			t->pending_signal = sig;
		break;
	case WAIT_REPORT:
		if (ev.kind == STOP_SIGNAL && ev.reason == REASON_SWBREAK) {
			/* PC is already back on the breakpoint: if gdb keeps
			 * it inserted, the thread hits it again on resume. */
			stop_event_clear(&ev);
			break;
		}
		t->has_pending = true;
		t->pending_ev = ev;
		t->pending_step = t->stepping && ev.kind == STOP_SIGNAL &&
				  ev.reason == REASON_NONE &&
				  ev.gdb_signal == signal_to_gdb(SIGTRAP);
		break;
	case WAIT_THREAD_GONE:
		break;
	case WAIT_PROCESS_GONE:
		t->has_pending = true;
		t->pending_ev = ev;
		t->pending_step = false;
		break;
	}
}

/* Whether thread `tid` has exited and waits to be reaped with its group. */
/* Thread `tid`'s state letter in /proc (R, S, t, Z, X...); 'X' when it is
 * gone already. */
static char thread_proc_state(pid_t pid, pid_t tid)
{
	char path[64], buf[512];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 'X';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 'X';
	buf[n] = '\0';
	/* The state follows the command name's closing parenthesis. */
	const char *s = strrchr(buf, ')');
	return s && s[1] == ' ' ? s[2] : '?';
}

static bool thread_is_zombie(pid_t pid, pid_t tid)
{
	char state = thread_proc_state(pid, tid);

	return state == 'Z' || state == 'X';
}

/* Leader `t` exited before its group: it stays stopped, out of gdb's
 * sight, until its exit status or another thread's exec names it again. */
static void mark_zombie(struct thread *t)
{
	debug("thread group leader %d exited before its group", t->tid);
	t->state = THREAD_STOPPED;
	t->stop_expected = false;
	t->stop_requested = false;
	t->resumed = false;
	t->zombie = true;
	if (agent.gthread == t)
		agent.gthread = NULL;
	if (agent.cthread == t)
		agent.cthread = NULL;
}

/*
 * A leader that exits while other threads live (pthread_exit) sends its
 * tracer SIGCHLD, yet waitpid() reports nothing for it until the whole
 * group is gone: only its /proc state says so.  Checked after each batch
 * of wait statuses.
 */
static void check_zombie_leaders(void)
{
	for (struct process *p = agent.processes; p; p = p->next) {
		struct thread *t = p->threads;
		if (!t || t->tid != p->pid || t->zombie || thread_is_last(t) ||
		    t->state != THREAD_RUNNING)
			continue;
		if (thread_is_zombie(p->pid, t->tid))
			mark_zombie(t);
	}
}

/* Stops every running thread of process `only` (NULL: of every process)
 * except `except`, waiting for each. */
static void stop_threads(struct process *only, struct thread *except)
{
	bool again = true;

	while (again) {
		again = false;
		for (struct process *p = agent.processes; p; p = p->next)
			for (struct thread *t = p->threads; t; t = t->next) {
				if ((only && p != only) || t == except ||
				    t->state != THREAD_RUNNING)
					continue;
				if (!t->stop_expected && !t->new_clone) {
					syscall(SYS_tgkill, p->pid, t->tid, SIGSTOP);
					t->stop_expected = true;
				}
			}
		for (struct process *p = agent.processes; p; p = p->next) {
			if (only && p != only)
				continue;
			for (struct thread *t = p->threads, *next; t; t = next) {
				next = t->next;
				if ((only && p != only) || t == except ||
				    t->state != THREAD_RUNNING)
					continue;
				int status;
				pid_t tid = t->tid;
				pid_t r = waitpid(tid, &status, __WALL | WNOHANG);
				if (r == 0 && thread_is_zombie(p->pid, tid)) {
					/* A leader that called pthread_exit: it
					 * reports nothing until the whole group
					 * exits.  It is stopped for good. */
					mark_zombie(t);
					continue;
				}
				if (r == 0)
					r = waitpid(tid, &status, __WALL);
				if (r < 0) {
					if (errno == EINTR) {
						again = true;
						continue;
					}
					/* Gone without a status we can see. */
					thread_remove(t);
					continue;
				}
				absorb_status(t, status);
				/* A clone adds a running thread: go round. */
				again = true;
				if (!thread_find(tid))
					break;
			}
		}
		/* Only loop again while something still runs. */
		if (again) {
			again = false;
			for (struct process *p = agent.processes; p; p = p->next)
				for (struct thread *t = p->threads; t; t = t->next)
					if ((!only || p == only) && t != except &&
					    t->state == THREAD_RUNNING)
						again = true;
		}
	}
	if (only)
		return;
	for (struct process *p = agent.processes; p; p = p->next)
		for (struct thread *t = p->threads; t; t = t->next)
			if (!only || p == only)
				t->resumed = false;
}

/* Stops every running thread except `except` (all-stop). */
static void stop_all(struct thread *except)
{
	stop_threads(NULL, except);
}

/* gdb must never see a thread inside an XOL slot. */
static void settle_probe_threads(struct thread *only)
{
	for (struct process *p = agent.processes; p; p = p->next) {
		if (!p->xol_areas)
			continue;
		for (struct thread *t = p->threads; t; t = t->next) {
			if ((only && t != only) || t->state != THREAD_STOPPED)
				continue;
			if (t->step_probe)
				probe_step_done(t, false);
			probe_fix_pc(t);
			ret_fix_pc(t);
		}
	}
}

static void report(struct thread *t, struct stop_event *ev)
{
	if (t)
		t->range_end = 0;
	if (ev->kind == STOP_SIGNAL &&
	    (ev->reason == REASON_FORK || ev->reason == REASON_VFORK)) {
		struct process *c = process_find((pid_t)ev->data);
		if (c)
			c->hidden = false;
	}
	settle_probe_threads(agent.non_stop ? t : NULL);
	/* gdb's backtrace and finish need the real return addresses. */
	for (struct process *p = agent.processes; p; p = p->next)
		for (struct thread *o = p->threads; o; o = o->next)
			if (o->ret && o->state == THREAD_STOPPED &&
			    (!agent.non_stop || o == t))
				ret_show(o);
	if (t)
		t->stop_reported = true;
	if (agent.non_stop) {
		/* Only this thread stopped; gdb hears of it by notification. */
		if (t)
			t->stop_requested = false;
		server_queue_stop(ev);
		memset(ev, 0, sizeof(*ev));
		return;
	}
	agent.running = false;
	if (ev->kind == STOP_SIGNAL && t) {
		agent.gthread = t;
		agent.cthread = t;
	}
	stop_event_clear(&agent.last_stop);
	agent.last_stop = *ev;
	agent.have_last_stop = true;
	memset(ev, 0, sizeof(*ev));
	server_send_stop(&agent.last_stop);
}

static void report_process_gone(struct process *p, struct stop_event *ev)
{
	p->exited = true;
	process_free(p);
	report(NULL, ev);
}

/*
 * All-stop: gdb waits for a stop, yet no thread it resumed can produce
 * one (the only resumed thread exited, with scheduler-locking on).  gdb
 * hears "N", as from gdbserver, instead of waiting for ever.
 */
static void check_no_resumed(void)
{
	if (agent.non_stop || !agent.running || !agent.processes)
		return;
	/* A process left with zombies only is dying (exit_group): the
	 * kernel reports its end once it has reaped the rest.  A stopped
	 * thread no longer in tracing stop ('t') was killed meanwhile (a
	 * group exit by the thread gdb resumed): its status is coming. */
	for (struct process *p = agent.processes; p; p = p->next) {
		bool dying = true;
		for (struct thread *t = p->threads; t; t = t->next) {
			if (t->state == THREAD_RUNNING || t->has_pending)
				return;
			if (t->zombie)
				continue;
			dying = false;
			if (thread_proc_state(p->pid, t->tid) != 't')
				return;
		}
		if (dying)
			return;
	}
	struct stop_event ev = { .kind = STOP_NO_RESUMED };
	report(NULL, &ev);
}

/* New threads whose first stop came before their parent's clone event
 * run with the parent, unless the event stops everything. */
static void start_adopted_threads(struct process *p, enum wait_outcome o)
{
	for (struct thread *n = p->threads; n; n = n->next) {
		if (!n->start_pending)
			continue;
		n->start_pending = false;
		if (o == WAIT_RESUME && n->resumed && n->state == THREAD_STOPPED)
			resume_thread(n, false, 0);
	}
}

/*
 * One wait status while gdb waits for a stop (or not).  Returns what
 * became of it: WAIT_RESUME only when it was an internal event (a probe
 * hit, a signal passed on...) and the thread was resumed; a status kept
 * for later (everything stopped, unknown thread) is WAIT_IGNORE.
 */
enum wait_outcome inferior_status(pid_t tid, int status)
{
	struct thread *t = thread_find(tid);
	struct stop_event ev;
	int sig;

	if (!t) {
		if (norphans < MAX_ORPHANS) {
			orphans[norphans].tid = tid;
			orphans[norphans].status = status;
			norphans++;
		}
		debug("status %#x of unknown thread %d kept", status, tid);
		return WAIT_IGNORE;
	}
	if (!agent.non_stop && !agent.running) {
		/* Everything is stopped; keep what comes for later. */
		absorb_status(t, status);
		return WAIT_IGNORE;
	}
	bool requested = t->stop_requested;
	struct process *proc = t->proc;
	enum wait_outcome o = classify(t, status, &ev, &sig);
	debug("thread %d status %#x -> outcome %d", tid, status, o);
	if (o != WAIT_PROCESS_GONE)
		start_adopted_threads(proc, o);	/* t may be freed: not it */
	switch (o) {
	case WAIT_IGNORE:
		if (agent.non_stop && requested && t->state == THREAD_STOPPED &&
		    !t->stop_expected) {
			/* vCont;t: gdb asked for this stop; signal 0 says so. */
			t->resumed = false;
			stop_event_set(&ev, STOP_SIGNAL, 0, t->proc->pid, t->tid);
			report(t, &ev);
			break;
		}
		if (t->resumed)
			resume_thread(t, t->user_stepping, 0);
		break;
	case WAIT_PARKED:
		break;		/* inferior_unpark resumes it */
	case WAIT_RESUME:
		resume_thread(t, t->user_stepping, sig);
		break;
	case WAIT_THREAD_GONE:
		break;
	case WAIT_REPORT:
		if (!agent.non_stop)
			stop_all(t);
		t->resumed = false;
		report(t, &ev);
		break;
	case WAIT_PROCESS_GONE: {
		struct process *p = t->proc;
		if (!agent.non_stop)
			stop_all(NULL);
		report_process_gone(p, &ev);
		break;
	}
	}
	return o;
}

bool inferior_waiting(void)
{
	if (!agent.non_stop && !agent.running)
		return false;
	for (struct process *p = agent.processes; p; p = p->next)
		for (struct thread *t = p->threads; t; t = t->next)
			if (t->state == THREAD_RUNNING)
				return true;
	return false;
}

/*
 * Handles the wait statuses that are ready, at most `max` of them (0: all).
 * Returns true when some may be left: threads hitting probes can produce
 * statuses faster than they are handled, and gdb's packets must still be
 * read in between.
 */
bool inferior_sigchld_some(unsigned int max)
{
	unsigned int n = 0;
	int status;
	pid_t tid;

	while ((tid = waitpid(-1, &status, __WALL | WNOHANG)) > 0) {
		inferior_status(tid, status);
		if (max && ++n >= max)
			return true;
	}
	check_zombie_leaders();
	check_no_resumed();
	return false;
}

void inferior_sigchld(void)
{
	inferior_sigchld_some(0);
}

/* --- gdb's requests -------------------------------------------------------- */

static bool ptid_matches(const struct rsp_ptid *id, struct thread *t)
{
	if (t->proc->hidden || t->zombie)
		return false;	/* gdb does not know it (yet, or any more) */
	/* A fork child waits for gdb's decision (detach it, or follow it by
	 * naming it): "resume everything" does not include it. */
	if (t->proc->fork_child) {
		if (id->pid != t->proc->pid)
			return false;
		t->proc->fork_child = false;
	}
	if (id->pid > 0 && id->pid != t->proc->pid)
		return false;
	if (id->tid > 0 && id->tid != t->tid)
		return false;
	return true;
}

/* Hands gdb the stop `t` kept from earlier.  Returns true when that was
 * its process's end: the process and its threads are freed. */
static bool report_pending(struct thread *t)
{
	struct stop_event ev = t->pending_ev;

	t->has_pending = false;
	memset(&t->pending_ev, 0, sizeof(ev));
	t->resumed = false;
	if (ev.kind == STOP_EXITED || ev.kind == STOP_KILLED) {
		report_process_gone(t->proc, &ev);
		return true;
	}
	report(t, &ev);
	return false;
}

/*
 * Non-stop: stops the running threads of `p` for a change that must not
 * race with them (probes going away: a thread could have trapped on a
 * breakpoint that is removed before its status is read).  Their statuses are
 * absorbed as in all-stop: probe hits handled, other events kept pending.
 * inferior_unpause resumes them, or reports what they kept.
 */
/*
 * Pauses nest: a hit handled while the threads are being stopped can
 * itself end the trace run and pause again.  Only the outermost pair
 * marks and resumes threads; an inner pause that reassigned the marks
 * would leave the threads the outer one stopped stopped for good.
 */
void inferior_pause(struct process *p)
{
	if (!agent.non_stop)
		return;
	if (p->pause_depth++ == 0)
		for (struct thread *t = p->threads; t; t = t->next)
			t->paused = t->state == THREAD_RUNNING;
	stop_threads(p, NULL);
}

void inferior_unpause(struct process *p)
{
	if (!agent.non_stop)
		return;
	if (p->pause_depth > 0 && --p->pause_depth > 0)
		return;
	for (struct thread *t = p->threads, *next; t; t = next) {
		next = t->next;
		if (!t->paused)
			continue;
		t->paused = false;
		if (t->state != THREAD_STOPPED)
			continue;
		if (t->has_pending) {
			if (report_pending(t))
				return;		/* the process is gone */
			continue;
		}
		resume_thread(t, t->user_stepping, 0);
	}
}

/*
 * The threads parked at probes (a full trace buffer) go on: each runs
 * into its probe again.  Called when the buffer has room again, and when
 * the run stops (their probes are gone: they run the original code).
 * One gdb or the pause stopped meanwhile stays stopped.
 */
void inferior_unpark(struct process *p)
{
	for (struct thread *t = p->threads; t; t = t->next) {
		if (!t->parked)
			continue;
		t->parked = false;
		if (t->state == THREAD_STOPPED && t->resumed && !t->has_pending &&
		    !p->pause_depth)
			resume_thread(t, t->user_stepping, 0);
	}
}

/* A hit handled before a stop gdb heard of is not handled again when the
 * thread resumes there; if gdb moved the thread elsewhere, forget it. */
static void forget_stale_skip(struct thread *t)
{
	if (t->probe_skip && regs_get_pc(t) != t->probe_skip)
		t->probe_skip = 0;
}

/*
 * A single-step that ended while everything was being stopped, kept for
 * gdb: if gdb now continues the thread instead (it gave that step up for
 * another thread's event), the step's end means nothing to it, and gdb
 * would take the SIGTRAP for the program's.  Dropped, as gdbserver does.
 */
static void drop_stale_step(struct thread *t, const struct rsp_resume_action *a)
{
	if (!t->has_pending || !t->pending_step || a->kind != RSP_RESUME_CONTINUE)
		return;
	debug("thread %d: its kept single-step end is dropped", t->tid);
	stop_event_clear(&t->pending_ev);
	t->has_pending = false;
	t->pending_step = false;
}

/*
 * gdb resumed `t` with a signal, but `t` reports a kept stop instead of
 * running (or another thread's kept stop answers an all-stop resume): the
 * signal goes with its next resume, or it would be lost (gdbserver queues
 * it too).
 */
static void keep_resume_signal(struct thread *t,
			       const struct rsp_resume_action *a)
{
	int sig = a->kind == RSP_RESUME_STOP ? 0 : signal_from_gdb(a->signal);

	if (sig > 0 && !t->pending_signal)
		t->pending_signal = sig;
}

/* Resumes a stopped thread as gdb's action says. */
static void start_resume(struct thread *t, const struct rsp_resume_action *a)
{
	bool range = a->kind == RSP_RESUME_RANGE;

	t->user_stepping = a->kind == RSP_RESUME_STEP || range;
	t->range_start = range ? a->range_start : 0;
	t->range_end = range ? a->range_end : 0;
	forget_stale_skip(t);
	resume_thread(t, t->user_stepping, signal_from_gdb(a->signal));
}

/* Which action of a vCont applies to each thread: the leftmost match. */
static void match_actions(const struct rsp_resume_action *acts, size_t count)
{
	for (struct process *p = agent.processes; p; p = p->next)
		for (struct thread *t = p->threads; t; t = t->next) {
			t->resume_action = -1;
			for (size_t i = 0; i < count; i++)
				if (ptid_matches(&acts[i].ptid, t)) {
					t->resume_action = (int)i;
					break;
				}
		}
}

/*
 * Non-stop: each thread is resumed or stopped on its own and the others
 * run on.  A thread with an unreported event reports it instead of
 * running; `t` stops a running thread with SIGSTOP, reported as signal 0.
 */
static int inferior_resume_non_stop(const struct rsp_resume_action *acts,
				    size_t count)
{
	match_actions(acts, count);
restart:
	for (struct process *p = agent.processes; p; p = p->next)
		for (struct thread *t = p->threads; t; t = t->next) {
			if (t->resume_action < 0)
				continue;
			const struct rsp_resume_action *a = &acts[t->resume_action];
			t->resume_action = -1;	/* handled: a rescan skips it */
			if (a->kind == RSP_RESUME_STOP) {
				if (t->state == THREAD_RUNNING && !t->stop_requested) {
					if (!t->stop_expected && !t->new_clone)
						syscall(SYS_tgkill, p->pid, t->tid, SIGSTOP);
					t->stop_expected = !t->new_clone;
					t->stop_requested = true;
				} else if (t->state == THREAD_STOPPED && !t->stop_reported) {
					/* gdb thinks it runs: say it stopped (once: a
					 * stop already on its way is the answer). */
					if (t->has_pending) {
						if (report_pending(t))
							goto restart;
					} else {
						struct stop_event ev;
						stop_event_set(&ev, STOP_SIGNAL, 0, p->pid, t->tid);
						t->resumed = false;
						report(t, &ev);
					}
				}
				continue;
			}
			if (t->state != THREAD_STOPPED)
				continue;
			/* A stop gdb has not pulled yet: gdb takes the thread
			 * for running, and resuming it would make that stop a
			 * lie (gdbserver ignores the resume too). */
			if (server_stop_queued(p->pid, t->tid))
				continue;
			t->resumed = true;
			drop_stale_step(t, a);
			if (t->has_pending) {
				keep_resume_signal(t, a);
				if (report_pending(t))
					goto restart;
				continue;
			}
			start_resume(t, a);
		}
	/* Statuses that came meanwhile: handled from the loop, after this
	 * reply is out. */
	server_statuses_soon();
	return 0;
}

int inferior_resume(const struct rsp_resume_action *acts, size_t count)
{
	struct thread *report_now = NULL;
	bool any = false;

	if (agent.non_stop)
		return inferior_resume_non_stop(acts, count);

	match_actions(acts, count);
	for (struct process *p = agent.processes; p; p = p->next)
		for (struct thread *t = p->threads; t; t = t->next) {
			if (t->resume_action < 0 ||
			    acts[t->resume_action].kind == RSP_RESUME_STOP)
				continue;
			any = true;
			drop_stale_step(t, &acts[t->resume_action]);
			if (t->has_pending && !report_now)
				report_now = t;
		}
	if (!any)
		return -ESRCH;
	agent.running = true;
	if (report_now) {
		/* Everything is stopped: the kept stop is the answer. */
		for (struct process *p = agent.processes; p; p = p->next)
			for (struct thread *t = p->threads; t; t = t->next)
				if (t->resume_action >= 0)
					keep_resume_signal(t, &acts[t->resume_action]);
		report_pending(report_now);
		return 0;
	}
	for (struct process *p = agent.processes; p; p = p->next)
		for (struct thread *t = p->threads; t; t = t->next) {
			if (t->resume_action < 0)
				continue;
			const struct rsp_resume_action *a = &acts[t->resume_action];
			if (a->kind == RSP_RESUME_STOP)
				continue;
			t->resumed = true;
			if (t->state != THREAD_STOPPED)
				continue;
			start_resume(t, a);
		}
	/* Statuses that came meanwhile: handled from the loop, after this
	 * reply is out. */
	server_statuses_soon();
	return 0;
}

void inferior_interrupt(void)
{
	struct process *p = current_process();

	if ((!agent.non_stop && !agent.running) || !p)
		return;
	/* SIGINT as a terminal would send it; gdb reports it as such.  It
	 * goes to a thread gdb resumed: a signal for the whole process can
	 * stay pending while the only thread that may take it spins. */
	for (struct thread *t = p->threads; t; t = t->next)
		if (t->state == THREAD_RUNNING && t->resumed) {
			syscall(SYS_tgkill, p->pid, t->tid, SIGINT);
			return;
		}
	kill(p->pid, SIGINT);
}

/* --- starting, attaching, detaching, killing ------------------------------ */

static void child_exec(char **argv)
{
	if (server_is_stdio()) {
		/* stdin and stdout carry the protocol: the program gets
		 * /dev/null for input and our stderr for output. */
		int fd = open("/dev/null", O_RDONLY);
		if (fd >= 0) {
			dup2(fd, 0);
			close(fd);
		}
		dup2(2, 1);
	}
	setpgid(0, 0);
	/* The agent takes SIGCHLD through a signalfd, blocked: the program
	 * must not inherit that. */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (agent.opt.disable_randomization)
		personality(personality(0xffffffff) | ADDR_NO_RANDOMIZE);
	if (agent.workdir && chdir(agent.workdir) < 0) {
		fprintf(stderr, "probe-agent: cannot enter %s: %s\n",
			agent.workdir, strerror(errno));
		_exit(127);
	}
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0) {
		fprintf(stderr, "probe-agent: PTRACE_TRACEME: %s\n", strerror(errno));
		_exit(127);
	}
	if (agent.env)
		environ = agent.env;
	execvp(argv[0], argv);
	fprintf(stderr, "probe-agent: cannot run %s: %s\n", argv[0],
		strerror(errno));
	_exit(127);
}

/* A bare name that exists in the current directory means that file, as
 * with gdbserver; otherwise the shell or execvp searches PATH. */
char *program_path(const char *name)
{
	if (!strchr(name, '/') && access(name, F_OK) == 0) {
		char *cwd = getcwd(NULL, 0);
		char *path = NULL;
		if (cwd && asprintf(&path, "%s/%s", cwd, name) < 0)
			path = NULL;
		free(cwd);
		if (path)
			return path;
	}
	return strdup(name);
}

/*
 * One word of the startup shell's command line, quoted so that the shell
 * hands it to the program unchanged: the arguments gdb and the command
 * line give are the program's argv, never a shell script (gdbserver does
 * the same).  A backslash makes any byte literal in every Bourne-style
 * shell and in csh, so it goes before everything but letters, digits,
 * bytes >= 0x80 and a few punctuation marks no shell treats specially
 * anywhere in a word (`=` and `~` are special at a word's start in zsh
 * and bash).  A backslash before a newline would join lines instead, and
 * the other control bytes are safest quoted: those go inside single
 * quotes.  An empty argument is ''.
 */
static void shell_quote_word(struct rsp_buf *cmd, const char *word)
{
	static const char plain[] = "_-+./,:@%";

	if (!*word) {
		rsp_buf_puts(cmd, "''");
		return;
	}
	for (const unsigned char *c = (const unsigned char *)word; *c; c++) {
		if (*c < 0x20 || *c == 0x7f) {
			rsp_buf_putc(cmd, '\'');
			rsp_buf_putc(cmd, (char)*c);
			rsp_buf_putc(cmd, '\'');
			continue;
		}
		if (!(isalnum(*c) || *c >= 0x80 || strchr(plain, *c)))
			rsp_buf_putc(cmd, '\\');
		rsp_buf_putc(cmd, (char)*c);
	}
}

/* Builds the argv actually executed: wrapper, shell, program. */
static char **build_exec_argv(char **argv, int *execs, char **shell_cmd)
{
	size_t n = 0, w = 0;
	char **out;

	while (argv[n])
		n++;
	if (agent.opt.wrapper)
		while (agent.opt.wrapper[w])
			w++;
	out = calloc(n + w + 4, sizeof(*out));
	if (!out)
		abort();
	*execs = 1;
	size_t k = 0;
	for (size_t i = 0; i < w; i++)
		out[k++] = agent.opt.wrapper[i];
	if (w)
		(*execs)++;
	if (agent.opt.startup_with_shell) {
		/* $SHELL -c 'exec prog args': the program starts from the
		 * user's shell as with gdbserver, its arguments unchanged. */
		struct rsp_buf cmd;
		rsp_buf_init(&cmd);
		rsp_buf_puts(&cmd, "exec");
		for (size_t i = 0; i < n; i++) {
			rsp_buf_putc(&cmd, ' ');
			shell_quote_word(&cmd, argv[i]);
		}
		const char *shell = getenv("SHELL");
		out[k++] = (char *)(shell && *shell ? shell : "/bin/sh");
		out[k++] = "-c";
		out[k++] = cmd.data;
		*shell_cmd = cmd.data;
		(*execs)++;
	} else {
		for (size_t i = 0; i < n; i++)
			out[k++] = argv[i];
	}
	out[k] = NULL;
	return out;
}

/* The program (or its shell) ended before reaching its first
 * instruction: say how, as gdb users know it from gdbserver. */
static int startup_failed(int status)
{
	if (WIFEXITED(status))
		log_user("During startup program exited with code %d.",
			 WEXITSTATUS(status));
	else
		log_user("During startup program terminated with signal %s.",
			 strsignal(WTERMSIG(status)));
	return -ECHILD;
}

int inferior_start(char **argv, struct process **out)
{
	int execs, status;
	char *shell_cmd = NULL;
	char **xargv = build_exec_argv(argv, &execs, &shell_cmd);
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int err = errno;
		free(xargv);
		return -err;
	}
	if (pid == 0)
		child_exec(xargv);
	free(shell_cmd);
	free(xargv);

	/* The first exec stops the child with SIGTRAP. */
	if (waitpid(pid, &status, __WALL) < 0)
		return -errno;
	if (!WIFSTOPPED(status))
		return startup_failed(status);
	/* Until the program's own exec, follow execs only: a shell that
	 * forks (a .bashrc read because sshd started us) must not leave
	 * traced children stopped behind. */
	ptrace(PTRACE_SETOPTIONS, pid, NULL,
	       (void *)(long)(execs > 1 ? PTRACE_O_TRACEEXEC | keeper_exitkill()
				       : TRACE_OPTIONS | keeper_exitkill()));
	/* Skip the wrapper's and the shell's own execs. */
	for (int i = 1; i < execs; i++) {
		ptrace(PTRACE_CONT, pid, NULL, NULL);
		for (;;) {
			if (waitpid(pid, &status, __WALL) < 0)
				return -errno;
			if (WIFEXITED(status) || WIFSIGNALED(status))
				return startup_failed(status);
			if (WIFSTOPPED(status) && (status >> 16) == PTRACE_EVENT_EXEC)
				break;
			/* Anything else on the way: pass it on. */
			int sig = WSTOPSIG(status);
			ptrace(PTRACE_CONT, pid, NULL,
			       (void *)(long)(sig == SIGTRAP || (status >> 16) ? 0 : sig));
		}
	}

	if (execs > 1)
		ptrace(PTRACE_SETOPTIONS, pid, NULL,
		       (void *)(long)(TRACE_OPTIONS | keeper_exitkill()));
	struct process *p = process_add(pid, false);
	thread_add(p, pid);
	mem_open(p);
	p->features = regs_detect_features(pid);
	keeper_install(p);
	log_user("Process %s created; pid = %d", argv[0], pid);
	*out = p;
	return 0;
}

static int attach_thread(struct process *p, pid_t tid)
{
	int status;

	if (ptrace(PTRACE_ATTACH, tid, NULL, NULL) < 0)
		return -errno;
	for (;;) {
		if (waitpid(tid, &status, __WALL) < 0)
			return -errno;
		if (WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP)
			break;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return -ESRCH;
		/* Another signal first: keep it for the program. */
		ptrace(PTRACE_CONT, tid, NULL, (void *)(long)WSTOPSIG(status));
	}
	ptrace(PTRACE_SETOPTIONS, tid, NULL, (void *)(long)TRACE_OPTIONS);
	thread_add(p, tid);
	return 0;
}

int inferior_attach(pid_t pid, struct process **out)
{
	char path[64];
	struct process *p;
	int err;
	bool found;

	if (process_find(pid))
		return -EALREADY;
	p = process_add(pid, true);
	err = attach_thread(p, pid);
	if (err < 0) {
		process_free(p);
		return err;
	}
	/* Threads can be created while we attach: loop until none is new. */
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	do {
		DIR *d = opendir(path);
		struct dirent *de;

		found = false;
		if (!d)
			break;
		while ((de = readdir(d))) {
			pid_t tid = atoi(de->d_name);
			if (tid <= 0 || thread_find(tid))
				continue;
			if (attach_thread(p, tid) == 0)
				found = true;
		}
		closedir(d);
	} while (found);
	mem_open(p);
	p->features = regs_detect_features(pid);
	keeper_install(p);
	log_user("Attached; pid = %d", pid);
	*out = p;
	return 0;
}

static bool is_fork_event(const struct stop_event *ev)
{
	return ev->kind == STOP_SIGNAL &&
	       (ev->reason == REASON_FORK || ev->reason == REASON_VFORK);
}

/* A fork child waits, stopped, for gdb's decision; a child whose event gdb
 * will not see (its parent is being detached) must go free with it, its
 * copies of the parent's breakpoints taken out of its memory first. */
void inferior_detach_fork_child(const struct stop_event *ev)
{
	struct process *c;

	if (!is_fork_event(ev))
		return;
	c = process_find((pid_t)ev->data);
	if (c && c->fork_child)
		inferior_detach(c);
}

int inferior_detach(struct process *p)
{
	/* Non-stop: threads may be running, and only a stopped tracee can be
	 * detached.  Events they report meanwhile are kept, and undone below
	 * or with the detach (a fork child goes free). */
	stop_threads(p, NULL);
	for (struct thread *t = p->threads; t; t = t->next) {
		if (t->has_pending && is_fork_event(&t->pending_ev)) {
			inferior_detach_fork_child(&t->pending_ev);
			stop_event_clear(&t->pending_ev);
			t->has_pending = false;
		}
	}
	for (struct thread *t = p->threads; t; t = t->next) {
		if (t->step_probe)
			probe_step_done(t, false);
		probe_fix_pc(t);
	}
	trace_drain(false);
	ret_restore_process(p);
	probe_remove_all(p);
	xol_unmap_all(p);
	pad_unmap(p);
	bp_remove_all(p);
	hw_remove_all(p);
	for (struct thread *t = p->threads; t; t = t->next) {
		int sig = t->pending_signal;

		if (t->has_pending && t->pending_ev.kind == STOP_SIGNAL &&
		    t->pending_ev.reason == REASON_NONE)
			sig = signal_from_gdb(t->pending_ev.gdb_signal);
		if (sig == SIGSTOP || sig == SIGTRAP)
			sig = 0;
		hw_sync_thread(t);
		if (t->regs_dirty)
			regs_flush(t);
		ptrace(PTRACE_DETACH, t->tid, NULL, (void *)(long)sig);
		/* Our SIGSTOP still queued would stop it for good. */
		if (t->stop_expected)
			syscall(SYS_tgkill, p->pid, t->tid, SIGCONT);
	}
	log_user("Detaching from process %d", p->pid);
	process_free(p);
	return 0;
}

int inferior_kill(struct process *p)
{
	int status;

	kill(p->pid, SIGKILL);
	/* Reap the other threads first: the leader's status comes last. */
	for (struct thread *t = p->threads; t; t = t->next)
		if (t->tid != p->pid)
			waitpid(t->tid, &status, __WALL);
	for (;;) {
		if (waitpid(p->pid, &status, __WALL) < 0)
			break;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			break;
	}
	process_free(p);
	return 0;
}

void inferior_stop_all(void)
{
	if (agent.non_stop)
		return;
	stop_all(NULL);
	settle_probe_threads(NULL);
	agent.running = false;
}

void inferior_kill_all_for_exit(void)
{
	while (agent.processes) {
		struct process *p = agent.processes;

		if (agent.running)
			stop_all(NULL);
		agent.running = false;
		/* As gdbserver: a program the agent started dies with the
		 * session, unless the client asked it to run on. */
		if (p->attached || agent.detach_on_close)
			inferior_detach(p);
		else
			inferior_kill(p);
	}
}

unsigned int thread_core(pid_t tid)
{
	char path[64], buf[1024];
	int fd;
	ssize_t n;
	unsigned int core = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* Field 39 is the CPU; count fields after the command's ')'. */
	char *s = strrchr(buf, ')');
	if (!s)
		return 0;
	int field = 2;
	for (s++; *s && field < 39; s++)
		if (*s == ' ')
			field++;
	if (field == 39)
		core = strtoul(s, NULL, 10);
	return core;
}

const char *thread_name(pid_t pid, pid_t tid, char *buf, size_t size)
{
	char path[64];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}
