/*
 * fuzz-rsp.c - libFuzzer target for the whole packet layer.
 *
 * The agent reads bytes from gdb over a pipe or socket, which in headless
 * and remote setups is an untrusted peer, so everything between read() and
 * the typed request must survive any input.  Each input is used four ways:
 *
 *   1. as a byte stream for the framer, fed whole and then one byte at a
 *      time: both feedings must report the same events with the same
 *      payloads (a chunking-dependent framer loses packets in real life);
 *   2. every payload the framer hands out (good, bad checksum or too long)
 *      goes through rsp_parse, so mutations of the framed seed packets
 *      reach the parser even when their checksum no longer matches;
 *   3. the raw input goes through rsp_parse as a payload, in a heap copy
 *      of exactly its length plus the framer's NUL, so ASan sees any read
 *      past the end;
 *   4. escape/unescape and hex encode/decode must round-trip it.
 *
 * Request invariants are checked too: INVALID always has a message,
 * nothing else has one, counts stay within their arrays.  A violated
 * property aborts, which libFuzzer reports as a crash with the input.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/rsp.h"
#include "protocol/rsp-request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct rsp_request req;

static void check(bool ok)
{
	if (!ok)
		abort();
}

/* A pointer the request hands out must point into the payload or scratch. */
static void check_inside(const void *p, size_t n, const char *payload,
			 size_t len)
{
	const char *c = p;
	const char *s = (const char *)req.scratch;

	if (!p) {
		check(n == 0);
		return;
	}
	check((c >= payload && c + n <= payload + len + 1) ||
	      (c >= s && c + n <= s + sizeof(req.scratch)));
}

static void parse_and_check(const char *src, size_t len)
{
	char *payload = malloc(len + 1);

	check(payload != NULL);
	memcpy(payload, src, len);
	payload[len] = '\0';
	rsp_parse(payload, len, &req);
	check((unsigned)req.kind < RSP_REQ_KIND_COUNT);
	check(rsp_req_name(req.kind) != NULL);
	check((req.kind == RSP_REQ_INVALID) == (req.error != NULL));
	switch (req.kind) {
	case RSP_REQ_VCONT:
		check(req.u.vcont.count >= 1 &&
		      req.u.vcont.count <= RSP_MAX_VCONT_ACTIONS);
		break;
	case RSP_REQ_VRUN:
		check(req.u.argv.argc >= 1 && req.u.argv.argc < RSP_MAX_ARGV);
		for (size_t i = 0; i < req.u.argv.argc; i++)
			check_inside(req.u.argv.argv[i],
				     strlen(req.u.argv.argv[i]) + 1, payload, len);
		break;
	case RSP_REQ_CATCH_SYSCALLS:
		check(req.u.syscalls.count <= RSP_MAX_SYSCALLS);
		break;
	case RSP_REQ_WRITE_MEM:
		check_inside(req.u.mem.data, req.u.mem.len, payload, len);
		break;
	case RSP_REQ_WRITE_REGS:
		check_inside(req.u.data.data, req.u.data.len, payload, len);
		break;
	case RSP_REQ_WRITE_REG:
		check_inside(req.u.reg.value, req.u.reg.len, payload, len);
		break;
	case RSP_REQ_SEARCH_MEM:
		check_inside(req.u.search.pattern, req.u.search.pattern_len,
			     payload, len);
		break;
	case RSP_REQ_XFER:
		check_inside(req.u.xfer.data, req.u.xfer.data_len, payload, len);
		check(req.u.xfer.object && req.u.xfer.annex);
		break;
	case RSP_REQ_VFILE:
		check_inside(req.u.vfile.data, req.u.vfile.data_len, payload, len);
		if (req.u.vfile.path)
			check_inside(req.u.vfile.path,
				     strlen(req.u.vfile.path) + 1, payload, len);
		break;
	case RSP_REQ_RCMD:
	case RSP_REQ_ENV_SET:
	case RSP_REQ_ENV_UNSET:
	case RSP_REQ_SET_WORKDIR:
	case RSP_REQ_TSAVE:
		check_inside(req.u.str, strlen(req.u.str) + 1, payload, len);
		break;
	case RSP_REQ_TDP:
		check_inside(req.u.tdp.cond, req.u.tdp.cond_len, payload, len);
		break;
	case RSP_REQ_TDP_ACTIONS:
		check_inside(req.u.tdp_actions.actions,
			     req.u.tdp_actions.count * sizeof(struct rsp_tp_action),
			     payload, len);
		for (size_t i = 0; i < req.u.tdp_actions.count; i++) {
			const struct rsp_tp_action *a =
				&req.u.tdp_actions.actions[i];
			check(a->kind == RSP_TP_ACTION_REGS ||
			      a->kind == RSP_TP_ACTION_MEM ||
			      a->kind == RSP_TP_ACTION_EXPR ||
			      a->kind == RSP_TP_ACTION_SDATA);
			check_inside(a->bytes, a->len, payload, len);
		}
		break;
	case RSP_REQ_TDP_SRC:
		check_inside(req.u.tdp_src.text, req.u.tdp_src.len + 1, payload,
			     len);
		check(req.u.tdp_src.start + req.u.tdp_src.len <=
		      req.u.tdp_src.total_len);
		break;
	case RSP_REQ_TDV:
		check_inside(req.u.tdv.name, strlen(req.u.tdv.name) + 1,
			     payload, len);
		break;
	case RSP_REQ_TRO:
		check(req.u.tro.count >= 1);
		check_inside(req.u.tro.ranges,
			     req.u.tro.count * sizeof(struct rsp_range),
			     payload, len);
		break;
	default:
		break;
	}
	free(payload);
}

