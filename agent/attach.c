/*
 * attach.c - starting a program under ptrace, attaching to a running
 * process, detaching from one and killing one.
 *
 * A started program runs through gdb's wrapper and the user's shell
 * first, as with gdbserver (build_exec_argv); their execs are skipped so
 * that the program's own first instruction is where it stops.  Attaching
 * takes every thread of /proc/PID/task, looping until no new one appears.
 * Detaching takes every probe, breakpoint and return trampoline out of the
 * process first, so that it runs on as if never traced.
 */
#define LOG_DOMAIN "inferior"
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/inferior.h"
#include "agent/keeper.h"
#include "agent/log.h"

/* --- starting, attaching, detaching, killing ------------------------------ */

/* The signals the agent ignores for itself (SIGPIPE for its sockets,
 * SIGXFSZ for the recorder's file) as they were when it started: a
 * program it starts gets them back, not the agent's SIG_IGN, which
 * exec would keep. */
static const int own_signals[] = { SIGPIPE, SIGXFSZ };
static struct sigaction own_signals_at_start[2];

void inferior_note_signals(void)
{
	for (size_t i = 0; i < 2; i++)
		sigaction(own_signals[i], NULL, &own_signals_at_start[i]);
}

static void child_exec(char **argv)
{
	if (server_is_stdio()) {
		/* stdin and stdout carry the protocol: the program gets
		 * /dev/null for input and our stderr for output. */
		int fd = open("/dev/null", O_RDONLY);
		if (fd >= 0) {
			dup2(fd, 0);
			close(fd);
		}
		dup2(2, 1);
	}
	setpgid(0, 0);
	/* The agent takes SIGCHLD through a signalfd, blocked: the program
	 * must not inherit that. */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (size_t i = 0; i < 2; i++)
		sigaction(own_signals[i], &own_signals_at_start[i], NULL);
	if (agent.opt.disable_randomization)
		personality(personality(0xffffffff) | ADDR_NO_RANDOMIZE);
	if (agent.workdir && chdir(agent.workdir) < 0) {
		fprintf(stderr, "probe-agent: cannot enter %s: %s\n",
			agent.workdir, strerror(errno));
		_exit(127);
	}
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0) {
		fprintf(stderr, "probe-agent: PTRACE_TRACEME: %s\n", strerror(errno));
		_exit(127);
	}
	if (agent.env)
		environ = agent.env;
	execvp(argv[0], argv);
	fprintf(stderr, "probe-agent: cannot run %s: %s\n", argv[0],
		strerror(errno));
	_exit(127);
}

/* A bare name that exists in the current directory means that file, as
 * with gdbserver; otherwise the shell or execvp searches PATH. */
char *program_path(const char *name)
{
	if (!strchr(name, '/') && access(name, F_OK) == 0) {
		char *cwd = getcwd(NULL, 0);
		char *path = NULL;
		if (cwd && asprintf(&path, "%s/%s", cwd, name) < 0)
			path = NULL;
		free(cwd);
		if (path)
			return path;
	}
	return strdup(name);
}

/*
 * One word of the startup shell's command line, quoted so that the shell
 * hands it to the program unchanged: the arguments gdb and the command
 * line give are the program's argv, never a shell script (gdbserver does
 * the same).  A backslash makes any byte literal in every Bourne-style
 * shell and in csh, so it goes before everything but letters, digits,
 * bytes >= 0x80 and a few punctuation marks no shell treats specially
 * anywhere in a word (`=` and `~` are special at a word's start in zsh
 * and bash).  A backslash before a newline would join lines instead, and
 * the other control bytes are safest quoted: those go inside single
 * quotes.  An empty argument is ''.
 */
static void shell_quote_word(struct rsp_buf *cmd, const char *word)
{
	static const char plain[] = "_-+./,:@%";

	if (!*word) {
		rsp_buf_puts(cmd, "''");
		return;
	}
	for (const unsigned char *c = (const unsigned char *)word; *c; c++) {
		if (*c < 0x20 || *c == 0x7f) {
			rsp_buf_putc(cmd, '\'');
			rsp_buf_putc(cmd, (char)*c);
			rsp_buf_putc(cmd, '\'');
			continue;
		}
		if (!(isalnum(*c) || *c >= 0x80 || strchr(plain, *c)))
			rsp_buf_putc(cmd, '\\');
		rsp_buf_putc(cmd, (char)*c);
	}
}

