/*
 * tbuf-read.c - examining the trace buffer: frames, blocks, searches, raw
 * bytes.
 *
 * gdb numbers the frames it can see from 0 = the oldest frame still in the
 * buffer, and every search (QTFrame:pc/tdp/range/outside) starts after the
 * selected frame and does not wrap around (gdbserver 13 behaves the same).
 * Frames are found by walking from the oldest one: a frame's header gives
 * its size, and in a wrapped buffer the walk jumps from `wrap` to 0.
 *
 * Block facts the readers rely on (gdb 13 tracefile.c / tracepoint.cc):
 * the first R block is the frame's registers; memory is served from the
 * first M block that contains the start address, as much as that block
 * holds; a TSV's value is its first V block.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "protocol/rsp.h"
#include "protocol/tbuf.h"

/* --- Frames ------------------------------------------------------------- */

static void tbuf_fill_frame(const struct tbuf *tb, size_t off, uint64_t n,
			    struct tbuf_frame *f)
{
	uint32_t size;

	memcpy(&f->tpnum, tb->data + off, 2);
	memcpy(&size, tb->data + off + 2, 4);
	f->number = n;
	f->off = off;
	f->raw = tb->data + off;
	f->raw_len = TBUF_FRAME_HEADER + size;
	f->data = f->raw + TBUF_FRAME_HEADER;
	f->data_len = size;
}

bool tbuf_frame_next(const struct tbuf *tb, struct tbuf_frame *f)
{
	size_t next;

	if (f->number + 1 >= tb->frames)
		return false;
	next = f->off + f->raw_len;
	if (tb->wrapped && next == tb->wrap)
		next = 0;
	tbuf_fill_frame(tb, next, f->number + 1, f);
	return true;
}

int tbuf_frame_get(const struct tbuf *tb, uint64_t n, struct tbuf_frame *f)
{
	if (n >= tb->frames)
		return -ENOENT;
	tbuf_fill_frame(tb, tb->start, 0, f);
	while (f->number < n)
		tbuf_frame_next(tb, f);
	return 0;
}

/* --- Blocks ------------------------------------------------------------- */

int tbuf_block_next(const uint8_t *data, size_t len, size_t regblock_size,
		    size_t *pos, struct tbuf_block *b)
{
	size_t left;
	uint16_t mlen;

	if (*pos >= len)
		return 0;
	b->type = (char)data[*pos];
	b->body = data + *pos + 1;
	left = len - *pos - 1;
	switch (b->type) {
	case 'R':
		b->body_len = regblock_size;
		break;
	case 'M':
		if (left < 10)
			return -EINVAL;
		memcpy(&mlen, b->body + 8, 2);
		b->body_len = 10 + (size_t)mlen;
		break;
	case 'V':
		b->body_len = 12;
		break;
	default:
		return -EINVAL;
	}
	if (b->body_len > left)
		return -EINVAL;
	*pos += 1 + b->body_len;
	return 1;
}

/* The block at *pos, advancing *pos; false at the end or on garbage. */
static bool tbuf_next_block(const struct tbuf *tb, const struct tbuf_frame *f,
			    size_t *pos, struct tbuf_block *b)
{
	return tbuf_block_next(f->data, f->data_len, tb->regblock_size, pos, b) > 0;
}

int tbuf_frame_regs(const struct tbuf *tb, const struct tbuf_frame *f,
		    const uint8_t **regs)
{
	struct tbuf_block b;
	size_t pos = 0;

	while (tbuf_next_block(tb, f, &pos, &b)) {
		if (b.type == 'R') {
			*regs = b.body;
			return 0;
		}
	}
	return -ENOENT;
}

