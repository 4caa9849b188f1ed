/*
 * frame-print.c - one frame of a trace file as text or as a JSON line:
 * what `probe-trace dump` prints of every frame, and `probe-trace record
 * --live` of every frame as it arrives.
 *
 * A frame is read through a tfile_reader (tfile-read.h): its header
 * names the probes and the trace state variables, lays out the
 * registers and holds the typed values (typed.h); its thread table
 * names the threads.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "client/frame-print.h"
#include "client/typed.h"
#include "protocol/rsp.h"

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

void frame_print_text(FILE *out, const struct tfile_reader *t,
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

void frame_print_json(FILE *out, const struct tfile_reader *t,
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
