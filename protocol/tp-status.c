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

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

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

static void tp_put_tfile(const struct tp_status *st, struct rsp_buf *b);

void tp_status_put_tfile(const struct tp_status *st, struct rsp_buf *b)
{
	size_t start = b->len;

	tp_put_tfile(st, b);
	if (!st->pad_to)
		return;
	size_t len = b->len - start;
	if (len + 5 > st->pad_to && st->reason == TP_STOP_ERROR && st->error) {
		/* Shorten the message (two hex digits a byte) to fit. */
		size_t over = len + 5 - st->pad_to;
		size_t keep = strlen(st->error);
		keep = keep > (over + 1) / 2 ? keep - (over + 1) / 2 : 0;
		char shorter[keep + 1];
		memcpy(shorter, st->error, keep);
		shorter[keep] = '\0';
		struct tp_status cut = *st;
		cut.error = shorter;
		b->len = start;
		tp_put_tfile(&cut, b);
		len = b->len - start;
	}
	if (len + 5 <= st->pad_to) {
		rsp_buf_puts(b, ";pad:");
		for (len += 5; len < st->pad_to; len++)
			rsp_buf_putc(b, '0');
	}
}

static void tp_put_tfile(const struct tp_status *st, struct rsp_buf *b)
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
	if (st->fixed_width) {
		rsp_buf_printf(b, ";lost:%016" PRIx64, st->lost);
		for (size_t i = 0; i < st->nlost; i++)
			rsp_buf_printf(b, ",%x=%016" PRIx64, st->lost_tp[i],
				       st->lost_count[i]);
	} else if (st->lost) {
		rsp_buf_printf(b, ";lost:%" PRIx64, st->lost);
		for (size_t i = 0; i < st->nlost; i++)
			if (st->lost_count[i])
				rsp_buf_printf(b, ",%x=%" PRIx64, st->lost_tp[i],
					       st->lost_count[i]);
	}
}

int tp_status_lost(const char *text,
		   void (*each)(uint32_t tp, uint64_t count, void *arg), void *arg)
{
	const char *p = strstr(text, ";lost:");
	int n = 0;
	char *end;

	if (!p)
		return 0;
	p += 6;
	strtoull(p, &end, 16);
	if (end == p)
		return -EINVAL;
	for (p = end; *p == ','; n++) {
		unsigned long tp = strtoul(p + 1, &end, 16);
		if (end == p + 1 || *end != '=')
			return -EINVAL;
		p = end + 1;
		uint64_t count = strtoull(p, &end, 16);
		if (end == p)
			return -EINVAL;
		p = end;
		if (each)
			each((uint32_t)tp, count, arg);
	}
	return *p == '\0' || *p == ';' ? n : -EINVAL;
}

/*
 * The run state and stop reason of a qTStatus reply, for a client that
 * must tell why a run ended.  `error` gets the decoded terror message
 * (st->error points at it).  Returns 0, or -EINVAL for a reply that is not
 * `T0;...`/`T1;...` with a known reason.
 */
int tp_status_parse(const char *reply, struct tp_status *st, char *error,
		    size_t error_size)
{
	size_t len, n;
	const char *p, *end;

	memset(st, 0, sizeof(*st));
	if (error_size)
		error[0] = '\0';
	if (reply[0] != 'T' || (reply[1] != '0' && reply[1] != '1') || reply[2] != ';')
		return -EINVAL;
	st->running = reply[1] == '1';
	p = reply + 3;
	len = strcspn(p, ":;");
	st->reason = TP_STOP_UNKNOWN;
	bool known = false;
	for (size_t i = 0; i < sizeof(tp_reason_names) / sizeof(tp_reason_names[0]); i++)
		if (strlen(tp_reason_names[i]) == len && strncmp(p, tp_reason_names[i], len) == 0) {
			st->reason = (enum tp_stop_reason)i;
			known = true;
		}
	if (!known || p[len] != ':')
		return -EINVAL;
	p += len + 1;
	if (st->reason == TP_STOP_COMMAND || st->reason == TP_STOP_ERROR) {
		end = strchr(p, ':');
		if (!end)
			return -EINVAL;
		n = (size_t)(end - p);
		if (st->reason == TP_STOP_ERROR && error_size) {
			ssize_t got = rsp_hex_decode(p, n, error, error_size - 1);
			if (got < 0)
				return -EINVAL;
			error[got] = '\0';
			st->error = error;
		}
		p = end + 1;
	}
	char *stop;
	unsigned long tp = strtoul(p, &stop, 16);
	if (stop == p || (*stop && *stop != ';'))
		return -EINVAL;
	st->stopping_tp = (uint32_t)tp;
	for (p = stop; *p == ';'; p = p + strcspn(p + 1, ";") + 1) {
		uint64_t v;
		if (sscanf(p, ";tframes:%" SCNx64, &v) == 1)
			st->frames = v;
		else if (sscanf(p, ";tcreated:%" SCNx64, &v) == 1)
			st->created = v;
		else if (sscanf(p, ";tfree:%" SCNx64, &v) == 1)
			st->free_bytes = v;
		else if (sscanf(p, ";tsize:%" SCNx64, &v) == 1)
			st->size = v;
		else if (sscanf(p, ";lost:%" SCNx64, &v) == 1)
			st->lost = v;
	}
	return 0;
}
