/*
 * test-rsp-parse.c - rsp_parse() on real gdb 13 packets and broken ones.
 *
 * Each table row is a payload and the request it must become, written as a
 * line of text: describe() below renders a `struct rsp_request` in a fixed
 * form ("m addr=5555 len=10") independently of the parser, and the expected
 * lines were written by reading the packets, so a wrong field shows up as a
 * readable diff.  Valid rows are copied from the transcripts in
 * shared/research (binary bytes that gdb's debug log printed as octal
 * escapes are spelled as C escapes); every packet kind also has malformed
 * variants, which must give "invalid" with a message, and unsupported
 * variants, which must give "unknown".  A last test checks that the table
 * reaches every request kind, so a kind added to rsp-request.h without a
 * test fails here.
 */
#include "config.h"

#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "protocol/rsp.h"
#include "protocol/rsp-request.h"

/* --- Rendering a request -------------------------------------------------- */

struct text {
	char s[8192];
	size_t len;
};

static void add(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void add(struct text *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(t->s + t->len, sizeof(t->s) - t->len, fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < sizeof(t->s) - t->len);
	t->len += n;
}

static void add_hex(struct text *t, const uint8_t *p, size_t n)
{
	assert_true(n == 0 || p != NULL);
	for (size_t i = 0; i < n; i++)
		add(t, "%02x", p[i]);
}

static void add_id(struct text *t, int64_t id)
{
	if (id == RSP_ID_ALL)
		add(t, "-1");
	else
		add(t, "%" PRIx64, (uint64_t)id);
}

static void add_ptid(struct text *t, struct rsp_ptid ptid)
{
	add_id(t, ptid.pid);
	add(t, ".");
	add_id(t, ptid.tid);
}

static void add_list(struct text *t, const bool *set, size_t n)
{
	const char *sep = "";

	for (size_t i = 0; i < n; i++) {
		if (set[i]) {
			add(t, "%s%zx", sep, i);
			sep = ",";
		}
	}
}

static void add_note(struct text *t, const char *label, const char *s)
{
	if (s)
		add(t, "%s[%s]", label, s);
	else
		add(t, "%sNULL", label);
}

static const char *const resume_letters = "cstr";

/* Session and thread requests: strings, pids, ptids, flags, signal sets. */
static bool describe_session(const struct rsp_request *req, struct text *t)
{
	switch (req->kind) {
	case RSP_REQ_QSUPPORTED:
	case RSP_REQ_QSYMBOL:
	case RSP_REQ_ALLOW:
	case RSP_REQ_RCMD:
	case RSP_REQ_ENV_SET:
	case RSP_REQ_ENV_UNSET:
	case RSP_REQ_SET_WORKDIR:
		if (req->u.str)
			add(t, " str=[%s]", req->u.str);
		else
			add(t, " str=NULL");
		break;
	case RSP_REQ_QATTACHED:
	case RSP_REQ_VKILL:
	case RSP_REQ_DETACH:
	case RSP_REQ_VATTACH:
		add(t, " pid=%" PRIx64, (uint64_t)req->u.pid);
		break;
	case RSP_REQ_THREAD_EXTRA:
	case RSP_REQ_THREAD_ALIVE:
		add(t, " ");
		add_ptid(t, req->u.ptid);
		break;
	case RSP_REQ_GET_TLS_ADDR:
		add(t, " ");
		add_ptid(t, req->u.tls.ptid);
		add(t, " offset=%" PRIx64 " lm=%" PRIx64, req->u.tls.offset,
		    req->u.tls.lm);
		break;
	case RSP_REQ_SET_THREAD:
		add(t, " op=%c ", req->u.set_thread.op);
		add_ptid(t, req->u.set_thread.ptid);
		break;
	case RSP_REQ_NONSTOP:
	case RSP_REQ_THREAD_EVENTS:
	case RSP_REQ_DISABLE_RANDOMIZATION:
	case RSP_REQ_STARTUP_WITH_SHELL:
	case RSP_REQ_AGENT:
		add(t, " flag=%d", req->u.flag);
		break;
	case RSP_REQ_PASS_SIGNALS:
	case RSP_REQ_PROGRAM_SIGNALS:
		add(t, " sigs=");
		add_list(t, req->u.sigs.set, 256);
		break;
	case RSP_REQ_CATCH_SYSCALLS:
		add(t, " enable=%d any=%d nr=", req->u.syscalls.enable,
		    req->u.syscalls.any);
		for (size_t i = 0; i < req->u.syscalls.count; i++)
			add(t, "%s%x", i ? "," : "", req->u.syscalls.nr[i]);
		break;
	default:
		return false;
	}
	return true;
}

/* Memory, register and host file requests. */
static bool describe_memory(const struct rsp_request *req, struct text *t)
{
	switch (req->kind) {
	case RSP_REQ_XFER:
		add(t, " object=%s %s annex=[%s] offset=%" PRIx64,
		    req->u.xfer.object, req->u.xfer.write ? "write" : "read",
		    req->u.xfer.annex, req->u.xfer.offset);
		if (req->u.xfer.write) {
			add(t, " data=");
			add_hex(t, req->u.xfer.data, req->u.xfer.data_len);
		} else {
			add(t, " length=%" PRIx64, req->u.xfer.length);
		}
		break;
	case RSP_REQ_SEARCH_MEM:
		add(t, " addr=%" PRIx64 " len=%" PRIx64 " pattern=",
		    req->u.search.addr, req->u.search.len);
		add_hex(t, req->u.search.pattern, req->u.search.pattern_len);
		break;
	case RSP_REQ_MEMORY_REGION:
		add(t, " addr=%" PRIx64, req->u.mem.addr);
		break;
	case RSP_REQ_CRC:
	case RSP_REQ_READ_MEM:
		add(t, " addr=%" PRIx64 " len=%zx", req->u.mem.addr,
		    req->u.mem.len);
		break;
	case RSP_REQ_WRITE_MEM:
		add(t, " addr=%" PRIx64 " len=%zx data=", req->u.mem.addr,
		    req->u.mem.len);
		add_hex(t, req->u.mem.data, req->u.mem.len);
		break;
	case RSP_REQ_WRITE_REGS:
		add(t, " data=");
		add_hex(t, req->u.data.data, req->u.data.len);
		break;
	case RSP_REQ_READ_REG:
		add(t, " regnum=%x", req->u.reg.regnum);
		break;
	case RSP_REQ_WRITE_REG:
		add(t, " regnum=%x value=", req->u.reg.regnum);
		add_hex(t, req->u.reg.value, req->u.reg.len);
		break;
	case RSP_REQ_VFILE: {
		static const char *const ops[] = {
			[RSP_VFILE_SETFS] = "setfs", [RSP_VFILE_OPEN] = "open",
			[RSP_VFILE_CLOSE] = "close", [RSP_VFILE_PREAD] = "pread",
			[RSP_VFILE_PWRITE] = "pwrite", [RSP_VFILE_FSTAT] = "fstat",
			[RSP_VFILE_UNLINK] = "unlink",
			[RSP_VFILE_READLINK] = "readlink",
		};
		add(t, " %s", ops[req->u.vfile.op]);
		switch (req->u.vfile.op) {
		case RSP_VFILE_SETFS:
			add(t, " pid=%" PRIx64, (uint64_t)req->u.vfile.pid);
			break;
		case RSP_VFILE_OPEN:
			add(t, " path=[%s] flags=%x mode=%o", req->u.vfile.path,
			    req->u.vfile.flags, req->u.vfile.mode);
			break;
		case RSP_VFILE_CLOSE:
		case RSP_VFILE_FSTAT:
			add(t, " fd=%d", req->u.vfile.fd);
			break;
		case RSP_VFILE_PREAD:
			add(t, " fd=%d count=%" PRIx64 " offset=%" PRIx64,
			    req->u.vfile.fd, req->u.vfile.count,
			    req->u.vfile.offset);
			break;
		case RSP_VFILE_PWRITE:
			add(t, " fd=%d offset=%" PRIx64 " data=",
			    req->u.vfile.fd, req->u.vfile.offset);
			add_hex(t, req->u.vfile.data, req->u.vfile.data_len);
			break;
		case RSP_VFILE_UNLINK:
		case RSP_VFILE_READLINK:
			add(t, " path=[%s]", req->u.vfile.path);
			break;
		}
		break;
	}
	default:
		return false;
	}
	return true;
}

/* Execution control: resumption, vRun and break/watchpoints. */
static bool describe_execution(const struct rsp_request *req, struct text *t)
{
	switch (req->kind) {
	case RSP_REQ_VCONT:
		for (size_t i = 0; i < req->u.vcont.count; i++) {
			const struct rsp_resume_action *a =
				&req->u.vcont.actions[i];
			add(t, " %c", resume_letters[a->kind]);
			if (a->signal)
				add(t, "%02x", a->signal);
			if (a->kind == RSP_RESUME_RANGE)
				add(t, "[%" PRIx64 ",%" PRIx64 ")",
				    a->range_start, a->range_end);
			add(t, ":");
			add_ptid(t, a->ptid);
		}
		if (req->u.vcont.legacy)
			add(t, " legacy");
		break;
	case RSP_REQ_VRUN:
		add(t, " argc=%zu", req->u.argv.argc);
		for (size_t i = 0; i < req->u.argv.argc; i++)
			add(t, " [%s]", req->u.argv.argv[i]);
		assert_null(req->u.argv.argv[req->u.argv.argc]);
		break;
	case RSP_REQ_INSERT_POINT:
	case RSP_REQ_REMOVE_POINT:
		add(t, " type=%d addr=%" PRIx64 " kind=%x", req->u.point.type,
		    req->u.point.addr, req->u.point.kind);
		if (req->u.point.cond_and_cmds)
			add(t, " tail=[%s]", req->u.point.cond_and_cmds);
		break;
	default:
		return false;
	}
	return true;
}

/* Tracepoint and trace state variable definitions. */
static bool describe_trace_def(const struct rsp_request *req, struct text *t)
{
	switch (req->kind) {
	case RSP_REQ_TDP:
		add(t, " n=%x addr=%" PRIx64 " %c step=%" PRIx64 " pass=%"
		    PRIx64, req->u.tdp.number, req->u.tdp.addr,
		    req->u.tdp.enabled ? 'E' : 'D', req->u.tdp.step_count,
		    req->u.tdp.pass_count);
		if (req->u.tdp.fast)
			add(t, " fast=%x", req->u.tdp.fast_len);
		if (req->u.tdp.is_static)
			add(t, " static");
		if (req->u.tdp.cond) {
			add(t, " cond=");
			add_hex(t, req->u.tdp.cond, req->u.tdp.cond_len);
		}
		if (req->u.tdp.more)
			add(t, " more");
		break;
	case RSP_REQ_TDP_ACTIONS:
		add(t, " n=%x addr=%" PRIx64 "%s", req->u.tdp_actions.number,
		    req->u.tdp_actions.addr,
		    req->u.tdp_actions.stepping ? " stepping" : "");
		for (size_t i = 0; i < req->u.tdp_actions.count; i++) {
			const struct rsp_tp_action *a =
				&req->u.tdp_actions.actions[i];
			add(t, " %c", a->kind);
			if (a->kind == RSP_TP_ACTION_MEM)
				add(t, "%d,%" PRIx64 ",%" PRIx64, a->basereg,
				    a->offset, a->mem_len);
			else
				add_hex(t, a->bytes, a->len);
		}
		if (req->u.tdp_actions.more)
			add(t, " more");
		break;
	case RSP_REQ_TDP_SRC: {
		static const char *const types[] = { "at", "cond", "cmd" };
		add(t, " n=%x addr=%" PRIx64 " %s start=%" PRIx64 " total=%"
		    PRIx64 " text=[%s] len=%zx%s", req->u.tdp_src.number,
		    req->u.tdp_src.addr, types[req->u.tdp_src.type],
		    req->u.tdp_src.start, req->u.tdp_src.total_len,
		    req->u.tdp_src.text, req->u.tdp_src.len,
		    req->u.tdp_src.more ? " more" : "");
		break;
	}
	case RSP_REQ_TDV:
		add(t, " n=%x initial=%" PRId64 " builtin=%d name=[%s]",
		    req->u.tdv.number, req->u.tdv.initial, req->u.tdv.builtin,
		    req->u.tdv.name);
		break;
	case RSP_REQ_TRO:
		for (size_t i = 0; i < req->u.tro.count; i++)
			add(t, " %" PRIx64 "-%" PRIx64,
			    req->u.tro.ranges[i].start,
			    req->u.tro.ranges[i].end);
		break;
	default:
		return false;
	}
	return true;
}

/* Trace run control, frames and buffer requests. */
static bool describe_trace_run(const struct rsp_request *req, struct text *t)
{
	switch (req->kind) {
	case RSP_REQ_TDISCONNECTED:
	case RSP_REQ_TBUFFER_CIRCULAR:
	case RSP_REQ_PROBE_FULL_WAIT:
	case RSP_REQ_PROBE_DETACH_ON_CLOSE:
	case RSP_REQ_PROBE_FULL_DROP:
		add(t, " flag=%d", req->u.flag);
		break;
	case RSP_REQ_TBUFFER_SIZE:
		add(t, " size=%" PRId64, req->u.tbuffer_size);
		break;
	case RSP_REQ_TNOTES:
		add_note(t, " user=", req->u.tnotes.user);
		add_note(t, " notes=", req->u.tnotes.notes);
		add_note(t, " tstop=", req->u.tnotes.tstop);
		break;
	case RSP_REQ_TENABLE:
	case RSP_REQ_TDISABLE:
	case RSP_REQ_TP_STATUS:
		add(t, " n=%x addr=%" PRIx64, req->u.tp_ref.number,
		    req->u.tp_ref.addr);
		break;
	case RSP_REQ_TSTM_AT:
		add(t, " addr=%" PRIx64, req->u.tp_ref.addr);
		break;
	case RSP_REQ_TV:
		add(t, " n=%x", req->u.tsv_number);
		break;
	case RSP_REQ_TFRAME: {
		static const char *const kinds[] = {
			"number", "none", "pc", "tdp", "range", "outside",
		};
		add(t, " %s", kinds[req->u.tframe.kind]);
		switch (req->u.tframe.kind) {
		case RSP_TFRAME_NUMBER:
		case RSP_TFRAME_TDP:
			add(t, " %x", req->u.tframe.number);
			break;
		case RSP_TFRAME_PC:
			add(t, " %" PRIx64, req->u.tframe.lo);
			break;
		case RSP_TFRAME_RANGE:
		case RSP_TFRAME_OUTSIDE:
			add(t, " %" PRIx64 ":%" PRIx64, req->u.tframe.lo,
			    req->u.tframe.hi);
			break;
		case RSP_TFRAME_NONE:
			break;
		}
		break;
	}
	case RSP_REQ_TBUFFER_READ:
		add(t, " offset=%" PRIx64 " len=%" PRIx64,
		    req->u.tbuf_read.offset, req->u.tbuf_read.len);
		break;
	case RSP_REQ_PROBE_FRAMES:
		add(t, " max=%" PRIx64, req->u.stream_max);
		break;
	case RSP_REQ_TSAVE:
		add(t, " str=[%s]", req->u.str);
		break;
	case RSP_REQ_RELOC_INSN:
		add(t, " len=%" PRIx64, req->u.reloc_len);
		break;
	case RSP_REQ_PROBE_FILE:
		add(t, " off=%" PRIx64 " dev=%" PRIx64 " ino=%" PRIx64 " path=[%s]",
		    req->u.probe_file.offset, req->u.probe_file.dev,
		    req->u.probe_file.ino, req->u.probe_file.path);
		break;
	case RSP_REQ_PROBE_PENDING:
		add(t, " n=%u addr=%" PRIx64 " off=%" PRIx64 " sym=[%s] lib=[%s]",
		    req->u.pending.number, req->u.pending.addr,
		    req->u.pending.offset, req->u.pending.sym, req->u.pending.lib);
		break;
	case RSP_REQ_PROBE_HIST_SET:
	case RSP_REQ_PROBE_HIST:
		add(t, " n=%u addr=%" PRIx64, req->u.tp_ref.number, req->u.tp_ref.addr);
		break;
	default:
		return false;
	}
	return true;
}

static void describe(const struct rsp_request *req, struct text *t)
{
	t->len = 0;
	t->s[0] = '\0';
	switch (req->kind) {
	case RSP_REQ_UNKNOWN:
		add(t, "unknown");
		return;
	case RSP_REQ_INVALID:
		add(t, "invalid");
		return;
	default:
		break;
	}
	add(t, "%s", rsp_req_name(req->kind));
	if (!describe_session(req, t) && !describe_memory(req, t) &&
	    !describe_execution(req, t) && !describe_trace_def(req, t))
		describe_trace_run(req, t);
}

/* --- The tables ----------------------------------------------------------- */

struct row {
	const char *payload;
	size_t len;		/* payloads may hold NUL bytes */
	const char *want;
};

#define R(payload, want) { payload, sizeof(payload) - 1, want }

/* Real packets (gdb 13.1 transcripts) and the requests they must give. */
static const struct row valid_rows[] = {
	/* handshake and general queries */
	R("qSupported:multiprocess+;swbreak+;hwbreak+;qRelocInsn+;fork-events+;"
	  "vfork-events+;exec-events+;vContSupported+;QThreadEvents+;no-resumed+;"
	  "memory-tagging+;xmlRegisters=i386",
	  "qSupported str=[multiprocess+;swbreak+;hwbreak+;qRelocInsn+;"
	  "fork-events+;vfork-events+;exec-events+;vContSupported+;"
	  "QThreadEvents+;no-resumed+;memory-tagging+;xmlRegisters=i386]"),
	R("qSupported", "qSupported str=NULL"),
	R("QStartNoAckMode", "QStartNoAckMode"),
	R("!", "!"),
	R("?", "?"),
	R("qAttached:10a4", "qAttached pid=10a4"),
	R("qAttached", "qAttached pid=0"),
	R("qC", "qC"),
	R("qOffsets", "qOffsets"),
	R("qShlibInfoAddr", "qShlibInfoAddr"),
	R("qMemoryRegionInfo:7ffff7fc8000", "qMemoryRegionInfo addr=7ffff7fc8000"),
	R("qSymbol::", "qSymbol str=[:]"),
	R("qSymbol:7f40cee34e30:5f5f6e70746c5f6372656174655f6576656e74",
	  "qSymbol str=[7f40cee34e30:5f5f6e70746c5f6372656174655f6576656e74]"),
	R("qfThreadInfo", "qfThreadInfo"),
	R("qsThreadInfo", "qsThreadInfo"),
	R("qThreadExtraInfo,p2c87.2cc2", "qThreadExtraInfo 2c87.2cc2"),
	R("Tp2c87.2cc2", "T 2c87.2cc2"),
	R("T3241", "T 0.3241"),
	R("Hgp0.0", "H op=g 0.0"),
	R("Hgp321e.3240", "H op=g 321e.3240"),
	R("Hc-1", "H op=c -1.-1"),
	R("Hcp2c87", "H op=c 2c87.-1"),
	R("Hg0", "H op=g 0.0"),
	R("qRcmd,65786974", "qRcmd str=[exit]"),
	R("qRcmd,", "qRcmd str=[]"),
	R("qXfer:features:read:target.xml:0,1000",
	  "qXfer object=features read annex=[target.xml] offset=0 length=1000"),
	R("qXfer:features:read:target.xml:2000,1000",
	  "qXfer object=features read annex=[target.xml] offset=2000 length=1000"),
	R("qXfer:auxv:read::0,1000",
	  "qXfer object=auxv read annex=[] offset=0 length=1000"),
	R("qXfer:exec-file:read:176f:0,1000",
	  "qXfer object=exec-file read annex=[176f] offset=0 length=1000"),
	R("qXfer:libraries-svr4:read:start=7ffff7fc3000;prev=0:0,1000",
	  "qXfer object=libraries-svr4 read annex=[start=7ffff7fc3000;prev=0] offset=0 length=1000"),
	R("qXfer:siginfo:write::0:\x0b\0\0\0}]}\x03",
	  "qXfer object=siginfo write annex=[] offset=0 data=0b0000007d23"),
	R("qSearch:memory:555555558054;4;\0\0\0\0",
	  "qSearch:memory addr=555555558054 len=4 pattern=00000000"),
	R("qSearch:memory:1000;100;}\x04x",
	  "qSearch:memory addr=1000 len=100 pattern=2478"),
	R("qCRC:10c0,231", "qCRC addr=10c0 len=231"),
	R("qGetTLSAddr:p1a2b.1a2c,10,7ffff7ffe2e0",
	  "qGetTLSAddr 1a2b.1a2c offset=10 lm=7ffff7ffe2e0"),
	R("qTStatus", "qTStatus"),

	/* settings */
	R("QNonStop:0", "QNonStop flag=0"),
	R("QNonStop:1", "QNonStop flag=1"),
	R("QPassSignals:e;10;14;17;1a;1b;1c;21;24;25;2c;4c;97;",
	  "QPassSignals sigs=e,10,14,17,1a,1b,1c,21,24,25,2c,4c,97"),
	R("QPassSignals:", "QPassSignals sigs="),
	R("QPassSignals:e;10", "QPassSignals sigs=e,10"),
	R("QProgramSignals:0;1;3;4;6;7;8;ff;",
	  "QProgramSignals sigs=0,1,3,4,6,7,8,ff"),
	R("QThreadEvents:1", "QThreadEvents flag=1"),
	R("QCatchSyscalls:1;1", "QCatchSyscalls enable=1 any=0 nr=1"),
	R("QCatchSyscalls:1;3b;e7;142", "QCatchSyscalls enable=1 any=0 nr=3b,e7,142"),
	R("QCatchSyscalls:1", "QCatchSyscalls enable=1 any=1 nr="),
	R("QCatchSyscalls:0", "QCatchSyscalls enable=0 any=0 nr="),
	R("QDisableRandomization:1", "QDisableRandomization flag=1"),
	R("QStartupWithShell:1", "QStartupWithShell flag=1"),
	R("QEnvironmentReset", "QEnvironmentReset"),
	R("QEnvironmentHexEncoded:464f4f3d626172",
	  "QEnvironmentHexEncoded str=[FOO=bar]"),
	R("QEnvironmentUnset:464f4f", "QEnvironmentUnset str=[FOO]"),
	R("QSetWorkingDir:", "QSetWorkingDir str=[]"),
	R("QSetWorkingDir:2f746d70", "QSetWorkingDir str=[/tmp]"),
	R("QAllow:memory:0;", "QAllow str=[memory:0;]"),
	R("QAgent:1", "QAgent flag=1"),

	/* registers and memory */
	R("g", "g"),
	R("G0100000000000000c0f6dcf7ff7f0000",
	  "G data=0100000000000000c0f6dcf7ff7f0000"),
	R("p10", "p regnum=10"),
	R("P10=c250555555550000", "P regnum=10 value=c250555555550000"),
	R("P39=ffffffffffffffff", "P regnum=39 value=ffffffffffffffff"),
	R("m555555555198,12", "m addr=555555555198 len=12"),
	R("m7ffff7fcc060,1", "m addr=7ffff7fcc060 len=1"),
	R("m0000000000401000,0", "m addr=401000 len=0"),
	R("mffffffffffffffff,100000", "m addr=ffffffffffffffff len=100000"),
	R("M555555558084,4:64000000",
	  "M/X addr=555555558084 len=4 data=64000000"),
	R("M10,0:", "M/X addr=10 len=0 data="),
	R("X40000147,0:", "M/X addr=40000147 len=0 data="),
	R("X555555558084,4:d\0\0\0", "M/X addr=555555558084 len=4 data=64000000"),
	R("X40000147,6:\x8b\x15" "7?@\xc0",
	  "M/X addr=40000147 len=6 data=8b15373f40c0"),
	R("X5555555550c2,10:\xc3" "ff.\x0f\x1f\x84\0\0\0\0\0\x0f\x1f@\0",
	  "M/X addr=5555555550c2 len=10 data=c366662e0f1f8400000000000f1f4000"),
	R("X10,4:}\x03}\x04}]}\x0a", "M/X addr=10 len=4 data=23247d2a"),

	/* execution */
	R("vCont?", "vCont?"),
	R("vCont;c", "vCont c:-1.-1"),
	R("vCont;c:p176f.-1", "vCont c:176f.-1"),
	R("vCont;s:p176f.176f", "vCont s:176f.176f"),
	R("vCont;s:p321e.321e;c", "vCont s:321e.321e c:-1.-1"),
	R("vCont;t", "vCont t:-1.-1"),
	R("vCont;t:p321e.3240", "vCont t:321e.3240"),
	R("vCont;C05:p1.2", "vCont c05:1.2"),
	R("vCont;S0b:p1.2;c:p1.-1", "vCont s0b:1.2 c:1.-1"),
	R("vCont;r555555555157,55555555515f:p176f.176f;c:p176f.-1",
	  "vCont r[555555555157,55555555515f):176f.176f c:176f.-1"),
	R("vCont;c:-1", "vCont c:-1.-1"),
	R("vCont;s:2a", "vCont s:0.2a"),
	R("c", "vCont c:-1.-1 legacy"),
	R("s", "vCont s:-1.-1 legacy"),
	R("C0b", "vCont c0b:-1.-1 legacy"),
	R("S05", "vCont s05:-1.-1 legacy"),
	R("vCtrlC", "vCtrlC"),
	R("vStopped", "vStopped"),
	R("k", "k"),
	R("vKill;1c86", "vKill pid=1c86"),
	R("D", "D pid=0"),
	R("D;2cc4", "D pid=2cc4"),
	R("R", "R"),
	R("R00", "R"),
	R("vRun;2f746d702f7273702f70726f67;33",
	  "vRun argc=2 [/tmp/rsp/prog] [3]"),
	R("vRun;", "vRun argc=1 []"),
	R("vRun;;6869;;", "vRun argc=4 [] [hi] [] []"),
	R("vAttach;347f", "vAttach pid=347f"),

	/* breakpoints */
	R("Z0,7ffff7fcc060,1", "Z type=0 addr=7ffff7fcc060 kind=1"),
	R("Z0,555555555157,1;X12,26000622100222dc16080219162022051327",
	  "Z type=0 addr=555555555157 kind=1 tail=[X12,26000622100222dc16080219162022051327]"),
	R("Z0,55555555517e,1;cmds:1,X35,2500005555",
	  "Z type=0 addr=55555555517e kind=1 tail=[cmds:1,X35,2500005555]"),
	R("Z1,5555555551d0,1", "Z type=1 addr=5555555551d0 kind=1"),
	R("Z1,5555555551d0,1;X3,220127", "Z type=1 addr=5555555551d0 kind=1 tail=[X3,220127]"),
	R("Z2,555555558054,4", "Z type=2 addr=555555558054 kind=4"),
	R("Z3,555555558054,4", "Z type=3 addr=555555558054 kind=4"),
	R("Z4,555555558054,4", "Z type=4 addr=555555558054 kind=4"),
	R("z0,7ffff7fcc060,1", "z type=0 addr=7ffff7fcc060 kind=1"),
	R("z1,5555555551d0,1", "z type=1 addr=5555555551d0 kind=1"),
	R("z2,555555558084,4", "z type=2 addr=555555558084 kind=4"),
	R("z4,555555558054,4", "z type=4 addr=555555558054 kind=4"),

	/* host I/O */
	R("vFile:setfs:0", "vFile setfs pid=0"),
	R("vFile:setfs:176f", "vFile setfs pid=176f"),
	R("vFile:open:2f6c69622f7838365f36342d6c696e75782d676e752f6c6962632e736f2e36,0,0",
	  "vFile open path=[/lib/x86_64-linux-gnu/libc.so.6] flags=0 mode=0"),
	R("vFile:open:2f70726f632f31313339392f7461736b2f31313339392f6d617073,0,1c0",
	  "vFile open path=[/proc/11399/task/11399/maps] flags=0 mode=700"),
	R("vFile:open:2f746d702f78,601,1b6", "vFile open path=[/tmp/x] flags=601 mode=666"),
	R("vFile:close:4", "vFile close fd=4"),
	R("vFile:pread:4,47ff,119b5", "vFile pread fd=4 count=47ff offset=119b5"),
	R("vFile:pwrite:5,10,ab}]\0", "vFile pwrite fd=5 offset=10 data=61627d00"),
	R("vFile:pwrite:5,0,", "vFile pwrite fd=5 offset=0 data="),
	R("vFile:fstat:6", "vFile fstat fd=6"),
	R("vFile:unlink:2f746d702f78", "vFile unlink path=[/tmp/x]"),
	R("vFile:readlink:2f70726f632f73656c662f657865",
	  "vFile readlink path=[/proc/self/exe]"),

	/* tracepoints (rsp-transcript-trace.txt, -tenable-terror-tfull.txt,
	 * -disconnected-reconnect.txt, -ftrace.txt) */
	R("QTinit", "QTinit"),
	R("QTDP:1:0000555555555157:E:0:0-",
	  "QTDP n=1 addr=555555555157 E step=0 pass=0 more"),
	R("QTDP:3:000055555555517e:D:0:0-",
	  "QTDP n=3 addr=55555555517e D step=0 pass=0 more"),
	R("QTDP:2:00005555555551da:E:2:3:X13,26000622100222e816080219162022052b1427-",
	  "QTDP n=2 addr=5555555551da E step=2 pass=3 "
	  "cond=26000622100222e816080219162022052b1427 more"),
	R("QTDP:2:000000000040115a:E:0:0:F6:X13,26000622100222dc16080219162022052b1427-",
	  "QTDP n=2 addr=40115a E step=0 pass=0 fast=6 "
	  "cond=26000622100222dc16080219162022052b1427 more"),
	R("QTDP:3:0000000000401165:E:0:0:F6-",
	  "QTDP n=3 addr=401165 E step=0 pass=0 fast=6 more"),
	R("QTDP:5:401000:E:0:0:S", "QTDP n=5 addr=401000 E step=0 pass=0 static"),
	R("QTDP:5:401000:E:1:0:X2,2227:F5",	/* options in any order */
	  "QTDP n=5 addr=401000 E step=1 pass=0 fast=5 cond=2227"),
	R("QTDP:-2:0000555555555157:R0fffffffffffffffffffffffffffffffffffff-",
	  "QTDP:- n=2 addr=555555555157 R0fffffffffffffffffffffffffffffffffffff more"),
	R("QTDP:-2:0000555555555157:X0000000C,2c000222010216402d000227X00000012,"
	  "26000622100222dc1608022d000319162027",
	  "QTDP:- n=2 addr=555555555157 X2c000222010216402d000227 "
	  "X26000622100222dc1608022d000319162027"),
	R("QTDP:-2:000000000040115a:M-1,404084,4X0000000F,26000622100222dc16080222040c27"
	  "X0000000C,2c000222010216402d000227",
	  "QTDP:- n=2 addr=40115a M-1,404084,4 X26000622100222dc16080222040c27 "
	  "X2c000222010216402d000227"),
	R("QTDP:-3:00005555555551da:SR010080",
	  "QTDP:- n=3 addr=5555555551da stepping R010080"),
	R("QTDP:-4:000055555555517e:L-", "QTDP:- n=4 addr=55555555517e L more"),
	R("QTDP:-4:000055555555517e:M6,ffffffffffffffe8,8R40",
	  "QTDP:- n=4 addr=55555555517e M6,ffffffffffffffe8,8 R40"),
	R("QTDP:-4:000055555555517e:R7", "QTDP:- n=4 addr=55555555517e R07"),
	R("QTDP:-4:1000:S-", "QTDP:- n=4 addr=1000 stepping more"),
	R("QTDPsrc:1:555555555157:at:0:7:636f6d70757465",
	  "QTDPsrc n=1 addr=555555555157 at start=0 total=7 text=[compute] len=7"),
	R("QTDPsrc:3:5555555551da:cond:0:5:69203e2035",
	  "QTDPsrc n=3 addr=5555555551da cond start=0 total=5 text=[i > 5] len=5"),
	R("QTDPsrc:2:40115a:cmd:0:19:636f6c6c6563742024726567732c20612c20636f756e746572",
	  "QTDPsrc n=2 addr=40115a cmd start=0 total=19 "
	  "text=[collect $regs, a, counter] len=19"),
	R("QTDPsrc:2:40115a:cmd:4:8:6374-",
	  "QTDPsrc n=2 addr=40115a cmd start=4 total=8 text=[ct] len=2 more"),
	R("QTDV:1:0000000000000000:1:74726163655f74696d657374616d70",
	  "QTDV n=1 initial=0 builtin=1 name=[trace_timestamp]"),
	R("QTDV:2:0000000000000000:0:68697473",
	  "QTDV n=2 initial=0 builtin=0 name=[hits]"),
	R("QTDV:3:fffffffffffffffe:0:6e", "QTDV n=3 initial=-2 builtin=0 name=[n]"),
	R("QTro:0000000000000318,0000000000000334:0000000000000338,0000000000000358",
	  "QTro 318-334 338-358"),
	R("QTDisconnected:1", "QTDisconnected flag=1"),
	R("QTDisconnected:0", "QTDisconnected flag=0"),
	R("QTBuffer:circular:1", "QTBuffer:circular flag=1"),
	R("QTBuffer:size:30d40", "QTBuffer:size size=200000"),
	R("QTBuffer:size:-1", "QTBuffer:size size=-1"),
	R("QTNotes:user:616c696365;notes:73746172742d6e6f7465732d68657265;",
	  "QTNotes user=[alice] notes=[start-notes-here] tstop=NULL"),
	R("QTNotes:tstop:73746f70706564206279206d65;",
	  "QTNotes user=NULL notes=NULL tstop=[stopped by me]"),
	R("QTNotes:user:;notes:;", "QTNotes user=[] notes=[] tstop=NULL"),
	R("QTNotes:other:6162;user:61", "QTNotes user=[a] notes=NULL tstop=NULL"),
	R("QTStart", "QTStart"),
	R("QTStop", "QTStop"),
	R("QTEnable:3:000055555555517e", "QTEnable n=3 addr=55555555517e"),
	R("QTDisable:3:000055555555517e", "QTDisable n=3 addr=55555555517e"),
	R("qTP:2:555555555157", "qTP n=2 addr=555555555157"),
	R("qTV:1", "qTV n=1"),
	R("qTfP", "qTfP"),
	R("qTsP", "qTsP"),
	R("qTfV", "qTfV"),
	R("qTsV", "qTsV"),
	R("qTMinFTPILen", "qTMinFTPILen"),
	R("qTfSTM", "qTfSTM"),
	R("qTsSTM", "qTsSTM"),
	R("qTSTMat:401136", "qTSTMat addr=401136"),
	R("QTFrame:0", "QTFrame number 0"),
	R("QTFrame:1c", "QTFrame number 1c"),
	R("QTFrame:ffffffff", "QTFrame none"),
	R("QTFrame:-1", "QTFrame none"),
	R("QTFrame:pc:555555555157", "QTFrame pc 555555555157"),
	R("QTFrame:tdp:3", "QTFrame tdp 3"),
	R("QTFrame:range:555555555150:55555555515f",
	  "QTFrame range 555555555150:55555555515f"),
	R("QTFrame:outside:555555555150:55555555515f",
	  "QTFrame outside 555555555150:55555555515f"),
	R("qTBuffer:0,7d0", "qTBuffer offset=0 len=7d0"),
	R("qTBuffer:10582,a", "qTBuffer offset=10582 len=a"),
	R("QTSave:2f746d702f7273702f74726163652d72656d6f74652e7466",
	  "QTSave str=[/tmp/rsp/trace-remote.tf]"),
	R("qRelocInsn:6", "qRelocInsn len=6"),
	R("qprobe.frames:3ff0", "qprobe.frames max=3ff0"),
	R("Qprobe.file:1a3f;fd01;8c2d1;2f746d702f782e7466696c65",
	  "Qprobe.file off=1a3f dev=fd01 ino=8c2d1 path=[/tmp/x.tfile]"),
	R("qprobe.fwrite", "qprobe.fwrite"),
	R("Qprobe.fullwait:1", "Qprobe.fullwait flag=1"),
	R("Qprobe.fullwait:0", "Qprobe.fullwait flag=0"),
	R("Qprobe.detachonclose:1", "Qprobe.detachonclose flag=1"),
	R("Qprobe.detachonclose:0", "Qprobe.detachonclose flag=0"),
	R("Qprobe.fulldrop:1", "Qprobe.fulldrop flag=1"),
	R("qprobe.lost", "qprobe.lost"),
	R("qprobe.stats", "qprobe.stats"),
	R("qprobe.salvage", "qprobe.salvage"),
	/* _json, PyInit__json + 4 */
	R("Qprobe.pending:3:2:4:5079496e69745f5f6a736f6e:5f6a736f6e",
	  "Qprobe.pending n=3 addr=2 off=4 sym=[PyInit__json] lib=[_json]"),
	R("Qprobe.pending:1:1139:0::6c6962742e736f",
	  "Qprobe.pending n=1 addr=1139 off=0 sym=[] lib=[libt.so]"),
	R("Qprobe.hist:3:401136", "Qprobe.hist n=3 addr=401136"),
	R("qprobe.hist:7fff:7f0012345678", "qprobe.hist n=32767 addr=7f0012345678"),
	R("qprobe.libevents", "qprobe.libevents"),
};

/* Packets we must not claim to support: gdb needs the empty reply. */
static const struct row unknown_rows[] = {
	R("", "unknown"),
	R("vMustReplyEmpty", "unknown"),
	R("qTfPx", "unknown"),
	R("qTsVx", "unknown"),
	R("QTinitx", "unknown"),
	R("QTStarting", "unknown"),
	R("qTfSTMx", "unknown"),
	R("QTBuffer:foo:1", "unknown"),
	R("QTDPx", "unknown"),
	R("QTinit1", "unknown"),
	R("QTStop1", "unknown"),
	R("qCx", "unknown"),
	R("qTStatusX", "unknown"),
	R("qprobe.lost:1", "unknown"),
	R("qprobe.salvage:1", "unknown"),
	R("qprobe.stats:1", "unknown"),
	R("qprobe.libevents:1", "unknown"),
	R("vCont", "unknown"),
	R("vContX", "unknown"),
	R("qSupportedX", "unknown"),
	R("qSearch:foo:1;2;3", "unknown"),
	R("vFile:stat:2f", "unknown"),
	R("vFile:lstat:2f", "unknown"),
	R("Z5,1000,1", "unknown"),
	R("z7,1000,1", "unknown"),
	R("x1000,10", "unknown"),
	R("b9600", "unknown"),
	R("\x03", "unknown"),
};

/* Known packets with broken arguments: reply E.<message>. */
static const struct row invalid_rows[] = {
	R("!x", "invalid"),
	R("?1", "invalid"),
	R("qAttached:", "invalid"),
	R("qAttached:xyz", "invalid"),
	R("qAttached:10a4;", "invalid"),
	R("qThreadExtraInfo,", "invalid"),
	R("qThreadExtraInfo,pq", "invalid"),
	R("T", "invalid"),
	R("Tp1.2x", "invalid"),
	R("Tp1.-2", "invalid"),
	R("Tp-", "invalid"),
	R("T10000000000000000", "invalid"),	/* tid over 64 bits */
	R("T8000000000000000", "invalid"),	/* tid over int64 */
	R("H", "invalid"),
	R("Hg", "invalid"),
	R("Hx1", "invalid"),
	R("Hgp1.", "invalid"),
	R("qRcmd,6", "invalid"),
	R("qRcmd,zz", "invalid"),
	R("qRcmd,6100", "invalid"),			/* embedded NUL */
	R("qXfer:", "invalid"),
	R("qXfer::read::0,1", "invalid"),
	R("qXfer:auxv", "invalid"),
	R("qXfer:auxv:peek::0,1", "invalid"),
	R("qXfer:auxv:read:", "invalid"),
	R("qXfer:auxv:read::0", "invalid"),
	R("qXfer:auxv:read::0,", "invalid"),
	R("qXfer:auxv:read::,10", "invalid"),
	R("qXfer:auxv:read::0,1000x", "invalid"),
	R("qXfer:auxv:read::0,1000:", "invalid"),
	R("qXfer:siginfo:write::0", "invalid"),
	R("qXfer:siginfo:write::0:ab}", "invalid"),
	R("qSearch:memory:1000;10", "invalid"),
	R("qSearch:memory:1000,10;ab", "invalid"),
	R("qSearch:memory:;10;ab", "invalid"),
	R("qSearch:memory:1000;10;}", "invalid"),
	R("qCRC:10c0", "invalid"),
	R("qMemoryRegionInfo:", "invalid"),
	R("qMemoryRegionInfo:12g", "invalid"),
	R("qGetTLSAddr:p1.1,10", "invalid"),
	R("qGetTLSAddr:p1.1,10,", "invalid"),
	R("qGetTLSAddr:,10,20", "invalid"),
	R("qGetTLSAddr:p1.1,10,20,", "invalid"),
	R("qCRC:10c0,", "invalid"),
	R("qCRC:10c0,231,", "invalid"),
	R("QNonStop:", "invalid"),
	R("QNonStop:2", "invalid"),
	R("QNonStop:01", "invalid"),
	R("QPassSignals:e;;10", "invalid"),
	R("QPassSignals:;", "invalid"),
	R("QPassSignals:100;", "invalid"),		/* signal over 255 */
	R("QPassSignals:e,10", "invalid"),
	R("QProgramSignals:x", "invalid"),
	R("QThreadEvents:yes", "invalid"),
	R("QCatchSyscalls:", "invalid"),
	R("QCatchSyscalls:2", "invalid"),
	R("QCatchSyscalls:0;1", "invalid"),
	R("QCatchSyscalls:1;", "invalid"),
	R("QCatchSyscalls:1;1;", "invalid"),
	R("QCatchSyscalls:1;80000000", "invalid"),	/* over INT_MAX */
	R("QDisableRandomization:", "invalid"),
	R("QStartupWithShell:x", "invalid"),
	R("QEnvironmentHexEncoded:464", "invalid"),
	R("QEnvironmentHexEncoded:46g0", "invalid"),
	R("QEnvironmentUnset:00", "invalid"),
	R("QSetWorkingDir:2", "invalid"),
	R("QAgent:", "invalid"),
	R("g0", "invalid"),
	R("G", "invalid"),
	R("G012", "invalid"),
	R("G01zz", "invalid"),
	R("p", "invalid"),
	R("p1x", "invalid"),
	R("p100000000", "invalid"),			/* over UINT_MAX */
	R("P10", "invalid"),
	R("P10=", "invalid"),
	R("P=00", "invalid"),
	R("P10=0", "invalid"),
	R("m", "invalid"),
	R("m1000", "invalid"),
	R("m1000,", "invalid"),
	R("m,10", "invalid"),
	R("m1000,10x", "invalid"),
	R("m1000;10", "invalid"),
	R("m-1000,10", "invalid"),
	R("m10000000000000000,1", "invalid"),	/* 17 significant digits */
	R("m1000,100001", "invalid"),		/* over 1 MiB */
	R("m1000,ffffffffffffffff", "invalid"),
	R("M1000,2", "invalid"),
	R("M1000,2:", "invalid"),
	R("M1000,2:abc", "invalid"),
	R("M1000,2:abcdef", "invalid"),
	R("M1000,2:abzz", "invalid"),
	R("M1000,100001:", "invalid"),
	R("X1000,1", "invalid"),
	R("X1000,2:a", "invalid"),
	R("X1000,1:ab", "invalid"),
	R("X1000,1:}", "invalid"),
	R("vCont;", "invalid"),
	R("vCont;x", "invalid"),
	R("vCont;c;", "invalid"),
	R("vCont;c:", "invalid"),
	R("vCont;c:p", "invalid"),
	R("vCont;C", "invalid"),
	R("vCont;C100", "invalid"),			/* signal over 255 */
	R("vCont;S:p1.1", "invalid"),
	R("vCont;r1000", "invalid"),
	R("vCont;r1000,", "invalid"),
	R("vCont;r,2000", "invalid"),
	R("vCont;cs", "invalid"),
	R("vCont;c:p1.2x", "invalid"),
	R("c1000", "invalid"),			/* address resumption */
	R("s1000", "invalid"),
	R("C05;1000", "invalid"),
	R("S05;1000", "invalid"),
	R("cx", "invalid"),
	R("C", "invalid"),
	R("C05;", "invalid"),
	R("C05x", "invalid"),
	R("S100", "invalid"),
	R("k9", "invalid"),
	R("vKill;", "invalid"),
	R("vKill;p1", "invalid"),
	R("D;", "invalid"),
	R("D1", "invalid"),
	R("D;1x", "invalid"),
	R("Rxx", "invalid"),
	R("vRun;2", "invalid"),
	R("vRun;6162;zz", "invalid"),
	R("vRun;00", "invalid"),
	R("vAttach;", "invalid"),
	R("vAttach;-1", "invalid"),
	R("Z", "invalid"),
	R("Z0", "invalid"),
	R("Z0,1000", "invalid"),
	R("Z0,1000,", "invalid"),
	R("Z0,,1", "invalid"),
	R("Zx,1000,1", "invalid"),
	R("Z0,1000,1;", "invalid"),
	R("Z0,1000,1x", "invalid"),
	R("Z0,1000,100000000", "invalid"),		/* kind over UINT_MAX */
	R("Z2,1000,4;X1,00", "invalid"),		/* no conditions on watchpoints */
	R("z0,1000,1;X1,00", "invalid"),
	R("z0,1000", "invalid"),
	R("vFile:", "invalid"),		/* no op: a malformed vFile, not a new one */
	R("vFile:setfs:", "invalid"),
	R("vFile:setfs:1,2", "invalid"),
	R("vFile:open:2f78", "invalid"),
	R("vFile:open:2f78,0", "invalid"),
	R("vFile:open:,0,0", "invalid"),
	R("vFile:open:2f7,0,0", "invalid"),
	R("vFile:open:2f0078,0,0", "invalid"),	/* embedded NUL in path */
	R("vFile:open:2f78,80000000,0", "invalid"),
	R("vFile:open:2f78,0,0,", "invalid"),
	R("vFile:close:", "invalid"),
	R("vFile:close:4,", "invalid"),
	R("vFile:pread:4,47ff", "invalid"),
	R("vFile:pread:4,,0", "invalid"),
	R("vFile:pwrite:4,0", "invalid"),
	R("vFile:pwrite:4,0,}", "invalid"),
	R("vFile:fstat:x", "invalid"),
	R("vFile:unlink:", "invalid"),
	R("vFile:readlink:2f7", "invalid"),
	R("QTDP:", "invalid"),
	R("QTDP:1", "invalid"),
	R("QTDP:1:1000", "invalid"),
	R("QTDP:1:1000:X:0:0", "invalid"),		/* enable flag */
	R("QTDP:1:1000:E:0", "invalid"),
	R("QTDP:1:1000:E:0:0:", "invalid"),		/* empty option */
	R("QTDP:1:1000:E:0:0:Q", "invalid"),		/* unknown option */
	R("QTDP:1:1000:E:0:0:X3,2227", "invalid"),	/* short bytecode */
	R("QTDP:1:1000:E:0:0:X2,22zz", "invalid"),
	R("QTDP:1:1000:E:0:0:X2", "invalid"),
	R("QTDP:1:1000:E:0:0:F", "invalid"),
	R("QTDP:1:1000:E:0:0:S:S", "invalid"),		/* repeated option */
	R("QTDP:1:1000:E:0:0--", "invalid"),
	R("QTDP:100000000:1000:E:0:0", "invalid"),	/* number over 32 bits */
	R("QTDP:-1:1000", "invalid"),
	R("QTDP:-1:1000:Q", "invalid"),		/* unknown action */
	R("QTDP:-1:1000:R", "invalid"),		/* empty mask */
	R("QTDP:-1:1000:M-2,0,4", "invalid"),
	R("QTDP:-1:1000:M-1,0", "invalid"),
	R("QTDP:-1:1000:M-1,,4", "invalid"),
	R("QTDP:-1:1000:X2,22", "invalid"),
	R("QTDP:-1:1000:R40-x", "invalid"),
	R("QTDP:-1:1000:RS40", "invalid"),		/* S only first */
	R("QTDPsrc:1:1000:at:0:7", "invalid"),
	R("QTDPsrc:1:1000:foo:0:1:61", "invalid"),
	R("QTDPsrc:1:1000:at:0:1:616", "invalid"),
	R("QTDPsrc:1:1000:at:0:1:6162", "invalid"),	/* longer than total */
	R("QTDPsrc:1:1000:at:5:4:61", "invalid"),
	R("QTDPsrc:1:1000:at:0:2:6100", "invalid"),	/* embedded NUL */
	R("QTDV:1:0:1:", "invalid"),			/* no name */
	R("QTDV:1:0:2:61", "invalid"),
	R("QTDV:1::0:61", "invalid"),
	R("QTDV:1:0:0:6", "invalid"),
	R("QTro:", "invalid"),
	R("QTro:1000", "invalid"),
	R("QTro:1000,2000:", "invalid"),
	R("QTDisconnected:2", "invalid"),
	R("QTBuffer:circular:", "invalid"),
	R("QTBuffer:size:-2", "invalid"),
	R("QTBuffer:size:", "invalid"),
	R("QTBuffer:size:10x", "invalid"),
	R("QTNotes:user", "invalid"),
	R("QTNotes:user:6", "invalid"),
	R("QTNotes::61", "invalid"),
	R("QTEnable:3", "invalid"),
	R("QTDisable:3:", "invalid"),
	R("qTP:2", "invalid"),
	R("qTP:2:1000:", "invalid"),
	R("qTV:", "invalid"),
	R("qTV:1:2", "invalid"),
	R("qTSTMat:", "invalid"),
	R("QTFrame:", "invalid"),
	R("QTFrame:100000000", "invalid"),
	R("QTFrame:pc:", "invalid"),
	R("QTFrame:tdp:x", "invalid"),
	R("QTFrame:range:1000", "invalid"),
	R("QTFrame:outside:1000:", "invalid"),
	R("QTFrame:-2", "invalid"),
	R("qTBuffer:0", "invalid"),
	R("qprobe.frames:", "invalid"),
	R("Qprobe.file:1a3f;fd01;8c2d1;", "invalid"),	/* no path */
	R("Qprobe.file:1a3f;fd01;2f78", "invalid"),	/* no inode */
	R("Qprobe.file:1a3f;fd01;8c2d1;2f7", "invalid"),	/* odd hex */
	R("Qprobe.pending:1:1139:0::", "invalid"),	/* no library */
	R("Qprobe.hist:3", "invalid"),			/* no address */
	R("Qprobe.hist:3:401136:", "invalid"),		/* trailing */
	R("qprobe.hist:", "invalid"),
	R("qprobe.hist:x:1", "invalid"),
	R("Qprobe.pending:1:1139:0:6c", "invalid"),	/* one field short */
	R("Qprobe.pending:1:1139:0:6:6c", "invalid"),	/* odd hex */
	R("Qprobe.pending:1:1139::61:6c", "invalid"),	/* no offset */
	R("qprobe.frames:10,", "invalid"),
	R("qprobe.frames:zz", "invalid"),
	R("Qprobe.fullwait:", "invalid"),
	R("Qprobe.fullwait:2", "invalid"),
	R("Qprobe.fullwait:10", "invalid"),
	R("Qprobe.detachonclose:", "invalid"),
	R("Qprobe.detachonclose:yes", "invalid"),
	R("Qprobe.fulldrop:2", "invalid"),
	R("qTBuffer:0,", "invalid"),
	R("QTSave:", "invalid"),
	R("QTSave:2f7", "invalid"),
	R("qRelocInsn:", "invalid"),
	R("qRelocInsn:6;7", "invalid"),
};

/* A modifiable copy of a row's payload, NUL-terminated like the framer's. */
static char *dup_payload(const struct row *r)
{
	char *copy = malloc(r->len + 1);

	assert_non_null(copy);
	memcpy(copy, r->payload, r->len);
	copy[r->len] = '\0';
	return copy;
}

static void check_row(const struct row *r)
{
	/* Parse a private copy exactly `len` bytes long plus the NUL the
	 * framer adds, so that ASan builds catch a read past it. */
	char *copy = dup_payload(r);
	static struct rsp_request req;
	struct text t;

	memset(&req, 0x5a, sizeof(req));
	rsp_parse(copy, r->len, &req);
	describe(&req, &t);
	if (strcmp(t.s, r->want) != 0) {
		print_error("payload: %.*s\n    got: %s\n   want: %s\n",
			    (int)r->len, r->payload, t.s, r->want);
		fail();
	}
	if (req.kind == RSP_REQ_INVALID) {
		assert_non_null(req.error);
		assert_true(strlen(req.error) > 0);
	} else {
		assert_null(req.error);
	}
	free(copy);
}

static void check_rows(const struct row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		check_row(&rows[i]);
}

#define ROWS(a) a, sizeof(a) / sizeof(a[0])

static void test_parse_valid(void **state)
{
	check_rows(ROWS(valid_rows));
}

static void test_parse_unknown(void **state)
{
	check_rows(ROWS(unknown_rows));
}

static void test_parse_invalid(void **state)
{
	check_rows(ROWS(invalid_rows));
}

/* Every request kind is reached by some valid row. */
static void test_every_kind_tested(void **state)
{
	bool seen[RSP_REQ_KIND_COUNT] = { false };
	static struct rsp_request req;

	for (size_t i = 0; i < sizeof(valid_rows) / sizeof(valid_rows[0]); i++) {
		char *copy = dup_payload(&valid_rows[i]);
		rsp_parse(copy, valid_rows[i].len, &req);
		seen[req.kind] = true;
		free(copy);
	}
	seen[RSP_REQ_UNKNOWN] = seen[RSP_REQ_INVALID] = true;
	for (int k = 0; k < RSP_REQ_KIND_COUNT; k++)
		if (!seen[k])
			fail_msg("no valid row parses to %s (kind %d)",
				 rsp_req_name(k), k);
}

static void test_req_names(void **state)
{
	for (int k = 0; k < RSP_REQ_KIND_COUNT; k++) {
		const char *name = rsp_req_name(k);
		assert_non_null(name);
		assert_true(name[0] != '?' || k == RSP_REQ_HALT_REASON);
		for (int j = 0; j < k; j++)
			assert_string_not_equal(name, rsp_req_name(j));
	}
	assert_string_equal(rsp_req_name(RSP_REQ_VCONT), "vCont");
	assert_non_null(rsp_req_name(RSP_REQ_KIND_COUNT));
	assert_non_null(rsp_req_name((enum rsp_req_kind)-1));
}

/* The parser stops at `len`, whatever the buffer holds beyond it. */
static void test_parse_respects_len(void **state)
{
	static struct rsp_request req;
	char buf[] = "m1000,10xyz";

	rsp_parse(buf, 8, &req);		/* "m1000,10" */
	assert_int_equal(req.kind, RSP_REQ_READ_MEM);
	assert_int_equal(req.u.mem.len, 0x10);
	rsp_parse(buf, 6, &req);		/* "m1000," */
	assert_int_equal(req.kind, RSP_REQ_INVALID);

	char q[] = "qCRC:1,2";
	rsp_parse(q, 2, &req);			/* "qC" */
	assert_int_equal(req.kind, RSP_REQ_QC);

	/* A NUL inside the length is data, not the end of the payload. */
	char z[] = "qRcmd,61\0" "62";
	rsp_parse(z, sizeof(z) - 1, &req);
	assert_int_equal(req.kind, RSP_REQ_INVALID);
	char x[] = "X10,3:a\0b";
	rsp_parse(x, sizeof(x) - 1, &req);
	assert_int_equal(req.kind, RSP_REQ_WRITE_MEM);
	assert_memory_equal(req.u.mem.data, "a\0b", 3);
}

/* Limits of the fixed-size arrays: at the limit works, one over refused. */
static void test_parse_limits(void **state)
{
	static struct rsp_request req;
	static char buf[RSP_MAX_PAYLOAD * 4];
	size_t len;

	/* vCont with RSP_MAX_VCONT_ACTIONS actions, then one more. */
	len = sprintf(buf, "vCont");
	for (int i = 0; i < RSP_MAX_VCONT_ACTIONS; i++)
		len += sprintf(buf + len, ";s:p1.%x", i + 1);
	rsp_parse(buf, len, &req);
	assert_int_equal(req.kind, RSP_REQ_VCONT);
	assert_int_equal(req.u.vcont.count, RSP_MAX_VCONT_ACTIONS);
	assert_int_equal(req.u.vcont.actions[RSP_MAX_VCONT_ACTIONS - 1].ptid.tid,
			 RSP_MAX_VCONT_ACTIONS);
	len += sprintf(buf + len, ";c");
	rsp_parse(buf, len, &req);
	assert_int_equal(req.kind, RSP_REQ_INVALID);

	/* vRun: argv stays NULL-terminated, so RSP_MAX_ARGV - 1 entries. */
	len = sprintf(buf, "vRun;");
	for (int i = 0; i < RSP_MAX_ARGV - 1; i++)
		len += sprintf(buf + len, "%s61", i ? ";" : "");
	rsp_parse(buf, len, &req);
	assert_int_equal(req.kind, RSP_REQ_VRUN);
	assert_int_equal(req.u.argv.argc, RSP_MAX_ARGV - 1);
	assert_string_equal(req.u.argv.argv[RSP_MAX_ARGV - 2], "a");
	assert_null(req.u.argv.argv[RSP_MAX_ARGV - 1]);
	len += sprintf(buf + len, ";61");
	rsp_parse(buf, len, &req);
	assert_int_equal(req.kind, RSP_REQ_INVALID);

	/* QCatchSyscalls with RSP_MAX_SYSCALLS numbers, then one more. */
	len = sprintf(buf, "QCatchSyscalls:1");
	for (int i = 0; i < RSP_MAX_SYSCALLS; i++)
		len += sprintf(buf + len, ";%x", i);
	rsp_parse(buf, len, &req);
	assert_int_equal(req.kind, RSP_REQ_CATCH_SYSCALLS);
	assert_int_equal(req.u.syscalls.count, RSP_MAX_SYSCALLS);
	assert_int_equal(req.u.syscalls.nr[RSP_MAX_SYSCALLS - 1],
			 RSP_MAX_SYSCALLS - 1);
	len += sprintf(buf + len, ";1");
	rsp_parse(buf, len, &req);
	assert_int_equal(req.kind, RSP_REQ_INVALID);

	/* A full-size G packet decodes; one whose data cannot fit scratch
	 * (only possible past PacketSize) is refused, not overflowed. */
	len = sprintf(buf, "G");
	memset(buf + len, 'a', RSP_MAX_PAYLOAD - 2);
	len += RSP_MAX_PAYLOAD - 2;
	rsp_parse(buf, len, &req);
	assert_int_equal(req.kind, RSP_REQ_WRITE_REGS);
	assert_int_equal(req.u.data.len, (RSP_MAX_PAYLOAD - 2) / 2);
	assert_int_equal(req.u.data.data[0], 0xaa);
	len = 1 + 2 * (RSP_MAX_PAYLOAD + 2);
	memset(buf + 1, 'b', len - 1);
	rsp_parse(buf, len, &req);
	assert_int_equal(req.kind, RSP_REQ_INVALID);

	/* m at exactly 1 MiB is accepted (the agent clamps). */
	len = sprintf(buf, "m1000,%x", 1 << 20);
	rsp_parse(buf, len, &req);
	assert_int_equal(req.kind, RSP_REQ_READ_MEM);
	assert_int_equal(req.u.mem.len, 1 << 20);
}

/* Leading zeros are not an overflow: gdb pads addresses to 16 digits. */
static void test_parse_leading_zeros(void **state)
{
	static struct rsp_request req;
	char buf[] = "m00000000000000000000555555555157,0001";

	rsp_parse(buf, sizeof(buf) - 1, &req);
	assert_int_equal(req.kind, RSP_REQ_READ_MEM);
	assert_true(req.u.mem.addr == 0x555555555157ull);
	assert_int_equal(req.u.mem.len, 1);
}

/* INVALID messages say which packet was wrong. */
static void test_parse_messages(void **state)
{
	static struct rsp_request req;
	char m[] = "m1000";
	char c[] = "c1000";
	char big[] = "m0,200000";

	rsp_parse(m, strlen(m), &req);
	assert_int_equal(req.kind, RSP_REQ_INVALID);
	assert_non_null(strstr(req.error, "m packet"));
	rsp_parse(c, strlen(c), &req);
	assert_non_null(strstr(req.error, "address"));
	rsp_parse(big, strlen(big), &req);
	assert_non_null(strstr(req.error, "too large"));
	/* Messages must survive E.<text>: no framing characters. */
	for (size_t i = 0; i < sizeof(invalid_rows) / sizeof(invalid_rows[0]); i++) {
		char *copy = dup_payload(&invalid_rows[i]);
		rsp_parse(copy, invalid_rows[i].len, &req);
		assert_int_equal(req.kind, RSP_REQ_INVALID);
		assert_null(strpbrk(req.error, "#$}*\n"));
		free(copy);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_valid),
		cmocka_unit_test(test_parse_unknown),
		cmocka_unit_test(test_parse_invalid),
		cmocka_unit_test(test_every_kind_tested),
		cmocka_unit_test(test_req_names),
		cmocka_unit_test(test_parse_respects_len),
		cmocka_unit_test(test_parse_limits),
		cmocka_unit_test(test_parse_leading_zeros),
		cmocka_unit_test(test_parse_messages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
