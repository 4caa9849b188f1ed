/*
 * main.c - probe-agent's command line, gdbserver-compatible.
 */
#define LOG_DOMAIN "agent"
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent/agent.h"
#include "agent/keeper.h"
#include "agent/log.h"

struct agent agent;

static void usage(FILE *out)
{
	fprintf(out,
"Usage: probe-agent [OPTIONS] COMM PROG [ARGS...]\n"
"       probe-agent [OPTIONS] --attach COMM PID\n"
"       probe-agent [OPTIONS] --multi COMM\n"
"\n"
"A remote probe agent that gdb drives like gdbserver ('target remote' or\n"
"'target extended-remote').\n"
"\n"
"COMM is how gdb reaches the agent:\n"
"  - or stdio         stdin/stdout: 'target remote | probe-agent - PROG'\n"
"  :PORT              TCP on 127.0.0.1 (loopback only); PORT 0 picks one\n"
"  HOST:PORT          TCP on the address of HOST; name a non-loopback address\n"
"                     only on a trusted network: gdb can control the program\n"
"  tcp4:, tcp6:, udp:, udp4:, udp6: before [HOST]:PORT pick the protocol\n"
"\n"
"Options:\n"
"  --attach           attach to the running process PID\n"
"  --multi            start without a program; gdb runs or attaches one\n"
"                     (extended-remote)\n"
"  --once             serve one connection, then exit; without it a TCP\n"
"                     agent keeps the program and listens again\n"
"  --quiet            no progress messages (process created, attached,\n"
"                     exited...); errors are still printed\n"
"  --wrapper W... --  run PROG through the wrapper command W...\n"
"  --[no-]startup-with-shell\n"
"                     start PROG through $SHELL, or directly (default: on);\n"
"                     either way PROG gets its arguments unchanged, never\n"
"                     expanded or split\n"
"  --[no-]disable-randomization\n"
"                     turn address-space randomization off for PROG\n"
"                     (default: on)\n"
"  --debug[=DOMAINS]  debug output on stderr; DOMAINS is a comma-separated\n"
"                     list of agent,rsp,server,inferior,regs,mem,break,xfer,\n"
"                     vfile,tp,xol,pad,arch,hot,keeper,solib,syscall,step,\n"
"                     or all (the default)\n"
"  --remote-debug     print every packet on stderr\n"
"  --tp-strategy=S    how tracepoint hits run the displaced instruction:\n"
"                     auto (default: the fastest the instruction allows),\n"
"                     emulate, boost (out-of-line copy) or step (single-step\n"
"                     the copy); for tests and measurements\n"
"  --disable-packet=P1[,P2...]\n"
"                     behave as if these packets were unsupported, to test\n"
"                     clients: vCont, T (stop replies as S), Tthread (no\n"
"                     thread in stop replies), qC, qfThreadInfo, threads,\n"
"                     qprobe.stats (as an older agent)\n"
"  --version          print the version and exit\n"
"  --help             print this help and exit\n"
"\n"
"Examples:\n"
"  probe-agent :2345 ./prog arg        then in gdb: target remote :2345\n"
"  gdb -ex 'target remote | probe-agent - ./prog' ./prog\n"
"  probe-agent --multi :2345           then: target extended-remote :2345\n"
"  probe-agent --attach :2345 1234\n");
}

static bool looks_like_comm(const char *s)
{
	return strcmp(s, "-") == 0 || strcmp(s, "stdio") == 0 ||
	       strchr(s, ':') != NULL;
}

static bool is_number(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

enum {
	OPT_ONCE = 256, OPT_MULTI, OPT_ATTACH, OPT_WRAPPER, OPT_DEBUG,
	OPT_REMOTE_DEBUG, OPT_VERSION, OPT_HELP, OPT_SHELL, OPT_NO_SHELL,
	OPT_RANDOM, OPT_NO_RANDOM, OPT_DEBUG_FORMAT, OPT_DISABLE_PACKET,
	OPT_SELFTEST, OPT_TP_STRATEGY, OPT_QUIET,
};

static const struct option long_options[] = {
	{ "once", no_argument, NULL, OPT_ONCE },
	{ "multi", no_argument, NULL, OPT_MULTI },
	{ "attach", no_argument, NULL, OPT_ATTACH },
	{ "wrapper", no_argument, NULL, OPT_WRAPPER },
	{ "debug", optional_argument, NULL, OPT_DEBUG },
	{ "debug-format", required_argument, NULL, OPT_DEBUG_FORMAT },
	{ "disable-packet", required_argument, NULL, OPT_DISABLE_PACKET },
	{ "selftest", optional_argument, NULL, OPT_SELFTEST },
	{ "tp-strategy", required_argument, NULL, OPT_TP_STRATEGY },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "remote-debug", no_argument, NULL, OPT_REMOTE_DEBUG },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "startup-with-shell", no_argument, NULL, OPT_SHELL },
	{ "no-startup-with-shell", no_argument, NULL, OPT_NO_SHELL },
	{ "disable-randomization", no_argument, NULL, OPT_RANDOM },
	{ "no-disable-randomization", no_argument, NULL, OPT_NO_RANDOM },
	{ NULL, 0, NULL, 0 },
};

