#!/usr/bin/env python3
"""arm-steps.py DIS TRACE START RET ISA - checks a stepi trace through
branches.c's walk() (tests/cross/armhf-cases.sh) against the program's
own code, as arm-linux-gnueabihf-objdump -d lists it (DIS).

TRACE holds gdb's "PC 0x..." lines, one per stepi from START (walk's
first instruction) until RET (the return address in main).  Each step
must go to the instruction after the one stepped (its length from the
listing) or, for an instruction that can write pc, somewhere it may go:
the target objdump names for a direct branch (b, bl, blx, cbz, cbnz),
anywhere for an indirect one (bx, blx rN, pop/ldm with pc, ldr pc,
data processing into pc, tbb/tbh); in a Thumb IT block, past the
block's instructions whose condition fails.  An unconditional branch must be
taken.  The trace must end at RET and take each branch form ISA's build
has in walk's reach.  Prints the forms taken; exits 1 with the first
wrong step."""
import re
import sys

dis_path, trace_path, start, ret, isa = sys.argv[1:6]
start, ret = int(start, 16), int(ret, 16)

insns = []			# (addr, mnemonic, operands)
line_re = re.compile(r"^\s*([0-9a-f]+):\t[0-9a-f ]+\t(\S+)\s*(.*)$")
for line in open(dis_path):
    m = line_re.match(line.rstrip("\n"))
    if m:
        insns.append((int(m.group(1), 16), m.group(2), m.group(3)))
after = {}
info = {}
# Thumb IT blocks: gdb's software single step (gdbserver's too) steps
# over the instructions of the block whose condition fails, so a step
# from the IT or from an instruction of its block may land on any later
# one of the block or on the first after it.
it_next = {}
for i, (a, mn, ops) in enumerate(insns):
    info[a] = (mn, ops)
    if i + 1 < len(insns):
        after[a] = insns[i + 1][0]
    if re.fullmatch(r"it[te]{0,3}", mn):
        k = len(mn) - 1
        block = [x[0] for x in insns[i:i + k + 2]]
        for j, b in enumerate(block[:-1]):
            it_next[b] = set(block[j + 1:])

CONDS = "eq ne cs hs cc lo mi pl vs vc hi ls ge lt gt le".split()


def base(mn):
    """mnemonic without .n/.w, and its condition if it has one"""
    mn = mn.split(".")[0]
    for stem in ("bl", "blx", "bx", "b", "cbz", "cbnz", "tbb", "tbh", "pop", "ldm",
                 "ldr", "add", "sub", "mov", "mvn", "orr", "and", "eor", "rsb", "adc",
                 "sbc", "bic", "ldmia", "ldmfd"):
        if mn == stem:
            return stem, ""
    for c in CONDS:
        if mn.endswith(c) and len(mn) > len(c):
            return mn[:-len(c)], c
    return mn, ""


def direct_target(ops):
    for tok in re.split(r"[ ,]+", ops):
        if re.fullmatch(r"[0-9a-f]+", tok):
            return int(tok, 16)
    return None


pcs = [start]
for line in open(trace_path):
    m = re.match(r"^PC (0x[0-9a-f]+)$", line.strip())
    if m:
        pcs.append(int(m.group(1), 16))
forms = set()
bad = []
for prev, cur in zip(pcs, pcs[1:]):
    if prev not in info:
        bad.append("step from %#x: not an instruction of the listing" % prev)
        break
    mn, ops = info[prev]
    stem, cond = base(mn)
    fall = after.get(prev)
    first = ops.split(",")[0].strip()
    writes_pc = False
    kind = None
    target = None
    if stem in ("b", "bl") or (stem == "blx" and direct_target(ops) is not None):
        kind = {"b": "b", "bl": "bl", "blx": "blx-imm"}[stem]
        if stem == "b" and cond:
            kind = "b<cond>"
        target = direct_target(ops)
    elif stem == "blx":
        kind = "blx-reg"
    elif stem == "bx":
        kind = "bx"
    elif stem in ("cbz", "cbnz"):
        kind = stem
        target = direct_target(ops.split(",", 1)[1])
    elif stem in ("tbb", "tbh"):
        kind = stem
    elif stem in ("pop", "ldm", "ldmia", "ldmfd") and re.search(r"\bpc\b", ops):
        kind = "pop-pc"
    elif stem == "ldr" and first == "pc":
        kind = "ldr-pc"
    elif first == "pc":
        kind = "dp-pc"
    unconditional = kind in ("b", "bl", "blx-imm", "blx-reg", "bx", "tbb", "tbh",
                             "pop-pc", "ldr-pc", "dp-pc") and not cond
    if cur == fall and not (unconditional and kind not in ("tbb", "tbh", "dp-pc", "ldr-pc")):
        continue		# fell through (or a table branch to its next slot)
    if kind is None and cur in it_next.get(prev, ()):
        continue		# over an IT block's instruction whose condition failed
    if kind is None:
        bad.append("%#x %s %s does not branch, but the step went to %#x (not %s)"
                   % (prev, mn, ops, cur, hex(fall) if fall else "?"))
        break
    if cur == fall and unconditional:
        bad.append("%#x %s %s is not conditional, but the step fell through to %#x"
                   % (prev, mn, ops, cur))
        break
    if target is not None and cur != target:
        bad.append("%#x %s %s goes to %#x, the step went to %#x" % (prev, mn, ops, target, cur))
        break
    forms.add(kind)
want = {"thumb": {"bl", "blx-imm", "blx-reg", "bx", "pop-pc", "tbb", "cbz", "b<cond>"},
        "arm": {"bl", "blx-imm", "blx-reg", "bx", "pop-pc", "dp-pc", "b<cond>"}}[isa]
if not bad and pcs[-1] != ret:
    bad.append("the trace ends at %#x after %d steps, not at the return address %#x"
               % (pcs[-1], len(pcs) - 1, ret))
if not bad and not want <= forms:
    bad.append("forms not taken: %s" % " ".join(sorted(want - forms)))
if bad:
    print(bad[0])
    sys.exit(1)
print("%d steps, taken: %s" % (len(pcs) - 1, " ".join(sorted(forms))))
