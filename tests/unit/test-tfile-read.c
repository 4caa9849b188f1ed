/*
 * test-tfile-read.c - the trace file reader of dump, report and the
 * exports: frames with their values, the thread table after the end
 * marker (found from the file's end, even right after the marker's zero
 * bytes; ignored when its footer points anywhere else), and the
 * --pid/--tid/--comm filters on it; a header read from memory and
 * frames handed over one by one (record --live).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "client/tfile-read.h"

static char path[64];

static void put_hex(FILE *f, const char *s)
{
	for (; *s; s++)
		fprintf(f, "%02x", (unsigned char)*s);
}

static void put_frame(FILE *f, int16_t tp, int64_t ts, int64_t tid, int64_t arg0)
{
	const int32_t nums[3] = { 1, 2, 5 };
	const int64_t vals[3] = { ts, tid, arg0 };
	uint32_t size = 3 * 13;

	fwrite(&tp, 2, 1, f);
	fwrite(&size, 4, 1, f);
	for (int i = 0; i < 3; i++) {
		fputc('V', f);
		fwrite(&nums[i], 4, 1, f);
		fwrite(&vals[i], 8, 1, f);
	}
}

/* A file like probe-trace record's: 6 frames of threads 101, 102, 103
 * of process 100; `table` 0 none, 1 a good one, 2 one whose footer points
 * past the file's end, 3 a short one (the end marker's zeros and frame
 * bytes are among the last 95 bytes the reader looks at). */
static void write_file(int table)
{
	FILE *f = fopen(path, "wb");
	long at;

	assert_non_null(f);
	fputs("\x7fTRACE0\nR 8\nstatus 0;tstop::0;notes:", f);
	put_hex(f, "probe-trace:1=work;2=work%return");
	fputs("\ntsv 1:0:1:", f);
	put_hex(f, "trace_timestamp");
	fputs("\ntsv 2:0:0:", f);
	put_hex(f, "probe_thread");
	fputs("\ntsv 5:0:0:", f);
	put_hex(f, "probe_arg0");
	fputs("\n\n", f);
	for (int i = 0; i < 6; i++)
		put_frame(f, 1, 1000 + i, 101 + i % 3, i * 10);
	fwrite("\0\0\0\0", 4, 1, f);
	at = ftell(f);
	if (table == 3) {
		fputs("probe-trace threads\npid 100\nt 101 ", f);
		put_hex(f, "w1");
		fprintf(f, "\nprobe-trace threads at %lx\n", at);
	} else if (table) {
		fputs("probe-trace threads\npid 100\nfiltered 7\nfiltered-tp 1 7\nt 101 ", f);
		put_hex(f, "worker-1");
		fputs("\nt 102 ", f);
		put_hex(f, "worker-2");
		fputs("\nt 103 ", f);
		put_hex(f, "io thread");
		/* work%return's histogram; a line whose buckets do not add
		 * up to its count (5), which is no histogram */
		fputs("\nhist-tp 2 6 1234 1 0,2,3\nhist-tp 3 5 10 0 1,1", f);
		fprintf(f, "\nprobe-trace threads at %lx\n", table == 2 ? at + 4096 : at);
	}
	fclose(f);
}

