/*
 * test-tbuf.c - the trace buffer: frame layout byte for byte, linear and
 * circular filling with exact accounting, frames larger than the buffer,
 * memory splitting, reads, searches and the raw (qTBuffer) stream.
 *
 * The circular tests check invariants after every frame instead of
 * hand-computed positions: the frames walked from the oldest add up to
 * `used`, are the newest ones in order (each frame carries its sequence
 * number in a V block), and the raw stream is exactly their bytes.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "protocol/rsp.h"
#include "protocol/tbuf.h"

#define REGS 16			/* a small register block: pc at 8 */

static void make_regs(uint8_t regs[REGS], uint64_t pc)
{
	memset(regs, 0xaa, REGS);
	memcpy(regs + 8, &pc, 8);
}

/* A frame: R (pc), M (4 bytes at addr), V (tsv 2 = seq): 51 bytes. */
static int add_frame(struct tbuf *tb, int16_t tp, uint64_t pc, uint64_t addr,
		     int64_t seq)
{
	uint8_t regs[REGS];
	uint32_t mem = (uint32_t)seq;
	int ret;

	make_regs(regs, pc);
	if ((ret = tbuf_frame_begin(tb, tp)) != 0 ||
	    (ret = tbuf_add_regs(tb, regs)) != 0 ||
	    (ret = tbuf_add_mem(tb, addr, &mem, 4)) != 0 ||
	    (ret = tbuf_add_tsv(tb, 2, seq)) != 0)
		return ret;
	return tbuf_frame_commit(tb, NULL);
}

#define FRAME51 (6 + 1 + REGS + 11 + 4 + 13)

static void test_layout(void **state)
{
	struct tbuf tb;
	uint8_t regs[REGS], want[FRAME51], raw[FRAME51];
	uint32_t mem = 0x11223344, size;
	uint64_t addr = 0x555555558084;
	int16_t tp = 3;
	int32_t num = 2;
	int64_t val = -7;
	size_t got, fsize;
	uint8_t *p = want;

	assert_int_equal(tbuf_init(&tb, 256, REGS), 0);
	make_regs(regs, 0x401000);
	assert_int_equal(tbuf_frame_begin(&tb, 3), 0);
	assert_int_equal(tbuf_add_regs(&tb, regs), 0);
	assert_int_equal(tbuf_add_mem(&tb, addr, &mem, 4), 0);
	assert_int_equal(tbuf_add_tsv(&tb, 2, -7), 0);
	assert_int_equal(tbuf_frame_commit(&tb, &fsize), 0);
	assert_int_equal(fsize, FRAME51);

	/* int16 tpnum, uint32 size, 'R' regs, 'M' addr len data, 'V' n v */
	size = FRAME51 - 6;
	memcpy(p, &tp, 2), p += 2;
	memcpy(p, &size, 4), p += 4;
	*p++ = 'R';
	memcpy(p, regs, REGS), p += REGS;
	*p++ = 'M';
	memcpy(p, &addr, 8), p += 8;
	*p++ = 4, *p++ = 0;
	memcpy(p, &mem, 4), p += 4;
	*p++ = 'V';
	memcpy(p, &num, 4), p += 4;
	memcpy(p, &val, 8), p += 8;
	assert_int_equal(p - want, FRAME51);

	assert_int_equal(tbuf_raw_size(&tb), FRAME51);
	assert_int_equal(tbuf_raw_read(&tb, 0, raw, sizeof(raw), &got), 0);
	assert_int_equal(got, FRAME51);
	assert_memory_equal(raw, want, FRAME51);
	assert_int_equal(tb.frames, 1);
	assert_int_equal(tb.created, 1);
	assert_int_equal(tbuf_free_bytes(&tb), 256 - FRAME51);
	tbuf_free(&tb);
}

