/*
 * test-rsp-reply.c - every reply rendered from a typed value.
 *
 * The expected bytes are gdb's: copied from the gdb 13 / gdbserver 13
 * transcripts in shared/research where the agent answers as gdbserver does
 * (stop replies, QTFrame, vFile, qSearch:memory...), and from the agent's
 * own replies as its integration tests pin them down otherwise.  Each
 * expectation is written out by hand, never computed with the code under
 * test.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "protocol/rsp.h"
#include "protocol/rsp-reply.h"

static struct rsp_buf b;

static int setup(void **state)
{
	(void)state;
	rsp_buf_init(&b);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rsp_buf_free(&b);
	return 0;
}

/* The reply so far equals `want` (len bytes, may hold NULs); then reset. */
static void expect_bytes(const char *want, size_t len)
{
	if (b.len != len || memcmp(b.data, want, len) != 0)
		fail_msg("reply \"%.*s\" (%zu bytes), want \"%.*s\" (%zu bytes)",
			 (int)b.len, b.data ? b.data : "", b.len, (int)len, want, len);
	rsp_buf_reset(&b);
}

static void expect(const char *want)
{
	expect_bytes(want, strlen(want));
}

/* --- general ------------------------------------------------------------- */

static void test_ok_and_errors(void **state)
{
	(void)state;
	rsp_reply_ok(&b);
	expect("OK");
	rsp_reply_error_code(&b, RSP_ERR_FAILED);
	expect("E01");
	rsp_reply_error(&b, "no register %u", 99u);
	expect("E.no register 99");
	/* Framing characters and newlines cannot go out raw. */
	rsp_reply_error(&b, "a#b$c}d*e\nf");
	expect("E.a b c d e f");
	/* Enn for gdb 13; the text for a gdb that said error-message+. */
	struct rsp_error e = { RSP_ERR_FAILED, "cannot read memory at 0x10" };
	rsp_reply_failure(&b, &e, false);
	expect("E01");
	rsp_reply_failure(&b, &e, true);
	expect("E.cannot read memory at 0x10");
	e.text = NULL;
	rsp_reply_failure(&b, &e, true);
	expect("E01");
	rsp_reply_errno(&b, "cannot read registers", -3 /* ESRCH */);
	expect("E.cannot read registers: No such process");
	rsp_reply_errno(&b, "x", 2 /* ENOENT, positive */);
	expect("E.x: No such file or directory");
}

static void test_values(void **state)
{
	static const uint8_t mem[] = { 0x00, 0x7f, 0x80, 0xff, 0x0a };

	(void)state;
	rsp_reply_hex(&b, mem, sizeof(mem));
	expect("007f80ff0a");
	rsp_reply_hex(&b, mem, 0);
	expect("");
	rsp_reply_unavailable(&b, 3);
	expect("xxxxxx");
	rsp_reply_number(&b, 0x7ffff7d8a6c0ull);
	expect("7ffff7d8a6c0");
	rsp_reply_number(&b, 0);
	expect("0");
	rsp_reply_bool(&b, true);
	expect("1");
	rsp_reply_bool(&b, false);
	expect("0");
	rsp_reply_console(&b, "hi\n");
	expect("O68690a");
}

/* --- stop replies ------------------------------------------------------- */

static const uint8_t rbp[8] = { 0x01 };
static const uint8_t rsp_[8] = { 0x48, 0xe5, 0xff, 0xff, 0xff, 0x7f };
static const uint8_t rip[8] = { 0x53, 0x73, 0xea, 0xf7, 0xff, 0x7f };
static const struct rsp_expedited x86_regs[] = {
	{ 6, rbp, 8 }, { 7, rsp_, 8 }, { 0x10, rip, 8 },
};

