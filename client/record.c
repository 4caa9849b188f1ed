/*
 * record.c - `probe-trace record`: probes into a trace file, no gdb.
 *
 * The recorder is an RSP client of probe-agent like gdb.  It starts the
 * agent (locally, or any command such as `ssh board probe-agent -`) or
 * connects to one, puts it in extended and non-stop mode, resolves every
 * probe spec against local copies of the program and its libraries,
 * defines one tracepoint per probe, starts the run and lets the program go.
 * While the program runs it streams frames out of the agent's buffer with
 * the agent's qprobe.frames packet and appends them to the file, which is
 * a valid trace file at every moment (frames, then the end marker, written
 * in one pwrite at a time).
 *
 *   header (tfile.h) | frames ... | 0000 0000
 *                       ^ each batch overwrites the end marker and
 *                         writes a new one after itself
 *
 * When the recording ends, the process id and the names of the threads
 * its frames (or the agent's thread list, read twice a second) named
 * follow the end marker: the thread table of client/tfile-read.h, which
 * dump, report and the exports read and gdb never does.  --tid and
 * --comm drop other threads' frames here, before the file, and the
 * table keeps their count.
 *
 * --live prints each frame the file takes on stdout as well, as dump
 * would print it from the file (frame-print.c): through a tfile_reader
 * of the very header the file got, kept in memory (so also for
 * -o /dev/null), with the thread names the table will hold.
 *
 * Trace state variables the recorder defines (all tracepoints collect the
 * first two; see doc/probe-trace.1):
 *   1 trace_timestamp (the agent's builtin, microseconds), 2 probe_thread,
 *   3 probe_latency_ns (return probes), 4 probe_retval, 5.. probe_arg0,
 *   probe_arg1, ...  (gdb's tdump treats names beginning with "arg",
 *   "reg" or "loc" as $args, $regs, $locals: hence the prefix.)
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "client/dwarfval.h"
#include "client/elfsym.h"
#include "client/frame-print.h"
#include "client/probe-trace.h"
#include "client/record.h"
#include "client/rsp-client.h"
#include "client/sdt.h"
#include "client/spec.h"
#include "client/target.h"
#include "client/typed.h"
#include "client/tfile-read.h"
#include "protocol/ax-emit.h"
#include "protocol/rsp-request.h"
#include "protocol/tbuf.h"
#include "protocol/tfile.h"
#include "protocol/tp-status.h"
#include "protocol/tracepoint.h"

#define TSV_TIMESTAMP 1
#define TSV_THREAD 2
#define TSV_LATENCY 3
#define TSV_RETVAL 4
#define TSV_ARG0 5
#define MAX_PROBES 256
#define MAX_MODULES 512
#define DEFAULT_BUFFER (16u << 20)
/* ms for one request; shorter while a dead agent's frames are salvaged */
static int req_timeout_ms = 30000;
#define REQ_TIMEOUT req_timeout_ms
#define STATUS_RESERVE 160		/* bytes the status line keeps free */

struct module {
	char *path;			/* on the target */
	char *local;			/* local copy */
	uint64_t bias;			/* runtime = link-time + bias */
	bool opened, failed;
	struct elfsym_file ef;
	struct dv_module *dv;		/* its DWARF, when it has some */
	char *dv_error;			/* why not */
	bool dv_tried;
};

#define MAX_SITES 64
#define MAX_LOADS 64
/* QTDP addresses of pending probes the agent resolves by symbol: no code
 * is there in any process, and the file's tracepoint is shown at it. */
#define PENDING_KEY(tpnum) ((uint64_t)(tpnum))

/* Where a probe is: one place for a function or address; every site of a
 * USDT probe name (the same probe inlined in several places), each a
 * location of the probe's tracepoint. */
struct site {
	uint64_t addr;
	const struct sdt_probe *sdt;	/* its note, or NULL */
	uint64_t sem;			/* runtime semaphore address, 0 none */
	bool sem_done;
};

struct probe {
	struct probe_spec spec;
	int tpnum;
	char name[160];
	struct module *mod;
	int nargs;			/* args collected */
	struct site sites[MAX_SITES];
	size_t nsites;
	struct sdt_file sdt;		/* USDT: the module's notes */
	bool sdt_open;
	uint64_t frames;		/* received */
	uint64_t lost;			/* the agent had no room for them */
	/* Typed values (DWARF), per site: what they are, what to collect. */
	struct typed_probe *typed;
	struct dv_collect *collect;
	bool typed_args;		/* `args` are typed: no raw argN */
	bool after_prologue;		/* moved past the prologue */
	uint64_t filtered;		/* dropped by --tid / --comm */
	/* In a library not loaded yet: the agent places it at each load
	 * (Qprobe.pending) and says so (qprobe.libevents). */
	bool pending;
	char *pending_sym;		/* for the agent to find; NULL: the
					   site is link-time (resolved here) */
	bool pending_failed;		/* it said why it could not place it */
	struct load {
		uint64_t addr, frames;
		bool ended;
	} loads[MAX_LOADS];
	unsigned int nloads;		/* loads seen (more than kept) */
};

struct recorder {
	/* options */
	const char *out_path;
	const char *agent_cmd;
	const char *connect;
	const char *sysroot;
	pid_t attach_pid;
	char **prog_argv;
	int prog_argc;
	double duration;
	uint64_t buffer_size;
	bool quiet;
	bool tty_status;		/* the status line, on a terminal */
	/* --live: every frame written to the file is printed on stdout,
	 * as dump prints it (frame-print.c), read through a reader of the
	 * file's header, which write_cb keeps in live_head */
	bool live, live_json;
	struct rsp_buf live_head;
	struct tfile_reader *live_reader;
	char tty_text[512];		/* the status line shown */
	bool out_regular;		/* the output is a regular file */
	unsigned int string_max;	/* bytes of a typed char * collected */
	bool full_stops;		/* --on-full=stop: a full buffer ends the run */
	bool full_drops;		/* --on-full=drop: hits without room are
					   lost, counted, and the run goes on */
	uint64_t lost;			/* frames lost, all probes (qprobe.lost) */
	bool lost_said;			/* the first loss was reported */
	uint32_t lost_tp[MAX_PROBES];	/* the file's table of losses */
	uint64_t lost_count[MAX_PROBES];
	/* The run ended by itself (full buffer, error...): what the agent
	 * said, for the user, the file and the exit status. */
	bool self_stopped;
	struct tp_status why;
	char why_error[128];

	struct rsp_client c;
	struct rsp_buf reply;
	struct target_regs regs;
	const struct arch_ops *tarch;	/* the target's arch: its ABI */
	char *target_xml;
	int pid;
	bool started;			/* we started the program */
	bool exited;
	int exit_code, exit_signal;
	bool running;			/* trace run started */
	/* Salvaging a dead agent's frames (recover()): the new agent runs
	 * with --multi, and vAttach is retried until this time (ms) while
	 * the program is still traced by the dying agent. */
	uint64_t attach_until;

	struct module mods[MAX_MODULES];
	size_t nmods;
	struct probe probes[MAX_PROBES];
	size_t nprobes;
	int max_args;
	bool any_ret;
	bool usage_error;		/* a spec names what is not there */

	struct tp_store store;
	struct rsp_request *req;

	/* output */
	int fd;
	uint64_t end;			/* offset of the end marker */
	uint64_t frames, bytes;
	uint8_t *carry;			/* partial frame from the stream */
	size_t carry_len, carry_cap;
	bool write_failed;
	uint64_t frames_at_last, last_tick_ms;
	uint64_t start_ms;
	struct tp_status st;		/* the header's status line */
	char *notes;
	uint64_t status_off;		/* of the text after "status " */
	size_t status_len;
	bool header_written;

	/* The program's threads, with their names as the agent read them
	 * when the recorder took the thread's first frame, or, for a
	 * thread gone by then, when the thread list last showed it (name[0]
	 * is 0 when neither could); the file's thread table. */
	struct rec_thread {
		int64_t tid;
		char name[64];
		bool asked;		/* the name was read or tried */
		bool framed;		/* a frame of it was taken */
	} *threads;
	size_t nthreads, cap_threads;
	size_t unasked;			/* threads with !asked */

	/* --tid, --comm: frames of other threads are dropped here, counted
	 * (in all and per probe) and the count kept in the thread table */
	int64_t *keep_tids;
	size_t nkeep_tids;
	const char *keep_comm;
	uint64_t filtered;
};

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void err_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void err_msg(const char *fmt, ...)
{
	va_list ap;

	fputs("probe-trace record: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- talking to the agent ---- */

/* A request whose reply must be OK. */
static int request_ok(struct recorder *r, const char *what, const char *fmt,
		      ...) __attribute__((format(printf, 3, 4)));
static int request_ok(struct recorder *r, const char *what, const char *fmt,
		      ...)
{
	char buf[RSP_MAX_PAYLOAD];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		err_msg("%s: request too long", what);
		return -E2BIG;
	}
	int e = rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT, "%s", buf);
	if (e < 0) {
		err_msg("%s: %s", what, r->c.error);
		return e;
	}
	if (strcmp(r->reply.data, "OK") != 0) {
		const char *m = r->reply.data;
		if (m[0] == 'E' && m[1] == '.')
			m += 2;
		err_msg("%s: the agent says: %s", what,
			*m ? m : "not supported");
		return -EIO;
	}
	return 0;
}

/* `len` bytes as hex, in `b` (reset), NUL-terminated. */
static const char *hex_of(struct rsp_buf *b, const void *data, size_t len)
{
	rsp_buf_reset(b);
	rsp_buf_put_hex(b, data, len);
	rsp_buf_putc(b, '\0');
	return b->data;
}

/* monitor command: console output (O packets) then OK or an error. */
static int monitor(struct recorder *r, const char *cmd, char *out,
		   size_t outsize)
{
	struct rsp_buf hex;
	size_t used = 0;

	rsp_buf_init(&hex);
	int e = rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT, "qRcmd,%s",
				   hex_of(&hex, cmd, strlen(cmd)));
	rsp_buf_free(&hex);
	if (out)
		out[0] = '\0';
	while (e == 0 && r->reply.data[0] == 'O' && strcmp(r->reply.data, "OK")) {
		char text[RSP_MAX_PAYLOAD / 2 + 1];
		ssize_t n = rsp_hex_decode(r->reply.data + 1, r->reply.len - 1,
					   text, sizeof(text) - 1);
		if (n > 0 && out && used + (size_t)n < outsize) {
			memcpy(out + used, text, (size_t)n);
			used += (size_t)n;
			out[used] = '\0';
		}
		e = rsp_client_wait_reply(&r->c, &r->reply, REQ_TIMEOUT);
	}
	if (e < 0)
		return e;
	return strcmp(r->reply.data, "OK") == 0 ? 0 : -EIO;
}

/* "...;thread:pPID.TID;..." or "process:PID" in a stop reply. */
static int stop_pid(const char *stop)
{
	const char *t = strstr(stop, "thread:p");
	if (t)
		return (int)strtol(t + 8, NULL, 16);
	t = strstr(stop, "process:");
	if (t)
		return (int)strtol(t + 8, NULL, 16);
	return 0;
}

static void stop_thread(const char *stop, char *out, size_t size)
{
	const char *t = strstr(stop, "thread:");
	size_t n;

	out[0] = '\0';
	if (!t)
		return;
	t += 7;
	n = strcspn(t, ";");
	snprintf(out, size, "%.*s", (int)n, t);
}

/*
 * One stop reply of the running program.  A signal is passed back to the
 * thread (a crash then ends the program as it would without us); an exit
 * ends the recording.
 */
static void handle_stop(struct recorder *r, const char *stop)
{
	char thread[64];
	int sig;

	switch (stop[0]) {
	case 'W':
	case 'X':
		if (stop_pid(stop) && stop_pid(stop) != r->pid)
			return;
		r->exited = true;
		if (stop[0] == 'W')
			r->exit_code = (int)strtol(stop + 1, NULL, 16);
		else
			r->exit_signal = (int)strtol(stop + 1, NULL, 16);
		return;
	case 'T':
	case 'S':
		sig = (int)strtol((char[]){ stop[1], stop[2], 0 }, NULL, 16);
		stop_thread(stop, thread, sizeof(thread));
		if (!thread[0])
			return;
		/* 0: stopped by us (vCont;t); SIGTRAP/SIGSTOP: ptrace noise
		 * the agent did not absorb; anything else is the program's. */
		if (sig == 0 || sig == 5 || sig == 17)
			rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT,
					   "vCont;c:%s", thread);
		else
			rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT,
					   "vCont;C%02x:%s", sig, thread);
		return;
	default:
		return;
	}
}

/*
 * Drains a %Stop notification: its payload, then vStopped until OK.  As
 * gdb does, every queued stop is pulled before any thread is resumed (the
 * agent leaves alone a thread whose stop is still queued); then each is
 * handled, unless `last` asks only for the last one (setup).
 */
static int drain_stops(struct recorder *r, const char *first,
		       char *last, size_t lastsize)
{
	struct rsp_buf stops;	/* NUL-separated stop replies */
	int n = 0, e = 0;

	rsp_buf_init(&stops);
	rsp_buf_put(&stops, first, strlen(first) + 1);
	for (;;) {
		e = rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT, "vStopped");
		if (e < 0)
			break;
		if (strcmp(r->reply.data, "OK") == 0 || r->reply.len == 0)
			break;
		rsp_buf_put(&stops, r->reply.data, r->reply.len + 1);
	}
	for (size_t off = 0; off < stops.len; off += strlen(stops.data + off) + 1) {
		const char *stop = stops.data + off;
		if (!stop[0] || strcmp(stop, "OK") == 0)
			continue;
		n++;
		if (last)
			snprintf(last, lastsize, "%s", stop);
		else if (e == 0)
			handle_stop(r, stop);
	}
	rsp_buf_free(&stops);
	return e < 0 ? e : n;
}

