#!/usr/bin/env python3
"""Measures `subgraph partition` end to end, with the shipped plugins.

Usage (from the repository root, after a ci or release build):

    python3 bench/partition_cli.py --subgraph build/ci/bin/subgraph \
        [--baseline /path/to/older/bin/subgraph] [--sizes 10000,100000,1000000] \
        [--backends convbnrelu,example_convbn,onednn] [--rounds 3] [--write-docs]

Each point is one process, as a user runs it: `subgraph partition
syn_N.sg --backend B --json` on the synthetic residual graph of N nodes
with 10% unsupported nodes (`subgraph zoo synthetic ... --shape residual`,
written once into a scratch folder). It records the partition time the
report gives (partition_ms), the process's wall time (loading, passes,
partitioning, report), its user and kernel CPU time and its peak resident
memory (wait4's ru_utime, ru_stime and ru_maxrss).
With --baseline, the same points run on that binary too, alternating with
the first round by round, and the tables show both side by side with their
ratio. Figures are medians over the rounds; the log-log slope of partition
time from the smallest to the largest size is fitted per backend.

--warm-mib N touches and frees N MiB before each run, so that on a VM
whose host backs guest pages lazily and takes freed ones back, the run
finds memory the host already backs (as on a machine of its own); the
kernel time then no longer swings with the host.

--write-docs rewrites the section between the partition-cli markers of
docs/benchmarks.md (the partition-cli-warm markers with --warm-mib). The script needs only the Python standard library.
Exit status 0, or 2 on a usage or run error.
"""

import argparse
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

BEGIN = "<!-- partition-cli:begin -->"
END = "<!-- partition-cli:end -->"
WARM_BEGIN = "<!-- partition-cli-warm:begin -->"
WARM_END = "<!-- partition-cli-warm:end -->"


def make_model(subgraph, folder, nodes):
    path = os.path.join(folder, f"syn_{nodes}.sg")
    if not os.path.exists(path):
        cmd = [subgraph, "zoo", "synthetic", "--nodes", str(nodes), "--unsupported-fraction",
               "0.1", "--shape", "residual", "-o", path, "-q"]
        if subprocess.run(cmd, check=False).returncode != 0:
            sys.exit(f"partition_cli.py: {' '.join(cmd)} failed")
    return path


def warm_memory(mib):
    """Touches `mib` MiB of fresh memory (2 MiB pages asked for) and frees it.
    On a VM whose host backs a guest page only at its first touch and takes
    freed pages back (a balloon with free page reporting), the next process
    then finds pages the host already backs, as a machine of its own would.
    """
    if mib <= 0:
        return
    import mmap
    size = mib << 20
    m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hasattr(mmap, "MADV_HUGEPAGE"):
        m.madvise(mmap.MADV_HUGEPAGE)
    for offset in range(0, size, 4096):
        m[offset] = 1
    m.close()


def measure(subgraph, model, backend):
    """partition_ms, wall_s, rss_mb (peak, through wait4) and regions of one
    `subgraph partition` process."""
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.path.join(tempfile.gettempdir(), f"partition_cli_{os.getpid()}.json"),
                     os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 1)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)
        os.execv(subgraph, [subgraph, "partition", model, "--backend", backend, "--json"])
    _, status, usage = os.wait4(pid, 0)
    wall = time.monotonic() - start
    out_path = os.path.join(tempfile.gettempdir(), f"partition_cli_{pid}.json")
    try:
        with open(out_path) as f:
            text = f.read()
    finally:
        os.unlink(out_path)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"partition_cli.py: {subgraph} partition {model} --backend {backend} failed "
                 f"(status {os.waitstatus_to_exitcode(status)})")
    report = json.loads(text)
    return {"partition_ms": report["partition_ms"], "wall_s": wall,
            "user_s": usage.ru_utime, "sys_s": usage.ru_stime,
            "rss_mb": usage.ru_maxrss / 1024.0, "regions": len(report["regions"])}


def slope(points):
    """Least-squares slope of log(ms) against log(nodes)."""
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(max(ms, 1e-3)) for _, ms in points]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else float("nan")


def medians(samples):
    return {k: statistics.median(s[k] for s in samples) for k in samples[0]}


def collect(args, models):
    binaries = [("current", args.subgraph)] + ([("baseline", args.baseline)]
                                               if args.baseline else [])
    results = {}  # (binary, backend, nodes) -> [samples]
    for r in range(args.rounds):
        order = binaries if r % 2 == 0 else list(reversed(binaries))
        for nodes, model in models:
            for backend in args.backends:
                for label, binary in order:
                    warm_memory(args.warm_mib)
                    sample = measure(binary, model, backend)
                    results.setdefault((label, backend, nodes), []).append(sample)
                    print(f"round {r + 1}: {label:8} {backend:14} {nodes:>8} nodes: "
                          f"{sample['partition_ms']:9.1f} ms partition, {sample['wall_s']:6.2f} s "
                          f"wall, {sample['rss_mb']:7.0f} MB", file=sys.stderr)
    return {key: medians(samples) for key, samples in results.items()}


