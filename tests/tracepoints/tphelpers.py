# tphelpers.py - gdb commands the tracepoint tests use to print collected
# values in a form the shell can compare with a program's ground truth.
#
#   tp-print SPEC...     one line "tpval KEY=VALUE ..." for the current context
#   tp-frames SPEC...    walk every trace frame (tfind start .. end) and print
#                        "tpframe frame=F tp=T pc=0x.. KEY=VALUE ..." per frame,
#                        then "tpframes count=N", then tfind none
#   tp-try COMMAND       run COMMAND; on a gdb error print "tperror: MESSAGE"
#                        instead of ending the batch script
#
# SPEC is KEY=EXPR, KEY=str:EXPR (a C string), KEY=hex:EXPR, KEY=fn:EXPR
# (the name of the function holding address EXPR) or KEY=lit:TEXT
# (TEXT itself, a label).  EXPR has no
# blanks.  VALUE is decimal for integers, 0x.. for pointers, a,b,c for
# arrays (recursively), {..} for structs, <unavailable> for data the frame
# did not collect, <error> for anything else (the message follows on a
# "tperror:" line).
import gdb


def _fmt(v):
    t = v.type.strip_typedefs()
    if t.code == gdb.TYPE_CODE_ARRAY:
        lo, hi = t.range()
        return ",".join(_fmt(v[i]) for i in range(lo, hi + 1))
    if t.code == gdb.TYPE_CODE_PTR:
        return "0x%x" % int(v)
    if t.code in (gdb.TYPE_CODE_INT, gdb.TYPE_CODE_ENUM, gdb.TYPE_CODE_BOOL,
                  gdb.TYPE_CODE_CHAR):
        return "%d" % int(v)
    return " ".join(str(v).split()).replace(" ", "")


def _value(spec):
    key, _, expr = spec.partition("=")
    kind = "plain"
    if expr.startswith("lit:"):
        return "%s=%s" % (key, expr[4:])
    for k in ("str", "hex", "fn"):
        if expr.startswith(k + ":"):
            kind, expr = k, expr[len(k) + 1:]
    try:
        v = gdb.parse_and_eval(expr)
        if kind == "str":
            s = v.string()
            out = s if s else '""'
        elif kind == "hex":
            out = "0x%x" % int(v)
        elif kind == "fn":
            b = gdb.block_for_pc(int(v))
            while b is not None and b.function is None:
                b = b.superblock
            out = b.function.name if b is not None else "??"

        else:
            out = _fmt(v)
    except gdb.error as e:
        msg = str(e)
        if "unavailable" in msg or "not available" in msg:
            out = "<unavailable>"
        else:
            print("tperror: %s: %s" % (expr, msg))
            out = "<error>"
    if "<unavailable>" in out:
        out = "<unavailable>"
    return "%s=%s" % (key, out)


class TpPrint(gdb.Command):
    """tp-print SPEC...: print collected values in the current context."""

    def __init__(self):
        super().__init__("tp-print", gdb.COMMAND_DATA)

    def invoke(self, arg, from_tty):
        print("tpval " + " ".join(_value(s) for s in arg.split()))


class TpFrames(gdb.Command):
    """tp-frames SPEC...: print values in every trace frame."""

    def __init__(self):
        super().__init__("tp-frames", gdb.COMMAND_DATA)

    def invoke(self, arg, from_tty):
        n = 0
        gdb.execute("tfind start", to_string=True)
        while int(gdb.parse_and_eval("$trace_frame")) != -1:
            f = int(gdb.parse_and_eval("$trace_frame"))
            tp = int(gdb.parse_and_eval("$tracepoint"))
            try:
                pc = "0x%x" % int(gdb.parse_and_eval("$pc"))
            except gdb.error:
                pc = "<unavailable>"
            vals = " ".join(_value(s) for s in arg.split())
            print("tpframe frame=%d tp=%d pc=%s %s" % (f, tp, pc, vals))
            n += 1
            gdb.execute("tfind", to_string=True)
        print("tpframes count=%d" % n)
        gdb.execute("tfind none", to_string=True)


class TpTry(gdb.Command):
    """tp-try COMMAND: run COMMAND, report a gdb error instead of stopping."""

    def __init__(self):
        super().__init__("tp-try", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        try:
            gdb.execute(arg, from_tty)
        except gdb.error as e:
            print("tperror: %s" % e)


TpPrint()
TpFrames()
TpTry()
