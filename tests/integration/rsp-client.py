#!/usr/bin/env python3
"""rsp-client.py - packet-level checks of a gdbserver-compatible stub.

No gdb involved: this talks the Remote Serial Protocol byte by byte, so it
can send what gdb never would (bad checksums, garbage, split packets,
absurd lengths) and check that the stub answers sensibly and keeps serving.

    rsp-client.py --stub STUB --prog PROG --transport stdio|tcp|udp GROUP...

GROUP is one of:
  bad-input   malformed and hostile packets; the stub must stay usable
  disconnect  the client vanishes: the stub kills the process it started
              and exits; with --multi it keeps listening instead (TCP only)
  hot-wait    tracepoint hits in flight while the client interrupts, asks,
              sets breakpoints and threads exit, in all-stop and non-stop,
              per --tp-strategy; then every hit counted exactly once
              (probe-agent only; PROG is progs/hotloop)

Errors: gdbserver answers most failures with a numeric "Enn" (often E01);
probe-agent answers "E.<text>".  Checks accept any reply starting with "E"
(is_error), never a particular code.

Output: one "ok: ..." or "FAIL: ..." line per check; exit 0 if all passed,
1 if any failed, 77 if the group cannot run here, 99 on a framework error.
"""

import argparse
import os
import re
import select
import socket
import subprocess
import sys
import tempfile
import time

TIMEOUT = 10.0          # seconds to wait for any one reply or event

failures = 0


def ok(msg):
    print("ok: " + msg, flush=True)


def fail(msg):
    global failures
    failures += 1
    print("FAIL: " + msg, flush=True)


def check(cond, msg):
    if cond:
        ok(msg)
    else:
        fail(msg)
    return cond


def is_error(reply):
    # "Enn" (gdbserver) or "E.text" (probe-agent); both mean error.
    return reply is not None and reply.startswith(b"E")


def checksum(data):
    return b"%02x" % (sum(data) % 256)


def rle_decode(data):
    """Expand run-length encoding: "X*n" is X repeated n - 28 times in all
    (gdbserver compresses runs of zeros in 'g' and 'm' replies)."""
    out = bytearray()
    i = 0
    while i < len(data):
        if data[i:i + 1] == b"*" and out and i + 1 < len(data):
            out += out[-1:] * (data[i + 1] - 29)
            i += 2
        else:
            out += data[i:i + 1]
            i += 1
    return bytes(out)


def frame(data):
    return b"$" + data + b"#" + checksum(data)


class FrameworkError(Exception):
    pass


class StubError(Exception):
    """The stub misbehaved so that the group cannot go on: a failure."""


