/*
 * rsp-client.h - the client end of the Remote Serial Protocol.
 *
 * probe-trace talks to probe-agent exactly as gdb does: over the agent's
 * stdio (an agent command run through /bin/sh, locally or via ssh) or over
 * TCP.  One request is in flight at a time; notifications (`%Stop:...`)
 * that arrive meanwhile are queued for the caller.
 */
#ifndef PROBE_CLIENT_RSP_CLIENT_H
#define PROBE_CLIENT_RSP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "protocol/rsp.h"

struct rsp_note {
	struct rsp_note *next;
	size_t len;
	char payload[];
};

struct rsp_client {
	int fd;
	pid_t agent;			/* the command's shell, or 0 */
	struct rsp_framer framer;
	uint8_t in[16384];
	size_t in_len, in_off;
	bool noack;
	bool eof;
	struct rsp_note *notes, **notes_tail;
	struct rsp_buf out;
	char error[256];		/* why the last call failed */
	unsigned int owed;		/* replies still to come for requests
					   that stopped waiting (a timeout):
					   dropped when they come, so that no
					   later request takes one for its own */
};

/*
 * Runs `command` with /bin/sh -c, its stdin and stdout connected to the
 * client, in a process group of its own (a Ctrl-C on the terminal reaches
 * only the client, which then stops the agent in order).  0 or -errno.
 */
int rsp_client_spawn(struct rsp_client *c, const char *command);
/* Connects to HOST:PORT (an empty HOST is the loopback).  0 or -errno. */
int rsp_client_connect(struct rsp_client *c, const char *hostport);
/* Closes the connection and reaps the agent command (waiting at most
 * `wait_ms` before killing it).  Returns its wait status, or -1. */
int rsp_client_close(struct rsp_client *c, int wait_ms);

/*
 * Sends `payload` (formatted) and waits up to timeout_ms (-1: forever) for
 * the reply, stored NUL-terminated in `reply`.  Returns 0, -ETIMEDOUT
 * (a reply that comes later is dropped then, not taken for the next
 * request's: c->owed), or -EPIPE when the agent is gone (c->error says
 * so).
 */
int rsp_client_request(struct rsp_client *c, struct rsp_buf *reply,
		       int timeout_ms, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int rsp_client_send(struct rsp_client *c, const void *payload, size_t len);
int rsp_client_wait_reply(struct rsp_client *c, struct rsp_buf *reply,
			  int timeout_ms);
/* Reads whatever has arrived without blocking longer than timeout_ms,
 * queueing notifications.  0, -ETIMEDOUT, -EPIPE, -EINTR. */
int rsp_client_poll(struct rsp_client *c, int timeout_ms);
/* The oldest queued notification (caller frees), or NULL. */
struct rsp_note *rsp_client_next_note(struct rsp_client *c);

/* Reads a whole qXfer object (qXfer:OBJECT:read:ANNEX:off,len) into
 * `out`.  0, or -errno with c->error set. */
int rsp_client_xfer(struct rsp_client *c, const char *object,
		    const char *annex, struct rsp_buf *out);

#endif
