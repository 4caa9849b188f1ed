/*
 * trace-install.c - putting a run's probes in place.
 *
 * At QTStart (and for a tracepoint defined during a run: InstallInTrace)
 * every expression is verified, then each traced address gets one probe
 * (probe.c), shared by the tracepoints there.  What the probe's jump pad
 * may record without stopping the thread (recordable: registers, the
 * hit's time and thread, or the in-process collector's programs) is
 * decided here from what the tracepoints collect.  Locations in libraries
 * not loaded yet wait in pending.c and are placed from here when the
 * library comes.
 */
#define LOG_DOMAIN "tp"
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <libiberty/libiberty.h>

#include "agent/agent.h"
#include "agent/ipa/ipa-abi.h"
#include "agent/log.h"
#include "agent/pending.h"
#include "agent/trace.h"
#include "protocol/ax.h"
#include "protocol/ax-simple.h"
#include "protocol/tbuf.h"
#include "protocol/tfile.h"
#include "protocol/tp-status.h"
#include "protocol/tracepoint.h"

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

static bool ret_pad_ok(uint64_t addr);

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

/* Bytecode that reads a register the pad's frame does not hold (or
 * cannot be verified: then assume it may). */
static bool reads_beyond_frame(const uint8_t *code, size_t len, unsigned int words)
{
	struct ax_info info;
	char err[128];

	if (ax_verify(code, len, &info, err, sizeof(err)) < 0)
		return true;
	return info.reg_high || (words < 64 && (info.reg_mask >> words) != 0);
}

static bool needs_image(uint64_t addr, bool returns_only)
{
	const struct arch_pad_layout *l = agent.arch->pad_layout;

	if (!l)
		return true;
	for (struct tp_def *tp = tp_next_at(&tr.store, addr, NULL); tp;
	     tp = tp_next_at(&tr.store, addr, tp)) {
		if (returns_only && !ret_is_marked(tp->number))
			continue;
		if (tp->cond && reads_beyond_frame(tp->cond, tp->cond_len, l->frame_words))
			return true;
		for (size_t i = 0; i < tp->n_actions; i++) {
			const struct tp_action *a = &tp->actions[i];
			/* A register block is the whole `g` layout: its
			 * vector part must be the thread's, whatever the
			 * mask. */
			if (a->kind == TP_ACTION_REGS || a->while_stepping)
				return true;
			if (a->kind == TP_ACTION_MEM && a->basereg >= 0 &&
			    (unsigned int)a->basereg >= l->frame_words)
				return true;
			if (a->kind == TP_ACTION_EXPR &&
			    reads_beyond_frame(a->bytes, a->len, l->frame_words))
				return true;
		}
	}
	return false;
}

/* Whether a tracepoint at `addr` reads a register outside a pad's frame:
 * its records need the x87/SSE(/AVX) image. */
bool trace_site_needs_image(uint64_t addr)
{
	return needs_image(addr, false);
}

/* The same for the return probes at `addr` alone: what the return
 * trampoline must store (pad_ret_image). */
bool trace_returns_need_image(uint64_t addr)
{
	return needs_image(addr, true);
}

/*
 * An expression that collects one memory range at a register (of the
 * pad's frame) plus a constant, or at a constant address (gdb's
 * `collect *p`, `collect p->f`), as the range action it amounts to: the
 * collector copies it with no bytecode run.  The record is the same (one
 * memory block of the address and length).
 */
