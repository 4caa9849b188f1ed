/*
 * rsp-request.h - RSP packets parsed into typed requests.
 *
 * The agent never looks at packet syntax: rsp_parse() turns a payload into a
 * `struct rsp_request` whose `kind` selects a handler, with every argument
 * decoded (numbers, thread ids, hex strings, binary data).  A payload that
 * names a known packet but has malformed arguments yields RSP_REQ_INVALID
 * with a message for gdb (`E.<message>`); a packet we do not know yields
 * RSP_REQ_UNKNOWN (gdb expects an empty reply).
 *
 * Pointers inside a request point into the payload (which rsp_parse may
 * modify in place, e.g. to unescape binary data or NUL-terminate fields) or
 * into `req->scratch`; they live as long as both.
 */
#ifndef PROBE_RSP_REQUEST_H
#define PROBE_RSP_REQUEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/* A thread id as gdb writes it: `p<pid>.<tid>`, `<tid>`, `-1` (all), `0`
 * (any).  With the multiprocess extension pid is set; otherwise pid = 0. */
#define RSP_ID_ALL (-1)
#define RSP_ID_ANY 0
struct rsp_ptid {
	int64_t pid;		/* RSP_ID_ALL, RSP_ID_ANY or a pid */
	int64_t tid;		/* RSP_ID_ALL, RSP_ID_ANY or a tid */
};

enum rsp_req_kind {
	RSP_REQ_UNKNOWN,	/* reply empty */
	RSP_REQ_INVALID,	/* reply E.<req->error> */

	/* handshake and general queries */
	RSP_REQ_QSUPPORTED,	/* qSupported[:features]: u.str = gdb's list or NULL */
	RSP_REQ_START_NOACK,	/* QStartNoAckMode */
	RSP_REQ_EXTENDED,	/* ! */
	RSP_REQ_HALT_REASON,	/* ? */
	RSP_REQ_QATTACHED,	/* qAttached[:pid]: u.pid (0 if absent) */
	RSP_REQ_QC,		/* qC */
	RSP_REQ_QOFFSETS,	/* qOffsets */
	RSP_REQ_QSYMBOL,	/* qSymbol:...: u.str = text after "qSymbol:" */
	RSP_REQ_THREADINFO_FIRST, /* qfThreadInfo */
	RSP_REQ_THREADINFO_NEXT,  /* qsThreadInfo */
	RSP_REQ_THREAD_EXTRA,	/* qThreadExtraInfo,ptid: u.ptid */
	RSP_REQ_THREAD_ALIVE,	/* T<ptid>: u.ptid */
	RSP_REQ_SET_THREAD,	/* H<op><ptid>: u.set_thread */
	RSP_REQ_RCMD,		/* qRcmd,<hex>: u.str = decoded command */
	RSP_REQ_XFER,		/* qXfer:object:read|write:annex:offset,length[:data] */
	RSP_REQ_SEARCH_MEM,	/* qSearch:memory:addr;len;pattern: u.search */
	RSP_REQ_CRC,		/* qCRC:addr,len: u.mem */
	RSP_REQ_TSTATUS,	/* qTStatus: tp_status_put_reply() (tp-status.h) */
	RSP_REQ_GET_TLS_ADDR,	/* qGetTLSAddr:ptid,offset,lm: u.tls */
	RSP_REQ_SHLIB_INFO_ADDR, /* qShlibInfoAddr (lldb's) */
	RSP_REQ_MEMORY_REGION,	/* qMemoryRegionInfo:addr (lldb's): u.mem.addr */

	/* settings: u.flag (0/1) or u.list */
	RSP_REQ_NONSTOP,	/* QNonStop:0|1 */
	RSP_REQ_PASS_SIGNALS,	/* QPassSignals:a;b;c: u.sigs */
	RSP_REQ_PROGRAM_SIGNALS,/* QProgramSignals:...: u.sigs */
	RSP_REQ_THREAD_EVENTS,	/* QThreadEvents:0|1 */
	RSP_REQ_CATCH_SYSCALLS,	/* QCatchSyscalls:0 | 1[;nr...]: u.syscalls */
	RSP_REQ_DISABLE_RANDOMIZATION, /* QDisableRandomization:0|1 */
	RSP_REQ_STARTUP_WITH_SHELL,    /* QStartupWithShell:0|1 */
	RSP_REQ_ENV_RESET,	/* QEnvironmentReset */
	RSP_REQ_ENV_SET,	/* QEnvironmentHexEncoded:hex: u.str = "NAME=VALUE" */
	RSP_REQ_ENV_UNSET,	/* QEnvironmentUnset:hex: u.str = "NAME" */
	RSP_REQ_SET_WORKDIR,	/* QSetWorkingDir:[hex]: u.str ("" = default) */
	RSP_REQ_ALLOW,		/* QAllow:...: accepted, ignored */
	RSP_REQ_AGENT,		/* QAgent:0|1 */

