/*
 * record-threads.c - the program's threads: their names, the --tid and
 * --comm filters, and the file's thread table.
 *
 * When the recording ends, the process id and the names of the threads
 * its frames (or the agent's thread list, read twice a second) named
 * follow the end marker: the thread table of client/tfile-read.h, which
 * dump, report and the exports read and gdb never does.  A thread is
 * named (qThreadExtraInfo) when it first shows up, while it still runs.
 * --tid and --comm drop other threads' frames here, before the file, and
 * the table keeps their count.
 */
#include "config.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/recorder.h"
#include "client/rsp-client.h"
#include "protocol/tbuf.h"

static long add_thread(struct recorder *r, int64_t tid)
{
	/* the newest threads are the likeliest */
	for (size_t i = r->nthreads; i-- > 0;)
		if (r->threads[i].tid == tid)
			return (long)i;
	if (r->nthreads == r->cap_threads) {
		r->cap_threads = r->cap_threads ? r->cap_threads * 2 : 64;
		r->threads = realloc(r->threads, r->cap_threads * sizeof(*r->threads));
		if (!r->threads)
			abort();
	}
	memset(&r->threads[r->nthreads], 0, sizeof(r->threads[0]));
	r->threads[r->nthreads].tid = tid;
	r->unasked++;
	return (long)r->nthreads++;
}

/* The thread of a frame ($probe_thread), added to r->threads if new;
 * its index there, or -1 when the frame names none. */
long note_thread(struct recorder *r, const uint8_t *body, size_t len)
{
	int64_t tid;

	if (tbuf_body_tsv(body, len, r->regs.block_size, TSV_THREAD, &tid) < 0)
		return -1;
	/* A thread seen framed already (the last one, most often: millions
	 * of frames a second) needs nothing more. */
	if (r->nthreads && r->last_thread < r->nthreads &&
	    r->threads[r->last_thread].tid == tid && r->threads[r->last_thread].framed)
		return (long)r->last_thread;
	return thread_framed(r, tid);
}

/* Thread `tid` named by a frame: added to r->threads if new; its index. */
long thread_framed(struct recorder *r, int64_t tid)
{
	long i = add_thread(r, tid);
	struct rec_thread *th = &r->threads[i];

	r->last_thread = (size_t)i;
	if (!th->framed) {
		/* named from the thread list, maybe before it named
		 * itself: its name now is the one to keep */
		th->framed = true;
		if (th->asked) {
			th->asked = false;
			r->unasked++;
		}
	}
	return i;
}

/*
 * Asks the agent the name (qThreadExtraInfo: the thread's comm) of each
 * thread new in the thread list or whose first frame just came, while
 * it still runs: names are what --comm filters on, here and later.  A
 * thread already gone keeps the name the list gave it, or has none.
 */
void name_threads(struct recorder *r)
{
	for (size_t i = r->nthreads; r->unasked && i-- > 0;) {
		struct rec_thread *th = &r->threads[i];
		char name[sizeof(th->name)];
		ssize_t n;

		if (th->asked)
			continue;
		th->asked = true;
		r->unasked--;
		if (r->exited || r->c.fd < 0 || r->c.eof)
			continue;
		if (rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT,
				       "qThreadExtraInfo,p%x.%llx", (unsigned)r->pid,
				       (unsigned long long)th->tid) < 0 ||
		    r->reply.len == 0 || r->reply.data[0] == 'E')
			continue;	/* gone: an earlier name stays */
		n = rsp_hex_decode(r->reply.data, r->reply.len, name,
				   sizeof(name) - 1);
		if (n > 0) {
			name[n] = '\0';
			memcpy(th->name, name, sizeof(name));
		}
	}
}

/*
 * The program's live threads (qfThreadInfo, qsThreadInfo), named: a
 * thread whose frames the recorder takes only after it ended would have
 * no name otherwise.  Called twice a second while recording.
 */
void list_threads(struct recorder *r)
{
	const char *req = "qfThreadInfo";

	if (r->exited || r->c.fd < 0 || r->c.eof)
		return;
	for (int rounds = 0; rounds < 10000; rounds++) {
		if (rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT, "%s", req) < 0 ||
		    r->reply.len == 0 || r->reply.data[0] != 'm')
			break;
		/* m p<pid>.<tid>,p<pid>.<tid>... (hex) */
		for (char *p = r->reply.data + 1; *p;) {
			char *dot = strchr(p, '.'), *end;
			size_t n = strcspn(p, ",");
			/* only ours: an agent may hold other processes too */
			if (*p == 'p' && dot && dot < p + n &&
			    strtol(p + 1, NULL, 16) == (long)r->pid) {
				long long tid = strtoll(dot + 1, &end, 16);
				if (end == p + n && tid > 0)
					add_thread(r, tid);
			}
			p += n;
			if (*p == ',')
				p++;
		}
		req = "qsThreadInfo";
	}
	name_threads(r);
}

