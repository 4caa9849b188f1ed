/*
 * record-live.c - --live: each frame the file takes, printed on stdout
 * as well, as dump would print it from the file (frame-print.c).
 *
 * The frames go through a tfile_reader of the very header the file got,
 * kept in memory (so also for -o /dev/null), with the thread names the
 * thread table will hold.  A reader that goes away (| head) ends the
 * printing, not the recording.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/frame-print.h"
#include "client/recorder.h"
#include "client/tfile-read.h"

/* The reader the frames are printed through: of the file's header,
 * which write_cb (record-file.c) kept in r->live_head as it wrote it. */
int live_open(struct recorder *r)
{
	r->live_reader = malloc(sizeof(*r->live_reader));
	if (!r->live_reader)
		abort();
	return tfile_reader_open_mem(r->live_reader, r->live_head.data,
				     r->live_head.len, r->out_path,
				     "probe-trace record");
}

/*
 * --live: the first `len` bytes of r->carry, the whole frames just
 * written to the file, on stdout as `probe-trace dump` prints them, so
 * numbered as the file numbers them.  Their threads are named already
 * (take_stream), with the names the thread table at the end of the file
 * will give them.  The status line, on a terminal that may be stdout's
 * too, is taken away while they print and drawn again after them.
 */
void print_live(struct recorder *r, size_t len)
{
	uint64_t number = r->frames;
	struct frame_view *v;

	if (!len)
		return;
	for (size_t off = 0; off < len;) {
		uint32_t size;
		memcpy(&size, r->carry + off + 2, 4);
		number--;
		off += 6 + size;
	}
	v = malloc(sizeof(*v));
	if (!v)
		abort();
	if (r->tty_status && r->tty_text[0]) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	for (size_t off = 0; off < len;) {
		int16_t tpnum;
		uint32_t size;
		memcpy(&tpnum, r->carry + off, 2);
		memcpy(&size, r->carry + off + 2, 4);
		long ti = note_thread(r, r->carry + off + 6, size);
		if (ti >= 0 && r->threads[ti].name[0])
			tfile_reader_name_thread(r->live_reader, r->threads[ti].tid,
						 r->threads[ti].name);
		if (tfile_frame_view(r->live_reader, tpnum, r->carry + off + 6,
				     size, number, v) == 0) {
			if (r->live_json)
				frame_print_json(stdout, r->live_reader, v);
			else
				frame_print_text(stdout, r->live_reader, v);
		} else {
			err_msg("frame %llu: its blocks do not parse; not shown",
				(unsigned long long)number);
		}
		number++;
		off += 6 + size;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		/* a reader that went away (| head): the file goes on */
		err_msg("--live: standard output: %s; the frames go on into %s "
			"only", strerror(errno), r->out_path);
		r->live = false;
	}
	free(v);
	if (r->tty_status && r->tty_text[0]) {
		fputs(r->tty_text, stderr);
		fflush(stderr);
	}
}
