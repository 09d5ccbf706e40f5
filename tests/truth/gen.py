#!/usr/bin/env python3
"""Ground truth for the pytorch pack (issue 15): Kineto traces of a known model.

    python3 tests/truth/gen.py OUTDIR     writes OUTDIR/CASE.json and OUTDIR/CASE.truth.json

The model is the MLP 784-512-256-10 (2,143,272 bytes of float32 parameters) trained with Adam
on batches of 64, as PyTorch 2.x records it on one GPU: ProfilerStep#N annotations, the
forward's aten ops on the main thread, the backward's autograd nodes on the pt_autograd_0
thread, Optimizer.step / Optimizer.zero_grad annotations (set_to_none), the input batch copied
with aten::to, cuBLAS scratch freed inside aten::addmm, Adam's state made in the first step.
Every allocation is written with the category PyTorch gives it, so the truth is each
category's peak (the most bytes it holds at once, per device), computed here from the events
this file writes and nothing else. Sizes are rounded up to 512 bytes, as the caching allocator
reports them. Times are integer ns, written as µs with three decimals (Kineto 2.x).

Cases: the model built inside the profiled window with and without with_stack/with_modules,
built before the profiler started, and a forward-only (inference) trace.
Python standard library only.
"""
import json
import os
import sys

PID, MAIN, BWD = 4242, 4242, 4301
LAYERS = [(784, 512), (512, 256), (256, 10)]
BATCH = 64
STEPS = 3
F32 = 4


def rounded(n):
    return (n + 511) // 512 * 512


class Trace:
    def __init__(self, stack, modules):
        self.stack, self.modules = stack, modules
        self.events = []
        self.ns = 1_419_116_105_360_746
        self.addr = 0x7F0000000000
        self.live = {}  # addr -> (bytes, category)
        self.total = 0
        self.cat_now = {}
        self.cat_peak = {}
        self.ev_idx = 0
        self.open = []  # open slices on the main/backward thread: [index, tid]

    def tick(self, n=1000):
        self.ns += n
        return self.ns

    @staticmethod
    def us(ns):
        return "%d.%03d" % (ns // 1000, ns % 1000)

    def begin(self, cat, name, tid=MAIN):
        ev = {"ph": "X", "cat": cat, "name": name, "pid": PID, "tid": tid, "ts": self.tick(), "dur": 0}
        self.events.append(ev)
        self.open.append(ev)
        self.tick()
        return ev

    def end(self, ev):
        self.tick()
        assert self.open[-1] is ev
        self.open.pop()
        ev["dur"] = self.ns - ev["ts"]
        self.tick()

    def slice(self, cat, name, tid=MAIN):
        self.end(self.begin(cat, name, tid))

    def mem(self, nbytes, addr, tid):
        self.total += nbytes
        self.events.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": PID,
                            "tid": tid, "ts": self.tick(),
                            "args": {"Total Reserved": 8 << 30, "Total Allocated": self.total, "Bytes": nbytes,
                                     "Addr": addr, "Device Id": 0, "Device Type": 1, "Ev Idx": self.ev_idx}})
        self.ev_idx += 1
        self.tick()

    def alloc(self, nbytes, category, tid=MAIN):
        nbytes = rounded(nbytes)
        a = self.addr
        self.addr += nbytes + 512
        self.live[a] = (nbytes, category)
        self.cat_now[category] = self.cat_now.get(category, 0) + nbytes
        self.cat_peak[category] = max(self.cat_peak.get(category, 0), self.cat_now[category])
        self.mem(nbytes, a, tid)
        return a

    def free(self, a, tid=MAIN):
        nbytes, category = self.live.pop(a)
        self.cat_now[category] -= nbytes
        self.mem(-nbytes, a, tid)

    def python(self, name, tid=MAIN):
        return self.begin("python_function", name, tid) if self.stack else None

    def module(self, name):
        return self.begin("python_function", "nn.Module: " + name) if self.modules else None

    def close(self, ev):
        if ev is not None:
            self.end(ev)

    def json(self):
        meta = {"ph": "M", "name": "thread_name", "pid": PID, "tid": BWD, "ts": 0, "args": {"name": "pt_autograd_0"}}
        out = []
        for e in [meta] + self.events:
            e = dict(e)
            if e["ph"] != "M":
                e["ts"] = self.us(e["ts"])
                if "dur" in e:
                    e["dur"] = self.us(e["dur"])
            out.append(e)
        # Numbers as Kineto writes them: µs with three decimals, unquoted.
        text = json.dumps({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "Truth GPU"}],
                           "baseTimeNanoseconds": 1_700_000_000_000_000_000, "traceEvents": out}, indent=1)
        return _unquote_times(text)


