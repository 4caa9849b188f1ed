/*
 * tbuf.c - trace buffer storage and frame building (the hit path).
 *
 * The picture and the invariants are in tbuf.h.  In short: committed
 * frames are one segment [start, end) or, once wrapped, an upper segment
 * [start, wrap) followed by a lower one [0, end); the frame being built
 * always sits right after the newest committed frame ([fstart, wpos),
 * fstart == end) and is moved to offset 0 when it reaches the end of the
 * array.  Making room (tbuf_make_room) is the only subtle part; it tries,
 * in order: the room already there, moving to the front when the front
 * is bigger, and (circular mode) dropping the oldest frame, and says
 * -E2BIG before dropping anything for a frame that can never fit.
 *
 * Frame headers are written at commit, in host byte order (the agent runs
 * on the target, so host order = target order, which is what gdb reads).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/tbuf.h"

int tbuf_init(struct tbuf *tb, size_t size, size_t regblock_size)
{
	memset(tb, 0, sizeof(*tb));
	if (size == 0)
		size = TBUF_DEFAULT_SIZE;
	if (size < TBUF_MIN_SIZE || size > UINT32_MAX)
		return -EINVAL;
	tb->data = malloc(size);
	if (!tb->data)
		return -ENOMEM;
	tb->size = size;
	tb->regblock_size = regblock_size;
	return 0;
}

void tbuf_free(struct tbuf *tb)
{
	free(tb->data);
	tb->data = NULL;
	tb->size = 0;
}

void tbuf_clear(struct tbuf *tb)
{
	tb->start = tb->end = tb->wrap = 0;
	tb->wrapped = false;
	tb->used = 0;
	tb->frames = tb->created = 0;
	tb->dropped_oldest = tb->dropped_too_big = tb->dropped_full = 0;
	tb->consumed = 0;
	tb->building = false;
	tb->fstart = tb->wpos = 0;
}

int tbuf_resize(struct tbuf *tb, size_t size)
{
	uint8_t *data;

	if (size == 0)
		size = TBUF_DEFAULT_SIZE;
	if (size < TBUF_MIN_SIZE || size > UINT32_MAX)
		return -EINVAL;
	data = malloc(size);
	if (!data)
		return -ENOMEM;
	free(tb->data);
	tb->data = data;
	tb->size = size;
	tbuf_clear(tb);
	return 0;
}

int tbuf_grow(struct tbuf *tb, size_t size)
{
	uint8_t *data;
	size_t n = 0;

	if (tb->building || size < tb->size || size > UINT32_MAX)
		return -EINVAL;
	data = malloc(size);
	if (!data)
		return -ENOMEM;
	/* Oldest first: the upper segment, then the lower one. */
	if (tb->frames > 0) {
		size_t top = tb->wrapped ? tb->wrap : tb->end;
		memcpy(data, tb->data + tb->start, top - tb->start);
		n = top - tb->start;
		if (tb->wrapped) {
			memcpy(data + n, tb->data, tb->end);
			n += tb->end;
		}
	}
	free(tb->data);
	tb->data = data;
	tb->size = size;
	tb->start = 0;
	tb->end = n;
	tb->wrap = 0;
	tb->wrapped = false;
	tb->fstart = tb->wpos = n;
	return 0;
}

void tbuf_set_circular(struct tbuf *tb, bool circular)
{
	tb->circular = circular;
}

size_t tbuf_free_bytes(const struct tbuf *tb)
{
	return tb->size - tb->used;
}

/* Size of the committed frame at `off` (header included). */
static size_t tbuf_frame_size_at(const struct tbuf *tb, size_t off)
{
	uint32_t n;

	memcpy(&n, tb->data + off + 2, 4);
	return TBUF_FRAME_HEADER + n;
}

/* Removes the oldest committed frame (the caller counts why). */
static void tbuf_remove_oldest(struct tbuf *tb)
{
	size_t n = tbuf_frame_size_at(tb, tb->start);

	tb->start += n;
	tb->used -= n;
	tb->frames--;
	if (tb->wrapped && tb->start == tb->wrap) {
		/* The upper segment is gone: the lower one is all. */
		tb->wrapped = false;
		tb->start = 0;
	}
	if (tb->frames == 0)
		tb->start = tb->end;	/* empty: nothing before fstart */
}

