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
 * a valid trace file at every moment.  When the recording ends, the
 * thread table follows the frames, the program is killed (if the
 * recorder started it) or detached, and a summary goes to stderr.
 *
 * This file is the command: its options, and the run from start to end
 * in the order above.  Each step lives in a client/record-*.c file named
 * for it; client/recorder.h lists them and holds the recorder's state.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/dwarfval.h"
#include "client/elfsym.h"
#include "client/frame-print.h"
#include "client/probe-trace.h"
#include "client/record.h"
#include "client/recorder.h"
#include "client/rsp-client.h"
#include "client/sdt.h"
#include "client/spec.h"
#include "client/target.h"
#include "client/tfile-read.h"
#include "client/typed.h"
#include "protocol/tracepoint.h"

volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* One write a message: the program's output shares our stderr, and a
 * line of ours written in pieces could take one of its in between. */
void err_msg(const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		msg = NULL;
	fprintf(stderr, "probe-trace record: %s\n", msg ? msg : fmt);
	free(msg);
}

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
"      --no-direct        the frames come over the connection even when\n"
"                         the agent runs on this machine and could write\n"
"                         them into the file itself (the default then)\n"
"  -q, --quiet            no status line and no summary on stderr (the\n"
"                         summary ends with a line per probe: how its\n"
"                         hits ran and how many stopped the program)\n"
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
"       hist (return probes only, alone): no frames; the agent adds each\n"
"       return's latency to a log2 histogram, printed on stdout at the end\n"
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
"  probe-trace record -e 'libc:read%%return hist if retval > 0' -p 1234\n"
"  probe-trace record -e 'process_order o->price o->items[0].id' \\\n"
"      -e 'shop.c:42 total' -- ./shop\n"
"\n"
"Ctrl-C stops the recording: a program started by probe-trace is killed,\n"
"an attached one is detached and runs on.  See probe-trace(1).\n");
}

/* The longest --duration, in seconds: a year (its deadline is in ms in
 * 64 bits, far from any overflow). */
#define DURATION_MAX_S (366 * 24 * 3600)

/* The largest trace buffer (the agent's offsets are 32 bits). */
#define BUFFER_SIZE_MAX 0xffffffffULL

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -EINVAL;
	unsigned int shift = 0;
	if (*end == 'k' || *end == 'K')
		shift = 10, end++;
	else if (*end == 'm' || *end == 'M')
		shift = 20, end++;
	else if (*end == 'g' || *end == 'G')
		shift = 30, end++;
	/* Shifted past 64 bits it would wrap into the range. */
	if (*end || v > (BUFFER_SIZE_MAX >> shift))
		return -EINVAL;
	v <<= shift;
	if (v < 4096)
		return -EINVAL;
	*out = v;
	return 0;
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

/* take_option and parse_options: the command line is fine so far. */
#define GO_ON (-1)

/* One option of getopt_long: GO_ON, or the exit status it ends with. */
static int take_option(struct recorder *r, int opt, char *arg,
		       const char **specs, size_t *nspecs)
{
	char *end;

	switch (opt) {
	case 'e':
		if (*nspecs == MAX_PROBES) {
			err_msg("at most %d probes", MAX_PROBES);
			return PT_EXIT_USAGE;
		}
		specs[(*nspecs)++] = arg;
		break;
	case 'o': r->out_path = arg; break;
	case 'p':
		r->attach_pid = (pid_t)strtol(arg, &end, 10);
		if (*end || r->attach_pid <= 0) {
			err_msg("-p: '%s' is not a process id", arg);
			return PT_EXIT_USAGE;
		}
		break;
	case 'A': r->agent_cmd = arg; break;
	case 'C': r->connect = arg; break;
	case 'S':
		r->sysroot = arg;
		elfsym_set_sysroot(arg);
		break;
	case 'd':
		errno = 0;
		r->duration = strtod(arg, &end);
		/* !(> 0): NaN too; ERANGE: past a double (1e400) */
		if (*end || end == arg || errno || !(r->duration > 0) ||
		    r->duration > DURATION_MAX_S) {
			err_msg("--duration: '%s' is not a number of seconds "
				"(above 0, at most %d)", arg, DURATION_MAX_S);
			return PT_EXIT_USAGE;
		}
		break;
	case 'b':
		if (parse_size(arg, &r->buffer_size) < 0) {
			err_msg("--buffer-size: '%s': expected 4096 bytes to 4G - 1 "
				"(4294967295; suffixes K, M, G: 4095M at most)", arg);
			return PT_EXIT_USAGE;
		}
		break;
	case 'q': r->quiet = true; break;
	case 'L': r->live = true; break;
	case 'J': r->live_json = true; break;
	case 'D': r->no_direct = true; break;
	case 'M': {
		unsigned long v = strtoul(arg, &end, 10);
		if (*end || !*arg || v == 0 || v > 65535) {
			err_msg("--string-max: '%s': expected 1 to 65535 bytes", arg);
			return PT_EXIT_USAGE;
		}
		r->string_max = (unsigned int)v;
		break;
	}
	case 'F':
		r->full_stops = r->full_drops = false;
		if (strcmp(arg, "wait") == 0)
			;
		else if (strcmp(arg, "stop") == 0)
			r->full_stops = true;
		else if (strcmp(arg, "drop") == 0)
			r->full_drops = true;
		else {
			err_msg("--on-full: '%s': expected wait, drop or stop", arg);
			return PT_EXIT_USAGE;
		}
		break;
	case 'I':
	case 'N': {
		struct frame_filter ff = { .tids = r->keep_tids,
					   .ntids = r->nkeep_tids };
		if (frame_filter_add(&ff, opt == 'I' ? 't' : 'c', arg,
				     "probe-trace record") < 0) {
			r->keep_tids = ff.tids;
			return PT_EXIT_USAGE;
		}
		r->keep_tids = ff.tids;
		r->nkeep_tids = ff.ntids;
		if (opt == 'N')
			r->keep_comm = arg;
		break;
	}
	case 'h': usage(stdout); return PT_EXIT_OK;
	default: usage(stderr); return PT_EXIT_USAGE;
	}
	return GO_ON;
}