def _unquote_times(text):
    out = []
    for line in text.split("\n"):
        s = line.lstrip()
        if (s.startswith('"ts": "') or s.startswith('"dur": "')):
            key, _, val = s.partition(": ")
            line = line[: len(line) - len(s)] + key + ": " + val.replace('"', "")
        out.append(line)
    return "\n".join(out)


def build_model(t):
    """nn.Linear(..., device="cuda") per layer: aten::empty, then the in-place init."""
    params = []
    for i, (fi, fo) in enumerate(LAYERS):
        py = t.python("torch/nn/modules/linear.py(98): __init__")
        for shape in (fi * fo, fo):
            e = t.begin("cpu_op", "aten::empty")
            params.append((t.alloc(shape * F32, "parameter"), shape * F32))
            t.end(e)
        rp = t.python("torch/nn/modules/linear.py(109): reset_parameters")
        for _ in (0, 1):
            t.slice("cpu_op", "aten::uniform_")
        t.close(rp)
        t.close(py)
    return params


def linear_forward(t, i, fo, saved, category):
    m = t.module("Linear_%d" % i)
    py = t.python("torch/nn/modules/linear.py(125): forward")
    lin = t.begin("cpu_op", "aten::linear")
    t.slice("cpu_op", "aten::t")
    mm = t.begin("cpu_op", "aten::addmm")
    out = t.alloc(BATCH * fo * F32, category)
    scratch = t.alloc(1 << 20, "temporary")  # cuBLAS workspace, freed before addmm returns
    t.free(scratch)
    t.end(mm)
    t.end(lin)
    t.close(py)
    t.close(m)
    saved.append(out)
    if i + 1 < len(LAYERS):
        m = t.module("ReLU_%d" % i)
        r = t.begin("cpu_op", "aten::relu")
        saved.append(t.alloc(BATCH * fo * F32, category))
        t.end(r)
        t.close(m)


def forward(t, category, keep_all):
    """The MLP's forward; returns what it allocated, in order. keep_all: saved for backward
    (training); otherwise each intermediate is freed once the next layer has used it."""
    saved = []
    top = t.module("MLP_0")
    py = t.python("train.py(40): step")
    for i, (_, fo) in enumerate(LAYERS):
        before = len(saved)
        linear_forward(t, i, fo, saved, category)
        if not keep_all:
            while before > 0 and len(saved) > 2:  # no_grad: the previous layer's tensors go
                t.free(saved.pop(0))
                before -= 1
    t.close(py)
    t.close(top)
    return saved


def loss_forward(t, saved):
    ce = t.begin("cpu_op", "aten::cross_entropy_loss")
    ls = t.begin("cpu_op", "aten::log_softmax")
    saved.append(t.alloc(BATCH * 10 * F32, "activation"))
    t.end(ls)
    nl = t.begin("cpu_op", "aten::nll_loss_nd")
    loss = t.alloc(F32, "activation")
    t.end(nl)
    t.end(ce)
    return loss


def node(t, name):
    ev = t.begin("cpu_op", "autograd::engine::evaluate_function: " + name, BWD)
    inner = t.begin("cpu_op", name, BWD)
    return ev, inner


def backward(t, saved, params, grads, first):
    """Autograd nodes in reverse: each frees what its forward saved, passes the gradient of
    its input on (autograd detail) and makes the parameter gradients (kept until zero_grad)."""
    ev, inner = node(t, "NllLossBackward0")
    d = t.alloc(BATCH * 10 * F32, "autograd detail", BWD)
    t.end(inner)
    t.end(ev)
    ev, inner = node(t, "LogSoftmaxBackward0")
    d2 = t.alloc(BATCH * 10 * F32, "autograd detail", BWD)
    t.end(inner)
    t.free(saved.pop(), BWD)
    t.free(d, BWD)
    t.end(ev)
    d = d2
    for i in reversed(range(len(LAYERS))):
        fi, fo = LAYERS[i]
        ev, inner = node(t, "AddmmBackward0")
        mm = t.begin("cpu_op", "aten::mm", BWD)
        dx = t.alloc(BATCH * fi * F32, "autograd detail", BWD) if i > 0 else None
        t.end(mm)
        mm = t.begin("cpu_op", "aten::mm", BWD)
        gw = t.alloc(fi * fo * F32, "gradient", BWD)
        t.end(mm)
        sm = t.begin("cpu_op", "aten::sum", BWD)
        gb = t.alloc(fo * F32, "gradient", BWD)
        t.end(sm)
        t.end(inner)
        t.free(saved.pop(), BWD)  # the layer's output
        t.free(d, BWD)
        t.end(ev)
        for g in (gw, gb):
            ev, inner = node(t, "torch::autograd::AccumulateGrad")
            t.end(inner)
            t.end(ev)
        grads += [gw, gb]
        if i > 0:
            ev, inner = node(t, "ReluBackward0")
            tb = t.begin("cpu_op", "aten::threshold_backward", BWD)
            d = t.alloc(BATCH * fi * F32, "autograd detail", BWD)
            t.end(tb)
            t.end(inner)
            t.free(saved.pop(), BWD)  # relu output
            t.free(dx, BWD)
            t.end(ev)


