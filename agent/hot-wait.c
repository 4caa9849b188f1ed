/*
 * hot-wait.c - waiting for the program in waitid() rather than in the event
 * loop, while only the program can give the agent work.
 *
 * While tracepoints fire, nearly every wake-up of the agent is a probe hit
 * that it handles itself and resumes from.  Through the event loop each
 * such hit costs, besides the wait status itself, an epoll_wait, a read of
 * the SIGCHLD signalfd and a waitpid(WNOHANG) that finds nothing more.  So
 * when nothing but a wait status can come (gdb's input is all handled, no
 * timer is due, and replies are never pending: server.c writes them before
 * returning), the loop hands over to hot_wait(), which blocks in
 * waitid(P_ALL, __WALL) itself, handles each status exactly as the loop
 * would (inferior_status()), and goes on waiting while the statuses are
 * internal events the thread was resumed from (WAIT_RESUME).  Anything else
 * (a stop for gdb, an exit, a thread gone, no thread running any more) and
 * it returns to the loop.  A hot wait that took no status at all (the
 * client's input or the tick ended it) makes server_run wait in the loop
 * until the next SIGCHLD: while probe-trace drains the pads' frames the
 * program seldom stops, the client asks all the time, and arming a wait
 * for each request cost more than the request.
 *
 * gdb's input ends the wait at once: for its duration the connection is
 * O_ASYNC, so input raises SIGIO.  The handler may jump out of the wait
 * (siglongjmp) only while the agent is inside the armed section
 *
 *     armed = 1;  if (input) leave;  waitid(...);  armed = 0;
 *
 * where nothing but a flag test and one system call run; elsewhere it only
 * sets the flag, which is tested before the next wait.  A status that
 * waitid() took just before the signal cannot be lost to the jump: the
 * kernel wrote it, with the thread id, to `hot_si` (static, cleared before
 * arming), and the jump's landing handles it.  That is why this is waitid,
 * not wait4: wait4 returns the thread id in a register the jump discards.
 * And it is syscall(), not glibc's waitid(): a cancellation point must not
 * be left by a jump.
 *
 * Some changes raise SIGCHLD without any wait status: a thread group
 * leader that exits while other threads live (pthread_exit) is seen only
 * in /proc, by the loop's check after each SIGCHLD.  So the wait also ends
 * on a tick (SIGALRM every HOT_TICK_MS, armed for the wait's duration,
 * jumping out like SIGIO): the loop then reads the pending SIGCHLD, runs
 * its checks, and waits here again.
 *
 * The SIGCHLDs that arrive meanwhile stay queued in the loop's signalfd
 * (SIGCHLD is blocked, so at most one is pending and queueing it again costs
 * the thread nothing).  When the loop reads it, waitpid(WNOHANG) finds no
 * status that hot_wait() took: every status is taken once, by whoever asks
 * the kernel first.
 */
#define LOG_DOMAIN "hot"
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/log.h"

static sigjmp_buf hot_env;
static volatile sig_atomic_t hot_armed;	/* SIGIO may jump to hot_env */
static volatile sig_atomic_t hot_input;	/* SIGIO came since the wait began */
static volatile sig_atomic_t hot_tick;	/* SIGALRM came since the wait began */

#define HOT_TICK_MS 20
/* Written by the kernel in waitid(); static: it must survive the jump. */
static siginfo_t hot_si;

static void on_sigio(int sig)
{
	(void)sig;
	hot_input = 1;
	if (hot_armed) {
		hot_armed = 0;
		siglongjmp(hot_env, 1);
	}
}

static void on_sigalrm(int sig)
{
	(void)sig;
	hot_tick = 1;
	if (hot_armed) {
		hot_armed = 0;
		siglongjmp(hot_env, 1);
	}
}

static void set_tick(long ms)
{
	struct itimerval it = {
		.it_interval = { 0, ms * 1000 },
		.it_value = { 0, ms * 1000 },
	};

	if (setitimer(ITIMER_REAL, &it, NULL) < 0)
		debug("setitimer: %s", strerror(errno));
}