/* Circular mode: drops the oldest frame to make room. */
static void tbuf_drop_oldest(struct tbuf *tb)
{
	tbuf_remove_oldest(tb);
	tb->dropped_oldest++;
}

uint64_t tbuf_consume(struct tbuf *tb, uint64_t n)
{
	uint64_t done = 0;

	while (done < n && tb->frames > 0) {
		tbuf_remove_oldest(tb);
		tb->consumed++;
		done++;
	}
	return done;
}

int tbuf_spans(const struct tbuf *tb, struct tbuf_span span[2])
{
	int n = 0;

	if (tb->frames == 0)
		return 0;
	if (tb->wrapped) {
		span[n++] = (struct tbuf_span){ tb->data + tb->start, tb->wrap - tb->start };
		if (tb->end > 0)
			span[n++] = (struct tbuf_span){ tb->data, tb->end };
	} else {
		span[n++] = (struct tbuf_span){ tb->data + tb->start, tb->end - tb->start };
	}
	return n;
}

void tbuf_consume_all(struct tbuf *tb)
{
	if (tb->building || tb->frames == 0)
		return;
	tb->consumed += tb->frames;
	tb->frames = 0;
	tb->used = 0;
	tb->wrapped = false;
	/* From the front again: the next frames are built in the lines
	 * the last ones warmed. */
	tb->start = tb->end = 0;
}

/* Where the frame being built may grow to. */
static size_t tbuf_limit(const struct tbuf *tb)
{
	return tb->wrapped ? tb->start : tb->size;
}

/* Moves the frame being built to offset 0 (older frames stay above). */
static void tbuf_move_to_front(struct tbuf *tb)
{
	size_t len = tb->wpos - tb->fstart;

	memmove(tb->data, tb->data + tb->fstart, len);
	if (tb->frames > 0) {
		tb->wrapped = true;
		tb->wrap = tb->end;
	} else {
		tb->start = 0;
	}
	tb->end = 0;
	tb->fstart = 0;
	tb->wpos = len;
}

/* Room for `len` more bytes of the frame being built, or an error: the
 * slow part of tbuf_make_room, when the bytes up to the limit are not
 * enough. */
static int tbuf_find_room(struct tbuf *tb, size_t len)
{
	size_t flen = tb->wpos - tb->fstart;

	if (len > tb->size || flen + len > tb->size)
		return -E2BIG;
	for (;;) {
		if (len <= tbuf_limit(tb) - tb->wpos)
			return 0;
		if (!tb->wrapped && tb->fstart > 0) {
			size_t front = tb->frames ? tb->start : tb->size;
			if (flen + len <= front) {
				tbuf_move_to_front(tb);
				continue;
			}
		}
		if (!tb->circular || tb->frames == 0)
			return -ENOSPC;
		tbuf_drop_oldest(tb);
	}
}

/* Room for `len` more bytes of the frame being built, or an error.  The
 * common case, room before the limit, is a comparison (millions of
 * frames a second are built). */
static inline int tbuf_make_room(struct tbuf *tb, size_t len)
{
	if (len <= tbuf_limit(tb) - tb->wpos && tb->wpos - tb->fstart + len <= tb->size)
		return 0;
	return tbuf_find_room(tb, len);
}

int tbuf_frame_begin(struct tbuf *tb, int16_t tpnum)
{
	int ret;

	if (tb->building)
		return -EBUSY;
	if (tpnum <= 0)
		return -EINVAL;
	tb->building = true;
	tb->fstart = tb->wpos = tb->end;
	ret = tbuf_make_room(tb, TBUF_FRAME_HEADER);
	if (ret != 0) {
		tbuf_frame_abort(tb);
		if (ret == -E2BIG)
			tb->dropped_too_big++;
		else
			tb->dropped_full++;
		return ret;
	}
	memcpy(tb->data + tb->fstart, &tpnum, 2);
	tb->wpos += TBUF_FRAME_HEADER;
	return 0;
}