static int setup(void **state)
{
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/test-tfile-read.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

static void test_frames_and_table(void **state)
{
	struct tfile_reader *t = malloc(sizeof(*t));
	struct frame_view v;
	int64_t x;
	char buf[64];

	(void)state;
	write_file(1);
	assert_int_equal(tfile_reader_open(t, path, "test"), 0);
	assert_int_equal(t->pid, 100);
	assert_int_equal(t->nthreads, 3);
	assert_string_equal(tfile_thread_name(t, 102), "worker-2");
	assert_string_equal(tfile_thread_name(t, 103), "io thread");
	assert_null(tfile_thread_name(t, 104));
	assert_true(t->rec_filter);
	assert_int_equal(t->rec_filtered, 7);
	assert_int_equal(tfile_rec_filtered(t, 1), 7);
	assert_int_equal(tfile_rec_filtered(t, 2), 0);
	assert_string_equal(tfile_probe_name(t, 2, buf, sizeof(buf)), "work%return");
	assert_int_equal(t->nrec_hist, 1);
	assert_int_equal(t->rec_hist[0].num, 2);
	assert_int_equal(t->rec_hist[0].n, 6);
	assert_int_equal(t->rec_hist[0].sum, 1234);
	assert_int_equal(t->rec_hist[0].zero, 1);
	assert_int_equal(t->rec_hist[0].b[0], 0);
	assert_int_equal(t->rec_hist[0].b[1], 2);
	assert_int_equal(t->rec_hist[0].b[2], 3);
	assert_int_equal(t->rec_hist[0].b[3], 0);
	for (int i = 0; i < 6; i++) {
		assert_int_equal(tfile_reader_next(t, &v), 1);
		assert_int_equal(v.number, i);
		assert_true(frame_tsv(&v, t, "probe_arg0", &x));
		assert_int_equal(x, i * 10);
		assert_true(frame_tsv(&v, t, "probe_thread", &x));
		assert_int_equal(x, 101 + i % 3);
	}
	assert_int_equal(tfile_reader_next(t, &v), 0);
	assert_false(t->truncated);
	tfile_reader_close(t);
	free(t);
}

static void test_short_table(void **state)
{
	struct tfile_reader *t = malloc(sizeof(*t));

	(void)state;
	write_file(3);
	assert_int_equal(tfile_reader_open(t, path, "test"), 0);
	assert_int_equal(t->pid, 100);
	assert_string_equal(tfile_thread_name(t, 101), "w1");
	assert_false(t->rec_filter);
	tfile_reader_close(t);
	free(t);
}

static void test_no_table(void **state)
{
	struct tfile_reader *t = malloc(sizeof(*t));
	struct frame_filter ff = { 0 };

	(void)state;
	for (int table = 0; table <= 2; table += 2) {
		write_file(table);
		assert_int_equal(tfile_reader_open(t, path, "test"), 0);
		assert_int_equal(t->pid, 0);
		assert_int_equal(t->nthreads, 0);
		assert_false(t->rec_filter);
		/* --tid needs no names; --comm and --pid do */
		assert_int_equal(frame_filter_add(&ff, 't', "101", "test"), 0);
		assert_int_equal(frame_filter_check(&ff, t), 0);
		assert_int_equal(frame_filter_add(&ff, 'c', "worker-*", "test"), 0);
		assert_int_not_equal(frame_filter_check(&ff, t), 0);
		frame_filter_free(&ff);
		memset(&ff, 0, sizeof(ff));
		tfile_reader_close(t);
	}
	free(t);
}

/* The frames of threads that pass the filter, as a bit mask of 101..103. */
static unsigned passing(const char *tids, const char *comm, long pid)
{
	struct tfile_reader *t = malloc(sizeof(*t));
	struct frame_filter ff = { 0 };
	struct frame_view v;
	unsigned mask = 0;
	int64_t tid;

	if (tids)
		assert_int_equal(frame_filter_add(&ff, 't', tids, "test"), 0);
	if (comm)
		assert_int_equal(frame_filter_add(&ff, 'c', comm, "test"), 0);
	if (pid) {
		char s[24];
		snprintf(s, sizeof(s), "%ld", pid);
		assert_int_equal(frame_filter_add(&ff, 'p', s, "test"), 0);
	}
	assert_int_equal(tfile_reader_open(t, path, "test"), 0);
	assert_int_equal(frame_filter_check(&ff, t), 0);
	while (tfile_reader_next(t, &v) > 0)
		if (frame_filter_match(&ff, t, &v)) {
			assert_true(frame_tsv(&v, t, "probe_thread", &tid));
			mask |= 1u << (tid - 101);
		}
	tfile_reader_close(t);
	free(t);
	frame_filter_free(&ff);
	return mask;
}

/* record --live: a reader of the header alone, held in memory; frames
 * handed to it one by one, as the file reader gives them; threads named
 * as they come. */
static void test_from_memory(void **state)
{
	struct tfile_reader *t = malloc(sizeof(*t)), *m = malloc(sizeof(*m));
	struct frame_view v, w;
	char *data, buf[64];
	long size;
	FILE *f;

	(void)state;
	write_file(1);
	f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	data = malloc((size_t)size);
	rewind(f);
	assert_int_equal(fread(data, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	/* the header and an end marker, as the recorder writes them first */
	size_t head = (size_t)(strstr(data, "\n\n") - data) + 2;
	char *h = malloc(head + 4);
	memcpy(h, data, head);
	memset(h + head, 0, 4);
	assert_int_equal(tfile_reader_open_mem(m, h, head + 4, "mem", "test"), 0);
	assert_int_equal(m->pid, 0);
	assert_string_equal(tfile_probe_name(m, 2, buf, sizeof(buf)), "work%return");
	assert_null(tfile_thread_name(m, 101));
	tfile_reader_name_thread(m, 101, "first");
	tfile_reader_name_thread(m, 102, "worker-2");
	tfile_reader_name_thread(m, 101, "worker-1");
	assert_string_equal(tfile_thread_name(m, 101), "worker-1");
	assert_string_equal(tfile_thread_name(m, 102), "worker-2");
	assert_int_equal(m->nthreads, 2);

	assert_int_equal(tfile_reader_open(t, path, "test"), 0);
	for (int i = 0; i < 6; i++) {
		assert_int_equal(tfile_reader_next(t, &v), 1);
		const uint8_t *body = (const uint8_t *)data + v.offset + 6;
		uint32_t len;
		memcpy(&len, data + v.offset + 2, 4);
		assert_int_equal(tfile_frame_view(m, v.tpnum, body, len, v.number, &w), 0);
		assert_int_equal(w.number, i);
		assert_int_equal(w.tpnum, v.tpnum);
		assert_int_equal(w.ntsv, v.ntsv);
		for (size_t k = 0; k < v.ntsv; k++) {
			assert_int_equal(w.tsv_num[k], v.tsv_num[k]);
			assert_int_equal(w.tsv_val[k], v.tsv_val[k]);
		}
	}
	/* a block that does not parse */
	const uint8_t bad[] = { 'Z', 1, 2, 3 };
	assert_int_equal(tfile_frame_view(m, 1, bad, sizeof(bad), 0, &w), -EINVAL);
	tfile_reader_close(t);
	tfile_reader_close(m);
	free(t);
	free(m);
	free(h);
	free(data);
}

static void test_filters(void **state)
{
	struct frame_filter ff = { 0 };

	(void)state;
	write_file(1);
	assert_int_equal(passing(NULL, NULL, 0), 7);
	assert_int_equal(passing("102", NULL, 0), 2);
	assert_int_equal(passing("101,103", NULL, 0), 5);
	assert_int_equal(passing(NULL, "worker-*", 0), 3);
	assert_int_equal(passing(NULL, "io thread", 0), 4);
	assert_int_equal(passing(NULL, "worker", 0), 0);
	assert_int_equal(passing("101,102", "*-2", 0), 2);
	assert_int_equal(passing(NULL, NULL, 100), 7);
	assert_int_equal(passing(NULL, NULL, 99), 0);
	/* what is not an id */
	assert_int_not_equal(frame_filter_add(&ff, 't', "", "test"), 0);
	assert_int_not_equal(frame_filter_add(&ff, 't', "1,", "test"), 0);
	assert_int_not_equal(frame_filter_add(&ff, 't', "0", "test"), 0);
	assert_int_not_equal(frame_filter_add(&ff, 't', "12a", "test"), 0);
	assert_int_not_equal(frame_filter_add(&ff, 'p', "-1", "test"), 0);
	assert_int_not_equal(frame_filter_add(&ff, 'p', "99999999999", "test"), 0);
	assert_int_not_equal(frame_filter_add(&ff, 'c', "", "test"), 0);
	frame_filter_free(&ff);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_frames_and_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_filters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_from_memory, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
