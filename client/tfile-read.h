/*
 * tfile-read.h - reading a gdb trace file frame by frame, for dump,
 * report and the exports.
 *
 * Any gdb trace file is read (tfile.h has the layout), whoever wrote it:
 * the header gives the register layout (tdesc lines), the trace state
 * variables' names and the tracepoints; probe-trace's own files also
 * name their probes in the status notes ("probe-trace:1=NAME;2=NAME...")
 * and may end with a table of the recorded process's threads after the
 * end marker, which gdb never reads:
 *
 *   ... frames | 00 00 00 00 | "probe-trace threads\n"
 *                              "pid <decimal>\n"
 *                              ["filtered <n>\n"
 *                               "filtered-tp <tp> <n>\n" ...]
 *                              "t <tid> <hex name>\n" ...
 *                              ["stops-tp <tp> <stops> <ring full>
 *                                <waited> <hex how>\n" ...]
 *                              ["hist-tp <tp> <count> <sum ns> <zero>
 *                                <b0>,<b1>,...\n" ...]
 *                              "probe-trace threads at <hex offset>\n"
 *
 * ("filtered": frames of other threads that `record --tid/--comm`
 * dropped, in all and per tracepoint.  "stops-tp": how the probe's hits
 * ran and how many stopped the program, after the thread lines, where
 * a reader that does not know them stops reading, its threads read.
 * "hist-tp": a `hist` probe's latency histogram, as record printed it,
 * in decimal: b_k the calls of [2^k, 2^(k+1)) ns, "-" for none.)  The last line gives the offset
 * of the first, so a reader finds the
 * table from the end of the file before it reads any frame.  A file cut
 * short (the recorder was killed while writing) is read up to its last
 * whole frame, and has no table.
 */
#ifndef PROBE_CLIENT_TFILE_READ_H
#define PROBE_CLIENT_TFILE_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "client/target.h"
#include "client/typed.h"
#include "protocol/rsp.h"
#include "protocol/tp-status.h"

#define TFILE_MAX_NAMES 4096

/* A `stops-tp` line of the thread table: how tracepoint `num`'s hits ran
 * while recording ("jump pad", ...), the hits that stopped the program,
 * and of those the ones a full ring sent and those that waited for room
 * in the trace buffer (probe-trace(1), "How the probes ran"). */
struct tfile_stops {
	long num;
	char how[64];
	uint64_t stops, ring_full, waited;
};
/* A `hist-tp` line: the latency histogram of `hist` probe `num`. */
struct tfile_hist {
	long num;
	uint64_t n, sum, zero, b[64];
};
#define TFILE_THREADS_MAGIC "probe-trace threads\n"
#define TFILE_THREADS_FOOTER "probe-trace threads at "
#define TFILE_COMM_LEN 64

struct tfile_named {
	long num;
	char *name;
};

struct tfile_thread {
	int64_t tid;
	char name[TFILE_COMM_LEN];
};

struct tfile_reader {
	FILE *f;
	const char *path;
	const char *who;		/* "probe-trace dump": messages' prefix */
	size_t regblock;
	struct rsp_buf tdesc;
	struct target_regs regs;
	bool have_regs;
	struct tfile_named tsvs[TFILE_MAX_NAMES], probes[TFILE_MAX_NAMES];
	size_t ntsvs, nprobes;
	struct {
		long num;
		uint64_t addr;
	} tps[TFILE_MAX_NAMES];
	size_t ntps;
	struct tp_status status;	/* how the run ended */
	char status_error[128];
	bool have_status;
	char *status_line;		/* for its table of lost frames */
	struct typed_file typed;	/* typed values (#pt lines, typed.h) */
	/* the thread table; pid 0 when the file has none */
	long pid;
	struct tfile_thread *threads;
	size_t nthreads;
	/* frames record --tid/--comm dropped: in all, and per tracepoint */
	bool rec_filter;
	uint64_t rec_filtered;
	struct {
		long num;
		uint64_t count;
	} rec_filtered_tp[256];
	size_t nrec_filtered_tp;
	/* how each probe ran while recording (record's line per probe) */
	struct tfile_stops rec_stops[256];
	size_t nrec_stops;
	/* the latency histograms of `hist` probes */
	struct tfile_hist rec_hist[16];
	size_t nrec_hist;
	/* reading frames */
	uint8_t *data;
	size_t cap;
	uint64_t number;		/* frames read so far */
	bool truncated;			/* the file ends inside a frame */
};

#define FRAME_MAX_TSV 64
#define FRAME_MAX_MEM 256

