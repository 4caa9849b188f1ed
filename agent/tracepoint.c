/*
 * tracepoint.c - gdb's tracepoints, run by the agent.
 *
 * gdb defines tracepoints (QTDP, QTDPsrc, QTDV) into the store
 * (protocol/tracepoint.c); QTStart verifies every expression and puts one
 * probe (probe.c) at each traced address.  A hit never waits for gdb: the
 * probe's callback evaluates each enabled tracepoint's condition, collects
 * a frame into the trace buffer (protocol/tbuf.c, gdb's trace-file frame
 * layout) and the thread runs on.  A run ends on QTStop, a pass count, a
 * full buffer, an evaluation error or a disconnect; the probes then go, and
 * the frames stay for tfind, tdump, tsave.
 *
 * Invariants:
 * - Probes are taken out only outside a hit: a stop decided during a hit
 *   (pass count, full buffer, error) is applied when the hit is over.
 * - A frame is stored whole or not at all: a hit that does not fit in a
 *   linear buffer stops the run and leaves no partial frame; memory that
 *   cannot be read is left out of the frame, so gdb shows it unavailable.
 * - While a frame is selected (QTFrame), registers and memory come from
 *   it; memory outside its blocks comes from read-only mappings only.
 */
#define LOG_DOMAIN "tp"
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/ipa/ipa-abi.h"
#include "agent/log.h"
#include "agent/pending.h"
#include "protocol/ax.h"
#include "protocol/tbuf.h"
#include "protocol/tfile.h"
#include "protocol/tp-status.h"
#include "protocol/tracepoint.h"

#define DEFAULT_BUFFER_SIZE 0x500000
#define COLLECT_CHUNK 65535

struct trace {
	struct tp_store store;
	struct tbuf tb;
	bool tb_ready;
	size_t tb_regsize;

	bool running, ever_run;
	enum tp_stop_reason reason;
	uint32_t stopping_tp;
	char error[256];
	bool stop_pending;		/* decided during a hit */
	enum tp_stop_reason pending_reason;
	uint32_t pending_tp;

	bool circular, disconnected;
	/* Qprobe.fullwait:1 (the recorder): a full buffer parks hitting
	 * threads until the stream makes room, instead of ending the run. */
	bool full_wait;
	uint64_t parked_hits;		/* hits that waited for room */
	/* Qprobe.fulldrop:1 (the recorder's lossy mode): a hit whose frame
	 * finds no room is counted lost (tp_def.lost) and the run goes on.
	 * Without either mode, a full buffer ends the run (gdb's way). */
	bool full_drop;
	bool drain_all;			/* the run or its process ends: take
					 * every record, growing the buffer */
	int64_t buffer_size;		/* requested; -1 = default */
	uint64_t start_time, stop_time;
	char *user, *notes, *stop_notes;

	struct process *proc;		/* the process the run traces */
	uint32_t run_id;		/* tells return-probe entries of an
					   earlier run from this run's */

	/* The frame gdb selected with QTFrame; -1 = live. */
	int64_t frame_no;
	struct tbuf_frame frame;

	struct tp_upload upload;
	struct tsv_upload tsv_upload;

	/* qprobe.frames: bytes of the oldest frame already streamed. */
	size_t stream_off;
};

static struct trace tr = { .frame_no = -1, .buffer_size = -1 };

/* Scratch for one memory collection (64 KiB pieces). */
static uint8_t collect_buf[COLLECT_CHUNK];

static uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void set_string(char **dst, const char *src)
{
	free(*dst);
	*dst = src ? strdup(src) : NULL;
}

static void tsv_tag(uint32_t number);

void trace_init(void)
{
	tp_store_init(&tr.store);
	tsv_tag(1);		/* $trace_timestamp */
}

bool trace_running(void)
{
	return tr.running;
}

bool trace_frame_selected(void)
{
	return tr.frame_no >= 0;
}

/* --- the run ----------------------------------------------------------------- */

static void remove_probes(void)
{
	struct process *p = tr.proc;

	if (!p || !process_find(p->pid)) {
		tr.proc = NULL;
		return;
	}
	trace_drain(false);	/* the hits before the stop count */
	pending_run_ended();	/* their loads' frames are all in */
	inferior_pause(p);
	for (struct probe *pr = p->probes, *next; pr; pr = next) {
		next = pr->next;
		if (pr->owner == PROBE_OWNER_TRACE)
			probe_remove(pr);
	}
	/* Return addresses the return probes replaced go back now; threads
	 * that run keep theirs until they return (retprobe.c). */
	ret_restore_process(p);
	tr.proc = NULL;
	pid_t pid = p->pid;
	inferior_unpause(p);
	/* What the pause kept may have been the process's end: gone then. */
	if ((p = process_find(pid)))
		inferior_unpark(p);	/* they run the original code now */
}

static void drain_everything(void);

static void stop_run(enum tp_stop_reason reason, uint32_t tp)
{
	if (!tr.running)
		return;
	drain_everything();	/* the hits the pads took before the stop count */
	/* Not running from here on: hits taken while the probes go (the
	 * threads are stopped for it) neither collect nor stop it again. */
	tr.running = false;
	tr.reason = reason;
	tr.stopping_tp = tp;
	tr.stop_time = now_usec();
	remove_probes();
	debug("trace stopped: %s", tp_stop_reason_name(reason));
}

/* A stop decided during a hit: applied once the hit is over. */
static void stop_later(enum tp_stop_reason reason, uint32_t tp)
{
	if (tr.stop_pending)
		return;
	tr.stop_pending = true;
	tr.pending_reason = reason;
	tr.pending_tp = tp;
}

void trace_after_hit(void)
{
	if (!tr.stop_pending)
		return;
	tr.stop_pending = false;
	stop_run(tr.pending_reason, tr.pending_tp);
}

/* The traced process is going away (exit, kill, detach). */
void trace_process_gone(struct process *p)
{
	if (tr.proc != p)
		return;
	drain_everything();
	pending_run_ended();
	if (tr.running) {
		/* Its probes go with it; the frames stay. */
		for (struct probe *pr = p->probes; pr; pr = pr->next)
			if (pr->owner == PROBE_OWNER_TRACE)
				pr->owner = PROBE_OWNER_NONE;
		tr.running = false;
		tr.reason = TP_STOP_UNKNOWN;
		tr.stop_time = now_usec();
	}
	tr.proc = NULL;
}

/* gdb went away: the run goes on only with disconnected tracing. */
bool trace_disconnect(void)
{
	if (!tr.running)
		return false;
	if (tr.disconnected)
		return true;
	stop_run(TP_STOP_DISCONNECTED, 0);
	return false;
}

static bool ret_pad_ok(uint64_t addr);

/* --- collection ------------------------------------------------------------ */

struct hit {
	struct thread *t;
	const uint8_t *regs;		/* the thread's register block */
	struct tp_def *tp;
	int err;			/* collection failure (-ENOSPC ...) */
	uint64_t latency_ns;		/* return probe: entry to return */
	uint64_t time_us;		/* when a pad recorded it; 0: now */
};

static int ctx_read_reg(const struct ax_ctx *ctx, unsigned regnum, uint64_t *value)
{
	const struct hit *h = ctx->opaque;

	return regs_read_gdb(h->t, regnum, value);
}

static long ctx_read_mem(const struct ax_ctx *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct hit *h = ctx->opaque;
	return (long)mem_read(h->t->proc, addr, buf, len);
}

/*
 * Variables read when used: the builtin $trace_timestamp (microseconds),
 * and, during a hit, the ones a client defines by name: $probe_thread (the
 * hitting thread's id) and $probe_latency_ns (a return probe's time from
 * entry to return, 0 for other hits).  Outside a hit those two hold their
 * stored value.  The name is looked at once, when the variable is defined
 * (tsv_tag): the hit path tests a tag.
 */
enum { TSV_PLAIN, TSV_TIMESTAMP, TSV_THREAD, TSV_LATENCY };

static void tsv_tag(uint32_t number)
{
	struct tsv_def *v = tsv_find(&tr.store, number);

	if (!v)
		return;
	if (v->builtin && v->number == 1)
		v->live = TSV_TIMESTAMP;
	else if (v->name && strcmp(v->name, "probe_thread") == 0)
		v->live = TSV_THREAD;
	else if (v->name && strcmp(v->name, "probe_latency_ns") == 0)
		v->live = TSV_LATENCY;
	else
		v->live = TSV_PLAIN;
}

static int64_t tsv_live_value(const struct tsv_def *v, const struct hit *h)
{
	switch (v->live) {
	case TSV_TIMESTAMP:
		return h && h->time_us ? (int64_t)h->time_us : (int64_t)now_usec();
	case TSV_THREAD:
		return h ? h->t->tid : v->value;
	case TSV_LATENCY:
		return h ? (int64_t)h->latency_ns : v->value;
	}
	return v->value;
}

static int ctx_tsv_get(const struct ax_ctx *ctx, unsigned num, int64_t *value)
{
	struct tsv_def *v = tsv_find(&tr.store, num);

	if (!v)
		return -ENOENT;
	*value = tsv_live_value(v, ctx->opaque);
	return 0;
}

static int ctx_tsv_set(const struct ax_ctx *ctx, unsigned num, int64_t value)
{
	struct tsv_def *v = tsv_find(&tr.store, num);

	if (!v)
		return -ENOENT;
	v->value = value;
	v->value_known = true;
	return 0;
}

