/*
 * recorder.h - the state of one `probe-trace record` run, shared by the
 * files that make up the recorder (record.h is the command's entry).
 *
 * A recording is one struct recorder: the options, the connection to the
 * agent, the modules (the program and its libraries, read locally), the
 * probes with their sites, the trace file being written and the
 * program's threads.  Each client/record-*.c file does one part of the
 * run and says which in its opening comment:
 *
 *   record.c          the command: options, the run from start to end
 *   record-agent.c    talking to the agent: requests, stop replies,
 *                     starting it, the handshake, learning the target
 *   record-modules.c  the program and its libraries as local ELF files
 *   record-spec.c     probe specs resolved to sites and typed values
 *   record-pending.c  probes in libraries not loaded yet (dlopen)
 *   record-hist.c     latency histograms the agent keeps (`hist`)
 *   record-define.c   probes as the agent's tracepoint definitions
 *   record-file.c     the trace file: header, frames, status line
 *   record-threads.c  the program's threads: names, --tid/--comm, the
 *                     file's thread table
 *   record-drain.c    the loop that streams frames into the file
 *   record-direct.c   the local fast path: the agent writes the frames
 *                     into the file itself
 *   record-live.c     --live: frames printed as they arrive
 *   record-status.c   the terminal's status line, losses, why a run
 *                     ended
 *   record-salvage.c  a dead agent's frames recovered by a new one
 *
 * Trace state variables the recorder defines (all tracepoints collect the
 * first two; see doc/probe-trace.1):
 *   1 trace_timestamp (the agent's builtin, microseconds), 2 probe_thread,
 *   3 probe_latency_ns (return probes), 4 probe_retval, 5.. probe_arg0,
 *   probe_arg1, ...  (gdb's tdump treats names beginning with "arg",
 *   "reg" or "loc" as $args, $regs, $locals: hence the prefix.)
 */
#ifndef PROBE_CLIENT_RECORDER_H
#define PROBE_CLIENT_RECORDER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "client/elfsym.h"
#include "client/rsp-client.h"
#include "client/sdt.h"
#include "client/spec.h"
#include "protocol/stats.h"
#include "client/target.h"
#include "protocol/tp-status.h"
#include "protocol/tracepoint.h"

struct dv_collect;
struct dv_module;
struct rsp_request;
struct tfile_reader;
struct typed_probe;

#define TSV_TIMESTAMP 1
#define TSV_THREAD 2
#define TSV_LATENCY 3
#define TSV_RETVAL 4
#define TSV_ARG0 5
#define MAX_PROBES 256
#define MAX_MODULES 512
#define DEFAULT_BUFFER (16u << 20)
/* ms for one request; shorter while a dead agent's frames are salvaged
 * (record-salvage.c) */
extern int req_timeout_ms;
#define REQ_TIMEOUT req_timeout_ms
#define STATUS_RESERVE 160		/* bytes the status line keeps free */

struct module {
	char *path;			/* on the target */
	char *local;			/* local copy */
	uint64_t bias;			/* runtime = link-time + bias */
	bool opened, failed;
	struct elfsym_file ef;
	struct dv_module *dv;		/* its DWARF, when it has some */
	char *dv_error;			/* why not */
	bool dv_tried;
};

#define MAX_SITES 64
#define MAX_LOADS 64
/* QTDP addresses of pending probes the agent resolves by symbol: no code
 * is there in any process, and the file's tracepoint is shown at it. */
#define PENDING_KEY(tpnum) ((uint64_t)(tpnum))

/* Where a probe is: one place for a function or address; every site of a
 * USDT probe name (the same probe inlined in several places), each a
 * location of the probe's tracepoint. */
struct site {
	uint64_t addr;
	const struct sdt_probe *sdt;	/* its note, or NULL */
	uint64_t sem;			/* runtime semaphore address, 0 none */
	bool sem_done;
};

