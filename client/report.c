/*
 * report.c - `probe-trace report`: what a recording says, per probe (and
 * per thread with --per-thread): how many hits, and for return probes
 * the latency's percentiles and log2 histogram and the return value's
 * log2 histogram; --hist=VALUE draws another collected value instead
 * (an argument, for entry probes too).  The numbers come from stats.c.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/probe-trace.h"
#include "client/record.h"
#include "protocol/stats.h"
#include "client/tfile-read.h"
#include "protocol/tp-status.h"

#define MAX_TP 0x8000

struct group {
	long tpnum;
	int64_t tid;			/* 0: every thread */
	uint64_t hits;
	int64_t *lat;			/* latencies (ns) */
	size_t nlat, caplat;
	struct log2_hist lat_hist, val_hist;
	uint64_t val_missing;		/* frames without the value */
};

struct report {
	struct tfile_reader *t;
	const char *hist;		/* the value to draw; NULL: retval */
	bool per_thread;
	struct group *g;
	size_t ng, capg;
	uint64_t lost[MAX_TP];
};

static struct group *group_of(struct report *rp, long tpnum, int64_t tid)
{
	struct group *g;

	for (size_t i = rp->ng; i-- > 0;)
		if (rp->g[i].tpnum == tpnum && rp->g[i].tid == tid)
			return &rp->g[i];
	if (rp->ng == rp->capg) {
		rp->capg = rp->capg ? rp->capg * 2 : 16;
		rp->g = realloc(rp->g, rp->capg * sizeof(*rp->g));
		if (!rp->g)
			abort();
	}
	g = &rp->g[rp->ng++];
	memset(g, 0, sizeof(*g));
	g->tpnum = tpnum;
	g->tid = tid;
	return g;
}

/* The frame's value that --hist names ("arg0", "retval", a TSV name). */
static bool hist_value(const struct report *rp, const struct frame_view *v,
		       int64_t *out)
{
	const char *want = rp->hist ? rp->hist : "retval";

	for (size_t i = 0; i < v->ntsv; i++) {
		const char *n = tfile_tsv_name(rp->t, v->tsv_num[i]);
		if (n && (!strcmp(tfile_value_name(n), want) || !strcmp(n, want))) {
			*out = v->tsv_val[i];
			return true;
		}
	}
	return false;
}

static void add(struct report *rp, struct group *g, const struct frame_view *v)
{
	int64_t lat, val;

	g->hits++;
	if (frame_tsv(v, rp->t, "probe_latency_ns", &lat)) {
		if (g->nlat == g->caplat) {
			g->caplat = g->caplat ? g->caplat * 2 : 256;
			g->lat = realloc(g->lat, g->caplat * sizeof(*g->lat));
			if (!g->lat)
				abort();
		}
		g->lat[g->nlat++] = lat;
		log2_hist_add(&g->lat_hist, lat);
	}
	if (hist_value(rp, v, &val))
		log2_hist_add(&g->val_hist, val);
	else
		g->val_missing++;
}

static void put_ns(int64_t ns)
{
	printf("%lld.%03lldus", (long long)(ns / 1000), (long long)(ns % 1000));
}

/* How the recording ran probe tp (record's line), when the file says. */
static void put_recorded_by(const struct tfile_reader *t, long tp)
{
	const struct tfile_stops *st = tfile_rec_stops(t, tp);
	char text[256];

	if (!st)
		return;
	tfile_stops_text(text, sizeof(text), st->how, st->stops, st->ring_full, st->waited);
	printf("  recorded by %s\n", text);
}

static void print_group(const struct report *rp, struct group *g, int indent)
{
	const char *vname = rp->hist ? rp->hist : "retval";

	if (g->nlat) {
		sort_values(g->lat, g->nlat);
		printf("%*slatency  p50 ", indent, "");
		put_ns(percentile(g->lat, g->nlat, 50));
		printf("  p90 ");
		put_ns(percentile(g->lat, g->nlat, 90));
		printf("  p99 ");
		put_ns(percentile(g->lat, g->nlat, 99));
		printf("  max ");
		put_ns(g->lat[g->nlat - 1]);
		printf("  (%zu returns)\n", g->nlat);
		printf("%*slatency (ns):\n", indent, "");
		log2_hist_print(stdout, &g->lat_hist, indent + 2);
	}
	if (g->val_hist.n) {
		printf("%*s%s:\n", indent, "", vname);
		log2_hist_print(stdout, &g->val_hist, indent + 2);
		if (g->val_missing)
			printf("%*s(%" PRIu64 " hits without %s)\n", indent + 2, "",
			       g->val_missing, vname);
	}
}

static int cmp_group(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->tpnum != y->tpnum)
		return x->tpnum < y->tpnum ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static void add_lost(uint32_t tp, uint64_t count, void *arg)
{
	uint64_t *lost = arg;

	if (tp > 0 && tp < MAX_TP)
		lost[tp] += count;
}

