/*
 * wait.c - wait statuses of traced threads, and what each means.
 *
 * The inferior's files: threads.c (the registry), wait.c (this: statuses
 * classified), hit.c (probe hits), stop.c (stopping and reporting),
 * resume.c (resuming, gdb's vCont), attach.c (start, attach, detach,
 * kill), procfs.c (what /proc says); inferior.h holds what they share.
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

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/ptrace.h>

#include "agent/agent.h"
#include "agent/inferior.h"
#include "agent/log.h"
#include "agent/regblock.h"

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
	if (!orphan_claim(child) && waitpid(child, &status, __WALL) < 0)
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
		else
			pad_tid_vfork(t, true);	/* ... and t's thread pointer */
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
		pad_tid_vfork(t, false);
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

/* Whether the breakpoint instruction a trap came from is no longer at
 * `addr`: the agent took it out after the thread executed it.  A
 * breakpoint instruction of the program's own is still there, and is
 * reported. */
static bool breakpoint_gone(struct process *p, uint64_t addr)
{
	uint8_t buf[1];

	return mem_read_raw(p, addr, buf, 1) == 1 && !bp_insn_here(p, addr);
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
	if (t->proc->ret_itrap &&
	    regs_get_pc(t) == t->proc->ret_itrap + agent.arch->bp_pc_after_trap) {
		/* The in-process return trampoline found the ring full: the
		 * drain makes room, and it tries again as it resumes, past
		 * the trap (aarch64's BRK leaves the pc on itself). */
		t->proc->ret_ring_full++;
		trace_drain(false);
		if (agent.arch->bp_pc_after_trap < agent.arch->bp_len)
			regs_set_pc(t, t->proc->ret_itrap + agent.arch->bp_len);
		return WAIT_RESUME;
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
enum wait_outcome classify(struct thread *t, int status,
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
	if (pad_fault(t, sig))
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
		orphan_keep(tid, status);
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
	/* Threads parked on a software step's breakpoints that are gone run
	 * on, unless everything stopped (gdb's resume starts them then). */
	if (o != WAIT_PROCESS_GONE && proc->step_unpark &&
	    (agent.non_stop || agent.running)) {
		proc->step_unpark = false;
		inferior_unpark(proc);
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
