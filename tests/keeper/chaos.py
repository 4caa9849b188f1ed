#!/usr/bin/env python3
"""chaos.py - the agent killed with SIGKILL at random moments while it
records probes of an 8-thread program; after every kill the program must
finish with the untraced output and exit status, and its text must be the
file's (read from /proc/PID/mem while the program still waits to exit).

chaos.py PT AGENT TARGET WORKDIR KILLS SEED: KILLS kills spread over the
strategies and over programs started by the agent and attached to.
Prints one line per kill and a summary; exits 1 if any run failed.

With CHAOS_SSHD (an sshd command line that stays in the foreground) and
CHAOS_SSH (the ssh command that reaches it), the agent runs through ssh
and what is killed is the ssh connection, not the agent: chaos.py starts
the sshd itself, so that the programs the remote agent started come to it
when the agent exits.
"""
import concurrent.futures
import ctypes
import os
import random
import signal
import struct
import subprocess
import sys
import time

PT, AGENT, TARGET, WORK = sys.argv[1:5]
GDB = os.environ.get("GDB") or "gdb"
KILLS = int(sys.argv[5])
SEED = int(sys.argv[6])
ROUNDS = 4000
PROBES = ["-e", "work args=2", "-e", "work%return", "-e", "leaf", "-e", "bump"]
STRATEGIES = os.environ.get("CHAOS_STRATEGIES", "step boost emulate pad auto").split()
TIMEOUT = 60
JOBS = int(os.environ.get("CHAOS_JOBS", "2"))
# CHAOS_MODES: which of started, attached, gdb (all by default).
MODES = os.environ.get("CHAOS_MODES", "started attached gdb").split()
# CHAOS_STORM=1: the agent gets SIGWINCH after SIGWINCH from the moment the
# program runs until the kill, so that the kill mostly finds it in a
# signal-delivery stop its keeper holds.
STORM = os.environ.get("CHAOS_STORM") == "1"
SSHD = os.environ.get("CHAOS_SSHD")
# CHAOS_SIGNAL: what ends the agent (default KILL).  Any other signal is a
# crash the keeper must report ("keeper: the agent dies of signal N ...
# at pc ...") in the agent's log, which the attached runs keep.
SIGNAL = getattr(signal, "SIG" + os.environ.get("CHAOS_SIGNAL", "KILL"))
SSH = os.environ.get("CHAOS_SSH")

PR_SET_CHILD_SUBREAPER = 36
libc = ctypes.CDLL(None, use_errno=True)
# Programs the agent started are orphaned when it dies: they come to us,
# and we see their exit status.
libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def exec_segment(path):
    """(vaddr, bytes) of the executable PT_LOAD of a non-PIE ELF file."""
    data = open(path, "rb").read()
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for i in range(phnum):
        p_type, p_flags, p_offset, p_vaddr, _, p_filesz, _, _ = \
            struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize)
        if p_type == 1 and p_flags & 1:
            return p_vaddr, data[p_offset:p_offset + p_filesz]
    raise SystemExit("no executable segment in " + path)


TEXT_ADDR, TEXT = exec_segment(TARGET)
statuses = {}


def reap(pid=None):
    """Collects exit statuses of children and adopted orphans."""
    while True:
        try:
            got, st = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if got == 0:
            return
        statuses[got] = st


def wait_for(pred, what, limit=TIMEOUT):
    end = time.monotonic() + limit
    while not pred():
        reap()
        if time.monotonic() > end:
            raise RuntimeError("timed out waiting for " + what)
        time.sleep(0.001)


def ground_lines(path):
    try:
        return open(path).read().splitlines()
    except FileNotFoundError:
        return []


def proc_status(pid):
    out = {}
    try:
        for line in open("/proc/%d/status" % pid):
            k, _, v = line.partition(":")
            out[k] = v.strip()
    except (FileNotFoundError, ProcessLookupError):
        pass
    return out


