/*
 * trace.h - what the trace files share (private to agent/trace-*.c).
 *
 * One trace run at a time: `tr` holds the tracepoint definitions, the
 * trace buffer, the run's state and the frame gdb selected.
 *   trace-run.c      the run, hits, collection, draining the pads' records
 *   trace-install.c  verifying and putting probes in place (QTStart)
 *   trace-frames.c   status and the selected frame (QTFrame, g, m in a frame)
 *   trace-packets.c  the packets' handlers, tsave, probe-trace's streaming
 */
#ifndef PROBE_TRACE_H
#define PROBE_TRACE_H

#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/pending.h"
#include "protocol/tbuf.h"
#include "protocol/tp-status.h"
#include "protocol/tracepoint.h"

#define DEFAULT_BUFFER_SIZE 0x500000
#define COLLECT_CHUNK 65535

struct trace {
	struct tp_store store;
	struct tbuf tb;
	bool tb_ready;
	size_t tb_regsize;

	bool running, ever_run;
	enum tp_stop_reason reason;
	uint32_t stopping_tp;
	char error[256];
	bool stop_pending;		/* decided during a hit */
	enum tp_stop_reason pending_reason;
	uint32_t pending_tp;

	bool circular, disconnected;
	/* Qprobe.fullwait:1 (the recorder): a full buffer parks hitting
	 * threads until the stream makes room, instead of ending the run. */
	bool full_wait;
	uint64_t parked_hits;		/* hits that waited for room */
	/* Qprobe.fulldrop:1 (the recorder's lossy mode): a hit whose frame
	 * finds no room is counted lost (tp_def.lost) and the run goes on.
	 * Without either mode, a full buffer ends the run (gdb's way). */
	bool full_drop;
	bool drain_all;			/* the run or its process ends: take
					 * every record, growing the buffer */
	int64_t buffer_size;		/* requested; -1 = default */
	uint64_t start_time, stop_time;
	char *user, *notes, *stop_notes;

	struct process *proc;		/* the process the run traces */
	uint32_t run_id;		/* tells return-probe entries of an
					   earlier run from this run's */

	/* The frame gdb selected with QTFrame; -1 = live. */
	int64_t frame_no;
	struct tbuf_frame frame;

	struct tp_upload upload;
	struct tsv_upload tsv_upload;

	/* qprobe.frames: bytes of the oldest frame already streamed. */
	size_t stream_off;

	/* Qprobe.file: the recorder's trace file the frames are written
	 * into (trace-fwrite.c); out_fd is open while out_path is set. */
	char *out_path;
	int out_fd;
	uint64_t out_end;		/* where the next frames go */
	int out_error;			/* errno of a write that stopped
					   part of the way, said next */
	uint64_t out_frames, out_bytes;	/* written, not yet reported */
};


extern struct trace tr;

/* How a trace state variable's value is read (tsv_tag): stored, or live
 * during a hit. */
enum { TSV_PLAIN, TSV_TIMESTAMP, TSV_THREAD, TSV_LATENCY };

static inline void set_string(char **dst, const char *src)
{
	free(*dst);
	*dst = src ? strdup(src) : NULL;
}

/* Scratch for one memory collection (64 KiB pieces). */
extern uint8_t collect_buf[COLLECT_CHUNK];

/* One hit being collected: its registers, process and thread id come
 * from `src`, a stopped thread's or a pad record's alike. */
struct hit {
	struct regsrc *src;
	struct tp_def *tp;
	int err;			/* collection failure (-ENOSPC ...) */
	uint64_t latency_ns;		/* return probe: entry to return */
	uint64_t time_us;		/* when a pad recorded it; 0: now */
};

/* trace-run.c: the run and its hits */
uint64_t now_usec(void);
void tsv_tag(uint32_t number);
int64_t tsv_live_value(const struct tsv_def *v, const struct hit *h);
/* The probes' callback: one hit at a traced address. */
int trace_hit(struct probe *pr, struct thread *t, void *arg);
bool site_runs(const struct tp_def *tp, const struct pending *pl);
void run_tracepoints(struct hit *h, uint64_t addr, bool returning,
		     const struct pending *pl);
bool room_for_hit(void);
/* Closes the recorder's trace file (Qprobe.file), if open. */
void trace_fwrite_close(void);
/* With a recorder's file open, writes the buffer out once it holds a
 * batch's worth (between hits, never while a frame is being built). */
void trace_fwrite_flush_some(void);
void remove_probes(void);
void trace_stop_run(enum tp_stop_reason reason, uint32_t tp);

/* trace-install.c: verifying and placing */
enum pad_collect recordable(uint64_t addr);
int buffer_ready(size_t regsize, size_t size, char *why, size_t whylen);
int trace_verify(struct tp_def *tp, char *why, size_t whylen);
int trace_install(struct tp_def *only, char *why, size_t whylen);
int trace_start_run(char *why, size_t whylen);

/* trace-stats.c: how the probes ran (qprobe.stats) */
void trace_stats_keep(struct probe *pr);
void trace_stats_keep_returns(struct process *p);
void trace_stats_reset(struct process *p);

/* trace-hist.c: latency histograms instead of frames (Qprobe.hist) */
bool trace_hist_add(struct tp_def *tp, uint64_t latency_ns);
void trace_hist_start(struct process *p);
void trace_hist_fold(struct process *p);
void trace_hist_clear(void);
int trace_hist_apply_marks(char *why, size_t whylen);
int trace_hist_salvage(struct process *p);

/* trace-frames.c */
void trace_fill_status(struct tp_status *st);

#endif
