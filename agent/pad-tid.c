/*
 * pad-tid.c - the thread id table of a process's pads: who is hitting,
 * without asking the kernel.
 *
 * A recording pad whose records name their thread (probe-trace's
 * frames, a traced $_thread-like variable) needs the hitting thread's
 * id.  gettid is a system call, the dearest part of such a hit; the
 * thread pointer (x86-64: fs_base, read by rdfsbase, or where the kernel
 * does not allow that as %fs:0, the TCB's pointer to itself; aarch64:
 * TPIDR_EL0; arm: TPIDRURO) costs nothing, and
 * is distinct per live thread as long as each has its own TLS.  So the
 * agent keeps, in the pads' shared memory, a table from thread pointer
 * to tid (layout: PAD_TID_* in arch/arch.h), and the pad looks its
 * thread up there; where the table does not name it, it still makes
 * the system call.  Only the agent writes the table, and only for
 * threads that cannot run while it does:
 *
 *  - a thread is entered when the agent resumes it (resume_thread): every
 *    thread runs only after that, the first time after its creation
 *    (clone stops a traced thread before its first instruction) or the
 *    agent's attach, or after the table was made (threads that ran
 *    before then: the pads ask the kernel until their next resume);
 *  - a thread pointer that more than one thread has (a clone without
 *    CLONE_SETTLS, a vfork child running on its parent's memory and
 *    TLS, from PTRACE_EVENT_VFORK to PTRACE_EVENT_VFORK_DONE) gets tid 0:
 *    the pads ask the kernel; when one of them goes, the other gets
 *    its tid back;
 *  - a thread that is gone leaves its entry PAD_TID_GONE, so that a new
 *    thread with the same TCB (glibc reuses the stacks of joined
 *    threads) is entered afresh.  A record a thread wrote holds its tid
 *    already: how late the drain reads it does not matter;
 *  - a fork child gets the table (shared memory) but no pads: its sites
 *    are breakpoints again (pad_fork_child), and it never reads it.
 *
 * What it cannot see: a thread that moves its own thread pointer
 * (arch_prctl(ARCH_SET_FS) or wrfsbase, after the agent entered it) to
 * another live thread's would be recorded as that thread.  No libc does
 * that; green-thread runtimes that swap TLS would.
 */
#define LOG_DOMAIN "pad"
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/log.h"
#include "agent/pad-int.h"

struct tid_entry {
	uint64_t key;
	uint32_t tid;
	uint32_t unused;
};

static struct tid_entry *tid_table(struct pad_table *pt)
{
	return (struct tid_entry *)(pt->local + tids_off());
}

/* The gdb regnum of the thread pointer, -1 when the arch (or the CPU's
 * register file) has none. */
int tp_regnum(void)
{
	int r = agent.arch->tp_regnum;

	return r >= 0 && (unsigned int)r < agent.arch->nregs_for(~0u) ? r : -1;
}

uint64_t thread_key(struct thread *t)
{
	int reg = tp_regnum();
	uint64_t key = 0;

	if (reg >= 0) {
		if (regs_get(t, (unsigned int)reg, &key) < 0)
			return 0;
	} else if (!agent.ptrace->thread_area ||
		   agent.ptrace->thread_area(t->tid, 25, &key) < 0) {
		return 0;
	}
	return key;
}

/* Whether recording pads of `pt`'s process can read the table: the arch
 * has a thread pointer the pads read with no system call (the register
 * itself, or the TCB's word that points at itself: x86-64 with rdfsbase,
 * else as %fs:0; aarch64's TPIDR_EL0, arm's TPIDRURO): from the
 * register file (tp_regnum) or through ptrace (thread_area). */
bool pad_tid_usable(const struct pad_table *pt)
{
	return pt->local && (tp_regnum() >= 0 || agent.ptrace->thread_area);
}

/* The live threads of p with thread pointer `key` (a vfork child running
 * on one's counts as one more), and one of their tids. */
static unsigned int holders(struct process *p, uint64_t key, pid_t *tid)
{
	unsigned int n = 0;

	for (struct thread *t = p->threads; t; t = t->next) {
		if (!t->tp_noted || t->tp_key != key)
			continue;
		n += 1 + t->tp_vfork;
		*tid = t->tid;
	}
	return n;
}

