/*
 * dump.c - `probe-trace dump`: the frames of a trace file as text or JSON
 * lines, a summary, or an export for other tools (chrome.c, ctf.c).
 *
 * The file is read by tfile-read.c, whoever wrote it; a file cut short
 * (the recorder was killed while writing) is read up to its last whole
 * frame.  --pid, --tid and --comm choose the frames every form shows.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/export.h"
#include "client/probe-trace.h"
#include "client/record.h"
#include "client/tfile-read.h"
#include "client/typed.h"
#include "protocol/rsp.h"
#include "protocol/tp-status.h"

struct probe_stats {
	uint64_t frames;
	uint64_t lost;			/* no room for them (status `lost:`) */
	int64_t lat_min, lat_max;
	double lat_sum;
	uint64_t lat_n;
};

static void print_time(FILE *out, int64_t us)
{
	time_t sec = (time_t)(us / 1000000);
	struct tm tm;
	char buf[32];

	localtime_r(&sec, &tm);
	strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
	fprintf(out, "%s.%06lld", buf, (long long)(us % 1000000));
}

/* ---- typed values: the frame as typed.c reads it ---- */

struct typed_frame {
	const struct tfile_reader *t;
	const struct frame_view *v;
};

static const uint8_t *typed_reg(void *ctx, unsigned int regnum, size_t *size)
{
	const struct typed_frame *f = ctx;

	if (!f->v->regs || !f->t->have_regs || regnum >= f->t->regs.nregs ||
	    !f->t->regs.regs[regnum].name)
		return NULL;
	*size = f->t->regs.regs[regnum].bitsize / 8;
	return f->v->regs + f->t->regs.regs[regnum].offset;
}

static size_t typed_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct typed_frame *f = ctx;
	size_t got = 0;

	while (got < len) {
		uint64_t a = addr + got;
		size_t m;
		for (m = 0; m < f->v->nmem; m++)
			if (a >= f->v->mem[m].addr &&
			    a < f->v->mem[m].addr + f->v->mem[m].len)
				break;
		if (m == f->v->nmem)
			break;
		size_t n = (size_t)(f->v->mem[m].addr + f->v->mem[m].len - a);
		if (n > len - got)
			n = len - got;
		memcpy((uint8_t *)buf + got, f->v->mem[m].data + (a - f->v->mem[m].addr), n);
		got += n;
	}
	return got;
}

static int typed_tsv(void *ctx, unsigned int num, int64_t *value)
{
	const struct typed_frame *f = ctx;

	for (size_t i = 0; i < f->v->ntsv; i++)
		if (f->v->tsv_num[i] == (long)num) {
			*value = f->v->tsv_val[i];
			return 0;
		}
	return -ENOENT;
}

/* The typed values of a frame's tracepoint (its location by pc). */
static const struct typed_probe *frame_typed(const struct tfile_reader *t,
					     const struct frame_view *v,
					     struct typed_frame *tf,
					     struct typed_src *src)
{
	const struct typed_probe *p = typed_file_find(&t->typed, v->tpnum, 0);
	size_t size = 0;

	tf->t = t;
	tf->v = v;
	*src = (struct typed_src){ typed_reg, typed_mem, tf, typed_tsv };
	if (p && p->pc_reg >= 0) {
		const uint8_t *pc = typed_reg(tf, (unsigned)p->pc_reg, &size);
		if (pc && size == 8)
			p = typed_file_find(&t->typed, v->tpnum, tfile_le_value(pc, 8));
	}
	return p;
}

