/*
 * agent.h - the probe agent's shared state and module interfaces.
 *
 * The agent is one libevent loop.  gdb's bytes arrive on the connection
 * (server.c), are framed and parsed by protocol/, and reach a handler
 * (handlers-*.c) as a typed request.  Handlers act on the inferior through
 * the inferior's files (threads.c, wait.c, hit.c, stop.c, resume.c,
 * attach.c, procfs.c: see inferior.h), regs.c, mem.c and breakpoint.c.  A stop of the inferior arrives as SIGCHLD, is turned
 * into a `struct stop_event`, and, in all-stop mode, stops every other
 * thread before the stop reply goes to gdb.  While only the program can
 * give the agent work (probe hits), the loop waits in waitid() instead of
 * epoll (hot-wait.c), and gdb's input ends that wait through SIGIO.
 */
#ifndef PROBE_AGENT_H
#define PROBE_AGENT_H

#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/ptrace-arch.h"
#include "agent/regsrc.h"
#include "arch/arch.h"
#include "protocol/rsp.h"
#include "protocol/rsp-request.h"
#include "protocol/rsp-reply.h"

struct event_base;
struct process;

/* --- command line ------------------------------------------------------- */

struct agent_options {
	bool once;		/* serve one connection, then exit */
	bool multi;		/* start without a program (extended-remote) */
	bool remote_debug;	/* dump every packet on stderr */
	pid_t attach_pid;	/* --attach */
	char **wrapper;		/* --wrapper ... -- (NULL-terminated) */
	const char *comm;	/* "-" (stdio), "HOST:PORT", ":PORT" */
	char **prog_argv;	/* program and its arguments, or NULL */
	bool disable_randomization;
	bool startup_with_shell;
	unsigned int disabled;		/* --disable-packet: DISABLE_* bits */
	int tp_strategy;		/* --tp-strategy: enum probe_strategy */
	/* From the environment, read and checked once at start-up (main.c,
	 * read_env; doc/probe-agent.1, ENVIRONMENT), never per attach or
	 * hit.  Zero is the default behaviour but for pad_prefetch. */
	bool pad_collector_copy;	/* PROBE_PAD_NATIVE_COPY=0: pads call the
					 * collector even where they could copy */
	bool pad_clock_vdso;		/* PROBE_PAD_CLOCK=vdso: no TSC stamps */
	bool far_pads;			/* PROBE_AGENT_FAR_PADS: every pad far */
	/* PROBE_AGENT_TEST_KILL=run or run-trap, for the keeper's tests:
	 * the agent kills itself while a thread runs code of its own
	 * (inferior_run), or once that stopped at its trap. */
	enum { TEST_KILL_NONE, TEST_KILL_RUN, TEST_KILL_RUN_TRAP } test_kill;
	bool pad_no_touch;		/* PROBE_PAD_TOUCH=0: the process does not
					 * store into its shared pages at setup
					 * (pad.c, touch_pages) */
	unsigned int pad_prefetch;	/* PROBE_PAD_PREFETCH: records ahead a
					 * recording pad prefetches (default
					 * PAD_PREFETCH_DEFAULT, 0 none) */
};

/* How many records on a recording pad prefetches the lines it will
 * write (arch_pad_ring.prefetch): two, which measured best on the 2-CPU
 * machine of bench/README.md (`collect *b` 300-330 ns a hit against
 * 400-470 without); PROBE_PAD_PREFETCH=N to measure others, up to
 * PAD_PREFETCH_MAX. */
#define PAD_PREFETCH_DEFAULT 2
#define PAD_PREFETCH_MAX 15

/* How probe hits execute the displaced instruction (--tp-strategy). */
enum probe_strategy {
	PROBE_AUTO,		/* the arch's choice for each instruction */
	PROBE_EMULATE,		/* emulate where possible, else the arch's */
	PROBE_BOOST,		/* an XOL slot with a jump back */
	PROBE_STEP,		/* single-step an XOL slot */
	PROBE_PAD,		/* a jump to a pad that hands off, else auto */
};

/* Packets --disable-packet can turn off (gdbserver's names), to test how
 * gdb copes without them. */
enum {
	DISABLE_VCONT = 1 << 0,		/* vCont */
	DISABLE_T = 1 << 1,		/* T stop replies: send S<sig> */
	DISABLE_TTHREAD = 1 << 2,	/* thread: in stop replies */
	DISABLE_QC = 1 << 3,		/* qC */
	DISABLE_QFTHREADINFO = 1 << 4,	/* qfThreadInfo / qsThreadInfo */
	DISABLE_THREADS = 1 << 5,	/* qXfer:threads */
	DISABLE_PROBE_STATS = 1 << 6,	/* qprobe.stats (an older agent) */
};

/* --- threads and processes --------------------------------------------- */

/*
 * What the agent does with a thread's wait status; one outcome per
 * waitpid result (see wait.c, classify()).
 */
enum wait_outcome {
	WAIT_IGNORE,		/* expected stop (our SIGSTOP): keep it stopped */
	WAIT_RESUME,		/* internal event handled: resume as before */
	WAIT_REPORT,		/* a stop gdb must hear of */
	WAIT_THREAD_GONE,	/* thread exited, not the last one */
	WAIT_PROCESS_GONE,	/* whole process exited or was killed */
	WAIT_PARKED,		/* a probe hit that must wait (PROBE_HIT_WAIT):
				 * the thread stays stopped at the probe's
				 * address until inferior_unpark */
};

/* A stop as gdb will hear of it. */
enum stop_kind {
	STOP_SIGNAL,		/* T<sig>; reason below */
	STOP_EXITED,		/* W<code> */
	STOP_KILLED,		/* X<sig> */
	STOP_THREAD_EXITED,	/* w<code>;ptid (QThreadEvents) */
	STOP_NO_RESUMED,	/* N */
};