/* Makes the table's entry of `key` say what p's threads say now. */
static void entry_update(struct process *p, struct pad_table *pt, uint64_t key)
{
	struct tid_entry *e = tid_table(pt) +
			      ((key * PAD_TID_HASH) >> (64 - PAD_TID_BITS));
	struct tid_entry *mine = NULL, *free_e = NULL;
	pid_t tid = 0;
	unsigned int n = holders(p, key, &tid);

	for (unsigned int i = 0; i < PAD_TID_PROBES; i++) {
		uint64_t k = __atomic_load_n(&e[i].key, __ATOMIC_RELAXED);
		if (k == key) {
			mine = &e[i];
			break;
		}
		if (!free_e && (k == 0 || k == PAD_TID_GONE))
			free_e = &e[i];
	}
	if (n == 0) {
		if (mine) {
			__atomic_store_n(&mine->tid, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&mine->key, PAD_TID_GONE, __ATOMIC_RELEASE);
		}
		return;
	}
	if (n > 1)
		tid = 0;	/* shared: the pads ask the kernel */
	if (!mine) {
		if (!free_e) {
			debug("process %d: no room in the thread id table for %#llx "
			      "(its pads ask the kernel)", p->pid, (unsigned long long)key);
			return;
		}
		/* The tid before the key: a reader that finds the key finds
		 * the tid with it. */
		__atomic_store_n(&free_e->tid, (uint32_t)tid, __ATOMIC_RELAXED);
		__atomic_store_n(&free_e->key, key, __ATOMIC_RELEASE);
		return;
	}
	__atomic_store_n(&mine->tid, (uint32_t)tid, __ATOMIC_RELEASE);
}

/* PAD_TID_NOTLS says whether a live thread of p has no self-pointing TCB
 * at its thread pointer now. */
static void notls_update(struct process *p, struct pad_table *pt)
{
	uint32_t n = 0;

	for (struct thread *t = p->threads; t; t = t->next)
		n += t->tp_none;
	if (pt && pt->local)
		__atomic_store_n((uint32_t *)(pt->local + tids_off() + PAD_TID_NOTLS), n,
				 __ATOMIC_RELEASE);
}

/* PAD_TID_GS_OK and PAD_TID_GS say the other base (gs) the threads of p
 * the agent entered have, when they all have the same. */
static void gs_update(struct process *p, struct pad_table *pt)
{
	uint64_t v = 0;
	bool one = true, any = false;

	if (!pt || !pt->local)
		return;
	for (struct thread *t = p->threads; t; t = t->next) {
		if (!t->tp2_known)
			continue;
		if (any && t->tp2 != v)
			one = false;
		v = t->tp2;
		any = true;
	}
	uint32_t *ok = (uint32_t *)(pt->local + tids_off() + PAD_TID_GS_OK);
	uint64_t *gs = (uint64_t *)(pt->local + tids_off() + PAD_TID_GS);
	if (!any || !one) {
		__atomic_store_n(ok, 0, __ATOMIC_RELEASE);
		return;
	}
	if (__atomic_load_n(ok, __ATOMIC_RELAXED) && __atomic_load_n(gs, __ATOMIC_RELAXED) == v)
		return;
	/* Off while it changes: a pad that reads it on reads the new one. */
	__atomic_store_n(ok, 0, __ATOMIC_RELEASE);
	__atomic_store_n(gs, v, __ATOMIC_RELEASE);
	__atomic_store_n(ok, 1, __ATOMIC_RELEASE);
}