/* Builds the argv actually executed: wrapper, shell, program. */
static char **build_exec_argv(char **argv, int *execs, char **shell_cmd)
{
	size_t n = 0, w = 0;
	char **out;

	while (argv[n])
		n++;
	if (agent.opt.wrapper)
		while (agent.opt.wrapper[w])
			w++;
	out = calloc(n + w + 4, sizeof(*out));
	if (!out)
		abort();
	*execs = 1;
	size_t k = 0;
	for (size_t i = 0; i < w; i++)
		out[k++] = agent.opt.wrapper[i];
	if (w)
		(*execs)++;
	if (agent.opt.startup_with_shell) {
		/* $SHELL -c 'exec prog args': the program starts from the
		 * user's shell as with gdbserver, its arguments unchanged. */
		struct rsp_buf cmd;
		rsp_buf_init(&cmd);
		rsp_buf_puts(&cmd, "exec");
		for (size_t i = 0; i < n; i++) {
			rsp_buf_putc(&cmd, ' ');
			shell_quote_word(&cmd, argv[i]);
		}
		const char *shell = getenv("SHELL");
		out[k++] = (char *)(shell && *shell ? shell : "/bin/sh");
		out[k++] = "-c";
		out[k++] = cmd.data;
		*shell_cmd = cmd.data;
		(*execs)++;
	} else {
		for (size_t i = 0; i < n; i++)
			out[k++] = argv[i];
	}
	out[k] = NULL;
	return out;
}

/* The program (or its shell) ended before reaching its first
 * instruction: say how, as gdb users know it from gdbserver. */
static int startup_failed(int status)
{
	if (WIFEXITED(status))
		log_user("During startup program exited with code %d.",
			 WEXITSTATUS(status));
	else
		log_user("During startup program terminated with signal %s.",
			 strsignal(WTERMSIG(status)));
	return -ECHILD;
}

int inferior_start(char **argv, struct process **out)
{
	int execs, status;
	char *shell_cmd = NULL;
	char **xargv = build_exec_argv(argv, &execs, &shell_cmd);
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int err = errno;
		free(xargv);
		return -err;
	}
	if (pid == 0)
		child_exec(xargv);
	free(shell_cmd);
	free(xargv);

	/* The first exec stops the child with SIGTRAP. */
	if (waitpid(pid, &status, __WALL) < 0)
		return -errno;
	if (!WIFSTOPPED(status))
		return startup_failed(status);
	/* Until the program's own exec, follow execs only: a shell that
	 * forks (a .bashrc read because sshd started us) must not leave
	 * traced children stopped behind. */
	ptrace(PTRACE_SETOPTIONS, pid, NULL,
	       (void *)(long)(execs > 1 ? PTRACE_O_TRACEEXEC | keeper_exitkill()
				       : TRACE_OPTIONS | keeper_exitkill()));
	/* Skip the wrapper's and the shell's own execs. */
	for (int i = 1; i < execs; i++) {
		ptrace(PTRACE_CONT, pid, NULL, NULL);
		for (;;) {
			if (waitpid(pid, &status, __WALL) < 0)
				return -errno;
			if (WIFEXITED(status) || WIFSIGNALED(status))
				return startup_failed(status);
			if (WIFSTOPPED(status) && (status >> 16) == PTRACE_EVENT_EXEC)
				break;
			/* Anything else on the way: pass it on. */
			int sig = WSTOPSIG(status);
			ptrace(PTRACE_CONT, pid, NULL,
			       (void *)(long)(sig == SIGTRAP || (status >> 16) ? 0 : sig));
		}
	}

	if (execs > 1)
		ptrace(PTRACE_SETOPTIONS, pid, NULL,
		       (void *)(long)(TRACE_OPTIONS | keeper_exitkill()));
	struct process *p = process_add(pid, false);
	thread_add(p, pid);
	mem_open(p);
	p->features = regs_detect_features(pid);
	keeper_install(p);
	log_user("Process %s created; pid = %d", argv[0], pid);
	*out = p;
	return 0;
}

static int attach_thread(struct process *p, pid_t tid)
{
	int status;

	if (ptrace(PTRACE_ATTACH, tid, NULL, NULL) < 0)
		return -errno;
	for (;;) {
		if (waitpid(tid, &status, __WALL) < 0)
			return -errno;
		if (WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP)
			break;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return -ESRCH;
		/* Another signal first: keep it for the program. */
		ptrace(PTRACE_CONT, tid, NULL, (void *)(long)WSTOPSIG(status));
	}
	ptrace(PTRACE_SETOPTIONS, tid, NULL, (void *)(long)TRACE_OPTIONS);
	thread_add(p, tid);
	return 0;
}