static void test_reads(void **state)
{
	struct tbuf tb;
	struct tbuf_frame f;
	struct rsp_buf b;
	const uint8_t *regs;
	uint8_t out[8];
	uint32_t mem = 9;		/* add_frame stores seq */
	int64_t v;
	size_t got;

	assert_int_equal(tbuf_init(&tb, 0, REGS), 0);
	assert_int_equal(tb.size, 0x500000);
	assert_int_equal(add_frame(&tb, 3, 0x401000, 0x1000, 9), 0);
	assert_int_equal(tbuf_frame_get(&tb, 0, &f), 0);
	assert_int_equal(tbuf_frame_get(&tb, 1, &f), -ENOENT);
	assert_int_equal(tbuf_frame_get(&tb, 0, &f), 0);
	assert_int_equal(f.tpnum, 3);
	assert_int_equal(f.number, 0);
	assert_int_equal(f.raw_len, FRAME51);
	assert_int_equal(tbuf_frame_regs(&tb, &f, &regs), 0);
	assert_int_equal(regs[0], 0xaa);

	/* Whole, partial (block end), offset, and outside any block. */
	assert_int_equal(tbuf_frame_read_mem(&tb, &f, 0x1000, out, 4, &got), 0);
	assert_int_equal(got, 4);
	assert_memory_equal(out, &mem, 4);
	assert_int_equal(tbuf_frame_read_mem(&tb, &f, 0x1001, out, 8, &got), 0);
	assert_int_equal(got, 3);
	assert_memory_equal(out, (uint8_t *)&mem + 1, 3);
	assert_int_equal(tbuf_frame_read_mem(&tb, &f, 0xfff, out, 8, &got), 0);
	assert_int_equal(got, 0);
	assert_int_equal(tbuf_frame_read_mem(&tb, &f, 0x1004, out, 8, &got), 0);
	assert_int_equal(got, 0);

	assert_int_equal(tbuf_frame_tsv(&tb, &f, 2, &v), 0);
	assert_int_equal(v, 9);
	assert_int_equal(tbuf_frame_tsv(&tb, &f, 1, &v), -ENOENT);

	rsp_buf_init(&b);
	tbuf_frame_info_xml(&tb, &f, &b);
	rsp_buf_putc(&b, '\0');
	assert_string_equal(b.data,
			    "<traceframe-info>\n"
			    "<memory start=\"0x1000\" length=\"0x4\"/>\n"
			    "<tvar id=\"2\"/>\n"
			    "</traceframe-info>\n");
	rsp_buf_free(&b);
	tbuf_free(&tb);
}

/* Collections over 65535 bytes become several M blocks. */
static void test_mem_split(void **state)
{
	struct tbuf tb;
	struct tbuf_frame f;
	struct rsp_buf b;
	size_t len = 150000, got;
	uint8_t *data = malloc(len), out[16];

	for (size_t i = 0; i < len; i++)
		data[i] = (uint8_t)(i * 7);
	assert_int_equal(tbuf_init(&tb, 1 << 20, REGS), 0);
	assert_int_equal(tbuf_frame_begin(&tb, 1), 0);
	assert_int_equal(tbuf_add_mem(&tb, 0x10000, data, len), 0);
	assert_int_equal(tbuf_frame_commit(&tb, &got), 0);
	assert_int_equal(got, 6 + 3 * TBUF_MEM_HEADER + len);
	assert_int_equal(tbuf_frame_get(&tb, 0, &f), 0);

	rsp_buf_init(&b);
	tbuf_frame_info_xml(&tb, &f, &b);
	rsp_buf_putc(&b, '\0');
	assert_string_equal(b.data,
			    "<traceframe-info>\n"
			    "<memory start=\"0x10000\" length=\"0xffff\"/>\n"
			    "<memory start=\"0x1ffff\" length=\"0xffff\"/>\n"
			    "<memory start=\"0x2fffe\" length=\"0x49f2\"/>\n"
			    "</traceframe-info>\n");
	rsp_buf_free(&b);

	/* A read across a block boundary stops at the block's end. */
	assert_int_equal(tbuf_frame_read_mem(&tb, &f, 0x1fffb, out, 16, &got), 0);
	assert_int_equal(got, 4);
	assert_memory_equal(out, data + 0xfffb, 4);
	assert_int_equal(tbuf_frame_read_mem(&tb, &f, 0x30000, out, 16, &got), 0);
	assert_int_equal(got, 16);
	assert_memory_equal(out, data + 0x20000, 16);

	/* The reserve form refuses a block over 65535 bytes. */
	uint8_t *p;
	assert_int_equal(tbuf_frame_begin(&tb, 1), 0);
	assert_int_equal(tbuf_add_mem_reserve(&tb, 0, 0x10000, &p), -EINVAL);
	assert_false(tb.building);
	free(data);
	tbuf_free(&tb);
}