/* The command line into r and specs[]: GO_ON, or the exit status. */
static int parse_options(struct recorder *r, int argc, char **argv,
			 const char **specs, size_t *nspecs)
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
		{ "no-direct", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, rc;

	r->out_path = "probe-trace.tfile";
	r->buffer_size = DEFAULT_BUFFER;
	r->string_max = 64;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "+e:o:p:d:b:qh", longopts, NULL)) != -1)
		if ((rc = take_option(r, opt, optarg, specs, nspecs)) != GO_ON)
			return rc;
	r->prog_argv = argv + optind;
	r->prog_argc = argc - optind;
	if (r->live_json && !r->live) {
		err_msg("--json is the form of --live's frames: give --live too");
		return PT_EXIT_USAGE;
	}
	if (*nspecs == 0) {
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
	return GO_ON;
}

/* Each -e SPEC parsed into a probe, numbered from 1 as its tracepoint. */
static int parse_specs(struct recorder *r, const char **specs, size_t nspecs)
{
	char err[1024];

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
	return GO_ON;
}

/* Ctrl-C, kill and a hang-up end the recording (stop_signal), not the
 * recorder; a reader of --live that goes away, or a file too large, is
 * an error of a write, not a signal. */
static void catch_signals(struct recorder *r)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
	r->tty_status = !r->quiet && isatty(2);
}

/*
 * With the agent started: from a stopped process to a running program
 * whose probes record into the file.  On failure the process is still
 * under the agent (record_run leaves it as it was).
 */
static int start_recording(struct recorder *r)
{
	if (handshake(r) < 0 || learn_target(r) < 0)
		return -EIO;
	if (setup_probes(r) < 0)
		return -EINVAL;
	if (open_output(r) < 0)
		return -EIO;
	direct_start(r);
	if (semaphores(r, +1) < 0)
		return -EFAULT;
	if (request_ok(r, "starting the trace", "QTStart") < 0)
		return -EIO;
	r->running = true;
	list_threads(r);	/* the threads there are before the program runs */
	int e = rsp_client_request(&r->c, &r->reply, REQ_TIMEOUT, "vCont;c");
	if (e < 0 || strcmp(r->reply.data, "OK") != 0) {
		err_msg("cannot resume the program: %s", e < 0 ? r->c.error : r->reply.data);
		return -EIO;
	}
	if (!r->quiet)
		fprintf(stderr, "probe-trace: recording %zu probe%s of process %d "
			"into %s; Ctrl-C stops\n", r->nprobes,
			r->nprobes == 1 ? "" : "s", r->pid, r->out_path);
	pending_said(r);
	return 0;
}

/* A recording that ran to its end: its exit status. */
static int exit_status(struct recorder *r)
{
	/* Lost frames fail the recording, also in --on-full=drop, where
	 * they are the price asked for: a script sees them in the status. */
	int rc = r->write_failed || r->self_stopped || r->lost || r->hist_failed
		 ? PT_EXIT_FAIL : PT_EXIT_OK;

	/* A probe that could not be placed in its library is an error like
	 * any bad spec, and so is one whose library never came (a misspelt
	 * name looks the same): the file has none of their frames. */
	for (size_t i = 0; i < r->nprobes; i++)
		if (r->probes[i].pending_failed ||
		    (r->probes[i].pending && !r->probes[i].nloads))
			rc = PT_EXIT_FAIL;
	return rc;
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
	const char *specs[MAX_PROBES];
	size_t nspecs = 0;
	int rc = PT_EXIT_FAIL;

	r->fd = -1;
	if ((rc = parse_options(r, argc, argv, specs, &nspecs)) != GO_ON ||
	    (rc = parse_specs(r, specs, nspecs)) != GO_ON)
		return rc;
	rc = PT_EXIT_FAIL;
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
	catch_signals(r);

	rsp_buf_init(&r->reply);
	r->req = malloc(sizeof(*r->req));
	if (!r->req || tp_store_init(&r->store) < 0)
		abort();
	if (start_agent(r) < 0)
		goto out;
	if (start_recording(r) < 0) {
		if (r->usage_error)
			rc = PT_EXIT_USAGE;
		goto stop;
	}
	int e = record_loop(r);
	if (e == -EPIPE) {
		salvage(r);
		for (size_t i = 0; i < r->nprobes; i++) {
			const struct probe *p = &r->probes[i];
			if (!p->spec.hist)
				continue;
			if (p->hist_known)
				err_msg("%s: a new agent recovered the latency histogram "
					"the process kept: %llu calls (any return the dead "
					"agent had counted itself is lost)", p->name,
					(unsigned long long)p->hist.n);
			else
				err_msg("%s: the agent is gone, and its latency "
					"histogram with it", p->name);
		}
		update_status(r, true);
		print_hists(r);
		goto out;
	}
	if (finish(r) < 0 || e < 0) {
		update_status(r, true);
		print_hists(r);
		goto out;
	}
	update_status(r, true);
	status_line(r, true);
	say_summary(r);
	print_hists(r);
	rc = exit_status(r);
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
