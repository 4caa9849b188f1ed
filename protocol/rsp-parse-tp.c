/*
 * rsp-parse-tp.c - the tracepoint packets (QTDP, QTDV, QTFrame, qTBuffer,
 * QTro, QTNotes, qprobe.* ...) parsed into typed requests; the dispatch
 * table that names them is rsp-parse.c's.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "protocol/rsp.h"
#include "protocol/rsp-request.h"
#include "protocol/rsp-parse-int.h"

/* --- Tracepoint packets ---------------------------------------------------
 *
 * Numbers are hex; gdb pads QTDP addresses to 16 digits.  Bytecode, register
 * masks and conditions are hex strings decoded in place (the decoded bytes
 * are never longer than their hex), so a long action packet costs no
 * scratch beyond its action array.  Facts (gdb 13.1, gdbserver 13.1):
 *   - QTDP:<n>:<addr>:<E|D>:<step>:<pass> then options in any order
 *     (`:F<len>` fast, `:S` static, `:X<len>,<hex>` condition) and a `-`
 *     when action packets follow;
 *   - QTDP:-<n>:<addr>:[S]<actions>[-], actions back to back: R<mask>,
 *     M<basereg>,<offset>,<len>, X<len>,<hex>, L; none of R M X L S is a
 *     hex digit, so every action ends where the next letter starts;
 *   - QTFrame numbers are 32-bit: gdb sends -1 as `ffffffff`.
 */

