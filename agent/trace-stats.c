/*
 * trace-stats.c - how the run's probes ran, for qprobe.stats: per probe
 * site its strategy and the hits that stopped the thread, with those
 * that stopped because the pad's ring was full and those that waited
 * for room in the trace buffer; for return probes, the returns the
 * process recorded and those that stopped.
 *
 * The counters live in the probes (struct probe) and the process (struct
 * process), which go away with a removed probe and an exited program,
 * while the recorder asks after the end.  So every probe of the run
 * leaves its counts here as it goes (trace_stats_keep), and a reply adds
 * the kept counts to the live ones, site by site.  A site placed again
 * (a library loaded again at the same address) adds up.  QTStart and
 * QTinit start from nothing.
 */
#define LOG_DOMAIN "tp"
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <libiberty/libiberty.h>

#include "agent/agent.h"
#include "agent/packets.h"
#include "agent/trace.h"

static struct rsp_probe_stat *kept;
static size_t nkept, capkept;
static struct {
	bool any, in_process;
	uint64_t recorded, stopped, ring_full;
	uint64_t recorded_base;	/* the process's count when the run began */
} rets;

/* How a probe's hits run, as qprobe.stats names it. */
static const char *how(const struct probe *pr)
{
	if (pr->pad) {
		switch (pr->pad_collect) {
		case PAD_STOPS:
			/* only a return's push at the entry: no trap there */
			return pr->pad_ret_only ? "pad" : "pad-trap";
		case PAD_IPA:
			return "pad-ipa";
		default:
			return "pad";
		}
	}
	switch (pr->strategy) {
	case ARCH_EMULATE:
		return "emulate";
	case ARCH_BOOST:
		return "boost";
	case ARCH_STEP:
		return "step";
	default:
		return "none";
	}
}

static struct rsp_probe_stat *slot(struct rsp_probe_stat **v, size_t *n,
				   size_t *cap, uint64_t addr)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].addr == addr)
			return &(*v)[i];
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		*v = xrealloc(*v, *cap * sizeof(**v));
	}
	struct rsp_probe_stat *e = &(*v)[(*n)++];
	memset(e, 0, sizeof(*e));
	e->addr = addr;
	return e;
}

static void add(struct rsp_probe_stat *e, const struct probe *pr)
{
	e->how = how(pr);
	/* A stop for a load of the pad that faulted is a stop of a hit the
	 * pad then recorded: in both counts. */
	e->stopped += pr->hits_stopped + probe_fault_stops(pr);
	e->recorded += pr->hits_recorded;
	e->ring_full += pr->hits_ring_full;
	e->waited += pr->hits_waited;
}

void trace_stats_keep(struct probe *pr)
{
	if (pr->owner != PROBE_OWNER_TRACE)
		return;
	add(slot(&kept, &nkept, &capkept, pr->addr), pr);
	pr->hits_stopped = pr->hits_recorded = 0;
	pr->hits_ring_full = pr->hits_waited = pr->hits_faulted = 0;
}

/* The returns' counts of the process, kept as the run or process ends. */
void trace_stats_keep_returns(struct process *p)
{
	uint64_t recorded = pad_ret_recorded(p);

	if (p->ret_area)
		rets.in_process = true;
	if (p->ret_area || p->ret_stopped || p->ret_ring_full)
		rets.any = true;
	rets.recorded += recorded - rets.recorded_base;
	rets.recorded_base = recorded;
	rets.stopped += p->ret_stopped;
	rets.ring_full += p->ret_ring_full;
	p->ret_stopped = p->ret_ring_full = 0;
}

void trace_stats_reset(struct process *p)
{
	nkept = 0;
	memset(&rets, 0, sizeof(rets));
	if (p) {
		rets.recorded_base = pad_ret_recorded(p);
		p->ret_stopped = p->ret_ring_full = 0;
	}
}

void h_probe_stats(struct rsp_request *req, struct rsp_buf *reply)
{
	struct rsp_probe_stats s = { 0 };
	struct rsp_probe_stat *v = NULL;
	size_t n = 0, cap = 0;
	struct process *p = tr.proc && process_find(tr.proc->pid) ? tr.proc : NULL;

	(void)req;	/* no arguments */
	for (size_t i = 0; i < nkept; i++)
		*slot(&v, &n, &cap, kept[i].addr) = kept[i];
	for (struct probe *pr = p ? p->probes : NULL; pr; pr = pr->next)
		if (pr->owner == PROBE_OWNER_TRACE)
			add(slot(&v, &n, &cap, pr->addr), pr);
	s.n = n;
	s.site = v;
	s.returns = rets.any;
	s.ret_in_process = rets.in_process;
	s.ret_recorded = rets.recorded;
	s.ret_stopped = rets.stopped;
	s.ret_ring_full = rets.ring_full;
	if (p && (p->ret_area || p->ret_stopped || p->ret_ring_full)) {
		s.returns = true;
		s.ret_in_process |= p->ret_area != 0;
		s.ret_recorded += pad_ret_recorded(p) - rets.recorded_base;
		s.ret_stopped += p->ret_stopped;
		s.ret_ring_full += p->ret_ring_full;
	}
	rsp_reply_probe_stats(reply, &s);
	free(v);
}