enum stop_reason {
	REASON_NONE,
	REASON_SWBREAK,
	REASON_HWBREAK,
	REASON_WATCH,
	REASON_RWATCH,
	REASON_AWATCH,
	REASON_SYSCALL_ENTRY,
	REASON_SYSCALL_RETURN,
	REASON_FORK,
	REASON_VFORK,
	REASON_VFORK_DONE,
	REASON_EXEC,
	REASON_CLONE,		/* QThreadEvents: "create" */
	REASON_LIBRARY,
};

struct stop_event {
	enum stop_kind kind;
	enum stop_reason reason;
	int gdb_signal;		/* STOP_SIGNAL / STOP_KILLED: gdb numbering */
	int exit_code;		/* STOP_EXITED */
	pid_t pid, tid;
	uint64_t data;		/* watch address, syscall nr, child pid */
	char *exec_path;	/* REASON_EXEC (owned) */
};

static inline void stop_event_set(struct stop_event *ev, enum stop_kind kind,
				  int gdb_signal, pid_t pid, pid_t tid)
{
	*ev = (struct stop_event){ .kind = kind, .gdb_signal = gdb_signal,
				   .pid = pid, .tid = tid };
}

enum thread_state {
	THREAD_STOPPED,
	THREAD_RUNNING,
};

struct thread {
	struct thread *next;
	struct process *proc;
	pid_t tid;
	enum thread_state state;
	bool stop_expected;	/* we sent SIGSTOP; swallow it when it comes */
	bool paused;		/* stopped by inferior_pause, resumed after */
	bool parked;		/* waits at a probe for room in the trace
				 * buffer (PROBE_HIT_WAIT); inferior_unpark */
	bool stop_requested;	/* non-stop: gdb asked for this stop (vCont;t) */
	bool stop_reported;	/* gdb heard of its current stop */
	bool resumed;		/* gdb's last resume included this thread */
	int resume_action;	/* index of its vCont action, -1 for none */
	bool has_pending;	/* a stop not yet reported to gdb */
	struct stop_event pending_ev;
	bool pending_step;	/* ... the end of a single-step gdb asked for */
	int pending_signal;	/* Linux signal to deliver on next resume */
	bool stepping;		/* last resumed with a single-step */
	bool user_stepping;	/* gdb's last resume of it was a step */
	uint64_t range_start, range_end; /* vCont;r: step while pc is inside */
	bool in_syscall;	/* between syscall entry and return stops */
	bool dregs_dirty;	/* debug registers must be written before resume */
	int last_signal;	/* Linux signal of the last reported stop */
	bool new_clone;		/* created by clone, first stop not seen yet */
	bool start_pending;	/* adopted already stopped: start with parent */
	/* A leader that exited (pthread_exit) before the rest of its group:
	 * a zombie that reports nothing until the group is gone.  gdb no
	 * longer sees it (gdbserver deletes it); its exit status, or an exec
	 * by another thread, still comes under its tid. */
	bool zombie;
	/* Probes (probe.c) */
	uint64_t probe_skip;	/* hit at this address already handled */
	struct probe *step_probe; /* stepping through its slot */
	bool step_probe_gone;	/* ... which was removed meanwhile */
	bool step_user;		/* gdb asked for that single step */
	struct arch_insn step_insn;
	struct arch_xol step_xol;
	uint64_t step_slot;
	/* While-stepping (trace-run.c): instructions left to collect. */
	uint64_t ws_left;
	uint32_t ws_number;
	uint64_t ws_addr;
	/* Return probes (retprobe.c): real return addresses, NULL if none. */
	struct ret_stack *ret;
	/* A software single-step (step.c): the addresses of its temporary
	 * breakpoints while the thread runs the instruction, and whether
	 * its last stop was the step's end. */
	uint64_t sstep_at[2];
	unsigned int sstep_n;
	bool sstep_ended;
	/* Register cache, valid while stopped. */
	bool regs_valid, regs_dirty;
	bool gpr_valid;		/* general registers only (regs_fetch_gpr) */
	/* The cache holds the registers a jump pad saved (the state at the
	 * probe), not the thread's own, which are the pad's (pad.c). */
	bool regs_pad;
	uint8_t *pad_entry;	/* ... from this table entry (agent's view) */
	/* Its entry in the pads' thread id table (pad-tid.c): its thread
	 * pointer then (tp_key), and whether a vfork child of it runs on
	 * its memory (and thread pointer) now. */
	bool tp_noted, tp_vfork;
	uint64_t tp_key;
	/* Where the pads read the thread pointer as the TCB's word at it
	 * (no tp_read: x86-64's %fs:0): the thread had none there when it was last resumed
	 * (no TLS), and its process's pads do without (pad-tid.c). */
	bool tp_none;
	/* ... and its other base (arch tp2_regnum: x86-64's gs base) then,
	 * when known: PAD_TID_GS. */
	bool tp2_known;
	uint64_t tp2;
	uint8_t *regcache;
};

/* Debug-register slots of a process, as many as any arch has (aarch64:
 * up to 16 breakpoints and 16 watchpoints); ptrace_hw_caps says which
 * ones the host uses for what. */
#define MAX_HW_SLOTS 32

enum hw_kind { HW_EXEC, HW_WRITE, HW_READ, HW_ACCESS };

struct hw_slot {
	uint64_t addr;
	unsigned int len;	/* a power of two, at most hw_caps.max_len */
	enum hw_kind kind;
	unsigned int refs;
};

