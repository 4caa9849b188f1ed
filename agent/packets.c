/*
 * packets.c - the one table from packet to handler.
 *
 * protocol/ parses each packet into a typed request (rsp-request.h); the
 * request's kind picks a row here, and the row a handler.  qXfer objects
 * and vFile operations have their rows below, so that every packet the
 * agent answers, and what it needs before (draining the pads' records for
 * a trace packet) or refuses (a write while a trace frame is selected, a
 * packet turned off with --disable-packet), reads from one place.  A kind
 * without a row gets an empty reply: not supported.
 */
#define LOG_DOMAIN "rsp"
#include "config.h"

#include <errno.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/log.h"
#include "agent/packets.h"

enum packet_flags {
	/* Trace packets: take in what the jump pads recorded first, so that
	 * counts and frames are up to date (trace_drain). */
	PKT_DRAIN = 1 << 0,
	/* Changes registers or memory: refused with E01 while a trace frame
	 * is selected, since the past cannot be changed. */
	PKT_WRITES = 1 << 1,
};

struct packet_row {
	handler_fn *fn;
	unsigned int flags;		/* enum packet_flags */
	unsigned int disabled_by;	/* --disable-packet bit (DISABLE_*) */
};

static handler_fn h_xfer, h_vfile;

static const struct packet_row packets[RSP_REQ_KIND_COUNT] = {
	[RSP_REQ_UNKNOWN] = { .fn = h_unknown },
	[RSP_REQ_INVALID] = { .fn = h_invalid },
	[RSP_REQ_QSUPPORTED] = { .fn = h_qsupported },
	[RSP_REQ_START_NOACK] = { .fn = h_start_noack },
	[RSP_REQ_EXTENDED] = { .fn = h_extended },
	[RSP_REQ_HALT_REASON] = { .fn = h_halt_reason },
	[RSP_REQ_QATTACHED] = { .fn = h_qattached },
	[RSP_REQ_QC] = { .fn = h_qc, .disabled_by = DISABLE_QC },
	[RSP_REQ_QOFFSETS] = { .fn = h_unknown },
	[RSP_REQ_QSYMBOL] = { .fn = h_qsymbol },
	[RSP_REQ_THREADINFO_FIRST] = { .fn = h_threadinfo_first, .disabled_by = DISABLE_QFTHREADINFO },
	[RSP_REQ_THREADINFO_NEXT] = { .fn = h_threadinfo_next, .disabled_by = DISABLE_QFTHREADINFO },
	[RSP_REQ_THREAD_EXTRA] = { .fn = h_thread_extra },
	[RSP_REQ_THREAD_ALIVE] = { .fn = h_thread_alive },
	[RSP_REQ_SET_THREAD] = { .fn = h_set_thread },
	[RSP_REQ_RCMD] = { .fn = h_rcmd },
	[RSP_REQ_XFER] = { .fn = h_xfer },
	[RSP_REQ_SEARCH_MEM] = { .fn = h_search_mem },
	[RSP_REQ_CRC] = { .fn = h_crc },
	[RSP_REQ_TSTATUS] = { .fn = h_tstatus, .flags = PKT_DRAIN },
	[RSP_REQ_GET_TLS_ADDR] = { .fn = h_get_tls_addr },
	[RSP_REQ_SHLIB_INFO_ADDR] = { .fn = h_shlib_info_addr },
	[RSP_REQ_MEMORY_REGION] = { .fn = h_memory_region },
	[RSP_REQ_NONSTOP] = { .fn = h_nonstop },
	[RSP_REQ_PASS_SIGNALS] = { .fn = h_pass_signals },
	[RSP_REQ_PROGRAM_SIGNALS] = { .fn = h_program_signals },
	[RSP_REQ_THREAD_EVENTS] = { .fn = h_thread_events },
	[RSP_REQ_CATCH_SYSCALLS] = { .fn = h_catch_syscalls },
	[RSP_REQ_DISABLE_RANDOMIZATION] = { .fn = h_disable_randomization },
	[RSP_REQ_STARTUP_WITH_SHELL] = { .fn = h_startup_with_shell },
	[RSP_REQ_ENV_RESET] = { .fn = h_env_reset },
	[RSP_REQ_ENV_SET] = { .fn = h_env_set },
	[RSP_REQ_ENV_UNSET] = { .fn = h_env_unset },
	[RSP_REQ_SET_WORKDIR] = { .fn = h_set_workdir },
	[RSP_REQ_ALLOW] = { .fn = h_ok },
	[RSP_REQ_AGENT] = { .fn = h_ok },
	[RSP_REQ_READ_REGS] = { .fn = h_read_regs },
	[RSP_REQ_WRITE_REGS] = { .fn = h_write_regs, .flags = PKT_WRITES },
	[RSP_REQ_READ_REG] = { .fn = h_read_reg },
	[RSP_REQ_WRITE_REG] = { .fn = h_write_reg, .flags = PKT_WRITES },
	[RSP_REQ_READ_MEM] = { .fn = h_read_mem },
	[RSP_REQ_WRITE_MEM] = { .fn = h_write_mem, .flags = PKT_WRITES },
	[RSP_REQ_VCONT_QUERY] = { .fn = h_vcont_query, .disabled_by = DISABLE_VCONT },
	[RSP_REQ_VCONT] = { .fn = h_vcont, .disabled_by = DISABLE_VCONT },
	[RSP_REQ_VCTRLC] = { .fn = h_vctrlc },
	[RSP_REQ_VSTOPPED] = { .fn = h_vstopped },
	[RSP_REQ_KILL] = { .fn = h_kill },
	[RSP_REQ_VKILL] = { .fn = h_vkill },
	[RSP_REQ_DETACH] = { .fn = h_detach },
	[RSP_REQ_RESTART] = { .fn = h_restart },
	[RSP_REQ_VRUN] = { .fn = h_vrun },
	[RSP_REQ_VATTACH] = { .fn = h_vattach },
	[RSP_REQ_INSERT_POINT] = { .fn = h_point },
	[RSP_REQ_REMOVE_POINT] = { .fn = h_point },
	[RSP_REQ_VFILE] = { .fn = h_vfile },
	[RSP_REQ_TINIT] = { .fn = h_tinit, .flags = PKT_DRAIN },
	[RSP_REQ_TDP] = { .fn = h_tdp, .flags = PKT_DRAIN },
	[RSP_REQ_TDP_ACTIONS] = { .fn = h_tdp_actions, .flags = PKT_DRAIN },
	[RSP_REQ_TDP_SRC] = { .fn = h_tdp_src, .flags = PKT_DRAIN },
	[RSP_REQ_TDV] = { .fn = h_tdv, .flags = PKT_DRAIN },
	[RSP_REQ_TRO] = { .fn = h_tro, .flags = PKT_DRAIN },
	[RSP_REQ_TDISCONNECTED] = { .fn = h_tdisconnected, .flags = PKT_DRAIN },
	[RSP_REQ_TBUFFER_CIRCULAR] = { .fn = h_tbuffer_circular, .flags = PKT_DRAIN },
	[RSP_REQ_TBUFFER_SIZE] = { .fn = h_tbuffer_size, .flags = PKT_DRAIN },
	[RSP_REQ_TNOTES] = { .fn = h_tnotes, .flags = PKT_DRAIN },
	[RSP_REQ_TSTART] = { .fn = h_tstart, .flags = PKT_DRAIN },
	[RSP_REQ_TSTOP] = { .fn = h_tstop, .flags = PKT_DRAIN },
	[RSP_REQ_TENABLE] = { .fn = h_tenable, .flags = PKT_DRAIN },
	[RSP_REQ_TDISABLE] = { .fn = h_tenable, .flags = PKT_DRAIN },
	[RSP_REQ_TP_STATUS] = { .fn = h_tp_status, .flags = PKT_DRAIN },
	[RSP_REQ_TV] = { .fn = h_tv, .flags = PKT_DRAIN },
	[RSP_REQ_TP_UPLOAD_FIRST] = { .fn = h_tp_upload, .flags = PKT_DRAIN },
	[RSP_REQ_TP_UPLOAD_NEXT] = { .fn = h_tp_upload, .flags = PKT_DRAIN },
	[RSP_REQ_TSV_UPLOAD_FIRST] = { .fn = h_tsv_upload, .flags = PKT_DRAIN },
	[RSP_REQ_TSV_UPLOAD_NEXT] = { .fn = h_tsv_upload, .flags = PKT_DRAIN },
	[RSP_REQ_TMIN_FTPI_LEN] = { .fn = h_tmin_ftpi_len, .flags = PKT_DRAIN },
	/* RSP_REQ_TSTM_FIRST: no handler, empty reply */
	/* RSP_REQ_TSTM_NEXT: no handler, empty reply */
	/* RSP_REQ_TSTM_AT: no handler, empty reply */
	[RSP_REQ_TFRAME] = { .fn = h_tframe, .flags = PKT_DRAIN },
	[RSP_REQ_TBUFFER_READ] = { .fn = h_tbuffer_read, .flags = PKT_DRAIN },
	[RSP_REQ_TSAVE] = { .fn = h_tsave, .flags = PKT_DRAIN },
	[RSP_REQ_PROBE_FRAMES] = { .fn = h_probe_frames, .flags = PKT_DRAIN },
	[RSP_REQ_PROBE_FILE] = { .fn = h_probe_file },
	[RSP_REQ_PROBE_FWRITE] = { .fn = h_probe_fwrite, .flags = PKT_DRAIN },
	[RSP_REQ_PROBE_FULL_WAIT] = { .fn = h_probe_full_wait, .flags = PKT_DRAIN },
	[RSP_REQ_PROBE_DETACH_ON_CLOSE] = { .fn = h_detach_on_close },
	[RSP_REQ_PROBE_FULL_DROP] = { .fn = h_probe_full_drop, .flags = PKT_DRAIN },
	[RSP_REQ_PROBE_LOST] = { .fn = h_probe_lost, .flags = PKT_DRAIN },
	[RSP_REQ_PROBE_STATS] = { .fn = h_probe_stats, .flags = PKT_DRAIN,
				  .disabled_by = DISABLE_PROBE_STATS },
	[RSP_REQ_PROBE_SALVAGE] = { .fn = h_probe_salvage, .flags = PKT_DRAIN },
	[RSP_REQ_PROBE_PENDING] = { .fn = h_probe_pending, .flags = PKT_DRAIN },
	[RSP_REQ_PROBE_LIBEVENTS] = { .fn = h_probe_libevents, .flags = PKT_DRAIN },
	[RSP_REQ_PROBE_HIST_SET] = { .fn = h_probe_hist_set, .flags = PKT_DRAIN },
	[RSP_REQ_PROBE_HIST] = { .fn = h_probe_hist, .flags = PKT_DRAIN },
	/* RSP_REQ_RELOC_INSN: no handler, empty reply */
};