static void test_stop_fork(void **state)
{
	/* rsp-transcript-breakpoints-threads-catch.txt, gdbserver 13:
	 * T05fork:p2cc4.2cc4;06:0100000000000000;07:48e5ffffff7f0000;
	 * 10:5373eaf7ff7f0000;thread:p2c87.2c87;core:1; */
	struct rsp_stop s = {
		.kind = RSP_STOP_SIGNAL, .multiprocess = true, .signal = 5,
		.pid = 0x2c87, .tid = 0x2c87, .reason = RSP_REASON_FORK,
		.child_pid = 0x2cc4, .nregs = 3, .regs = x86_regs, .core = 1,
	};

	(void)state;
	rsp_reply_stop(&b, &s);
	expect("T05fork:p2cc4.2cc4;06:0100000000000000;07:48e5ffffff7f0000;"
	       "10:5373eaf7ff7f0000;thread:p2c87.2c87;core:1;");
	s.reason = RSP_REASON_VFORK;
	s.multiprocess = false;
	s.nregs = 0;
	rsp_reply_stop(&b, &s);
	expect("T05vfork:2cc4;thread:2c87;core:1;");
}

static void test_stop_reasons(void **state)
{
	struct rsp_stop s = {
		.kind = RSP_STOP_SIGNAL, .multiprocess = true, .signal = 5,
		.pid = 0x176f, .tid = 0x1770, .core = 3,
	};

	(void)state;
	rsp_reply_stop(&b, &s);
	expect("T05thread:p176f.1770;core:3;");
	s.reason = RSP_REASON_SWBREAK;
	rsp_reply_stop(&b, &s);
	expect("T05swbreak:;thread:p176f.1770;core:3;");
	s.reason = RSP_REASON_HWBREAK;
	rsp_reply_stop(&b, &s);
	expect("T05hwbreak:;thread:p176f.1770;core:3;");
	s.reason = RSP_REASON_WATCH;
	s.value = 0x555555558084ull;
	rsp_reply_stop(&b, &s);
	expect("T05watch:555555558084;thread:p176f.1770;core:3;");
	s.reason = RSP_REASON_RWATCH;
	rsp_reply_stop(&b, &s);
	expect("T05rwatch:555555558084;thread:p176f.1770;core:3;");
	s.reason = RSP_REASON_AWATCH;
	rsp_reply_stop(&b, &s);
	expect("T05awatch:555555558084;thread:p176f.1770;core:3;");
	s.reason = RSP_REASON_SYSCALL_ENTRY;
	s.value = 1;	/* write */
	rsp_reply_stop(&b, &s);
	expect("T05syscall_entry:1;thread:p176f.1770;core:3;");
	s.reason = RSP_REASON_SYSCALL_RETURN;
	s.value = 0xe7;
	rsp_reply_stop(&b, &s);
	expect("T05syscall_return:e7;thread:p176f.1770;core:3;");
	s.reason = RSP_REASON_VFORK_DONE;
	rsp_reply_stop(&b, &s);
	expect("T05vforkdone:;thread:p176f.1770;core:3;");
	s.reason = RSP_REASON_EXEC;
	s.exec_path = "/bin/ls";
	rsp_reply_stop(&b, &s);
	expect("T05exec:2f62696e2f6c73;thread:p176f.1770;core:3;");
	s.exec_path = NULL;
	rsp_reply_stop(&b, &s);
	expect("T05exec:;thread:p176f.1770;core:3;");
	s.reason = RSP_REASON_CREATE;
	rsp_reply_stop(&b, &s);
	expect("T05create:;thread:p176f.1770;core:3;");
	s.reason = RSP_REASON_LIBRARY;
	rsp_reply_stop(&b, &s);
	expect("T05library:;thread:p176f.1770;core:3;");
	/* --disable-packet=Tthread, and the bare S form. */
	s.reason = RSP_REASON_NONE;
	s.no_thread = true;
	s.signal = 0x13;
	rsp_reply_stop(&b, &s);
	expect("T13core:3;");
	s.bare = true;
	s.nregs = 3;
	s.regs = x86_regs;
	rsp_reply_stop(&b, &s);
	expect("S13");
}

