/*
 * record-define.c - the resolved probes as the agent's tracepoints.
 *
 * Each site of a probe becomes one tracepoint location, defined with the
 * packets gdb uses (QTDP for the location and its condition, QTDP:- for
 * the actions, QTDPsrc for their source text, QTDV for the trace state
 * variables) and mirrored in a local tp_store, from which record-file.c
 * writes the trace file's header, so that gdb (`target tfile`) and dump
 * see the same tracepoints the agent ran.  Every frame collects the
 * timestamp and the thread; arguments, return values, memory ranges,
 * registers and typed values are compiled to agent expressions here.
 * A `hist` probe's locations have a condition and no actions, and the
 * agent is asked to add their latencies to a histogram (record-hist.c).
 * define_all also sizes the buffer and says what a full one does
 * (--on-full); semaphores raises and lowers USDT semaphores around the
 * run.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/dwarfval.h"
#include "client/recorder.h"
#include "client/rsp-client.h"
#include "client/sdt.h"
#include "client/spec.h"
#include "client/target.h"
#include "client/typed.h"
#include "protocol/ax-emit.h"
#include "protocol/rsp-request.h"
#include "protocol/tracepoint.h"

struct arg_ctx {
	struct recorder *r;
	struct probe *p;
	const struct site *site;
};

static int emit_arg(void *ctx, unsigned int n, struct ax_emit *e, char *err,
		    size_t errsize)
{
	struct arg_ctx *a = ctx;
	const struct sdt_probe *sp = a->site ? a->site->sdt : NULL;

	if (sp) {
		if (n >= sp->nargs) {
			snprintf(err, errsize, "arg%u: USDT probe %s:%s has %zu argument%s",
				 n, sp->provider, sp->name, sp->nargs,
				 sp->nargs == 1 ? "" : "s");
			return -EINVAL;
		}
		int e2 = sdt_arg_emit(&sp->args[n], e, a->p->mod->bias);
		if (e2 < 0) {
			snprintf(err, errsize, "arg%u of %s:%s ('%s'): %s", n,
				 sp->provider, sp->name, sp->args_text,
				 e2 == -ENOENT ? "its symbol is not in the file"
					       : "cannot be read");
			return e2;
		}
		return 0;
	}
	const struct arch_ops *ta = a->r->tarch;
	int reg = target_abi_arg_regnum(&a->r->regs, ta, n);
	if (reg == -ERANGE) {
		snprintf(err, errsize, "arg%u: the %s ABI passes fewer arguments "
			 "in registers", n, a->r->regs.arch);
		return -EINVAL;
	}
	if (reg < 0) {
		snprintf(err, errsize, "no register %s",
			 ta->regs[ta->arg_regs[n]].name);
		return -EINVAL;
	}
	ax_emit_reg(e, (unsigned int)reg);
	return 0;
}

static int regnum_of(void *ctx, const char *name)
{
	struct arg_ctx *a = ctx;

	return target_regnum(&a->r->regs, name);
}

/* Sends one QTDP-family packet and mirrors it in the local store (for the
 * file's header). */
static int define(struct recorder *r, const char *what, const char *packet)
{
	int e = request_ok(r, what, "%s", packet);

	if (e < 0)
		return e;
	size_t len = strlen(packet);
	char *copy = strdup(packet);
	struct tp_def *tp;
	rsp_parse(copy, len, r->req);
	switch (r->req->kind) {
	case RSP_REQ_TDP:
		e = tp_define(&r->store, r->req, &tp);
		break;
	case RSP_REQ_TDP_ACTIONS:
		e = tp_add_actions(&r->store, r->req, &tp);
		break;
	case RSP_REQ_TDP_SRC:
		e = tp_add_source(&r->store, r->req);
		break;
	case RSP_REQ_TDV:
		e = tsv_define(&r->store, r->req->u.tdv.number,
			       r->req->u.tdv.initial, r->req->u.tdv.builtin,
			       r->req->u.tdv.name);
		break;
	default:
		e = -EINVAL;
	}
	free(copy);
	if (e < 0)
		err_msg("%s: %s", what, r->store.error);
	return e < 0 ? e : 0;
}

