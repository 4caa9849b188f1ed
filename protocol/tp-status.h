/*
 * tp-status.h - the trace run status: qTStatus replies and tfile lines.
 *
 * gdb polls qTStatus before every resume and after most commands, and a
 * trace file carries the same facts in its `status` line; both are parsed
 * by gdb's parse_trace_status(), which skips fields it does not know.
 * gdbserver 13's qTStatus (observed, rsp-transcript-trace.txt):
 *
 *   T0;tstop::0;tframes:12;tcreated:12;tfree:..;tsize:..;circular:1;
 *   disconn:1;starttime:..;stoptime:..;username:<hex>;notes:<hex>:
 *
 * (every field always present, a `:` after the notes), while gdb's tfile
 * writer puts disconn before circular, notes before username, leaves out
 * zero/unknown fields and has no trailing `:`.  Both are produced here so
 * that our files match gdb's byte for byte.
 *
 * Stop reasons: tnotrun:0, tstop:<hex notes>:0, tfull:0, tdisconnected:0,
 * tpasscount:<tp>, terror:<hex message>:<tp>, tunknown:0.  While a run is
 * going gdbserver reports T1 with the reason of the previous state
 * (tnotrun:0 on the first run); we do the same.
 */
#ifndef PROBE_TP_STATUS_H
#define PROBE_TP_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rsp_buf;

enum tp_stop_reason {
	TP_STOP_UNKNOWN,		/* tunknown */
	TP_STOP_NOT_RUN,		/* tnotrun: never run */
	TP_STOP_COMMAND,		/* tstop: QTStop (notes: tstop_notes) */
	TP_STOP_FULL,			/* tfull: linear buffer full */
	TP_STOP_DISCONNECTED,		/* tdisconnected */
	TP_STOP_PASSCOUNT,		/* tpasscount:<stopping_tp> */
	TP_STOP_ERROR,			/* terror:<hex error>:<stopping_tp> */
};

struct tp_status {
	bool running;
	enum tp_stop_reason reason;
	uint32_t stopping_tp;		/* passcount / error */
	const char *stop_notes;		/* tstop: NULL = none */
	const char *error;		/* terror message */
	uint64_t frames, created;
	uint64_t free_bytes, size;
	bool circular, disconnected;
	uint64_t start_time, stop_time;	/* microseconds, 0 = unknown */
	const char *user;		/* NULL = unset */
	const char *notes;		/* NULL = unset */
	/* Frames lost for want of room (probe-trace's tfile field, which gdb
	 * skips): `lost:<total>[,<tp>=<count>...]`, in hex.  Written when
	 * `lost` is not zero or with fixed_width (then every entry of the
	 * table, so that the line keeps its length); read back as the total
	 * here, the table through tp_status_lost(). */
	uint64_t lost;
	size_t nlost;
	const uint32_t *lost_tp;	/* tracepoint numbers... */
	const uint64_t *lost_count;	/* ...and their lost frames */
	/* tfile: counts and times as 16 hex digits (stoptime always), so
	 * a recorder can rewrite the line in place as its file grows. */
	bool fixed_width;
	/* tfile: the line padded to this many bytes with an unknown field
	 * (`;pad:000...`, which gdb skips), so that it can be rewritten in
	 * place with another stop reason; a terror message is shortened to
	 * fit.  0: no padding. */
	size_t pad_to;
};

/* qTStatus reply, gdbserver's form. */
void tp_status_put_reply(const struct tp_status *st, struct rsp_buf *b);
/* The text after "status " of a tfile line (no newline), gdb's form. */
void tp_status_put_tfile(const struct tp_status *st, struct rsp_buf *b);
/* Run state, stop reason, counts and sizes of a qTStatus reply; `error`
 * receives a terror message.  0 or -EINVAL. */
int tp_status_parse(const char *reply, struct tp_status *st, char *error,
		    size_t error_size);
/* The per-tracepoint counts of the `lost:` field in `text` (a status
 * line or a qTStatus reply): calls `each` for every entry.  Returns the
 * number of entries, or -EINVAL for a malformed field. */
int tp_status_lost(const char *text,
		   void (*each)(uint32_t tp, uint64_t count, void *arg), void *arg);
/* "tstop", "tfull"... */
const char *tp_stop_reason_name(enum tp_stop_reason r);

#endif
