/*
 * trace-frames.c - the trace buffer as gdb examines it.
 *
 * The run status (qTStatus, tsave's status line), and the frame gdb
 * selects with QTFrame: while one is selected, registers and memory come
 * from it; memory outside its blocks comes from read-only mappings only
 * (it is the same now as when the frame was collected).
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

/* --- status ------------------------------------------------------------ */

void trace_fill_status(struct tp_status *st)
{
	memset(st, 0, sizeof(*st));
	st->running = tr.running;
	st->reason = tr.running ? TP_STOP_UNKNOWN : tr.ever_run ? tr.reason : TP_STOP_NOT_RUN;
	st->stopping_tp = tr.stopping_tp;
	st->stop_notes = tr.stop_notes;
	st->error = tr.error;
	if (tr.tb_ready) {
		st->frames = tr.tb.frames;
		st->created = tr.tb.created;
		st->free_bytes = tbuf_free_bytes(&tr.tb);
		st->size = tr.tb.size;
	} else {
		st->size = st->free_bytes =
			tr.buffer_size < 0 ? DEFAULT_BUFFER_SIZE : (uint64_t)tr.buffer_size;
	}
	st->circular = tr.circular;
	st->disconnected = tr.disconnected;
	st->start_time = tr.start_time;
	st->stop_time = tr.stop_time;
	st->user = tr.user;
	st->notes = tr.notes;
}

/* --- frames ---------------------------------------------------------------- */

static uint64_t tp_addr_cb(void *ctx, int tpnum)
{
	return tp_number_addr(&tr.store, (uint32_t)tpnum);
}

static void frame_pc_desc(struct tbuf_pc *pc)
{
	const struct arch_reg *r = &agent.arch->regs[agent.arch->pc_regnum];

	pc->pc_offset = r->offset;
	pc->pc_size = r->bitsize / 8;
	pc->tp_addr = tp_addr_cb;
	pc->ctx = NULL;
}

void h_tframe(struct rsp_request *req, struct rsp_buf *reply)
{
	struct tbuf_frame f;
	struct tbuf_pc pc;
	struct tbuf_query q = { 0 };
	int err;

	if (req->u.tframe.kind == RSP_TFRAME_NONE) {
		tr.frame_no = -1;
		rsp_reply_ok(reply);
		return;
	}
	if (!tr.tb_ready) {
		rsp_reply_tframe(reply, false, 0, 0);
		tr.frame_no = -1;
		return;
	}
	frame_pc_desc(&pc);
	switch (req->u.tframe.kind) {
	case RSP_TFRAME_NUMBER:
		err = tbuf_frame_get(&tr.tb, req->u.tframe.number, &f);
		break;
	case RSP_TFRAME_PC:
		q.kind = TBUF_FIND_PC;
		q.lo = req->u.tframe.lo;
		err = tbuf_find(&tr.tb, &q, tr.frame_no, &pc, &f);
		break;
	case RSP_TFRAME_TDP:
		q.kind = TBUF_FIND_TDP;
		q.tpnum = (int)req->u.tframe.number;
		err = tbuf_find(&tr.tb, &q, tr.frame_no, &pc, &f);
		break;
	case RSP_TFRAME_RANGE:
	case RSP_TFRAME_OUTSIDE:
		q.kind = req->u.tframe.kind == RSP_TFRAME_RANGE ? TBUF_FIND_RANGE
								 : TBUF_FIND_OUTSIDE;
		q.lo = req->u.tframe.lo;
		q.hi = req->u.tframe.hi;
		err = tbuf_find(&tr.tb, &q, tr.frame_no, &pc, &f);
		break;
	default:
		err = -EINVAL;
		break;
	}
	if (err < 0) {
		tr.frame_no = -1;
		rsp_reply_tframe(reply, false, 0, 0);
		return;
	}
	tr.frame = f;
	tr.frame_no = (int64_t)f.number;
	rsp_reply_tframe(reply, true, f.number, (uint32_t)f.tpnum);
}

/* g in a frame: its R block, or every register unavailable but the PC. */
void trace_frame_regs(struct rsp_buf *reply)
{
	const uint8_t *regs;
	const struct arch_ops *arch = agent.arch;

	if (tbuf_frame_regs(&tr.tb, &tr.frame, &regs) == 0) {
		rsp_reply_hex(reply, regs, tr.tb.regblock_size);
		return;
	}
	uint64_t pc = tp_number_addr(&tr.store, (uint32_t)tr.frame.tpnum);
	const struct arch_reg *pcr = &arch->regs[arch->pc_regnum];
	/* The pc's low bytes: every target is little-endian (regblock.c). */
	for (size_t off = 0; off < tr.tb.regblock_size; off++) {
		if (off == pcr->offset) {
			rsp_reply_hex(reply, &pc, pcr->bitsize / 8);
			off += pcr->bitsize / 8 - 1;
		} else {
			rsp_reply_unavailable(reply, 1);
		}
	}
}

void trace_frame_reg(unsigned int regnum, struct rsp_buf *reply)
{
	const struct arch_ops *arch = agent.arch;
	const struct arch_reg *r = &arch->regs[regnum];
	const uint8_t *regs;

	if (r->offset + r->bitsize / 8 > tr.tb.regblock_size) {
		rsp_reply_error(reply, "no register %u in trace frames", regnum);
		return;
	}
	if (tbuf_frame_regs(&tr.tb, &tr.frame, &regs) == 0) {
		rsp_reply_hex(reply, regs + r->offset, r->bitsize / 8);
		return;
	}
	if ((int)regnum == arch->pc_regnum) {
		uint64_t pc = tp_number_addr(&tr.store, (uint32_t)tr.frame.tpnum);
		rsp_reply_hex(reply, &pc, r->bitsize / 8);
		return;
	}
	rsp_reply_unavailable(reply, r->bitsize / 8);
}

/* Whether [addr, addr+len) lies in a mapping the program cannot write:
 * such memory is the same now as when the frame was collected. */
static bool read_only_memory(struct process *p, uint64_t addr, size_t len)
{
	char perms[5];

	return p && mem_mapping_perms(p, addr, len, perms) == 0 &&
	       perms[0] == 'r' && perms[1] == '-';
}

void trace_frame_mem(uint64_t addr, size_t len, struct rsp_buf *reply)
{
	size_t got = 0;

	if (len > COLLECT_CHUNK)
		len = COLLECT_CHUNK;
	tbuf_frame_read_mem(&tr.tb, &tr.frame, addr, collect_buf, len, &got);
	if (got) {
		rsp_reply_hex(reply, collect_buf, got);
		return;
	}
	struct process *p = current_process();
	if (read_only_memory(p, addr, len)) {
		ssize_t n = mem_read(p, addr, collect_buf, len);
		if (n > 0) {
			rsp_reply_hex(reply, collect_buf, n);
			return;
		}
	}
	rsp_reply_error_code(reply, RSP_ERR_FAILED);	/* not collected: unavailable */
}

int xfer_traceframe_info(struct rsp_request *req, struct rsp_buf *obj,
			 struct rsp_buf *reply)
{
	if (tr.frame_no < 0) {
		rsp_reply_error(reply, "no trace frame selected");
		return XFER_REPLIED;
	}
	tbuf_frame_info_xml(&tr.tb, &tr.frame, obj);
	return 0;
}

