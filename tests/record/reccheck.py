#!/usr/bin/env python3
"""reccheck.py - compares what probe-trace recorded with what the test
program printed (rectarget.c's ground truth).

  reccheck.py calls DUMP.jsonl GROUND        compute args and checksum memory
  reccheck.py cond DUMP.jsonl GROUND EXPR    compute frames == ground lines
                                             where EXPR(a, b) holds
  reccheck.py threads DUMP.jsonl GROUND      every call once, with its thread
  reccheck.py ordered DUMP.jsonl GROUND      each thread's frames in call order
  reccheck.py subset DUMP.jsonl GROUND B     frames are calls with arg1 == B
  reccheck.py count DUMP.jsonl PROBE N       exactly N frames of PROBE
  reccheck.py regs DUMP.jsonl GROUND ADDR    rdi/rsi/rip of compute frames
  reccheck.py returns DUMP.jsonl GROUND      fact%return: retval per level
  reccheck.py tids DUMP.jsonl GROUND N       rectids.c: every tid_hit frame
                                             names its thread, within the
                                             program's clock readings

Prints what differs and exits 1 on any difference.
"""
import collections
import json
import sys


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def ground(path, kind):
    out = []
    with open(path) as f:
        for line in f:
            w = line.split()
            if w and w[0] == kind:
                out.append(w[1:])
    return out


def frames_of(frames, probe):
    return [f for f in frames if f["probe"] == probe]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def tids(frames, gpath, n):
    """rectids.c's calls: tid_hit(kind, tid) N times per thread of a
    kind, `tid` the caller's gettid.  Kinds 0-4 run in the recorded
    process, so each of their calls is a frame; the fork and vfork
    children (5, 6) are other processes, but a frame of theirs must
    still name its own thread."""
    g = {}
    kinds = collections.defaultdict(list)
    for line in open(gpath):
        w = line.split()
        if w[0] == "kind":
            kinds[int(w[1])].append(int(w[3]))
        else:
            g[w[0]] = int(w[1])
    bad = 0
    count = collections.Counter()
    for f in frames_of(frames, "tid_hit"):
        v = f["values"]
        kind, tid = v["arg0"], v["arg1"]
        count[kind] += 1
        if v.get("probe_thread") != tid:
            bad += 1
            if bad <= 5:
                print("FAIL: kind %d call of thread %d recorded as thread %s"
                      % (kind, tid, v.get("probe_thread")))
        if tid not in kinds[kind]:
            bad += 1
            print("FAIL: kind %d: thread %d is none the program named" % (kind, tid))
        t = v.get("trace_timestamp")
        if t is None or not g["wall_us_before"] - 1000 <= t <= g["wall_us_after"] + 1000:
            bad += 1
            if bad <= 5:
                print("FAIL: kind %d: time %s outside [%d, %d]"
                      % (kind, t, g["wall_us_before"], g["wall_us_after"]))
    for kind in range(5):
        want = n * len(kinds[kind])
        if count[kind] != want:
            bad += 1
            print("FAIL: kind %d: %d frames, %d calls" % (kind, count[kind], want))
    print("frames per kind: %s" % sorted(count.items()))
    if bad:
        sys.exit(1)


