#!/usr/bin/python3
"""bench/onednn_vs_ort.py - subgraph's onednn backend against ONNX Runtime.

Runs zoo models on subgraph (partitioned for the onednn backend) and on
ONNX Runtime's CPU execution provider (onnxruntime-node 1.30.0, MLAS), on
the same ONNX files, the same inputs and the same thread count. Each
round runs R requests on one and then R on the other, alternating for
several rounds so that both see the same machine state; the report gives
the median latency of each over all rounds and the ratio subgraph/ORT.

Each precision mode asked for (fp32, and bf16 where the CPU has native
bf16) takes its turn in every round, so ONNX Runtime fp32 is measured
once per round against both. It also measures the machine's fp32 peak with
a oneDNN matmul (dnnl_sgemm through ctypes) and, when bf16 is asked for,
the bf16 peak with a bf16 MatMul run by subgraph's onednn backend, reports
each model's share of the peak of its precision and what share of the bf16
peak the bf16 target would take, and with --ablation times the onednn conv
family at fusion levels none / bn / act / all (--plugin-option onednn.fusion=LEVEL).
Accuracy comes from `subgraph run --check` against the reference backend;
inputs come from `subgraph run --random-inputs`, which writes them as .npy
files.

Setup:  the script runs `npm install --ignore-scripts` in bench/ when
        onnxruntime-node is missing (npm: `apt-get install npm`); the plot
        needs python3-matplotlib and is skipped, with a note, without it.
Usage:  /usr/bin/python3 bench/onednn_vs_ort.py [--subgraph PATH]
            [--threads 2] [--rounds 5] [--runs 5] [--models a,b]
            [--precisions fp32,bf16] [--ablation] [--json OUT.json]
            [--write-docs]
Prints Markdown tables; --write-docs puts them in docs/benchmarks.md and
the plot in docs/img/onednn_vs_ort.png.
"""
import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (label, zoo model, batch)
CASES = [
    ("resnet50 b1", "resnet50", 1),
    ("resnet50 b16", "resnet50", 16),
    ("mobilenetv2 b1", "mobilenetv2", 1),
    ("bert b1", "bert", 1),
    # No target: the dynamic-dims coverage model (squeeze-excite Mul,
    # Resize and ConvTranspose run on the reference backend).
    ("mobilenetv3 b1", "mobilenetv3", 1),
]
TARGETS = {"resnet50 b1": 0.9, "resnet50 b16": 0.9, "mobilenetv2 b1": 1.0, "bert b1": 1.0}
# bf16 is judged by its speed-up over ONNX Runtime fp32: subgraph/ORT at most
# 1 / 2.5.
BF16_TARGET = 1 / 2.5
PLOT = os.path.join(ROOT, "docs", "img", "onednn_vs_ort.png")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def find_subgraph(explicit):
    if explicit:
        return explicit
    for preset in ("release", "ci", "dev"):
        path = os.path.join(ROOT, "build", preset, "bin", "subgraph")
        if os.path.exists(path):
            return path
    sys.exit("onednn_vs_ort: error: no subgraph binary; build the release preset or pass --subgraph")


def sg_run(subgraph, model, inputs, threads, runs, warmup, env_extra=None, extra=()):
    env = dict(os.environ)
    for name in ("SUBGRAPH_BACKEND", "SUBGRAPH_PRECISION", "SUBGRAPH_ONEDNN_PRECISION"):
        env.pop(name, None)
    env.update(env_extra or {})
    cmd = [subgraph, "run", model, "--backend", "onednn", "--threads", str(threads),
           "--runs", str(runs), "--warmup", str(warmup), "--json", *extra]
    for name, path in inputs:
        cmd += ["--input", f"{name}={path}"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"onednn_vs_ort: error: {' '.join(cmd)}: {out.stderr.strip()}")
    return json.loads(out.stdout)