/* Handles queued notifications; returns -EPIPE if the agent went away. */
static int handle_notes(struct recorder *r)
{
	struct rsp_note *n;

	while ((n = rsp_client_next_note(&r->c))) {
		int e = 0;
		if (strncmp(n->payload, "Stop:", 5) == 0)
			e = drain_stops(r, n->payload + 5, NULL, 0);
		free(n);
		if (e < 0)
			return e;
	}
	return 0;
}

/* Waits for the next stop (all-stop of the one stopping thread) after a
 * resume during setup.  Writes its reply into `stop`. */
static int wait_setup_stop(struct recorder *r, char *stop, size_t size,
			   int timeout_ms)
{
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;

	for (;;) {
		struct rsp_note *n = rsp_client_next_note(&r->c);
		if (n) {
			int e = 0;
			if (strncmp(n->payload, "Stop:", 5) == 0)
				e = drain_stops(r, n->payload + 5, stop, size);
			free(n);
			return e < 0 ? e : 0;
		}
		if (now_ms() > deadline)
			return -ETIMEDOUT;
		int e = rsp_client_poll(&r->c, 100);
		if (e < 0 && e != -ETIMEDOUT && e != -EINTR)
			return e;
	}
}

/* ---- modules and symbols ---- */

static char *local_path(struct recorder *r, const char *target_path)
{
	char *p;

	if (!r->sysroot)
		return strdup(target_path);
	if (asprintf(&p, "%s%s", r->sysroot, target_path) < 0)
		abort();
	return p;
}

/* A module's file, stripped or not: the program's header and build-id
 * are needed even when only a library is probed. */
static struct elfsym_file *module_elf(struct module *m)
{
	char err[512];

	if (!m->opened && !m->failed) {
		if (elfsym_open_any(&m->ef, m->local, err, sizeof(err)) < 0) {
			err_msg("%s", err);
			m->failed = true;
		} else {
			m->opened = true;
		}
	}
	return m->opened ? &m->ef : NULL;
}

/*
 * The GNU build-id note of a local file: its bytes and link-time address.
 * Returns the id length, 0 when there is none.
 */
static size_t build_id(struct elfsym_file *f, uint8_t *id, size_t size,
		       uint64_t *vaddr)
{
	Elf *e = f->elf;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(sh.sh_flags & SHF_ALLOC) || !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((char *)d->d_buf + name_off, "GNU", 4) == 0 &&
			    nh.n_descsz <= size) {
				memcpy(id, (char *)d->d_buf + desc_off, nh.n_descsz);
				*vaddr = sh.sh_addr + desc_off;
				return nh.n_descsz;
			}
		}
	}
	return 0;
}

static int read_target(struct recorder *r, uint64_t addr, void *out, size_t len)
{
	int e = rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT, "m%llx,%zx",
				   (unsigned long long)addr, len);
	if (e < 0)
		return e;
	if (r->reply.data[0] == 'E' || r->reply.len != 2 * len)
		return -EFAULT;
	return rsp_hex_decode(r->reply.data, r->reply.len, out, len) ==
	       (ssize_t)len ? 0 : -EFAULT;
}

/* Refuses a local copy whose build-id differs from the loaded one. */
static int check_build_id(struct recorder *r, struct module *m)
{
	struct elfsym_file *f = module_elf(m);
	uint8_t want[64], got[64];
	uint64_t vaddr;
	size_t n;

	if (!f)
		return -ENOENT;
	n = build_id(f, want, sizeof(want), &vaddr);
	if (n == 0)
		return 0;	/* nothing to compare */
	if (read_target(r, vaddr + m->bias, got, n) < 0) {
		err_msg("%s: cannot read the target's build-id at 0x%llx",
			m->path, (unsigned long long)(vaddr + m->bias));
		return -EFAULT;
	}
	if (memcmp(want, got, n) != 0) {
		struct rsp_buf a, b;
		rsp_buf_init(&a);
		rsp_buf_init(&b);
		err_msg("%s: the local copy %s has build-id %s but the target's "
			"has %s: give the right copy (--sysroot)",
			m->path, m->local, hex_of(&a, want, n), hex_of(&b, got, n));
		rsp_buf_free(&a);
		rsp_buf_free(&b);
		return -ESTALE;
	}
	return 0;
}

static struct module *add_module(struct recorder *r, const char *path,
				 uint64_t bias)
{
	struct module *m;

	if (r->nmods == MAX_MODULES)
		return NULL;
	m = &r->mods[r->nmods++];
	memset(m, 0, sizeof(*m));
	m->path = strdup(path);
	m->local = local_path(r, path);
	m->bias = bias;
	return m;
}

/* <library name="..." ... l_addr="0x..." .../> */
static void parse_libraries(struct recorder *r, const char *xml)
{
	const char *p = xml;

	while ((p = strstr(p, "<library "))) {
		const char *end = strchr(p, '>');
		const char *name, *la;
		if (!end)
			break;
		name = strstr(p, "name=\"");
		la = strstr(p, "l_addr=\"");
		if (name && la && name < end && la < end) {
			name += 6;
			size_t n = strcspn(name, "\"");
			char path[PATH_MAX];
			snprintf(path, sizeof(path), "%.*s", (int)n, name);
			if (path[0] == '/')
				add_module(r, path, strtoull(la + 8, NULL, 16));
		}
		p = end;
	}
}

/* The library named by a spec: a path, a file name or its prefix before
 * ".so" ("libc", "libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6"). */
static struct module *find_library(struct recorder *r, const char *lib,
				   char *err, size_t errsize)
{
	struct module *found = NULL;
	int count = 0;

	for (size_t i = 1; i < r->nmods; i++) {
		const char *path = r->mods[i].path;
		const char *base = strrchr(path, '/');
		base = base ? base + 1 : path;
		size_t n = strlen(lib);
		bool match = strcmp(path, lib) == 0 || strcmp(base, lib) == 0 ||
			     (strncmp(base, lib, n) == 0 &&
			      (base[n] == '.' || base[n] == '-'));
		if (match) {
			if (found && strcmp(found->path, path) != 0)
				count++;
			if (!found)
				count++;
			found = &r->mods[i];
		}
	}
	if (count == 1)
		return found;
	if (count == 0)
		snprintf(err, errsize, "no library '%s' is loaded in the process%s",
			 lib, r->nmods > 1 ? "" : " (it loads none)");
	else
		snprintf(err, errsize, "library '%s' is ambiguous: give its path", lib);
	return NULL;
}

/* Whether no loaded library matches `lib` at all (not an ambiguity). */
static bool library_missing(struct recorder *r, const char *lib)
{
	char err[256];

	return !find_library(r, lib, err, sizeof(err)) &&
	       strncmp(err, "no library", 10) == 0;
}

static int resolve_func(struct recorder *r, struct probe *p, char *err,
			size_t errsize)
{
	struct module *m = &r->mods[0];
	struct elfsym_file *f;
	const struct elfsym *hit = NULL;
	char others[512] = "";
	int count = 0;

	if (p->spec.lib && !(m = find_library(r, p->spec.lib, err, errsize)))
		return library_missing(r, p->spec.lib) ? -ENXIO : -ENOENT;
	if (!(f = module_elf(m))) {
		snprintf(err, errsize, "cannot read the symbols of %s", m->local);
		return -ENOENT;
	}
	for (size_t i = 0; i < f->nsyms; i++) {
		const struct elfsym *s = &f->syms[i];
		if (!elfsym_matches(s, p->spec.func))
			continue;
		if (hit && hit->addr == s->addr)
			continue;
		count++;
		size_t used = strlen(others);
		if (used < sizeof(others) - 64)
			snprintf(others + used, sizeof(others) - used,
				 "\n  %s at 0x%llx", elfsym_display(s),
				 (unsigned long long)s->addr);
		hit = s;
	}
	if (count == 0 && f->stripped) {
		/* Every Debian binary is stripped: say what works instead. */
		snprintf(err, errsize, "no function '%s' in %s: the file is "
			 "stripped (%s) and no debug file of it was found%s%s%s; install "
			 "its debug symbols (Debian: the -dbg or -dbgsym package, "
			 "found by build-id under /usr/lib/debug), name a debuginfod "
			 "server that has them in DEBUGINFOD_URLS, give a copy with "
			 "its symbol table (--sysroot DIR holds DIR%s), or probe an "
			 "address in the running process: '*0xADDR'", p->spec.func, m->local,
			 f->nsyms ? "only its exported functions are known"
				  : "it lists no function symbols",
			 f->debug_note ? " (" : "", f->debug_note ? f->debug_note : "",
			 f->debug_note ? ")" : "", m->path);
		return -ENOENT;
	}
	if (count == 0) {
		snprintf(err, errsize, "no function '%s' in %s", p->spec.func,
			 m->local);
		return -ENOENT;
	}
	if (count > 1) {
		snprintf(err, errsize, "'%s' is ambiguous in %s; it names:%s\n"
			 "name one by its full signature or use *ADDR",
			 p->spec.func, m->local, others);
		return -EINVAL;
	}
	if (p->spec.offset >= hit->size) {
		snprintf(err, errsize, "%s+%llu is beyond the end of %s (%llu bytes)",
			 p->spec.func, (unsigned long long)p->spec.offset,
			 elfsym_display(hit), (unsigned long long)hit->size);
		return -ERANGE;
	}
	p->mod = m;
	p->sites[0].addr = hit->addr + m->bias + p->spec.offset;
	p->nsites = 1;
	return 0;
}

/* The module's DWARF, or NULL (err says why). */
static struct dv_module *module_dwarf(struct module *m, char *err,
				      size_t errsize)
{
	if (!m->dv_tried) {
		char why[512] = "no DWARF";
		m->dv_tried = true;
		if (dv_open(&m->dv, m->local, why, sizeof(why)) < 0) {
			m->dv = NULL;
			m->dv_error = strdup(why);
		}
	}
	if (!m->dv)
		snprintf(err, errsize, "%s", m->dv_error ? m->dv_error : "no DWARF");
	return m->dv;
}

/* FILE:LINE: every address where the line's code starts. */
static int resolve_line(struct recorder *r, struct probe *p, char *err,
			size_t errsize)
{
	struct module *m = &r->mods[0];
	struct dv_module *dv;
	uint64_t addrs[MAX_SITES];

	if (p->spec.lib && !(m = find_library(r, p->spec.lib, err, errsize)))
		return -ENOENT;
	if (!module_elf(m)) {
		snprintf(err, errsize, "cannot read %s", m->local);
		return -ENOENT;
	}
	if (!(dv = module_dwarf(m, err, errsize)))
		return -ENOENT;
	int n = dv_line_addrs(dv, p->spec.file, p->spec.line, addrs, MAX_SITES,
			      err, errsize);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++)
		p->sites[i].addr = addrs[i] + m->bias;
	p->nsites = (size_t)n;
	p->mod = m;
	return 0;
}

/*
 * A function of a library the program has not loaded (yet): the agent
 * places it at each load.  A library given by a path that exists here
 * (under --sysroot) is read here, so every name probe-trace knows works
 * (demangled, from a debug file), and the agent adds the load address;
 * otherwise the agent looks the symbol up in the library's file when it
 * loads (exact names, its symbol tables only).
 */
static int resolve_pending(struct recorder *r, struct probe *p, char *err,
			   size_t errsize)
{
	struct module *m;
	struct elfsym_file *f;
	const struct elfsym *hit = NULL;
	char *local = NULL;

	if (p->spec.where != SPEC_FUNC) {
		snprintf(err, errsize, "no library '%s' is loaded in the process, and "
			 "only functions (LIB:FUNC) can wait for a library to load, not "
			 "USDT probes", p->spec.lib);
		return -ENOENT;
	}
	p->pending = true;
	if (p->spec.lib[0] == '/')
		local = local_path(r, p->spec.lib);
	if (!local || access(local, R_OK) != 0) {
		free(local);
		p->pending_sym = strdup(p->spec.func);
		p->sites[0].addr = PENDING_KEY(p->tpnum);
		p->nsites = 1;
		return 0;
	}
	free(local);
	m = add_module(r, p->spec.lib, 0);
	if (!m || !(f = module_elf(m))) {
		snprintf(err, errsize, "cannot read the symbols of %s",
			 m ? m->local : p->spec.lib);
		return -ENOENT;
	}
	/* Not a library of the process: find_library must not see it. */
	r->nmods--;
	for (size_t i = 0; i < f->nsyms && !hit; i++)
		if (elfsym_matches(&f->syms[i], p->spec.func))
			hit = &f->syms[i];
	int rc = 0;
	if (!hit) {
		snprintf(err, errsize, "no function '%s' in %s", p->spec.func, m->local);
		rc = -ENOENT;
	} else if (p->spec.offset >= hit->size) {
		snprintf(err, errsize, "%s+%llu is beyond the end of %s (%llu bytes)",
			 p->spec.func, (unsigned long long)p->spec.offset,
			 elfsym_display(hit), (unsigned long long)hit->size);
		rc = -ERANGE;
	} else {
		p->sites[0].addr = hit->addr + p->spec.offset;
		p->nsites = 1;
	}
	if (m->opened)
		elfsym_close(&m->ef);
	free(m->path);
	free(m->local);
	return rc;
}

/* Qprobe.pending for a pending probe's tracepoint. */
static int define_pending(struct recorder *r, struct probe *p)
{
	struct rsp_buf pkt, hex;
	const char *sym = p->pending_sym ? p->pending_sym : "";
	int e;

	rsp_buf_init(&pkt);
	rsp_buf_init(&hex);
	rsp_buf_printf(&pkt, "Qprobe.pending:%x:%llx:%llx:", p->tpnum,
		       (unsigned long long)p->sites[0].addr,
		       (unsigned long long)(p->pending_sym ? p->spec.offset
							   : p->sites[0].addr));
	rsp_buf_puts(&pkt, hex_of(&hex, sym, strlen(sym)));
	rsp_buf_putc(&pkt, ':');
	rsp_buf_puts(&pkt, hex_of(&hex, p->spec.lib, strlen(p->spec.lib)));
	rsp_buf_putc(&pkt, '\0');
	e = request_ok(r, "defining a probe in a library not loaded yet", "%s", pkt.data);
	rsp_buf_free(&pkt);
	rsp_buf_free(&hex);
	return e;
}