uint64_t tbuf_frame_pc(const struct tbuf *tb, const struct tbuf_frame *f,
		       const struct tbuf_pc *pc)
{
	const uint8_t *regs;
	uint64_t v64;
	uint32_t v32;
	uint16_t v16;

	if (pc->pc_offset + pc->pc_size <= tb->regblock_size &&
	    tbuf_frame_regs(tb, f, &regs) == 0) {
		const uint8_t *p = regs + pc->pc_offset;
		switch (pc->pc_size) {
		case 8:
			memcpy(&v64, p, 8);
			return v64;
		case 4:
			memcpy(&v32, p, 4);
			return v32;
		case 2:
			memcpy(&v16, p, 2);
			return v16;
		case 1:
			return *p;
		default:
			break;
		}
	}
	return pc->tp_addr ? pc->tp_addr(pc->ctx, f->tpnum) : 0;
}

int tbuf_frame_read_mem(const struct tbuf *tb, const struct tbuf_frame *f,
			uint64_t addr, void *out, size_t len, size_t *got)
{
	struct tbuf_block b;
	size_t pos = 0;

	*got = 0;
	while (tbuf_next_block(tb, f, &pos, &b)) {
		uint64_t maddr, off;
		size_t mlen = b.body_len - 10, n;

		if (b.type != 'M')
			continue;
		memcpy(&maddr, b.body, 8);
		if (addr < maddr || addr - maddr >= mlen)
			continue;
		off = addr - maddr;
		n = mlen - off < len ? mlen - off : len;
		memcpy(out, b.body + 10 + off, n);
		*got = n;
		return 0;
	}
	return 0;
}

int tbuf_body_tsv(const uint8_t *body, size_t len, size_t regblock_size,
		  int32_t number, int64_t *value)
{
	struct tbuf_block b;
	size_t pos = 0;
	int32_t num;

	for (size_t at = 0; at + TBUF_TSV_BLOCK <= len && body[at] == 'V'; at += TBUF_TSV_BLOCK) {
		memcpy(&num, body + at + 1, 4);
		if (num == number) {
			memcpy(value, body + at + 5, 8);
			return 0;
		}
	}
	while (tbuf_block_next(body, len, regblock_size, &pos, &b) > 0) {
		if (b.type != 'V')
			continue;
		memcpy(&num, b.body, 4);
		if (num == number) {
			memcpy(value, b.body + 4, 8);
			return 0;
		}
	}
	return -ENOENT;
}

int tbuf_frame_tsv(const struct tbuf *tb, const struct tbuf_frame *f,
		   int32_t number, int64_t *value)
{
	struct tbuf_block b;
	size_t pos = 0;
	int32_t num;
	int found = -ENOENT;

	/* A frame may hold a variable twice (`collect $v += 1` records it
	 * before and after): the last is its value at the end of the hit,
	 * which is what gdb's tfile reader shows too. */
	while (tbuf_next_block(tb, f, &pos, &b)) {
		if (b.type != 'V')
			continue;
		memcpy(&num, b.body, 4);
		if (num == number) {
			memcpy(value, b.body + 4, 8);
			found = 0;
		}
	}
	return found;
}

void tbuf_frame_info_xml(const struct tbuf *tb, const struct tbuf_frame *f,
			 struct rsp_buf *out)
{
	struct tbuf_block b;
	size_t pos = 0;

	rsp_buf_puts(out, "<traceframe-info>\n");
	while (tbuf_next_block(tb, f, &pos, &b)) {
		uint64_t maddr;
		int32_t num;

		if (b.type == 'M') {
			memcpy(&maddr, b.body, 8);
			rsp_buf_printf(out, "<memory start=\"0x%" PRIx64
				       "\" length=\"0x%zx\"/>\n", maddr,
				       b.body_len - 10);
		} else if (b.type == 'V') {
			memcpy(&num, b.body, 4);
			rsp_buf_printf(out, "<tvar id=\"%d\"/>\n", num);
		}
	}
	rsp_buf_puts(out, "</traceframe-info>\n");
}

/* --- Searches ------------------------------------------------------------ */

