/*
 * tracepoint.c - the definition store: what QTDP, QTDPsrc and QTDV said.
 *
 * Locations live in an array of pointers sorted by (number, address), so
 * uploads come out in gdb's order and lookups are a binary search; TSVs in
 * an array sorted by number.  A definition arrives in pieces (header,
 * action packets, source pieces), and the store takes each piece as it
 * comes; see tracepoint.h for the re-download rule that keeps gdb 13's
 * InstallInTrace re-sends harmless.
 *
 * While-stepping: gdb 13 puts an `S` in front of the first while-stepping
 * action packet only; every later action packet of the same location is a
 * stepping one too (gdbserver keeps the same flag), until the next header.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/ax-plan.h"
#include "protocol/tracepoint.h"

static int tp_fail(struct tp_store *s, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int tp_fail(struct tp_store *s, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->errbuf, sizeof(s->errbuf), fmt, ap);
	va_end(ap);
	s->error = s->errbuf;
	return err;
}

static void *tp_memdup(const void *p, size_t n)
{
	void *q = malloc(n ? n : 1);

	if (q && n)
		memcpy(q, p, n);
	return q;
}

static void tp_def_free(struct tp_def *tp)
{
	if (!tp)
		return;
	for (size_t i = 0; i < tp->n_actions; i++) {
		free(tp->actions[i].bytes);
		free(tp->actions[i].plan);
	}
	for (size_t i = 0; i < tp->n_sources; i++)
		free(tp->sources[i].text);
	free(tp->actions);
	free(tp->sources);
	free(tp->cond);
	free(tp);
}

/* --- TSVs ------------------------------------------------------------------ */

static struct tsv_def *tsv_slot(const struct tp_store *s, uint32_t number,
				size_t *pos)
{
	size_t lo = 0, hi = s->n_tsvs;

	/* Variables are mostly numbered 1, 2, 3...: then number N is at
	 * N - 1, found without a search (a recording's every frame looks
	 * several up). */
	if (number - 1 < hi && s->tsvs[number - 1].number == number) {
		*pos = number - 1;
		return &s->tsvs[number - 1];
	}
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->tsvs[mid].number < number)
			lo = mid + 1;
		else
			hi = mid;
	}
	*pos = lo;
	if (lo < s->n_tsvs && s->tsvs[lo].number == number)
		return &s->tsvs[lo];
	return NULL;
}

struct tsv_def *tsv_find(const struct tp_store *s, uint32_t number)
{
	size_t pos;

	/* Clients number their variables 1, 2, 3...: the sorted array then
	 * holds number N at N - 1, found without a search (every frame of
	 * a recording looks up each variable it collects or sets). */
	if (number >= 1 && number <= s->n_tsvs && s->tsvs[number - 1].number == number)
		return &s->tsvs[number - 1];
	return tsv_slot(s, number, &pos);
}

size_t tsv_count(const struct tp_store *s)
{
	return s->n_tsvs;
}

struct tsv_def *tsv_at(const struct tp_store *s, size_t i)
{
	return i < s->n_tsvs ? &s->tsvs[i] : NULL;
}

int tsv_define(struct tp_store *s, uint32_t number, int64_t initial,
	       bool builtin, const char *name)
{
	struct tsv_def *t;
	size_t pos, len = strlen(name);
	char *copy;

	if (number == 0 || number > INT32_MAX)
		return tp_fail(s, -ERANGE, "trace state variable number %u "
			       "out of range", number);
	if (len > TP_MAX_TSV_NAME)
		return tp_fail(s, -E2BIG, "trace state variable name longer "
			       "than %u bytes", TP_MAX_TSV_NAME);
	copy = tp_memdup(name, len + 1);
	if (!copy)
		return tp_fail(s, -ENOMEM, "out of memory");
	t = tsv_slot(s, number, &pos);
	if (!t) {
		if (s->n_tsvs == TP_MAX_TSVS) {
			free(copy);
			return tp_fail(s, -ENOSPC, "too many trace state "
				       "variables (limit %u)", TP_MAX_TSVS);
		}
		if (s->n_tsvs == s->cap_tsvs) {
			size_t cap = s->cap_tsvs ? 2 * s->cap_tsvs : 8;
			struct tsv_def *n = realloc(s->tsvs, cap * sizeof(*n));
			if (!n) {
				free(copy);
				return tp_fail(s, -ENOMEM, "out of memory");
			}
			s->tsvs = n;
			s->cap_tsvs = cap;
		}
		memmove(&s->tsvs[pos + 1], &s->tsvs[pos],
			(s->n_tsvs - pos) * sizeof(*t));
		s->n_tsvs++;
		t = &s->tsvs[pos];
		memset(t, 0, sizeof(*t));
		t->number = number;
	}
	s->gen++;
	free(t->name);
	t->name = copy;
	t->initial = initial;
	t->builtin = t->builtin || builtin;
	t->value = initial;
	t->value_known = !t->builtin;
	return 0;
}