struct frame_view {
	uint64_t number;
	uint64_t offset;		/* of the frame in the file */
	long tpnum;
	const uint8_t *regs;
	int64_t tsv_val[FRAME_MAX_TSV];
	long tsv_num[FRAME_MAX_TSV];
	size_t ntsv;
	struct {
		uint64_t addr;
		const uint8_t *data;
		size_t len;
	} mem[FRAME_MAX_MEM];
	size_t nmem;
};

/* Opens and reads the header (and the thread table); on failure says why
 * on stderr, prefixed with `who` and the path, and returns -errno. */
int tfile_reader_open(struct tfile_reader *t, const char *path,
		      const char *who);
/* The next frame: 1, 0 at the end (t->truncated when the file ends
 * early: the caller says so), -EINVAL for a damaged frame (said here). */
int tfile_reader_next(struct tfile_reader *t, struct frame_view *v);
void tfile_reader_close(struct tfile_reader *t);
/* The same on a header held in memory (the `len` bytes at `data`, which
 * stay there until the reader is closed), named `name` in messages: the
 * recorder's --live output reads its own file's header this way, also
 * when the file itself cannot be read back (-o /dev/null). */
int tfile_reader_open_mem(struct tfile_reader *t, const void *data,
			  size_t len, const char *name, const char *who);
/* Names thread tid (or renames it) in the reader's thread table, as the
 * table at the end of the file will. */
void tfile_reader_name_thread(struct tfile_reader *t, int64_t tid,
			      const char *name);
/* A frame of tracepoint tpnum whose blocks are the `len` bytes at body
 * (its bytes after the 6-byte frame header), numbered `number`, as
 * tfile_reader_next would give it; -EINVAL when the blocks do not
 * parse. */
int tfile_frame_view(const struct tfile_reader *t, long tpnum,
		     const uint8_t *body, size_t len, uint64_t number,
		     struct frame_view *v);
/* Reads on from the frame at `offset` (a frame_view's), numbering it
 * `number`; -errno. */
int tfile_reader_seek(struct tfile_reader *t, uint64_t offset,
		      uint64_t number);

const char *tfile_lookup(const struct tfile_named *tab, size_t n, long num);
/* The probe's name, or "tracepoint N at 0xADDR" in buf. */
const char *tfile_probe_name(const struct tfile_reader *t, long tpnum,
			     char *buf, size_t size);
/* The name the TSV of number num has in the frame's file, or NULL. */
const char *tfile_tsv_name(const struct tfile_reader *t, long num);
/* The value of the frame's TSV named `name`. */
bool frame_tsv(const struct frame_view *v, const struct tfile_reader *t,
	       const char *name, int64_t *out);
/* Frames of the tracepoint that record --tid/--comm dropped. */
uint64_t tfile_rec_filtered(const struct tfile_reader *t, long tpnum);
/* Tracepoint `tpnum`'s stops while recording, or NULL when the file does
 * not say (an older recorder or agent, or no such probe). */
const struct tfile_stops *tfile_rec_stops(const struct tfile_reader *t, long tpnum);
/* "HOW, N stops (the ring was full F times; W waited for room in the
 * buffer)", the parts in parentheses only when not 0. */
void tfile_stops_text(char *buf, size_t size, const char *how, uint64_t stops,
		      uint64_t ring_full, uint64_t waited);
/* The thread's name from the table, or NULL. */
const char *tfile_thread_name(const struct tfile_reader *t, int64_t tid);
/* probe-trace's own TSVs print as arg0, retval...; others as named. */
const char *tfile_value_name(const char *tsv);
/* s as a JSON string, quotes included. */
void tfile_json_str(FILE *out, const char *s);
/* The little-endian n-byte value at p. */
uint64_t tfile_le_value(const uint8_t *p, size_t n);

/* ---- which frames a command looks at ---- */

struct frame_filter {
	long pid;			/* 0: any */
	int64_t *tids;			/* any of them; none: any */
	size_t ntids;
	const char *comm;		/* thread name (glob), NULL: any */
	bool active;
};

/* Parses --pid/--tid/--comm values (lists with commas for --tid);
 * -EINVAL with a message on stderr. */
int frame_filter_add(struct frame_filter *ff, char opt, const char *arg,
		     const char *who);
/* Checks the filter can work on this file: --pid and --comm need the
 * thread table; -EINVAL with a message otherwise. */
int frame_filter_check(const struct frame_filter *ff,
		       const struct tfile_reader *t);
bool frame_filter_match(const struct frame_filter *ff,
			const struct tfile_reader *t,
			const struct frame_view *v);
void frame_filter_free(struct frame_filter *ff);

#endif
