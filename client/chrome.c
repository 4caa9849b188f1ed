/*
 * chrome.c - `probe-trace dump --format=chrome`: the Trace Event JSON
 * that Perfetto (ui.perfetto.dev) and chrome://tracing open.
 *
 * One track per thread (pid = the recorded process, tid = the thread,
 * named by "thread_name" metadata events from the file's thread table).
 * A return frame of FUNC%return becomes a complete slice ("ph":"X") of
 * FUNC that ends at the return's timestamp and lasts the latency the
 * agent measured; the entry frame of probe FUNC on the same thread that
 * began it, if the file has one, is folded into the slice (its values
 * join the slice's args).  Every other frame (an entry whose return was
 * not recorded, a longjmp past the return, a probe with no return probe)
 * is an instant event ("ph":"i") with its values as args.
 *
 * Entries wait on a stack per thread and function.  A return takes the
 * innermost entry that began no later than its call did: the return's
 * timestamp minus its latency, with two microseconds to spare, one for
 * the truncation of the two timestamps and one for the clocks (where pads
 * record the call, its entry and its return are converted from the CPU's
 * counter at two drains).  The entry's timestamp is taken at the hit;
 * where the agent stops the thread, the latency's clock starts later, as
 * it sets up the return (3 to 20 us here, milliseconds on a loaded
 * machine).  Entries above it that began after the call began are calls
 * that never returned (longjmp, exceptions) and become instants, like
 * the entries still waiting at the end.
 *
 * Times are microseconds (the format's unit) from the recording's start,
 * with three decimals, so that a latency in nanoseconds survives exactly;
 * otherData.base_time_us holds the start as microseconds since the epoch.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/export.h"
#include "client/probe-trace.h"
#include "client/tfile-read.h"

#define MATCH_SLACK_US 2
#define MAX_TP 0x8000

struct pending {
	uint64_t frame;
	int64_t ts;			/* µs since the epoch */
	size_t nval;
	long num[FRAME_MAX_TSV];
	int64_t val[FRAME_MAX_TSV];
};

struct entry_stack {
	int64_t tid;
	long tpnum;			/* the entry probe */
	struct pending *p;
	size_t n, cap;
};

struct chrome {
	FILE *out;
	struct tfile_reader *t;
	long pid;
	int64_t base;			/* µs since the epoch */
	bool have_base, first;
	long entry_of[MAX_TP];		/* return tp -> entry tp, 0 none */
	bool has_return[MAX_TP];	/* entry tp has a return probe */
	struct entry_stack *stacks;
	size_t nstacks;
	uint64_t slices, instants;
};

const char *export_ident(const char *name, char *buf, size_t size)
{
	size_t i = 0;

	if (size < 2)
		return "";
	if (*name >= '0' && *name <= '9')
		buf[i++] = '_';
	for (; *name && i + 1 < size; name++)
		buf[i++] = (*name >= 'a' && *name <= 'z') || (*name >= 'A' && *name <= 'Z') ||
			   (*name >= '0' && *name <= '9') || *name == '_' ? *name : '_';
	if (!i)
		buf[i++] = '_';
	buf[i] = '\0';
	return buf;
}

/* ns as microseconds with three decimals, exactly */
static void put_us(FILE *out, int64_t ns)
{
	if (ns < 0) {
		fputc('-', out);
		ns = -ns;
	}
	fprintf(out, "%lld.%03lld", (long long)(ns / 1000), (long long)(ns % 1000));
}

static bool skipped_value(const char *n)
{
	return !n || !strcmp(n, "probe_thread") || !strcmp(n, "trace_timestamp");
}

static void put_value(struct chrome *c, long num, int64_t val)
{
	const char *n = tfile_tsv_name(c->t, num);
	char buf[24];

	if (!n) {
		snprintf(buf, sizeof(buf), "tsv%ld", num);
		n = buf;
	}
	fputc(',', c->out);
	tfile_json_str(c->out, tfile_value_name(n));
	fprintf(c->out, ":%lld", (long long)val);
}

