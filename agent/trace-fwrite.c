/*
 * trace-fwrite.c - the recorder's trace file written by the agent itself
 * (Qprobe.file, qprobe.fwrite): probe-trace's local fast path.
 *
 * When probe-trace and the agent run on one machine, the frames need not
 * cross the connection: the buffer already holds them in the trace
 * file's layout, so the agent appends them to the file probe-trace
 * created, from where probe-trace says, in one pwritev a batch (the
 * buffer's one or two pieces and a new end marker), and answers with how
 * many frames and bytes it wrote since its last answer: besides each
 * request, the drain of the pads' rings writes a batch whenever the
 * buffer holds 256 KiB, which keeps the bytes in the cache.  No escaping, no checksums, no socket
 * copies, no unescaping.  probe-trace keeps everything else of the file:
 * the header and its status line, the thread table after the end
 * marker, and the decision to use this path at all.
 *
 * The agent opens the path itself and checks that it is the very file
 * probe-trace has open (device and inode number): an agent on another
 * machine, in another mount namespace, or one that may not write the
 * file says no, and probe-trace streams the frames (qprobe.frames) as
 * before.  Invariant, as for probe-trace's own writes: the file is a
 * valid trace file at every moment.  Every batch ends with the end
 * marker; a write that fails keeps the whole frames that went in, puts
 * the marker after them (or, when not even that fits, cuts the file
 * where the batch began), leaves the other frames in the buffer, and
 * the next request says why and closes the file: probe-trace ends the
 * writing then, the program runs on.
 */
#define LOG_DOMAIN "tp"
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/log.h"
#include "agent/packets.h"
#include "agent/trace.h"
#include "protocol/tbuf.h"

/* Bytes one qprobe.fwrite writes at most before it answers: the batch
 * loop (write, take in the pads' records, write...) must not keep the
 * agent from its event loop for long. */
#define FWRITE_BUDGET (8u << 20)

/* The buffer is written out by the drains themselves once it holds this
 * much (trace_fwrite_flush_some): the bytes are then still in the cache
 * when pwritev copies them, and the frames after them are built in the
 * same warm lines.  Eight times as much in one write took five times the
 * CPU of the copy. */
#define FWRITE_FLUSH_AT (256u << 10)

/*
 * What the written frames hold, for the reply: how many of each
 * tracepoint's, and which threads the frames named ($probe_thread) for
 * the first time since Qprobe.file.  The recorder needs both (its counts
 * per probe, the threads it names while they run) and would otherwise
 * read every frame back from the file: memory it has never touched,
 * where the agent walks its own buffer right after building it.
 */
static struct {
	uint64_t *count;		/* by tracepoint number, not yet said */
	size_t count_cap;
	int64_t *seen;			/* open addressing, 0 = empty slot */
	size_t seen_cap, seen_n;
	bool seen_zero;			/* tid 0 (a frame outside a thread) */
	int64_t *fresh;			/* named for the first time, not yet said */
	size_t fresh_n, fresh_cap;
	int64_t last;			/* the last frame's thread */
	bool have_last;
} fw;

static void fw_reset(void)
{
	free(fw.count);
	free(fw.seen);
	free(fw.fresh);
	memset(&fw, 0, sizeof(fw));
}

static void fw_count(int16_t tp)
{
	if (tp <= 0)
		return;
	if ((size_t)tp >= fw.count_cap) {
		size_t cap = fw.count_cap ? fw.count_cap : 64;
		while (cap <= (size_t)tp)
			cap *= 2;
		uint64_t *c = realloc(fw.count, cap * sizeof(*c));
		if (!c)
			abort();
		memset(c + fw.count_cap, 0, (cap - fw.count_cap) * sizeof(*c));
		fw.count = c;
		fw.count_cap = cap;
	}
	fw.count[tp]++;
}

static size_t fw_slot(const int64_t *tab, size_t cap, int64_t tid)
{
	size_t i = (size_t)((uint64_t)tid * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1);

	while (tab[i] && tab[i] != tid)
		i = (i + 1) & (cap - 1);
	return i;
}

