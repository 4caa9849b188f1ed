/*
 * rsp-reply.h - RSP replies rendered from typed values.
 *
 * The mirror of rsp-request.h: the agent decides what to answer and fills
 * a typed value (a stop, an error, a thread list, a vFile result...); the
 * functions here write its bytes into an rsp_buf, the payload that
 * rsp_frame() then frames.  agent/ never writes packet syntax itself.
 *
 * Wire facts (gdb 13.1, gdbserver's answers as the reference):
 * - `OK`; an empty reply means "not supported".
 * - Errors: `E<2 hex>` or `E.<text>`.  gdb shows the text of `E.` to the
 *   user, but some packets' replies are decoded before gdb looks for an
 *   error: `m` (an `E.text` would be hex-decoded), qGetTLSAddr, qTBuffer,
 *   and a write while a trace frame is selected: those get a number.
 * - Numbers are lower-case hex without leading zeros unless said otherwise;
 *   binary data is escaped (`#$}*` -> `}` x^0x20).
 */
#ifndef PROBE_RSP_REPLY_H
#define PROBE_RSP_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol/rsp.h"

/* --- general ------------------------------------------------------------- */

/* `OK`. */
void rsp_reply_ok(struct rsp_buf *b);

/* Error codes for the packets that take `Enn` only (see above). */
enum rsp_error_code {
	RSP_ERR_FAILED = 0x01,		/* gdbserver's catch-all `E01` */
};
/* `E<code>`, two hex digits. */
void rsp_reply_error_code(struct rsp_buf *b, enum rsp_error_code code);
/* `E.<text>` with the framing characters and newlines made blanks. */
void rsp_reply_error(struct rsp_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * A failure of a packet whose reply gdb 13 decodes before it looks for an
 * error (see above): `E<code>`, or `E.<text>` when the client said in
 * qSupported that it takes a text in any reply (`error-message+`, gdb 14
 * and later) and there is one.
 */
struct rsp_error {
	enum rsp_error_code code;
	const char *text;		/* NULL: none */
};
void rsp_reply_failure(struct rsp_buf *b, const struct rsp_error *e,
		       bool text_accepted);
/* `E.<what>: <strerror(err)>` (err positive or negative). */
void rsp_reply_errno(struct rsp_buf *b, const char *what, int err);

/* Bytes as hex (`g`, `p`, `m`, qThreadExtraInfo). */
void rsp_reply_hex(struct rsp_buf *b, const void *data, size_t len);
/* `len` bytes whose value is unavailable: `xx` each (`g`/`p` in a trace
 * frame that did not collect them). */
void rsp_reply_unavailable(struct rsp_buf *b, size_t len);
/* A bare hex number (qGetTLSAddr, qShlibInfoAddr, qXfer write counts). */
void rsp_reply_number(struct rsp_buf *b, uint64_t value);
/* `1` or `0` (qAttached, qTMinFTPILen). */
void rsp_reply_bool(struct rsp_buf *b, bool value);
/* `O<hex text>`: console output for gdb to print. */
void rsp_reply_console(struct rsp_buf *b, const char *text);

/* --- stop replies ------------------------------------------------------- */

enum rsp_stop_kind {
	RSP_STOP_SIGNAL,	/* T<sig>... (or S<sig> when bare) */
	RSP_STOP_EXITED,	/* W<code>[;process:<pid>] */
	RSP_STOP_SIGNALLED,	/* X<sig>[;process:<pid>] */
	RSP_STOP_THREAD_EXITED,	/* w<code>;<ptid> (QThreadEvents) */
	RSP_STOP_NO_RESUMED,	/* N, or an error for a gdb without it */
};

/* Why a T stop happened: one `name:value;` pair after the signal. */
enum rsp_stop_reason {
	RSP_REASON_NONE,
	RSP_REASON_SWBREAK,		/* swbreak:; */
	RSP_REASON_HWBREAK,		/* hwbreak:; */
	RSP_REASON_WATCH,		/* watch:<addr>; */
	RSP_REASON_RWATCH,		/* rwatch:<addr>; */
	RSP_REASON_AWATCH,		/* awatch:<addr>; */
	RSP_REASON_SYSCALL_ENTRY,	/* syscall_entry:<nr>; */
	RSP_REASON_SYSCALL_RETURN,	/* syscall_return:<nr>; */
	RSP_REASON_FORK,		/* fork:<child ptid>; */
	RSP_REASON_VFORK,		/* vfork:<child ptid>; */
	RSP_REASON_VFORK_DONE,		/* vforkdone:; */
	RSP_REASON_EXEC,		/* exec:<hex path>; */
	RSP_REASON_CREATE,		/* create:; (a new thread) */
	RSP_REASON_LIBRARY,		/* library:; */
};

/* A register sent with a T stop so gdb need not ask for it. */
struct rsp_expedited {
	unsigned int regnum;
	const uint8_t *value;
	size_t len;
};

struct rsp_stop {
	enum rsp_stop_kind kind;
	bool multiprocess;		/* ptids as p<pid>.<tid>, process: */
	int signal;			/* SIGNAL/SIGNALLED: gdb numbering */
	int exit_code;			/* EXITED/THREAD_EXITED */
	int64_t pid, tid;		/* the thread (or process) */
	/* SIGNAL */
	bool bare;			/* S<sig> only: no thread, no registers */
	enum rsp_stop_reason reason;
	uint64_t value;			/* watch address or syscall number */
	int64_t child_pid;		/* FORK/VFORK: the child (pid = tid) */
	const char *exec_path;		/* EXEC: NULL writes nothing */
	size_t nregs;
	const struct rsp_expedited *regs;
	bool no_thread;			/* leave out thread: (--disable-packet) */
	unsigned int core;		/* core:<n>; */
	/* NO_RESUMED: gdb said no-resumed+; else an error, as gdbserver
	 * answers so that an old gdb does not wait for ever. */
	bool no_resumed_supported;
};

void rsp_reply_stop(struct rsp_buf *b, const struct rsp_stop *stop);
/* The same, as a `%Stop:` notification payload (non-stop mode). */
void rsp_notify_stop(struct rsp_buf *b, const struct rsp_stop *stop);

/* --- handshake and threads --------------------------------------------- */

/* What the agent says it supports in its qSupported reply; the fixed
 * list is always there, the flags add their feature. */
struct rsp_features {
	size_t packet_size;
	bool fast_tracepoints;		/* FastTracepoints+ */
	bool threads;			/* qXfer:threads:read+ */
	/* echoed only when gdb offered them */
	bool multiprocess, swbreak, hwbreak;
	bool fork_events, vfork_events, exec_events;
};
void rsp_reply_supported(struct rsp_buf *b, const struct rsp_features *f);

/* qC: `QC<ptid>`. */
void rsp_reply_current_thread(struct rsp_buf *b, bool multiprocess,
			      int64_t pid, int64_t tid);

/*
 * qfThreadInfo/qsThreadInfo: `m<ptid>[,<ptid>]...` then, once the list is
 * done, `l`.  Add threads one by one; rsp_thread_list_add() returns false
 * when the reply is full (the thread went in: go on from the next one in
 * the next qsThreadInfo).  rsp_thread_list_end() writes `l` when no thread
 * went in.
 */
struct rsp_thread_list {
	bool multiprocess;
	size_t count;
};
bool rsp_thread_list_add(struct rsp_buf *b, struct rsp_thread_list *l,
			 int64_t pid, int64_t tid);
void rsp_thread_list_end(struct rsp_buf *b, const struct rsp_thread_list *l);

/* vCont?: the actions the agent takes. */
void rsp_reply_vcont_actions(struct rsp_buf *b);

/* qSearch:memory: `1,<addr>` or `0`. */
void rsp_reply_search(struct rsp_buf *b, bool found, uint64_t addr);
/* qCRC: `C<crc>`. */
void rsp_reply_crc(struct rsp_buf *b, uint32_t crc);

/* qMemoryRegionInfo (lldb's). */
struct rsp_mem_region {
	uint64_t start, size;
	bool has_perms;			/* a mapping with some access */
	bool read, write, exec;
	const char *name;		/* "" or NULL: none */
};
void rsp_reply_mem_region(struct rsp_buf *b, const struct rsp_mem_region *r);

/* --- qXfer and vFile ---------------------------------------------------- */

/* One piece of a qXfer object of `size` bytes: `m` + escaped data while
 * more follows, `l` + data for the last, an error past its end. */
void rsp_reply_xfer_chunk(struct rsp_buf *b, const void *data, size_t size,
			  uint64_t offset, uint64_t length);

/* vFile results: `F<result>[;<escaped data>]` or `F-1,<errno>`. */
struct rsp_vfile_result {
	int64_t result;			/* fd, count, 0; -1: failed */
	int fileio_errno;		/* failed: gdb's File-I/O errno */
	const void *data;		/* pread, fstat, readlink; else NULL */
	size_t len;
};
void rsp_reply_vfile(struct rsp_buf *b, const struct rsp_vfile_result *r);

/* --- tracepoints (qTStatus: tp-status.h; qTP, qTfP, qTfV:
 * protocol/tracepoint.h) ------------------------------------------------- */

/* QTFrame: `F<frame>T<tracepoint>`, or `F-1` when none matched. */
void rsp_reply_tframe(struct rsp_buf *b, bool found, uint64_t frame,
		      uint32_t tpnum);
/* qTV: `V<value>` or `U` (unknown). */
void rsp_reply_tsv_value(struct rsp_buf *b, bool known, int64_t value);
/* `l`: the end of an upload (qTsP, qTsV). */
void rsp_reply_list_end(struct rsp_buf *b);

/* qprobe.lost: `L<total>[;<tp>:<count>]...`. */
struct rsp_lost {
	uint64_t total;
	size_t n;
	const uint32_t *tp;
	const uint64_t *count;
};
void rsp_reply_lost(struct rsp_buf *b, const struct rsp_lost *l);
/* qprobe.stats: `P` then `;<addr>:<how>:<stopped>:<recorded>:<ring full>:
 * <waited>` per probe site and, when return probes ran,
 * `;R<in process>:<recorded>:<stopped>:<ring full>`; numbers in hex. */
struct rsp_probe_stat {
	uint64_t addr;
	const char *how;		/* pad, pad-ipa, pad-trap, emulate... */
	uint64_t stopped, recorded, ring_full, waited;
};
struct rsp_probe_stats {
	size_t n;
	const struct rsp_probe_stat *site;
	bool returns, ret_in_process;
	uint64_t ret_recorded, ret_stopped, ret_ring_full;
};
void rsp_reply_probe_stats(struct rsp_buf *b, const struct rsp_probe_stats *s);
/* qprobe.salvage: `S<frames>;<left out>`. */
void rsp_reply_salvage(struct rsp_buf *b, uint64_t frames, uint64_t left_out);
/* qprobe.fwrite: `W<frames>;<bytes>`, what went into the file. */
void rsp_reply_fwrite(struct rsp_buf *b, uint64_t frames, uint64_t bytes);
/* qprobe.frames: `F` followed by stream bytes, escaped; add pieces in
 * order after rsp_reply_frames_begin(). */
void rsp_reply_frames_begin(struct rsp_buf *b);
void rsp_reply_frames_add(struct rsp_buf *b, const void *data, size_t len);

/*
 * qprobe.libevents: what became of pending tracepoint locations, `P`
 * then `;<event>` each (as many as the agent queued), `;o` when events
 * were lost:
 *   p<tp>,<key>,<addr>,<load>,<hex path>   placed, load-th time
 *   r<tp>,<key>,<addr>,<load>,<frames>     removed: its library went
 *   s<tp>,<key>,<addr>,<load>,<frames>     still placed at the end
 *   x<tp>,<key>,<hex message>              could not be placed
 * The agent queues events as they happen (rsp_libevent_put) and sends
 * whole ones (rsp_reply_libevents).
 */
enum rsp_libevent_kind {
	RSP_LIBEV_PLACED = 'p',
	RSP_LIBEV_REMOVED = 'r',
	RSP_LIBEV_STILL = 's',
	RSP_LIBEV_FAILED = 'x',
};
struct rsp_libevent {
	enum rsp_libevent_kind kind;
	uint32_t tp;
	uint64_t key, addr;
	uint32_t load;
	uint64_t frames;		/* REMOVED, STILL */
	const char *text;		/* PLACED: library; FAILED: message */
};
/* Appends `;<event>`. */
void rsp_libevent_put(struct rsp_buf *b, const struct rsp_libevent *e);
/* `P`, `len` bytes of queued events, `;o` if `lost`. */
void rsp_reply_libevents(struct rsp_buf *b, const char *queued, size_t len,
			 bool lost);

/* --- qXfer documents ----------------------------------------------------- */

/* Text escaped for an XML attribute or element (`<>&"'`). */
void rsp_xml_escape(struct rsp_buf *b, const char *s);

/* qXfer:threads: `<threads>` with one `<thread id= core= [name=]/>` a
 * thread. */
struct rsp_thread_info {
	int64_t pid, tid;
	unsigned int core;
	const char *name;		/* NULL: none known */
};
void rsp_xml_threads_begin(struct rsp_buf *b);
void rsp_xml_thread(struct rsp_buf *b, bool multiprocess,
		    const struct rsp_thread_info *t);
void rsp_xml_threads_end(struct rsp_buf *b);

/* qXfer:libraries-svr4: the list whose first link_map (the program) is at
 * main_lm (0: the dynamic linker has not run, an empty list), then one
 * `<library>` per further link_map. */
struct rsp_svr4_library {
	const char *name;
	uint64_t lm, l_addr, l_ld;
};
void rsp_xml_svr4_begin(struct rsp_buf *b, uint64_t main_lm);
void rsp_xml_svr4_library(struct rsp_buf *b, const struct rsp_svr4_library *l);
void rsp_xml_svr4_end(struct rsp_buf *b, uint64_t main_lm);

/* qXfer:osdata: a table of `type`, items of named columns. */
void rsp_xml_osdata_begin(struct rsp_buf *b, const char *type);
void rsp_xml_osdata_item_begin(struct rsp_buf *b);
void rsp_xml_osdata_column(struct rsp_buf *b, const char *name,
			   const char *value);
void rsp_xml_osdata_item_end(struct rsp_buf *b);
void rsp_xml_osdata_end(struct rsp_buf *b);

#endif