class OrtTimer:
    """A persistent ONNX Runtime session (bench/onednn_ort_timer.js)."""

    def __init__(self, model, inputs, threads):
        args = ["node", os.path.join(ROOT, "bench", "onednn_ort_timer.js"), model, str(threads)]
        args += [f"{n}={p}" for n, p in inputs]
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line:
            sys.exit("onednn_vs_ort: error: ONNX Runtime did not start (cd bench && npm install --ignore-scripts)")

    def run(self, n):
        self.proc.stdin.write(f"{n}\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())["ms"]

    def close(self):
        self.proc.stdin.write("0\n")
        self.proc.stdin.close()
        self.proc.wait()


def _fields(buf, start=0, end=None):
    """(field number, wire type, value) of a protobuf message; length-delimited
    values are (offset, length) pairs so that big blobs are never copied."""
    pos, end = start, len(buf) if end is None else end
    while pos < end:
        key, pos = _varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 2:
            length, pos = _varint(buf, pos)
            value, pos = (pos, length), pos + length
        elif wire == 5:
            value, pos = None, pos + 4
        elif wire == 1:
            value, pos = None, pos + 8
        else:
            raise ValueError("unsupported protobuf wire type")
        yield field, wire, value


def _varint(buf, pos):
    result, shift = 0, 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def _sub(buf, span):
    return _fields(buf, span[0], span[0] + span[1])


def _str(buf, span):
    return bytes(buf[span[0]:span[0] + span[1]]).decode()


def model_flops(model):
    """2 x multiply-adds of Conv, MatMul and Gemm, read from the ONNX file's
    inferred value shapes (a minimal protobuf reader: no onnx module needed)."""
    with open(model, "rb") as f:
        buf = memoryview(f.read())
    graph = next(v for fld, w, v in _fields(buf) if fld == 7)
    dims, nodes = {}, []
    for fld, wire, v in _sub(buf, graph):
        if fld == 1:  # NodeProto
            node = {"in": [], "out": [], "op": ""}
            for nf, nw, nv in _sub(buf, v):
                if nf == 1:
                    node["in"].append(_str(buf, nv))
                elif nf == 2:
                    node["out"].append(_str(buf, nv))
                elif nf == 4:
                    node["op"] = _str(buf, nv)
            nodes.append(node)
        elif fld == 5:  # TensorProto: dims (1, maybe packed), name (8)
            name, shape = None, []
            for tf, tw, tv in _sub(buf, v):
                if tf == 1 and tw == 0:
                    shape.append(tv)
                elif tf == 1 and tw == 2:
                    pos, stop = tv[0], tv[0] + tv[1]
                    while pos < stop:
                        d, pos = _varint(buf, pos)
                        shape.append(d)
                elif tf == 8:
                    name = _str(buf, tv)
            dims[name] = shape
        elif fld in (11, 12, 13):  # ValueInfoProto: name, type.tensor_type.shape.dim
            name, shape = None, []
            for vf, vw, vv in _sub(buf, v):
                if vf == 1:
                    name = _str(buf, vv)
                elif vf == 2:
                    for tf, tw, tv in _sub(buf, vv):
                        if tf != 1:
                            continue
                        for sf, sw, sv in _sub(buf, tv):
                            if sf != 2:
                                continue
                            for df, dw, dv in _sub(buf, sv):
                                if df == 1:
                                    size = [x for f2, w2, x in _sub(buf, dv) if f2 == 1]
                                    shape.append(size[0] if size else None)
            dims[name] = shape
    total = 0
    for node in nodes:
        out = dims.get(node["out"][0]) if node["out"] else None
        ins = [dims.get(i) for i in node["in"]]
        if not out or None in out or node["op"] not in ("Conv", "MatMul", "Gemm"):
            continue
        count = 1
        for d in out:
            count *= d
        if node["op"] == "Conv" and ins[1]:
            total += 2 * count * ins[1][1] * ins[1][2] * ins[1][3]
        elif ins[0]:
            total += 2 * count * ins[0][-1]
    return total or None


def peak_flops(threads):
    """Best fp32 FLOP/s of a 1024^3 oneDNN sgemm, on `threads` OpenMP threads."""
    os.environ["OMP_NUM_THREADS"] = str(threads)
    lib = ctypes.CDLL("libdnnl.so.2")
    n = 1024
    f = ctypes.c_float
    a = (f * (n * n))(*([0.5] * (n * n)))
    b = (f * (n * n))(*([0.25] * (n * n)))
    c = (f * (n * n))()
    lib.dnnl_sgemm.argtypes = [ctypes.c_char, ctypes.c_char, ctypes.c_int64, ctypes.c_int64,
                               ctypes.c_int64, f, ctypes.c_void_p, ctypes.c_int64,
                               ctypes.c_void_p, ctypes.c_int64, f, ctypes.c_void_p, ctypes.c_int64]
    best = float("inf")
    for _ in range(12):
        t0 = time.perf_counter()
        lib.dnnl_sgemm(b"N", b"N", n, n, n, 1.0, a, n, b, n, 0.0, c, n)
        best = min(best, time.perf_counter() - t0)
    return 2.0 * n ** 3 / best


BF16_PEAK_N = 2048


def bf16_peak_flops(subgraph, threads, workdir):
    """Best bf16 FLOP/s of subgraph's onednn backend on a 2048^3 MatMul in
    --precision bf16 (bf16 operands, f32 accumulation and output), the best
    of twelve requests. Debian's oneDNN 2.6 exports no bf16 gemm through its
    C API, so the kernel is reached the way the models reach it. A request
    also reorders the f32 input to bf16 (4M elements: 0.9 ms of about 40 ms
    per ONEDNN_VERBOSE, about 2%), so this slightly underestimates the
    kernel's peak."""
    n = BF16_PEAK_N
    path = os.path.join(workdir, "bf16_peak.sg")
    with open(path, "w") as f:
        f.write(f"graph @bf16_peak(%a: f32[{n}, {n}]) opset(ai.onnx = 17) {{\n"
                f"  %b = const f32[{n}, {n}] splat(0.25)\n"
                f"  %c = MatMul(%a, %b) @matmul\n"
                f"  return %c\n"
                f"}}\n")
    out = sg_run(subgraph, path, [], threads, 12, 2, extra=("--random-inputs", "1",
                                                             "--precision", "bf16"))
    return 2.0 * n ** 3 / (out["latency_ms"]["min"] / 1e3)


def cpu_has_native_bf16():
    try:
        with open("/proc/cpuinfo") as f:
            flags = next(l for l in f if l.startswith("flags")).split()
    except (OSError, StopIteration):
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def ensure_onnxruntime():
    """Installs onnxruntime-node 1.30.0 into bench/node_modules when missing.
    --ignore-scripts: the CPU library ships in the package; its install
    script would only try to download GPU files."""
    if os.path.isdir(os.path.join(ROOT, "bench", "node_modules", "onnxruntime-node")):
        return
    log("installing onnxruntime-node 1.30.0 into bench/node_modules ...")
    try:
        subprocess.run(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund"],
                       cwd=os.path.join(ROOT, "bench"), check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"onednn_vs_ort: error: npm install failed ({e}); install npm "
                 "(apt-get install npm) and run: cd bench && npm install --ignore-scripts")


def measure_case(subgraph, workdir, label, model_name, batch, args):
    model = os.path.join(workdir, f"{model_name}_b{batch}.onnx")
    if not os.path.exists(model):
        subprocess.run([subgraph, "zoo", model_name, "--batch", str(batch), "-o", model, "-q"],
                       check=True)
    # One subgraph run with --random-inputs writes the inputs both sides use.
    indir = os.path.join(workdir, f"{model_name}_b{batch}_io")
    subprocess.run([subgraph, "run", model, "--random-inputs", "1", "--output-dir", indir, "-q"],
                   check=True, capture_output=True)
    inputs = [(f[:-4], os.path.join(indir, "inputs", f))
              for f in sorted(os.listdir(os.path.join(indir, "inputs")))]
    result = {"case": label, "flops": model_flops(model), "modes": {}, "ablation": {}}
    for precision in args.precisions:
        mode = {"check_ok": None}
        if not args.skip_check:
            # --precision bf16 loosens --check's tolerance to 1e-1; fp32
            # must pass the strict default.
            check = sg_run(subgraph, model, inputs, args.threads, 1, 0,
                           extra=["--check", "--precision", precision])
            mode["check_ok"] = all(o["check"]["ok"] for o in check["outputs"])
            mode["scaled_error"] = max(o["check"]["scaled_error"] for o in check["outputs"])
            mode["max_rel_error"] = max(o["check"]["max_rel_error"] for o in check["outputs"])
        mode["ms"] = []
        result["modes"][precision] = mode
    ort = OrtTimer(model, inputs, args.threads)
    ort_ms = []
    for r in range(args.rounds):
        line = []
        for precision in args.precisions:
            res = sg_run(subgraph, model, inputs, args.threads, args.runs, 2,
                         extra=["--precision", precision])
            result["modes"][precision]["ms"].append(res["latency_ms"]["median"])
            line.append(f"subgraph {precision} {res['latency_ms']['median']:.2f} ms")
        ort_ms.append(statistics.median(ort.run(args.runs)))
        log(f"  {label} round {r + 1}: {', '.join(line)}, ORT fp32 {ort_ms[-1]:.2f} ms")
    ort.close()
    result["ort_ms"] = statistics.median(ort_ms)
    for mode in result["modes"].values():
        mode["median_ms"] = statistics.median(mode["ms"])
    if args.ablation:
        for level in ("none", "bn", "act", "all"):
            res = sg_run(subgraph, model, inputs, args.threads, args.runs, 2,
                         extra=["--plugin-option", f"onednn.fusion={level}"])
            result["ablation"][level] = res["latency_ms"]["median"]
            log(f"  {label} fusion {level}: {result['ablation'][level]:.2f} ms")
    return result


def check_cell(mode):
    if mode["check_ok"] is None:
        return "not run"
    return (f"{'ok' if mode['check_ok'] else 'FAILED'} (error {mode['scaled_error']:.1e} of the "
            f"output scale)")


def render(results, peak, args, bf16_peak=None):
    """The Markdown tables of one benchmark run."""
    peaks = f"fp32 peak: {peak / 1e9:.1f} GFLOP/s (oneDNN sgemm 1024^3, {args.threads} threads)"
    if bf16_peak:
        peaks += (f"; bf16 peak: {bf16_peak / 1e9:.1f} GFLOP/s ({bf16_peak / peak:.2f}x fp32; "
                  f"subgraph onednn MatMul {BF16_PEAK_N}^3 in --precision bf16)")
    lines = [peaks, ""]
    lines.append("| model | precision | subgraph onednn (ms) | ONNX Runtime fp32 (ms) | "
                 "subgraph/ORT | target | share of its precision's peak | --check vs reference |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for r in results:
        for precision, mode in r["modes"].items():
            ms = mode["median_ms"]
            ratio = ms / r["ort_ms"]
            own_peak = bf16_peak if precision == "bf16" and bf16_peak else peak
            share = f"{100 * r['flops'] / (ms / 1e3) / own_peak:.0f}%" if r["flops"] else "n/a"
            target = BF16_TARGET if precision == "bf16" else TARGETS.get(r["case"])
            if target is None:
                cell = "n/a"
            else:
                cell = (f"<= {target:.2f}x" if precision == "bf16" else f"<= {target}x")
                cell += " met" if ratio <= target else " **missed**"
            lines.append(f"| {r['case']} | {precision} | {ms:.2f} | {r['ort_ms']:.2f} | "
                         f"{ratio:.2f}x | {cell} | {share} | {check_cell(mode)} |")
    if bf16_peak:  # measured only when bf16 was asked for
        lines += ["", "What the bf16 target asks (2.5x ONNX Runtime fp32's speed, in the FLOPs "
                  "the model's Conv, MatMul and Gemm nodes count; bf16 has no Winograd in oneDNN "
                  "2.6, so every one of them is executed):", "",
                  "| model | ONNX Runtime fp32 | bf16 target | GFLOP/s it needs | of the bf16 peak |",
                  "|---|---|---|---|---|"]
        for r in results:
            if not r["flops"] or "bf16" not in r["modes"]:
                continue
            need = r["flops"] / (r["ort_ms"] * BF16_TARGET / 1e3)
            lines.append(f"| {r['case']} | {r['ort_ms']:.2f} ms | {r['ort_ms'] * BF16_TARGET:.2f} ms "
                         f"| {need / 1e9:.0f} | {100 * need / bf16_peak:.0f}% |")
    if args.ablation:
        lines += ["", "Fusion ablation (fp32; each step's speed-up over the previous one):", "",
                  "| model | no fusion | + BN folding | + activation | + sum (all) |",
                  "|---|---|---|---|---|"]
        for r in results:
            a = r["ablation"]
            cells = [f"{a['none']:.2f} ms"]
            for prev, cur in (("none", "bn"), ("bn", "act"), ("act", "all")):
                cells.append(f"{a[cur]:.2f} ms ({a[prev] / a[cur]:.2f}x)")
            lines.append(f"| {r['case']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(results, args, path):
    """A PNG of subgraph/ORT per model and precision (with the targets) and,
    with --ablation, of each fusion level's speed-up. False without
    matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("onednn_vs_ort: note: no plot (apt-get install python3-matplotlib)")
        return False
    panels = 2 if args.ablation else 1
    fig, axes = plt.subplots(1, panels, figsize=(6.5 * panels, 4.2), squeeze=False)
    ax = axes[0][0]
    labels = [r["case"] for r in results]
    width = 0.8 / max(1, len(args.precisions))
    for i, precision in enumerate(args.precisions):
        xs = [j + (i - (len(args.precisions) - 1) / 2) * width for j in range(len(results))]
        ratios = [r["modes"][precision]["median_ms"] / r["ort_ms"] for r in results]
        bars = ax.bar(xs, ratios, width, label=f"subgraph onednn {precision}")
        for b, v in zip(bars, ratios):
            ax.annotate(f"{v:.2f}x", (b.get_x() + b.get_width() / 2, v), ha="center",
                        va="bottom", fontsize=8)
        targets = [BF16_TARGET if precision == "bf16" else TARGETS.get(r["case"], float("nan"))
                   for r in results]
        ax.scatter(xs, targets, marker="_", s=400, color="black", zorder=3,
                   label="target" if i == 0 else None)
    ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    ax.set_xticks(range(len(results)))
    ax.set_xticklabels(labels, fontsize=9)
    ax.set_ylabel("latency / ONNX Runtime fp32 latency (lower is better)")
    ax.set_title(f"subgraph onednn vs ONNX Runtime 1.30, {args.threads} threads")
    ax.legend(fontsize=8)
    if args.ablation:
        ax = axes[0][1]
        levels = [("none", "no fusion"), ("bn", "+ BN folding"), ("act", "+ activation"),
                  ("all", "+ sum")]
        for r in results:
            a = r["ablation"]
            ax.plot([name for _, name in levels], [a["none"] / a[k] for k, _ in levels],
                    marker="o", label=r["case"])
        ax.set_ylabel("speed-up over no fusion (fp32)")
        ax.set_title("fusion ablation")
        ax.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, dpi=110)
    return True


def replace_docs_section(begin, end, body, heading):
    """Puts `body` between the markers `begin` and `end` of docs/benchmarks.md
    (markers kept), or appends it as a new section under `heading`."""
    path = os.path.join(ROOT, "docs", "benchmarks.md")
    with open(path) as f:
        text = f.read()
    section = f"{begin}\n{body}\n{end}"
    if begin in text:
        text = text[:text.index(begin)] + section + text[text.index(end) + len(end):]
    else:
        text += f"\n## {heading}\n\n{section}\n"
    with open(path, "w") as f:
        f.write(text)


def load_average():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def write_docs_section(table, args, plotted, loads):
    """Replaces this script's section of docs/benchmarks.md (between its
    markers), leaving the rest of the file as it is."""
    path = os.path.join(ROOT, "docs", "benchmarks.md")
    begin, end = "<!-- onednn-bench:begin -->", "<!-- onednn-bench:end -->"
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    flags = ["--threads", str(args.threads), "--rounds", str(args.rounds), "--runs",
             str(args.runs), "--precisions", ",".join(args.precisions)]
    if args.ablation:
        flags.append("--ablation")
    section = "\n".join([
        begin,
        "## oneDNN backend vs ONNX Runtime",
        "",
        "Generated by `bench/onednn_vs_ort.py`; do not edit by hand (the discussion follows the "
        "section). subgraph partitions each zoo model for the `onednn` backend "
        "([onednn.md](onednn.md)); ONNX Runtime 1.30.0 (onnxruntime-node, CPU execution "
        "provider, all graph optimizations, fp32) runs the same ONNX file on the same inputs "
        "with the same thread count. They alternate: each round runs "
        f"{args.runs} requests on subgraph in each precision (after 2 warm-ups) and then "
        f"{args.runs} on ONNX Runtime (whose session stays loaded), for {args.rounds} rounds; the "
        "table gives the median over rounds of each round's median. The peak is the best of "
        "twelve 1024^3 oneDNN sgemm calls, the bf16 peak the best of twelve 2048^3 bf16 MatMul "
        "requests on subgraph's onednn backend; a model's share of its precision's peak counts "
        "Conv, MatMul and Gemm FLOPs only (Winograd convolutions do fewer multiplications than "
        "they count, so fp32 shares can pass 100%). Accuracy is `subgraph run --check` against "
        "the reference backend: the largest error divided by the output's largest reference "
        "magnitude.",
        "",
        f"Machine: {cpu}, {os.cpu_count()} cores, {args.threads} threads; "
        f"{time.strftime('%Y-%m-%d')}. Load average (1 min) {loads[0]:.1f} before and "
        f"{loads[1]:.1f} after the run.",
        "",
        "Reproduce:",
        "",
        "```sh",
        "cmake --preset release && cmake --build --preset release",
        "/usr/bin/python3 bench/onednn_vs_ort.py " + " ".join(flags) + " --write-docs",
        "```",
        "",
        *([f"![subgraph/ORT per model and precision; fusion ablation](img/{os.path.basename(PLOT)})",
           ""] if plotted else []),
        table,
        end,
    ])
    text = open(path).read() if os.path.exists(path) else "# Benchmarks\n"
    if begin in text and end in text:
        text = text[:text.index(begin)] + section + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    with open(path, "w") as f:
        f.write(text)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--subgraph", help="the subgraph binary (default: build/{release,ci,dev})")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--models", help="comma-separated case labels, e.g. 'resnet50 b1,bert b1'")
    p.add_argument("--precisions",
                   help="comma-separated: fp32, bf16 (default fp32, plus bf16 where the CPU "
                        "has AVX512-BF16 or AMX)")
    p.add_argument("--ablation", action="store_true", help="also time fusion levels (fp32)")
    p.add_argument("--json", help="write the raw figures here")
    p.add_argument("--workdir")
    p.add_argument("--skip-check", action="store_true",
                   help="do not compare with the reference backend (it is slow at batch 16)")
    p.add_argument("--write-docs", action="store_true",
                   help="replace this script's section of docs/benchmarks.md and its plot")
    args = p.parse_args()
    if args.precisions:
        args.precisions = [x.strip() for x in args.precisions.split(",") if x.strip()]
        bad = [x for x in args.precisions if x not in ("fp32", "bf16")]
        if bad or not args.precisions:
            p.error(f"--precisions takes fp32 and/or bf16, not {','.join(bad) or 'nothing'}")
    else:
        args.precisions = ["fp32", "bf16"] if cpu_has_native_bf16() else ["fp32"]
    if args.rounds < 1 or args.runs < 1 or args.threads < 1:
        p.error("--rounds, --runs and --threads must be at least 1")
    subgraph = find_subgraph(args.subgraph)
    ensure_onnxruntime()
    workdir = args.workdir or tempfile.mkdtemp(prefix="onednn_bench_")
    os.makedirs(workdir, exist_ok=True)
    wanted = [m.strip() for m in args.models.split(",")] if args.models else None
    if wanted:
        unknown = [m for m in wanted if m not in [c[0] for c in CASES]]
        if unknown:
            p.error(f"unknown --models {unknown}; the cases are {[c[0] for c in CASES]}")

    loads = [load_average()]
    peak = peak_flops(args.threads)
    log(f"fp32 peak (oneDNN sgemm 1024^3, {args.threads} threads): {peak / 1e9:.1f} GFLOP/s")
    bf16_peak = None
    if "bf16" in args.precisions:
        bf16_peak = bf16_peak_flops(subgraph, args.threads, workdir)
        log(f"bf16 peak (subgraph onednn MatMul {BF16_PEAK_N}^3, {args.threads} threads): "
            f"{bf16_peak / 1e9:.1f} GFLOP/s")
    results = []
    for label, name, batch in CASES:
        if wanted and label not in wanted:
            continue
        log(f"{label}:")
        results.append(measure_case(subgraph, workdir, label, name, batch, args))
    loads.append(load_average())

    table = render(results, peak, args, bf16_peak)
    print(table)
    if args.write_docs:
        plotted = plot(results, args, PLOT)
        write_docs_section(table, args, plotted, loads)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"peak_flops": peak, "bf16_peak_flops": bf16_peak, "threads": args.threads,
                       "precisions": args.precisions, "load_average": loads,
                       "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