class Conn:
    """One RSP connection: a socket or the stdin/stdout pipes of a stub."""

    def __init__(self, rfd, wfd, closer):
        self.rfd, self.wfd, self.closer = rfd, wfd, closer
        self.buf = b""
        self.noack = False
        self.acks = []          # "+" / "-" received, in order
        self.notifs = []        # non-stop notifications ("%Stop:..."), unread

    def write(self, data):
        os.write(self.wfd, data)

    def send(self, data):
        self.write(frame(data))

    def _fill(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        r, _, _ = select.select([self.rfd], [], [], left)
        if not r:
            return False
        chunk = os.read(self.rfd, 65536)
        if not chunk:
            raise EOFError("stub closed the connection")
        self.buf += chunk
        return True

    def read_ack(self, timeout=TIMEOUT):
        """The next '+' or '-' from the stub, or None."""
        deadline = time.monotonic() + timeout
        while True:
            if self.buf[:1] in (b"+", b"-"):
                a, self.buf = self.buf[:1], self.buf[1:]
                self.acks.append(a)
                return a
            if self.buf:
                return None     # a packet, not an ack
            if not self._fill(deadline):
                return None

    def read_packet(self, timeout=TIMEOUT):
        """The next packet's payload (bytes), or None on timeout.  Acks seen
        on the way are recorded; the packet is acknowledged with '+'.
        Notifications on the way (never acknowledged) go to self.notifs."""
        deadline = time.monotonic() + timeout
        while True:
            m = re.match(rb"[+-]*([$%])([^#]*)#([0-9a-fA-F]{2})", self.buf, re.S)
            if m:
                for a in re.match(rb"[+-]*", self.buf).group(0):
                    self.acks.append(bytes([a]))
                self.buf = self.buf[m.end():]
                data = m.group(2)
                if checksum(data) != m.group(3).lower():
                    raise FrameworkError("stub sent a bad checksum: %r" % m.group(0))
                if m.group(1) == b"%":
                    self.notifs.append(data)
                    continue
                if not self.noack:
                    self.write(b"+")
                return rle_decode(data)
            if not self._fill(deadline):
                return None

    def read_notif(self, timeout=TIMEOUT):
        """The next notification's payload, or None on timeout.  A packet
        arriving instead is a framework error: nothing was asked."""
        deadline = time.monotonic() + timeout
        while not self.notifs:
            if re.match(rb"[+-]*\$", self.buf):
                raise FrameworkError("packet while waiting for a notification: %r"
                                     % self.buf[:60])
            m = re.match(rb"[+-]*%([^#]*)#([0-9a-fA-F]{2})", self.buf, re.S)
            if m:
                self.buf = self.buf[m.end():]
                self.notifs.append(m.group(1))
                break
            if not self._fill(deadline):
                return None
        return self.notifs.pop(0)

    def request(self, data, timeout=TIMEOUT):
        """Send a packet and return the reply payload (None on timeout)."""
        self.send(data)
        return self.read_packet(timeout)

    def close(self):
        self.closer()


def hexlify_str(s):
    return s.encode().hex().encode()


class Stub:
    """A stub process and how to reach it."""

    def __init__(self, args, tmp, env):
        self.args, self.tmp, self.env = args, tmp, env
        self.log_path = os.path.join(tmp, "stub-%d.log" % id(self))
        self.proc = None
        self.port = None

    def start_stdio(self, prog_argv, opts=None):
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([self.args.stub] + (opts or []) + ["-"] + prog_argv,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=log, env=self.env)
        log.close()
        p = self.proc
        return Conn(p.stdout.fileno(), p.stdin.fileno(),
                    lambda: (p.stdin.close(), p.stdout.close()))

    def start_tcp(self, opts, prog_argv):
        for _ in range(3):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
            s.close()
            log = open(self.log_path, "wb")
            self.proc = subprocess.Popen(
                [self.args.stub] + opts + ["127.0.0.1:%d" % self.port] + prog_argv,
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                env=self.env)
            log.close()
            deadline = time.monotonic() + TIMEOUT
            while time.monotonic() < deadline:
                if b"Listening on port" in self.log():
                    return
                if self.proc.poll() is not None:
                    break
                time.sleep(0.05)
            if b"Address already in use" not in self.log():
                break
        raise StubError("stub did not listen: %r" % self.log())

    def connect(self):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=TIMEOUT)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return Conn(s.fileno(), s.fileno(), s.close)

    def start_udp(self, opts, prog_argv):
        """The stub on a UDP port; its first datagram from us makes the
        connection."""
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [self.args.stub] + opts + ["udp:127.0.0.1:%d" % self.port] + prog_argv,
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            env=self.env)
        log.close()
        deadline = time.monotonic() + TIMEOUT
        while b"Listening on port" not in self.log():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise StubError("stub did not listen on UDP: %r" % self.log())
            time.sleep(0.05)
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.connect(("127.0.0.1", self.port))
        return Conn(u.fileno(), u.fileno(), u.close)

    def start(self, opts, prog_argv):
        """The stub over args.transport, connected."""
        if self.args.transport == "stdio":
            return self.start_stdio(prog_argv, opts)
        if self.args.transport == "udp":
            return self.start_udp(["--once"] + opts, prog_argv)
        self.start_tcp(["--once"] + opts, prog_argv)
        return self.connect()

    def log(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read()
        except OSError:
            return b""

    def wait_exit(self, timeout=TIMEOUT):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self):
        """The stub and what it started: with the agent's keeper, a program
        the agent started outlives it and would run on, writing its
        ground file into the scratch folder as the folder goes."""
        if self.proc and self.proc.poll() is None:
            kids = children(self.proc.pid)
            self.proc.kill()
            self.proc.wait()
            for pid in kids:
                kill_pid(pid)
            for pid in kids:
                wait_gone(pid)