static void parse_disable_packet(const char *list)
{
	static const struct {
		const char *name;
		unsigned int bit;
	} packets[] = {
		{ "vCont", DISABLE_VCONT }, { "T", DISABLE_T },
		{ "Tthread", DISABLE_TTHREAD }, { "qC", DISABLE_QC },
		{ "qfThreadInfo", DISABLE_QFTHREADINFO },
		{ "threads", DISABLE_THREADS },
		{ "qprobe.stats", DISABLE_PROBE_STATS },
	};
	char *copy = strdup(list), *save = NULL;

	for (char *tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		size_t i;
		for (i = 0; i < sizeof(packets) / sizeof(packets[0]); i++)
			if (strcmp(tok, packets[i].name) == 0)
				break;
		if (i == sizeof(packets) / sizeof(packets[0]))
			die("--disable-packet: unknown packet '%s' (known: vCont, T, "
			    "Tthread, qC, qfThreadInfo, threads, qprobe.stats)", tok);
		agent.opt.disabled |= packets[i].bit;
	}
	free(copy);
}

static void parse_args(int argc, char **argv)
{
	bool attach = false;
	int c;

	agent.opt.disable_randomization = true;
	agent.opt.startup_with_shell = true;
	/* '+': stop at the first non-option, PROG's own options are its. */
	while ((c = getopt_long(argc, argv, "+", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_ONCE: agent.opt.once = true; break;
		case OPT_QUIET: log_quiet = true; break;
		case OPT_MULTI: agent.opt.multi = true; break;
		case OPT_ATTACH: attach = true; break;
		case OPT_WRAPPER: {
			int start = optind, end = optind;
			while (end < argc && strcmp(argv[end], "--") != 0)
				end++;
			if (end == argc || end == start)
				die("--wrapper needs a command ended by '--'");
			agent.opt.wrapper = calloc(end - start + 1, sizeof(char *));
			for (int i = start; i < end; i++)
				agent.opt.wrapper[i - start] = argv[i];
			optind = end + 1;
			break;
		}
		case OPT_DEBUG:
			if (log_enable(optarg ? optarg : "all") < 0)
				exit(1);
			break;
		case OPT_DEBUG_FORMAT: break;	/* accepted for compatibility */
		case OPT_SELFTEST:
			/* The agent's tests are `make check`, not built in. */
			printf("Selftests have been disabled for this build.\n");
			exit(0);
		case OPT_TP_STRATEGY: {
			int st = probe_strategy_parse(optarg);
			if (st < 0)
				die("--tp-strategy: '%s' is not one of auto, pad, emulate, boost, step",
				    optarg);
			agent.opt.tp_strategy = st;
			break;
		}
		case OPT_DISABLE_PACKET:
			parse_disable_packet(optarg);
			break;
		case OPT_REMOTE_DEBUG: agent.opt.remote_debug = true; break;
		case OPT_VERSION:
			printf("probe-agent %s\n", PACKAGE_VERSION);
			exit(0);
		case OPT_HELP:
			usage(stdout);
			exit(0);
		case OPT_SHELL: agent.opt.startup_with_shell = true; break;
		case OPT_NO_SHELL: agent.opt.startup_with_shell = false; break;
		case OPT_RANDOM: agent.opt.disable_randomization = true; break;
		case OPT_NO_RANDOM: agent.opt.disable_randomization = false; break;
		default:
			fprintf(stderr, "Try 'probe-agent --help' for more information.\n");
			exit(2);
		}
	}
	char **pos = argv + optind;
	int npos = argc - optind;

	/* The older order, COMM --attach PID, as gdbserver still accepts. */
	if (npos >= 2 && strcmp(pos[1], "--attach") == 0) {
		attach = true;
		pos[1] = pos[0];
		pos++;
		npos--;
	}

	/* COMM --multi: the form `probe-trace record --agent CMD` appends
	 * to a command that ends with COMM.  It then runs the program with
	 * vRun, whose hex-encoded arguments no shell on the way (ssh's, on
	 * the board) can re-split. */
	if (npos == 2 && strcmp(pos[1], "--multi") == 0) {
		agent.opt.multi = true;
		npos--;
	}

	if (npos < 1) {
		fprintf(stderr, "probe-agent: no COMM given (-, :PORT or HOST:PORT)\n"
				"Try 'probe-agent --help' for more information.\n");
		exit(2);
	}
	if (attach) {
		/* gdbserver's order is COMM PID; accept PID COMM too. */
		const char *comm = pos[0], *pid = npos > 1 ? pos[1] : NULL;
		if (npos == 2 && !looks_like_comm(comm) && looks_like_comm(pos[1])) {
			comm = pos[1];
			pid = pos[0];
		}
		if (npos != 2 || !pid || !is_number(pid))
			die("--attach needs COMM and a process id, e.g. --attach :2345 1234");
		agent.opt.comm = comm;
		agent.opt.attach_pid = atoi(pid);
		return;
	}
	agent.opt.comm = pos[0];
	if (npos > 1) {
		agent.opt.prog_argv = pos + 1;
		agent.opt.prog_argv[0] = program_path(agent.opt.prog_argv[0]);
	}
	else if (!agent.opt.multi)
		die("no program to run: give PROG after COMM, or use --multi or --attach\n"
		    "Try 'probe-agent --help' for more information.");
}

/* The environment variables that change what the agent does (doc/
 * probe-agent.1, ENVIRONMENT) are checked before anything starts, and
 * those read later kept in agent.opt, so that no attach or hit asks the
 * environment again. */
/* A variable that is 0 or 1: -1 when unset or empty; any other value
 * stops the agent. */
static int env_01(const char *name)
{
	const char *v = getenv(name);

	if (!v || !*v)
		return -1;
	if (strcmp(v, "0") && strcmp(v, "1"))
		die("%s=%s: expected 0 or 1", name, v);
	return *v - '0';
}

static void read_env(void)
{
	const char *v = getenv("PROBE_PAD_CLOCK");
	char *end;

	if (v && *v && strcmp(v, "vdso") && strcmp(v, "tsc"))
		die("PROBE_PAD_CLOCK=%s: expected vdso or tsc", v);
	agent.opt.pad_clock_vdso = v && !strcmp(v, "vdso");
	agent.opt.pad_collector_copy = env_01("PROBE_PAD_NATIVE_COPY") == 0;
	v = getenv("PROBE_PAD_PREFETCH");
	agent.opt.pad_prefetch = PAD_PREFETCH_DEFAULT;
	if (v && *v) {
		unsigned long n = strtoul(v, &end, 10);
		if (*end || !isdigit((unsigned char)*v) || n > PAD_PREFETCH_MAX)
			die("PROBE_PAD_PREFETCH=%s: expected a number from 0 to %d",
			    v, PAD_PREFETCH_MAX);
		agent.opt.pad_prefetch = n;
	}
	agent.opt.pad_no_touch = env_01("PROBE_PAD_TOUCH") == 0;
	v = getenv("PROBE_AGENT_TEST_KILL");
	if (v && *v && strcmp(v, "run") && strcmp(v, "run-trap"))
		die("PROBE_AGENT_TEST_KILL=%s: expected run or run-trap", v);
	agent.opt.test_kill = !v || !*v ? TEST_KILL_NONE :
			      !strcmp(v, "run") ? TEST_KILL_RUN : TEST_KILL_RUN_TRAP;
	/* A test knob: empty or 0 is off, anything else on. */
	v = getenv("PROBE_AGENT_FAR_PADS");
	agent.opt.far_pads = v && *v && strcmp(v, "0");
}

int main(int argc, char **argv)
{
	struct process *p;
	int err;

	inferior_note_signals();
	parse_args(argc, argv);
	read_env();
	agent.arch = arch_host();
	agent.ptrace = &ptrace_arch_host;
	if (agent.ptrace->read_env) {
		char why[256];
		if (agent.ptrace->read_env(why, sizeof(why)) < 0)
			die("%s", why);
	}
	/* A bad address stops the agent before it starts or attaches to
	 * anything (gdbserver's order too), its keeper included. */
	server_check_comm();
	/* After the ops: the keeper uses them. */
	keeper_start();
	rsp_buf_init(&agent.reply);
	trace_init();
	agent.base = event_base_new();
	if (!agent.base)
		die("cannot create the event loop");

	if (agent.opt.prog_argv) {
		if (server_is_stdio())
			log_user("stdin/stdout redirected");
		err = inferior_start(agent.opt.prog_argv, &p);
		if (err == -ECHILD) {
			log_user("Exiting");
			exit(1);
		}
		if (err < 0)
			die("cannot start %s: %s", agent.opt.prog_argv[0], strerror(-err));
		stop_event_set(&agent.last_stop, STOP_SIGNAL, signal_to_gdb(SIGTRAP),
			       p->pid, p->pid);
		agent.have_last_stop = true;
	} else if (agent.opt.attach_pid) {
		err = inferior_attach(agent.opt.attach_pid, &p);
		if (err < 0)
			die("cannot attach to process %d: %s", agent.opt.attach_pid,
			    strerror(-err));
		stop_event_set(&agent.last_stop, STOP_SIGNAL, 0, p->pid, p->pid);
		agent.have_last_stop = true;
	}
	/* A program started or attached to here must not outlive an agent
	 * that cannot serve it (a port that is taken, any die() from now
	 * on): killed if started, detached if attached, as gdbserver leaves
	 * them.  The keeper, forked before, would otherwise let it run. */
	atexit(inferior_kill_all_for_exit);
	if (server_start(&agent) < 0)
		die("cannot start serving on %s", agent.opt.comm);
	server_run();
	inferior_kill_all_for_exit();
	return 0;
}