static void test_stop_ends(void **state)
{
	struct rsp_stop s = { .kind = RSP_STOP_EXITED, .exit_code = 0x103,
			      .pid = 0x2c87, .tid = 0x2c87 };

	(void)state;
	rsp_reply_stop(&b, &s);
	expect("W03");
	s.multiprocess = true;
	rsp_reply_stop(&b, &s);
	expect("W03;process:2c87");
	s.kind = RSP_STOP_SIGNALLED;
	s.signal = 9;
	rsp_reply_stop(&b, &s);
	expect("X09;process:2c87");
	s.multiprocess = false;
	rsp_reply_stop(&b, &s);
	expect("X09");
	s.kind = RSP_STOP_THREAD_EXITED;
	s.exit_code = 0;
	s.tid = 0x2c90;
	rsp_reply_stop(&b, &s);
	expect("w00;2c90");
	s.multiprocess = true;
	rsp_reply_stop(&b, &s);
	expect("w00;p2c87.2c90");
	s.kind = RSP_STOP_NO_RESUMED;
	s.no_resumed_supported = true;
	rsp_reply_stop(&b, &s);
	expect("N");
	s.no_resumed_supported = false;
	rsp_reply_stop(&b, &s);
	expect("E.No unwaited-for children left.");
	/* Non-stop: the same after `Stop:` (a `%` notification). */
	s = (struct rsp_stop){ .kind = RSP_STOP_SIGNAL, .multiprocess = true,
			       .pid = 0x10, .tid = 0x11, .core = 0 };
	rsp_notify_stop(&b, &s);
	expect("Stop:T00thread:p10.11;core:0;");
}

/* --- handshake and threads --------------------------------------------- */

static void test_supported(void **state)
{
	static const char fixed[] =
		"PacketSize=4000;QPassSignals+;QProgramSignals+;QStartupWithShell+"
		";QEnvironmentHexEncoded+;QEnvironmentReset+"
		";QEnvironmentUnset+;QSetWorkingDir+;QCatchSyscalls+"
		";qXfer:libraries-svr4:read+;qXfer:auxv:read+"
		";qXfer:siginfo:read+;qXfer:siginfo:write+"
		";qXfer:features:read+;qXfer:exec-file:read+"
		";qXfer:osdata:read+"
		";QStartNoAckMode+;QDisableRandomization+"
		";QThreadEvents+;vContSupported+;QAgent+;QNonStop+"
		";no-resumed+"
		";ConditionalTracepoints+;TraceStateVariables+"
		";ConditionalBreakpoints+"
		";TracepointSource+;DisconnectedTracing+;InstallInTrace+"
		";EnableDisableTracepoints+;QTBuffer:size+;tracenz+"
		";qXfer:traceframe-info:read+";
	struct rsp_features f = { .packet_size = 0x4000 };
	char want[2048];

	(void)state;
	rsp_reply_supported(&b, &f);
	expect(fixed);
	f = (struct rsp_features){
		.packet_size = 0x4000, .fast_tracepoints = true, .threads = true,
		.multiprocess = true, .swbreak = true, .hwbreak = true,
		.fork_events = true, .vfork_events = true, .exec_events = true,
	};
	rsp_reply_supported(&b, &f);
	snprintf(want, sizeof(want), "%s%s", fixed,
		 ";FastTracepoints+;qXfer:threads:read+;multiprocess+"
		 ";swbreak+;hwbreak+;fork-events+;vfork-events+;exec-events+");
	expect(want);
	f = (struct rsp_features){ .packet_size = 0x4000, .threads = true,
				   .exec_events = true };
	rsp_reply_supported(&b, &f);
	snprintf(want, sizeof(want), "%s%s", fixed,
		 ";qXfer:threads:read+;exec-events+");
	expect(want);
}