def table(args, sizes, stats):
    have_base = bool(args.baseline)
    lines = []
    head = "| backend | nodes | partition ms | wall s | user s | sys s | peak RSS MB | regions |"
    rule = "|---|---|---|---|---|---|---|---|"
    if have_base:
        head = ("| backend | nodes | partition ms (before) | partition ms | ratio | wall s (before) "
                "| wall s | user s (before) | user s | sys s (before) | sys s "
                "| peak RSS MB (before) | peak RSS MB | regions (before / now) |")
        rule = "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    lines += [head, rule]
    for backend in args.backends:
        for n in sizes:
            cur = stats[("current", backend, n)]
            if have_base:
                base = stats[("baseline", backend, n)]
                lines.append(
                    f"| {backend} | {n:,} | {base['partition_ms']:.1f} | {cur['partition_ms']:.1f} | "
                    f"{cur['partition_ms'] / base['partition_ms']:.2f} | {base['wall_s']:.2f} | "
                    f"{cur['wall_s']:.2f} | {base['user_s']:.2f} | {cur['user_s']:.2f} | "
                    f"{base['sys_s']:.2f} | {cur['sys_s']:.2f} | "
                    f"{base['rss_mb']:.0f} | {cur['rss_mb']:.0f} | "
                    f"{base['regions']:.0f} / {cur['regions']:.0f} |")
            else:
                lines.append(f"| {backend} | {n:,} | {cur['partition_ms']:.1f} | "
                             f"{cur['wall_s']:.2f} | {cur['user_s']:.2f} | {cur['sys_s']:.2f} | "
                             f"{cur['rss_mb']:.0f} | {cur['regions']:.0f} |")
    lines.append("")
    for label in ["current"] + (["baseline"] if have_base else []):
        parts = []
        for backend in args.backends:
            pts = [(n, stats[(label, backend, n)]["partition_ms"]) for n in sizes]
            parts.append(f"{backend} {slope(pts):.2f}")
        name = "this code" if label == "current" else "before"
        lines.append(f"Log-log slope of partition time, {sizes[0]:,} to {sizes[-1]:,} nodes "
                     f"({name}): " + ", ".join(parts) + ".")
        lines.append("")
    return lines


def write_docs(path, body, warm):
    begin, end = (BEGIN, END) if not warm else (WARM_BEGIN, WARM_END)
    with open(path) as f:
        text = f.read()
    section = begin + "\n" + "\n".join(body).rstrip() + "\n" + end
    if begin in text:
        text = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: section, text,
                      flags=re.S)
    else:
        text = text.rstrip() + "\n\n" + section + "\n"
    with open(path, "w") as f:
        f.write(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subgraph", default="build/ci/bin/subgraph")
    parser.add_argument("--baseline", help="an older subgraph binary to run side by side")
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--backends", default="convbnrelu,example_convbn,onednn")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workdir", help="where the synthetic models are kept (default: a "
                        "temporary folder)")
    parser.add_argument("--warm-mib", type=int, default=0,
                        help="touch and free this many MiB before each run (see warm_memory)")
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument("--docs", default="docs/benchmarks.md")
    args = parser.parse_args()
    args.backends = [b for b in args.backends.split(",") if b]
    sizes = sorted(int(s) for s in args.sizes.split(","))
    for binary in [args.subgraph] + ([args.baseline] if args.baseline else []):
        if not os.access(binary, os.X_OK):
            parser.error(f"{binary} is not an executable")
    if args.rounds < 1 or len(sizes) < 2:
        parser.error("--rounds must be at least 1 and --sizes name at least two sizes")
    folder = args.workdir or tempfile.mkdtemp(prefix="partition_cli_")
    os.makedirs(folder, exist_ok=True)
    models = [(n, make_model(args.subgraph, folder, n)) for n in sizes]
    stats = collect(args, models)
    title = ("## Partitioning through the CLI, with the shipped plugins" if not args.warm_mib else
             "### The same on memory the host already backs")
    body = [
        title,
        "",
        f"`python3 bench/partition_cli.py --rounds {args.rounds}"
        + (" --baseline OLD" if args.baseline else "")
        + (f" --warm-mib {args.warm_mib}" if args.warm_mib else "") + "`: one `subgraph partition "
        "syn.sg --backend B --json` process per point, on the synthetic residual graph with "
        "10% unsupported nodes; partition time from the report, wall time and peak RSS of the "
        f"whole process (load, passes, partition, report), and its CPU time in user space "
        "and in the kernel (`sys`: on these machines nearly all of it zero-fills the fresh "
        "pages the process touches; `bench/first_touch.py` measures that cost). "
        f"Medians of {args.rounds} rounds, "
        f"{platform.machine()}, {os.cpu_count()} cores, measured "
        f"{time.strftime('%Y-%m-%d')}.",
        "",
    ] + table(args, sizes, stats)
    print("\n".join(body))
    if args.write_docs:
        write_docs(args.docs, body, args.warm_mib > 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