/* --- qXfer objects ------------------------------------------------------ */

static const struct xfer_row {
	const char *object;
	xfer_read_fn *read;
	handler_fn *write;		/* NULL: not writable (empty reply) */
	unsigned int disabled_by;
} xfer_objects[] = {
	{ "features", xfer_features, NULL, 0 },
	{ "exec-file", xfer_exec_file, NULL, 0 },
	{ "threads", xfer_threads, NULL, DISABLE_THREADS },
	{ "auxv", xfer_auxv, NULL, 0 },
	{ "libraries-svr4", xfer_libraries_svr4, NULL, 0 },
	{ "siginfo", xfer_siginfo_read, xfer_siginfo_write, 0 },
	{ "traceframe-info", xfer_traceframe_info, NULL, 0 },
	{ "osdata", xfer_osdata, NULL, 0 },
};

static const struct xfer_row *xfer_find(const char *object)
{
	for (size_t i = 0; i < sizeof(xfer_objects) / sizeof(xfer_objects[0]); i++)
		if (strcmp(xfer_objects[i].object, object) == 0)
			return &xfer_objects[i];
	return NULL;
}

/* qXfer:<object>:read: the object whole, then the piece gdb asked for. */
static void h_xfer(struct rsp_request *req, struct rsp_buf *reply)
{
	const struct xfer_row *row = xfer_find(req->u.xfer.object);
	const char *object = req->u.xfer.object;
	struct rsp_buf obj;
	int err;

	if (!row || (row->disabled_by & agent.opt.disabled))
		return;		/* unknown object: empty reply */
	if (req->u.xfer.write) {
		if (row->write)
			row->write(req, reply);
		return;
	}
	rsp_buf_init(&obj);
	err = row->read(req, &obj, reply);
	if (err == XFER_REPLIED)
		;
	else if (err == -ESRCH)
		rsp_reply_error(reply, "no process: the program is not running");
	else if (err == -ENOENT)
		rsp_reply_error(reply, "no %s object named '%s'", object, req->u.xfer.annex);
	else if (err < 0)
		rsp_reply_error(reply, "cannot read %s: %s", object, strerror(-err));
	else
		rsp_reply_xfer_chunk(reply, obj.data, obj.len, req->u.xfer.offset,
				     req->u.xfer.length);
	rsp_buf_free(&obj);
}

