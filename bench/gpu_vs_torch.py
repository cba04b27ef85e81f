#!/usr/bin/env python3
"""bench/gpu_vs_torch.py - subgraph's cuDNN backend against PyTorch on the same GPU.

Runs, in one process and on one GPU, for each model and batch size:
  * subgraph: `subgraph run MODEL --backend cudnn --precision fp16 --json`
    (the CLI, as users run it; the model is the zoo's, exported by
    `subgraph zoo`), median latency of its timed requests;
  * PyTorch: torchvision's model of the same name, fp16, channels-last,
    torch.backends.cudnn.benchmark = True, eager and replayed from a CUDA
    graph (torch.cuda.CUDAGraph), timed with CUDA events.
It prints a table (median ms, images/s, subgraph / PyTorch ratios) naming
the card, and with --write-docs replaces the "GPU: subgraph against
PyTorch" section of docs/benchmarks.md.

Usage (on a machine with an NVIDIA GPU and PyTorch):
  python3 bench/gpu_vs_torch.py --subgraph DIR/bin/subgraph [--models resnet50,mobilenetv2]
      [--batches 1,32] [--runs 100] [--write-docs]
Needs LD_LIBRARY_PATH to reach the program's libraries and CUDA's.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCHVISION = {"resnet50": "resnet50", "mobilenetv2": "mobilenet_v2"}


def subgraph_ms(program, model, batch, runs, workdir):
    path = os.path.join(workdir, f"{model}_b{batch}.onnx")
    if not os.path.exists(path):
        subprocess.run([program, "zoo", model, "--batch", str(batch), "-o", path, "-q"],
                       check=True)
    cmd = [program, "run", path, "--backend", "cudnn", "--precision", "fp16", "--random-inputs",
           "1", "--runs", str(runs), "--warmup", "10", "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        return None, out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed"
    return json.loads(out.stdout)["latency_ms"]["median"], ""


def torch_ms(model, batch, runs, graph):
    import torch
    import torchvision

    torch.backends.cudnn.benchmark = True
    net = getattr(torchvision.models, TORCHVISION[model])().eval().cuda().half()
    net = net.to(memory_format=torch.channels_last)
    x = torch.randn(batch, 3, 224, 224, device="cuda", dtype=torch.half)
    x = x.contiguous(memory_format=torch.channels_last)
    with torch.inference_mode():
        for _ in range(10):
            net(x)
        torch.cuda.synchronize()
        step = lambda: net(x)  # noqa: E731
        if graph:
            g = torch.cuda.CUDAGraph()
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    net(x)
            torch.cuda.current_stream().wait_stream(s)
            with torch.cuda.graph(g):
                net(x)
            step = g.replay
        times = []
        for _ in range(runs):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            step()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--subgraph", required=True, help="the subgraph program")
    ap.add_argument("--models", default="resnet50,mobilenetv2")
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args()
    import torch

    if not torch.cuda.is_available():
        sys.exit("gpu_vs_torch: error: PyTorch sees no CUDA device")
    card = torch.cuda.get_device_name(0)
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for model in args.models.split(","):
            for batch in [int(b) for b in args.batches.split(",")]:
                sg, why = subgraph_ms(args.subgraph, model, batch, args.runs, workdir)
                eager = torch_ms(model, batch, args.runs, graph=False)
                replay = torch_ms(model, batch, args.runs, graph=True)
                rows.append((model, batch, sg, why, eager, replay))
                print(f"{model} batch {batch}: subgraph {sg} ms ({why}), torch eager {eager:.3f} "
                      f"ms, graph {replay:.3f} ms", file=sys.stderr, flush=True)
    lines = [f"| model, fp16 ({card}) | batch | subgraph cudnn ms | images/s | PyTorch eager ms "
             f"| PyTorch CUDA graph ms | subgraph / eager | subgraph / graph |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for model, batch, sg, why, eager, replay in rows:
        if sg is None:
            lines.append(f"| {model} | {batch} | fails: {why} | | {eager:.3f} | {replay:.3f} | | |")
            continue
        lines.append(f"| {model} | {batch} | {sg:.3f} | {batch * 1000 / sg:.0f} | {eager:.3f} | "
                     f"{replay:.3f} | {sg / eager:.2f} | {sg / replay:.2f} |")
    table = "\n".join(lines)
    print(table)
    if args.write_docs:
        sys.path.insert(0, os.path.join(ROOT, "bench"))
        from onednn_vs_ort import replace_docs_section

        body = (f"`python3 bench/gpu_vs_torch.py` on {card}, {time.strftime('%Y-%m-%d')}, "
                f"{args.runs} timed requests each (medians):\n\n{table}")
        replace_docs_section("<!-- gpu-vs-torch:begin -->", "<!-- gpu-vs-torch:end -->", body,
                             "GPU: subgraph against PyTorch")


if __name__ == "__main__":
    main()