struct sw_breakpoint {
	struct sw_breakpoint *next;
	uint64_t addr;
	unsigned int refs;
	unsigned int gdb_refs;	/* 1 when gdb has its breakpoint here */
	/* gdb's target-side conditions (Z0 ;X...), any true = stop; none
	 * = always stop.  cond_probe runs the displaced instruction when all
	 * are false, so the breakpoint stays in. */
	struct bp_cond {
		uint8_t *code;
		size_t len;
	} *conds;
	size_t nconds;
	struct probe *cond_probe;
	uint8_t saved[16];	/* original bytes under the breakpoint */
	/* The memory under it was unmapped (dlclose): nothing is written
	 * there any more, a new insert reads and writes afresh. */
	bool unmapped;
	/* A probe's jump pad replaced the breakpoint instruction: memory
	 * holds these `len` bytes (a jump) instead (bp_patch). */
	bool patched;
	uint8_t patch[16];
	size_t len;
	/* The breakpoint instruction written here (arch_ops.bp_insn, or
	 * the one of gdb's kind where the arch has several: 32-bit ARM's
	 * A32 and Thumb forms), `insn_len` bytes. */
	const uint8_t *insn;
	size_t insn_len;
	/* Software single-steps (step.c) that wait for a thread here; the
	 * breakpoint exists for them alone while refs == step_refs. */
	unsigned int step_refs;
};

/* One gdb-visible watchpoint or hardware breakpoint (Z1-Z4), kept so the
 * stop reply can name the address gdb asked for. */
struct hw_point {
	struct hw_point *next;
	enum rsp_point_type type;
	uint64_t addr;
	unsigned int len;
	unsigned int refs;
};

struct process {
	struct process *next;
	pid_t pid;
	bool attached;		/* vAttach/--attach: detach, never kill */
	bool exited;
	struct thread *threads;
	int mem_fd;		/* /proc/pid/mem, -1 if closed */
	unsigned int features;	/* arch_regset_feature */
	struct sw_breakpoint *breakpoints;
	struct hw_point *hw_points;
	struct hw_slot slots[MAX_HW_SLOTS];
	struct ptrace_hw_caps hw_caps;	/* asked at the first Z1-Z4 */
	bool hw_caps_known;
	/* A software step's breakpoints went while threads were parked on
	 * them (step.c): inferior_status lets those run on once the status
	 * at hand is dealt with. */
	bool step_unpark;
	int execs_to_skip;	/* shell start-up: execs before the program */
	struct xol_area *xol_areas;
	struct xol_free *xol_free;	/* slots of removed probes (xol.c) */
	struct pad_table *pads;	/* jump pads' shared table (pad.c), or NULL */
	struct probe *probes;
	uint64_t ret_tramp;	/* return trampoline (retprobe.c), 0 if none */
	/* Return probes with no stop (pad.c, struct arch_ret_pad): the
	 * in-process shadow stacks and their trampoline, 0 if none.  Never
	 * unmapped: a thread may return through it after the agent left. */
	uint64_t ret_area, ret_itramp;
	uint64_t ret_itrap;	/* its trap when the ring is full */
	/* Returns that stopped: at the agent's trampoline, and at the
	 * in-process one's trap for want of room in the ring. */
	uint64_t ret_stopped, ret_ring_full;
	bool ret_image;		/* RET_PAD_IMAGE set in the area: the
				   trampoline stores the x87/SSE/AVX image */
	bool ret_unwind;	/* unwinder entry points probed */
	bool fork_child;	/* reported by a fork event, not yet adopted */
	bool hidden;		/* its fork event has not reached gdb yet */
	int pause_depth;	/* inferior_pause calls not yet undone */
};

/* --- the agent ------------------------------------------------------- */

struct agent {
	struct agent_options opt;
	const struct arch_ops *arch;
	const struct ptrace_arch_ops *ptrace;	/* &ptrace_arch_host */
	struct event_base *base;
	struct server *server;

	struct process *processes;
	struct thread *gthread;		/* Hg: registers and memory */
	struct thread *cthread;		/* Hc: legacy resume */
	pid_t gpid;			/* Hg named a process, no thread */

	/* Connection state negotiated with gdb. */
	bool extended;
	bool non_stop;			/* QNonStop:1 */
	bool multiprocess;
	bool noack;
	bool thread_events;
	bool report_fork, report_vfork, report_exec;
	bool report_no_resumed;		/* "N" when nothing gdb resumed runs */
	bool error_messages;		/* gdb takes E.text in any reply
					   (error-message+, gdb 14) */
	bool swbreak_feature, hwbreak_feature;
	bool pass_signals[256];		/* gdb numbering */
	bool program_signals[256];
	bool program_signals_set;
	bool catch_syscalls, catch_any_syscall;
	bool catch_syscall_set[1024];

	/* vRun settings */
	char **env;			/* environment for new programs */
	char *workdir;

	/* The running state, all-stop. */
	bool running;			/* gdb is waiting for a stop reply */
	struct stop_event last_stop;
	bool have_last_stop;
	bool exit_after_reply;
	bool detach_on_close;		/* Qprobe.detachonclose:1 */
	int listen_port;

	/* qfThreadInfo iteration */
	struct thread *thread_iter;
	struct process *proc_iter;

	/* vFile */
	pid_t vfile_pid;

	/* scratch for replies */
	struct rsp_buf reply;
	struct rsp_request *req;
};

extern struct agent agent;

/* server.c */
/* The address to listen on (--once/--multi COMM), checked before a
 * program is started: exits as server_start would on a bad one. */
void server_check_comm(void);
int server_start(struct agent *a);
/* The current request is answered later (by a stop reply). */
void server_defer_reply(void);
void server_send_stop(const struct stop_event *ev);
/* Non-stop: queue a stop for gdb, notifying it if nothing is in flight. */
void server_queue_stop(const struct stop_event *ev);
void server_queue_stop_quiet(const struct stop_event *ev);
/* vStopped: drop the stop gdb has seen, answer with the next or OK. */
void server_next_stop(struct rsp_buf *reply, bool drop_first);
void server_clear_stops(void);
/* Whether a queued stop (gdb has not acknowledged it with vStopped) is
 * thread `tid`'s, or names process `pid` as a new fork child. */
