/*
 * trace-packets.c - the trace packets' handlers: definitions (QTinit,
 * QTDP, QTDV...), the run (QTStart, QTStop), status and uploads (qTStatus,
 * qTP, qTfP, qTV), tsave, and the agent's own packets for probe-trace
 * (qprobe.frames, qprobe.lost, qprobe.salvage, Qprobe.pending...).
 */
#define LOG_DOMAIN "tp"
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <libiberty/libiberty.h>

#include "agent/agent.h"
#include "agent/ipa/ipa-abi.h"
#include "agent/log.h"
#include "agent/pending.h"
#include "agent/packets.h"
#include "agent/trace.h"
#include "protocol/ax.h"
#include "protocol/tbuf.h"
#include "protocol/tfile.h"
#include "protocol/tp-status.h"
#include "protocol/tracepoint.h"

/* --- saving ------------------------------------------------------------------ */

static int fd_write(void *ctx, const void *data, size_t len)
{
	int fd = *(int *)ctx;
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -errno;
		p += n;
		len -= n;
	}
	return 0;
}

/*
 * qprobe.frames:MAX - the recorder's stream.  Replies `F` followed by up
 * to MAX bytes (escaped binary) of the buffer's byte stream, oldest frame
 * first, and removes every frame sent to its end; a frame larger than one
 * reply continues in the next (stream_off).  `F` alone: nothing yet.  A
 * linear buffer then never fills while the recorder keeps up; frames are
 * never dropped from the head of a linear buffer, so a partly sent frame
 * stays in place.  A circular buffer could drop it: refused.
 */
static void stream_frames(uint64_t max, struct rsp_buf *reply)
{
	/* The escaped reply stays within a packet.  Escaping may double a
	 * byte but seldom does: frames are added whole while even their
	 * worst case fits, so a reply carries close to a packet's worth of
	 * frames (half of that, always assuming the worst, made twice the
	 * round trips).  The reply ends before a frame that may not fit;
	 * one that alone may not fit is cut to what surely does. */
	const size_t limit = RSP_MAX_PAYLOAD - 16;
	struct tbuf_frame f;
	uint64_t sent = 0;

	if (!tr.tb_ready) {
		rsp_reply_error(reply, "no trace buffer: start a trace run first");
		return;
	}
	if (tr.circular) {
		rsp_reply_error(reply, "cannot stream a circular trace buffer");
		return;
	}
	rsp_reply_frames_begin(reply);
	while (sent < max && reply->len < limit &&
	       tbuf_frame_get(&tr.tb, 0, &f) == 0) {
		size_t n = f.raw_len - tr.stream_off;
		size_t room = (limit - reply->len) / 2;

		if (n > max - sent)
			n = (size_t)(max - sent);
		if (n > room) {
			/* Whole frames while any fit: the client writes them
			 * from the reply as they are.  A frame a reply cannot
			 * hold goes in pieces. */
			if (sent || !room)
				break;
			n = room;
			max = sent + n;	/* the last piece of this reply */
		}
		rsp_reply_frames_add(reply, f.raw + tr.stream_off, n);
		sent += n;
		tr.stream_off += n;
		if (tr.stream_off < f.raw_len)
			break;
		tbuf_consume(&tr.tb, 1);
		tr.stream_off = 0;
		tr.frame_no = -1;	/* numbers shift: back to live */
	}
	/* Room again: the records the pads kept, then the parked threads. */
	if (sent && tr.running && tr.proc && room_for_hit()) {
		trace_drain(true);
		if (tr.proc && room_for_hit())
			inferior_unpark(tr.proc);
	}
}

/*
 * qprobe.lost - the frames of this run (or the last one) that found no
 * room in the buffer: `L<total>` then `;<tp>:<count>` for each tracepoint
 * location that lost any, in hex.  A tracepoint with several locations
 * (a USDT probe inlined in several places) comes once per location.
 */
static void lost_reply(struct rsp_buf *reply)
{
	size_t n = tp_count(&tr.store), k = 0;
	uint32_t *tps = xcalloc(n + 1, sizeof(*tps));
	uint64_t *counts = xcalloc(n + 1, sizeof(*counts));
	struct rsp_lost l = { .tp = tps, .count = counts };

	for (size_t i = 0; i < n; i++) {
		struct tp_def *tp = tp_at(&tr.store, i);
		l.total += tp->lost;
		if (tp->lost) {
			tps[k] = tp->number;
			counts[k++] = tp->lost;
		}
	}
	l.n = k;
	rsp_reply_lost(reply, &l);
	free(tps);
	free(counts);
}

struct salvage {
	uint64_t frames, unmatched;
};

