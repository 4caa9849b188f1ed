/*
 * tracepoint.h - the tracepoint and trace-state-variable definition store.
 *
 * gdb defines a trace run with a burst of packets at `tstart` (QTinit, then
 * per tracepoint location a QTDP header, QTDP:- action packets and QTDPsrc
 * source strings, then QTDV per variable).  This store keeps exactly what
 * those packets said, answers the uploads (qTfP/qTsP, qTfV/qTsV) and the
 * `tp`/`tsv` lines of a trace file, and holds the per-tracepoint counters
 * the hit path updates.  It knows nothing of ptrace or of how a tracepoint
 * is installed: the agent reads the definitions and acts.
 *
 * Invariants and protocol facts:
 *   - a tracepoint *location* is keyed by (number, address): gdb sends one
 *     QTDP per location of a multi-location tracepoint, all with the same
 *     number, so a second address under one number is a new location, not
 *     an error;
 *   - re-sending an identical definition is a no-op (gdb 13 re-downloads
 *     installed tracepoints at solib events with InstallInTrace, and
 *     gdbserver's E01 there aborts the user's `continue`): tp_define() and
 *     tp_add_actions() return TP_UNCHANGED so the agent does not install
 *     twice; a *different* definition under an existing (number, address)
 *     is -EEXIST;
 *   - the store creates the builtin TSV 1 `$trace_timestamp` itself and
 *     keeps it across tp_store_clear() (QTinit), as gdbserver does;
 *   - numbers must fit a trace frame's int16 tpnum (1..32767);
 *   - everything is bounded (TP_MAX_*), with -ENOSPC / -E2BIG and a message
 *     in store->error.
 *
 * The store allocates with malloc at definition time only; nothing here is
 * on the hit path except the counters, which are plain fields.
 */
#ifndef PROBE_TRACEPOINT_H
#define PROBE_TRACEPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol/rsp.h"
#include "protocol/rsp-request.h"

#define TP_MAX_TRACEPOINTS 4096		/* locations in the store */
#define TP_MAX_NUMBER 0x7fff		/* frames hold an int16 tpnum */
#define TP_MAX_ACTIONS 1024		/* per location, both lists */
#define TP_MAX_SOURCES 1024		/* per location */
#define TP_MAX_DEF_BYTES (1u << 20)	/* bytecode+masks+sources per location */
#define TP_MAX_TSVS 4096
#define TP_MAX_TSV_NAME 1024

/* Returned (positive) by tp_define/tp_add_actions/tp_add_source when the
 * packet repeats what the store already holds: reply OK, install nothing. */
#define TP_UNCHANGED 1

enum tp_action_kind {
	TP_ACTION_REGS = 'R',		/* collect the register block */
	TP_ACTION_MEM = 'M',		/* collect basereg + offset, len bytes */
	TP_ACTION_EXPR = 'X',		/* run bytecode for its trace ops */
	TP_ACTION_SDATA = 'L',		/* static tracepoint data */
};

struct ax_plan;

struct tp_action {
	enum tp_action_kind kind;
	bool while_stepping;		/* an `S` action */
	uint8_t *bytes;			/* R: mask MSB first; X: bytecode */
	size_t len;
	int32_t basereg;		/* M: -1 = absolute */
	int64_t offset;			/* M: address (basereg -1) or offset */
	uint64_t mem_len;		/* M */
	struct ax_plan *plan;		/* X: run without the interpreter
					 * (ax-plan.h), NULL: ax_eval */
};

/* One source string, reassembled from its QTDPsrc pieces. */
struct tp_source {
	enum rsp_tp_src_type type;	/* at / cond / cmd */
	char *text;			/* NUL-terminated, total_len bytes */
	size_t total_len;		/* announced length */
	size_t filled;			/* bytes received so far */
};

struct tp_def {
	uint32_t number;
	uint64_t addr;
	bool enabled;
	uint64_t step_count;		/* while-stepping N */
	uint64_t pass_count;		/* 0 = none */
	bool fast;			/* F<len> given */
	uint32_t fast_len;
	bool is_static;
	uint8_t *cond;			/* condition bytecode, NULL if none */
	size_t cond_len;

