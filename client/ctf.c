/*
 * ctf.c - `probe-trace dump --format=ctf -o DIR`: a trace file as a CTF
 * 1.8 trace (https://diamon.org/ctf/v1.8.3/) that babeltrace2 and Trace
 * Compass read: DIR/metadata (TSDL text) and DIR/stream_0 (binary).
 *
 * One event class per probe (id = tracepoint number, name = the probe's
 * name), with typed fields:
 *
 *   frame         uint64   the frame's number in the trace file
 *   tid           int64    the thread ($probe_thread)
 *   arg0 ...      int64    every value the probe collected, named as
 *   retval, ...            `dump --json` names them (probe_latency_ns,
 *                          other TSVs by their names), in frame order
 *   rax, rip ...  uintN    registers (base 16), when the probe has `regs`
 *   memN_address, memN_length, memN[memN_length]   collected memory
 *
 * The clock is the agent's $trace_timestamp (microseconds since the
 * epoch, freq 1000000), in every event header; files without it (some
 * gdb `tsave` files) count one microsecond a frame.
 *
 * The stream is one packet of events in timestamp order.  The trace file
 * holds frames in the order the agent's buffer took them, which need not
 * be their time order across threads, and a CTF stream's clock may not
 * go back: a first pass notes each frame's timestamp and offset (and the
 * fields of each probe: the union of what its frames hold; a frame that
 * lacks one writes 0 there, and the export says how many did), the
 * second writes the events in time order (ties by frame number).
 *
 * Integers are byte-aligned and little-endian: no padding to compute.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/export.h"
#include "client/probe-trace.h"
#include "client/tfile-read.h"

#define MAX_TP 0x8000
#define STREAM_NAME "stream_0"
#define CTF_MAGIC 0xC1FC1FC1u

struct ctf_probe {
	bool seen;
	long tsv[FRAME_MAX_TSV];	/* the values, in their order */
	size_t ntsv;
	bool regs;
	size_t nmem;			/* the most memory blocks of a frame */
};

struct ctf_index {
	int64_t ts;
	uint64_t number, offset;
};

struct ctf {
	struct tfile_reader *t;
	const struct export_opts *o;
	struct ctf_probe *probes;	/* by tracepoint number */
	struct ctf_index *idx;
	size_t n, cap;
	uint64_t missing;		/* frames that lacked a field */
	FILE *out;
	uint64_t bytes;
};

static int cmp_index(const void *a, const void *b)
{
	const struct ctf_index *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->number > y->number) - (x->number < y->number);
}

static bool skipped_value(const char *n)
{
	return !n || !strcmp(n, "probe_thread") || !strcmp(n, "trace_timestamp");
}

static int64_t frame_ts(const struct ctf *c, const struct frame_view *v)
{
	int64_t ts;

	if (!frame_tsv(v, c->t, "trace_timestamp", &ts))
		ts = (int64_t)v->number;
	return ts;
}

/* Pass 1: the frames to write, and each probe's fields. */
static int scan(struct ctf *c, uint64_t *filtered)
{
	struct frame_view v;
	int r;

	while (c->n < c->o->limit && (r = tfile_reader_next(c->t, &v)) > 0) {
		struct ctf_probe *p;

		if (v.tpnum <= 0 || !frame_filter_match(c->o->filter, c->t, &v)) {
			(*filtered)++;
			continue;
		}
		p = &c->probes[v.tpnum];
		p->seen = true;
		for (size_t i = 0; i < v.ntsv; i++) {
			size_t k;
			if (skipped_value(tfile_tsv_name(c->t, v.tsv_num[i])))
				continue;
			for (k = 0; k < p->ntsv && p->tsv[k] != v.tsv_num[i]; k++)
				;
			if (k == p->ntsv && p->ntsv < FRAME_MAX_TSV)
				p->tsv[p->ntsv++] = v.tsv_num[i];
		}
		if (v.regs && c->t->have_regs)
			p->regs = true;
		if (v.nmem > p->nmem)
			p->nmem = v.nmem;
		if (c->n == c->cap) {
			c->cap = c->cap ? c->cap * 2 : 4096;
			c->idx = realloc(c->idx, c->cap * sizeof(*c->idx));
			if (!c->idx)
				abort();
		}
		c->idx[c->n].ts = frame_ts(c, &v);
		c->idx[c->n].number = v.number;
		c->idx[c->n].offset = v.offset;
		c->n++;
	}
	if (c->n >= c->o->limit)
		return 0;
	return r < 0 ? -EINVAL : 0;
}

