/*
 * record-status.c - what the user is told about the run on stderr: the
 * status line on a terminal, frames lost for want of room, why a run
 * ended by itself, and the summary at the end.
 *
 * The status line (frames, rate, buffer use, per-probe counts) is
 * redrawn at most twice a second, only when stderr is a terminal and
 * not --quiet.  Losses (qprobe.lost) and a run that stopped by itself
 * (qTStatus: a full buffer with --on-full=stop, an evaluation error, a
 * pass count) are said at once, while the program runs on, and again in
 * the summary.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/recorder.h"
#include "client/rsp-client.h"
#include "client/tfile-read.h"
#include "protocol/tp-status.h"

void status_line(struct recorder *r, bool final)
{
	uint64_t t = now_ms();
	char line[512];
	size_t used;

	if (!r->tty_status)
		return;
	if (!final && t - r->last_tick_ms < 500)
		return;
	double dt = (double)(t - r->last_tick_ms) / 1000.0;
	double rate = dt > 0 ? (double)(r->frames - r->frames_at_last) / dt : 0;
	uint64_t used_bytes = 0, size = 0;
	if (r->running && !r->exited &&
	    rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT, "qTStatus") == 0) {
		const char *f = strstr(r->reply.data, "tfree:");
		const char *s = strstr(r->reply.data, "tsize:");
		if (f && s) {
			size = strtoull(s + 6, NULL, 16);
			used_bytes = size - strtoull(f + 6, NULL, 16);
		}
	}
	used = (size_t)snprintf(line, sizeof(line),
				"%llu frames  %.0f/s  buffer %.0f%% ",
				(unsigned long long)r->frames, rate,
				size ? 100.0 * (double)used_bytes / (double)size : 0.0);
	if (r->lost)
		used += (size_t)snprintf(line + used, sizeof(line) - used, " LOST %llu ",
					 (unsigned long long)r->lost);
	for (size_t i = 0; i < r->nprobes && used < sizeof(line) - 40; i++)
		used += (size_t)snprintf(line + used, sizeof(line) - used, " %s:%llu",
					 r->probes[i].name,
					 (unsigned long long)r->probes[i].frames);
	fprintf(stderr, "\r\033[K%s%s", line, final ? "\n" : "");
	fflush(stderr);
	/* for print_live, which draws it again after the frames */
	snprintf(r->tty_text, sizeof(r->tty_text), "\r\033[K%s", final ? "" : line);
	r->last_tick_ms = t;
	r->frames_at_last = r->frames;
}

/*
 * Whether the run is still going; when it ended by itself (a full buffer
 * with --on-full=stop, an evaluation error, a pass count), `why` says so.
 * The program's exit ends a run too: that is not the run's own stop.
 */
void check_run(struct recorder *r)
{
	struct tp_status st;

	if (r->self_stopped || r->c.eof ||
	    rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT, "qTStatus") < 0 ||
	    tp_status_parse(r->reply.data, &st, r->why_error, sizeof(r->why_error)) < 0)
		return;
	if (st.running || st.reason == TP_STOP_UNKNOWN || st.reason == TP_STOP_COMMAND ||
	    st.reason == TP_STOP_NOT_RUN)
		return;
	r->self_stopped = true;
	r->why = st;
	r->why.error = st.error ? r->why_error : NULL;
	say_why_stopped(r);	/* at once: the program runs on unprobed */
}

/*
 * The frames the agent had no room for, per probe (qprobe.lost): said at
 * once the first time, while the program runs, and again at the end.  An
 * agent without the packet loses nothing silently: it stops the run on a
 * full buffer, which check_run reports.
 */
void read_lost(struct recorder *r)
{
	const char *p;
	char *end;

	if (r->c.eof ||
	    rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT, "qprobe.lost") < 0 ||
	    r->reply.data[0] != 'L')
		return;
	uint64_t total = strtoull(r->reply.data + 1, &end, 16);
	for (size_t i = 0; i < r->nprobes; i++)
		r->probes[i].lost = 0;
	for (p = end; *p == ';';) {
		unsigned long tp = strtoul(p + 1, &end, 16);
		if (*end != ':')
			break;
		p = end + 1;
		uint64_t n = strtoull(p, &end, 16);
		p = end;
		struct probe *pr = probe_of(r, (int)tp);
		if (pr)
			pr->lost += n;	/* once per location */
	}
	r->lost = total;
	if (r->lost && !r->lost_said) {
		err_msg("the buffer was full: %llu frames lost so far, and counted "
			"(--buffer-size; the default --on-full=wait loses none)",
			(unsigned long long)r->lost);
		r->lost_said = true;
	}
}

/* Whether probe `p` is at `addr`: one of its sites, or a place the agent
 * put it in a loaded library. */