static int define_source(struct recorder *r, struct probe *p, uint64_t addr,
			 const char *type, const char *text)
{
	struct rsp_buf pkt;
	int e;

	rsp_buf_init(&pkt);
	rsp_buf_printf(&pkt, "QTDPsrc:%x:%llx:%s:0:%zx:", p->tpnum,
		       (unsigned long long)addr, type, strlen(text));
	rsp_buf_put_hex(&pkt, text, strlen(text));
	rsp_buf_putc(&pkt, '\0');
	e = define(r, "defining a tracepoint's source", pkt.data);
	rsp_buf_free(&pkt);
	return e;
}

static int define_tsv(struct recorder *r, int num, const char *name)
{
	struct rsp_buf pkt;
	int e;

	rsp_buf_init(&pkt);
	rsp_buf_printf(&pkt, "QTDV:%x:0:0:", num);
	rsp_buf_put_hex(&pkt, name, strlen(name));
	rsp_buf_putc(&pkt, '\0');
	e = define(r, "defining a trace state variable", pkt.data);
	rsp_buf_free(&pkt);
	return e;
}

/* Appends "X<len>,<hex>" for the code in e. */
static void put_x(struct rsp_buf *b, const struct ax_emit *e)
{
	rsp_buf_putc(b, 'X');
	ax_emit_put_hex(e, b);
}

/* value on the stack -> TSV `num`, recorded in the frame */
static void emit_store_tsv(struct ax_emit *e, unsigned int num)
{
	ax_emit_op16(e, AX_OP_SETV, num);
	ax_emit_op(e, AX_OP_POP);
	ax_emit_op16(e, AX_OP_TRACEV, num);
}

static int define_line(void *ctx, const char *text)
{
	void **a = ctx;

	return define_source(a[0], a[1], ((const struct site *)a[2])->addr, "cmd",
			     text);
}

/* The location's QTDP, with the probe's condition (its code in `e`,
 * which is left empty). */
static int define_location(struct recorder *r, struct probe *p,
			   const struct site *site, struct spec_compile *comp,
			   struct ax_emit *e, struct rsp_buf *pkt)
{
	char err[512];

	rsp_buf_printf(pkt, "QTDP:%x:%llx:E:0:0", p->tpnum,
		       (unsigned long long)site->addr);
	if (p->spec.cond) {
		if (spec_compile_expr(p->spec.cond, comp, e, err, sizeof(err)) < 0) {
			err_msg("%s: condition: %s", p->name, err);
			return -EINVAL;
		}
		ax_emit_op(e, AX_OP_END);
		rsp_buf_putc(pkt, ':');
		put_x(pkt, e);
		ax_emit_free(e);
		ax_emit_init(e);
	}
	/* A histogram probe has no actions: its hits make no frame. */
	if (!p->spec.hist)
		rsp_buf_puts(pkt, "-");
	return define(r, p->name, pkt->data);
}

/* The values every frame of the probe holds in trace state variables:
 * timestamp, thread, latency, raw arguments, return value, as code in
 * `e` and as source text in `src`.  Sets *regs when `regs` is asked. */
static int collect_values(struct probe *p, struct arg_ctx *actx,
			  const struct spec_compile *comp, struct ax_emit *e,
			  struct rsp_buf *src, bool *regs)
{
	char err[512];