/* TSDL's reserved words cannot name a field; a leading '_' is dropped
 * by readers when they print the name. */
static const char *field_name(const char *name, char *buf, size_t size)
{
	static const char *const reserved[] = {
		"align", "callsite", "const", "char", "clock", "double", "enum",
		"env", "event", "floating_point", "float", "integer", "int",
		"long", "short", "signed", "stream", "string", "struct", "trace",
		"typealias", "typedef", "unsigned", "variant", "void", "_Bool",
		"_Complex", "_Imaginary",
	};
	char tmp[128];

	export_ident(name, tmp, sizeof(tmp));
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (!strcmp(tmp, reserved[i])) {
			snprintf(buf, size, "_%s", tmp);
			return buf;
		}
	snprintf(buf, size, "%s", tmp);
	return buf;
}

static const char *value_field(const struct ctf *c, long num, char *buf,
			       size_t size)
{
	const char *n = tfile_tsv_name(c->t, num);
	char tmp[24];

	if (!n) {
		snprintf(tmp, sizeof(tmp), "tsv%ld", num);
		n = tmp;
	} else {
		n = tfile_value_name(n);
	}
	return field_name(n, buf, size);
}

/* Whether `name` is a field the event has besides its i-th value:
 * frame, tid, a register, memN..., or an earlier value's name. */
static bool name_taken(const struct ctf *c, const struct ctf_probe *p,
		       size_t i, const char *name)
{
	char other[128];

	if (!strcmp(name, "frame") || !strcmp(name, "tid") ||
	    (!strncmp(name, "mem", 3) && p->nmem))
		return true;
	for (size_t k = 0; p->regs && k < c->t->regs.nregs; k++) {
		const char *r = c->t->regs.regs[k].name;
		if (r && !strcmp(field_name(r, other, sizeof(other)), name))
			return true;
	}
	for (size_t k = 0; k < i; k++) {
		value_field(c, p->tsv[k], other, sizeof(other));
		if (!strcmp(other, name))
			return true;
	}
	return false;
}

static void tsdl_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fputc(' ', out);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

static int write_metadata(struct ctf *c, const char *path)
{
	struct tfile_reader *t = c->t;
	FILE *m = fopen(path, "w");
	char buf[128];

	if (!m) {
		fprintf(stderr, "%s: cannot create %s: %s\n", c->o->who, path,
			strerror(errno));
		return -1;
	}
	fputs("/* CTF 1.8 */\n\n"
	      "/* written by probe-trace dump --format=ctf */\n"
	      "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
	      "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
	      "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
	      "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
	      "typealias integer { size = 64; align = 8; signed = true; } := int64_t;\n"
	      "typealias integer { size = 64; align = 8; signed = false; base = 16; } := xuint64_t;\n"
	      "\n"
	      "trace {\n"
	      "\tmajor = 1;\n"
	      "\tminor = 8;\n"
	      "\tbyte_order = le;\n"
	      "\tpacket.header := struct {\n"
	      "\t\tuint32_t magic;\n"
	      "\t\tuint32_t stream_id;\n"
	      "\t};\n"
	      "};\n\n", m);
	fputs("env {\n\tdomain = \"probe-trace\";\n\ttracer_name = \"probe-trace\";\n", m);
	if (t->pid)
		fprintf(m, "\tpid = %ld;\n", t->pid);
	fputs("\tsource = ", m);
	tsdl_str(m, t->path);
	fputs(";\n};\n\n", m);
	fputs("clock {\n"
	      "\tname = trace_timestamp;\n"
	      "\tdescription = \"the agent's $trace_timestamp: microseconds since the epoch\";\n"
	      "\tfreq = 1000000;\n"
	      "\toffset = 0;\n"
	      "};\n\n"
	      "typealias integer { size = 64; align = 8; signed = false;\n"
	      "\tmap = clock.trace_timestamp.value; } := clock_t;\n\n"
	      "stream {\n"
	      "\tid = 0;\n"
	      "\tpacket.context := struct {\n"
	      "\t\tclock_t timestamp_begin;\n"
	      "\t\tclock_t timestamp_end;\n"
	      "\t\tuint64_t content_size;\n"
	      "\t\tuint64_t packet_size;\n"
	      "\t};\n"
	      "\tevent.header := struct {\n"
	      "\t\tuint32_t id;\n"
	      "\t\tclock_t timestamp;\n"
	      "\t};\n"
	      "};\n", m);
	for (long tp = 1; tp < MAX_TP; tp++) {
		const struct ctf_probe *p = &c->probes[tp];
		if (!p->seen)
			continue;
		fputs("\nevent {\n\tname = ", m);
		tsdl_str(m, tfile_probe_name(t, tp, buf, sizeof(buf)));
		fprintf(m, ";\n\tid = %ld;\n\tstream_id = 0;\n\tfields := struct {\n"
			"\t\tuint64_t frame;\n\t\tint64_t tid;\n", tp);
		for (size_t i = 0; i < p->ntsv; i++) {
			/* A TSV of gdb's may be named like a field of ours, a
			 * register or another TSV once made an identifier:
			 * the field names of a struct must differ. */
			value_field(c, p->tsv[i], buf, sizeof(buf));
			while (name_taken(c, p, i, buf))
				strncat(buf, "_", sizeof(buf) - strlen(buf) - 1);
			fprintf(m, "\t\tint64_t %s;\n", buf);
		}
		for (size_t i = 0; p->regs && i < t->regs.nregs; i++) {
			const struct target_reg *r = &t->regs.regs[i];
			if (!r->name || r->bitsize > 64 || r->bitsize % 8)
				continue;
			fprintf(m, "\t\tinteger { size = %u; align = 8; signed = false; "
				"base = 16; } %s;\n", (unsigned)r->bitsize,
				field_name(r->name, buf, sizeof(buf)));
		}
		for (size_t k = 0; k < p->nmem; k++)
			fprintf(m, "\t\txuint64_t mem%zu_address;\n"
				"\t\tuint16_t mem%zu_length;\n"
				"\t\tuint8_t mem%zu[mem%zu_length];\n", k, k, k, k);
		fputs("\t};\n};\n", m);
	}
	if (fclose(m) != 0) {
		fprintf(stderr, "%s: writing %s: %s\n", c->o->who, path,
			strerror(errno));
		return -1;
	}
	return 0;
}

