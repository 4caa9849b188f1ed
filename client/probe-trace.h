/*
 * probe-trace.h - the subcommands of the probe-trace client.
 *
 * Each subcommand is `int cmd_NAME(int argc, char **argv)` with argv[0]
 * the subcommand's name; it returns the process exit status: 0 success,
 * 1 a failure it has reported, 2 a usage error.
 */
#ifndef PROBE_CLIENT_PROBE_TRACE_H
#define PROBE_CLIENT_PROBE_TRACE_H

#define PT_EXIT_OK 0
#define PT_EXIT_FAIL 1
#define PT_EXIT_USAGE 2

int cmd_insn(int argc, char **argv);
int cmd_list(int argc, char **argv);

#endif
