/*
 * rsp-reply.c - every reply's bytes, from typed values (rsp-reply.h).
 *
 * The forms are gdbserver 13's, checked against the transcripts in the
 * research notes: field order in stop replies (reason, expedited
 * registers, thread, core), lower-case hex without leading zeros but for
 * the two-digit signal and exit codes.
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "protocol/rsp-reply.h"
#include "protocol/rsp-request.h"

/* --- general ------------------------------------------------------------- */

void rsp_reply_ok(struct rsp_buf *b)
{
	rsp_buf_puts(b, "OK");
}

void rsp_reply_error_code(struct rsp_buf *b, enum rsp_error_code code)
{
	rsp_buf_printf(b, "E%02x", (unsigned)code & 0xff);
}

void rsp_reply_error(struct rsp_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rsp_buf_put_verror(b, fmt, ap);
	va_end(ap);
}

void rsp_reply_failure(struct rsp_buf *b, const struct rsp_error *e,
		       bool text_accepted)
{
	if (text_accepted && e->text)
		rsp_buf_put_error(b, "%s", e->text);
	else
		rsp_reply_error_code(b, e->code);
}

void rsp_reply_errno(struct rsp_buf *b, const char *what, int err)
{
	rsp_buf_put_error(b, "%s: %s", what, strerror(err < 0 ? -err : err));
}

void rsp_reply_hex(struct rsp_buf *b, const void *data, size_t len)
{
	rsp_buf_put_hex(b, data, len);
}

void rsp_reply_unavailable(struct rsp_buf *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		rsp_buf_puts(b, "xx");
}

void rsp_reply_number(struct rsp_buf *b, uint64_t value)
{
	rsp_buf_printf(b, "%" PRIx64, value);
}

void rsp_reply_bool(struct rsp_buf *b, bool value)
{
	rsp_buf_putc(b, value ? '1' : '0');
}

void rsp_reply_console(struct rsp_buf *b, const char *text)
{
	rsp_buf_putc(b, 'O');
	rsp_buf_put_hex(b, text, strlen(text));
}

/* --- stop replies ------------------------------------------------------- */

static const char *const reason_names[] = {
	[RSP_REASON_SWBREAK] = "swbreak",
	[RSP_REASON_HWBREAK] = "hwbreak",
	[RSP_REASON_WATCH] = "watch",
	[RSP_REASON_RWATCH] = "rwatch",
	[RSP_REASON_AWATCH] = "awatch",
	[RSP_REASON_SYSCALL_ENTRY] = "syscall_entry",
	[RSP_REASON_SYSCALL_RETURN] = "syscall_return",
	[RSP_REASON_FORK] = "fork",
	[RSP_REASON_VFORK] = "vfork",
	[RSP_REASON_VFORK_DONE] = "vforkdone",
	[RSP_REASON_EXEC] = "exec",
	[RSP_REASON_CREATE] = "create",
	[RSP_REASON_LIBRARY] = "library",
};

/* `name:value;` for the reason, nothing for RSP_REASON_NONE. */
static void put_reason(struct rsp_buf *b, const struct rsp_stop *s)
{
	if (s->reason == RSP_REASON_NONE ||
	    s->reason >= sizeof(reason_names) / sizeof(reason_names[0]))
		return;
	rsp_buf_puts(b, reason_names[s->reason]);
	rsp_buf_putc(b, ':');
	switch (s->reason) {
	case RSP_REASON_WATCH:
	case RSP_REASON_RWATCH:
	case RSP_REASON_AWATCH:
	case RSP_REASON_SYSCALL_ENTRY:
	case RSP_REASON_SYSCALL_RETURN:
		rsp_buf_printf(b, "%" PRIx64, s->value);
		break;
	case RSP_REASON_FORK:
	case RSP_REASON_VFORK:
		rsp_buf_put_ptid(b, s->multiprocess, s->child_pid, s->child_pid);
		break;
	case RSP_REASON_EXEC:
		if (s->exec_path)
			rsp_buf_put_hex(b, s->exec_path, strlen(s->exec_path));
		break;
	default:
		break;
	}
	rsp_buf_putc(b, ';');
}

