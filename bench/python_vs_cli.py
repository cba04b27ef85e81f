#!/usr/bin/env python3
"""Measures what the Python package adds over the `subgraph` program.

Usage (from the repository root, after a ci or release build):

    python3 bench/python_vs_cli.py --build build/ci [--backend onednn] \
        [--threads 2] [--runs 30] [--rounds 5] [--write-docs]

The same model (the zoo's ResNet-50, written once into a scratch folder),
the same backend and threads, the same input, two ways:
  * the program: `subgraph run MODEL --backend B --threads T --warmup 3
    --runs R --json`, whose latency_ms.median is the median of R requests
    (each request's wall time inside the session's run());
  * Python: subgraph.Session(MODEL, backends=[B], threads=T), 3 warm-up
    runs, then R timed calls of session.run({name: array}) measured with
    time.perf_counter around each call: numpy in, numpy out, the GIL
    released and taken back.
Rounds alternate the two (program first, then Python) so drift on a shared
machine hits both; the table gives the median of the per-round medians and
their ratio. --write-docs rewrites the section between the python-vs-cli
markers of docs/benchmarks.md. Exit status 0, or 2 on a usage or run error.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time


def cli_median(program, model, backend, threads, runs):
    out = subprocess.run([program, "run", model, "--backend", backend, "--threads", str(threads),
                          "--random-inputs", "0", "--warmup", "3", "--runs", str(runs), "--json"],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["latency_ms"]["median"]


def python_median(subgraph, np, model, backend, threads, runs):
    session = subgraph.Session(model, backends=[backend], threads=threads)
    name, dtype, dims = session.inputs[0]
    x = np.random.default_rng(0).uniform(-1, 1, dims).astype(dtype)
    for _ in range(3):
        session.run({name: x})
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        session.run({name: x})
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def write_docs(path, text):
    begin, end = "<!-- python-vs-cli:begin -->", "<!-- python-vs-cli:end -->"
    doc = open(path).read()
    if begin in doc:
        doc = doc[:doc.index(begin)] + begin + "\n" + text + end + doc[doc.index(end) + len(end):]
    else:
        doc += "\n" + begin + "\n" + text + end + "\n"
    open(path, "w").write(doc)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build/ci")
    ap.add_argument("--backend", default="onednn")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args()
    program = os.path.join(args.build, "bin", "subgraph")
    sys.path.insert(0, os.path.join(args.build, "python"))
    try:
        import numpy as np
        import subgraph
    except ImportError as e:
        print("python_vs_cli: cannot import the package from %s: %s" % (args.build, e))
        return 2
    with tempfile.TemporaryDirectory() as scratch:
        model = os.path.join(scratch, "resnet50.onnx")
        subprocess.run([program, "zoo", "resnet50", "-o", model, "-q"], check=True)
        cli, py = [], []
        for r in range(args.rounds):
            cli.append(cli_median(program, model, args.backend, args.threads, args.runs))
            py.append(python_median(subgraph, np, model, args.backend, args.threads, args.runs))
            print("round %d: program %.3f ms, Python %.3f ms" % (r + 1, cli[-1], py[-1]))
    c, p = statistics.median(cli), statistics.median(py)
    table = ("| ResNet-50, %s, %d threads | program median ms | Python median ms | Python / program |\n"
             "|---|---:|---:|---:|\n"
             "| %d rounds of %d requests, %s | %.3f | %.3f | %.3f |\n"
             % (args.backend, args.threads, args.rounds, args.runs, platform.node() or "this machine",
                c, p, p / c))
    print(table)
    if args.write_docs:
        write_docs("docs/benchmarks.md", table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
