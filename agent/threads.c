/*
 * threads.c - the registry of traced processes and their threads.
 *
 * Every traced process is a `struct process` on agent.processes, every
 * thread of it a `struct thread` on its list, in creation order (the
 * leader first, as gdb lists threads).  This file finds them (by pid, by
 * tid, by gdb's ptid, gdb's current one), adds and removes them, and frees
 * a process with everything hanging off it.  It also keeps the wait
 * statuses of threads not known yet (a clone child can report its first
 * stop before its parent reports the clone): the orphans.
 */
#define LOG_DOMAIN "inferior"
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/inferior.h"
#include "agent/keeper.h"
#include "agent/log.h"

/* Wait statuses of threads we did not know yet (a clone child can report
 * its first stop before its parent reports the clone). */
#define MAX_ORPHANS 64
static struct {
	pid_t tid;
	int status;
} orphans[MAX_ORPHANS];
static int norphans;

void stop_event_clear(struct stop_event *ev)
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

struct thread *thread_add(struct process *p, pid_t tid)
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

void thread_remove(struct thread *t)
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
	pad_tid_gone(t);
	ret_thread_free(t);
	free(t->regcache);
	free(t);
}

struct process *process_add(pid_t pid, bool attached)
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
void forget_probes(struct process *p)
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

void orphan_take(struct thread *t)
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

/* Keeps the wait status of thread `tid`, not known yet. */
void orphan_keep(pid_t tid, int status)
{
	if (norphans < MAX_ORPHANS) {
		orphans[norphans].tid = tid;
		orphans[norphans].status = status;
		norphans++;
	}
}

/* Whether thread `tid`'s first stop came already (it is forgotten now). */
bool orphan_claim(pid_t tid)
{
	for (int i = 0; i < norphans; i++)
		if (orphans[i].tid == tid) {
			orphans[i] = orphans[--norphans];
			return true;
		}
	return false;
}

bool thread_is_last(struct thread *t)
{
	return t->proc->threads == t && t->next == NULL;
}