def untraced():
    g, go = os.path.join(WORK, "plain.ground"), os.path.join(WORK, "plain.go")
    for f in (go + ".start", go + ".exit"):
        open(f, "w").close()
    r = subprocess.run([TARGET, g, go, str(ROUNDS)], stdout=subprocess.PIPE)
    return r.stdout.decode(), r.returncode


def gdb_script(n, strategy, g, go):
    """gdb collecting with while-stepping: the agent single-steps the
    threads after each hit of `work`."""
    path = os.path.join(WORK, "gdb%d.cmd" % n)
    with open(path, "w") as f:
        f.write("set pagination off\nset confirm off\nset sysroot /\nset remotetimeout 30\n"
                "target remote | %s --quiet %s--tp-strategy=%s - %s %s %s %d\n"
                "trace work\nactions\nwhile-stepping 4\ncollect $rip\nend\nend\n"
                "trace leaf\nactions\ncollect $regs\nend\n"
                "tstart\ncontinue\n" % (AGENT, os.environ.get("CHAOS_AGENT_OPTS", ""),
                                          strategy, TARGET, g, go, ROUNDS))
    return [GDB, "-nx", "-batch", "-x", path, TARGET]


def one_kill(n, strategy, attach, rnd, want_out, want_status, use_gdb):
    g = os.path.join(WORK, "g%d" % n)
    go = os.path.join(WORK, "go%d" % n)
    out = os.path.join(WORK, "out%d" % n)
    log = open(os.path.join(WORK, "log%d" % n), "w")
    agent = "%s --quiet %s--tp-strategy=%s -" % (AGENT, os.environ.get("CHAOS_AGENT_OPTS", ""), strategy)
    if SSH:
        agent = SSH + " " + agent
    prog = None
    outf = open(out, "w")
    if attach:
        prog = subprocess.Popen([TARGET, g, go, str(ROUNDS)], stdout=outf)
        wait_for(lambda: any(l.startswith("pid") for l in ground_lines(g)), "pid")
        rec = subprocess.Popen([PT, "record", "-q", "-o", os.path.join(WORK, "t%d" % n),
                                "--agent", agent] + PROBES + ["-p", str(prog.pid)],
                               stdout=log, stderr=log)
        pid = prog.pid
        # Probes are in once the text differs from the file.
        def patched():
            try:
                with open("/proc/%d/mem" % pid, "rb") as m:
                    m.seek(TEXT_ADDR)
                    return m.read(len(TEXT)) != TEXT
            except OSError:
                return False
        wait_for(lambda: patched() or rec.poll() is not None, "probes")
        open(go + ".start", "w").close()
    elif use_gdb:
        open(go + ".start", "w").close()
        rec = subprocess.Popen(gdb_script(n, strategy, g, go), stdout=log, stderr=outf,
                               stdin=subprocess.DEVNULL)
        wait_for(lambda: any(l.startswith("pid") for l in ground_lines(g)) or
                 rec.poll() is not None, "pid")
        if not any(l.startswith("pid") for l in ground_lines(g)):
            raise RuntimeError("gdb ended first: " +
                               open(os.path.join(WORK, "log%d" % n)).read())
        pid = int([l for l in ground_lines(g) if l.startswith("pid")][0].split()[1])
    else:
        open(go + ".start", "w").close()
        # The program's stdout is the agent's stderr (stdio transport).
        # Over ssh, stdout goes to a file: the connection that drops
        # takes the agent's stderr with it.
        rec = subprocess.Popen([PT, "record", "-q", "-o", os.path.join(WORK, "t%d" % n),
                                "--agent", agent] + PROBES +
                               ["--", TARGET, g, go, str(ROUNDS)] + ([out] if SSH else []),
                               stdout=log, stderr=log if SSH else outf)
        wait_for(lambda: any(l.startswith("pid") for l in ground_lines(g)) or
                 rec.poll() is not None, "pid")
        if not any(l.startswith("pid") for l in ground_lines(g)):
            raise RuntimeError("the recorder ended first: " +
                               open(os.path.join(WORK, "log%d" % n)).read())
        pid = int([l for l in ground_lines(g) if l.startswith("pid")][0].split()[1])
    # pids come round again (pid_max 32768): a status kept for an earlier
    # process of this pid, an orphan of an earlier run, is not this one's.
    statuses.pop(pid, None)
    wait_for(lambda: "running" in ground_lines(g) or rec.poll() is not None, "running")
    tracer = int(proc_status(pid).get("TracerPid", "0"))
    if SSH:
        # The recorder's ssh client: the connection, not the agent.
        tracer = ssh_client_of(rec.pid)
    storm = Storm(tracer) if STORM and tracer and not SSH else None
    time.sleep(rnd.uniform(0, 0.25))
    if storm:
        storm.stop()
    killed = False
    if tracer:
        try:
            os.kill(tracer, SIGNAL)
            killed = True
        except ProcessLookupError:
            pass
    problems = []
    try:
        # Statuses are taken by reap() only (waitpid(-1)): Popen.poll()
        # would race with it for an attached program's.
        wait_for(lambda: "calls done" in ground_lines(g) or pid in statuses, "calls done")
    except RuntimeError as e:
        problems.append(str(e) + " (state %s)" % proc_status(pid).get("State"))
    if not problems and "calls done" in ground_lines(g):
        # Its text must be the file's: no breakpoint, no jump left.  After
        # a kill the recorder salvages the ring with a new agent, which
        # attaches, runs system calls in the program (their instruction
        # written at its entry point for the while) and detaches: the
        # text is read once the recorder is done.
        if killed:
            try:
                wait_for(lambda: rec.poll() is not None, "the recorder's end")
            except RuntimeError as e:
                problems.append(str(e))
        wait_for(lambda: proc_status(pid).get("TracerPid", "0") == "0", "untraced")
        try:
            with open("/proc/%d/mem" % pid, "rb") as m:
                m.seek(TEXT_ADDR)
                now = m.read(len(TEXT))
        except OSError as e:
            problems.append("its text cannot be read (%s): it ended early" % e)
            now = TEXT
        diff = [i for i in range(len(TEXT)) if now[i] != TEXT[i]]
        if diff:
            problems.append("%d patched bytes left, first at %#x" %
                            (len(diff), TEXT_ADDR + diff[0]))
    open(go + ".exit", "w").close()
    try:
        wait_for(lambda: pid in statuses, "the program's exit")
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        problems.append(str(e) + " (state %s)" % proc_status(pid).get("State"))
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    st = statuses.pop(pid, None)
    if st is not None:
        if os.WIFSIGNALED(st):
            problems.append("killed by signal %d" % os.WTERMSIG(st))
        elif os.WEXITSTATUS(st) != want_status:
            problems.append("exit status %d" % os.WEXITSTATUS(st))
    try:
        rec.wait(TIMEOUT)
    except subprocess.TimeoutExpired:
        rec.kill()
        rec.wait()
    outf.close()
    log.close()
    if killed and SIGNAL != signal.SIGKILL and attach:
        said = open(os.path.join(WORK, "log%d" % n)).read()
        want = "keeper: the agent dies of signal %d (%s) at pc 0x" % (
            SIGNAL, signal.strsignal(SIGNAL))
        if want not in said:
            problems.append("the log does not say %r" % want)
    # What the program printed: in its ground file, and on its stdout
    # when the test started it (the agent relays a started program's).
    got = [l for l in ground_lines(g) if l.startswith("result")]
    if attach or SSH:
        got += [l for l in open(out).read().splitlines() if l.startswith("result")]
    if got != [want_out.strip()] * (2 if attach or SSH else 1):
        problems.append("output %r, expected %r" % (got, want_out.strip()))
    return killed, problems


