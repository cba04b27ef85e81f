#!/usr/bin/python3
"""bench/serving.py - One session serving N concurrent clients, against ONNX Runtime.

A server calls one session from many threads at once. For each real model
and each number of client threads N, both sides load the model once and N
clients issue requests back to back on that one session for a fixed time:

  * subgraph: the Python package, one subgraph.Session (onednn, THREADS
    threads per request), N Python threads calling run() (which releases
    the GIL); every output is compared with a serial run's, bit for bit;
  * ONNX Runtime 1.30 through onnxruntime-node: one InferenceSession
    (THREADS intra-op threads), N concurrent run() calls (bench/serving_ort.js).

Reported per model and N: requests per second (median over rounds, the two
sides alternating), its ratio to one client's, and p50/p99 latency over all
requests of all rounds. Check `uptime` first: a busy core slows both sides.

The models: the transformer exports of ../shared/models/transformers and
silero VAD and openWakeWord from the npm packages (bench/real_models.py
feeds them the same inputs).

Usage:  PYTHONPATH=build/release/python /usr/bin/python3 bench/serving.py
            [--clients 1,2,4] [--threads 1] [--seconds 3] [--rounds 3]
            [--models distilbert,silero_vad v5] [--json OUT] [--write-docs]
--write-docs replaces the "Serving" section of docs/benchmarks.md.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from onednn_vs_ort import load_average, log, replace_docs_section  # noqa: E402
from real_models import MODELS, cases, ensure_models, transformer_cases  # noqa: E402

DEFAULT_MODELS = ("distilbert legacy", "gpt2 dynamo", "vit legacy", "roberta qdyn",
                  "silero_vad v5", "oww embedding")


def serve_subgraph(session, feeds, clients, seconds, want):  # noqa: C901
    """N threads calling session.run for `seconds`: (requests, wall s,
    latencies ms, mismatches against `want`)."""
    latencies, mismatches, errors, worst = [], [0], [], [0.0]
    lock = threading.Lock()
    start_line = threading.Barrier(clients + 1)
    end = [0.0]

    def client():
        mine, bad = [], 0
        start_line.wait()
        try:
            while time.perf_counter() < end[0]:
                t0 = time.perf_counter()
                out = session.run(feeds)
                mine.append((time.perf_counter() - t0) * 1e3)
                for k, v in want.items():
                    if not np.array_equal(out[k], v):
                        bad += 1
                        scale = 1.0 + float(np.abs(v).max())
                        worst[0] = max(worst[0], float(np.abs(out[k] - v).max()) / scale)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(str(e))
        with lock:
            latencies.extend(mine)
            mismatches[0] += bad

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    end[0] = time.perf_counter() + seconds
    t0 = time.perf_counter()
    start_line.wait()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    if errors:
        sys.exit(f"serving: error: subgraph run failed: {errors[0]}")
    serve_subgraph.worst = worst[0]  # the largest scaled error of a mismatch
    return len(latencies), wall, latencies, mismatches[0]


def serve_ort(model, npys, threads, clients, seconds):
    env = dict(os.environ, UV_THREADPOOL_SIZE=str(max(4, clients)))
    cmd = ["node", os.path.join(ROOT, "bench", "serving_ort.js"), model, str(threads),
           str(clients), str(seconds)] + [f"{n}={p}" for n, p in npys]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"serving: error: {out.stderr.strip()} (cd bench && npm install --ignore-scripts)")
    r = json.loads(out.stdout)
    return r["requests"], r["seconds"], r["ms"]


def measure(label, model, feeds, args, workdir):
    import subgraph

    npys = []
    for name, value in feeds.items():
        path = os.path.join(workdir, f"{len(npys)}.npy")
        np.save(path, value)
        npys.append((name, path))
    shapes = {n: list(v.shape) for n, v in feeds.items() if v.ndim > 0}
    session = subgraph.Session(model, backends=["onednn"], threads=args.threads,
                               input_shapes=shapes)
    want = session.run(feeds)
    rows = {}
    for clients in args.clients:
        sg_rps, ort_rps, sg_ms, ort_ms, bad = [], [], [], [], 0
        for r in range(args.rounds):
            n, wall, ms, mism = serve_subgraph(session, feeds, clients, args.seconds, want)
            sg_rps.append(n / wall)
            sg_ms += ms
            bad += mism
            n, wall, ms = serve_ort(model, npys, args.threads, clients, args.seconds)
            ort_rps.append(n / wall)
            ort_ms += ms
            log(f"  {label} {clients} clients round {r + 1}: subgraph {sg_rps[-1]:.1f}/s, "
                f"ORT {ort_rps[-1]:.1f}/s")
        rows[clients] = {
            "subgraph_rps": statistics.median(sg_rps), "ort_rps": statistics.median(ort_rps),
            "subgraph_p50": float(np.percentile(sg_ms, 50)),
            "subgraph_p99": float(np.percentile(sg_ms, 99)),
            "ort_p50": float(np.percentile(ort_ms, 50)), "ort_p99": float(np.percentile(ort_ms, 99)),
            "mismatches": bad,
        }
    return rows


def measure_batching(args, workdir):
    """Zoo ResNet-50 with a symbolic batch, CLIENTS clients sending batch-1
    requests to one session, without and with dynamic batching. Both run
    one request (or batch) at a time on all the cores (threads =
    --batch-threads, max_concurrent_runs 1), as one model instance
    serves in Triton: unbatched, the clients queue; batched, they share."""
    import subgraph

    model = os.path.join(workdir, "resnet50_n.onnx")
    subprocess.run([args.subgraph, "zoo", "resnet50", "--batch", "0", "-o", model, "-q"],
                   check=True)
    image = np.random.default_rng(8).uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32)
    feeds = {"input": image}
    rows = {}
    for label, extra in (("off", {}), (f"max_batch {args.max_batch}, max_delay_us "
                                       f"{args.max_delay_us}",
                                       {"max_batch": args.max_batch,
                                        "max_delay_us": args.max_delay_us})):
        session = subgraph.Session(model, backends=["onednn"], threads=args.batch_threads,
                                   max_concurrent_runs=1, **extra)
        want = subgraph.Session(model, backends=["onednn"], threads=args.batch_threads).run(feeds)
        rps, ms, bad, differ = [], [], 0.0, 0
        for r in range(args.rounds):
            n, wall, lat, mism = serve_subgraph(session, feeds, args.batch_clients, args.seconds,
                                                want)
            rps.append(n / wall)
            ms += lat
            differ += mism
            bad = max(bad, serve_subgraph.worst)
            log(f"  resnet50 batching {label} round {r + 1}: {rps[-1]:.1f}/s")
        rows[label] = {"rps": statistics.median(rps), "p50": float(np.percentile(ms, 50)),
                       "p99": float(np.percentile(ms, 99)), "scaled_error": bad,
                       "differ": differ, "requests": len(ms)}
    return rows


def render_batching(rows, args):
    lines = [f"| zoo ResNet-50 (batch N), {args.batch_clients} clients of batch-1 requests, "
             f"threads {args.batch_threads}, one run at a time | images/s | x off | p50 / p99 ms "
             f"| answers not bit-equal to an unbatched run | largest scaled error |",
             "|---|---:|---:|---:|---:|---:|"]
    off = rows["off"]["rps"]
    for label, r in rows.items():
        lines.append(f"| batching {label} | {r['rps']:.1f} | {r['rps'] / off:.2f} | "
                     f"{r['p50']:.1f} / {r['p99']:.1f} | {r['differ']} of {r['requests']} | "
                     f"{r['scaled_error']:.1e} |")
    return "\n".join(lines)


def render(results, args):
    lines = [
        f"| model | clients | subgraph req/s | x 1 client | p50 / p99 ms | ORT req/s | x 1 client "
        f"| p50 / p99 ms | subgraph / ORT req/s | outputs = serial |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for label, rows in results.items():
        one = rows[min(rows)]
        for clients, r in rows.items():
            lines.append(
                f"| {label} | {clients} | {r['subgraph_rps']:.1f} | "
                f"{r['subgraph_rps'] / one['subgraph_rps']:.2f} | "
                f"{r['subgraph_p50']:.2f} / {r['subgraph_p99']:.2f} | {r['ort_rps']:.1f} | "
                f"{r['ort_rps'] / one['ort_rps']:.2f} | {r['ort_p50']:.2f} / {r['ort_p99']:.2f} | "
                f"{r['subgraph_rps'] / r['ort_rps']:.2f} | "
                f"{'yes' if r['mismatches'] == 0 else str(r['mismatches']) + ' differ'} |")
    return "\n".join(lines)


def write_docs(table, args, loads):
    body = (f"`PYTHONPATH=build/release/python /usr/bin/python3 bench/serving.py "
            f"--clients {','.join(map(str, args.clients))} --threads {args.threads} "
            f"--seconds {args.seconds} --rounds {args.rounds}"
            f"{' --batching' if args.batching else ''} --write-docs` "
            f"({time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, load average "
            f"{loads[0]:.2f} before and {loads[1]:.2f} after):\n\n{table}")
    replace_docs_section("<!-- serving:begin -->", "<!-- serving:end -->", body,
                         "Serving: concurrent requests on one session")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", default="1,2,4")
    ap.add_argument("--threads", type=int, default=1, help="threads per request, both sides")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS))
    ap.add_argument("--json")
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("--batching", action="store_true",
                    help="also measure dynamic batching on zoo ResNet-50 (batch N)")
    ap.add_argument("--batch-clients", type=int, default=8)
    ap.add_argument("--batch-threads", type=int, default=os.cpu_count())
    ap.add_argument("--max-batch", type=int, default=8)
    ap.add_argument("--max-delay-us", type=int, default=2000)
    ap.add_argument("--subgraph", default=os.path.join(ROOT, "build", "release", "bin", "subgraph"))
    args = ap.parse_args()
    args.clients = [int(c) for c in args.clients.split(",")]
    wanted = [m.strip() for m in args.models.split(",") if m.strip()]
    ensure_models()
    known = {label: (path, feeds) for label, path, feeds in cases()}
    known.update({label: (path, feeds) for label, path, feeds in transformer_cases()})
    loads = [load_average()]
    results = {}
    with tempfile.TemporaryDirectory() as workdir:
        for label in wanted:
            if label not in known:
                sys.exit(f"serving: error: unknown model '{label}' (known: {', '.join(known)})")
            path, feeds = known[label]
            path = path if os.path.isabs(path) else os.path.join(MODELS, path)
            if not os.path.exists(path):
                log(f"{label}: {path} is missing; skipped")
                continue
            log(f"{label}:")
            results[label] = measure(label, path, feeds, args, workdir)
        batching = measure_batching(args, workdir) if args.batching else None
    loads.append(load_average())
    table = render(results, args)
    if batching:
        table += "\n\n" + render_batching(batching, args)
    print(table)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if args.write_docs:
        write_docs(table, args, loads)


if __name__ == "__main__":
    main()
