/*
 * test-rsp-frame.c - the RSP framer, checksums, hex helpers and reply
 * buffers.
 *
 * The framer is a state machine fed whatever read() returned, so every
 * stream here is fed whole, one byte at a time and in every chunk size up
 * to 17 (odd sizes split packets, checksums and escapes at every offset);
 * all feedings must yield the same events.  Packets with known checksums
 * are copied from the gdb 13 transcripts in shared/research, so a checksum
 * bug cannot hide behind a test that computes its expectations with the
 * code under test.
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

/* --- Collecting framer events --------------------------------------------- */

#define MAX_EVENTS 32

struct event {
	enum rsp_event kind;
	char *payload;		/* copy, for RSP_EV_PACKET and TOO_LONG */
	size_t len;
};

struct event_log {
	struct event ev[MAX_EVENTS];
	size_t count;
};

static void log_free(struct event_log *log)
{
	for (size_t i = 0; i < log->count; i++)
		free(log->ev[i].payload);
	log->count = 0;
}

/* Feeds `data` in pieces of `chunk` bytes (0 = all at once). */
static void feed_stream(struct rsp_framer *f, const void *data, size_t len,
			size_t chunk, struct event_log *log)
{
	const uint8_t *p = data;
	size_t off = 0;

	while (off < len) {
		size_t n = chunk ? chunk : len;
		if (n > len - off)
			n = len - off;
		size_t pos = 0;
		/* Drain the piece: the framer stops after each event. */
		while (pos < n) {
			size_t used = 0;
			enum rsp_event ev = rsp_framer_feed(f, p + off + pos,
							    n - pos, &used);
			assert_true(used <= n - pos);
			pos += used;
			if (ev == RSP_EV_NONE) {
				assert_int_equal(pos, n);
				break;
			}
			assert_true(log->count < MAX_EVENTS);
			struct event *e = &log->ev[log->count++];
			e->kind = ev;
			e->len = f->len;
			e->payload = malloc(f->len + 1);
			assert_non_null(e->payload);
			memcpy(e->payload, f->payload, f->len + 1);
		}
		off += n;
	}
}

struct expect {
	enum rsp_event kind;
	const char *payload;	/* NULL: do not compare */
	size_t len;
};

#define EV(kind) { kind, NULL, 0 }
#define PKT(str) { RSP_EV_PACKET, str, sizeof(str) - 1 }
#define NOTE(str) { RSP_EV_NOTIFICATION, str, sizeof(str) - 1 }

/* Checks that every chunking of `stream` gives exactly `want`. */
static void check_stream(const void *stream, size_t len,
			 const struct expect *want, size_t nwant)
{
	for (size_t chunk = 0; chunk <= 17; chunk++) {
		struct rsp_framer f;
		struct event_log log = { .count = 0 };

		rsp_framer_init(&f);
		feed_stream(&f, stream, len, chunk, &log);
		if (log.count != nwant)
			fail_msg("chunk %zu: %zu events, expected %zu", chunk,
				 log.count, nwant);
		for (size_t i = 0; i < nwant; i++) {
			if (log.ev[i].kind != want[i].kind)
				fail_msg("chunk %zu event %zu: kind %d, expected %d",
					 chunk, i, log.ev[i].kind, want[i].kind);
			if (!want[i].payload)
				continue;
			assert_int_equal(log.ev[i].len, want[i].len);
			assert_memory_equal(log.ev[i].payload, want[i].payload,
					    want[i].len);
			/* The payload is handed out NUL-terminated. */
			assert_int_equal(log.ev[i].payload[want[i].len], '\0');
		}
		log_free(&log);
		rsp_framer_free(&f);
	}
}

#define CHECK(stream, ...) do { \
	static const struct expect want_[] = { __VA_ARGS__ }; \
	check_stream(stream, sizeof(stream) - 1, want_, \
		     sizeof(want_) / sizeof(want_[0])); \
} while (0)

/* --- Framing -------------------------------------------------------------- */