static bool tbuf_matches(const struct tbuf *tb, const struct tbuf_frame *f,
			 const struct tbuf_query *q, const struct tbuf_pc *pc)
{
	uint64_t at;

	if (q->kind == TBUF_FIND_TDP)
		return f->tpnum == q->tpnum;
	at = tbuf_frame_pc(tb, f, pc);
	switch (q->kind) {
	case TBUF_FIND_PC:
		return at == q->lo;
	case TBUF_FIND_RANGE:
		return q->lo <= at && at <= q->hi;
	case TBUF_FIND_OUTSIDE:
		return at < q->lo || at > q->hi;
	default:
		return false;
	}
}

int tbuf_find(const struct tbuf *tb, const struct tbuf_query *q,
	      int64_t after, const struct tbuf_pc *pc, struct tbuf_frame *f)
{
	uint64_t first = after < 0 ? 0 : (uint64_t)after + 1;

	if (tbuf_frame_get(tb, first, f) != 0)
		return -ENOENT;
	do {
		if (tbuf_matches(tb, f, q, pc))
			return 0;
	} while (tbuf_frame_next(tb, f));
	return -ENOENT;
}

/* --- Raw stream ---------------------------------------------------------- */

size_t tbuf_raw_size(const struct tbuf *tb)
{
	return tb->used;
}

/* The stream's pieces: the upper segment (or the only one), then the
 * lower one; returns how many (0..2). */
static int tbuf_pieces(const struct tbuf *tb, const uint8_t *p[2],
		       size_t len[2])
{
	if (tb->frames == 0)
		return 0;
	if (!tb->wrapped) {
		p[0] = tb->data + tb->start;
		len[0] = tb->end - tb->start;
		return 1;
	}
	p[0] = tb->data + tb->start;
	len[0] = tb->wrap - tb->start;
	p[1] = tb->data;
	len[1] = tb->end;
	return tb->end ? 2 : 1;
}

int tbuf_raw_foreach(const struct tbuf *tb,
		     int (*fn)(void *ctx, const void *data, size_t len),
		     void *ctx)
{
	const uint8_t *p[2];
	size_t len[2];
	int n = tbuf_pieces(tb, p, len);

	for (int i = 0; i < n; i++) {
		int ret = fn(ctx, p[i], len[i]);
		if (ret != 0)
			return ret;
	}
	return 0;
}

int tbuf_raw_read(const struct tbuf *tb, uint64_t offset, void *out,
		  size_t len, size_t *got)
{
	const uint8_t *p[2];
	size_t plen[2];
	int n = tbuf_pieces(tb, p, plen);
	uint8_t *o = out;

	*got = 0;
	if (offset > tb->used)
		return -EINVAL;
	for (int i = 0; i < n && len > 0; i++) {
		size_t k;

		if (offset >= plen[i]) {
			offset -= plen[i];
			continue;
		}
		k = plen[i] - offset < len ? plen[i] - offset : len;
		memcpy(o, p[i] + offset, k);
		o += k;
		*got += k;
		len -= k;
		offset = 0;
	}
	return 0;
}

int tbuf_reply_raw(const struct tbuf *tb, uint64_t offset, uint64_t len,
		   struct rsp_buf *b)
{
	const uint8_t *p[2];
	size_t plen[2];
	int n = tbuf_pieces(tb, p, plen);
	/* The reply must fit one packet: two hex digits a byte. */
	uint64_t max = RSP_MAX_PAYLOAD / 2 - 1;

	if (offset > tb->used)
		return -EINVAL;
	if (offset == tb->used) {
		rsp_buf_putc(b, 'l');
		return 0;
	}
	if (len > max)
		len = max;
	for (int i = 0; i < n && len > 0; i++) {
		size_t k;

		if (offset >= plen[i]) {
			offset -= plen[i];
			continue;
		}
		k = plen[i] - offset < len ? plen[i] - offset : len;
		rsp_buf_put_hex(b, p[i] + offset, k);
		len -= k;
		offset = 0;
	}
	return 0;
}
