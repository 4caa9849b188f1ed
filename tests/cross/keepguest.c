/*
 * keepguest.c - one kill of the keeper's chaos case in the qemu guest
 * (tests/cross/check-cross.sh, "keeper chaos"), where there is no python:
 *
 *   keepguest DIR N MODE STRATEGY DELAY_US TEXT_ADDR TEXT_OFF TEXT_LEN AGENT TARGET ROUNDS
 *
 * MODE "plain" runs TARGET untraced and writes its result line to
 * DIR/plain.result.  "started" (or "while-stepping": the same here, the
 * host's gdb adds the action) starts TARGET under AGENT (listening on
 * 0.0.0.0:1234, gdb-multiarch on the host sets the tracepoints and
 * starts them); "attached" starts TARGET itself and has AGENT attach to
 * it.  Then: DIR/readyN tells the host to connect; once the program's
 * text differs from the file (the probes are in) the calls start
 * (TARGET's GO.start), and DELAY_US after they run the agent gets
 * SIGKILL.  The program must then finish its calls, its text (TEXT_LEN
 * bytes at TEXT_ADDR, TEXT_OFF in the file) must be the file's, its
 * exit status 7 and its result line (ground file and stdout) the
 * untraced one.  DIR/doneN gets "ok" or "not ok: what went wrong".
 * The programs run from a folder of the guest's own (see `local`), and
 * what they wrote is copied to DIR (agentN, gN, outN) at the end.
 * Every wait is bounded; this process is the programs' subreaper, so the
 * exit status of a program the killed agent started comes here.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *dir;
static int n;
static char problems[2048];

static void problem(const char *fmt, ...)
{
	size_t len = strlen(problems);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(problems + len, sizeof(problems) - len, fmt, ap);
	va_end(ap);
	len = strlen(problems);
	snprintf(problems + len, sizeof(problems) - len, "; ");
}

/*
 * The guest's own folder for this kill (tmpfs): the programs, their
 * ground file, the go files and the agent's output live there, not in
 * DIR, which is the host's folder over 9p.  A 9p request in the guest
 * can stall for tens of seconds under qemu's emulation (the agent seen
 * stuck in a write() or open() on /mnt in the middle of tstart until
 * another request came), longer than gdb's remote timeout; nothing the
 * kill measures must wait on it.  Only readyN and doneN, which the host
 * polls, are written in DIR, and the agent's output, the ground file and
 * the program's output are copied there at the end.
 */
static char local[64];

static void path(char *buf, size_t size, const char *what)
{
	snprintf(buf, size, "%s/%s%d", dir, what, n);
}

static void local_path(char *buf, size_t size, const char *what)
{
	snprintf(buf, size, "%s/%s%d", local, what, n);
}

/* Copies file `from` to `to` (mode `mode`); false on failure. */
static bool copy_file(const char *from, const char *to, mode_t mode)
{
	char buf[65536];
	ssize_t got;
	bool ok = true;
	int in = open(from, O_RDONLY), out;

	if (in < 0)
		return false;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (out < 0) {
		close(in);
		return false;
	}
	while ((got = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)got) != got) {
			ok = false;
			break;
		}
	if (got < 0)
		ok = false;
	close(in);
	if (close(out) < 0)
		ok = false;
	return ok;
}

static void touch(const char *p)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd >= 0)
		close(fd);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* Whether file `p` has a line starting with `what`; its rest in `rest`. */
static bool has_line(const char *p, const char *what, char *rest, size_t size)
{
	char line[256];
	bool found = false;
	FILE *f = fopen(p, "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, what, strlen(what))) {
			found = true;
			if (rest) {
				line[strcspn(line, "\n")] = 0;
				snprintf(rest, size, "%s", line + strlen(what));
			}
		}
	fclose(f);
	return found;
}

/* Statuses of the children and adopted orphans that exited. */
static pid_t dead_pid[64];
static int dead_status[64], ndead;

static void reap(void)
{
	int st;
	pid_t p;

	while ((p = waitpid(-1, &st, WNOHANG)) > 0)
		if (ndead < 64) {
			dead_pid[ndead] = p;
			dead_status[ndead++] = st;
		}
}

static bool exited(pid_t pid, int *status)
{
	reap();
	for (int i = 0; i < ndead; i++)
		if (dead_pid[i] == pid) {
			if (status)
				*status = dead_status[i];
			return true;
		}
	return false;
}

static unsigned char *text_file;

