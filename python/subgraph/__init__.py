"""subgraph: partition and run neural-network graphs, from Python.

The same engine as the `subgraph` program (docs/python.md):

    import subgraph, numpy as np
    s = subgraph.Session("resnet50.onnx", backends=["onednn"])
    out = s.run({"input": np.zeros((1, 3, 224, 224), np.float32)})

Backends are the program's: built-in names, plugins found by name, plugin
files, or backends written in Python (register_backend). Every failure
raises subgraph.Error with the program's one-line message.
"""
import os as _os
import re as _re
import subprocess as _subprocess

from ._subgraph import Error, Graph, Node, Session, Value
from ._subgraph import load, partition, plugins
from . import _subgraph

__all__ = [
    "Error", "Graph", "Node", "Value", "Session", "load", "partition", "plugins",
    "check_plugin", "SubgraphSelector", "SubgraphProperty", "register_backend", "backends",
]


def _package_plugin_dirs():
    """Plugin folders beside this package: the build tree's
    (<build>/python/subgraph -> <build>/lib/subgraph/plugins) and an
    install's (<prefix>/lib/python3/dist-packages/subgraph ->
    <prefix>/lib/subgraph/plugins)."""
    here = _os.path.dirname(_os.path.abspath(__file__))
    candidates = [
        _os.path.join(here, "..", "..", "lib", "subgraph", "plugins"),
        _os.path.join(here, "..", "..", "..", "subgraph", "plugins"),
        _os.path.join(here, "..", "..", "..", "..", "lib", "subgraph", "plugins"),
    ]
    return [_os.path.normpath(c) for c in candidates if _os.path.isdir(c)]


_subgraph._set_plugin_dirs(_package_plugin_dirs())


class SubgraphSelector:
    """Decides node by node which nodes join a region (MXNet's
    SubgraphSelector). Override what you need; every method gets Node views
    valid only during the call. A method returns True or False, or
    (False, "reason") to say why not (the report shows it)."""

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
    partitioning pass and decides on each region."""

    def __init__(self, name, inference_only=False, min_region_size=1):
        self.name = name
        self.inference_only = inference_only
        self.min_region_size = min_region_size

    def CreateSubgraphSelector(self):
        """A new SubgraphSelector for one pass."""
        raise NotImplementedError("CreateSubgraphSelector")

    def CreateSubgraphNode(self, body, region_id):
        """Accept the region whose body is `body` (a Graph): return None, or a
        string to reject it with that reason."""
        return None


def register_backend(name, properties):
    """Registers `properties` (SubgraphProperty objects, in pass order) as
    backend `name`, which backends=[...] and partition() then accept."""
    _subgraph._register_backend(name, list(properties))


def backends():
    """The in-process backend names (built-in and registered from Python)."""
    return _subgraph._backend_names()


def _program():
    """The `subgraph` program beside this package (build tree or install)."""
    here = _os.path.dirname(_os.path.abspath(__file__))
    for c in (_os.path.join(here, "..", "..", "bin", "subgraph"),
              _os.path.join(here, "..", "..", "..", "..", "bin", "subgraph")):
        if _os.access(c, _os.X_OK):
            return _os.path.normpath(c)
    return "subgraph"


def check_plugin(target, cases=None, seed=None):
    """Runs `subgraph check-plugin TARGET` (each case in a worker process, so a
    crashing plugin fails a case, not Python). Returns {"passed": N,
    "failed": M, "ok": M == 0, "report": the program's text}. Raises Error
    with the program's one-line message when it cannot check the target."""
    args = [_program(), "check-plugin", target]
    if cases is not None:
        args += ["--cases", str(cases)]
    if seed is not None:
        args += ["--seed", str(seed)]
    done = _subprocess.run(args, capture_output=True, text=True)
    match = _re.search(r"^(\d+) passed, (\d+) failed", done.stdout, _re.MULTILINE)
    if not match:
        lines = (done.stderr.strip() or done.stdout.strip()).splitlines()
        message = lines[-1] if lines else "check-plugin ended with status %d" % done.returncode
        raise Error(message.removeprefix("subgraph: error: "))
    passed, failed = int(match.group(1)), int(match.group(2))
    return {"passed": passed, "failed": failed, "ok": failed == 0, "report": done.stdout}