	rsp_buf_puts(src, "collect $trace_timestamp, $probe_thread");
	ax_emit_op16(e, AX_OP_TRACEV, TSV_TIMESTAMP);
	ax_emit_op16(e, AX_OP_TRACEV, TSV_THREAD);
	if (p->spec.ret) {
		ax_emit_op16(e, AX_OP_TRACEV, TSV_LATENCY);
		rsp_buf_puts(src, ", $probe_latency_ns");
	}
	for (size_t i = 0; i < p->spec.nitems; i++) {
		struct spec_item *it = &p->spec.items[i];
		switch (it->what) {
		case SPEC_REGS:
			*regs = true;
			break;
		case SPEC_ARGS:
			if (!it->count && p->typed_args)
				break;	/* typed: below */
			if ((int)it->count > p->nargs) {
				err_msg("%s: args=%u but the probe has %d argument%s",
					p->name, it->count, p->nargs,
					p->nargs == 1 ? "" : "s");
				return -EINVAL;
			}
			for (int a = 0; a < (it->count ? (int)it->count : p->nargs); a++) {
				if (emit_arg(actx, (unsigned int)a, e, err, sizeof(err)) < 0) {
					err_msg("%s: %s", p->name, err);
					return -EINVAL;
				}
				emit_store_tsv(e, TSV_ARG0 + (unsigned int)a);
				rsp_buf_printf(src, ", $probe_arg%d", a);
			}
			break;
		case SPEC_RETVAL:
			ax_emit_reg(e, (unsigned int)comp->retval_regnum);
			emit_store_tsv(e, TSV_RETVAL);
			rsp_buf_puts(src, ", $probe_retval");
			break;
		case SPEC_MEM:
		case SPEC_VALUE:
			break;	/* their own expressions: below, and typed */
		}
	}
	return 0;
}

/* One X action per mem=ADDR-EXPR,LEN of the spec. */
static int collect_memory(struct probe *p, struct spec_compile *comp,
			  struct ax_emit *e, struct rsp_buf *pkt)
{
	char err[512];

	for (size_t i = 0; i < p->spec.nitems; i++) {
		struct spec_item *it = &p->spec.items[i];
		if (it->what != SPEC_MEM)
			continue;
		ax_emit_free(e);
		ax_emit_init(e);
		if (spec_compile_expr(it->addr, comp, e, err, sizeof(err)) < 0) {
			err_msg("%s: mem=%s: %s", p->name, it->addr_text, err);
			return -EINVAL;
		}
		ax_emit_const(e, (int64_t)it->len);
		ax_emit_op(e, AX_OP_TRACE);
		ax_emit_op(e, AX_OP_END);
		put_x(pkt, e);
	}
	return 0;
}

/* Typed values: their memory, and the registers their places and
 * addresses are computed from.  A packet that would grow too long is
 * sent, and the actions go on in a new one. */
static int collect_typed(struct recorder *r, struct probe *p,
			 const struct site *site, const struct dv_collect *tcol,
			 struct rsp_buf *pkt, bool *regs)
{
	*regs |= tcol->regs;
	for (size_t i = 0; i < tcol->n; i++) {
		if (tcol->code[i].error) {
			err_msg("%s: a typed value does not compile", p->name);
			return -EINVAL;
		}
		if (pkt->len + 2 * tcol->code[i].len + 64 > RSP_MAX_PAYLOAD / 2) {
			rsp_buf_putc(pkt, '-');
			if (define(r, p->name, pkt->data) < 0)
				return -EIO;
			rsp_buf_reset(pkt);
			rsp_buf_printf(pkt, "QTDP:-%x:%llx:", p->tpnum,
				       (unsigned long long)site->addr);
		}
		put_x(pkt, &tcol->code[i]);
	}
	return 0;
}

/* Sources for gdb (`target tfile`): the location and the values, and
 * for dump the typed values' description. */
