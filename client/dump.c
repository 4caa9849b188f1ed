/*
 * dump.c - `probe-trace dump`: the frames of a trace file as text or JSON.
 *
 * Reads any gdb trace file (tfile.h), whoever wrote it: the header gives
 * the register layout (tdesc lines), the trace state variables' names and
 * the tracepoints; probe-trace's own files also name their probes in the
 * status notes ("probe-trace:1=NAME;2=NAME...").  A file cut short (the
 * recorder was killed while writing) is read up to its last whole frame.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/probe-trace.h"
#include "client/record.h"
#include "client/target.h"
#include "client/typed.h"
#include "protocol/rsp.h"
#include "protocol/tbuf.h"
#include "protocol/tfile.h"
#include "protocol/tp-status.h"

#define MAX_NAMES 4096

struct named {
	long num;
	char *name;
};

struct tfile_info {
	size_t regblock;
	struct rsp_buf tdesc;
	struct target_regs regs;
	bool have_regs;
	struct named tsvs[MAX_NAMES], probes[MAX_NAMES];
	size_t ntsvs, nprobes;
	struct {
		long num;
		uint64_t addr;
	} tps[MAX_NAMES];
	size_t ntps;
	struct tp_status status;	/* how the run ended */
	char status_error[128];
	bool have_status;
	char *status_line;		/* for its table of lost frames */
	struct typed_file typed;	/* typed values (#pt lines, typed.h) */
};

struct probe_stats {
	uint64_t frames;
	uint64_t lost;			/* no room for them (status `lost:`) */
	int64_t lat_min, lat_max;
	double lat_sum;
	uint64_t lat_n;
};

static const char *lookup(const struct named *t, size_t n, long num)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].num == num)
			return t[i].name;
	return NULL;
}

static char *hex_to_str(const char *hex, size_t len)
{
	char *out = malloc(len / 2 + 1);
	ssize_t n;

	if (!out)
		abort();
	n = rsp_hex_decode(hex, len, out, len / 2);
	out[n < 0 ? 0 : n] = '\0';
	return out;
}

/* "probe-trace:1=foo;2=bar%return" in the status notes */
static void parse_notes(struct tfile_info *t, const char *notes)
{
	const char *p;

	if (strncmp(notes, "probe-trace:", 12) != 0)
		return;
	p = notes + 12;
	while (*p && t->nprobes < MAX_NAMES) {
		char *end;
		long num = strtol(p, &end, 10);
		if (*end != '=')
			break;
		p = end + 1;
		size_t n = strcspn(p, ";");
		t->probes[t->nprobes].num = num;
		t->probes[t->nprobes].name = strndup(p, n);
		t->nprobes++;
		p += n;
		if (*p == ';')
			p++;
	}
}

static int read_header(FILE *f, const char *path, struct tfile_info *t)
{
	char magic[TFILE_MAGIC_LEN];
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (fread(magic, 1, sizeof(magic), f) != sizeof(magic) ||
	    memcmp(magic, TFILE_MAGIC, TFILE_MAGIC_LEN) != 0) {
		fprintf(stderr, "probe-trace dump: %s: not a trace file\n", path);
		return -EINVAL;
	}
	rsp_buf_init(&t->tdesc);
	for (;;) {
		n = getline(&line, &cap, f);
		if (n < 0) {
			fprintf(stderr, "probe-trace dump: %s: the header ends early\n",
				path);
			free(line);
			return -EINVAL;
		}
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		if (n == 0)
			break;
		if (strncmp(line, "R ", 2) == 0) {
			t->regblock = strtoul(line + 2, NULL, 16);
		} else if (strncmp(line, "tdesc ", 6) == 0) {
			rsp_buf_puts(&t->tdesc, line + 6);
			rsp_buf_putc(&t->tdesc, '\n');
		} else if (strncmp(line, "status ", 7) == 0) {
			/* The tfile form is qTStatus's without the `T`. */
			char *reply = malloc(strlen(line + 7) + 2);
			if (reply) {
				reply[0] = 'T';
				strcpy(reply + 1, line + 7);
				t->have_status = tp_status_parse(reply, &t->status,
								 t->status_error,
								 sizeof(t->status_error)) == 0;
				free(reply);
			}
			free(t->status_line);
			t->status_line = strdup(line);
			const char *notes = strstr(line, ";notes:");
			if (notes) {
				notes += 7;
				char *text = hex_to_str(notes, strcspn(notes, ":;"));
				parse_notes(t, text);
				free(text);
			}
		} else if (strncmp(line, "tsv ", 4) == 0 && t->ntsvs < MAX_NAMES) {
			/* tsv N:INITIAL:BUILTIN:HEXNAME */
			char *p = line + 4, *colon;
			long num = strtol(p, NULL, 16);
			colon = strrchr(p, ':');
			if (colon) {
				t->tsvs[t->ntsvs].num = num;
				t->tsvs[t->ntsvs].name =
					hex_to_str(colon + 1, strlen(colon + 1));
				t->ntsvs++;
			}
		} else if (strncmp(line, "tp Z", 4) == 0) {
			/* tp Z<n>:<addr>:cmd:<start>:<len>:<hex> */
			char *end, *p;
			long num = strtol(line + 4, &end, 16);
			uint64_t addr = *end == ':' ? strtoull(end + 1, &p, 16) : 0;
			if (*end == ':' && strncmp(p, ":cmd:0:", 7) == 0 &&
			    (p = strchr(p + 7, ':'))) {
				char *text = hex_to_str(p + 1, strlen(p + 1));
				typed_file_add_line(&t->typed, num, addr, text);
				free(text);
			}
		} else if (strncmp(line, "tp T", 4) == 0 && t->ntps < MAX_NAMES) {
			char *end;
			long num = strtol(line + 4, &end, 16);
			if (*end == ':') {
				t->tps[t->ntps].num = num;
				t->tps[t->ntps].addr = strtoull(end + 1, NULL, 16);
				t->ntps++;
			}
		}
	}
	free(line);
	typed_file_finish(&t->typed);
	rsp_buf_putc(&t->tdesc, '\0');
	t->have_regs = target_regs_parse(&t->regs, t->tdesc.data) == 0 &&
		       t->regs.block_size <= t->regblock;
	return 0;
}

