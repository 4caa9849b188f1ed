/*
 * tfile.h - writing gdb trace files (`target tfile FILE` reads them).
 *
 * Layout (gdb 13 tracefile-tfile.c; shared/research/tfile-format.md):
 *
 *   "\x7fTRACE0\n"
 *   "R <hex register block size>\n"
 *   "tdesc <line>\n" ...          every line of target.xml
 *   "status <status>\n"           see tp-status.h
 *   "tsv <n>:<initial>:<builtin>:<hexname>\n" ...
 *   "tp T.../A.../S.../Z.../V...\n" ...
 *   "\n"
 *   frames, oldest first, exactly the trace buffer's bytes (tbuf.h)
 *   4 zero bytes (gdb stops at a 2-byte tpnum 0)
 *
 * gdb reads each definition line into a 1000-byte buffer, so every line
 * here is shorter than TFILE_MAX_LINE: tdesc lines longer than that are an
 * error (-E2BIG), tp records are cut as tp_upload_next() describes.
 *
 * Nothing here does I/O: bytes go to a write callback.  A file can be
 * written in one go (tfile_write) or incrementally by a recorder: header,
 * then frames as they are committed, then the end marker.  The header's
 * status line is then the status at the time it was written; gdb recounts
 * the frames when it reads the file.
 */
#ifndef PROBE_TFILE_H
#define PROBE_TFILE_H

#include <stddef.h>
#include <stdint.h>

struct tp_store;
struct tp_status;
struct tbuf;

#define TFILE_MAGIC "\x7fTRACE0\n"
#define TFILE_MAGIC_LEN 8
#define TFILE_MAX_LINE 999		/* bytes before the '\n' */

struct tfile_writer {
	/* Writes all `len` bytes or returns -errno. */
	int (*write)(void *ctx, const void *data, size_t len);
	void *ctx;
	int error;			/* first error, sticky */
	uint64_t bytes;			/* written so far */
	size_t skipped;			/* tp records cut to fit a line */
};

void tfile_writer_init(struct tfile_writer *w,
		       int (*write)(void *ctx, const void *data, size_t len),
		       void *ctx);
/* Magic through the blank line.  target_xml may be NULL (no tdesc). */
int tfile_write_header(struct tfile_writer *w, size_t regblock_size,
		       const char *target_xml, const struct tp_status *st,
		       const struct tp_store *store);
/* Every committed frame of tb, oldest first. */
int tfile_write_frames(struct tfile_writer *w, const struct tbuf *tb);
/* One frame's raw bytes (struct tbuf_frame raw/raw_len). */
int tfile_write_frame(struct tfile_writer *w, const void *raw, size_t len);
int tfile_write_end(struct tfile_writer *w);
/* The whole file. */
int tfile_write(struct tfile_writer *w, size_t regblock_size,
		const char *target_xml, const struct tp_status *st,
		const struct tp_store *store, const struct tbuf *tb);

#endif
