"""ONNX Runtime users change one line (issue 49, item 4): subgraph's
InferenceSession takes ONNX Runtime's calls, providers map to backends,
errors have ONNX Runtime's kinds, and an ONNX Runtime example script runs
with only its import changed."""
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import subgraph

HERE = os.path.dirname(os.path.abspath(__file__))

# relu(x @ W + B), with a symbolic batch; a second output, the product.
MLP = """graph @mlp(%x: f32[N, 4]) {
  %w = const f32[4, 3] [0.5, -1, 2, 0.25, 1, -0.5, -2, 0.75, 1, 1.5, 0, -1]
  %b = const f32[3] [0.1, -0.2, 0.3]
  %m = MatMul(%x, %w) @matmul
  %a = Add(%m, %b) @bias
  %y = Relu(%a) @relu
  return %y, %m
}
"""
W = np.array([0.5, -1, 2, 0.25, 1, -0.5, -2, 0.75, 1, 1.5, 0, -1], np.float32).reshape(4, 3)
B = np.array([0.1, -0.2, 0.3], np.float32)


@pytest.fixture()
def mlp(tmp_path):
    path = tmp_path / "mlp.sg"
    path.write_text(MLP)
    return str(path)


@pytest.fixture()
def mlp_onnx(mlp, tmp_path):
    """The same model as ONNX (written by Session.save: no backends, so no
    passes, the graph as loaded)."""
    path = str(tmp_path / "mlp.onnx")
    subgraph.Session(mlp).save(path)
    return path


def oracle(x):
    m = x @ W
    return np.maximum(m + B, 0), m


def feeds(rows=3, seed=5):
    return {"x": np.random.default_rng(seed).uniform(-2, 2, (rows, 4)).astype(np.float32)}


# --- the example script ---------------------------------------------------------

