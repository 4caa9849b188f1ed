/*
 * trace-run.c - a trace run and its hits.
 *
 * gdb defines tracepoints (QTDP, QTDPsrc, QTDV) into the store
 * (protocol/tracepoint.c); QTStart verifies every expression and puts one
 * probe (probe.c) at each traced address (trace-install.c).  A hit never
 * waits for gdb: the probe's callback evaluates each enabled tracepoint's
 * condition, collects a frame into the trace buffer (protocol/tbuf.c,
 * gdb's trace-file frame layout) and the thread runs on.  A run ends on
 * QTStop, a pass count, a full buffer, an evaluation error or a
 * disconnect; the probes then go, and the frames stay for tfind, tdump,
 * tsave (trace-frames.c, trace-packets.c).
 *
 * Invariants:
 * - Probes are taken out only outside a hit: a stop decided during a hit
 *   (pass count, full buffer, error) is applied when the hit is over.
 * - A frame is stored whole or not at all: a hit that does not fit in a
 *   linear buffer stops the run and leaves no partial frame; memory that
 *   cannot be read is left out of the frame, so gdb shows it unavailable.
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
#include <libiberty/libiberty.h>

#include "agent/agent.h"
#include "agent/ipa/ipa-abi.h"
#include "agent/log.h"
#include "agent/pending.h"
#include "agent/regblock.h"
#include "agent/trace.h"
#include "protocol/ax.h"
#include "protocol/ax-plan.h"
#include "protocol/tbuf.h"
#include "protocol/tfile.h"
#include "protocol/tp-status.h"
#include "protocol/tracepoint.h"

struct trace tr = { .frame_no = -1, .buffer_size = -1 };

/* Scratch for one memory collection (64 KiB pieces). */
uint8_t collect_buf[COLLECT_CHUNK];

uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}



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

void remove_probes(void)
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
		if (pr->owner == PROBE_OWNER_TRACE) {
			trace_stats_keep(pr);
			probe_remove(pr);
		}
	}
	trace_stats_keep_returns(p);
	trace_hist_fold(p);
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

void trace_stop_run(enum tp_stop_reason reason, uint32_t tp)
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
	trace_stop_run(tr.pending_reason, tr.pending_tp);
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
			if (pr->owner == PROBE_OWNER_TRACE) {
				trace_stats_keep(pr);
				pr->owner = PROBE_OWNER_NONE;
			}
		trace_stats_keep_returns(p);
		trace_hist_fold(p);
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
	trace_stop_run(TP_STOP_DISCONNECTED, 0);
	return false;
}

/* --- collection ------------------------------------------------------------ */

static int ctx_read_reg(const struct ax_ctx *ctx, unsigned regnum, uint64_t *value)
{
	const struct hit *h = ctx->opaque;

	return regsrc_read(h->src, regnum, value);
}

static long ctx_read_mem(const struct ax_ctx *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct hit *h = ctx->opaque;
	return (long)mem_read(h->src->proc, addr, buf, len);
}

/*
 * Variables read when used: the builtin $trace_timestamp (microseconds),
 * and, during a hit, the ones a client defines by name: $probe_thread (the
 * hitting thread's id) and $probe_latency_ns (a return probe's time from
 * entry to return, 0 for other hits).  Outside a hit those two hold their
 * stored value.  The name is looked at once, when the variable is defined
 * (tsv_tag): the hit path tests a tag.
 */

void tsv_tag(uint32_t number)
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