void rsp_reply_stop(struct rsp_buf *b, const struct rsp_stop *s)
{
	switch (s->kind) {
	case RSP_STOP_EXITED:
		rsp_buf_printf(b, "W%02x", s->exit_code & 0xff);
		if (s->multiprocess)
			rsp_buf_printf(b, ";process:%" PRIx64, (uint64_t)s->pid);
		return;
	case RSP_STOP_SIGNALLED:
		rsp_buf_printf(b, "X%02x", s->signal & 0xff);
		if (s->multiprocess)
			rsp_buf_printf(b, ";process:%" PRIx64, (uint64_t)s->pid);
		return;
	case RSP_STOP_THREAD_EXITED:
		rsp_buf_printf(b, "w%02x;", s->exit_code & 0xff);
		rsp_buf_put_ptid(b, s->multiprocess, s->pid, s->tid);
		return;
	case RSP_STOP_NO_RESUMED:
		if (s->no_resumed_supported)
			rsp_buf_putc(b, 'N');
		else
			rsp_buf_put_error(b, "No unwaited-for children left.");
		return;
	case RSP_STOP_SIGNAL:
		break;
	}
	if (s->bare) {
		rsp_buf_printf(b, "S%02x", s->signal & 0xff);
		return;
	}
	rsp_buf_printf(b, "T%02x", s->signal & 0xff);
	put_reason(b, s);
	for (size_t i = 0; i < s->nregs; i++) {
		rsp_buf_printf(b, "%02x:", s->regs[i].regnum);
		rsp_buf_put_hex(b, s->regs[i].value, s->regs[i].len);
		rsp_buf_putc(b, ';');
	}
	if (!s->no_thread) {
		rsp_buf_puts(b, "thread:");
		rsp_buf_put_ptid(b, s->multiprocess, s->pid, s->tid);
		rsp_buf_putc(b, ';');
	}
	rsp_buf_printf(b, "core:%x;", s->core);
}

void rsp_notify_stop(struct rsp_buf *b, const struct rsp_stop *s)
{
	rsp_buf_puts(b, "Stop:");
	rsp_reply_stop(b, s);
}

/* --- handshake and threads --------------------------------------------- */

/* Always offered: what this agent does whatever gdb says. */
static const char fixed_features[] =
	";QPassSignals+;QProgramSignals+;QStartupWithShell+"
	";QEnvironmentHexEncoded+;QEnvironmentReset+"
	";QEnvironmentUnset+;QSetWorkingDir+;QCatchSyscalls+"
	";qXfer:libraries-svr4:read+;qXfer:auxv:read+"
	";qXfer:siginfo:read+;qXfer:siginfo:write+"
	";qXfer:features:read+;qXfer:exec-file:read+"
	";qXfer:osdata:read+"
	";QStartNoAckMode+;QDisableRandomization+"
	";QThreadEvents+;vContSupported+;QAgent+;QNonStop+"
	";no-resumed+"
	";ConditionalTracepoints+;TraceStateVariables+"
	";ConditionalBreakpoints+"
	";TracepointSource+;DisconnectedTracing+;InstallInTrace+"
	";EnableDisableTracepoints+;QTBuffer:size+;tracenz+"
	";qXfer:traceframe-info:read+";

void rsp_reply_supported(struct rsp_buf *b, const struct rsp_features *f)
{
	static const struct {
		size_t offset;
		const char *name;
	} optional[] = {
#define FEATURE(field, text) { offsetof(struct rsp_features, field), text }
		FEATURE(fast_tracepoints, ";FastTracepoints+"),
		FEATURE(threads, ";qXfer:threads:read+"),
		FEATURE(multiprocess, ";multiprocess+"),
		FEATURE(swbreak, ";swbreak+"),
		FEATURE(hwbreak, ";hwbreak+"),
		FEATURE(fork_events, ";fork-events+"),
		FEATURE(vfork_events, ";vfork-events+"),
		FEATURE(exec_events, ";exec-events+"),
#undef FEATURE
	};

	rsp_buf_printf(b, "PacketSize=%zx", f->packet_size);
	rsp_buf_puts(b, fixed_features);
	for (size_t i = 0; i < sizeof(optional) / sizeof(optional[0]); i++)
		if (*(const bool *)((const char *)f + optional[i].offset))
			rsp_buf_puts(b, optional[i].name);
}

void rsp_reply_current_thread(struct rsp_buf *b, bool multiprocess,
			      int64_t pid, int64_t tid)
{
	rsp_buf_puts(b, "QC");
	rsp_buf_put_ptid(b, multiprocess, pid, tid);
}

bool rsp_thread_list_add(struct rsp_buf *b, struct rsp_thread_list *l,
			 int64_t pid, int64_t tid)
{
	rsp_buf_putc(b, l->count++ ? ',' : 'm');
	rsp_buf_put_ptid(b, l->multiprocess, pid, tid);
	/* Half the payload: room for gdb's qsThreadInfo to go on. */
	return b->len <= RSP_MAX_PAYLOAD / 2;
}

void rsp_thread_list_end(struct rsp_buf *b, const struct rsp_thread_list *l)
{
	if (!l->count)
		rsp_buf_putc(b, 'l');
}

void rsp_reply_vcont_actions(struct rsp_buf *b)
{
	rsp_buf_puts(b, "vCont;c;C;s;S;t;r");
}

