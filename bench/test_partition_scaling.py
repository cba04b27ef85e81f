#!/usr/bin/env python3
"""Tests of bench/partition_scaling.py on hand-made benchmark output.

The partitioner benchmark itself is not run here (timings never decide a
test); these check the arithmetic the document's verdicts rest on: the
log-log slope, each point's median over rounds, the per-round slopes the
check table lists, the saved multi-round format, and the usage errors.
"""

import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import partition_scaling  # noqa: E402  (the script under test, by path)

SCRIPT = os.path.join(HERE, "partition_scaling.py")


def bench_json(ms_by_nodes, shape="residual", pct=30):
    """A Google Benchmark JSON run with one series: {nodes: cpu ms}."""
    return {
        "context": {"date": "2026-11-23T05:00:00+00:00", "load_avg": [0.5],
                    "heap_allocator": "test heap"},
        "benchmarks": [{
            "name": f"BM_Partition/{shape}/nodes:{n}/unsupported_pct:{pct}/process_time",
            "run_type": "iteration", "repetitions": 1, "time_unit": "ms",
            "cpu_time": ms, "bytes_per_node": 400.0, "working_bytes_per_node": 100.0,
            "regions": n // 10,
        } for n, ms in sorted(ms_by_nodes.items())],
    }


class SlopeTest(unittest.TestCase):
    def test_linear_series_has_slope_one(self):
        runs = [(n, n / 1e4, 0, 0, 0) for n in (10**4, 10**5, 10**6)]
        self.assertAlmostEqual(partition_scaling.slope(runs), 1.0, places=9)

    def test_per_node_growth_raises_the_slope(self):
        # 10^6 nodes cost 1.585x per node what 10^4 do: slope 1 + log10(1.585)/2.
        runs = [(10**4, 1.0, 0, 0, 0), (10**6, 158.5, 0, 0, 0)]
        self.assertAlmostEqual(partition_scaling.slope(runs), 1.1, places=3)

    def test_points_outside_the_window_do_not_count(self):
        runs = [(10**3, 50.0, 0, 0, 0), (10**4, 1.0, 0, 0, 0), (10**6, 100.0, 0, 0, 0)]
        self.assertAlmostEqual(partition_scaling.slope(runs), 1.0, places=9)


class RoundsTest(unittest.TestCase):
    # Two rounds of one series: round 1 meets the 1.1 bound, round 2 (a
    # slow 10^6 point) does not; the medians fall between them.
    ROUND1 = {10**4: 3.0, 10**5: 40.0, 10**6: 400.0}
    ROUND2 = {10**4: 3.0, 10**5: 44.0, 10**6: 600.0}

    def test_each_point_is_the_median_over_rounds(self):
        # A third round with a slow 10^4 point (a noisy neighbour): the
        # median ignores it where a mean would not.
        round3 = {10**4: 9.0, 10**5: 41.0, 10**6: 450.0}
        series, per_round = partition_scaling.combine_rounds(
            [bench_json(self.ROUND1), bench_json(self.ROUND2), bench_json(round3)])
        times = {n: t for n, t, *_ in series[("residual", 30)]}
        self.assertEqual(times, {10**4: 3.0, 10**5: 41.0, 10**6: 450.0})
        slopes = per_round[("residual", 30)]
        self.assertEqual(len(slopes), 3)
        self.assertAlmostEqual(slopes[0], math.log10(400 / 3) / 2, places=9)
        self.assertAlmostEqual(slopes[1], math.log10(600 / 3) / 2, places=9)
        self.assertAlmostEqual(slopes[2], math.log10(450 / 9) / 2, places=9)

    def test_document_lists_every_rounds_slope(self):
        with tempfile.TemporaryDirectory() as tmp:
            saved = os.path.join(tmp, "rounds.json")
            with open(saved, "w", encoding="utf-8") as f:
                json.dump({"rounds": [bench_json(self.ROUND1), bench_json(self.ROUND2)]}, f)
            doc = os.path.join(tmp, "bench.md")
            proc = subprocess.run([sys.executable, SCRIPT, "--json", saved, "--doc", doc,
                                   "--svg", os.path.join(tmp, "img", "plot.svg")],
                                  capture_output=True, text=True, check=False)
            with open(doc, encoding="utf-8") as f:
                text = f.read()
        # The median slope is log10(500/3)/2 = 1.111: over the bound, so the
        # script says so and exits 1, and the table shows how each round fared.
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("| residual, 30% unsupported | slope 10^4..10^6 at most 1.1 | 1.111 "
                      "(rounds: 1.062, 1.151; 1 of 2 at most 1.1) | **no** |", text)
        self.assertIn("median of 2 runs of the whole benchmark", text)
        self.assertIn("--rounds 2 --repetitions 1", text)

    def test_a_plain_saved_run_is_one_round(self):
        with tempfile.TemporaryDirectory() as tmp:
            saved = os.path.join(tmp, "run.json")
            with open(saved, "w", encoding="utf-8") as f:
                json.dump(bench_json(self.ROUND1), f)
            doc = os.path.join(tmp, "bench.md")
            proc = subprocess.run([sys.executable, SCRIPT, "--json", saved, "--doc", doc,
                                   "--svg", os.path.join(tmp, "plot.svg")],
                                  capture_output=True, text=True, check=False)
            with open(doc, encoding="utf-8") as f:
                text = f.read()
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("| slope 10^4..10^6 at most 1.1 | 1.062 | yes |", text)
        self.assertNotIn("rounds:", text)  # no per-round list for a single run


class UsageTest(unittest.TestCase):
    def test_zero_rounds_is_refused(self):
        proc = subprocess.run([sys.executable, SCRIPT, "--rounds", "0"],
                              capture_output=True, text=True, check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--rounds and --repetitions must be at least 1", proc.stderr)

    def test_missing_benchmark_binary_is_refused(self):
        proc = subprocess.run([sys.executable, SCRIPT, "--bench", "/nonexistent/partition_bench"],
                              capture_output=True, text=True, check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("is not an executable", proc.stderr)

    def test_unwritable_save_path_is_refused_before_running(self):
        # The benchmark binary is missing too: the save path is checked first,
        # so a run of minutes is never lost to a path it cannot write.
        with tempfile.TemporaryDirectory() as tmp:
            blocker = os.path.join(tmp, "file")
            with open(blocker, "w", encoding="utf-8"):
                pass
            proc = subprocess.run([sys.executable, SCRIPT, "--bench", "/nonexistent/partition_bench",
                                   "--save-json", os.path.join(blocker, "run.json")],
                                  capture_output=True, text=True, check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("cannot write --save-json", proc.stderr)

    def test_save_path_folder_is_made(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "new", "run.json")
            proc = subprocess.run([sys.executable, SCRIPT, "--bench", "/nonexistent/partition_bench",
                                   "--save-json", path],
                                  capture_output=True, text=True, check=False)
            self.assertTrue(os.path.isdir(os.path.dirname(path)))
        self.assertEqual(proc.returncode, 2)
        self.assertIn("is not an executable", proc.stderr)


if __name__ == "__main__":
    unittest.main()