static bool probe_at_addr(const struct probe *p, uint64_t addr)
{
	for (size_t i = 0; i < p->nsites; i++)
		if (p->sites[i].addr == addr && !p->pending)
			return true;
	for (unsigned int i = 0; i < p->nloads && i < MAX_LOADS; i++)
		if (p->loads[i].addr == addr)
			return true;
	return false;
}

/* One site of qprobe.stats: `<addr>:<how>:<stopped>:<recorded>:<ring
 * full>:<waited>` counted for every probe there. */
static const char *take_site(struct recorder *r, const char *s)
{
	char *end, how[16];
	uint64_t v[5];
	size_t len;

	v[0] = strtoull(s, &end, 16);
	if (*end != ':')
		return NULL;
	s = end + 1;
	len = strcspn(s, ":;");
	if (s[len] != ':' || len == 0 || len >= sizeof(how))
		return NULL;
	memcpy(how, s, len);
	how[len] = '\0';
	s += len;
	for (int i = 1; i < 5; i++) {
		if (*s != ':')
			return NULL;
		v[i] = strtoull(s + 1, &end, 16);
		s = end;
	}
	for (size_t i = 0; i < r->nprobes; i++) {
		struct probe *p = &r->probes[i];
		if (!probe_at_addr(p, v[0]))
			continue;
		if (!p->how[0])
			snprintf(p->how, sizeof(p->how), "%s", how);
		else if (strcmp(p->how, how) != 0)
			snprintf(p->how, sizeof(p->how), "mixed");	/* USDT sites */
		p->stops += v[1];
		p->ring_full += v[3];
		p->waited += v[4];
	}
	return s;
}

/* The agent's name of how a probe's hits run, for the user. */
static const char *how_text(const char *how)
{
	static const struct { const char *agent, *user; } names[] = {
		{ "pad", "jump pad" },
		{ "pad-ipa", "jump pad + collector" },
		{ "pad-trap", "jump pad that traps" },
		{ "emulate", "emulated" },
		{ "boost", "out-of-line copy" },
		{ "step", "single-stepped" },
		{ "mixed", "mixed strategies" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(how, names[i].agent) == 0)
			return names[i].user;
	return how;
}

/*
 * How the probes ran (qprobe.stats), read once at the end, before the
 * detach (the agent keeps the counts of a program that exited).  An
 * agent without the packet answers empty: nothing is said then.
 */
void read_stats(struct recorder *r)
{
	const char *s;
	char *end;

	if (r->c.eof ||
	    rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT, "qprobe.stats") < 0 ||
	    r->reply.data[0] != 'P')
		return;
	for (size_t i = 0; i < r->nprobes; i++) {
		r->probes[i].how[0] = '\0';
		r->probes[i].stops = r->probes[i].ring_full = r->probes[i].waited = 0;
	}
	for (s = r->reply.data + 1; s && *s == ';';) {
		s++;
		if (*s == 'R') {
			r->ret_known = true;
			r->ret_in_process = s[1] == '1';
			s += 2;
			uint64_t *v[3] = { &r->ret_recorded, &r->ret_stopped, &r->ret_ring_full };
			for (int i = 0; i < 3 && *s == ':'; i++) {
				*v[i] = strtoull(s + 1, &end, 16);
				s = end;
			}
		} else {
			s = take_site(r, s);
		}
	}
	if (!s || *s) {
		err_msg("the agent's probe counts are malformed: %s", r->reply.data);
		return;
	}
	r->stats_known = true;
	/* The agent counts returns per process: with one return probe they
	 * are its own and go with its entry's counts; with several they are
	 * said once for all of them (say_stats). */
	size_t nret = 0;
	for (size_t i = 0; i < r->nprobes; i++)
		if (r->probes[i].spec.ret && r->probes[i].how[0])
			nret++;
	r->ret_shared = nret > 1 ? nret : 0;
	/* The agent's words as the user reads them; a return probe's
	 * returns added to its entry's counts. */
	for (size_t i = 0; i < r->nprobes; i++) {
		struct probe *p = &r->probes[i];
		char how[sizeof(p->how)];
		if (!p->how[0])
			continue;
		snprintf(how, sizeof(how), "%s", how_text(p->how));
		if (p->spec.ret && r->ret_known) {
			if (!r->ret_shared) {
				p->stops += r->ret_stopped + r->ret_ring_full;
				p->ring_full += r->ret_ring_full;
			}
			snprintf(p->how, sizeof(p->how), "%s + %s", how,
				 r->ret_in_process ? "return pad" : "return trap");
		} else {
			snprintf(p->how, sizeof(p->how), "%s", how);
		}
	}
}

/* One line per probe: how its hits ran and how many stopped the program
 * (a return probe's: its entry's and its returns'), with those a full
 * ring sent and those that waited for room in the buffer. */
