"""Backends written in Python: MXNet's selector semantics, reasons, errors."""
import pytest

import subgraph


class ConvBnSelector(subgraph.SubgraphSelector):
    """MXNet's seed example: a Conv and the one BatchNormalization after it."""

    def __init__(self):
        self.found_bn = False

    def Select(self, node):
        return node.op == "Conv"

    def SelectOutput(self, node, consumer):
        if node.op != "Conv" or consumer.op != "BatchNormalization" or self.found_bn:
            return False
        self.found_bn = True
        return True

    def Filter(self, candidates):
        return candidates if any(n.op == "BatchNormalization" for n in candidates) else []

    def FilterReason(self, node):
        return "no BatchNormalization follows the Conv"

    def Reset(self):
        self.found_bn = False


class ConvBnProperty(subgraph.SubgraphProperty):
    def __init__(self):
        super().__init__("conv_bn", inference_only=True)

    def CreateSubgraphSelector(self):
        return ConvBnSelector()


subgraph.register_backend("py_convbn", [ConvBnProperty()])


def test_python_seed_example_matches_the_plugin_on_resnet50(resnet50):
    python = subgraph.partition(subgraph.load(resnet50), ["py_convbn"])
    plugin = subgraph.partition(subgraph.load(resnet50), ["example_convbn"])
    assert len(python["regions"]) == 53
    assert [r["nodes"] for r in python["regions"]] == [r["nodes"] for r in plugin["regions"]]
    assert all(r["backend"] == "py_convbn" for r in python["regions"])


def test_python_backend_runs_in_a_session(block):
    import numpy as np
    x = np.ones((1, 2, 4, 4), np.float32)
    s = subgraph.Session(block, backends=["py_convbn"])
    assert [r["nodes"] for r in s.report["regions"]] == [["conv", "bn"]]
    np.testing.assert_allclose(s.run({"x": x})["y"], subgraph.Session(block).run({"x": x})["y"],
                               rtol=1e-6)


def test_filter_reason_reaches_the_report(block):
    report = subgraph.partition(subgraph.load(block), ["py_convbn"])
    lone = [r for r in report["rejected"] if r["node"] == "lone_conv"]
    assert lone and "no BatchNormalization follows the Conv" in lone[0]["reason"]


def test_declined_with_a_reason(block):
    class NoRelu(subgraph.SubgraphSelector):
        def Select(self, node):
            return (False, "relus stay on the host") if node.op == "Relu" else False

    class Prop(subgraph.SubgraphProperty):
        def CreateSubgraphSelector(self):
            return NoRelu()

    subgraph.register_backend("py_norelu", [Prop("norelu")])
    report = subgraph.partition(subgraph.load(block), ["py_norelu"])
    relu = [r for r in report["rejected"] if r["node"] == "relu"]
    assert relu and "relus stay on the host" in relu[0]["reason"]


def test_an_exception_in_a_selector_fails_the_partition_with_its_message(block):
    class Broken(subgraph.SubgraphSelector):
        def Select(self, node):
            raise ValueError("broken selector")

    class Prop(subgraph.SubgraphProperty):
        def CreateSubgraphSelector(self):
            return Broken()

    subgraph.register_backend("py_broken", [Prop("broken")])
    g = subgraph.load(block)
    with pytest.raises(subgraph.InvalidArgument,
                       match=r"subgraph property py_broken/broken: selection failed: Broken\.Select on "
                             r"node '\w+' \(\w+\) "
                             r"raised ValueError: broken selector"):
        subgraph.partition(g, ["py_broken"])
    assert len(g) == 4


def test_create_subgraph_node_may_reject(block):
    class Prop(ConvBnProperty):
        def CreateSubgraphNode(self, body, region_id):
            return "regions of %d nodes are too small" % len(body)

    subgraph.register_backend("py_reject", [Prop()])
    report = subgraph.partition(subgraph.load(block), ["py_reject"])
    assert report["regions"] == []
    assert any("too small" in r["reason"] for r in report["rejected"])


def test_registration_errors():
    with pytest.raises(subgraph.Error, match="already registered"):
        subgraph.register_backend("py_convbn", [ConvBnProperty()])
    with pytest.raises(subgraph.Error, match="has no properties"):
        subgraph.register_backend("py_empty", [])
    assert "py_convbn" in subgraph.backends()