void rsp_reply_search(struct rsp_buf *b, bool found, uint64_t addr)
{
	if (found)
		rsp_buf_printf(b, "1,%" PRIx64, addr);
	else
		rsp_buf_putc(b, '0');
}

void rsp_reply_crc(struct rsp_buf *b, uint32_t crc)
{
	rsp_buf_printf(b, "C%" PRIx32, crc);
}

void rsp_reply_mem_region(struct rsp_buf *b, const struct rsp_mem_region *r)
{
	rsp_buf_printf(b, "start:%" PRIx64 ";size:%" PRIx64 ";", r->start, r->size);
	if (r->has_perms)
		rsp_buf_printf(b, "permissions:%s%s%s;", r->read ? "r" : "",
			       r->write ? "w" : "", r->exec ? "x" : "");
	if (r->name && r->name[0]) {
		rsp_buf_puts(b, "name:");
		rsp_buf_put_hex(b, r->name, strlen(r->name));
		rsp_buf_putc(b, ';');
	}
}

/* --- qXfer and vFile ---------------------------------------------------- */

void rsp_reply_xfer_chunk(struct rsp_buf *b, const void *data, size_t size,
			  uint64_t offset, uint64_t length)
{
	/* Leave room for escapes: at worst every byte doubles. */
	const uint64_t max = (RSP_MAX_PAYLOAD - 16) / 2;

	if (offset > size) {
		rsp_buf_put_error(b, "offset 0x%" PRIx64 " beyond the object's %zu bytes",
				  offset, size);
		return;
	}
	if (length > max)
		length = max;
	uint64_t n = size - offset < length ? size - offset : length;
	rsp_buf_putc(b, offset + n < size ? 'm' : 'l');
	rsp_buf_put_escaped(b, (const uint8_t *)data + offset, n);
}

void rsp_reply_vfile(struct rsp_buf *b, const struct rsp_vfile_result *r)
{
	if (r->result < 0) {
		rsp_buf_printf(b, "F-1,%x", (unsigned)r->fileio_errno);
		return;
	}
	rsp_buf_printf(b, "F%" PRIx64, (uint64_t)r->result);
	if (r->data) {
		rsp_buf_putc(b, ';');
		rsp_buf_put_escaped(b, r->data, r->len);
	}
}

/* --- tracepoints ------------------------------------------------------- */

void rsp_reply_tframe(struct rsp_buf *b, bool found, uint64_t frame,
		      uint32_t tpnum)
{
	if (found)
		rsp_buf_printf(b, "F%" PRIx64 "T%" PRIx32, frame, tpnum);
	else
		rsp_buf_puts(b, "F-1");
}

void rsp_reply_tsv_value(struct rsp_buf *b, bool known, int64_t value)
{
	if (known)
		rsp_buf_printf(b, "V%" PRIx64, (uint64_t)value);
	else
		rsp_buf_putc(b, 'U');
}

void rsp_reply_list_end(struct rsp_buf *b)
{
	rsp_buf_putc(b, 'l');
}

void rsp_reply_lost(struct rsp_buf *b, const struct rsp_lost *l)
{
	rsp_buf_printf(b, "L%" PRIx64, l->total);
	for (size_t i = 0; i < l->n; i++)
		rsp_buf_printf(b, ";%" PRIx32 ":%" PRIx64, l->tp[i], l->count[i]);
}

void rsp_reply_probe_stats(struct rsp_buf *b, const struct rsp_probe_stats *s)
{
	rsp_buf_putc(b, 'P');
	for (size_t i = 0; i < s->n; i++) {
		const struct rsp_probe_stat *e = &s->site[i];
		rsp_buf_printf(b, ";%" PRIx64 ":%s:%" PRIx64 ":%" PRIx64 ":%" PRIx64
			       ":%" PRIx64, e->addr, e->how, e->stopped, e->recorded,
			       e->ring_full, e->waited);
	}
	if (s->returns)
		rsp_buf_printf(b, ";R%d:%" PRIx64 ":%" PRIx64 ":%" PRIx64,
			       s->ret_in_process ? 1 : 0, s->ret_recorded,
			       s->ret_stopped, s->ret_ring_full);
}

void rsp_reply_salvage(struct rsp_buf *b, uint64_t frames, uint64_t left_out)
{
	rsp_buf_printf(b, "S%" PRIx64 ";%" PRIx64, frames, left_out);
}

void rsp_reply_fwrite(struct rsp_buf *b, uint64_t frames, uint64_t bytes)
{
	rsp_buf_printf(b, "W%" PRIx64 ";%" PRIx64, frames, bytes);
}

void rsp_reply_frames_begin(struct rsp_buf *b)
{
	rsp_buf_putc(b, 'F');
}

void rsp_reply_frames_add(struct rsp_buf *b, const void *data, size_t len)
{
	rsp_buf_put_escaped(b, data, len);
}