/* A frame named thread `tid`: kept for the reply the first time. */
static void fw_thread(int64_t tid)
{
	if (fw.have_last && fw.last == tid)
		return;
	fw.last = tid;
	fw.have_last = true;
	if (tid == 0) {
		if (fw.seen_zero)
			return;
		fw.seen_zero = true;
	} else {
		if (2 * (fw.seen_n + 1) > fw.seen_cap) {
			size_t cap = fw.seen_cap ? 2 * fw.seen_cap : 256;
			int64_t *t = calloc(cap, sizeof(*t));
			if (!t)
				abort();
			for (size_t i = 0; i < fw.seen_cap; i++)
				if (fw.seen[i])
					t[fw_slot(t, cap, fw.seen[i])] = fw.seen[i];
			free(fw.seen);
			fw.seen = t;
			fw.seen_cap = cap;
		}
		size_t i = fw_slot(fw.seen, fw.seen_cap, tid);
		if (fw.seen[i])
			return;
		fw.seen[i] = tid;
		fw.seen_n++;
	}
	if (fw.fresh_n == fw.fresh_cap) {
		fw.fresh_cap = fw.fresh_cap ? 2 * fw.fresh_cap : 64;
		fw.fresh = realloc(fw.fresh, fw.fresh_cap * sizeof(*fw.fresh));
		if (!fw.fresh)
			abort();
	}
	fw.fresh[fw.fresh_n++] = tid;
}

/* The number of the variable that holds a frame's thread ($probe_thread),
 * or 0 when the run has none. */
static uint32_t thread_tsv(void)
{
	for (size_t i = 0; i < tr.store.n_tsvs; i++)
		if (tr.store.tsvs[i].live == TSV_THREAD)
			return tr.store.tsvs[i].number;
	return 0;
}

/* Counts the first `len` bytes of whole frames of the buffer's pieces,
 * which just went into the file. */
static void fw_note(const struct tbuf_span *span, int n, size_t len)
{
	uint32_t num = thread_tsv();
	size_t at = 0;

	for (int i = 0; i < n; i++) {
		for (size_t off = 0; off + TBUF_FRAME_HEADER <= span[i].len;) {
			const uint8_t *f = span[i].data + off;
			int16_t tp;
			uint32_t size;
			int64_t tid;
			memcpy(&tp, f, 2);
			memcpy(&size, f + 2, 4);
			if (at + TBUF_FRAME_HEADER + size > len)
				return;
			fw_count(tp);
			if (num && tbuf_body_tsv(f + TBUF_FRAME_HEADER, size, tr.tb.regblock_size,
						 (int32_t)num, &tid) == 0)
				fw_thread(tid);
			off += TBUF_FRAME_HEADER + size;
			at += TBUF_FRAME_HEADER + size;
		}
	}
}

/* Threads one reply names at most (17 characters each, in a packet of
 * 16 KiB with the counts); the rest come with the next. */
#define FWRITE_TIDS 512

static void close_out(void)
{
	if (tr.out_path)
		close(tr.out_fd);
	tr.out_fd = -1;
	tr.out_error = 0;
	tr.out_frames = tr.out_bytes = 0;
	free(tr.out_path);
	tr.out_path = NULL;
	fw_reset();
}

void trace_fwrite_close(void)
{
	close_out();
}

