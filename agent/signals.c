/*
 * signals.c - Linux signal numbers and gdb's.
 *
 * gdb numbers signals its own way on the wire (include/gdb/signals.def):
 * the classic ones mostly match Linux, but SIGBUS, SIGUSR1/2, SIGCHLD,
 * SIGSTOP, SIGCONT, SIGIO, SIGURG... do not, and real-time signal 32 is 77
 * while 33..63 are 45..75.
 */
#include "config.h"

#include <signal.h>

#include "agent/agent.h"

/* gdb number of each Linux signal 0..31; 0 where gdb has none. */
static const unsigned char linux_to_gdb[32] = {
	[0] = 0,
	[SIGHUP] = 1, [SIGINT] = 2, [SIGQUIT] = 3, [SIGILL] = 4,
	[SIGTRAP] = 5, [SIGABRT] = 6, [SIGBUS] = 10, [SIGFPE] = 8,
	[SIGKILL] = 9, [SIGUSR1] = 30, [SIGSEGV] = 11, [SIGUSR2] = 31,
	[SIGPIPE] = 13, [SIGALRM] = 14, [SIGTERM] = 15, [SIGSTKFLT] = 0,
	[SIGCHLD] = 20, [SIGCONT] = 19, [SIGSTOP] = 17, [SIGTSTP] = 18,
	[SIGTTIN] = 21, [SIGTTOU] = 22, [SIGURG] = 16, [SIGXCPU] = 24,
	[SIGXFSZ] = 25, [SIGVTALRM] = 26, [SIGPROF] = 27, [SIGWINCH] = 28,
	[SIGIO] = 23, [SIGPWR] = 32, [SIGSYS] = 12,
};

#define GDB_SIGNAL_UNKNOWN 143
#define GDB_SIGNAL_REALTIME_32 77
#define GDB_SIGNAL_REALTIME_33 45
#define GDB_SIGNAL_REALTIME_64 78

int signal_to_gdb(int sig)
{
	if (sig >= 0 && sig < 32) {
		int g = linux_to_gdb[sig];
		return g || sig == 0 ? g : GDB_SIGNAL_UNKNOWN;
	}
	if (sig == 32)
		return GDB_SIGNAL_REALTIME_32;
	if (sig >= 33 && sig <= 63)
		return GDB_SIGNAL_REALTIME_33 + (sig - 33);
	if (sig >= 64 && sig <= 127)
		return GDB_SIGNAL_REALTIME_64 + (sig - 64);
	return GDB_SIGNAL_UNKNOWN;
}

int signal_from_gdb(int gsig)
{
	if (gsig <= 0)
		return 0;
	for (int s = 1; s < 32; s++)
		if (linux_to_gdb[s] == gsig)
			return s;
	if (gsig == GDB_SIGNAL_REALTIME_32)
		return 32;
	if (gsig >= GDB_SIGNAL_REALTIME_33 && gsig <= GDB_SIGNAL_REALTIME_33 + 30)
		return 33 + (gsig - GDB_SIGNAL_REALTIME_33);
	if (gsig >= GDB_SIGNAL_REALTIME_64 && gsig <= GDB_SIGNAL_REALTIME_64 + 63)
		return 64 + (gsig - GDB_SIGNAL_REALTIME_64);
	return 0;
}
