"""Hostile input through the Python package (issue 48): thread counts,
node views kept past their callback, non-canonical bools, the memory limit,
and selector callbacks that misbehave. Each ends in subgraph.Error (or the
right answer), never in a signal or a read of freed memory."""
import numpy as np
import pytest

import subgraph


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


NEG = """graph @g(%x: f32[2]) {
  %y = Neg(%x)
  return %y
}
"""


# --- threads ----------------------------------------------------------------

@pytest.mark.parametrize("threads", [2147483647, 65537, 1025, -1])
def test_thread_counts_out_of_bounds_raise(tmp_path, threads):
    model = write(tmp_path, "neg.sg", NEG)
    with pytest.raises(subgraph.Error, match="threads must be between 0 .* and 1024, not %d" % threads):
        subgraph.Session(model, threads=threads)
    with pytest.raises(subgraph.Error, match="threads must be between"):
        subgraph.Session(model, backends=["onednn"], threads=threads)


def test_thread_count_too_large_for_an_int_raises(tmp_path):
    with pytest.raises((subgraph.Error, TypeError)):
        subgraph.Session(write(tmp_path, "neg.sg", NEG), threads=2**70)


def test_thread_count_in_bounds_runs(tmp_path):
    s = subgraph.Session(write(tmp_path, "neg.sg", NEG), threads=2)
    np.testing.assert_array_equal(s.run({"x": np.array([1, -2], np.float32)})["y"], [-1, 2])


# --- views --------------------------------------------------------------------

class Keeper(subgraph.SubgraphSelector):
    """Keeps every view it is given, and views reached from them."""
    kept = []

    def Select(self, node):
        Keeper.kept.append(node)
        Keeper.kept.extend(v for v in node.inputs if v is not None)
        for v in node.outputs:
            Keeper.kept.extend(v.consumers)
        return False


class KeeperProperty(subgraph.SubgraphProperty):
    def __init__(self):
        super().__init__("keeper")

    def CreateSubgraphSelector(self):
        return Keeper()


subgraph.register_backend("py_keeper", [KeeperProperty()])


def test_views_kept_past_their_callback_raise(block):
    Keeper.kept.clear()
    subgraph.partition(subgraph.load(block), ["py_keeper"])
    assert len(Keeper.kept) > 4
    for view in Keeper.kept:
        with pytest.raises(subgraph.Error, match="valid only during the call"):
            view.name
        with pytest.raises(subgraph.Error, match="valid only during the call"):
            repr(view)
    # Identity needs no read: a stale node still compares and hashes.
    nodes = [v for v in Keeper.kept if isinstance(v, subgraph.Node)]
    assert nodes[0] == nodes[0] and isinstance(hash(nodes[0]), int)


def test_views_of_a_loaded_graph_stay_valid(block):
    g = subgraph.load(block)
    node = g.nodes[0]
    consumers = node.outputs[0].consumers
    del g
    assert node.op == "Conv" and [c.op for c in consumers] == ["BatchNormalization"]


# --- bools --------------------------------------------------------------------

BOOLS = """graph @g(%p: bool[4]) {
  %n = Not(%p)
  %c = Cast(%p) {to = 2}
  return %n, %c
}
"""


def test_non_canonical_bools_read_in_place_are_true(tmp_path):
    s = subgraph.Session(write(tmp_path, "bools.sg", BOOLS))
    raw = np.array([0, 1, 2, 255], np.uint8)
    p = raw.view(np.bool_)
    out = s.run({"p": p})
    np.testing.assert_array_equal(out["n"], [True, False, False, False])
    np.testing.assert_array_equal(out["c"], [0, 1, 1, 1])
    np.testing.assert_array_equal(raw, [0, 1, 2, 255])  # the caller's array is not written


# --- memory -------------------------------------------------------------------

# 512 GiB: past the default limit (3/4 of the memory) of any CI machine,
# under the runtime's 1 TiB limit on one tensor.
HUGE = """graph @g(%x: f32[1]) {
  %shape = const i64[2] [262144, 524288]
  %big = ConstantOfShape(%shape)
  %y = Add(%big, %x)
  return %y
}
"""


def test_default_memory_limit_refuses_a_512_gib_plan(tmp_path):
    model = write(tmp_path, "huge.sg", HUGE)
    with pytest.raises(subgraph.Error, match="over the memory limit"):
        subgraph.Session(model).run({"x": np.zeros(1, np.float32)})