static void put_frame_extras(struct chrome *c, const struct frame_view *v)
{
	struct tfile_reader *t = c->t;

	if (v->regs && t->have_regs) {
		for (size_t i = 0; i < t->regs.nregs; i++) {
			const struct target_reg *r = &t->regs.regs[i];
			if (!r->name || r->bitsize > 64)
				continue;
			fprintf(c->out, ",\"$%s\":\"0x%" PRIx64 "\"", r->name,
				tfile_le_value(v->regs + r->offset, r->bitsize / 8));
		}
	}
	for (size_t m = 0; m < v->nmem; m++) {
		fprintf(c->out, ",\"mem 0x%" PRIx64 "\":\"", v->mem[m].addr);
		for (size_t k = 0; k < v->mem[m].len; k++)
			fprintf(c->out, "%02x", v->mem[m].data[k]);
		fputc('"', c->out);
	}
}

static void begin_event(struct chrome *c)
{
	fputs(c->first ? "\n" : ",\n", c->out);
	c->first = false;
}

static void put_instant(struct chrome *c, const char *name, int64_t tid,
			int64_t ts, uint64_t frame, const long *num,
			const int64_t *val, size_t nval, const struct frame_view *v)
{
	begin_event(c);
	fputs("{\"name\":", c->out);
	tfile_json_str(c->out, name);
	fprintf(c->out, ",\"cat\":\"probe\",\"ph\":\"i\",\"s\":\"t\",\"pid\":%ld,"
		"\"tid\":%lld,\"ts\":", c->pid, (long long)tid);
	put_us(c->out, (ts - c->base) * 1000);
	fprintf(c->out, ",\"args\":{\"frame\":%" PRIu64, frame);
	for (size_t i = 0; i < nval; i++)
		put_value(c, num[i], val[i]);
	if (v)
		put_frame_extras(c, v);
	fputs("}}", c->out);
	c->instants++;
}

static void put_pending(struct chrome *c, const struct entry_stack *s,
			const struct pending *p)
{
	char buf[96];

	put_instant(c, tfile_probe_name(c->t, s->tpnum, buf, sizeof(buf)), s->tid,
		    p->ts, p->frame, p->num, p->val, p->nval, NULL);
}

static struct entry_stack *stack_of(struct chrome *c, int64_t tid, long tpnum,
				    bool create)
{
	struct entry_stack *s;

	for (size_t i = c->nstacks; i-- > 0;)
		if (c->stacks[i].tid == tid && c->stacks[i].tpnum == tpnum)
			return &c->stacks[i];
	if (!create)
		return NULL;
	s = realloc(c->stacks, (c->nstacks + 1) * sizeof(*s));
	if (!s)
		abort();
	c->stacks = s;
	s = &c->stacks[c->nstacks++];
	memset(s, 0, sizeof(*s));
	s->tid = tid;
	s->tpnum = tpnum;
	return s;
}

/* The probe names' pairs: "F%return" and "F". */
static void pair_probes(struct chrome *c)
{
	const struct tfile_reader *t = c->t;

	for (size_t i = 0; i < t->nprobes; i++) {
		const char *rn = t->probes[i].name;
		size_t len = strlen(rn);
		if (len <= 7 || strcmp(rn + len - 7, "%return") != 0 ||
		    t->probes[i].num <= 0 || t->probes[i].num >= MAX_TP)
			continue;
		for (size_t k = 0; k < t->nprobes; k++) {
			const char *en = t->probes[k].name;
			if (strlen(en) == len - 7 && !strncmp(en, rn, len - 7) &&
			    t->probes[k].num > 0 && t->probes[k].num < MAX_TP) {
				c->entry_of[t->probes[i].num] = t->probes[k].num;
				c->has_return[t->probes[k].num] = true;
			}
		}
	}
}