/* Collects [addr, addr+len): the readable part, in blocks of <= 64 KiB. */
static int collect_mem(struct hit *h, uint64_t addr, uint64_t len)
{
	if (len > tr.tb.size)
		len = tr.tb.size;	/* more could never fit */
	while (len) {
		size_t want = len < COLLECT_CHUNK ? len : COLLECT_CHUNK;
		ssize_t n = mem_read(h->t->proc, addr, collect_buf, want);
		if (n <= 0)
			return 0;	/* unreadable: left out, gdb shows <unavailable> */
		int err = tbuf_add_mem(&tr.tb, addr, collect_buf, n);
		if (err < 0)
			return err;
		if ((size_t)n < want)
			return 0;
		addr += n;
		len -= n;
	}
	return 0;
}

static int ctx_trace_mem(const struct ax_ctx *ctx, uint64_t addr, uint64_t len)
{
	struct hit *h = ctx->opaque;
	int err = collect_mem(h, addr, len);

	if (err < 0)
		h->err = err;
	return err;
}

static int ctx_trace_tsv(const struct ax_ctx *ctx, unsigned num)
{
	struct hit *h = ctx->opaque;
	struct tsv_def *v = tsv_find(&tr.store, num);
	int err;

	if (!v)
		return -ENOENT;
	err = tbuf_add_tsv(&tr.tb, (int32_t)num, tsv_live_value(v, h));
	if (err < 0)
		h->err = err;
	return err;
}

static int ctx_printf(const struct ax_ctx *ctx, const char *text, size_t len)
{
	/* Agent printf (dprintf-style agent): the agent's stderr. */
	fwrite(text, 1, len, stderr);
	return 0;
}

static void hit_ctx(struct hit *h, struct ax_ctx *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->read_reg = ctx_read_reg;
	ctx->read_mem = ctx_read_mem;
	ctx->tsv_get = ctx_tsv_get;
	ctx->tsv_set = ctx_tsv_set;
	ctx->trace_mem = ctx_trace_mem;
	ctx->trace_tsv = ctx_trace_tsv;
	ctx->printf_out = ctx_printf;
	ctx->opaque = h;
}

static void evaluation_failed(struct tp_def *tp, const char *what,
			      const struct ax_result *res)
{
	snprintf(tr.error, sizeof(tr.error), "%s of tracepoint %u: %s", what,
		 tp->number, res->message);
	stop_later(TP_STOP_ERROR, tp->number);
}

/* One frame for tracepoint `tp`: its collect actions, or its
 * while-stepping actions.  Returns 0, or -errno when the run must stop. */
static int collect_frame(struct hit *h, bool stepping)
{
	struct tp_def *tp = h->tp;
	struct ax_ctx ctx;
	bool want_regs = false;
	size_t size;
	int err;

	hit_ctx(h, &ctx);
	for (size_t i = 0; i < tp->n_actions; i++)
		if (tp->actions[i].while_stepping == stepping &&
		    tp->actions[i].kind == TP_ACTION_REGS)
			want_regs = true;
	err = tbuf_frame_begin(&tr.tb, (int16_t)tp->number);
	if (err < 0)
		return err;
	if (want_regs && (!regs_block(h->t) ||
			  (err = tbuf_add_regs(&tr.tb, h->regs)) < 0)) {
		if (!err)
			err = -ESRCH;
		goto fail;
	}
	for (size_t i = 0; i < tp->n_actions; i++) {
		const struct tp_action *a = &tp->actions[i];
		struct ax_result res;

		if (a->while_stepping != stepping)
			continue;
		switch (a->kind) {
		case TP_ACTION_MEM: {
			uint64_t base = 0;
			if (a->basereg >= 0 &&
			    ctx_read_reg(&ctx, (unsigned)a->basereg, &base) < 0)
				continue;
			err = collect_mem(h, base + (uint64_t)a->offset, a->mem_len);
			break;
		}
		case TP_ACTION_EXPR:
			h->err = 0;
			if (ax_eval(a->bytes, a->len, &ctx, &res) < 0) {
				if (h->err) {
					err = h->err;
					break;
				}
				tbuf_frame_abort(&tr.tb);
				evaluation_failed(tp, "an action", &res);
				return -EINVAL;
			}
			break;
		default:
			break;	/* R: the block above; L: static data, none here */
		}
		if (err < 0)
			goto fail;
	}
	err = tbuf_frame_commit(&tr.tb, &size);
	if (err < 0)
		return err;	/* the frame is gone already */
	tp->bytes_used += size;
	return 0;
fail:
	tbuf_frame_abort(&tr.tb);
	return err;
}

static void collection_failed(struct tp_def *tp, int err)
{
	if (err == -ENOSPC || err == -E2BIG) {
		/* No room for the frame: it is lost, and counted, whatever
		 * happens next.  The run goes on in the lossy mode, and when
		 * the frame alone is bigger than a circular buffer (as in
		 * gdbserver); otherwise the buffer is full. */
		tp->lost++;
		if (!tr.full_drop && !(err == -E2BIG && tr.circular))
			stop_later(TP_STOP_FULL, 0);
		return;
	}
	snprintf(tr.error, sizeof(tr.error), "collecting tracepoint %u: %s",
		 tp->number, strerror(-err));
	stop_later(TP_STOP_ERROR, tp->number);
}

/*
 * Room for a hit in wait-for-room mode: the frames of every tracepoint at
 * a site are small next to this (registers, arguments, a few blocks of
 * memory); a hit that still does not fit ends the run as a full buffer.
 */
#define ROOM_RESERVE (64u << 10)

static bool room_for_hit(void)
{
	if (!tr.full_wait || tr.circular || !tr.tb_ready)
		return true;
	size_t reserve = ROOM_RESERVE;
	if (reserve > tr.tb.size / 4)
		reserve = tr.tb.size / 4;
	if (tbuf_free_bytes(&tr.tb) >= reserve)
		return true;
	/* The records the pads hold when the run or the process ends have
	 * nowhere to wait: the buffer grows for them (a ring's worth at
	 * most), and the stream takes them later. */
	if (tr.drain_all && !tr.tb.building &&
	    tbuf_grow(&tr.tb, tr.tb.size + 4 * ROOM_RESERVE) == 0) {
		debug("buffer grown to %zu bytes for the pads' last records", tr.tb.size);
		return true;
	}
	return false;
}

/* Every record the pads hold, whatever the room (wait-for-room mode). */
static void drain_everything(void)
{
	tr.drain_all = true;
	trace_drain(false);
	tr.drain_all = false;
}

/*
 * Whether tracepoint `tp` is the one hit at a site reached through `pl`:
 * a placed pending location runs its own tracepoint only; a plain site
 * none of the pending ones, whose address (`key`) may be anything.
 */
static bool site_runs(const struct tp_def *tp, const struct pending *pl)
{
	if (pl)
		return tp->number == pl->number;
	return !pending_any() || !pending_find(tp->number, tp->addr);
}

/* One hit of the enabled tracepoints at `addr` (return probes only or
 * none of them), those of pending location `pl` if not NULL: condition,
 * frame, counts. */
static void run_tracepoints(struct hit *h, uint64_t addr, bool returning,
			    const struct pending *pl)
{
	struct thread *t = h->t;

	for (struct tp_def *tp = tp_next_at(&tr.store, addr, NULL); tp;
	     tp = tp_next_at(&tr.store, addr, tp)) {
		struct ax_ctx ctx;
		struct ax_result res;

		if (!site_runs(tp, pl))
			continue;
		if (!tp->enabled || ret_is_marked(tp->number) != returning ||
		    (tr.stop_pending && tr.pending_reason != TP_STOP_FULL))
			continue;
		h->tp = tp;
		if (tp->cond) {
			hit_ctx(h, &ctx);
			if (ax_eval_cond(tp->cond, tp->cond_len, &ctx, &res) < 0) {
				evaluation_failed(tp, "the condition", &res);
				continue;
			}
			if (!res.value)
				continue;
		}
		if (tr.stop_pending) {
			/* The buffer filled earlier in this hit, or before the
			 * pads' records taken in now: their frames are lost. */
			tp->lost++;
			continue;
		}
		int err = collect_frame(h, false);
		if (err < 0) {
			if (!tr.stop_pending)
				collection_failed(tp, err);
			continue;
		}
		tp->hit_count++;
		if (tp->step_count && !t->ws_left) {
			t->ws_left = tp->step_count;
			t->ws_number = tp->number;
			t->ws_addr = tp->addr;
		}
		if (tp_pass_reached(tp))
			stop_later(TP_STOP_PASSCOUNT, tp->number);
	}
}

/* Every tracepoint run by a hit at probe address `addr`: those defined
 * there, and those of the pending locations placed there. */
static void run_site(struct hit *h, uint64_t addr, bool returning)
{
	run_tracepoints(h, addr, returning, NULL);
	for (const struct pending *pl = pending_next_at(addr, NULL); pl;
	     pl = pending_next_at(addr, pl))
		run_tracepoints(h, pl->key, returning, pl);
}

