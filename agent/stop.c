/*
 * stop.c - stopping threads, and telling gdb about a stop.
 *
 * In all-stop, a reportable event stops every other thread first
 * (stop_all); their own events meanwhile are absorbed (absorb_status):
 * probe hits handled, anything gdb must hear of kept as the thread's
 * `pending` stop.  report() then settles threads out of XOL slots, puts
 * return addresses back for gdb's eyes, and sends the stop reply (all-stop)
 * or queues a notification (non-stop).
 *
 * Also here: thread group leaders that exited before their group (seen
 * only in /proc), and the "no resumed thread can stop" reply (N).
 */
#define LOG_DOMAIN "inferior"
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/inferior.h"
#include "agent/log.h"

/* --- all-stop ------------------------------------------------------------ */

/* Processes one status of a thread that we are stopping (stop_all) or that
 * came while everything is stopped.  Never resumes anything. */
void absorb_status(struct thread *t, int status)
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
void check_zombie_leaders(void)
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
void stop_threads(struct process *only, struct thread *except)
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
void stop_all(struct thread *except)
{
	stop_threads(NULL, except);
}

/* gdb must never see a thread inside an XOL slot. */
void settle_probe_threads(struct thread *only)
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

void report(struct thread *t, struct stop_event *ev)
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
			if ((o->ret || p->ret_area) && o->state == THREAD_STOPPED &&
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

void report_process_gone(struct process *p, struct stop_event *ev)
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
void check_no_resumed(void)
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
void start_adopted_threads(struct process *p, enum wait_outcome o)
{
	for (struct thread *n = p->threads; n; n = n->next) {
		if (!n->start_pending)
			continue;
		n->start_pending = false;
		if (o == WAIT_RESUME && n->resumed && n->state == THREAD_STOPPED)
			resume_thread(n, false, 0);
	}
}

void inferior_stop_all(void)
{
	if (agent.non_stop)
		return;
	stop_all(NULL);
	settle_probe_threads(NULL);
	agent.running = false;
}
