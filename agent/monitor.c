/*
 * monitor.c - `monitor` commands (qRcmd): the agent's own commands.
 */
#define LOG_DOMAIN "agent"
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/log.h"

static const char monitor_help[] =
	"The following monitor commands are supported:\n"
	"  help                    this list\n"
	"  exit                    end the session: kill the programs the agent\n"
	"                          started, detach from the ones it attached to\n"
	"  set debug 0|1           turn all debug output off or on\n"
	"  set debug DOMAINS       turn on debug output for a comma-separated\n"
	"                          list of domains (agent,rsp,server,inferior,\n"
	"                          regs,mem,break,xfer,vfile,tp,xol,pad,arch,hot,\n"
	"                          all)\n"
	"  set remote-debug 0|1    print every packet on the agent's stderr\n"
	"  set libthread-db-search-path [PATH]\n"
	"                          where to find libthread_db (TLS variables);\n"
	"                          colon-separated, $sdir for the system's\n"
	"  set debug-format all|none\n"
	"                          accepted for gdbserver compatibility\n"
	"  return-probe [off] N    make tracepoint N collect when its function\n"
	"                          returns (the return value register holds\n"
	"                          the value), or not; set\n"
	"                          before tstart, N at a function's entry\n"
	"  return-probe            list the return probes\n"
	"  hist [off] N            make tracepoint N keep a log2 histogram of\n"
	"                          its latencies (a return probe's ns from the\n"
	"                          entry) instead of frames, or not; set\n"
	"                          before tstart\n"
	"  hist                    print the histograms (any time)\n"
	"  probes                  list the agent's probes: address, how a hit\n"
	"                          runs (pad, emulate, boost, step), owner, and\n"
	"                          the hits that stopped the thread and that a\n"
	"                          pad recorded in the process (and of the\n"
	"                          stops, those of a full ring or a full\n"
	"                          buffer), the unreadable addresses its\n"
	"                          collector met, and the returns recorded\n"
	"                          in the process\n";

/* One line per probe of every process: what a hit costs there. */
static void list_probes(struct rsp_buf *reply)
{
	static const char *const owners[] = {
		[PROBE_OWNER_NONE] = "none", [PROBE_OWNER_TRACE] = "tracepoint",
		[PROBE_OWNER_BREAKPOINT] = "breakpoint condition",
		[PROBE_OWNER_RETURN] = "return probes (unwinder)",
		[PROBE_OWNER_SOLIB] = "library events",
	};
	char line[1024];
	int n = 0;

	for (struct process *p = agent.processes; p; p = p->next) {
		for (struct probe *pr = p->probes; pr; pr = pr->next, n++) {
			const char *owner = (size_t)pr->owner < sizeof(owners) / sizeof(owners[0]) &&
					    owners[pr->owner] ? owners[pr->owner] : "agent";
			char skipped[80] = "", copies[64] = "", why[160] = "", faults[128] = "";
			if (pr->hits_ring_full || pr->hits_waited)
				snprintf(why, sizeof(why), "; of the stops, %llu with "
					 "the ring full, %llu waiting for room in the buffer",
					 (unsigned long long)pr->hits_ring_full,
					 (unsigned long long)pr->hits_waited);
			if (probe_fault_stops(pr))
				snprintf(faults, sizeof(faults), "; %llu more stops for a load in "
					 "the pad that faulted (the hit recorded, no signal to the "
					 "program)", (unsigned long long)probe_fault_stops(pr));
			if (pr->pad_collect == PAD_IPA)
				snprintf(skipped, sizeof(skipped), ", %llu skipped there (condition "
					 "false or past the pass count)",
					 (unsigned long long)pad_ipa_skipped(pr));
			if (pr->pad_collect == PAD_IPA && pr->pad_copies)
				snprintf(copies, sizeof(copies), "; %u range%s copied by the pad itself",
					 pr->pad_copies, pr->pad_copies == 1 ? "" : "s");
			if (pr->pad)
				snprintf(line, sizeof(line),
					 "process %d 0x%llx pad (%sjump over %zu bytes to 0x%llx%s%s%s), else %s (%s), %s; "
					 "hits: %llu stopped, %llu recorded in the process%s%s%s\n",
					 p->pid, (unsigned long long)pr->addr,
					 pr->pad_far ? "far " : "", pr->pad_window,
					 (unsigned long long)pr->pad,
					 pr->pad_collect == PAD_IPA ?
					 "; collects in the process with its collector, no stop" :
					 pr->pad_collect ? "; collects in the process, no stop" : "",
					 copies, pr->pad_ret ? "; return pushed in the process, no stop" : "",
					 arch_strategy_name(pr->strategy),
					 pr->insn.reason, owner,
					 (unsigned long long)pr->hits_stopped,
					 (unsigned long long)pr->hits_recorded, skipped, why, faults);
			else
				snprintf(line, sizeof(line), "process %d 0x%llx %s (%s), %s; "
					 "hits: %llu stopped, %llu recorded in the process%s\n",
					 p->pid, (unsigned long long)pr->addr,
					 arch_strategy_name(pr->strategy), pr->insn.reason, owner,
					 (unsigned long long)pr->hits_stopped,
					 (unsigned long long)pr->hits_recorded, why);
			server_console(line);
		}
		if (p->ret_area) {
			snprintf(line, sizeof(line), "process %d returns: %llu recorded in the "
				 "process (no stop), %llu entries left to the agent (table full "
				 "or too deep), %llu waited for room in the ring (a stop each)\n", p->pid,
				 (unsigned long long)pad_ret_recorded(p),
				 (unsigned long long)pad_ret_count(p, RET_PAD_FALLBACKS),
				 (unsigned long long)pad_ret_count(p, RET_PAD_LOST));
			server_console(line);
		}
		if (pad_tp_faults(p)) {
			snprintf(line, sizeof(line), "process %d: %llu pad hits of threads "
				 "with no self-pointing TCB at their thread pointer (a stop each, no signal to "
				 "the program)\n", p->pid, (unsigned long long)pad_tp_faults(p));
			server_console(line);
		}
		if (pad_ipa_faults(p)) {
			snprintf(line, sizeof(line), "process %d: %llu unreadable addresses "
				 "met by the in-process collector (no signal to the program)\n",
				 p->pid, (unsigned long long)pad_ipa_faults(p));
			server_console(line);
		}
	}
	if (!n)
		server_console("No probes.\n");
	rsp_reply_ok(reply);
}