static int define_sources(struct recorder *r, struct probe *p,
			  const struct site *site,
			  const struct typed_probe *typed, const char *src)
{
	char at[32];

	snprintf(at, sizeof(at), "*0x%llx", (unsigned long long)site->addr);
	if (define_source(r, p, site->addr, "at", at) < 0 ||
	    define_source(r, p, site->addr, "cmd", src) < 0)
		return -EIO;
	/* gdb takes two tracepoints of a file for one when their address,
	 * type, step and pass counts and condition texts agree (it does
	 * not compare actions), and an entry probe and a return probe of a
	 * function share all of these: it would show the return's frames
	 * under the entry's tracepoint, their values void.  A condition
	 * text true of every return frame keeps them apart. */
	if (p->spec.ret &&
	    define_source(r, p, site->addr, "cond", "$probe_latency_ns >= 0") < 0)
		return -EIO;
	/* What dump needs to print the typed values: comment lines among
	 * the commands, which gdb skips (typed.h). */
	if (typed && typed->nvals) {
		void *a[3] = { r, p, (void *)site };
		if (typed_write(typed, define_line, a) < 0) {
			err_msg("%s: the typed values' description does not fit the "
				"trace file (an access path too long?)", p->name);
			return -E2BIG;
		}
	}
	return 0;
}

/* One site of a probe as one tracepoint location: its QTDP with the
 * condition, its actions, their sources. */
static int define_site(struct recorder *r, struct probe *p,
		       const struct site *site)
{
	size_t k = (size_t)(site - p->sites);
	const struct typed_probe *typed = p->typed ? &p->typed[k] : NULL;
	const struct dv_collect *tcol = p->collect ? &p->collect[k] : NULL;
	struct arg_ctx actx = { r, p, site };
	struct spec_compile comp = {
		.emit_arg = emit_arg, .regnum = regnum_of, .ctx = &actx,
		.retval_regnum = target_abi_retval_regnum(&r->regs, r->tarch),
	};
	struct rsp_buf pkt, src;
	struct ax_emit e;
	bool regs = false;
	int rc = -EINVAL;

	rsp_buf_init(&pkt);
	rsp_buf_init(&src);
	ax_emit_init(&e);

	if (define_location(r, p, site, &comp, &e, &pkt) < 0)
		goto out;
	if (p->spec.hist) {
		/* No actions; the sources still name the location for gdb
		 * (and say why it has no frames). */
		rc = define_sources(r, p, site, NULL, "# hist: latencies added "
				    "to a histogram in the agent, no frames");
		goto out;
	}

	/* Actions: one X for the values, one per memory range, R for regs. */
	rsp_buf_reset(&pkt);
	rsp_buf_printf(&pkt, "QTDP:-%x:%llx:", p->tpnum,
		       (unsigned long long)site->addr);
	if (collect_values(p, &actx, &comp, &e, &src, &regs) < 0)
		goto out;
	ax_emit_op(&e, AX_OP_END);
	put_x(&pkt, &e);
	if (collect_memory(p, &comp, &e, &pkt) < 0)
		goto out;
	if (typed && typed->nvals &&
	    collect_typed(r, p, site, tcol, &pkt, &regs) < 0)
		goto out;
	if (regs) {
		/* Every register of the block. */
		rsp_buf_putc(&pkt, 'R');
		size_t digits = (r->regs.nregs + 3) / 4;
		for (size_t d = digits; d-- > 0;) {
			size_t bits = r->regs.nregs - d * 4;
			rsp_buf_putc(&pkt, bits >= 4 ? 'f' : "0137"[bits]);
		}
		rsp_buf_puts(&src, ", $regs");
	}
	if (e.error || pkt.len >= RSP_MAX_PAYLOAD - 64) {
		err_msg("%s: too much to collect in one tracepoint", p->name);
		goto out;
	}
	if (define(r, p->name, pkt.data) < 0)
		goto out;
	if (define_sources(r, p, site, typed, src.data) < 0)
		goto out;
	rc = 0;
out:
	ax_emit_free(&e);
	rsp_buf_free(&pkt);
	rsp_buf_free(&src);
	return rc;
}