int64_t tsv_live_value(const struct tsv_def *v, const struct hit *h)
{
	switch (v->live) {
	case TSV_TIMESTAMP:
		return h && h->time_us ? (int64_t)h->time_us : (int64_t)now_usec();
	case TSV_THREAD:
		return h ? h->src->tid : v->value;
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
		ssize_t n = mem_read(h->src->proc, addr, collect_buf, want);
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

/*
 * The frame of a tracepoint whose one action is a plan (ax-plan.h:
 * probe-trace's values: `tracev` and `reg; setv; pop`) and that collects
 * nothing else, built straight into the buffer: one reservation for its
 * `V` blocks, the registers read from the hit's block, the variables
 * looked up beforehand (plan_resolve), no interpreter callbacks.
 * Millions of frames a second go this way when a recording's pads and
 * return trampoline are busy (bench/ret-real.sh's python3 case).  The
 * same frame and variable values as the callbacks' path (but for a frame
 * that finds no room: it is lost before its `setv`s, which keep the
 * variables as they were); anything it cannot vouch for beforehand (a
 * register or variable that does not exist, a stopped thread's registers
 * not all fetched) makes collect_frame take the long way, which reports
 * it.
 */
#define PLAN_TSVS_MAX 64

/* A plan's steps made ready to run: each one's variable, and where its
 * register is in a register block (a 64-bit one: read in place). */
struct plan_ready {
	const struct ax_plan *plan;
	size_t ntrace;			/* the `tracev` steps */
	struct tsv_def *v[PLAN_TSVS_MAX];
	uint32_t reg_off[PLAN_TSVS_MAX];	/* UINT32_MAX: not 64 bits */
};

/* Fills `r` for `plan`: false when a variable or register is missing (or
 * the plan is too long), the long way's cases. */
static bool plan_resolve(const struct ax_plan *plan, const struct arch_ops *arch,
			 unsigned int features, struct plan_ready *r)
{
	unsigned int nregs = arch->nregs_for(features);

	if (plan->nsteps > PLAN_TSVS_MAX)
		return false;
	r->plan = plan;
	r->ntrace = plan->nsteps - plan->nregs;
	for (size_t i = 0; i < plan->nsteps; i++) {
		const struct ax_plan_step *s = &plan->step[i];
		/* `reg; setv N; pop; tracev N`: the variable just set */
		if (i && s->kind == AXP_TRACEV && plan->step[i - 1].kind == AXP_SETV_REG &&
		    plan->step[i - 1].tsv == s->tsv)
			r->v[i] = r->v[i - 1];
		else if (!(r->v[i] = tsv_find(&tr.store, s->tsv)))
			return false;
		r->reg_off[i] = UINT32_MAX;
		if (s->kind != AXP_SETV_REG)
			continue;
		if (s->reg >= nregs || arch->regs[s->reg].bitsize > 64)
			return false;
		if (arch->regs[s->reg].bitsize == 64)
			r->reg_off[i] = arch->regs[s->reg].offset;
	}
	return true;
}

/* The frame of hit `h` by the ready plan `r`.  0 or -errno. */
static int plan_write(struct hit *h, const struct plan_ready *r)
{
	const struct ax_plan *plan = r->plan;
	const struct regsrc *src = h->src;
	uint8_t *p;
	int err;

	if ((err = tbuf_frame_begin(&tr.tb, (int16_t)h->tp->number)) < 0)
		return err;
	if ((err = tbuf_frame_reserve(&tr.tb, r->ntrace * TBUF_TSV_BLOCK, &p)) < 0)
		return err;	/* the frame is aborted already */
	for (size_t i = 0; i < plan->nsteps; i++) {
		const struct ax_plan_step *s = &plan->step[i];
		if (s->kind == AXP_SETV_REG) {
			uint64_t v;
			if (r->reg_off[i] != UINT32_MAX)
				memcpy(&v, src->blk + r->reg_off[i], 8);
			else
				v = regblock_get(src->arch, src->blk, s->reg);
			r->v[i]->value = (int64_t)v;
			r->v[i]->value_known = true;
			continue;
		}
		int32_t num = (int32_t)s->tsv;
		int64_t value = tsv_live_value(r->v[i], h);
		p[0] = 'V';
		memcpy(p + 1, &num, 4);
		memcpy(p + 5, &value, 8);
		p += TBUF_TSV_BLOCK;
	}
	size_t size;
	if ((err = tbuf_frame_commit(&tr.tb, &size)) < 0)
		return err;
	h->tp->bytes_used += size;
	return 0;
}

static int plan_frame(struct hit *h, const struct ax_plan *plan)
{
	struct plan_ready r;

	if (!h->src->complete ||
	    !plan_resolve(plan, h->src->arch, h->src->features, &r))
		return -EAGAIN;
	return plan_write(h, &r);
}

/* One frame for tracepoint `tp`: its collect actions, or its
 * while-stepping actions.  Returns 0, or -errno when the run must stop. */
static int collect_frame(struct hit *h, bool stepping)
{
	struct tp_def *tp = h->tp;
	struct ax_ctx ctx;
	const uint8_t *blk;
	bool want_regs = false;
	size_t size;
	int err;

	if (!stepping && tp->n_actions == 1 && !tp->actions[0].while_stepping &&
	    tp->actions[0].kind == TP_ACTION_EXPR && tp->actions[0].plan &&
	    (err = plan_frame(h, tp->actions[0].plan)) != -EAGAIN)
		return err;
	hit_ctx(h, &ctx);
	for (size_t i = 0; i < tp->n_actions; i++)
		if (tp->actions[i].while_stepping == stepping &&
		    tp->actions[i].kind == TP_ACTION_REGS)
			want_regs = true;
	err = tbuf_frame_begin(&tr.tb, (int16_t)tp->number);
	if (err < 0)
		return err;
	if (want_regs && (!(blk = regsrc_block(h->src)) ||
			  (err = tbuf_add_regs(&tr.tb, blk)) < 0)) {
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
			if ((a->plan ? ax_plan_run(a->plan, a->bytes, a->len, &ctx, &res)
				     : ax_eval(a->bytes, a->len, &ctx, &res)) < 0) {
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

bool room_for_hit(void)
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
bool site_runs(const struct tp_def *tp, const struct pending *pl)
{
	if (pl)
		return tp->number == pl->number;
	return !pending_any() || !pending_find(tp->number, tp->addr);
}

/* One hit of the enabled tracepoints at `addr` (return probes only or
 * none of them), those of pending location `pl` if not NULL: condition,
 * frame, counts. */
void run_tracepoints(struct hit *h, uint64_t addr, bool returning,
			    const struct pending *pl)
{
	struct thread *t = h->src->t;	/* NULL: a record */

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
		if (tp->hist && trace_hist_add(tp, h->latency_ns)) {
			tp->hit_count++;
			if (tp_pass_reached(tp))
				stop_later(TP_STOP_PASSCOUNT, tp->number);
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
		if (tp->step_count && t && !t->ws_left) {
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

/*
 * What a pad's record at a site runs, worked out once per site: records
 * come by the million, and most sites run one tracepoint whose one
 * action is a plan.  An entry holds while the definitions, the pending
 * locations' placements and the process's register set are those it was
 * worked out for (their generations); anything else (several
 * tracepoints, a condition, a stop decided) takes run_site's way.
 */
#define SITE_CACHE 64	/* a power of two */

struct site_plan {
	uint64_t addr;
	bool returning, valid;
	uint64_t store_gen, pending_gen;
	unsigned int features;
	struct tp_def *tp;		/* NULL: run_site's way */
	struct plan_ready ready;
};

static struct site_plan site_cache[SITE_CACHE];

/* The one tracepoint a hit at `addr` runs (as run_site would), or NULL
 * when it runs none or several. */
static struct tp_def *site_single(uint64_t addr, bool returning)
{
	struct tp_def *one = NULL;
	const struct pending *pl = NULL;

	do {
		uint64_t at = pl ? pl->key : addr;
		for (struct tp_def *tp = tp_next_at(&tr.store, at, NULL); tp;
		     tp = tp_next_at(&tr.store, at, tp)) {
			if (!site_runs(tp, pl) || !tp->enabled ||
			    ret_is_marked(tp->number) != returning)
				continue;
			if (one)
				return NULL;
			one = tp;
		}
	} while ((pl = pending_next_at(addr, pl)));
	return one;
}

static void site_plan_build(struct site_plan *c, uint64_t addr, bool returning,
			    const struct regsrc *src)
{
	struct tp_def *tp = site_single(addr, returning);

	c->addr = addr;
	c->returning = returning;
	c->store_gen = tr.store.gen;
	c->pending_gen = pending_gen();
	c->features = src->features;
	c->valid = true;
	c->tp = NULL;
	if (tp && !tp->cond && tp->n_actions == 1 && !tp->actions[0].while_stepping &&
	    tp->actions[0].kind == TP_ACTION_EXPR && tp->actions[0].plan &&
	    plan_resolve(tp->actions[0].plan, src->arch, src->features, &c->ready))
		c->tp = tp;
}

/* A pad's record at `addr` by its site's plan.  False: not a site of
 * that kind (or not now), for run_site. */
static bool run_site_planned(struct hit *h, uint64_t addr, bool returning)
{
	struct site_plan *c = &site_cache[((addr >> 2) ^ (addr >> 12) ^ returning) &
					  (SITE_CACHE - 1)];

	if (tr.stop_pending || !h->src->complete)
		return false;
	if (!c->valid || c->addr != addr || c->returning != returning ||
	    c->store_gen != tr.store.gen || c->pending_gen != pending_gen() ||
	    c->features != h->src->features)
		site_plan_build(c, addr, returning, h->src);
	struct tp_def *tp = c->tp;
	if (!tp)
		return false;
	h->tp = tp;
	int err = plan_write(h, &c->ready);
	if (err < 0) {
		if (!tr.stop_pending)
			collection_failed(tp, err);
		return true;
	}
	tp->hit_count++;
	if (tp_pass_reached(tp))
		stop_later(TP_STOP_PASSCOUNT, tp->number);
	return true;
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
int trace_hit(struct probe *pr, struct thread *t, void *arg)
{
	struct regsrc src;
	struct hit h = { .src = &src };

	/* Hits the pads recorded come first (a full ring sends a hit here). */
	trace_drain(false);
	/* A recording pad traps only when its ring is full, or (a return
	 * probe's entry) when it could not push the return: that one is
	 * not pushed in the process. */
	if (tr.running && pr->pad && pr->pad_collect != PAD_STOPS &&
	    (!pr->pad_ret || ret_pushed_in_pad_peek(t, pr->addr)))
		pr->hits_ring_full++;
	if (tr.running && !room_for_hit()) {
		tr.parked_hits++;
		pr->hits_waited++;
		return PROBE_HIT_WAIT;
	}
	if (!tr.running || regsrc_thread(&src, t) < 0)
		return 0;
	/* The ordinary tracepoints here first: their frames hold the
	 * return address the program put there, not the trampoline's
	 * (aarch64: x30 in $regs). */
	run_site(&h, pr->addr, false);
	struct tp_def *tp = site_return(pr->addr);
	if (tp && pr->pad_ret && ret_pushed_in_pad(t, pr->addr)) {
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
	const uint8_t *blk = NULL;
	if ((g->flags & IPA_PROG_REGS) &&
	    (!(blk = regsrc_block(h->src)) || (err = tbuf_add_regs(&tr.tb, blk)) < 0)) {
		if (!blk)
			err = -ESRCH;
		goto fail;
	}
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
				value = h->src->tid;
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

/* One hit a jump pad recorded in the process (pad_drain): `src` its
 * registers (no thread behind them), with the in-process collector's
 * groups in `blocks` (PAD_IPA), else to be run here on the registers.
 * False: no room for it yet (wait-for-room mode), the record stays in
 * the ring. */
static bool drain_hit(struct probe *pr, struct regsrc *src, uint64_t time_us,
		      const void *blocks, void *arg)
{
	struct hit h = { .src = src, .time_us = time_us };

	trace_fwrite_flush_some();
	if (tr.running && !room_for_hit())
		return false;
	if (!tr.running || pr->owner != PROBE_OWNER_TRACE)
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
	if (!run_site_planned(&h, pr->addr, false))
		run_site(&h, pr->addr, false);
	return true;
}

/*
 * Takes in the hits the jump pads of the traced process collected on
 * their own.  `may_stop`: the caller is at the top of the loop, where a
 * stop they cause (buffer full) can run at once.  Returns how many
 * records it took.
 */
int trace_drain(bool may_stop)
{
	static bool busy;
	int n;

	if (busy || !tr.proc || !tr.proc->pads)
		return 0;
	busy = true;
	n = pad_drain(tr.proc, drain_hit, NULL);
	busy = false;
	if (may_stop)
		trace_after_hit();
	return n;
}


uint32_t trace_run_id(void)
{
	return tr.run_id;
}

bool trace_drain_return(struct regsrc *src, uint64_t func, uint32_t run16,
			uint64_t latency_ns, uint64_t time_us)
{
	struct hit h = { .src = src, .latency_ns = latency_ns, .time_us = time_us };

	if (tr.running && !room_for_hit())
		return false;
	if (!tr.running || run16 != (tr.run_id & 0xffff))
		return true;
	if (!run_site_planned(&h, func, true))
		run_site(&h, func, true);
	return true;
}

void trace_return(struct thread *t, uint64_t func, uint32_t run,
		  uint64_t latency_ns, uint64_t time_us)
{
	struct regsrc src;
	struct hit h = { .src = &src, .latency_ns = latency_ns, .time_us = time_us };

	if (!tr.running || run != tr.run_id || regsrc_thread(&src, t) < 0)
		return;
	run_site(&h, func, true);
}



/* A thread doing while-stepping finished one more instruction. */
void trace_step_frame(struct thread *t)
{
	struct tp_def *tp = tp_find(&tr.store, t->ws_number, t->ws_addr);
	struct regsrc src;
	struct hit h = { .src = &src, .tp = tp };

	if (t->ws_left)
		t->ws_left--;
	if (!tr.running || !tp || regsrc_thread(&src, t) < 0) {
		t->ws_left = 0;
		return;
	}
	int err = collect_frame(&h, true);
	if (err < 0 && !tr.stop_pending)
		collection_failed(tp, err);
	if (tr.stop_pending)
		t->ws_left = 0;
}

