#!/usr/bin/env python3
"""GPU benchmark of the cuDNN plugin on the zoo's ResNet-50 (docs/cudnn.md).

Runs `subgraph run` on resnet50 at batch 1 and 32, fp32 and fp16, fused
(default) and unfused (--plugin-option cudnn.fusion=off: one cuDNN graph per ONNX
compute op, BatchNormalization still folded), plus oneDNN on the CPU for
scale, each as its own process, one after another in one run, and prints a
Markdown table of median latencies and ratios. Needs a CUDA device.

  python3 bench/cudnn_resnet50.py --subgraph build/ci/bin/subgraph [--runs 20]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def run(subgraph, model, backend, plugin_options, runs, warmup, precision):
    env = dict(os.environ)
    cmd = [subgraph, "run", model, "--backend", backend, "--random-inputs", "1",
           "--runs", str(runs), "--warmup", str(warmup), "--json"]
    for option in plugin_options:
        cmd += ["--plugin-option", option]
    if precision:
        cmd += ["--precision", precision]
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        print(f"failed: {' '.join(cmd)}\n{p.stderr[-2000:]}", file=sys.stderr)
        return None
    j = json.loads(p.stdout)
    regions = j.get("regions", [])
    on_device = sum(1 for r in regions if r.get("backend") == "cudnn" and r.get("provider") == "cudnn")
    return {"median": j["latency_ms"]["median"], "min": j["latency_ms"]["min"],
            "max": j["latency_ms"]["max"], "regions": len(regions), "on_device": on_device,
            "wall_s": wall}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--subgraph", default="build/ci/bin/subgraph")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--batches", default="1,32")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    rows = []
    for batch in [int(b) for b in args.batches.split(",")]:
        model = os.path.join(tmp, f"resnet50_b{batch}.onnx")
        subprocess.run([args.subgraph, "zoo", "resnet50", "--batch", str(batch), "-o", model],
                       check=True, capture_output=True)
        runs = args.runs if batch == 1 else max(3, args.runs // 2)
        cases = [("onednn (CPU)", "onednn", [], None)]
        for precision in ("fp32", "fp16"):
            cases.append((f"cudnn {precision} fused", "cudnn,onednn", [], precision))
            cases.append((f"cudnn {precision} unfused", "cudnn,onednn",
                          ["cudnn.fusion=off"], precision))
        results = {}
        for name, backend, options, precision in cases:
            r = run(args.subgraph, model, backend, options, runs, args.warmup, precision)
            results[name] = r
            print(f"batch {batch} {name}: {r}", file=sys.stderr, flush=True)
        for name, r in results.items():
            rows.append((batch, name, r, results.get(name.replace("fused", "unfused") if "unfused" not in name else name)))
    print("| batch | configuration | regions (on GPU) | median ms | min-max ms | images/s | unfused / fused | process wall s |")
    print("|---:|---|---:|---:|---|---:|---:|---:|")
    for batch, name, r, unf in rows:
        if r is None:
            print(f"| {batch} | {name} | failed | | | | | |")
            continue
        ratio = ""
        if "cudnn" in name and "unfused" not in name and unf:
            ratio = f"{unf['median'] / r['median']:.2f}x"
        print(f"| {batch} | {name} | {r['regions']} ({r['on_device']}) | {r['median']:.2f} | "
              f"{r['min']:.2f}-{r['max']:.2f} | {batch * 1000 / r['median']:.1f} | {ratio} | {r['wall_s']:.1f} |")


if __name__ == "__main__":
    main()