class Storm:
    """Signals `pid` with SIGWINCH (ignored by the agent, but each one is a
    stop its tracer must resume it from) until stop()."""

    def __init__(self, pid):
        import threading
        self.pid, self.done = pid, False
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self):
        while not self.done:
            try:
                os.kill(self.pid, signal.SIGWINCH)
            except ProcessLookupError:
                return

    def stop(self):
        self.done = True
        self.thread.join()


def ssh_client_of(pid):
    """The ssh process among the descendants of `pid` (0 if none): the
    recorder runs the agent command through sh."""
    try:
        kids = open("/proc/%d/task/%d/children" % (pid, pid)).read().split()
    except OSError:
        return 0
    for k in map(int, kids):
        try:
            if open("/proc/%d/comm" % k).read().strip() == "ssh":
                return k
        except OSError:
            continue
        found = ssh_client_of(k)
        if found:
            return found
    return 0


def start_sshd():
    """Starts CHAOS_SSHD as our child and waits until ssh gets through."""
    sshd = subprocess.Popen(SSHD.split(), stdin=subprocess.DEVNULL)
    end = time.monotonic() + 20
    while subprocess.run(SSH.split() + ["true"], stdin=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL).returncode != 0:
        if sshd.poll() is not None or time.monotonic() > end:
            raise SystemExit("Bail out! sshd did not come up")
        time.sleep(0.1)
    return sshd