static uint64_t tp_addr(const struct tfile_info *t, long num)
{
	for (size_t i = 0; i < t->ntps; i++)
		if (t->tps[i].num == num)
			return t->tps[i].addr;
	return 0;
}

static uint64_t le_value(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i-- > 0;)
		v = (v << 8) | p[i];
	return v;
}

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(out, "\\u%04x", *s);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

static void print_time(FILE *out, int64_t us)
{
	time_t sec = (time_t)(us / 1000000);
	struct tm tm;
	char buf[32];

	localtime_r(&sec, &tm);
	strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
	fprintf(out, "%s.%06lld", buf, (long long)(us % 1000000));
}

struct frame_view {
	uint64_t number;
	long tpnum;
	const uint8_t *regs;
	int64_t tsv_val[64];
	long tsv_num[64];
	size_t ntsv;
	struct {
		uint64_t addr;
		const uint8_t *data;
		size_t len;
	} mem[256];
	size_t nmem;
};

/* ---- typed values: the frame as typed.c reads it ---- */

struct typed_frame {
	const struct tfile_info *t;
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
static const struct typed_probe *frame_typed(const struct tfile_info *t,
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
			p = typed_file_find(&t->typed, v->tpnum, le_value(pc, 8));
	}
	return p;
}

static bool frame_tsv(const struct frame_view *v, const struct tfile_info *t,
		      const char *name, int64_t *out)
{
	for (size_t i = 0; i < v->ntsv; i++) {
		const char *n = lookup(t->tsvs, t->ntsvs, v->tsv_num[i]);
		if (n && strcmp(n, name) == 0) {
			*out = v->tsv_val[i];
			return true;
		}
	}
	return false;
}

/* Splits a frame's blocks; -EINVAL when they do not parse. */
static int parse_frame(const uint8_t *d, size_t len, size_t regblock,
		       struct frame_view *v)
{
	struct tbuf_block b;
	size_t pos = 0;
	int r;

	while ((r = tbuf_block_next(d, len, regblock, &pos, &b)) > 0) {
		if (b.type == 'R' && !v->regs) {
			v->regs = b.body;
		} else if (b.type == 'M' && v->nmem < 256) {
			uint16_t n;
			memcpy(&v->mem[v->nmem].addr, b.body, 8);
			memcpy(&n, b.body + 8, 2);
			v->mem[v->nmem].data = b.body + 10;
			v->mem[v->nmem].len = n;
			v->nmem++;
		} else if (b.type == 'V' && v->ntsv < 64) {
			int32_t num;
			memcpy(&num, b.body, 4);
			v->tsv_num[v->ntsv] = num;
			memcpy(&v->tsv_val[v->ntsv], b.body + 4, 8);
			v->ntsv++;
		}
	}
	return r;
}

static const char *probe_name(const struct tfile_info *t, long tpnum,
			      char *buf, size_t size)
{
	const char *n = lookup(t->probes, t->nprobes, tpnum);

	if (n)
		return n;
	snprintf(buf, size, "tracepoint %ld at 0x%" PRIx64, tpnum,
		 tp_addr(t, tpnum));
	return buf;
}

