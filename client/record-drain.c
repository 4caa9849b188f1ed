/*
 * record-drain.c - the recording loop: frames streamed out of the
 * agent's buffer into the file while the program runs, and the end of
 * the run.
 *
 * The loop asks for frames (qprobe.frames) until the agent has none,
 * cuts the stream into whole frames (a frame may arrive in two replies),
 * filters them (record-threads.c), appends them to the file, and prints
 * them for --live.  Between batches it handles stop notifications, reads
 * the pending probes' library events, and twice a second checks the
 * run, the losses and the thread list and rewrites the header's status.
 * It ends when the program exits, at --duration, on a signal (Ctrl-C),
 * or when the agent goes away (record-salvage.c).  finish stops the run,
 * takes the last frames, and kills a program the recorder started or
 * detaches from an attached one.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "client/recorder.h"
#include "client/rsp-client.h"

/* The length of the whole frames at the start of `data`. */
static size_t whole_frames(const uint8_t *data, size_t len)
{
	size_t off = 0;

	while (len - off >= 6) {
		uint32_t size;
		memcpy(&size, data + off + 2, 4);
		if (len - off < 6 + (size_t)size)
			break;
		off += 6 + size;
	}
	return off;
}

/* Counts the frames of `data` (`len` bytes) per probe and learns their
 * threads; returns the bytes of the whole frames counted, which stop
 * before an end marker or a frame longer than what is left (bytes that
 * are not this file's frames). */
size_t count_frames(struct recorder *r, const uint8_t *data, size_t len)
{
	size_t off = 0;

	while (len - off >= 6) {
		int16_t tpnum;
		uint32_t size;
		memcpy(&tpnum, data + off, 2);
		memcpy(&size, data + off + 2, 4);
		if (tpnum == 0 || len - off - 6 < size)
			break;	/* an end marker, or not a frame of this file */
		struct probe *p = probe_of(r, tpnum);
		if (p)
			p->frames++;
		r->frames++;
		note_thread(r, data + off + 6, size);
		off += 6 + size;
	}
	return off;
}

/* Takes streamed bytes, writes the whole frames among them.  A reply
 * that starts with a frame (nothing carried over) and that no filter or
 * --live needs in r->carry goes to the file from where it is; only the
 * piece of a frame at its end is kept for the next. */
static int take_stream(struct recorder *r, const uint8_t *data, size_t len)
{
	size_t whole = 0;

	if (r->carry_len == 0 && !r->keep_tids && !r->keep_comm && !r->live) {
		whole = whole_frames(data, len);
		int e = append_frames(r, data, whole);
		if (e == 0) {
			count_frames(r, data, whole);
			name_threads(r);
		}
		data += whole;
		len -= whole;
		if (e < 0 || len == 0)
			return e;
	}
	if (r->carry_len + len > r->carry_cap) {
		size_t cap = r->carry_cap ? r->carry_cap : 65536;
		while (cap < r->carry_len + len)
			cap *= 2;
		r->carry = realloc(r->carry, cap);
		if (!r->carry)
			abort();
		r->carry_cap = cap;
	}
	memcpy(r->carry + r->carry_len, data, len);
	r->carry_len += len;
	whole = whole_frames(r->carry, r->carry_len);
	if (r->keep_tids || r->keep_comm)
		whole = drop_frames(r, whole);
	int e = append_frames(r, r->carry, whole);
	/* Count what the file holds. */
	if (e == 0) {
		count_frames(r, r->carry, whole);
		name_threads(r);
		if (r->live)
			print_live(r, whole);
	}
	memmove(r->carry, r->carry + whole, r->carry_len - whole);
	r->carry_len -= whole;
	return e;
}

/* Streams frames until the agent has none (or has the agent write them
 * into the file: record-direct.c).  Returns bytes received or a
 * negative errno. */
long drain_frames(struct recorder *r)
{
	long total = 0;

	if (r->direct)
		return direct_drain(r);
	for (;;) {
		int e = rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT,
					   "qprobe.frames:3ff0");
		if (e < 0)
			return e;
		if (r->reply.data[0] != 'F') {
			err_msg("streaming frames: the agent says: %s",
				r->reply.len ? r->reply.data : "not supported");
			return -EIO;
		}
		ssize_t n = rsp_unescape(r->reply.data + 1, r->reply.len - 1);
		if (n <= 0)
			return total;
		total += n;
		if (take_stream(r, (uint8_t *)r->reply.data + 1, (size_t)n) < 0)
			return -EIO;
	}
}

