#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""torch-flex (tools/torch-flex) against PyTorch's CPU results, as TAP.

Run in the VM by tests/torch/run.sh (make check-torch), with Debian's
python3-torch (PyTorch 1.13, /usr/bin/python3) and the extension on
PYTHONPATH:

    PYTHONPATH=build/torch-flex /usr/bin/python3 tests/torch/test_torch_flex.py

Every per-device case runs on every device torch_flex.device_count()
reports (the lane enables one VF first: the PF is device 0, the VF device
1); a case's name starts with its device ("pf: ", "vf0: ", or the index).
A few cases run once ("all: "): the first CPU fallback's one-time warning
(it must come first: TORCH_WARN_ONCE fires once per process), the
enumeration, a copy between two devices, the MLP example of
Documentation/flex/examples/mlp.py and the RFC's Workflow 5 (a 4096x1024 @
1024x1024 float32 matmul, tiled on the device; it comes last).

Comparisons, per dtype, with the CPU as the reference:
  - exact (equal values, NaN equal to NaN) for integers, and for copies,
    fill, add, mul and relu of floats: the device computes each in binary32
    and rounds the result once to the tensor's type, which for operands of
    these types is what the CPU computes;
  - for mm, addmm, matmul and Linear, the bound of check_matmul().
Each failure prints what was expected and what came, as "# " lines.

Options: --match SUBSTR (only cases whose name contains it; repeatable),
--list (print the names), --no-big (leave out Workflow 5), --timeout SEC
(watchdog per case, default 300), --cases FILE (write "N<TAB>name" for
every case before running: run.sh names the case a crash happened in).
Only the standard library, torch and torch_flex are used.
"""

import argparse
import contextlib
import copy
import faulthandler
import io
import math
import os
import re
import runpy
import sys
import time
import traceback
import unittest
import warnings
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
MLP_EXAMPLE = os.path.join(HERE, "..", "..", "Documentation", "flex", "examples", "mlp.py")
DEVICE_TYPE = "privateuseone"  # PyTorch 1.13 cannot rename PrivateUse1
DEFAULT_TIMEOUT = 300          # s, per case; import torch alone takes ~60 s in the guest
BIG_TIMEOUT = 900

torch = None       # imported by load(), so that a failed import is a TAP failure
torch_flex = None
F = None
IMPORT_SECONDS = {}


def load():
    """Import torch and torch_flex; return None or the error text."""
    global torch, torch_flex, F
    try:
        t0 = time.monotonic()
        import torch as _torch
        IMPORT_SECONDS["torch"] = time.monotonic() - t0
        torch = _torch
        import torch.nn.functional as _F
        F = _F
    except Exception:
        return "import torch failed:\n" + traceback.format_exc()
    try:
        t0 = time.monotonic()
        import torch_flex as _tf
        IMPORT_SECONDS["torch_flex"] = time.monotonic() - t0
        torch_flex = _tf
    except Exception:
        return ("import torch_flex failed (PYTHONPATH=%s):\n" % os.environ.get("PYTHONPATH", "")
                + traceback.format_exc())
    return None


# ---------------------------------------------------------------------------
# dtypes and data

def dtypes():
    f32, bf16, f16, i32 = torch.float32, torch.bfloat16, torch.float16, torch.int32
    return f32, bf16, f16, i32


def dname(dtype):
    return str(dtype).replace("torch.", "")


def unit_roundoff(dtype):
    """u: the relative error of one rounding to nearest into dtype."""
    return {torch.float32: 2.0 ** -24, torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -11}[dtype]


def half_subnormal_step(dtype):
    """The most a result rounded into dtype's subnormal range is off, absolutely."""
    return {torch.float32: 2.0 ** -150, torch.bfloat16: 2.0 ** -134, torch.float16: 2.0 ** -25}[dtype]


def rand(tc, shape, dtype, lo=-8, hi=9):
    """Random CPU data: N(0, 1) rounded to a float dtype, or integers in [lo, hi)."""
    if dtype.is_floating_point:
        return torch.randn(shape, generator=tc.gen, dtype=torch.float32).to(dtype)
    return torch.randint(lo, hi, shape, generator=tc.gen, dtype=dtype)


def specials(dtype):
    """Values worth a case of their own: zeros, infinities, NaN, extremes, a subnormal."""
    if dtype.is_floating_point:
        fi = torch.finfo(dtype)
        sub = 1e-6 if dtype == torch.float16 else 1e-40
        vals = [0.0, -0.0, 1.0, -1.5, math.inf, -math.inf, math.nan, sub, -sub, fi.max, -fi.max,
                fi.tiny, 0.1, 3.0]
    else:
        info = torch.iinfo(dtype)
        vals = [0, 1, -1, info.max, info.min, 12345, -54321, 7, -7, 100, 2, -2, 3, 0]
    return torch.tensor(vals, dtype=dtype)


def with_specials(tc, shape, dtype):
    """rand() with row 0 holding specials() (as far as it fits)."""
    t = rand(tc, shape, dtype)
    sp = specials(dtype)
    k = min(sp.numel(), shape[-1])
    t.view(-1, shape[-1])[0, :k] = sp[:k]
    return t


def cpu_ref(fn, *args, dtype=None):
    """fn on the CPU in the tensors' own dtype; where the CPU has no kernel for
    that dtype (float16 relu, mm in 1.13), in float32 rounded once to it."""
    try:
        return fn(*args)
    except RuntimeError as e:
        if "not implemented for" not in str(e):
            raise
        up = [a.float() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]
        out = fn(*up)
        return out.to(dtype or next(a.dtype for a in args if isinstance(a, torch.Tensor)))


# ---------------------------------------------------------------------------
# checks

def fmt(v):
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return repr(v)
        return "%.9g (%s)" % (v, v.hex())
    return repr(v)


def to_cpu(t):
    return t if t.device.type == "cpu" else t.cpu()


def check_meta(tc, got, expected, what):
    if got.dtype != expected.dtype:
        tc.fail("%s: expected dtype %s, got %s" % (what, dname(expected.dtype), dname(got.dtype)))
    if tuple(got.shape) != tuple(expected.shape):
        tc.fail("%s: expected shape %s, got %s" % (what, tuple(expected.shape), tuple(got.shape)))


def assert_on(tc, t, dev, what):
    if t.device != dev:
        tc.fail("%s: expected a tensor on %s, got one on %s" % (what, dev, t.device))


def assert_equal(tc, got, expected, what):
    """got (any device) equals the CPU tensor expected: dtype, shape and every
    value (NaN equals NaN; -0.0 equals 0.0)."""
    g = to_cpu(got)
    check_meta(tc, g, expected, what)
    if g.numel() == 0:
        return
    if g.is_floating_point():
        gd, ed = g.double(), expected.double()
        same = (gd == ed) | (torch.isnan(gd) & torch.isnan(ed))
    else:
        gd, ed = g.long(), expected.long()
        same = gd == ed
    if bool(same.all()):
        return
    bad = (~same).nonzero()
    i = tuple(bad[0].tolist())
    tc.fail("%s: %d of %d elements differ (exact comparison)\n"
            "first at %s: expected %s, got %s"
            % (what, bad.shape[0], g.numel(), list(i), fmt(ed[i].item()), fmt(gd[i].item())))


