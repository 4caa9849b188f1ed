/*
 * trace-hist.c - latency histograms kept instead of frames: probe-trace's
 * `FUNC%return hist` (Qprobe.hist, qprobe.hist in doc/protocol.md).
 *
 * A tracepoint location marked with Qprobe.hist records no frame: each
 * hit that passes its condition adds its $probe_latency_ns (0 at an
 * entry) to a log2 histogram, and qprobe.hist answers with it.  A
 * function called every 100 ns then costs its callers the entry pad and
 * the trampoline, and nothing of the drain, the buffer or the file.
 *
 * Two places count.  The agent, for every hit it runs (run_tracepoints:
 * a stop, a pad's record, a ring record of the return trampoline); and,
 * where the arch's trampoline does (arch_ops.ret_hist: x86-64, aarch64,
 * 32-bit ARM), the trampoline itself, in a page of the pads' shared
 * memory (RET_HIST_*): a return
 * whose entry is a placed histogram's adds there and writes no record.
 * A location is placed there at the run's start when its returns can
 * all go that way: the only return tracepoint at its address, with no
 * condition, pass count or stepping (those need the agent).  The answer
 * adds both; the page's counts move into the agent's when the run stops
 * or the process goes (before its pads are freed).  Should the agent
 * die, the page stays in the process with its counts, and the agent the
 * recorder starts to salvage the pads' records takes them back
 * (trace_hist_salvage).
 *
 * gdb has no packet for it: `monitor hist N` marks tracepoint number N
 * (as `monitor return-probe N` does), every location of a marked number
 * keeps a histogram from the next run's start (trace_hist_apply_marks),
 * and `monitor hist` prints them (trace_hist_print), bpftrace's way.
 */
#define LOG_DOMAIN "tp"
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/log.h"
#include "agent/packets.h"
#include "agent/tp-marks.h"
#include "agent/trace.h"
#include "arch/arch.h"
#include "protocol/stats.h"
#include "protocol/tracepoint.h"

#define TRACE_HIST_MAX 64	/* locations with a histogram */

struct trace_hist {
	uint32_t number;
	uint64_t addr;
	uint64_t sum, zero, b[RET_HIST_BUCKETS];
	int slot;		/* its histogram in the traced process's
				   page (RET_HIST_FIRST + slot * SIZE), -1 */
};

static struct trace_hist hists[TRACE_HIST_MAX];
static size_t nhists;
static struct process *placed_in;	/* the process whose page holds slots */

static struct trace_hist *hist_find(uint32_t number, uint64_t addr)
{
	for (size_t i = 0; i < nhists; i++)
		if (hists[i].number == number && hists[i].addr == addr)
			return &hists[i];
	return NULL;
}

static unsigned int bucket_of(uint64_t ns)
{
	unsigned int k = 63u - (unsigned int)__builtin_clzll(ns);

	return k < RET_HIST_BUCKETS ? k : RET_HIST_BUCKETS - 1;
}

bool trace_hist_add(struct tp_def *tp, uint64_t latency_ns)
{
	struct trace_hist *h;

	if (!tp->hist || !(h = hist_find(tp->number, tp->addr)))
		return false;
	h->sum += latency_ns;
	if (latency_ns)
		h->b[bucket_of(latency_ns)]++;
	else
		h->zero++;
	return true;
}

static uint64_t *page_hist(uint8_t *page, int slot)
{
	return (uint64_t *)(page + RET_HIST_FIRST + (size_t)slot * RET_HIST_SIZE);
}

/* Adds a trampoline's histogram (its words `w`, RET_HIST_SUM...; read
 * atomically: the trampoline may be counting) to sum, zero and b. */
static void add_words(const uint64_t *w, uint64_t *sum, uint64_t *zero, uint64_t *b)
{
	*sum += __atomic_load_n(w + RET_HIST_SUM / 8, __ATOMIC_RELAXED);
	*zero += __atomic_load_n(w + RET_HIST_ZERO / 8, __ATOMIC_RELAXED);
	for (unsigned int k = 0; k < RET_HIST_BUCKETS; k++)
		b[k] += __atomic_load_n(w + RET_HIST_B / 8 + k, __ATOMIC_RELAXED);
}

/*
 * The page's counts into the agent's, and the page's histograms out of
 * use: the run stopped, or process `p` goes.  A return the trampoline
 * counts between the read and the reset is lost; none comes once the
 * trampoline's records are off (RET_PAD_ON), as they are then.
 */