def optimizer_step(t, params, state):
    opt = t.begin("user_annotation", "Optimizer.step#Adam.step")
    if not state:
        for _, nbytes in params:
            for _ in (0, 1):  # exp_avg, exp_avg_sq
                z = t.begin("cpu_op", "aten::zeros_like")
                state.append(t.alloc(nbytes, "optimizer state"))
                t.end(z)
    f = t.begin("cpu_op", "aten::_foreach_addcdiv_")
    scratch = t.alloc(sum(n for _, n in params), "temporary")
    t.free(scratch)
    t.end(f)
    t.end(opt)


def zero_grad(t, grads):
    z = t.begin("user_annotation", "Optimizer.zero_grad#Adam.zero_grad")
    while grads:
        t.free(grads.pop())  # set_to_none: Python drops .grad, outside any op
    t.end(z)


def copy_input(t, nbytes):
    to = t.begin("cpu_op", "aten::to")
    cp = t.begin("cpu_op", "aten::_to_copy")
    e = t.begin("cpu_op", "aten::empty_strided")
    a = t.alloc(nbytes, "input")
    t.end(e)
    t.slice("cpu_op", "aten::copy_")
    t.end(cp)
    t.end(to)
    return a


def new_batch(t, batch):
    x, y = copy_input(t, BATCH * 784 * F32), copy_input(t, BATCH * 8)
    for a in batch:  # the previous batch goes when the loop rebinds x and y
        t.free(a)
    return [x, y]


def training(stack, modules, built_inside):
    t = Trace(stack, modules)
    if built_inside:  # after prof.start(), before the first prof.step(): ProfilerStep#0
        ps = t.begin("user_annotation", "ProfilerStep#0")
        params = build_model(t)
        t.end(ps)
    else:
        # made before the trace: not written
        params = [(0, n) for fi, fo in LAYERS for n in (fi * fo * F32, fo * F32)]
        t.cat_peak["(before trace)"] = t.total = sum(rounded(n) for _, n in params)
    grads, state, batch = [], [], []
    for step in range(1, STEPS + 1):
        ps = t.begin("user_annotation", "ProfilerStep#%d" % step)
        zero_grad(t, grads)
        batch = new_batch(t, batch)
        saved = forward(t, "activation", True)
        loss = loss_forward(t, saved)
        backward(t, saved, params, grads, step == 1)
        t.free(loss)
        optimizer_step(t, params, state)
        t.end(ps)
    return t


def inference():
    t = Trace(False, False)
    t.cat_peak["(before trace)"] = t.total = sum(rounded(fi * fo * F32) + rounded(fo * F32) for fi, fo in LAYERS)
    batch, out = [], []
    for step in range(1, STEPS + 1):
        ps = t.begin("user_annotation", "ProfilerStep#%d" % step)
        batch = new_batch(t, batch)
        for a in out:
            t.free(a)
        out = forward(t, "forward output", False)
        t.end(ps)
    return t


CASES = {
    "built_inside_stack_modules": lambda: training(True, True, True),
    "built_inside_default": lambda: training(False, False, True),
    "built_before_default": lambda: training(False, False, False),
    "inference_default": inference,
}


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    for name, make in CASES.items():
        t = make()
        with open(os.path.join(outdir, name + ".json"), "w") as f:
            f.write(t.json())
        with open(os.path.join(outdir, name + ".truth.json"), "w") as f:
            json.dump({k: v for k, v in sorted(t.cat_peak.items())}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