static void print_text(FILE *out, const struct tfile_reader *t,
		       const struct frame_view *v)
{
	char buf[96];
	int64_t x;
	struct typed_frame tf;
	struct typed_src src;
	const struct typed_probe *typed = frame_typed(t, v, &tf, &src);

	fprintf(out, "#%" PRIu64 " %s", v->number,
		tfile_probe_name(t, v->tpnum, buf, sizeof(buf)));
	if (typed) {
		struct rsp_buf b;
		rsp_buf_init(&b);
		typed_render_text(typed, &src, &b);
		fwrite(b.data, 1, b.len, out);
		rsp_buf_free(&b);
	}
	if (frame_tsv(v, t, "probe_thread", &x)) {
		const char *name = tfile_thread_name(t, x);
		fprintf(out, "  thread %lld", (long long)x);
		if (name)
			fprintf(out, " (%s)", name);
	}
	if (frame_tsv(v, t, "trace_timestamp", &x)) {
		fputs("  ", out);
		print_time(out, x);
	}
	for (size_t i = 0; i < v->ntsv; i++) {
		const char *n = tfile_tsv_name(t, v->tsv_num[i]);
		if (!n || !strcmp(n, "probe_thread") || !strcmp(n, "trace_timestamp"))
			continue;
		if (!strcmp(n, "probe_latency_ns")) {
			fprintf(out, "  latency %.3fus", (double)v->tsv_val[i] / 1000.0);
			continue;
		}
		n = tfile_value_name(n);
		if (v->tsv_val[i] < 0 || v->tsv_val[i] > 0xffffff)
			fprintf(out, "  %s=%lld (0x%llx)", n, (long long)v->tsv_val[i],
				(unsigned long long)v->tsv_val[i]);
		else
			fprintf(out, "  %s=%lld", n, (long long)v->tsv_val[i]);
	}
	fputc('\n', out);
	if (v->regs && t->have_regs && !(typed && typed->hide_regs)) {
		int col = 0;
		for (size_t i = 0; i < t->regs.nregs; i++) {
			const struct target_reg *r = &t->regs.regs[i];
			if (!r->name || r->bitsize > 64)
				continue;
			fprintf(out, "%s%8s 0x%016" PRIx64, col ? "  " : "    ",
				r->name, tfile_le_value(v->regs + r->offset, r->bitsize / 8));
			if (++col == 3) {
				fputc('\n', out);
				col = 0;
			}
		}
		if (col)
			fputc('\n', out);
	}
	for (size_t m = 0; m < v->nmem && !(typed && typed->hide_mem); m++) {
		for (size_t o = 0; o < v->mem[m].len; o += 16) {
			size_t n = v->mem[m].len - o < 16 ? v->mem[m].len - o : 16;
			fprintf(out, "    0x%016" PRIx64 ": ", v->mem[m].addr + o);
			for (size_t k = 0; k < 16; k++) {
				if (k < n)
					fprintf(out, "%02x ", v->mem[m].data[o + k]);
				else
					fputs("   ", out);
			}
			fputc(' ', out);
			for (size_t k = 0; k < n; k++) {
				uint8_t c = v->mem[m].data[o + k];
				fputc(c >= 0x20 && c < 0x7f ? c : '.', out);
			}
			fputc('\n', out);
		}
	}
}