/*
 * The thread table after the end marker (client/tfile-read.h has its
 * layout), written once the last frame is in.  gdb stops reading at the
 * end marker; a recording cut short has no table.
 */
void write_threads(struct recorder *r)
{
	struct rsp_buf b;
	uint64_t at = r->end + 4;

	if (r->fd < 0 || !r->header_written || r->write_failed || !r->pid)
		return;
	rsp_buf_init(&b);
	rsp_buf_puts(&b, "probe-trace threads\n");
	rsp_buf_printf(&b, "pid %d\n", (int)r->pid);
	if (r->keep_tids || r->keep_comm) {
		rsp_buf_printf(&b, "filtered %llu\n", (unsigned long long)r->filtered);
		for (size_t i = 0; i < r->nprobes; i++)
			if (r->probes[i].filtered)
				rsp_buf_printf(&b, "filtered-tp %d %llu\n",
					       r->probes[i].tpnum,
					       (unsigned long long)r->probes[i].filtered);
	}
	for (size_t i = 0; i < r->nthreads; i++) {
		if (!r->threads[i].name[0])
			continue;
		rsp_buf_printf(&b, "t %lld ", (long long)r->threads[i].tid);
		rsp_buf_put_hex(&b, r->threads[i].name, strlen(r->threads[i].name));
		rsp_buf_putc(&b, '\n');
	}
	for (size_t i = 0; r->stats_known && i < r->nprobes; i++) {
		const struct probe *p = &r->probes[i];
		if (!p->how[0])
			continue;
		rsp_buf_printf(&b, "stops-tp %d %llu %llu %llu ", p->tpnum,
			       (unsigned long long)p->stops,
			       (unsigned long long)p->ring_full,
			       (unsigned long long)p->waited);
		rsp_buf_put_hex(&b, p->how, strlen(p->how));
		rsp_buf_putc(&b, '\n');
	}
	for (size_t i = 0; i < r->nprobes; i++) {
		const struct probe *p = &r->probes[i];
		int last = -1;
		if (!p->hist_known)
			continue;
		rsp_buf_printf(&b, "hist-tp %d %llu %llu %llu ", p->tpnum,
			       (unsigned long long)p->hist.n, (unsigned long long)p->hist_sum,
			       (unsigned long long)p->hist.zero);
		for (int k = 0; k < 64; k++)
			if (p->hist.b[k])
				last = k;
		if (last < 0)
			rsp_buf_putc(&b, '-');
		for (int k = 0; k <= last; k++)
			rsp_buf_printf(&b, k ? ",%llu" : "%llu", (unsigned long long)p->hist.b[k]);
		rsp_buf_putc(&b, '\n');
	}
	rsp_buf_printf(&b, "probe-trace threads at %llx\n", (unsigned long long)at);
	if (pwrite(r->fd, b.data, b.len, (off_t)at) != (ssize_t)b.len ||
	    (r->out_regular && ftruncate(r->fd, (off_t)(at + b.len)) < 0)) {
		/* the frames are whole without it */
		err_msg("%s: cannot write the table of thread names: %s",
			r->out_path, strerror(errno));
		if (ftruncate(r->fd, (off_t)at) < 0)
			err_msg("%s: %s", r->out_path, strerror(errno));
	}
	rsp_buf_free(&b);
}

/*
 * --tid / --comm at record time: the agent records every thread (its
 * conditions know no thread), and the recorder drops the frames of the
 * others before they reach the file, counting them.  A thread is named
 * when its first frame arrives; one already gone by then has no name and
 * its frames fail --comm.  Compacts the first `len` bytes of r->carry
 * (whole frames) in place; returns the bytes kept.  The partial frame
 * after them is moved down behind the kept ones.
 */
size_t drop_frames(struct recorder *r, size_t len)
{
	size_t off = 0, kept = 0;

	while (off < len) {
		int16_t tpnum;
		uint32_t size;
		long ti;
		bool keep = true;

		memcpy(&tpnum, r->carry + off, 2);
		memcpy(&size, r->carry + off + 2, 4);
		ti = note_thread(r, r->carry + off + 6, size);
		name_threads(r);
		if (r->keep_tids) {
			keep = false;
			for (size_t i = 0; ti >= 0 && i < r->nkeep_tids && !keep; i++)
				keep = r->threads[ti].tid == r->keep_tids[i];
		}
		if (keep && r->keep_comm)
			keep = ti >= 0 && r->threads[ti].name[0] &&
			       fnmatch(r->keep_comm, r->threads[ti].name, 0) == 0;
		if (keep) {
			memmove(r->carry + kept, r->carry + off, 6 + (size_t)size);
			kept += 6 + size;
		} else {
			struct probe *p = probe_of(r, tpnum);
			if (p)
				p->filtered++;
			r->filtered++;
		}
		off += 6 + size;
	}
	memmove(r->carry + kept, r->carry + len, r->carry_len - len);
	r->carry_len -= len - kept;
	return kept;
}