/* Qprobe.file:<offset>;<dev>;<ino>;<hex path> */
void h_probe_file(struct rsp_request *req, struct rsp_buf *reply)
{
	const char *path = req->u.probe_file.path;
	struct stat sb;
	int fd;

	if (tr.running) {
		rsp_reply_error(reply, "Qprobe.file: not during a run");
		return;
	}
	if (tr.circular) {
		rsp_reply_error(reply, "Qprobe.file: a circular buffer cannot be written out");
		return;
	}
	close_out();
	fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		rsp_reply_error(reply, "cannot open %s here: %s", path, strerror(errno));
		return;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) ||
	    (uint64_t)sb.st_dev != req->u.probe_file.dev ||
	    (uint64_t)sb.st_ino != req->u.probe_file.ino) {
		close(fd);
		rsp_reply_error(reply, "%s here is not the recorder's file "
				"(another machine or mount namespace)", path);
		return;
	}
	/* A file size limit is an error of the write (EFBIG), as it is for
	 * probe-trace, not a signal that ends the agent. */
	signal(SIGXFSZ, SIG_IGN);
	tr.out_fd = fd;
	tr.out_end = req->u.probe_file.offset;
	tr.out_path = strdup(path);
	debug("frames go into %s from offset %llu", path,
	      (unsigned long long)tr.out_end);
	rsp_reply_ok(reply);
}

/* The whole frames at the start of the buffer's pieces that lie within
 * `len` bytes: how many, and their bytes in *bytes. */
static uint64_t whole_frames(const struct tbuf_span *span, int n, size_t len,
			     size_t *bytes)
{
	uint64_t frames = 0;
	size_t at = 0;

	for (int i = 0; i < n; i++) {
		for (size_t off = 0; off + TBUF_FRAME_HEADER <= span[i].len;) {
			uint32_t size;
			memcpy(&size, span[i].data + off + 2, 4);
			if (at + TBUF_FRAME_HEADER + size > len)
				goto out;
			off += TBUF_FRAME_HEADER + size;
			at += TBUF_FRAME_HEADER + size;
			frames++;
		}
	}
out:
	*bytes = at;
	return frames;
}

/*
 * Writes every frame of the buffer and a new end marker at tr.out_end.
 * Returns the bytes of frames written (0: none), or -errno with the
 * file put back as it was (its end marker at tr.out_end).  A write that
 * stopped part of the way (a file size limit, a disk that filled) keeps
 * the whole frames that went in, with the end marker after them, and
 * returns their bytes; the error is kept in tr.out_error for the next
 * request.
 */
static long write_batch(uint64_t *frames)
{
	static const uint8_t zero[4];
	struct tbuf_span span[2];
	struct iovec iov[3];
	int n = tbuf_spans(&tr.tb, span);
	size_t len = 0, done = 0, total;
	int cnt = 0;

	if (n == 0)
		return 0;
	for (int i = 0; i < n; i++) {
		iov[cnt++] = (struct iovec){ (void *)span[i].data, span[i].len };
		len += span[i].len;
	}
	iov[cnt++] = (struct iovec){ (void *)zero, 4 };
	total = len + 4;
	while (done < total) {
		/* The pieces not yet written (a short write is retried for
		 * the rest, to learn the error). */
		struct iovec rest[3];
		int rc = 0;
		size_t skip = done;
		for (int i = 0; i < cnt; i++) {
			if (skip >= iov[i].iov_len) {
				skip -= iov[i].iov_len;
				continue;
			}
			rest[rc++] = (struct iovec){ (uint8_t *)iov[i].iov_base + skip,
						     iov[i].iov_len - skip };
			skip = 0;
		}
		ssize_t w = pwritev(tr.out_fd, rest, rc, (off_t)(tr.out_end + done));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int err = w < 0 ? errno : ENOSPC;
			/* The whole frames that went in, with room for the
			 * marker after them, stay. */
			size_t keep = 0;
			uint64_t nf = done >= 4 ? whole_frames(span, n, done - 4, &keep) : 0;
			if (ftruncate(tr.out_fd, (off_t)(tr.out_end + keep)) < 0 ||
			    pwrite(tr.out_fd, zero, 4, (off_t)(tr.out_end + keep)) != 4) {
				/* Not even the marker: the file cut where the
				 * batch began, readers stop at its end. */
				(void)!ftruncate(tr.out_fd, (off_t)tr.out_end);
				return -err;
			}
			if (nf == 0)
				return -err;
			fw_note(span, n, keep);
			tr.out_error = err;
			*frames += nf;
			tbuf_consume(&tr.tb, nf);
			tr.frame_no = -1;
			tr.out_end += keep;
			return (long)keep;
		}
		done += (size_t)w;
	}
	*frames += tr.tb.frames;
	fw_note(span, n, len);
	tbuf_consume_all(&tr.tb);
	tr.frame_no = -1;	/* numbers shift: back to live */
	tr.out_end += len;
	return (long)len;
}