int hot_wait_init(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigio;
	sigemptyset(&sa.sa_mask);
	/* SA_NODEFER: a jump out of the handler leaves SIGIO unblocked, with
	 * no sigprocmask to undo (sigsetjmp(..., 0) saves no mask).
	 * SA_RESTART: a SIGIO outside the armed section (while a hit is
	 * handled) interrupts no system call of the agent. */
	sa.sa_flags = SA_NODEFER | SA_RESTART;
	if (sigaction(SIGIO, &sa, NULL) < 0)
		return -errno;
	sa.sa_handler = on_sigalrm;
	if (sigaction(SIGALRM, &sa, NULL) < 0)
		return -errno;
	return 0;
}

/* Whether input on `fd` can raise SIGIO: sockets (TCP, UDP), pipes and
 * terminals can; a file or /dev/null cannot (and always polls readable). */
bool hot_wait_possible(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return false;
	if (!S_ISSOCK(st.st_mode) && !S_ISFIFO(st.st_mode) && !isatty(fd))
		return false;
	/* Signals for this process; set once, O_ASYNC turns them on. */
	return fcntl(fd, F_SETOWN, getpid()) == 0;
}

/* The wait status waitid() reported in `si`, as wait4() gives it. */
static int status_from_siginfo(const siginfo_t *si)
{
	switch (si->si_code) {
	case CLD_EXITED:
		return (si->si_status & 0xff) << 8;
	case CLD_KILLED:
		return si->si_status & 0x7f;
	case CLD_DUMPED:
		return (si->si_status & 0x7f) | 0x80;
	default:	/* CLD_TRAPPED, CLD_STOPPED: signal | ptrace event << 8 */
		return (si->si_status << 8) | 0x7f;
	}
}

/* Handles the status in hot_si; returns true to wait for the next. */
static bool take_status(void)
{
	pid_t tid = hot_si.si_pid;
	int status = status_from_siginfo(&hot_si);
	enum wait_outcome o = inferior_status(tid, status);

	return o == WAIT_RESUME && inferior_waiting();
}

/*
 * Waits for statuses in waitid(), handling them, until gdb's input comes
 * on `fd` or a status needs the event loop.  Returns the number of statuses
 * handled, or -errno when `fd` cannot be made O_ASYNC.  The caller checks
 * first that nothing else is pending.
 */
long hot_wait(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	/* volatile: read after the jump */
	volatile long handled = 0;
	const char *volatile why = "input";
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_ASYNC) < 0)
		return -errno;
	hot_input = 0;
	hot_tick = 0;
	/* Input that came before O_ASYNC raised no SIGIO: look once. */
	if (poll(&pfd, 1, 0) != 0)
		goto out;
	set_tick(HOT_TICK_MS);
	for (;;) {
		hot_si.si_pid = 0;
		/* The store above must be done before the section is armed. */
		atomic_signal_fence(memory_order_seq_cst);
		if (sigsetjmp(hot_env, 0)) {
			/* SIGIO jumped out of the armed section: after
			 * waitid() returned a status, or before it took any. */
			if (hot_si.si_pid) {
				take_status();
				handled++;
			}
			why = hot_input ? "input" : "the tick";
			break;
		}
		hot_armed = 1;
		if (hot_input || hot_tick) {
			hot_armed = 0;
			why = hot_input ? "input" : "the tick";
			break;
		}
		long r = syscall(SYS_waitid, P_ALL, 0, &hot_si, WEXITED | __WALL,
				 NULL);
		hot_armed = 0;
		if (r < 0) {
			why = strerror(errno);
			break;
		}
		handled++;
		if (!take_status()) {
			why = "a status for the loop";
			break;
		}
	}
	set_tick(0);
out:
	if (fcntl(fd, F_SETFL, flags) < 0)
		debug("cannot restore fd %d flags: %s", fd, strerror(errno));
	debug("%ld statuses handled, left for %s", handled, why);
	return handled;
}