static int resolve_sdt(struct recorder *r, struct probe *p, char *err,
		       size_t errsize)
{
	struct module *m = &r->mods[0];
	const struct sdt_probe *sp = NULL;

	if (p->spec.lib && !(m = find_library(r, p->spec.lib, err, errsize)))
		return library_missing(r, p->spec.lib) ? -ENXIO : -ENOENT;
	if (sdt_open(&p->sdt, m->local, err, errsize) < 0)
		return -ENOENT;
	p->sdt_open = true;
	while ((sp = sdt_find_next(&p->sdt, sp, p->spec.provider, p->spec.name))) {
		if (sp->error) {
			snprintf(err, errsize, "%s", sp->error);
			return -EINVAL;
		}
		if (p->nsites == MAX_SITES) {
			snprintf(err, errsize, "more than %d sites", MAX_SITES);
			return -E2BIG;
		}
		struct site *st = &p->sites[p->nsites++];
		st->addr = sp->pc + m->bias;
		st->sdt = sp;
		st->sem = sp->semaphore ? sp->semaphore + m->bias : 0;
	}
	if (p->nsites == 0) {
		snprintf(err, errsize, "no USDT probe %s:%s in %s (probe-trace list "
			 "--sdt %s shows them)", p->spec.provider, p->spec.name,
			 m->local, m->local);
		return -ENOENT;
	}
	p->mod = m;
	return 0;
}

/* ---- compiling probes to tracepoint definitions ---- */

struct arg_ctx {
	struct recorder *r;
	struct probe *p;
	const struct site *site;
};

static int emit_arg(void *ctx, unsigned int n, struct ax_emit *e, char *err,
		    size_t errsize)
{
	struct arg_ctx *a = ctx;
	const struct sdt_probe *sp = a->site ? a->site->sdt : NULL;

	if (sp) {
		if (n >= sp->nargs) {
			snprintf(err, errsize, "arg%u: USDT probe %s:%s has %zu argument%s",
				 n, sp->provider, sp->name, sp->nargs,
				 sp->nargs == 1 ? "" : "s");
			return -EINVAL;
		}
		int e2 = sdt_arg_emit(&sp->args[n], e, a->p->mod->bias);
		if (e2 < 0) {
			snprintf(err, errsize, "arg%u of %s:%s ('%s'): %s", n,
				 sp->provider, sp->name, sp->args_text,
				 e2 == -ENOENT ? "its symbol is not in the file"
					       : "cannot be read");
			return e2;
		}
		return 0;
	}
	const struct arch_ops *ta = a->r->tarch;
	int reg = target_abi_arg_regnum(&a->r->regs, ta, n);
	if (reg == -ERANGE) {
		snprintf(err, errsize, "arg%u: the %s ABI passes fewer arguments "
			 "in registers", n, a->r->regs.arch);
		return -EINVAL;
	}
	if (reg < 0) {
		snprintf(err, errsize, "no register %s",
			 ta->regs[ta->arg_regs[n]].name);
		return -EINVAL;
	}
	ax_emit_reg(e, (unsigned int)reg);
	return 0;
}

static int regnum_of(void *ctx, const char *name)
{
	struct arg_ctx *a = ctx;

	return target_regnum(&a->r->regs, name);
}

static int probe_nargs(struct recorder *r, const struct probe *p)
{
	int n = 0;

	if (p->nsites && p->sites[0].sdt) {
		/* the fewest of any site (they agree in practice) */
		size_t least = p->sites[0].sdt->nargs;
		for (size_t i = 1; i < p->nsites; i++)
			if (p->sites[i].sdt->nargs < least)
				least = p->sites[i].sdt->nargs;
		return (int)least;
	}
	n = (int)target_abi_nargs(r->tarch);
	return n > 6 ? 6 : n;
}

/* Sends one QTDP-family packet and mirrors it in the local store (for the
 * file's header). */
static int define(struct recorder *r, const char *what, const char *packet)
{
	int e = request_ok(r, what, "%s", packet);

	if (e < 0)
		return e;
	size_t len = strlen(packet);
	char *copy = strdup(packet);
	struct tp_def *tp;
	rsp_parse(copy, len, r->req);
	switch (r->req->kind) {
	case RSP_REQ_TDP:
		e = tp_define(&r->store, r->req, &tp);
		break;
	case RSP_REQ_TDP_ACTIONS:
		e = tp_add_actions(&r->store, r->req, &tp);
		break;
	case RSP_REQ_TDP_SRC:
		e = tp_add_source(&r->store, r->req);
		break;
	case RSP_REQ_TDV:
		e = tsv_define(&r->store, r->req->u.tdv.number,
			       r->req->u.tdv.initial, r->req->u.tdv.builtin,
			       r->req->u.tdv.name);
		break;
	default:
		e = -EINVAL;
	}
	free(copy);
	if (e < 0)
		err_msg("%s: %s", what, r->store.error);
	return e < 0 ? e : 0;
}

static int define_source(struct recorder *r, struct probe *p, uint64_t addr,
			 const char *type, const char *text)
{
	struct rsp_buf pkt;
	int e;

	rsp_buf_init(&pkt);
	rsp_buf_printf(&pkt, "QTDPsrc:%x:%llx:%s:0:%zx:", p->tpnum,
		       (unsigned long long)addr, type, strlen(text));
	rsp_buf_put_hex(&pkt, text, strlen(text));
	rsp_buf_putc(&pkt, '\0');
	e = define(r, "defining a tracepoint's source", pkt.data);
	rsp_buf_free(&pkt);
	return e;
}

static int define_tsv(struct recorder *r, int num, const char *name)
{
	struct rsp_buf pkt;
	int e;

	rsp_buf_init(&pkt);
	rsp_buf_printf(&pkt, "QTDV:%x:0:0:", num);
	rsp_buf_put_hex(&pkt, name, strlen(name));
	rsp_buf_putc(&pkt, '\0');
	e = define(r, "defining a trace state variable", pkt.data);
	rsp_buf_free(&pkt);
	return e;
}

/* Appends "X<len>,<hex>" for the code in e. */
static void put_x(struct rsp_buf *b, const struct ax_emit *e)
{
	rsp_buf_putc(b, 'X');
	ax_emit_put_hex(e, b);
}

/* value on the stack -> TSV `num`, recorded in the frame */
static void emit_store_tsv(struct ax_emit *e, unsigned int num)
{
	ax_emit_op16(e, AX_OP_SETV, num);
	ax_emit_op(e, AX_OP_POP);
	ax_emit_op16(e, AX_OP_TRACEV, num);
}

static int define_line(void *ctx, const char *text)
{
	void **a = ctx;

	return define_source(a[0], a[1], ((const struct site *)a[2])->addr, "cmd",
			     text);
}

static int define_site(struct recorder *r, struct probe *p,
		       const struct site *site)
{
	size_t k = (size_t)(site - p->sites);
	const struct typed_probe *typed = p->typed ? &p->typed[k] : NULL;
	const struct dv_collect *tcol = p->collect ? &p->collect[k] : NULL;
	struct arg_ctx actx = { r, p, site };
	struct spec_compile comp = {
		.emit_arg = emit_arg, .regnum = regnum_of, .ctx = &actx,
		.retval_regnum = target_abi_retval_regnum(&r->regs, r->tarch),
	};
	struct rsp_buf pkt, src;
	struct ax_emit e;
	char err[512];
	int rc = -EINVAL;

	rsp_buf_init(&pkt);
	rsp_buf_init(&src);
	ax_emit_init(&e);

	/* Header, with the condition. */
	rsp_buf_printf(&pkt, "QTDP:%x:%llx:E:0:0", p->tpnum,
		       (unsigned long long)site->addr);
	if (p->spec.cond) {
		if (spec_compile_expr(p->spec.cond, &comp, &e, err, sizeof(err)) < 0) {
			err_msg("%s: condition: %s", p->name, err);
			goto out;
		}
		ax_emit_op(&e, AX_OP_END);
		rsp_buf_putc(&pkt, ':');
		put_x(&pkt, &e);
		ax_emit_free(&e);
		ax_emit_init(&e);
	}
	rsp_buf_puts(&pkt, "-");
	if (define(r, p->name, pkt.data) < 0)
		goto out;

	/* Actions: one X for the values, one per memory range, R for regs. */
	rsp_buf_reset(&pkt);
	rsp_buf_printf(&pkt, "QTDP:-%x:%llx:", p->tpnum,
		       (unsigned long long)site->addr);
	rsp_buf_puts(&src, "collect $trace_timestamp, $probe_thread");
	ax_emit_op16(&e, AX_OP_TRACEV, TSV_TIMESTAMP);
	ax_emit_op16(&e, AX_OP_TRACEV, TSV_THREAD);
	if (p->spec.ret) {
		ax_emit_op16(&e, AX_OP_TRACEV, TSV_LATENCY);
		rsp_buf_puts(&src, ", $probe_latency_ns");
	}
	bool regs = false;
	for (size_t i = 0; i < p->spec.nitems; i++) {
		struct spec_item *it = &p->spec.items[i];
		switch (it->what) {
		case SPEC_REGS:
			regs = true;
			break;
		case SPEC_ARGS:
			if (!it->count && p->typed_args)
				break;	/* typed: below */
			if ((int)it->count > p->nargs) {
				err_msg("%s: args=%u but the probe has %d argument%s",
					p->name, it->count, p->nargs,
					p->nargs == 1 ? "" : "s");
				goto out;
			}
			for (int a = 0; a < (it->count ? (int)it->count : p->nargs); a++) {
				if (emit_arg(&actx, (unsigned int)a, &e, err, sizeof(err)) < 0) {
					err_msg("%s: %s", p->name, err);
					goto out;
				}
				emit_store_tsv(&e, TSV_ARG0 + (unsigned int)a);
				rsp_buf_printf(&src, ", $probe_arg%d", a);
			}
			break;
		case SPEC_RETVAL:
			ax_emit_reg(&e, (unsigned int)comp.retval_regnum);
			emit_store_tsv(&e, TSV_RETVAL);
			rsp_buf_puts(&src, ", $probe_retval");
			break;
		case SPEC_MEM:
		case SPEC_VALUE:
			break;	/* their own expressions: below, and typed */
		}
	}
	ax_emit_op(&e, AX_OP_END);
	put_x(&pkt, &e);
	for (size_t i = 0; i < p->spec.nitems; i++) {
		struct spec_item *it = &p->spec.items[i];
		if (it->what != SPEC_MEM)
			continue;
		ax_emit_free(&e);
		ax_emit_init(&e);
		if (spec_compile_expr(it->addr, &comp, &e, err, sizeof(err)) < 0) {
			err_msg("%s: mem=%s: %s", p->name, it->addr_text, err);
			goto out;
		}
		ax_emit_const(&e, (int64_t)it->len);
		ax_emit_op(&e, AX_OP_TRACE);
		ax_emit_op(&e, AX_OP_END);
		put_x(&pkt, &e);
	}
	/* Typed values: their memory, and the registers their places and
	 * addresses are computed from. */
	if (typed && typed->nvals) {
		regs |= tcol->regs;
		for (size_t i = 0; i < tcol->n; i++) {
			if (tcol->code[i].error) {
				err_msg("%s: a typed value does not compile", p->name);
				goto out;
			}
			if (pkt.len + 2 * tcol->code[i].len + 64 > RSP_MAX_PAYLOAD / 2) {
				rsp_buf_putc(&pkt, '-');
				if (define(r, p->name, pkt.data) < 0)
					goto out;
				rsp_buf_reset(&pkt);
				rsp_buf_printf(&pkt, "QTDP:-%x:%llx:", p->tpnum,
					       (unsigned long long)site->addr);
			}
			put_x(&pkt, &tcol->code[i]);
		}
	}
	if (regs) {
		/* Every register of the block. */
		rsp_buf_putc(&pkt, 'R');
		size_t digits = (r->regs.nregs + 3) / 4;
		for (size_t d = digits; d-- > 0;) {
			size_t bits = r->regs.nregs - d * 4;
			rsp_buf_putc(&pkt, bits >= 4 ? 'f' : "0137"[bits]);
		}
		rsp_buf_puts(&src, ", $regs");
	}
	if (e.error || pkt.len >= RSP_MAX_PAYLOAD - 64) {
		err_msg("%s: too much to collect in one tracepoint", p->name);
		goto out;
	}
	if (define(r, p->name, pkt.data) < 0)
		goto out;

	/* Sources for gdb (`target tfile`): the location and the values. */
	char at[32];
	snprintf(at, sizeof(at), "*0x%llx", (unsigned long long)site->addr);
	if (define_source(r, p, site->addr, "at", at) < 0 ||
	    define_source(r, p, site->addr, "cmd", src.data) < 0)
		goto out;
	/* gdb takes two tracepoints of a file for one when their address,
	 * type, step and pass counts and condition texts agree (it does
	 * not compare actions), and an entry probe and a return probe of a
	 * function share all of these: it would show the return's frames
	 * under the entry's tracepoint, their values void.  A condition
	 * text true of every return frame keeps them apart. */
	if (p->spec.ret &&
	    define_source(r, p, site->addr, "cond", "$probe_latency_ns >= 0") < 0)
		goto out;
	/* What dump needs to print the typed values: comment lines among
	 * the commands, which gdb skips (typed.h). */
	if (typed && typed->nvals) {
		void *a[3] = { r, p, (void *)site };
		if (typed_write(typed, define_line, a) < 0) {
			err_msg("%s: the typed values' description does not fit the "
				"trace file (an access path too long?)", p->name);
			goto out;
		}
	}
	rc = 0;
out:
	ax_emit_free(&e);
	rsp_buf_free(&pkt);
	rsp_buf_free(&src);
	return rc;
}

