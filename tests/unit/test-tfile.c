/*
 * test-tfile.c - the trace-file writer, checked by reading its output back
 * with a small reader written here from the format description
 * (shared/research/tfile-format.md), independently of the writer: magic,
 * every definition line, every frame and block, the end marker.
 * test-tfile-gdb.sh then has gdb itself load the same sample.
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
#include "protocol/tfile.h"
#include "tests/unit/tfile-sample.h"

/* --- An in-memory file ----------------------------------------------------- */

struct mem_file {
	uint8_t *data;
	size_t len, cap;
	size_t fail_after;		/* 0 = never fail */
	unsigned calls_after_fail;
};

static int mem_write(void *ctx, const void *data, size_t len)
{
	struct mem_file *m = ctx;

	if (m->fail_after && m->len + len > m->fail_after) {
		m->calls_after_fail++;
		return -ENOSPC;
	}
	if (m->len + len > m->cap) {
		m->cap = (m->len + len) * 2;
		m->data = realloc(m->data, m->cap);
		assert_non_null(m->data);
	}
	memcpy(m->data + m->len, data, len);
	m->len += len;
	return 0;
}

/* --- The reader ------------------------------------------------------------ */

struct reader {
	const uint8_t *p, *end;
};

/* Next definition line (without '\n') into buf; false at the blank line. */
static bool read_line(struct reader *r, char *buf, size_t size)
{
	const uint8_t *nl = memchr(r->p, '\n', r->end - r->p);
	size_t n;

	assert_non_null(nl);
	n = nl - r->p;
	assert_true(n < 1000);		/* gdb's line buffer */
	assert_true(n < size);
	memcpy(buf, r->p, n);
	buf[n] = '\0';
	r->p = nl + 1;
	return n > 0;
}