/* A tracepoint or TSV number: gdb's int, written in hex. */
static int rsp_get_u32(struct rsp_parser *ps, uint32_t *out)
{
	uint64_t v;

	if (rsp_get_hex_max(ps, UINT32_MAX, &v) != 0)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* `<n>:<addr>` (QTDP, QTDPsrc, QTEnable, qTP). */
static int rsp_get_tp_ref(struct rsp_parser *ps, uint32_t *number,
			  uint64_t *addr)
{
	if (rsp_get_u32(ps, number) != 0 || !rsp_eat(ps, ':') ||
	    rsp_get_hex(ps, addr) != 0)
		return -EINVAL;
	return 0;
}

/* Reserves `n` bytes of scratch aligned for any struct. */
static void *rsp_scratch_aligned(struct rsp_parser *ps, size_t n)
{
	const size_t align = _Alignof(max_align_t);
	uintptr_t at = (uintptr_t)(ps->req->scratch + ps->scratch_used);
	size_t pad = (align - at % align) % align;

	if (!rsp_scratch(ps, pad))
		return NULL;
	return rsp_scratch(ps, n);
}

/* A run of hex digits decoded in place; an odd count has an implicit
 * leading 0 (register masks).  Needs at least one digit. */
static int rsp_get_hex_bytes_in_place(struct rsp_parser *ps,
				      const uint8_t **out, size_t *outlen)
{
	char *start = ps->p;
	uint8_t *dst = (uint8_t *)start;
	size_t n, o = 0, i = 0;

	while (ps->p < ps->end && rsp_hex_digit((unsigned char)*ps->p) >= 0)
		ps->p++;
	n = ps->p - start;
	if (n == 0)
		return -EINVAL;
	/* Reading position 2o (or 2o-1) is never behind writing position o. */
	if (n % 2)
		dst[o++] = rsp_hex_digit((unsigned char)start[i++]);
	for (; i < n; i += 2)
		dst[o++] = rsp_hex_digit((unsigned char)start[i]) << 4 |
			   rsp_hex_digit((unsigned char)start[i + 1]);
	*out = dst;
	*outlen = o;
	return 0;
}

/* `<len>,<2*len hex digits>` (X conditions and X actions), in place. */
static int rsp_get_bytecode(struct rsp_parser *ps, const uint8_t **out,
			    size_t *outlen)
{
	uint64_t len;
	size_t got;

	if (rsp_get_hex_max(ps, RSP_MAX_PAYLOAD, &len) != 0 ||
	    !rsp_eat(ps, ','))
		return -EINVAL;
	if ((size_t)(ps->end - ps->p) < 2 * len) {
		ps->req->error = "malformed tracepoint bytecode: shorter than its length";
		return -EINVAL;
	}
	if (len == 0) {
		*out = (const uint8_t *)ps->p;
		*outlen = 0;
		return 0;
	}
	/* Exactly 2*len digits: the next action letter may follow. */
	char *save_end = ps->end;
	ps->end = ps->p + 2 * len;
	int ret = rsp_get_hex_bytes_in_place(ps, out, &got);
	bool all = ps->p == ps->end;
	ps->end = save_end;
	if (ret != 0 || !all || got != len) {
		ps->req->error = "malformed tracepoint bytecode: bad hex";
		return -EINVAL;
	}
	*outlen = got;
	return 0;
}

/* QTDP:<n>:<addr>:<E|D>:<step>:<pass>[:F<len>][:S][:X<len>,<hex>][-] */
static int rsp_parse_tdp_header(struct rsp_parser *ps)
{
	struct rsp_request *req = ps->req;
	uint64_t v;

	if (rsp_get_tp_ref(ps, &req->u.tdp.number, &req->u.tdp.addr) != 0 ||
	    !rsp_eat(ps, ':'))
		return -EINVAL;
	if (rsp_eat(ps, 'E'))
		req->u.tdp.enabled = true;
	else if (!rsp_eat(ps, 'D'))
		return -EINVAL;
	if (!rsp_eat(ps, ':') ||
	    rsp_get_hex(ps, &req->u.tdp.step_count) != 0 ||
	    !rsp_eat(ps, ':') || rsp_get_hex(ps, &req->u.tdp.pass_count) != 0)
		return -EINVAL;
	while (rsp_eat(ps, ':')) {
		if (rsp_eat(ps, 'F')) {
			if (req->u.tdp.fast ||
			    rsp_get_hex_max(ps, UINT32_MAX, &v) != 0)
				return -EINVAL;
			req->u.tdp.fast = true;
			req->u.tdp.fast_len = (uint32_t)v;
		} else if (rsp_eat(ps, 'S')) {
			if (req->u.tdp.is_static)
				return -EINVAL;
			req->u.tdp.is_static = true;
		} else if (rsp_eat(ps, 'X')) {
			if (req->u.tdp.cond ||
			    rsp_get_bytecode(ps, &req->u.tdp.cond,
					     &req->u.tdp.cond_len) != 0)
				return -EINVAL;
		} else {
			req->error = "malformed QTDP packet: unknown option";
			return -EINVAL;
		}
	}
	req->u.tdp.more = rsp_eat(ps, '-');
	return rsp_at_end(ps) ? 0 : -EINVAL;
}

/* One action of a QTDP:- packet (or of an upload record). */
static int rsp_get_tp_action(struct rsp_parser *ps, struct rsp_tp_action *a)
{
	uint64_t v;

	memset(a, 0, sizeof(*a));
	if (rsp_eat(ps, 'R')) {
		a->kind = RSP_TP_ACTION_REGS;
		return rsp_get_hex_bytes_in_place(ps, &a->bytes, &a->len);
	}
	if (rsp_eat(ps, 'M')) {
		a->kind = RSP_TP_ACTION_MEM;
		if (rsp_eat(ps, '-')) {
			if (rsp_get_hex(ps, &v) != 0 || v != 1)
				return -EINVAL;
			a->basereg = -1;
		} else {
			if (rsp_get_hex_max(ps, INT32_MAX, &v) != 0)
				return -EINVAL;
			a->basereg = (int32_t)v;
		}
		if (!rsp_eat(ps, ',') || rsp_get_hex(ps, &a->offset) != 0 ||
		    !rsp_eat(ps, ',') || rsp_get_hex(ps, &a->mem_len) != 0)
			return -EINVAL;
		return 0;
	}
	if (rsp_eat(ps, 'X')) {
		a->kind = RSP_TP_ACTION_EXPR;
		return rsp_get_bytecode(ps, &a->bytes, &a->len);
	}
	if (rsp_eat(ps, 'L')) {
		a->kind = RSP_TP_ACTION_SDATA;
		return 0;
	}
	ps->req->error = "malformed QTDP packet: unknown tracepoint action";
	return -EINVAL;
}

/* QTDP:-<n>:<addr>:[S]<action>...[-]: the actions go to a scratch array. */
static int rsp_parse_tdp_actions(struct rsp_parser *ps)
{
	struct rsp_request *req = ps->req;
	struct rsp_tp_action *first = NULL, *a;

	req->kind = RSP_REQ_TDP_ACTIONS;
	if (rsp_get_tp_ref(ps, &req->u.tdp_actions.number,
			   &req->u.tdp_actions.addr) != 0 || !rsp_eat(ps, ':'))
		return -EINVAL;
	req->u.tdp_actions.stepping = rsp_eat(ps, 'S');
	while (!rsp_at_end(ps) && *ps->p != '-') {
		a = first ? rsp_scratch(ps, sizeof(*a))
			  : rsp_scratch_aligned(ps, sizeof(*a));
		if (!a) {
			req->error = "too many actions in one QTDP packet";
			return -EINVAL;
		}
		if (!first)
			first = a;
		if (rsp_get_tp_action(ps, a) != 0)
			return -EINVAL;
		req->u.tdp_actions.count++;
	}
	req->u.tdp_actions.actions = first;
	req->u.tdp_actions.more = rsp_eat(ps, '-');
	return rsp_at_end(ps) ? 0 : -EINVAL;
}

/* QTDP: a header, or with a leading `-` an action packet. */
int rsp_parse_tdp(struct rsp_parser *ps)
{
	if (rsp_eat(ps, '-'))
		return rsp_parse_tdp_actions(ps);
	return rsp_parse_tdp_header(ps);
}

/* QTDPsrc:<n>:<addr>:<at|cond|cmd>:<start>:<slen>:<hex>[-] */
int rsp_parse_tdp_src(struct rsp_parser *ps)
{
	struct rsp_request *req = ps->req;
	size_t hexlen;
	char *hex;

	if (rsp_get_tp_ref(ps, &req->u.tdp_src.number,
			   &req->u.tdp_src.addr) != 0 || !rsp_eat(ps, ':'))
		return -EINVAL;
	if (rsp_eat_str(ps, "at:"))
		req->u.tdp_src.type = RSP_TP_SRC_AT;
	else if (rsp_eat_str(ps, "cond:"))
		req->u.tdp_src.type = RSP_TP_SRC_COND;
	else if (rsp_eat_str(ps, "cmd:"))
		req->u.tdp_src.type = RSP_TP_SRC_CMD;
	else
		return -EINVAL;
	if (rsp_get_hex(ps, &req->u.tdp_src.start) != 0 || !rsp_eat(ps, ':') ||
	    rsp_get_hex(ps, &req->u.tdp_src.total_len) != 0 ||
	    !rsp_eat(ps, ':'))
		return -EINVAL;
	hex = rsp_get_field(ps, '-', &hexlen);
	req->u.tdp_src.more = rsp_eat(ps, '-');
	if (!rsp_at_end(ps) || memchr(hex, '\0', hexlen))
		return -EINVAL;
	if (rsp_decode_string(ps, hex, hexlen, &req->u.tdp_src.text) != 0)
		return -EINVAL;
	req->u.tdp_src.len = hexlen / 2;
	if (req->u.tdp_src.start > req->u.tdp_src.total_len ||
	    req->u.tdp_src.len > req->u.tdp_src.total_len - req->u.tdp_src.start) {
		req->error = "malformed QTDPsrc packet: piece beyond the string's length";
		return -EINVAL;
	}
	return 0;
}

/* QTDV:<n>:<value>:<builtin>:<hexname> */
int rsp_parse_tdv(struct rsp_parser *ps)
{
	struct rsp_request *req = ps->req;
	uint64_t v;
	size_t len;
	char *hex;

	if (rsp_get_u32(ps, &req->u.tdv.number) != 0 || !rsp_eat(ps, ':'))
		return -EINVAL;
	if (rsp_eat(ps, '-')) {		/* not gdb's form, but unambiguous */
		if (rsp_get_hex_max(ps, (uint64_t)INT64_MAX + 1, &v) != 0)
			return -EINVAL;
		v = -v;
	} else if (rsp_get_hex(ps, &v) != 0) {
		return -EINVAL;
	}
	req->u.tdv.initial = (int64_t)v;
	if (!rsp_eat(ps, ':'))
		return -EINVAL;
	if (rsp_eat(ps, '1'))
		req->u.tdv.builtin = true;
	else if (!rsp_eat(ps, '0'))
		return -EINVAL;
	if (!rsp_eat(ps, ':'))
		return -EINVAL;
	hex = rsp_get_field(ps, '\0', &len);
	if (!rsp_at_end(ps) || len == 0)
		return -EINVAL;
	return rsp_decode_string(ps, hex, len, &req->u.tdv.name);
}

/* QTro:<start>,<end>[:<start>,<end>]... */
int rsp_parse_tro(struct rsp_parser *ps)
{
	struct rsp_request *req = ps->req;
	struct rsp_range *first = NULL, *r;

	do {
		r = first ? rsp_scratch(ps, sizeof(*r))
			  : rsp_scratch_aligned(ps, sizeof(*r));
		if (!r) {
			req->error = "too many ranges in QTro";
			return -EINVAL;
		}
		if (!first)
			first = r;
		if (rsp_get_hex(ps, &r->start) != 0 || !rsp_eat(ps, ',') ||
		    rsp_get_hex(ps, &r->end) != 0)
			return -EINVAL;
		req->u.tro.count++;
	} while (rsp_eat(ps, ':'));
	req->u.tro.ranges = first;
	return rsp_at_end(ps) ? 0 : -EINVAL;
}

/* QTBuffer:size:<hex> or QTBuffer:size:-1 (the target's default). */
int rsp_parse_tbuffer_size(struct rsp_parser *ps)
{
	uint64_t v;

	if (rsp_eat(ps, '-')) {
		if (rsp_get_hex(ps, &v) != 0 || v != 1)
			return -EINVAL;
		ps->req->u.tbuffer_size = -1;
	} else {
		if (rsp_get_hex_max(ps, INT64_MAX, &v) != 0)
			return -EINVAL;
		ps->req->u.tbuffer_size = (int64_t)v;
	}
	return rsp_at_end(ps) ? 0 : -EINVAL;
}

/* QTNotes:<type>:<hex>[;<type>:<hex>]...[;]: user, notes, tstop; other
 * types are skipped (gdb may add some). */
int rsp_parse_tnotes(struct rsp_parser *ps)
{
	struct rsp_request *req = ps->req;
	const char **dst;
	size_t len;
	char *name, *hex;

	while (!rsp_at_end(ps)) {
		name = rsp_get_field(ps, ':', &len);
		if (len == 0 || !rsp_eat(ps, ':'))
			return -EINVAL;
		if (len == 4 && memcmp(name, "user", 4) == 0)
			dst = &req->u.tnotes.user;
		else if (len == 5 && memcmp(name, "notes", 5) == 0)
			dst = &req->u.tnotes.notes;
		else if (len == 5 && memcmp(name, "tstop", 5) == 0)
			dst = &req->u.tnotes.tstop;
		else
			dst = NULL;
		hex = rsp_get_field(ps, ';', &len);
		if (memchr(hex, '\0', len))
			return -EINVAL;
		if (dst && rsp_decode_string(ps, hex, len, dst) != 0)
			return -EINVAL;
		if (!rsp_eat(ps, ';') && !rsp_at_end(ps))
			return -EINVAL;
	}
	return 0;
}

/* QTEnable:/QTDisable:/qTP: <n>:<addr>. */
int rsp_parse_tp_ref(struct rsp_parser *ps)
{
	if (rsp_get_tp_ref(ps, &ps->req->u.tp_ref.number,
			   &ps->req->u.tp_ref.addr) != 0)
		return -EINVAL;
	return rsp_at_end(ps) ? 0 : -EINVAL;
}

/* qTV:<n> */
int rsp_parse_tv(struct rsp_parser *ps)
{
	if (rsp_get_u32(ps, &ps->req->u.tsv_number) != 0)
		return -EINVAL;
	return rsp_at_end(ps) ? 0 : -EINVAL;
}

/* qTSTMat:<addr> */
int rsp_parse_tstm_at(struct rsp_parser *ps)
{
	if (rsp_get_hex(ps, &ps->req->u.tp_ref.addr) != 0)
		return -EINVAL;
	return rsp_at_end(ps) ? 0 : -EINVAL;
}

/* `<lo>:<hi>` of QTFrame:range: and QTFrame:outside:, to the end. */
static int rsp_get_tframe_range(struct rsp_parser *ps)
{
	struct rsp_request *req = ps->req;

	if (rsp_get_hex(ps, &req->u.tframe.lo) != 0 || !rsp_eat(ps, ':') ||
	    rsp_get_hex(ps, &req->u.tframe.hi) != 0)
		return -EINVAL;
	return rsp_at_end(ps) ? 0 : -EINVAL;
}

/* QTFrame:<n> | ffffffff | -1 | pc:<addr> | tdp:<n> | range:<lo>:<hi> |
 * outside:<lo>:<hi> */
int rsp_parse_tframe(struct rsp_parser *ps)
{
	struct rsp_request *req = ps->req;
	uint64_t v;

	if (rsp_eat_str(ps, "range:")) {
		req->u.tframe.kind = RSP_TFRAME_RANGE;
		return rsp_get_tframe_range(ps);
	}
	if (rsp_eat_str(ps, "outside:")) {
		req->u.tframe.kind = RSP_TFRAME_OUTSIDE;
		return rsp_get_tframe_range(ps);
	}
	if (rsp_eat_str(ps, "pc:")) {
		req->u.tframe.kind = RSP_TFRAME_PC;
		if (rsp_get_hex(ps, &req->u.tframe.lo) != 0)
			return -EINVAL;
		req->u.tframe.hi = req->u.tframe.lo;
	} else if (rsp_eat_str(ps, "tdp:")) {
		req->u.tframe.kind = RSP_TFRAME_TDP;
		if (rsp_get_u32(ps, &req->u.tframe.number) != 0)
			return -EINVAL;
	} else if (rsp_eat(ps, '-')) {
		if (rsp_get_hex(ps, &v) != 0 || v != 1)
			return -EINVAL;
		req->u.tframe.kind = RSP_TFRAME_NONE;
	} else {
		if (rsp_get_hex_max(ps, UINT32_MAX, &v) != 0)
			return -EINVAL;
		if (v == UINT32_MAX) {
			req->u.tframe.kind = RSP_TFRAME_NONE;
		} else {
			req->u.tframe.kind = RSP_TFRAME_NUMBER;
			req->u.tframe.number = (uint32_t)v;
		}
	}
	return rsp_at_end(ps) ? 0 : -EINVAL;
}

/* qTBuffer:<offset>,<len> */
int rsp_parse_tbuffer_read(struct rsp_parser *ps)
{
	struct rsp_request *req = ps->req;

	if (rsp_get_hex(ps, &req->u.tbuf_read.offset) != 0 ||
	    !rsp_eat(ps, ',') || rsp_get_hex(ps, &req->u.tbuf_read.len) != 0)
		return -EINVAL;
	return rsp_at_end(ps) ? 0 : -EINVAL;
}

/* qprobe.frames:<hex max bytes> */
int rsp_parse_probe_frames(struct rsp_parser *ps)
{
	if (rsp_get_hex(ps, &ps->req->u.stream_max) != 0)
		return -EINVAL;
	return rsp_at_end(ps) ? 0 : -EINVAL;
}

/* Qprobe.file:<hex offset>;<hex dev>;<hex ino>;<hex path> */
int rsp_parse_probe_file(struct rsp_parser *ps)
{
	struct rsp_request *req = ps->req;
	const char *hex;
	size_t len;

	if (rsp_get_hex(ps, &req->u.probe_file.offset) != 0 || !rsp_eat(ps, ';') ||
	    rsp_get_hex(ps, &req->u.probe_file.dev) != 0 || !rsp_eat(ps, ';') ||
	    rsp_get_hex(ps, &req->u.probe_file.ino) != 0 || !rsp_eat(ps, ';'))
		return -EINVAL;
	hex = rsp_get_field(ps, '\0', &len);
	if (!rsp_at_end(ps) || len == 0)
		return -EINVAL;
	return rsp_decode_string(ps, hex, len, &req->u.probe_file.path);
}

/* QTSave:<hex filename> (not empty). */
int rsp_parse_tsave(struct rsp_parser *ps)
{
	if (rsp_at_end(ps))
		return -EINVAL;
	return rsp_decode_rest(ps, &ps->req->u.str);
}

/* Qprobe.pending:<n>:<addr>:<offset>:<hex symbol>:<hex library> */
int rsp_parse_probe_pending(struct rsp_parser *ps)
{
	struct rsp_request *req = ps->req;
	const char *hex;
	size_t len;

	if (rsp_get_tp_ref(ps, &req->u.pending.number, &req->u.pending.addr) != 0 ||
	    !rsp_eat(ps, ':') || rsp_get_hex(ps, &req->u.pending.offset) != 0 ||
	    !rsp_eat(ps, ':'))
		return -EINVAL;
	hex = rsp_get_field(ps, ':', &len);
	if (!rsp_eat(ps, ':') ||
	    rsp_decode_string(ps, hex, len, &req->u.pending.sym) != 0)
		return -EINVAL;
	hex = rsp_get_field(ps, '\0', &len);
	if (!rsp_at_end(ps) || len == 0)
		return -EINVAL;
	return rsp_decode_string(ps, hex, len, &req->u.pending.lib);
}

/* qRelocInsn:<hex length written> */
int rsp_parse_reloc_insn(struct rsp_parser *ps)
{
	if (rsp_get_hex(ps, &ps->req->u.reloc_len) != 0)
		return -EINVAL;
	return rsp_at_end(ps) ? 0 : -EINVAL;
}