static int define_probe(struct recorder *r, struct probe *p)
{
	char err[512];

	for (size_t i = 0; i < p->nsites; i++)
		if (define_site(r, p, &p->sites[i]) < 0)
			return -EINVAL;
	if (p->pending && define_pending(r, p) < 0)
		return -EINVAL;
	if (p->spec.ret) {
		char cmd[64];
		snprintf(cmd, sizeof(cmd), "return-probe %d", p->tpnum);
		if (monitor(r, cmd, err, sizeof(err)) < 0) {
			err_msg("%s: the agent cannot make return probes%s%s",
				p->name, err[0] ? ": " : "", err);
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- the output file ---- */

static int write_cb(void *ctx, const void *data, size_t len)
{
	struct recorder *r = ctx;
	const char *p = data;

	if (r->live && !r->header_written)
		rsp_buf_put(&r->live_head, data, len);
	while (len > 0) {
		ssize_t n = pwrite(r->fd, p, len, (off_t)r->end);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
		r->end += (uint64_t)n;
	}
	return 0;
}

static char *probe_notes(struct recorder *r)
{
	struct rsp_buf b;

	rsp_buf_init(&b);
	rsp_buf_puts(&b, "probe-trace:");
	for (size_t i = 0; i < r->nprobes; i++)
		rsp_buf_printf(&b, "%s%d=%s", i ? ";" : "", r->probes[i].tpnum,
			       r->probes[i].name);
	rsp_buf_putc(&b, '\0');
	return b.data;
}

static uint64_t now_us_realtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/*
 * Rewrites the header's status line in place with the frames so far (its
 * numbers have fixed widths, so its length never changes): gdb reads the
 * frame count there.  Best effort: the frames are valid without it.
 */
static void update_status(struct recorder *r, bool final)
{
	struct rsp_buf b;

	if (!r->status_len || r->write_failed)
		return;
	/* Created: every hit of the run, lost or not, as gdb counts the
	 * frames a circular buffer discarded ("of N created total"). */
	r->st.frames = r->frames;
	r->st.created = r->frames + r->lost;
	r->st.lost = r->lost;
	for (size_t i = 0; i < r->nprobes; i++) {
		r->lost_tp[i] = (uint32_t)r->probes[i].tpnum;
		r->lost_count[i] = r->probes[i].lost;
	}
	r->st.nlost = r->nprobes;
	r->st.lost_tp = r->lost_tp;
	r->st.lost_count = r->lost_count;
	if (final)
		r->st.stop_time = now_us_realtime();
	if (r->self_stopped) {
		r->st.reason = r->why.reason;
		r->st.stopping_tp = r->why.stopping_tp;
		r->st.error = r->why.error;
	}
	r->st.pad_to = r->status_len;
	rsp_buf_init(&b);
	tp_status_put_tfile(&r->st, &b);
	if (b.len == r->status_len)
		(void)!pwrite(r->fd, b.data, b.len, (off_t)r->status_off);
	rsp_buf_free(&b);
}

static int open_output(struct recorder *r)
{
	struct tfile_writer w;
	int e;

	r->fd = open(r->out_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (r->fd < 0) {
		err_msg("cannot create %s: %s", r->out_path, strerror(errno));
		return -errno;
	}
	struct stat sb;
	r->out_regular = fstat(r->fd, &sb) == 0 && S_ISREG(sb.st_mode);
	r->notes = probe_notes(r);
	r->st.running = false;
	r->st.reason = TP_STOP_COMMAND;
	r->st.size = r->st.free_bytes = r->buffer_size;
	r->st.start_time = now_us_realtime();
	r->st.notes = r->notes;
	r->st.fixed_width = true;
	for (size_t i = 0; i < r->nprobes; i++)
		r->lost_tp[i] = (uint32_t)r->probes[i].tpnum;
	r->st.nlost = r->nprobes;
	r->st.lost_tp = r->lost_tp;
	r->st.lost_count = r->lost_count;
	{
		/* Room in the status line for a stop reason written later. */
		struct rsp_buf line;
		rsp_buf_init(&line);
		tp_status_put_tfile(&r->st, &line);
		r->st.pad_to = line.len + STATUS_RESERVE;
		rsp_buf_free(&line);
	}
	r->end = 0;
	tfile_writer_init(&w, write_cb, r);
	e = tfile_write_header(&w, r->regs.block_size, r->target_xml, &r->st,
			       &r->store);
	if (e == 0)
		e = tfile_write_end(&w);
	if (e < 0) {
		err_msg("writing %s: %s", r->out_path, strerror(-e));
		return e;
	}
	r->end -= 4;	/* the next frames overwrite the end marker */
	r->header_written = true;
	if (r->live) {
		r->live_reader = malloc(sizeof(*r->live_reader));
		if (!r->live_reader)
			abort();
		e = tfile_reader_open_mem(r->live_reader, r->live_head.data,
					  r->live_head.len, r->out_path,
					  "probe-trace record");
		if (e < 0)
			return e;
	}

	/* Where the status line is, to update it later. */
	char *head = malloc(r->end);
	if (head && pread(r->fd, head, r->end, 0) == (ssize_t)r->end) {
		char *p = memmem(head, r->end, "\nstatus ", 8);
		if (p) {
			char *nl = memchr(p + 8, '\n', (size_t)(head + r->end - p - 8));
			if (nl) {
				r->status_off = (uint64_t)(p + 8 - head);
				r->status_len = (size_t)(nl - p - 8);
			}
		}
	}
	free(head);
	return 0;
}

/* Appends whole frames and a new end marker in one write; on failure
 * puts the previous end marker back, so the file stays valid. */
static int append_frames(struct recorder *r, const uint8_t *data, size_t len)
{
	static const uint8_t zero[4];
	uint8_t *buf;
	uint64_t at = r->end;
	ssize_t n;

	if (r->write_failed || len == 0)
		return r->write_failed ? -EIO : 0;
	buf = malloc(len + 4);
	if (!buf)
		abort();
	memcpy(buf, data, len);
	memcpy(buf + len, zero, 4);
	/* A short write is retried for the rest, to learn the error. */
	size_t done = 0;
	int err = 0;
	while (done < len + 4) {
		n = pwrite(r->fd, buf + done, len + 4 - done, (off_t)(at + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : ENOSPC;
			break;
		}
		done += (size_t)n;
	}
	free(buf);
	if (!err) {
		r->end += len;
		r->bytes += len;
		return 0;
	}
	if (ftruncate(r->fd, (off_t)at) < 0 ||
	    pwrite(r->fd, zero, 4, (off_t)at) != 4) {
		/* Not even the marker fits: cut the file at the last whole
		 * frame; gdb then reads to the end of the file. */
		if (ftruncate(r->fd, (off_t)at) < 0)
			err_msg("%s: cannot restore the end marker: %s",
				r->out_path, strerror(errno));
	}
	err_msg("writing %s: %s; the file keeps the %llu frames before it",
		r->out_path, strerror(err), (unsigned long long)r->frames);
	r->write_failed = true;
	return -err;
}

static struct probe *probe_of(struct recorder *r, int tpnum)
{
	if (tpnum >= 1 && (size_t)tpnum <= r->nprobes)
		return &r->probes[tpnum - 1];
	return NULL;
}

static long add_thread(struct recorder *r, int64_t tid)
{
	/* the newest threads are the likeliest */
	for (size_t i = r->nthreads; i-- > 0;)
		if (r->threads[i].tid == tid)
			return (long)i;
	if (r->nthreads == r->cap_threads) {
		r->cap_threads = r->cap_threads ? r->cap_threads * 2 : 64;
		r->threads = realloc(r->threads, r->cap_threads * sizeof(*r->threads));
		if (!r->threads)
			abort();
	}
	memset(&r->threads[r->nthreads], 0, sizeof(r->threads[0]));
	r->threads[r->nthreads].tid = tid;
	r->unasked++;
	return (long)r->nthreads++;
}

/* The thread of a frame ($probe_thread), added to r->threads if new;
 * its index there, or -1 when the frame names none. */
static long note_thread(struct recorder *r, const uint8_t *body, size_t len)
{
	struct tbuf_block b;
	size_t pos = 0;

	while (tbuf_block_next(body, len, r->regs.block_size, &pos, &b) > 0) {
		int32_t num;
		int64_t tid;

		if (b.type != 'V')
			continue;
		memcpy(&num, b.body, 4);
		if (num != TSV_THREAD)
			continue;
		memcpy(&tid, b.body + 4, 8);
		long i = add_thread(r, tid);
		struct rec_thread *th = &r->threads[i];
		if (!th->framed) {
			/* named from the thread list, maybe before it named
			 * itself: its name now is the one to keep */
			th->framed = true;
			if (th->asked) {
				th->asked = false;
				r->unasked++;
			}
		}
		return i;
	}
	return -1;
}

/*
 * Asks the agent the name (qThreadExtraInfo: the thread's comm) of each
 * thread new in the thread list or whose first frame just came, while
 * it still runs: names are what --comm filters on, here and later.  A
 * thread already gone keeps the name the list gave it, or has none.
 */
static void name_threads(struct recorder *r)
{
	for (size_t i = r->nthreads; r->unasked && i-- > 0;) {
		struct rec_thread *th = &r->threads[i];
		char name[sizeof(th->name)];
		ssize_t n;

		if (th->asked)
			continue;
		th->asked = true;
		r->unasked--;
		if (r->exited || r->c.fd < 0 || r->c.eof)
			continue;
		if (rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT,
				       "qThreadExtraInfo,p%x.%llx", (unsigned)r->pid,
				       (unsigned long long)th->tid) < 0 ||
		    r->reply.len == 0 || r->reply.data[0] == 'E')
			continue;	/* gone: an earlier name stays */
		n = rsp_hex_decode(r->reply.data, r->reply.len, name,
				   sizeof(name) - 1);
		if (n > 0) {
			name[n] = '\0';
			memcpy(th->name, name, sizeof(name));
		}
	}
}

/*
 * The program's live threads (qfThreadInfo, qsThreadInfo), named: a
 * thread whose frames the recorder takes only after it ended would have
 * no name otherwise.  Called twice a second while recording.
 */
static void list_threads(struct recorder *r)
{
	const char *req = "qfThreadInfo";

	if (r->exited || r->c.fd < 0 || r->c.eof)
		return;
	for (int rounds = 0; rounds < 10000; rounds++) {
		if (rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT, "%s", req) < 0 ||
		    r->reply.len == 0 || r->reply.data[0] != 'm')
			break;
		/* m p<pid>.<tid>,p<pid>.<tid>... (hex) */
		for (char *p = r->reply.data + 1; *p;) {
			char *dot = strchr(p, '.'), *end;
			size_t n = strcspn(p, ",");
			/* only ours: an agent may hold other processes too */
			if (*p == 'p' && dot && dot < p + n &&
			    strtol(p + 1, NULL, 16) == (long)r->pid) {
				long long tid = strtoll(dot + 1, &end, 16);
				if (end == p + n && tid > 0)
					add_thread(r, tid);
			}
			p += n;
			if (*p == ',')
				p++;
		}
		req = "qsThreadInfo";
	}
	name_threads(r);
}

/*
 * The thread table after the end marker (client/tfile-read.h has its
 * layout), written once the last frame is in.  gdb stops reading at the
 * end marker; a recording cut short has no table.
 */
static void write_threads(struct recorder *r)
{
	struct rsp_buf b;
	uint64_t at = r->end + 4;

	if (r->fd < 0 || !r->header_written || r->write_failed || !r->pid)
		return;
	rsp_buf_init(&b);
	rsp_buf_puts(&b, "probe-trace threads\n");
	rsp_buf_printf(&b, "pid %d\n", (int)r->pid);
	if (r->keep_tids || r->keep_comm) {
		rsp_buf_printf(&b, "filtered %llu\n", (unsigned long long)r->filtered);
		for (size_t i = 0; i < r->nprobes; i++)
			if (r->probes[i].filtered)
				rsp_buf_printf(&b, "filtered-tp %d %llu\n",
					       r->probes[i].tpnum,
					       (unsigned long long)r->probes[i].filtered);
	}
	for (size_t i = 0; i < r->nthreads; i++) {
		if (!r->threads[i].name[0])
			continue;
		rsp_buf_printf(&b, "t %lld ", (long long)r->threads[i].tid);
		rsp_buf_put_hex(&b, r->threads[i].name, strlen(r->threads[i].name));
		rsp_buf_putc(&b, '\n');
	}
	rsp_buf_printf(&b, "probe-trace threads at %llx\n", (unsigned long long)at);
	if (pwrite(r->fd, b.data, b.len, (off_t)at) != (ssize_t)b.len ||
	    (r->out_regular && ftruncate(r->fd, (off_t)(at + b.len)) < 0)) {
		/* the frames are whole without it */
		err_msg("%s: cannot write the table of thread names: %s",
			r->out_path, strerror(errno));
		if (ftruncate(r->fd, (off_t)at) < 0)
			err_msg("%s: %s", r->out_path, strerror(errno));
	}
	rsp_buf_free(&b);
}

/*
 * --tid / --comm at record time: the agent records every thread (its
 * conditions know no thread), and the recorder drops the frames of the
 * others before they reach the file, counting them.  A thread is named
 * when its first frame arrives; one already gone by then has no name and
 * its frames fail --comm.  Compacts the first `len` bytes of r->carry
 * (whole frames) in place; returns the bytes kept.  The partial frame
 * after them is moved down behind the kept ones.
 */
static size_t drop_frames(struct recorder *r, size_t len)
{
	size_t off = 0, kept = 0;

	while (off < len) {
		int16_t tpnum;
		uint32_t size;
		long ti;
		bool keep = true;

		memcpy(&tpnum, r->carry + off, 2);
		memcpy(&size, r->carry + off + 2, 4);
		ti = note_thread(r, r->carry + off + 6, size);
		name_threads(r);
		if (r->keep_tids) {
			keep = false;
			for (size_t i = 0; ti >= 0 && i < r->nkeep_tids && !keep; i++)
				keep = r->threads[ti].tid == r->keep_tids[i];
		}
		if (keep && r->keep_comm)
			keep = ti >= 0 && r->threads[ti].name[0] &&
			       fnmatch(r->keep_comm, r->threads[ti].name, 0) == 0;
		if (keep) {
			memmove(r->carry + kept, r->carry + off, 6 + (size_t)size);
			kept += 6 + size;
		} else {
			struct probe *p = probe_of(r, tpnum);
			if (p)
				p->filtered++;
			r->filtered++;
		}
		off += 6 + size;
	}
	memmove(r->carry + kept, r->carry + len, r->carry_len - len);
	r->carry_len -= len - kept;
	return kept;
}

/*
 * --live: the first `len` bytes of r->carry, the whole frames just
 * written to the file, on stdout as `probe-trace dump` prints them, so
 * numbered as the file numbers them.  Their threads are named already
 * (take_stream), with the names the thread table at the end of the file
 * will give them.  The status line, on a terminal that may be stdout's
 * too, is taken away while they print and drawn again after them.
 */
static void print_live(struct recorder *r, size_t len)
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

/* Takes streamed bytes, writes the whole frames among them. */
static int take_stream(struct recorder *r, const uint8_t *data, size_t len)
{
	size_t off = 0, whole = 0;

	if (r->carry_len + len > r->carry_cap) {
		size_t cap = r->carry_cap ? r->carry_cap : 65536;
		while (cap < r->carry_len + len)
			cap *= 2;
		r->carry = realloc(r->carry, cap);
		if (!r->carry)
			abort();
		r->carry_cap = cap;
	}
	memcpy(r->carry + r->carry_len, data, len);
	r->carry_len += len;
	while (r->carry_len - off >= 6) {
		uint32_t size;
		memcpy(&size, r->carry + off + 2, 4);
		if (r->carry_len - off < 6 + (size_t)size)
			break;
		off += 6 + size;
	}
	whole = off;
	if (r->keep_tids || r->keep_comm)
		whole = drop_frames(r, whole);
	int e = append_frames(r, r->carry, whole);
	/* Count what the file holds. */
	for (off = 0; e == 0 && off < whole;) {
		int16_t tpnum;
		uint32_t size;
		memcpy(&tpnum, r->carry + off, 2);
		memcpy(&size, r->carry + off + 2, 4);
		struct probe *p = probe_of(r, tpnum);
		if (p)
			p->frames++;
		r->frames++;
		note_thread(r, r->carry + off + 6, size);
		off += 6 + size;
	}
	if (e == 0) {
		name_threads(r);
		if (r->live)
			print_live(r, whole);
	}
	memmove(r->carry, r->carry + whole, r->carry_len - whole);
	r->carry_len -= whole;
	return e;
}

/* Streams frames until the agent has none.  Returns bytes received or a
 * negative errno. */
static long drain_frames(struct recorder *r)
{
	long total = 0;

	for (;;) {
		int e = rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT,
					   "qprobe.frames:3ff0");
		if (e < 0)
			return e;
		if (r->reply.data[0] != 'F') {
			err_msg("streaming frames: the agent says: %s",
				r->reply.len ? r->reply.data : "not supported");
			return -EIO;
		}
		ssize_t n = rsp_unescape(r->reply.data + 1, r->reply.len - 1);
		if (n <= 0)
			return total;
		total += n;
		if (take_stream(r, (uint8_t *)r->reply.data + 1, (size_t)n) < 0)
			return -EIO;
	}
}

/* ---- the status line (a terminal on stderr) ---- */

static void status_line(struct recorder *r, bool final)
{
	uint64_t t = now_ms();
	char line[512];
	size_t used;

	if (!r->tty_status)
		return;
	if (!final && t - r->last_tick_ms < 500)
		return;
	double dt = (double)(t - r->last_tick_ms) / 1000.0;
	double rate = dt > 0 ? (double)(r->frames - r->frames_at_last) / dt : 0;
	uint64_t used_bytes = 0, size = 0;
	if (r->running && !r->exited &&
	    rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT, "qTStatus") == 0) {
		const char *f = strstr(r->reply.data, "tfree:");
		const char *s = strstr(r->reply.data, "tsize:");
		if (f && s) {
			size = strtoull(s + 6, NULL, 16);
			used_bytes = size - strtoull(f + 6, NULL, 16);
		}
	}
	used = (size_t)snprintf(line, sizeof(line),
				"%llu frames  %.0f/s  buffer %.0f%% ",
				(unsigned long long)r->frames, rate,
				size ? 100.0 * (double)used_bytes / (double)size : 0.0);
	if (r->lost)
		used += (size_t)snprintf(line + used, sizeof(line) - used, " LOST %llu ",
					 (unsigned long long)r->lost);
	for (size_t i = 0; i < r->nprobes && used < sizeof(line) - 40; i++)
		used += (size_t)snprintf(line + used, sizeof(line) - used, " %s:%llu",
					 r->probes[i].name,
					 (unsigned long long)r->probes[i].frames);
	fprintf(stderr, "\r\033[K%s%s", line, final ? "\n" : "");
	fflush(stderr);
	/* for print_live, which draws it again after the frames */
	snprintf(r->tty_text, sizeof(r->tty_text), "\r\033[K%s", final ? "" : line);
	r->last_tick_ms = t;
	r->frames_at_last = r->frames;
}

/* ---- the command ---- */

static void usage(FILE *out)
{
	fprintf(out,
"Usage: probe-trace record [OPTIONS] -e SPEC [-e SPEC...] -- PROG [ARGS...]\n"
"       probe-trace record [OPTIONS] -e SPEC [-e SPEC...] -p PID\n"
"Records probes of a program into a trace file (gdb: target tfile FILE).\n"
"\n"
"  -e, --probe SPEC       a probe: WHERE [WHAT...] [if COND]  (see below)\n"
"  -o, --output FILE      the trace file (default probe-trace.tfile)\n"
"  -p, --pid PID          attach to a running process; it runs on afterwards\n"
"      --agent CMD        run the agent with this shell command, e.g.\n"
"                         'ssh board probe-agent -' (default: the local\n"
"                         probe-agent); --multi or --attach PID is appended,\n"
"                         PROG ARGS go by the protocol, never re-split\n"
"      --connect HOST:PORT  use an agent already listening there\n"
"      --sysroot DIR      local copies of the target's files are under DIR\n"
"  -d, --duration SECS    stop after SECS seconds\n"
"  -b, --buffer-size N    the agent's trace buffer in bytes (default 16M;\n"
"                         suffixes K, M)\n"
"      --on-full=WAIT|DROP|STOP  when the agent's buffer is full: hitting\n"
"                         threads wait until the stream makes room (wait,\n"
"                         the default: nothing is lost, the program slows\n"
"                         down), or their frames are lost and counted and\n"
"                         the recording goes on (drop), or it ends there\n"
"                         (stop); lost frames are reported, counted in\n"
"                         the file, and make the exit status 1\n"
"      --string-max N     bytes of a typed char * string collected\n"
"                         (default 64)\n"
"      --tid TID[,TID...]  keep the frames of these threads only\n"
"      --comm NAME        keep the frames of threads named NAME (a glob) only\n"
"                         (both filter in the recorder: the agent records\n"
"                         every thread, the recorder drops and counts the\n"
"                         frames of the others)\n"
"      --live             print every frame on stdout as it arrives, as\n"
"                         probe-trace dump prints it; the trace file is\n"
"                         written all the same (-o /dev/null: none)\n"
"      --json             --live prints JSON lines, as dump --json does\n"
"  -q, --quiet            no status line and no summary on stderr\n"
"  -h, --help             this help\n"
"\n"
"WHERE: FUNC  FUNC+OFF  LIB:FUNC  *ADDR  FUNC%%return  LIB:FUNC%%return\n"
"       FILE:LINE  LIB:FILE:LINE  sdt:PROVIDER:NAME  sdt:LIB:PROVIDER:NAME\n"
"       a LIB:FUNC whose LIB is not loaded yet waits for it: placed at each\n"
"       dlopen, removed at dlclose (stderr says when, and frames per load)\n"
"WHAT:  args (default at entries and USDT probes)  args=N (the first N\n"
"       argument registers, raw)  retval (default at returns)  regs\n"
"       mem=ADDR-EXPR,LEN  NAME  NAME->MEMBER  NAME.MEMBER  NAME[N]  *NAME\n"
"       VALUE@N (N elements from where a pointer points)\n"
"       With DWARF (the file's, or its debug file's), args, retval and\n"
"       values by name (parameters, locals in scope, globals) are typed,\n"
"       and a probe on FUNC goes after its prologue (unoptimized code), as\n"
"       gdb's break FUNC does\n"
"COND and ADDR-EXPR: C-like integer expressions of argN, retval, $REG,\n"
"       *E (8-byte load), u8[E] u16[E] u32[E] u64[E] s8[E] ... s64[E]\n"
"Debug files (symbols and DWARF of stripped files): by build-id under\n"
"       /usr/lib/debug (SYSROOT/usr/lib/debug with --sysroot), by\n"
"       .gnu_debuglink, and from the debuginfod servers in DEBUGINFOD_URLS\n"
"       (downloads kept in DEBUGINFOD_CACHE_PATH)\n"
"\n"
"Examples:\n"
"  probe-trace record -e 'parse args' -e 'parse%%return' -- ./prog input\n"
"  probe-trace record -e 'libc:write args mem=arg1,64 if arg0 == 2' -p 1234\n"
"  probe-trace record -e 'process_order o->price o->items[0].id' \\\n"
"      -e 'shop.c:42 total' -- ./shop\n"
"\n"
"Ctrl-C stops the recording: a program started by probe-trace is killed,\n"
"an attached one is detached and runs on.  See probe-trace(1).\n");
}

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -EINVAL;
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	else if (*end == 'g' || *end == 'G')
		v <<= 30, end++;
	if (*end || v < 4096 || v > 0xffffffffULL)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Single-quotes s for /bin/sh. */
static void sh_quote(struct rsp_buf *b, const char *s)
{
	rsp_buf_putc(b, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			rsp_buf_puts(b, "'\\''");
		else
			rsp_buf_putc(b, *s);
	}
	rsp_buf_putc(b, '\'');
}

/* The local agent: next to this program (installed or in the build tree),
 * else from PATH. */
static char *default_agent(void)
{
	char self[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			snprintf(path, sizeof(path), "%s/probe-agent", self);
			if (access(path, X_OK) == 0)
				return strdup(path);
			snprintf(path, sizeof(path), "%s/../agent/probe-agent", self);
			if (access(path, X_OK) == 0)
				return strdup(path);
		}
	}
	return strdup("probe-agent");
}