	/* registers and memory */
	RSP_REQ_READ_REGS,	/* g */
	RSP_REQ_WRITE_REGS,	/* G<hex>: u.data (decoded bytes) */
	RSP_REQ_READ_REG,	/* p<n>: u.reg.regnum */
	RSP_REQ_WRITE_REG,	/* P<n>=<hex>: u.reg */
	RSP_REQ_READ_MEM,	/* m<addr>,<len>: u.mem */
	RSP_REQ_WRITE_MEM,	/* M<addr>,<len>:<hex> and X<addr>,<len>:<bin>:
				   u.mem, decoded bytes in u.mem.data */

	/* execution */
	RSP_REQ_VCONT_QUERY,	/* vCont? */
	RSP_REQ_VCONT,		/* vCont;...: u.vcont; also c/C/s/S (legacy) */
	RSP_REQ_VCTRLC,		/* vCtrlC */
	RSP_REQ_VSTOPPED,	/* vStopped */
	RSP_REQ_KILL,		/* k */
	RSP_REQ_VKILL,		/* vKill;pid: u.pid */
	RSP_REQ_DETACH,		/* D or D;pid: u.pid (0 = current) */
	RSP_REQ_RESTART,	/* R<xx> */
	RSP_REQ_VRUN,		/* vRun;hexprog[;hexarg]...: u.argv */
	RSP_REQ_VATTACH,	/* vAttach;pid: u.pid */

	/* breakpoints */
	RSP_REQ_INSERT_POINT,	/* Z<type>,addr,kind[;...]: u.point */
	RSP_REQ_REMOVE_POINT,	/* z<type>,addr,kind: u.point */

	/* host I/O */
	RSP_REQ_VFILE,		/* vFile:op:...: u.vfile */