bool server_stop_queued(pid_t pid, pid_t tid);
/* Drops the queued stops of process `pid` (detached), except the one gdb
 * was notified of and must acknowledge; `dropped` sees each dropped stop. */
void server_drop_stops(pid_t pid, void (*dropped)(const struct stop_event *));
void server_console(const char *text);	/* O<hex> console output */
/* Wait statuses are handled from the event loop as soon as it turns. */
void server_statuses_soon(void);
bool server_is_stdio(void);
/* Runs the event loop until nothing is left to wait for. */
void server_run(void);

/* hot-wait.c: waiting in waitid() while only the program can give work */
int hot_wait_init(void);
bool hot_wait_possible(int fd);
long hot_wait(int fd);

/* handlers.c: one function per request kind */
void handle_request(struct rsp_request *req, struct rsp_buf *reply);
void format_stop_reply(const struct stop_event *ev, struct rsp_buf *out);
/* The same as the payload of a `%Stop:` notification (non-stop). */
void format_stop_notification(const struct stop_event *ev, struct rsp_buf *out);

/* The inferior: attach.c (start, attach, detach, kill), stop.c
 * (inferior_stop_all), threads.c (the registry), resume.c, wait.c,
 * procfs.c (thread_core, thread_name). */
char *program_path(const char *name);
int inferior_start(char **argv, struct process **out);
/* Called first thing: the signal dispositions a started program gets. */
void inferior_note_signals(void);
int inferior_attach(pid_t pid, struct process **out);
int inferior_detach(struct process *p);
/* Detaches the child of fork event `ev` if gdb never heard of it. */
void inferior_detach_fork_child(const struct stop_event *ev);
int inferior_kill(struct process *p);
void inferior_kill_all_for_exit(void);
/* Stops every running thread (gdb reconnecting to a running program). */
void inferior_stop_all(void);

struct process *process_find(pid_t pid);
struct thread *thread_find(pid_t tid);
struct thread *thread_find_ptid(int64_t pid, int64_t tid);
struct process *current_process(void);
struct thread *current_thread(void);
void process_free(struct process *p);
int inferior_resume(const struct rsp_resume_action *acts, size_t count);
void inferior_interrupt(void);
void inferior_sigchld(void);
bool inferior_sigchld_some(unsigned int max);
/* Handles one wait status; says what became of it (WAIT_RESUME: an
 * internal event, the thread runs on). */
enum wait_outcome inferior_status(pid_t tid, int status);
/* Whether gdb waits for a stop (all-stop) or threads run (non-stop), and
 * some thread runs: the next thing to happen may be a wait status. */
bool inferior_waiting(void);
unsigned int thread_core(pid_t tid);
/* The name of thread `tid` of process `pid`, NULL if it has none there:
 * a clone outside the thread group (no CLONE_THREAD) is not in the
 * process's task list and gets no name, as with gdbserver. */
const char *thread_name(pid_t pid, pid_t tid, char *buf, size_t size);

/* regs.c: a thread's register cache; the per-arch transfer is
 * agent.ptrace (ptrace-arch.h). */
int regs_fetch(struct thread *t);
int regs_flush(struct thread *t);
uint8_t *regs_block(struct thread *t);	/* fetches when needed */
/* The block with at least the general registers (those the arch's
 * is_general names) current: one system call where the arch can. */
uint8_t *regs_block_gpr(struct thread *t);
int regs_fetch_gpr(struct thread *t);
/* Whether regs_block_gpr() covers gdb register `regnum`. */
bool regs_is_general(unsigned int regnum);
/* gdb register `regnum` of `t` (at most 8 bytes), for agent expressions. */
int regs_read_gdb(struct thread *t, unsigned int regnum, uint64_t *value);
size_t regs_block_size(const struct process *p);
/* Register `regnum` (at most 64 bits, zero-extended) of stopped `t`;
 * regs_set marks the cache dirty (written back before t runs). */
int regs_get(struct thread *t, unsigned int regnum, uint64_t *value);
int regs_set(struct thread *t, unsigned int regnum, uint64_t value);
uint64_t regs_get_pc(struct thread *t);
int regs_set_pc(struct thread *t, uint64_t pc);
/* Bytes to allocate for a thread's t->regcache. */
size_t regs_cache_size(void);
unsigned int regs_detect_features(pid_t tid);
void regs_invalidate(struct thread *t);
/* A jump pad's saved registers into stopped t's cache (`frame` its words,
 * `image` its FP/vector image in the arch's `image_form`, `bases` x86-64's
 * fs/gs bases or NULL); the registers the pad did not save are the
 * kernel's.  0 or -errno. */
int regs_load_pad(struct thread *t, const uint64_t *frame, const uint8_t *image,
		  unsigned int image_form, const uint64_t *bases);
/* A record of p's pads' ring into block `blk` (regs_cache_size() bytes
 * suffice), every register, for no thread (ptrace_arch_ops.load_record);
 * `image` NULL: those registers in their initial state.  0 or -errno. */
int regs_load_record(const struct process *p, uint8_t *blk, const uint64_t *frame,
		     const uint8_t *image, unsigned int image_form, const uint64_t *bases);
/* A hit's registers from stopped t (regsrc.h), its general registers
 * fetched.  0 or -errno (-ESRCH: gone). */
int regsrc_thread(struct regsrc *s, struct thread *t);
void regs_to_gpregs(const uint8_t *blk, struct arch_gpregs *g);
void regs_from_gpregs(uint8_t *blk, const struct arch_gpregs *g);
/* step.c: the one way the agent single-steps a thread.  Resumes stopped
 * `t` for one instruction with Linux signal `sig` (0: none); 0 or -errno. */