/* --- Store life cycle ------------------------------------------------------ */

static int tp_store_add_builtins(struct tp_store *s)
{
	return tsv_define(s, 1, 0, true, "trace_timestamp");
}

int tp_store_init(struct tp_store *s)
{
	memset(s, 0, sizeof(*s));
	return tp_store_add_builtins(s);
}

static void tp_store_drop_all(struct tp_store *s)
{
	for (size_t i = 0; i < s->n_tps; i++)
		tp_def_free(s->tps[i]);
	free(s->tps);
	s->tps = NULL;
	s->n_tps = 0;
	for (size_t i = 0; i < s->n_tsvs; i++)
		free(s->tsvs[i].name);
	s->n_tsvs = 0;
}

void tp_store_free(struct tp_store *s)
{
	tp_store_drop_all(s);
	free(s->tsvs);
	s->tsvs = NULL;
	s->cap_tsvs = 0;
}

void tp_store_clear(struct tp_store *s)
{
	tp_store_drop_all(s);
	s->gen++;
	/* Cannot fail: the TSV array keeps its capacity. */
	tp_store_add_builtins(s);
	s->error = NULL;
}

void tp_store_start_run(struct tp_store *s)
{
	s->gen++;
	for (size_t i = 0; i < s->n_tps; i++) {
		s->tps[i]->hit_count = 0;
		s->tps[i]->bytes_used = 0;
		s->tps[i]->lost = 0;
	}
	for (size_t i = 0; i < s->n_tsvs; i++) {
		s->tsvs[i].value = s->tsvs[i].initial;
		s->tsvs[i].value_known = !s->tsvs[i].builtin;
	}
}

/* --- Lookups --------------------------------------------------------------- */

static int tp_cmp(uint32_t n1, uint64_t a1, uint32_t n2, uint64_t a2)
{
	if (n1 != n2)
		return n1 < n2 ? -1 : 1;
	if (a1 != a2)
		return a1 < a2 ? -1 : 1;
	return 0;
}