static void print_json(FILE *out, const struct tfile_reader *t,
		       const struct frame_view *v)
{
	char buf[96];
	bool first = true;
	int64_t x;
	struct typed_frame tf;
	struct typed_src src;
	const struct typed_probe *typed = frame_typed(t, v, &tf, &src);

	fprintf(out, "{\"frame\":%" PRIu64 ",\"tracepoint\":%ld,\"probe\":",
		v->number, v->tpnum);
	tfile_json_str(out, tfile_probe_name(t, v->tpnum, buf, sizeof(buf)));
	if (frame_tsv(v, t, "probe_thread", &x) && tfile_thread_name(t, x)) {
		fputs(",\"comm\":", out);
		tfile_json_str(out, tfile_thread_name(t, x));
	}
	fputs(",\"values\":{", out);
	for (size_t i = 0; i < v->ntsv; i++) {
		const char *n = tfile_tsv_name(t, v->tsv_num[i]);
		char num[24];
		if (!n) {
			snprintf(num, sizeof(num), "tsv%ld", v->tsv_num[i]);
			n = num;
		}
		n = tfile_value_name(n);
		fputs(first ? "" : ",", out);
		tfile_json_str(out, n);
		fprintf(out, ":%lld", (long long)v->tsv_val[i]);
		first = false;
	}
	fputc('}', out);
	if (typed) {
		struct rsp_buf b;
		rsp_buf_init(&b);
		typed_render_json(typed, &src, &b);
		fputc(',', out);
		fwrite(b.data, 1, b.len, out);
		rsp_buf_free(&b);
	}
	if (v->regs && t->have_regs && !(typed && typed->hide_regs)) {
		fputs(",\"registers\":{", out);
		first = true;
		for (size_t i = 0; i < t->regs.nregs; i++) {
			const struct target_reg *r = &t->regs.regs[i];
			if (!r->name || r->bitsize > 64)
				continue;
			fputs(first ? "" : ",", out);
			tfile_json_str(out, r->name);
			fprintf(out, ":\"0x%" PRIx64 "\"",
				tfile_le_value(v->regs + r->offset, r->bitsize / 8));
			first = false;
		}
		fputc('}', out);
	}
	if (v->nmem && !(typed && typed->hide_mem)) {
		fputs(",\"memory\":[", out);
		for (size_t m = 0; m < v->nmem; m++) {
			fprintf(out, "%s{\"address\":\"0x%" PRIx64 "\",\"bytes\":\"",
				m ? "," : "", v->mem[m].addr);
			for (size_t k = 0; k < v->mem[m].len; k++)
				fprintf(out, "%02x", v->mem[m].data[k]);
			fputs("\"}", out);
		}
		fputc(']', out);
	}
	fputs("}\n", out);
}

static void usage(FILE *out)
{
	fprintf(out,
"Usage: probe-trace dump [OPTIONS] FILE\n"
"Prints every frame of a trace file: probe, thread, time, the collected\n"
"values (arguments, return value, latency; typed when the recording had\n"
"DWARF: process_order(o=0x7ffe... {id=1, price=1.25}), f%%return = -3),\n"
"registers by name and memory; or exports the frames for other tools.\n"
"\n"
"  --format=FORMAT  text (the default), json (one object per frame and\n"
"                   line), chrome (Trace Event JSON for Perfetto and\n"
"                   chrome://tracing) or ctf (CTF 1.8 for babeltrace2)\n"
"  --json           --format=json\n"
"  -o, --output=OUT where chrome writes (default: standard output) or the\n"
"                   directory ctf creates (required)\n"
"  -f, --force      replace an existing OUT\n"
"  --summary        frames per probe (and latency of return probes) only\n"
"  --limit N        the first N frames (that pass the filters) only\n"
"  --pid PID        the frames of process PID only\n"
"  --tid TID[,TID...]  the frames of these threads only\n"
"  --comm NAME      the frames of threads named NAME (a glob) only\n"
"  -h, --help       this help\n");
}

static void add_lost(uint32_t tp, uint64_t count, void *arg)
{
	struct probe_stats *stats = arg;

	if (tp > 0 && tp < 0x8000)
		stats[tp].lost += count;
}