/* Thread t, about to run: entered, if it is not yet. */
void pad_tid_note(struct thread *t)
{
	struct process *p = t->proc;
	struct pad_table *pt = p->pads;
	uint64_t key;

	if (t->tp_noted || !pt || !pad_tid_usable(pt))
		return;
	key = thread_key(t);
	/* Where the pads cannot read the thread pointer register itself
	 * (no tp_read: x86-64 without FSGSBASE) they read the key as the TCB's first
	 * word, which the TLS ABI makes the thread pointer (x86-64: %fs:0).
	 * A thread whose word is not (no TLS: a thread pointer of 0, where
	 * the load would fault) sets PAD_TID_NOTLS: the process's pads do without the
	 * load until it has one, which is looked at again at each of its
	 * resumes. */
	uint64_t self = 0;
	bool none = !pt->tp_read &&
		    (!key || key == PAD_TID_GONE ||
		     mem_read_raw(p, key, &self, sizeof(self)) != (ssize_t)sizeof(self) ||
		     self != key);
	if (none != t->tp_none) {
		t->tp_none = none;
		notls_update(p, pt);
		debug("thread %d: %s self-pointing TCB at its thread pointer %#llx", t->tid,
		      none ? "no" : "a", (unsigned long long)key);
	}
	/* Its other base, for the records with the register image (the
	 * pads read it where they cannot: without tp_read). */
	uint64_t v2 = 0;
	int reg2 = agent.arch->tp2_regnum;
	if (!pt->tp_read && reg2 >= 0 && regs_get(t, (unsigned int)reg2, &v2) >= 0 &&
	    (!t->tp2_known || t->tp2 != v2)) {
		t->tp2_known = true;
		t->tp2 = v2;
		gs_update(p, pt);
	}
	/* No thread pointer yet (0: a program's first thread before its
	 * libc set its TLS up, which is when the agent first resumes it),
	 * or a value no thread pointer has: the pads find no entry and ask
	 * the kernel, and the thread is looked at again at its next resume.
	 * Entered with 0 for good, its pointer once set would be missing
	 * from the table; and a thread sharing it (a clone without
	 * CLONE_SETTLS) would be entered alone, its tid then given to the
	 * hits of both. */
	if (none || key == 0 || key == PAD_TID_GONE)
		return;
	t->tp_noted = true;
	t->tp_key = key;
	entry_update(p, pt, key);
	debug("thread %d: thread pointer %#llx in the tid table", t->tid,
	      (unsigned long long)key);
}

/* Thread t is gone (out of its process's list already, or about to be). */
void pad_tid_gone(struct thread *t)
{
	struct process *p = t->proc;
	struct pad_table *pt = p->pads;

	if (t->tp_none) {
		t->tp_none = false;
		notls_update(p, pt);
	}
	if (t->tp2_known) {
		t->tp2_known = false;
		gs_update(p, pt);
	}
	if (!t->tp_noted)
		return;
	t->tp_noted = false;
	t->tp_vfork = false;
	if (pt && pt->local && t->tp_key && t->tp_key != PAD_TID_GONE)
		entry_update(p, pt, t->tp_key);
}

/* Thread t made a vfork child that runs on its memory (running), or
 * that child exec'd or exited (PTRACE_EVENT_VFORK_DONE). */
void pad_tid_vfork(struct thread *t, bool running)
{
	struct process *p = t->proc;
	struct pad_table *pt = p->pads;

	t->tp_vfork = running;
	if (t->tp_noted && pt && pt->local && t->tp_key && t->tp_key != PAD_TID_GONE)
		entry_update(p, pt, t->tp_key);
}

/* A new table (or none any more): every thread is entered afresh. */
void pad_tid_reset(struct process *p)
{
	for (struct thread *t = p->threads; t; t = t->next)
		t->tp_noted = t->tp_none = t->tp2_known = false;
}

/* Whether the counter can stamp a hit for the agent to turn into the
 * time (ptrace_arch_ops.counter_is_clock: x86-64's TSC where it is
 * constant and non-stop).  PROBE_PAD_CLOCK=vdso in the agent's
 * environment (agent.opt.pad_clock_vdso) says no, so that the pads call
 * the vDSO's clock_gettime as on a CPU without such a counter (for tests
 * and measuring; main.c refuses other values). */
bool pad_tsc_usable(void)
{
	static int usable = -1;

	if (usable < 0)
		usable = !agent.opt.pad_clock_vdso &&
			 agent.ptrace->counter_is_clock && agent.ptrace->counter_is_clock();
	return usable;
}