static void test_threads(void **state)
{
	struct rsp_thread_list l = { .multiprocess = true };

	(void)state;
	rsp_reply_current_thread(&b, true, 0x2c87, 0x2c88);
	expect("QCp2c87.2c88");
	rsp_reply_current_thread(&b, false, 0x2c87, 0x2c88);
	expect("QC2c88");

	assert_true(rsp_thread_list_add(&b, &l, 0x2c87, 0x2c87));
	assert_true(rsp_thread_list_add(&b, &l, 0x2c87, 0x2c90));
	rsp_thread_list_end(&b, &l);
	expect("mp2c87.2c87,p2c87.2c90");
	l = (struct rsp_thread_list){ .multiprocess = false };
	rsp_thread_list_end(&b, &l);
	expect("l");
	/* A full reply says so: the rest goes in the next qsThreadInfo. */
	l = (struct rsp_thread_list){ .multiprocess = true };
	size_t added = 0;
	while (rsp_thread_list_add(&b, &l, 0x7fffffff, 0x40000000 + added))
		added++;
	added++;
	assert_true(b.len > RSP_MAX_PAYLOAD / 2);
	assert_true(b.len < RSP_MAX_PAYLOAD / 2 + 32);
	assert_int_equal(l.count, added);
	assert_int_equal(b.data[0], 'm');
	rsp_buf_reset(&b);

	struct rsp_thread_info t = { .pid = 0x10, .tid = 0x11, .core = 2,
				     .name = "a<b>&\"c'" };
	rsp_xml_threads_begin(&b);
	rsp_xml_thread(&b, true, &t);
	t.name = NULL;
	t.tid = 0x12;
	rsp_xml_thread(&b, false, &t);
	rsp_xml_threads_end(&b);
	expect("<threads>\n"
	       "<thread id=\"p10.11\" core=\"2\" name=\"a&lt;b&gt;&amp;&quot;c&apos;\"/>\n"
	       "<thread id=\"12\" core=\"2\"/>\n"
	       "</threads>\n");
}

static void test_queries(void **state)
{
	(void)state;
	rsp_reply_vcont_actions(&b);
	expect("vCont;c;C;s;S;t;r");
	/* rsp-transcript-breakpoints-threads-catch.txt (find). */
	rsp_reply_search(&b, true, 0x555555558054ull);
	expect("1,555555558054");
	rsp_reply_search(&b, false, 0x1234);
	expect("0");
	rsp_reply_crc(&b, 0x0badf00d);
	expect("Cbadf00d");
	rsp_reply_crc(&b, 0xffffffff);
	expect("Cffffffff");

	struct rsp_mem_region r = {
		.start = 0x555555554000ull, .size = 0x1000, .has_perms = true,
		.read = true, .exec = true, .name = "/t",
	};
	rsp_reply_mem_region(&b, &r);
	expect("start:555555554000;size:1000;permissions:rx;name:2f74;");
	r.has_perms = false;
	r.name = "";
	rsp_reply_mem_region(&b, &r);
	expect("start:555555554000;size:1000;");
	r.name = NULL;
	r.has_perms = true;
	r.read = r.write = r.exec = true;
	rsp_reply_mem_region(&b, &r);
	expect("start:555555554000;size:1000;permissions:rwx;");
}

/* --- qXfer and vFile ---------------------------------------------------- */

static void test_xfer_chunk(void **state)
{
	static const char doc[] = "ab#c$d}e*f";	/* 10 bytes */

	(void)state;
	rsp_reply_xfer_chunk(&b, doc, 10, 0, 0xffb);
	expect("lab}\x03" "c}\x04" "d}]e}\x0a" "f");
	rsp_reply_xfer_chunk(&b, doc, 10, 0, 3);
	expect("mab}\x03");
	rsp_reply_xfer_chunk(&b, doc, 10, 7, 3);
	expect("le}\x0a" "f");
	rsp_reply_xfer_chunk(&b, doc, 10, 10, 100);
	expect("l");
	rsp_reply_xfer_chunk(&b, doc, 10, 11, 100);
	expect("E.offset 0xb beyond the object's 10 bytes");
	/* A long read is cut so that escaping cannot overflow PacketSize. */
	static char big[RSP_MAX_PAYLOAD];
	memset(big, 'x', sizeof(big));
	rsp_reply_xfer_chunk(&b, big, sizeof(big), 0, sizeof(big));
	assert_int_equal(b.len, 1 + (RSP_MAX_PAYLOAD - 16) / 2);
	assert_int_equal(b.data[0], 'm');
	rsp_buf_reset(&b);
}

