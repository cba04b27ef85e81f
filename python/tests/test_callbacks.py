"""Python callbacks are safe (issue 49, item 5): a selector or property that
raises or answers with the wrong kind fails the partition with one
subgraph.Error line naming the method, the node and what was expected; a
property that forgot super().__init__ is told to call it; a name a plugin
has cannot be registered; ONNX Runtime's run(None, feeds) on the native
Session is named; a plugin crash inside Session.run prints the program's
line."""
import os
import subprocess
import sys

import numpy as np
import pytest

import subgraph


class Configurable(subgraph.SubgraphSelector):
    """Fuses Conv -> BatchNormalization, answering each method with what the
    test puts in `answers` (a value, or an exception to raise)."""
    answers = {}

    def _answer(self, method, default):
        a = Configurable.answers.get(method, default)
        if isinstance(a, BaseException):
            raise a
        return a() if callable(a) else a

    def Select(self, node):
        return self._answer("Select", node.op == "Conv")

    def SelectOutput(self, node, consumer):
        return self._answer("SelectOutput", consumer.op == "BatchNormalization")

    def SelectInput(self, node, producer):
        return self._answer("SelectInput", False)

    def Filter(self, candidates):
        return self._answer("Filter", candidates)

    def FilterReason(self, node):
        return self._answer("FilterReason", "")


class ConfigurableProperty(subgraph.SubgraphProperty):
    node_answer = None

    def __init__(self):
        super().__init__("configurable")

    def CreateSubgraphSelector(self):
        return Configurable()

    def CreateSubgraphNode(self, body, region_id):
        a = ConfigurableProperty.node_answer
        if isinstance(a, BaseException):
            raise a
        return a


subgraph.register_backend("py_configurable", [ConfigurableProperty()])


def partition_with(block, answers=None, node_answer=None):
    Configurable.answers = answers or {}
    ConfigurableProperty.node_answer = node_answer
    try:
        return subgraph.partition(subgraph.load(block), ["py_configurable"])
    finally:
        Configurable.answers, ConfigurableProperty.node_answer = {}, None


def one_line_error(block, kind=subgraph.InvalidArgument, **kwargs):
    """The message of the error the partition fails with; checks it is one
    line of the expected kind, free of pybind11's wording."""
    with pytest.raises(subgraph.Error) as raised:
        partition_with(block, **kwargs)
    assert isinstance(raised.value, kind), type(raised.value)
    message = str(raised.value)
    assert "\n" not in message
    assert "Unable to cast" not in message and "pybind11" not in message
    assert message.startswith(
        "subgraph property py_configurable/configurable: selection failed: "), message
    return message


def test_well_behaved_callbacks_fuse(block):
    """The control: the same backend, answering as it should, forms the
    Conv+BN region; numpy bools and (False, reason) are answers too."""
    assert [r["nodes"] for r in partition_with(block)["regions"]] == [["conv", "bn"],
                                                                      ["lone_conv"]]
    report = partition_with(block, {"Select": lambda: np.bool_(True),
                                    "SelectOutput": (False, "no growing")})
    assert len(report["regions"]) == 4 and all(len(r["nodes"]) == 1 for r in report["regions"])