/* The longest wait between two drains that found no frame (ms). */
#define IDLE_WAIT_MAX_MS 50

/*
 * Whether the agent's drain can run while the program runs: the agent
 * writes the file on this machine (it runs here, with this process's
 * CPUs: it is started from here or given them alike) and this process
 * and the program may run on more than one CPU between them.  Where
 * they all share one CPU, a drain at every millisecond would only take
 * the CPU from the program for smaller batches than the agent takes
 * when the ring fills.
 */
static bool drain_beside(const struct recorder *r)
{
	cpu_set_t mine, prog;

	if (!r->direct || r->pid <= 0)
		return false;
	if (sched_getaffinity(0, sizeof(mine), &mine) < 0 ||
	    sched_getaffinity(r->pid, sizeof(prog), &prog) < 0)
		return true;	/* not known: as on any machine of several CPUs */
	CPU_OR(&mine, &mine, &prog);
	return CPU_COUNT(&mine) > 1;
}

int record_loop(struct recorder *r)
{
	uint64_t deadline = r->duration > 0 ? now_ms() + (uint64_t)(r->duration * 1000) : 0;
	uint64_t last_status = now_ms(), last_events = 0;
	bool pending = any_pending(r);
	int idle_ms = IDLE_WAIT_MAX_MS;
	bool beside = drain_beside(r);
	int e;

	r->last_tick_ms = r->start_ms = now_ms();
	while (!r->exited && !stop_signal) {
		if (deadline && now_ms() >= deadline)
			break;
		long got = drain_frames(r);
		if (got < 0)
			return (int)got;
		if (pending && now_ms() - last_events >= 100) {
			if (read_libevents(r) < 0 && r->c.eof)
				return -EPIPE;
			last_events = now_ms();
		}
		if ((e = handle_notes(r)) < 0)
			return e;
		if (now_ms() - last_status >= 500) {
			/* A run that ended by itself is reported at once; the
			 * program runs on to its end (or Ctrl-C), as it would
			 * have without us. */
			check_run(r);
			read_lost(r);
			list_threads(r);
			update_status(r, false);
			last_status = now_ms();
		}
		status_line(r, false);
		if (r->exited || stop_signal)
			break;
		/* Frames: ask again at once.  None: wait IDLE_WAIT_MAX_MS;
		 * where the drain can run beside the program, 1 ms after
		 * frames came, twice as long each time none come, up to
		 * IDLE_WAIT_MAX_MS.  A drain that finds none while frames
		 * flow (the program stopped a moment for the agent, its
		 * ring full) must not leave the ring to the agent's stops
		 * for long: each of those holds the program until the agent
		 * has taken the whole ring, where the recorder's requests
		 * take it while the program runs on. */
		if (got > 0)
			idle_ms = 0;
		else if (beside && idle_ms < IDLE_WAIT_MAX_MS / 2)
			idle_ms = idle_ms ? 2 * idle_ms : 1;
		else
			idle_ms = IDLE_WAIT_MAX_MS;
		e = rsp_client_poll(&r->c, idle_ms);
		if (e < 0 && e != -ETIMEDOUT && e != -EINTR)
			return e;
		if ((e = handle_notes(r)) < 0)
			return e;
	}
	return 0;
}

int finish(struct recorder *r)
{
	int e = 0;

	/* Why the run ended, if it ended by itself (also before an exit). */
	check_run(r);
	if (!r->exited) {
		/* Stop the run first: no frame is created after this. */
		if (request_ok(r, "stopping the trace", "QTStop") < 0)
			e = -EIO;
	}
	if (drain_frames(r) < 0)
		e = -EIO;
	if (any_pending(r))
		read_libevents(r);	/* the last loads' frames */
	read_lost(r);	/* final once the run is over */
	read_stats(r);	/* the agent kept them if the program exited */
	if (read_hists(r) < 0)	/* kept too */
		r->hist_failed = true;
	if (!r->exited) {
		semaphores(r, -1);
		/* A program we started ends with the recording the user
		 * ended; after a write error it runs on, unharmed. */
		if (r->started && !r->write_failed)
			rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT, "vKill;%x", r->pid);
		else
			request_ok(r, "detaching", "D;%x", r->pid);
	}
	return e;
}
