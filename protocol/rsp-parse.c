/*
 * rsp-parse.c - turning an RSP payload into a typed `struct rsp_request`.
 *
 * Dispatch is one table of packet names.  The leading name of a payload is
 * matched against every entry and the longest match wins, which is what
 * separates `qC` from `qCRC:`, `vCont?` from `vCont;` and `qSupported` from
 * `qSupported:features`.  Two kinds of entries exist:
 *
 *   - one-letter packets (`m`, `Z`, `H`, `g`...) match as a prefix: the
 *     letter is the whole name and whatever follows is its arguments, so
 *     `g1` is a malformed `g`, not an unknown packet;
 *   - longer names either match exactly (`qC`, `vCont?`, `QEnvironmentReset`)
 *     or carry their separator in the table (`qCRC:`, `vKill;`,
 *     `qThreadExtraInfo,`), so a longer name we do not know (`qCfoo`,
 *     `vMustReplyEmpty`, `qTfPx`) is UNKNOWN and gdb gets the empty reply
 *     that means "not supported".
 *
 * Each entry's parser reads the arguments through a cursor that never goes
 * past the payload's length (binary payloads may hold NUL bytes, so the
 * trailing NUL is never relied on to stop a scan).  A parser returns 0,
 * -EINVAL for malformed arguments (RSP_REQ_INVALID with the entry's usage
 * text, or a more precise message it set itself) or -ENOSYS for a well-formed
 * variant we do not implement (a `Z5`, a `vFile:stat`), which becomes
 * RSP_REQ_UNKNOWN so that gdb disables just that feature.
 *
 * Protocol facts the parsers rely on (gdb 13.1):
 *   - every number is hex without `0x`; gdb pads addresses to 16 digits in
 *     some packets (QTDP), so leading zeros are allowed and only a value that
 *     does not fit 64 bits is an overflow;
 *   - thread ids are `p<pid>.<tid>`, `p<pid>` (all threads of pid),
 *     `p<pid>.-1`, `-1` (all), `0` (any) or a plain `<tid>`;
 *   - `X`, `vFile:pwrite`, `qXfer:...:write` and the `qSearch:memory`
 *     pattern carry escaped binary data, undone here in place;
 *   - strings (paths, environment entries, program arguments, monitor
 *     commands) are hex-encoded and are decoded into req->scratch with a NUL
 *     after each; one that decodes to an embedded NUL is rejected, since the
 *     agent would otherwise act on a silently truncated name.
 *
 * Nothing here allocates: decoded data lives in the payload or in
 * req->scratch, whose bump allocator refuses rather than overflows.
 *
 * The tracepoint packets' parsers are in rsp-parse-tp.c; what the two
 * files share (the cursor and its primitives) is in rsp-parse-int.h.
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


/* --- Cursor primitives --------------------------------------------------- */

bool rsp_at_end(const struct rsp_parser *ps)
{
	return ps->p == ps->end;
}

bool rsp_eat(struct rsp_parser *ps, char c)
{
	if (ps->p < ps->end && *ps->p == c) {
		ps->p++;
		return true;
	}
	return false;
}

bool rsp_eat_str(struct rsp_parser *ps, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, s, n) != 0)
		return false;
	ps->p += n;
	return true;
}

/* Reads one or more hex digits; -EINVAL if there are none, -ERANGE if the
 * value does not fit 64 bits. */