/* --- vFile operations --------------------------------------------------- */

static handler_fn *const vfile_ops[] = {
	[RSP_VFILE_SETFS] = vfile_setfs,
	[RSP_VFILE_OPEN] = vfile_open,
	[RSP_VFILE_CLOSE] = vfile_close,
	[RSP_VFILE_PREAD] = vfile_pread,
	[RSP_VFILE_PWRITE] = vfile_pwrite,
	[RSP_VFILE_FSTAT] = vfile_fstat,
	[RSP_VFILE_UNLINK] = vfile_unlink,
	[RSP_VFILE_READLINK] = vfile_readlink,
};

static void h_vfile(struct rsp_request *req, struct rsp_buf *reply)
{
	unsigned int op = req->u.vfile.op;

	if (op < sizeof(vfile_ops) / sizeof(vfile_ops[0]) && vfile_ops[op])
		vfile_ops[op](req, reply);
}

/* --- dispatch ------------------------------------------------------------ */

void handle_request(struct rsp_request *req, struct rsp_buf *reply)
{
	const struct packet_row *row =
		req->kind < RSP_REQ_KIND_COUNT ? &packets[req->kind] : NULL;

	debug("%s", rsp_req_name(req->kind));
	if (!row || !row->fn)
		return;		/* not supported: empty reply */
	/* --disable-packet=vCont leaves the legacy c/s, parsed as vCont. */
	if ((row->disabled_by & agent.opt.disabled) &&
	    !(req->kind == RSP_REQ_VCONT && req->u.vcont.legacy))
		return;
	if ((row->flags & PKT_WRITES) && trace_frame_selected()) {
		rsp_reply_failure(reply, &(struct rsp_error){ RSP_ERR_FAILED,
				  "a trace frame is selected: its registers and memory cannot be changed" },
				  agent.error_messages);
		return;
	}
	if (row->flags & PKT_DRAIN)
		trace_drain(true);
	row->fn(req, reply);
}
