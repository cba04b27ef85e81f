"""subgraph: partition and run neural-network graphs, from Python.

The same engine as the `subgraph` program (docs/python.md):

    import subgraph, numpy as np
    s = subgraph.Session("resnet50.onnx", backends=["onednn"])
    out = s.run({"input": np.zeros((1, 3, 224, 224), np.float32)})

or, for code written for ONNX Runtime, its interface (`import subgraph as
ort`): InferenceSession, SessionOptions, get_available_providers.

Backends are the program's: built-in names, plugins found by name, plugin
files, or backends written in Python (register_backend). Every failure
raises a subgraph.Error with the program's one-line message, of the kind
ONNX Runtime would raise: InvalidArgument, NoSuchFile, NotImplemented or
Fail. The package finds its plugins and the `subgraph` program through
subgraph/_layout.py, relative to itself: beside it in a wheel, in the build
tree, or in the install prefix.
"""
import os as _os
import shutil as _shutil

from ._subgraph import Error, Fail, InvalidArgument, NoSuchFile, NotImplemented
from ._subgraph import Graph, Node, Session, Value
from ._subgraph import load, partition, plan_stages, plugins
from ._subgraph import MpiPipeline, mpi_available
from ._subgraph import PLUGIN_ABI_VERSION, __version__
from . import _layout, _subgraph
from ._inference_session import (
    ExecutionMode, GraphOptimizationLevel, InferenceSession, NodeArg, RunOptions, SessionOptions,
    get_all_providers, get_available_providers, get_device, set_default_logger_severity)

__all__ = [
    "Error", "InvalidArgument", "NoSuchFile", "NotImplemented", "Fail",
    "Graph", "Node", "Value", "Session", "load", "partition", "plan_stages", "plugins",
    "MpiPipeline", "mpi_available",
    "check_plugin", "SubgraphSelector", "SubgraphProperty", "register_backend", "backends",
    "InferenceSession", "SessionOptions", "RunOptions", "NodeArg", "GraphOptimizationLevel",
    "ExecutionMode", "get_available_providers", "get_all_providers", "get_device",
    "set_default_logger_severity", "__version__", "PLUGIN_ABI_VERSION",
]


def _beside_package(relative):
    """`relative` (from _layout.py) as a path from this package's folder."""
    here = _os.path.dirname(_os.path.abspath(__file__))
    return _os.path.normpath(_os.path.join(here, relative))


def _plugin_dir():
    """The package's plugin folder. A package copied without it (the build
    tree's python/subgraph alone) is told so once, at import, instead of
    every backend name failing later without a word about why."""
    folder = _beside_package(_layout.PLUGIN_DIR)
    if not _os.path.isdir(folder):
        import warnings
        warnings.warn("subgraph: this package's plugin folder %s (subgraph/_layout.py) does not "
                      "exist, so plugins are found only on SUBGRAPH_PLUGIN_PATH; install the "
                      "package (pip install ., cmake --install) rather than copying its folder"
                      % folder, stacklevel=3)
    return folder


_subgraph._set_plugin_dirs([_plugin_dir()])


class SubgraphSelector:
    """Decides node by node which nodes join a region (MXNet's
    SubgraphSelector). Override what you need; every method gets Node views
    valid only during the call. A Select* method returns True or False, or
    (False, "reason") to say why not (the report shows it); anything else
    (None from a forgotten return, 1, "yes") fails the partition with a
    subgraph.InvalidArgument naming the method and the node."""

    def Select(self, node):
        """Whether `node` may start a region."""
        return False

    def SelectInput(self, node, producer):
        """Whether the region containing `node` grows to its input's producer."""
        return False

    def SelectOutput(self, node, consumer):
        """Whether the region containing `node` grows to a consumer."""
        return False

    def Filter(self, candidates):
        """The nodes of a grown region to keep (topological order)."""
        return candidates

    def FilterReason(self, node):
        """Why the last Filter dropped `node` ("" for no reason)."""
        return ""

    def Reset(self):
        """Forget per-region state; called before each new region."""


class SubgraphProperty:
    """One fusion rule (MXNet's SubgraphProperty): makes a fresh selector per
    partitioning pass and decides on each region. A subclass's __init__
    must call super().__init__(name)."""

    inference_only = False
    min_region_size = 1

    def __init__(self, name, inference_only=False, min_region_size=1):
        self.name = name
        self.inference_only = inference_only
        self.min_region_size = min_region_size

    def CreateSubgraphSelector(self):
        """A new SubgraphSelector for one pass."""
        raise NotImplementedError("%s must override CreateSubgraphSelector to return a new "
                                  "SubgraphSelector" % type(self).__name__)

    def CreateSubgraphNode(self, body, region_id):
        """Accept the region whose body is `body` (a Graph): return None, or a
        string to reject it with that reason."""
        return None


def register_backend(name, properties):
    """Registers `properties` (SubgraphProperty objects, in pass order) as
    backend `name`, which backends=[...] and partition() then accept. A name
    a plugin on the search path has ("onednn") is refused: the registered
    backend would hide the plugin."""
    _subgraph._register_backend(name, list(properties))


def backends():
    """The in-process backend names (built-in and registered from Python)."""
    return _subgraph._backend_names()


def _program():
    """The `subgraph` program beside this package (_layout.py), else the
    one on PATH."""
    beside = _beside_package(_layout.PROGRAM)
    if _os.access(beside, _os.X_OK):
        return beside
    found = _shutil.which("subgraph")
    if found:
        return found
    raise NoSuchFile("the subgraph program is neither beside the package (%s) nor on PATH"
                     % beside)


def check_plugin(target, cases=None, seed=None, ops=None, numerics=True):
    """The conformance run of `subgraph check-plugin TARGET`, by the library's
    test kit: probe the ops its selectors fuse, partition random graphs,
    check every invariant and the numerics. Each case runs in a worker
    process (the `subgraph` program beside the package), so a crashing or
    hanging plugin fails its case, not Python.

    cases: random graphs (default 100); seed: of the first (default 1).
    ops: catalog op names to build the graphs from (a list, or
    "MatMul,Add"), as --ops; default: the ops its selectors are found to
    fuse. numerics=False checks partitioning only (--no-numerics).

    Returns {"passed": N, "failed": M, "ok": ..., "problem": ..., "report":
    the program's text}. ok is False when a case failed, and also when the
    run proved nothing: no case formed a region, or the plugin's kernels
    declined every one; "problem" then says which (None when ok). Raises
    Error with one line when it cannot check the target."""
    if isinstance(ops, str):
        ops = [op for op in ops.split(",") if op]
    return _subgraph._check_plugin(target, 100 if cases is None else int(cases),
                                   1 if seed is None else int(seed), list(ops or []),
                                   bool(numerics), _program())
