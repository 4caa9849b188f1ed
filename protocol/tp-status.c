/*
 * tp-status.c - qTStatus replies and trace-file status lines.
 *
 * One stop-reason writer serves both forms; the field lists differ as
 * tp-status.h explains (gdbserver: every field, fixed order, trailing `:`;
 * gdb's tfile writer: known fields only, disconn before circular, notes
 * before username).  gdb's parse_trace_status() reads `tstop:<hex>:<tp>`
 * and `terror:<hex>:<tp>`, every other reason as `<name>:<tp>`.
 */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "protocol/rsp.h"
#include "protocol/tp-status.h"

static const char *const tp_reason_names[] = {
	[TP_STOP_UNKNOWN] = "tunknown",
	[TP_STOP_NOT_RUN] = "tnotrun",
	[TP_STOP_COMMAND] = "tstop",
	[TP_STOP_FULL] = "tfull",
	[TP_STOP_DISCONNECTED] = "tdisconnected",
	[TP_STOP_PASSCOUNT] = "tpasscount",
	[TP_STOP_ERROR] = "terror",
};

const char *tp_stop_reason_name(enum tp_stop_reason r)
{
	if ((unsigned)r >= sizeof(tp_reason_names) / sizeof(tp_reason_names[0]))
		return "tunknown";
	return tp_reason_names[r];
}

static void tp_put_hex_str(struct rsp_buf *b, const char *s)
{
	if (s)
		rsp_buf_put_hex(b, s, strlen(s));
}

/* `<running>;<reason>[:<hex>]:<tp>` */
static void tp_put_reason(const struct tp_status *st, struct rsp_buf *b)
{
	uint32_t tp = 0;

	rsp_buf_printf(b, "%d;%s", st->running ? 1 : 0,
		       tp_stop_reason_name(st->reason));
	switch (st->reason) {
	case TP_STOP_COMMAND:
		rsp_buf_putc(b, ':');
		tp_put_hex_str(b, st->stop_notes);
		break;
	case TP_STOP_ERROR:
		rsp_buf_putc(b, ':');
		tp_put_hex_str(b, st->error);
		tp = st->stopping_tp;
		break;
	case TP_STOP_PASSCOUNT:
		tp = st->stopping_tp;
		break;
	default:
		break;
	}
	rsp_buf_printf(b, ":%x", tp);
}

void tp_status_put_reply(const struct tp_status *st, struct rsp_buf *b)
{
	rsp_buf_putc(b, 'T');
	tp_put_reason(st, b);
	rsp_buf_printf(b, ";tframes:%" PRIx64 ";tcreated:%" PRIx64
		       ";tfree:%" PRIx64 ";tsize:%" PRIx64
		       ";circular:%d;disconn:%d;starttime:%" PRIx64
		       ";stoptime:%" PRIx64 ";username:",
		       st->frames, st->created, st->free_bytes, st->size,
		       st->circular ? 1 : 0, st->disconnected ? 1 : 0,
		       st->start_time, st->stop_time);
	tp_put_hex_str(b, st->user);
	rsp_buf_puts(b, ";notes:");
	tp_put_hex_str(b, st->notes);
	rsp_buf_putc(b, ':');
}

void tp_status_put_tfile(const struct tp_status *st, struct rsp_buf *b)
{
	tp_put_reason(st, b);
	if (st->fixed_width)
		rsp_buf_printf(b, ";tframes:%016" PRIx64 ";tcreated:%016" PRIx64
			       ";tfree:%016" PRIx64 ";tsize:%016" PRIx64,
			       st->frames, st->created, st->free_bytes, st->size);
	else
		rsp_buf_printf(b, ";tframes:%" PRIx64 ";tcreated:%" PRIx64
			       ";tfree:%" PRIx64 ";tsize:%" PRIx64,
			       st->frames, st->created, st->free_bytes, st->size);
	if (st->disconnected)
		rsp_buf_puts(b, ";disconn:1");
	if (st->circular)
		rsp_buf_puts(b, ";circular:1");
	if (st->start_time)
		rsp_buf_printf(b, ";starttime:%" PRIx64, st->start_time);
	if (st->fixed_width)
		rsp_buf_printf(b, ";stoptime:%016" PRIx64, st->stop_time);
	else if (st->stop_time)
		rsp_buf_printf(b, ";stoptime:%" PRIx64, st->stop_time);
	if (st->notes) {
		rsp_buf_puts(b, ";notes:");
		tp_put_hex_str(b, st->notes);
	}
	if (st->user) {
		rsp_buf_puts(b, ";username:");
		tp_put_hex_str(b, st->user);
	}
}
