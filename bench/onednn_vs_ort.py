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
import re
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


SG_VALUE = re.compile(r"%([\w.\-/:]+)(?::\s*\w+\[([^\]]*)\]|\s*=\s*const\s+\w+\[([^\]]*)\])")
SG_NODE = re.compile(r"^\s*%([\w.\-/:]+):\s*\w+\[([^\]]*)\]\s*=\s*(\w+)\(([^)]*)\)")


def model_flops(subgraph, model_name, batch):
    """2 x multiply-adds of Conv, MatMul and Gemm, read from the model's text
    form (`subgraph zoo NAME -o -`), whose values carry inferred shapes."""
    proc = subprocess.Popen([subgraph, "zoo", model_name, "--batch", str(batch), "-o", "-", "-q"],
                            stdout=subprocess.PIPE, text=True)
    dims = {}
    total = 0

    def parse(text):
        return [int(d) for d in text.split(",") if d.strip().isdigit()]

    for line in proc.stdout:
        head = line[:2000]  # constants carry their data after the type
        node = SG_NODE.match(head)
        if node:
            name, out, op, args = node.groups()
            out = parse(out)
            dims[name] = out
            ins = [dims.get(a.strip().lstrip("%")) for a in args.split(",")]
            count = 1
            for d in out:
                count *= d
            if op == "Conv" and ins[1]:
                w = ins[1]
                total += 2 * count * w[1] * w[2] * w[3]
            elif op in ("MatMul", "Gemm") and ins[0]:
                total += 2 * count * ins[0][-1]
            continue
        for m in SG_VALUE.finditer(head):
            dims[m.group(1)] = parse(m.group(2) or m.group(3) or "")
    proc.wait()
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
    check = sg_run(subgraph, model, [], args.threads, 1, 0,
                   extra=["--random-inputs", "1", "--output-dir", indir, "--check"])
    ok = all(o.get("check", {}).get("ok", False) for o in check["outputs"])
    inputs = [(f[:-4], os.path.join(indir, "inputs", f))
              for f in sorted(os.listdir(os.path.join(indir, "inputs")))]
    env = {"SUBGRAPH_ONEDNN_PRECISION": "bf16"} if args.bf16 else {}
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
            "max_rel_error": max(o["check"]["max_rel_error"] for o in check["outputs"]),
            "flops": model_flops(subgraph, model_name, batch), "ablation": ablation}


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

    print(f"fp32 peak: {peak / 1e9:.1f} GFLOP/s (oneDNN sgemm, {args.threads} threads)\n")
    mode = "bf16" if args.bf16 else "fp32"
    print(f"| model | subgraph onednn {mode} (ms) | ONNX Runtime fp32 (ms) | ratio | target | "
          f"share of fp32 peak | check |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        ratio = r["subgraph_ms"] / r["ort_ms"]
        share = (f"{100 * r['flops'] / (r['subgraph_ms'] / 1e3) / peak:.0f}%"
                 if r["flops"] else "n/a")
        target = TARGETS.get(r["case"])
        met = "" if target is None else (" (met)" if ratio <= target else " (missed)")
        print(f"| {r['case']} | {r['subgraph_ms']:.2f} | {r['ort_ms']:.2f} | {ratio:.2f}x | "
              f"<= {target}x{met} | {share} | "
              f"{'ok' if r['check_ok'] else 'FAILED'} (max rel {r['max_rel_error']:.1e}) |")
    if args.ablation:
        print("\n| model | no fusion | + BN folding | + activation | + sum (all) |")
        print("|---|---|---|---|---|")
        for r in results:
            a = r["ablation"]
            cells = [f"{a['none']:.2f} ms"]
            for prev, cur in (("none", "bn"), ("bn", "act"), ("act", "all")):
                cells.append(f"{a[cur]:.2f} ms ({a[prev] / a[cur]:.2f}x)")
            print(f"| {r['case']} | " + " | ".join(cells) + " |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"peak_flops": peak, "threads": args.threads, "mode": mode,
                       "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