struct probe {
	struct probe_spec spec;
	int tpnum;
	char name[160];
	struct module *mod;
	int nargs;			/* args collected */
	struct site sites[MAX_SITES];
	size_t nsites;
	struct sdt_file sdt;		/* USDT: the module's notes */
	bool sdt_open;
	uint64_t frames;		/* received */
	uint64_t lost;			/* the agent had no room for them */
	/* Typed values (DWARF), per site: what they are, what to collect. */
	struct typed_probe *typed;
	struct dv_collect *collect;
	bool typed_args;		/* `args` are typed: no raw argN */
	bool after_prologue;		/* moved past the prologue */
	uint64_t filtered;		/* dropped by --tid / --comm */
	/* In a library not loaded yet: the agent places it at each load
	 * (Qprobe.pending) and says so (qprobe.libevents). */
	bool pending;
	char *pending_sym;		/* for the agent to find; NULL: the
					   site is link-time (resolved here) */
	bool pending_failed;		/* it said why it could not place it */
	struct load {
		uint64_t addr, frames;
		bool ended;
	} loads[MAX_LOADS];
	unsigned int nloads;		/* loads seen (more than kept) */
	/* How its sites' hits ran (qprobe.stats, at the end), for the
	 * user ("jump pad", "emulated + return trap"...; "" not placed),
	 * the hits that stopped the program (a return probe's: its entry's
	 * and its returns'), and of those the ones a full ring sent and the
	 * ones that waited for room in the trace buffer. */
	char how[64];
	uint64_t stops, ring_full, waited;
	/* `hist`: the latencies the agent counted (qprobe.hist, at the
	 * end), hist.n the calls; hist_known once read. */
	struct log2_hist hist;
	uint64_t hist_sum;		/* ns */
	bool hist_known;
};

struct recorder {
	/* options */
	const char *out_path;
	const char *agent_cmd;
	const char *connect;
	const char *sysroot;
	pid_t attach_pid;
	char **prog_argv;
	int prog_argc;
	double duration;
	uint64_t buffer_size;
	bool quiet;
	bool tty_status;		/* the status line, on a terminal */
	/* --live: every frame written to the file is printed on stdout,
	 * as dump prints it (frame-print.c), read through a reader of the
	 * file's header, which write_cb keeps in live_head */
	bool live, live_json;
	struct rsp_buf live_head;
	struct tfile_reader *live_reader;
	char tty_text[512];		/* the status line shown */
	bool out_regular;		/* the output is a regular file */
	unsigned int string_max;	/* bytes of a typed char * collected */
	bool full_stops;		/* --on-full=stop: a full buffer ends the run */
	bool full_drops;		/* --on-full=drop: hits without room are
					   lost, counted, and the run goes on */
	uint64_t lost;			/* frames lost, all probes (qprobe.lost) */
	bool lost_said;			/* the first loss was reported */
	uint32_t lost_tp[MAX_PROBES];	/* the file's table of losses */
	/* qprobe.stats was answered (an older agent does not know it: then
	 * nothing is said about stops); the returns' counts (ret_known:
	 * return probes ran), ret_in_process: the process recorded them. */
	bool stats_known, ret_known, ret_in_process;
	uint64_t ret_recorded, ret_stopped, ret_ring_full;
	size_t ret_shared;		/* >1: that many return probes share
					   the returns' counts, said once */
	uint64_t lost_count[MAX_PROBES];
	/* The run ended by itself (full buffer, error...): what the agent
	 * said, for the user, the file and the exit status. */
	bool self_stopped;
	struct tp_status why;
	char why_error[128];

	struct rsp_client c;
	struct rsp_buf reply;
	struct target_regs regs;
	const struct arch_ops *tarch;	/* the target's arch: its ABI */
	char *target_xml;
	int pid;
	bool started;			/* we started the program */
	bool exited;
	int exit_code, exit_signal;
	bool running;			/* trace run started */
	/* Salvaging a dead agent's frames (recover()): the new agent runs
	 * with --multi, and vAttach is retried until this time (ms) while
	 * the program is still traced by the dying agent. */
	uint64_t attach_until;

	struct module mods[MAX_MODULES];
	size_t nmods;
	struct probe probes[MAX_PROBES];
	size_t nprobes;
	int max_args;
	bool any_ret;
	bool usage_error;		/* a spec names what is not there */
	bool hist_failed;		/* a histogram could not be read */

	struct tp_store store;
	struct rsp_request *req;

	/* output */
	int fd;
	uint64_t end;			/* offset of the end marker */
	uint64_t frames, bytes;
	/* The header's last bytes as they were when the agent began to
	 * write the frames after them (record-direct.c): a cut of the
	 * file into the header is seen by them, even after the agent's
	 * next write has grown the file again past them. */
	uint8_t head_tail[64];
	size_t head_tail_len;
	uint64_t head_end;
	uint8_t *carry;			/* partial frame from the stream */
	size_t carry_len, carry_cap;
	bool write_failed;
	/* The agent writes the frames into the file itself
	 * (record-direct.c); no_direct: --no-direct */
	bool direct, no_direct;
	uint64_t frames_at_last, last_tick_ms;
	uint64_t start_ms;
	struct tp_status st;		/* the header's status line */
	char *notes;
	uint64_t status_off;		/* of the text after "status " */
	size_t status_len;
	bool header_written;