void rsp_libevent_put(struct rsp_buf *b, const struct rsp_libevent *e)
{
	const char *text = e->text ? e->text : "";

	rsp_buf_printf(b, ";%c%" PRIx32 ",%" PRIx64, (char)e->kind, e->tp, e->key);
	switch (e->kind) {
	case RSP_LIBEV_PLACED:
		rsp_buf_printf(b, ",%" PRIx64 ",%" PRIx32 ",", e->addr, e->load);
		rsp_buf_put_hex(b, text, strlen(text));
		break;
	case RSP_LIBEV_REMOVED:
	case RSP_LIBEV_STILL:
		rsp_buf_printf(b, ",%" PRIx64 ",%" PRIx32 ",%" PRIx64, e->addr, e->load,
			       e->frames);
		break;
	case RSP_LIBEV_FAILED:
		rsp_buf_putc(b, ',');
		rsp_buf_put_hex(b, text, strlen(text));
		break;
	}
}

void rsp_reply_libevents(struct rsp_buf *b, const char *queued, size_t len,
			 bool lost)
{
	rsp_buf_putc(b, 'P');
	rsp_buf_put(b, queued, len);
	if (lost)
		rsp_buf_puts(b, ";o");
}

/* --- qXfer documents ----------------------------------------------------- */

static void xml_escape(struct rsp_buf *b, const char *s, bool quotes)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': rsp_buf_puts(b, "&lt;"); break;
		case '>': rsp_buf_puts(b, "&gt;"); break;
		case '&': rsp_buf_puts(b, "&amp;"); break;
		case '"':
			rsp_buf_puts(b, quotes ? "&quot;" : "\"");
			break;
		case '\'':
			rsp_buf_puts(b, quotes ? "&apos;" : "'");
			break;
		default: rsp_buf_putc(b, *s); break;
		}
	}
}

void rsp_xml_escape(struct rsp_buf *b, const char *s)
{
	xml_escape(b, s, true);
}

void rsp_xml_threads_begin(struct rsp_buf *b)
{
	rsp_buf_puts(b, "<threads>\n");
}

void rsp_xml_thread(struct rsp_buf *b, bool multiprocess,
		    const struct rsp_thread_info *t)
{
	rsp_buf_puts(b, "<thread id=\"");
	rsp_buf_put_ptid(b, multiprocess, t->pid, t->tid);
	rsp_buf_printf(b, "\" core=\"%u\"", t->core);
	if (t->name) {
		rsp_buf_puts(b, " name=\"");
		rsp_xml_escape(b, t->name);
		rsp_buf_putc(b, '"');
	}
	rsp_buf_puts(b, "/>\n");
}

void rsp_xml_threads_end(struct rsp_buf *b)
{
	rsp_buf_puts(b, "</threads>\n");
}

void rsp_xml_svr4_begin(struct rsp_buf *b, uint64_t main_lm)
{
	if (!main_lm) {
		rsp_buf_puts(b, "<library-list-svr4 version=\"1.0\"/>");
		return;
	}
	rsp_buf_printf(b, "<library-list-svr4 version=\"1.0\" main-lm=\"0x%" PRIx64 "\">",
		       main_lm);
}

void rsp_xml_svr4_library(struct rsp_buf *b, const struct rsp_svr4_library *l)
{
	rsp_buf_puts(b, "<library name=\"");
	rsp_xml_escape(b, l->name);
	rsp_buf_printf(b, "\" lm=\"0x%" PRIx64 "\" l_addr=\"0x%" PRIx64
		       "\" l_ld=\"0x%" PRIx64 "\" lmid=\"0x0\"/>",
		       l->lm, l->l_addr, l->l_ld);
}

void rsp_xml_svr4_end(struct rsp_buf *b, uint64_t main_lm)
{
	if (main_lm)
		rsp_buf_puts(b, "</library-list-svr4>");
}

void rsp_xml_osdata_begin(struct rsp_buf *b, const char *type)
{
	rsp_buf_puts(b, "<?xml version=\"1.0\"?>\n"
			"<!DOCTYPE target SYSTEM \"osdata.dtd\">\n");
	rsp_buf_printf(b, "<osdata type=\"%s\">\n", type);
}

void rsp_xml_osdata_item_begin(struct rsp_buf *b)
{
	rsp_buf_puts(b, "<item>");
}

void rsp_xml_osdata_column(struct rsp_buf *b, const char *name,
			   const char *value)
{
	rsp_buf_printf(b, "<column name=\"%s\">", name);
	xml_escape(b, value, false);
	rsp_buf_puts(b, "</column>");
}

void rsp_xml_osdata_item_end(struct rsp_buf *b)
{
	rsp_buf_puts(b, "</item>\n");
}

void rsp_xml_osdata_end(struct rsp_buf *b)
{
	rsp_buf_puts(b, "</osdata>\n");
}