int thread_step(struct thread *t, int sig);
/* Software steps (no hw_step): at every wait status of `t` while it has
 * temporary breakpoints, takes them out; true when the status is the
 * step's end (a breakpoint trap at one of them). */
bool thread_step_stopped(struct thread *t, int status);
/* Whether `pc`, where `t` took a breakpoint trap, holds only other
 * threads' step breakpoints: t must wait until they are gone. */
bool thread_step_foreign(struct thread *t, uint64_t pc);
/* syscall.c: makes thread `t` (stopped) run one system call; *ret gets
 * its result (-errno when it failed).  Returns 0, or -errno when the
 * call could not be made. */
int inferior_syscall(struct thread *t, long nr, const long args[6], long *ret);
/* Where the stopped thread `t` goes on when resumed (a system call the
 * kernel restarts then: its instruction). */
int inferior_resume_pc(struct thread *t, uint64_t *pc);
/*
 * Runs the agent's code at `at` in the stopped thread `t` until its trap
 * (its pc then `trap_pc`), keeping the signals that come meanwhile, and
 * gives the thread its registers back.  The code must keep every
 * register and go on at inferior_resume_pc's address after the trap, and
 * the trap be known to the keeper (KEEPER_PASS): should the agent die,
 * the thread finishes the code and goes on as if never stopped.  `what`
 * names it in messages.  0 or -errno.
 */
int inferior_run(struct thread *t, uint64_t at, uint64_t trap_pc, const char *what);
/* mmap in the process by thread `t`, whatever the arch's call is (mmap,
 * mmap2); *out gets the address.  Returns 0 or -errno (the call's). */
int inferior_mmap(struct thread *t, uint64_t addr, uint64_t len, int prot,
		  int flags, int fd, uint64_t offset, uint64_t *out);

/* mem.c */
ssize_t mem_read(struct process *p, uint64_t addr, void *buf, size_t len);
ssize_t mem_write(struct process *p, uint64_t addr, const void *buf,
		  size_t len);
ssize_t mem_read_raw(struct process *p, uint64_t addr, void *buf, size_t len);
ssize_t mem_write_raw(struct process *p, uint64_t addr, const void *buf,
		      size_t len);
int mem_open(struct process *p);
int mem_mapping_perms(struct process *p, uint64_t addr, size_t len,
		      char perms[5]);
struct mem_region {
	uint64_t start, end;		/* [start, end) */
	bool mapped;
	char perms[5];			/* "r-xp"; "" in a gap */
	char name[4096];		/* maps' path name, "" for none */
};
int mem_region_at(struct process *p, uint64_t addr, struct mem_region *r);

/* breakpoint.c */
int bp_insert(struct process *p, uint64_t addr, unsigned int kind);
const uint8_t *bp_insn_of_kind(unsigned int kind, size_t *len);
bool bp_insn_here(struct process *p, uint64_t addr);
int bp_remove(struct process *p, uint64_t addr);
/* gdb's own breakpoints (Z0/z0): counted apart from the probes'. */
int bp_insert_gdb(struct process *p, uint64_t addr, unsigned int kind,
		  const char *conds, char *why, size_t whylen);
/* Whether gdb wants a stop at breakpoint `b` for thread `t`. */
bool bp_condition_holds(struct sw_breakpoint *b, struct thread *t);
int bp_remove_gdb(struct process *p, uint64_t addr);
struct sw_breakpoint *bp_find(struct process *p, uint64_t addr);
void bp_remove_all(struct process *p);
/* A fork child's copies of its parent's breakpoints. */
int bp_clone_all(struct process *from, struct process *to);
int bp_patch(struct process *p, uint64_t addr, const uint8_t *code, size_t len);
int bp_unpatch(struct process *p, uint64_t addr);
/* The memory under the breakpoint at `addr` is gone (its library was
 * unmapped): its removal writes nothing. */
void bp_unmapped(struct process *p, uint64_t addr);
int hw_insert(struct process *p, enum rsp_point_type type, uint64_t addr,
	      unsigned int len);
int hw_remove(struct process *p, enum rsp_point_type type, uint64_t addr,
	      unsigned int len);
void hw_remove_all(struct process *p);
/* Whether the debug registers can watch reads alone (Z3). */
bool hw_can_read_watch(struct process *p);
/* Brings t's debug registers up to p->slots (t->dregs_dirty). */
int hw_sync_thread(struct thread *t);
/* 0 when hardware points fire on this machine, -ENODEV when the debug
 * registers are accepted but never fire, other -errno if unknown. */
int hw_available(void);
/* Whether a hardware point stopped `t` (SIGTRAP with `si`): gdb's reason
 * and the address of the point gdb asked for. */
bool hw_stopped_by(struct thread *t, const siginfo_t *si,
		   enum stop_reason *reason, uint64_t *addr);

/* signals.c */
int signal_to_gdb(int linux_sig);
int signal_from_gdb(int gdb_sig);

/* xfer.c / vfile.c */
int svr4_library_list(struct process *p, struct rsp_buf *out);
int svr4_debug_slot(struct process *p, uint64_t *slot);
int osdata_read(const char *annex, struct rsp_buf *out);
uint64_t program_load_bias(struct process *p);
/* Address of the program's struct r_debug: 0 before the dynamic linker
 * has set it, -ENOENT when the program has no DT_DEBUG. */
int64_t process_r_debug(struct process *p);

