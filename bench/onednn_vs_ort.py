#!/usr/bin/python3
"""bench/onednn_vs_ort.py - subgraph's onednn backend against ONNX Runtime.

Runs zoo models on subgraph (partitioned for the onednn backend) and on
ONNX Runtime's CPU execution provider (onnxruntime-node 1.30.0, MLAS), on
the same ONNX files, the same inputs and the same thread count. Each
round runs R requests on one and then R on the other, alternating for
several rounds so that both see the same machine state; the report gives
the median latency of each over all rounds and the ratio subgraph/ORT.

It also measures the machine's fp32 peak with a oneDNN matmul (dnnl_sgemm
through ctypes), reports each model's share of it, and with --ablation
times the onednn conv family at fusion levels none / bn / act / all
($SUBGRAPH_ONEDNN_FUSION). Pure standard library: inputs come from
`subgraph run --random-inputs`, which writes them as .npy files.

Setup:  cd bench && npm install --ignore-scripts   (onnxruntime-node)
Usage:  /usr/bin/python3 bench/onednn_vs_ort.py [--subgraph PATH]
            [--threads 2] [--rounds 5] [--runs 5] [--models a,b]
            [--ablation] [--bf16] [--json OUT.json]
Prints a Markdown table (the one in docs/benchmarks.md).
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
]
TARGETS = {"resnet50 b1": 0.9, "resnet50 b16": 0.9, "mobilenetv2 b1": 1.0, "bert b1": 1.0}


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
    env.pop("SUBGRAPH_BACKEND", None)
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


def measure_case(subgraph, workdir, label, model_name, batch, args):
    model = os.path.join(workdir, f"{model_name}_b{batch}.onnx")
    if not os.path.exists(model):
        subprocess.run([subgraph, "zoo", model_name, "--batch", str(batch), "-o", model, "-q"],
                       check=True)
    # One subgraph run with --random-inputs writes the inputs both sides use.
    indir = os.path.join(workdir, f"{model_name}_b{batch}_io")
    # In bf16 mode the check reports the error (a loose tolerance keeps the
    # command from failing on it); fp32 must pass the default tolerance.
    env = {"SUBGRAPH_ONEDNN_PRECISION": "bf16"} if args.bf16 else {}
    check = sg_run(subgraph, model, [], args.threads, 1, 0, env,
                   extra=["--random-inputs", "1", "--output-dir", indir,
                          *([] if args.skip_check else ["--check"]),
                          *(["--tolerance", "10"] if args.bf16 else [])])
    ok = None if args.skip_check else all(o["check"]["ok"] for o in check["outputs"])
    inputs = [(f[:-4], os.path.join(indir, "inputs", f))
              for f in sorted(os.listdir(os.path.join(indir, "inputs")))]
    ort = OrtTimer(model, inputs, args.threads)
    sg_ms, ort_ms = [], []
    for r in range(args.rounds):
        res = sg_run(subgraph, model, inputs, args.threads, args.runs, 2, env)
        sg_ms.append(res["latency_ms"]["median"])
        ort_ms.append(statistics.median(ort.run(args.runs)))
        log(f"  {label} round {r + 1}: subgraph {sg_ms[-1]:.2f} ms, ORT {ort_ms[-1]:.2f} ms")
    ablation = {}
    if args.ablation:
        for level in ("none", "bn", "act", "all"):
            res = sg_run(subgraph, model, inputs, args.threads, args.runs, 2,
                         {**env, "SUBGRAPH_ONEDNN_FUSION": level})
            ablation[level] = res["latency_ms"]["median"]
            log(f"  {label} fusion {level}: {ablation[level]:.2f} ms")
    ort.close()
    return {"case": label, "subgraph_ms": statistics.median(sg_ms),
            "ort_ms": statistics.median(ort_ms), "check_ok": ok,
            "max_rel_error": None if args.skip_check else
            max(o["check"]["max_rel_error"] for o in check["outputs"]),
            "flops": model_flops(model), "ablation": ablation}


def check_cell(r):
    if r["check_ok"] is None:
        return "not run"
    return f"{'ok' if r['check_ok'] else 'FAILED'} (max rel {r['max_rel_error']:.1e})"


def render(results, peak, args):
    """The Markdown tables of one benchmark run."""
    lines = [f"fp32 peak: {peak / 1e9:.1f} GFLOP/s (oneDNN sgemm 1024^3, {args.threads} threads)", ""]
    mode = "bf16" if args.bf16 else "fp32"
    lines.append(f"| model | subgraph onednn {mode} (ms) | ONNX Runtime fp32 (ms) | subgraph/ORT | "
                 "target | share of fp32 peak | --check vs reference |")
    lines.append("|---|---|---|---|---|---|---|")
    for r in results:
        ratio = r["subgraph_ms"] / r["ort_ms"]
        share = (f"{100 * r['flops'] / (r['subgraph_ms'] / 1e3) / peak:.0f}%"
                 if r["flops"] else "n/a")
        target = TARGETS.get(r["case"]) if not args.bf16 else None
        met = "" if target is None else (" met" if ratio <= target else " **missed**")
        lines.append(f"| {r['case']} | {r['subgraph_ms']:.2f} | {r['ort_ms']:.2f} | {ratio:.2f}x | "
                     f"{'<= ' + str(target) + 'x' + met if target else 'n/a'} | {share} | "
                     f"{check_cell(r)} |")
    if args.ablation:
        lines += ["", "| model | no fusion | + BN folding | + activation | + sum (all) |",
                  "|---|---|---|---|---|"]
        for r in results:
            a = r["ablation"]
            cells = [f"{a['none']:.2f} ms"]
            for prev, cur in (("none", "bn"), ("bn", "act"), ("act", "all")):
                cells.append(f"{a[cur]:.2f} ms ({a[prev] / a[cur]:.2f}x)")
            lines.append(f"| {r['case']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_docs_section(table, args):
    """Replaces this script's section of docs/benchmarks.md (between its
    markers), leaving the rest of the file as it is."""
    path = os.path.join(ROOT, "docs", "benchmarks.md")
    begin, end = "<!-- onednn-bench:begin -->", "<!-- onednn-bench:end -->"
    mode = "bf16" if args.bf16 else "fp32"
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    section = "\n".join([
        begin,
        f"## oneDNN backend vs ONNX Runtime ({mode})",
        "",
        "Generated by `bench/onednn_vs_ort.py`; do not edit by hand. subgraph partitions each zoo "
        "model for the `onednn` backend ([onednn.md](onednn.md)); ONNX Runtime 1.30.0 "
        "(onnxruntime-node, CPU execution provider, all graph optimizations) runs the same ONNX "
        "file on the same inputs with the same thread count. The two alternate: each round runs "
        f"{args.runs} requests on subgraph (after 2 warm-ups) and then {args.runs} on ONNX Runtime "
        f"(whose session stays loaded), for {args.rounds} rounds; the table gives the median over "
        "rounds of each round's median. The peak is the best of twelve 1024^3 oneDNN sgemm calls; "
        "a model's share of it counts Conv, MatMul and Gemm FLOPs only.",
        "",
        f"Machine: {cpu}, {os.cpu_count()} cores, {args.threads} threads; "
        f"{time.strftime('%Y-%m-%d')}.",
        "",
        "Reproduce:",
        "",
        "```sh",
        "cmake --preset release && cmake --build --preset release",
        "cd bench && npm install --ignore-scripts && cd ..",
        f"/usr/bin/python3 bench/onednn_vs_ort.py --threads {args.threads} --rounds {args.rounds} "
        f"--runs {args.runs}{' --ablation' if args.ablation else ''}{' --bf16' if args.bf16 else ''}"
        " --write-docs",
        "```",
        "",
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
    p.add_argument("--subgraph")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--models", help="comma-separated case labels, e.g. 'resnet50 b1,bert b1'")
    p.add_argument("--ablation", action="store_true")
    p.add_argument("--bf16", action="store_true", help="subgraph in the bf16 precision mode")
    p.add_argument("--json")
    p.add_argument("--workdir")
    p.add_argument("--skip-check", action="store_true",
                   help="do not compare with the reference backend (it is slow at batch 16)")
    p.add_argument("--write-docs", action="store_true",
                   help="replace this script's section of docs/benchmarks.md")
    args = p.parse_args()
    subgraph = find_subgraph(args.subgraph)
    workdir = args.workdir or tempfile.mkdtemp(prefix="onednn_bench_")
    os.makedirs(workdir, exist_ok=True)
    wanted = [m.strip() for m in args.models.split(",")] if args.models else None

    peak = peak_flops(args.threads)
    log(f"fp32 peak (oneDNN sgemm 1024^3, {args.threads} threads): {peak / 1e9:.1f} GFLOP/s")
    results = []
    for label, name, batch in CASES:
        if wanted and label not in wanted:
            continue
        log(f"{label}:")
        results.append(measure_case(subgraph, workdir, label, name, batch, args))

    table = render(results, peak, args)
    print(table)
    if args.write_docs:
        write_docs_section(table, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"peak_flops": peak, "threads": args.threads, "bf16": args.bf16,
                       "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
