#!/usr/bin/env python3
"""Throughput of pipelined stages against the same stages run in turn.

Usage (from the repository root, after a release or ci build):

    python3 bench/pipeline.py --build build/release [--backend NONE] \
        [--stages 1,2,3] [--batch 6] [--micro-batches 6] [--threads 1] \
        [--runs 10] [--rounds 3] [--write-docs]

The zoo ResNet-50 with a free batch (written once into a scratch folder)
runs through `subgraph run --stages N --micro-batches M`, which cuts it into
N stages (planned for one micro-batch), pipelines the M micro-batches of a
batch of B images over them (one thread per stage), runs the stages in turn
on the same inputs, requires equal outputs and prints both medians. Rounds
alternate the stage counts so that drift hits each; the table gives the
median of the per-round medians, the speedup and the ideal for equal
stages, N*M/(M+N-1). --write-docs rewrites the section between the
pipeline markers of docs/benchmarks.md. Exit status 0, or 2 on an error.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

LINE = re.compile(r"pipelined median ([0-9.]+) ms, the stages in turn ([0-9.]+) ms")


def one_round(program, model, args, stages):
    command = [program, "run", model, "--backend", args.backend, "--threads", str(args.threads),
               "--shape", f"input={args.batch},3,224,224", "--random-inputs", "1",
               "--stages", str(stages), "--micro-batches", str(args.micro_batches),
               "--warmup", "1", "--runs", str(args.runs)]
    done = subprocess.run(command, capture_output=True, text=True)
    found = LINE.search(done.stdout)
    if done.returncode != 0 or not found:
        raise RuntimeError(f"{' '.join(command)}: {done.stderr.strip() or done.stdout.strip()}")
    return float(found.group(1)), float(found.group(2))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build/release")
    parser.add_argument("--backend", default="NONE")
    parser.add_argument("--stages", default="1,2,3")
    parser.add_argument("--batch", type=int, default=6)
    parser.add_argument("--micro-batches", type=int, default=6)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    program = os.path.join(ROOT, args.build, "bin", "subgraph")
    counts = [int(s) for s in args.stages.split(",")]
    with tempfile.TemporaryDirectory() as scratch:
        model = os.path.join(scratch, "resnet50.sg")
        subprocess.run([program, "zoo", "resnet50", "--batch", "0", "-o", model, "-q"],
                       check=True, capture_output=True)
        load = os.getloadavg()[0]
        results = {n: ([], []) for n in counts}
        try:
            for _ in range(args.rounds):
                for n in counts:
                    piped, turn = one_round(program, model, args, n)
                    results[n][0].append(piped)
                    results[n][1].append(turn)
        except (RuntimeError, subprocess.CalledProcessError) as e:
            print(f"pipeline: {e}", file=sys.stderr)
            return 2
    rows = ["| stages | pipelined median ms | in turn median ms | speedup | ideal for equal stages |",
            "|---:|---:|---:|---:|---:|"]
    for n in counts:
        piped = statistics.median(results[n][0])
        turn = statistics.median(results[n][1])
        ideal = n * args.micro_batches / (args.micro_batches + n - 1)
        rows.append(f"| {n} | {piped:.1f} | {turn:.1f} | {turn / piped:.2f} | {ideal:.2f} |")
    command = (f"python3 bench/pipeline.py --build {args.build} --backend {args.backend} "
               f"--stages {args.stages} --batch {args.batch} --micro-batches "
               f"{args.micro_batches} --threads {args.threads} --runs {args.runs} "
               f"--rounds {args.rounds}")
    body = (f"`{command}` (zoo ResNet-50, batch {args.batch} in {args.micro_batches} "
            f"micro-batches, {args.threads} thread(s) per stage, load average {load:.2f} "
            f"before):\n\n" + "\n".join(rows))
    print(body)
    if args.write_docs:
        from onednn_vs_ort import replace_docs_section
        replace_docs_section("<!-- pipeline:begin -->", "<!-- pipeline:end -->", body,
                             "Pipelined stages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
