/*
 * record-file.c - the trace file as it is written: header, frames, end
 * marker, and the status line kept up to date in the header.
 *
 * The file is a valid trace file at every moment: frames, then the end
 * marker, written in one pwrite at a time.
 *
 *   header (tfile.h) | frames ... | 0000 0000
 *                       ^ each batch overwrites the end marker and
 *                         writes a new one after itself
 *
 * The header's status line has fixed-width numbers and room reserved
 * for a stop reason, so it is rewritten in place with the frame count
 * as the recording goes (gdb reads the count there).  A failed write
 * puts the end marker back (or cuts the file at the last whole frame)
 * and ends the writing, not the program.  After the end marker comes the
 * thread table (record-threads.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "client/recorder.h"
#include "protocol/tfile.h"
#include "protocol/tp-status.h"

static int write_cb(void *ctx, const void *data, size_t len)
{
	struct recorder *r = ctx;
	const char *p = data;

	if (r->live && !r->header_written)
		rsp_buf_put(&r->live_head, data, len);
	while (len > 0) {
		ssize_t n = pwrite(r->fd, p, len, (off_t)r->end);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
		r->end += (uint64_t)n;
	}
	return 0;
}

static char *probe_notes(struct recorder *r)
{
	struct rsp_buf b;

	rsp_buf_init(&b);
	rsp_buf_puts(&b, "probe-trace:");
	for (size_t i = 0; i < r->nprobes; i++)
		rsp_buf_printf(&b, "%s%d=%s", i ? ";" : "", r->probes[i].tpnum,
			       r->probes[i].name);
	rsp_buf_putc(&b, '\0');
	return b.data;
}

static uint64_t now_us_realtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/*
 * Rewrites the header's status line in place with the frames so far (its
 * numbers have fixed widths, so its length never changes): gdb reads the
 * frame count there.  Best effort: the frames are valid without it.
 */
void update_status(struct recorder *r, bool final)
{
	struct rsp_buf b;

	if (!r->status_len || r->write_failed)
		return;
	/* Created: every hit of the run, lost or not, as gdb counts the
	 * frames a circular buffer discarded ("of N created total"). */
	r->st.frames = r->frames;
	r->st.created = r->frames + r->lost;
	r->st.lost = r->lost;
	for (size_t i = 0; i < r->nprobes; i++) {
		r->lost_tp[i] = (uint32_t)r->probes[i].tpnum;
		r->lost_count[i] = r->probes[i].lost;
	}
	r->st.nlost = r->nprobes;
	r->st.lost_tp = r->lost_tp;
	r->st.lost_count = r->lost_count;
	if (final)
		r->st.stop_time = now_us_realtime();
	if (r->self_stopped) {
		r->st.reason = r->why.reason;
		r->st.stopping_tp = r->why.stopping_tp;
		r->st.error = r->why.error;
	}
	r->st.pad_to = r->status_len;
	rsp_buf_init(&b);
	tp_status_put_tfile(&r->st, &b);
	if (b.len == r->status_len)
		(void)!pwrite(r->fd, b.data, b.len, (off_t)r->status_off);
	rsp_buf_free(&b);
}

int open_output(struct recorder *r)
{
	struct tfile_writer w;
	int e;

	r->fd = open(r->out_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (r->fd < 0) {
		err_msg("cannot create %s: %s", r->out_path, strerror(errno));
		return -errno;
	}
	struct stat sb;
	r->out_regular = fstat(r->fd, &sb) == 0 && S_ISREG(sb.st_mode);
	r->notes = probe_notes(r);
	r->st.running = false;
	r->st.reason = TP_STOP_COMMAND;
	r->st.size = r->st.free_bytes = r->buffer_size;
	r->st.start_time = now_us_realtime();
	r->st.notes = r->notes;
	r->st.fixed_width = true;
	for (size_t i = 0; i < r->nprobes; i++)
		r->lost_tp[i] = (uint32_t)r->probes[i].tpnum;
	r->st.nlost = r->nprobes;
	r->st.lost_tp = r->lost_tp;
	r->st.lost_count = r->lost_count;
	{
		/* Room in the status line for a stop reason written later. */
		struct rsp_buf line;
		rsp_buf_init(&line);
		tp_status_put_tfile(&r->st, &line);
		r->st.pad_to = line.len + STATUS_RESERVE;
		rsp_buf_free(&line);
	}
	r->end = 0;
	tfile_writer_init(&w, write_cb, r);
	e = tfile_write_header(&w, r->regs.block_size, r->target_xml, &r->st,
			       &r->store);
	if (e == 0)
		e = tfile_write_end(&w);
	if (e < 0) {
		err_msg("writing %s: %s", r->out_path, strerror(-e));
		return e;
	}
	r->end -= 4;	/* the next frames overwrite the end marker */
	r->header_written = true;
	if (r->live && (e = live_open(r)) < 0)
		return e;

	/* Where the status line is, to update it later. */
	char *head = malloc(r->end);
	if (head && pread(r->fd, head, r->end, 0) == (ssize_t)r->end) {
		char *p = memmem(head, r->end, "\nstatus ", 8);
		if (p) {
			char *nl = memchr(p + 8, '\n', (size_t)(head + r->end - p - 8));
			if (nl) {
				r->status_off = (uint64_t)(p + 8 - head);
				r->status_len = (size_t)(nl - p - 8);
			}
		}
	}
	free(head);
	return 0;
}

/* Appends whole frames and a new end marker in one write (the frames
 * from where they are, the marker from a second iovec); on failure
 * puts the previous end marker back, so the file stays valid. */
int append_frames(struct recorder *r, const uint8_t *data, size_t len)
{
	static const uint8_t zero[4];
	uint64_t at = r->end;
	ssize_t n;

	if (r->write_failed || len == 0)
		return r->write_failed ? -EIO : 0;
	/* A short write is retried for the rest, to learn the error. */
	size_t done = 0;
	int err = 0;
	while (done < len + 4) {
		struct iovec iov[2];
		int cnt = 0;
		if (done < len) {
			iov[cnt++] = (struct iovec){ (void *)(data + done), len - done };
			iov[cnt++] = (struct iovec){ (void *)zero, 4 };
		} else {
			iov[cnt++] = (struct iovec){ (void *)(zero + (done - len)),
						     len + 4 - done };
		}
		n = pwritev(r->fd, iov, cnt, (off_t)(at + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : ENOSPC;
			break;
		}
		done += (size_t)n;
	}
	if (!err) {
		r->end += len;
		r->bytes += len;
		return 0;
	}
	if (ftruncate(r->fd, (off_t)at) < 0 ||
	    pwrite(r->fd, zero, 4, (off_t)at) != 4) {
		/* Not even the marker fits: cut the file at the last whole
		 * frame; gdb then reads to the end of the file. */
		if (ftruncate(r->fd, (off_t)at) < 0)
			err_msg("%s: cannot restore the end marker: %s",
				r->out_path, strerror(errno));
	}
	err_msg("writing %s: %s; the file keeps the %llu frames before it",
		r->out_path, strerror(err), (unsigned long long)r->frames);
	r->write_failed = true;
	return -err;
}