/* One record of a dead agent's pad (pad_salvage): the hit as a recording
 * pad's would have been taken, for the tracepoints defined at its site
 * now.  A site whose tracepoints need more than the registers (memory:
 * its values now are not the hit's) or none at all takes nothing. */
static void salvage_hit(uint64_t site, struct regsrc *src, pid_t tid,
			uint64_t time_us, void *arg)
{
	struct salvage *sv = arg;
	struct hit h = { .src = src };
	enum pad_collect mode = recordable(site);
	uint64_t before = tr.tb.created;

	if (!tp_next_at(&tr.store, site, NULL) || mode == PAD_STOPS || mode == PAD_IPA) {
		sv->unmatched++;
		return;
	}
	if (mode == PAD_REGS_TIME_TID) {
		src->tid = tid;
		h.time_us = time_us;
	}
	run_tracepoints(&h, site, false, NULL);
	sv->frames += tr.tb.created - before;
}

/*
 * qprobe.salvage - a recorder whose agent died: this agent, attached to
 * the program since, with the same tracepoints defined (not started),
 * takes in what the dead agent's pads left in the program's ring, into a
 * buffer the recorder then streams (qprobe.frames), and the latency
 * histograms its return trampoline kept (then read by qprobe.hist).  `S<frames>;<records
 * left out>` in hex; an error when there is no process or a run is on.
 */
static void salvage(struct rsp_buf *reply)
{
	struct process *p = current_process();
	struct salvage sv = { 0, 0 };
	size_t size = tr.buffer_size < 0 ? DEFAULT_BUFFER_SIZE : (size_t)tr.buffer_size;
	char why[256];
	int n;

	if (!p) {
		rsp_reply_error(reply, "no process: attach to the program first");
		return;
	}
	if (tr.running) {
		rsp_reply_error(reply, "a trace run is going on: stop it first");
		return;
	}
	if (buffer_ready(regs_block_size(p), size, why, sizeof(why)) < 0) {
		rsp_reply_error(reply, "%s", why);
		return;
	}
	tr.stop_pending = false;
	n = pad_salvage(p, salvage_hit, &sv);
	if (n < 0) {
		snprintf(why, sizeof(why), "cannot read the pads' records in process %d: %s",
			 p->pid, strerror(-n));
		rsp_reply_error(reply, "%s", why);
		return;
	}
	/* The histograms the trampoline kept, for qprobe.hist. */
	int nh = trace_hist_salvage(p);
	if (nh < 0)
		debug("salvage: the histograms' pages: %s", strerror(-nh));
	else
		debug("salvage: %d histograms", nh);
	debug("salvage: %d records, %llu frames, %llu left out", n,
	      (unsigned long long)sv.frames, (unsigned long long)sv.unmatched);
	rsp_reply_salvage(reply, sv.frames, sv.unmatched);
}

static void save_file(const char *path, struct rsp_buf *reply)
{
	struct process *p = current_process();
	unsigned int features = p ? p->features : 0;
	struct tfile_writer w;
	struct tp_status st;
	char xml[32768];
	int fd, err;

	if (!tr.tb_ready) {
		rsp_reply_error(reply, "no trace run to save");
		return;
	}
	if (agent.arch->target_xml(features, xml, sizeof(xml)) < 0)
		xml[0] = '\0';
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rsp_reply_error(reply, "cannot create %s: %s", path, strerror(errno));
		return;
	}
	trace_fill_status(&st);
	tfile_writer_init(&w, fd_write, &fd);
	err = tfile_write(&w, tr.tb.regblock_size, xml[0] ? xml : NULL, &st,
			  &tr.store, &tr.tb);
	if (close(fd) < 0 && !err)
		err = -errno;
	if (err < 0)
		rsp_reply_error(reply, "cannot write %s: %s", path, strerror(-err));
	else
		rsp_reply_ok(reply);
}

/* --- packets ----------------------------------------------------------------- */

static void reply_store_error(struct rsp_buf *reply, int err)
{
	rsp_reply_error(reply, "%s", tr.store.error ? tr.store.error : strerror(-err));
}

/* A definition completed while running: InstallInTrace. */
static void install_now(struct tp_def *tp, struct rsp_buf *reply)
{
	char why[256];

	if (trace_verify(tp, why, sizeof(why)) < 0 || trace_install(tp, why, sizeof(why)) < 0) {
		rsp_reply_error(reply, "%s", why);
		return;
	}
	rsp_reply_ok(reply);
}

/*
 * One handler per trace packet, in the order of rsp-request.h; the table
 * that leads to them is agent/packets.c's.  The table drains the records
 * the pads left before each (trace_drain), so every reply counts them.
 */