def main():
    mode, dump, gpath = sys.argv[1], sys.argv[2], sys.argv[3]
    frames = load(dump)
    if mode == "tids":
        tids(frames, gpath, int(sys.argv[4]))
        return
    if mode == "count":
        got = len(frames_of(frames, gpath))
        if got != int(sys.argv[4]):
            fail("%d frames of %s, expected %s" % (got, gpath, sys.argv[4]))
        print("%d frames of %s" % (got, gpath))
        return
    if mode == "calls":
        g = ground(gpath, "compute")
        fr = frames_of(frames, "compute")
        if len(fr) != len(g):
            fail("%d compute frames, %d calls" % (len(fr), len(g)))
        for i, (f, line) in enumerate(zip(fr, g)):
            a, b = int(line[0]), int(line[1])
            v = f["values"]
            if (v.get("arg0"), v.get("arg1")) != (a, b):
                fail("frame %d: args %s %s, the call was compute(%d, %d)"
                     % (i, v.get("arg0"), v.get("arg1"), a, b))
        words = ground(gpath, "checksum")
        fr = frames_of(frames, "checksum")
        if len(fr) != len(words):
            fail("%d checksum frames, %d calls" % (len(fr), len(words)))
        for i, (f, line) in enumerate(zip(fr, words)):
            mem = f.get("memory", [])
            if len(mem) != 1:
                fail("frame %d: %d memory blocks" % (i, len(mem)))
            text = bytes.fromhex(mem[0]["bytes"]).decode()
            if text != line[0][:6] or int(mem[0]["address"], 16) != f["values"]["arg0"]:
                fail("frame %d: memory %r at %s, expected %r at arg0"
                     % (i, text, mem[0]["address"], line[0][:6]))
        print("%d compute and %d checksum frames match" % (len(g), len(words)))
        return
    if mode == "cond":
        g = [l for l in ground(gpath, "compute")
             if eval(sys.argv[4], {}, {"a": int(l[0]), "b": int(l[1])})]
        fr = frames_of(frames, "compute")
        got = [(f["values"]["arg0"], f["values"]["arg1"]) for f in fr]
        want = [(int(l[0]), int(l[1])) for l in g]
        if got != want:
            fail("frames %s, expected %s" % (got, want))
        print("%d frames, as the condition says" % len(got))
        return
    if mode == "threads":
        g = ground(gpath, "compute")
        want = sorted((int(l[0]), int(l[1]), int(l[3])) for l in g)
        fr = frames_of(frames, "compute")
        got = sorted((f["values"]["arg0"], f["values"]["arg1"],
                      f["values"].get("probe_thread")) for f in fr)
        if got != want:
            missing = set(want) - set(got)
            extra = set(got) - set(want)
            fail("%d frames, %d calls; missing %s; unexpected %s"
                 % (len(got), len(want), sorted(missing)[:5], sorted(extra)[:5]))
        print("%d frames from %d threads match the calls"
              % (len(got), len(set(w[2] for w in want))))
        return
    if mode == "ordered":
        # rectarget threads: each thread's frames in the file in the
        # order of its calls (arg0 = thread * 100000 + i).
        last = {}
        for f in frames_of(frames, "compute"):
            v = f["values"]
            t = v.get("probe_thread")
            if t in last and v["arg0"] <= last[t]:
                fail("frame %d: compute(%d) of thread %s after compute(%d)"
                     % (f["frame"], v["arg0"], t, last[t]))
            last[t] = v["arg0"]
        print("the frames of %d threads are in call order" % len(last))
        return
    if mode == "subset":
        b = int(sys.argv[4])
        calls = set(int(l[0]) for l in ground(gpath, "compute") if int(l[1]) == b)
        fr = frames_of(frames, "compute")
        if not fr:
            fail("no compute frames")
        for f in fr:
            v = f["values"]
            if v["arg1"] != b or v["arg0"] not in calls:
                fail("frame %d: compute(%d, %d) was never called"
                     % (f["frame"], v["arg0"], v["arg1"]))
        print("%d frames, all real calls" % len(fr))
        return
    if mode == "regs":
        addr = int(sys.argv[4], 16)
        g = ground(gpath, "compute")
        fr = frames_of(frames, "compute")
        if len(fr) != len(g):
            fail("%d frames, %d calls" % (len(fr), len(g)))
        for f, line in zip(fr, g):
            r = f["registers"]
            if (int(r["rdi"], 16), int(r["rsi"], 16), int(r["rip"], 16)) != \
               (int(line[0]), int(line[1]), addr):
                fail("frame %d: rdi %s rsi %s rip %s, expected %s %s %#x"
                     % (f["frame"], r["rdi"], r["rsi"], r["rip"], line[0], line[1], addr))
        print("%d frames with the call's registers" % len(fr))
        return
    if mode == "returns":
        g = ground(gpath, "fact")
        fr = frames_of(frames, "fact%return")
        got = [signed(f["values"]["retval"]) for f in fr]
        want = [int(l[1]) for l in g]
        if got != want:
            fail("return values %s, expected %s" % (got, want))
        lat = [f["values"].get("probe_latency_ns", 0) for f in fr]
        # the innermost may take less than the counter's step (0 ns)
        if any(x < 0 for x in lat) or lat != sorted(lat) or not lat or lat[-1] <= 0:
            fail("latencies %s: expected growing with depth, the outermost > 0" % lat)
        print("%d returns match, latencies %s" % (len(got), lat))
        return
    fail("unknown mode " + mode)


main()