int rsp_get_hex(struct rsp_parser *ps, uint64_t *out)
{
	uint64_t v = 0;
	char *start = ps->p;
	int d;

	while (ps->p < ps->end && (d = rsp_hex_digit((unsigned char)*ps->p)) >= 0) {
		if (v >> 60)
			return -ERANGE;
		v = v << 4 | d;
		ps->p++;
	}
	if (ps->p == start)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A hex number no larger than `max`. */
int rsp_get_hex_max(struct rsp_parser *ps, uint64_t max, uint64_t *out)
{
	int ret = rsp_get_hex(ps, out);

	if (ret == 0 && *out > max)
		return -ERANGE;
	return ret;
}

/* One component of a thread id: `-1` or a hex number that fits int64. */
static int rsp_get_id(struct rsp_parser *ps, int64_t *out)
{
	uint64_t v;

	if (rsp_eat(ps, '-')) {
		if (rsp_get_hex(ps, &v) != 0 || v != 1)
			return -EINVAL;
		*out = RSP_ID_ALL;
		return 0;
	}
	if (rsp_get_hex_max(ps, INT64_MAX, &v) != 0)
		return -EINVAL;
	*out = (int64_t)v;
	return 0;
}

/*
 * A thread id.  `p<pid>` alone means every thread of pid, as gdb uses it in
 * vCont and Hg.  Without the multiprocess prefix, `-1` is every thread of
 * every process (the same value as a vCont action without a thread), `0` is
 * any thread, and a plain number is a tid in whichever process (pid 0).
 */
static int rsp_get_ptid(struct rsp_parser *ps, struct rsp_ptid *ptid)
{
	int64_t id;

	if (rsp_eat(ps, 'p')) {
		if (rsp_get_id(ps, &ptid->pid) != 0)
			return -EINVAL;
		ptid->tid = RSP_ID_ALL;
		if (rsp_eat(ps, '.') && rsp_get_id(ps, &ptid->tid) != 0)
			return -EINVAL;
		return 0;
	}
	if (rsp_get_id(ps, &id) != 0)
		return -EINVAL;
	ptid->pid = id == RSP_ID_ALL ? RSP_ID_ALL : RSP_ID_ANY;
	ptid->tid = id;
	return 0;
}

/* Advances to the next `sep` (or the end) and returns the field's start. */
char *rsp_get_field(struct rsp_parser *ps, char sep, size_t *len)
{
	char *start = ps->p;
	char *q = memchr(ps->p, sep, ps->end - ps->p);

	ps->p = q ? q : ps->end;
	*len = ps->p - start;
	return start;
}

/* Reserves `n` bytes of req->scratch; NULL when it is full. */
uint8_t *rsp_scratch(struct rsp_parser *ps, size_t n)
{
	uint8_t *p;

	if (n > sizeof(ps->req->scratch) - ps->scratch_used)
		return NULL;
	p = ps->req->scratch + ps->scratch_used;
	ps->scratch_used += n;
	return p;
}

/* Hex-decodes `hexlen` bytes at `hex` into scratch. */
static int rsp_decode_bytes(struct rsp_parser *ps, const char *hex,
			    size_t hexlen, const uint8_t **out, size_t *outlen)
{
	uint8_t *dst;
	ssize_t n;

	if (hexlen % 2)
		return -EINVAL;
	dst = rsp_scratch(ps, hexlen / 2);
	if (!dst) {
		ps->req->error = "packet data too long";
		return -EINVAL;
	}
	n = rsp_hex_decode(hex, hexlen, dst, hexlen / 2);
	if (n < 0)
		return -EINVAL;
	*out = dst;
	*outlen = n;
	return 0;
}

/* Hex-decodes a string into scratch, NUL-terminated.  A string that decodes
 * to an embedded NUL is refused: the agent would use a truncated name. */
int rsp_decode_string(struct rsp_parser *ps, const char *hex,
		      size_t hexlen, const char **out)
{
	const uint8_t *bytes = NULL;
	uint8_t *nul;
	size_t n;

	if (rsp_decode_bytes(ps, hex, hexlen, &bytes, &n) != 0)
		return -EINVAL;
	nul = rsp_scratch(ps, 1);
	if (!nul) {
		ps->req->error = "packet data too long";
		return -EINVAL;
	}
	/* Scratch is contiguous, so the NUL lands right after the bytes (or
	 * is the whole string when it is empty). */
	*nul = '\0';
	if (n == 0)
		bytes = nul;
	if (memchr(bytes, '\0', n)) {
		ps->req->error = "hex-encoded string contains a NUL byte";
		return -EINVAL;
	}
	*out = (const char *)bytes;
	return 0;
}

/* Decodes a hex string that runs to the end of the payload. */
int rsp_decode_rest(struct rsp_parser *ps, const char **out)
{
	size_t len;
	const char *hex = rsp_get_field(ps, '\0', &len);

	/* rsp_get_field stopped at an embedded NUL: not hex anyway. */
	if (!rsp_at_end(ps))
		return -EINVAL;
	return rsp_decode_string(ps, hex, len, out);
}

/* Undoes `}` escapes in the rest of the payload, in place. */
static int rsp_unescape_rest(struct rsp_parser *ps, const uint8_t **data,
			     size_t *len)
{
	ssize_t n = rsp_unescape(ps->p, ps->end - ps->p);

	if (n < 0)
		return -EINVAL;
	*data = (const uint8_t *)ps->p;
	*len = n;
	ps->p = ps->end;
	return 0;
}

/* --- Argument parsers, one per packet shape ------------------------------- */

/* `0` or `1` to the end: u.flag. */
static int rsp_parse_flag(struct rsp_parser *ps)
{
	if (rsp_eat(ps, '0'))
		ps->req->u.flag = 0;
	else if (rsp_eat(ps, '1'))
		ps->req->u.flag = 1;
	else
		return -EINVAL;
	return rsp_at_end(ps) ? 0 : -EINVAL;
}

/* Everything after the name, as is: u.str. */
static int rsp_parse_rest_str(struct rsp_parser *ps)
{
	ps->req->u.str = ps->p;
	ps->p = ps->end;
	return 0;
}

/* A hex pid to the end: u.pid. */
static int rsp_parse_pid(struct rsp_parser *ps)
{
	uint64_t v;

	if (rsp_get_hex_max(ps, INT64_MAX, &v) != 0 || !rsp_at_end(ps))
		return -EINVAL;
	ps->req->u.pid = (int64_t)v;
	return 0;
}

/* A thread id to the end: u.ptid. */
static int rsp_parse_ptid_only(struct rsp_parser *ps)
{
	if (rsp_get_ptid(ps, &ps->req->u.ptid) != 0 || !rsp_at_end(ps))
		return -EINVAL;
	return 0;
}

/* A hex-encoded string to the end (may be empty): u.str. */
static int rsp_parse_hex_str(struct rsp_parser *ps)
{
	return rsp_decode_rest(ps, &ps->req->u.str);
}

/* qSupported with gdb's feature list. */
static int rsp_parse_qsupported(struct rsp_parser *ps)
{
	return rsp_parse_rest_str(ps);
}

/* H<op><ptid>: g (registers/memory), c (legacy resume), s (obsolete step). */
static int rsp_parse_set_thread(struct rsp_parser *ps)
{
	if (rsp_at_end(ps) || *ps->p == '\0' || !strchr("gcs", *ps->p))
		return -EINVAL;
	ps->req->u.set_thread.op = *ps->p++;
	if (rsp_get_ptid(ps, &ps->req->u.set_thread.ptid) != 0)
		return -EINVAL;
	return rsp_at_end(ps) ? 0 : -EINVAL;
}

/*
 * QPassSignals:/QProgramSignals:, hex gdb signal numbers each followed by
 * `;` (gdb 13 writes `e;10;14;` with a trailing `;`; older gdbs separate
 * without one).  An empty list is how gdb says "none" while stepping over a
 * breakpoint.
 */
static int rsp_parse_signal_list(struct rsp_parser *ps)
{
	uint64_t sig;

	while (!rsp_at_end(ps)) {
		if (rsp_get_hex(ps, &sig) != 0)
			return -EINVAL;
		if (sig >= 256) {
			ps->req->error = "signal number out of range";
			return -EINVAL;
		}
		ps->req->u.sigs.set[sig] = true;
		if (!rsp_eat(ps, ';'))
			break;
	}
	return rsp_at_end(ps) ? 0 : -EINVAL;
}

/* QCatchSyscalls:0 | 1 | 1;nr;nr... (gdb 13 resends it around each stop). */
static int rsp_parse_catch_syscalls(struct rsp_parser *ps)
{
	struct rsp_request *req = ps->req;
	uint64_t nr;

	if (rsp_eat(ps, '0'))
		return rsp_at_end(ps) ? 0 : -EINVAL;
	if (!rsp_eat(ps, '1'))
		return -EINVAL;
	req->u.syscalls.enable = true;
	req->u.syscalls.any = rsp_at_end(ps);
	while (rsp_eat(ps, ';')) {
		if (rsp_get_hex_max(ps, INT_MAX, &nr) != 0)
			return -EINVAL;
		if (req->u.syscalls.count == RSP_MAX_SYSCALLS) {
			req->error = "too many system calls in QCatchSyscalls";
			return -EINVAL;
		}
		req->u.syscalls.nr[req->u.syscalls.count++] = (int)nr;
	}
	return rsp_at_end(ps) ? 0 : -EINVAL;
}

/* qAttached or qAttached:<pid>. */
static int rsp_parse_qattached(struct rsp_parser *ps)
{
	return rsp_parse_pid(ps);
}

/* qRcmd,<hex command>: `monitor` with no words sends an empty one. */
static int rsp_parse_rcmd(struct rsp_parser *ps)
{
	return rsp_decode_rest(ps, &ps->req->u.str);
}

/*
 * qXfer:<object>:read:<annex>:<offset>,<length>
 * qXfer:<object>:write:<annex>:<offset>:<escaped data>
 * The annex is often empty (`qXfer:auxv:read::0,1000`) and never holds a
 * `:`; object and annex are NUL-terminated in place over their colons.
 */
static int rsp_parse_xfer(struct rsp_parser *ps)
{
	struct rsp_request *req = ps->req;
	size_t len;
	char *s;

	s = rsp_get_field(ps, ':', &len);
	if (len == 0 || !rsp_eat(ps, ':'))
		return -EINVAL;
	s[len] = '\0';
	req->u.xfer.object = s;
	if (rsp_eat_str(ps, "read:"))
		req->u.xfer.write = false;
	else if (rsp_eat_str(ps, "write:"))
		req->u.xfer.write = true;
	else
		return -EINVAL;
	s = rsp_get_field(ps, ':', &len);
	if (!rsp_eat(ps, ':'))
		return -EINVAL;
	s[len] = '\0';
	req->u.xfer.annex = s;
	if (rsp_get_hex(ps, &req->u.xfer.offset) != 0)
		return -EINVAL;
	if (!req->u.xfer.write) {
		if (!rsp_eat(ps, ',') ||
		    rsp_get_hex(ps, &req->u.xfer.length) != 0)
			return -EINVAL;
		return rsp_at_end(ps) ? 0 : -EINVAL;
	}
	if (!rsp_eat(ps, ':'))
		return -EINVAL;
	return rsp_unescape_rest(ps, &req->u.xfer.data, &req->u.xfer.data_len);
}

/* qSearch:memory:<addr>;<length>;<escaped pattern> (the `find` command). */
static int rsp_parse_search(struct rsp_parser *ps)
{
	struct rsp_request *req = ps->req;

	if (rsp_get_hex(ps, &req->u.search.addr) != 0 || !rsp_eat(ps, ';') ||
	    rsp_get_hex(ps, &req->u.search.len) != 0 || !rsp_eat(ps, ';'))
		return -EINVAL;
	return rsp_unescape_rest(ps, &req->u.search.pattern,
				 &req->u.search.pattern_len);
}

/* `<addr>,<length>` into u.mem; `max` bounds the length. */
static int rsp_get_addr_len(struct rsp_parser *ps, uint64_t max)
{
	struct rsp_request *req = ps->req;
	uint64_t len;

	if (rsp_get_hex(ps, &req->u.mem.addr) != 0 || !rsp_eat(ps, ','))
		return -EINVAL;
	switch (rsp_get_hex_max(ps, max, &len)) {
	case 0:
		break;
	case -ERANGE:
		req->error = "memory length too large (limit 1 MiB)";
		return -EINVAL;
	default:
		return -EINVAL;
	}
	req->u.mem.len = (size_t)len;
	return 0;
}

/* qCRC:<addr>,<length>: compare-sections may cover whole sections. */
static int rsp_parse_crc(struct rsp_parser *ps)
{
	if (rsp_get_addr_len(ps, SIZE_MAX) != 0)
		return -EINVAL;
	return rsp_at_end(ps) ? 0 : -EINVAL;
}

/* qGetTLSAddr:<thread-id>,<offset>,<lm>. */
static int rsp_parse_get_tls_addr(struct rsp_parser *ps)
{
	struct rsp_request *req = ps->req;

	if (rsp_get_ptid(ps, &req->u.tls.ptid) != 0 || !rsp_eat(ps, ',') ||
	    rsp_get_hex(ps, &req->u.tls.offset) != 0 || !rsp_eat(ps, ',') ||
	    rsp_get_hex(ps, &req->u.tls.lm) != 0)
		return -EINVAL;
	return rsp_at_end(ps) ? 0 : -EINVAL;
}

/* qMemoryRegionInfo:<addr>: u.mem.addr. */
static int rsp_parse_memory_region(struct rsp_parser *ps)
{
	if (rsp_get_hex(ps, &ps->req->u.mem.addr) != 0)
		return -EINVAL;
	ps->req->u.mem.len = 0;
	return rsp_at_end(ps) ? 0 : -EINVAL;
}

/* m<addr>,<length>. */
static int rsp_parse_read_mem(struct rsp_parser *ps)
{
	if (rsp_get_addr_len(ps, RSP_MAX_MEM_LEN) != 0)
		return -EINVAL;
	return rsp_at_end(ps) ? 0 : -EINVAL;
}

/* M<addr>,<length>:<hex>: the hex must hold exactly `length` bytes. */
static int rsp_parse_write_mem_hex(struct rsp_parser *ps)
{
	struct rsp_request *req = ps->req;
	size_t hexlen, n;
	const char *hex;

	if (rsp_get_addr_len(ps, RSP_MAX_MEM_LEN) != 0 || !rsp_eat(ps, ':'))
		return -EINVAL;
	hex = rsp_get_field(ps, '\0', &hexlen);
	if (!rsp_at_end(ps) || hexlen != 2 * req->u.mem.len) {
		req->error = "malformed M packet: data length does not match";
		return -EINVAL;
	}
	return rsp_decode_bytes(ps, hex, hexlen, &req->u.mem.data, &n);
}

/* X<addr>,<length>:<escaped binary>; gdb probes support with `X<addr>,0:`. */
static int rsp_parse_write_mem_bin(struct rsp_parser *ps)
{
	struct rsp_request *req = ps->req;
	size_t n;

	if (rsp_get_addr_len(ps, RSP_MAX_MEM_LEN) != 0 || !rsp_eat(ps, ':'))
		return -EINVAL;
	if (rsp_unescape_rest(ps, &req->u.mem.data, &n) != 0)
		return -EINVAL;
	if (n != req->u.mem.len) {
		req->error = "malformed X packet: data length does not match";
		return -EINVAL;
	}
	return 0;
}

/* G<hex>: the whole register block in target.xml order. */
static int rsp_parse_write_regs(struct rsp_parser *ps)
{
	size_t hexlen;
	const char *hex = rsp_get_field(ps, '\0', &hexlen);

	if (hexlen == 0 || !rsp_at_end(ps))
		return -EINVAL;
	return rsp_decode_bytes(ps, hex, hexlen, &ps->req->u.data.data,
				&ps->req->u.data.len);
}

/* p<regnum>. */
static int rsp_parse_read_reg(struct rsp_parser *ps)
{
	uint64_t n;

	if (rsp_get_hex_max(ps, UINT_MAX, &n) != 0 || !rsp_at_end(ps))
		return -EINVAL;
	ps->req->u.reg.regnum = (unsigned int)n;
	return 0;
}

/* P<regnum>=<hex value in target byte order>. */
static int rsp_parse_write_reg(struct rsp_parser *ps)
{
	struct rsp_request *req = ps->req;
	size_t hexlen;
	const char *hex;
	uint64_t n;

	if (rsp_get_hex_max(ps, UINT_MAX, &n) != 0 || !rsp_eat(ps, '='))
		return -EINVAL;
	req->u.reg.regnum = (unsigned int)n;
	hex = rsp_get_field(ps, '\0', &hexlen);
	if (hexlen == 0 || !rsp_at_end(ps))
		return -EINVAL;
	return rsp_decode_bytes(ps, hex, hexlen, &req->u.reg.value,
				&req->u.reg.len);
}

/* A gdb signal number as vCont and C/S write it (two hex digits). */
static int rsp_get_signal(struct rsp_parser *ps, int *sig)
{
	uint64_t v;

	if (rsp_get_hex_max(ps, 255, &v) != 0)
		return -EINVAL;
	*sig = (int)v;
	return 0;
}

/*
 * vCont;<action>[:<ptid>][;<action>[:<ptid>]]...
 * Actions: c, C<sig>, s, S<sig>, t, r<start>,<end>.  gdb lists the most
 * specific thread first (`vCont;r...:p176f.176f;c:p176f.-1`): the leftmost
 * action that matches a thread is the one that applies to it.
 */
static int rsp_parse_vcont(struct rsp_parser *ps)
{
	struct rsp_request *req = ps->req;

	do {
		struct rsp_resume_action *a;

		if (req->u.vcont.count == RSP_MAX_VCONT_ACTIONS) {
			req->error = "too many vCont actions";
			return -EINVAL;
		}
		a = &req->u.vcont.actions[req->u.vcont.count++];
		a->ptid.pid = a->ptid.tid = RSP_ID_ALL;
		if (rsp_at_end(ps))
			return -EINVAL;
		switch (*ps->p++) {
		case 'c':
			a->kind = RSP_RESUME_CONTINUE;
			break;
		case 'C':
			a->kind = RSP_RESUME_CONTINUE;
			if (rsp_get_signal(ps, &a->signal) != 0)
				return -EINVAL;
			break;
		case 's':
			a->kind = RSP_RESUME_STEP;
			break;
		case 'S':
			a->kind = RSP_RESUME_STEP;
			if (rsp_get_signal(ps, &a->signal) != 0)
				return -EINVAL;
			break;
		case 't':
			a->kind = RSP_RESUME_STOP;
			break;
		case 'r':
			a->kind = RSP_RESUME_RANGE;
			if (rsp_get_hex(ps, &a->range_start) != 0 ||
			    !rsp_eat(ps, ',') ||
			    rsp_get_hex(ps, &a->range_end) != 0)
				return -EINVAL;
			break;
		default:
			return -EINVAL;
		}
		if (rsp_eat(ps, ':') && rsp_get_ptid(ps, &a->ptid) != 0)
			return -EINVAL;
	} while (rsp_eat(ps, ';'));
	return rsp_at_end(ps) ? 0 : -EINVAL;
}

/*
 * Legacy c [addr], C sig[;addr], s [addr], S sig[;addr].  gdb 13 only falls
 * back to them when vCont? is unsupported, and never passes an address; we
 * turn them into a one-action vCont for every thread (legacy = true, so the
 * agent may apply the Hc thread as gdbserver does) and refuse the address
 * form, which would need the PC set before resuming.
 */
static int rsp_parse_legacy_resume(struct rsp_parser *ps, enum rsp_resume_kind kind,
				   bool has_signal)
{
	struct rsp_request *req = ps->req;
	struct rsp_resume_action *a = &req->u.vcont.actions[0];
	uint64_t addr;

	req->kind = RSP_REQ_VCONT;
	req->u.vcont.count = 1;
	req->u.vcont.legacy = true;
	a->kind = kind;
	a->ptid.pid = a->ptid.tid = RSP_ID_ALL;
	if (has_signal && rsp_get_signal(ps, &a->signal) != 0)
		return -EINVAL;
	if (rsp_at_end(ps))
		return 0;
	if (has_signal && !rsp_eat(ps, ';'))
		return -EINVAL;
	if (rsp_get_hex(ps, &addr) != 0 || !rsp_at_end(ps))
		return -EINVAL;
	req->error = "resuming at an address is not supported";
	return -EINVAL;
}

static int rsp_parse_c(struct rsp_parser *ps)
{
	return rsp_parse_legacy_resume(ps, RSP_RESUME_CONTINUE, false);
}

static int rsp_parse_big_c(struct rsp_parser *ps)
{
	return rsp_parse_legacy_resume(ps, RSP_RESUME_CONTINUE, true);
}

static int rsp_parse_s(struct rsp_parser *ps)
{
	return rsp_parse_legacy_resume(ps, RSP_RESUME_STEP, false);
}

static int rsp_parse_big_s(struct rsp_parser *ps)
{
	return rsp_parse_legacy_resume(ps, RSP_RESUME_STEP, true);
}

/* D or D;<pid> (gdb detaches a forked child with `D;2cc4`). */
static int rsp_parse_detach(struct rsp_parser *ps)
{
	if (rsp_at_end(ps))
		return 0;
	if (!rsp_eat(ps, ';'))
		return -EINVAL;
	return rsp_parse_pid(ps);
}

/* R<xx>: the argument is ignored by every stub; gdb sends `R0`. */
static int rsp_parse_restart(struct rsp_parser *ps)
{
	uint64_t ignored;

	if (rsp_at_end(ps))
		return 0;
	if (rsp_get_hex(ps, &ignored) != 0 || !rsp_at_end(ps))
		return -EINVAL;
	return 0;
}

/*
 * vRun;<hex program>[;<hex arg>]...  An empty program means "the one the
 * agent was started with".  argv[] is left NULL-terminated (so at most
 * RSP_MAX_ARGV - 1 entries) so the agent can hand it to execve directly.
 */
static int rsp_parse_vrun(struct rsp_parser *ps)
{
	struct rsp_request *req = ps->req;

	do {
		size_t len;
		const char *hex = rsp_get_field(ps, ';', &len);

		if (req->u.argv.argc == RSP_MAX_ARGV - 1) {
			req->error = "too many arguments in vRun";
			return -EINVAL;
		}
		/* An embedded NUL stops the field short of the next `;`. */
		if (memchr(hex, '\0', len))
			return -EINVAL;
		if (rsp_decode_string(ps, hex, len,
				      &req->u.argv.argv[req->u.argv.argc]) != 0)
			return -EINVAL;
		req->u.argv.argc++;
	} while (rsp_eat(ps, ';'));
	req->u.argv.argv[req->u.argv.argc] = NULL;
	return rsp_at_end(ps) ? 0 : -EINVAL;
}

/* Z/z<type>,<addr>,<kind>: types beyond 4 are "unsupported", not errors. */
static int rsp_parse_point_common(struct rsp_parser *ps)
{
	struct rsp_request *req = ps->req;
	uint64_t type, kind;

	if (rsp_get_hex(ps, &type) != 0 || !rsp_eat(ps, ','))
		return -EINVAL;
	if (rsp_get_hex(ps, &req->u.point.addr) != 0 || !rsp_eat(ps, ',') ||
	    rsp_get_hex_max(ps, UINT_MAX, &kind) != 0)
		return -EINVAL;
	if (type > RSP_POINT_ACCESS_WATCH)
		return -ENOSYS;
	req->u.point.type = (enum rsp_point_type)type;
	req->u.point.kind = (unsigned int)kind;
	return 0;
}

/*
 * Z<type>,<addr>,<kind>[;X<len>,<bytecode>...][;cmds:<persist>,X<len>,...]
 * gdb attaches target-side conditions and commands to software and hardware
 * breakpoints (never to watchpoints); the tail after the first `;` is kept
 * raw for the bytecode layer.
 */
static int rsp_parse_insert_point(struct rsp_parser *ps)
{
	struct rsp_request *req = ps->req;
	int ret = rsp_parse_point_common(ps);

	if (ret != 0)
		return ret;
	if (rsp_at_end(ps))
		return 0;
	if (!rsp_eat(ps, ';') || req->u.point.type > RSP_POINT_HW_BREAK ||
	    rsp_at_end(ps))
		return -EINVAL;
	req->u.point.cond_and_cmds = ps->p;
	ps->p = ps->end;
	return 0;
}

static int rsp_parse_remove_point(struct rsp_parser *ps)
{
	int ret = rsp_parse_point_common(ps);

	if (ret != 0)
		return ret;
	return rsp_at_end(ps) ? 0 : -EINVAL;
}

/* A hex value that fits an int (fds, open flags and modes). */
static int rsp_get_int(struct rsp_parser *ps, int *out)
{
	uint64_t v;

	if (rsp_get_hex_max(ps, INT_MAX, &v) != 0)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

/* A hex-encoded path up to `sep` (or the end when sep is NUL). */
static int rsp_get_path(struct rsp_parser *ps, char sep)
{
	size_t len;
	const char *hex = rsp_get_field(ps, sep, &len);

	if (len == 0 || memchr(hex, '\0', len))
		return -EINVAL;
	return rsp_decode_string(ps, hex, len, &ps->req->u.vfile.path);
}

/*
 * vFile:<op>:<args> (host I/O; gdb reads the executable and every shared
 * library this way while sysroot is `target:`).  Numbers are hex, paths
 * hex-encoded, pwrite data escaped binary.  An operation we do not know
 * (gdb 15's vFile:stat, vFile:lstat) is UNKNOWN so gdb falls back.
 */
static int rsp_parse_vfile(struct rsp_parser *ps)
{
	struct rsp_request *req = ps->req;
	uint64_t v;

	if (rsp_eat_str(ps, "setfs:")) {
		req->u.vfile.op = RSP_VFILE_SETFS;
		if (rsp_get_hex_max(ps, INT64_MAX, &v) != 0)
			return -EINVAL;
		req->u.vfile.pid = (int64_t)v;
	} else if (rsp_eat_str(ps, "open:")) {
		req->u.vfile.op = RSP_VFILE_OPEN;
		if (rsp_get_path(ps, ',') != 0 || !rsp_eat(ps, ',') ||
		    rsp_get_int(ps, &req->u.vfile.flags) != 0 ||
		    !rsp_eat(ps, ',') ||
		    rsp_get_int(ps, &req->u.vfile.mode) != 0)
			return -EINVAL;
	} else if (rsp_eat_str(ps, "close:")) {
		req->u.vfile.op = RSP_VFILE_CLOSE;
		if (rsp_get_int(ps, &req->u.vfile.fd) != 0)
			return -EINVAL;
	} else if (rsp_eat_str(ps, "pread:")) {
		req->u.vfile.op = RSP_VFILE_PREAD;
		if (rsp_get_int(ps, &req->u.vfile.fd) != 0 ||
		    !rsp_eat(ps, ',') ||
		    rsp_get_hex(ps, &req->u.vfile.count) != 0 ||
		    !rsp_eat(ps, ',') ||
		    rsp_get_hex(ps, &req->u.vfile.offset) != 0)
			return -EINVAL;
	} else if (rsp_eat_str(ps, "pwrite:")) {
		req->u.vfile.op = RSP_VFILE_PWRITE;
		if (rsp_get_int(ps, &req->u.vfile.fd) != 0 ||
		    !rsp_eat(ps, ',') ||
		    rsp_get_hex(ps, &req->u.vfile.offset) != 0 ||
		    !rsp_eat(ps, ','))
			return -EINVAL;
		return rsp_unescape_rest(ps, &req->u.vfile.data,
					 &req->u.vfile.data_len);
	} else if (rsp_eat_str(ps, "fstat:")) {
		req->u.vfile.op = RSP_VFILE_FSTAT;
		if (rsp_get_int(ps, &req->u.vfile.fd) != 0)
			return -EINVAL;
	} else if (rsp_eat_str(ps, "unlink:")) {
		req->u.vfile.op = RSP_VFILE_UNLINK;
		if (rsp_get_path(ps, '\0') != 0)
			return -EINVAL;
	} else if (rsp_eat_str(ps, "readlink:")) {
		req->u.vfile.op = RSP_VFILE_READLINK;
		if (rsp_get_path(ps, '\0') != 0)
			return -EINVAL;
	} else if (rsp_at_end(ps) || *ps->p == ':') {
		return -EINVAL;		/* no operation at all */
	} else {
		return -ENOSYS;
	}
	return rsp_at_end(ps) ? 0 : -EINVAL;
}

/* --- The dispatch table -------------------------------------------------- */

/* Longer names match only as a whole (see the opening comment). */
#define RSP_EXACT 1

struct rsp_packet_def {
	const char *name;
	size_t name_len;
	enum rsp_req_kind kind;
	unsigned flags;
	/* Parses what follows the name; NULL = no arguments allowed. */
	int (*parse)(struct rsp_parser *ps);
	const char *usage;	/* the RSP_REQ_INVALID message */
};

#define PKT(name, kind, flags, parse, usage) \
	{ name, sizeof(name) - 1, kind, flags, parse, usage }

static const struct rsp_packet_def rsp_packets[] = {
	/* handshake and general queries */
	PKT("qSupported", RSP_REQ_QSUPPORTED, RSP_EXACT, NULL, NULL),
	PKT("qSupported:", RSP_REQ_QSUPPORTED, 0, rsp_parse_qsupported, NULL),
	PKT("QStartNoAckMode", RSP_REQ_START_NOACK, RSP_EXACT, NULL, NULL),
	PKT("!", RSP_REQ_EXTENDED, 0, NULL,
	    "malformed ! packet: expected no arguments"),
	PKT("?", RSP_REQ_HALT_REASON, 0, NULL,
	    "malformed ? packet: expected no arguments"),
	PKT("qAttached", RSP_REQ_QATTACHED, RSP_EXACT, NULL, NULL),
	PKT("qAttached:", RSP_REQ_QATTACHED, 0, rsp_parse_qattached,
	    "malformed qAttached packet: expected qAttached:<pid>"),
	PKT("qC", RSP_REQ_QC, RSP_EXACT, NULL, NULL),
	PKT("qOffsets", RSP_REQ_QOFFSETS, RSP_EXACT, NULL, NULL),
	PKT("qSymbol:", RSP_REQ_QSYMBOL, 0, rsp_parse_rest_str, NULL),
	PKT("qfThreadInfo", RSP_REQ_THREADINFO_FIRST, RSP_EXACT, NULL, NULL),
	PKT("qsThreadInfo", RSP_REQ_THREADINFO_NEXT, RSP_EXACT, NULL, NULL),
	PKT("qThreadExtraInfo,", RSP_REQ_THREAD_EXTRA, 0, rsp_parse_ptid_only,
	    "malformed qThreadExtraInfo packet: expected qThreadExtraInfo,<thread-id>"),
	PKT("T", RSP_REQ_THREAD_ALIVE, 0, rsp_parse_ptid_only,
	    "malformed T packet: expected T<thread-id>"),
	PKT("H", RSP_REQ_SET_THREAD, 0, rsp_parse_set_thread,
	    "malformed H packet: expected H<g|c><thread-id>"),
	PKT("qRcmd,", RSP_REQ_RCMD, 0, rsp_parse_rcmd,
	    "malformed qRcmd packet: expected qRcmd,<hex command>"),
	PKT("qXfer:", RSP_REQ_XFER, 0, rsp_parse_xfer,
	    "malformed qXfer packet: expected qXfer:<object>:read:<annex>:<offset>,<length> or :write:<annex>:<offset>:<data>"),
	PKT("qSearch:memory:", RSP_REQ_SEARCH_MEM, 0, rsp_parse_search,
	    "malformed qSearch:memory packet: expected qSearch:memory:<addr>;<length>;<pattern>"),
	PKT("qCRC:", RSP_REQ_CRC, 0, rsp_parse_crc,
	    "malformed qCRC packet: expected qCRC:<addr>,<length>"),
	PKT("qTStatus", RSP_REQ_TSTATUS, RSP_EXACT, NULL, NULL),
	PKT("qGetTLSAddr:", RSP_REQ_GET_TLS_ADDR, 0, rsp_parse_get_tls_addr,
	    "malformed qGetTLSAddr packet: expected qGetTLSAddr:<thread-id>,<offset>,<lm>"),
	PKT("qShlibInfoAddr", RSP_REQ_SHLIB_INFO_ADDR, RSP_EXACT, NULL, NULL),
	PKT("qMemoryRegionInfo:", RSP_REQ_MEMORY_REGION, 0, rsp_parse_memory_region,
	    "malformed qMemoryRegionInfo packet: expected qMemoryRegionInfo:<addr>"),

	/* settings */
	PKT("QNonStop:", RSP_REQ_NONSTOP, 0, rsp_parse_flag,
	    "malformed QNonStop packet: expected QNonStop:0 or 1"),
	PKT("QPassSignals:", RSP_REQ_PASS_SIGNALS, 0, rsp_parse_signal_list,
	    "malformed QPassSignals packet: expected QPassSignals:<sig>;<sig>..."),
	PKT("QProgramSignals:", RSP_REQ_PROGRAM_SIGNALS, 0, rsp_parse_signal_list,
	    "malformed QProgramSignals packet: expected QProgramSignals:<sig>;<sig>..."),
	PKT("QThreadEvents:", RSP_REQ_THREAD_EVENTS, 0, rsp_parse_flag,
	    "malformed QThreadEvents packet: expected QThreadEvents:0 or 1"),
	PKT("QCatchSyscalls:", RSP_REQ_CATCH_SYSCALLS, 0, rsp_parse_catch_syscalls,
	    "malformed QCatchSyscalls packet: expected QCatchSyscalls:0 or 1[;<nr>]..."),
	PKT("QDisableRandomization:", RSP_REQ_DISABLE_RANDOMIZATION, 0,
	    rsp_parse_flag,
	    "malformed QDisableRandomization packet: expected QDisableRandomization:0 or 1"),
	PKT("QStartupWithShell:", RSP_REQ_STARTUP_WITH_SHELL, 0, rsp_parse_flag,
	    "malformed QStartupWithShell packet: expected QStartupWithShell:0 or 1"),
	PKT("QEnvironmentReset", RSP_REQ_ENV_RESET, RSP_EXACT, NULL, NULL),
	PKT("QEnvironmentHexEncoded:", RSP_REQ_ENV_SET, 0, rsp_parse_hex_str,
	    "malformed QEnvironmentHexEncoded packet: expected QEnvironmentHexEncoded:<hex NAME=VALUE>"),
	PKT("QEnvironmentUnset:", RSP_REQ_ENV_UNSET, 0, rsp_parse_hex_str,
	    "malformed QEnvironmentUnset packet: expected QEnvironmentUnset:<hex NAME>"),
	PKT("QSetWorkingDir:", RSP_REQ_SET_WORKDIR, 0, rsp_parse_hex_str,
	    "malformed QSetWorkingDir packet: expected QSetWorkingDir:[<hex dir>]"),
	PKT("QAllow:", RSP_REQ_ALLOW, 0, rsp_parse_rest_str, NULL),
	PKT("QAgent:", RSP_REQ_AGENT, 0, rsp_parse_flag,
	    "malformed QAgent packet: expected QAgent:0 or 1"),

	/* registers and memory */
	PKT("g", RSP_REQ_READ_REGS, 0, NULL,
	    "malformed g packet: expected no arguments"),
	PKT("G", RSP_REQ_WRITE_REGS, 0, rsp_parse_write_regs,
	    "malformed G packet: expected G<hex registers>"),
	PKT("p", RSP_REQ_READ_REG, 0, rsp_parse_read_reg,
	    "malformed p packet: expected p<regnum>"),
	PKT("P", RSP_REQ_WRITE_REG, 0, rsp_parse_write_reg,
	    "malformed P packet: expected P<regnum>=<hex value>"),
	PKT("m", RSP_REQ_READ_MEM, 0, rsp_parse_read_mem,
	    "malformed m packet: expected m<addr>,<length>"),
	PKT("M", RSP_REQ_WRITE_MEM, 0, rsp_parse_write_mem_hex,
	    "malformed M packet: expected M<addr>,<length>:<hex data>"),
	PKT("X", RSP_REQ_WRITE_MEM, 0, rsp_parse_write_mem_bin,
	    "malformed X packet: expected X<addr>,<length>:<binary data>"),

	/* execution */
	PKT("vCont?", RSP_REQ_VCONT_QUERY, RSP_EXACT, NULL, NULL),
	PKT("vCont;", RSP_REQ_VCONT, 0, rsp_parse_vcont,
	    "malformed vCont packet: expected vCont;<action>[:<thread-id>]..."),
	PKT("c", RSP_REQ_VCONT, 0, rsp_parse_c,
	    "malformed c packet: expected c[<addr>]"),
	PKT("C", RSP_REQ_VCONT, 0, rsp_parse_big_c,
	    "malformed C packet: expected C<sig>[;<addr>]"),
	PKT("s", RSP_REQ_VCONT, 0, rsp_parse_s,
	    "malformed s packet: expected s[<addr>]"),
	PKT("S", RSP_REQ_VCONT, 0, rsp_parse_big_s,
	    "malformed S packet: expected S<sig>[;<addr>]"),
	PKT("vCtrlC", RSP_REQ_VCTRLC, RSP_EXACT, NULL, NULL),
	PKT("vStopped", RSP_REQ_VSTOPPED, RSP_EXACT, NULL, NULL),
	PKT("k", RSP_REQ_KILL, 0, NULL,
	    "malformed k packet: expected no arguments"),
	PKT("vKill;", RSP_REQ_VKILL, 0, rsp_parse_pid,
	    "malformed vKill packet: expected vKill;<pid>"),
	PKT("D", RSP_REQ_DETACH, 0, rsp_parse_detach,
	    "malformed D packet: expected D or D;<pid>"),
	PKT("R", RSP_REQ_RESTART, 0, rsp_parse_restart,
	    "malformed R packet: expected R<hex>"),
	PKT("vRun;", RSP_REQ_VRUN, 0, rsp_parse_vrun,
	    "malformed vRun packet: expected vRun;<hex program>[;<hex arg>]..."),
	PKT("vAttach;", RSP_REQ_VATTACH, 0, rsp_parse_pid,
	    "malformed vAttach packet: expected vAttach;<pid>"),

	/* breakpoints */
	PKT("Z", RSP_REQ_INSERT_POINT, 0, rsp_parse_insert_point,
	    "malformed Z packet: expected Z<type>,<addr>,<kind>[;<conditions>]"),
	PKT("z", RSP_REQ_REMOVE_POINT, 0, rsp_parse_remove_point,
	    "malformed z packet: expected z<type>,<addr>,<kind>"),

	/* host I/O */
	PKT("vFile:", RSP_REQ_VFILE, 0, rsp_parse_vfile,
	    "malformed vFile packet: bad arguments"),

	/* tracepoints: definition */
	PKT("QTinit", RSP_REQ_TINIT, RSP_EXACT, NULL, NULL),
	PKT("QTDP:", RSP_REQ_TDP, 0, rsp_parse_tdp,
	    "malformed QTDP packet: expected QTDP:<n>:<addr>:<E|D>:<step>:<pass>[:F<len>][:S][:X<len>,<bytecode>][-] or QTDP:-<n>:<addr>:[S]<actions>[-]"),
	PKT("QTDPsrc:", RSP_REQ_TDP_SRC, 0, rsp_parse_tdp_src,
	    "malformed QTDPsrc packet: expected QTDPsrc:<n>:<addr>:<at|cond|cmd>:<start>:<len>:<hex>"),
	PKT("QTDV:", RSP_REQ_TDV, 0, rsp_parse_tdv,
	    "malformed QTDV packet: expected QTDV:<n>:<value>:<builtin>:<hex name>"),
	PKT("QTro:", RSP_REQ_TRO, 0, rsp_parse_tro,
	    "malformed QTro packet: expected QTro:<start>,<end>[:<start>,<end>]..."),
	PKT("QTDisconnected:", RSP_REQ_TDISCONNECTED, 0, rsp_parse_flag,
	    "malformed QTDisconnected packet: expected QTDisconnected:0 or 1"),
	PKT("QTBuffer:circular:", RSP_REQ_TBUFFER_CIRCULAR, 0, rsp_parse_flag,
	    "malformed QTBuffer:circular packet: expected QTBuffer:circular:0 or 1"),
	PKT("QTBuffer:size:", RSP_REQ_TBUFFER_SIZE, 0, rsp_parse_tbuffer_size,
	    "malformed QTBuffer:size packet: expected QTBuffer:size:<hex> or -1"),
	PKT("QTNotes:", RSP_REQ_TNOTES, 0, rsp_parse_tnotes,
	    "malformed QTNotes packet: expected QTNotes:<type>:<hex>[;<type>:<hex>]..."),
	PKT("QTStart", RSP_REQ_TSTART, RSP_EXACT, NULL, NULL),
	PKT("QTStop", RSP_REQ_TSTOP, RSP_EXACT, NULL, NULL),
	PKT("QTEnable:", RSP_REQ_TENABLE, 0, rsp_parse_tp_ref,
	    "malformed QTEnable packet: expected QTEnable:<n>:<addr>"),
	PKT("QTDisable:", RSP_REQ_TDISABLE, 0, rsp_parse_tp_ref,
	    "malformed QTDisable packet: expected QTDisable:<n>:<addr>"),

	/* tracepoints: queries and uploads */
	PKT("qTP:", RSP_REQ_TP_STATUS, 0, rsp_parse_tp_ref,
	    "malformed qTP packet: expected qTP:<n>:<addr>"),
	PKT("qTV:", RSP_REQ_TV, 0, rsp_parse_tv,
	    "malformed qTV packet: expected qTV:<n>"),
	PKT("qTfP", RSP_REQ_TP_UPLOAD_FIRST, RSP_EXACT, NULL, NULL),
	PKT("qTsP", RSP_REQ_TP_UPLOAD_NEXT, RSP_EXACT, NULL, NULL),
	PKT("qTfV", RSP_REQ_TSV_UPLOAD_FIRST, RSP_EXACT, NULL, NULL),
	PKT("qTsV", RSP_REQ_TSV_UPLOAD_NEXT, RSP_EXACT, NULL, NULL),
	PKT("qTMinFTPILen", RSP_REQ_TMIN_FTPI_LEN, RSP_EXACT, NULL, NULL),
	PKT("qTfSTM", RSP_REQ_TSTM_FIRST, RSP_EXACT, NULL, NULL),
	PKT("qTsSTM", RSP_REQ_TSTM_NEXT, RSP_EXACT, NULL, NULL),
	PKT("qTSTMat:", RSP_REQ_TSTM_AT, 0, rsp_parse_tstm_at,
	    "malformed qTSTMat packet: expected qTSTMat:<addr>"),

	/* tracepoints: examining the buffer */
	PKT("QTFrame:", RSP_REQ_TFRAME, 0, rsp_parse_tframe,
	    "malformed QTFrame packet: expected QTFrame:<n>, pc:<addr>, tdp:<n>, range:<lo>:<hi> or outside:<lo>:<hi>"),
	PKT("qTBuffer:", RSP_REQ_TBUFFER_READ, 0, rsp_parse_tbuffer_read,
	    "malformed qTBuffer packet: expected qTBuffer:<offset>,<length>"),
	PKT("QTSave:", RSP_REQ_TSAVE, 0, rsp_parse_tsave,
	    "malformed QTSave packet: expected QTSave:<hex file name>"),
	PKT("qprobe.frames:", RSP_REQ_PROBE_FRAMES, 0, rsp_parse_probe_frames,
	    "malformed qprobe.frames packet: expected qprobe.frames:<hex max bytes>"),
	PKT("Qprobe.file:", RSP_REQ_PROBE_FILE, 0, rsp_parse_probe_file,
	    "malformed Qprobe.file packet: expected Qprobe.file:<hex offset>;<hex dev>;<hex inode>;<hex path>"),
	PKT("qprobe.fwrite", RSP_REQ_PROBE_FWRITE, RSP_EXACT, NULL, NULL),
	PKT("Qprobe.fullwait:", RSP_REQ_PROBE_FULL_WAIT, 0, rsp_parse_flag,
	    "malformed Qprobe.fullwait packet: expected Qprobe.fullwait:0 or 1"),
	PKT("Qprobe.detachonclose:", RSP_REQ_PROBE_DETACH_ON_CLOSE, 0, rsp_parse_flag,
	    "malformed Qprobe.detachonclose packet: expected Qprobe.detachonclose:0 or 1"),
	PKT("Qprobe.fulldrop:", RSP_REQ_PROBE_FULL_DROP, 0, rsp_parse_flag,
	    "malformed Qprobe.fulldrop packet: expected Qprobe.fulldrop:0 or 1"),
	PKT("qprobe.lost", RSP_REQ_PROBE_LOST, RSP_EXACT, NULL, NULL),
	PKT("qprobe.stats", RSP_REQ_PROBE_STATS, RSP_EXACT, NULL, NULL),
	PKT("qprobe.salvage", RSP_REQ_PROBE_SALVAGE, RSP_EXACT, NULL, NULL),
	PKT("Qprobe.pending:", RSP_REQ_PROBE_PENDING, 0, rsp_parse_probe_pending,
	    "malformed Qprobe.pending packet: expected Qprobe.pending:<n>:<addr>:<offset>:<hex symbol>:<hex library>"),
	PKT("qprobe.libevents", RSP_REQ_PROBE_LIBEVENTS, RSP_EXACT, NULL, NULL),
	PKT("Qprobe.hist:", RSP_REQ_PROBE_HIST_SET, 0, rsp_parse_tp_ref,
	    "malformed Qprobe.hist packet: expected Qprobe.hist:<n>:<addr>"),
	PKT("qprobe.hist:", RSP_REQ_PROBE_HIST, 0, rsp_parse_tp_ref,
	    "malformed qprobe.hist packet: expected qprobe.hist:<n>:<addr>"),
	PKT("qRelocInsn:", RSP_REQ_RELOC_INSN, 0, rsp_parse_reloc_insn,
	    "malformed qRelocInsn packet: expected qRelocInsn:<hex length>"),
};

/* The entry with the longest name that matches the payload, or NULL. */
static const struct rsp_packet_def *rsp_lookup(const char *payload, size_t len)
{
	const struct rsp_packet_def *best = NULL;

	for (size_t i = 0; i < sizeof(rsp_packets) / sizeof(rsp_packets[0]); i++) {
		const struct rsp_packet_def *d = &rsp_packets[i];

		if (d->name_len > len || memcmp(payload, d->name, d->name_len))
			continue;
		if ((d->flags & RSP_EXACT) && d->name_len != len)
			continue;
		if (!best || d->name_len > best->name_len)
			best = d;
	}
	return best;
}

void rsp_parse(char *payload, size_t len, struct rsp_request *req)
{
	const struct rsp_packet_def *d = rsp_lookup(payload, len);
	struct rsp_parser ps = {
		.p = payload, .end = payload + len, .req = req,
	};
	int ret;

	memset(&req->u, 0, sizeof(req->u));
	req->error = NULL;
	if (!d) {
		req->kind = RSP_REQ_UNKNOWN;
		return;
	}
	req->kind = d->kind;
	ps.p += d->name_len;
	if (d->parse)
		ret = d->parse(&ps);
	else
		ret = rsp_at_end(&ps) ? 0 : -EINVAL;
	if (ret == 0)
		return;
	if (ret == -ENOSYS) {
		req->kind = RSP_REQ_UNKNOWN;
		req->error = NULL;
		return;
	}
	req->kind = RSP_REQ_INVALID;
	if (!req->error)
		req->error = d->usage ? d->usage : "malformed packet";
}

/* --- Names and thread ids ------------------------------------------------- */

static const char *const rsp_req_names[RSP_REQ_KIND_COUNT] = {
	[RSP_REQ_UNKNOWN] = "unknown",
	[RSP_REQ_INVALID] = "invalid",
	[RSP_REQ_QSUPPORTED] = "qSupported",
	[RSP_REQ_START_NOACK] = "QStartNoAckMode",
	[RSP_REQ_EXTENDED] = "!",
	[RSP_REQ_HALT_REASON] = "?",
	[RSP_REQ_QATTACHED] = "qAttached",
	[RSP_REQ_QC] = "qC",
	[RSP_REQ_QOFFSETS] = "qOffsets",
	[RSP_REQ_QSYMBOL] = "qSymbol",
	[RSP_REQ_THREADINFO_FIRST] = "qfThreadInfo",
	[RSP_REQ_THREADINFO_NEXT] = "qsThreadInfo",
	[RSP_REQ_THREAD_EXTRA] = "qThreadExtraInfo",
	[RSP_REQ_GET_TLS_ADDR] = "qGetTLSAddr",
	[RSP_REQ_SHLIB_INFO_ADDR] = "qShlibInfoAddr",
	[RSP_REQ_MEMORY_REGION] = "qMemoryRegionInfo",
	[RSP_REQ_THREAD_ALIVE] = "T",
	[RSP_REQ_SET_THREAD] = "H",
	[RSP_REQ_RCMD] = "qRcmd",
	[RSP_REQ_XFER] = "qXfer",
	[RSP_REQ_SEARCH_MEM] = "qSearch:memory",
	[RSP_REQ_CRC] = "qCRC",
	[RSP_REQ_TSTATUS] = "qTStatus",
	[RSP_REQ_NONSTOP] = "QNonStop",
	[RSP_REQ_PASS_SIGNALS] = "QPassSignals",
	[RSP_REQ_PROGRAM_SIGNALS] = "QProgramSignals",
	[RSP_REQ_THREAD_EVENTS] = "QThreadEvents",
	[RSP_REQ_CATCH_SYSCALLS] = "QCatchSyscalls",
	[RSP_REQ_DISABLE_RANDOMIZATION] = "QDisableRandomization",
	[RSP_REQ_STARTUP_WITH_SHELL] = "QStartupWithShell",
	[RSP_REQ_ENV_RESET] = "QEnvironmentReset",
	[RSP_REQ_ENV_SET] = "QEnvironmentHexEncoded",
	[RSP_REQ_ENV_UNSET] = "QEnvironmentUnset",
	[RSP_REQ_SET_WORKDIR] = "QSetWorkingDir",
	[RSP_REQ_ALLOW] = "QAllow",
	[RSP_REQ_AGENT] = "QAgent",
	[RSP_REQ_READ_REGS] = "g",
	[RSP_REQ_WRITE_REGS] = "G",
	[RSP_REQ_READ_REG] = "p",
	[RSP_REQ_WRITE_REG] = "P",
	[RSP_REQ_READ_MEM] = "m",
	[RSP_REQ_WRITE_MEM] = "M/X",
	[RSP_REQ_VCONT_QUERY] = "vCont?",
	[RSP_REQ_VCONT] = "vCont",
	[RSP_REQ_VCTRLC] = "vCtrlC",
	[RSP_REQ_VSTOPPED] = "vStopped",
	[RSP_REQ_KILL] = "k",
	[RSP_REQ_VKILL] = "vKill",
	[RSP_REQ_DETACH] = "D",
	[RSP_REQ_RESTART] = "R",
	[RSP_REQ_VRUN] = "vRun",
	[RSP_REQ_VATTACH] = "vAttach",
	[RSP_REQ_INSERT_POINT] = "Z",
	[RSP_REQ_REMOVE_POINT] = "z",
	[RSP_REQ_VFILE] = "vFile",
	[RSP_REQ_TINIT] = "QTinit",
	[RSP_REQ_TDP] = "QTDP",
	[RSP_REQ_TDP_ACTIONS] = "QTDP:-",
	[RSP_REQ_TDP_SRC] = "QTDPsrc",
	[RSP_REQ_TDV] = "QTDV",
	[RSP_REQ_TRO] = "QTro",
	[RSP_REQ_TDISCONNECTED] = "QTDisconnected",
	[RSP_REQ_TBUFFER_CIRCULAR] = "QTBuffer:circular",
	[RSP_REQ_TBUFFER_SIZE] = "QTBuffer:size",
	[RSP_REQ_TNOTES] = "QTNotes",
	[RSP_REQ_TSTART] = "QTStart",
	[RSP_REQ_TSTOP] = "QTStop",
	[RSP_REQ_TENABLE] = "QTEnable",
	[RSP_REQ_TDISABLE] = "QTDisable",
	[RSP_REQ_TP_STATUS] = "qTP",
	[RSP_REQ_TV] = "qTV",
	[RSP_REQ_TP_UPLOAD_FIRST] = "qTfP",
	[RSP_REQ_TP_UPLOAD_NEXT] = "qTsP",
	[RSP_REQ_TSV_UPLOAD_FIRST] = "qTfV",
	[RSP_REQ_TSV_UPLOAD_NEXT] = "qTsV",
	[RSP_REQ_TMIN_FTPI_LEN] = "qTMinFTPILen",
	[RSP_REQ_TSTM_FIRST] = "qTfSTM",
	[RSP_REQ_TSTM_NEXT] = "qTsSTM",
	[RSP_REQ_TSTM_AT] = "qTSTMat",
	[RSP_REQ_TFRAME] = "QTFrame",
	[RSP_REQ_TBUFFER_READ] = "qTBuffer",
	[RSP_REQ_TSAVE] = "QTSave",
	[RSP_REQ_PROBE_FRAMES] = "qprobe.frames",
	[RSP_REQ_PROBE_FILE] = "Qprobe.file",
	[RSP_REQ_PROBE_FWRITE] = "qprobe.fwrite",
	[RSP_REQ_PROBE_FULL_WAIT] = "Qprobe.fullwait",
	[RSP_REQ_PROBE_DETACH_ON_CLOSE] = "Qprobe.detachonclose",
	[RSP_REQ_PROBE_FULL_DROP] = "Qprobe.fulldrop",
	[RSP_REQ_PROBE_LOST] = "qprobe.lost",
	[RSP_REQ_PROBE_STATS] = "qprobe.stats",
	[RSP_REQ_PROBE_SALVAGE] = "qprobe.salvage",
	[RSP_REQ_PROBE_PENDING] = "Qprobe.pending",
	[RSP_REQ_PROBE_LIBEVENTS] = "qprobe.libevents",
	[RSP_REQ_PROBE_HIST_SET] = "Qprobe.hist",
	[RSP_REQ_PROBE_HIST] = "qprobe.hist",
	[RSP_REQ_RELOC_INSN] = "qRelocInsn",
};

const char *rsp_req_name(enum rsp_req_kind kind)
{
	if ((unsigned)kind >= RSP_REQ_KIND_COUNT || !rsp_req_names[kind])
		return "?unknown-kind";
	return rsp_req_names[kind];
}

/* One id component: gdb reads `-1` for "all", hex otherwise. */
static void rsp_buf_put_id(struct rsp_buf *b, int64_t id)
{
	if (id == RSP_ID_ALL)
		rsp_buf_puts(b, "-1");
	else
		rsp_buf_printf(b, "%" PRIx64, (uint64_t)id);
}

void rsp_buf_put_ptid(struct rsp_buf *b, bool multiprocess, int64_t pid,
		      int64_t tid)
{
	if (multiprocess) {
		rsp_buf_putc(b, 'p');
		rsp_buf_put_id(b, pid);
		rsp_buf_putc(b, '.');
	}
	rsp_buf_put_id(b, tid);
}