def check_matmul(tc, got, a, b, bias=None, relu=False, what="matmul"):
    """got (the device's result) against the CPU's float64 result of
    [relu](a @ b [+ bias]) for CPU inputs a, b, bias in the tensors' dtype
    (b as multiplied: K x N; batched shapes as torch.matmul takes them).

    Integers: exact. Floats, elementwise, with cpu the float64 result (exact
    but for 2^-53 relative: float64 holds every product of these inputs):

        |dev - cpu| <= K * 2^-24 * (|A| @ |B|) + u * |cpu|

    with u = 2^-24 (float32), 2^-8 (bfloat16), 2^-11 (float16). The first
    term is the accumulation in binary32 (K products and sums, each rounded:
    the standard bound, to first order), the second the one rounding of each
    element to the tensor's type. With a bias it is one more term of the
    sum: K + 1, and |bias| added to |A| @ |B|. relu is exact and moves no
    value further from the reference, so the bound of the pre-activation
    holds after it. One addition to the bound as stated: half the type's
    subnormal step (2^-25 for float16), which is what rounding into the
    subnormal range can cost beyond u * |cpu|; it only matters for float16
    results below 6.1e-5. |A| @ |B| is computed in float64 on the CPU.

    Why float64 and not the CPU's result in the tensor's dtype: PyTorch
    1.13's CPU bfloat16 mm misses this bound itself (7x13 @ 13x5 of N(0, 1)
    data: results more than one bfloat16 ulp from the exact value, so it
    rounds along the way), and it has no float16 mm at all.
    """
    dtype = a.dtype
    g = to_cpu(got)
    if not dtype.is_floating_point:
        def ref(x, y, z):
            r = torch.matmul(x, y)
            if z is not None:
                r = r + z
            return torch.relu(r) if relu else r
        assert_equal(tc, g, ref(a, b, bias), what)
        return
    A, B = a.double(), b.double()
    ref = torch.matmul(A, B)
    absab = torch.matmul(A.abs(), B.abs())
    k = a.shape[-1]
    if bias is not None:
        ref = ref + bias.double()
        absab = absab + bias.double().abs()
        k += 1
    u = unit_roundoff(dtype)
    tol = k * 2.0 ** -24 * absab + u * ref.abs() + half_subnormal_step(dtype)
    if relu:
        ref = ref.clamp_min(0)
    check_meta(tc, g, ref.to(dtype), what)
    if g.numel() == 0:
        return
    gd = g.double()
    err = (gd - ref).abs()
    bad = ~(err <= tol)  # NaN is bad too
    if not bool(bad.any()):
        return
    excess = torch.where(bad, (err - tol).nan_to_num(nan=math.inf), torch.full_like(err, -1.0))
    i = tuple((excess == excess.max()).nonzero()[0].tolist())
    tc.fail("%s: %d of %d elements outside |dev - cpu| <= K*2^-24*(|A|@|B|) + u*|cpu| "
            "(K=%d, u=2^%d; cpu: the CPU's float64 result)\n"
            "worst at %s: expected (cpu) %s, got (device) %s, |dev - cpu| = %.6g > bound %.6g\n"
            "(|A|@|B| there: %.6g)"
            % (what, int(bad.sum()), g.numel(), k, int(round(math.log2(u))), list(i),
               fmt(ref[i].item()), fmt(gd[i].item()), err[i].item(), tol[i].item(),
               absab[i].item()))


# ---------------------------------------------------------------------------
# the TAP runner

class Case(unittest.TestCase):
    """One TAP case: fn(case), on device `index` (None: a case run once)."""

    def __init__(self, name, fn, index=None, label="all", timeout=DEFAULT_TIMEOUT):
        super().__init__("runTest")
        self.name = name
        self.fn = fn
        self.index = index
        self.label = label
        self.timeout = timeout
        self.notes = []

    @property
    def dev(self):
        return torch.device(DEVICE_TYPE, self.index if self.index is not None else 0)

    def title(self):
        return "%s: %s" % (self.label, self.name)

    def id(self):
        return self.title()

    def __str__(self):
        return self.title()

    def shortDescription(self):
        return None

    # Every case is its own: TestCase compares class and method name.
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def note(self, text):
        """A diagnostic printed after the case's result line."""
        self.notes.append(str(text))

    def setUp(self):
        # The same data on every device: seeded by the case's name alone.
        self.gen = torch.Generator().manual_seed(zlib.crc32(self.name.encode()))

    def runTest(self):
        self.fn(self)


