/* rsp-parse.c - placeholder until the parser lands. */
#include "config.h"
#include "protocol/rsp.h"
#include "protocol/rsp-request.h"

void rsp_parse(char *payload, size_t len, struct rsp_request *req)
{
	(void)payload; (void)len;
	req->kind = RSP_REQ_UNKNOWN;
}