	/* tracepoints: definition (tstart), see protocol/tracepoint.h */
	RSP_REQ_TINIT,		/* QTinit */
	RSP_REQ_TDP,		/* QTDP:n:addr:E|D:step:pass[:F..][:S][:X..][-]:
				   u.tdp */
	RSP_REQ_TDP_ACTIONS,	/* QTDP:-n:addr:[S]<actions>[-]: u.tdp_actions */
	RSP_REQ_TDP_SRC,	/* QTDPsrc:n:addr:type:start:slen:hex[-]:
				   u.tdp_src */
	RSP_REQ_TDV,		/* QTDV:n:value:builtin:hexname: u.tdv */
	RSP_REQ_TRO,		/* QTro:start,end[:start,end]...: u.tro */
	RSP_REQ_TDISCONNECTED,	/* QTDisconnected:0|1: u.flag */
	RSP_REQ_TBUFFER_CIRCULAR, /* QTBuffer:circular:0|1: u.flag */
	RSP_REQ_TBUFFER_SIZE,	/* QTBuffer:size:<hex>|-1: u.tbuffer_size */
	RSP_REQ_TNOTES,		/* QTNotes:type:hex[;type:hex]...: u.tnotes */
	RSP_REQ_TSTART,		/* QTStart */
	RSP_REQ_TSTOP,		/* QTStop */
	RSP_REQ_TENABLE,	/* QTEnable:n:addr: u.tp_ref */
	RSP_REQ_TDISABLE,	/* QTDisable:n:addr: u.tp_ref */
	/* tracepoints: queries and uploads */
	RSP_REQ_TP_STATUS,	/* qTP:n:addr: u.tp_ref */
	RSP_REQ_TV,		/* qTV:n: u.tsv_number */
	RSP_REQ_TP_UPLOAD_FIRST, /* qTfP */
	RSP_REQ_TP_UPLOAD_NEXT,	/* qTsP */
	RSP_REQ_TSV_UPLOAD_FIRST, /* qTfV */
	RSP_REQ_TSV_UPLOAD_NEXT,  /* qTsV */
	RSP_REQ_TMIN_FTPI_LEN,	/* qTMinFTPILen */
	RSP_REQ_TSTM_FIRST,	/* qTfSTM (the agent may reply empty) */
	RSP_REQ_TSTM_NEXT,	/* qTsSTM */
	RSP_REQ_TSTM_AT,	/* qTSTMat:addr: u.tp_ref.addr */
	/* tracepoints: examining the buffer */
	RSP_REQ_TFRAME,		/* QTFrame:...: u.tframe */
	RSP_REQ_TBUFFER_READ,	/* qTBuffer:offset,len: u.tbuf_read */
	RSP_REQ_TSAVE,		/* QTSave:hexfilename: u.str (decoded) */
	RSP_REQ_PROBE_FRAMES,	/* qprobe.frames:max: u.stream_max (the
				 * agent's own: frames streamed and removed) */
	RSP_REQ_PROBE_FILE,	/* Qprobe.file:off;dev;ino;hexpath: u.probe_file
				 * (the agent's own: the recorder's trace
				 * file, which the agent then writes the
				 * frames into itself, from `off`) */
	RSP_REQ_PROBE_FWRITE,	/* qprobe.fwrite (the agent's own): frames
				 * written into that file and removed */
	RSP_REQ_PROBE_FULL_WAIT, /* Qprobe.fullwait:0|1: u.flag (the agent's
				 * own: 1 = a full buffer makes hitting
				 * threads wait for the stream to make room,
				 * 0 = it stops the run, gdb's way) */
	RSP_REQ_PROBE_DETACH_ON_CLOSE, /* Qprobe.detachonclose:0|1: u.flag
				 * (the agent's own: 1 = when the connection
				 * drops, every program runs on, restored,
				 * the ones the agent started included) */
	RSP_REQ_PROBE_FULL_DROP, /* Qprobe.fulldrop:0|1: u.flag (the agent's
				 * own: 1 = a hit that finds no room is
				 * dropped and counted, the run goes on) */
	RSP_REQ_PROBE_LOST,	/* qprobe.lost (the agent's own): frames
				 * lost this run, per tracepoint */
	RSP_REQ_PROBE_STATS,	/* qprobe.stats (the agent's own): how each
				 * probe site's hits ran, with its stops */
	RSP_REQ_PROBE_SALVAGE,	/* qprobe.salvage (the agent's own): the
				 * records a dead agent's pads left in the
				 * process, as frames of the tracepoints now
				 * defined */
	RSP_REQ_PROBE_PENDING,	/* Qprobe.pending:n:addr:off:hexsym:hexlib
				 * (the agent's own): tracepoint location
				 * n/addr waits for a library: u.pending */
	RSP_REQ_PROBE_LIBEVENTS, /* qprobe.libevents (the agent's own): what
				 * became of the pending locations since the
				 * last query */
	RSP_REQ_PROBE_HIST_SET,	/* Qprobe.hist:n:addr (the agent's own): the
				 * location's hits add to a latency
				 * histogram, no frames: u.tp_ref */
	RSP_REQ_PROBE_HIST,	/* qprobe.hist:n:addr (the agent's own): that
				 * histogram: u.tp_ref */
	RSP_REQ_RELOC_INSN,	/* qRelocInsn:<hex len> (gdb's answer to our
				   qRelocInsn:from;to request): u.reloc_len */

	RSP_REQ_KIND_COUNT
};

/* One vCont action; `ptid` is {RSP_ID_ALL, RSP_ID_ALL} when none was given. */
enum rsp_resume_kind {
	RSP_RESUME_CONTINUE,	/* c / C<sig> */
	RSP_RESUME_STEP,	/* s / S<sig> */
	RSP_RESUME_STOP,	/* t */
	RSP_RESUME_RANGE,	/* r<start>,<end> */
};
#define RSP_MAX_VCONT_ACTIONS 64
struct rsp_resume_action {
	enum rsp_resume_kind kind;
	int signal;			/* gdb signal number, 0 for none */
	uint64_t range_start, range_end;
	struct rsp_ptid ptid;
};

enum rsp_point_type {
	RSP_POINT_SW_BREAK = 0,
	RSP_POINT_HW_BREAK = 1,
	RSP_POINT_WRITE_WATCH = 2,
	RSP_POINT_READ_WATCH = 3,
	RSP_POINT_ACCESS_WATCH = 4,
};

enum rsp_vfile_op {
	RSP_VFILE_SETFS,	/* pid */
	RSP_VFILE_OPEN,		/* path, flags, mode */
	RSP_VFILE_CLOSE,	/* fd */
	RSP_VFILE_PREAD,	/* fd, count, offset */
	RSP_VFILE_PWRITE,	/* fd, offset, data/len */
	RSP_VFILE_FSTAT,	/* fd */
	RSP_VFILE_UNLINK,	/* path */
	RSP_VFILE_READLINK,	/* path */
};