/* A tracepoint number: decimal, nothing after it. */
static int parse_number(const char *s, uint32_t *n)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	v = strtoul(s, &end, 10);
	if (*end || v < 1 || v > 0x7fff)
		return -EINVAL;
	*n = (uint32_t)v;
	return 0;
}

/*
 * A command that marks tracepoint numbers for the next runs: `NAME [off]
 * N` marks N (or not) through `mark`, `NAME` alone lists through `list`.
 * The messages are the command's own: each follows "Tracepoint N " (or
 * "NAME: tracepoint N " for not_marked).
 */
struct mark_cmd {
	const char *name;
	int (*mark)(uint32_t number, bool on);
	void (*list)(void);
	const char *usage_rest;		/* after "NAME [off] N, or monitor NAME " */
	const char *busy;		/* a run is running */
	const char *not_marked;		/* off for a number not marked */
	const char *marked, *unmarked;
};

static void mark_command(const struct mark_cmd *c, const char *args, struct rsp_buf *reply)
{
	char msg[512];
	bool on = true;
	uint32_t n;
	int err;

	while (*args == ' ')
		args++;
	if (!*args) {
		c->list();
		rsp_reply_ok(reply);
		return;
	}
	if (strncmp(args, "off", 3) == 0 && (args[3] == ' ' || !args[3])) {
		on = false;
		for (args += 3; *args == ' '; args++)
			;
	}
	if (parse_number(args, &n) < 0) {
		snprintf(msg, sizeof(msg), "%s: '%s' is not a tracepoint number (1 to 32767).\n"
			 "Usage: monitor %s [off] N, or monitor %s %s.\n", c->name, args,
			 c->name, c->name, c->usage_rest);
		goto fail;
	}
	err = c->mark(n, on);
	if (err == -EBUSY) {
		snprintf(msg, sizeof(msg), "%s: %s\n", c->name, c->busy);
		goto fail;
	}
	if (err == -ENOENT) {
		snprintf(msg, sizeof(msg), "%s: tracepoint %u %s\n", c->name, n, c->not_marked);
		goto fail;
	}
	snprintf(msg, sizeof(msg), "Tracepoint %u %s\n", n, on ? c->marked : c->unmarked);
	server_console(msg);
	rsp_reply_ok(reply);
	return;
fail:
	server_console(msg);
	/* An error reply: gdb reports the command failed. */
	rsp_reply_error_code(reply, RSP_ERR_FAILED);
}