static void usage(FILE *out)
{
	fprintf(out,
"Usage: probe-trace report [OPTIONS] FILE\n"
"Per probe of a trace file: the hits, how the recording ran it and how\n"
"many hits stopped the program (when the file says), and for return\n"
"probes the latency's percentiles (p50, p90, p99, max) and log2\n"
"histogram and the return value's log2 histogram.\n"
"\n"
"  --hist=VALUE     draw VALUE (arg0, arg1, ..., retval, or a trace state\n"
"                   variable's name) instead of retval, for every probe\n"
"                   that collects it\n"
"  --per-thread     the same for each thread of each probe\n"
"  --pid PID        the frames of process PID only\n"
"  --tid TID[,TID...]  the frames of these threads only\n"
"  --comm NAME      the frames of threads named NAME (a glob) only\n"
"  -h, --help       this help\n");
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "hist", required_argument, NULL, 'H' },
		{ "per-thread", no_argument, NULL, 'p' },
		{ "pid", required_argument, NULL, 'P' },
		{ "tid", required_argument, NULL, 'T' },
		{ "comm", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const who = "probe-trace report";
	struct frame_filter ff = { 0 };
	struct report *rp;
	struct tfile_reader *t;
	uint64_t filtered = 0, taken = 0;
	int opt, rc = PT_EXIT_OK, r;
	char buf[96];

	rp = calloc(1, sizeof(*rp));
	if (!rp)
		abort();
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'H':
			if (!*optarg) {
				fprintf(stderr, "%s: --hist: name a value (arg0, retval...)\n",
					who);
				goto usage_error;
			}
			rp->hist = optarg;
			break;
		case 'p': rp->per_thread = true; break;
		case 'P':
		case 'T':
		case 'C':
			if (frame_filter_add(&ff, opt == 'P' ? 'p' : opt == 'T' ? 't' : 'c',
					     optarg, who) < 0)
				goto usage_error;
			break;
		case 'h':
			usage(stdout);
			frame_filter_free(&ff);
			free(rp);
			return PT_EXIT_OK;
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
	t = malloc(sizeof(*t));
	if (!t)
		abort();
	rp->t = t;
	if (tfile_reader_open(t, argv[optind], who) < 0 ||
	    frame_filter_check(&ff, t) < 0) {
		rc = PT_EXIT_FAIL;
		goto out;
	}
	if (t->status_line)
		tp_status_lost(t->status_line, add_lost, rp->lost);
	for (;;) {
		struct frame_view v;
		int64_t tid = 0;

		r = tfile_reader_next(t, &v);
		if (r < 0)
			rc = PT_EXIT_FAIL;
		if (r <= 0)
			break;
		if (!frame_filter_match(&ff, t, &v)) {
			filtered++;
			continue;
		}
		taken++;
		add(rp, group_of(rp, v.tpnum, 0), &v);
		if (rp->per_thread && frame_tsv(&v, t, "probe_thread", &tid))
			add(rp, group_of(rp, v.tpnum, tid), &v);
	}
	if (t->truncated)
		fprintf(stderr, "%s: %s ends inside a frame or before its end marker: "
			"read up to frame %" PRIu64 "\n", who, argv[optind], t->number);
	if (rp->ng)
		qsort(rp->g, rp->ng, sizeof(*rp->g), cmp_group);
	printf("%" PRIu64 " frames", taken);
	if (filtered)
		printf(" (%" PRIu64 " more did not pass the filters)", filtered);
	if (t->rec_filter)
		printf(", %" PRIu64 " of other threads dropped while recording "
		       "(record --tid/--comm)", t->rec_filtered);
	if (t->have_status && t->status.lost)
		printf(", %" PRIu64 " lost for want of room", t->status.lost);
	putchar('\n');
	for (size_t i = 0; i < rp->ng; i++) {
		struct group *g = &rp->g[i];
		if (g->tid)
			continue;
		printf("\n%s: %" PRIu64 " hits",
		       tfile_probe_name(t, g->tpnum, buf, sizeof(buf)), g->hits);
		if (g->tpnum > 0 && g->tpnum < MAX_TP && rp->lost[g->tpnum])
			printf(", %" PRIu64 " lost", rp->lost[g->tpnum]);
		if (tfile_rec_filtered(t, g->tpnum))
			printf(", %" PRIu64 " dropped while recording",
			       tfile_rec_filtered(t, g->tpnum));
		putchar('\n');
		put_recorded_by(t, g->tpnum);
		print_group(rp, g, 2);
		for (size_t k = i + 1; k < rp->ng && rp->g[k].tpnum == g->tpnum; k++) {
			struct group *tg = &rp->g[k];
			const char *name = tfile_thread_name(t, tg->tid);
			printf("  thread %lld%s%s%s: %" PRIu64 " hits\n",
			       (long long)tg->tid, name ? " (" : "", name ? name : "",
			       name ? ")" : "", tg->hits);
			print_group(rp, tg, 4);
		}
	}
	/* The `hist` probes: no frames, their histogram as record kept it
	 * (whatever the filters: it has no threads). */
	for (size_t i = 0; i < t->nrec_hist; i++) {
		const struct tfile_hist *hg = &t->rec_hist[i];
		struct log2_hist h = { .zero = hg->zero, .n = hg->n };
		memcpy(h.b, hg->b, sizeof(h.b));
		printf("\n%s: %" PRIu64 " calls, a histogram kept while recording (no frames)\n",
		       tfile_probe_name(t, hg->num, buf, sizeof(buf)), hg->n);
		put_recorded_by(t, hg->num);
		if (!hg->n)
			continue;
		printf("  latency  avg ");
		put_ns((int64_t)(hg->sum / hg->n));
		printf("  (sum ");
		put_ns((int64_t)hg->sum);
		printf(")\n  latency (ns):\n");
		log2_hist_print(stdout, &h, 4);
	}
out:
	for (size_t i = 0; i < rp->ng; i++)
		free(rp->g[i].lat);
	free(rp->g);
	free(rp);
	tfile_reader_close(t);
	free(t);
	frame_filter_free(&ff);
	return rc;
usage_error:
	frame_filter_free(&ff);
	free(rp);
	return PT_EXIT_USAGE;
}