/* PROG as execvp would find it. */
static char *find_program(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(prog, '/'))
		return realpath(prog, NULL);
	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? path : ".", prog);
		if (access(buf, X_OK) == 0)
			return realpath(buf, NULL);
		path += n + (path[n] == ':');
	}
	return NULL;
}

static int start_agent(struct recorder *r)
{
	struct rsp_buf cmd;
	int e;

	if (r->connect) {
		e = rsp_client_connect(&r->c, r->connect);
		if (e < 0)
			err_msg("%s", r->c.error);
		return e;
	}
	rsp_buf_init(&cmd);
	if (r->agent_cmd) {
		rsp_buf_puts(&cmd, r->agent_cmd);
	} else {
		char *agent = default_agent();
		sh_quote(&cmd, agent);
		rsp_buf_puts(&cmd, " --quiet -");
		free(agent);
	}
	/* The program is not on the agent's command line: it comes by vRun
	 * (handshake()), its arguments hex-encoded, so that no shell
	 * between here and the agent (ssh's on the board) re-splits them. */
	if (r->attach_pid && !r->attach_until)
		rsp_buf_printf(&cmd, " --attach %d", (int)r->attach_pid);
	else
		rsp_buf_puts(&cmd, " --multi");
	e = rsp_client_spawn(&r->c, cmd.data);
	if (e < 0)
		err_msg("cannot start the agent (%s): %s", cmd.data, r->c.error);
	rsp_buf_free(&cmd);
	return e;
}

static int handshake(struct recorder *r)
{
	char stop[RSP_MAX_PAYLOAD];
	int e;

	e = rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT,
			       "qSupported:multiprocess+;swbreak+;hwbreak+;no-resumed+");
	if (e < 0) {
		err_msg("no answer from the agent: %s", r->c.error);
		return e;
	}
	if (!strstr(r->reply.data, "QNonStop+") ||
	    !strstr(r->reply.data, "TraceStateVariables+")) {
		err_msg("the agent lacks non-stop mode or tracing (qSupported: %s)",
			r->reply.data);
		return -ENOTSUP;
	}
	/* A listening agent keeps what an earlier client set up for its
	 * programs (gdb's `set environment`, `set cwd`): the program runs
	 * with the agent's own environment and directory instead. */
	bool env_reset = strstr(r->reply.data, "QEnvironmentReset+") != NULL;
	bool workdir = strstr(r->reply.data, "QSetWorkingDir+") != NULL;
	if (strstr(r->reply.data, "QStartNoAckMode+") &&
	    request_ok(r, "QStartNoAckMode", "QStartNoAckMode") == 0)
		r->c.noack = true;
	if (request_ok(r, "extended mode", "!") < 0)
		return -EIO;
	/* The program outlives the recording's connection (an ssh link that
	 * drops), from its first instruction on: the agent then takes the
	 * probes out and lets it run. */
	if (rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT,
			       "Qprobe.detachonclose:1") < 0)
		return -EIO;
	if (strcmp(r->reply.data, "OK") != 0)
		err_msg("warning: this agent kills the program if the connection drops");

	/* Run the program, or attach to a listening agent's process. */
	if (r->prog_argc || ((r->connect || r->attach_until) && r->attach_pid)) {
		struct rsp_buf b;
		if (!r->attach_pid &&
		    ((env_reset &&
		      request_ok(r, "environment reset", "QEnvironmentReset") < 0) ||
		     (workdir &&
		      request_ok(r, "working directory reset", "QSetWorkingDir:") < 0)))
			return -EIO;
		rsp_buf_init(&b);
		if (r->attach_pid) {
			rsp_buf_printf(&b, "vAttach;%x", (int)r->attach_pid);
		} else {
			rsp_buf_puts(&b, "vRun");
			for (int i = 0; i < r->prog_argc; i++) {
				rsp_buf_putc(&b, ';');
				rsp_buf_put_hex(&b, r->prog_argv[i],
						strlen(r->prog_argv[i]));
			}
		}
		rsp_buf_putc(&b, '\0');
		for (;;) {
			e = rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT, "%s", b.data);
			/* A program the dead agent still traces: again, soon. */
			if (e < 0 || !r->attach_until || r->reply.data[0] != 'E' ||
			    strstr(r->reply.data, "No such process") ||
			    now_ms() + 100 >= r->attach_until)
				break;
			struct timespec ts = { 0, 100 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
		rsp_buf_free(&b);
		if (e < 0 || (r->reply.data[0] != 'T' && r->reply.data[0] != 'S')) {
			err_msg("cannot %s: %s", r->attach_pid ? "attach" : "start the program",
				e < 0 ? r->c.error : r->reply.data);
			return -EIO;
		}
	}
	if (request_ok(r, "non-stop mode", "QNonStop:1") < 0)
		return -EIO;
	e = rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT, "?");
	if (e < 0) {
		err_msg("%s", r->c.error);
		return e;
	}
	snprintf(stop, sizeof(stop), "%s", r->reply.data);
	if (stop[0] != 'T' && stop[0] != 'S') {
		err_msg("the agent has no process to trace (stop reply: %s)",
			stop[0] ? stop : "empty");
		return -ESRCH;
	}
	r->pid = stop_pid(stop);
	if (drain_stops(r, stop, stop, sizeof(stop)) < 0)
		return -EIO;
	if (!r->pid) {
		err_msg("the agent did not say which process it traces");
		return -ESRCH;
	}
	return 0;
}

