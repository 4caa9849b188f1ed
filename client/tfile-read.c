/*
 * tfile-read.c - a trace file's header, its frames one by one, its
 * thread table, and the filters of dump, report and the exports.
 */
#include "config.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "client/tfile-read.h"
#include "protocol/tbuf.h"
#include "protocol/tfile.h"

const char *tfile_lookup(const struct tfile_named *tab, size_t n, long num)
{
	for (size_t i = 0; i < n; i++)
		if (tab[i].num == num)
			return tab[i].name;
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
static void parse_notes(struct tfile_reader *t, const char *notes)
{
	const char *p;

	if (strncmp(notes, "probe-trace:", 12) != 0)
		return;
	p = notes + 12;
	while (*p && t->nprobes < TFILE_MAX_NAMES) {
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

static int read_header(struct tfile_reader *t)
{
	char magic[TFILE_MAGIC_LEN];
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (fread(magic, 1, sizeof(magic), t->f) != sizeof(magic) ||
	    memcmp(magic, TFILE_MAGIC, TFILE_MAGIC_LEN) != 0) {
		fprintf(stderr, "%s: %s: not a trace file\n", t->who, t->path);
		return -EINVAL;
	}
	for (;;) {
		n = getline(&line, &cap, t->f);
		if (n < 0) {
			fprintf(stderr, "%s: %s: the header ends early\n", t->who,
				t->path);
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
		} else if (strncmp(line, "tsv ", 4) == 0 &&
			   t->ntsvs < TFILE_MAX_NAMES) {
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
		} else if (strncmp(line, "tp T", 4) == 0 &&
			   t->ntps < TFILE_MAX_NAMES) {
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

/*
 * The thread table at the end of the file, if there is one.  Anything
 * that does not parse is no table: the frames are what matter, and a
 * file of another writer has whatever it has after its end marker.
 */
static void read_threads(struct tfile_reader *t)
{
	static const size_t footer_len = sizeof(TFILE_THREADS_FOOTER) - 1;
	char tail[96], *line = NULL, *p;
	long here = ftell(t->f), size;
	uint64_t at;
	size_t cap = 0, got;
	ssize_t n;

	if (here < 0 || fseek(t->f, 0, SEEK_END) < 0 || (size = ftell(t->f)) <= 0)
		goto out;
	got = size < (long)sizeof(tail) - 1 ? (size_t)size : sizeof(tail) - 1;
	if (fseek(t->f, size - (long)got, SEEK_SET) < 0 ||
	    fread(tail, 1, got, t->f) != got || got < 2 || tail[got - 1] != '\n')
		goto out;
	tail[got - 1] = '\0';
	/* the bytes before the last line may be a frame's, zeros included */
	p = memrchr(tail, '\n', got - 1);
	p = p ? p + 1 : tail;
	if (strncmp(p, TFILE_THREADS_FOOTER, footer_len) != 0)
		goto out;
	at = strtoull(p + footer_len, &p, 16);
	if (*p || at < (uint64_t)here || at >= (uint64_t)size ||
	    fseek(t->f, (long)at, SEEK_SET) < 0)
		goto out;
	n = getline(&line, &cap, t->f);
	if (n < 0 || strcmp(line, TFILE_THREADS_MAGIC) != 0)
		goto out;
	while ((n = getline(&line, &cap, t->f)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if (strncmp(line, "pid ", 4) == 0) {
			t->pid = strtol(line + 4, NULL, 10);
		} else if (strncmp(line, "filtered ", 9) == 0) {
			t->rec_filter = true;
			t->rec_filtered = strtoull(line + 9, NULL, 10);
		} else if (strncmp(line, "filtered-tp ", 12) == 0) {
			char *end;
			long num = strtol(line + 12, &end, 10);
			size_t k = t->nrec_filtered_tp;
			if (*end == ' ' && k < sizeof(t->rec_filtered_tp) /
					       sizeof(t->rec_filtered_tp[0])) {
				t->rec_filtered_tp[k].num = num;
				t->rec_filtered_tp[k].count = strtoull(end + 1, NULL, 10);
				t->nrec_filtered_tp++;
			}
		} else if (strncmp(line, "stops-tp ", 9) == 0) {
			struct tfile_stops st = { 0 };
			char *end, *hex;
			st.num = strtol(line + 9, &end, 10);
			st.stops = strtoull(end, &end, 10);
			st.ring_full = strtoull(end, &end, 10);
			st.waited = strtoull(end, &end, 10);
			if (*end != ' ' || t->nrec_stops >= sizeof(t->rec_stops) /
							    sizeof(t->rec_stops[0]))
				continue;
			hex = end + 1;
			n = rsp_hex_decode(hex, strlen(hex), st.how, sizeof(st.how) - 1);
			if (n <= 0)
				continue;
			st.how[n] = '\0';
			t->rec_stops[t->nrec_stops++] = st;
		} else if (strncmp(line, "hist-tp ", 8) == 0) {
			struct tfile_hist hg = { 0 };
			char *end;
			uint64_t total;
			hg.num = strtol(line + 8, &end, 10);
			hg.n = strtoull(end, &end, 10);
			hg.sum = strtoull(end, &end, 10);
			hg.zero = strtoull(end, &end, 10);
			if (*end != ' ' || t->nrec_hist >= sizeof(t->rec_hist) /
							    sizeof(t->rec_hist[0]))
				continue;
			end++;
			total = hg.zero;
			if (strcmp(end, "-") != 0)
				for (int k = 0; k < 64; k++) {
					hg.b[k] = strtoull(end, &end, 10);
					total += hg.b[k];
					if (*end != ',')
						break;
					end++;
				}
			if (*end || total != hg.n)
				continue;	/* not whole: none */
			t->rec_hist[t->nrec_hist++] = hg;
		} else if (line[0] == 't' && line[1] == ' ') {
			struct tfile_thread th = { 0 };
			char *end, *hex;
			th.tid = strtoll(line + 2, &end, 10);
			if (*end != ' ')
				continue;
			hex = end + 1;
			n = rsp_hex_decode(hex, strlen(hex), th.name,
					   sizeof(th.name) - 1);
			if (n < 0)
				continue;
			th.name[n] = '\0';
			if (t->nthreads % 64 == 0) {
				struct tfile_thread *nt = realloc(t->threads,
					(t->nthreads + 64) * sizeof(*nt));
				if (!nt)
					abort();
				t->threads = nt;
			}
			t->threads[t->nthreads++] = th;
		} else {
			break;
		}
	}
	if (t->pid <= 0) {		/* a table names its process */
		t->pid = 0;
		t->nthreads = 0;
		t->rec_filter = false;
		t->nrec_filtered_tp = 0;
		t->nrec_stops = 0;
	}
out:
	free(line);
	if (here >= 0)
		fseek(t->f, here, SEEK_SET);
}

/* Opens `path`, or the `len` bytes at `data` when data is not NULL. */
static int reader_open(struct tfile_reader *t, const char *path,
		       const void *data, size_t len, const char *who)
{
	memset(t, 0, sizeof(*t));
	t->path = path;
	t->who = who;
	rsp_buf_init(&t->tdesc);
	t->f = data ? fmemopen((void *)data, len, "rb") : fopen(path, "rb");
	if (!t->f) {
		int e = errno;
		fprintf(stderr, "%s: %s: %s\n", who, path, strerror(e));
		return -e;
	}
	if (read_header(t) < 0)
		return -EINVAL;
	read_threads(t);
	return 0;
}

int tfile_reader_open(struct tfile_reader *t, const char *path,
		      const char *who)
{
	return reader_open(t, path, NULL, 0, who);
}

int tfile_reader_open_mem(struct tfile_reader *t, const void *data,
			  size_t len, const char *name, const char *who)
{
	return reader_open(t, name, data, len, who);
}

void tfile_reader_name_thread(struct tfile_reader *t, int64_t tid,
			      const char *name)
{
	struct tfile_thread *th = NULL;

	for (size_t i = 0; i < t->nthreads && !th; i++)
		if (t->threads[i].tid == tid)
			th = &t->threads[i];
	if (!th) {
		if (t->nthreads % 64 == 0) {
			struct tfile_thread *nt = realloc(t->threads,
				(t->nthreads + 64) * sizeof(*nt));
			if (!nt)
				abort();
			t->threads = nt;
		}
		th = &t->threads[t->nthreads++];
		th->tid = tid;
	}
	snprintf(th->name, sizeof(th->name), "%s", name);
}

void tfile_reader_close(struct tfile_reader *t)
{
	if (t->f)
		fclose(t->f);
	free(t->data);
	for (size_t i = 0; i < t->ntsvs; i++)
		free(t->tsvs[i].name);
	for (size_t i = 0; i < t->nprobes; i++)
		free(t->probes[i].name);
	/* parsed, even when the file's blocks are too small for it */
	target_regs_free(&t->regs);
	rsp_buf_free(&t->tdesc);
	free(t->status_line);
	free(t->threads);
	typed_file_free(&t->typed);
	memset(t, 0, sizeof(*t));
}

/*
 * Reads a frame's `size` bytes into t->data, growing it a megabyte at a
 * time as the bytes arrive: the size comes from the file, and a damaged
 * one (up to 4 GiB) must not become an allocation before the file shows
 * it holds that much.  -EIO when the file ends first.
 */
static int read_body(struct tfile_reader *t, uint32_t size)
{
	const size_t step = 1 << 20;
	size_t got = 0;

	while (got < size) {
		size_t want = size - got < step ? size - got : step;

		if (got + want > t->cap) {
			uint8_t *p = realloc(t->data, got + want);
			if (!p)
				abort();
			t->data = p;
			t->cap = got + want;
		}
		if (fread(t->data + got, 1, want, t->f) != want)
			return -EIO;
		got += want;
	}
	return 0;
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
		} else if (b.type == 'M' && v->nmem < FRAME_MAX_MEM) {
			uint16_t n;
			memcpy(&v->mem[v->nmem].addr, b.body, 8);
			memcpy(&n, b.body + 8, 2);
			v->mem[v->nmem].data = b.body + 10;
			v->mem[v->nmem].len = n;
			v->nmem++;
		} else if (b.type == 'V' && v->ntsv < FRAME_MAX_TSV) {
			int32_t num;
			memcpy(&num, b.body, 4);
			v->tsv_num[v->ntsv] = num;
			memcpy(&v->tsv_val[v->ntsv], b.body + 4, 8);
			v->ntsv++;
		}
	}
	return r;
}

int tfile_reader_seek(struct tfile_reader *t, uint64_t offset,
		      uint64_t number)
{
	if (fseeko(t->f, (off_t)offset, SEEK_SET) < 0)
		return -errno;
	t->number = number;
	t->truncated = false;
	return 0;
}

int tfile_reader_next(struct tfile_reader *t, struct frame_view *v)
{
	off_t at = ftello(t->f);
	int16_t tpnum;
	uint32_t size;

	if (fread(&tpnum, 1, 2, t->f) != 2) {
		t->truncated = true;	/* no end marker */
		return 0;
	}
	if (tpnum == 0)
		return 0;
	if (fread(&size, 1, 4, t->f) != 4 || read_body(t, size) < 0) {
		t->truncated = true;
		return 0;
	}
	memset(v, 0, sizeof(*v));
	v->number = t->number;
	v->offset = at < 0 ? 0 : (uint64_t)at;
	v->tpnum = tpnum;
	if (parse_frame(t->data, size, t->regblock, v) < 0) {
		fprintf(stderr, "%s: %s: frame %" PRIu64 " is damaged; stopping there\n",
			t->who, t->path, t->number);
		return -EINVAL;
	}
	t->number++;
	return 1;
}

int tfile_frame_view(const struct tfile_reader *t, long tpnum,
		     const uint8_t *body, size_t len, uint64_t number,
		     struct frame_view *v)
{
	memset(v, 0, sizeof(*v));
	v->number = number;
	v->tpnum = tpnum;
	return parse_frame(body, len, t->regblock, v) < 0 ? -EINVAL : 0;
}

const char *tfile_tsv_name(const struct tfile_reader *t, long num)
{
	return tfile_lookup(t->tsvs, t->ntsvs, num);
}

bool frame_tsv(const struct frame_view *v, const struct tfile_reader *t,
	       const char *name, int64_t *out)
{
	for (size_t i = 0; i < v->ntsv; i++) {
		const char *n = tfile_tsv_name(t, v->tsv_num[i]);
		if (n && strcmp(n, name) == 0) {
			*out = v->tsv_val[i];
			return true;
		}
	}
	return false;
}

static uint64_t tp_addr(const struct tfile_reader *t, long num)
{
	for (size_t i = 0; i < t->ntps; i++)
		if (t->tps[i].num == num)
			return t->tps[i].addr;
	return 0;
}

const char *tfile_probe_name(const struct tfile_reader *t, long tpnum,
			     char *buf, size_t size)
{
	const char *n = tfile_lookup(t->probes, t->nprobes, tpnum);

	if (n)
		return n;
	snprintf(buf, size, "tracepoint %ld at 0x%" PRIx64, tpnum,
		 tp_addr(t, tpnum));
	return buf;
}

const struct tfile_stops *tfile_rec_stops(const struct tfile_reader *t, long tpnum)
{
	for (size_t i = 0; i < t->nrec_stops; i++)
		if (t->rec_stops[i].num == tpnum)
			return &t->rec_stops[i];
	return NULL;
}

void tfile_stops_text(char *buf, size_t size, const char *how, uint64_t stops,
		      uint64_t ring_full, uint64_t waited)
{
	int n = snprintf(buf, size, "%s, %" PRIu64 " stop%s", how, stops,
			 stops == 1 ? "" : "s");

	if (n < 0 || (size_t)n >= size)
		return;
	if (ring_full && waited)
		snprintf(buf + n, size - (size_t)n, " (the ring was full %" PRIu64
			 " time%s; %" PRIu64 " waited for room in the buffer)", ring_full,
			 ring_full == 1 ? "" : "s", waited);
	else if (ring_full)
		snprintf(buf + n, size - (size_t)n, " (the ring was full %" PRIu64 " time%s)",
			 ring_full, ring_full == 1 ? "" : "s");
	else if (waited)
		snprintf(buf + n, size - (size_t)n, " (%" PRIu64 " waited for room in "
			 "the buffer)", waited);
}

uint64_t tfile_rec_filtered(const struct tfile_reader *t, long tpnum)
{
	for (size_t i = 0; i < t->nrec_filtered_tp; i++)
		if (t->rec_filtered_tp[i].num == tpnum)
			return t->rec_filtered_tp[i].count;
	return 0;
}

const char *tfile_thread_name(const struct tfile_reader *t, int64_t tid)
{
	for (size_t i = 0; i < t->nthreads; i++)
		if (t->threads[i].tid == tid)
			return t->threads[i].name;
	return NULL;
}

const char *tfile_value_name(const char *tsv)
{
	if (strncmp(tsv, "probe_arg", 9) == 0 || strcmp(tsv, "probe_retval") == 0)
		return tsv + 6;
	return tsv;
}

void tfile_json_str(FILE *out, const char *s)
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

uint64_t tfile_le_value(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i-- > 0;)
		v = (v << 8) | p[i];
	return v;
}

/* ---- filters ---- */

static int parse_id(const char *s, size_t len, int64_t *out)
{
	char buf[32], *end;
	long long v;

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (*end || errno || v <= 0)
		return -EINVAL;
	*out = v;
	return 0;
}

int frame_filter_add(struct frame_filter *ff, char opt, const char *arg,
		     const char *who)
{
	int64_t id;

	switch (opt) {
	case 'p':
		if (parse_id(arg, strlen(arg), &id) < 0 || id > INT32_MAX) {
			fprintf(stderr, "%s: --pid: '%s' is not a process id\n",
				who, arg);
			return -EINVAL;
		}
		ff->pid = (long)id;
		break;
	case 't':
		for (const char *p = arg;; ) {
			size_t n = strcspn(p, ",");
			if (parse_id(p, n, &id) < 0) {
				fprintf(stderr, "%s: --tid: '%s' is not a thread id "
					"or a list of them (1234,1235)\n", who, arg);
				return -EINVAL;
			}
			int64_t *nt = realloc(ff->tids, (ff->ntids + 1) * sizeof(*nt));
			if (!nt)
				abort();
			ff->tids = nt;
			ff->tids[ff->ntids++] = id;
			if (!p[n])
				break;
			p += n + 1;
		}
		break;
	case 'c':
		if (!*arg) {
			fprintf(stderr, "%s: --comm: an empty thread name\n", who);
			return -EINVAL;
		}
		ff->comm = arg;
		break;
	default:
		return -EINVAL;
	}
	ff->active = true;
	return 0;
}

int frame_filter_check(const struct frame_filter *ff,
		       const struct tfile_reader *t)
{
	if ((ff->pid || ff->comm) && !t->pid) {
		fprintf(stderr, "%s: %s: --%s needs the table of threads that "
			"probe-trace record writes at the end of a recording; this "
			"file has none (cut short, or not written by probe-trace "
			"record)\n", t->who, t->path, ff->pid ? "pid" : "comm");
		return -EINVAL;
	}
	return 0;
}

bool frame_filter_match(const struct frame_filter *ff,
			const struct tfile_reader *t,
			const struct frame_view *v)
{
	int64_t tid = 0;
	bool have_tid;

	if (!ff->active)
		return true;
	if (ff->pid && ff->pid != t->pid)
		return false;
	have_tid = frame_tsv(v, t, "probe_thread", &tid);
	if (ff->ntids) {
		bool any = false;
		for (size_t i = 0; i < ff->ntids && !any; i++)
			any = have_tid && ff->tids[i] == tid;
		if (!any)
			return false;
	}
	if (ff->comm) {
		const char *name = have_tid ? tfile_thread_name(t, tid) : NULL;
		if (!name || fnmatch(ff->comm, name, 0) != 0)
			return false;
	}
	return true;
}

void frame_filter_free(struct frame_filter *ff)
{
	free(ff->tids);
	ff->tids = NULL;
	ff->ntids = 0;
}