/* Whether a return probe's tracepoint is among those at `addr`. */
static struct tp_def *site_return(uint64_t addr)
{
	for (struct tp_def *tp = tp_next_at(&tr.store, addr, NULL); tp;
	     tp = tp_next_at(&tr.store, addr, tp))
		if (tp->enabled && site_runs(tp, NULL) && ret_is_marked(tp->number))
			return tp;
	for (const struct pending *pl = pending_next_at(addr, NULL); pl;
	     pl = pending_next_at(addr, pl)) {
		struct tp_def *tp = tp_find(&tr.store, pl->number, pl->key);
		if (tp && tp->enabled && ret_is_marked(tp->number))
			return tp;
	}
	return NULL;
}

/*
 * The probe's callback: every enabled tracepoint at this address, in
 * number order; a return probe's hit prepares its return (retprobe.c).
 * The thread goes on (returns 0) whatever happens.
 */
static int trace_hit(struct probe *pr, struct thread *t, void *arg)
{
	struct hit h = { .t = t };
	uint8_t *regs;

	/* Hits the pads recorded come first (a full ring sends a hit here). */
	trace_drain(false);
	if (tr.running && !room_for_hit()) {
		tr.parked_hits++;
		return PROBE_HIT_WAIT;
	}
	regs = regs_block_gpr(t);
	if (!tr.running || !regs)
		return 0;
	h.regs = regs;
	/* The ordinary tracepoints here first: their frames hold the
	 * return address the program put there, not the trampoline's
	 * (aarch64: x30 in $regs). */
	run_site(&h, pr->addr, false);
	struct tp_def *tp = site_return(pr->addr);
	if (tp && pr->pad_ret && ret_pushed_in_pad(t)) {
		/* The pad pushed the return already (this stop is its
		 * collector's full ring), or could not push a tail call's
		 * (counted as a fallback there): nothing more here. */
	} else if (tp && !tr.stop_pending) {
		/* One shadow entry serves every return probe here. */
		char why[200];
		int err = ret_entry(t, pr->addr, tr.run_id, why, sizeof(why));
		if (err < 0) {
			snprintf(tr.error, sizeof(tr.error), "return probe %u: %s",
				 tp->number, why);
			stop_later(TP_STOP_ERROR, tp->number);
		}
	}
	return 0;
}

/*
 * One group of the in-process collector's record (struct ipa_group): the
 * frame of its tracepoint, from the record's registers and the blocks the
 * collector wrote, the memory's readable bytes only (the rest stays out,
 * and gdb shows it <unavailable>), then the counts a hit makes.
 */
static void ipa_frame(struct hit *h, const struct ipa_group *g, uint64_t addr)
{
	struct tp_def *tp = tp_find(&tr.store, g->tp_number, addr);
	const uint8_t *b = (const uint8_t *)(g + 1), *end = b + g->len;
	size_t size;
	int err;

	if (!tp || !tp->enabled ||
	    (tr.stop_pending && tr.pending_reason != TP_STOP_FULL))
		return;
	if (tr.stop_pending) {
		tp->lost++;
		return;
	}
	h->tp = tp;
	if ((err = tbuf_frame_begin(&tr.tb, (int16_t)tp->number)) < 0) {
		collection_failed(tp, err);
		return;
	}
	if ((g->flags & IPA_PROG_REGS) && (err = tbuf_add_regs(&tr.tb, h->regs)) < 0)
		goto fail;
	while (b + sizeof(struct ipa_block) <= end) {
		const struct ipa_block *k = (const struct ipa_block *)b;
		if (k->size < sizeof(*k) || k->size > (size_t)(end - b))
			break;
		if (k->kind == IPA_BLK_MEM && k->size >= sizeof(struct ipa_mem_block)) {
			const struct ipa_mem_block *m = (const struct ipa_mem_block *)k;
			if (m->avail && m->avail <= m->len &&
			    sizeof(*m) + m->avail <= k->size &&
			    (err = tbuf_add_mem(&tr.tb, m->addr, m->bytes, m->avail)) < 0)
				goto fail;
		} else if (k->kind == IPA_BLK_TSV && k->size >= sizeof(struct ipa_tsv_block)) {
			const struct ipa_tsv_block *v = (const struct ipa_tsv_block *)k;
			int64_t value = v->value;
			if (v->live == IPA_TSV_TIMESTAMP) {
				value = (int64_t)h->time_us;
			} else if (v->live == IPA_TSV_THREAD) {
				value = h->t->tid;
			} else {
				/* The value the hit set, as the agent's would be. */
				struct tsv_def *d = tsv_find(&tr.store, v->number);
				if (d) {
					d->value = value;
					d->value_known = true;
				}
			}
			if ((err = tbuf_add_tsv(&tr.tb, (int32_t)v->number, value)) < 0)
				goto fail;
		}
		b += k->size;
	}
	if ((err = tbuf_frame_commit(&tr.tb, &size)) < 0) {
		collection_failed(tp, err);
		return;
	}
	tp->bytes_used += size;
	tp->hit_count++;
	if (tp_pass_reached(tp))
		stop_later(TP_STOP_PASSCOUNT, tp->number);
	return;
fail:
	tbuf_frame_abort(&tr.tb);
	collection_failed(tp, err);
}

/* One hit a jump pad recorded in the process (pad_drain), with the
 * in-process collector's groups in `blocks` (PAD_IPA), else to be run
 * here on the recorded registers.  False: no room for it yet
 * (wait-for-room mode), the record stays in the ring. */
static bool drain_hit(struct probe *pr, struct thread *t, uint64_t time_us,
		      const void *blocks, void *arg)
{
	struct hit h = { .t = t, .time_us = time_us };

	if (tr.running && !room_for_hit())
		return false;
	if (!tr.running || pr->owner != PROBE_OWNER_TRACE ||
	    !(h.regs = regs_block_gpr(t)))
		return true;
	if (blocks) {
		const struct ipa_site_out *so = blocks;
		const uint8_t *g = (const uint8_t *)(so + 1), *end = g + so->len;
		for (uint32_t i = 0; i < so->ngroups &&
				     g + sizeof(struct ipa_group) <= end; i++) {
			const struct ipa_group *gr = (const struct ipa_group *)g;
			if (gr->len > (size_t)(end - g) - sizeof(*gr))
				break;
			ipa_frame(&h, gr, pr->addr);
			g += sizeof(*gr) + gr->len;
		}
		return true;
	}
	run_site(&h, pr->addr, false);
	return true;
}

/*
 * Takes in the hits the jump pads of the traced process collected on
 * their own.  `may_stop`: the caller is at the top of the loop, where a
 * stop they cause (buffer full) can run at once.
 */
void trace_drain(bool may_stop)
{
	static bool busy;

	if (busy || !tr.proc || !tr.proc->pads)
		return;
	busy = true;
	pad_drain(tr.proc, drain_hit, NULL);
	busy = false;
	if (may_stop)
		trace_after_hit();
}

/*
 * Bytecode whose result depends on nothing but the registers and the
 * trace state variables: no memory read or collected, no printf, and of
 * the live variables only the time and the thread of the hit, which a
 * recording pad stores.  It can run when the agent reads the record.
 */
static bool registers_and_variables(const uint8_t *code, size_t len)
{
	struct ax_info info;
	char err[128];

	if (ax_verify(code, len, &info, err, sizeof(err)) < 0 || info.reads_mem ||
	    info.traces_mem || info.uses_printf || info.tsvs_truncated)
		return false;
	for (unsigned int i = 0; i < info.ntsvs; i++) {
		struct tsv_def *v = tsv_find(&tr.store, info.tsvs[i].num);
		if (v && v->live == TSV_LATENCY)
			return false;
	}
	return true;
}

/* registers_and_variables, where $probe_latency_ns may be read too (a
 * return's record has it). */
static bool registers_variables_latency(const uint8_t *code, size_t len)
{
	struct ax_info info;
	char err[128];

	return ax_verify(code, len, &info, err, sizeof(err)) == 0 && !info.reads_mem &&
	       !info.traces_mem && !info.uses_printf && !info.tsvs_truncated;
}

/* Trace state variables a tracepoint's earlier actions set. */
struct ipa_sets {
	unsigned int n;
	uint16_t num[AX_INFO_MAX_TSVS];
};

/* Whether `code` only collects variables: tracev, getv (gdb's collect
 * of $v pushes the value too, then drops it), pop, end. */
static bool collects_variables_only(const uint8_t *code, size_t len)
{
	for (size_t pc = 0; pc < len;) {
		switch (code[pc]) {
		case AX_OP_TRACEV: case AX_OP_GETV:
			pc += 3;
			break;
		case AX_OP_POP:
			pc++;
			break;
		case AX_OP_END:
			return true;
		default:
			return false;
		}
	}
	return false;
}

/*
 * Bytecode the in-process collector runs as the agent would: no printf
 * (its output is the agent's).  Trace state variables only where the
 * agent's values of them do not matter: a condition uses none; an action
 * may set one and trace it (probe-trace's arguments), or trace one an
 * earlier action of the tracepoint set (`teval $v = ...`, then `collect
 * $v`), never read a value another hit set (the agent keeps those); the
 * hit's time and thread it may trace, and read only in an action that
 * does nothing else (gdb's `collect $probe_thread`): the agent fills
 * them in from the record (*live), the collector reads them as 0.
 * `sets` (NULL: a condition) gathers the variables set so far.
 */
