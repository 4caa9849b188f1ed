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

#include "client/export.h"
#include "client/frame-print.h"
#include "client/probe-trace.h"
#include "client/record.h"
#include "client/tfile-read.h"
#include "protocol/rsp.h"
#include "protocol/tp-status.h"

struct probe_stats {
	uint64_t frames;
	uint64_t lost;			/* no room for them (status `lost:`) */
	int64_t lat_min, lat_max;
	double lat_sum;
	uint64_t lat_n;
};

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
			printf(",\"frames\":%" PRIu64 ",\"lost\":%" PRIu64,
			       stats[tp].frames, stats[tp].lost);
			const struct tfile_stops *st = tfile_rec_stops(t, tp);
			if (st) {
				printf(",\"recorded_by\":");
				tfile_json_str(stdout, st->how);
				printf(",\"stops\":%" PRIu64 ",\"ring_full\":%" PRIu64
				       ",\"waited\":%" PRIu64, st->stops, st->ring_full,
				       st->waited);
			}
			putchar('}');
			first = false;
		}
		for (size_t i = 0; i < t->nrec_hist; i++) {
			const struct tfile_hist *hg = &t->rec_hist[i];
			printf("%s{\"tracepoint\":%ld,\"probe\":", first ? "" : ",", hg->num);
			tfile_json_str(stdout, tfile_probe_name(t, hg->num, buf, sizeof(buf)));
			printf(",\"frames\":0,\"hist_calls\":%" PRIu64 ",\"hist_sum_ns\":%" PRIu64 "}",
			       hg->n, hg->sum);
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
		/* How the recording ran it, when the file says (record's
		 * closing line for the probe). */
		const struct tfile_stops *st = tfile_rec_stops(t, tp);
		if (st) {
			char text[256];
			tfile_stops_text(text, sizeof(text), st->how, st->stops,
					 st->ring_full, st->waited);
			printf("    recorded by %s\n", text);
		}
	}
	for (size_t i = 0; i < t->nrec_hist; i++) {
		const struct tfile_hist *hg = &t->rec_hist[i];
		printf("  %-32s %10" PRIu64 " calls in a histogram (probe-trace report shows it)",
		       tfile_probe_name(t, hg->num, buf, sizeof(buf)), hg->n);
		if (hg->n)
			printf("   latency avg %.3fus", (double)(hg->sum / hg->n) / 1000.0);
		putchar('\n');
	}
}

enum dump_format { FMT_TEXT, FMT_JSON, FMT_CHROME, FMT_CTF };

static const char *const who = "probe-trace dump";

/* What the command line asks of dump. */
struct dump_opts {
	enum dump_format format;
	bool summary, force;
	const char *output;	/* -o: chrome's file, ctf's directory */
	uint64_t limit;		/* frames printed at most */
	struct frame_filter ff;
	const char *file;
};

/* --format's word, or -1 (said). */
static int parse_format(const char *word)
{
	if (!strcmp(word, "text"))
		return FMT_TEXT;
	if (!strcmp(word, "json"))
		return FMT_JSON;
	if (!strcmp(word, "chrome"))
		return FMT_CHROME;
	if (!strcmp(word, "ctf"))
		return FMT_CTF;
	fprintf(stderr, "%s: --format: '%s' is none of text, json, chrome, ctf\n",
		who, word);
	return -1;
}

/* The options that only go together, or not at all; -1 when they do not
 * (said). */
static int check_dump_opts(const struct dump_opts *o)
{
	if (o->summary && (o->format == FMT_CHROME || o->format == FMT_CTF)) {
		fprintf(stderr, "%s: --summary and --format=%s exclude each other\n",
			who, o->format == FMT_CTF ? "ctf" : "chrome");
		return -1;
	}
	if (o->format == FMT_CTF && !o->output) {
		fprintf(stderr, "%s: --format=ctf needs -o DIR, the directory to "
			"create\n", who);
		return -1;
	}
	if (o->output && o->format != FMT_CHROME && o->format != FMT_CTF) {
		fprintf(stderr, "%s: -o is for --format=chrome and --format=ctf\n",
			who);
		return -1;
	}
	return 0;
}

/* Parses dump's command line into *o: 0, 1 when --help was answered, -1
 * on a usage error (said). */