static void frame_values(const struct chrome *c, const struct frame_view *v,
			 struct pending *p)
{
	p->nval = 0;
	for (size_t i = 0; i < v->ntsv; i++) {
		if (skipped_value(tfile_tsv_name(c->t, v->tsv_num[i])))
			continue;
		p->num[p->nval] = v->tsv_num[i];
		p->val[p->nval] = v->tsv_val[i];
		p->nval++;
	}
}

static void put_slice(struct chrome *c, const struct frame_view *v,
		      int64_t tid, int64_t ts, int64_t lat,
		      const struct pending *entry)
{
	struct tfile_reader *t = c->t;
	const char *name;
	char buf[96];
	size_t len;
	struct pending self;

	name = tfile_probe_name(t, v->tpnum, buf, sizeof(buf));
	len = strlen(name);
	if (len > 7 && !strcmp(name + len - 7, "%return"))
		len -= 7;
	begin_event(c);
	fputs("{\"name\":", c->out);
	{
		char *fn = strndup(name, len);
		if (!fn)
			abort();
		tfile_json_str(c->out, fn);
		free(fn);
	}
	fprintf(c->out, ",\"cat\":\"probe\",\"ph\":\"X\",\"pid\":%ld,\"tid\":%lld,"
		"\"ts\":", c->pid, (long long)tid);
	put_us(c->out, (ts - c->base) * 1000 - lat);
	fputs(",\"dur\":", c->out);
	put_us(c->out, lat);
	fputs(",\"args\":{", c->out);
	if (entry)
		fprintf(c->out, "\"entry_frame\":%" PRIu64 ",", entry->frame);
	fprintf(c->out, "\"return_frame\":%" PRIu64, v->number);
	if (entry)
		for (size_t i = 0; i < entry->nval; i++)
			put_value(c, entry->num[i], entry->val[i]);
	frame_values(c, v, &self);
	for (size_t i = 0; i < self.nval; i++)
		put_value(c, self.num[i], self.val[i]);
	put_frame_extras(c, v);
	fputs("}}", c->out);
	c->slices++;
}

static void take_frame(struct chrome *c, const struct frame_view *v)
{
	struct tfile_reader *t = c->t;
	int64_t tid = 0, ts, lat;
	long tp = v->tpnum;
	char buf[96];

	frame_tsv(v, t, "probe_thread", &tid);
	if (!frame_tsv(v, t, "trace_timestamp", &ts))
		ts = (int64_t)v->number;	/* no clock: one µs a frame */
	if (!c->have_base) {
		c->base = ts;
		if (t->have_status && t->status.start_time > 0 &&
		    (int64_t)t->status.start_time <= ts)
			c->base = (int64_t)t->status.start_time;
		c->have_base = true;
	}
	if (tp > 0 && tp < MAX_TP && c->entry_of[tp] &&
	    frame_tsv(v, t, "probe_latency_ns", &lat)) {
		struct entry_stack *s = stack_of(c, tid, c->entry_of[tp], false);
		double start = (double)ts - (double)lat / 1000.0;
		const struct pending *match = NULL;

		while (s && s->n && (double)s->p[s->n - 1].ts > start + MATCH_SLACK_US) {
			put_pending(c, s, &s->p[s->n - 1]);	/* never returned */
			s->n--;
		}
		if (s && s->n)
			match = &s->p[--s->n];
		put_slice(c, v, tid, ts, lat, match);
		return;
	}
	if (tp > 0 && tp < MAX_TP && c->has_return[tp] && !v->regs && !v->nmem) {
		struct entry_stack *s = stack_of(c, tid, tp, true);
		if (s->n == s->cap) {
			s->cap = s->cap ? s->cap * 2 : 8;
			s->p = realloc(s->p, s->cap * sizeof(*s->p));
			if (!s->p)
				abort();
		}
		s->p[s->n].frame = v->number;
		s->p[s->n].ts = ts;
		frame_values(c, v, &s->p[s->n]);
		s->n++;
		return;
	}
	{
		struct pending self;
		frame_values(c, v, &self);
		put_instant(c, tfile_probe_name(t, tp, buf, sizeof(buf)), tid, ts,
			    v->number, self.num, self.val, self.nval, v);
	}
}