/* solib.c: library loads and unloads, seen by the agent (see there) */
enum { SOLIB_CONSISTENT = 0, SOLIB_ADD = 1, SOLIB_DELETE = 2 }; /* r_state */
struct solib {
	uint64_t lm;		/* its struct link_map */
	uint64_t l_addr;	/* load bias */
	char name[4096];	/* l_name: the path it was opened by */
};
/* A probe at the dynamic linker's hook, once per process: its hits call
 * ret_libraries_changed and, once the list is whole again,
 * trace_libraries_changed.  0 or -errno with the reason in `why`. */
int solib_watch(struct process *p, char *why, size_t whylen);
/* r_debug.r_state, or -ENOENT before the dynamic linker ran. */
int solib_state(struct process *p);
/* Calls fn for each loaded object but the program, in the dynamic
 * linker's order, until fn returns true.  Returns how many were seen or
 * -errno. */
int solib_each(struct process *p,
	       bool (*fn)(const struct solib *lib, void *arg), void *arg);

/* thread-db.c */
/* Address of symbol `name` in the program or its loaded libraries. */
bool process_symbol_lookup(struct process *p, const char *name, uint64_t *addr);
bool process_auxv(struct process *p, uint64_t type, uint64_t *value);
struct thread *process_stopped_thread(struct process *p);
bool process_function_at(struct process *p, uint64_t addr, uint64_t *start,
			 uint64_t *size);
/* 32-bit ARM: 1 when the code at `addr` is Thumb, 0 when it is A32, as
 * the symbols of the file mapped there say ($t / $a mapping symbols, or
 * bit 0 of the function around it); -1 when they do not say. */
int process_isa_at(struct process *p, uint64_t addr);
int thread_db_tls_address(struct thread *t, uint64_t lm, uint64_t offset,
			  uint64_t *addr);
void thread_db_set_search_path(const char *path);
void thread_db_forget(pid_t pid);

/* probe.c */
enum { PROBE_EXEC_RUN, PROBE_EXEC_STEP, PROBE_EXEC_DONE };

/* What a probe's owner does with a hit: collect, and say whether gdb must
 * hear of it (nonzero: report the stop) or the thread goes on (0). */

enum probe_owner {
	PROBE_OWNER_NONE,
	PROBE_OWNER_TRACE,	/* a tracepoint run (trace-run.c) */
	PROBE_OWNER_BREAKPOINT,	/* a gdb breakpoint with conditions */
	PROBE_OWNER_RETURN,	/* an unwinder entry (retprobe.c): lives
				   until detach or exec */
	PROBE_OWNER_SOLIB,	/* the dynamic linker's hook (solib.c):
				   lives until detach or exec */
};

/* pad_attach's `collect`: what a recording pad stores (0: it stops);
 * PAD_IPA: the registers and what the in-process collector (agent/ipa/)
 * collects for the site's tracepoints (their programs:
 * trace_ipa_programs), with the thread and the time only where one
 * traces them (pad_ipa_live). */
enum pad_collect { PAD_STOPS, PAD_REGS, PAD_REGS_TIME_TID, PAD_IPA };

#define PROBE_HIT_WAIT (-EAGAIN)

struct probe {
	struct probe *next;
	enum probe_owner owner;
	struct process *proc;
	uint64_t addr;
	uint64_t code_addr;	/* addr, bit 0 set in Thumb code (32-bit ARM) */
	struct arch_insn insn;
	enum arch_strategy strategy;	/* how hits run the displaced insn */
	uint64_t slot;
	struct arch_xol xol;
	/* 0: the thread goes on; 1: gdb must hear of the stop;
	 * PROBE_HIT_WAIT: the owner cannot take the hit now, the thread
	 * waits at the probe's address and hits again once unparked. */
	int (*on_hit)(struct probe *pr, struct thread *t, void *arg);
	/* The probe is going (removed, or its process exited or exec'd). */
	void (*on_gone)(struct probe *pr, void *arg);
	void *arg;
	/* Jump pad (pad.c): the site jumps to `pad`; 0 when hits come by
	 * the breakpoint. */
	uint64_t pad;
	size_t pad_len;
	size_t pad_window;	/* bytes the jump covers (one or more insns) */
	bool pad_far;		/* the jump is arch_ops.emit_jump_far's */
	enum pad_collect pad_collect;	/* the pad records hits itself (no stop) */
	uint64_t pad_resume;	/* the relocated window in the pad */
	uint64_t pad_ipa_site;	/* PAD_IPA: its struct ipa_site in the process */
	bool pad_ipa_live;	/* PAD_IPA: records hold the thread and time */
	unsigned int pad_copies;	/* PAD_IPA: ranges the pad copies itself,
					 * with no call of the collector (0: it
					 * calls it; arch_pad_ring.copy_fn) */
	bool pad_no_image;	/* its records hold the frame only: no x87/SSE/
				 * AVX (v registers) image */
	/* The owner wants returns taken in the pad (PROBE_PAD_RET), and the
	 * pad does (its entry pushes on the in-process shadow stack). */
	bool pad_ret_want, pad_ret;
	bool pad_ret_only;	/* ... and nothing else is done at the entry */
	/* Hits so far: those that stopped the thread (its breakpoint, or its
	 * pad's trap), and those a pad recorded in the process (taken from
	 * the ring).  `monitor probes` shows them. */
	uint64_t hits_stopped, hits_recorded;
	/* Of the stopped hits, the owner's count of those a recording pad
	 * sent because its ring was full, and of those that waited (parked)
	 * because the owner had no room (the trace buffer in wait mode). */
	uint64_t hits_ring_full, hits_waited;
	/* Stops for a load of the pad's own that faulted (the thread
	 * pointer's word in a thread without TLS): the agent resumed the
	 * thread on the pad's path without it, no signal for the program,
	 * and the hit is recorded too.  The in-process collector counts its
	 * own (pad_ipa_faulted). */
	uint64_t hits_faulted;
};