int inferior_attach(pid_t pid, struct process **out)
{
	char path[64];
	struct process *p;
	int err;
	bool found;

	if (process_find(pid))
		return -EALREADY;
	p = process_add(pid, true);
	err = attach_thread(p, pid);
	if (err < 0) {
		process_free(p);
		return err;
	}
	/* Threads can be created while we attach: loop until none is new. */
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	do {
		DIR *d = opendir(path);
		struct dirent *de;

		found = false;
		if (!d)
			break;
		while ((de = readdir(d))) {
			pid_t tid = atoi(de->d_name);
			if (tid <= 0 || thread_find(tid))
				continue;
			if (attach_thread(p, tid) == 0)
				found = true;
		}
		closedir(d);
	} while (found);
	mem_open(p);
	p->features = regs_detect_features(pid);
	keeper_install(p);
	log_user("Attached; pid = %d", pid);
	*out = p;
	return 0;
}

static bool is_fork_event(const struct stop_event *ev)
{
	return ev->kind == STOP_SIGNAL &&
	       (ev->reason == REASON_FORK || ev->reason == REASON_VFORK);
}

/* A fork child waits, stopped, for gdb's decision; a child whose event gdb
 * will not see (its parent is being detached) must go free with it, its
 * copies of the parent's breakpoints taken out of its memory first. */
void inferior_detach_fork_child(const struct stop_event *ev)
{
	struct process *c;

	if (!is_fork_event(ev))
		return;
	c = process_find((pid_t)ev->data);
	if (c && c->fork_child)
		inferior_detach(c);
}

int inferior_detach(struct process *p)
{
	/* Non-stop: threads may be running, and only a stopped tracee can be
	 * detached.  Events they report meanwhile are kept, and undone below
	 * or with the detach (a fork child goes free). */
	stop_threads(p, NULL);
	for (struct thread *t = p->threads; t; t = t->next) {
		if (t->has_pending && is_fork_event(&t->pending_ev)) {
			inferior_detach_fork_child(&t->pending_ev);
			stop_event_clear(&t->pending_ev);
			t->has_pending = false;
		}
	}
	for (struct thread *t = p->threads; t; t = t->next) {
		if (t->step_probe)
			probe_step_done(t, false);
		probe_fix_pc(t);
	}
	trace_drain(false);
	ret_restore_process(p);
	probe_remove_all(p);
	xol_unmap_all(p);
	pad_unmap(p);
	bp_remove_all(p);
	hw_remove_all(p);
	for (struct thread *t = p->threads; t; t = t->next) {
		int sig = t->pending_signal;

		if (t->has_pending && t->pending_ev.kind == STOP_SIGNAL &&
		    t->pending_ev.reason == REASON_NONE)
			sig = signal_from_gdb(t->pending_ev.gdb_signal);
		if (sig == SIGSTOP || sig == SIGTRAP)
			sig = 0;
		hw_sync_thread(t);
		if (t->regs_dirty)
			regs_flush(t);
		ptrace(PTRACE_DETACH, t->tid, NULL, (void *)(long)sig);
		/* Our SIGSTOP still queued would stop it for good. */
		if (t->stop_expected)
			syscall(SYS_tgkill, p->pid, t->tid, SIGCONT);
	}
	log_user("Detaching from process %d", p->pid);
	process_free(p);
	return 0;
}

int inferior_kill(struct process *p)
{
	int status;

	kill(p->pid, SIGKILL);
	/* Reap the other threads first: the leader's status comes last. */
	for (struct thread *t = p->threads; t; t = t->next)
		if (t->tid != p->pid)
			waitpid(t->tid, &status, __WALL);
	for (;;) {
		if (waitpid(p->pid, &status, __WALL) < 0)
			break;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			break;
	}
	process_free(p);
	return 0;
}

void inferior_kill_all_for_exit(void)
{
	while (agent.processes) {
		struct process *p = agent.processes;

		if (agent.running)
			stop_all(NULL);
		agent.running = false;
		/* As gdbserver: a program the agent started dies with the
		 * session, unless the client asked it to run on. */
		if (p->attached || agent.detach_on_close)
			inferior_detach(p);
		else
			inferior_kill(p);
	}
}