/*
 * The program's entry point (e_entry, without the Thumb bit).  The agent
 * makes the program run its system calls (mmap of the XOL area or the
 * pads at tstart, the keeper's handler at attach: agent/syscall.c) from
 * a system call instruction written over the entry point for the length
 * of one single step (on 32-bit ARM, a software step: a breakpoint right
 * after it too).  Seen from here, that is a change of the text that comes
 * and goes while the probes are not in yet: "are the probes in" must not
 * count it, or a read during the step takes it for the probes and the
 * next read finds the text back to the file's.
 */
static unsigned long entry;
/*
 * The bytes the injected call may change: the agent puts its svc (an A32
 * one, 4 bytes, run with cpsr.T clear) at the entry point rounded up to
 * 4 (syscall_site), so for a Thumb entry (0x10341) at 0x10344, and the
 * step's breakpoint (an A32 udf) right after it, up to 0x1034c: 8
 * bytes from the entry itself would leave that breakpoint out.
 */
#define ENTRY_END (((entry + 3) & ~3ul) + 8)

/*
 * Bytes of the program's text that differ from the file, -1 if
 * unreadable; with `probes_only`, the entry point's instruction is not
 * counted (see above).
 */
static long text_diff(pid_t pid, unsigned long addr, unsigned long len, long *first,
		      bool probes_only)
{
	char p[64];
	long diff = 0;
	unsigned char *buf = malloc(len);
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/mem", pid);
	fd = open(p, O_RDONLY);
	if (fd < 0 || !buf || pread(fd, buf, len, (off_t)addr) != (ssize_t)len) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return -1;
	}
	close(fd);
	for (unsigned long i = 0; i < len; i++)
		if (buf[i] != text_file[i] &&
		    !(probes_only && addr + i >= entry && addr + i < ENTRY_END) &&
		    diff++ == 0 && first)
			*first = (long)(addr + i);
	free(buf);
	return diff;
}

static int tracer_of(pid_t pid)
{
	char p[64], rest[64];

	snprintf(p, sizeof(p), "/proc/%d/status", pid);
	if (!has_line(p, "TracerPid:", rest, sizeof(rest)))
		return -1;
	return atoi(rest);
}

