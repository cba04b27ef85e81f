"""One session, many Python threads: concurrent runs and dynamic batching."""
import threading

import numpy as np
import pytest

import subgraph

CNN = """graph @cnn(%x: f32[N, 2, 4, 4]) {
  %w = const f32[3, 2, 3, 3] splat(0.1)
  %c = Conv(%x, %w) {pads = [1, 1, 1, 1]} @conv
  %r = Relu(%c) @relu
  %p = GlobalAveragePool(%r) @pool
  %y = Flatten(%p) @flatten
  return %y
}"""


@pytest.fixture()
def cnn(tmp_path):
    path = tmp_path / "cnn.sg"
    path.write_text(CNN)
    return str(path)


def run_together(session, inputs):
    """Runs each input on its own thread, all released at once."""
    results, errors = [None] * len(inputs), []
    start = threading.Barrier(len(inputs))

    def client(i):
        start.wait()
        try:
            results[i] = session.run({"x": inputs[i]})["y"]
        except subgraph.Error as e:
            errors.append(str(e))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    return results


def test_threads_share_one_onednn_session(resnet50):
    rng = np.random.default_rng(20261201)
    print("seed 20261201")
    images = [rng.uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32) for _ in range(4)]
    s = subgraph.Session(resnet50, backends=["onednn"], threads=1)
    want = [s.run({"input": im})["output"] for im in images]
    got = [None] * 4

    def client(i):
        for _ in range(2):
            got[i] = s.run({"input": images[i]})["output"]

    threads = [threading.Thread(target=client, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for g, w in zip(got, want):
        assert np.array_equal(g, w)  # same kernels, same rows: bit for bit


def test_dynamic_batching_gives_each_request_its_rows(cnn):
    rng = np.random.default_rng(7)
    inputs = [rng.uniform(-1, 1, (1, 2, 4, 4)).astype(np.float32) for _ in range(4)]
    serial = subgraph.Session(cnn)
    want = [serial.run({"x": x})["y"] for x in inputs]
    batched = subgraph.Session(cnn, max_batch=4, max_delay_us=5_000_000)
    got = run_together(batched, inputs)
    for g, w in zip(got, want):
        assert g.shape == (1, 3) and np.array_equal(g, w)


def test_dynamic_batching_refuses_a_graph_that_mixes_rows(tmp_path):
    path = tmp_path / "mix.sg"
    path.write_text(CNN.replace("%y = Flatten(%p) @flatten", "%y = Flatten(%p) {axis = 0} @flatten"))
    with pytest.raises(subgraph.Error, match="Flatten node 'flatten' works along axis 0"):
        subgraph.Session(str(path), max_batch=8)
    with pytest.raises(subgraph.Error, match="max_concurrent_runs must be 0"):
        subgraph.Session(str(path), max_concurrent_runs=-1)