static uint64_t read_le(struct reader *r, size_t n)
{
	uint64_t v = 0;

	assert_true((size_t)(r->end - r->p) >= n);
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

static const char *const want_defs[] = {
	"tsv 1:0:1:74726163655f74696d657374616d70",
	"tsv 2:0:0:68697473",
	/* Highest location first: gdb's reader reverses them. */
	"tp T2:401020:E:0:5",
	"tp A2:401020:R0fffffffffffffffffffffffffffffffffffff",
	"tp Z2:401020:at:0:9:2a3078343031303230",
	"tp Z2:401020:cmd:0:d:636f6c6c656374202472656773",
	"tp V2:401020:2:488",
	"tp T1:401000:E:0:0",
	"tp A1:401000:R0fffffffffffffffffffffffffffffffffffff",
	"tp A1:401000:M-1,404000,4",
	"tp Z1:401000:at:0:9:2a3078343031303030",
	"tp Z1:401000:cmd:0:1f:636f6c6c6563742024726567732c202a28696e74202a293078343034303030",
	"tp V1:401000:3:1187f",
};

static void check_file(const struct tfile_sample *s, const struct mem_file *m)
{
	struct reader r = { m->data, m->data + m->len };
	char line[1024], want[64];
	struct rsp_buf xml;
	size_t i;

	assert_true(m->len > 8);
	assert_memory_equal(r.p, "\x7fTRACE0\n", 8);
	r.p += 8;

	read_line(&r, line, sizeof(line));
	snprintf(want, sizeof(want), "R %zx", s->regsize);
	assert_string_equal(line, want);
	assert_string_equal(line, "R 230");	/* x86-64: 560 bytes */

	/* tdesc lines, then the status line. */
	rsp_buf_init(&xml);
	for (;;) {
		assert_true(read_line(&r, line, sizeof(line)));
		if (strncmp(line, "tdesc ", 6) != 0)
			break;
		rsp_buf_puts(&xml, line + 6);
		rsp_buf_putc(&xml, '\n');
	}
	rsp_buf_putc(&xml, '\0');
	assert_string_equal(xml.data, s->xml);
	rsp_buf_free(&xml);
	assert_string_equal(line,
			    "status 0;tstop::0;tframes:5;tcreated:5;tfree:4ee2f9;"
			    "tsize:500000;starttime:1000;stoptime:2000;"
			    "notes:73616d706c65;username:746573746572");

	for (i = 0; read_line(&r, line, sizeof(line)); i++) {
		assert_true(i < sizeof(want_defs) / sizeof(want_defs[0]));
		assert_string_equal(line, want_defs[i]);
	}
	assert_int_equal(i, sizeof(want_defs) / sizeof(want_defs[0]));

	/* Frames. */
	for (unsigned f = 0; f < SAMPLE_FRAMES; f++) {
		int16_t tpnum = (int16_t)read_le(&r, 2);
		uint32_t size = (uint32_t)read_le(&r, 4);
		const uint8_t *end = r.p + size;
		unsigned mem_blocks = 0;
		bool saw_v = false;

		assert_int_equal(tpnum, f % 2 ? 2 : 1);
		assert_true(end <= r.end);
		/* R first. */
		assert_int_equal(*r.p++, 'R');
		const uint8_t *regs = r.p;
		r.p += s->regsize;
		struct reader rr = { regs + s->pc_offset, regs + s->regsize };
		assert_int_equal(read_le(&rr, 8), tfile_sample_pc(f));
		rr.p = regs + 8;	/* rbx */
		assert_int_equal(read_le(&rr, 8), 0x11 + f);
		while (r.p < end) {
			uint8_t type = *r.p++;
			if (type == 'M') {
				uint64_t addr = read_le(&r, 8);
				uint16_t len = (uint16_t)read_le(&r, 2);
				if (addr == SAMPLE_MEM_ADDR) {
					struct reader w = { r.p, r.p + 4 };
					assert_int_equal(len, 4);
					assert_int_equal(read_le(&w, 4),
							 tfile_sample_word(f));
				} else if (addr == SAMPLE_BIG_ADDR) {
					assert_int_equal(len, 65535);
				} else {
					assert_int_equal(addr,
							 SAMPLE_BIG_ADDR + 65535);
					assert_int_equal(len, SAMPLE_BIG_LEN - 65535);
				}
				r.p += len;
				mem_blocks++;
			} else {
				assert_int_equal(type, 'V');
				assert_int_equal(read_le(&r, 4), 2);
				assert_int_equal((int64_t)read_le(&r, 8),
						 tfile_sample_hits(f));
				saw_v = true;
			}
		}
		assert_true(r.p == end);
		assert_true(saw_v);
		assert_int_equal(mem_blocks, f == 2 ? 3 : f % 2 ? 0 : 1);
	}
	/* End marker: 4 zero bytes, then nothing. */
	assert_int_equal(read_le(&r, 4), 0);
	assert_true(r.p == r.end);
}

static void test_write_and_read_back(void **state)
{
	static struct tfile_sample s;
	struct mem_file m = { 0 };
	struct tfile_writer w;

	assert_int_equal(tfile_sample_build(&s), 0);
	tfile_writer_init(&w, mem_write, &m);
	assert_int_equal(tfile_write(&w, s.regsize, s.xml, &s.status, &s.store,
				     &s.tb), 0);
	assert_int_equal(w.bytes, m.len);
	assert_int_equal(w.skipped, 0);
	check_file(&s, &m);
	free(m.data);
	tfile_sample_free(&s);
}

/* Header, frames one by one as a recorder would, end marker: same bytes. */
static void test_incremental(void **state)
{
	static struct tfile_sample s;
	struct mem_file whole = { 0 }, inc = { 0 };
	struct tfile_writer w;
	struct tbuf_frame f;

	assert_int_equal(tfile_sample_build(&s), 0);
	tfile_writer_init(&w, mem_write, &whole);
	assert_int_equal(tfile_write(&w, s.regsize, s.xml, &s.status, &s.store,
				     &s.tb), 0);
	tfile_writer_init(&w, mem_write, &inc);
	assert_int_equal(tfile_write_header(&w, s.regsize, s.xml, &s.status,
					    &s.store), 0);
	assert_int_equal(tbuf_frame_get(&s.tb, 0, &f), 0);
	do
		assert_int_equal(tfile_write_frame(&w, f.raw, f.raw_len), 0);
	while (tbuf_frame_next(&s.tb, &f));
	assert_int_equal(tfile_write_end(&w), 0);
	assert_int_equal(inc.len, whole.len);
	assert_memory_equal(inc.data, whole.data, whole.len);
	free(whole.data);
	free(inc.data);
	tfile_sample_free(&s);
}

/* A failing write is reported once and nothing more is written. */
static void test_write_error_sticky(void **state)
{
	static struct tfile_sample s;
	struct mem_file m = { .fail_after = 100 };
	struct tfile_writer w;

	assert_int_equal(tfile_sample_build(&s), 0);
	tfile_writer_init(&w, mem_write, &m);
	assert_int_equal(tfile_write(&w, s.regsize, s.xml, &s.status, &s.store,
				     &s.tb), -ENOSPC);
	assert_int_equal(m.calls_after_fail, 1);
	assert_int_equal(w.bytes, m.len);
	assert_int_equal(tfile_write_end(&w), -ENOSPC);
	free(m.data);
	tfile_sample_free(&s);
}

/* gdb cannot read lines of 1000 bytes or more. */
static void test_long_tdesc_line(void **state)
{
	static struct tfile_sample s;
	struct mem_file m = { 0 };
	struct tfile_writer w;
	char *xml = malloc(2000);

	memset(xml, 'x', 1999);
	xml[1999] = '\0';
	memcpy(xml, "<a>\n", 4);
	assert_int_equal(tfile_sample_build(&s), 0);
	tfile_writer_init(&w, mem_write, &m);
	assert_int_equal(tfile_write_header(&w, s.regsize, xml, &s.status,
					    &s.store), -E2BIG);
	/* 993 + "tdesc " = 999 bytes is the longest line allowed. */
	xml[4 + 993] = '\n';
	xml[4 + 993 + 1] = '\0';
	free(m.data);
	m = (struct mem_file){ 0 };
	tfile_writer_init(&w, mem_write, &m);
	assert_int_equal(tfile_write_header(&w, s.regsize, xml, &s.status,
					    &s.store), 0);
	/* Without a tdesc the file is still valid. */
	free(m.data);
	m = (struct mem_file){ 0 };
	tfile_writer_init(&w, mem_write, &m);
	assert_int_equal(tfile_write_header(&w, s.regsize, NULL, &s.status,
					    &s.store), 0);
	assert_memory_equal(m.data, "\x7fTRACE0\nR 230\nstatus ", 21);
	free(m.data);
	free(xml);
	tfile_sample_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_and_read_back),
		cmocka_unit_test(test_incremental),
		cmocka_unit_test(test_write_error_sticky),
		cmocka_unit_test(test_long_tdesc_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
