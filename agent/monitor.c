/*
 * monitor.c - `monitor` commands (qRcmd): the agent's own commands.
 */
#define LOG_DOMAIN "agent"
#include "config.h"

#include <string.h>

#include "agent/agent.h"
#include "agent/log.h"

static const char monitor_help[] =
	"probe-agent monitor commands:\n"
	"  help                    this list\n"
	"  exit                    end the session: kill the programs the agent\n"
	"                          started, detach from the ones it attached to\n"
	"  set debug DOMAINS       turn on debug output (comma-separated, or all)\n"
	"  set remote-debug 0|1    dump every packet on the agent's stderr\n";

void handle_monitor(const char *cmd, struct rsp_buf *reply)
{
	if (strcmp(cmd, "help") == 0) {
		server_console(monitor_help);
		rsp_buf_puts(reply, "OK");
	} else if (strcmp(cmd, "exit") == 0) {
		agent.exit_after_reply = true;
		rsp_buf_puts(reply, "OK");
	} else if (strncmp(cmd, "set debug ", 10) == 0) {
		if (log_enable(cmd + 10) < 0)
			rsp_buf_put_error(reply, "unknown debug domain in '%s'", cmd + 10);
		else
			rsp_buf_puts(reply, "OK");
	} else if (strcmp(cmd, "set remote-debug 1") == 0 ||
		   strcmp(cmd, "set remote-debug 0") == 0) {
		agent.opt.remote_debug = cmd[17] == '1';
		rsp_buf_puts(reply, "OK");
	} else {
		server_console("Unknown monitor command.\n\n");
		server_console(monitor_help);
		rsp_buf_puts(reply, "OK");
	}
}
