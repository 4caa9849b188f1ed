/*
 * record-salvage.c - frames recovered after the agent died.
 *
 * The agent died (killed, crashed) during the recording.  Its keeper has
 * put the program back, unprobed, and left in it what the jump pads had
 * recorded and the agent not yet taken.  A new agent, started the way
 * the first was, attaches to the program, gets the same tracepoints (not
 * started) and hands those records over as frames (qprobe.salvage),
 * which go into the file like the others; the USDT semaphores the
 * recording raised go back down, and the agent detaches.  Frames the
 * dead agent held itself, or had sent only in part, are gone with it.
 * So it goes for the `hist` probes: the histograms the return trampoline
 * kept in the process come back (qprobe.hist after the salvage), the
 * returns the dead agent had counted itself do not.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "client/recorder.h"
#include "client/rsp-client.h"

/*
 * A new agent takes over the dead one's program and hands over what the
 * pads left.  The old agent may still hold the program while it finishes
 * dying: attaching is tried for 8 s at most.  Returns the frames
 * recovered, or -errno: no agent the recorder can start (--connect), or
 * none that can attach (the program is gone).
 */
static long recover(struct recorder *r)
{
	uint64_t before = r->frames;
	unsigned long long got = 0, left = 0;
	int e = -ESRCH;

	if (r->connect)
		return -ENOTCONN;
	rsp_client_close(&r->c, 1000);
	r->carry_len = 0;
	r->attach_pid = r->pid;
	r->prog_argc = 0;
	/* Bounded in time, whatever the transport does (an ssh that cannot
	 * reach the board any more): 5 s a request, attaching retried for
	 * 8 s, one agent for all the tries. */
	r->attach_until = now_ms() + 8000;
	req_timeout_ms = 5000;
	e = start_agent(r);
	if (e == 0)
		e = handshake(r);
	r->attach_until = 0;
	if (e < 0) {
		rsp_client_close(&r->c, 1000);
		req_timeout_ms = 30000;
		return e;
	}
	if (define_all(r) < 0 ||
	    rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT, "qprobe.salvage") < 0) {
		e = -EIO;
		goto out;
	}
	if (sscanf(r->reply.data, "S%llx;%llx", &got, &left) != 2) {
		err_msg("the new agent cannot salvage frames: %s",
			r->reply.len ? r->reply.data : "not supported");
		e = -ENOTSUP;
		goto out;
	}
	if (drain_frames(r) < 0) {
		e = -EIO;
		goto out;
	}
	/* The hist probes' histograms, as far as the process kept them (a
	 * failure leaves a probe's unknown, said lost by the caller). */
	read_hists(r);
	if (left)
		err_msg("%llu records left by the pads were not taken (no tracepoint "
			"defined at their address records without stopping)", left);
	e = 0;
out:
	semaphores(r, -1);
	request_ok(r, "detaching", "D;%x", r->pid);
	rsp_client_close(&r->c, 2000);
	req_timeout_ms = 30000;
	return e < 0 ? e : (long)(r->frames - before);
}

/* The agent went away while recording: what the file keeps, and what a
 * new agent could recover, said on stderr. */
void salvage(struct recorder *r)
{
	direct_adopt(r);	/* what it wrote and did not say yet */
	err_msg("the agent went away: %s; %s keeps the %llu frames received",
		r->c.error, r->out_path, (unsigned long long)r->frames);
	long n = recover(r);
	if (n >= 0)
		err_msg("a new agent recovered %ld frames the pads had left in "
			"process %d; frames the dead agent held itself are lost",
			n, r->pid);
	else if (n == -ENOTCONN)
		err_msg("no agent to recover frames with: the agent was reached "
			"by --connect");
	else
		err_msg("no frames recovered: no new agent could attach to "
			"process %d", r->pid);
}