static void test_linear_full(void **state)
{
	struct tbuf tb;
	struct tbuf_frame f;
	int64_t v;

	assert_int_equal(tbuf_init(&tb, 200, REGS), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(add_frame(&tb, 1, 0x1000, 0x2000, i), 0);
	assert_int_equal(add_frame(&tb, 1, 0x1000, 0x2000, 3), -ENOSPC);
	assert_false(tb.building);
	assert_int_equal(tb.frames, 3);
	assert_int_equal(tb.created, 3);
	assert_int_equal(tb.dropped_full, 1);
	assert_int_equal(tbuf_free_bytes(&tb), 200 - 3 * FRAME51);
	/* The frames already there are intact. */
	for (int i = 0; i < 3; i++) {
		assert_int_equal(tbuf_frame_get(&tb, i, &f), 0);
		assert_int_equal(tbuf_frame_tsv(&tb, &f, 2, &v), 0);
		assert_int_equal(v, i);
	}
	/* A small frame that still fits is taken. */
	assert_int_equal(tbuf_frame_begin(&tb, 2), 0);
	assert_int_equal(tbuf_add_tsv(&tb, 1, 5), 0);
	assert_int_equal(tbuf_frame_commit(&tb, NULL), 0);
	assert_int_equal(tb.frames, 4);
	tbuf_clear(&tb);
	assert_int_equal(tb.frames, 0);
	assert_int_equal(tbuf_free_bytes(&tb), 200);
	tbuf_free(&tb);
}

/* Walks the buffer and checks every invariant; returns the frame count. */
static uint64_t check_invariants(const struct tbuf *tb, int64_t last_seq)
{
	struct tbuf_frame f;
	size_t sum = 0, got, raw_len = tbuf_raw_size(tb);
	uint8_t *raw = malloc(raw_len + 1);
	uint64_t n = 0;
	int64_t v;

	assert_int_equal(tbuf_raw_read(tb, 0, raw, raw_len + 1, &got), 0);
	assert_int_equal(got, raw_len);
	if (tb->frames) {
		assert_int_equal(tbuf_frame_get(tb, 0, &f), 0);
		do {
			assert_int_equal(f.number, n);
			assert_int_equal(tbuf_frame_tsv(tb, &f, 2, &v), 0);
			assert_int_equal(v, last_seq - (int64_t)(tb->frames - 1 - n));
			assert_memory_equal(raw + sum, f.raw, f.raw_len);
			sum += f.raw_len;
			n++;
		} while (tbuf_frame_next(tb, &f));
	}
	assert_int_equal(n, tb->frames);
	assert_int_equal(sum, tb->used);
	assert_int_equal(tbuf_free_bytes(tb), tb->size - tb->used);
	assert_int_equal(tb->created,
			 tb->frames + tb->dropped_oldest);
	free(raw);
	return n;
}

/* A streaming client takes frames from the head: the space comes back,
 * a linear buffer keeps accepting frames, the stream stays in order
 * across the wrap. */
static void test_consume(void **state)
{
	struct tbuf tb;
	struct tbuf_frame f;
	int64_t v;

	assert_int_equal(tbuf_init(&tb, 200, REGS), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(add_frame(&tb, 1, 0x1000, 0x2000, i), 0);
	assert_int_equal(tbuf_consume(&tb, 2), 2);
	assert_int_equal(tb.frames, 1);
	assert_int_equal(tb.consumed, 2);
	assert_int_equal(tb.dropped_oldest, 0);
	assert_int_equal(tbuf_free_bytes(&tb), 200 - FRAME51);
	/* Room again: two more frames fit, the buffer wraps. */
	assert_int_equal(add_frame(&tb, 1, 0x1000, 0x2000, 3), 0);
	assert_int_equal(add_frame(&tb, 1, 0x1000, 0x2000, 4), 0);
	assert_int_equal(tb.frames, 3);
	assert_int_equal(tb.created, 5);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(tbuf_frame_get(&tb, i, &f), 0);
		assert_int_equal(tbuf_frame_tsv(&tb, &f, 2, &v), 0);
		assert_int_equal(v, i + 2);
	}
	/* More than there are: all of them, and no more. */
	assert_int_equal(tbuf_consume(&tb, 10), 3);
	assert_int_equal(tb.frames, 0);
	assert_int_equal(tbuf_free_bytes(&tb), 200);
	assert_int_equal(tbuf_consume(&tb, 1), 0);
	assert_int_equal(add_frame(&tb, 1, 0x1000, 0x2000, 5), 0);
	assert_int_equal(tbuf_frame_get(&tb, 0, &f), 0);
	assert_int_equal(tbuf_frame_tsv(&tb, &f, 2, &v), 0);
	assert_int_equal(v, 5);
	tbuf_free(&tb);
}

/* The committed frames as pieces, one or two (wrapped), oldest first,
 * and emptied in one step, the next frame from offset 0. */
static void test_spans(void **state)
{
	struct tbuf tb;
	struct tbuf_span span[2];
	int16_t tp;
	uint32_t size;

	assert_int_equal(tbuf_init(&tb, 200, REGS), 0);
	assert_int_equal(tbuf_spans(&tb, span), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(add_frame(&tb, i + 1, 0x1000, 0x2000, i), 0);
	assert_int_equal(tbuf_spans(&tb, span), 1);
	assert_ptr_equal(span[0].data, tb.data);
	assert_int_equal(span[0].len, 3 * FRAME51);
	/* Two consumed, two more: the buffer wraps, the oldest frame (3)
	 * is the upper piece, frames 4 and 5 the lower one. */
	assert_int_equal(tbuf_consume(&tb, 2), 2);
	assert_int_equal(add_frame(&tb, 4, 0x1000, 0x2000, 3), 0);
	assert_int_equal(add_frame(&tb, 5, 0x1000, 0x2000, 4), 0);
	assert_true(tb.wrapped);
	assert_int_equal(tbuf_spans(&tb, span), 2);
	assert_int_equal(span[0].len, FRAME51);
	memcpy(&tp, span[0].data, 2);
	memcpy(&size, span[0].data + 2, 4);
	assert_int_equal(tp, 3);
	assert_int_equal(size + 6, FRAME51);
	assert_ptr_equal(span[1].data, tb.data);
	assert_int_equal(span[1].len, 2 * FRAME51);
	memcpy(&tp, span[1].data, 2);
	assert_int_equal(tp, 4);
	memcpy(&tp, span[1].data + FRAME51, 2);
	assert_int_equal(tp, 5);
	tbuf_consume_all(&tb);
	assert_int_equal(tb.frames, 0);
	assert_int_equal(tb.consumed, 5);
	assert_false(tb.wrapped);
	assert_int_equal(tbuf_free_bytes(&tb), 200);
	assert_int_equal(tbuf_spans(&tb, span), 0);
	assert_int_equal(add_frame(&tb, 6, 0x1000, 0x2000, 5), 0);
	assert_int_equal(tbuf_spans(&tb, span), 1);
	assert_ptr_equal(span[0].data, tb.data);
	assert_int_equal(span[0].len, FRAME51);
	tbuf_free(&tb);
}

/* Growing keeps every frame, in order, from a wrapped buffer too, and
 * the room it adds takes new frames. */
static void test_grow(void **state)
{
	struct tbuf tb;
	struct tbuf_frame f;
	int64_t v;

	(void)state;
	assert_int_equal(tbuf_init(&tb, 200, REGS), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(add_frame(&tb, 1, 0x1000, 0x2000, i), 0);
	assert_int_equal(tbuf_consume(&tb, 2), 2);
	assert_int_equal(add_frame(&tb, 1, 0x1000, 0x2000, 3), 0);
	assert_int_equal(add_frame(&tb, 1, 0x1000, 0x2000, 4), 0);
	assert_true(tb.wrapped);
	assert_int_equal(add_frame(&tb, 1, 0x1000, 0x2000, 5), -ENOSPC);
	assert_int_equal(tbuf_grow(&tb, 100), -EINVAL);
	assert_int_equal(tbuf_grow(&tb, 400), 0);
	assert_false(tb.wrapped);
	assert_int_equal(tb.frames, 3);
	assert_int_equal(tbuf_free_bytes(&tb), 400 - 3 * FRAME51);
	for (int i = 5; i < 9; i++)
		assert_int_equal(add_frame(&tb, 1, 0x1000, 0x2000, i), 0);
	assert_int_equal(tb.frames, 7);
	static const int64_t want[] = { 2, 3, 4, 5, 6, 7, 8 };
	for (int i = 0; i < 7; i++) {
		assert_int_equal(tbuf_frame_get(&tb, (uint64_t)i, &f), 0);
		assert_int_equal(tbuf_frame_tsv(&tb, &f, 2, &v), 0);
		assert_int_equal(v, want[i]);
	}
	/* Not while a frame is being built. */
	assert_int_equal(tbuf_frame_begin(&tb, 1), 0);
	assert_int_equal(tbuf_grow(&tb, 800), -EINVAL);
	tbuf_frame_abort(&tb);
	assert_int_equal(tbuf_grow(&tb, 800), 0);
	assert_int_equal(tb.frames, 7);
	tbuf_free(&tb);
}

static void test_circular_wrap(void **state)
{
	struct tbuf tb;

	assert_int_equal(tbuf_init(&tb, 200, REGS), 0);
	tbuf_set_circular(&tb, true);
	for (int64_t i = 0; i < 50; i++) {
		assert_int_equal(add_frame(&tb, 1, 0x1000, 0x2000, i), 0);
		uint64_t n = check_invariants(&tb, i);
		assert_int_equal(tb.created, i + 1);
		/* 200 bytes hold 3 frames of 51, at least 2 after a wrap. */
		assert_true(n >= (i < 2 ? (uint64_t)i + 1 : 2) && n <= 3);
	}
	assert_true(tb.dropped_oldest >= 47);
	tbuf_free(&tb);
}

/* Frames of varied sizes built incrementally, some aborted or rewound. */
static void test_circular_varied(void **state)
{
	struct tbuf tb;
	uint32_t lcg = 12345;
	uint8_t data[700], *p;
	int64_t seq = -1;

	memset(data, 0x5c, sizeof(data));
	assert_int_equal(tbuf_init(&tb, 4096, REGS), 0);
	tbuf_set_circular(&tb, true);
	for (int i = 0; i < 3000; i++) {
		lcg = lcg * 1103515245 + 12345;
		size_t blocks = (lcg >> 16) % 4, mark;
		bool abort_it = (lcg >> 8) % 17 == 0;

		assert_int_equal(tbuf_frame_begin(&tb, 1 + i % 5), 0);
		assert_int_equal(tbuf_add_tsv(&tb, 2, seq + 1), 0);
		for (size_t k = 0; k < blocks; k++) {
			size_t len = (lcg >> (k * 5)) % sizeof(data);
			assert_int_equal(tbuf_add_mem(&tb, 0x1000 * k, data,
						      len), 0);
		}
		mark = tbuf_frame_mark(&tb);
		assert_int_equal(tbuf_add_mem_reserve(&tb, 0, 100, &p), 0);
		memset(p, 1, 100);
		if (i % 3 == 0)
			tbuf_frame_rewind(&tb, mark);
		if (abort_it) {
			tbuf_frame_abort(&tb);
		} else {
			assert_int_equal(tbuf_frame_commit(&tb, NULL), 0);
			seq++;
		}
		check_invariants(&tb, seq);
	}
	assert_true(tb.dropped_oldest > 0);
	tbuf_free(&tb);
}

static void test_too_big(void **state)
{
	struct tbuf tb;
	uint8_t big[300] = { 0 };

	assert_int_equal(tbuf_init(&tb, 256, REGS), 0);
	tbuf_set_circular(&tb, true);
	for (int i = 0; i < 4; i++)
		assert_int_equal(add_frame(&tb, 1, 0x1000, 0x2000, i), 0);
	uint64_t before = tb.frames, dropped = tb.dropped_oldest;
	assert_int_equal(tbuf_frame_begin(&tb, 1), 0);
	assert_int_equal(tbuf_add_mem(&tb, 0, big, sizeof(big)), -E2BIG);
	assert_false(tb.building);
	assert_int_equal(tb.dropped_too_big, 1);
	/* Nothing was dropped for a frame that could never fit. */
	assert_int_equal(tb.frames, before);
	assert_int_equal(tb.dropped_oldest, dropped);
	check_invariants(&tb, 3);
	/* Linear mode says the same. */
	tbuf_set_circular(&tb, false);
	assert_int_equal(tbuf_frame_begin(&tb, 1), 0);
	assert_int_equal(tbuf_add_mem(&tb, 0, big, sizeof(big)), -E2BIG);
	assert_int_equal(tb.dropped_too_big, 2);
	tbuf_free(&tb);
}

static void test_misuse(void **state)
{
	struct tbuf tb;
	uint8_t *p;

	/* A buffer smaller than a frame header: every frame is too big. */
	assert_int_equal(tbuf_init(&tb, 4, REGS), 0);
	assert_int_equal(tbuf_frame_begin(&tb, 1), -E2BIG);
	assert_int_equal(tb.frames, 0);
	tbuf_free(&tb);
	assert_int_equal(tbuf_init(&tb, (size_t)UINT32_MAX + 1, REGS), -EINVAL);
	assert_int_equal(tbuf_init(&tb, 256, REGS), 0);
	assert_int_equal(tbuf_frame_reserve(&tb, 1, &p), -EINVAL);
	assert_int_equal(tbuf_frame_commit(&tb, NULL), -EINVAL);
	assert_int_equal(tbuf_frame_begin(&tb, 0), -EINVAL);
	assert_int_equal(tbuf_frame_begin(&tb, -3), -EINVAL);
	assert_int_equal(tbuf_frame_begin(&tb, 1), 0);
	assert_int_equal(tbuf_frame_begin(&tb, 1), -EBUSY);
	tbuf_frame_abort(&tb);
	assert_int_equal(tb.frames, 0);
	assert_int_equal(tbuf_resize(&tb, 1024), 0);
	assert_int_equal(tb.size, 1024);
	assert_int_equal(tbuf_resize(&tb, (size_t)UINT32_MAX + 1), -EINVAL);
	assert_int_equal(tb.size, 1024);
	/* Rewind keeps the frame header. */
	assert_int_equal(tbuf_frame_begin(&tb, 4), 0);
	assert_int_equal(tbuf_add_tsv(&tb, 1, 1), 0);
	tbuf_frame_rewind(&tb, 0);
	assert_int_equal(tbuf_frame_mark(&tb), 6 + TBUF_TSV_BLOCK);
	tbuf_frame_rewind(&tb, 6);
	assert_int_equal(tbuf_frame_commit(&tb, NULL), 0);
	assert_int_equal(tb.used, 6);
	tbuf_free(&tb);
}

static uint64_t tp_addr_cb(void *ctx, int tpnum)
{
	(void)ctx;
	return 0x7000 + tpnum;
}

/* A variable recorded twice in one frame (collect $v += 1): the last. */
static void test_tsv_twice(void **state)
{
	struct tbuf tb;
	struct tbuf_frame f;
	int64_t v;

	assert_int_equal(tbuf_init(&tb, 256, REGS), 0);
	assert_int_equal(tbuf_frame_begin(&tb, 1), 0);
	assert_int_equal(tbuf_add_tsv(&tb, 5, 15), 0);
	assert_int_equal(tbuf_add_tsv(&tb, 6, 1), 0);
	assert_int_equal(tbuf_add_tsv(&tb, 5, 16), 0);
	assert_int_equal(tbuf_frame_commit(&tb, NULL), 0);
	assert_int_equal(tbuf_frame_get(&tb, 0, &f), 0);
	assert_int_equal(tbuf_frame_tsv(&tb, &f, 5, &v), 0);
	assert_int_equal(v, 16);
	assert_int_equal(tbuf_frame_tsv(&tb, &f, 6, &v), 0);
	assert_int_equal(v, 1);
	tbuf_free(&tb);
	(void)state;
}

static void test_find(void **state)
{
	struct tbuf tb;
	struct tbuf_frame f;
	struct tbuf_pc pc = { 8, 8, tp_addr_cb, NULL };
	struct tbuf_query q = { TBUF_FIND_PC, 0x401000, 0, 0 };

	assert_int_equal(tbuf_init(&tb, 4096, REGS), 0);
	assert_int_equal(add_frame(&tb, 1, 0x401000, 0, 0), 0);	/* 0 */
	assert_int_equal(add_frame(&tb, 2, 0x401010, 0, 1), 0);	/* 1 */
	assert_int_equal(add_frame(&tb, 1, 0x401000, 0, 2), 0);	/* 2 */
	assert_int_equal(tbuf_frame_begin(&tb, 3), 0);		/* 3: no R */
	assert_int_equal(tbuf_frame_commit(&tb, NULL), 0);
	assert_int_equal(add_frame(&tb, 2, 0x402000, 0, 4), 0);	/* 4 */

	assert_int_equal(tbuf_find(&tb, &q, -1, &pc, &f), 0);
	assert_int_equal(f.number, 0);
	assert_int_equal(tbuf_find(&tb, &q, 0, &pc, &f), 0);
	assert_int_equal(f.number, 2);
	assert_int_equal(tbuf_find(&tb, &q, 2, &pc, &f), -ENOENT);
	/* Without registers the PC is the tracepoint's address. */
	assert_int_equal(tbuf_frame_get(&tb, 3, &f), 0);
	assert_int_equal(tbuf_frame_pc(&tb, &f, &pc), 0x7003);
	q.lo = 0x7003;
	assert_int_equal(tbuf_find(&tb, &q, -1, &pc, &f), 0);
	assert_int_equal(f.number, 3);

	q = (struct tbuf_query){ .kind = TBUF_FIND_TDP, .tpnum = 2 };
	assert_int_equal(tbuf_find(&tb, &q, -1, &pc, &f), 0);
	assert_int_equal(f.number, 1);
	assert_int_equal(tbuf_find(&tb, &q, 1, &pc, &f), 0);
	assert_int_equal(f.number, 4);
	assert_int_equal(tbuf_find(&tb, &q, 4, &pc, &f), -ENOENT);

	q = (struct tbuf_query){ .kind = TBUF_FIND_RANGE, .lo = 0x401001,
				 .hi = 0x402000 };
	assert_int_equal(tbuf_find(&tb, &q, -1, &pc, &f), 0);
	assert_int_equal(f.number, 1);
	assert_int_equal(tbuf_find(&tb, &q, 1, &pc, &f), 0);
	assert_int_equal(f.number, 4);

	q.kind = TBUF_FIND_OUTSIDE;
	assert_int_equal(tbuf_find(&tb, &q, -1, &pc, &f), 0);
	assert_int_equal(f.number, 0);
	assert_int_equal(tbuf_find(&tb, &q, 0, &pc, &f), 0);
	assert_int_equal(f.number, 2);
	assert_int_equal(tbuf_find(&tb, &q, 2, &pc, &f), 0);
	assert_int_equal(f.number, 3);
	assert_int_equal(tbuf_find(&tb, &q, 3, &pc, &f), -ENOENT);
	assert_int_equal(tbuf_find(&tb, &q, 99, &pc, &f), -ENOENT);
	tbuf_free(&tb);
}

/* qTBuffer replies, on a wrapped buffer too. */
static void test_reply_raw(void **state)
{
	struct tbuf tb;
	struct rsp_buf b, want;
	uint8_t raw[256];
	size_t got;

	assert_int_equal(tbuf_init(&tb, 200, REGS), 0);
	tbuf_set_circular(&tb, true);
	for (int i = 0; i < 5; i++)
		assert_int_equal(add_frame(&tb, 1, 0x1000, 0x2000, i), 0);
	assert_true(tb.wrapped);
	check_invariants(&tb, 4);
	assert_int_equal(tbuf_raw_read(&tb, 0, raw, sizeof(raw), &got), 0);
	assert_int_equal(got, tb.used);

	rsp_buf_init(&b);
	rsp_buf_init(&want);
	/* gdb's tsave: 7d0-byte pieces until `l`. */
	for (uint64_t off = 0;; off += b.len / 2) {
		rsp_buf_reset(&b);
		assert_int_equal(tbuf_reply_raw(&tb, off, 0x7d0, &b), 0);
		if (b.len == 1 && b.data[0] == 'l')
			break;
		rsp_buf_put(&want, b.data, b.len);
	}
	rsp_buf_reset(&b);
	rsp_buf_put_hex(&b, raw, got);
	assert_int_equal(want.len, b.len);
	assert_memory_equal(want.data, b.data, b.len);
	/* tsave -ctf: small pieces across the segment boundary. */
	rsp_buf_reset(&b);
	assert_int_equal(tbuf_reply_raw(&tb, FRAME51 - 3, 10, &b), 0);
	rsp_buf_reset(&want);
	rsp_buf_put_hex(&want, raw + FRAME51 - 3, 10);
	assert_int_equal(want.len, b.len);
	assert_memory_equal(want.data, b.data, b.len);
	assert_int_equal(tbuf_reply_raw(&tb, tb.used + 1, 1, &b), -EINVAL);
	rsp_buf_free(&b);
	rsp_buf_free(&want);
	tbuf_free(&tb);
}

/* A frame body's variable: from a run of V blocks in place, and after
 * an R block the long way; the first of a number wins; none: -ENOENT. */
static void test_body_tsv(void **state)
{
	uint8_t body[3 * TBUF_TSV_BLOCK + 1 + REGS];
	int64_t v, a = 11, b = 22, c = 33;
	int32_t n2 = 2, n5 = 5;
	(void)state;

	/* V(5)=11 V(2)=22 V(2)=33 */
	body[0] = 'V'; memcpy(body + 1, &n5, 4); memcpy(body + 5, &a, 8);
	body[13] = 'V'; memcpy(body + 14, &n2, 4); memcpy(body + 18, &b, 8);
	body[26] = 'V'; memcpy(body + 27, &n2, 4); memcpy(body + 31, &c, 8);
	assert_int_equal(tbuf_body_tsv(body, 39, REGS, 2, &v), 0);
	assert_int_equal(v, 22);
	assert_int_equal(tbuf_body_tsv(body, 39, REGS, 5, &v), 0);
	assert_int_equal(v, 11);
	assert_int_equal(tbuf_body_tsv(body, 39, REGS, 7, &v), -ENOENT);
	/* Cut inside the second block: only the first is whole. */
	assert_int_equal(tbuf_body_tsv(body, 20, REGS, 2, &v), -ENOENT);

	/* R (REGS bytes) then V(2)=33 */
	body[0] = 'R';
	memset(body + 1, 0x5a, REGS);
	body[1 + REGS] = 'V';
	memcpy(body + 2 + REGS, &n2, 4);
	memcpy(body + 6 + REGS, &c, 8);
	assert_int_equal(tbuf_body_tsv(body, 14 + REGS, REGS, 2, &v), 0);
	assert_int_equal(v, 33);
	assert_int_equal(tbuf_body_tsv(body, 14 + REGS, REGS, 5, &v), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_reads),
		cmocka_unit_test(test_body_tsv),
		cmocka_unit_test(test_mem_split),
		cmocka_unit_test(test_linear_full),
		cmocka_unit_test(test_consume),
		cmocka_unit_test(test_spans),
		cmocka_unit_test(test_grow),
		cmocka_unit_test(test_circular_wrap),
		cmocka_unit_test(test_circular_varied),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_misuse),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_tsv_twice),
		cmocka_unit_test(test_reply_raw),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
