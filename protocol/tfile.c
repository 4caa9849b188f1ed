/*
 * tfile.c - the trace-file writer: gdb's `tsave` without gdb.
 *
 * gdb's tsave asks the stub for the status, the TSVs, the tracepoints and
 * the raw buffer and writes them in the order of tfile.h; this file does the
 * same from the store and the buffer, so a file we write and a file gdb
 * writes from our agent are the same bytes (except for what gdb itself
 * adds from its own state, such as the renumbered tracepoints).
 *
 * Every definition line goes through one rsp_buf and is checked against
 * TFILE_MAX_LINE before it is written: gdb 13 refuses the whole file on
 * one longer line.  Errors are sticky: after a failed write every later
 * call returns the same error, so a caller may check only at the end.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "protocol/rsp.h"
#include "protocol/tbuf.h"
#include "protocol/tfile.h"
#include "protocol/tp-status.h"
#include "protocol/tracepoint.h"

void tfile_writer_init(struct tfile_writer *w,
		       int (*write)(void *ctx, const void *data, size_t len),
		       void *ctx)
{
	memset(w, 0, sizeof(*w));
	w->write = write;
	w->ctx = ctx;
}

static int tfile_put(struct tfile_writer *w, const void *data, size_t len)
{
	int ret;

	if (w->error)
		return w->error;
	if (len == 0)
		return 0;
	ret = w->write(w->ctx, data, len);
	if (ret < 0) {
		w->error = ret;
		return ret;
	}
	w->bytes += len;
	return 0;
}

/* Writes b as one line (a '\n' is added) if it is short enough. */
static int tfile_put_line(struct tfile_writer *w, struct rsp_buf *b)
{
	if (b->len > TFILE_MAX_LINE) {
		if (!w->error)
			w->error = -E2BIG;
		return w->error;
	}
	rsp_buf_putc(b, '\n');
	return tfile_put(w, b->data, b->len);
}

/* One "tdesc " line per line of target.xml (no trailing empty line). */
static int tfile_put_tdesc(struct tfile_writer *w, const char *xml,
			   struct rsp_buf *b)
{
	while (*xml) {
		const char *nl = strchr(xml, '\n');
		size_t n = nl ? (size_t)(nl - xml) : strlen(xml);

		rsp_buf_reset(b);
		rsp_buf_puts(b, "tdesc ");
		rsp_buf_put(b, xml, n);
		if (tfile_put_line(w, b) != 0)
			return w->error;
		xml += n + (nl ? 1 : 0);
	}
	return 0;
}

int tfile_write_header(struct tfile_writer *w, size_t regblock_size,
		       const char *target_xml, const struct tp_status *st,
		       const struct tp_store *store)
{
	struct rsp_buf b;
	struct tsv_upload tu;
	struct tp_upload pu;

	rsp_buf_init(&b);
	tfile_put(w, TFILE_MAGIC, TFILE_MAGIC_LEN);
	rsp_buf_printf(&b, "R %zx", regblock_size);
	tfile_put_line(w, &b);
	if (target_xml)
		tfile_put_tdesc(w, target_xml, &b);
	rsp_buf_reset(&b);
	rsp_buf_puts(&b, "status ");
	tp_status_put_tfile(st, &b);
	tfile_put_line(w, &b);

	/* "tsv " / "tp " prefixes: 4 and 3 bytes of the line budget. */
	tsv_upload_start(&tu, TFILE_MAX_LINE - 4, false);
	for (;;) {
		rsp_buf_reset(&b);
		rsp_buf_puts(&b, "tsv ");
		if (tsv_upload_next(store, &tu, &b) == 0)
			break;
		tfile_put_line(w, &b);
	}
	tp_upload_start(&pu, TFILE_MAX_LINE - 3, true);
	pu.descending = true;
	for (;;) {
		rsp_buf_reset(&b);
		rsp_buf_puts(&b, "tp ");
		if (tp_upload_next(store, &pu, &b) == 0)
			break;
		tfile_put_line(w, &b);
	}
	w->skipped += pu.skipped;
	tfile_put(w, "\n", 1);
	rsp_buf_free(&b);
	return w->error;
}

static int tfile_put_cb(void *ctx, const void *data, size_t len)
{
	return tfile_put(ctx, data, len);
}

int tfile_write_frames(struct tfile_writer *w, const struct tbuf *tb)
{
	if (w->error)
		return w->error;
	return tbuf_raw_foreach(tb, tfile_put_cb, w);
}

int tfile_write_frame(struct tfile_writer *w, const void *raw, size_t len)
{
	return tfile_put(w, raw, len);
}

int tfile_write_end(struct tfile_writer *w)
{
	static const uint8_t zero[4];

	return tfile_put(w, zero, sizeof(zero));
}

int tfile_write(struct tfile_writer *w, size_t regblock_size,
		const char *target_xml, const struct tp_status *st,
		const struct tp_store *store, const struct tbuf *tb)
{
	tfile_write_header(w, regblock_size, target_xml, st, store);
	tfile_write_frames(w, tb);
	return tfile_write_end(w);
}