/* auxv entry `type`, or 0. */
static uint64_t auxv_get(const struct rsp_buf *auxv, bool is64, uint64_t type)
{
	size_t w = is64 ? 8 : 4;

	for (size_t off = 0; off + 2 * w <= auxv->len; off += 2 * w) {
		uint64_t t = 0, v = 0;
		memcpy(&t, auxv->data + off, w);
		memcpy(&v, auxv->data + off + w, w);
		if (t == type)
			return v;
		if (t == 0)
			break;
	}
	return 0;
}

static int learn_target(struct recorder *r)
{
	struct rsp_buf b;
	char annex[32];
	int e;

	rsp_buf_init(&b);
	if (rsp_client_xfer(&r->c, "features", "target.xml", &b) < 0) {
		err_msg("cannot read the target's register description: %s",
			r->c.error);
		goto fail;
	}
	if (target_regs_parse(&r->regs, b.data) < 0) {
		err_msg("the agent's target.xml lists no registers (is it a "
			"probe-agent or gdbserver-compatible stub?)");
		goto fail;
	}
	r->target_xml = strdup(b.data);
	r->tarch = arch_for_gdb_arch(r->regs.arch);
	if (!r->tarch) {
		char known[256] = "";

		for (size_t i = 0; arch_nth(i); i++)
			snprintf(known + strlen(known), sizeof(known) - strlen(known),
				 "%s%s", i ? ", " : "", arch_nth(i)->gdb_arch);
		err_msg("the target's architecture %s is not supported: this "
			"probe-trace has no arch for it (it has %s)",
			r->regs.arch ? r->regs.arch : "(none)", known);
		goto fail;
	}
	snprintf(annex, sizeof(annex), "%x", r->pid);
	if (rsp_client_xfer(&r->c, "exec-file", annex, &b) < 0) {
		err_msg("cannot learn the program's path: %s", r->c.error);
		goto fail;
	}
	struct module *m = add_module(r, b.data, 0);
	struct elfsym_file *f = module_elf(m);
	if (!f) {
		err_msg("the program's symbols are needed: give a local copy of %s "
			"(--sysroot DIR holds DIR%s)", b.data, b.data);
		goto fail;
	}
	GElf_Ehdr eh;
	if (!gelf_getehdr(f->elf, &eh)) {
		err_msg("%s: cannot read its ELF header: %s", m->local, elf_errmsg(-1));
		goto fail;
	}
	if (rsp_client_xfer(&r->c, "auxv", "", &b) < 0) {
		err_msg("cannot read the process's auxv: %s", r->c.error);
		goto fail;
	}
	uint64_t entry = auxv_get(&b, eh.e_ident[EI_CLASS] == ELFCLASS64, 9 /* AT_ENTRY */);
	if (!entry) {
		err_msg("no AT_ENTRY in the process's auxv");
		goto fail;
	}
	m->bias = entry - eh.e_entry;

	/* A program we started stops before its libraries are loaded: let
	 * the dynamic linker run up to the program's entry point. */
	if (r->started) {
		char stop[RSP_MAX_PAYLOAD];
		if (request_ok(r, "breakpoint at the entry point", "Z0,%llx,1",
			       (unsigned long long)entry) < 0)
			goto fail;
		e = rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT, "vCont;c");
		if (e < 0 || strcmp(r->reply.data, "OK") != 0) {
			err_msg("cannot resume the program: %s",
				e < 0 ? r->c.error : r->reply.data);
			goto fail;
		}
		e = wait_setup_stop(r, stop, sizeof(stop), 60000);
		if (e < 0 || stop[0] != 'T') {
			err_msg("the program did not reach its entry point (%s)",
				e < 0 ? strerror(-e) : stop);
			goto fail;
		}
		if (request_ok(r, "removing the entry breakpoint", "z0,%llx,1",
			       (unsigned long long)entry) < 0)
			goto fail;
	}
	if (rsp_client_xfer(&r->c, "libraries-svr4", "", &b) == 0)
		parse_libraries(r, b.data);
	rsp_buf_free(&b);
	return 0;
fail:
	rsp_buf_free(&b);
	return -EIO;
}

static int define_all(struct recorder *r);

static int regnum_by_name(void *ctx, const char *name)
{
	return target_regnum(ctx, name);
}

/* Does the spec use argN (the ABI's argument registers)? */
static bool uses_raw_args(const struct probe_spec *s)
{
	if (expr_max_arg(s->cond) >= 0)
		return true;
	for (size_t i = 0; i < s->nitems; i++)
		if ((s->items[i].what == SPEC_ARGS && s->items[i].count) ||
		    (s->items[i].what == SPEC_MEM && expr_max_arg(s->items[i].addr) >= 0))
			return true;
	return false;
}

/*
 * Typed values from DWARF: `args` (all of them), values by name, and the
 * return value.  Without DWARF, `args` and `retval` stay the raw
 * registers; a value by name is then an error.
 *
 * Where: at a function's entry its parameters are still in the ABI's
 * registers, but DWARF at -O0 places them in stack slots the prologue
 * has not filled yet.  So a probe on FUNC with typed values goes where
 * gdb's `break FUNC` goes, after the prologue (the function's second
 * line-table row; the entry in optimized code, see dv_after_prologue):
 * there DWARF's locations hold, both for dump and for gdb reading the
 * file, which evaluates them the same way.  FUNC+OFF, *ADDR and
 * FILE:LINE stay where they are.
 */
static int type_probe(struct recorder *r, struct probe *p)
{
	const struct probe_spec *s = &p->spec;
	bool want_args = false, want_ret = false, named = false;
	char err[1024];
	struct dv_module *dv = NULL;
	struct dv_target t = {
		.arch = r->regs.arch, .regnum = regnum_by_name, .ctx = &r->regs,
		.string_max = r->string_max, .retval_tsv = TSV_RETVAL,
	};

	for (size_t i = 0; i < s->nitems; i++) {
		want_args |= s->items[i].what == SPEC_ARGS && !s->items[i].count;
		want_ret |= s->items[i].what == SPEC_RETVAL;
		named |= s->items[i].what == SPEC_VALUE;
	}
	/* A spec that reads argN keeps the raw argument registers at the
	 * entry, unless it names values too (an error below). */
	if (uses_raw_args(s) && !named)
		want_args = false;
	if (!want_args && !want_ret && !named)
		return 0;
	if (s->where == SPEC_SDT || s->where == SPEC_ADDR) {
		if (!named)
			return 0;
		err_msg("%s: values by name need DWARF at a function or FILE:LINE, "
			"not at %s", p->name, s->where == SPEC_SDT ? "a USDT probe"
								     : "*ADDR");
		r->usage_error = true;
		return -EINVAL;
	}
	if (p->pending)
		snprintf(err, sizeof(err), "its library is not loaded yet, and a "
			 "probe waiting for one collects args=N, retval, regs and "
			 "mem= only");
	else if (p->mod)
		dv = module_dwarf(p->mod, err, sizeof(err));
	if (!dv) {
		if (!named)
			return 0;	/* the raw forms */
		err_msg("%s: values by name need DWARF: %s", p->name, err);
		return -ENODATA;
	}
	t.bias = p->mod->bias;
	if (s->where == SPEC_FUNC && !s->ret && !s->offset && (want_args || named)) {
		uint64_t entry = p->sites[0].addr - p->mod->bias, body;
		if (dv_after_prologue(dv, entry, &body) < 0) {
			if (!named)
				return 0;
			err_msg("%s: DWARF of %s does not describe %s", p->name,
				dv_path(dv), s->func);
			return -ENOENT;
		}
		if (body != entry && uses_raw_args(s)) {
			err_msg("%s: argN and args=N are the ABI's registers at the "
				"function's entry, but typed values are read after its "
				"prologue: name the parameters instead (or probe "
				"%s+0 for the raw registers)", p->name, s->func);
			r->usage_error = true;
			return -EINVAL;
		}
		p->sites[0].addr = body + p->mod->bias;
		p->after_prologue = body != entry;
	}
	p->typed = calloc(p->nsites, sizeof(*p->typed));
	p->collect = calloc(p->nsites, sizeof(*p->collect));
	if (!p->typed || !p->collect)
		abort();
	bool have_regs = false, have_mem = false;
	for (size_t i = 0; i < s->nitems; i++) {
		have_regs |= s->items[i].what == SPEC_REGS;
		have_mem |= s->items[i].what == SPEC_MEM;
	}
	int pc = target_regnum(&r->regs, strstr(r->regs.arch ? r->regs.arch : "",
						 "x86-64") ? "rip" : "pc");
	for (size_t k = 0; k < p->nsites; k++) {
		struct typed_probe *tp = &p->typed[k];
		struct dv_collect *c = &p->collect[k];
		uint64_t link = p->sites[k].addr - p->mod->bias;

		typed_probe_init(tp);
		tp->tpnum = p->tpnum;
		tp->addr = p->sites[k].addr;
		tp->pc_reg = pc;
		tp->hide_regs = !have_regs;
		tp->hide_mem = !have_mem;
		for (size_t i = 0; i < s->nitems; i++) {
			const struct spec_item *it = &s->items[i];
			int e = 0;
			switch (it->what) {
			case SPEC_ARGS:
				if (it->count || !want_args)
					break;
				e = dv_add_args(dv, link, &t, tp, c, err, sizeof(err));
				if (e == -ENOENT && !named && s->where == SPEC_FUNC)
					e = 0;	/* not in DWARF: raw */
				else if (e == 0)
					p->typed_args = true;
				break;
			case SPEC_RETVAL:
				e = dv_add_retval(dv, link, &t, tp, c, err, sizeof(err));
				if (e == -ENOTSUP || e == -ENOENT)
					e = 0;	/* the raw register says it */
				break;
			case SPEC_VALUE:
				e = dv_add_path(dv, link, it->addr_text, &t, tp, c, err,
						sizeof(err));
				if (e == -ENOENT && !strpbrk(it->addr_text, ".-[*")) {
					err_msg("bad probe spec: %s: %s; expected regs, args, "
						"args=N, retval, mem=ADDR-EXPR,LEN, a parameter "
						"or variable, or if", p->name, err);
					r->usage_error = true;
					return -EINVAL;
				}
				break;
			default:
				break;
			}
			if (e < 0) {
				err_msg("%s: %s", p->name, err);
				if (e == -ENOENT || e == -EINVAL || e == -ERANGE)
					r->usage_error = true;
				return e;
			}
		}
	}
	return 0;
}

/* Every probe's sites and argument count, then its definitions. */
static int setup_probes(struct recorder *r)
{
	char err[2048];

	for (size_t i = 0; i < r->nprobes; i++) {
		struct probe *p = &r->probes[i];
		int e = 0;

		switch (p->spec.where) {
		case SPEC_FUNC:
			e = resolve_func(r, p, err, sizeof(err));
			break;
		case SPEC_SDT:
			e = resolve_sdt(r, p, err, sizeof(err));
			break;
		case SPEC_ADDR:
			p->sites[0].addr = p->spec.addr;
			p->nsites = 1;
			break;
		case SPEC_LINE:
			e = resolve_line(r, p, err, sizeof(err));
			break;
		}
		if (e == -ENXIO)
			e = resolve_pending(r, p, err, sizeof(err));
		if (e < 0) {
			err_msg("%s: %s", p->name, err);
			return e;
		}
		if (p->mod && check_build_id(r, p->mod) < 0)
			return -ESTALE;
		if ((e = type_probe(r, p)) < 0)
			return e;
		p->nargs = probe_nargs(r, p);
		/* argN in conditions and mem= must exist too */
		int need = expr_max_arg(p->spec.cond);
		for (size_t k = 0; k < p->spec.nitems; k++)
			if (p->spec.items[k].addr && expr_max_arg(p->spec.items[k].addr) > need)
				need = expr_max_arg(p->spec.items[k].addr);
		if (need >= p->nargs) {
			err_msg("%s: uses arg%d but the probe has %d argument%s",
				p->name, need, p->nargs, p->nargs == 1 ? "" : "s");
			return -EINVAL;
		}
		if (p->nargs > r->max_args)
			r->max_args = p->nargs;
		if (p->spec.ret)
			r->any_ret = true;
	}
	return define_all(r);
}