void h_tinit(struct rsp_request *req, struct rsp_buf *reply)
{
	trace_stop_run(TP_STOP_COMMAND, 0);
	tr.full_wait = false;
	tr.full_drop = false;
	tr.parked_hits = 0;
	trace_stats_reset(NULL);
	trace_hist_clear();
	trace_fwrite_close();
	tp_store_clear(&tr.store);
	pending_clear();
	tsv_tag(1);
	if (tr.tb_ready)
		tbuf_clear(&tr.tb);
	tr.stream_off = 0;
	tr.frame_no = -1;
	rsp_reply_ok(reply);
}

void h_tdp(struct rsp_request *req, struct rsp_buf *reply)
{
	struct tp_def *tp = NULL;
	int err = tp_define(&tr.store, req, &tp);

	if (err < 0)
		reply_store_error(reply, err);
	else if (err == 0 && tr.running && !req->u.tdp.more)
		install_now(tp, reply);
	else
		rsp_reply_ok(reply);
}

void h_tdp_actions(struct rsp_request *req, struct rsp_buf *reply)
{
	struct tp_def *tp = NULL;
	int err = tp_add_actions(&tr.store, req, &tp);

	if (err < 0)
		reply_store_error(reply, err);
	else if (err == 0 && tr.running && !req->u.tdp_actions.more)
		install_now(tp, reply);
	else
		rsp_reply_ok(reply);
}

void h_tdp_src(struct rsp_request *req, struct rsp_buf *reply)
{
	int err = tp_add_source(&tr.store, req);

	if (err < 0)
		reply_store_error(reply, err);
	else
		rsp_reply_ok(reply);
}

void h_tdv(struct rsp_request *req, struct rsp_buf *reply)
{
	int err = tsv_define(&tr.store, req->u.tdv.number, req->u.tdv.initial,
			     req->u.tdv.builtin, req->u.tdv.name);

	if (err < 0) {
		reply_store_error(reply, err);
		return;
	}
	tsv_tag(req->u.tdv.number);
	rsp_reply_ok(reply);
}

/* gdb 13 sends link-time addresses here for PIE programs; read-only
 * memory is found from the mappings instead. */
void h_tro(struct rsp_request *req, struct rsp_buf *reply)
{
	rsp_reply_ok(reply);
}

void h_tdisconnected(struct rsp_request *req, struct rsp_buf *reply)
{
	tr.disconnected = req->u.flag;
	rsp_reply_ok(reply);
}

void h_tbuffer_circular(struct rsp_request *req, struct rsp_buf *reply)
{
	tr.circular = req->u.flag;
	if (tr.tb_ready && !tr.running)
		tbuf_set_circular(&tr.tb, tr.circular);
	rsp_reply_ok(reply);
}

void h_tbuffer_size(struct rsp_request *req, struct rsp_buf *reply)
{
	if (!tr.running)
		tr.buffer_size = req->u.tbuffer_size;
	rsp_reply_ok(reply);
}


void h_tnotes(struct rsp_request *req, struct rsp_buf *reply)
{
	if (req->u.tnotes.user)
		set_string(&tr.user, req->u.tnotes.user);
	if (req->u.tnotes.notes)
		set_string(&tr.notes, req->u.tnotes.notes);
	if (req->u.tnotes.tstop)
		set_string(&tr.stop_notes, req->u.tnotes.tstop);
	rsp_reply_ok(reply);
}

void h_tstart(struct rsp_request *req, struct rsp_buf *reply)
{
	char why[256];

	if (tr.running)
		trace_stop_run(TP_STOP_COMMAND, 0);
	if (trace_start_run(why, sizeof(why)) < 0)
		rsp_reply_error(reply, "%s", why);
	else
		rsp_reply_ok(reply);
}

void h_tstop(struct rsp_request *req, struct rsp_buf *reply)
{
	trace_stop_run(TP_STOP_COMMAND, 0);
	rsp_reply_ok(reply);
}

/* QTEnable / QTDisable. */
void h_tenable(struct rsp_request *req, struct rsp_buf *reply)
{
	bool on = req->kind == RSP_REQ_TENABLE;
	struct tp_def *tp;
	int err = tp_set_enabled(&tr.store, req->u.tp_ref.number, req->u.tp_ref.addr, on);

	if (err < 0) {
		reply_store_error(reply, err);
		return;
	}
	tp = tp_find(&tr.store, req->u.tp_ref.number, req->u.tp_ref.addr);
	if (on && tr.running && tp)
		install_now(tp, reply);
	else
		rsp_reply_ok(reply);
}

void h_tstatus(struct rsp_request *req, struct rsp_buf *reply)
{
	struct tp_status st;

	trace_fill_status(&st);
	tp_status_put_reply(&st, reply);
}