static bool ipa_runs(const uint8_t *code, size_t len, struct ipa_sets *sets,
		     bool *live)
{
	struct ax_info info;
	char err[128];

	if (ax_verify(code, len, &info, err, sizeof(err)) < 0 || info.uses_printf ||
	    info.tsvs_truncated || tsv_count(&tr.store) > IPA_TSVS)
		return false;
	if (info.ntsvs && !sets)
		return false;
	bool only = info.ntsvs && collects_variables_only(code, len);
	for (unsigned int i = 0; i < info.ntsvs; i++) {
		struct tsv_def *v = tsv_find(&tr.store, info.tsvs[i].num);
		unsigned int how = info.tsvs[i].how;
		if (!v || v->live == TSV_LATENCY)
			return false;
		if (v->live == TSV_TIMESTAMP || v->live == TSV_THREAD) {
			if (how != AX_TSV_TRACE && !(only && !(how & AX_TSV_SET)))
				return false;
			*live = true;
			continue;
		}
		bool set_before = false;
		for (unsigned int k = 0; k < sets->n; k++)
			if (sets->num[k] == info.tsvs[i].num)
				set_before = true;
		if (how & AX_TSV_SET) {
			if (how & AX_TSV_GET)
				return false;	/* `$v = $v + 1`: the agent's value */
			if (!set_before && sets->n < AX_INFO_MAX_TSVS)
				sets->num[sets->n++] = info.tsvs[i].num;
			else if (!set_before)
				return false;
		} else if (!set_before) {
			return false;
		}
	}
	return true;
}

/* The trace state variables as the collector sees them (struct
 * ipa_tsvs); the count last, so a reader meanwhile finds none and its
 * hit goes to the agent. */
void trace_ipa_tsvs(struct ipa_tsvs *t)
{
	uint32_t n = 0;

	__atomic_store_n(&t->count, 0, __ATOMIC_RELEASE);
	for (size_t i = 0; i < tsv_count(&tr.store) && n < IPA_TSVS; i++) {
		const struct tsv_def *v = tsv_at(&tr.store, i);
		t->v[n].number = v->number;
		t->v[n].kind = v->live == TSV_TIMESTAMP ? IPA_TSV_TIMESTAMP :
			       v->live == TSV_THREAD ? IPA_TSV_THREAD : IPA_TSV_PLAIN;
		t->v[n].value = v->value;
		n++;
	}
	__atomic_store_n(&t->count, n, __ATOMIC_RELEASE);
}

/* Whether the in-process collector can run every tracepoint at `addr`
 * (recordable's PAD_IPA): at most IPA_SITE_PROGS of them, no
 * while-stepping, no return probe, no pending location there, and
 * bytecode ipa_runs. */
static bool ipa_site_ok(uint64_t addr)
{
	unsigned int n = 0;

	if (pending_any() && pending_next_at(addr, NULL))
		return false;
	bool ret_in_pad = ret_pad_ok(addr);

	for (struct tp_def *tp = tp_next_at(&tr.store, addr, NULL); tp;
	     tp = tp_next_at(&tr.store, addr, tp)) {
		if (ret_in_pad && ret_is_marked(tp->number))
			continue;	/* the trampoline records them */
		if (tp->step_count || ret_is_marked(tp->number) || ++n > IPA_SITE_PROGS)
			return false;
		bool live = false;
		struct ipa_sets sets = { 0 };
		if (tp->cond && !ipa_runs(tp->cond, tp->cond_len, NULL, &live))
			return false;
		for (size_t i = 0; i < tp->n_actions; i++) {
			const struct tp_action *a = &tp->actions[i];
			if (a->while_stepping)
				return false;
			if (a->kind == TP_ACTION_MEM && a->mem_len > UINT32_MAX)
				return false;
			if (a->kind == TP_ACTION_EXPR &&
			    !ipa_runs(a->bytes, a->len, &sets, &live))
				return false;
			if (a->kind != TP_ACTION_REGS && a->kind != TP_ACTION_MEM &&
			    a->kind != TP_ACTION_EXPR)
				return false;
		}
	}
	return n > 0;
}

int trace_ipa_programs(uint64_t addr, uint8_t *buf, size_t size,
		       uint32_t *offs, unsigned int max, char *why, size_t whylen)
{
	size_t used = 0;
	unsigned int n = 0;

	if (!ipa_site_ok(addr)) {
		snprintf(why, whylen, "the tracepoints at 0x%llx need the agent",
			 (unsigned long long)addr);
		return -EOPNOTSUPP;
	}
	bool ret_in_pad = ret_pad_ok(addr);

	for (struct tp_def *tp = tp_next_at(&tr.store, addr, NULL); tp;
	     tp = tp_next_at(&tr.store, addr, tp)) {
		if (!tp->enabled || (ret_in_pad && ret_is_marked(tp->number)))
			continue;
		size_t nact = 0, code = tp->cond_len;
		bool regs = false, live = false;
		struct ipa_sets sets = { 0 };
		for (size_t i = 0; i < tp->n_actions; i++) {
			const struct tp_action *a = &tp->actions[i];
			if (a->kind == TP_ACTION_REGS) {
				regs = true;
			} else {
				nact++;
				if (a->kind == TP_ACTION_EXPR) {
					code += a->len;
					ipa_runs(a->bytes, a->len, &sets, &live);
				}
			}
		}
		size_t psize = sizeof(struct ipa_program) +
			       nact * sizeof(struct ipa_action) + code;
		psize = (psize + 7) & ~(size_t)7;
		if (n == max || used + psize > size) {
			snprintf(why, whylen, "the tracepoints at 0x%llx are too many or too big "
				 "for the in-process collector", (unsigned long long)addr);
			return -E2BIG;
		}
		struct ipa_program *p = (struct ipa_program *)(buf + used);
		memset(p, 0, psize);
		p->version = IPA_ABI_VERSION;
		p->size = (uint32_t)psize;
		p->tp_number = tp->number;
		p->flags = (regs ? IPA_PROG_REGS : 0) | (live ? IPA_PROG_LIVE : 0);
		p->pass_count = tp->pass_count;
		p->nactions = (uint32_t)nact;
		uint32_t at = (uint32_t)(sizeof(*p) + nact * sizeof(struct ipa_action));
		if (tp->cond_len) {
			p->cond_off = at;
			p->cond_len = (uint32_t)tp->cond_len;
			memcpy((uint8_t *)p + at, tp->cond, tp->cond_len);
			at += (uint32_t)tp->cond_len;
		}
		size_t k = 0;
		for (size_t i = 0; i < tp->n_actions; i++) {
			const struct tp_action *a = &tp->actions[i];
			struct ipa_action *ia = &p->actions[k];
			if (a->kind == TP_ACTION_MEM) {
				ia->kind = IPA_ACT_MEM;
				ia->basereg = a->basereg >= 0 ? (uint16_t)a->basereg : IPA_NO_REG;
				ia->len = (uint32_t)a->mem_len;
				ia->offset = (uint64_t)a->offset;
				k++;
			} else if (a->kind == TP_ACTION_EXPR) {
				ia->kind = IPA_ACT_EXPR;
				ia->len = (uint32_t)a->len;
				ia->offset = at;
				memcpy((uint8_t *)p + at, a->bytes, a->len);
				at += (uint32_t)a->len;
				k++;
			}
		}
		offs[n++] = (uint32_t)used;
		used += psize;
	}
	return (int)n;
}

/*
 * What the jump pad at `addr` may record in the process, without
 * stopping the thread, for every tracepoint there: the registers when
 * they collect nothing else; also the hit's thread and time when their
 * conditions and expressions need no more than registers and variables
 * (probe-trace's args and retval are such); with the in-process
 * collector (PAD_IPA), also memory, conditions that read it, and pass
 * counts.  While-stepping, return probes, printf and trace state
 * variables the collector does not run need the thread stopped.
 */
static enum pad_collect recordable(uint64_t addr)
{
	enum pad_collect mode = PAD_REGS;
	bool ret_in_pad = ret_pad_ok(addr), any = false;

	for (struct tp_def *tp = tp_next_at(&tr.store, addr, NULL); tp;
	     tp = tp_next_at(&tr.store, addr, tp)) {
		if (ret_in_pad && ret_is_marked(tp->number))
			continue;	/* the trampoline records them */
		any = true;
		if (tp->pass_count || tp->step_count || ret_is_marked(tp->number))
			return ipa_site_ok(addr) ? PAD_IPA : PAD_STOPS;
		if (tp->cond) {
			if (!registers_and_variables(tp->cond, tp->cond_len))
				return ipa_site_ok(addr) ? PAD_IPA : PAD_STOPS;
			mode = PAD_REGS_TIME_TID;
		}
		for (size_t i = 0; i < tp->n_actions; i++) {
			const struct tp_action *a = &tp->actions[i];
			if (a->while_stepping)
				return PAD_STOPS;
			if (a->kind == TP_ACTION_REGS)
				continue;
			if (a->kind != TP_ACTION_EXPR ||
			    !registers_and_variables(a->bytes, a->len))
				return ipa_site_ok(addr) ? PAD_IPA : PAD_STOPS;
			mode = PAD_REGS_TIME_TID;
		}
	}
	/* Return probes alone: nothing to record at the entry. */
	return any ? mode : PAD_STOPS;
}

/* PROBE_PAD_RET when ret_pad_ok, with PROBE_PAD_RET_ONLY when the
 * site's tracepoints are all return probes (nothing to do at the entry
 * but the push). */