class TapResult(unittest.TestResult):
    """Prints each case as it ends: `ok N - name`, `not ok N - name` and
    `# ` diagnostics, flushed at once (a crash keeps what came before)."""

    def __init__(self, out):
        super().__init__()
        self.out = out
        self.n = 0
        self.counts = {"passed": 0, "failed": 0, "skipped": 0}
        self.start = 0.0

    def emit(self, line):
        self.out.write(line + "\n")
        self.out.flush()

    def diag(self, text):
        for line in str(text).rstrip("\n").split("\n"):
            self.emit("# " + line if line else "#")

    def startTest(self, test):
        super().startTest(test)
        self.start = time.monotonic()
        # A hung case (a stream that never completes) must not hang the lane:
        # print the Python stacks and exit; run.sh then fails this case.
        faulthandler.dump_traceback_later(test.timeout, exit=True)

    def stopTest(self, test):
        faulthandler.cancel_dump_traceback_later()
        super().stopTest(test)

    def _done(self, test, ok, directive="", err=None):
        self.n += 1
        took = time.monotonic() - self.start
        self.emit("%s %d - %s%s" % ("ok" if ok else "not ok", self.n, test.title(), directive))
        if err is not None:
            self.diag(self._explain(err))
        for n in test.notes:
            self.diag(n)
        if took >= 2.0:
            self.diag("time: %.1f s" % took)

    def _explain(self, err):
        etype, value, tb = err
        frames = [f for f in traceback.extract_tb(tb) if f.filename == __file__]
        where = ""
        if frames:
            f = frames[-1]
            where = "\nat %s:%d in %s: %s" % (os.path.basename(f.filename), f.lineno, f.name,
                                                (f.line or "").strip())
        if issubclass(etype, AssertionError):
            return str(value) + where
        # PyTorch's dispatcher errors list every backend: keep their start.
        msg = "\n".join(str(value).split("\n")[:8])
        frames = [f for f in traceback.extract_tb(tb) if "/unittest/" not in f.filename]
        text = "".join(traceback.format_list(frames[-5:]))
        return "unexpected %s: %s%s\n%s" % (etype.__name__, msg, where, text)

    def addSuccess(self, test):
        super().addSuccess(test)
        self.counts["passed"] += 1
        self._done(test, True)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.counts["failed"] += 1
        self._done(test, False, err=err)

    def addError(self, test, err):
        super().addError(test, err)
        self.counts["failed"] += 1
        self._done(test, False, err=err)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.counts["skipped"] += 1
        self._done(test, True, directive=" # SKIP " + reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._done(test, False, directive=" # TODO expected failure")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self.counts["failed"] += 1
        self._done(test, False, err=None)


# ---------------------------------------------------------------------------
# cases run once

def t_fallback_warns_once(tc):
    """The first operator without a device kernel runs on the CPU, gives the
    CPU's result on the device, and warns once (TORCH_WARN_ONCE)."""
    x = rand(tc, (5, 7), torch.float32)
    xd = x.to(tc.dev)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        y = torch.sin(xd)
        first = [w for w in rec if issubclass(w.category, UserWarning)]
        y2 = torch.sin(xd)
        second = [w for w in rec if issubclass(w.category, UserWarning)][len(first):]
    assert_on(tc, y, tc.dev, "torch.sin(device tensor)")
    assert_equal(tc, y, torch.sin(x), "torch.sin(device tensor) against the CPU")
    assert_equal(tc, y2, torch.sin(x), "torch.sin(device tensor), again")
    if not first:
        tc.fail("the first CPU fallback (torch.sin on %s): expected a UserWarning, got none "
                "(did an earlier operator of this process already use the fallback?)" % tc.dev)
    if second:
        tc.fail("the same fallback again: expected no second warning (TORCH_WARN_ONCE), got: %s"
                % "; ".join(str(w.message) for w in second))
    tc.note("the warning: %s" % first[0].message)


def expected_functions():
    """The flex functions torch_flex should enumerate, as its rule says:
    FLEX_DEVICE's node alone, else every PF then its enabled VFs, from sysfs."""
    env = os.environ.get("FLEX_DEVICE")
    if env:
        return [os.path.basename(env)]
    try:
        names = os.listdir("/sys/class/flex")
    except OSError:
        return []
    found = []
    for n in names:
        m = re.fullmatch(r"flex(\d+)(?:vf(\d+))?", n)
        if m:
            found.append(((int(m.group(1)), -1 if m.group(2) is None else int(m.group(2))), n))
    return [n for _, n in sorted(found)]


def device_labels(count):
    names = expected_functions()
    if len(names) != count:
        return [str(i) for i in range(count)], names
    pfs = [n for n in names if "vf" not in n]
    labels = []
    for n in names:
        m = re.fullmatch(r"flex(\d+)(?:vf(\d+))?", n)
        if len(pfs) > 1:
            labels.append(n)
        elif m.group(2) is None:
            labels.append("pf")
        else:
            labels.append("vf" + m.group(2))
    return labels, names


def t_enumeration(tc):
    if not torch_flex.is_available():
        tc.fail("torch_flex.is_available(): expected True, got False")
    names = expected_functions()
    n = torch_flex.device_count()
    if n != len(names):
        tc.fail("torch_flex.device_count(): expected %d (%s), got %d"
                % (len(names), ", ".join(names) or "no flex function in /sys/class/flex", n))
    tc.note("devices: " + ", ".join("%d=/dev/%s" % (i, nm) for i, nm in enumerate(names)))


def t_cross_device_copy(tc):
    """A copy from device 0 to device 1 and back (two functions: PF and VF)."""
    d0, d1 = torch.device(DEVICE_TYPE, 0), torch.device(DEVICE_TYPE, 1)
    x = rand(tc, (33, 17), torch.float32)
    x0 = x.to(d0)
    x1 = x0.to(d1)
    assert_on(tc, x1, d1, "x.to(device 1) from device 0")
    assert_equal(tc, x1, x, "device 0 -> device 1 with .to()")
    y1 = torch.empty(33, 17, device=d1)
    y1.copy_(x0)
    assert_equal(tc, y1, x, "device 0 -> device 1 with copy_()")
    z0 = torch.empty(17, 33, device=d0)
    z0.copy_(y1.t())
    assert_equal(tc, z0, x.t().contiguous(), "device 1 (transposed view) -> device 0")


def t_mlp_example(tc):
    """Documentation/flex/examples/mlp.py, in this process (one import torch)."""
    path = os.path.normpath(MLP_EXAMPLE)
    if not os.path.exists(path):
        tc.skipTest("no %s" % path)
    mod = runpy.run_path(path, run_name="flex_mlp_example")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = mod["main"](["--device", str(tc.index or 0)])
    out = buf.getvalue()
    for line in out.splitlines():
        if line.startswith(("bench:", "match:", "max |device - cpu|")):
            tc.note(line)
    if rc != 0:
        tc.fail("mlp.py: expected exit status 0 (device matches the CPU), got %s; its output:\n%s"
                % (rc, out))


BIG_FULL = False  # --big-full


def check_matmul_big(tc, got, a, b, what):
    """check_matmul() for a product too large to redo whole in float64 in the
    guest: that is two 4096x1024x1024 float64 gemms, minutes under TCG, whose
    floating point is emulated. Instead, for float32 a (M x K) and b (K x N):

      - rows: check_matmul()'s bound, elementwise, on every row at either
        edge of each 64-row block and on a stride-97 sample (170 of 4096
        rows, all N columns);
      - checksums: the sum of each column and of each row of the result,
        against (1^T A) B and A (B 1) in float64. Summing the elementwise
        bound, with |cpu| <= |A| @ |B| and u = 2^-24, a correct result has
        |sum(dev) - sum(cpu)| <= (K + 1) * 2^-24 * (sum of |A| @ |B|) over
        the column (row): a misplaced, missing or twice-accumulated tile
        anywhere breaks that by far.

    --big-full checks every element instead."""
    g = to_cpu(got)
    check_meta(tc, g, torch.empty(a.shape[0], b.shape[1], dtype=a.dtype), what)
    if BIG_FULL:
        check_matmul(tc, g, a, b, what=what)
        return
    m, k = a.shape
    rows = sorted({r for r in range(m) if r % 64 in (0, 63)} | set(range(37, m, 97)))
    idx = torch.tensor(rows)
    check_matmul(tc, g.index_select(0, idx), a.index_select(0, idx), b,
                 what="%s, rows %s" % (what, "0, 63, 64, 127, ... and 37 + 97k"))
    A, B, G = a.double(), b.double(), g.double()
    absa, absb = A.abs(), B.abs()
    eps = (k + 1) * 2.0 ** -24
    # Columns: 1^T (A B) = (1^T A) B.
    col_ref = A.sum(0) @ B
    col_tol = eps * (absa.sum(0) @ absb)
    col_err = (G.sum(0) - col_ref).abs()
    # Rows: (A B) 1 = A (B 1).
    row_ref = A @ B.sum(1)
    row_tol = eps * (absa @ absb.sum(1))
    row_err = (G.sum(1) - row_ref).abs()
    for name, err, tol, ref, gs in (("column", col_err, col_tol, col_ref, G.sum(0)),
                                    ("row", row_err, row_tol, row_ref, G.sum(1))):
        bad = ~(err <= tol)
        if bool(bad.any()):
            j = int(torch.where(bad, (err - tol).nan_to_num(nan=math.inf),
                                torch.full_like(err, -1.0)).argmax())
            tc.fail("%s: %d %s sums outside |sum(dev) - sum(cpu)| <= (K+1)*2^-24*sum(|A|@|B|) "
                    "(K=%d)\nworst: %s %d: expected (cpu, float64) %s, got (device) %s, "
                    "|diff| = %.6g > bound %.6g"
                    % (what, int(bad.sum()), name, k, name, j, fmt(ref[j].item()),
                       fmt(gs[j].item()), err[j].item(), tol[j].item()))
    tc.note("checked: every element of %d rows against the bound, every row and column sum"
            % len(rows))


def t_workflow5(tc):
    """The RFC's Workflow 5: tensor_a [4096, 1024] and b [1024, 1024] to the
    device, their product (tiled on the device), the result back, against
    the CPU with check_matmul()'s bound (check_matmul_big())."""
    dev, i = tc.dev, tc.index or 0
    a = rand(tc, (4096, 1024), torch.float32)
    b = rand(tc, (1024, 1024), torch.float32)
    t0 = time.monotonic()
    ad, bd = a.to(dev), b.to(dev)
    torch_flex.synchronize(i)
    t1 = time.monotonic()
    rd = torch.matmul(ad, bd)
    torch_flex.synchronize(i)
    t2 = time.monotonic()
    r = rd.cpu()
    t3 = time.monotonic()
    check_matmul_big(tc, r, a, b, what="4096x1024 @ 1024x1024 float32")
    t4 = time.monotonic()
    tc.note("to the device %.1f s, matmul %.1f s, back %.1f s, CPU float64 check %.1f s"
            % (t1 - t0, t2 - t1, t3 - t2, t4 - t3))
    tc.note("peak memory_allocated %d bytes" % torch_flex.max_memory_allocated(i))


# ---------------------------------------------------------------------------
# per-device cases

def t_device_api(tc):
    i = tc.index
    if torch_flex.device(i) != torch.device(DEVICE_TYPE, i):
        tc.fail("torch_flex.device(%d): expected %s, got %r"
                % (i, torch.device(DEVICE_TYPE, i), torch_flex.device(i)))
    old = torch_flex.current_device()
    try:
        torch_flex.set_device(i)
        if torch_flex.current_device() != i:
            tc.fail("current_device() after set_device(%d): expected %d, got %r"
                    % (i, i, torch_flex.current_device()))
        x = torch.empty(3, device=torch_flex.device(i))
        assert_on(tc, x, tc.dev, "torch.empty(3, device=torch_flex.device(%d))" % i)
        x.fill_(2.0)
        torch_flex.synchronize()
        torch_flex.synchronize(i)
        assert_equal(tc, x, torch.full((3,), 2.0), "fill_ after set_device")
    finally:
        torch_flex.set_device(old)


def t_copy_roundtrip(tc, dtype):
    dev = tc.dev
    x = with_specials(tc, (37, 29), dtype)
    xd = x.to(dev)
    assert_on(tc, xd, dev, "x.to(device)")
    if not xd.is_contiguous():
        tc.fail("x.to(device) of a contiguous x: expected contiguous, got strides %s" % (xd.stride(),))
    assert_equal(tc, xd, x, "host -> device -> host (.to, .cpu)")
    e = torch.empty(37, 29, dtype=dtype, device=dev)
    e.copy_(x)
    h = torch.empty_like(x)
    h.copy_(e)
    assert_equal(tc, h, x, "copy_ host -> device, copy_ device -> host")
    assert_equal(tc, x.t().to(dev), x.t(), "a transposed host tensor to the device and back")
    es = torch.empty_strided((4, 6), (1, 4), dtype=dtype, device=dev)
    if es.stride() != (1, 4) or tuple(es.shape) != (4, 6):
        tc.fail("empty_strided((4, 6), (1, 4)): got shape %s strides %s"
                % (tuple(es.shape), es.stride()))
    es.copy_(x[:4, :6])
    assert_equal(tc, es, x[:4, :6], "copy_ into an empty_strided (column-major) tensor")
    for n in (1, 3, 5):  # sizes that are no multiple of anything
        s = rand(tc, (n,), dtype)
        assert_equal(tc, s.to(dev), s, "%d element(s) there and back" % n)
    lst = [[1, 2, 3], [4, 5, 6]]
    assert_equal(tc, torch.tensor(lst, dtype=dtype, device=dev), torch.tensor(lst, dtype=dtype),
                 "torch.tensor(list, device=...)")


def t_fill_zero(tc, dtype):
    dev = tc.dev
    if dtype.is_floating_point:
        vals = [0.1, -2.5, 1e-40, math.inf, math.nan, 3.0]
        if dtype == torch.float16:
            vals += [65504.0, 1e-6]
    else:
        vals = [0, -7, 2 ** 31 - 1, -2 ** 31, 3]
    for v in vals:
        d = torch.empty(5, 37, dtype=dtype, device=dev)
        d.fill_(v)
        assert_equal(tc, d, torch.empty(5, 37, dtype=dtype).fill_(v), "fill_(%r)" % v)
        d.zero_()
        assert_equal(tc, d, torch.zeros(5, 37, dtype=dtype), "zero_() after fill_(%r)" % v)
    assert_equal(tc, torch.zeros(3, 5, dtype=dtype, device=dev), torch.zeros(3, 5, dtype=dtype),
                 "torch.zeros")
    assert_equal(tc, torch.ones(3, 5, dtype=dtype, device=dev), torch.ones(3, 5, dtype=dtype),
                 "torch.ones")
    assert_equal(tc, torch.full((4, 3), vals[1], dtype=dtype, device=dev),
                 torch.full((4, 3), vals[1], dtype=dtype), "torch.full")
    base = rand(tc, (6, 9), dtype)
    d, m = base.to(dev), base.clone()
    d[:, 1:4].fill_(vals[0])
    m[:, 1:4].fill_(vals[0])
    d.t()[6:8].zero_()
    m.t()[6:8].zero_()
    d[2:].narrow(1, 4, 2).fill_(vals[-1])
    m[2:].narrow(1, 4, 2).fill_(vals[-1])
    assert_equal(tc, d, m, "fill_ and zero_ through views (columns, t(), narrow)")


def t_binary(tc, dtype, op):
    dev = tc.dev
    f = {"add": torch.add, "mul": torch.mul}[op]
    a = with_specials(tc, (5, 40), dtype)
    b = with_specials(tc, (5, 40), dtype)
    b[0] = b[0].roll(3)  # specials against other specials: inf - inf, 0 * inf, max + max
    ad, bd = a.to(dev), b.to(dev)
    exp = cpu_ref(f, a, b)
    r = f(ad, bd)
    assert_on(tc, r, dev, "torch.%s" % op)
    assert_equal(tc, r, exp, "torch.%s(a, b)" % op)
    assert_equal(tc, ad + bd if op == "add" else ad * bd, exp, "the operator")
    o = torch.empty(5, 40, dtype=dtype, device=dev)
    ret = f(ad, bd, out=o)
    assert_equal(tc, o, exp, "torch.%s(a, b, out=o)" % op)
    if ret.data_ptr() != o.data_ptr():
        tc.fail("torch.%s(out=o): expected o back" % op)
    c = ad.clone()
    getattr(c, op + "_")(bd)
    assert_equal(tc, c, exp, "a.%s_(b)" % op)
    assert_equal(tc, f(ad, bd[1]), cpu_ref(f, a, b[1]), "broadcast of a row: torch.%s(a, b[1])" % op)
    s = 3 if not dtype.is_floating_point else 0.5
    assert_equal(tc, f(ad, s), cpu_ref(f, a, s, dtype=dtype), "torch.%s(a, %r)" % (op, s))
    if op == "add":  # alpha 2: an exact scaling, so still one rounding
        assert_equal(tc, torch.add(ad[1:], bd[1:], alpha=2), torch.add(a[1:], b[1:], alpha=2),
                     "torch.add(a, b, alpha=2)")
    v = ad.clone()
    getattr(v[:, 5:20], op + "_")(bd[:, 20:35])
    m = a.clone()
    m[:, 5:20] = cpu_ref(f, a[:, 5:20], b[:, 20:35])
    assert_equal(tc, v, m, "in place on a view: a[:, 5:20].%s_(b[:, 20:35])" % op)


def t_relu(tc, dtype):
    dev = tc.dev
    x = with_specials(tc, (7, 33), dtype)
    xd = x.to(dev)
    exp = cpu_ref(torch.relu, x)
    assert_equal(tc, torch.relu(xd), exp, "torch.relu")
    assert_equal(tc, xd.relu(), exp, "x.relu()")
    assert_equal(tc, F.relu(xd), exp, "F.relu")
    assert_equal(tc, torch.nn.ReLU()(xd), exp, "nn.ReLU()")
    c = xd.clone()
    c.relu_()
    assert_equal(tc, c, exp, "x.relu_()")
    c = xd.clone()
    F.relu(c, inplace=True)
    assert_equal(tc, c, exp, "F.relu(x, inplace=True)")
    c = xd.clone()
    c[:, 3:9].relu_()
    m = x.clone()
    m[:, 3:9] = cpu_ref(torch.relu, x[:, 3:9])
    assert_equal(tc, c, m, "x[:, 3:9].relu_()")
    assert_equal(tc, torch.relu(xd.t()), cpu_ref(torch.relu, x.t()), "torch.relu(x.t())")


def mm_case(tc, dtype, m, k, n):
    a = rand(tc, (m, k), dtype)
    b = rand(tc, (k, n), dtype)
    r = torch.mm(a.to(tc.dev), b.to(tc.dev))
    assert_on(tc, r, tc.dev, "torch.mm")
    check_matmul(tc, r, a, b, what="torch.mm %dx%d @ %dx%d" % (m, k, k, n))


def t_mm(tc, dtype, m, k, n):
    mm_case(tc, dtype, m, k, n)


def t_addmm(tc, dtype, m, k, n, bias_1d):
    dev = tc.dev
    a = rand(tc, (m, k), dtype)
    b = rand(tc, (k, n), dtype)
    bias = rand(tc, (n,) if bias_1d else (m, n), dtype)
    ad, bd, cd = a.to(dev), b.to(dev), bias.to(dev)
    what = "torch.addmm(%s bias, %dx%d, %dx%d)" % ("1-D" if bias_1d else "2-D", m, k, k, n)
    check_matmul(tc, torch.addmm(cd, ad, bd), a, b, bias=bias, what=what)
    o = torch.empty(m, n, dtype=dtype, device=dev)
    torch.addmm(cd, ad, bd, out=o)
    check_matmul(tc, o, a, b, bias=bias, what=what + " out=")
    if not bias_1d:
        c = cd.clone()
        c.addmm_(ad, bd)
        check_matmul(tc, c, a, b, bias=bias, what="c.addmm_(a, b)")


def t_matmul(tc, dtype):
    dev = tc.dev
    a = rand(tc, (7, 13), dtype)
    b = rand(tc, (13, 5), dtype)
    ad, bd = a.to(dev), b.to(dev)
    check_matmul(tc, torch.matmul(ad, bd), a, b, what="torch.matmul 2-D 7x13 @ 13x5")
    check_matmul(tc, ad @ bd, a, b, what="a @ b")
    a3 = rand(tc, (3, 7, 13), dtype)
    b3 = rand(tc, (3, 13, 5), dtype)
    a3d, b3d = a3.to(dev), b3.to(dev)
    check_matmul(tc, torch.matmul(a3d, b3d), a3, b3, what="torch.matmul 3x7x13 @ 3x13x5")
    check_matmul(tc, torch.bmm(a3d, b3d), a3, b3, what="torch.bmm 3x7x13 @ 3x13x5")
    a4 = rand(tc, (2, 33, 20), dtype)
    b4 = rand(tc, (20, 9), dtype)
    check_matmul(tc, torch.matmul(a4.to(dev), b4.to(dev)), a4, b4,
                 what="torch.matmul 2x33x20 @ 20x9")


def make_linear(tc, dtype, fin, fout):
    lin = torch.nn.Linear(fin, fout)
    with torch.no_grad():
        lin.weight.copy_(rand(tc, (fout, fin), torch.float32) * 0.25)
        lin.bias.copy_(rand(tc, (fout,), torch.float32))
    return lin.to(dtype)


def t_linear_relu(tc, dtype, grad=False):
    dev = tc.dev
    lin = make_linear(tc, dtype, 13, 7)
    model = torch.nn.Sequential(copy.deepcopy(lin), torch.nn.ReLU()).to(dev)
    for p in model.parameters():
        assert_on(tc, p, dev, "a parameter after model.to(device)")
    w, bias = lin.weight.detach(), lin.bias.detach()
    x = rand(tc, (10, 13), dtype)
    with contextlib.nullcontext() if grad else torch.no_grad():
        out = model(x.to(dev))
        if grad:
            if not out.requires_grad:
                tc.fail("Linear forward with grad enabled: expected an output that requires grad")
            out = out.detach()
        check_matmul(tc, out, x, w.t(), bias=bias, relu=True,
                     what="Sequential(Linear(13, 7), ReLU) on 10x13")
        if grad:
            x3 = rand(tc, (2, 5, 13), dtype)
            out3 = model(x3.to(dev)).detach()
            check_matmul(tc, out3, x3, w.t(), bias=bias, relu=True,
                         what="Sequential(Linear(13, 7), ReLU) on 2x5x13")


def t_views_as_inputs(tc, dtype):
    dev = tc.dev
    x = rand(tc, (8, 12), dtype)
    y = rand(tc, (12, 10), dtype)
    xd, yd = x.to(dev), y.to(dev)
    check_matmul(tc, torch.mm(xd[1:, 2:9], yd[3:10, :]), x[1:, 2:9], y[3:10, :],
                 what="mm(x[1:, 2:9], y[3:10, :])")
    check_matmul(tc, torch.mm(xd.t()[:5], xd[:, :3]), x.t()[:5], x[:, :3],
                 what="mm(x.t()[:5], x[:, :3])")
    asd = torch.as_strided(xd, (3, 4), (12, 1), 1)
    ash = torch.as_strided(x, (3, 4), (12, 1), 1)
    check_matmul(tc, torch.mm(asd, yd[:4, :5]), ash, y[:4, :5],
                 what="mm(as_strided(x, (3, 4), (12, 1), 1), y[:4, :5])")
    check_matmul(tc, torch.mm(yd.narrow(1, 2, 6).t(), yd.narrow(1, 1, 3)),
                 y.narrow(1, 2, 6).t(), y.narrow(1, 1, 3), what="mm(y.narrow(1, 2, 6).t(), ...)")
    assert_equal(tc, torch.add(xd[:, 2:5], xd[:, 5:8]), cpu_ref(torch.add, x[:, 2:5], x[:, 5:8]),
                 "add(x[:, 2:5], x[:, 5:8])")
    assert_equal(tc, torch.mul(xd.transpose(0, 1), yd[:, :8]),
                 cpu_ref(torch.mul, x.transpose(0, 1), y[:, :8]), "mul(x.transpose(0, 1), y[:, :8])")
    assert_equal(tc, torch.relu(xd.narrow(0, 2, 4)), cpu_ref(torch.relu, x.narrow(0, 2, 4)),
                 "relu(x.narrow(0, 2, 4))")
    assert_equal(tc, torch.add(xd.view(4, 24), xd.reshape(4, 24)),
                 cpu_ref(torch.add, x.view(4, 24), x.reshape(4, 24)), "add(x.view(4, 24), x.reshape(4, 24))")
    assert_equal(tc, torch.relu(xd[1:]), cpu_ref(torch.relu, x[1:]), "relu(x[1:])")
    assert_equal(tc, torch.as_strided(xd, (2, 3), (24, 2), 5),
                 torch.as_strided(x, (2, 3), (24, 2), 5), "as_strided(x, (2, 3), (24, 2), 5) read back")
    # A reshape of a contiguous tensor is a view: a write through it shows in x.
    xd.reshape(96)[:12].zero_()
    xd.view(8, 12)[7].fill_(1)
    m = x.clone()
    m[0] = 0
    m[7] = 1
    assert_equal(tc, xd, m, "writes through x.reshape(96) and x.view(8, 12)")


def t_copy_into_views(tc, dtype):
    dev = tc.dev
    base = rand(tc, (6, 9), dtype)
    d, m = base.to(dev), base.clone()
    s = rand(tc, (6, 3), dtype)
    d[:, 2:5].copy_(s)
    m[:, 2:5].copy_(s)
    s = rand(tc, (5, 9), dtype)
    d[1:].copy_(s)
    m[1:].copy_(s)
    s = rand(tc, (2, 6), dtype)
    d.t()[3:5].copy_(s)
    m.t()[3:5].copy_(s)
    s = rand(tc, (6, 2), dtype)
    sd = s.to(dev)
    d.narrow(1, 6, 2).copy_(sd)  # device -> device view
    m.narrow(1, 6, 2).copy_(s)
    s = rand(tc, (2, 2), dtype)
    torch.as_strided(d, (2, 2), (18, 2), 1).copy_(s)
    torch.as_strided(m, (2, 2), (18, 2), 1).copy_(s)
    s = rand(tc, (3, 4), dtype)
    d[1:4, 4:8].copy_(s.to(dev).t().contiguous().t())  # a non-contiguous device source
    m[1:4, 4:8].copy_(s)
    assert_equal(tc, d, m, "host and device copies into views (columns, rows, t(), narrow, as_strided)")
    h = torch.empty(3, 6, dtype=dtype)
    h.copy_(d.t()[2:5])
    assert_equal(tc, h, m.t()[2:5], "copy_ from a transposed device view into a host tensor")
    assert_equal(tc, d[:, 2:5].cpu(), m[:, 2:5], "a device column slice .cpu()")
    dv = torch.empty(6, 3, dtype=dtype, device=dev)
    dv.copy_(d[:, 4:7])
    assert_equal(tc, dv, m[:, 4:7], "copy_ from a device slice into a device tensor")


def t_device_copies(tc, dtype):
    dev = tc.dev
    x = rand(tc, (11, 17), dtype)
    xd = x.to(dev)
    y = torch.empty_like(xd)
    assert_on(tc, y, dev, "empty_like")
    y.copy_(xd)
    assert_equal(tc, y, x, "copy_ device -> device")
    cl = xd.clone()
    assert_equal(tc, cl, x, "clone")
    cl.zero_()
    assert_equal(tc, xd, x, "the source after zeroing its clone")
    ct = xd.t().contiguous()
    if not ct.is_contiguous():
        tc.fail("x.t().contiguous(): not contiguous, strides %s" % (ct.stride(),))
    assert_equal(tc, ct, x.t().contiguous(), "x.t().contiguous()")
    if xd.contiguous().data_ptr() != xd.data_ptr():
        tc.fail("contiguous() of a contiguous tensor: expected the same tensor, got a copy")
    assert_equal(tc, xd[:, 3:9].clone(), x[:, 3:9], "clone of a column slice")
    assert_equal(tc, xd[2:7].clone(), x[2:7], "clone of a row slice")


def t_copy_convert(tc):
    dev = tc.dev
    x = rand(tc, (9, 10), torch.float32) * 3
    xb = x.to(dev, dtype=torch.bfloat16)
    assert_equal(tc, xb, x.to(torch.bfloat16), "float32 host -> bfloat16 device (.to)")
    assert_equal(tc, xb.to("cpu", torch.float32), x.to(torch.bfloat16).float(),
                 "bfloat16 device -> float32 host")
    xd = x.to(dev)
    xi = torch.empty(9, 10, dtype=torch.int32, device=dev)
    xi.copy_(xd)
    assert_equal(tc, xi, x.to(torch.int32), "float32 device -> int32 device (copy_)")
    assert_equal(tc, xd.to(torch.float16), x.to(torch.float16), "float32 device -> float16 device")
    h = torch.empty(9, 10, dtype=torch.float32)
    h.copy_(xi)
    assert_equal(tc, h, x.to(torch.int32).float(), "int32 device -> float32 host (copy_)")


def t_zero_size(tc):
    dev = tc.dev
    f32 = torch.float32
    e = torch.empty(0, device=dev)
    assert_on(tc, e, dev, "torch.empty(0)")
    assert_equal(tc, e, torch.empty(0), "torch.empty(0) read back")
    assert_equal(tc, torch.empty(3, 0, device=dev), torch.empty(3, 0), "torch.empty(3, 0)")
    e.fill_(1.0)
    e.zero_()
    assert_equal(tc, torch.add(e, e), torch.empty(0), "add of empty tensors")
    assert_equal(tc, torch.relu(e), torch.empty(0), "relu of an empty tensor")
    e.copy_(torch.empty(0))
    torch.empty(0).copy_(e)
    a = rand(tc, (7, 5), f32)
    check_matmul(tc, torch.mm(torch.empty(0, 7, device=dev), a.to(dev)), torch.empty(0, 7), a,
                 what="mm 0x7 @ 7x5")
    for dtype in (f32, torch.bfloat16, torch.int32):
        p = rand(tc, (5, 0), dtype)
        q = rand(tc, (0, 7), dtype)
        r = torch.mm(p.to(dev), q.to(dev))
        assert_equal(tc, r, torch.zeros(5, 7, dtype=dtype), "mm 5x0 @ 0x7 (K = 0: zeros) %s" % dname(dtype))
        bias = rand(tc, (5, 7), dtype)
        assert_equal(tc, torch.addmm(bias.to(dev), p.to(dev), q.to(dev)), bias,
                     "addmm(bias, 5x0, 0x7) %s (K = 0: the bias)" % dname(dtype))
    assert_equal(tc, torch.mm(torch.empty(0, 0, device=dev), torch.empty(0, 0, device=dev)),
                 torch.empty(0, 0), "mm 0x0 @ 0x0")
    assert_equal(tc, torch.matmul(torch.empty(0, 3, 4, device=dev), torch.empty(0, 4, 5, device=dev)),
                 torch.empty(0, 3, 5), "matmul 0x3x4 @ 0x4x5")
    assert_equal(tc, torch.mm(torch.empty(4, 6, device=dev), torch.empty(6, 0, device=dev)),
                 torch.empty(4, 0), "mm 4x6 @ 6x0")


def t_int8_mm(tc):
    dev = tc.dev
    a = torch.randint(-128, 128, (9, 17), generator=tc.gen, dtype=torch.int8)
    b = torch.randint(-128, 128, (17, 6), generator=tc.gen, dtype=torch.int8)
    ad, bd = a.to(dev), b.to(dev)
    assert_equal(tc, ad, a, "int8 host -> device -> host")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = torch.mm(ad, bd)
    assert_on(tc, r, dev, "int8 mm")
    assert_equal(tc, r, torch.mm(a, b), "int8 mm 9x17 @ 17x6 (PyTorch's int8 result, wrapping)")


def t_fallback(tc):
    """Operators without a device kernel run on the CPU and land on the device."""
    dev = tc.dev
    x = rand(tc, (5, 7), torch.float32)
    xd = x.to(dev)
    xi = rand(tc, (5, 7), torch.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the one warning is t_fallback_warns_once's
        y = torch.sin(xd)
        assert_on(tc, y, dev, "torch.sin")
        assert_equal(tc, y, torch.sin(x), "torch.sin")
        assert_equal(tc, torch.cumsum(xd, 0), torch.cumsum(x, 0), "torch.cumsum(x, 0)")
        assert_equal(tc, torch.cumsum(xi.to(dev), 1), torch.cumsum(xi, 1), "torch.cumsum int32")
        assert_equal(tc, torch.sum(xi.to(dev)), torch.sum(xi), "torch.sum int32")
        z = xd.clone()
        z.sin_()
        assert_equal(tc, z, torch.sin(x), "x.sin_() in place")
        w = xd.clone()
        w[1:, 2:].sin_()
        m = x.clone()
        m[1:, 2:].sin_()
        assert_equal(tc, w, m, "x[1:, 2:].sin_() on a view")
        o = torch.empty(5, 7, device=dev)
        torch.sin(xd, out=o)
        assert_equal(tc, o, torch.sin(x), "torch.sin(x, out=o)")


def t_stream_api(tc):
    i, dev = tc.index, tc.dev
    d = torch_flex.default_stream(i)
    c = torch_flex.current_stream(i)
    if c.stream_id != d.stream_id:
        tc.fail("current_stream(%d) outside any context: expected the default stream (id %r), "
                "got id %r" % (i, d.stream_id, c.stream_id))
    s = torch_flex.Stream(device=i)
    if s.stream_id == d.stream_id:
        tc.fail("a new Stream has the default stream's id %r" % d.stream_id)
    sdev = s.device if not isinstance(s.device, int) else torch.device(DEVICE_TYPE, s.device)
    if sdev != dev:
        tc.fail("Stream(device=%d).device: expected %s, got %r" % (i, dev, s.device))
    if s.priority != 0:
        tc.fail("Stream(device=%d).priority: expected 0, got %r" % (i, s.priority))
    a = rand(tc, (6, 8), torch.int32)
    b = rand(tc, (6, 8), torch.int32)
    ad, bd = a.to(dev), b.to(dev)
    torch_flex.synchronize(i)
    with torch_flex.stream(s):
        cur = torch_flex.current_stream(i)
        if cur.stream_id != s.stream_id:
            tc.fail("current_stream inside `with torch_flex.stream(s)`: expected id %r, got %r"
                    % (s.stream_id, cur.stream_id))
        r = torch.add(ad, bd)
    if torch_flex.current_stream(i).stream_id != d.stream_id:
        tc.fail("current_stream after the `with`: expected the default stream back")
    s.synchronize()
    if s.query() is not True:
        tc.fail("Stream.query() after synchronize(): expected True, got %r" % (s.query(),))
    assert_equal(tc, r, a + b, "add on a side stream")
    for prio in (-1, 0, 1):
        p = torch_flex.Stream(device=i, priority=prio)
        if p.priority != prio:
            tc.fail("Stream(priority=%d).priority: got %r" % (prio, p.priority))
        with torch_flex.stream(p):
            q = torch.mul(ad, bd)
        p.synchronize()
        assert_equal(tc, q, a * b, "mul on a stream of priority %d" % prio)
    torch_flex.set_stream(s)
    try:
        if torch_flex.current_stream(i).stream_id != s.stream_id:
            tc.fail("set_stream(s): current_stream is not s")
    finally:
        torch_flex.set_stream(d)
    if torch_flex.current_stream(i).stream_id != d.stream_id:
        tc.fail("set_stream(default_stream()): the default stream is not current again")


def slow_int_inputs(tc, dev, m=128):
    """Operands of a matmul that takes the device a while (8M multiply-adds)."""
    a = rand(tc, (m, 256), torch.int32)
    b = rand(tc, (256, 256), torch.int32)
    return a, b, a.to(dev), b.to(dev)


def t_event_between_streams(tc):
    """A producer on s1, an event, a consumer on s2 that waits for it."""
    i, dev = tc.index, tc.dev
    a, b, ad, bd = slow_int_inputs(tc, dev)
    c = rand(tc, (128, 256), torch.int32)
    cd = c.to(dev)
    torch_flex.synchronize(i)
    s1, s2 = torch_flex.Stream(device=i), torch_flex.Stream(device=i)
    with torch_flex.stream(s1):
        y = torch.relu(torch.mm(ad, bd))
    ev = s1.record_event()
    s2.wait_event(ev)
    with torch_flex.stream(s2):
        z = torch.add(y, cd)
    s2.synchronize()
    if ev.query() is not True:
        tc.fail("Event.query() once the consumer has run: expected True, got %r" % (ev.query(),))
    if s1.query() is not True:
        tc.fail("the producer's stream: query() expected True once its event was waited for")
    assert_equal(tc, z, torch.relu(a @ b) + c, "consumer on s2: relu(a @ b) + c")
    # The same with Event() / record(stream) / wait(stream) / synchronize().
    ev2 = torch_flex.Event()
    with torch_flex.stream(s2):
        y2 = torch.mm(ad, bd)
    ev2.record(s2)
    ev2.wait(s1)
    with torch_flex.stream(s1):
        z2 = torch.mul(y2, cd)
    ev3 = torch_flex.Event()
    ev3.record(s1)
    ev3.synchronize()
    if ev3.query() is not True:
        tc.fail("Event.query() after Event.synchronize(): expected True")
    assert_equal(tc, z2, (a @ b) * c, "consumer on s1 after Event.wait: (a @ b) * c")


def t_wait_stream(tc):
    i, dev = tc.index, tc.dev
    a, b, ad, bd = slow_int_inputs(tc, dev)
    c = rand(tc, (128, 256), torch.int32)
    cd = c.to(dev)
    torch_flex.synchronize(i)
    s1, s2 = torch_flex.Stream(device=i), torch_flex.Stream(device=i)
    with torch_flex.stream(s1):
        y = torch.mm(ad, bd)
        y.add_(cd)
    s2.wait_stream(s1)
    with torch_flex.stream(s2):
        z = torch.mul(y, cd)
    torch_flex.current_stream(i).wait_stream(s2)
    # The copy back runs on the default stream, which waits for s2.
    assert_equal(tc, z, (a @ b + c) * c, "s2.wait_stream(s1), default.wait_stream(s2)")
    s1.synchronize()
    s2.synchronize()


def record_stream(tc, t, s):
    """t.record_stream(s) for a torch_flex.Stream; torch_flex.record_stream(t, s)
    if PyTorch 1.13's Tensor.record_stream does not take one."""
    try:
        t.record_stream(s)
    except (TypeError, RuntimeError) as e:  # 1.13's parser: "unknown parameter type"
        fn = getattr(torch_flex, "record_stream", None)
        if fn is None:
            raise
        fn(t, s)
        tc.note("Tensor.record_stream(torch_flex.Stream) raised %s (%s); "
                "used torch_flex.record_stream(t, s)" % (type(e).__name__, e))


def t_record_stream(tc):
    """x is allocated on s1 and read on s2 (queued behind a slow job on s3);
    x.record_stream(s2), del x, and an allocation of the same size on s1
    filled at once: it must not get x's memory before s2 has read it."""
    i, dev = tc.index, tc.dev
    n = 64 * 1024
    xh = rand(tc, (n,), torch.int32, -1000, 1000)
    a, b, ad, bd = slow_int_inputs(tc, dev, m=192)
    torch_flex.synchronize(i)
    s1, s2, s3 = (torch_flex.Stream(device=i) for _ in range(3))
    with torch_flex.stream(s3):
        slow = torch.mm(ad, bd)
    ev = s3.record_event()
    with torch_flex.stream(s1):
        x = torch.empty(n, dtype=torch.int32, device=dev)
        x.copy_(xh)
    s1.synchronize()
    s2.wait_event(ev)
    with torch_flex.stream(s2):
        z = torch.add(x, x)
    record_stream(tc, x, s2)
    del x
    with torch_flex.stream(s1):
        y = torch.empty(n, dtype=torch.int32, device=dev)
        y.fill_(-7)
    s1.synchronize()
    s2.synchronize()
    s3.synchronize()
    assert_equal(tc, z, xh + xh, "s2's read of x (x freed with record_stream(s2), memory asked again on s1)")
    assert_equal(tc, y, torch.full((n,), -7, dtype=torch.int32), "the tensor allocated after del x")
    assert_equal(tc, slow, a @ b, "the slow job on s3")
    x2h = rand(tc, (n,), torch.int32, -1000, 1000)
    with torch_flex.stream(s1):
        x2 = torch.empty(n, dtype=torch.int32, device=dev)
        x2.copy_(x2h)
    s1.synchronize()
    assert_equal(tc, x2, x2h, "an allocation after all that")
    assert_equal(tc, z, xh + xh, "s2's result, still intact")
    assert_equal(tc, y, torch.full((n,), -7, dtype=torch.int32), "y, still intact")


def t_elapsed_time(tc):
    i, dev = tc.index, tc.dev
    a = rand(tc, (128, 128), torch.float32).to(dev)
    b = rand(tc, (128, 128), torch.float32).to(dev)
    torch_flex.synchronize(i)
    start = torch_flex.Event(enable_timing=True)
    end = torch_flex.Event(enable_timing=True)
    s = torch_flex.current_stream(i)
    start.record(s)
    for _ in range(4):
        c = torch.mm(a, b)
        a = torch.relu(c)
    end.record(s)
    end.synchronize()
    if end.query() is not True:
        tc.fail("Event.query() after synchronize(): expected True")
    ms = start.elapsed_time(end)
    if not isinstance(ms, float) or not math.isfinite(ms) or ms <= 0:
        tc.fail("elapsed_time over 4 matmuls of 128x128x128: expected a float > 0 (ms), got %r" % (ms,))
    tc.note("elapsed_time: %.3f ms for four 128x128x128 float32 matmuls" % ms)


def t_memory_stats(tc):
    # empty_cache() and the getters without an index act on the current device.
    old = torch_flex.current_device()
    torch_flex.set_device(tc.index)
    try:
        memory_stats_on_current(tc)
    finally:
        torch_flex.set_device(old)


def memory_stats_on_current(tc):
    i, dev = tc.index, tc.dev
    nbytes = 4 << 20
    # A fill first: its stream's correction arena (where the fill's program
    # goes) is the library's, allocated once, and must not count below.
    torch.empty(nbytes // 4, dtype=torch.float32, device=dev).fill_(0.0)
    torch_flex.synchronize(i)
    torch_flex.empty_cache()
    base = torch_flex.memory_allocated(i)
    x = torch.empty(nbytes // 4, dtype=torch.float32, device=dev)
    x.fill_(1.0)
    torch_flex.synchronize(i)
    after = torch_flex.memory_allocated(i)
    if after - base < nbytes:
        tc.fail("memory_allocated(%d) with a 4 MiB tensor: expected at least %d + %d, got %d"
                % (i, base, nbytes, after))
    peak = torch_flex.max_memory_allocated(i)
    if peak < after:
        tc.fail("max_memory_allocated (%d) below memory_allocated (%d)" % (peak, after))
    reserved = torch_flex.memory_reserved(i)
    if reserved < after:
        tc.fail("memory_reserved (%d) below memory_allocated (%d)" % (reserved, after))
    if torch_flex.max_memory_reserved(i) < reserved:
        tc.fail("max_memory_reserved (%d) below memory_reserved (%d)"
                % (torch_flex.max_memory_reserved(i), reserved))
    st = torch_flex.memory_stats(i)
    for key in ("allocated_bytes.all.current", "allocated_bytes.all.peak",
                "reserved_bytes.all.current", "num_ooms", "num_alloc_retries"):
        if key not in st:
            tc.fail("memory_stats(%d): no key %r (keys: %s)" % (i, key, sorted(st)))
    for key, want in (("allocated_bytes.all.current", after), ("allocated_bytes.all.peak", peak),
                      ("reserved_bytes.all.current", reserved)):
        if st[key] != want:
            tc.fail("memory_stats(%d)[%r]: expected %d (as the getter says), got %r"
                    % (i, key, want, st[key]))
    free, total = torch_flex.mem_get_info(i)
    if not 0 <= free <= total or total <= 0:
        tc.fail("mem_get_info(%d): expected 0 <= free <= total, total > 0; got (%r, %r)"
                % (i, free, total))
    if torch_flex.memory_allocated() != after:
        tc.fail("memory_allocated() of the current device %d: expected %d, got %d"
                % (i, after, torch_flex.memory_allocated()))
    del x
    now = torch_flex.memory_allocated(i)
    if now != base:
        tc.fail("memory_allocated(%d) after del of the (synchronized) tensor: expected %d, got %d"
                % (i, base, now))
    if torch_flex.max_memory_allocated(i) != peak:
        tc.fail("max_memory_allocated after del: expected the peak %d kept, got %d"
                % (peak, torch_flex.max_memory_allocated(i)))
    torch_flex.reset_peak_memory_stats(i)
    if torch_flex.max_memory_allocated(i) != torch_flex.memory_allocated(i):
        tc.fail("max_memory_allocated after reset_peak_memory_stats: expected %d (current), got %d"
                % (torch_flex.memory_allocated(i), torch_flex.max_memory_allocated(i)))
    r_before = torch_flex.memory_reserved(i)
    torch_flex.empty_cache()
    r_after = torch_flex.memory_reserved(i)
    if r_after > r_before or r_after < torch_flex.memory_allocated(i):
        tc.fail("memory_reserved across empty_cache(): expected <= %d and >= memory_allocated %d, got %d"
                % (r_before, torch_flex.memory_allocated(i), r_after))
    summary = torch_flex.memory_summary(i)
    if not isinstance(summary, str) or not summary.strip():
        tc.fail("memory_summary(%d): expected a non-empty report, got %r" % (i, summary))
    tc.note("4 MiB tensor: allocated %d -> %d -> %d bytes, reserved %d -> %d after empty_cache, "
            "mem_get_info (%d, %d)" % (base, after, now, r_before, r_after, free, total))


def t_del_with_work_queued(tc):
    # 0.25 s of matmul ahead of y's fill, so that y's free is still pending
    # at the del (libflex frees it once the fill has run).
    i, dev = tc.index, tc.dev
    nbytes = 4 << 20
    a = torch.ones((256, 256), dtype=torch.float32, device=dev)
    for rnd in range(2):  # the first round allocates what the library keeps
        torch_flex.synchronize(i)
        base = torch_flex.memory_allocated(i)
        c = torch.mm(a, a)
        y = torch.empty(nbytes // 4, dtype=torch.float32, device=dev)
        y.fill_(2.0)
        del y
        pending = torch_flex.memory_stats(i)["pending_free_bytes"]
        now = torch_flex.memory_allocated(i)
        del c
        torch_flex.synchronize(i)
    if pending < nbytes:
        tc.fail("the del of a 4 MiB tensor behind a 256^3 matmul: expected its free pending "
                "(pending_free_bytes >= %d), got %d" % (nbytes, pending))
    want = base + 256 * 256 * 4  # c is still allocated
    if now != want:
        tc.fail("memory_allocated(%d) right after the del, work still queued: expected %d "
                "(the base %d and the matmul's result), got %d" % (i, want, base, now))
    end = torch_flex.memory_allocated(i)
    if end != base:
        tc.fail("memory_allocated(%d) after synchronize: expected the base %d, got %d"
                % (i, base, end))
    tc.note("pending at the del: %d bytes; allocated %d -> %d -> %d" % (pending, base, now, end))


def t_oom(tc):
    i, dev = tc.index, tc.dev
    free, total = torch_flex.mem_get_info(i)
    before = torch_flex.memory_stats(i)
    n = total // 4 + (1 << 28)  # float32 elements: 1 GiB beyond the function's total
    nbytes = n * 4
    try:
        t = torch.empty(n, dtype=torch.float32, device=dev)
    except torch.cuda.OutOfMemoryError as e:
        msg = str(e)
    except Exception as e:
        tc.fail("torch.empty of %d bytes (mem_get_info total %d): expected "
                "torch.cuda.OutOfMemoryError, got %s: %s" % (nbytes, total, type(e).__name__, e))
    else:
        del t
        tc.fail("torch.empty of %d bytes (mem_get_info total %d): expected "
                "torch.cuda.OutOfMemoryError, got a tensor" % (nbytes, total))
    sizes = [str(nbytes), "{:,}".format(nbytes), "%.2f GiB" % (nbytes / 2 ** 30),
             "%.2f MiB" % (nbytes / 2 ** 20)]
    if not any(sz in msg for sz in sizes):
        tc.fail("the OutOfMemoryError message: expected the requested size (%s), got: %s"
                % (" or ".join(sizes), msg))
    if "largest free" not in msg.lower():
        tc.fail("the OutOfMemoryError message: expected \"largest free\", got: %s" % msg)
    after = torch_flex.memory_stats(i)
    if after.get("num_ooms", 0) < before.get("num_ooms", 0) + 1:
        tc.fail("memory_stats()['num_ooms']: expected at least %d after the failure, got %r"
                % (before.get("num_ooms", 0) + 1, after.get("num_ooms")))
    a = rand(tc, (16, 24), torch.float32)
    b = rand(tc, (24, 8), torch.float32)
    check_matmul(tc, torch.mm(a.to(dev), b.to(dev)), a, b, what="mm 16x24 @ 24x8 after the failure")
    tc.note("message: %s" % msg.strip().split("\n")[0])


# ---------------------------------------------------------------------------
# the suite

def device_cases():
    """(name, fn, timeout) of every per-device case, in order."""
    f32, bf16, f16, i32 = dtypes()
    all4 = (f32, bf16, f16, i32)
    cases = [("device API", t_device_api, None)]
    P = lambda fn, **kw: (lambda tc: fn(tc, **kw))  # noqa: E731
    for dt in all4:
        cases.append(("copy host<->device %s" % dname(dt), P(t_copy_roundtrip, dtype=dt), None))
    for dt in all4:
        cases.append(("fill_ and zero_ %s" % dname(dt), P(t_fill_zero, dtype=dt), None))
    for dt in all4:
        cases.append(("copy device->device, clone, contiguous %s" % dname(dt),
                      P(t_device_copies, dtype=dt), None))
    cases.append(("copy_ with a dtype conversion", t_copy_convert, None))
    for dt in all4:
        cases.append(("copy_ into views %s" % dname(dt), P(t_copy_into_views, dtype=dt), None))
    for op in ("add", "mul"):
        for dt in all4:
            cases.append(("%s %s" % (op, dname(dt)), P(t_binary, dtype=dt, op=op), None))
    for dt in all4:
        cases.append(("relu %s" % dname(dt), P(t_relu, dtype=dt), None))
    for (m, k, n) in ((1, 1, 1), (7, 13, 5), (200, 3, 17), (65, 257, 300)):
        for dt in all4:
            cases.append(("mm %s %dx%d @ %dx%d" % (dname(dt), m, k, k, n),
                          P(t_mm, dtype=dt, m=m, k=k, n=n), None))
    for (m, k, n, b1) in ((7, 13, 5, True), (65, 257, 300, False)):
        for dt in all4:
            cases.append(("addmm %s %dx%d @ %dx%d" % (dname(dt), m, k, k, n),
                          P(t_addmm, dtype=dt, m=m, k=k, n=n, bias_1d=b1), None))
    for dt in all4:
        cases.append(("matmul %s 2-D, batched 3-D, 3-D @ 2-D" % dname(dt), P(t_matmul, dtype=dt), None))
    for dt in all4:
        cases.append(("views and slices as inputs %s" % dname(dt), P(t_views_as_inputs, dtype=dt), None))
    for dt in (f32, bf16, f16):
        cases.append(("Linear + ReLU forward %s" % dname(dt), P(t_linear_relu, dtype=dt), None))
    cases.append(("Linear + ReLU forward float32, grad enabled, 2-D and 3-D input",
                  P(t_linear_relu, dtype=f32, grad=True), None))
    cases += [
        ("zero-size tensors", t_zero_size, None),
        ("int8 mm (as the CPU)", t_int8_mm, None),
        ("CPU fallback: sin, cumsum, sum, in place, out=", t_fallback, None),
        ("streams: default, current, priorities, set_stream", t_stream_api, None),
        ("two streams and an event", t_event_between_streams, None),
        ("wait_stream", t_wait_stream, None),
        ("record_stream: free and allocate again while another stream reads", t_record_stream, None),
        ("Event.elapsed_time", t_elapsed_time, None),
        ("memory stats", t_memory_stats, None),
        ("memory_allocated drops at the del, work still queued", t_del_with_work_queued, None),
        ("out of memory and recovery", t_oom, None),
    ]
    return cases


def build_suite(count, labels, big=True, timeout=DEFAULT_TIMEOUT):
    suite = unittest.TestSuite()
    # First of all: the process's first CPU fallback, for its one warning.
    suite.addTest(Case("CPU fallback warns once (torch.sin on device 0)", t_fallback_warns_once,
                       index=0, timeout=timeout))
    suite.addTest(Case("is_available, device_count as /sys/class/flex lists the functions",
                       t_enumeration, timeout=timeout))
    for i in range(count):
        for name, fn, t in device_cases():
            suite.addTest(Case(name, fn, index=i, label=labels[i], timeout=t or timeout))
    if count >= 2:
        suite.addTest(Case("copy between device 0 (%s) and device 1 (%s)" % (labels[0], labels[1]),
                           t_cross_device_copy, timeout=timeout))
    suite.addTest(Case("Documentation/flex/examples/mlp.py on device 0 (%s)" % labels[0],
                       t_mlp_example, index=0, timeout=timeout))
    if big:
        suite.addTest(Case("Workflow 5: 4096x1024 @ 1024x1024 float32 matmul on device 0 (%s)"
                           % labels[0], t_workflow5, index=0, timeout=max(timeout, BIG_TIMEOUT)))
    return suite


def filtered(suite, patterns):
    if not patterns:
        return suite
    out = unittest.TestSuite()
    for t in suite:
        if any(p in t.title() for p in patterns):
            out.addTest(t)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description="torch-flex against the CPU, as TAP")
    ap.add_argument("--match", action="append", default=[], help="only cases whose name contains this")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--no-big", action="store_true", help="leave out Workflow 5 (the 4096x1024 matmul)")
    ap.add_argument("--big-full", action="store_true",
                    help="check every element of Workflow 5 in float64 (minutes under TCG)")
    ap.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT, help="watchdog per case, s")
    ap.add_argument("--cases", help="write 'N<TAB>name' per case to this file first")
    args = ap.parse_args(argv)
    global BIG_FULL
    BIG_FULL = args.big_full
    out = sys.stdout
    faulthandler.enable()  # a crash in the extension prints the Python stack
    t0 = time.monotonic()
    err = load()
    if err is None:
        try:
            count = torch_flex.device_count()
        except Exception:
            err = "torch_flex.device_count() failed:\n" + traceback.format_exc()
        else:
            if count < 1:
                err = ("torch_flex.device_count() is %d: no flex function (is flex.ko loaded? "
                       "/sys/class/flex lists: %s)" % (count, ", ".join(expected_functions()) or "nothing"))
    if err is not None:
        print("TAP version 13")
        print("1..1")
        print("not ok 1 - all: import torch and torch_flex, find a device")
        for line in err.rstrip().split("\n"):
            print("# " + line)
        return 1
    labels, names = device_labels(count)
    suite = filtered(build_suite(count, labels, big=not args.no_big, timeout=args.timeout), args.match)
    cases = list(suite)
    if args.list:
        for n, t in enumerate(cases, 1):
            print("%d\t%s" % (n, t.title()))
        return 0
    if args.cases:
        with open(args.cases, "w") as f:
            for n, t in enumerate(cases, 1):
                f.write("%d\t%s\n" % (n, t.title()))
    print("TAP version 13")
    print("# torch %s from %s; import torch %.1f s, import torch_flex %.1f s"
          % (torch.__version__, os.path.dirname(torch.__file__), IMPORT_SECONDS.get("torch", 0),
             IMPORT_SECONDS.get("torch_flex", 0)))
    for i in range(count):
        print("# device %d (%s): %s" % (i, labels[i], "/dev/" + names[i] if i < len(names) else "?"))
    print("1..%d" % len(cases))
    out.flush()
    result = TapResult(out)
    suite.run(result)
    c = result.counts
    result.diag("%d passed, %d failed, %d skipped in %.0f s"
                % (c["passed"], c["failed"], c["skipped"], time.monotonic() - t0))
    return 0 if c["failed"] == 0 and result.n == len(cases) else 1


if __name__ == "__main__":
    sys.exit(main())