void trace_hist_fold(struct process *p)
{
	uint8_t *page;

	if (!p || placed_in != p)
		return;		/* another process (a fork child) */
	if (!(page = pad_ret_hist(p, false))) {
		placed_in = NULL;
		for (size_t i = 0; i < nhists; i++)
			hists[i].slot = -1;
		return;
	}
	__atomic_store_n((uint32_t *)(page + RET_HIST_N), 0, __ATOMIC_RELEASE);
	for (size_t i = 0; i < nhists; i++) {
		struct trace_hist *h = &hists[i];
		if (h->slot < 0)
			continue;
		add_words(page_hist(page, h->slot), &h->sum, &h->zero, h->b);
		h->slot = -1;
	}
	placed_in = NULL;
}

/* Whether the trampoline can take every return of `tp` alone. */
static bool trampoline_can_count(const struct tp_def *tp)
{
	if (!tp->enabled || !ret_is_marked(tp->number) || tp->cond ||
	    tp->pass_count || tp->step_count || pending_find(tp->number, tp->addr))
		return false;
	for (struct tp_def *o = tp_next_at(&tr.store, tp->addr, NULL); o;
	     o = tp_next_at(&tr.store, tp->addr, o))
		if (o != tp && o->enabled && ret_is_marked(o->number))
			return false;
	return true;
}

/*
 * The run starts: every histogram empty, and those the trampoline of
 * process `p` can keep placed in its page (after the probes are in: the
 * page exists once a return probe is).
 */
void trace_hist_start(struct process *p)
{
	uint8_t *page;
	int used = 0;

	for (size_t i = 0; i < nhists; i++) {
		struct trace_hist *h = &hists[i];
		h->sum = h->zero = 0;
		memset(h->b, 0, sizeof(h->b));
		h->slot = -1;
	}
	placed_in = NULL;
	if (!p || !(page = pad_ret_hist(p, true)))
		return;
	__atomic_store_n((uint32_t *)(page + RET_HIST_N), 0, __ATOMIC_RELEASE);
	for (size_t i = 0; i < nhists && used < RET_HIST_MAX; i++) {
		struct trace_hist *h = &hists[i];
		struct tp_def *tp = tp_find(&tr.store, h->number, h->addr);
		if (!tp || !trampoline_can_count(tp))
			continue;
		uint64_t *w = page_hist(page, used);
		memset(w, 0, RET_HIST_SIZE);
		/* The entry pads' word for it (pad.c's func_run). */
		w[RET_HIST_FUNC / 8] = tp->addr | (uint64_t)(trace_run_id() & 0xffff) << 48;
		h->slot = used++;
		debug("tracepoint %u at %#" PRIx64 ": its returns counted by the trampoline",
		      h->number, h->addr);
	}
	placed_in = p;
	__atomic_store_n((uint32_t *)(page + RET_HIST_N), (uint32_t)used, __ATOMIC_RELEASE);
}

/* QTinit: no histograms. */
void trace_hist_clear(void)
{
	nhists = 0;
	placed_in = NULL;
}

/* --- monitor hist ------------------------------------------------------------ */

static struct tp_marks hist_marks;	/* monitor hist's */

int trace_hist_mark(uint32_t number, bool on)
{
	return tp_marks_set(&hist_marks, number, on);
}

void trace_hist_marks_clear(void)
{
	tp_marks_clear(&hist_marks);
}

/*
 * The run starts: each location of a marked number keeps a histogram,
 * as Qprobe.hist makes it.  -ENOSPC with `why` when there are more than
 * TRACE_HIST_MAX such locations.
 */
int trace_hist_apply_marks(char *why, size_t whylen)
{
	for (size_t i = 0; i < tp_count(&tr.store); i++) {
		struct tp_def *tp = tp_at(&tr.store, i);
		if (!tp_marks_has(&hist_marks, tp->number))
			continue;
		if (!hist_find(tp->number, tp->addr)) {
			if (nhists == TRACE_HIST_MAX) {
				snprintf(why, whylen, "monitor hist: at most %d locations keep a "
					 "histogram", TRACE_HIST_MAX);
				return -ENOSPC;
			}
			hists[nhists++] = (struct trace_hist){ .number = tp->number,
							       .addr = tp->addr, .slot = -1 };
		}
		tp->hist = true;
	}
	return 0;
}

/* A histogram's counts, the trampoline's page's added (count = zero + the
 * buckets'). */
static uint64_t hist_counts(const struct trace_hist *h, uint64_t *sum, uint64_t *zero,
			    uint64_t *b)
{
	uint8_t *page;
	uint64_t count;

	*sum = h->sum;
	*zero = h->zero;
	memcpy(b, h->b, sizeof(h->b));
	if (h->slot >= 0 && placed_in && (page = pad_ret_hist(placed_in, false)))
		add_words(page_hist(page, h->slot), sum, zero, b);
	count = *zero;
	for (int k = 0; k < RET_HIST_BUCKETS; k++)
		count += b[k];
	return count;
}

/*
 * monitor hist: each histogram (its count, average and buckets, as
 * probe-trace prints them) through `say`, one call per tracepoint
 * location; the marked numbers without one yet.  Returns how many it
 * said.
 */
