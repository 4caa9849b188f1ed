/*
 * monitor.c - `monitor` commands (qRcmd): the agent's own commands.
 */
#define LOG_DOMAIN "agent"
#include "config.h"

#include <stdio.h>
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
	"                          regs,mem,break,xfer,vfile,tp,xol,arch,hot, all)\n"
	"  set remote-debug 0|1    print every packet on the agent's stderr\n"
	"  set libthread-db-search-path [PATH]\n"
	"                          where to find libthread_db (TLS variables);\n"
	"                          colon-separated, $sdir for the system's\n"
	"  set debug-format all|none\n"
	"                          accepted for gdbserver compatibility\n";

void handle_monitor(const char *cmd, struct rsp_buf *reply)
{
	if (strcmp(cmd, "help") == 0) {
		server_console(monitor_help);
		rsp_buf_puts(reply, "OK");
	} else if (strcmp(cmd, "exit") == 0) {
		agent.exit_after_reply = true;
		rsp_buf_puts(reply, "OK");
	} else if (strcmp(cmd, "set debug 1") == 0) {
		log_enable("all");
		server_console("Debug output enabled.\n");
		rsp_buf_puts(reply, "OK");
	} else if (strcmp(cmd, "set debug 0") == 0) {
		log_disable_all();
		server_console("Debug output disabled.\n");
		rsp_buf_puts(reply, "OK");
	} else if (strncmp(cmd, "set debug ", 10) == 0) {
		if (log_enable(cmd + 10) < 0) {
			rsp_buf_put_error(reply, "unknown debug domain in '%s'", cmd + 10);
			return;
		}
		server_console("Debug output enabled.\n");
		rsp_buf_puts(reply, "OK");
	} else if (strcmp(cmd, "set remote-debug 1") == 0 ||
		   strcmp(cmd, "set remote-debug 0") == 0) {
		agent.opt.remote_debug = cmd[17] == '1';
		server_console(agent.opt.remote_debug
				       ? "Protocol debug output enabled.\n"
				       : "Protocol debug output disabled.\n");
		rsp_buf_puts(reply, "OK");
	} else if (strncmp(cmd, "set libthread-db-search-path", 28) == 0 &&
		   (cmd[28] == ' ' || cmd[28] == '\0')) {
		const char *path = cmd[28] ? cmd + 29 : "";
		char msg[4200];
		thread_db_set_search_path(path);
		snprintf(msg, sizeof(msg), "libthread-db-search-path set to `%s'\n",
			 path[0] ? path : "$sdir");
		server_console(msg);
		rsp_buf_puts(reply, "OK");
	} else if (strcmp(cmd, "set debug-format all") == 0) {
		server_console("All extra debug format options enabled.\n");
		rsp_buf_puts(reply, "OK");
	} else if (strcmp(cmd, "set debug-format none") == 0) {
		server_console("All extra debug format options disabled.\n");
		rsp_buf_puts(reply, "OK");
	} else {
		server_console("Unknown monitor command.\n\n");
		server_console(monitor_help);
		/* An error reply: gdb reports the command failed. */
		rsp_buf_puts(reply, "E01");
	}
}
