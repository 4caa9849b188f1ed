/*
 * tp-upload.c - the store as upload records (qTfP/qTsP, qTfV/qTsV) and as
 * the `tp`/`tsv` lines of a trace file.
 *
 * Records per location, in the order gdbserver 13 sends them and gdb's
 * tfile writer stores them (shared/research/tfile-format.md):
 *
 *   T<n>:<addr>:<E|D>:<step>:<pass>[:F<len>|:S][:X<len>,<cond hex>]
 *   A<n>:<addr>:<action>          one per collect action
 *   S<n>:<addr>:<action>          one per while-stepping action
 *   Z<n>:<addr>:<type>:<start>:<total>:<hex piece>   source strings
 *   V<n>:<addr>:<hits>:<bytes used>                  trace files only
 *
 * Actions are written the way gdb 13 encodes them (`X%08X,` and lower-case
 * bytecode), so an upload reads like the packets that defined it.  Every
 * record is at most `max_len` bytes: a record is written, measured, and
 * taken back if it is too long (see tracepoint.h for what is cut).
 */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "protocol/tracepoint.h"

static const char *const tp_src_names[] = {
	[RSP_TP_SRC_AT] = "at",
	[RSP_TP_SRC_COND] = "cond",
	[RSP_TP_SRC_CMD] = "cmd",
};

static void tp_put_action(const struct tp_action *a, struct rsp_buf *b)
{
	switch (a->kind) {
	case TP_ACTION_REGS:
		rsp_buf_putc(b, 'R');
		rsp_buf_put_hex(b, a->bytes, a->len);
		break;
	case TP_ACTION_MEM:
		if (a->basereg < 0)
			rsp_buf_puts(b, "M-1");
		else
			rsp_buf_printf(b, "M%x", (unsigned)a->basereg);
		rsp_buf_printf(b, ",%" PRIx64 ",%" PRIx64, (uint64_t)a->offset,
			       a->mem_len);
		break;
	case TP_ACTION_EXPR:
		rsp_buf_printf(b, "X%08zX,", a->len);
		rsp_buf_put_hex(b, a->bytes, a->len);
		break;
	case TP_ACTION_SDATA:
		rsp_buf_putc(b, 'L');
		break;
	}
}

static void tp_put_header(const struct tp_def *tp, bool with_cond,
			  struct rsp_buf *b)
{
	rsp_buf_printf(b, "T%x:%" PRIx64 ":%c:%" PRIx64 ":%" PRIx64,
		       tp->number, tp->addr, tp->enabled ? 'E' : 'D',
		       tp->step_count, tp->pass_count);
	if (tp->fast)
		rsp_buf_printf(b, ":F%x", tp->fast_len);
	else if (tp->is_static)
		rsp_buf_puts(b, ":S");
	if (with_cond && tp->cond) {
		rsp_buf_printf(b, ":X%zx,", tp->cond_len);
		rsp_buf_put_hex(b, tp->cond, tp->cond_len);
	}
}

void tp_upload_start(struct tp_upload *u, size_t max_len, bool with_v)
{
	memset(u, 0, sizeof(*u));
	u->max_len = max_len;
	u->with_v = with_v;
}

/* Items of a location: T, actions, sources, then V. */
static size_t tp_items(const struct tp_def *tp, bool with_v)
{
	return 1 + tp->n_actions + tp->n_sources + (with_v ? 1 : 0);
}

/*
 * Writes the next piece of source `src`: as many bytes from u->piece_off
 * as fit max_len.  Returns true when the string is finished.
 */
static bool tp_put_source_piece(const struct tp_def *tp,
				const struct tp_source *src,
				struct tp_upload *u, struct rsp_buf *b)
{
	size_t mark = b->len, room, n;

	rsp_buf_printf(b, "Z%x:%" PRIx64 ":%s:%zx:%zx:", tp->number, tp->addr,
		       tp_src_names[src->type], u->piece_off, src->total_len);
	room = b->len - mark < u->max_len ? (u->max_len - (b->len - mark)) / 2
					  : 0;
	n = src->filled - u->piece_off;
	if (n > room)
		n = room;
	if (n == 0 && src->filled > u->piece_off) {
		b->len = mark;		/* not even one byte fits: skip it */
		u->skipped++;
		return true;
	}
	rsp_buf_put_hex(b, src->text + u->piece_off, n);
	u->piece_off += n;
	return u->piece_off >= src->filled;
}

int tp_upload_next(const struct tp_store *s, struct tp_upload *u,
		   struct rsp_buf *b)
{
	for (; u->tp < s->n_tps; u->tp++, u->item = 0, u->piece_off = 0) {
		const struct tp_def *tp =
			s->tps[u->descending ? s->n_tps - 1 - u->tp : u->tp];

		while (u->item < tp_items(tp, u->with_v)) {
			size_t item = u->item, mark = b->len;

			if (item == 0) {
				u->item++;
				tp_put_header(tp, true, b);
				if (b->len - mark > u->max_len) {
					b->len = mark;
					tp_put_header(tp, false, b);
					u->skipped++;
				}
				return 1;
			}
			item--;
			if (item < tp->n_actions) {
				const struct tp_action *a = &tp->actions[item];
				u->item++;
				rsp_buf_printf(b, "%c%x:%" PRIx64 ":",
					       a->while_stepping ? 'S' : 'A',
					       tp->number, tp->addr);
				tp_put_action(a, b);
				if (b->len - mark <= u->max_len)
					return 1;
				b->len = mark;
				u->skipped++;
				continue;
			}
			item -= tp->n_actions;
			if (item < tp->n_sources) {
				size_t before = b->len;
				if (tp_put_source_piece(tp, &tp->sources[item],
							u, b)) {
					u->item++;
					u->piece_off = 0;
				}
				if (b->len != before)
					return 1;
				continue;
			}
			u->item++;
			rsp_buf_printf(b, "V%x:%" PRIx64 ":%" PRIx64 ":%" PRIx64,
				       tp->number, tp->addr, tp->hit_count,
				       tp->bytes_used);
			return 1;
		}
	}
	return 0;
}

void tsv_upload_start(struct tsv_upload *u, size_t max_len, bool newest_first)
{
	u->i = 0;
	u->max_len = max_len;
	u->newest_first = newest_first;
}

int tsv_upload_next(const struct tp_store *s, struct tsv_upload *u,
		    struct rsp_buf *b)
{
	const struct tsv_def *t;
	size_t mark = b->len, room, n;

	if (u->i >= s->n_tsvs)
		return 0;
	t = &s->tsvs[u->newest_first ? s->n_tsvs - 1 - u->i : u->i];
	u->i++;
	rsp_buf_printf(b, "%x:%" PRIx64 ":%d:", t->number, (uint64_t)t->initial,
		       t->builtin ? 1 : 0);
	n = strlen(t->name);
	room = b->len - mark < u->max_len ? (u->max_len - (b->len - mark)) / 2
					  : 0;
	rsp_buf_put_hex(b, t->name, n < room ? n : room);
	return 1;
}

void tp_put_status(const struct tp_def *tp, struct rsp_buf *b)
{
	rsp_buf_printf(b, "V%" PRIx64 ":%" PRIx64, tp->hit_count,
		       tp->bytes_used);
}