/* Index of the first location >= (number, addr). */
static size_t tp_lower_bound(const struct tp_store *s, uint32_t number,
			     uint64_t addr)
{
	size_t lo = 0, hi = s->n_tps;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (tp_cmp(s->tps[mid]->number, s->tps[mid]->addr, number,
			   addr) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t tp_count(const struct tp_store *s)
{
	return s->n_tps;
}

struct tp_def *tp_at(const struct tp_store *s, size_t i)
{
	return i < s->n_tps ? s->tps[i] : NULL;
}

struct tp_def *tp_find(const struct tp_store *s, uint32_t number,
		       uint64_t addr)
{
	size_t i = tp_lower_bound(s, number, addr);

	if (i < s->n_tps && s->tps[i]->number == number &&
	    s->tps[i]->addr == addr)
		return s->tps[i];
	return NULL;
}

struct tp_def *tp_find_number(const struct tp_store *s, uint32_t number)
{
	size_t i = tp_lower_bound(s, number, 0);

	if (i < s->n_tps && s->tps[i]->number == number)
		return s->tps[i];
	return NULL;
}

struct tp_def *tp_next_at(const struct tp_store *s, uint64_t addr,
			  const struct tp_def *prev)
{
	size_t i = 0;

	if (prev)
		i = tp_lower_bound(s, prev->number, prev->addr) + 1;
	for (; i < s->n_tps; i++)
		if (s->tps[i]->addr == addr)
			return s->tps[i];
	return NULL;
}

struct tp_def *tp_find_addr(const struct tp_store *s, uint64_t addr)
{
	return tp_next_at(s, addr, NULL);
}

struct tp_def *tp_lookup_qtp(const struct tp_store *s, uint32_t number,
			     uint64_t addr)
{
	struct tp_def *tp = tp_find(s, number, addr);

	return tp ? tp : tp_find_addr(s, addr);
}

uint64_t tp_number_addr(const struct tp_store *s, uint32_t number)
{
	struct tp_def *tp = tp_find_number(s, number);

	return tp ? tp->addr : 0;
}

bool tp_pass_reached(const struct tp_def *tp)
{
	return tp->pass_count != 0 && tp->hit_count >= tp->pass_count;
}

int tp_set_enabled(struct tp_store *s, uint32_t number, uint64_t addr,
		   bool enabled)
{
	struct tp_def *tp = tp_find(s, number, addr);

	if (!tp)
		return tp_fail(s, -ENOENT, "no tracepoint %u at 0x%" PRIx64,
			       number, addr);
	tp->enabled = enabled;
	s->gen++;
	return 0;
}

/* --- Definition ------------------------------------------------------------ */

/* The header fields of `req` equal those stored in tp. */
static bool tp_same_header(const struct tp_def *tp,
			   const struct rsp_request *req)
{
	const typeof(req->u.tdp) *h = &req->u.tdp;

	return tp->enabled == h->enabled && tp->step_count == h->step_count &&
	       tp->pass_count == h->pass_count && tp->fast == h->fast &&
	       (!h->fast || tp->fast_len == h->fast_len) &&
	       tp->is_static == h->is_static &&
	       (tp->cond != NULL) == (h->cond != NULL) &&
	       tp->cond_len == h->cond_len &&
	       (!h->cond || memcmp(tp->cond, h->cond, h->cond_len) == 0) &&
	       (tp->n_actions > 0) == h->more;
}

int tp_define(struct tp_store *s, const struct rsp_request *req,
	      struct tp_def **out)
{
	const typeof(req->u.tdp) *h = &req->u.tdp;
	struct tp_def *tp, **tps;
	size_t pos;

	if (h->number == 0 || h->number > TP_MAX_NUMBER)
		return tp_fail(s, -ERANGE, "tracepoint number %u out of range "
			       "(1..%u)", h->number, TP_MAX_NUMBER);
	tp = tp_find(s, h->number, h->addr);
	if (tp) {
		*out = tp;
		if (!tp_same_header(tp, req)) {
			tp->resent = false;
			return tp_fail(s, -EEXIST, "tracepoint %u at 0x%" PRIx64
				       " is already defined differently",
				       h->number, h->addr);
		}
		tp->resent = true;
		tp->resend_pos = 0;
		tp->stepping_seen = false;
		tp->defining = h->more;
		return TP_UNCHANGED;
	}
	if (h->cond_len > TP_MAX_DEF_BYTES)
		return tp_fail(s, -E2BIG, "tracepoint condition too long");
	if (s->n_tps == TP_MAX_TRACEPOINTS)
		return tp_fail(s, -ENOSPC, "too many tracepoint locations "
			       "(limit %u)", TP_MAX_TRACEPOINTS);
	tp = calloc(1, sizeof(*tp));
	if (!tp)
		return tp_fail(s, -ENOMEM, "out of memory");
	tp->number = h->number;
	tp->addr = h->addr;
	tp->enabled = h->enabled;
	tp->step_count = h->step_count;
	tp->pass_count = h->pass_count;
	tp->fast = h->fast;
	tp->fast_len = h->fast_len;
	tp->is_static = h->is_static;
	tp->defining = h->more;
	if (h->cond) {
		tp->cond = tp_memdup(h->cond, h->cond_len);
		tp->cond_len = h->cond_len;
		tp->def_bytes = h->cond_len;
		if (!tp->cond) {
			free(tp);
			return tp_fail(s, -ENOMEM, "out of memory");
		}
	}
	tps = realloc(s->tps, (s->n_tps + 1) * sizeof(*tps));
	if (!tps) {
		tp_def_free(tp);
		return tp_fail(s, -ENOMEM, "out of memory");
	}
	s->tps = tps;
	pos = tp_lower_bound(s, h->number, h->addr);
	memmove(&tps[pos + 1], &tps[pos], (s->n_tps - pos) * sizeof(*tps));
	tps[pos] = tp;
	s->n_tps++;
	s->gen++;
	*out = tp;
	return 0;
}

static bool tp_same_action(const struct tp_action *a,
			   const struct rsp_tp_action *r, bool stepping)
{
	if (a->kind != (enum tp_action_kind)r->kind ||
	    a->while_stepping != stepping)
		return false;
	switch (a->kind) {
	case TP_ACTION_MEM:
		return a->basereg == r->basereg &&
		       a->offset == (int64_t)r->offset &&
		       a->mem_len == r->mem_len;
	case TP_ACTION_REGS:
	case TP_ACTION_EXPR:
		return a->len == r->len &&
		       (r->len == 0 || memcmp(a->bytes, r->bytes, r->len) == 0);
	case TP_ACTION_SDATA:
		return true;
	}
	return false;
}

/* An identical re-download: compare instead of appending. */
static int tp_compare_actions(struct tp_store *s, struct tp_def *tp,
			      const struct rsp_request *req)
{
	const typeof(req->u.tdp_actions) *r = &req->u.tdp_actions;

	for (size_t i = 0; i < r->count; i++) {
		if (tp->resend_pos == tp->n_actions ||
		    !tp_same_action(&tp->actions[tp->resend_pos],
				    &r->actions[i], tp->stepping_seen))
			goto differs;
		tp->resend_pos++;
	}
	if (!r->more && tp->resend_pos != tp->n_actions)
		goto differs;
	return TP_UNCHANGED;
differs:
	tp->resent = false;
	return tp_fail(s, -EEXIST, "tracepoint %u at 0x%" PRIx64 " is already "
		       "defined with different actions", tp->number, tp->addr);
}

int tp_add_actions(struct tp_store *s, const struct rsp_request *req,
		   struct tp_def **out)
{
	const typeof(req->u.tdp_actions) *r = &req->u.tdp_actions;
	struct tp_def *tp = tp_find(s, r->number, r->addr);
	struct tp_action *acts;
	size_t bytes = 0;

	if (!tp)
		return tp_fail(s, -ENOENT, "actions for undefined tracepoint "
			       "%u at 0x%" PRIx64, r->number, r->addr);
	*out = tp;
	if (r->stepping)
		tp->stepping_seen = true;
	tp->defining = r->more;
	if (tp->resent)
		return tp_compare_actions(s, tp, req);
	for (size_t i = 0; i < r->count; i++)
		bytes += r->actions[i].len;
	if (r->count > TP_MAX_ACTIONS - tp->n_actions)
		return tp_fail(s, -ENOSPC, "too many actions for tracepoint "
			       "%u (limit %u)", tp->number, TP_MAX_ACTIONS);
	if (bytes > TP_MAX_DEF_BYTES - tp->def_bytes)
		return tp_fail(s, -E2BIG, "actions of tracepoint %u too "
			       "large (limit %u bytes)", tp->number,
			       TP_MAX_DEF_BYTES);
	acts = realloc(tp->actions, (tp->n_actions + r->count + 1) *
		       sizeof(*acts));
	if (!acts)
		return tp_fail(s, -ENOMEM, "out of memory");
	tp->actions = acts;
	s->gen++;
	for (size_t i = 0; i < r->count; i++) {
		const struct rsp_tp_action *ra = &r->actions[i];
		struct tp_action *a = &acts[tp->n_actions];

		memset(a, 0, sizeof(*a));
		a->kind = (enum tp_action_kind)ra->kind;
		a->while_stepping = tp->stepping_seen;
		a->basereg = ra->basereg;
		a->offset = (int64_t)ra->offset;
		a->mem_len = ra->mem_len;
		if (ra->bytes) {
			a->bytes = tp_memdup(ra->bytes, ra->len);
			if (!a->bytes)
				return tp_fail(s, -ENOMEM, "out of memory");
			a->len = ra->len;
			if (a->kind == TP_ACTION_EXPR)
				a->plan = ax_plan_compile(a->bytes, a->len);
		}
		tp->n_actions++;
		tp->def_bytes += ra->len;
	}
	return 0;
}

int tp_add_source(struct tp_store *s, const struct rsp_request *req)
{
	const typeof(req->u.tdp_src) *r = &req->u.tdp_src;
	struct tp_def *tp = tp_find(s, r->number, r->addr);
	struct tp_source *src = NULL, *srcs;

	if (!tp)
		return tp_fail(s, -ENOENT, "source for undefined tracepoint "
			       "%u at 0x%" PRIx64, r->number, r->addr);
	if (tp->resent)
		return TP_UNCHANGED;
	if (r->start > 0) {
		/* A continuation of the last string of this type. */
		for (size_t i = tp->n_sources; i-- > 0;) {
			if (tp->sources[i].type == r->type) {
				src = &tp->sources[i];
				break;
			}
		}
		if (!src || src->filled != r->start ||
		    src->total_len != r->total_len)
			return tp_fail(s, -EINVAL, "source piece at %" PRIx64
				       " continues no string", r->start);
		memcpy(src->text + src->filled, r->text, r->len);
		src->filled += r->len;
		return 0;
	}
	if (tp->n_sources == TP_MAX_SOURCES)
		return tp_fail(s, -ENOSPC, "too many source strings for "
			       "tracepoint %u", tp->number);
	if (r->total_len > TP_MAX_DEF_BYTES - tp->def_bytes)
		return tp_fail(s, -E2BIG, "source strings of tracepoint %u "
			       "too large", tp->number);
	srcs = realloc(tp->sources, (tp->n_sources + 1) * sizeof(*srcs));
	if (!srcs)
		return tp_fail(s, -ENOMEM, "out of memory");
	tp->sources = srcs;
	src = &srcs[tp->n_sources];
	src->text = calloc(1, r->total_len + 1);
	if (!src->text)
		return tp_fail(s, -ENOMEM, "out of memory");
	src->type = r->type;
	src->total_len = r->total_len;
	memcpy(src->text, r->text, r->len);
	src->filled = r->len;
	tp->n_sources++;
	tp->def_bytes += r->total_len;
	return 0;
}