static int define_probe(struct recorder *r, struct probe *p)
{
	char err[512];

	for (size_t i = 0; i < p->nsites; i++)
		if (define_site(r, p, &p->sites[i]) < 0)
			return -EINVAL;
	if (p->pending && define_pending(r, p) < 0)
		return -EINVAL;
	if (p->spec.ret) {
		char cmd[64];
		snprintf(cmd, sizeof(cmd), "return-probe %d", p->tpnum);
		if (monitor(r, cmd, err, sizeof(err)) < 0) {
			err_msg("%s: the agent cannot make return probes%s%s",
				p->name, err[0] ? ": " : "", err);
			return -EINVAL;
		}
	}
	if (p->spec.hist && define_hist(r, p) < 0)
		return -EINVAL;
	return 0;
}

/* The probes, resolved, as the agent's tracepoints and variables, and
 * the buffer they fill. */
int define_all(struct recorder *r)
{
	if (request_ok(r, "QTinit", "QTinit") < 0)
		return -EIO;
	if (define_tsv(r, TSV_THREAD, "probe_thread") < 0 ||
	    define_tsv(r, TSV_LATENCY, "probe_latency_ns") < 0 ||
	    define_tsv(r, TSV_RETVAL, "probe_retval") < 0)
		return -EIO;
	for (int a = 0; a < r->max_args; a++) {
		char name[32];
		snprintf(name, sizeof(name), "probe_arg%d", a);
		if (define_tsv(r, TSV_ARG0 + a, name) < 0)
			return -EIO;
	}
	for (size_t i = 0; i < r->nprobes; i++)
		if (define_probe(r, &r->probes[i]) < 0)
			return -EIO;
	if (request_ok(r, "trace buffer size", "QTBuffer:size:%llx",
		       (unsigned long long)r->buffer_size) < 0 ||
	    request_ok(r, "trace buffer mode", "QTBuffer:circular:0") < 0)
		return -EIO;
	/* Nothing lost: a full buffer makes the hitting threads wait until
	 * the stream has made room, unless asked to end the run instead or
	 * to go on without the frames that find no room. */
	if (r->full_drops &&
	    request_ok(r, "counting lost frames (--on-full=drop)", "Qprobe.fulldrop:1") < 0)
		return -EIO;
	if (!r->full_stops && !r->full_drops) {
		int e = rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT,
					   "Qprobe.fullwait:1");
		if (e < 0)
			return -EIO;
		if (strcmp(r->reply.data, "OK") != 0)
			err_msg("warning: this agent cannot make threads wait for room: "
				"a full buffer will end the recording");
	}
	return 0;
}

/* USDT semaphores: +1 while recording, -1 after. */
int semaphores(struct recorder *r, int delta)
{
	for (size_t i = 0; i < r->nprobes; i++) {
		struct probe *p = &r->probes[i];
		for (size_t k = 0; k < p->nsites; k++) {
			struct site *st = &p->sites[k];
			uint16_t v;

			if (!st->sem || (delta > 0) == st->sem_done)
				continue;
			/* Sites of one probe share a semaphore: count it once. */
			bool seen = false;
			for (size_t j = 0; j < k; j++)
				if (p->sites[j].sem == st->sem)
					seen = true;
			if (seen) {
				st->sem_done = delta > 0;
				continue;
			}
			if (read_target(r, st->sem, &v, 2) < 0) {
				err_msg("%s: cannot read its semaphore at 0x%llx", p->name,
					(unsigned long long)st->sem);
				return -EFAULT;
			}
			v = (uint16_t)(v + delta);
			struct rsp_buf hex;
			rsp_buf_init(&hex);
			int e = request_ok(r, "writing a USDT semaphore", "M%llx,2:%s",
					   (unsigned long long)st->sem, hex_of(&hex, &v, 2));
			rsp_buf_free(&hex);
			if (e < 0)
				return -EFAULT;
			st->sem_done = delta > 0;
		}
	}
	return 0;
}