/*
 * One tracepoint action of a `QTDP:-` packet (and of an upload `A`/`S`
 * record), exactly as gdb encodes it:
 *   R<mask>              collect registers; mask = hex bytes MSB first, bit
 *                        r = gdb regnum r (gdbserver ignores it and records
 *                        the whole block);
 *   M<basereg>,<off>,<len>  collect memory at basereg + off (basereg -1:
 *                        `off` is an absolute address; otherwise `off` is a
 *                        signed 64-bit offset from register basereg);
 *   X<len>,<hex>         evaluate agent-expression bytecode (opaque here);
 *   L                    collect static-tracepoint data ($_sdata).
 */
enum rsp_tp_action_kind {
	RSP_TP_ACTION_REGS = 'R',
	RSP_TP_ACTION_MEM = 'M',
	RSP_TP_ACTION_EXPR = 'X',
	RSP_TP_ACTION_SDATA = 'L',
};
struct rsp_tp_action {
	enum rsp_tp_action_kind kind;
	const uint8_t *bytes;	/* R: mask bytes; X: bytecode; else NULL */
	size_t len;		/* of bytes */
	int32_t basereg;	/* M: -1 = absolute address */
	uint64_t offset;	/* M: address, or offset (two's complement) */
	uint64_t mem_len;	/* M: bytes to collect */
};

/* QTDPsrc string types. */
enum rsp_tp_src_type {
	RSP_TP_SRC_AT,		/* "at": the location spec */
	RSP_TP_SRC_COND,	/* "cond": condition text */
	RSP_TP_SRC_CMD,		/* "cmd": one action line */
};

/* QTFrame variants. */
enum rsp_tframe_kind {
	RSP_TFRAME_NUMBER,	/* QTFrame:<n>: select frame n */
	RSP_TFRAME_NONE,	/* QTFrame:ffffffff (or -1): back to live */
	RSP_TFRAME_PC,		/* QTFrame:pc:<addr>: next frame with PC == lo */
	RSP_TFRAME_TDP,		/* QTFrame:tdp:<n>: next frame of tracepoint */
	RSP_TFRAME_RANGE,	/* QTFrame:range:lo:hi: next lo <= PC <= hi */
	RSP_TFRAME_OUTSIDE,	/* QTFrame:outside:lo:hi: next PC outside */
};

struct rsp_range {
	uint64_t start, end;
};

#define RSP_MAX_ARGV 256
#define RSP_MAX_SYSCALLS 1024

struct rsp_request {
	enum rsp_req_kind kind;
	const char *error;		/* RSP_REQ_INVALID: what was wrong */
	union {
		const char *str;
		int64_t pid;
		int flag;
		struct {
			char op;		/* 'g', 'c' (or 'G'...) */
			struct rsp_ptid ptid;
		} set_thread;
		struct rsp_ptid ptid;
		struct {
			/* signals[i] is true when gdb listed signal i */
			bool set[256];
		} sigs;
		struct {
			bool enable;
			bool any;	/* 1 with no list: every syscall */
			size_t count;
			int nr[RSP_MAX_SYSCALLS];
		} syscalls;
		struct {
			const uint8_t *data;
			size_t len;
		} data;
		struct {
			unsigned int regnum;
			const uint8_t *value;	/* WRITE_REG only */
			size_t len;
		} reg;
		struct {
			uint64_t addr;
			size_t len;
			const uint8_t *data;	/* WRITE_MEM only */
		} mem;
		struct {
			struct rsp_ptid ptid;
			uint64_t offset;	/* in the module's TLS block */
			uint64_t lm;		/* the module's link_map */
		} tls;
		struct {
			uint64_t addr;
			uint64_t len;
			const uint8_t *pattern;
			size_t pattern_len;
		} search;
		struct {
			size_t count;
			struct rsp_resume_action actions[RSP_MAX_VCONT_ACTIONS];
			/* Added by the parser: true for the legacy c/C/s/S
			 * packets, whose one action (ptid {-1,-1}) gdbserver
			 * applies to the Hc thread.  They are refused with an
			 * address argument (INVALID). */
			bool legacy;
		} vcont;
		struct {
			size_t argc;		/* argv[0] = program ("" = default) */
			/* NULL-terminated: argc <= RSP_MAX_ARGV - 1 */
			const char *argv[RSP_MAX_ARGV];
		} argv;
		struct {
			enum rsp_point_type type;
			uint64_t addr;
			unsigned int kind;
			/* Target-side conditions `;X<len>,<bytecode>` and
			 * commands, kept raw for the tracepoint issue. */
			const char *cond_and_cmds;	/* NULL if none */
		} point;
		struct {
			const char *object;	/* "features", "auxv", ... */
			bool write;
			const char *annex;	/* "" when empty */
			uint64_t offset;
			uint64_t length;	/* read */
			const uint8_t *data;	/* write: decoded bytes */
			size_t data_len;
		} xfer;
		struct {
			enum rsp_vfile_op op;
			const char *path;	/* decoded, NUL-terminated */
			int64_t pid;		/* setfs */
			int fd;
			int flags, mode;	/* gdb's open flags and mode */
			uint64_t count;
			uint64_t offset;
			const uint8_t *data;	/* pwrite */
			size_t data_len;
		} vfile;

