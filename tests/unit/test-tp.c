/*
 * test-tp.c - the tracepoint definition store, its uploads and the status
 * lines, fed with the real gdb 13 packets of rsp-transcript-trace.txt.
 *
 * Packets go through rsp_parse() first, exactly as in the agent, so these
 * tests also pin the parser-to-store contract.  Uploads are compared with
 * the records gdbserver 13 sent in the transcripts and then parsed back
 * into a second store whose upload must be identical (the round trip gdb
 * does on reconnect).
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "protocol/rsp.h"
#include "protocol/rsp-request.h"
#include "protocol/tp-status.h"
#include "protocol/tracepoint.h"

static struct rsp_request req;

/* Parses one packet and hands it to the store as the agent would. */
static int feed(struct tp_store *s, const char *packet)
{
	char *copy = strdup(packet);
	struct tp_def *tp = NULL;
	int ret = -1;

	assert_non_null(copy);
	rsp_parse(copy, strlen(copy), &req);
	switch (req.kind) {
	case RSP_REQ_TINIT:
		tp_store_clear(s);
		ret = 0;
		break;
	case RSP_REQ_TDP:
		ret = tp_define(s, &req, &tp);
		break;
	case RSP_REQ_TDP_ACTIONS:
		ret = tp_add_actions(s, &req, &tp);
		break;
	case RSP_REQ_TDP_SRC:
		ret = tp_add_source(s, &req);
		break;
	case RSP_REQ_TDV:
		ret = tsv_define(s, req.u.tdv.number, req.u.tdv.initial,
				 req.u.tdv.builtin, req.u.tdv.name);
		break;
	default:
		fail_msg("packet %s parsed to %s (%s)", packet,
			 rsp_req_name(req.kind), req.error ? req.error : "");
	}
	free(copy);
	return ret;
}

/* The tstart burst of rsp-transcript-trace.txt (tracepoints 2, 3, 4). */
static const char *const tstart_packets[] = {
	"QTinit",
	"QTDP:2:0000555555555157:E:0:0-",
	"QTDP:-2:0000555555555157:R0fffffffffffffffffffffffffffffffffffff-",
	"QTDP:-2:0000555555555157:X0000000F,26000622100222dc16080222040c27"
	"X0000000F,26000622100222d816080222040c27-",
	"QTDP:-2:0000555555555157:X0000000C,2c000222010216402d000227",
	"QTDPsrc:2:555555555157:at:0:7:636f6d70757465",
	"QTDPsrc:2:555555555157:cmd:0:1d:636f6c6c6563742024726567732c2024617267732c20246c6f63616c73",
	"QTDP:3:00005555555551da:E:2:3:X13,26000622100222e816080219162022052b1427-",
	"QTDP:-3:00005555555551da:R40-",
	"QTDP:-3:00005555555551da:X0000000F,26000622100222ec16080222040c27-",
	"QTDP:-3:00005555555551da:SR010080",
	"QTDPsrc:3:5555555551da:at:0:9:70726f672e633a3232",
	"QTDPsrc:3:5555555551da:cond:0:5:69203e2035",
	"QTDPsrc:3:5555555551da:cmd:0:10:7768696c652d7374657070696e672032",
	"QTDPsrc:3:5555555551da:cmd:0:3:656e64",
	"QTDP:4:000055555555517e:D:0:0-",
	"QTDP:-4:000055555555517e:L-",
	"QTDP:-4:000055555555517e:M-1,555555558084,4",
	"QTDV:1:0000000000000000:1:74726163655f74696d657374616d70",
	"QTDV:2:0000000000000000:0:68697473",
};

/* What the store must upload for them (gdbserver 13's records, which
 * use the same encodings). */