/* probe_insert_flags: the owner allows a jump pad at the site. */
#define PROBE_MAY_PAD 1u
/* ... and must have one (gdb's fast tracepoints): an error without. */
#define PROBE_NEED_PAD 2u
/* ... whose hits the pad may collect in the process, with no stop: the
 * owner needs nothing but the registers (pad_drain hands them over), and
 * with PROBE_PAD_TIME_TID the thread and time of the hit too. */
#define PROBE_PAD_COLLECT 4u
#define PROBE_PAD_TIME_TID 8u
/* ... and with PROBE_PAD_IPA, the in-process collector runs the site's
 * tracepoints in the pad (PAD_IPA). */
#define PROBE_PAD_IPA 16u
/* ... and with PROBE_PAD_RET, the site is a function's entry whose
 * return the pad takes on the in-process shadow stack (pad_ret_*). */
#define PROBE_PAD_RET 32u
/* ... where nothing else happens at the entry (return probes only). */
#define PROBE_PAD_RET_ONLY 64u


int probe_strategy_parse(const char *s);
struct probe *probe_at(struct process *p, uint64_t addr);
int probe_insert(struct process *p, uint64_t addr,
		 int (*fn)(struct probe *, struct thread *, void *), void *arg,
		 struct probe **out, char *why, size_t whylen);
int probe_insert_flags(struct process *p, uint64_t addr,
		       int (*fn)(struct probe *, struct thread *, void *),
		       void *arg, unsigned int flags, struct probe **out,
		       char *why, size_t whylen);

/* pad.c, pad-ret.c, pad-step.c, pad-drain.c: jump pads, a probe's
 * zero-syscall way in (pad.c's essay; pad-int.h says which file holds what) */
int pad_attach(struct probe *pr, enum pad_collect collect, char *why, size_t whylen);
int pad_drain(struct process *p,
	      bool (*fn)(struct probe *pr, struct regsrc *src, uint64_t time_us,
			 const void *blocks, void *arg), void *arg);
bool pad_fault(struct thread *t, int sig);
uint64_t pad_ipa_faults(const struct process *p);
uint64_t pad_tp_faults(const struct process *p);
ssize_t pad_ipa_code_write(struct process *p, uint64_t addr, const void *buf, size_t len);
uint64_t pad_ipa_skipped(const struct probe *pr);
uint64_t pad_ipa_faulted(const struct probe *pr);
uint64_t probe_fault_stops(const struct probe *pr);
int pad_salvage(struct process *p,
		void (*fn)(uint64_t site, struct regsrc *src, pid_t tid,
			   uint64_t time_us, void *arg), void *arg);
int pad_salvage_hist(struct process *p,
		     void (*fn)(uint64_t addr, const uint64_t *words, void *arg), void *arg);
void pad_detach(struct probe *pr);
void pad_before_step(struct probe *pr);
void pad_breakpoint_added(struct process *p, uint64_t addr);
void pad_resume_skip(struct thread *t);
enum pad_trap { PAD_TRAP_NONE, PAD_TRAP_RESUME, PAD_TRAP_HIT };
enum pad_trap pad_trap(struct thread *t, struct probe **pr);
void pad_continue(struct thread *t);
int pad_leave(struct thread *t);
struct probe *pad_entered(struct process *p, uint64_t pc);
bool pad_contains(struct process *p, uint64_t pc);
/* Whether `pc` is in code a pad calls (the vDSO's clock_gettime, the
 * in-process collector): pad_settle steps a thread out of there too. */
bool pad_in_callee(struct process *p, uint64_t pc);
bool pad_settle(struct thread *t);
void pad_fork_child(struct process *c);
void pad_unmap(struct process *p);
uint64_t pad_ret_count(const struct process *p, unsigned int off);
int pad_ret_image(struct process *p);
uint64_t pad_ret_recorded(const struct process *p);
/* The trampoline's own latency histograms (RET_HIST_*), or NULL. */
uint8_t *pad_ret_hist(struct process *p, bool placing);
/* Nanoseconds from the counter's reading `t0` (an in-process entry's) to
 * now, by the agent's reading of the same counter. */
uint64_t pad_ret_latency_ns(uint64_t t0);
void pad_forget(struct process *p);
/* The pads' thread id table (pad-tid.c). */
void pad_tid_note(struct thread *t);
void pad_tid_gone(struct thread *t);
void pad_tid_vfork(struct thread *t, bool running);
/* The gdb regnum of the thread pointer (arch_ops.tp_regnum), -1 none. */
int tp_regnum(void);
/* t's thread pointer as its pads read it: the register gdb sees
 * (tp_regnum: x86-64's fs base), else the TLS register through ptrace
 * (aarch64 TPIDR_EL0, arm TPIDRURO).  0 if unknown. */
uint64_t thread_key(struct thread *t);
void probe_remove(struct probe *pr);
/* probe_remove for a probe whose code was unmapped (dlclose): nothing is
 * written where it was, the memory may be another mapping's by now. */
void probe_remove_unmapped(struct probe *pr);
void probe_remove_all(struct process *p);
void probe_gone(struct probe *pr);
int probe_execute(struct probe *pr, struct thread *t);
int probe_step_done(struct thread *t, bool trapped);
bool probe_fix_pc(struct thread *t);
/* Non-stop: stop p's running threads around a change, then resume them
 * (or report the events they took meanwhile).  No-ops in all-stop. */
void inferior_pause(struct process *p);
void inferior_unpause(struct process *p);
void inferior_unpark(struct process *p);

/* xol.c */
int xol_slot_alloc(struct process *p, uint64_t near, uint64_t *slot);
int xol_span_alloc(struct process *p, uint64_t near, size_t len, uint64_t *at);
int xol_span_alloc_far(struct process *p, uint64_t near, size_t len, bool beyond,
		       uint64_t *at);
