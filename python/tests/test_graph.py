"""subgraph.load and the Graph, Node and Value views."""
import os

import pytest

import subgraph


def test_load_reads_a_text_graph_and_shows_its_structure(block):
    g = subgraph.load(block)
    assert len(g) == 4
    assert [n.op for n in g.nodes] == ["Conv", "BatchNormalization", "Relu", "Conv"]
    assert g.ops == {"BatchNormalization": 1, "Conv": 2, "Relu": 1}
    x = g.inputs[0]
    assert (x.name, x.dtype, x.shape) == ("x", "float32", [1, 2, 4, 4])
    conv = g.nodes[0]
    assert conv.name == "conv" and conv.inputs[1].is_constant
    assert conv.outputs[0].consumers[0].op == "BatchNormalization"
    assert g.value("r").producer.op == "Relu"
    assert g.value("missing") is None
    assert "Relu(%n)" in g.to_text()
    assert repr(g) == "<Graph 'block': 4 nodes>"


def test_load_reads_onnx_with_attributes(resnet50):
    g = subgraph.load(resnet50)
    assert len(g) == 175
    conv = next(n for n in g.nodes if n.op == "Conv")
    assert conv.attrs["kernel_shape"] == [7, 7]
    assert conv.attrs["strides"] == [2, 2]


def test_load_errors_are_one_line(tmp_path):
    with pytest.raises(subgraph.Error, match="no such file"):
        subgraph.load(str(tmp_path / "missing.onnx"))
    bad = tmp_path / "bad.sg"
    bad.write_text("graph @g( {")
    with pytest.raises(subgraph.Error) as e:
        subgraph.load(str(bad))
    assert "\n" not in str(e.value)
    other = tmp_path / "model.txt"
    other.write_text("x")
    with pytest.raises(subgraph.Error, match="unknown model format '.txt'"):
        subgraph.load(str(other))


def test_load_treats_the_file_as_hostile(tmp_path):
    # A FIFO must fail at once, not block reading it.
    fifo = tmp_path / "pipe.sg"
    os.mkfifo(fifo)
    with pytest.raises(subgraph.Error, match="not a regular file"):
        subgraph.load(str(fifo))
    binary = tmp_path / "binary.sg"
    binary.write_bytes(b"graph @g\x00 {")
    with pytest.raises(subgraph.Error, match="binary data at byte 8"):
        subgraph.load(str(binary))


def test_load_fixes_symbolic_dims_only(tmp_path):
    path = tmp_path / "sym.sg"
    path.write_text("graph @g(%x: f32[N, 2]) {\n  %y = Relu(%x) @r\n  return %y\n}\n")
    assert subgraph.load(str(path), {"x": [3, 2]}).inputs[0].shape == [3, 2]
    with pytest.raises(subgraph.Error, match="dim 1 of input 'x' is 2, not 5"):
        subgraph.load(str(path), {"x": [3, 5]})