static int parse_dump_args(int argc, char **argv, struct dump_opts *o)
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
	int opt, f;
	char *end;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "ho:f", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j': o->format = FMT_JSON; break;
		case 'F':
			if ((f = parse_format(optarg)) < 0)
				return -1;
			o->format = f;
			break;
		case 'o': o->output = optarg; break;
		case 'f': o->force = true; break;
		case 's': o->summary = true; break;
		case 'n':
			o->limit = strtoull(optarg, &end, 10);
			if (*end || !*optarg) {
				fprintf(stderr, "%s: --limit: '%s' is not a number\n",
					who, optarg);
				return -1;
			}
			break;
		case 'P':
		case 'T':
		case 'C':
			if (frame_filter_add(&o->ff, opt == 'P' ? 'p' : opt == 'T' ? 't' : 'c',
					     optarg, who) < 0)
				return -1;
			break;
		case 'h': usage(stdout); return 1;
		default: usage(stderr); return -1;
		}
	}
	if (optind + 1 != argc) {
		if (optind == argc)
			fprintf(stderr, "%s: no trace file given\n", who);
		else
			fprintf(stderr, "%s: one trace file only, not '%s'\n", who,
				argv[optind + 1]);
		usage(stderr);
		return -1;
	}
	o->file = argv[optind];
	return check_dump_opts(o);
}

/* Counts frame v in its probe's statistics (frames, latency). */
static void count_frame(struct probe_stats *stats, struct tfile_reader *t,
			struct frame_view *v)
{
	struct probe_stats *s = &stats[v->tpnum];
	int64_t lat;

	s->frames++;
	if (frame_tsv(v, t, "probe_latency_ns", &lat)) {
		if (!s->lat_n || lat < s->lat_min)
			s->lat_min = lat;
		if (!s->lat_n || lat > s->lat_max)
			s->lat_max = lat;
		s->lat_sum += (double)lat;
		s->lat_n++;
	}
}

/* Prints (text, JSON) or summarizes the frames of t that pass the
 * filters; a PT_EXIT_* code. */
static int dump_frames(struct tfile_reader *t, const struct dump_opts *o)
{
	uint64_t number = 0, filtered = 0;
	struct probe_stats *stats = calloc(0x8000, sizeof(*stats));
	int rc = PT_EXIT_OK, r;

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
		if (!frame_filter_match(&o->ff, t, &v)) {
			filtered++;
			continue;
		}
		if (v.tpnum > 0)
			count_frame(stats, t, &v);
		if (!o->summary && number < o->limit) {
			if (o->format == FMT_JSON)
				frame_print_json(stdout, t, &v);
			else
				frame_print_text(stdout, t, &v);
		}
		number++;
	}
	if (t->truncated)
		fprintf(stderr, "%s: %s ends inside a frame or before "
			"its end marker: read up to frame %" PRIu64 "\n",
			who, o->file, t->number);
	if (o->summary)
		print_summary(t, stats, number, filtered, o->format == FMT_JSON);
	else if (filtered)
		fprintf(stderr, "%s: %" PRIu64 " of %" PRIu64 " frames did not "
			"pass the filters\n", who, filtered, t->number);
	free(stats);
	return rc;
}

int cmd_dump(int argc, char **argv)
{
	struct dump_opts o = { .format = FMT_TEXT, .limit = UINT64_MAX };
	struct tfile_reader *t;
	int rc, r = parse_dump_args(argc, argv, &o);

	if (r != 0) {
		frame_filter_free(&o.ff);
		return r > 0 ? PT_EXIT_OK : PT_EXIT_USAGE;
	}
	t = malloc(sizeof(*t));
	if (!t)
		abort();
	if (tfile_reader_open(t, o.file, who) < 0 ||
	    frame_filter_check(&o.ff, t) < 0) {
		rc = PT_EXIT_FAIL;
	} else if (o.format == FMT_CHROME || o.format == FMT_CTF) {
		struct export_opts eo = {
			.output = o.output, .force = o.force, .limit = o.limit,
			.filter = &o.ff, .who = who,
		};
		rc = o.format == FMT_CHROME ? export_chrome(t, &eo) : export_ctf(t, &eo);
	} else {
		rc = dump_frames(t, &o);
	}
	tfile_reader_close(t);
	free(t);
	frame_filter_free(&o.ff);
	return rc;
}