static void put_le(struct ctf *c, uint64_t v, size_t n)
{
	uint8_t b[8];

	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	fwrite(b, 1, n, c->out);
	c->bytes += n;
}

static void put_event(struct ctf *c, const struct frame_view *v, int64_t ts)
{
	const struct ctf_probe *p = &c->probes[v->tpnum];
	struct tfile_reader *t = c->t;
	int64_t tid = 0;
	bool lacked = false;

	put_le(c, (uint64_t)v->tpnum, 4);
	put_le(c, (uint64_t)ts, 8);
	put_le(c, v->number, 8);
	frame_tsv(v, t, "probe_thread", &tid);
	put_le(c, (uint64_t)tid, 8);
	for (size_t i = 0; i < p->ntsv; i++) {
		size_t k;
		for (k = 0; k < v->ntsv && v->tsv_num[k] != p->tsv[i]; k++)
			;
		if (k == v->ntsv)
			lacked = true;
		put_le(c, k < v->ntsv ? (uint64_t)v->tsv_val[k] : 0, 8);
	}
	for (size_t i = 0; p->regs && i < t->regs.nregs; i++) {
		const struct target_reg *r = &t->regs.regs[i];
		size_t n = r->bitsize / 8;
		if (!r->name || r->bitsize > 64 || r->bitsize % 8)
			continue;
		if (!v->regs)
			lacked = true;
		put_le(c, v->regs ? tfile_le_value(v->regs + r->offset, n) : 0, n);
	}
	for (size_t k = 0; k < p->nmem; k++) {
		if (k < v->nmem) {
			put_le(c, v->mem[k].addr, 8);
			put_le(c, v->mem[k].len, 2);
			fwrite(v->mem[k].data, 1, v->mem[k].len, c->out);
			c->bytes += v->mem[k].len;
		} else {
			lacked = true;
			put_le(c, 0, 8);
			put_le(c, 0, 2);
		}
	}
	if (lacked)
		c->missing++;
}

/*
 * DIR must be new, or empty, or (with --force) hold only what an export
 * writes; then what it holds is removed.  A DIR with other files is
 * never touched: it is not ours.
 */