static void print_summary(const struct tfile_reader *t,
			  const struct probe_stats *stats, uint64_t number,
			  uint64_t filtered, bool json)
{
	char buf[96];

	if (json) {
		printf("{\"frames\":%" PRIu64 ",\"lost\":%" PRIu64, number,
		       t->have_status ? t->status.lost : 0);
		if (filtered)
			printf(",\"filtered_out\":%" PRIu64, filtered);
		if (t->rec_filter)
			printf(",\"dropped_at_record\":%" PRIu64, t->rec_filtered);
		printf(",\"probes\":[");
		bool first = true;
		for (int tp = 1; tp < 0x8000; tp++) {
			if (!stats[tp].frames && !stats[tp].lost)
				continue;
			printf("%s{\"tracepoint\":%d,\"probe\":", first ? "" : ",", tp);
			tfile_json_str(stdout, tfile_probe_name(t, tp, buf, sizeof(buf)));
			printf(",\"frames\":%" PRIu64 ",\"lost\":%" PRIu64 "}",
			       stats[tp].frames, stats[tp].lost);
			first = false;
		}
		printf("]}\n");
		return;
	}
	printf("%" PRIu64 " frames\n", number);
	if (filtered)
		printf("  %" PRIu64 " more frames did not pass the filters\n",
		       filtered);
	if (t->rec_filter)
		printf("  %" PRIu64 " more frames of other threads were dropped "
		       "while recording (record --tid/--comm)\n", t->rec_filtered);
	if (t->have_status && t->status.lost)
		printf("  %" PRIu64 " more frames were lost: the buffer had no "
		       "room for them\n", t->status.lost);
	if (t->have_status) {
		const struct tp_status *st = &t->status;
		if (st->reason == TP_STOP_FULL)
			printf("  the recording stopped early: the buffer filled; "
			       "later hits were not recorded\n");
		else if (st->reason == TP_STOP_ERROR)
			printf("  the recording stopped early: tracepoint %u: %s\n",
			       (unsigned)st->stopping_tp,
			       st->error ? st->error : "error");
		else if (st->reason == TP_STOP_PASSCOUNT)
			printf("  the recording stopped: tracepoint %u reached its "
			       "pass count\n", (unsigned)st->stopping_tp);
	}
	for (int tp = 1; tp < 0x8000; tp++) {
		const struct probe_stats *s = &stats[tp];
		if (!s->frames && !s->lost && !tfile_rec_filtered(t, tp))
			continue;
		printf("  %-32s %10" PRIu64 " frames", tfile_probe_name(t, tp, buf, sizeof(buf)),
		       s->frames);
		if (s->lost)
			printf(" %10" PRIu64 " lost", s->lost);
		if (tfile_rec_filtered(t, tp))
			printf(" %10" PRIu64 " dropped", tfile_rec_filtered(t, tp));
		if (s->lat_n)
			printf("   latency min %.3fus avg %.3fus max %.3fus",
			       (double)s->lat_min / 1000.0,
			       s->lat_sum / (double)s->lat_n / 1000.0,
			       (double)s->lat_max / 1000.0);
		putchar('\n');
	}
}

enum dump_format { FMT_TEXT, FMT_JSON, FMT_CHROME, FMT_CTF };