static bool mem_range_of(const uint8_t *code, size_t len, struct ipa_action *ia)
{
	const struct arch_pad_layout *l = agent.arch->pad_layout;
	struct ax_simple_trace t;

	if (ax_simple_trace(code, len, &t) < 0 || t.len == 0 || t.len > UINT32_MAX)
		return false;
	if (t.has_reg && (!l || t.regnum >= l->frame_words))
		return false;
	ia->kind = IPA_ACT_MEM;
	ia->basereg = t.has_reg ? (uint16_t)t.regnum : IPA_NO_REG;
	ia->len = (uint32_t)t.len;
	ia->offset = t.offset;
	return true;
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
			} else if (a->kind == TP_ACTION_EXPR &&
				   mem_range_of(a->bytes, a->len, ia)) {
				k++;	/* run as the range it is: no interpreter */
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
/* Whether `tp` is the only tracepoint at `addr` and its condition one
 * the arch's pads check natively (pad.c's native_cond). */
static bool native_cond_here(uint64_t addr, struct tp_def *tp)
{
	struct ax_simple_cond sc;

	return agent.arch->emit_pad_cond && tp_next_at(&tr.store, addr, NULL) == tp &&
	       !tp_next_at(&tr.store, addr, tp) &&
	       ax_simple_cond(tp->cond, tp->cond_len, &sc) == 0;
}

enum pad_collect recordable(uint64_t addr)
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
			/* A site's one condition that the pad can check
			 * natively (on registers too): a false one then
			 * leaves the pad before anything is saved, where
			 * PAD_REGS would record every hit for the agent to
			 * test. */
			if (native_cond_here(addr, tp) && ipa_site_ok(addr))
				return PAD_IPA;
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
	    (pr->pad_collect < rec || rec == PAD_IPA ||
	     (pr->pad_no_image && trace_site_needs_image(pr->addr)))) {
		/* It records less than the new tracepoint needs (the
		 * registers' image too), or its collector's programs are
		 * those of the site before. */
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
	if (pr->pad && pr->pad_ret && trace_returns_need_image(pr->addr) &&
	    pad_ret_image(pr->proc) < 0) {
		/* A return probe added during the run reads registers
		 * the trampoline's records would leave out. */
		trace_drain(false);
		pad_detach(pr);
		debug("no pad at %#llx any more: cannot turn the return records' image on",
		      (unsigned long long)pr->addr);
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
int trace_install(struct tp_def *only, char *why, size_t whylen)
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
	trace_stats_keep(pr);
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
	trace_hist_fold(p);	/* before its pads go (exec) */
}

void trace_libraries_changed(struct process *p)
{
	if (tr.running && tr.proc == p)
		pending_update(p);
}

/* Every expression is checked before anything runs. */
int trace_verify(struct tp_def *tp, char *why, size_t whylen)
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

/*
 * The trace buffer in transparent huge pages where the kernel has them
 * (its "madvise" or "always" mode): the frames then fault in a page every
 * 2 MiB, not every 4 KiB.  On the machine of bench/README.md the first
 * store into a 4 KiB page of fresh memory cost 22-27 us, into a huge
 * page 0.74 us per 4 KiB of it; past PRETOUCH_MAX (below) every frame
 * of a `collect $regs` run paid its share of that.  Only the whole huge
 * pages inside the buffer can be, and a kernel without them refuses the
 * advice (said in the debug log; the buffer works as well, slower).
 */
#define HUGE_PAGE ((uintptr_t)2 << 20)

static void buffer_advise_huge(void *data, size_t size)
{
	uintptr_t lo = ((uintptr_t)data + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	uintptr_t hi = ((uintptr_t)data + size) & ~(HUGE_PAGE - 1);

	if (hi > lo && madvise((void *)lo, hi - lo, MADV_HUGEPAGE) < 0)
		debug("no huge pages for the trace buffer: %s", strerror(errno));
}

/* The trace buffer, `size` bytes of frames whose register blocks are
 * `regsize` bytes, kept if it is that already. */
int buffer_ready(size_t regsize, size_t size, char *why, size_t whylen)
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
	buffer_advise_huge(tr.tb.data, tr.tb.size);
	return 0;
}

/* The trace buffer's bytes a run touches at its start (see below). */
#define PRETOUCH_MAX (64u << 20)

int trace_start_run(char *why, size_t whylen)
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
		if ((err = trace_verify(tp_at(&tr.store, i), why, whylen)) < 0)
			return err;
	if ((err = trace_hist_apply_marks(why, whylen)) < 0)
		return err;
	if ((err = buffer_ready(regsize, size, why, whylen)) < 0)
		return err;
	tbuf_clear(&tr.tb);
	tr.stream_off = 0;
	tbuf_set_circular(&tr.tb, tr.circular);
	/* Touch the first pages now, not on the first hits; past
	 * PRETOUCH_MAX they come as frames fill them: a buffer of gigabytes
	 * touched here took seconds (gdb's remote timeout is 2) and all of
	 * its memory at once. */
	memset(tr.tb.data, 0, tr.tb.size < PRETOUCH_MAX ? tr.tb.size : PRETOUCH_MAX);
	tp_store_start_run(&tr.store);
	tr.frame_no = -1;
	tr.stop_pending = false;
	tr.error[0] = '\0';
	set_string(&tr.stop_notes, NULL);
	for (struct thread *t = p->threads; t; t = t->next)
		t->ws_left = 0;
	pending_start_run();
	trace_stats_reset(p);
	/* Before the probes: the pads that take returns carry it. */
	tr.run_id++;
	err = trace_install(NULL, why, whylen);
	if (err < 0) {
		remove_probes();
		return err;
	}
	trace_hist_start(p);
	tr.running = tr.ever_run = true;
	tr.start_time = now_usec();
	tr.stop_time = 0;
	return 0;
}