@pytest.mark.parametrize("method,answer,expected", [
    ("Select", ValueError("boom"),
     r"Configurable\.Select on node 'conv' \(Conv\) raised ValueError: boom"),
    ("Select", "yes",
     r"Configurable\.Select on node 'conv' \(Conv\) returned a str \('yes'\); "
     r"expected True, False or \(False, \"reason\"\)$"),
    ("Select", None,
     r"Configurable\.Select on node 'conv' \(Conv\) returned None; expected True, False or "
     r"\(False, \"reason\"\) \(a missing return\?\)$"),
    ("Select", 1, r"returned a int \(1\); expected True, False"),
    ("Select", (False, 3), r"returned a tuple \(\(False, 3\)\); expected True, False"),
    ("SelectOutput", KeyError("k"),
     r"Configurable\.SelectOutput on node 'conv' \(Conv\) and its consumer node 'bn' "
     r"\(BatchNormalization\) raised KeyError: 'k'"),
    ("Filter", 3,
     r"Configurable\.Filter on a region of 2 nodes \('conv', 'bn'\) returned a int \(3\); "
     r"expected a list of the Node objects it was given$"),
    ("Filter", [1],
     r"Configurable\.Filter on a region of 2 nodes \('conv', 'bn'\) returned a list holding a "
     r"int \(1\); expected a list of the Node objects it was given$"),
    ("Filter", RuntimeError("filter broke"),
     r"Configurable\.Filter on a region of 2 nodes \('conv', 'bn'\) raised RuntimeError: "
     r"filter broke"),
])
def test_a_bad_callback_is_one_line_naming_method_node_and_expectation(
        block, method, answer, expected):
    import re
    answers = {method: answer}
    if method == "Filter":  # FilterReason is asked only about dropped nodes
        answers["FilterReason"] = "unused"
    message = one_line_error(block, answers=answers)
    assert re.search(expected, message), message


def test_filter_reason_must_be_a_str(block):
    message = one_line_error(block, answers={"Filter": lambda: [], "FilterReason": 7})
    assert "Configurable.FilterReason on node 'conv' (Conv) returned a int (7); expected a str" \
        in message


@pytest.mark.parametrize("answer,expected", [
    (True, "ConfigurableProperty.CreateSubgraphNode on region 0 of 2 nodes ('conv', 'bn') "
           "returned a bool (True); expected None to accept the region or a str to reject it"),
    (ValueError("nope"), "ConfigurableProperty.CreateSubgraphNode on region 0 of 2 nodes "
                         "('conv', 'bn') raised ValueError: nope"),
])
def test_create_subgraph_node_answers_none_or_a_str(block, answer, expected):
    message = one_line_error(block, node_answer=answer)
    assert message.endswith(expected), message
    # A str is a rejection with that reason, not an error.
    report = partition_with(block, node_answer="too small")
    assert report["regions"] == [] and any("too small" in r["reason"] for r in report["rejected"])


def test_create_subgraph_selector_must_return_a_selector(block):
    class Forgetful(subgraph.SubgraphProperty):
        def CreateSubgraphSelector(self):
            Configurable()  # made, not returned

    subgraph.register_backend("py_forgetful", [Forgetful("forgetful")])
    with pytest.raises(subgraph.InvalidArgument) as raised:
        subgraph.partition(subgraph.load(block), ["py_forgetful"])
    assert str(raised.value) == (
        "subgraph property py_forgetful/forgetful: selection failed: "
        "Forgetful.CreateSubgraphSelector returned None; expected a subgraph.SubgraphSelector "
        "(a missing return?)")


def test_a_property_without_super_init_is_told_to_call_it():
    class NoInit(subgraph.SubgraphProperty):
        def __init__(self):
            self.threshold = 3  # forgot super().__init__("name")

        def CreateSubgraphSelector(self):
            return Configurable()

    with pytest.raises(subgraph.InvalidArgument) as raised:
        subgraph.register_backend("py_noinit", [NoInit()])
    message = str(raised.value)
    assert message == ("register_backend('py_noinit'): properties[0] (NoInit) has no name: its "
                       "__init__ must call super().__init__(\"name\") "
                       "(subgraph.SubgraphProperty.__init__)")
    assert "must be a subgraph.SubgraphProperty" not in message
    assert "py_noinit" not in subgraph.backends()


def test_a_non_property_is_named():
    with pytest.raises(subgraph.InvalidArgument,
                       match=r"properties\[1\] is a int \(42\), which has no "
                             r"CreateSubgraphSelector; expected a subgraph.SubgraphProperty"):
        subgraph.register_backend("py_int", [ConfigurableProperty(), 42])