/* probe-trace's own TSVs print as arg0, retval...; others as named. */
static const char *value_name(const char *tsv)
{
	if (strncmp(tsv, "probe_arg", 9) == 0 || strcmp(tsv, "probe_retval") == 0)
		return tsv + 6;
	return tsv;
}

static void print_text(FILE *out, const struct tfile_info *t,
		       const struct frame_view *v)
{
	char buf[96];
	int64_t x;

	struct typed_frame tf;
	struct typed_src src;
	const struct typed_probe *typed = frame_typed(t, v, &tf, &src);

	fprintf(out, "#%" PRIu64 " %s", v->number,
		probe_name(t, v->tpnum, buf, sizeof(buf)));
	if (typed) {
		struct rsp_buf b;
		rsp_buf_init(&b);
		typed_render_text(typed, &src, &b);
		fwrite(b.data, 1, b.len, out);
		rsp_buf_free(&b);
	}
	if (frame_tsv(v, t, "probe_thread", &x))
		fprintf(out, "  thread %lld", (long long)x);
	if (frame_tsv(v, t, "trace_timestamp", &x)) {
		fputs("  ", out);
		print_time(out, x);
	}
	for (size_t i = 0; i < v->ntsv; i++) {
		const char *n = lookup(t->tsvs, t->ntsvs, v->tsv_num[i]);
		if (!n || !strcmp(n, "probe_thread") || !strcmp(n, "trace_timestamp"))
			continue;
		if (!strcmp(n, "probe_latency_ns")) {
			fprintf(out, "  latency %.3fus", (double)v->tsv_val[i] / 1000.0);
			continue;
		}
		n = value_name(n);
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
				r->name, le_value(v->regs + r->offset, r->bitsize / 8));
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

static void print_json(FILE *out, const struct tfile_info *t,
		       const struct frame_view *v)
{
	char buf[96];
	bool first = true;
	struct typed_frame tf;
	struct typed_src src;
	const struct typed_probe *typed = frame_typed(t, v, &tf, &src);

	fprintf(out, "{\"frame\":%" PRIu64 ",\"tracepoint\":%ld,\"probe\":",
		v->number, v->tpnum);
	json_str(out, probe_name(t, v->tpnum, buf, sizeof(buf)));
	fputs(",\"values\":{", out);
	for (size_t i = 0; i < v->ntsv; i++) {
		const char *n = lookup(t->tsvs, t->ntsvs, v->tsv_num[i]);
		char num[24];
		if (!n) {
			snprintf(num, sizeof(num), "tsv%ld", v->tsv_num[i]);
			n = num;
		}
		n = value_name(n);
		fputs(first ? "" : ",", out);
		json_str(out, n);
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
			json_str(out, r->name);
			fprintf(out, ":\"0x%" PRIx64 "\"",
				le_value(v->regs + r->offset, r->bitsize / 8));
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

/*
 * Reads a frame's `size` bytes into *data (capacity *cap), growing it a
 * megabyte at a time as the bytes arrive: the size comes from the file,
 * and a damaged one (up to 4 GiB) must not become an allocation before
 * the file shows it holds that much.  -EIO when the file ends first.
 */
static int read_body(FILE *f, uint8_t **data, size_t *cap, uint32_t size)
{
	const size_t step = 1 << 20;
	size_t got = 0;

	while (got < size) {
		size_t want = size - got < step ? size - got : step;

		if (got + want > *cap) {
			uint8_t *p = realloc(*data, got + want);
			if (!p)
				abort();
			*data = p;
			*cap = got + want;
		}
		if (fread(*data + got, 1, want, f) != want)
			return -EIO;
		got += want;
	}
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
"Usage: probe-trace dump [--json] [--summary] [--limit N] FILE\n"
"Prints every frame of a trace file: probe, thread, time, the collected\n"
"values (arguments, return value, latency; typed when the recording had\n"
"DWARF: process_order(o=0x7ffe... {id=1, price=1.25}), f%%return = -3),\n"
"registers by name and memory.\n"
"\n"
"  --json       one JSON object per frame and line\n"
"  --summary    frames per probe (and latency of return probes) only\n"
"  --limit N    the first N frames only\n"
"  -h, --help   this help\n");
}

static void add_lost(uint32_t tp, uint64_t count, void *arg)
{
	struct probe_stats *stats = arg;

	if (tp > 0 && tp < 0x8000)
		stats[tp].lost += count;
}

int cmd_dump(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "summary", no_argument, NULL, 's' },
		{ "limit", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool json = false, summary = false;
	uint64_t limit = UINT64_MAX, number = 0;
	struct tfile_info *t;
	struct probe_stats *stats;
	uint8_t *data = NULL;
	size_t cap = 0;
	int opt, rc = PT_EXIT_OK;
	bool truncated = false;
	FILE *f;
	char *end;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j': json = true; break;
		case 's': summary = true; break;
		case 'n':
			limit = strtoull(optarg, &end, 10);
			if (*end || !*optarg) {
				fprintf(stderr, "probe-trace dump: --limit: '%s' is not a number\n",
					optarg);
				return PT_EXIT_USAGE;
			}
			break;
		case 'h': usage(stdout); return PT_EXIT_OK;
		default: usage(stderr); return PT_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return PT_EXIT_USAGE;
	}
	f = fopen(argv[optind], "rb");
	if (!f) {
		fprintf(stderr, "probe-trace dump: %s: %s\n", argv[optind],
			strerror(errno));
		return PT_EXIT_FAIL;
	}
	t = calloc(1, sizeof(*t));
	stats = calloc(0x8000, sizeof(*stats));
	if (!t || !stats)
		abort();
	if (read_header(f, argv[optind], t) < 0) {
		rc = PT_EXIT_FAIL;
		goto out;
	}
	if (t->status_line)
		tp_status_lost(t->status_line, add_lost, stats);
	for (;; number++) {
		int16_t tpnum;
		uint32_t size;
		struct frame_view v;

		if (fread(&tpnum, 1, 2, f) != 2) {
			truncated = true;	/* no end marker */
			break;
		}
		if (tpnum == 0)
			break;
		if (fread(&size, 1, 4, f) != 4) {
			truncated = true;
			break;
		}
		if (read_body(f, &data, &cap, size) < 0) {
			truncated = true;
			break;
		}
		memset(&v, 0, sizeof(v));
		v.number = number;
		v.tpnum = tpnum;
		if (parse_frame(data, size, t->regblock, &v) < 0) {
			fprintf(stderr, "probe-trace dump: %s: frame %" PRIu64
				" is damaged; stopping there\n", argv[optind], number);
			rc = PT_EXIT_FAIL;
			break;
		}
		if (tpnum > 0) {
			struct probe_stats *s = &stats[tpnum];
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
		if (summary || number >= limit)
			continue;
		if (json)
			print_json(stdout, t, &v);
		else
			print_text(stdout, t, &v);
	}
	if (truncated)
		fprintf(stderr, "probe-trace dump: %s ends inside a frame or before "
			"its end marker: read up to frame %" PRIu64 "\n",
			argv[optind], number);
	if (summary && !json) {
		char buf[96];
		printf("%" PRIu64 " frames\n", number);
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
			struct probe_stats *s = &stats[tp];
			if (!s->frames && !s->lost)
				continue;
			printf("  %-32s %10" PRIu64 " frames", probe_name(t, tp, buf, sizeof(buf)),
			       s->frames);
			if (s->lost)
				printf(" %10" PRIu64 " lost", s->lost);
			if (s->lat_n)
				printf("   latency min %.3fus avg %.3fus max %.3fus",
				       (double)s->lat_min / 1000.0,
				       s->lat_sum / (double)s->lat_n / 1000.0,
				       (double)s->lat_max / 1000.0);
			putchar('\n');
		}
	} else if (summary) {
		char buf[96];
		printf("{\"frames\":%" PRIu64 ",\"lost\":%" PRIu64 ",\"probes\":[", number,
		       t->have_status ? t->status.lost : 0);
		bool first = true;
		for (int tp = 1; tp < 0x8000; tp++) {
			if (!stats[tp].frames && !stats[tp].lost)
				continue;
			printf("%s{\"tracepoint\":%d,\"probe\":", first ? "" : ",", tp);
			json_str(stdout, probe_name(t, tp, buf, sizeof(buf)));
			printf(",\"frames\":%" PRIu64 ",\"lost\":%" PRIu64 "}",
			       stats[tp].frames, stats[tp].lost);
			first = false;
		}
		printf("]}\n");
	}
out:
	fclose(f);
	free(data);
	free(stats);
	for (size_t i = 0; i < t->ntsvs; i++)
		free(t->tsvs[i].name);
	for (size_t i = 0; i < t->nprobes; i++)
		free(t->probes[i].name);
	/* parsed, even when the file's blocks are too small for it */
	target_regs_free(&t->regs);
	rsp_buf_free(&t->tdesc);
	free(t->status_line);
	typed_file_free(&t->typed);
	free(t);
	return rc;
}