static int prepare_dir(const struct export_opts *o)
{
	DIR *d;
	struct dirent *e;
	bool ours = true, empty = true;

	if (mkdir(o->output, 0755) == 0)
		return 0;
	if (errno != EEXIST) {
		fprintf(stderr, "%s: cannot create %s: %s\n", o->who, o->output,
			strerror(errno));
		return -1;
	}
	d = opendir(o->output);
	if (!d) {
		fprintf(stderr, "%s: %s exists and is not a directory I can open: %s\n",
			o->who, o->output, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		empty = false;
		if (strcmp(e->d_name, "metadata") && strcmp(e->d_name, STREAM_NAME))
			ours = false;
	}
	closedir(d);
	if (empty)
		return 0;
	if (!ours) {
		fprintf(stderr, "%s: %s holds files that are not a CTF export of "
			"probe-trace; give a new or empty directory\n", o->who,
			o->output);
		return -1;
	}
	if (!o->force) {
		fprintf(stderr, "%s: %s holds a CTF trace already; --force replaces it\n",
			o->who, o->output);
		return -1;
	}
	return 0;
}

int export_ctf(struct tfile_reader *t, const struct export_opts *o)
{
	struct ctf c = { .t = t, .o = o };
	uint64_t filtered = 0;
	int rc = PT_EXIT_OK;
	char *path = NULL;
	size_t plen = strlen(o->output) + sizeof("/" STREAM_NAME) + 8;

	c.probes = calloc(MAX_TP, sizeof(*c.probes));
	path = malloc(plen);
	if (!c.probes || !path)
		abort();
	if (scan(&c, &filtered) < 0)
		rc = PT_EXIT_FAIL;	/* damaged: export what came before */
	if (t->truncated)
		fprintf(stderr, "%s: %s ends inside a frame or before its end marker: "
			"read up to frame %" PRIu64 "\n", o->who, t->path, t->number);
	if (prepare_dir(o) < 0) {
		rc = PT_EXIT_FAIL;
		goto out;
	}
	if (c.n)
		qsort(c.idx, c.n, sizeof(*c.idx), cmp_index);
	snprintf(path, plen, "%s/metadata", o->output);
	if (write_metadata(&c, path) < 0) {
		rc = PT_EXIT_FAIL;
		goto out;
	}
	snprintf(path, plen, "%s/%s", o->output, STREAM_NAME);
	c.out = fopen(path, "w");
	if (!c.out) {
		fprintf(stderr, "%s: cannot create %s: %s\n", o->who, path,
			strerror(errno));
		rc = PT_EXIT_FAIL;
		goto out;
	}
	/* packet header and context; sizes and times are known at the end */
	put_le(&c, CTF_MAGIC, 4);
	put_le(&c, 0, 4);
	put_le(&c, c.n ? (uint64_t)c.idx[0].ts : 0, 8);
	put_le(&c, c.n ? (uint64_t)c.idx[c.n - 1].ts : 0, 8);
	put_le(&c, 0, 8);
	put_le(&c, 0, 8);
	for (size_t i = 0; i < c.n; i++) {
		struct frame_view v;
		if (tfile_reader_seek(t, c.idx[i].offset, c.idx[i].number) < 0 ||
		    tfile_reader_next(t, &v) <= 0) {
			fprintf(stderr, "%s: %s: frame %" PRIu64 " reads differently "
				"the second time; was the file changed?\n", o->who,
				t->path, c.idx[i].number);
			rc = PT_EXIT_FAIL;
			break;
		}
		put_event(&c, &v, c.idx[i].ts);
	}
	if (fseek(c.out, 24, SEEK_SET) == 0) {
		uint64_t bits = c.bytes * 8, save = c.bytes;
		put_le(&c, bits, 8);
		put_le(&c, bits, 8);
		c.bytes = save;
	}
	if (ferror(c.out) | (fclose(c.out) != 0)) {
		fprintf(stderr, "%s: writing %s: %s\n", o->who, path, strerror(errno));
		rc = PT_EXIT_FAIL;
	}
	if (c.missing)
		fprintf(stderr, "%s: %" PRIu64 " frames lacked a value, registers or "
			"memory that other frames of their probe have: 0 stands "
			"there\n", o->who, c.missing);
	if (filtered)
		fprintf(stderr, "%s: %" PRIu64 " frames did not pass the filters\n",
			o->who, filtered);
out:
	free(path);
	free(c.idx);
	free(c.probes);
	return rc;
}
