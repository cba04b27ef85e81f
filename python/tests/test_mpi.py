"""subgraph.MpiPipeline under mpirun: one pipeline stage per rank."""
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import subgraph

MPIRUN = shutil.which("mpirun")
pytestmark = pytest.mark.skipif(
    not MPIRUN or not subgraph.mpi_available(),
    reason="mpirun or the build's MPI is missing (tools/setup.sh installs Open MPI)")

CNN = """graph @cnn(%x: f32[N, 4, 8, 8]) {
  %w1 = const f32[8, 4, 3, 3] splat(0.05)
  %w2 = const f32[8, 8, 3, 3] splat(0.03)
  %a = Conv(%x, %w1) {pads = [1, 1, 1, 1]} @c1
  %b = Relu(%a) @r1
  %c = Conv(%b, %w2) {pads = [1, 1, 1, 1]} @c2
  %y = Relu(%c) @r2
  return %y
}"""

SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import subgraph
    model = sys.argv[1] if subgraph_rank() == 0 or len(sys.argv) < 3 else sys.argv[2]
    try:
        p = subgraph.MpiPipeline(model, devices=["dev:0", "dev:1"], threads=1, timeout=20,
                                 micro_batch_shapes={"x": [2, 4, 8, 8]})
    except subgraph.Error as e:
        print(f"rank {subgraph_rank()} raised {type(e).__name__}: {e}")
        sys.exit(0)
    if p.rank == 0:
        x = np.random.default_rng(7).standard_normal((6, 4, 8, 8)).astype(np.float32)
        with p:  # closes on leaving
            out = p.run({"x": x}, micro_batches=3)
            again = p.run({"x": x}, micro_batches=3)
        try:
            p.run({"x": x})
            print("run after close did not raise")
        except subgraph.InvalidArgument as e:
            print(f"rank 0 after close: {e}")
        whole = subgraph.Session(model, threads=1).run({"x": x})
        same = all(np.array_equal(out[k], whole[k]) and np.array_equal(again[k], whole[k])
                   for k in whole)
        print(f"rank 0 of {p.ranks}: stages {len(p.plan['stages'])}, same {same}")
    else:
        try:
            p.run({"x": np.zeros((2, 4, 8, 8), np.float32)})
            print("run on rank 1 did not raise")
        except subgraph.InvalidArgument as e:
            print(f"rank 1 run: {e}")
        print(f"rank {p.rank} served {p.serve()}")
    """)


def mpirun(tmp_path, *models):
    script = tmp_path / "pipeline.py"
    script.write_text("import os\ndef subgraph_rank():\n"
                      "    return int(os.environ['OMPI_COMM_WORLD_RANK'])\n" + SCRIPT)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    command = [MPIRUN, "--oversubscribe", "--mca", "btl", "self,tcp", "--mca",
               "btl_tcp_if_include", "lo", "-np", "2", sys.executable, str(script), *models]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


def test_two_ranks_give_the_whole_models_outputs(tmp_path):
    model = tmp_path / "cnn.sg"
    model.write_text(CNN)
    done = mpirun(tmp_path, str(model))
    assert done.returncode == 0, done.stderr
    assert "rank 0 of 2: stages 2, same True" in done.stdout
    assert "rank 1 served 6" in done.stdout  # two runs of three micro-batches
    # Calls on the wrong rank, or after close, raise and change nothing.
    assert "rank 1 run: rank 1 (stage 1 on dev:1): run() is rank 0's" in done.stdout
    assert "rank 0 after close: run() after close()" in done.stdout


def test_a_model_one_rank_cannot_read_fails_every_rank(tmp_path):
    model = tmp_path / "cnn.sg"
    model.write_text(CNN)
    bad = tmp_path / "bad.sg"
    bad.write_text("graph broken {\n")
    done = mpirun(tmp_path, str(model), str(bad))
    assert done.returncode == 0, done.stderr
    # mpirun may join two ranks' lines, so look for each rank's words.
    for rank in (0, 1):
        said = f"rank {rank} raised InvalidArgument: rank 1 (stage 1 on dev:1): "
        assert done.stdout.count(said) == 1, done.stdout
        assert done.stdout.split(said)[1].split("\n")[0].find("bad.sg:1:") >= 0, done.stdout


def test_usage_without_mpirun():
    assert isinstance(subgraph.mpi_available(), bool)
    with pytest.raises(subgraph.InvalidArgument, match="memory_limits gives 2 limits for 1"):
        subgraph.MpiPipeline("unused.sg", devices=["dev:0"], memory_limits=[1, 2])