	struct tp_action *actions;	/* collect actions then S actions, in
					   arrival order; while_stepping says
					   which list */
	size_t n_actions;
	struct tp_source *sources;	/* arrival order (at, cond, cmd...) */
	size_t n_sources;

	/* Counters owned by the hit path / status code. */
	uint64_t hit_count;
	uint64_t bytes_used;		/* trace buffer bytes of its frames */
	uint64_t lost;			/* hits of the run whose frame found no
					   room in the buffer (qprobe.lost) */
	bool hist;			/* the agent's: hits add to a latency
					   histogram, no frame (Qprobe.hist) */

	/* Private: definition bookkeeping. */
	bool defining;			/* last packet had `-` */
	bool stepping_seen;		/* an S packet came: later ones too */
	bool resent;			/* identical re-download in progress */
	size_t resend_pos;		/* next action to compare */
	size_t def_bytes;		/* for TP_MAX_DEF_BYTES */
};

struct tsv_def {
	uint32_t number;
	int64_t initial;
	bool builtin;
	char *name;			/* without `$` */
	int64_t value;			/* current value during/after a run */
	bool value_known;		/* false: qTV replies `U` */
	int live;			/* the user's tag for a variable read
					 * when used (0: none; the store
					 * keeps it, never sets it) */
};

struct tp_store {
	struct tp_def **tps;		/* sorted by (number, addr) */
	size_t n_tps;
	struct tsv_def *tsvs;		/* sorted by number */
	size_t n_tsvs, cap_tsvs;
	const char *error;		/* message of the last failure */
	char errbuf[160];
	uint64_t gen;			/* changes with every change of a
					 * definition, a variable or the
					 * enabled state (a user's cache of
					 * what runs where is then stale) */
};

/* ---- store life cycle ---- */

/* Empty store holding only TSV 1 $trace_timestamp. 0 or -ENOMEM. */
int tp_store_init(struct tp_store *s);
void tp_store_free(struct tp_store *s);
/* QTinit: drops every tracepoint and every TSV but the builtin one. */
void tp_store_clear(struct tp_store *s);
/* QTStart: hit counts and bytes used to 0, TSV values to their initial
 * values (known), the builtin timestamp to unknown. */
void tp_store_start_run(struct tp_store *s);

/* ---- definition (QTDP, QTDP:-, QTDPsrc, QTDV, QTEnable/QTDisable) ---- */

/*
 * QTDP header.  Returns 0 (new location stored; *out set), TP_UNCHANGED
 * (identical to the stored location: the following action packets are
 * compared, not appended; *out set), -EEXIST (same number and address,
 * different definition), -ERANGE (number 0 or > TP_MAX_NUMBER), -ENOSPC
 * (too many locations), -ENOMEM.  On error s->error says why.
 */
int tp_define(struct tp_store *s, const struct rsp_request *req,
	      struct tp_def **out);
/*
 * QTDP:- action packet (req->kind RSP_REQ_TDP_ACTIONS).  Returns 0 (stored),
 * TP_UNCHANGED (identical re-download), -ENOENT (no such location: gdb sent
 * actions without a header), -EEXIST (re-download differs), -E2BIG /
 * -ENOSPC (limits), -ENOMEM.  *out is set when found.
 * The definition is complete when the packet has no `-` (!req->u.*.more):
 * that is when the agent installs during a run (InstallInTrace).
 */
int tp_add_actions(struct tp_store *s, const struct rsp_request *req,
		   struct tp_def **out);
/* QTDPsrc piece: start 0 opens a new string; start == bytes so far of the
 * last string of that type continues it.  TP_UNCHANGED while the location
 * is being re-downloaded (sources are kept from the first download).
 * -ENOENT, -EINVAL (piece does not continue anything / overflows its
 * announced length), -E2BIG, -ENOSPC, -ENOMEM. */