int tbuf_frame_reserve(struct tbuf *tb, size_t len, uint8_t **out)
{
	int ret;

	if (!tb->building)
		return -EINVAL;
	ret = tbuf_make_room(tb, len);
	if (ret != 0) {
		tbuf_frame_abort(tb);
		if (ret == -E2BIG)
			tb->dropped_too_big++;
		else
			tb->dropped_full++;
		return ret;
	}
	*out = tb->data + tb->wpos;
	tb->wpos += len;
	return 0;
}

int tbuf_add_regs_reserve(struct tbuf *tb, uint8_t **out)
{
	uint8_t *p;
	int ret = tbuf_frame_reserve(tb, 1 + tb->regblock_size, &p);

	if (ret != 0)
		return ret;
	p[0] = 'R';
	*out = p + 1;
	return 0;
}

int tbuf_add_regs(struct tbuf *tb, const void *regs)
{
	uint8_t *p;
	int ret = tbuf_add_regs_reserve(tb, &p);

	if (ret == 0)
		memcpy(p, regs, tb->regblock_size);
	return ret;
}

int tbuf_add_mem_reserve(struct tbuf *tb, uint64_t addr, size_t len,
			 uint8_t **out)
{
	uint16_t len16 = (uint16_t)len;
	uint8_t *p;
	int ret;

	if (len > TBUF_MAX_MEM_BLOCK) {
		if (tb->building)
			tbuf_frame_abort(tb);
		return -EINVAL;
	}
	ret = tbuf_frame_reserve(tb, TBUF_MEM_HEADER + len, &p);
	if (ret != 0)
		return ret;
	p[0] = 'M';
	memcpy(p + 1, &addr, 8);
	memcpy(p + 9, &len16, 2);
	*out = p + TBUF_MEM_HEADER;
	return 0;
}

int tbuf_add_mem(struct tbuf *tb, uint64_t addr, const void *data,
		 size_t len)
{
	const uint8_t *src = data;

	/* A zero-length collection still records its (empty) block. */
	do {
		size_t n = len > TBUF_MAX_MEM_BLOCK ? TBUF_MAX_MEM_BLOCK : len;
		uint8_t *p;
		int ret = tbuf_add_mem_reserve(tb, addr, n, &p);

		if (ret != 0)
			return ret;
		memcpy(p, src, n);
		src += n;
		addr += n;
		len -= n;
	} while (len > 0);
	return 0;
}

int tbuf_add_tsv(struct tbuf *tb, int32_t number, int64_t value)
{
	uint8_t *p;
	int ret = tbuf_frame_reserve(tb, TBUF_TSV_BLOCK, &p);

	if (ret != 0)
		return ret;
	p[0] = 'V';
	memcpy(p + 1, &number, 4);
	memcpy(p + 5, &value, 8);
	return 0;
}

size_t tbuf_frame_mark(const struct tbuf *tb)
{
	return tb->building ? tb->wpos - tb->fstart : 0;
}

void tbuf_frame_rewind(struct tbuf *tb, size_t mark)
{
	if (tb->building && mark >= TBUF_FRAME_HEADER &&
	    mark <= tb->wpos - tb->fstart)
		tb->wpos = tb->fstart + mark;
}

int tbuf_frame_commit(struct tbuf *tb, size_t *size)
{
	size_t len;
	uint32_t data_size;

	if (!tb->building)
		return -EINVAL;
	len = tb->wpos - tb->fstart;
	data_size = (uint32_t)(len - TBUF_FRAME_HEADER);
	memcpy(tb->data + tb->fstart + 2, &data_size, 4);
	if (tb->frames == 0)
		tb->start = tb->fstart;
	tb->end = tb->wpos;
	tb->used += len;
	tb->frames++;
	tb->created++;
	tb->building = false;
	if (size)
		*size = len;
	return 0;
}

void tbuf_frame_abort(struct tbuf *tb)
{
	tb->building = false;
	tb->wpos = tb->fstart = tb->end;
}