def run(n, want_out, want_status):
    """Kill number n: its strategy and kind, and what went wrong."""
    # Every strategy with probe-trace, started and attached, and (one
    # round in five) under gdb with while-stepping.
    strategy = STRATEGIES[n % len(STRATEGIES)]
    kinds = [k for k in ("started", "attached", "started", "attached", "gdb")
             if k in MODES and not (SSH and k == "gdb")]   # no gdb over ssh here
    if not kinds:
        raise SystemExit("Bail out! CHAOS_MODES names none of started, attached, gdb")
    mode = ("started", "attached", "gdb").index(kinds[n // len(STRATEGIES) % len(kinds)])
    attach, use_gdb = mode == 1, mode == 2
    what = "%s %s" % (["started", "attached", "gdb while-stepping"][mode], strategy)
    try:
        killed, problems = one_kill(n, strategy, attach, random.Random(SEED * 100003 + n),
                                    want_out, want_status, use_gdb)
    except RuntimeError as e:
        killed, problems = False, [str(e)]
    return what, killed, problems


def main():
    want_out, want_status = untraced()
    sshd = start_sshd() if SSHD else None
    fails = kills = 0
    start = time.monotonic()
    # Two at a time: each run mostly waits (start-up, the random delay).
    with concurrent.futures.ThreadPoolExecutor(max_workers=JOBS) as pool:
        futures = {pool.submit(run, n, want_out, want_status): n for n in range(KILLS)}
        for fut in concurrent.futures.as_completed(futures):
            n = futures[fut]
            what, killed, problems = fut.result()
            kills += killed
            if problems:
                fails += 1
                print("not ok %d - %s: %s" % (n + 1, what, "; ".join(problems)))
                try:
                    print("#   " + open(os.path.join(WORK, "log%d" % n)).read()
                          .replace("\n", "\n#   "))
                except OSError:
                    pass
            else:
                print("ok %d - %s%s" % (n + 1, what,
                                        "" if killed else " (agent gone before the kill)"))
            sys.stdout.flush()
    print("1..%d" % KILLS)
    print("# %d kills, %d failures, %.0f s" % (kills, fails, time.monotonic() - start))
    if sshd:
        sshd.terminate()
        sshd.wait()
    # CHAOS_TOLERATE=N: up to N failed runs are reported but pass (a test
    # that measures a rate, keeper-race.test); 0 by default.
    tolerate = int(os.environ.get("CHAOS_TOLERATE", "0"))
    if fails and fails <= tolerate:
        print("# %d failures, within the %d this test tolerates" % (fails, tolerate))
        return 0
    return 1 if fails else 0


sys.exit(main())