static void test_vfile(void **state)
{
	static const uint8_t bin[] = { 0x00, '}', 0x01 };
	struct rsp_vfile_result r = { .result = 7 };

	(void)state;
	rsp_reply_vfile(&b, &r);
	expect("F7");
	r.result = 0;
	rsp_reply_vfile(&b, &r);
	expect("F0");
	/* rsp-transcript: "F-1,2" (ENOENT). */
	r = (struct rsp_vfile_result){ .result = -1, .fileio_errno = 2 };
	rsp_reply_vfile(&b, &r);
	expect("F-1,2");
	r = (struct rsp_vfile_result){ .result = -1, .fileio_errno = 9999 };
	rsp_reply_vfile(&b, &r);
	expect("F-1,270f");
	r = (struct rsp_vfile_result){ .result = 3, .data = bin, .len = 3 };
	rsp_reply_vfile(&b, &r);
	expect_bytes("F3;\0}]\x01", 7);
	/* rsp-transcript: "F0;" (pread at the end of the file). */
	r = (struct rsp_vfile_result){ .result = 0, .data = bin, .len = 0 };
	rsp_reply_vfile(&b, &r);
	expect("F0;");
}

static void test_xml_documents(void **state)
{
	struct rsp_svr4_library lib = {
		.name = "/lib/x86_64-linux-gnu/libc.so.6", .lm = 0x7ffff7fc1000ull,
		.l_addr = 0x7ffff7d8a000ull, .l_ld = 0x7ffff7f9a8c0ull,
	};

	(void)state;
	rsp_xml_svr4_begin(&b, 0);
	rsp_xml_svr4_end(&b, 0);
	expect("<library-list-svr4 version=\"1.0\"/>");
	rsp_xml_svr4_begin(&b, 0x7ffff7ffe2e0ull);
	rsp_xml_svr4_library(&b, &lib);
	rsp_xml_svr4_end(&b, 0x7ffff7ffe2e0ull);
	expect("<library-list-svr4 version=\"1.0\" main-lm=\"0x7ffff7ffe2e0\">"
	       "<library name=\"/lib/x86_64-linux-gnu/libc.so.6\" lm=\"0x7ffff7fc1000\""
	       " l_addr=\"0x7ffff7d8a000\" l_ld=\"0x7ffff7f9a8c0\" lmid=\"0x0\"/>"
	       "</library-list-svr4>");

	rsp_xml_osdata_begin(&b, "processes");
	rsp_xml_osdata_item_begin(&b);
	rsp_xml_osdata_column(&b, "pid", "1");
	rsp_xml_osdata_column(&b, "command", "sh -c 'a<b' && \"c\"");
	rsp_xml_osdata_item_end(&b);
	rsp_xml_osdata_end(&b);
	expect("<?xml version=\"1.0\"?>\n"
	       "<!DOCTYPE target SYSTEM \"osdata.dtd\">\n"
	       "<osdata type=\"processes\">\n"
	       "<item><column name=\"pid\">1</column>"
	       "<column name=\"command\">sh -c 'a&lt;b' &amp;&amp; \"c\"</column></item>\n"
	       "</osdata>\n");
}

/* --- tracepoints ------------------------------------------------------- */

