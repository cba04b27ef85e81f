"""subgraph.partition: the report as a dict, with the CLI's keys and reasons."""
import json
import os
import subprocess

import pytest

import subgraph


def test_partition_returns_the_cli_report(block, program):
    g = subgraph.load(block)
    report = subgraph.partition(g, ["convbnrelu"])
    assert [r["nodes"] for r in report["regions"]] == [["conv", "bn", "relu"]]
    # The lone Conv is left out, with the reason the CLI gives.
    cli = json.loads(subprocess.run([program, "partition", block, "--backend", "convbnrelu",
                                     "--json"], capture_output=True, text=True, check=True).stdout)
    for key in ("backends", "regions", "nodes_total", "rejected", "contested", "skipped"):
        assert key in report
    assert report["regions"] == cli["regions"]
    assert report["rejected"] == cli["rejected"]
    assert report["rejected"][0]["node"] == "lone_conv"
    assert "no consumer of Conv 'lone_conv' is BatchNormalization" in report["rejected"][0]["reason"]
    # The graph was partitioned in place: one fused node replaces three.
    assert len(g) == 2
    assert sorted(n.domain for n in g.nodes) == ["", "subgraph.convbnrelu"]


def test_partition_with_no_backend_changes_nothing(block):
    g = subgraph.load(block)
    report = subgraph.partition(g, [])
    assert report["regions"] == [] and len(g) == 4


def test_partition_errors(block):
    g = subgraph.load(block)
    with pytest.raises(subgraph.Error, match="unknown backend 'nosuch'"):
        subgraph.partition(g, ["nosuch"])
    assert len(g) == 4  # unchanged after a failure


def test_plugins_lists_the_examples_with_their_devices():
    found = {p["name"]: p for p in subgraph.plugins() if "name" in p}
    assert found["example_convbn"]["device"] == "host memory"
    assert found["example_convbn"]["abi_version"] == subgraph.PLUGIN_ABI_VERSION
    assert found["emudev"]["device"].startswith("emu:0 (emulated")


def corpus_plugin(name):
    build = os.path.dirname(os.path.dirname(os.environ["SUBGRAPH_TEST_BIN"]))
    path = os.path.join(build, "tests", "plugins", "check_plugin_corpus", name + ".so")
    assert os.path.exists(path), "%s was not built (tests/plugins/CMakeLists.txt)" % path
    return path


def test_check_plugin_fails_a_run_that_proves_nothing():
    """Passing cases prove nothing when no region formed or every kernel
    declined: check_plugin says not ok, and why, as the program does."""
    never = subgraph.check_plugin(corpus_plugin("broken_never_fuses"), cases=5)
    assert never["failed"] == 0 and not never["ok"]
    assert "was not exercised" in never["problem"]
    declines = subgraph.check_plugin(corpus_plugin("broken_declines"), cases=5)
    assert declines["failed"] == 0 and not declines["ok"]
    assert "kernels ran in none" in declines["problem"]
    # Partitioning only: the same plugin passes, its kernels not asked for.
    assert subgraph.check_plugin(corpus_plugin("broken_declines"), cases=5, numerics=False)["ok"]
    # ops reach the run (--ops): graphs of Relu alone all form regions.
    relu = subgraph.check_plugin(corpus_plugin("broken_declines"), cases=5, ops=["Relu"],
                                 numerics=False)
    assert "selectors fuse: Relu (--ops)" in relu["report"]


def test_check_plugin_isolates_a_crashing_plugin_in_workers():
    """The library's run checks each case in a worker process (the package's
    program): a plugin that segfaults fails its cases, and Python goes on."""
    result = subgraph.check_plugin(corpus_plugin("crash_run"), cases=2)
    assert result["failed"] == 2 and not result["ok"]
    assert result["problem"] == "2 of 2 cases failed"
    assert "crashed: plugin 'crash_run' crashed (SIGSEGV" in result["report"]
    with pytest.raises(subgraph.InvalidArgument, match="'Nope' is not an op random graphs"):
        subgraph.check_plugin(corpus_plugin("crash_run"), cases=1, ops=["Nope"])


def test_check_plugin_runs_the_conformance_check():
    result = subgraph.check_plugin("example_convbn", cases=3, seed=1)
    assert result == {"passed": 3, "failed": 0, "ok": True, "problem": None,
                      "report": result["report"]}
    with pytest.raises(subgraph.Error, match="unknown backend 'nosuch'"):
        subgraph.check_plugin("nosuch", cases=1)


def test_plan_stages_cuts_a_partitioned_graph_within_memory_limits(tmp_path):
    """The library's stage planner, as `subgraph partition --stages` runs it:
    each stage within its limit, values only flowing forward, and a limit no
    cut meets is an error."""
    model = tmp_path / "chain.sg"
    model.write_text("""graph @chain(%x: f32[64, 256]) {
  %w1 = const f32[256, 256] splat(0.01)
  %w2 = const f32[256, 256] splat(0.02)
  %w3 = const f32[256, 256] splat(0.03)
  %a = MatMul(%x, %w1) @mm1
  %b = MatMul(%a, %w2) @mm2
  %c = MatMul(%b, %w3) @mm3
  return %c
}
""")
    g = subgraph.load(str(model))
    plan = subgraph.plan_stages(g, ["emu:0", "emu:1", "emu:2"], [400 * 1024])
    assert [s["nodes"] for s in plan["stages"]] == [["mm1"], ["mm2"], ["mm3"]]
    assert all(s["weight_bytes"] + s["activation_bytes"] <= 400 * 1024 for s in plan["stages"])
    assert plan["stages"][0]["sends"] == [{"value": "a", "bytes": 65536, "to_stage": 1}]
    with pytest.raises(subgraph.Fail, match="no split into 2 stages fits"):
        subgraph.plan_stages(g, ["emu:0", "emu:1"], [400 * 1024])
    with pytest.raises(subgraph.InvalidArgument, match="gives 2 limits for 3 devices"):
        subgraph.plan_stages(g, ["a", "b", "c"], [1, 2])