/* The probes, resolved, as the agent's tracepoints and variables, and
 * the buffer they fill. */
static int define_all(struct recorder *r)
{
	if (request_ok(r, "QTinit", "QTinit") < 0)
		return -EIO;
	if (define_tsv(r, TSV_THREAD, "probe_thread") < 0 ||
	    define_tsv(r, TSV_LATENCY, "probe_latency_ns") < 0 ||
	    define_tsv(r, TSV_RETVAL, "probe_retval") < 0)
		return -EIO;
	for (int a = 0; a < r->max_args; a++) {
		char name[32];
		snprintf(name, sizeof(name), "probe_arg%d", a);
		if (define_tsv(r, TSV_ARG0 + a, name) < 0)
			return -EIO;
	}
	for (size_t i = 0; i < r->nprobes; i++)
		if (define_probe(r, &r->probes[i]) < 0)
			return -EIO;
	if (request_ok(r, "trace buffer size", "QTBuffer:size:%llx",
		       (unsigned long long)r->buffer_size) < 0 ||
	    request_ok(r, "trace buffer mode", "QTBuffer:circular:0") < 0)
		return -EIO;
	/* Nothing lost: a full buffer makes the hitting threads wait until
	 * the stream has made room, unless asked to end the run instead or
	 * to go on without the frames that find no room. */
	if (r->full_drops &&
	    request_ok(r, "counting lost frames (--on-full=drop)", "Qprobe.fulldrop:1") < 0)
		return -EIO;
	if (!r->full_stops && !r->full_drops) {
		int e = rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT,
					   "Qprobe.fullwait:1");
		if (e < 0)
			return -EIO;
		if (strcmp(r->reply.data, "OK") != 0)
			err_msg("warning: this agent cannot make threads wait for room: "
				"a full buffer will end the recording");
	}
	return 0;
}

/* USDT semaphores: +1 while recording, -1 after. */
static int semaphores(struct recorder *r, int delta)
{
	for (size_t i = 0; i < r->nprobes; i++) {
		struct probe *p = &r->probes[i];
		for (size_t k = 0; k < p->nsites; k++) {
			struct site *st = &p->sites[k];
			uint16_t v;

			if (!st->sem || (delta > 0) == st->sem_done)
				continue;
			/* Sites of one probe share a semaphore: count it once. */
			bool seen = false;
			for (size_t j = 0; j < k; j++)
				if (p->sites[j].sem == st->sem)
					seen = true;
			if (seen) {
				st->sem_done = delta > 0;
				continue;
			}
			if (read_target(r, st->sem, &v, 2) < 0) {
				err_msg("%s: cannot read its semaphore at 0x%llx", p->name,
					(unsigned long long)st->sem);
				return -EFAULT;
			}
			v = (uint16_t)(v + delta);
			struct rsp_buf hex;
			rsp_buf_init(&hex);
			int e = request_ok(r, "writing a USDT semaphore", "M%llx,2:%s",
					   (unsigned long long)st->sem, hex_of(&hex, &v, 2));
			rsp_buf_free(&hex);
			if (e < 0)
				return -EFAULT;
			st->sem_done = delta > 0;
		}
	}
	return 0;
}

/*
 * Whether the run is still going; when it ended by itself (a full buffer
 * with --on-full=stop, an evaluation error, a pass count), `why` says so.
 * The program's exit ends a run too: that is not the run's own stop.
 */
static void say_why_stopped(struct recorder *r);

static void check_run(struct recorder *r)
{
	struct tp_status st;

	if (r->self_stopped || r->c.eof ||
	    rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT, "qTStatus") < 0 ||
	    tp_status_parse(r->reply.data, &st, r->why_error, sizeof(r->why_error)) < 0)
		return;
	if (st.running || st.reason == TP_STOP_UNKNOWN || st.reason == TP_STOP_COMMAND ||
	    st.reason == TP_STOP_NOT_RUN)
		return;
	r->self_stopped = true;
	r->why = st;
	r->why.error = st.error ? r->why_error : NULL;
	say_why_stopped(r);	/* at once: the program runs on unprobed */
}

/*
 * The frames the agent had no room for, per probe (qprobe.lost): said at
 * once the first time, while the program runs, and again at the end.  An
 * agent without the packet loses nothing silently: it stops the run on a
 * full buffer, which check_run reports.
 */
static void read_lost(struct recorder *r)
{
	const char *p;
	char *end;

	if (r->c.eof ||
	    rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT, "qprobe.lost") < 0 ||
	    r->reply.data[0] != 'L')
		return;
	uint64_t total = strtoull(r->reply.data + 1, &end, 16);
	for (size_t i = 0; i < r->nprobes; i++)
		r->probes[i].lost = 0;
	for (p = end; *p == ';';) {
		unsigned long tp = strtoul(p + 1, &end, 16);
		if (*end != ':')
			break;
		p = end + 1;
		uint64_t n = strtoull(p, &end, 16);
		p = end;
		struct probe *pr = probe_of(r, (int)tp);
		if (pr)
			pr->lost += n;	/* once per location */
	}
	r->lost = total;
	if (r->lost && !r->lost_said) {
		err_msg("the buffer was full: %llu frames lost so far, and counted "
			"(--buffer-size; the default --on-full=wait loses none)",
			(unsigned long long)r->lost);
		r->lost_said = true;
	}
}

static void say_lost(struct recorder *r)
{
	char line[1024];
	size_t used = 0;

	if (!r->lost)
		return;
	line[0] = '\0';
	for (size_t i = 0; i < r->nprobes && used < sizeof(line) - 200; i++)
		if (r->probes[i].lost)
			used += (size_t)snprintf(line + used, sizeof(line) - used, "%s%s: %llu",
						 used ? ", " : "", r->probes[i].name,
						 (unsigned long long)r->probes[i].lost);
	err_msg("%llu frames lost for want of room in the buffer (%s); %s has the "
		"other %llu%s", (unsigned long long)r->lost, line, r->out_path,
		(unsigned long long)r->frames,
		r->self_stopped ? " (hits after the recording stopped are in neither)" : "");
}

static void say_why_stopped(struct recorder *r)
{
	const struct tp_status *w = &r->why;

	switch (w->reason) {
	case TP_STOP_FULL:
		err_msg("the trace stopped early: the buffer filled (%llu bytes) after "
			"%llu frames; later hits were not recorded (--buffer-size, or "
			"the default --on-full=wait)",
			(unsigned long long)r->buffer_size, (unsigned long long)r->frames);
		break;
	case TP_STOP_ERROR:
		err_msg("the trace stopped early: probe %u: %s", (unsigned)w->stopping_tp,
			w->error ? w->error : "error");
		break;
	case TP_STOP_PASSCOUNT:
		err_msg("the trace stopped: probe %u reached its pass count",
			(unsigned)w->stopping_tp);
		break;
	default:
		err_msg("the trace stopped early (%s)", tp_stop_reason_name(w->reason));
		break;
	}
}

/* ---- pending probes: what the agent did at each library event ---- */

static bool any_pending(struct recorder *r)
{
	for (size_t i = 0; i < r->nprobes; i++)
		if (r->probes[i].pending)
			return true;
	return false;
}

static void pending_said(struct recorder *r)
{
	for (size_t i = 0; i < r->nprobes && !r->quiet; i++) {
		struct probe *p = &r->probes[i];
		if (p->pending)
			fprintf(stderr, "probe-trace: %s: pending: no library '%s' is "
				"loaded yet; placed when it loads\n", p->name, p->spec.lib);
	}
}

/* One event of qprobe.libevents (see doc/protocol.md). */
static void take_libevent(struct recorder *r, const char *ev, size_t len)
{
	char text[4096], hex[8200];
	unsigned int tp = 0, load = 0;
	unsigned long long key = 0, addr = 0, frames = 0;
	struct probe *p;

	if (len >= sizeof(hex))
		return;
	memcpy(hex, ev, len);
	hex[len] = '\0';
	if (hex[0] == 'o') {
		err_msg("the agent lost some library events: the per-load counts "
			"below may be incomplete");
		return;
	}
	if (sscanf(hex + 1, "%x,%llx", &tp, &key) != 2 || !(p = probe_of(r, (int)tp)))
		return;
	switch (hex[0]) {
	case 'p': {
		const char *h = NULL;
		if (sscanf(hex + 1, "%x,%llx,%llx,%x,", &tp, &key, &addr, &load) != 4)
			return;
		h = strrchr(hex, ',') + 1;
		ssize_t n = rsp_hex_decode(h, strlen(h), text, sizeof(text) - 1);
		text[n > 0 ? n : 0] = '\0';
		if (p->nloads < MAX_LOADS)
			p->loads[p->nloads] = (struct load){ addr, 0, false };
		p->nloads++;
		if (!r->quiet)
			fprintf(stderr, "%sprobe-trace: %s: placed at 0x%llx in %s (load %u)\n",
				r->tty_status ? "\r\033[K" : "", p->name, addr, text, load);
		break;
	}
	case 'r':
	case 's':
		if (sscanf(hex + 1, "%x,%llx,%llx,%x,%llx", &tp, &key, &addr, &load,
			   &frames) != 5)
			return;
		if (load >= 1 && load <= MAX_LOADS && load <= p->nloads) {
			p->loads[load - 1].frames = frames;
			p->loads[load - 1].ended = true;
		}
		if (!r->quiet && hex[0] == 'r')
			fprintf(stderr, "%sprobe-trace: %s: removed from 0x%llx, its library "
				"unloaded (load %u: %llu frames)\n", r->tty_status ? "\r\033[K" : "", p->name, addr, load,
				frames);
		break;
	case 'x': {
		const char *h = strrchr(hex, ',') + 1;
		ssize_t n = rsp_hex_decode(h, strlen(h), text, sizeof(text) - 1);
		text[n > 0 ? n : 0] = '\0';
		err_msg("%s: cannot be placed: %s; the program runs on without it",
			p->name, text);
		p->pending_failed = true;
		break;
	}
	}
}

static int read_libevents(struct recorder *r)
{
	for (;;) {
		if (r->c.eof ||
		    rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT, "qprobe.libevents") < 0)
			return -EIO;
		if (r->reply.data[0] != 'P') {
			err_msg("library events: the agent says: %s",
				r->reply.len ? r->reply.data : "not supported");
			return -EIO;
		}
		if (r->reply.len <= 1)
			return 0;
		for (const char *s = r->reply.data + 1; *s == ';';) {
			const char *end = strchr(s + 1, ';');
			size_t len = end ? (size_t)(end - s - 1) : strlen(s + 1);
			take_libevent(r, s + 1, len);
			s += 1 + len;
		}
	}
}

/* The end of the recording: where each pending probe was, its frames
 * per load, and the ones never placed. */
static void say_loads(struct recorder *r)
{
	for (size_t i = 0; i < r->nprobes; i++) {
		struct probe *p = &r->probes[i];
		if (!p->pending)
			continue;
		if (!p->nloads) {
			if (!p->pending_failed)
				err_msg("probe %s never placed: library '%s' was not loaded",
					p->name, p->spec.lib);
			continue;
		}
		if (r->quiet)
			continue;
		fprintf(stderr, "probe-trace: %s: %u load%s:", p->name, p->nloads,
			p->nloads == 1 ? "" : "s");
		for (unsigned int k = 0; k < p->nloads && k < MAX_LOADS; k++)
			fprintf(stderr, "%s load %u at 0x%llx %llu frames", k ? "," : "",
				k + 1, (unsigned long long)p->loads[k].addr,
				(unsigned long long)p->loads[k].frames);
		fputc('\n', stderr);
	}
}

static int record_loop(struct recorder *r)
{
	uint64_t deadline = r->duration > 0 ? now_ms() + (uint64_t)(r->duration * 1000) : 0;
	uint64_t last_status = now_ms(), last_events = 0;
	bool pending = any_pending(r);
	int e;

	r->last_tick_ms = r->start_ms = now_ms();
	while (!r->exited && !stop_signal) {
		if (deadline && now_ms() >= deadline)
			break;
		long got = drain_frames(r);
		if (got < 0)
			return (int)got;
		if (pending && now_ms() - last_events >= 100) {
			if (read_libevents(r) < 0 && r->c.eof)
				return -EPIPE;
			last_events = now_ms();
		}
		if ((e = handle_notes(r)) < 0)
			return e;
		if (now_ms() - last_status >= 500) {
			/* A run that ended by itself is reported at once; the
			 * program runs on to its end (or Ctrl-C), as it would
			 * have without us. */
			check_run(r);
			read_lost(r);
			list_threads(r);
			update_status(r, false);
			last_status = now_ms();
		}
		status_line(r, false);
		if (r->exited || stop_signal)
			break;
		e = rsp_client_poll(&r->c, got > 0 ? 0 : 50);
		if (e < 0 && e != -ETIMEDOUT && e != -EINTR)
			return e;
		if ((e = handle_notes(r)) < 0)
			return e;
	}
	return 0;
}

/*
 * The agent died (killed, crashed) during the recording.  Its keeper has
 * put the program back, unprobed, and left in it what the jump pads had
 * recorded and the agent not yet taken.  A new agent, started the way
 * the first was, attaches to the program, gets the same tracepoints (not
 * started) and hands those records over as frames (qprobe.salvage),
 * which go into the file like the others; the USDT semaphores the
 * recording raised go back down, and the agent detaches.  Frames the
 * dead agent held itself, or had sent only in part, are gone with it.
 * The old agent may still hold the program while it finishes dying:
 * attaching is tried for 8 s at most.  Returns the frames recovered, or
 * -errno: no agent the recorder can start (--connect), or none that can
 * attach (the program is gone).
 */
