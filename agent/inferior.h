/*
 * inferior.h - what the inferior's files share, and nothing else includes.
 *
 * The inferior (processes and threads under ptrace) is split by concern:
 *
 *   threads.c  the registry: find, add, remove threads and processes;
 *              wait statuses of threads not known yet (orphans)
 *   wait.c     a wait status classified into one enum wait_outcome
 *   hit.c      a probe hit (breakpoint or jump pad): the owner, then the
 *              displaced instruction, a park, or a stop for gdb
 *   stop.c     stopping threads (all-stop), telling gdb about a stop
 *   resume.c   resuming threads; gdb's vCont, ^C, pauses and unparking
 *   attach.c   starting, attaching, detaching, killing
 *   procfs.c   what /proc says: state letter, CPU, name
 *
 * The public entry points (inferior_*, thread_find, ...) are declared in
 * agent.h.
 */
#ifndef AGENT_INFERIOR_H
#define AGENT_INFERIOR_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/ptrace.h>

#include "agent/agent.h"

#define TRACE_OPTIONS                                                          \
	(PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |      \
	 PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEVFORKDONE)

/* threads.c */
void stop_event_clear(struct stop_event *ev);
struct thread *thread_add(struct process *p, pid_t tid);
void thread_remove(struct thread *t);
struct process *process_add(pid_t pid, bool attached);
/* The address space is gone (exit, exec): drop probes without touching it. */
void forget_probes(struct process *p);
/* A new thread whose first stop came already starts stopped (start_pending). */
void orphan_take(struct thread *t);
void orphan_keep(pid_t tid, int status);
bool orphan_claim(pid_t tid);
bool thread_is_last(struct thread *t);

/* procfs.c */
char thread_proc_state(pid_t pid, pid_t tid);
bool thread_is_zombie(pid_t pid, pid_t tid);

/* wait.c */
enum wait_outcome classify(struct thread *t, int status,
			   struct stop_event *ev, int *resume_sig);

/* hit.c */
enum wait_outcome probe_hit(struct probe *pr, struct thread *t,
			    struct sw_breakpoint *b, struct stop_event *ev);
enum wait_outcome pad_hit(struct probe *pr, struct thread *t,
			  struct sw_breakpoint *b, struct stop_event *ev);
enum wait_outcome one_instruction_done(struct thread *t);

/* stop.c */
void absorb_status(struct thread *t, int status);
void stop_threads(struct process *only, struct thread *except);
void stop_all(struct thread *except);
void settle_probe_threads(struct thread *only);
void report(struct thread *t, struct stop_event *ev);
void report_process_gone(struct process *p, struct stop_event *ev);
void check_zombie_leaders(void);
void check_no_resumed(void);
void start_adopted_threads(struct process *p, enum wait_outcome o);

/* resume.c */
int resume_thread(struct thread *t, bool step, int sig);

#endif
