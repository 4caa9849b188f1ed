/*
 * record-agent.c - the recorder's side of the conversation with
 * probe-agent: requests, stop replies, starting the agent and the
 * handshake that leaves one process stopped under it.
 *
 * The agent runs locally, by any command (`ssh board probe-agent -`), or
 * is reached with --connect.  The handshake puts it in extended and
 * non-stop mode, runs the program by vRun (its arguments hex-encoded, so
 * no shell on the way re-splits them) or attaches to it, and asks the
 * agent to let the program run on if the connection drops.  learn_target
 * then reads the register layout (target.xml), the program's path and
 * load bias (auxv), lets a program just started run to its entry point
 * so its libraries are loaded, and lists them (libraries-svr4).
 *
 * In non-stop mode stops arrive as %Stop notifications, drained with
 * vStopped before any thread is resumed; a signal the program gets is
 * passed back to it, and its exit ends the recording.
 */
#include "config.h"

#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/elfsym.h"
#include "client/recorder.h"
#include "client/rsp-client.h"
#include "client/target.h"

int req_timeout_ms = 30000;

/* A request whose reply must be OK. */
int request_ok(struct recorder *r, const char *what, const char *fmt,
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
const char *hex_of(struct rsp_buf *b, const void *data, size_t len)
{
	rsp_buf_reset(b);
	rsp_buf_put_hex(b, data, len);
	rsp_buf_putc(b, '\0');
	return b->data;
}

/* monitor command: console output (O packets) then OK or an error. */
int monitor(struct recorder *r, const char *cmd, char *out,
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

int read_target(struct recorder *r, uint64_t addr, void *out, size_t len)
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

/*
 * The Z0 kind of a breakpoint at the program's entry point, and its
 * address as Z0 takes it.  Where the arch has one breakpoint (x86-64,
 * aarch64) any kind means it: 1, as gdb sends on x86-64.  Where it has
 * several (32-bit ARM), the instruction set is bit 0 of the address
 * (a Thumb entry point has it set, as its symbol does) and the kind
 * follows from it and the first bytes there; Z0 takes the address with
 * bit 0 clear, as gdb sends it.
 */
static unsigned int entry_bp_kind(struct recorder *r, uint64_t *at)
{
	const struct arch_ops *a = r->tarch;
	uint64_t addr = *at;
	uint8_t buf[4];
	size_t n = sizeof(buf);

	if (!a || !a->bp_kind_at)
		return 1;
	*at = addr & ~1ull;
	if (read_target(r, *at, buf, n) < 0)
		n = 0;
	return a->bp_kind_at(addr, buf, n);
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
int handle_notes(struct recorder *r)
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

int start_agent(struct recorder *r)
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

/*
 * Runs the program (vRun), or attaches to the process (vAttach) when the
 * agent was not started with --attach: a listening agent, or a new one
 * salvaging a dead one's frames, where vAttach is retried while the
 * dying agent still traces the program.  Leaves it stopped.
 */
static int run_or_attach(struct recorder *r, bool env_reset, bool workdir)
{
	struct rsp_buf b;
	int e;

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
			rsp_buf_put_hex(&b, r->prog_argv[i], strlen(r->prog_argv[i]));
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
	return 0;
}

int handshake(struct recorder *r)
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
	if ((r->prog_argc || ((r->connect || r->attach_until) && r->attach_pid)) &&
	    run_or_attach(r, env_reset, workdir) < 0)
		return -EIO;
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

int learn_target(struct recorder *r)
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
		uint64_t at = entry;
		unsigned int kind = entry_bp_kind(r, &at);
		if (request_ok(r, "breakpoint at the entry point", "Z0,%llx,%u",
			       (unsigned long long)at, kind) < 0)
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
		if (request_ok(r, "removing the entry breakpoint", "z0,%llx,%u",
			       (unsigned long long)at, kind) < 0)
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
