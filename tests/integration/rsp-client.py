#!/usr/bin/env python3
"""rsp-client.py - packet-level checks of a gdbserver-compatible stub.

No gdb involved: this talks the Remote Serial Protocol byte by byte, so it
can send what gdb never would (bad checksums, garbage, split packets,
absurd lengths) and check that the stub answers sensibly and keeps serving.

    rsp-client.py --stub STUB --prog PROG --transport stdio|tcp GROUP...

GROUP is one of:
  bad-input   malformed and hostile packets; the stub must stay usable
  disconnect  the client vanishes: the stub kills the process it started
              and exits; with --multi it keeps listening instead (TCP only)

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
        on the way are recorded; the packet is acknowledged with '+'."""
        deadline = time.monotonic() + timeout
        while True:
            m = re.match(rb"[+-]*\$([^#]*)#([0-9a-fA-F]{2})", self.buf, re.S)
            if m:
                for a in re.match(rb"[+-]*", self.buf).group(0):
                    self.acks.append(bytes([a]))
                self.buf = self.buf[m.end():]
                data = m.group(1)
                if checksum(data) != m.group(2).lower():
                    raise FrameworkError("stub sent a bad checksum: %r" % m.group(0))
                if not self.noack:
                    self.write(b"+")
                return rle_decode(data)
            if not self._fill(deadline):
                return None

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

    def start_stdio(self, prog_argv):
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([self.args.stub, "-"] + prog_argv,
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
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


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


GROUPS = {"bad-input": group_bad_input, "disconnect": group_disconnect}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stub", required=True)
    ap.add_argument("--prog", required=True)
    ap.add_argument("--transport", choices=["stdio", "tcp"], default="tcp")
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
