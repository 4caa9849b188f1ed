/*
 * resume.c - resuming threads, and gdb's requests that start or stop them.
 *
 * resume_thread() is the one place a thread is continued or stepped
 * (PTRACE_CONT, PTRACE_SYSCALL or a step), with what must happen first:
 * debug registers synced, a return probe's trampoline put back, dirty
 * registers written, a signal kept for it delivered.  Above it are gdb's
 * vCont (all-stop and non-stop), the interrupt (^C), and the pauses
 * (inferior_pause/unpause) and parked threads (inferior_unpark) of the
 * trace run.
 *
 * A thread with a stop gdb has not heard of yet (`has_pending`) reports
 * that stop instead of running (report_pending()).
 */
#define LOG_DOMAIN "inferior"
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/inferior.h"
#include "agent/keeper.h"
#include "agent/log.h"

int resume_thread(struct thread *t, bool step, int sig)
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
	/* Entered in the pads' thread id table before it runs. */
	if (!t->tp_noted && t->proc->pads)
		pad_tid_note(t);
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