def children(pid):
    """The pids of pid's children (every thread's), [] when it is gone."""
    kids = []
    try:
        for task in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, task)) as f:
                kids += [int(k) for k in f.read().split()]
    except OSError:
        pass
    return kids


def process_state(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("State:"):
                    return line.split()[1]
    except OSError:
        pass
    return "gone"


def wait_gone(pid, timeout=TIMEOUT):
    """True once pid is gone or a zombie (dead, waiting for its reaper)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process_state(pid) in ("gone", "Z"):
            return True
        time.sleep(0.05)
    return False


def ground_pid(path, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(path) as f:
                m = re.search(r"^ground: pid=(\d+)$", f.read(), re.M)
                if m:
                    return int(m.group(1))
        except OSError:
            pass
        time.sleep(0.05)
    return None


def pc_from_stop(reply):
    """rip (register 0x10 on x86-64) from a T stop reply, as an int."""
    m = re.search(rb"(?:^T[0-9a-f]{2}|;)10:([0-9a-f]{16});", reply)
    if not m:
        return None
    return int.from_bytes(bytes.fromhex(m.group(1).decode()), "little")


# --- groups ---------------------------------------------------------------

def stub_is_gdbserver(args):
    return os.path.basename(args.stub).startswith("gdbserver")


def group_bad_input(args, tmp, env):
    stub = Stub(args, tmp, env)
    try:
        if args.transport == "stdio":
            c = stub.start_stdio([args.prog])
        else:
            stub.start_tcp(["--once"], [args.prog])
            c = stub.connect()

        # 'g' before anything else, even qSupported and '?': the register
        # block, or an error (gdbserver 13: E01, no thread selected yet);
        # either way the packet is acknowledged and the stub goes on.
        r = c.request(b"g")
        check(r is not None and (is_error(r) or (
              re.fullmatch(rb"[0-9a-fx]+", r) is not None
              and len(r) % 2 == 0 and len(r) >= 2 * 8 * 17)),
              "'g' as first packet -> registers or an error (%r)" % (r[:16] if r else r))
        check(c.acks[-1:] == [b"+"], "'g' was acknowledged with '+'")

        # A bad checksum is refused with '-' and the stub keeps serving.
        c.write(b"$qSupported#00")
        a = c.read_ack()
        check(a == b"-", "bad checksum answered with '-' (got %r)" % a)
        r = c.request(b"qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+")
        check(r is not None and b"PacketSize=" in r,
              "stub serves after a bad checksum: qSupported has PacketSize (%r)" % r)

        # Unknown packets: the empty reply.
        check(c.request(b"vMustReplyEmpty") == b"", "vMustReplyEmpty -> empty reply")
        check(c.request(b"qThisPacketDoesNotExist") == b"", "unknown q packet -> empty reply")
        check(c.request(b"vThisPacketDoesNotExist;1") == b"", "unknown v packet -> empty reply")

        # Where the program stopped.
        stop = c.request(b"?")
        check(stop is not None and re.match(rb"T05", stop) is not None,
              "'?' -> T05 stop reply (%r)" % (stop[:40] if stop else stop))
        pc = pc_from_stop(stop or b"")
        if pc is None:
            # Without rip in the stop reply, ask for it.
            r = c.request(b"p10")
            pc = int.from_bytes(bytes.fromhex(r.decode()), "little") if r and not is_error(r) else None
        if not check(pc is not None and pc > 0x1000, "pc known: %s" % (hex(pc) if pc else pc)):
            return
        ok_read = c.request(b"m%x,4" % pc)
        check(ok_read is not None and re.fullmatch(rb"[0-9a-f]{8}", ok_read) is not None,
              "m pc,4 -> 4 bytes (%r)" % ok_read)

        # Garbage between packets is ignored (no 0x03: that is an interrupt).
        c.write(b"garbage\x00\xff\x7f junk ####")
        r = c.request(b"m%x,4" % pc)
        check(r == ok_read, "stub serves after garbage bytes (%r)" % r)

        # A packet split across writes, and two packets in one write.
        c.write(b"$m%x" % pc)
        time.sleep(0.1)
        c.write(b",4#" + checksum(b"m%x,4" % pc)[:1])
        time.sleep(0.1)
        c.write(checksum(b"m%x,4" % pc)[1:])
        r = c.read_packet()
        check(r == ok_read, "packet split across three writes (%r)" % r)

        # Memory errors.  (gdbserver: E01; probe-agent: E.<text>.)
        r = c.request(b"m0,4")
        check(is_error(r), "m on address 0 -> error (%r)" % r)
        r = c.request(b"mffffffffffff0000,8")
        check(is_error(r), "m on a kernel address -> error (%r)" % r)
        if not stub_is_gdbserver(args):
            # A client that takes E.text in any reply (gdb 14's
            # error-message+) gets the reason; gdb 13 gets E01.
            c.request(b"qSupported:multiprocess+;error-message+")
            r = c.request(b"m0,4")
            check(r == b"E.cannot read memory at 0x0",
                  "m on address 0 after error-message+ -> E.text (%r)" % r)
            c.request(b"qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+")
            r = c.request(b"m0,4")
            check(r == b"E01", "m on address 0 without error-message+ -> E01 (%r)" % r)
        # Breakpoints where nothing is mapped.  (gdbserver: E01.)
        r = c.request(b"Z0,0,1")
        check(is_error(r), "Z0 on address 0 -> error (%r)" % r)
        r = c.request(b"Z0,%x,1" % pc)
        check(r == b"OK", "Z0 at pc -> OK (%r)" % r)
        r = c.request(b"m%x,4" % pc)
        check(r == ok_read, "memory reads show the original bytes under a breakpoint (%r)" % r)
        r = c.request(b"z0,%x,1" % pc)
        check(r == b"OK", "z0 at pc -> OK (%r)" % r)

        # No-ack mode: no more '+', packets still answered.
        r = c.request(b"QStartNoAckMode")
        check(r == b"OK", "QStartNoAckMode -> OK")
        c.noack = True
        n = len(c.acks)
        r = c.request(b"m%x,4" % pc)
        check(r == ok_read and len(c.acks) == n, "no-ack mode: reply without '+'")

        # Two packets in one write.  Only valid without acks: in ack mode
        # the client must wait for '+' (gdbserver takes the second '$' for
        # a bad ack and resends its reply forever).
        c.write(frame(b"m%x,1" % pc) + frame(b"m%x,2" % pc))
        r1, r2 = c.read_packet(), c.read_packet()
        check(r1 == ok_read[:2] and r2 == ok_read[:4],
              "no-ack mode: two packets in one write: %r, %r" % (r1, r2))

        # Kill: the process goes away and so does a stub without --multi.
        c.send(b"k")
        code = stub.wait_exit()
        check(code is not None, "stub exits after 'k' (exit code %s)" % code)
    finally:
        stub.kill()
        if failures:
            sys.stdout.write("--- stub log\n" + stub.log().decode(errors="replace") + "---\n")

    # Packets gdbserver 13 does not survive, each against a fresh stub.
    # GDBSERVER LIMITATION: "m <pc>,8000" (a read bigger than its packet
    # buffer) makes gdbserver 13 die of SIGSEGV; "mzz,4" makes it throw
    # "Invalid hex digit 122" and drop the session.  probe-agent must answer
    # (an error, or for the read a partial reply no longer than asked) and
    # keep serving.  Expected failures against gdbserver.
    def huge_ok(r, first):
        return is_error(r) or (re.fullmatch(rb"[0-9a-f]*", r) is not None
                               and len(r) % 2 == 0 and r.startswith(first))
    survive(args, tmp, env, "m with a 32 KiB length", lambda pc: b"m%x,8000" % pc, huge_ok)
    survive(args, tmp, env, "m with a 2 GiB length", lambda pc: b"m%x,7fffffff" % pc, huge_ok)
    survive(args, tmp, env, "malformed m address", lambda pc: b"mzz,4",
            lambda r, first: is_error(r) or r == b"")


def survive(args, tmp, env, what, make_packet, acceptable):
    """Send one hostile packet to a fresh stub: the reply must be acceptable
    and the stub must still serve a normal read afterwards."""
    stub = Stub(args, tmp, env)
    before = failures
    try:
        if args.transport == "stdio":
            c = stub.start_stdio([args.prog])
        else:
            stub.start_tcp(["--once"], [args.prog])
            c = stub.connect()
        pc = pc_from_stop(c.request(b"?") or b"")
        if not check(pc is not None, "%s: pc known" % what):
            return
        first = c.request(b"m%x,4" % pc)
        try:
            r = c.request(make_packet(pc))
            again = c.request(b"m%x,4" % pc, timeout=3)
        except (EOFError, OSError):
            r = again = None
        msg = "%s -> %s, then still serving" % (
            what, "no reply" if r is None else "%d-byte reply %r" % (len(r), r[:12]))
        if r is not None and acceptable(r, first) and again == first:
            ok(msg)
        elif stub_is_gdbserver(args):
            print("xfail (gdbserver limitation): %s (stub exit %s)"
                  % (msg, stub.wait_exit(1)), flush=True)
        else:
            fail(msg)
    finally:
        stub.kill()
        if failures > before:
            sys.stdout.write("--- stub log\n" + stub.log().decode(errors="replace") + "---\n")


def kill_pid(pid):
    if pid:
        try:
            os.kill(pid, 9)
        except OSError:
            pass


def group_disconnect(args, tmp, env):
    if args.transport != "tcp":
        print("disconnect needs TCP")
        return 77

    # Without --multi: the client vanishes (no 'k', no 'D') while the
    # program is stopped: the stub kills the process it started and exits.
    stub = Stub(args, tmp, env)
    pid = None
    try:
        stub.start_tcp(["--once"], [args.prog])
        m = re.search(rb"pid = (\d+)", stub.log())
        pid = int(m.group(1)) if m else None
        c = stub.connect()
        c.request(b"qSupported:multiprocess+")
        stop = c.request(b"?")
        check(stop is not None and stop.startswith(b"T"), "stopped at the start")
        if pid is None:
            m = re.search(rb"thread:p([0-9a-f]+)\.", stop or b"")
            pid = int(m.group(1), 16) if m else None
        if not check(pid is not None, "pid of the started program known (%s)" % pid):
            return
        c.close()
        code = stub.wait_exit()
        check(code is not None, "stub exits after the client vanished (code %s)" % code)
        check(wait_gone(pid), "the program it started is gone (state %s)" % process_state(pid))
    finally:
        stub.kill()
        kill_pid(pid)
        if failures:
            sys.stdout.write("--- stub log\n" + stub.log().decode(errors="replace") + "---\n")

    # Same, but the client vanishes while the program is running.
    # GDBSERVER LIMITATION: gdbserver 13 only notices the lost connection at
    # the inferior's next stop, so with a program that never stops it stays
    # forever ("input_interrupt, count = -1" in its log).  probe-agent must
    # notice at once; against gdbserver this check is an expected failure.
    ground = os.path.join(tmp, "disconnect.ground")
    stub = Stub(args, tmp, dict(env, ITEST_GROUND=ground))
    pid = None
    before = failures
    try:
        stub.start_tcp(["--once"], [args.prog])
        c = stub.connect()
        c.request(b"qSupported:multiprocess+")
        c.request(b"?")
        c.send(b"vCont;c")
        pid = ground_pid(ground)
        if check(pid is not None, "program runs and reports its pid"):
            c.close()
            code = stub.wait_exit(3 if stub_is_gdbserver(args) else TIMEOUT)
            gone = code is not None and wait_gone(pid, 3 if stub_is_gdbserver(args) else TIMEOUT)
            msg = ("stub exits and kills the running program when the client vanishes"
                   " (code %s, program %s)" % (code, process_state(pid)))
            if gone:
                check(True, msg)
            elif stub_is_gdbserver(args):
                print("xfail (gdbserver limitation): " + msg, flush=True)
            else:
                fail(msg)
    finally:
        stub.kill()
        kill_pid(pid)
        if failures > before:
            sys.stdout.write("--- stub log\n" + stub.log().decode(errors="replace") + "---\n")

    # With --multi (no --once): the stub stays, listening for the next client.
    before = failures
    stub = Stub(args, tmp, env)
    try:
        stub.start_tcp(["--multi"], [])
        c = stub.connect()
        c.request(b"qSupported:multiprocess+")
        c.request(b"!")
        c.close()
        time.sleep(0.3)
        check(stub.proc.poll() is None, "--multi stub still running after the client vanished")
        try:
            c = stub.connect()
            r = c.request(b"qSupported:multiprocess+")
            check(r is not None and b"PacketSize=" in r, "--multi stub serves a second client")
            c.close()
        except OSError as e:
            fail("--multi stub refuses a second connection: %s" % e)
    finally:
        stub.kill()
        if failures > before:
            sys.stdout.write("--- stub log\n" + stub.log().decode(errors="replace") + "---\n")


# --- hot-wait ---------------------------------------------------------------
#
# probe-agent handles probe hits in a wait of its own (agent/hot-wait.c)
# that gdb's input must end at once.  Here the hits never stop: progs/
# hotloop's threads call hot() (a tracepoint) until the test sets stop_now;
# meanwhile the client interrupts, queries, reads memory, sets breakpoints,
# stops single threads, and the threads exit while others still hit.  At
# the end the trace must hold exactly one frame per call (the program's
# own count), and the agent's --debug=hot log must show waits that handled
# hits and were ended by the client's input: the path was taken, not only
# the event loop's.

HOT_ROUNDS = 6          # interrupts / queries while hits are in flight
HOT_PAUSE = 0.02        # pacing between them (seconds; nothing is timed)
HOT_STRATEGIES = os.environ.get("HOT_STRATEGIES", "auto pad emulate boost step").split()


def symbols(prog):
    out = subprocess.run(["nm", prog], capture_output=True, text=True,
                         check=True).stdout
    return {f[2]: int(f[0], 16) for f in (l.split() for l in out.splitlines())
            if len(f) == 3}


def tstatus(c):
    """qTStatus as (running, frames created), or None."""
    r = c.request(b"qTStatus")
    m = re.match(rb"T([01]);.*tcreated:([0-9a-f]+)", r or b"")
    if not m:
        return None
    return m.group(1) == b"1", int(m.group(2), 16)


def ground_calls(path):
    try:
        with open(path) as f:
            m = re.search(r"^ground: calls=(\d+)$", f.read(), re.M)
            return int(m.group(1)) if m else None
    except OSError:
        return None


def thread_ids(reply):
    """(pid, tid) of a stop reply's thread:pP.T field."""
    m = re.search(rb"thread:p([0-9a-f]+)\.([0-9a-f]+);", reply or b"")
    return (int(m.group(1), 16), int(m.group(2), 16)) if m else None


def hot_setup(c, what, syms, nonstop):
    """Connection and tracepoint; returns the pid, or None after a FAIL."""
    c.request(b"qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+")
    if nonstop and not check(c.request(b"QNonStop:1") == b"OK", "%s: QNonStop:1" % what):
        return None
    stop = c.request(b"?")
    ids = thread_ids(stop)
    if nonstop:
        while stop not in (b"OK", None):
            stop = c.request(b"vStopped")
    if not check(ids is not None, "%s: stopped at the start (%r)" % (what, ids)):
        return None
    hot = syms["hot"]
    # Registers and 8 bytes at the stack pointer (gdb's regnum 7, rsp):
    # memory is not taken by a recording pad, so with every strategy the
    # hits stop the thread once and reach the hot wait.
    for pkt in (b"QTinit", b"QTBuffer:circular:1",
                b"QTDP:1:%x:E:0:0-" % hot, b"QTDP:-1:%x:R%s-" % (hot, b"ff" * 20),
                b"QTDP:-1:%x:M7,0,8" % hot,
                b"QTStart", b"Z0,%x,1" % syms["done"]):
        r = c.request(pkt)
        if not check(r == b"OK", "%s: %s -> OK (%r)" % (what, pkt.decode(), r)):
            return None
    return ids[0]


def hot_all_stop(c, what, syms):
    """Interrupts (0x03) and gdb breakpoints while hits are in flight."""
    created = 0
    c.send(b"vCont;c")
    for k in range(HOT_ROUNDS):
        time.sleep(HOT_PAUSE)
        c.write(b"\x03")
        stop = c.read_packet()
        if not check(stop is not None and stop.startswith(b"T02"),
                     "%s: interrupt %d answered by a SIGINT stop (%r)"
                     % (what, k, stop[:400] if stop else stop)):
            return False
        st = tstatus(c)
        check(st is not None and st[0] and st[1] >= created,
              "%s: qTStatus while stopped: running, %s frames (before: %d)"
              % (what, st and st[1], created))
        created = st[1] if st else created
        c.send(b"vCont;c")
    # A breakpoint of gdb's in code the threads run between hits.
    c.write(b"\x03")
    if not check((c.read_packet() or b"").startswith(b"T02"), "%s: interrupt" % what):
        return False
    for k in range(3):
        check(c.request(b"Z0,%x,1" % syms["marker"]) == b"OK", "%s: Z0 marker" % what)
        stop = c.request(b"vCont;c")
        check(stop is not None and stop.startswith(b"T05") and b"swbreak" in stop
              and pc_from_stop(stop) == syms["marker"],
              "%s: breakpoint %d at marker reported while hits fire (%r)"
              % (what, k, stop[:60] if stop else stop))
        check(c.request(b"z0,%x,1" % syms["marker"]) == b"OK", "%s: z0 marker" % what)
    # The end: threads exit one by one while the others still hit.
    check(c.request(b"M%x,4:01000000" % syms["stop_now"]) == b"OK",
          "%s: stop_now set" % what)
    stop = c.request(b"vCont;c")
    return check(stop is not None and stop.startswith(b"T05")
                 and pc_from_stop(stop) == syms["done"],
                 "%s: program reaches done() (%r)" % (what, stop[:60] if stop else stop))


def hot_non_stop(c, what, syms, pid):
    """Packets while hits are in flight, a breakpoint, a thread stopped
    alone; the stops come as notifications."""
    created = 0
    check(c.request(b"vCont;c") == b"OK", "%s: vCont;c -> OK" % what)
    for k in range(HOT_ROUNDS):
        time.sleep(HOT_PAUSE)
        st = tstatus(c)
        check(st is not None and st[0] and st[1] >= created,
              "%s: qTStatus %d while running: running, %s frames (before: %d)"
              % (what, k, st and st[1], created))
        created = st[1] if st else created
        r = c.request(b"m%x,20" % syms["calls"])
        check(r is not None and re.fullmatch(rb"[0-9a-f]{64}", r) is not None,
              "%s: memory read while running (%r)" % (what, r))
    # gdb's breakpoint where only one thread goes: it stops alone.
    check(c.request(b"Z0,%x,1" % syms["solo"]) == b"OK", "%s: Z0 solo" % what)
    n = c.read_notif()
    ids = thread_ids(n)
    if not check(n is not None and n.startswith(b"Stop:T05") and b"swbreak" in n
                 and pc_from_stop(n[len(b"Stop:"):]) == syms["solo"] and ids is not None,
                 "%s: breakpoint stop at solo (%r)" % (what, n[:60] if n else n)):
        return False
    check(c.request(b"vStopped") == b"OK", "%s: vStopped -> OK" % what)
    check(c.request(b"z0,%x,1" % syms["solo"]) == b"OK", "%s: z0 solo" % what)
    tid = ids[1]
    check(c.request(b"vCont;c:p%x.%x" % (pid, tid)) == b"OK",
          "%s: thread %d resumed" % (what, tid))
    # Stop one thread (what gdb's interrupt does for a thread in non-stop).
    check(c.request(b"vCont;t:p%x.%x" % (pid, tid)) == b"OK", "%s: vCont;t" % what)
    n = c.read_notif()
    check(n is not None and n.startswith(b"Stop:T00") and thread_ids(n) == (pid, tid),
          "%s: thread %d stopped alone (%r)" % (what, tid, n[:60] if n else n))
    check(c.request(b"vStopped") == b"OK", "%s: vStopped -> OK" % what)
    check(c.request(b"vCont;c:p%x.%x" % (pid, tid)) == b"OK",
          "%s: thread %d resumed again" % (what, tid))
    # The end, written while everything runs.
    check(c.request(b"M%x,4:01000000" % syms["stop_now"]) == b"OK",
          "%s: stop_now set while running" % what)
    n = c.read_notif()
    ok_done = (n is not None and n.startswith(b"Stop:T05")
               and pc_from_stop(n[len(b"Stop:"):]) == syms["done"])
    check(ok_done, "%s: program reaches done() (%r)" % (what, n[:60] if n else n))
    check(c.request(b"vStopped") == b"OK", "%s: vStopped -> OK" % what)
    return ok_done


hot_input_waits = [0]


def hot_wait_run(args, tmp, env, syms, nonstop, strategy):
    what = "%s %s %s" % (args.transport, "non-stop" if nonstop else "all-stop", strategy)
    ground = os.path.join(tmp, "hot-wait.ground")
    if os.path.exists(ground):
        os.unlink(ground)
    stub = Stub(args, tmp, dict(env, ITEST_GROUND=ground))
    before = failures
    try:
        c = stub.start([os.environ.get("HOT_DEBUG", "--debug=hot"), "--tp-strategy=" + strategy], [args.prog])
        pid = hot_setup(c, what, syms, nonstop)
        if pid is None:
            return
        if nonstop:
            done = hot_non_stop(c, what, syms, pid)
        else:
            done = hot_all_stop(c, what, syms)
        if not done:
            return
        calls = ground_calls(ground)
        st = tstatus(c)
        check(calls is not None and calls > 0 and st is not None and st[1] == calls,
              "%s: one frame per call: %s frames, the program made %s calls"
              % (what, st and st[1], calls))
        # Every hot wait the stub logged: how many statuses it handled and
        # why it ended.  Whether a given run enters the wait often is up
        # to scheduling (a come-back for statuses keeps the loop out of
        # it while the program traps as fast as it is resumed), so each
        # run must show hits handled in the wait, and the whole group
        # waits that input ended (hot_input_waits, checked at the end).
        waits = [(int(n), why) for n, why in
                 re.findall(rb"\[hot\] (\d+) statuses handled, left for ([a-z ]+)",
                            stub.log())]
        by_input = sum(1 for n, why in waits if n and why == b"input")
        hot_input_waits[0] += by_input
        check(any(n for n, _ in waits),
              "%s: hits handled in the hot wait (%d statuses in %d waits, "
              "%d ended by input)" % (what, sum(n for n, _ in waits), len(waits), by_input))
        # Not waiting for vKill's OK: the stub may be gone by the ack.
        c.send(b"vKill;%x" % pid if nonstop else b"k")
        check(stub.wait_exit() is not None, "%s: stub exits after the kill" % what)
    finally:
        stub.kill()
        if failures > before:
            sys.stdout.write("--- stub log\n" + stub.log().decode(errors="replace")[-4000:]
                             + "---\n")


def group_hot_wait(args, tmp, env):
    if stub_is_gdbserver(args):
        print("hot-wait checks probe-agent's own wait (--debug=hot)")
        return 77
    syms = symbols(args.prog)
    missing = [n for n in ("hot", "marker", "solo", "done", "stop_now", "calls")
               if n not in syms]
    if missing:
        raise FrameworkError("%s has no %s: not progs/hotloop" % (args.prog, missing))
    for nonstop in (False, True):
        for strategy in HOT_STRATEGIES:
            hot_wait_run(args, tmp, env, syms, nonstop, strategy)
    check(hot_input_waits[0] > 0,
          "gdb's input ended hot waits that had handled hits (%d such waits in all)"
          % hot_input_waits[0])


GROUPS = {"bad-input": group_bad_input, "disconnect": group_disconnect,
          "hot-wait": group_hot_wait}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stub", required=True)
    ap.add_argument("--prog", required=True)
    ap.add_argument("--transport", choices=["stdio", "tcp", "udp"], default="tcp")
    ap.add_argument("groups", nargs="+", choices=sorted(GROUPS))
    args = ap.parse_args()

    env = dict(os.environ)
    skipped = 0
    with tempfile.TemporaryDirectory(prefix="rsp-client.") as tmp:
        env.setdefault("ITEST_GROUND", os.path.join(tmp, "ground"))
        for g in args.groups:
            print("--- %s over %s" % (g, args.transport), flush=True)
            try:
                if GROUPS[g](args, tmp, env) == 77:
                    skipped += 1
            except FrameworkError as e:
                print("FRAMEWORK ERROR: %s" % e)
                return 99
            except (EOFError, OSError, StubError) as e:
                fail("%s: %s" % (g, e))
    if failures:
        return 1
    if skipped == len(args.groups):
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