static unsigned int ret_pad_flags(uint64_t addr)
{
	if (!ret_pad_ok(addr))
		return 0;
	for (struct tp_def *tp = tp_next_at(&tr.store, addr, NULL); tp;
	     tp = tp_next_at(&tr.store, addr, tp))
		if (tp->enabled && !ret_is_marked(tp->number))
			return PROBE_PAD_RET;
	return PROBE_PAD_RET | PROBE_PAD_RET_ONLY;
}

/*
 * Whether the returns of the return probes at `addr` can be taken in the
 * pad (PROBE_PAD_RET): the arch has the code, `addr` is a function's
 * first instruction by the symbol table (where [sp] is the return
 * address; elsewhere the trap path says so), no ordinary tracepoint
 * there needs a while-stepping, and the return probes' conditions and
 * actions need no more than the registers, the variables, the thread,
 * the time and the latency, which the drain has from the record, and no
 * pass count (the trap path counts it at the hit).
 */
static bool ret_pad_ok(uint64_t addr)
{
	struct process *p = tr.proc;
	uint64_t fa = 0, fs = 0;
	bool any = false;

	if (!p || !agent.arch->emit_ret_entry ||
	    !(agent.opt.tp_strategy == PROBE_AUTO || agent.opt.tp_strategy == PROBE_PAD) ||
	    (pending_any() && pending_next_at(addr, NULL)) ||
	    !process_function_at(p, addr, &fa, &fs) || fa != addr)
		return false;
	for (struct tp_def *tp = tp_next_at(&tr.store, addr, NULL); tp;
	     tp = tp_next_at(&tr.store, addr, tp)) {
		if (tp->step_count)
			return false;
		if (!ret_is_marked(tp->number))
			continue;
		any = true;
		if (tp->pass_count ||
		    (tp->cond && !registers_variables_latency(tp->cond, tp->cond_len)))
			return false;
		for (size_t i = 0; i < tp->n_actions; i++) {
			const struct tp_action *a = &tp->actions[i];
			if (a->while_stepping)
				return false;
			if (a->kind == TP_ACTION_REGS)
				continue;
			if (a->kind != TP_ACTION_EXPR ||
			    !registers_variables_latency(a->bytes, a->len))
				return false;
		}
	}
	return any;
}

uint32_t trace_run_id(void)
{
	return tr.run_id;
}

bool trace_drain_return(struct thread *t, uint64_t func, uint32_t run16,
			uint64_t latency_ns, uint64_t time_us)
{
	struct hit h = { .t = t, .latency_ns = latency_ns, .time_us = time_us };

	if (tr.running && !room_for_hit())
		return false;
	if (!tr.running || run16 != (tr.run_id & 0xffff) || !(h.regs = regs_block_gpr(t)))
		return true;
	run_site(&h, func, true);
	return true;
}

void trace_return(struct thread *t, uint64_t func, uint32_t run,
		  uint64_t latency_ns, uint64_t time_us)
{
	struct hit h = { .t = t, .latency_ns = latency_ns, .time_us = time_us };

	if (!tr.running || run != tr.run_id || !(h.regs = regs_block_gpr(t)))
		return;
	run_site(&h, func, true);
}



/* A thread doing while-stepping finished one more instruction. */
void trace_step_frame(struct thread *t)
{
	struct tp_def *tp = tp_find(&tr.store, t->ws_number, t->ws_addr);
	struct hit h = { .t = t, .tp = tp };

	if (t->ws_left)
		t->ws_left--;
	if (!tr.running || !tp || !(h.regs = regs_block_gpr(t))) {
		t->ws_left = 0;
		return;
	}
	int err = collect_frame(&h, true);
	if (err < 0 && !tr.stop_pending)
		collection_failed(tp, err);
	if (tr.stop_pending)
		t->ws_left = 0;
}

/*
 * Tracepoint `tp` (whose sites need `rec`) joins the probe `pr` another
 * tracepoint put at the same address: its pad must record as much as the
 * new one needs, or stop the thread; a fast tracepoint needs a pad.
 */
static int share_probe(struct probe *pr, struct tp_def *tp, enum pad_collect rec,
		       char *why, size_t whylen)
{
	unsigned int rf = ret_pad_flags(tp->addr);
	bool ret = rf & PROBE_PAD_RET, only = rf & PROBE_PAD_RET_ONLY;

	if (ret != pr->pad_ret_want || only != pr->pad_ret_only) {
		/* The returns go to the pad, or back to the trap. */
		pr->pad_ret_want = ret;
		pr->pad_ret_only = only;
		if (pr->pad) {
			trace_drain(false);
			pad_detach(pr);
			char pwhy[160];
			if (pad_attach(pr, rec, pwhy, sizeof(pwhy)) < 0)
				debug("no pad at %#llx any more: %s",
				      (unsigned long long)pr->addr, pwhy);
		}
	}
	if (pr->pad_collect != PAD_STOPS &&
	    (pr->pad_collect < rec || rec == PAD_IPA)) {
		/* It records less than the new tracepoint needs, or its
		 * collector's programs are those of the site before. */
		trace_drain(false);
		pad_detach(pr);
		char pwhy[160];
		if (pad_attach(pr, rec, pwhy, sizeof(pwhy)) < 0)
			debug("no pad at %#llx any more: %s",
			      (unsigned long long)pr->addr, pwhy);
	}
	if (pr->pad_collect != PAD_STOPS && rec == PAD_STOPS) {
		/* A tracepoint added during the run needs more than
		 * the registers: its pad must stop the thread. */
		trace_drain(false);
		pad_detach(pr);
		char pwhy[160];
		if ((agent.opt.tp_strategy == PROBE_AUTO ||
		     agent.opt.tp_strategy == PROBE_PAD || tp->fast) &&
		    pad_attach(pr, PAD_STOPS, pwhy, sizeof(pwhy)) < 0)
			debug("no pad at %#llx any more: %s",
			      (unsigned long long)pr->addr, pwhy);
	}
	if (tp->fast && !pr->pad) {
		/* shared with a tracepoint that did not ask for a jump */
		char pwhy[160];
		int err = pad_attach(pr, rec, pwhy, sizeof(pwhy));
		if (err < 0) {
			snprintf(why, whylen, "fast tracepoint %u at 0x%llx: no jump pad: %s; "
				 "use trace, not ftrace, there",
				 tp->number, (unsigned long long)pr->addr, pwhy);
			return err;
		}
	}
	return 0;
}

/* Puts a probe at every address of the enabled tracepoints (once per
 * address).  Returns 0 or -errno with the reason in `why`. */
static int install(struct tp_def *only, char *why, size_t whylen)
{
	struct process *p = current_process();

	if (!p) {
		snprintf(why, whylen, "no process to trace");
		return -ESRCH;
	}
	tr.proc = p;
	for (size_t i = 0; i < tp_count(&tr.store); i++) {
		struct tp_def *tp = tp_at(&tr.store, i);
		struct probe *pr;

		if ((only && tp != only) || !tp->enabled)
			continue;
		if (pending_any() && pending_find(tp->number, tp->addr))
			continue;	/* placed when its library loads */
		if (ret_is_marked(tp->number)) {
			int err = ret_prepare(p, tp->addr, why, whylen);
			if (err < 0)
				return err;
		}
		enum pad_collect rec = recordable(tp->addr);
		if (!(pr = probe_at(p, tp->addr))) {
			int err = probe_insert_flags(p, tp->addr, trace_hit, NULL,
						     PROBE_MAY_PAD | (tp->fast ? PROBE_NEED_PAD : 0) |
						     (rec != PAD_STOPS ? PROBE_PAD_COLLECT : 0) |
						     (rec == PAD_REGS_TIME_TID ? PROBE_PAD_TIME_TID : 0) |
						     (rec == PAD_IPA ? PROBE_PAD_IPA : 0) |
						     ret_pad_flags(tp->addr),
						     &pr, why, whylen);
			if (err < 0)
				return err;
			pr->owner = PROBE_OWNER_TRACE;
			continue;
		}
		int err = share_probe(pr, tp, rec, why, whylen);
		if (err < 0)
			return err;
	}
	if (!only && pending_any()) {
		/* The dynamic linker tells of every library from now on;
		 * those loaded already are placed at once. */
		int err = solib_watch(p, why, whylen);
		if (err < 0)
			return err;
		pending_update(p);
	}
	return 0;
}

/* --- pending locations (pending.c) ---------------------------------------- */

int trace_place(struct process *p, uint32_t number, uint64_t key,
		uint64_t addr, char *why, size_t whylen)
{
	struct tp_def *tp = tp_find(&tr.store, number, key);
	struct probe *pr;
	int err;

	if (!tp) {
		snprintf(why, whylen, "no tracepoint %u at 0x%llx", number,
			 (unsigned long long)key);
		return -ENOENT;
	}
	if (!tp->enabled)
		return -ECANCELED;
	if (ret_is_marked(number) && (err = ret_prepare(p, addr, why, whylen)) < 0)
		return err;
	enum pad_collect rec = recordable(key);
	if ((pr = probe_at(p, addr)))
		return share_probe(pr, tp, rec, why, whylen);
	err = probe_insert_flags(p, addr, trace_hit, NULL,
				 PROBE_MAY_PAD | (tp->fast ? PROBE_NEED_PAD : 0) |
				 (rec != PAD_STOPS ? PROBE_PAD_COLLECT : 0) |
				 (rec == PAD_REGS_TIME_TID ? PROBE_PAD_TIME_TID : 0) |
				 (rec == PAD_IPA ? PROBE_PAD_IPA : 0) |
				 ret_pad_flags(key),
				 &pr, why, whylen);
	if (err < 0)
		return err;
	pr->owner = PROBE_OWNER_TRACE;
	return 0;
}