/* FNV-1a over the event sequence, to compare two feedings cheaply. */
static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static uint64_t frame_all(const uint8_t *data, size_t size, size_t chunk,
			  bool parse)
{
	struct rsp_framer f;
	uint64_t h = 0xcbf29ce484222325ull;
	size_t off = 0;

	rsp_framer_init(&f);
	while (off < size) {
		size_t n = chunk && chunk < size - off ? chunk : size - off;
		size_t pos = 0;

		while (pos < n) {
			size_t used = 0;
			enum rsp_event ev = rsp_framer_feed(&f, data + off + pos,
							    n - pos, &used);
			check(used <= n - pos);
			pos += used;
			if (ev == RSP_EV_NONE) {
				check(pos == n);
				break;
			}
			check(f.len <= RSP_MAX_PAYLOAD);
			h = mix(h, &ev, sizeof(ev));
			if (ev == RSP_EV_PACKET || ev == RSP_EV_BAD_CHECKSUM ||
			    ev == RSP_EV_TOO_LONG) {
				check(f.payload[f.len] == '\0');
				h = mix(h, f.payload, f.len);
				if (parse)
					parse_and_check(f.payload, f.len);
			}
		}
		off += n;
	}
	rsp_framer_free(&f);
	return h;
}

static void round_trips(const uint8_t *data, size_t size)
{
	struct rsp_buf b;
	ssize_t n;

	rsp_buf_init(&b);
	rsp_buf_put_escaped(&b, data, size);
	check(memchr(b.data, '#', b.len) == NULL);
	check(memchr(b.data, '$', b.len) == NULL);
	n = rsp_unescape(b.data, b.len);
	check(n == (ssize_t)size && memcmp(b.data, data, size) == 0);

	rsp_buf_reset(&b);
	rsp_buf_put_hex(&b, data, size);
	uint8_t *back = malloc(size + 1);
	check(back != NULL);
	n = rsp_hex_decode(b.data, b.len, back, size);
	check(n == (ssize_t)size && memcmp(back, data, size) == 0);
	free(back);

	/* Framing what we received and reading it back gives it again,
	 * unless it holds the characters a payload cannot carry raw. */
	if (size <= RSP_MAX_PAYLOAD && !memchr(data, '$', size) &&
	    !memchr(data, '#', size)) {
		struct rsp_framer f;
		size_t used;

		rsp_buf_reset(&b);
		rsp_frame(&b, (const char *)data, size);
		rsp_framer_init(&f);
		check(rsp_framer_feed(&f, (const uint8_t *)b.data, b.len,
				      &used) == RSP_EV_PACKET);
		check(used == b.len && f.len == size &&
		      memcmp(f.payload, data, size) == 0);
		rsp_framer_free(&f);
	}
	rsp_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t whole = frame_all(data, size, 0, true);
	uint64_t bytewise = frame_all(data, size, 1, false);

	check(whole == bytewise);
	parse_and_check((const char *)data, size);
	round_trips(data, size);
	return 0;
}