static const char *const tstart_upload[] = {
	"T2:555555555157:E:0:0",
	"A2:555555555157:R0fffffffffffffffffffffffffffffffffffff",
	"A2:555555555157:X0000000F,26000622100222dc16080222040c27",
	"A2:555555555157:X0000000F,26000622100222d816080222040c27",
	"A2:555555555157:X0000000C,2c000222010216402d000227",
	"Z2:555555555157:at:0:7:636f6d70757465",
	"Z2:555555555157:cmd:0:1d:636f6c6c6563742024726567732c2024617267732c20246c6f63616c73",
	"T3:5555555551da:E:2:3:X13,26000622100222e816080219162022052b1427",
	"A3:5555555551da:R40",
	"A3:5555555551da:X0000000F,26000622100222ec16080222040c27",
	"S3:5555555551da:R010080",
	"Z3:5555555551da:at:0:9:70726f672e633a3232",
	"Z3:5555555551da:cond:0:5:69203e2035",
	"Z3:5555555551da:cmd:0:10:7768696c652d7374657070696e672032",
	"Z3:5555555551da:cmd:0:3:656e64",
	"T4:55555555517e:D:0:0",
	"A4:55555555517e:L",
	"A4:55555555517e:M-1,555555558084,4",
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void load(struct tp_store *s)
{
	assert_int_equal(tp_store_init(s), 0);
	for (size_t i = 0; i < N(tstart_packets); i++)
		assert_int_equal(feed(s, tstart_packets[i]), 0);
}

/* All upload records, one string each, NULL-terminated. */
static char **upload_all(const struct tp_store *s, size_t max_len,
			 bool with_v, size_t *skipped)
{
	struct tp_upload u;
	struct rsp_buf b;
	char **out = calloc(512, sizeof(*out));
	size_t n = 0;

	rsp_buf_init(&b);
	tp_upload_start(&u, max_len, with_v);
	for (;;) {
		rsp_buf_reset(&b);
		if (tp_upload_next(s, &u, &b) == 0)
			break;
		assert_true(n < 511);
		assert_true(b.len <= max_len);
		out[n++] = strndup(b.data, b.len);
	}
	rsp_buf_free(&b);
	if (skipped)
		*skipped = u.skipped;
	return out;
}

static void free_records(char **r)
{
	for (size_t i = 0; r[i]; i++)
		free(r[i]);
	free(r);
}

static void test_define_fields(void **state)
{
	struct tp_store s;
	struct tp_def *tp;

	load(&s);
	assert_int_equal(tp_count(&s), 3);
	tp = tp_find(&s, 3, 0x5555555551da);
	assert_non_null(tp);
	assert_true(tp->enabled);
	assert_int_equal(tp->step_count, 2);
	assert_int_equal(tp->pass_count, 3);
	assert_int_equal(tp->cond_len, 0x13);
	assert_int_equal(tp->cond[0], 0x26);
	assert_int_equal(tp->n_actions, 3);
	assert_int_equal(tp->actions[0].kind, TP_ACTION_REGS);
	assert_false(tp->actions[0].while_stepping);
	assert_int_equal(tp->actions[0].len, 1);
	assert_int_equal(tp->actions[0].bytes[0], 0x40);
	assert_int_equal(tp->actions[1].kind, TP_ACTION_EXPR);
	assert_int_equal(tp->actions[1].len, 15);
	assert_true(tp->actions[2].while_stepping);
	assert_int_equal(tp->actions[2].len, 3);
	assert_int_equal(tp->n_sources, 4);
	assert_int_equal(tp->sources[0].type, RSP_TP_SRC_AT);
	assert_string_equal(tp->sources[0].text, "prog.c:22");
	assert_string_equal(tp->sources[1].text, "i > 5");
	assert_string_equal(tp->sources[2].text, "while-stepping 2");
	assert_string_equal(tp->sources[3].text, "end");

	tp = tp_find(&s, 4, 0x55555555517e);
	assert_false(tp->enabled);
	assert_int_equal(tp->actions[0].kind, TP_ACTION_SDATA);
	assert_int_equal(tp->actions[1].kind, TP_ACTION_MEM);
	assert_int_equal(tp->actions[1].basereg, -1);
	assert_int_equal(tp->actions[1].offset, 0x555555558084);
	assert_int_equal(tp->actions[1].mem_len, 4);

	assert_int_equal(tsv_count(&s), 2);
	assert_true(tsv_find(&s, 1)->builtin);
	assert_string_equal(tsv_find(&s, 2)->name, "hits");
	tp_store_free(&s);
}

static void test_upload_matches_gdbserver(void **state)
{
	struct tp_store s;
	char **r;
	size_t i;

	load(&s);
	r = upload_all(&s, RSP_MAX_PAYLOAD, false, NULL);
	for (i = 0; r[i]; i++) {
		assert_true(i < N(tstart_upload));
		assert_string_equal(r[i], tstart_upload[i]);
	}
	assert_int_equal(i, N(tstart_upload));
	free_records(r);
	tp_store_free(&s);
}

/* Turns an upload record back into the packet that defines it. */
static void record_to_packet(const char *rec, char *pkt, size_t size,
			     bool *stepping_done)
{
	const char *rest = rec + 1;

	switch (rec[0]) {
	case 'T':
		*stepping_done = false;
		snprintf(pkt, size, "QTDP:%s-", rest);
		break;
	case 'A':
		snprintf(pkt, size, "QTDP:-%s-", rest);
		break;
	case 'S': {
		/* Insert the S prefix after "<n>:<addr>:", once. */
		const char *c = strchr(strchr(rest, ':') + 1, ':') + 1;
		snprintf(pkt, size, "QTDP:-%.*s%s%s-", (int)(c - rest), rest,
			 *stepping_done ? "" : "S", c);
		*stepping_done = true;
		break;
	}
	case 'Z':
		snprintf(pkt, size, "QTDPsrc:%s", rest);
		break;
	default:
		fail_msg("unexpected record %s", rec);
	}
}

static void check_round_trip(const struct tp_store *s, size_t max_len)
{
	struct tp_store s2;
	char **r = upload_all(s, max_len, false, NULL), **r2;
	char pkt[RSP_MAX_PAYLOAD + 64];
	bool stepping_done = false;

	assert_int_equal(tp_store_init(&s2), 0);
	for (size_t i = 0; r[i]; i++) {
		record_to_packet(r[i], pkt, sizeof(pkt), &stepping_done);
		assert_int_equal(feed(&s2, pkt), 0);
	}
	r2 = upload_all(&s2, max_len, false, NULL);
	for (size_t i = 0; r[i] || r2[i]; i++) {
		assert_non_null(r[i]);
		assert_non_null(r2[i]);
		assert_string_equal(r[i], r2[i]);
	}
	free_records(r);
	free_records(r2);
	tp_store_free(&s2);
}

static void test_upload_round_trip(void **state)
{
	struct tp_store s;

	load(&s);
	check_round_trip(&s, RSP_MAX_PAYLOAD);
	tp_store_free(&s);
}

/* A long source string is cut into Z pieces that fit, and reassembled. */
static void test_long_source_split(void **state)
{
	struct tp_store s;
	char text[1500], hex[3001], pkt[3200];
	struct tp_def *tp;
	size_t skipped;
	char **r;
	size_t n = 0;

	for (size_t i = 0; i < sizeof(text) - 1; i++)
		text[i] = 'a' + i % 26;
	text[sizeof(text) - 1] = '\0';
	for (size_t i = 0; text[i]; i++)
		sprintf(hex + 2 * i, "%02x", (unsigned char)text[i]);
	assert_int_equal(tp_store_init(&s), 0);
	assert_int_equal(feed(&s, "QTDP:1:1000:E:0:0"), 0);
	snprintf(pkt, sizeof(pkt), "QTDPsrc:1:1000:cmd:0:%zx:%s",
		 strlen(text), hex);
	assert_int_equal(feed(&s, pkt), 0);
	r = upload_all(&s, 200, false, &skipped);
	assert_int_equal(skipped, 0);
	for (n = 0; r[n]; n++)
		assert_true(strlen(r[n]) <= 200);
	assert_true(n > 8);		/* T + at least 8 pieces */
	free_records(r);
	check_round_trip(&s, 200);
	check_round_trip(&s, 999);
	tp = tp_find(&s, 1, 0x1000);
	assert_string_equal(tp->sources[0].text, text);
	tp_store_free(&s);
}

/* Records that cannot fit a line are cut as documented. */
static void test_upload_too_long(void **state)
{
	struct tp_store s;
	char pkt[2100];
	size_t skipped;
	char **r;
	int len;

	assert_int_equal(tp_store_init(&s), 0);
	len = snprintf(pkt, sizeof(pkt), "QTDP:1:1000:E:0:0:X1f4,");
	for (int i = 0; i < 500; i++)
		len += snprintf(pkt + len, sizeof(pkt) - len, "22");
	snprintf(pkt + len, sizeof(pkt) - len, "-");
	assert_int_equal(feed(&s, pkt), 0);
	len = snprintf(pkt, sizeof(pkt), "QTDP:-1:1000:R40X000001f4,");
	for (int i = 0; i < 500; i++)
		len += snprintf(pkt + len, sizeof(pkt) - len, "27");
	assert_int_equal(feed(&s, pkt), 0);
	r = upload_all(&s, 996, true, &skipped);
	assert_int_equal(skipped, 2);	/* the condition and the X action */
	assert_string_equal(r[0], "T1:1000:E:0:0");
	assert_string_equal(r[1], "A1:1000:R40");
	assert_string_equal(r[2], "V1:1000:0:0");
	assert_null(r[3]);
	free_records(r);
	tp_store_free(&s);
}

/* gdb 13 re-downloads installed tracepoints at solib events. */
static void test_redownload_identical(void **state)
{
	struct tp_store s;
	struct tp_def *tp;

	load(&s);
	tp = tp_find(&s, 3, 0x5555555551da);
	tp->hit_count = 7;
	for (size_t i = 1; i < N(tstart_packets); i++) {
		const char *p = tstart_packets[i];
		int want = strncmp(p, "QTDV", 4) == 0 ? 0 : TP_UNCHANGED;
		assert_int_equal(feed(&s, p), want);
	}
	assert_int_equal(tp_count(&s), 3);
	assert_int_equal(tp->n_actions, 3);
	assert_int_equal(tp->n_sources, 4);
	assert_int_equal(tp->hit_count, 7);
	tp_store_free(&s);
}

static void test_redefine_different(void **state)
{
	struct tp_store s;

	load(&s);
	/* Different pass count. */
	assert_int_equal(feed(&s, "QTDP:3:00005555555551da:E:2:4:X13,"
			      "26000622100222e816080219162022052b1427-"),
			 -EEXIST);
	assert_non_null(strstr(s.error, "differently"));
	/* Same header, different actions. */
	assert_int_equal(feed(&s, "QTDP:4:000055555555517e:D:0:0-"),
			 TP_UNCHANGED);
	assert_int_equal(feed(&s, "QTDP:-4:000055555555517e:L-"),
			 TP_UNCHANGED);
	assert_int_equal(feed(&s, "QTDP:-4:000055555555517e:M-1,555555558084,8"),
			 -EEXIST);
	/* Same header, fewer actions. */
	assert_int_equal(feed(&s, "QTDP:4:000055555555517e:D:0:0-"),
			 TP_UNCHANGED);
	assert_int_equal(feed(&s, "QTDP:-4:000055555555517e:L"), -EEXIST);
	/* No actions where there were some. */
	assert_int_equal(feed(&s, "QTDP:4:000055555555517e:D:0:0"), -EEXIST);
	tp_store_free(&s);
}

static void test_locations_and_lookups(void **state)
{
	struct tp_store s;
	struct tp_def *tp;

	load(&s);
	/* A second location of tracepoint 2. */
	assert_int_equal(feed(&s, "QTDP:2:0000555555555100:E:0:0"), 0);
	assert_int_equal(tp_count(&s), 4);
	assert_int_equal(tp_at(&s, 0)->addr, 0x555555555100);
	assert_int_equal(tp_at(&s, 1)->addr, 0x555555555157);
	assert_int_equal(tp_find_number(&s, 2)->addr, 0x555555555100);
	assert_int_equal(tp_number_addr(&s, 3), 0x5555555551da);
	assert_int_equal(tp_number_addr(&s, 9), 0);
	/* qTP after a reconnect renumbering: by address. */
	tp = tp_lookup_qtp(&s, 1, 0x555555555157);
	assert_non_null(tp);
	assert_int_equal(tp->number, 2);
	assert_null(tp_lookup_qtp(&s, 1, 0x1234));
	/* Two tracepoints at one address. */
	assert_int_equal(feed(&s, "QTDP:7:00005555555551da:E:0:0"), 0);
	tp = tp_next_at(&s, 0x5555555551da, NULL);
	assert_int_equal(tp->number, 3);
	tp = tp_next_at(&s, 0x5555555551da, tp);
	assert_int_equal(tp->number, 7);
	assert_null(tp_next_at(&s, 0x5555555551da, tp));
	/* Enable / disable. */
	assert_int_equal(tp_set_enabled(&s, 4, 0x55555555517e, true), 0);
	assert_true(tp_find(&s, 4, 0x55555555517e)->enabled);
	assert_int_equal(tp_set_enabled(&s, 4, 0x1, true), -ENOENT);
	/* Pass counts. */
	tp = tp_find(&s, 3, 0x5555555551da);
	tp->hit_count = 2;
	assert_false(tp_pass_reached(tp));
	tp->hit_count = 3;
	assert_true(tp_pass_reached(tp));
	assert_false(tp_pass_reached(tp_find(&s, 4, 0x55555555517e)));
	/* qTP reply. */
	struct rsp_buf b;
	rsp_buf_init(&b);
	tp->bytes_used = 0x20800;
	tp->hit_count = 8;
	tp_put_status(tp, &b);
	assert_int_equal(b.len, 8);
	assert_memory_equal(b.data, "V8:20800", 8);
	rsp_buf_free(&b);
	tp_store_start_run(&s);
	assert_int_equal(tp->hit_count, 0);
	assert_int_equal(tp->bytes_used, 0);
	tp_store_free(&s);
}

static void test_init_clears(void **state)
{
	struct tp_store s;
	struct tsv_def *t;

	load(&s);
	assert_int_equal(feed(&s, "QTinit"), 0);
	assert_int_equal(tp_count(&s), 0);
	assert_int_equal(tsv_count(&s), 1);
	t = tsv_at(&s, 0);
	assert_int_equal(t->number, 1);
	assert_true(t->builtin);
	assert_string_equal(t->name, "trace_timestamp");
	assert_false(t->value_known);
	/* Redefining 1 keeps it builtin; values reset at start. */
	assert_int_equal(feed(&s, "QTDV:1:0000000000000000:0:74726163655f74696d657374616d70"), 0);
	assert_true(tsv_find(&s, 1)->builtin);
	assert_int_equal(feed(&s, "QTDV:5:fffffffffffffffb:0:6d"), 0);
	/* Numbers with gaps, and dense ones (found by their place). */
	assert_null(tsv_find(&s, 2));
	assert_int_equal(feed(&s, "QTDV:2:7:0:6e"), 0);
	assert_int_equal(tsv_find(&s, 2)->initial, 7);
	assert_null(tsv_find(&s, 3));
	assert_null(tsv_find(&s, 0));
	assert_int_equal(tsv_find(&s, 5)->number, 5);
	t = tsv_find(&s, 5);
	t->value = 99;
	tp_store_start_run(&s);
	assert_int_equal(t->value, -5);
	assert_true(t->value_known);
	tp_store_free(&s);
}

static void test_tsv_upload(void **state)
{
	struct tp_store s;
	struct tsv_upload u;
	struct rsp_buf b;
	static const char *const want[] = {
		"1:0:1:74726163655f74696d657374616d70",
		"2:0:0:68697473",
		"3:fffffffffffffffb:0:6d617861",
	};

	load(&s);
	assert_int_equal(feed(&s, "QTDV:3:fffffffffffffffb:0:6d617861"), 0);
	rsp_buf_init(&b);
	tsv_upload_start(&u, RSP_MAX_PAYLOAD, false);
	for (size_t i = 0; i < N(want); i++) {
		rsp_buf_reset(&b);
		assert_int_equal(tsv_upload_next(&s, &u, &b), 1);
		rsp_buf_putc(&b, '\0');
		assert_string_equal(b.data, want[i]);
	}
	assert_int_equal(tsv_upload_next(&s, &u, &b), 0);
	/* qTfV's order: the newest first, as gdbserver. */
	tsv_upload_start(&u, RSP_MAX_PAYLOAD, true);
	for (size_t i = N(want); i-- > 0;) {
		rsp_buf_reset(&b);
		assert_int_equal(tsv_upload_next(&s, &u, &b), 1);
		rsp_buf_putc(&b, '\0');
		assert_string_equal(b.data, want[i]);
	}
	assert_int_equal(tsv_upload_next(&s, &u, &b), 0);
	rsp_buf_free(&b);
	tp_store_free(&s);
}

static void test_errors(void **state)
{
	struct tp_store s;
	char pkt[64];

	assert_int_equal(tp_store_init(&s), 0);
	assert_int_equal(feed(&s, "QTDP:0:1000:E:0:0"), -ERANGE);
	assert_int_equal(feed(&s, "QTDP:8000:1000:E:0:0"), -ERANGE);
	assert_int_equal(feed(&s, "QTDP:7fff:1000:E:0:0"), 0);
	assert_int_equal(feed(&s, "QTDP:-1:1000:R40"), -ENOENT);
	assert_non_null(strstr(s.error, "undefined"));
	assert_int_equal(feed(&s, "QTDPsrc:1:1000:at:0:1:61"), -ENOENT);
	/* A piece that continues nothing. */
	assert_int_equal(feed(&s, "QTDPsrc:7fff:1000:at:2:4:6162"), -EINVAL);
	/* Pieces in order are fine. */
	assert_int_equal(feed(&s, "QTDPsrc:7fff:1000:at:0:4:6162"), 0);
	assert_int_equal(feed(&s, "QTDPsrc:7fff:1000:at:2:4:6364"), 0);
	assert_string_equal(tp_find(&s, 0x7fff, 0x1000)->sources[0].text,
			    "abcd");
	assert_int_equal(feed(&s, "QTDV:0:0:0:61"), -ERANGE);
	/* Too many actions. */
	for (unsigned i = 0; i < TP_MAX_ACTIONS; i++)
		assert_int_equal(feed(&s, "QTDP:-7fff:1000:L-"), 0);
	assert_int_equal(feed(&s, "QTDP:-7fff:1000:L"), -ENOSPC);
	/* Too many locations. */
	for (unsigned i = 1; i < TP_MAX_TRACEPOINTS; i++) {
		snprintf(pkt, sizeof(pkt), "QTDP:1:%x:E:0:0", i);
		assert_int_equal(feed(&s, pkt), 0);
	}
	assert_int_equal(feed(&s, "QTDP:2:1:E:0:0"), -ENOSPC);
	assert_non_null(strstr(s.error, "too many"));
	tp_store_free(&s);
}

/* --- Status lines ---------------------------------------------------------- */

static void check_status(const struct tp_status *st, const char *reply,
			 const char *tfile)
{
	struct rsp_buf b;

	rsp_buf_init(&b);
	tp_status_put_reply(st, &b);
	rsp_buf_putc(&b, '\0');
	assert_string_equal(b.data, reply);
	rsp_buf_reset(&b);
	tp_status_put_tfile(st, &b);
	rsp_buf_putc(&b, '\0');
	assert_string_equal(b.data, tfile);
	rsp_buf_free(&b);
}

/* A client reads back why a run ended, whatever the reply's own form. */
static void test_status_parse(void **state)
{
	struct tp_status st;
	char err[64];

	(void)state;
	assert_int_equal(tp_status_parse("T0;tfull:0;tframes:40f0;tcreated:40f0;"
					  "tfree:10;tsize:10000;circular:0", &st,
					  err, sizeof(err)), 0);
	assert_false(st.running);
	assert_int_equal(st.reason, TP_STOP_FULL);
	assert_int_equal(st.frames, 0x40f0);
	assert_int_equal(st.free_bytes, 0x10);
	assert_int_equal(st.size, 0x10000);

	assert_int_equal(tp_status_parse("T0;terror:6469762062792030:2;tframes:1",
					 &st, err, sizeof(err)), 0);
	assert_int_equal(st.reason, TP_STOP_ERROR);
	assert_int_equal(st.stopping_tp, 2);
	assert_string_equal(st.error, "div by 0");

	assert_int_equal(tp_status_parse("T0;tpasscount:3", &st, err, sizeof(err)), 0);
	assert_int_equal(st.reason, TP_STOP_PASSCOUNT);
	assert_int_equal(st.stopping_tp, 3);
	assert_int_equal(tp_status_parse("T1;tnotrun:0;tframes:5", &st, err, sizeof(err)), 0);
	assert_true(st.running);
	assert_int_equal(st.frames, 5);
	assert_int_equal(tp_status_parse("T0;tstop:6279206d65:0;tframes:0", &st,
					 err, sizeof(err)), 0);
	assert_int_equal(st.reason, TP_STOP_COMMAND);

	/* Not a status: an error reply, an unknown reason, bad hex. */
	assert_int_equal(tp_status_parse("E01", &st, err, sizeof(err)), -EINVAL);
	assert_int_equal(tp_status_parse("T0;tbogus:0", &st, err, sizeof(err)), -EINVAL);
	assert_int_equal(tp_status_parse("T0;terror:zz:1", &st, err, sizeof(err)), -EINVAL);
	assert_int_equal(tp_status_parse("T0;tfull", &st, err, sizeof(err)), -EINVAL);
	assert_int_equal(tp_status_parse("", &st, err, sizeof(err)), -EINVAL);
}

static void test_status_lines(void **state)
{
	struct tp_status st = {
		.reason = TP_STOP_NOT_RUN, .free_bytes = 0x500000,
		.size = 0x500000, .user = "", .notes = "",
	};

	/* Exactly gdbserver 13's first reply (rsp-transcript-trace.txt). */
	check_status(&st,
		     "T0;tnotrun:0;tframes:0;tcreated:0;tfree:500000;tsize:500000;"
		     "circular:0;disconn:0;starttime:0;stoptime:0;username:;notes::",
		     "0;tnotrun:0;tframes:0;tcreated:0;tfree:500000;tsize:500000;"
		     "notes:;username:");

	/* The passcount stop of the same transcript, and the sample file's
	 * status line. */
	st = (struct tp_status){
		.reason = TP_STOP_PASSCOUNT, .stopping_tp = 3,
		.frames = 0x1d, .created = 0x1d, .free_bytes = 0x1f4b3,
		.size = 0x30d40, .circular = true, .disconnected = true,
		.start_time = 0xd206dee, .stop_time = 0xd207f8f,
		.user = "alice", .notes = "start-notes-here",
	};
	check_status(&st,
		     "T0;tpasscount:3;tframes:1d;tcreated:1d;tfree:1f4b3;tsize:30d40;"
		     "circular:1;disconn:1;starttime:d206dee;stoptime:d207f8f;"
		     "username:616c696365;notes:73746172742d6e6f7465732d68657265:",
		     "0;tpasscount:3;tframes:1d;tcreated:1d;tfree:1f4b3;tsize:30d40;"
		     "disconn:1;circular:1;starttime:d206dee;stoptime:d207f8f;"
		     "notes:73746172742d6e6f7465732d68657265;username:616c696365");

	st = (struct tp_status){
		.running = true, .reason = TP_STOP_NOT_RUN, .size = 0x2000,
		.free_bytes = 0x2000, .start_time = 0x10,
	};
	check_status(&st,
		     "T1;tnotrun:0;tframes:0;tcreated:0;tfree:2000;tsize:2000;"
		     "circular:0;disconn:0;starttime:10;stoptime:0;username:;notes::",
		     "1;tnotrun:0;tframes:0;tcreated:0;tfree:2000;tsize:2000;"
		     "starttime:10");

	st = (struct tp_status){ .reason = TP_STOP_COMMAND,
				 .stop_notes = "by me" };
	check_status(&st,
		     "T0;tstop:6279206d65:0;tframes:0;tcreated:0;tfree:0;tsize:0;"
		     "circular:0;disconn:0;starttime:0;stoptime:0;username:;notes::",
		     "0;tstop:6279206d65:0;tframes:0;tcreated:0;tfree:0;tsize:0");
	st.stop_notes = NULL;
	check_status(&st,
		     "T0;tstop::0;tframes:0;tcreated:0;tfree:0;tsize:0;"
		     "circular:0;disconn:0;starttime:0;stoptime:0;username:;notes::",
		     "0;tstop::0;tframes:0;tcreated:0;tfree:0;tsize:0");

	st = (struct tp_status){ .reason = TP_STOP_FULL, .frames = 0x9b,
				 .created = 0x9b, .free_bytes = 0xb,
				 .size = 0x2000 };
	check_status(&st,
		     "T0;tfull:0;tframes:9b;tcreated:9b;tfree:b;tsize:2000;"
		     "circular:0;disconn:0;starttime:0;stoptime:0;username:;notes::",
		     "0;tfull:0;tframes:9b;tcreated:9b;tfree:b;tsize:2000");

	st = (struct tp_status){ .reason = TP_STOP_DISCONNECTED };
	check_status(&st,
		     "T0;tdisconnected:0;tframes:0;tcreated:0;tfree:0;tsize:0;"
		     "circular:0;disconn:0;starttime:0;stoptime:0;username:;notes::",
		     "0;tdisconnected:0;tframes:0;tcreated:0;tfree:0;tsize:0");

	st = (struct tp_status){ .reason = TP_STOP_ERROR, .stopping_tp = 2,
				 .error = "div by 0" };
	check_status(&st,
		     "T0;terror:6469762062792030:2;tframes:0;tcreated:0;tfree:0;"
		     "tsize:0;circular:0;disconn:0;starttime:0;stoptime:0;"
		     "username:;notes::",
		     "0;terror:6469762062792030:2;tframes:0;tcreated:0;tfree:0;"
		     "tsize:0");

	st = (struct tp_status){ .reason = TP_STOP_UNKNOWN };
	check_status(&st,
		     "T0;tunknown:0;tframes:0;tcreated:0;tfree:0;tsize:0;"
		     "circular:0;disconn:0;starttime:0;stoptime:0;username:;notes::",
		     "0;tunknown:0;tframes:0;tcreated:0;tfree:0;tsize:0");
	assert_string_equal(tp_stop_reason_name(TP_STOP_FULL), "tfull");
	assert_string_equal(tp_stop_reason_name((enum tp_stop_reason)99),
			    "tunknown");
}

static void sum_lost(uint32_t tp, uint64_t count, void *arg)
{
	uint64_t *by_tp = arg;

	if (tp < 4)
		by_tp[tp] += count;
}

/* The recorder's table of lost frames: fixed width from the start, so the
 * line keeps its length as counts grow; only the losses otherwise; read
 * back whole; nothing else in the line changes (gdb skips the field). */
static void test_status_lost(void **state)
{
	static const uint32_t tps[] = { 1, 2, 3 };
	uint64_t counts[] = { 0, 0, 0 }, by_tp[4] = { 0 };
	struct tp_status st = { .reason = TP_STOP_COMMAND, .fixed_width = true,
				.nlost = 3, .lost_tp = tps, .lost_count = counts };
	struct tp_status back;
	struct rsp_buf b, b2;
	char err[64], *reply;

	(void)state;
	rsp_buf_init(&b);
	rsp_buf_init(&b2);
	tp_status_put_tfile(&st, &b);
	counts[1] = 0x1234;
	counts[2] = 5;
	st.lost = 0x1239;
	st.created = 0x1239;
	tp_status_put_tfile(&st, &b2);
	assert_int_equal(b.len, b2.len);
	rsp_buf_putc(&b2, '\0');
	assert_non_null(strstr(b2.data, ";lost:0000000000001239,1=0000000000000000,"
			       "2=0000000000001234,3=0000000000000005"));
	reply = malloc(b2.len + 1);
	reply[0] = 'T';
	strcpy(reply + 1, b2.data);
	assert_int_equal(tp_status_parse(reply, &back, err, sizeof(err)), 0);
	assert_int_equal(back.lost, 0x1239);
	assert_int_equal(back.created, 0x1239);
	assert_int_equal(tp_status_lost(reply, sum_lost, by_tp), 3);
	assert_int_equal(by_tp[1], 0);
	assert_int_equal(by_tp[2], 0x1234);
	assert_int_equal(by_tp[3], 5);
	free(reply);

	rsp_buf_reset(&b);
	st.fixed_width = false;
	tp_status_put_tfile(&st, &b);
	rsp_buf_putc(&b, '\0');
	assert_string_equal(b.data, "0;tstop::0;tframes:0;tcreated:1239;tfree:0;"
			    "tsize:0;lost:1239,2=1234,3=5");
	st.lost = 0;
	rsp_buf_reset(&b);
	tp_status_put_tfile(&st, &b);
	rsp_buf_putc(&b, '\0');
	assert_null(strstr(b.data, "lost"));

	assert_int_equal(tp_status_lost("T0;tfull:0;tframes:1", NULL, NULL), 0);
	assert_int_equal(tp_status_lost("T0;tfull:0;lost:5,2=3;pad:00", NULL, NULL), 1);
	assert_int_equal(tp_status_lost("T0;tfull:0;lost:", NULL, NULL), -EINVAL);
	assert_int_equal(tp_status_lost("T0;tfull:0;lost:5,2", NULL, NULL), -EINVAL);
	assert_int_equal(tp_status_lost("T0;tfull:0;lost:5,2=x", NULL, NULL), -EINVAL);
	assert_int_equal(tp_status_lost("T0;tfull:0;lost:5,2=3x", NULL, NULL), -EINVAL);
	rsp_buf_free(&b);
	rsp_buf_free(&b2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_lost),
		cmocka_unit_test(test_define_fields),
		cmocka_unit_test(test_upload_matches_gdbserver),
		cmocka_unit_test(test_upload_round_trip),
		cmocka_unit_test(test_long_source_split),
		cmocka_unit_test(test_upload_too_long),
		cmocka_unit_test(test_redownload_identical),
		cmocka_unit_test(test_redefine_different),
		cmocka_unit_test(test_locations_and_lookups),
		cmocka_unit_test(test_init_clears),
		cmocka_unit_test(test_tsv_upload),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_status_lines),
		cmocka_unit_test(test_status_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
