"""subgraph.Session: numpy in, numpy out, on the chosen backends."""
import os
import threading
import time

import numpy as np
import pytest

import subgraph


@pytest.fixture(scope="module")
def image():
    rng = np.random.default_rng(20261127)
    print("seed 20261127")
    return rng.uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32)


def test_backends_match_the_reference(resnet50, image):
    reference = subgraph.Session(resnet50)  # backends=[]: the reference backend alone
    assert reference.backends == [] and reference.report is None
    want = reference.run({"input": image})["output"]
    fused = subgraph.Session(resnet50, backends=["onednn"], threads=2)
    assert fused.backends == ["onednn"]
    assert len(fused.report["regions"]) > 50
    got = fused.run({"input": image})
    assert list(got) == ["output"] and got["output"].shape == (1, 1000)
    assert got["output"].dtype == np.float32
    assert np.abs(got["output"] - want).max() < 1e-3 * (1 + np.abs(want).max())


def test_io_description(resnet50):
    s = subgraph.Session(resnet50)
    assert s.inputs == [("input", "float32", [1, 3, 224, 224])]
    assert s.outputs == [("output", "float32", [1, 1000])]


def test_emulated_device_and_plugin_options(block):
    x = np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4) / 32
    want = subgraph.Session(block).run({"x": x})["y"]
    s = subgraph.Session(block, backends=["emudev"], plugin_options={"emudev.delay_us": "1"})
    np.testing.assert_allclose(s.run({"x": x})["y"], want, rtol=1e-5, atol=1e-6)
    with pytest.raises(subgraph.Error, match="delay_us='x' is not a whole number"):
        subgraph.Session(block, backends=["emudev"], plugin_options={"emudev.delay_us": "x"})
    with pytest.raises(subgraph.Error, match="is for backend 'onednn', which is not chosen"):
        subgraph.Session(block, backends=["emudev"], plugin_options={"onednn.precision": "bf16"})


def test_request_errors_are_one_line(block):
    s = subgraph.Session(block)
    x = np.zeros((1, 2, 4, 4), np.float32)
    with pytest.raises(subgraph.Error, match="unknown input 'z'"):
        s.run({"z": x})
    with pytest.raises(subgraph.Error, match="has element type f64 but the graph declares f32"):
        s.run({"x": x.astype(np.float64)})
    with pytest.raises(subgraph.Error, match=r"has shape f32\[2, 4, 4\] but the graph declares"):
        s.run({"x": x[0]})
    with pytest.raises(subgraph.Error, match="precision must be fp32, bf16, fp16 or tf32"):
        subgraph.Session(block, backends=["convbn"], precision="fp8")


def test_non_contiguous_inputs_are_read_correctly(block):
    s = subgraph.Session(block)
    x = np.random.default_rng(1).uniform(size=(1, 4, 2, 4)).astype(np.float32)
    strided = x.transpose(0, 2, 1, 3)  # not C-contiguous
    assert not strided.flags.c_contiguous
    np.testing.assert_array_equal(s.run({"x": strided})["y"],
                                  s.run({"x": np.ascontiguousarray(strided)})["y"])


def test_run_releases_the_gil(resnet50, image):
    s = subgraph.Session(resnet50, threads=1)
    done = threading.Event()
    worker = threading.Thread(target=lambda: (s.run({"input": image}), done.set()))
    ticks = 0
    start = time.perf_counter()
    worker.start()
    while not done.is_set():
        ticks += 1
    worker.join()
    elapsed = time.perf_counter() - start
    # A run of ResNet-50 takes tenths of a second; holding the GIL throughout
    # would leave this thread a handful of ticks at most.
    assert elapsed > 0.02 and ticks > 10000, (elapsed, ticks)


def dynamic_bert(tmp_path):
    """tests/data/graphs/tiny_bert.sg with a symbolic batch and sequence:
    its Reshapes copy the leading dims (0), as exporters with dynamic axes
    write them."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "..", "tests", "data", "graphs", "tiny_bert.sg")) as f:
        text = f.read()
    for old, new in (("%x: f32[1, 6, 8]", "%x: f32[B, S, 8]"),
                     ("%attention_mask: i64[1, 6]", "%attention_mask: i64[B, S]"),
                     ("%split = const i64[4] [1, 6, 2, 4]", "%split = const i64[4] [0, 0, 2, 4]"),
                     ("%merge = const i64[3] [1, 6, 8]", "%merge = const i64[3] [0, 0, 8]")):
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "dynamic_bert.sg"
    path.write_text(text)
    return str(path)


def test_input_shapes_fix_symbolic_dims(tmp_path):
    """With the shapes fixed, the attention idiom sees static heads and the
    layer runs one attention region; the result is the model's either way."""
    model = dynamic_bert(tmp_path)
    rng = np.random.default_rng(46)
    print("seed 46")
    feeds = {"x": rng.standard_normal((1, 6, 8)).astype(np.float32),
             "attention_mask": np.array([[1, 1, 1, 1, 0, 0]], np.int64)}
    want = subgraph.Session(model).run(feeds)["y"]
    dynamic = subgraph.Session(model, backends=["onednn"])
    fixed = subgraph.Session(model, backends=["onednn"],
                             input_shapes={"x": [1, 6, 8], "attention_mask": [1, 6]})
    assert fixed.inputs[0] == ("x", "float32", [1, 6, 8])
    assert dynamic.inputs[0] == ("x", "float32", ["B", "S", 8])
    properties = lambda s: {r["property"] for r in s.report["regions"]}  # noqa: E731
    assert "attention_packed" in properties(fixed)
    assert not {"attention", "attention_packed"} & properties(dynamic)
    for s in (dynamic, fixed):
        np.testing.assert_allclose(s.run(feeds)["y"], want, rtol=1e-4, atol=1e-5)
    with pytest.raises(subgraph.Error, match="has shape"):
        fixed.run({**feeds, "x": feeds["x"][:, :5]})
    with pytest.raises(subgraph.Error, match="no input named 'z'"):
        subgraph.Session(model, input_shapes={"z": [1]})