		/* ---- tracepoints ---- */
		struct {
			uint32_t number;	/* gdb's tracepoint number */
			uint64_t addr;		/* location address */
			bool enabled;		/* E / D */
			uint64_t step_count;	/* while-stepping count */
			uint64_t pass_count;	/* 0 = none */
			bool fast;		/* :F<len> */
			uint32_t fast_len;	/* bytes gdb measured */
			bool is_static;		/* :S */
			const uint8_t *cond;	/* :X bytecode, NULL if none */
			size_t cond_len;
			bool more;		/* trailing `-`: actions follow */
		} tdp;
		struct {
			uint32_t number;
			uint64_t addr;
			/* Leading `S`: these actions (and those of every
			 * later action packet of this tracepoint) are
			 * while-stepping actions. */
			bool stepping;
			size_t count;		/* may be 0 */
			const struct rsp_tp_action *actions;	/* in scratch */
			bool more;		/* trailing `-` */
		} tdp_actions;
		struct {
			uint32_t number;
			uint64_t addr;
			enum rsp_tp_src_type type;
			uint64_t start;		/* offset of this piece */
			uint64_t total_len;	/* length of the whole string */
			const char *text;	/* decoded piece, NUL-terminated */
			size_t len;		/* of this piece */
			bool more;		/* trailing `-` (rare) */
		} tdp_src;
		struct {
			uint32_t number;
			int64_t initial;	/* two's complement on the wire */
			bool builtin;
			const char *name;	/* decoded, without `$` */
		} tdv;
		struct {
			size_t count;
			const struct rsp_range *ranges;	/* in scratch */
		} tro;
		int64_t tbuffer_size;	/* -1 = the target's default */
		struct {
			/* Decoded; NULL if the packet did not name it, ""
			 * if it set it empty. */
			const char *user;
			const char *notes;
			const char *tstop;
		} tnotes;
		struct {
			uint32_t number;
			uint64_t addr;
		} tp_ref;
		uint32_t tsv_number;
		struct {
			enum rsp_tframe_kind kind;
			uint32_t number;	/* NUMBER: frame; TDP: tracepoint */
			uint64_t lo, hi;	/* PC: lo; RANGE/OUTSIDE: lo, hi */
		} tframe;
		struct {
			uint64_t offset;
			uint64_t len;
		} tbuf_read;
		uint64_t reloc_len;
		uint64_t stream_max;
		struct {
			uint64_t offset;	/* where the frames go */
			uint64_t dev, ino;	/* the file the recorder has
						   open (st_dev, st_ino) */
			const char *path;	/* decoded, never empty */
		} probe_file;
		struct {
			uint32_t number;	/* the tracepoint (QTDP) */
			uint64_t addr;		/* its location's address */
			uint64_t offset;	/* from the symbol, or from
						   the library's link-time 0 */
			const char *sym;	/* decoded; "" for none */
			const char *lib;	/* decoded, never empty */
		} pending;
	} u;
	/* Storage for decoded strings and data (G, M, hex-encoded names). */
	uint8_t scratch[RSP_MAX_PAYLOAD];
};

/*
 * Parses `payload` (len bytes, NUL-terminated, modifiable) into `req`.
 * Always returns a request; never reads past `len`.
 */
void rsp_parse(char *payload, size_t len, struct rsp_request *req);

/* Name of a request kind for logs ("vCont", "qXfer"...). */
const char *rsp_req_name(enum rsp_req_kind kind);

/* Writes a thread id as gdb expects it (`p<pid>.<tid>` in multiprocess
 * mode, plain `<tid>` otherwise). */
struct rsp_buf;
void rsp_buf_put_ptid(struct rsp_buf *b, bool multiprocess, int64_t pid,
		      int64_t tid);

#endif