/* First line of /proc/PID/WHAT, for a report. */
static void proc_line(pid_t pid, const char *what, char *buf, size_t size)
{
	char p[64];
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/%s", pid, what);
	buf[0] = 0;
	if ((f = fopen(p, "r"))) {
		if (!fgets(buf, (int)size, f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
}

/* Where a live process is stuck: its state, the kernel function it
 * sleeps in and its system call (number, arguments, sp and pc, or
 * "running"), for a report. */
static const char *where_is(pid_t pid, char *buf, size_t size)
{
	char state[64] = "", wchan[64], sys[160];

	char st[256];
	snprintf(st, sizeof(st), "/proc/%d/status", pid);
	has_line(st, "State:", state, sizeof(state));
	proc_line(pid, "wchan", wchan, sizeof(wchan));
	proc_line(pid, "syscall", sys, sizeof(sys));
	snprintf(buf, size, "; the agent (%d) is alive, state%s, in %s, system call: %s", pid,
		 state, wchan[0] ? wchan : "?", sys[0] ? sys : "?");
	return buf;
}

/* Appends /proc/PID/WHAT (whole) to `f`, under a heading. */
static void dump_proc(FILE *f, const char *pid_path, const char *what)
{
	char p[400], buf[4096];
	FILE *in;
	size_t got;

	snprintf(p, sizeof(p), "%s/%s", pid_path, what);
	fprintf(f, "== %s\n", p);
	if (!(in = fopen(p, "r")))
		return;
	while ((got = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, got, f);
	fclose(in);
}

/*
 * Where a stuck agent and its program are, kept as DIR/stuckN for the
 * one who chases it: a few samples, 200 ms apart, of the agent's state,
 * times, system call and kernel stack, and of every thread of the
 * program's.
 */
static void dump_stuck(pid_t agent, pid_t prog)
{
	char to[300], pp[64];
	FILE *f;

	path(to, sizeof(to), "stuck");
	if (!(f = fopen(to, "w")))
		return;
	for (int round = 0; round < 4; round++) {
		fprintf(f, "=== sample %d\n", round);
		snprintf(pp, sizeof(pp), "/proc/%d", agent);
		dump_proc(f, pp, "stat");
		dump_proc(f, pp, "syscall");
		dump_proc(f, pp, "stack");
		snprintf(pp, sizeof(pp), "/proc/%d/task", prog);
		DIR *d = opendir(pp);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char tp[300];
			snprintf(tp, sizeof(tp), "/proc/%d/task/%.200s", prog, e->d_name);
			dump_proc(f, tp, "stat");
			dump_proc(f, tp, "syscall");
			dump_proc(f, tp, "stack");
		}
		if (d)
			closedir(d);
		fflush(f);
		sleep_us(200000);
	}
	fclose(f);
}

static pid_t spawn(char **argv, const char *out)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* One kill: the arguments, the files that signal the host, what happened. */
struct run {
	char g[256], go[256], out[256], alog[256], ready[256], done[256];
	const char *mode, *strategy;
	char *agent_path, *target, *rounds;
	long delay;
	unsigned long taddr, tlen;
	char want[128];		/* the untraced result line */
	char target_local[128], agent_local[128];	/* their copies in `local` */
	pid_t prog, agent;
	bool killed, aborted;	/* SIGKILLed as planned; SIGABRTed when stuck */
};

/* Reads the arguments and TARGET's text; the exit status on failure. */
static int setup(struct run *r, int argc, char **argv)
{
	if (argc != 12) {
		fprintf(stderr, "usage: keepguest DIR N MODE STRATEGY DELAY_US TEXT_ADDR "
			"TEXT_OFF TEXT_LEN AGENT TARGET ROUNDS\n");
		return 2;
	}
	dir = argv[1];
	n = atoi(argv[2]);
	r->mode = argv[3];
	r->strategy = argv[4];
	r->delay = atol(argv[5]);
	r->taddr = strtoul(argv[6], NULL, 0);
	unsigned long toff = strtoul(argv[7], NULL, 0);
	r->tlen = strtoul(argv[8], NULL, 0);
	r->agent_path = argv[9];
	r->target = argv[10];
	r->rounds = argv[11];

	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	snprintf(local, sizeof(local), "/tmp/keepguest.XXXXXX");
	if (!mkdtemp(local)) {
		fprintf(stderr, "keepguest: cannot make a folder in /tmp: %s\n", strerror(errno));
		return 99;
	}
	local_path(r->g, sizeof(r->g), "g");
	local_path(r->go, sizeof(r->go), "go");
	local_path(r->out, sizeof(r->out), "out");
	local_path(r->alog, sizeof(r->alog), "agent");
	path(r->ready, sizeof(r->ready), "ready");
	path(r->done, sizeof(r->done), "done");
	text_file = malloc(r->tlen);
	int tf = open(r->target, O_RDONLY);
	if (!text_file || tf < 0 ||
	    pread(tf, text_file, r->tlen, (off_t)toff) != (ssize_t)r->tlen) {
		fprintf(stderr, "keepguest: cannot read %s\n", r->target);
		return 99;
	}
	/* The entry point: ELF32 or ELF64, same byte order as this guest. */
	union {
		Elf32_Ehdr e32;
		Elf64_Ehdr e64;
	} eh;
	if (pread(tf, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e32.e_ident, ELFMAG, SELFMAG) != 0) {
		fprintf(stderr, "keepguest: %s is not an ELF file\n", r->target);
		return 99;
	}
	bool is64 = eh.e32.e_ident[EI_CLASS] == ELFCLASS64;
	if ((is64 ? eh.e64.e_type : eh.e32.e_type) != ET_EXEC) {
		fprintf(stderr, "keepguest: %s is not a fixed-address (non-PIE) executable\n",
			r->target);
		return 99;
	}
	entry = (is64 ? (unsigned long)eh.e64.e_entry : eh.e32.e_entry) & ~1ul;
	close(tf);
	/* The programs run from the guest's folder too (see `local`). */
	snprintf(r->target_local, sizeof(r->target_local), "%s/keeptarget", local);
	snprintf(r->agent_local, sizeof(r->agent_local), "%s/probe-agent", local);
	if (!copy_file(r->target, r->target_local, 0755) ||
	    !copy_file(r->agent_path, r->agent_local, 0755)) {
		fprintf(stderr, "keepguest: cannot copy %s and %s to %s\n", r->target,
			r->agent_path, local);
		return 99;
	}
	r->target = r->target_local;
	r->agent_path = r->agent_local;
	return 0;
}

/* Puts the agent's output, the ground file and the program's output in
 * DIR for the host, and removes the guest's folder. */
static void local_done(struct run *r)
{
	char to[300];
	const char *keep[][2] = { { r->alog, "agent" }, { r->g, "g" }, { r->out, "out" } };

	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
		path(to, sizeof(to), keep[i][1]);
		copy_file(keep[i][0], to, 0644);
	}
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		unlink(keep[i][0]);
	char tmp[300];
	snprintf(tmp, sizeof(tmp), "%s.start", r->go);
	unlink(tmp);
	snprintf(tmp, sizeof(tmp), "%s.exit", r->go);
	unlink(tmp);
	unlink(r->target_local);
	unlink(r->agent_local);
	rmdir(local);
}

/* MODE "plain": runs TARGET untraced and keeps its result line. */
static int run_plain(struct run *r)
{
	char *pargv[] = { r->target, r->g, r->go, r->rounds, r->out, NULL };
	char tmp[300], rest[128];
	int status;

	snprintf(tmp, sizeof(tmp), "%s.start", r->go);
	touch(tmp);
	snprintf(tmp, sizeof(tmp), "%s.exit", r->go);
	touch(tmp);
	r->prog = spawn(pargv, "/dev/null");
	waitpid(r->prog, &status, 0);
	if (!has_line(r->out, "result ", rest, sizeof(rest)) || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 7)
		return 99;
	snprintf(tmp, sizeof(tmp), "%s/plain.result", dir);
	FILE *f = fopen(tmp, "w");
	fprintf(f, "%s\n", rest);
	fclose(f);
	return 0;
}

/*
 * Starts the agent: on TARGET, or attaching to TARGET started here.
 * KEEPGUEST_DEBUG=DOMAINS adds --debug=DOMAINS, so that the kill's agent
 * log (agentN, kept beside doneN) says what the agent did.
 */
static void start_agent(struct run *r)
{
	char pidbuf[32], debug_opt[160] = "";
	const char *dbg = getenv("KEEPGUEST_DEBUG");

	if (dbg && dbg[0])
		snprintf(debug_opt, sizeof(debug_opt), "--debug=%s", dbg);

	if (!strcmp(r->mode, "attached")) {
		char *pargv[] = { r->target, r->g, r->go, r->rounds, r->out, NULL };
		r->prog = spawn(pargv, "/dev/null");
		double end = now() + 30;
		while (!has_line(r->g, "pid ", NULL, 0) && now() < end)
			sleep_us(1000);
		snprintf(pidbuf, sizeof(pidbuf), "%d", r->prog);
		char *aargv[7] = { r->agent_path, (char *)r->strategy, "--attach",
				   "0.0.0.0:1234", pidbuf, NULL };
		if (debug_opt[0]) {
			memmove(&aargv[3], &aargv[2], 4 * sizeof(aargv[0]));
			aargv[2] = debug_opt;
		}
		r->agent = spawn(aargv, r->alog);
	} else {
		char *aargv[11] = { r->agent_path, (char *)r->strategy,
				    "--no-startup-with-shell", "0.0.0.0:1234", r->target,
				    r->g, r->go, r->rounds, r->out, NULL };
		if (debug_opt[0]) {
			/* before the program: its arguments are its own */
			memmove(&aargv[2], &aargv[1], 9 * sizeof(aargv[0]));
			aargv[1] = debug_opt;
		}
		r->agent = spawn(aargv, r->alog);
	}
}

/*
 * Tells the host to connect, waits for the program and its probes, then
 * starts the calls; false (with the problem noted) if that fails.
 */
static bool start_calls(struct run *r)
{
	char tmp[300], rest[128];

	/* Up to the host's gdb: the tracepoints, tstart, continue. */
	double end = now() + 30;
	while (!has_line(r->alog, "Listening on port", NULL, 0) && now() < end &&
	       !exited(r->agent, NULL))
		sleep_us(1000);
	touch(r->ready);
	end = now() + 60;
	while (!r->prog && now() < end && !exited(r->agent, NULL)) {
		if (has_line(r->g, "pid ", rest, sizeof(rest)))
			r->prog = atoi(rest);
		sleep_us(1000);
	}
	if (!r->prog) {
		problem("the program did not start");
		return false;
	}
	/* The probes are in once the text differs from the file: judged
	 * on one read (a second would see another moment of tstart). */
	long in;
	while ((in = text_diff(r->prog, r->taddr, r->tlen, NULL, true)) <= 0 &&
	       now() < end && !exited(r->agent, NULL))
		sleep_us(2000);
	if (in <= 0) {
		char st[512];
		bool alive = !exited(r->agent, NULL);
		problem("the probes never went in (see gdb's output)%s",
			alive ? where_is(r->agent, st, sizeof(st)) : "");
		if (alive) {
			/* Where it is stuck: its keeper names the pc of a
			 * fatal signal ("the agent dies of signal 6 ... at pc"),
			 * in the agent's log that the report shows. */
			dump_stuck(r->agent, r->prog);
			kill(r->agent, SIGABRT);
			r->aborted = true;
			double stop = now() + 10;
			while (!exited(r->agent, NULL) && now() < stop)
				sleep_us(2000);
		}
		return false;
	}
	snprintf(tmp, sizeof(tmp), "%s.start", r->go);
	touch(tmp);
	while (!has_line(r->g, "running", NULL, 0) && now() < end && !exited(r->prog, NULL))
		sleep_us(1000);
	return true;
}

/* Kills the agent mid-run; the program must finish its calls unpatched. */
static void kill_agent(struct run *r)
{
	sleep_us(r->delay);
	if (!exited(r->agent, NULL) && kill(r->agent, SIGKILL) == 0)
		r->killed = true;
	double end = now() + 60;
	while (!has_line(r->g, "calls done", NULL, 0) && !exited(r->prog, NULL) && now() < end)
		sleep_us(2000);
	if (!has_line(r->g, "calls done", NULL, 0)) {
		problem("no \"calls done\"");
		return;
	}
	end = now() + 10;
	while (tracer_of(r->prog) > 0 && now() < end)
		sleep_us(2000);
	long first = 0, d = text_diff(r->prog, r->taddr, r->tlen, &first, false);
	if (d < 0)
		problem("its text cannot be read: it ended early");
	else if (d > 0)
		problem("%ld patched bytes left, first at %#lx", d, first);
}

/* Lets the program exit: status 7 and the untraced result, twice. */
static void check_exit(struct run *r)
{
	char tmp[300], rest[128];
	int status;

	snprintf(tmp, sizeof(tmp), "%s.exit", r->go);
	touch(tmp);
	double end = now() + 30;
	while (!exited(r->prog, &status) && now() < end)
		sleep_us(2000);
	if (!exited(r->prog, &status)) {
		problem("the program did not exit");
		kill(r->prog, SIGKILL);
	} else if (WIFSIGNALED(status)) {
		problem("killed by signal %d", WTERMSIG(status));
	} else if (WEXITSTATUS(status) != 7) {
		problem("exit status %d", WEXITSTATUS(status));
	}
	if (!has_line(r->g, "result ", rest, sizeof(rest)) || strcmp(rest, r->want))
		problem("ground result \"%s\", expected \"%s\"",
			has_line(r->g, "result ", rest, sizeof(rest)) ? rest : "", r->want);
	if (!has_line(r->out, "result ", rest, sizeof(rest)) || strcmp(rest, r->want))
		problem("printed result \"%s\", expected \"%s\"",
			has_line(r->out, "result ", rest, sizeof(rest)) ? rest : "", r->want);
}

/* Ends what is left and writes DIR/doneN. */
static void report(struct run *r)
{
	char tmp[300];
	int ast;

	/* An agent that ended before the kill: how (a crash shows here). */
	if (!r->killed && !r->aborted && r->agent && exited(r->agent, &ast))
		problem("the agent ended by itself: %s %d", WIFSIGNALED(ast) ? "signal" : "status",
			WIFSIGNALED(ast) ? WTERMSIG(ast) : WEXITSTATUS(ast));
	if (r->agent && !exited(r->agent, NULL)) {
		kill(r->agent, SIGKILL);
		double end = now() + 10;
		while (!exited(r->agent, NULL) && now() < end)
			sleep_us(2000);
	}
	if (r->prog && !exited(r->prog, NULL))
		kill(r->prog, SIGKILL);
	local_done(r);
	snprintf(tmp, sizeof(tmp), "%s.tmp", r->done);
	FILE *f = fopen(tmp, "w");
	if (problems[0])
		fprintf(f, "not ok: %s%s\n", problems,
			r->killed ? "" : "(the agent was gone before the kill)");
	else
		fprintf(f, "ok%s\n", r->killed ? "" : " (the agent was gone before the kill)");
	fclose(f);
	rename(tmp, r->done);
}

int main(int argc, char **argv)
{
	struct run r = { .prog = 0 };
	char tmp[300];
	int rc = setup(&r, argc, argv);

	if (rc)
		return rc;
	if (!strcmp(r.mode, "plain")) {
		rc = run_plain(&r);
		local_done(&r);
		return rc;
	}
	snprintf(tmp, sizeof(tmp), "%s/plain.result", dir);
	has_line(tmp, "", r.want, sizeof(r.want));
	start_agent(&r);
	if (start_calls(&r)) {
		kill_agent(&r);
		check_exit(&r);
	}
	report(&r);
	return 0;
}
