/*
 * probe-driver.c - drives the agent's probe machinery without gdb: starts
 * a program, puts counting probes at the given addresses, runs it to the
 * end and prints the hits per probe and the strategy each used.
 *
 *   probe-driver STRATEGY ADDR... -- PROG [ARGS]
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/log.h"

struct agent agent;

#define MAX_PROBES 16
static unsigned long hits[MAX_PROBES];

static int count_hit(struct probe *pr, struct thread *t, void *arg)
{
	(*(unsigned long *)arg)++;
	return 0;
}

int main(int argc, char **argv)
{
	struct rsp_resume_action all = { .kind = RSP_RESUME_CONTINUE,
					 .ptid = { RSP_ID_ALL, RSP_ID_ALL } };
	struct probe *probes[MAX_PROBES];
	struct process *p;
	uint64_t addrs[MAX_PROBES];
	int n = 0, i, st;
	char why[256];
	sigset_t chld, old;

	if (argc < 4 || (st = probe_strategy_parse(argv[1])) < 0) {
		fprintf(stderr, "usage: probe-driver auto|emulate|boost|step ADDR... -- PROG\n");
		return 99;
	}
	agent.opt.tp_strategy = st;
	if (getenv("PROBE_DEBUG"))
		log_enable(getenv("PROBE_DEBUG"));
	agent.opt.disable_randomization = true;
	agent.opt.pad_prefetch = PAD_PREFETCH_DEFAULT;
	agent.arch = arch_host();
	agent.ptrace = &ptrace_arch_host;
	for (i = 2; i < argc && strcmp(argv[i], "--") && n < MAX_PROBES; i++)
		addrs[n++] = strtoull(argv[i], NULL, 0);
	if (i >= argc - 1)
		return 99;
	/* SIGCHLD is what the event loop would wait for. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	if (inferior_start(argv + i + 1, &p) < 0)
		return 99;
	for (i = 0; i < n; i++)
		if (probe_insert(p, addrs[i], count_hit, &hits[i], &probes[i], why,
				 sizeof(why)) < 0) {
			fprintf(stderr, "probe-driver: %s\n", why);
			return 1;
		}
	for (i = 0; i < n; i++)
		printf("probe %#llx %s %s\n", (unsigned long long)addrs[i],
		       arch_strategy_name(probes[i]->strategy), probes[i]->insn.reason);
	fflush(stdout);
	inferior_resume(&all, 1);
	while (agent.processes) {
		int sig;
		sigwait(&chld, &sig);
		inferior_sigchld();
		if (agent.processes && !agent.running) {
			/* A stop gdb would have heard of: show it, go on. */
			fprintf(stderr, "probe-driver: stop (signal %d)\n",
				agent.last_stop.gdb_signal);
			inferior_resume(&all, 1);
		}
	}
	for (i = 0; i < n; i++)
		printf("hits %#llx %lu\n", (unsigned long long)addrs[i], hits[i]);
	if (agent.last_stop.kind != STOP_EXITED)
		return 1;
	return agent.last_stop.exit_code;
}