static void test_trace(void **state)
{
	static const uint32_t tps[] = { 1, 0x1a };
	static const uint64_t counts[] = { 2, 0x100 };
	struct rsp_lost l = { .total = 0x102, .n = 2, .tp = tps, .count = counts };

	(void)state;
	/* rsp-transcript-trace.txt: "F0T3", "F1T3", "F-1". */
	rsp_reply_tframe(&b, true, 0, 3);
	expect("F0T3");
	rsp_reply_tframe(&b, true, 0x1f, 0x12);
	expect("F1fT12");
	rsp_reply_tframe(&b, false, 5, 3);
	expect("F-1");
	rsp_reply_tsv_value(&b, true, 0x2a);
	expect("V2a");
	rsp_reply_tsv_value(&b, true, -1);
	expect("Vffffffffffffffff");
	rsp_reply_tsv_value(&b, false, 0x2a);
	expect("U");
	rsp_reply_list_end(&b);
	expect("l");
	rsp_reply_lost(&b, &l);
	expect("L102;1:2;1a:100");
	l = (struct rsp_lost){ 0 };
	rsp_reply_lost(&b, &l);
	expect("L0");
	rsp_reply_salvage(&b, 0x10, 3);
	expect("S10;3");
	/* a pad that stopped twice for a full ring, an emulated site, the
	 * returns' counts; then nothing placed */
	static const struct rsp_probe_stat sites[] = {
		{ 0x401000, "pad", 2, 0x3e8, 2, 0 },
		{ 0x7f0010, "emulate", 0x64, 0, 0, 5 },
	};
	struct rsp_probe_stats ps = { .n = 2, .site = sites, .returns = true,
				      .ret_in_process = true, .ret_recorded = 0x3e6,
				      .ret_stopped = 1, .ret_ring_full = 7 };
	rsp_reply_probe_stats(&b, &ps);
	expect("P;401000:pad:2:3e8:2:0;7f0010:emulate:64:0:0:5;R1:3e6:1:7");
	ps = (struct rsp_probe_stats){ 0 };
	rsp_reply_probe_stats(&b, &ps);
	expect("P");
	rsp_reply_frames_begin(&b);
	expect("F");
	rsp_reply_frames_begin(&b);
	rsp_reply_frames_add(&b, "a#", 2);
	rsp_reply_frames_add(&b, "*", 1);
	expect("Fa}\x03}\x0a");
}

static void test_libevents(void **state)
{
	struct rsp_buf q;

	(void)state;
	rsp_buf_init(&q);
	rsp_libevent_put(&q, &(struct rsp_libevent){
		.kind = RSP_LIBEV_PLACED, .tp = 2, .key = 0x1139, .addr = 0x7ffff7fb9139ull,
		.load = 1, .text = "/l.so" });
	rsp_libevent_put(&q, &(struct rsp_libevent){
		.kind = RSP_LIBEV_REMOVED, .tp = 2, .key = 0x1139, .addr = 0x7ffff7fb9139ull,
		.load = 1, .frames = 0x11 });
	rsp_libevent_put(&q, &(struct rsp_libevent){
		.kind = RSP_LIBEV_STILL, .tp = 0xa, .key = 0, .addr = 0x401000,
		.load = 2, .frames = 0 });
	rsp_libevent_put(&q, &(struct rsp_libevent){
		.kind = RSP_LIBEV_FAILED, .tp = 3, .key = 0x20, .text = "no" });
	rsp_reply_libevents(&b, q.data, q.len, false);
	expect("P;p2,1139,7ffff7fb9139,1,2f6c2e736f"
	       ";r2,1139,7ffff7fb9139,1,11"
	       ";sa,0,401000,2,0"
	       ";x3,20,6e6f");
	rsp_reply_libevents(&b, "", 0, false);
	expect("P");
	rsp_reply_libevents(&b, "", 0, true);
	expect("P;o");
	rsp_buf_free(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ok_and_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_fork, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_reasons, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_ends, setup, teardown),
		cmocka_unit_test_setup_teardown(test_supported, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_queries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_xfer_chunk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vfile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_xml_documents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_libevents, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