void h_tp_status(struct rsp_request *req, struct rsp_buf *reply)
{
	struct tp_def *tp = tp_lookup_qtp(&tr.store, req->u.tp_ref.number,
					  req->u.tp_ref.addr);

	if (!tp)
		rsp_reply_error(reply, "no tracepoint %u at 0x%llx", req->u.tp_ref.number,
				(unsigned long long)req->u.tp_ref.addr);
	else
		tp_put_status(tp, reply);
}

void h_tv(struct rsp_request *req, struct rsp_buf *reply)
{
	struct tsv_def *v = tsv_find(&tr.store, req->u.tsv_number);
	int64_t value;

	if (tr.frame_no >= 0) {
		bool known = tbuf_frame_tsv(&tr.tb, &tr.frame,
					    (int32_t)req->u.tsv_number, &value) == 0;
		rsp_reply_tsv_value(reply, known, known ? value : 0);
	} else if (v && (v->value_known || (v->builtin && v->number == 1))) {
		rsp_reply_tsv_value(reply, true, tsv_live_value(v, NULL));
	} else {
		rsp_reply_tsv_value(reply, false, 0);
	}
}

/* qTfP / qTsP. */
void h_tp_upload(struct rsp_request *req, struct rsp_buf *reply)
{
	if (req->kind == RSP_REQ_TP_UPLOAD_FIRST)
		tp_upload_start(&tr.upload, RSP_MAX_PAYLOAD - 16, false);
	if (tp_upload_next(&tr.store, &tr.upload, reply) == 0)
		rsp_reply_list_end(reply);
}

/* qTfV / qTsV. */
void h_tsv_upload(struct rsp_request *req, struct rsp_buf *reply)
{
	if (req->kind == RSP_REQ_TSV_UPLOAD_FIRST)
		tsv_upload_start(&tr.tsv_upload, RSP_MAX_PAYLOAD - 16, true);
	if (tsv_upload_next(&tr.store, &tr.tsv_upload, reply) == 0)
		rsp_reply_list_end(reply);
}

void h_tbuffer_read(struct rsp_request *req, struct rsp_buf *reply)
{
	uint64_t len = req->u.tbuf_read.len;

	if (len > RSP_MAX_PAYLOAD / 2 - 8)
		len = RSP_MAX_PAYLOAD / 2 - 8;
	if (!tr.tb_ready || tbuf_reply_raw(&tr.tb, req->u.tbuf_read.offset, len, reply) < 0) {
		rsp_buf_reset(reply);	/* a partial reply */
		rsp_reply_error_code(reply, RSP_ERR_FAILED);
	}
}

void h_tsave(struct rsp_request *req, struct rsp_buf *reply)
{
	save_file(req->u.str, reply);
}

/* A fast tracepoint is a jump pad (pad.c), which may cover several
 * instructions: any length can do, the agent says at tstart where it
 * cannot.  0 would mean "not yet". */
void h_tmin_ftpi_len(struct rsp_request *req, struct rsp_buf *reply)
{
	rsp_reply_bool(reply, agent.arch->emit_pad_handoff != NULL);
}

void h_probe_frames(struct rsp_request *req, struct rsp_buf *reply)
{
	stream_frames(req->u.stream_max, reply);
}

void h_probe_full_wait(struct rsp_request *req, struct rsp_buf *reply)
{
	tr.full_wait = req->u.flag;
	if (!tr.full_wait && tr.proc)
		inferior_unpark(tr.proc);
	rsp_reply_ok(reply);
}

void h_probe_full_drop(struct rsp_request *req, struct rsp_buf *reply)
{
	tr.full_drop = req->u.flag;
	rsp_reply_ok(reply);
}

void h_probe_lost(struct rsp_request *req, struct rsp_buf *reply)
{
	lost_reply(reply);
}

void h_probe_pending(struct rsp_request *req, struct rsp_buf *reply)
{
	char why[256];
	int err;

	if (tr.running) {
		rsp_reply_error(reply, "Qprobe.pending: not during a run");
		return;
	}
	if (!tp_find(&tr.store, req->u.pending.number, req->u.pending.addr)) {
		rsp_reply_error(reply, "Qprobe.pending: no tracepoint %u at 0x%llx",
				req->u.pending.number,
				(unsigned long long)req->u.pending.addr);
		return;
	}
	err = pending_define(req->u.pending.number, req->u.pending.addr,
			     req->u.pending.offset, req->u.pending.sym,
			     req->u.pending.lib, why, sizeof(why));
	if (err < 0)
		rsp_reply_error(reply, "%s", err == -ENOMEM ? strerror(ENOMEM) : why);
	else
		rsp_reply_ok(reply);
}

void h_probe_libevents(struct rsp_request *req, struct rsp_buf *reply)
{
	pending_events_reply(reply);
}

void h_probe_salvage(struct rsp_request *req, struct rsp_buf *reply)
{
	salvage(reply);
}
