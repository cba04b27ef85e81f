#!/usr/bin/env python3
"""Checks that one traversal per backend fuses what one pass per property did.

Usage (from the repository root, after a ci or release build and with the
model packages of bench/real_models.py installed):

    python3 bench/same_partitions.py [--subgraph build/ci/bin/subgraph]
        [--backends onednn,example_convbn,cudnn,convbnrelu]

For every real model bench/real_models.py knows and every backend, runs
`subgraph partition MODEL --backend B --json` with `--traversal
per-backend` (the default) and `--traversal per-property` (the older
order), and compares the regions: each region's property and member
names, whatever the numbering. Prints a table and exits 1 if any model
differs (2 on a usage or run error). cuDNN partitions with
SUBGRAPH_CUDNN_SELECTION_ONLY=1, so no GPU is needed.

Across versions: `--save DIR` writes this build's regions (per-backend
order) to DIR; a later `--against DIR` compares another build's regions
with them by member names only, since a family's properties may have
been merged (oneDNN's 16 conv properties became `conv` and
`conv_hswish`): the regions must hold the same nodes.
"""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import real_models  # noqa: E402  (the model list and their installation)


def regions(subgraph, model, backend, traversal):
    env = dict(os.environ, SUBGRAPH_CUDNN_SELECTION_ONLY="1")
    r = subprocess.run([subgraph, "partition", model, "--backend", backend, "--json",
                        "--traversal", traversal], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["(no message)"])[-1][:120]
    report = json.loads(r.stdout)
    found = sorted((g["property"], tuple(sorted(g["nodes"]))) for g in report["regions"])
    return found, f"{len(found)} regions, {report['partition_ms']:.1f} ms"


def members(found):
    return sorted(nodes for _, nodes in found)


def across_versions(args, name, model, backend):
    """--save or --against for one pair; returns 1 if it differs."""
    a, ta = regions(args.subgraph, model, backend, "per-backend")
    path = os.path.join(args.save or args.against, f"{name}.{backend}.json".replace("/", "_"))
    if args.save:
        with open(path, "w") as f:
            json.dump({"regions": a, "summary": ta}, f)
        print(f"| {name} | {backend} | {ta} | saved |")
        return 0
    if not os.path.exists(path):
        print(f"| {name} | {backend} | {ta} | not saved | - |")
        return 0
    with open(path) as f:
        saved = json.load(f)
    old = [(p, tuple(n)) for p, n in saved["regions"]] if saved["regions"] is not None else None
    same = a is not None and old is not None and members(a) == members(old)
    print(f"| {name} | {backend} | {ta} | {saved['summary']} | {'yes' if same else 'NO'} |")
    return 0 if same else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subgraph", default="build/ci/bin/subgraph")
    parser.add_argument("--backends", default="onednn,example_convbn,cudnn,convbnrelu")
    parser.add_argument("--save", metavar="DIR", help="save this build's regions to DIR")
    parser.add_argument("--against", metavar="DIR", help="compare with regions saved in DIR")
    args = parser.parse_args()
    for d in (args.save, args.against):
        if d:
            os.makedirs(d, exist_ok=True)
    if not os.access(args.subgraph, os.X_OK):
        parser.error(f"{args.subgraph} is not an executable")
    real_models.ensure_models()
    differ = 0
    print("| model | backend | per-backend | per-property | same |")
    print("|---|---|---|---|---|")
    for name, path, _ in real_models.cases():
        model = path if os.path.isabs(path) else os.path.join(real_models.MODELS, path)
        if not os.path.exists(model):
            print(f"| {name} | - | missing | missing | - |")
            continue
        for backend in args.backends.split(","):
            if args.save or args.against:
                differ += across_versions(args, name, model, backend)
                continue
            a, ta = regions(args.subgraph, model, backend, "per-backend")
            b, tb = regions(args.subgraph, model, backend, "per-property")
            same = a == b
            differ += not same
            print(f"| {name} | {backend} | {ta} | {tb} | {'yes' if same else 'NO'} |")
    print(f"\n{differ} model/backend pairs differ.")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