static long recover(struct recorder *r)
{
	uint64_t before = r->frames;
	unsigned long long got = 0, left = 0;
	int e = -ESRCH;

	if (r->connect)
		return -ENOTCONN;
	rsp_client_close(&r->c, 1000);
	r->carry_len = 0;
	r->attach_pid = r->pid;
	r->prog_argc = 0;
	/* Bounded in time, whatever the transport does (an ssh that cannot
	 * reach the board any more): 5 s a request, attaching retried for
	 * 8 s, one agent for all the tries. */
	r->attach_until = now_ms() + 8000;
	req_timeout_ms = 5000;
	e = start_agent(r);
	if (e == 0)
		e = handshake(r);
	r->attach_until = 0;
	if (e < 0) {
		rsp_client_close(&r->c, 1000);
		req_timeout_ms = 30000;
		return e;
	}
	if (define_all(r) < 0 ||
	    rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT, "qprobe.salvage") < 0) {
		e = -EIO;
		goto out;
	}
	if (sscanf(r->reply.data, "S%llx;%llx", &got, &left) != 2) {
		err_msg("the new agent cannot salvage frames: %s",
			r->reply.len ? r->reply.data : "not supported");
		e = -ENOTSUP;
		goto out;
	}
	if (drain_frames(r) < 0) {
		e = -EIO;
		goto out;
	}
	if (left)
		err_msg("%llu records left by the pads were not taken (no tracepoint "
			"defined at their address records without stopping)", left);
	e = 0;
out:
	semaphores(r, -1);
	request_ok(r, "detaching", "D;%x", r->pid);
	rsp_client_close(&r->c, 2000);
	req_timeout_ms = 30000;
	return e < 0 ? e : (long)(r->frames - before);
}

static int finish(struct recorder *r)
{
	int e = 0;

	/* Why the run ended, if it ended by itself (also before an exit). */
	check_run(r);
	if (!r->exited) {
		/* Stop the run first: no frame is created after this. */
		if (request_ok(r, "stopping the trace", "QTStop") < 0)
			e = -EIO;
	}
	if (drain_frames(r) < 0)
		e = -EIO;
	if (any_pending(r))
		read_libevents(r);	/* the last loads' frames */
	read_lost(r);	/* final once the run is over */
	if (!r->exited) {
		semaphores(r, -1);
		/* A program we started ends with the recording the user
		 * ended; after a write error it runs on, unharmed. */
		if (r->started && !r->write_failed)
			rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT, "vKill;%x", r->pid);
		else
			request_ok(r, "detaching", "D;%x", r->pid);
	}
	return e;
}

/* What a recording holds once it is over, whichever way it ended. */
static void recorder_free(struct recorder *r)
{
	for (size_t i = 0; i < r->nmods; i++) {
		struct module *m = &r->mods[i];

		if (m->opened)
			elfsym_close(&m->ef);
		dv_close(m->dv);
		free(m->dv_error);
		free(m->path);
		free(m->local);
	}
	for (size_t i = 0; i < r->nprobes; i++) {
		if (r->probes[i].sdt_open)
			sdt_close(&r->probes[i].sdt);
		for (size_t k = 0; r->probes[i].typed && k < r->probes[i].nsites; k++) {
			typed_probe_free(&r->probes[i].typed[k]);
			dv_collect_free(&r->probes[i].collect[k]);
		}
		free(r->probes[i].typed);
		free(r->probes[i].collect);
		free(r->probes[i].pending_sym);
		spec_free(&r->probes[i].spec);
	}
	target_regs_free(&r->regs);
	free(r->target_xml);
	tp_store_free(&r->store);
	free(r->req);
	rsp_buf_free(&r->reply);
	free(r->carry);
	free(r->notes);
	free(r->threads);
	free(r->keep_tids);
	if (r->live_reader)
		tfile_reader_close(r->live_reader);
	free(r->live_reader);
	rsp_buf_free(&r->live_head);
	free(r);
}

static int record_run(struct recorder *r, int argc, char **argv);

int cmd_record(int argc, char **argv)
{
	struct recorder *r = calloc(1, sizeof(*r));
	int rc;

	if (!r)
		abort();
	rc = record_run(r, argc, argv);
	recorder_free(r);
	return rc;
}

static int record_run(struct recorder *r, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "probe", required_argument, NULL, 'e' },
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "agent", required_argument, NULL, 'A' },
		{ "connect", required_argument, NULL, 'C' },
		{ "sysroot", required_argument, NULL, 'S' },
		{ "duration", required_argument, NULL, 'd' },
		{ "buffer-size", required_argument, NULL, 'b' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "on-full", required_argument, NULL, 'F' },
		{ "string-max", required_argument, NULL, 'M' },
		{ "tid", required_argument, NULL, 'I' },
		{ "comm", required_argument, NULL, 'N' },
		{ "live", no_argument, NULL, 'L' },
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *specs[MAX_PROBES];
	size_t nspecs = 0;
	int opt, rc = PT_EXIT_FAIL;
	char err[1024];
	char *end;

	r->out_path = "probe-trace.tfile";
	r->buffer_size = DEFAULT_BUFFER;
	r->string_max = 64;
	r->fd = -1;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "+e:o:p:d:b:qh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'e':
			if (nspecs == MAX_PROBES) {
				err_msg("at most %d probes", MAX_PROBES);
				return PT_EXIT_USAGE;
			}
			specs[nspecs++] = optarg;
			break;
		case 'o': r->out_path = optarg; break;
		case 'p':
			r->attach_pid = (pid_t)strtol(optarg, &end, 10);
			if (*end || r->attach_pid <= 0) {
				err_msg("-p: '%s' is not a process id", optarg);
				return PT_EXIT_USAGE;
			}
			break;
		case 'A': r->agent_cmd = optarg; break;
		case 'C': r->connect = optarg; break;
		case 'S':
			r->sysroot = optarg;
			elfsym_set_sysroot(optarg);
			break;
		case 'd':
			r->duration = strtod(optarg, &end);
			if (*end || r->duration <= 0) {
				err_msg("--duration: '%s' is not a number of seconds", optarg);
				return PT_EXIT_USAGE;
			}
			break;
		case 'b':
			if (parse_size(optarg, &r->buffer_size) < 0) {
				err_msg("--buffer-size: '%s': expected 4096 to 4G bytes "
					"(suffixes K, M, G)", optarg);
				return PT_EXIT_USAGE;
			}
			break;
		case 'q': r->quiet = true; break;
		case 'L': r->live = true; break;
		case 'J': r->live_json = true; break;
		case 'M': {
			unsigned long v = strtoul(optarg, &end, 10);
			if (*end || !*optarg || v == 0 || v > 65535) {
				err_msg("--string-max: '%s': expected 1 to 65535 bytes", optarg);
				return PT_EXIT_USAGE;
			}
			r->string_max = (unsigned int)v;
			break;
		}
		case 'F':
			r->full_stops = r->full_drops = false;
			if (strcmp(optarg, "wait") == 0)
				;
			else if (strcmp(optarg, "stop") == 0)
				r->full_stops = true;
			else if (strcmp(optarg, "drop") == 0)
				r->full_drops = true;
			else {
				err_msg("--on-full: '%s': expected wait, drop or stop", optarg);
				return PT_EXIT_USAGE;
			}
			break;
		case 'I':
		case 'N': {
			struct frame_filter ff = { .tids = r->keep_tids,
						   .ntids = r->nkeep_tids };
			if (frame_filter_add(&ff, opt == 'I' ? 't' : 'c', optarg,
					     "probe-trace record") < 0) {
				r->keep_tids = ff.tids;
				return PT_EXIT_USAGE;
			}
			r->keep_tids = ff.tids;
			r->nkeep_tids = ff.ntids;
			if (opt == 'N')
				r->keep_comm = optarg;
			break;
		}
		case 'h': usage(stdout); return PT_EXIT_OK;
		default: usage(stderr); return PT_EXIT_USAGE;
		}
	}
	r->prog_argv = argv + optind;
	r->prog_argc = argc - optind;
	if (r->live_json && !r->live) {
		err_msg("--json is the form of --live's frames: give --live too");
		return PT_EXIT_USAGE;
	}
	if (nspecs == 0) {
		err_msg("no probe: give at least one -e SPEC (see --help)");
		return PT_EXIT_USAGE;
	}
	if (!r->attach_pid && r->prog_argc == 0 && !r->connect) {
		err_msg("nothing to trace: give -- PROG [ARGS] or -p PID");
		return PT_EXIT_USAGE;
	}
	if (r->attach_pid && r->prog_argc) {
		err_msg("give either -p PID or a program, not both");
		return PT_EXIT_USAGE;
	}
	if (r->agent_cmd && r->connect) {
		err_msg("give either --agent or --connect, not both");
		return PT_EXIT_USAGE;
	}
	for (size_t i = 0; i < nspecs; i++) {
		struct probe *p = &r->probes[i];
		if (spec_parse(specs[i], &p->spec, err, sizeof(err)) < 0) {
			fprintf(stderr, "probe-trace record: %s\n", err);
			return PT_EXIT_USAGE;
		}
		p->tpnum = (int)i + 1;
		spec_where_text(&p->spec, p->name, sizeof(p->name));
		r->nprobes++;
	}
	/* A local program: the agent gets the path we read symbols from. */
	char *prog = NULL;
	if (r->prog_argc && !r->agent_cmd && !r->connect) {
		prog = find_program(r->prog_argv[0]);
		if (!prog) {
			err_msg("%s: no such program", r->prog_argv[0]);
			return PT_EXIT_FAIL;
		}
		r->prog_argv[0] = prog;
	}
	r->started = r->prog_argc > 0;

	struct sigaction sa = { .sa_handler = on_stop_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
	r->tty_status = !r->quiet && isatty(2);

	rsp_buf_init(&r->reply);
	r->req = malloc(sizeof(*r->req));
	if (!r->req || tp_store_init(&r->store) < 0)
		abort();
	if (start_agent(r) < 0)
		goto out;
	if (handshake(r) < 0 || learn_target(r) < 0)
		goto stop;
	if (setup_probes(r) < 0) {
		if (r->usage_error)
			rc = PT_EXIT_USAGE;
		goto stop;
	}
	if (open_output(r) < 0)
		goto stop;
	if (semaphores(r, +1) < 0)
		goto stop;
	if (request_ok(r, "starting the trace", "QTStart") < 0)
		goto stop;
	r->running = true;
	list_threads(r);	/* the threads there are before the program runs */
	int e = rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT, "vCont;c");
	if (e < 0 || strcmp(r->reply.data, "OK") != 0) {
		err_msg("cannot resume the program: %s", e < 0 ? r->c.error : r->reply.data);
		goto stop;
	}
	if (!r->quiet)
		fprintf(stderr, "probe-trace: recording %zu probe%s of process %d "
			"into %s; Ctrl-C stops\n", r->nprobes,
			r->nprobes == 1 ? "" : "s", r->pid, r->out_path);
	pending_said(r);
	e = record_loop(r);
	if (e == -EPIPE) {
		err_msg("the agent went away: %s; %s keeps the %llu frames received",
			r->c.error, r->out_path, (unsigned long long)r->frames);
		long n = recover(r);
		if (n >= 0)
			err_msg("a new agent recovered %ld frames the pads had left in "
				"process %d; frames the dead agent held itself are lost",
				n, r->pid);
		else if (n == -ENOTCONN)
			err_msg("no agent to recover frames with: the agent was reached "
				"by --connect");
		else
			err_msg("no frames recovered: no new agent could attach to "
				"process %d", r->pid);
		update_status(r, true);
		goto out;
	}
	if (finish(r) < 0 || e < 0) {
		update_status(r, true);
		goto out;
	}
	update_status(r, true);
	status_line(r, true);
	if (!r->quiet) {
		fprintf(stderr, "probe-trace: %llu frames (%llu bytes) in %s",
			(unsigned long long)r->frames, (unsigned long long)r->bytes,
			r->out_path);
		for (size_t i = 0; i < r->nprobes; i++)
			fprintf(stderr, "%s %s: %llu", i ? "," : ";", r->probes[i].name,
				(unsigned long long)r->probes[i].frames);
		fputc('\n', stderr);
		if (r->exited && r->exit_signal)
			fprintf(stderr, "probe-trace: the program was killed by signal %d\n",
				r->exit_signal);
		else if (r->exited)
			fprintf(stderr, "probe-trace: the program exited with code %d\n",
				r->exit_code);
		else if (stop_signal)
			fprintf(stderr, "probe-trace: stopped by signal %d; the program was %s\n",
				(int)stop_signal, r->started ? "killed" : "detached");
		else
			fprintf(stderr, "probe-trace: stopped after %g s; the program was %s\n",
				r->duration, r->started ? "killed" : "detached");
	}
	if (r->filtered && !r->quiet)
		fprintf(stderr, "probe-trace: %llu frames of other threads dropped "
			"(%s%s%s), counted in %s\n", (unsigned long long)r->filtered,
			r->keep_tids ? "--tid" : "", r->keep_tids && r->keep_comm ? ", " : "",
			r->keep_comm ? "--comm" : "", r->out_path);
	say_loads(r);
	say_lost(r);
	/* Lost frames fail the recording, also in --on-full=drop, where
	 * they are the price asked for: a script sees them in the status. */
	rc = r->write_failed || r->self_stopped || r->lost ? PT_EXIT_FAIL : PT_EXIT_OK;
	/* A probe that could not be placed in its library is an error like
	 * any bad spec, and so is one whose library never came (a misspelt
	 * name looks the same): the file has none of their frames. */
	for (size_t i = 0; i < r->nprobes; i++)
		if (r->probes[i].pending_failed ||
		    (r->probes[i].pending && !r->probes[i].nloads))
			rc = PT_EXIT_FAIL;
	goto out;
stop:
	/* Setup failed: leave the process as it was. */
	if (!r->exited && r->pid && r->c.fd >= 0 && !r->c.eof) {
		semaphores(r, -1);
		if (r->started)
			rsp_client_request(&r->c, &r->reply, 5000, "vKill;%x", r->pid);
		else
			rsp_client_request(&r->c, &r->reply, 5000, "D;%x", r->pid);
	}
out:
	write_threads(r);
	if (r->fd >= 0)
		close(r->fd);
	rsp_client_close(&r->c, 3000);
	free(prog);
	return rc;
}