static void test_frame_transcript_packets(void **state)
{
	/* Verbatim from rsp-transcript-connect-break.txt. */
	CHECK("$qSupported:multiprocess+;swbreak+;hwbreak+;qRelocInsn+;"
	      "fork-events+;vfork-events+;exec-events+;vContSupported+;"
	      "QThreadEvents+;no-resumed+;memory-tagging+;xmlRegisters=i386#77",
	      PKT("qSupported:multiprocess+;swbreak+;hwbreak+;qRelocInsn+;"
		  "fork-events+;vfork-events+;exec-events+;vContSupported+;"
		  "QThreadEvents+;no-resumed+;memory-tagging+;xmlRegisters=i386"));
	CHECK("+$vMustReplyEmpty#3a+$QStartNoAckMode#b0",
	      EV(RSP_EV_ACK), PKT("vMustReplyEmpty"),
	      EV(RSP_EV_ACK), PKT("QStartNoAckMode"));
	CHECK("$Hgp0.0#ad$qC#b4$vCont;c:p176f.-1#e2",
	      PKT("Hgp0.0"), PKT("qC"), PKT("vCont;c:p176f.-1"));
}

static void test_frame_binary_payload(void **state)
{
	/* X with NUL bytes, as gdb sent it (checksum d2). */
	CHECK("$X555555558084,4:d\0\0\0#d2",
	      PKT("X555555558084,4:d\0\0\0"));
	/* Escapes are left for the packet's parser: `}]` stays `}]`, and
	 * the escaped `#` (0x03) inside a payload is data, not an
	 * interrupt. */
	CHECK("$X0,2:}]}\x03#7a", PKT("X0,2:}]}\x03"));
	/* An upper-case checksum is as good as a lower-case one. */
	CHECK("$qC#B4", PKT("qC"));
}

static void test_frame_acks_and_interrupts(void **state)
{
	CHECK("+-+", EV(RSP_EV_ACK), EV(RSP_EV_NACK), EV(RSP_EV_ACK));
	CHECK("$?#3f\x03$g#67\x03\x03",
	      PKT("?"), EV(RSP_EV_INTERRUPT), PKT("g"),
	      EV(RSP_EV_INTERRUPT), EV(RSP_EV_INTERRUPT));
	/* `+` and `-` inside a payload are data. */
	CHECK("$a+-b#1b", PKT("a+-b"));
}

static void test_frame_bad_checksum(void **state)
{
	/* Wrong checksum, then the resend gdb makes after our `-`. */
	CHECK("$qC#00$qC#b4", EV(RSP_EV_BAD_CHECKSUM), PKT("qC"));
	/* A non-hex checksum character is reported, and whatever it was
	 * (here the resend's `$`, an interrupt, an ack) is still seen. */
	CHECK("$qC#$qC#b4", EV(RSP_EV_BAD_CHECKSUM), PKT("qC"));
	CHECK("$qC#b\x03+", EV(RSP_EV_BAD_CHECKSUM), EV(RSP_EV_INTERRUPT),
	      EV(RSP_EV_ACK));
	CHECK("$qC#zz$g#67", EV(RSP_EV_BAD_CHECKSUM), PKT("g"));
}

static void test_frame_garbage_between_packets(void **state)
{
	CHECK("hello\r\n$g#67 \x7f\xff#12$?#3f",
	      PKT("g"), PKT("?"));
	/* An empty payload is a packet (gdb never sends one, but a stub
	 * sends `$#00` to mean "unsupported"). */
	CHECK("$#00", PKT(""));
}

static void test_frame_notifications(void **state)
{
	/* A stub's notification between replies (non-stop mode). */
	CHECK("$OK#9a%Stop:T0506:0;thread:p1a.1a;#53$OK#9a",
	      PKT("OK"), NOTE("Stop:T0506:0;thread:p1a.1a;"), PKT("OK"));
	/* A bad checksum is reported like a packet's; `%` inside a
	 * payload is data. */
	CHECK("%Stop:W00#00$a%b#e8", EV(RSP_EV_BAD_CHECKSUM), PKT("a%b"));
	/* A `$` restarts: the partial notification is dropped. */
	CHECK("%Sto$vStopped#55", PKT("vStopped"));
}

static void test_frame_dollar_restarts(void **state)
{
	/* A `$` cannot occur in a payload (binary data escapes it), so it
	 * means the sender started over: the partial packet is dropped. */
	CHECK("$qSupp$g#67", PKT("g"));
	CHECK("$$$?#3f", PKT("?"));
}