void trace_unplace(struct process *p, uint64_t addr)
{
	struct probe *pr = probe_at(p, addr);

	if (!pr || pr->owner != PROBE_OWNER_TRACE || pending_next_at(addr, NULL))
		return;
	for (struct tp_def *tp = tp_next_at(&tr.store, addr, NULL); tp;
	     tp = tp_next_at(&tr.store, addr, tp))
		if (tp->enabled && site_runs(tp, NULL))
			return;	/* an ordinary tracepoint's too */
	probe_remove_unmapped(pr);
}

uint64_t trace_frames_of(uint32_t number, uint64_t key)
{
	struct tp_def *tp = tp_find(&tr.store, number, key);

	return tp ? tp->hit_count : 0;
}

void trace_probes_gone(struct process *p)
{
	if (tr.proc == p)
		pending_run_ended();
}

void trace_libraries_changed(struct process *p)
{
	if (tr.running && tr.proc == p)
		pending_update(p);
}

/* Every expression is checked before anything runs. */
static int verify(struct tp_def *tp, char *why, size_t whylen)
{
	struct ax_info info;
	char err[128];

	if (tp->cond && ax_verify(tp->cond, tp->cond_len, &info, err, sizeof(err)) < 0) {
		snprintf(why, whylen, "condition of tracepoint %u: %s", tp->number, err);
		return -EINVAL;
	}
	for (size_t i = 0; i < tp->n_actions; i++) {
		const struct tp_action *a = &tp->actions[i];
		if (a->kind != TP_ACTION_EXPR)
			continue;
		if (ax_verify(a->bytes, a->len, &info, err, sizeof(err)) < 0) {
			snprintf(why, whylen, "action of tracepoint %u: %s", tp->number, err);
			return -EINVAL;
		}
	}
	return 0;
}

/* The trace buffer, `size` bytes of frames whose register blocks are
 * `regsize` bytes, kept if it is that already. */
static int buffer_ready(size_t regsize, size_t size, char *why, size_t whylen)
{
	if (tr.tb_ready && tr.tb_regsize != regsize) {
		tbuf_free(&tr.tb);
		tr.tb_ready = false;
	}
	if (!tr.tb_ready) {
		if (tbuf_init(&tr.tb, size, regsize) < 0) {
			snprintf(why, whylen, "cannot allocate a trace buffer of %zu bytes", size);
			return -ENOMEM;
		}
		tr.tb_ready = true;
		tr.tb_regsize = regsize;
	} else if (tbuf_resize(&tr.tb, size) < 0) {
		snprintf(why, whylen, "cannot allocate a trace buffer of %zu bytes", size);
		return -ENOMEM;
	}
	return 0;
}

static int start_run(char *why, size_t whylen)
{
	struct process *p = current_process();
	size_t regsize = p ? regs_block_size(p) : 0;
	size_t size = tr.buffer_size < 0 ? DEFAULT_BUFFER_SIZE : (size_t)tr.buffer_size;
	int err;

	if (!p) {
		snprintf(why, whylen, "no process to trace: start the program first");
		return -ESRCH;
	}
	for (size_t i = 0; i < tp_count(&tr.store); i++)
		if ((err = verify(tp_at(&tr.store, i), why, whylen)) < 0)
			return err;
	if ((err = buffer_ready(regsize, size, why, whylen)) < 0)
		return err;
	tbuf_clear(&tr.tb);
	tr.stream_off = 0;
	tbuf_set_circular(&tr.tb, tr.circular);
	/* Touch every page now, not on the first hits. */
	memset(tr.tb.data, 0, tr.tb.size);
	tp_store_start_run(&tr.store);
	tr.frame_no = -1;
	tr.stop_pending = false;
	tr.error[0] = '\0';
	set_string(&tr.stop_notes, NULL);
	for (struct thread *t = p->threads; t; t = t->next)
		t->ws_left = 0;
	pending_start_run();
	/* Before the probes: the pads that take returns carry it. */
	tr.run_id++;
	err = install(NULL, why, whylen);
	if (err < 0) {
		remove_probes();
		return err;
	}
	tr.running = tr.ever_run = true;
	tr.start_time = now_usec();
	tr.stop_time = 0;
	return 0;
}

/* --- status ------------------------------------------------------------ */

static void fill_status(struct tp_status *st)
{
	memset(st, 0, sizeof(*st));
	st->running = tr.running;
	st->reason = tr.running ? TP_STOP_UNKNOWN : tr.ever_run ? tr.reason : TP_STOP_NOT_RUN;
	st->stopping_tp = tr.stopping_tp;
	st->stop_notes = tr.stop_notes;
	st->error = tr.error;
	if (tr.tb_ready) {
		st->frames = tr.tb.frames;
		st->created = tr.tb.created;
		st->free_bytes = tbuf_free_bytes(&tr.tb);
		st->size = tr.tb.size;
	} else {
		st->size = st->free_bytes =
			tr.buffer_size < 0 ? DEFAULT_BUFFER_SIZE : (uint64_t)tr.buffer_size;
	}
	st->circular = tr.circular;
	st->disconnected = tr.disconnected;
	st->start_time = tr.start_time;
	st->stop_time = tr.stop_time;
	st->user = tr.user;
	st->notes = tr.notes;
}

/* --- frames ---------------------------------------------------------------- */

static uint64_t tp_addr_cb(void *ctx, int tpnum)
{
	return tp_number_addr(&tr.store, (uint32_t)tpnum);
}

static void frame_pc_desc(struct tbuf_pc *pc)
{
	const struct arch_reg *r = &agent.arch->regs[agent.arch->pc_regnum];

	pc->pc_offset = r->offset;
	pc->pc_size = r->bitsize / 8;
	pc->tp_addr = tp_addr_cb;
	pc->ctx = NULL;
}

static void select_frame(struct rsp_request *req, struct rsp_buf *reply)
{
	struct tbuf_frame f;
	struct tbuf_pc pc;
	struct tbuf_query q = { 0 };
	int err;

	if (req->u.tframe.kind == RSP_TFRAME_NONE) {
		tr.frame_no = -1;
		rsp_buf_puts(reply, "OK");
		return;
	}
	if (!tr.tb_ready) {
		rsp_buf_puts(reply, "F-1");
		tr.frame_no = -1;
		return;
	}
	frame_pc_desc(&pc);
	switch (req->u.tframe.kind) {
	case RSP_TFRAME_NUMBER:
		err = tbuf_frame_get(&tr.tb, req->u.tframe.number, &f);
		break;
	case RSP_TFRAME_PC:
		q.kind = TBUF_FIND_PC;
		q.lo = req->u.tframe.lo;
		err = tbuf_find(&tr.tb, &q, tr.frame_no, &pc, &f);
		break;
	case RSP_TFRAME_TDP:
		q.kind = TBUF_FIND_TDP;
		q.tpnum = (int)req->u.tframe.number;
		err = tbuf_find(&tr.tb, &q, tr.frame_no, &pc, &f);
		break;
	case RSP_TFRAME_RANGE:
	case RSP_TFRAME_OUTSIDE:
		q.kind = req->u.tframe.kind == RSP_TFRAME_RANGE ? TBUF_FIND_RANGE
								 : TBUF_FIND_OUTSIDE;
		q.lo = req->u.tframe.lo;
		q.hi = req->u.tframe.hi;
		err = tbuf_find(&tr.tb, &q, tr.frame_no, &pc, &f);
		break;
	default:
		err = -EINVAL;
		break;
	}
	if (err < 0) {
		tr.frame_no = -1;
		rsp_buf_puts(reply, "F-1");
		return;
	}
	tr.frame = f;
	tr.frame_no = (int64_t)f.number;
	rsp_buf_printf(reply, "F%llxT%x", (unsigned long long)f.number, (unsigned)f.tpnum);
}

/* g in a frame: its R block, or every register unavailable but the PC. */
void trace_frame_regs(struct rsp_buf *reply)
{
	const uint8_t *regs;
	const struct arch_ops *arch = agent.arch;

	if (tbuf_frame_regs(&tr.tb, &tr.frame, &regs) == 0) {
		rsp_buf_put_hex(reply, regs, tr.tb.regblock_size);
		return;
	}
	uint64_t pc = tp_number_addr(&tr.store, (uint32_t)tr.frame.tpnum);
	const struct arch_reg *pcr = &arch->regs[arch->pc_regnum];
	/* The pc's low bytes: every target is little-endian (regblock.c). */
	for (size_t off = 0; off < tr.tb.regblock_size; off++) {
		if (off == pcr->offset) {
			rsp_buf_put_hex(reply, &pc, pcr->bitsize / 8);
			off += pcr->bitsize / 8 - 1;
		} else {
			rsp_buf_puts(reply, "xx");
		}
	}
}

void trace_frame_reg(unsigned int regnum, struct rsp_buf *reply)
{
	const struct arch_ops *arch = agent.arch;
	const struct arch_reg *r = &arch->regs[regnum];
	const uint8_t *regs;

	if (r->offset + r->bitsize / 8 > tr.tb.regblock_size) {
		rsp_buf_put_error(reply, "no register %u in trace frames", regnum);
		return;
	}
	if (tbuf_frame_regs(&tr.tb, &tr.frame, &regs) == 0) {
		rsp_buf_put_hex(reply, regs + r->offset, r->bitsize / 8);
		return;
	}
	if ((int)regnum == arch->pc_regnum) {
		uint64_t pc = tp_number_addr(&tr.store, (uint32_t)tr.frame.tpnum);
		rsp_buf_put_hex(reply, &pc, r->bitsize / 8);
		return;
	}
	for (unsigned i = 0; i < r->bitsize / 8; i++)
		rsp_buf_puts(reply, "xx");
}