static void say_stats(struct recorder *r)
{
	char text[256];

	if (!r->stats_known)
		return;
	for (size_t i = 0; i < r->nprobes; i++) {
		const struct probe *p = &r->probes[i];
		/* a histogram probe's hits are calls counted, not frames */
		unsigned long long count = p->spec.hist ? p->hist.n : p->frames;
		const char *what = p->spec.hist ? "calls" : "frames";
		if (!p->how[0]) {
			fprintf(stderr, "probe-trace: %s: %llu %s, not placed\n", p->name,
				count, what);
			continue;
		}
		tfile_stops_text(text, sizeof(text), p->how, p->stops, p->ring_full,
				 p->waited);
		fprintf(stderr, "probe-trace: %s: %llu %s, %s%s\n", p->name,
			count, what, text,
			p->spec.ret && r->ret_shared ? " at entry" : "");
	}
	if (r->ret_shared && r->ret_known) {
		tfile_stops_text(text, sizeof(text),
				 r->ret_in_process ? "return pad" : "return trap",
				 r->ret_stopped + r->ret_ring_full, r->ret_ring_full, 0);
		fprintf(stderr, "probe-trace: the returns of the %zu return probes together: "
			"%s\n", r->ret_shared, text);
	}
}

void say_lost(struct recorder *r)
{
	char line[1024];
	size_t used = 0;

	if (!r->lost)
		return;
	line[0] = '\0';
	for (size_t i = 0; i < r->nprobes && used < sizeof(line) - 200; i++)
		if (r->probes[i].lost)
			used += (size_t)snprintf(line + used, sizeof(line) - used, "%s%s: %llu",
						 used ? ", " : "", r->probes[i].name,
						 (unsigned long long)r->probes[i].lost);
	err_msg("%llu frames lost for want of room in the buffer (%s); %s has the "
		"other %llu%s", (unsigned long long)r->lost, line, r->out_path,
		(unsigned long long)r->frames,
		r->self_stopped ? " (hits after the recording stopped are in neither)" : "");
}

void say_why_stopped(struct recorder *r)
{
	const struct tp_status *w = &r->why;

	switch (w->reason) {
	case TP_STOP_FULL:
		err_msg("the trace stopped early: the buffer filled (%llu bytes) after "
			"%llu frames; later hits were not recorded (--buffer-size, or "
			"the default --on-full=wait)",
			(unsigned long long)r->buffer_size, (unsigned long long)r->frames);
		break;
	case TP_STOP_ERROR:
		err_msg("the trace stopped early: probe %u: %s", (unsigned)w->stopping_tp,
			w->error ? w->error : "error");
		break;
	case TP_STOP_PASSCOUNT:
		err_msg("the trace stopped: probe %u reached its pass count",
			(unsigned)w->stopping_tp);
		break;
	default:
		err_msg("the trace stopped early (%s)", tp_stop_reason_name(w->reason));
		break;
	}
}

/* The end of a recording that ran to its end: the frames in the file
 * per probe, how the program and the recording ended, the frames
 * filtered out, the pending probes' loads and the frames lost. */
void say_summary(struct recorder *r)
{
	if (!r->quiet) {
		fprintf(stderr, "probe-trace: %llu frames (%llu bytes) in %s",
			(unsigned long long)r->frames, (unsigned long long)r->bytes,
			r->out_path);
		for (size_t i = 0; i < r->nprobes; i++) {
			const struct probe *p = &r->probes[i];
			if (p->spec.hist)
				fprintf(stderr, "%s %s: %llu calls in a histogram (stdout)",
					i ? "," : ";", p->name,
					(unsigned long long)p->hist.n);
			else
				fprintf(stderr, "%s %s: %llu", i ? "," : ";", p->name,
					(unsigned long long)p->frames);
		}
		fputc('\n', stderr);
		say_stats(r);
		if (r->exited && r->exit_signal)
			fprintf(stderr, "probe-trace: the program was killed by signal %d\n",
				r->exit_signal);
		else if (r->exited)
			fprintf(stderr, "probe-trace: the program exited with code %d\n",
				r->exit_code);
		else if (stop_signal)
			fprintf(stderr, "probe-trace: stopped by signal %d; the program was %s\n",
				(int)stop_signal, r->started ? "killed" : "detached");
		else
			fprintf(stderr, "probe-trace: stopped after %g s; the program was %s\n",
				r->duration, r->started ? "killed" : "detached");
	}
	if (r->filtered && !r->quiet)
		fprintf(stderr, "probe-trace: %llu frames of other threads dropped "
			"(%s%s%s), counted in %s\n", (unsigned long long)r->filtered,
			r->keep_tids ? "--tid" : "", r->keep_tids && r->keep_comm ? ", " : "",
			r->keep_comm ? "--comm" : "", r->out_path);
	say_loads(r);
	say_lost(r);
}