/*
 * Writes what the buffer holds now, counted for the next reply; after an
 * error, nothing more (the next request says why).
 */
static void flush(void)
{
	if (!tr.out_path || tr.out_error)
		return;
	long n = write_batch(&tr.out_frames);
	if (n < 0)
		tr.out_error = (int)-n;
	else
		tr.out_bytes += (uint64_t)n;
}

void trace_fwrite_flush_some(void)
{
	if (tr.out_path && tr.tb.used >= FWRITE_FLUSH_AT && !tr.tb.building)
		flush();
}

/*
 * qprobe.fwrite - the buffer's frames into the file, then the pads'
 * records taken in and written too, until none are left or the budget
 * is spent.  Replies `W<frames>;<bytes>;c<tp>:<n>,...;t<tid>,...[;+]`
 * (hex): what went into the file since the last reply (also by the
 * drains in between, trace_fwrite_flush_some), at the offset the last
 * reply ended at; the frames per tracepoint; the threads new in them, at
 * most FWRITE_TIDS, `;+` when more are left.
 */
void h_probe_fwrite(struct rsp_request *req, struct rsp_buf *reply)
{
	if (!tr.out_path) {
		rsp_reply_error(reply, "qprobe.fwrite: no file (Qprobe.file)");
		return;
	}
	if (!tr.tb_ready) {
		rsp_reply_error(reply, "no trace buffer: start a trace run first");
		return;
	}
	if (tr.stream_off) {
		rsp_reply_error(reply, "qprobe.fwrite: a frame is half streamed (qprobe.frames)");
		return;
	}
	while (tr.out_bytes < FWRITE_BUDGET && !tr.out_error) {
		uint64_t before = tr.out_bytes;
		flush();
		if (tr.out_bytes == before)
			break;
		/* Room again: the records the pads kept, then the parked
		 * threads (as qprobe.frames does). */
		if (!tr.running || !tr.proc)
			break;
		trace_drain(true);
		if (tr.proc && room_for_hit())
			inferior_unpark(tr.proc);
	}
	if (tr.out_error && !tr.out_frames) {
		rsp_reply_error(reply, "writing %s: %s", tr.out_path, strerror(tr.out_error));
		close_out();
		return;
	}
	rsp_reply_fwrite(reply, tr.out_frames, tr.out_bytes);
	/* ;c<tp>:<n>,... the frames per tracepoint, then ;t<tid>,... the
	 * threads new in them (probe-trace counts these instead of reading
	 * the frames back). */
	rsp_buf_puts(reply, ";c");
	bool first = true;
	for (size_t tp = 1; tp < fw.count_cap; tp++) {
		if (!fw.count[tp])
			continue;
		rsp_buf_printf(reply, "%s%zx:%" PRIx64, first ? "" : ",", tp, fw.count[tp]);
		fw.count[tp] = 0;
		first = false;
	}
	rsp_buf_puts(reply, ";t");
	size_t said = fw.fresh_n < FWRITE_TIDS ? fw.fresh_n : FWRITE_TIDS;
	for (size_t i = 0; i < said; i++)
		rsp_buf_printf(reply, "%s%" PRIx64, i ? "," : "", (uint64_t)fw.fresh[i]);
	if (fw.fresh_n > said)
		memmove(fw.fresh, fw.fresh + said, (fw.fresh_n - said) * sizeof(*fw.fresh));
	fw.fresh_n -= said;
	if (fw.fresh_n)
		rsp_buf_puts(reply, ";+");	/* more threads: ask again */
	tr.out_frames = tr.out_bytes = 0;
}