	/* The program's threads, with their names as the agent read them
	 * when the recorder took the thread's first frame, or, for a
	 * thread gone by then, when the thread list last showed it (name[0]
	 * is 0 when neither could); the file's thread table. */
	struct rec_thread {
		int64_t tid;
		char name[64];
		bool asked;		/* the name was read or tried */
		bool framed;		/* a frame of it was taken */
	} *threads;
	size_t nthreads, cap_threads;
	size_t last_thread;		/* of the last frame (note_thread) */
	size_t unasked;			/* threads with !asked */

	/* --tid, --comm: frames of other threads are dropped here, counted
	 * (in all and per probe) and the count kept in the thread table */
	int64_t *keep_tids;
	size_t nkeep_tids;
	const char *keep_comm;
	uint64_t filtered;
};

/* The signal that asked the recording to stop (Ctrl-C...), or 0. */
extern volatile sig_atomic_t stop_signal;

/* The probe of tracepoint `tpnum`, or NULL. */
static inline struct probe *probe_of(struct recorder *r, int tpnum)
{
	if (tpnum >= 1 && (size_t)tpnum <= r->nprobes)
		return &r->probes[tpnum - 1];
	return NULL;
}

/* record.c */
uint64_t now_ms(void);
void err_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* record-agent.c */
int request_ok(struct recorder *r, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
const char *hex_of(struct rsp_buf *b, const void *data, size_t len);
int monitor(struct recorder *r, const char *cmd, char *out, size_t outsize);
int read_target(struct recorder *r, uint64_t addr, void *out, size_t len);
int handle_notes(struct recorder *r);
int start_agent(struct recorder *r);
int handshake(struct recorder *r);
int learn_target(struct recorder *r);

/* record-modules.c */
char *local_path(struct recorder *r, const char *target_path);
struct elfsym_file *module_elf(struct module *m);
int check_build_id(struct recorder *r, struct module *m);
struct module *add_module(struct recorder *r, const char *path, uint64_t bias);
void parse_libraries(struct recorder *r, const char *xml);
struct module *find_library(struct recorder *r, const char *lib, char *err,
			    size_t errsize);
bool library_missing(struct recorder *r, const char *lib);
struct dv_module *module_dwarf(struct module *m, char *err, size_t errsize);

/* record-spec.c */
int setup_probes(struct recorder *r);

/* record-pending.c */
int resolve_pending(struct recorder *r, struct probe *p, char *err,
		    size_t errsize);
int define_pending(struct recorder *r, struct probe *p);
bool any_pending(struct recorder *r);
void pending_said(struct recorder *r);
int read_libevents(struct recorder *r);
void say_loads(struct recorder *r);

/* record-define.c */
int define_all(struct recorder *r);
int semaphores(struct recorder *r, int delta);

/* record-hist.c */
int define_hist(struct recorder *r, struct probe *p);
int read_hists(struct recorder *r);
void print_hists(struct recorder *r);

/* record-file.c */
int open_output(struct recorder *r);
void update_status(struct recorder *r, bool final);
int append_frames(struct recorder *r, const uint8_t *data, size_t len);

/* record-threads.c */
long note_thread(struct recorder *r, const uint8_t *body, size_t len);
long thread_framed(struct recorder *r, int64_t tid);
void name_threads(struct recorder *r);
void list_threads(struct recorder *r);
size_t drop_frames(struct recorder *r, size_t len);
void write_threads(struct recorder *r);

/* record-direct.c */
void direct_start(struct recorder *r);
long direct_drain(struct recorder *r);
void direct_adopt(struct recorder *r);

/* record-live.c */
int live_open(struct recorder *r);
void print_live(struct recorder *r, size_t len);

/* record-drain.c */
size_t count_frames(struct recorder *r, const uint8_t *data, size_t len);
long drain_frames(struct recorder *r);
int record_loop(struct recorder *r);
int finish(struct recorder *r);

/* record-status.c */
void status_line(struct recorder *r, bool final);
void check_run(struct recorder *r);
void read_lost(struct recorder *r);
void say_lost(struct recorder *r);
void say_why_stopped(struct recorder *r);
void read_stats(struct recorder *r);
void say_summary(struct recorder *r);

/* record-salvage.c */
void salvage(struct recorder *r);

#endif