int cmd_dump(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "format", required_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "summary", no_argument, NULL, 's' },
		{ "limit", required_argument, NULL, 'n' },
		{ "pid", required_argument, NULL, 'P' },
		{ "tid", required_argument, NULL, 'T' },
		{ "comm", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const who = "probe-trace dump";
	enum dump_format format = FMT_TEXT;
	bool summary = false, force = false;
	const char *output = NULL;
	uint64_t limit = UINT64_MAX, number = 0, filtered = 0;
	struct frame_filter ff = { 0 };
	struct tfile_reader *t;
	struct probe_stats *stats = NULL;
	int opt, rc = PT_EXIT_OK, r;
	char *end;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "ho:f", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j': format = FMT_JSON; break;
		case 'F':
			if (!strcmp(optarg, "text"))
				format = FMT_TEXT;
			else if (!strcmp(optarg, "json"))
				format = FMT_JSON;
			else if (!strcmp(optarg, "chrome"))
				format = FMT_CHROME;
			else if (!strcmp(optarg, "ctf"))
				format = FMT_CTF;
			else {
				fprintf(stderr, "%s: --format: '%s' is none of text, "
					"json, chrome, ctf\n", who, optarg);
				goto usage_error;
			}
			break;
		case 'o': output = optarg; break;
		case 'f': force = true; break;
		case 's': summary = true; break;
		case 'n':
			limit = strtoull(optarg, &end, 10);
			if (*end || !*optarg) {
				fprintf(stderr, "%s: --limit: '%s' is not a number\n",
					who, optarg);
				goto usage_error;
			}
			break;
		case 'P':
		case 'T':
		case 'C':
			if (frame_filter_add(&ff, opt == 'P' ? 'p' : opt == 'T' ? 't' : 'c',
					     optarg, who) < 0)
				goto usage_error;
			break;
		case 'h': usage(stdout); frame_filter_free(&ff); return PT_EXIT_OK;
		default: usage(stderr); goto usage_error;
		}
	}
	if (optind + 1 != argc) {
		if (optind == argc)
			fprintf(stderr, "%s: no trace file given\n", who);
		else
			fprintf(stderr, "%s: one trace file only, not '%s'\n", who,
				argv[optind + 1]);
		usage(stderr);
		goto usage_error;
	}
	if (summary && (format == FMT_CHROME || format == FMT_CTF)) {
		fprintf(stderr, "%s: --summary and --format=%s exclude each other\n",
			who, format == FMT_CTF ? "ctf" : "chrome");
		goto usage_error;
	}
	if (format == FMT_CTF && !output) {
		fprintf(stderr, "%s: --format=ctf needs -o DIR, the directory to "
			"create\n", who);
		goto usage_error;
	}
	if (output && format != FMT_CHROME && format != FMT_CTF) {
		fprintf(stderr, "%s: -o is for --format=chrome and --format=ctf\n",
			who);
		goto usage_error;
	}
	t = malloc(sizeof(*t));
	if (!t)
		abort();
	if (tfile_reader_open(t, argv[optind], who) < 0 ||
	    frame_filter_check(&ff, t) < 0) {
		rc = PT_EXIT_FAIL;
		goto out;
	}
	if (format == FMT_CHROME || format == FMT_CTF) {
		struct export_opts eo = {
			.output = output, .force = force, .limit = limit,
			.filter = &ff, .who = who,
		};
		rc = format == FMT_CHROME ? export_chrome(t, &eo) : export_ctf(t, &eo);
		goto out;
	}
	stats = calloc(0x8000, sizeof(*stats));
	if (!stats)
		abort();
	if (t->status_line)
		tp_status_lost(t->status_line, add_lost, stats);
	for (;;) {
		struct frame_view v;

		r = tfile_reader_next(t, &v);
		if (r < 0)
			rc = PT_EXIT_FAIL;
		if (r <= 0)
			break;
		if (!frame_filter_match(&ff, t, &v)) {
			filtered++;
			continue;
		}
		if (v.tpnum > 0) {
			struct probe_stats *s = &stats[v.tpnum];
			int64_t lat;
			s->frames++;
			if (frame_tsv(&v, t, "probe_latency_ns", &lat)) {
				if (!s->lat_n || lat < s->lat_min)
					s->lat_min = lat;
				if (!s->lat_n || lat > s->lat_max)
					s->lat_max = lat;
				s->lat_sum += (double)lat;
				s->lat_n++;
			}
		}
		if (!summary && number < limit) {
			if (format == FMT_JSON)
				print_json(stdout, t, &v);
			else
				print_text(stdout, t, &v);
		}
		number++;
	}
	if (t->truncated)
		fprintf(stderr, "%s: %s ends inside a frame or before "
			"its end marker: read up to frame %" PRIu64 "\n",
			who, argv[optind], t->number);
	if (summary)
		print_summary(t, stats, number, filtered, format == FMT_JSON);
	else if (filtered)
		fprintf(stderr, "%s: %" PRIu64 " of %" PRIu64 " frames did not "
			"pass the filters\n", who, filtered, t->number);
out:
	free(stats);
	tfile_reader_close(t);
	free(t);
	frame_filter_free(&ff);
	return rc;
usage_error:
	frame_filter_free(&ff);
	return PT_EXIT_USAGE;
}