def test_an_onnx_runtime_script_runs_with_only_its_import_changed(resnet50, tmp_path):
    with open(os.path.join(HERE, "data", "ort_example.py")) as f:
        original = f.read()
    changed = re.sub(r"^import onnxruntime as ort$", "import subgraph as ort", original,
                     flags=re.MULTILINE)
    differing = [(a, b) for a, b in zip(original.splitlines(), changed.splitlines()) if a != b]
    assert differing == [("import onnxruntime as ort", "import subgraph as ort")]
    script = tmp_path / "example.py"
    script.write_text(changed)
    out = tmp_path / "out.npy"
    done = subprocess.run([sys.executable, str(script), resnet50, str(out)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "providers: ['CPUExecutionProvider']" in done.stdout
    assert "input: input [1, 3, 224, 224] tensor(float)" in done.stdout
    assert "output: output [1, 1000] tensor(float)" in done.stdout
    got = np.load(out)
    # The same input through the native Session on the reference backend.
    x = np.random.default_rng(0).uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32)
    want = subgraph.Session(resnet50).run({"input": x})["output"]
    assert got.shape == (1, 1000) and got.dtype == np.float32
    assert np.abs(got - want).max() < 1e-3 * (1 + np.abs(want).max())
    top5 = re.search(r"top-5: (\[.*\])", done.stdout).group(1)
    assert json.loads(top5) == np.argsort(want[0])[::-1][:5].tolist()


def test_the_script_fails_without_the_change(resnet50, tmp_path):
    """The control: the unchanged script needs onnxruntime, which this
    machine does not have, so the run above is subgraph's."""
    try:
        import onnxruntime  # noqa: F401
        pytest.skip("onnxruntime is installed here")
    except ImportError:
        pass
    done = subprocess.run([sys.executable, os.path.join(HERE, "data", "ort_example.py"), resnet50,
                           str(tmp_path / "o.npy")], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "No module named 'onnxruntime'" in done.stderr


# --- inputs, outputs, run ---------------------------------------------------------

def test_inputs_and_outputs_are_node_args(mlp):
    s = subgraph.InferenceSession(mlp)
    (x,), (y, m) = s.get_inputs(), s.get_outputs()
    assert (x.name, x.shape, x.type) == ("x", ["N", 4], "tensor(float)")
    assert (y.name, y.shape, y.type) == ("y", ["N", 3], "tensor(float)")
    assert m.name == "m"
    assert repr(x) == "NodeArg(name='x', type='tensor(float)', shape=['N', 4])"


def test_types_and_unknown_dims_are_named_as_onnx_runtime_names_them(tmp_path):
    path = tmp_path / "types.sg"
    path.write_text("""graph @g(%i: i64[?], %b: bool[2], %h: f16[3]) {
  %j = Neg(%i)
  %c = Not(%b)
  %k = Neg(%h)
  return %j, %c, %k
}
""")
    s = subgraph.InferenceSession(str(path))
    assert [(a.name, a.shape, a.type) for a in s.get_inputs()] == [
        ("i", [None], "tensor(int64)"), ("b", [2], "tensor(bool)"), ("h", [3], "tensor(float16)")]


def test_run_returns_a_list_in_the_order_asked(mlp):
    s = subgraph.InferenceSession(mlp)
    f = feeds()
    y, m = oracle(f["x"])
    for names, want in ((None, [y, m]), ([], [y, m]), (["m"], [m]), (["m", "y"], [m, y])):
        got = s.run(names, f)
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert s.run(None, feeds(rows=7))[0].shape == (7, 3)  # the symbolic batch


def test_run_errors_are_typed(mlp):
    s = subgraph.InferenceSession(mlp)
    x = feeds()["x"]
    with pytest.raises(subgraph.InvalidArgument, match="unknown input 'z'"):
        s.run(None, {"z": x})
    with pytest.raises(subgraph.InvalidArgument, match="element type f64"):
        s.run(None, {"x": x.astype(np.float64)})
    with pytest.raises(subgraph.InvalidArgument, match="'q'"):
        s.run(["q"], {"x": x})
    with pytest.raises(subgraph.InvalidArgument, match="output_names is a list of names or None"):
        s.run("y", {"x": x})
    with pytest.raises(subgraph.InvalidArgument, match="input_feed is a dict"):
        s.run(None, [x])


def test_models_load_from_bytes(mlp, mlp_onnx):
    f = feeds()
    y, _ = oracle(f["x"])
    with open(mlp_onnx, "rb") as file:
        onnx_bytes = file.read()
    with open(mlp, "rb") as file:
        text_bytes = file.read()
    for model in (onnx_bytes, bytearray(onnx_bytes), text_bytes):
        s = subgraph.InferenceSession(model)
        np.testing.assert_allclose(s.run(["y"], f)[0], y, rtol=1e-5, atol=1e-6)
    assert len(subgraph.load(onnx_bytes)) == 3
    with pytest.raises(subgraph.InvalidArgument, match="<bytes>"):
        subgraph.InferenceSession(b"\x08\x07garbage")
    with pytest.raises(subgraph.InvalidArgument, match="<bytes>"):
        subgraph.InferenceSession(b"graph @g(")


# --- errors ----------------------------------------------------------------------

def test_error_kinds(tmp_path, mlp):
    kinds = (subgraph.InvalidArgument, subgraph.NoSuchFile, subgraph.NotImplemented, subgraph.Fail)
    assert all(issubclass(k, subgraph.Error) and issubclass(k, RuntimeError) for k in kinds)
    assert len(set(kinds)) == 4
    missing = str(tmp_path / "nope.onnx")
    for make in (subgraph.InferenceSession, subgraph.Session, subgraph.load):
        with pytest.raises(subgraph.NoSuchFile, match=re.escape(missing + ": no such file")):
            make(missing)
    bad = tmp_path / "bad.sg"
    bad.write_text("graph @g(%x: f32[2]) {\n  %y = Nope(%x)\n  return %y\n}\n")
    with pytest.raises(subgraph.InvalidArgument, match="bad.sg"):
        subgraph.InferenceSession(str(bad))
    with pytest.raises(subgraph.Fail, match="over the memory limit of 1024 bytes"):
        subgraph.Session(mlp, memory_limit=1024).run({"x": np.zeros((512, 4), np.float32)})
    with pytest.raises(subgraph.InvalidArgument, match="a model is a path"):
        subgraph.InferenceSession(42)


def test_error_classes_follow_the_library_kind(tmp_path, mlp):
    """The class comes from the library's error kind, never from a check of
    the package's own: a folder is as unreadable as a missing file, and a
    session option the library refuses is the caller's mistake."""
    with pytest.raises(subgraph.NoSuchFile, match="is a directory"):
        subgraph.load(str(tmp_path))
    with pytest.raises(subgraph.InvalidArgument, match="unknown model format"):
        subgraph.load(str(tmp_path / "model.txt")) if (tmp_path / "model.txt").write_text("x") else None
    with pytest.raises(subgraph.InvalidArgument, match="precision must be"):
        subgraph.Session(mlp, backends=["convbn"], precision="int8")
    with pytest.raises(subgraph.InvalidArgument, match="passes: "):
        subgraph.Session(mlp, backends=["convbn"], passes="nope")
    # The negative side: a good model with good options raises nothing.
    subgraph.Session(mlp, backends=["convbn"], precision="fp32")


def test_not_implemented(mlp):
    """Strings are valid ONNX inputs that subgraph does not run."""
    s = subgraph.InferenceSession(mlp)
    for strings in (np.array([["a", "b", "c", "d"]]), np.array([["a"] * 4], dtype=object)):
        with pytest.raises(subgraph.NotImplemented,
                           match="input 'x' holds numpy dtype .*; subgraph has no string"):
            s.run(None, {"x": strings})


# --- providers -------------------------------------------------------------------

def test_providers_map_to_backends(mlp):
    assert "CPUExecutionProvider" in subgraph.get_available_providers()
    assert "DnnlExecutionProvider" in subgraph.get_available_providers()  # onednn is built
    cases = [
        (None, ["CPUExecutionProvider"], ["onednn"]),
        (["CPUExecutionProvider"], ["CPUExecutionProvider"], ["onednn"]),
        (["DnnlExecutionProvider", "CPUExecutionProvider"],
         ["DnnlExecutionProvider", "CPUExecutionProvider"], ["onednn"]),
        (["example_convbn"], ["example_convbn", "CPUExecutionProvider"], ["example_convbn"]),
        (["convbnrelu", "DnnlExecutionProvider"],
         ["convbnrelu", "DnnlExecutionProvider", "CPUExecutionProvider"], ["convbnrelu", "onednn"]),
    ]
    f = feeds()
    y, _ = oracle(f["x"])
    for providers, used, backends in cases:
        s = subgraph.InferenceSession(mlp, providers=providers)
        assert s.get_providers() == used, providers
        assert s.session.backends == backends, providers
        np.testing.assert_allclose(s.run(["y"], f)[0], y, rtol=1e-4, atol=1e-5)


def test_provider_options_reach_the_plugin(block):
    s = subgraph.InferenceSession(block, providers=[("emudev", {"delay_us": 1})])
    assert s.get_provider_options()["emudev"] == {"delay_us": 1}
    s = subgraph.InferenceSession(block, providers=["emudev"], provider_options=[{"delay_us": "2"}])
    assert s.session.backends == ["emudev"] and s.session.report["regions"]
    # The plugin refuses the value when it makes a kernel: a plugin's failure.
    with pytest.raises(subgraph.Fail, match="delay_us='x' is not a whole number"):
        subgraph.InferenceSession(block, providers=[("emudev", {"delay_us": "x"})])
    with pytest.raises(subgraph.InvalidArgument, match="provider_options has 2 entries for 1"):
        subgraph.InferenceSession(block, providers=["emudev"], provider_options=[{}, {}])


def test_an_unknown_provider_names_the_available_ones(mlp):
    """In a fresh process: the built-in backends are listed before any
    selection has registered them."""
    script = ("import subgraph\n"
              "try:\n"
              "    subgraph.InferenceSession(%r, providers=['TensorrtExecutionProvider'])\n"
              "except subgraph.InvalidArgument as e:\n"
              "    print(e)\n" % mlp)
    message = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             check=True, timeout=120).stdout.strip()
    assert message.startswith("unknown provider 'TensorrtExecutionProvider'; available: ")
    for name in ("DnnlExecutionProvider", "CPUExecutionProvider", "onednn", "example_convbn",
                 "convbn", "convbnrelu", "convaddrelu"):
        assert re.search(r"\b%s\b" % name, message), (name, message)
    with pytest.raises(subgraph.InvalidArgument, match="providers is a list of names"):
        subgraph.InferenceSession(mlp, providers="CPUExecutionProvider")


def test_an_absent_cuda_provider_is_skipped_with_a_warning(mlp):
    if "CUDAExecutionProvider" in subgraph.get_available_providers():
        pytest.skip("the cudnn plugin is built here")
    with pytest.warns(UserWarning, match="provider 'CUDAExecutionProvider' is not available here"):
        s = subgraph.InferenceSession(mlp, providers=["CUDAExecutionProvider",
                                                      "CPUExecutionProvider"])
    assert s.get_providers() == ["CPUExecutionProvider"]
    assert subgraph.get_device() == "CPU"


# --- session options ---------------------------------------------------------------

def test_session_options_refuse_unknown_attributes():
    o = subgraph.SessionOptions()
    o.intra_op_num_threads = 2
    o.inter_op_num_threads = 1  # accepted, no effect
    with pytest.raises(AttributeError):
        o.intra_op_threads = 2  # a typo is not silently ignored


def test_thread_count_reaches_the_session(mlp):
    o = subgraph.SessionOptions()
    o.intra_op_num_threads = 5000
    with pytest.raises(subgraph.InvalidArgument, match="threads must be between"):
        subgraph.InferenceSession(mlp, o)


@pytest.mark.parametrize("suffix", [".sg", ".onnx"])
def test_optimized_model_filepath_writes_the_partitioned_model(mlp, tmp_path, suffix):
    o = subgraph.SessionOptions()
    o.optimized_model_filepath = str(tmp_path / ("optimized" + suffix))
    s = subgraph.InferenceSession(mlp, o, providers=["DnnlExecutionProvider"])
    assert len(s.session.report["regions"]) >= 1
    saved = subgraph.load(o.optimized_model_filepath)
    assert any(n.domain == "subgraph.onednn" for n in saved.nodes), saved.to_text()
    again = subgraph.InferenceSession(o.optimized_model_filepath,
                                      providers=["DnnlExecutionProvider"])
    f = feeds()
    np.testing.assert_allclose(again.run(None, f)[0], s.run(None, f)[0], rtol=1e-6)


def test_disable_all_runs_no_passes(tmp_path):
    """ORT_DISABLE_ALL keeps the Identity and the constant product that the
    default passes remove."""
    model = tmp_path / "foldable.sg"
    model.write_text("""graph @g(%x: f32[N, 4]) {
  %i = Identity(%x)
  %c = const f32[4] [1, 2, 3, 4]
  %d = Mul(%c, %c)
  %y = Add(%i, %d)
  return %y
}
""")
    ops = {}
    for level in (subgraph.GraphOptimizationLevel.ORT_DISABLE_ALL,
                  subgraph.GraphOptimizationLevel.ORT_ENABLE_BASIC):
        o = subgraph.SessionOptions()
        o.graph_optimization_level = level
        o.optimized_model_filepath = str(tmp_path / ("m%d.sg" % level))
        s = subgraph.InferenceSession(str(model), o, providers=["example_convbn"])
        np.testing.assert_allclose(s.run(None, {"x": np.ones((2, 4), np.float32)})[0],
                                   np.ones((2, 4)) + [1, 4, 9, 16])
        ops[level] = subgraph.load(o.optimized_model_filepath).ops
    assert ops[subgraph.GraphOptimizationLevel.ORT_DISABLE_ALL] == {
        "Identity": 1, "Mul": 1, "Add": 1}
    assert ops[subgraph.GraphOptimizationLevel.ORT_ENABLE_BASIC] == {"Add": 1}


def test_profiling_writes_onnx_runtimes_trace(mlp, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    o = subgraph.SessionOptions()
    o.enable_profiling = True
    o.profile_file_prefix = "mlp_"
    s = subgraph.InferenceSession(mlp, o, providers=["DnnlExecutionProvider"])
    s.run(None, feeds())
    s.run(None, feeds())
    name = s.end_profiling()
    assert name.startswith("mlp_") and name.endswith(".json")
    with open(tmp_path / name) as f:
        events = json.load(f)
    assert [e["name"] for e in events if e["cat"] == "Session"] == [
        "session_initialization", "model_run", "model_run"]
    nodes = [e for e in events if e["cat"] == "Node"]
    assert nodes and all(e["name"].endswith("_kernel_time") and e["ph"] == "X" for e in nodes)
    assert any(e["args"]["provider"] == "onednn" for e in nodes)
    assert all({"op_name", "provider"} <= set(e["args"]) for e in nodes)
    s.run(None, feeds())  # profiling has ended
    assert s.end_profiling() == ""
    assert subgraph.InferenceSession(mlp).end_profiling() == ""


# --- the package ---------------------------------------------------------------------

def test_version_is_the_projects():
    root = os.path.dirname(os.path.dirname(HERE))
    with open(os.path.join(root, "CMakeLists.txt")) as f:
        version = re.search(r"project\(subgraph VERSION ([0-9.]+)", f.read()).group(1)
    assert subgraph.__version__ == version


def test_every_session_argument_has_a_docstring():
    signature = subgraph.Session.__init__.__doc__
    names = [n for n in re.findall(r"(\w+): ", signature.split("(", 1)[1].split(") ->")[0])
             if n != "self"]
    assert "model" in names and "max_delay_us" in names and len(names) == 15
    for name in names:
        assert re.search(r"^    %s: \S" % name, subgraph.Session.__doc__, re.MULTILINE), name
    for name in ("inputs", "output_names"):
        assert re.search(r"^    %s: \S" % name, subgraph.Session.run.__doc__, re.MULTILINE), name