def test_memory_limit_argument(tmp_path):
    model = write(tmp_path, "neg.sg", NEG)
    small = """graph @g(%x: f32[1024]) {
  %y = Neg(%x)
  %z = Neg(%y)
  return %z
}
"""
    with pytest.raises(subgraph.Error, match="over the memory limit of 1024 bytes"):
        s = subgraph.Session(write(tmp_path, "small.sg", small), memory_limit=1024)
        s.run({"x": np.zeros(1024, np.float32)})
    roomy = subgraph.Session(write(tmp_path, "small2.sg", small), memory_limit=1 << 20)
    assert roomy.run({"x": np.ones(1024, np.float32)})["z"].sum() == 1024
    with pytest.raises(TypeError):
        subgraph.Session(model, memory_limit=-1)


def test_loop_limits_are_arguments(tmp_path):
    loop = write(tmp_path, "loop.sg", """graph @g(%x: f32[2]) {
  %m = const i64[] [4611686018427387904]
  %t = const bool[] [1]
  %y = Loop(%m, %t, %x) {body = graph @b(%i: i64[], %c: bool[], %v: f32[2]) {
    %w = Neg(%v)
    return %c, %w
  }}
  return %y
}
""")
    with pytest.raises(subgraph.Error, match="loop iteration limit of 100"):
        s = subgraph.Session(loop, loop_iterations=100)
        s.run({"x": np.zeros(2, np.float32)})
    with pytest.raises(subgraph.Error, match="loop_seconds must not be negative"):
        subgraph.Session(loop, loop_seconds=-1.0)


# --- hostile callbacks ---------------------------------------------------------

class Raising:
    def __bool__(self):
        raise ValueError("no truth here")


class Hostile(subgraph.SubgraphSelector):
    """Misbehaves in the way `Hostile.mode` names."""
    mode = None
    stale = []

    def Select(self, node):
        if Hostile.mode == "bad-bool":
            return Raising()
        if Hostile.mode == "stale" and not Hostile.stale:
            Hostile.stale.append(node)
        return node.op == "Conv"

    def Filter(self, candidates):
        if Hostile.mode == "int":
            return [1]
        if Hostile.mode == "foreign":
            return [Hostile.foreign]
        if Hostile.mode == "stale":
            return Hostile.stale
        return candidates


class HostileProperty(subgraph.SubgraphProperty):
    def __init__(self):
        super().__init__("hostile")

    def CreateSubgraphSelector(self):
        return Hostile()


subgraph.register_backend("py_hostile", [HostileProperty()])


@pytest.mark.parametrize("mode,message", [
    # An object whose truth raises is not a decision: it is named, never asked.
    ("bad-bool", r"Hostile\.Select on node '\w+' \(\w+\) returned a Raising \(<.*\); expected "
                 r"True, False or \(False, \"reason\"\)"),
    ("int", r"Hostile\.Filter on a region of 1 node \('\w+'\) returned a list holding a int "
            r"\(1\); expected a list of the Node objects it was given"),
    ("foreign", "not one of the candidates"),
    ("stale", "not one of the candidates"),
])
def test_hostile_callbacks_fail_the_partition_with_one_line(block, mode, message):
    Hostile.mode, Hostile.stale = mode, []
    Hostile.foreign = subgraph.load(block).nodes[0]
    try:
        with pytest.raises(subgraph.Error, match=message) as raised:
            subgraph.partition(subgraph.load(block), ["py_hostile"])
        assert "\n" not in str(raised.value)
    finally:
        Hostile.mode = None
    # The backend still works once the callbacks behave.
    report = subgraph.partition(subgraph.load(block), ["py_hostile"])
    assert len(report["regions"]) == 2


def test_bad_property_options_fail_the_partition(block):
    class Negative(HostileProperty):
        def __init__(self):
            super().__init__()
            self.min_region_size = -1

    subgraph.register_backend("py_negative", [Negative()])
    with pytest.raises(subgraph.Error, match="min_region_size must be a non-negative int"):
        subgraph.partition(subgraph.load(block), ["py_negative"])


# --- plugin files ---------------------------------------------------------------

def test_truncated_plugin_file_raises(tmp_path):
    import os
    plugin_dir = next(d for d in subgraph._subgraph._plugin_dirs()
                      if os.path.exists(os.path.join(d, "example_convbn.so")))
    whole = open(os.path.join(plugin_dir, "example_convbn.so"), "rb").read()
    cut = tmp_path / "cut.so"
    cut.write_bytes(whole[:4096])
    with pytest.raises(subgraph.Error, match="is a truncated ELF file"):
        subgraph.Session(write(tmp_path, "neg.sg", NEG), backends=[str(cut)])