/* Whether [addr, addr+len) lies in a mapping the program cannot write:
 * such memory is the same now as when the frame was collected. */
static bool read_only_memory(struct process *p, uint64_t addr, size_t len)
{
	char perms[5];

	return p && mem_mapping_perms(p, addr, len, perms) == 0 &&
	       perms[0] == 'r' && perms[1] == '-';
}

void trace_frame_mem(uint64_t addr, size_t len, struct rsp_buf *reply)
{
	size_t got = 0;

	if (len > COLLECT_CHUNK)
		len = COLLECT_CHUNK;
	tbuf_frame_read_mem(&tr.tb, &tr.frame, addr, collect_buf, len, &got);
	if (got) {
		rsp_buf_put_hex(reply, collect_buf, got);
		return;
	}
	struct process *p = current_process();
	if (read_only_memory(p, addr, len)) {
		ssize_t n = mem_read(p, addr, collect_buf, len);
		if (n > 0) {
			rsp_buf_put_hex(reply, collect_buf, n);
			return;
		}
	}
	rsp_buf_puts(reply, "E01");	/* not collected: unavailable */
}

void trace_frame_info(struct rsp_request *req, struct rsp_buf *reply)
{
	struct rsp_buf xml;

	if (tr.frame_no < 0) {
		rsp_buf_put_error(reply, "no trace frame selected");
		return;
	}
	rsp_buf_init(&xml);
	tbuf_frame_info_xml(&tr.tb, &tr.frame, &xml);
	uint64_t off = req->u.xfer.offset, len = req->u.xfer.length;
	if (off > xml.len) {
		rsp_buf_put_error(reply, "offset beyond the traceframe-info document");
	} else {
		uint64_t n = xml.len - off < len ? xml.len - off : len;
		if (n > RSP_MAX_PAYLOAD / 2)
			n = RSP_MAX_PAYLOAD / 2;
		rsp_buf_putc(reply, off + n < xml.len ? 'm' : 'l');
		rsp_buf_put_escaped(reply, xml.data + off, n);
	}
	rsp_buf_free(&xml);
}

/* --- saving ------------------------------------------------------------------ */

static int fd_write(void *ctx, const void *data, size_t len)
{
	int fd = *(int *)ctx;
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -errno;
		p += n;
		len -= n;
	}
	return 0;
}

/*
 * qprobe.frames:MAX - the recorder's stream.  Replies `F` followed by up
 * to MAX bytes (escaped binary) of the buffer's byte stream, oldest frame
 * first, and removes every frame sent to its end; a frame larger than one
 * reply continues in the next (stream_off).  `F` alone: nothing yet.  A
 * linear buffer then never fills while the recorder keeps up; frames are
 * never dropped from the head of a linear buffer, so a partly sent frame
 * stays in place.  A circular buffer could drop it: refused.
 */
static void stream_frames(uint64_t max, struct rsp_buf *reply)
{
	/* Escaping may double each byte. */
	const uint64_t limit = (RSP_MAX_PAYLOAD - 16) / 2;
	struct tbuf_frame f;
	uint64_t sent = 0;

	if (!tr.tb_ready) {
		rsp_buf_put_error(reply, "no trace buffer: start a trace run first");
		return;
	}
	if (tr.circular) {
		rsp_buf_put_error(reply, "cannot stream a circular trace buffer");
		return;
	}
	if (max > limit)
		max = limit;
	rsp_buf_putc(reply, 'F');
	while (sent < max && tbuf_frame_get(&tr.tb, 0, &f) == 0) {
		size_t n = f.raw_len - tr.stream_off;

		if (n > max - sent)
			n = (size_t)(max - sent);
		rsp_buf_put_escaped(reply, f.raw + tr.stream_off, n);
		sent += n;
		tr.stream_off += n;
		if (tr.stream_off < f.raw_len)
			break;
		tbuf_consume(&tr.tb, 1);
		tr.stream_off = 0;
		tr.frame_no = -1;	/* numbers shift: back to live */
	}
	/* Room again: the records the pads kept, then the parked threads. */
	if (sent && tr.running && tr.proc && room_for_hit()) {
		trace_drain(true);
		if (tr.proc && room_for_hit())
			inferior_unpark(tr.proc);
	}
}

/*
 * qprobe.lost - the frames of this run (or the last one) that found no
 * room in the buffer: `L<total>` then `;<tp>:<count>` for each tracepoint
 * location that lost any, in hex.  A tracepoint with several locations
 * (a USDT probe inlined in several places) comes once per location.
 */
static void lost_reply(struct rsp_buf *reply)
{
	uint64_t total = 0;

	for (size_t i = 0; i < tp_count(&tr.store); i++)
		total += tp_at(&tr.store, i)->lost;
	rsp_buf_printf(reply, "L%llx", (unsigned long long)total);
	for (size_t i = 0; i < tp_count(&tr.store); i++) {
		struct tp_def *tp = tp_at(&tr.store, i);
		if (tp->lost)
			rsp_buf_printf(reply, ";%x:%llx", tp->number,
				       (unsigned long long)tp->lost);
	}
}

struct salvage {
	uint64_t frames, unmatched;
};

/* One record of a dead agent's pad (pad_salvage): the hit as a recording
 * pad's would have been taken, for the tracepoints defined at its site
 * now.  A site whose tracepoints need more than the registers (memory:
 * its values now are not the hit's) or none at all takes nothing. */
static void salvage_hit(uint64_t site, struct thread *t, pid_t tid,
			uint64_t time_us, void *arg)
{
	struct salvage *sv = arg;
	struct hit h = { .t = t };
	enum pad_collect mode = recordable(site);
	uint64_t before = tr.tb.created;

	if (!tp_next_at(&tr.store, site, NULL) || mode == PAD_STOPS || mode == PAD_IPA ||
	    !(h.regs = regs_block_gpr(t))) {
		sv->unmatched++;
		return;
	}
	if (mode == PAD_REGS_TIME_TID) {
		t->tid = tid;
		h.time_us = time_us;
	}
	run_tracepoints(&h, site, false, NULL);
	sv->frames += tr.tb.created - before;
}

/*
 * qprobe.salvage - a recorder whose agent died: this agent, attached to
 * the program since, with the same tracepoints defined (not started),
 * takes in what the dead agent's pads left in the program's ring, into a
 * buffer the recorder then streams (qprobe.frames).  `S<frames>;<records
 * left out>` in hex; an error when there is no process or a run is on.
 */
static void salvage(struct rsp_buf *reply)
{
	struct process *p = current_process();
	struct salvage sv = { 0, 0 };
	size_t size = tr.buffer_size < 0 ? DEFAULT_BUFFER_SIZE : (size_t)tr.buffer_size;
	char why[256];
	int n;

	if (!p) {
		rsp_buf_put_error(reply, "no process: attach to the program first");
		return;
	}
	if (tr.running) {
		rsp_buf_put_error(reply, "a trace run is going on: stop it first");
		return;
	}
	if (buffer_ready(regs_block_size(p), size, why, sizeof(why)) < 0) {
		rsp_buf_put_error(reply, "%s", why);
		return;
	}
	tr.stop_pending = false;
	n = pad_salvage(p, salvage_hit, &sv);
	if (n < 0) {
		snprintf(why, sizeof(why), "cannot read the pads' records in process %d: %s",
			 p->pid, strerror(-n));
		rsp_buf_put_error(reply, "%s", why);
		return;
	}
	debug("salvage: %d records, %llu frames, %llu left out", n,
	      (unsigned long long)sv.frames, (unsigned long long)sv.unmatched);
	rsp_buf_printf(reply, "S%llx;%llx", (unsigned long long)sv.frames,
		       (unsigned long long)sv.unmatched);
}

static void save_file(const char *path, struct rsp_buf *reply)
{
	struct process *p = current_process();
	unsigned int features = p ? p->features : 0;
	struct tfile_writer w;
	struct tp_status st;
	char xml[32768];
	int fd, err;

	if (!tr.tb_ready) {
		rsp_buf_put_error(reply, "no trace run to save");
		return;
	}
	if (agent.arch->target_xml(features, xml, sizeof(xml)) < 0)
		xml[0] = '\0';
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rsp_buf_put_error(reply, "cannot create %s: %s", path, strerror(errno));
		return;
	}
	fill_status(&st);
	tfile_writer_init(&w, fd_write, &fd);
	err = tfile_write(&w, tr.tb.regblock_size, xml[0] ? xml : NULL, &st,
			  &tr.store, &tr.tb);
	if (close(fd) < 0 && !err)
		err = -errno;
	if (err < 0)
		rsp_buf_put_error(reply, "cannot write %s: %s", path, strerror(-err));
	else
		rsp_buf_puts(reply, "OK");
}

/* --- packets ----------------------------------------------------------------- */

static void reply_store_error(struct rsp_buf *reply, int err)
{
	rsp_buf_put_error(reply, "%s", tr.store.error ? tr.store.error : strerror(-err));
}