static void test_frame_truncated(void **state)
{
	struct rsp_framer f;
	struct event_log log = { .count = 0 };

	rsp_framer_init(&f);
	/* Half a packet: nothing yet, and nothing lost. */
	feed_stream(&f, "$qSymbo", 7, 0, &log);
	assert_int_equal(log.count, 0);
	feed_stream(&f, "l::#5b", 6, 0, &log);
	assert_int_equal(log.count, 1);
	assert_int_equal(log.ev[0].kind, RSP_EV_PACKET);
	assert_string_equal(log.ev[0].payload, "qSymbol::");
	log_free(&log);
	/* Cut after the `#` and after one digit. */
	feed_stream(&f, "$g#", 3, 0, &log);
	feed_stream(&f, "6", 1, 0, &log);
	assert_int_equal(log.count, 0);
	feed_stream(&f, "7", 1, 0, &log);
	assert_int_equal(log.count, 1);
	assert_string_equal(log.ev[0].payload, "g");
	log_free(&log);
	rsp_framer_free(&f);
}

static void test_frame_oversized(void **state)
{
	size_t big = RSP_MAX_PAYLOAD + 100;
	size_t len = 0;
	char *s = malloc(2 * big + 64);
	uint8_t sum = 0;

	assert_non_null(s);
	/* One byte too long, one far too long, then normal traffic. */
	for (int round = 0; round < 2; round++) {
		size_t n = round ? big : RSP_MAX_PAYLOAD + 1;
		s[len++] = '$';
		sum = 0;
		for (size_t i = 0; i < n; i++) {
			s[len++] = 'a';
			sum += 'a';
		}
		len += sprintf(s + len, "#%02x", sum);
	}
	len += sprintf(s + len, "$g#67");

	static const struct expect want[] = {
		EV(RSP_EV_TOO_LONG), EV(RSP_EV_TOO_LONG), PKT("g"),
	};
	check_stream(s, len, want, 3);
	free(s);
}

static void test_frame_max_size_fits(void **state)
{
	char *s = malloc(RSP_MAX_PAYLOAD + 8);
	char *want = malloc(RSP_MAX_PAYLOAD);
	uint8_t sum = 0;
	size_t len = 0;

	assert_non_null(s);
	assert_non_null(want);
	s[len++] = '$';
	for (size_t i = 0; i < RSP_MAX_PAYLOAD; i++) {
		char c = "0123456789abcdef"[i % 16];
		want[i] = s[len++] = c;
		sum += (uint8_t)c;
	}
	len += sprintf(s + len, "#%02x", sum);

	const struct expect exp[] = {
		{ RSP_EV_PACKET, want, RSP_MAX_PAYLOAD },
	};
	check_stream(s, len, exp, 1);
	free(s);
	free(want);
}

/* A too-long packet whose checksum is also wrong is a checksum error:
 * gdb will resend it, and the resend will be reported as too long. */
static void test_frame_oversized_bad_checksum(void **state)
{
	size_t len = RSP_MAX_PAYLOAD + 10;
	char *s = malloc(len + 16);

	assert_non_null(s);
	s[0] = '$';
	memset(s + 1, 'b', len - 1);
	len += sprintf(s + len, "#00$?#3f");
	static const struct expect want[] = {
		EV(RSP_EV_BAD_CHECKSUM), PKT("?"),
	};
	check_stream(s, len, want, 2);
	free(s);
}

static void test_frame_empty_input(void **state)
{
	struct rsp_framer f;
	size_t used = 99;

	rsp_framer_init(&f);
	assert_int_equal(rsp_framer_feed(&f, (const uint8_t *)"", 0, &used),
			 RSP_EV_NONE);
	assert_int_equal(used, 0);
	rsp_framer_free(&f);
}

/* --- Checksums and hex ---------------------------------------------------- */