int trace_hist_print(void (*say)(const char *text))
{
	int said = 0;

	for (size_t i = 0; i < nhists; i++) {
		const struct trace_hist *h = &hists[i];
		struct tp_def *tp = tp_find(&tr.store, h->number, h->addr);
		uint64_t sum, zero, b[RET_HIST_BUCKETS];
		uint64_t count = hist_counts(h, &sum, &zero, b);
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		if (!f)
			return said;
		fprintf(f, "Tracepoint %u at 0x%" PRIx64 "%s: %" PRIu64 " hits", h->number,
			h->addr, tp && ret_is_marked(tp->number) ? " (its returns, ns from the "
			"entry)" : " (not a return probe: every latency 0)", count);
		if (count) {
			struct log2_hist lh = { .zero = zero, .n = count };
			for (int k = 0; k < RET_HIST_BUCKETS; k++)
				lh.b[k] = b[k];
			fprintf(f, ", average %" PRIu64 " ns\n", sum / count);
			log2_hist_print(f, &lh, 2);
		} else {
			fprintf(f, "\n");
		}
		if (fclose(f) == 0 && text)
			say(text);
		free(text);
		said++;
	}
	for (uint32_t n = 1; n <= TP_MARK_MAX; n++) {
		bool have = false;
		if (!tp_marks_has(&hist_marks, n))
			continue;
		for (size_t i = 0; i < nhists && !have; i++)
			have = hists[i].number == n;
		if (have)
			continue;
		char line[160];
		snprintf(line, sizeof(line), "Tracepoint %u keeps a histogram from the next "
			 "tstart.\n", n);
		say(line);
		said++;
	}
	return said;
}

/* Qprobe.hist:n:addr */
void h_probe_hist_set(struct rsp_request *req, struct rsp_buf *reply)
{
	uint32_t n = req->u.tp_ref.number;
	uint64_t addr = req->u.tp_ref.addr;
	struct tp_def *tp;

	if (tr.running) {
		rsp_reply_error(reply, "Qprobe.hist: not during a run");
		return;
	}
	if (!(tp = tp_find(&tr.store, n, addr))) {
		rsp_reply_error(reply, "Qprobe.hist: no tracepoint %u at 0x%" PRIx64, n, addr);
		return;
	}
	if (!hist_find(n, addr)) {
		if (nhists == TRACE_HIST_MAX) {
			rsp_reply_error(reply, "Qprobe.hist: at most %d histograms",
					TRACE_HIST_MAX);
			return;
		}
		hists[nhists++] = (struct trace_hist){ .number = n, .addr = addr, .slot = -1 };
	}
	tp->hist = true;
	rsp_reply_ok(reply);
}

/* qprobe.hist:n:addr - `H<count>;<sum>;<zero>;<b0>,<b1>...` (hex, the
 * buckets up to the last non-empty one). */
void h_probe_hist(struct rsp_request *req, struct rsp_buf *reply)
{
	struct trace_hist *h = hist_find(req->u.tp_ref.number, req->u.tp_ref.addr);
	uint64_t sum, zero, b[RET_HIST_BUCKETS], count;
	int last = -1;

	if (!h) {
		rsp_reply_error(reply, "qprobe.hist: no histogram for tracepoint %u at 0x%" PRIx64,
				req->u.tp_ref.number, req->u.tp_ref.addr);
		return;
	}
	count = hist_counts(h, &sum, &zero, b);
	for (int k = 0; k < RET_HIST_BUCKETS; k++)
		if (b[k])
			last = k;
	rsp_buf_printf(reply, "H%" PRIx64 ";%" PRIx64 ";%" PRIx64 ";", count, sum, zero);
	for (int k = 0; k <= last; k++)
		rsp_buf_printf(reply, k ? ",%" PRIx64 : "%" PRIx64, b[k]);
}

static void salvage_one(uint64_t addr, const uint64_t *w, void *arg)
{
	struct trace_hist *h = NULL;

	(void)arg;
	/* The page names the location, not the tracepoint: a placed
	 * histogram is the only return tracepoint at its address. */
	for (size_t i = 0; i < nhists && !h; i++)
		if (hists[i].addr == addr)
			h = &hists[i];
	if (h)
		add_words(w, &h->sum, &h->zero, h->b);
	else
		debug("salvage: a histogram at %#" PRIx64 " no tracepoint keeps now", addr);
}

/*
 * qprobe.salvage: the histograms a dead agent had the trampoline of
 * process `p` keep (pad_salvage_hist), added to this agent's of the
 * same locations (Qprobe.hist, as the recorder defined them again), for
 * qprobe.hist to give.  Returns how many, or -errno.
 */
int trace_hist_salvage(struct process *p)
{
	return pad_salvage_hist(p, salvage_one, NULL);
}