/* Opens the output: stdout, a new file, or with --force any file. */
static FILE *open_output(const struct export_opts *o)
{
	int fd;
	FILE *f;

	if (!o->output || !strcmp(o->output, "-"))
		return stdout;
	fd = open(o->output, O_WRONLY | O_CREAT | O_CLOEXEC |
		  (o->force ? O_TRUNC : O_EXCL), 0644);
	if (fd < 0) {
		if (errno == EEXIST)
			fprintf(stderr, "%s: %s exists; --force replaces it\n",
				o->who, o->output);
		else
			fprintf(stderr, "%s: cannot create %s: %s\n", o->who,
				o->output, strerror(errno));
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f)
		abort();
	return f;
}

int export_chrome(struct tfile_reader *t, const struct export_opts *o)
{
	struct chrome *c = calloc(1, sizeof(*c));
	uint64_t taken = 0, filtered = 0;
	int rc = PT_EXIT_OK, r;

	if (!c)
		abort();
	c->t = t;
	c->pid = t->pid ? t->pid : 1;
	c->first = true;
	c->out = open_output(o);
	if (!c->out) {
		free(c);
		return PT_EXIT_FAIL;
	}
	pair_probes(c);
	fputs("{\"traceEvents\":[", c->out);
	{
		const char *pname = tfile_thread_name(t, t->pid);
		begin_event(c);
		fprintf(c->out, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%ld,"
			"\"args\":{\"name\":", c->pid);
		tfile_json_str(c->out, pname ? pname : "probe-trace recording");
		fputs("}}", c->out);
	}
	for (size_t i = 0; i < t->nthreads; i++) {
		begin_event(c);
		fprintf(c->out, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%ld,"
			"\"tid\":%lld,\"args\":{\"name\":", c->pid,
			(long long)t->threads[i].tid);
		tfile_json_str(c->out, t->threads[i].name);
		fputs("}}", c->out);
	}
	for (;;) {
		struct frame_view v;

		if (taken >= o->limit)
			break;
		r = tfile_reader_next(t, &v);
		if (r < 0)
			rc = PT_EXIT_FAIL;
		if (r <= 0)
			break;
		if (!frame_filter_match(o->filter, t, &v)) {
			filtered++;
			continue;
		}
		take_frame(c, &v);
		taken++;
	}
	/* Entries still waiting: calls that had not returned at the end. */
	for (size_t i = 0; i < c->nstacks; i++) {
		for (size_t k = 0; k < c->stacks[i].n; k++)
			put_pending(c, &c->stacks[i], &c->stacks[i].p[k]);
		free(c->stacks[i].p);
	}
	free(c->stacks);
	fprintf(c->out, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{"
		"\"producer\":\"probe-trace\",\"base_time_us\":%lld,\"frames\":%" PRIu64
		",\"filtered_out\":%" PRIu64 ",\"slices\":%" PRIu64 ",\"instants\":%" PRIu64
		"}}\n", (long long)c->base, taken, filtered, c->slices, c->instants);
	if (t->truncated)
		fprintf(stderr, "%s: %s ends inside a frame or before its end marker: "
			"read up to frame %" PRIu64 "\n", o->who, t->path, t->number);
	if (fflush(c->out) != 0 || ferror(c->out)) {
		fprintf(stderr, "%s: writing %s: %s\n", o->who,
			c->out == stdout ? "standard output" : o->output, strerror(errno));
		rc = PT_EXIT_FAIL;
	}
	if (c->out != stdout && fclose(c->out) != 0 && rc == PT_EXIT_OK) {
		fprintf(stderr, "%s: writing %s: %s\n", o->who, o->output,
			strerror(errno));
		rc = PT_EXIT_FAIL;
	}
	if (filtered)
		fprintf(stderr, "%s: %" PRIu64 " frames did not pass the filters\n",
			o->who, filtered);
	free(c);
	return rc;
}