/* A definition completed while running: InstallInTrace. */
static void install_now(struct tp_def *tp, struct rsp_buf *reply)
{
	char why[256];

	if (verify(tp, why, sizeof(why)) < 0 || install(tp, why, sizeof(why)) < 0) {
		rsp_buf_put_error(reply, "%s", why);
		return;
	}
	rsp_buf_puts(reply, "OK");
}

void trace_handle(struct rsp_request *req, struct rsp_buf *reply)
{
	struct tp_def *tp = NULL;
	struct tp_status st;
	char why[256];
	int err;

	trace_drain(true);
	switch (req->kind) {
	case RSP_REQ_TINIT:
		stop_run(TP_STOP_COMMAND, 0);
		tr.full_wait = false;
		tr.full_drop = false;
		tr.parked_hits = 0;
		tp_store_clear(&tr.store);
		pending_clear();
		tsv_tag(1);
		if (tr.tb_ready)
			tbuf_clear(&tr.tb);
		tr.stream_off = 0;
		tr.frame_no = -1;
		rsp_buf_puts(reply, "OK");
		break;
	case RSP_REQ_TDP:
		err = tp_define(&tr.store, req, &tp);
		if (err < 0)
			reply_store_error(reply, err);
		else if (err == 0 && tr.running && !req->u.tdp.more)
			install_now(tp, reply);
		else
			rsp_buf_puts(reply, "OK");
		break;
	case RSP_REQ_TDP_ACTIONS:
		err = tp_add_actions(&tr.store, req, &tp);
		if (err < 0)
			reply_store_error(reply, err);
		else if (err == 0 && tr.running && !req->u.tdp_actions.more)
			install_now(tp, reply);
		else
			rsp_buf_puts(reply, "OK");
		break;
	case RSP_REQ_TDP_SRC:
		err = tp_add_source(&tr.store, req);
		if (err < 0)
			reply_store_error(reply, err);
		else
			rsp_buf_puts(reply, "OK");
		break;
	case RSP_REQ_TDV:
		err = tsv_define(&tr.store, req->u.tdv.number, req->u.tdv.initial,
				 req->u.tdv.builtin, req->u.tdv.name);
		if (err < 0) {
			reply_store_error(reply, err);
		} else {
			tsv_tag(req->u.tdv.number);
			rsp_buf_puts(reply, "OK");
		}
		break;
	case RSP_REQ_TRO:
		/* gdb 13 sends link-time addresses here for PIE programs;
		 * read-only memory is found from the mappings instead. */
		rsp_buf_puts(reply, "OK");
		break;
	case RSP_REQ_TDISCONNECTED:
		tr.disconnected = req->u.flag;
		rsp_buf_puts(reply, "OK");
		break;
	case RSP_REQ_TBUFFER_CIRCULAR:
		tr.circular = req->u.flag;
		if (tr.tb_ready && !tr.running)
			tbuf_set_circular(&tr.tb, tr.circular);
		rsp_buf_puts(reply, "OK");
		break;
	case RSP_REQ_TBUFFER_SIZE:
		if (!tr.running)
			tr.buffer_size = req->u.tbuffer_size;
		rsp_buf_puts(reply, "OK");
		break;
	case RSP_REQ_TNOTES:
		if (req->u.tnotes.user)
			set_string(&tr.user, req->u.tnotes.user);
		if (req->u.tnotes.notes)
			set_string(&tr.notes, req->u.tnotes.notes);
		if (req->u.tnotes.tstop)
			set_string(&tr.stop_notes, req->u.tnotes.tstop);
		rsp_buf_puts(reply, "OK");
		break;
	case RSP_REQ_TSTART:
		if (tr.running)
			stop_run(TP_STOP_COMMAND, 0);
		if (start_run(why, sizeof(why)) < 0)
			rsp_buf_put_error(reply, "%s", why);
		else
			rsp_buf_puts(reply, "OK");
		break;
	case RSP_REQ_TSTOP:
		stop_run(TP_STOP_COMMAND, 0);
		rsp_buf_puts(reply, "OK");
		break;
	case RSP_REQ_TENABLE:
	case RSP_REQ_TDISABLE: {
		bool on = req->kind == RSP_REQ_TENABLE;
		err = tp_set_enabled(&tr.store, req->u.tp_ref.number, req->u.tp_ref.addr, on);
		if (err < 0) {
			reply_store_error(reply, err);
			break;
		}
		tp = tp_find(&tr.store, req->u.tp_ref.number, req->u.tp_ref.addr);
		if (on && tr.running && tp)
			install_now(tp, reply);
		else
			rsp_buf_puts(reply, "OK");
		break;
	}
	case RSP_REQ_TSTATUS:
		fill_status(&st);
		tp_status_put_reply(&st, reply);
		break;
	case RSP_REQ_TP_STATUS:
		tp = tp_lookup_qtp(&tr.store, req->u.tp_ref.number, req->u.tp_ref.addr);
		if (!tp)
			rsp_buf_put_error(reply, "no tracepoint %u at 0x%llx",
					  req->u.tp_ref.number,
					  (unsigned long long)req->u.tp_ref.addr);
		else
			tp_put_status(tp, reply);
		break;
	case RSP_REQ_TV: {
		struct tsv_def *v = tsv_find(&tr.store, req->u.tsv_number);
		int64_t value;
		if (tr.frame_no >= 0) {
			if (tbuf_frame_tsv(&tr.tb, &tr.frame, (int32_t)req->u.tsv_number, &value) == 0)
				rsp_buf_printf(reply, "V%llx", (unsigned long long)value);
			else
				rsp_buf_puts(reply, "U");
		} else if (v && (v->value_known || (v->builtin && v->number == 1))) {
			rsp_buf_printf(reply, "V%llx", (unsigned long long)tsv_live_value(v, NULL));
		} else {
			rsp_buf_puts(reply, "U");
		}
		break;
	}
	case RSP_REQ_TP_UPLOAD_FIRST:
		tp_upload_start(&tr.upload, RSP_MAX_PAYLOAD - 16, false);
		/* fall through */
	case RSP_REQ_TP_UPLOAD_NEXT:
		if (tp_upload_next(&tr.store, &tr.upload, reply) == 0)
			rsp_buf_puts(reply, "l");
		break;
	case RSP_REQ_TSV_UPLOAD_FIRST:
		tsv_upload_start(&tr.tsv_upload, RSP_MAX_PAYLOAD - 16, true);
		/* fall through */
	case RSP_REQ_TSV_UPLOAD_NEXT:
		if (tsv_upload_next(&tr.store, &tr.tsv_upload, reply) == 0)
			rsp_buf_puts(reply, "l");
		break;
	case RSP_REQ_TFRAME:
		select_frame(req, reply);
		break;
	case RSP_REQ_TBUFFER_READ:
		if (!tr.tb_ready ||
		    tbuf_reply_raw(&tr.tb, req->u.tbuf_read.offset,
				   req->u.tbuf_read.len > RSP_MAX_PAYLOAD / 2 - 8
					   ? RSP_MAX_PAYLOAD / 2 - 8
					   : req->u.tbuf_read.len,
				   reply) < 0) {
			rsp_buf_reset(reply);
			rsp_buf_puts(reply, "E01");
		}
		break;
	case RSP_REQ_TSAVE:
		save_file(req->u.str, reply);
		break;
	case RSP_REQ_PROBE_FRAMES:
		stream_frames(req->u.stream_max, reply);
		break;
	case RSP_REQ_PROBE_FULL_WAIT:
		tr.full_wait = req->u.flag;
		if (!tr.full_wait && tr.proc)
			inferior_unpark(tr.proc);
		rsp_buf_puts(reply, "OK");
		break;
	case RSP_REQ_PROBE_FULL_DROP:
		tr.full_drop = req->u.flag;
		rsp_buf_puts(reply, "OK");
		break;
	case RSP_REQ_PROBE_LOST:
		lost_reply(reply);
		break;
	case RSP_REQ_PROBE_PENDING:
		if (tr.running) {
			rsp_buf_put_error(reply, "Qprobe.pending: not during a run");
			break;
		}
		if (!tp_find(&tr.store, req->u.pending.number, req->u.pending.addr)) {
			rsp_buf_put_error(reply, "Qprobe.pending: no tracepoint %u at 0x%llx",
					  req->u.pending.number,
					  (unsigned long long)req->u.pending.addr);
			break;
		}
		err = pending_define(req->u.pending.number, req->u.pending.addr,
				     req->u.pending.offset, req->u.pending.sym,
				     req->u.pending.lib, why, sizeof(why));
		if (err < 0)
			rsp_buf_put_error(reply, "%s", err == -ENOMEM ? strerror(ENOMEM) : why);
		else
			rsp_buf_puts(reply, "OK");
		break;
	case RSP_REQ_PROBE_LIBEVENTS:
		pending_events_reply(reply);
		break;
	case RSP_REQ_PROBE_SALVAGE:
		salvage(reply);
		break;
	case RSP_REQ_TMIN_FTPI_LEN:
		/* A fast tracepoint is a jump pad (pad.c), which may cover
		 * several instructions: any length can do, the agent says at
		 * tstart where it cannot.  0 would mean "not yet". */
		rsp_buf_puts(reply, agent.arch->emit_pad_handoff ? "1" : "0");
		break;
	default:
		/* Static tracepoints, markers: not in this build. */
		break;
	}
}
