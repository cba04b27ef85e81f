#!/usr/bin/env python3
"""Throughput of pipelined stages against the same stages run in turn.

Usage (from the repository root, after a release or ci build):

    python3 bench/pipeline.py --build build/release [--backend NONE] \
        [--model resnet50|chain] [--delay-us D] \
        [--stages 1,2,3] [--batch 6] [--micro-batches 6] [--threads 1] \
        [--runs 10] [--rounds 3] [--mpi] [--write-docs]

With --mpi, each stage count above one also runs under `mpirun -np N` over
loopback TCP (one stage per rank) on the same inputs, and the table gives
its median beside the one-process pipeline's.

With --backend emudev, stage k runs on emulated device emu:k (plugin ABI 6,
emudev.device_count), and --delay-us makes each region's work wait that
long on its device's queue: a device-bound pipeline. --model chain is 12
equal Conv+Relu blocks, so that N stages hold 12/N equal regions each.

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
MPI_LINE = re.compile(r"over \d+ ranks, \d+ runs: median ([0-9.]+) ms")
MPIRUN = ["mpirun", "--oversubscribe", "--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include",
          "lo"]
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


CHAIN_BLOCKS = 12


def chain_model():
    """12 equal Conv+Relu blocks on a free batch: equal regions on emudev."""
    lines = ["graph @chain(%input: f32[N, 8, 8, 8]) {"]
    for b in range(CHAIN_BLOCKS):
        lines.append(f"  %w{b} = const f32[8, 8, 3, 3] splat(0.04)")
    value = "input"
    for b in range(CHAIN_BLOCKS):
        lines.append(f"  %c{b} = Conv(%{value}, %w{b}) {{pads = [1, 1, 1, 1]}} @conv{b}")
        lines.append(f"  %r{b} = Relu(%c{b}) @relu{b}")
        value = f"r{b}"
    lines += [f"  return %{value}", "}"]
    return "\n".join(lines) + "\n"


def one_round(program, model, args, stages):
    shape = "8,8,8" if args.model == "chain" else "3,224,224"
    command = [program, "run", model, "--backend", args.backend, "--threads", str(args.threads),
               "--shape", f"input={args.batch},{shape}", "--random-inputs", "1",
               "--micro-batches", str(args.micro_batches), "--warmup", "1", "--runs",
               str(args.runs)]
    if args.backend == "emudev":
        command += ["--plugin-option", f"emudev.device_count={stages}", "--plugin-option",
                    f"emudev.delay_us={args.delay_us}", "--devices",
                    ",".join(f"emu:{k}" for k in range(stages))]
    else:
        command += ["--stages", str(stages)]
    done = subprocess.run(command, capture_output=True, text=True)
    found = LINE.search(done.stdout)
    if done.returncode != 0 or not found:
        raise RuntimeError(f"{' '.join(command)}: {done.stderr.strip() or done.stdout.strip()}")
    ranks = None
    if args.mpi and stages > 1:
        if "--devices" in command:  # one device per rank: the names are the stages'
            command[command.index("--devices") + 1] = ",".join(f"dev:{k}" for k in range(stages))
        ranked = subprocess.run(MPIRUN + ["-np", str(stages)] + command, capture_output=True,
                                text=True, env=MPI_ENV)
        on_ranks = MPI_LINE.search(ranked.stdout)
        if ranked.returncode != 0 or not on_ranks:
            raise RuntimeError(f"mpirun: {ranked.stderr.strip() or ranked.stdout.strip()}")
        ranks = float(on_ranks.group(1))
    return float(found.group(1)), float(found.group(2)), ranks


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build/release")
    parser.add_argument("--backend", default="NONE")
    parser.add_argument("--model", choices=["resnet50", "chain"], default="resnet50")
    parser.add_argument("--delay-us", type=int, default=0)
    parser.add_argument("--stages", default="1,2,3")
    parser.add_argument("--batch", type=int, default=6)
    parser.add_argument("--micro-batches", type=int, default=6)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mpi", action="store_true")
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    program = os.path.join(ROOT, args.build, "bin", "subgraph")
    counts = [int(s) for s in args.stages.split(",")]
    with tempfile.TemporaryDirectory() as scratch:
        model = os.path.join(scratch, f"{args.model}.sg")
        if args.model == "chain":
            with open(model, "w") as f:
                f.write(chain_model())
        else:
            subprocess.run([program, "zoo", "resnet50", "--batch", "0", "-o", model, "-q"],
                           check=True, capture_output=True)
        load = os.getloadavg()[0]
        results = {n: ([], [], []) for n in counts}
        try:
            for _ in range(args.rounds):
                for n in counts:
                    piped, turn, ranks = one_round(program, model, args, n)
                    results[n][0].append(piped)
                    results[n][1].append(turn)
                    if ranks is not None:
                        results[n][2].append(ranks)
        except (RuntimeError, subprocess.CalledProcessError) as e:
            print(f"pipeline: {e}", file=sys.stderr)
            return 2
    rows = ["| stages | pipelined median ms | in turn median ms | speedup | ideal for equal stages |"
            + (" mpirun -np N median ms | speedup |" if args.mpi else ""),
            "|---:|---:|---:|---:|---:|" + ("---:|---:|" if args.mpi else "")]
    for n in counts:
        piped = statistics.median(results[n][0])
        turn = statistics.median(results[n][1])
        ideal = n * args.micro_batches / (args.micro_batches + n - 1)
        row = f"| {n} | {piped:.1f} | {turn:.1f} | {turn / piped:.2f} | {ideal:.2f} |"
        if args.mpi:
            ranks = statistics.median(results[n][2]) if results[n][2] else None
            row += f" {ranks:.1f} | {turn / ranks:.2f} |" if ranks else " | |"
        rows.append(row)
    command = (f"python3 bench/pipeline.py --build {args.build} --backend {args.backend} "
               f"--model {args.model} --delay-us {args.delay_us} "
               f"--stages {args.stages} --batch {args.batch} --micro-batches "
               f"{args.micro_batches} --threads {args.threads} --runs {args.runs} "
               f"--rounds {args.rounds}" + (" --mpi" if args.mpi else ""))
    what = ("zoo ResNet-50" if args.model == "resnet50" else
            f"{CHAIN_BLOCKS} equal Conv+Relu blocks")
    where = (f"stage k on emulated device emu:k, each region waiting {args.delay_us} us on "
             "its device's queue" if args.backend == "emudev" else f"backend {args.backend}")
    body = (f"`{command}` ({what}, {where}, batch {args.batch} in {args.micro_batches} "
            f"micro-batches, {args.threads} thread(s) per stage, load average {load:.2f} "
            f"before):\n\n" + "\n".join(rows))
    print(body)
    if args.write_docs:
        from onednn_vs_ort import replace_docs_section
        tag = "pipeline-devices" if args.backend == "emudev" else "pipeline"
        replace_docs_section(f"<!-- {tag}:begin -->", f"<!-- {tag}:end -->", body,
                             "Pipelined stages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