static void list_return_probes(void)
{
	char list[400], msg[512];

	ret_marks_text(list, sizeof(list));
	snprintf(msg, sizeof(msg), list[0] ? "Return probes: %s.\n"
		 : "No tracepoint is a return probe.\n", list);
	server_console(msg);
}

static void list_hists(void)
{
	if (!trace_hist_print(server_console))
		server_console("No tracepoint keeps a histogram (monitor hist N sets one).\n");
}

static const struct mark_cmd return_probe_cmd = {
	"return-probe", ret_mark, list_return_probes, "to list",
	"a trace run is running; return probes change between runs (tstop first).",
	"is not a return probe.",
	"is a return probe: it collects when its function returns.",
	"is no longer a return probe.",
};

static const struct mark_cmd hist_cmd = {
	"hist", trace_hist_mark, list_hists, "to print them",
	"a trace run is running; histograms change between runs (tstop first).",
	"keeps no histogram.",
	"keeps a histogram of its latencies instead of frames, from the next tstart "
	"(monitor hist prints it).",
	"collects frames again, from the next tstart.",
};

void handle_monitor(const char *cmd, struct rsp_buf *reply)
{
	if (strcmp(cmd, "help") == 0) {
		server_console(monitor_help);
		rsp_reply_ok(reply);
	} else if (strcmp(cmd, "exit") == 0) {
		agent.exit_after_reply = true;
		rsp_reply_ok(reply);
	} else if (strcmp(cmd, "set debug 1") == 0) {
		log_enable("all");
		server_console("Debug output enabled.\n");
		rsp_reply_ok(reply);
	} else if (strcmp(cmd, "set debug 0") == 0) {
		log_disable_all();
		server_console("Debug output disabled.\n");
		rsp_reply_ok(reply);
	} else if (strncmp(cmd, "set debug ", 10) == 0) {
		if (log_enable(cmd + 10) < 0) {
			rsp_reply_error(reply, "unknown debug domain in '%s'", cmd + 10);
			return;
		}
		server_console("Debug output enabled.\n");
		rsp_reply_ok(reply);
	} else if (strcmp(cmd, "set remote-debug 1") == 0 ||
		   strcmp(cmd, "set remote-debug 0") == 0) {
		agent.opt.remote_debug = cmd[17] == '1';
		server_console(agent.opt.remote_debug
				       ? "Protocol debug output enabled.\n"
				       : "Protocol debug output disabled.\n");
		rsp_reply_ok(reply);
	} else if (strncmp(cmd, "set libthread-db-search-path", 28) == 0 &&
		   (cmd[28] == ' ' || cmd[28] == '\0')) {
		const char *path = cmd[28] ? cmd + 29 : "";
		char msg[4200];
		thread_db_set_search_path(path);
		snprintf(msg, sizeof(msg), "libthread-db-search-path set to `%s'\n",
			 path[0] ? path : "$sdir");
		server_console(msg);
		rsp_reply_ok(reply);
	} else if (strcmp(cmd, "set debug-format all") == 0) {
		server_console("All extra debug format options enabled.\n");
		rsp_reply_ok(reply);
	} else if (strcmp(cmd, "set debug-format none") == 0) {
		server_console("All extra debug format options disabled.\n");
		rsp_reply_ok(reply);
	} else if (strcmp(cmd, "probes") == 0) {
		list_probes(reply);
	} else if (strncmp(cmd, "return-probe", 12) == 0 &&
		   (cmd[12] == ' ' || cmd[12] == '\0')) {
		mark_command(&return_probe_cmd, cmd + 12, reply);
	} else if (strncmp(cmd, "hist", 4) == 0 && (cmd[4] == ' ' || cmd[4] == '\0')) {
		mark_command(&hist_cmd, cmd + 4, reply);
	} else {
		server_console("Unknown monitor command.\n\n");
		server_console(monitor_help);
		/* An error reply: gdb reports the command failed. */
		rsp_reply_error_code(reply, RSP_ERR_FAILED);
	}
}
