/*
 * probe-trace.c - the client's entry point: a table of subcommands.
 *
 * `probe-trace SUBCOMMAND ARGS...`; a new subcommand (record, dump,
 * list ...) is one more row in subcommands[] below and one file.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "client/probe-trace.h"
#include "client/record.h"

struct subcommand {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct subcommand subcommands[] = {
	{ "record", cmd_record,
	  "record probes of a program into a trace file" },
	{ "dump", cmd_dump,
	  "print the frames of a trace file, or export them (Perfetto, CTF)" },
	{ "report", cmd_report,
	  "hits, latency percentiles and histograms per probe and thread" },
	{ "insn", cmd_insn,
	  "show how each instruction of a function would be probed" },
	{ "list", cmd_list,
	  "list the functions and USDT probes of a file, with strategies" },
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: probe-trace SUBCOMMAND [ARGS...]\n"
		"       probe-trace --help | --version\n"
		"\nSubcommands:\n");
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		fprintf(out, "  %-10s %s\n", subcommands[i].name,
			subcommands[i].summary);
	fprintf(out, "\n`probe-trace SUBCOMMAND --help` describes one subcommand;"
		     " see also probe-trace(1).\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return PT_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return PT_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("probe-trace (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
		return PT_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (strcmp(argv[1], subcommands[i].name) == 0)
			return subcommands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "probe-trace: unknown subcommand '%s'\n"
			"Try 'probe-trace --help'.\n", argv[1]);
	return PT_EXIT_USAGE;
}