@pytest.mark.parametrize("name", ["onednn", "example_convbn"])
def test_a_plugin_name_cannot_be_registered(name):
    with pytest.raises(subgraph.InvalidArgument) as raised:
        subgraph.register_backend(name, [ConfigurableProperty()])
    message = str(raised.value)
    assert message.startswith("register_backend('%s'): plugin " % name)
    assert message.endswith("/%s.so already has that name, and a registered backend would hide "
                            "it; choose another name" % name)
    assert name not in subgraph.backends()


@pytest.mark.parametrize("name,why", [
    ("convbn", "already registered"), ("py_configurable", "already registered"),
    ("./mine.so", "plain word"), ("a,b", "plain word"), ("NONE", "plain word"), ("", "plain word"),
])
def test_names_the_backend_list_cannot_reach_are_refused(name, why):
    with pytest.raises(subgraph.InvalidArgument, match=why):
        subgraph.register_backend(name, [ConfigurableProperty()])


# --- the native Session, called the ONNX Runtime way ----------------------------

def test_native_run_in_onnx_runtime_order_is_named(block):
    s = subgraph.Session(block)
    x = np.zeros((1, 2, 4, 4), np.float32)
    for call in (lambda: s.run(None, {"x": x}), lambda: s.run([x])):
        with pytest.raises(subgraph.InvalidArgument) as raised:
            call()
        message = str(raised.value)
        assert message.startswith("Session.run takes the inputs first, as a dict {input name: "
                                  "numpy array}, not a ")
        assert "ONNX Runtime's order, which subgraph.InferenceSession takes" in message
        assert "array(" not in message and "0., 0." not in message and len(message) < 300
    # The keyword form of the same request works, with output_names.
    assert list(s.run({"x": x}, ["y"])) == ["y"]
    with pytest.raises(subgraph.InvalidArgument, match="output_names is a list of output names"):
        s.run({"x": x}, "y")


# --- a plugin crash inside Session.run ---------------------------------------------

def crash_plugin(program):
    build = os.path.dirname(os.path.dirname(program))
    path = os.path.join(build, "tests", "plugins", "check_plugin_corpus", "crash_run.so")
    assert os.path.exists(path), "%s was not built (tests/plugins/CMakeLists.txt)" % path
    return path


RELU = """graph @g(%x: f32[4]) {
  %y = Relu(%x) @the_relu
  return %y
}
"""


def test_a_plugin_crash_in_run_prints_the_programs_line(program, tmp_path):
    plugin = crash_plugin(program)
    model = tmp_path / "relu.sg"
    model.write_text(RELU)
    cli = subprocess.run([program, "run", str(model), "--backend", plugin, "--random-inputs", "0"],
                         capture_output=True, text=True, timeout=120)
    assert cli.returncode == 3, cli.stderr
    script = ("import numpy as np, subgraph\n"
              "s = subgraph.Session(%r, backends=[%r])\n"
              "print('compiled', flush=True)\n"
              "s.run({'x': np.ones(4, np.float32)})\n"
              "print('survived')\n" % (str(model), plugin))
    python = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=120)
    assert python.stdout == "compiled\n", python.stdout
    assert python.returncode == 3, python.stderr
    line = python.stderr.strip().splitlines()[-1]
    assert line.startswith("subgraph: error: plugin 'crash_run' crashed (SIGSEGV, invalid memory "
                           "access) in run on node '"), line
    assert line == cli.stderr.strip().splitlines()[-1]


def test_a_fault_outside_plugins_is_not_blamed_on_one(tmp_path):
    """The handler names only plugin code: Python's own crash (here
    ctypes reading address 0) still ends as a plain SIGSEGV."""
    script = "import ctypes, subgraph\nctypes.string_at(0)\n"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == -11, (done.returncode, done.stderr)
    assert "crashed" not in done.stderr