size_t xol_slot_size(void);
/* A slot freed by a probe goes back for the next probe at the same
 * address (gdb re-inserts breakpoints at every resume). */
void xol_slot_release(struct process *p, uint64_t addr, uint64_t slot);
bool xol_slot_reuse(struct process *p, uint64_t addr, uint64_t *slot);
bool xol_contains(const struct process *p, uint64_t addr);
void xol_unmap_all(struct process *p);
void xol_forget_all(struct process *p);

/* trace-run.c, trace-frames.c, trace-install.c (trace.h) */
void trace_init(void);
bool trace_running(void);
bool trace_frame_selected(void);
void trace_frame_regs(struct rsp_buf *reply);
void trace_frame_reg(unsigned int regnum, struct rsp_buf *reply);
void trace_frame_mem(uint64_t addr, size_t len, struct rsp_buf *reply);
void trace_after_hit(void);
int trace_drain(bool may_stop);
/* The in-process collector's programs (struct ipa_program, agent/ipa/
 * ipa-abi.h) of the tracepoints at `addr`, one after another in
 * buf[0, size), program i at offs[i] (8-aligned); their counters_off is
 * for the caller to fill.  Returns how many (<= max), or -errno with the
 * reason in `why` when the site cannot collect in the process. */
int trace_ipa_programs(uint64_t addr, uint8_t *buf, size_t size,
		       uint32_t *offs, unsigned int max, char *why, size_t whylen);
struct ipa_tsvs;
void trace_ipa_tsvs(struct ipa_tsvs *t);
/* Whether a hit at `addr` needs registers beyond the pad's frame (x87,
 * SSE, AVX; aarch64's v registers) for its tracepoints: `collect $regs`
 * or any register mask, or bytecode that reads such a register.  When
 * not, a recording pad stores no image of them. */
bool trace_site_needs_image(uint64_t addr);
bool trace_returns_need_image(uint64_t addr);
void trace_step_frame(struct thread *t);
void trace_process_gone(struct process *p);
/* The probes of `p` are gone with its address space (exec): the pending
 * locations placed there end. */
void trace_probes_gone(struct process *p);
/* solib.c: the list of loaded libraries changed (pending locations). */
void trace_libraries_changed(struct process *p);
bool trace_disconnect(void);
/* trace-hist.c: monitor hist (see there).  Marks tracepoint `number`
 * (or not) to keep a histogram from the next run; -ERANGE, -EBUSY
 * during a run, -ENOENT to unmark one not marked. */
int trace_hist_mark(uint32_t number, bool on);
void trace_hist_marks_clear(void);
/* Each histogram as text through `say`; returns how many. */
int trace_hist_print(void (*say)(const char *text));

/* retprobe.c: return probes (see there) */
int ret_mark(uint32_t number, bool on);
void ret_marks_clear(void);
bool ret_is_marked(uint32_t number);
/* "1, 3" (or "" when none) into buf. */
void ret_marks_text(char *buf, size_t size);
/* Trampoline and unwinder probes for `p`, near code at `near`. */
int ret_prepare(struct process *p, uint64_t near, char *why, size_t whylen);
/* Entry hit of a return probe at `func`: hijack the return address. */
int ret_entry(struct thread *t, uint64_t func, uint32_t run, char *why,
	      size_t whylen);
/* A SIGTRAP of a process with a trampoline: true when it was the
 * trampoline's (*o says what next). */
bool ret_trap(struct thread *t, enum wait_outcome *o);
/* A stopped thread standing on the trampoline moves to the real
 * return address (gdb never sees the trampoline as a pc). */
void ret_fix_pc(struct thread *t);
/* gdb sees stopped thread `t`: real return addresses in its stack until
 * ret_resume(), called as it resumes while ret_shown(). */
void ret_show(struct thread *t);
bool ret_shown(const struct thread *t);
void ret_resume(struct thread *t);
/* Real return addresses back in the stacks of the stopped threads. */
void ret_restore_process(struct process *p);
void ret_fork(struct thread *parent, struct process *child);
void ret_thread_free(struct thread *t);
/* Whether the pad at `func`, where `t` (at the function's entry, handed
 * off to the agent) stopped, took its return: [sp] is the in-process
 * trampoline's address (x86-64), or x30 is (aarch64, a tail call), or
 * the thread's newest in-process entry is this call's, whose trampoline
 * the pad writes only after its record: then x30 gets it here. */
bool ret_pushed_in_pad(struct thread *t, uint64_t func);
/* The same question, the thread's registers left as they are (for
 * counting, before the hit's frames are collected). */
bool ret_pushed_in_pad_peek(struct thread *t, uint64_t func);
/* The address space is gone (exec, exit): forget without touching it. */
void ret_process_forget(struct process *p);
/* solib.c: a library came or went (every library event). */
void ret_libraries_changed(struct process *p);

/* trace-run.c, for retprobe.c: thread `t` returned from `func` (entered
 * during run `run`) after `latency_ns`, at `time_us` (CLOCK_REALTIME, the
 * frame's timestamp: read with the latency's end, so that a slice drawn
 * from the two ends where the return happened); pc is the real return
 * address. */
void trace_return(struct thread *t, uint64_t func, uint32_t run,
		  uint64_t latency_ns, uint64_t time_us);
/* A return the trampoline recorded in the process (pad-drain.c): `src`
 * its registers (no thread behind them, pc the real return address),
 * `run16` the run's low 16 bits.  False: no room for it yet. */
bool trace_drain_return(struct regsrc *src, uint64_t func, uint32_t run16,
			uint64_t latency_ns, uint64_t time_us);
/* The number of the trace run being started or running. */
uint32_t trace_run_id(void);

/* monitor.c */
void handle_monitor(const char *cmd, struct rsp_buf *reply);

#endif