static void test_checksum(void **state)
{
	/* Checksums gdb 13 put on these packets. */
	static const struct {
		const char *payload;
		uint8_t sum;
	} cases[] = {
		{ "qC", 0xb4 },
		{ "vMustReplyEmpty", 0x3a },
		{ "QStartNoAckMode", 0xb0 },
		{ "Hgp0.0", 0xad },
		{ "qXfer:features:read:target.xml:0,1000", 0x0c },
		{ "vCont;r555555555157,55555555515f:p176f.176f;c:p176f.-1", 0xbe },
		{ "", 0x00 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(rsp_checksum(cases[i].payload,
					      strlen(cases[i].payload)),
				 cases[i].sum);
	/* Wraps modulo 256. */
	uint8_t ff[3] = { 0xff, 0xff, 0x03 };
	assert_int_equal(rsp_checksum(ff, 3), 0x01);
}

static void test_hex_digit(void **state)
{
	for (int c = -1; c < 256; c++) {
		int want = -1;
		if (c >= '0' && c <= '9')
			want = c - '0';
		else if (c >= 'a' && c <= 'f')
			want = 10 + c - 'a';
		else if (c >= 'A' && c <= 'F')
			want = 10 + c - 'A';
		assert_int_equal(rsp_hex_digit(c), want);
	}
}

static void test_hex_decode(void **state)
{
	uint8_t out[8];

	assert_int_equal(rsp_hex_decode("00fF7a", 6, out, sizeof(out)), 3);
	assert_int_equal(out[0], 0x00);
	assert_int_equal(out[1], 0xff);
	assert_int_equal(out[2], 0x7a);
	assert_int_equal(rsp_hex_decode("", 0, out, sizeof(out)), 0);
	/* Odd length, bad digit, output too small. */
	assert_int_equal(rsp_hex_decode("abc", 3, out, sizeof(out)), -EINVAL);
	assert_int_equal(rsp_hex_decode("0g", 2, out, sizeof(out)), -EINVAL);
	assert_int_equal(rsp_hex_decode("g0", 2, out, sizeof(out)), -EINVAL);
	assert_int_equal(rsp_hex_decode("001122", 6, out, 2), -EINVAL);
	/* Only hexlen bytes are read, whatever follows. */
	assert_int_equal(rsp_hex_decode("12zz", 2, out, 1), 1);
	assert_int_equal(out[0], 0x12);
}

static void test_unescape(void **state)
{
	char a[] = "a}]b}\x03}\x04}\x0a";
	assert_int_equal(rsp_unescape(a, sizeof(a) - 1), 6);
	assert_memory_equal(a, "a}b#$*", 6);

	char b[] = "ab}";
	assert_int_equal(rsp_unescape(b, 3), -EINVAL);

	char c[] = "";
	assert_int_equal(rsp_unescape(c, 0), 0);

	/* An escaped NUL is 0x20 ("} "), and a raw NUL is data. */
	char d[] = "} \0x";
	assert_int_equal(rsp_unescape(d, 4), 3);
	assert_memory_equal(d, "\0\0x", 3);
}

/* --- Reply buffers -------------------------------------------------------- */

static void test_buf_basic(void **state)
{
	struct rsp_buf b;

	rsp_buf_init(&b);
	rsp_buf_puts(&b, "OK");
	rsp_buf_putc(&b, ';');
	rsp_buf_printf(&b, "%s=%x", "PacketSize", 0x4000);
	assert_int_equal(b.len, strlen("OK;PacketSize=4000"));
	assert_string_equal(b.data, "OK;PacketSize=4000");
	rsp_buf_reset(&b);
	assert_int_equal(b.len, 0);
	assert_string_equal(b.data, "");
	/* Growth past the first allocation keeps earlier contents. */
	for (int i = 0; i < 1000; i++)
		rsp_buf_printf(&b, "%03d", i);
	assert_int_equal(b.len, 3000);
	assert_memory_equal(b.data + 2997, "999", 3);
	assert_memory_equal(b.data, "000001002", 9);
	rsp_buf_free(&b);
	assert_null(b.data);
}

static void test_buf_hex(void **state)
{
	static const uint8_t bytes[] = { 0x00, 0x01, 0x7f, 0x80, 0xab, 0xff };
	struct rsp_buf b;

	rsp_buf_init(&b);
	rsp_buf_put_hex(&b, bytes, sizeof(bytes));
	assert_string_equal(b.data, "00017f80abff");
	rsp_buf_put_hex(&b, bytes, 0);
	assert_int_equal(b.len, 12);
	rsp_buf_free(&b);
}

static void test_buf_escaped_round_trip(void **state)
{
	uint8_t all[256];
	struct rsp_buf b;

	for (int i = 0; i < 256; i++)
		all[i] = i;
	rsp_buf_init(&b);
	rsp_buf_put_escaped(&b, "a#$}*b", 6);
	assert_int_equal(b.len, 10);
	assert_memory_equal(b.data, "a}\x03}\x04}]}\x0a" "b", 10);
	rsp_buf_reset(&b);

	/* Every byte survives escape + unescape, and no framing character
	 * is left raw in the escaped form. */
	rsp_buf_put_escaped(&b, all, sizeof(all));
	assert_int_equal(b.len, 256 + 4);
	for (size_t i = 0; i < b.len; i++) {
		if (b.data[i] == '}') {
			i++;
			continue;
		}
		assert_false(b.data[i] == '#' || b.data[i] == '$' ||
			     b.data[i] == '*');
	}
	assert_int_equal(rsp_unescape(b.data, b.len), 256);
	assert_memory_equal(b.data, all, 256);

	/* Escaping looks at 8 bytes at a time: each special byte at each
	 * place of 40, among neighbours one off from the specials (a borrow
	 * in the word test must not hide or invent one), against escaping a
	 * byte at a time. */
	static const uint8_t special[] = { '#', '$', '}', '*' };
	static const uint8_t near[] = { 0x22, 0x25, 0x7c, 0x7e, 0x29, 0x2b, 0x00, 0xff };
	for (size_t k = 0; k < sizeof(special); k++) {
		for (size_t at = 0; at < 40; at++) {
			uint8_t in[40], want[80];
			size_t wn = 0;
			for (size_t i = 0; i < sizeof(in); i++)
				in[i] = near[(i + at) % sizeof(near)];
			in[at] = special[k];
			if (at + 9 < sizeof(in))
				in[at + 9] = special[(k + 1) % sizeof(special)];
			for (size_t i = 0; i < sizeof(in); i++) {
				bool esc = in[i] == '#' || in[i] == '$' || in[i] == '}' || in[i] == '*';
				if (esc)
					want[wn++] = '}';
				want[wn++] = esc ? in[i] ^ 0x20 : in[i];
			}
			rsp_buf_reset(&b);
			rsp_buf_put_escaped(&b, in, sizeof(in));
			assert_int_equal(b.len, wn);
			assert_memory_equal(b.data, want, wn);
			assert_int_equal(rsp_unescape(b.data, b.len), sizeof(in));
			assert_memory_equal(b.data, in, sizeof(in));
		}
	}
	rsp_buf_free(&b);
}

static void test_buf_error(void **state)
{
	struct rsp_buf b;

	rsp_buf_init(&b);
	rsp_buf_put_error(&b, "no %s at %#x", "thread", 0x10a4);
	assert_string_equal(b.data, "E.no thread at 0x10a4");
	rsp_buf_reset(&b);
	/* Framing characters and newlines cannot appear in the reply. */
	rsp_buf_put_error(&b, "a#b$c}d*e\nf");
	assert_int_equal(b.len, 13);
	assert_memory_equal(b.data, "E.", 2);
	for (size_t i = 2; i < b.len; i++)
		assert_null(strchr("#$}*\n", b.data[i]));
	assert_int_equal(b.data[2], 'a');
	assert_int_equal(b.data[12], 'f');
	rsp_buf_free(&b);
}

static void test_frame_encoder(void **state)
{
	struct rsp_buf b;

	rsp_buf_init(&b);
	rsp_frame(&b, "OK", 2);
	assert_string_equal(b.data, "$OK#9a");
	rsp_frame(&b, "", 0);
	assert_string_equal(b.data, "$OK#9a$#00");
	rsp_buf_reset(&b);
	rsp_frame_notification(&b, "Stop:T05", 8);
	assert_string_equal(b.data, "%Stop:T05#99");
	rsp_buf_reset(&b);

	/* What we frame, our framer reads back. */
	static const char payload[] = "T0506:0*,;07:}]";
	struct rsp_framer f;
	size_t used;
	rsp_frame(&b, payload, sizeof(payload) - 1);
	rsp_framer_init(&f);
	assert_int_equal(rsp_framer_feed(&f, (uint8_t *)b.data, b.len, &used),
			 RSP_EV_PACKET);
	assert_int_equal(used, b.len);
	assert_string_equal(f.payload, payload);
	rsp_framer_free(&f);
	rsp_buf_free(&b);
}

static void test_buf_put_ptid(void **state)
{
	struct rsp_buf b;

	rsp_buf_init(&b);
	rsp_buf_put_ptid(&b, true, 0x10a4, 0x10a5);
	assert_string_equal(b.data, "p10a4.10a5");
	rsp_buf_reset(&b);
	rsp_buf_put_ptid(&b, true, 0x2c87, RSP_ID_ALL);
	assert_string_equal(b.data, "p2c87.-1");
	rsp_buf_reset(&b);
	rsp_buf_put_ptid(&b, true, RSP_ID_ALL, RSP_ID_ALL);
	assert_string_equal(b.data, "p-1.-1");
	rsp_buf_reset(&b);
	rsp_buf_put_ptid(&b, false, 0x10a4, 0x3241);
	assert_string_equal(b.data, "3241");
	rsp_buf_reset(&b);
	rsp_buf_put_ptid(&b, false, 0, 0);
	assert_string_equal(b.data, "0");
	rsp_buf_free(&b);
}

/* The checksum and the framer take words at a time: against a byte at a
 * time, on pseudo-random payloads of every length up to 2100 (past the
 * 128-word flush of the checksum's lanes), with framing bytes in them
 * escaped as a sender does. */
static void test_wordwise_sums(void **state)
{
	static uint8_t raw[2100];
	uint32_t x = 12345;
	struct rsp_buf esc, framed;
	struct rsp_framer f;

	(void)state;
	for (size_t i = 0; i < sizeof(raw); i++) {
		x = x * 1103515245u + 12345u;
		raw[i] = (uint8_t)(x >> 16);
	}
	rsp_buf_init(&esc);
	rsp_buf_init(&framed);
	rsp_framer_init(&f);
	for (size_t len = 0; len <= sizeof(raw); len += (len < 64 ? 1 : 37)) {
		uint8_t want = 0;
		for (size_t i = 0; i < len; i++)
			want += raw[i];
		assert_int_equal(rsp_checksum(raw, len), want);
		for (size_t at = 0; at < 8 && at < len; at++)
			assert_int_equal(rsp_checksum(raw + at, len - at),
					 (uint8_t)(want - rsp_checksum(raw, at)));
		rsp_buf_reset(&esc);
		rsp_buf_put_escaped(&esc, raw, len);
		rsp_buf_reset(&framed);
		rsp_frame(&framed, esc.data, esc.len);
		size_t used;
		assert_int_equal(rsp_framer_feed(&f, (const uint8_t *)framed.data, framed.len,
						 &used), RSP_EV_PACKET);
		assert_int_equal(used, framed.len);
		assert_int_equal(f.len, esc.len);
		assert_memory_equal(f.payload, esc.data, esc.len);
	}
	rsp_framer_free(&f);
	rsp_buf_free(&esc);
	rsp_buf_free(&framed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_transcript_packets),
		cmocka_unit_test(test_frame_binary_payload),
		cmocka_unit_test(test_frame_acks_and_interrupts),
		cmocka_unit_test(test_frame_bad_checksum),
		cmocka_unit_test(test_frame_garbage_between_packets),
		cmocka_unit_test(test_frame_dollar_restarts),
		cmocka_unit_test(test_frame_notifications),
		cmocka_unit_test(test_frame_truncated),
		cmocka_unit_test(test_frame_oversized),
		cmocka_unit_test(test_frame_max_size_fits),
		cmocka_unit_test(test_frame_oversized_bad_checksum),
		cmocka_unit_test(test_frame_empty_input),
		cmocka_unit_test(test_checksum),
		cmocka_unit_test(test_hex_digit),
		cmocka_unit_test(test_hex_decode),
		cmocka_unit_test(test_unescape),
		cmocka_unit_test(test_buf_basic),
		cmocka_unit_test(test_buf_hex),
		cmocka_unit_test(test_buf_escaped_round_trip),
		cmocka_unit_test(test_buf_error),
		cmocka_unit_test(test_frame_encoder),
		cmocka_unit_test(test_buf_put_ptid),
		cmocka_unit_test(test_wordwise_sums),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