int tp_add_source(struct tp_store *s, const struct rsp_request *req);
/* QTDV: defines or redefines a TSV (initial value, name; value reset to
 * initial).  Redefining TSV 1 keeps it builtin.  -ERANGE (number 0),
 * -E2BIG (name), -ENOSPC, -ENOMEM. */
int tsv_define(struct tp_store *s, uint32_t number, int64_t initial,
	       bool builtin, const char *name);
/* QTEnable/QTDisable: -ENOENT if no such location. */
int tp_set_enabled(struct tp_store *s, uint32_t number, uint64_t addr,
		   bool enabled);

/* ---- lookups ---- */

size_t tp_count(const struct tp_store *s);
struct tp_def *tp_at(const struct tp_store *s, size_t i);	/* sorted */
struct tp_def *tp_find(const struct tp_store *s, uint32_t number,
		       uint64_t addr);
struct tp_def *tp_find_number(const struct tp_store *s, uint32_t number);
struct tp_def *tp_find_addr(const struct tp_store *s, uint64_t addr);
/* qTP:n:addr: the exact location, else (gdb renumbered after a reconnect
 * upload) the first location at addr, else NULL. */
struct tp_def *tp_lookup_qtp(const struct tp_store *s, uint32_t number,
			     uint64_t addr);
/* Iterates the locations at addr: pass NULL first, then the previous. */
struct tp_def *tp_next_at(const struct tp_store *s, uint64_t addr,
			  const struct tp_def *prev);
/* The address a frame of tracepoint `number` is attributed to (its first
 * location), or 0: usable as tbuf's tracepoint-address callback. */
uint64_t tp_number_addr(const struct tp_store *s, uint32_t number);
/* True when the hit count has reached a non-zero pass count. */
bool tp_pass_reached(const struct tp_def *tp);

size_t tsv_count(const struct tp_store *s);
struct tsv_def *tsv_at(const struct tp_store *s, size_t i);	/* sorted */
struct tsv_def *tsv_find(const struct tp_store *s, uint32_t number);

/* ---- uploads and trace-file lines ---- */

/*
 * Upload cursor.  Each call of tp_upload_next() appends one record to `b`
 * (without any prefix) and returns 1, or returns 0 at the end (reply `l`).
 * Records, per location in store order: T (header), A (one per collect
 * action), S (one per while-stepping action), Z (one per source piece), and
 * with `with_v` (trace files) V<n>:<addr>:<hits>:<bytes used>.
 * No record exceeds `max_len` bytes: source strings are cut into several
 * Z pieces; a T record whose condition would not fit is sent without it and
 * an A/S record that cannot fit is skipped (gdb rebuilds both from the Z
 * sources), counted in `skipped`.
 */
struct tp_upload {
	/*
	 * Locations from the highest (number, address) down: gdb's trace-file
	 * reader prepends each location it reads, so a file written in this
	 * order gets local numbers equal to the target's (1..N written
	 * densely), which `tfind tracepoint N` on a tfile needs.  Set it
	 * after tp_upload_start(); tfile_write_header() does.
	 */
	bool descending;
	size_t tp;			/* location index */
	size_t item;			/* record within the location */
	size_t piece_off;		/* Z: next offset in the string */
	bool with_v;
	size_t max_len;
	size_t skipped;
};
void tp_upload_start(struct tp_upload *u, size_t max_len, bool with_v);
int tp_upload_next(const struct tp_store *s, struct tp_upload *u,
		   struct rsp_buf *b);

/* TSV records `<n>:<initial hex>:<builtin>:<hexname>` in number order,
 * same contract (names longer than max_len are cut: never in practice). */
struct tsv_upload {
	size_t i;
	size_t max_len;
	bool newest_first;
};
/* newest_first: highest number first, as gdbserver answers qTfV; gdb
 * announces what it uploads in the reverse order, so the oldest first. */
void tsv_upload_start(struct tsv_upload *u, size_t max_len, bool newest_first);
int tsv_upload_next(const struct tp_store *s, struct tsv_upload *u,
		    struct rsp_buf *b);

/* qTP reply: `V<hits>:<bytes used>`. */
void tp_put_status(const struct tp_def *tp, struct rsp_buf *b);

#endif
