/*
 * packets.h - the handlers agent/packets.c's table leads to.
 *
 * A handler gets a typed request (protocol/rsp-request.h) and fills the
 * reply with protocol/rsp-reply.h's functions; an empty reply tells gdb
 * the packet is not supported.  Adding a packet: a request kind in
 * protocol/, one row in packets.c, one handler declared here.
 */
#ifndef PROBE_PACKETS_H
#define PROBE_PACKETS_H

#include "protocol/rsp.h"
#include "protocol/rsp-request.h"

typedef void handler_fn(struct rsp_request *req, struct rsp_buf *reply);

/* handlers.c: handshake, queries, settings, registers, memory, execution,
 * breakpoints */
handler_fn h_unknown, h_invalid, h_ok;
handler_fn h_qsupported, h_start_noack, h_extended, h_halt_reason;
handler_fn h_qattached, h_qc, h_qsymbol, h_threadinfo_first, h_threadinfo_next;
handler_fn h_thread_extra, h_thread_alive, h_set_thread, h_rcmd;
handler_fn h_get_tls_addr, h_shlib_info_addr, h_memory_region;
handler_fn h_nonstop, h_detach_on_close, h_vstopped;
handler_fn h_pass_signals, h_program_signals, h_thread_events, h_catch_syscalls;
handler_fn h_disable_randomization, h_startup_with_shell;
handler_fn h_env_reset, h_env_set, h_env_unset, h_set_workdir;
handler_fn h_read_regs, h_write_regs, h_read_reg, h_write_reg;
handler_fn h_read_mem, h_write_mem, h_search_mem, h_crc;
handler_fn h_vcont_query, h_vcont, h_vctrlc, h_kill, h_vkill, h_detach;
handler_fn h_vrun, h_restart, h_vattach, h_point;

/* trace-packets.c, trace-frames.c: tracepoints */
handler_fn h_tinit, h_tdp, h_tdp_actions, h_tdp_src, h_tdv, h_tro;
handler_fn h_tdisconnected, h_tbuffer_circular, h_tbuffer_size, h_tnotes;
handler_fn h_tstart, h_tstop, h_tenable, h_tstatus, h_tp_status, h_tv;
handler_fn h_tp_upload, h_tsv_upload, h_tframe, h_tbuffer_read, h_tsave;
handler_fn h_tmin_ftpi_len;
handler_fn h_probe_frames, h_probe_full_wait, h_probe_full_drop, h_probe_lost;
handler_fn h_probe_pending, h_probe_libevents, h_probe_salvage, h_probe_stats;
handler_fn h_probe_hist_set, h_probe_hist;
handler_fn h_probe_file, h_probe_fwrite;

/* vfile.c: one per vFile operation */
handler_fn vfile_setfs, vfile_open, vfile_close, vfile_pread, vfile_pwrite;
handler_fn vfile_fstat, vfile_unlink, vfile_readlink;

/*
 * qXfer objects (xfer.c, trace-frames.c): a reader puts the whole object
 * in `obj` (the table's handler sends the piece gdb asked for) and
 * returns 0; or returns -ESRCH (no process), -ENOENT (no such annex) or
 * another -errno for the table's error reply; or writes its own error
 * into `reply` and returns XFER_REPLIED.
 */
#define XFER_REPLIED 1
typedef int xfer_read_fn(struct rsp_request *req, struct rsp_buf *obj,
			 struct rsp_buf *reply);
xfer_read_fn xfer_features, xfer_exec_file, xfer_threads, xfer_auxv;
xfer_read_fn xfer_libraries_svr4, xfer_siginfo_read, xfer_osdata;
xfer_read_fn xfer_traceframe_info;
handler_fn xfer_siginfo_write;

#endif
