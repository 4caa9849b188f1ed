/*
 * rsp-parse-int.h - what the files of the packet parser share: the
 * cursor over a payload and its primitives (rsp-parse.c), and the
 * tracepoint packets' parsers (rsp-parse-tp.c) that rsp-parse.c's
 * dispatch table names.  Nothing outside protocol/rsp-parse*.c includes it.
 */
#ifndef PROBE_PROTOCOL_RSP_PARSE_INT_H
#define PROBE_PROTOCOL_RSP_PARSE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol/rsp-request.h"

/*
 * The largest `m` read we accept.  gdb never asks for more than the
 * PacketSize we advertise allows (RSP_MAX_PAYLOAD / 2 bytes), but the
 * agent clamps partial reads itself; only absurd lengths are refused here.
 */
#define RSP_MAX_MEM_LEN (1u << 20)

/* The payload as it is being read, plus the scratch area's fill level. */
struct rsp_parser {
	char *p;			/* next unread byte */
	char *end;			/* one past the last payload byte */
	struct rsp_request *req;
	size_t scratch_used;
};

/* Cursor primitives (rsp-parse.c) */
bool rsp_at_end(const struct rsp_parser *ps);
bool rsp_eat(struct rsp_parser *ps, char c);
bool rsp_eat_str(struct rsp_parser *ps, const char *s);
int rsp_get_hex(struct rsp_parser *ps, uint64_t *out);
int rsp_get_hex_max(struct rsp_parser *ps, uint64_t max, uint64_t *out);
char *rsp_get_field(struct rsp_parser *ps, char sep, size_t *len);
uint8_t *rsp_scratch(struct rsp_parser *ps, size_t n);
int rsp_decode_string(struct rsp_parser *ps, const char *hex,
		      size_t hexlen, const char **out);
int rsp_decode_rest(struct rsp_parser *ps, const char **out);

/* Tracepoint packets (rsp-parse-tp.c) */
int rsp_parse_tdp(struct rsp_parser *ps);
int rsp_parse_tdp_src(struct rsp_parser *ps);
int rsp_parse_tdv(struct rsp_parser *ps);
int rsp_parse_tro(struct rsp_parser *ps);
int rsp_parse_tbuffer_size(struct rsp_parser *ps);
int rsp_parse_tnotes(struct rsp_parser *ps);
int rsp_parse_tp_ref(struct rsp_parser *ps);
int rsp_parse_tv(struct rsp_parser *ps);
int rsp_parse_tstm_at(struct rsp_parser *ps);
int rsp_parse_tframe(struct rsp_parser *ps);
int rsp_parse_tbuffer_read(struct rsp_parser *ps);
int rsp_parse_probe_frames(struct rsp_parser *ps);
int rsp_parse_probe_file(struct rsp_parser *ps);
int rsp_parse_tsave(struct rsp_parser *ps);
int rsp_parse_probe_pending(struct rsp_parser *ps);
int rsp_parse_reloc_insn(struct rsp_parser *ps);

#endif
