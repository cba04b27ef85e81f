#!/usr/bin/env python3
"""Checks that the layers show in the includes (docs/architecture.md).

1. A layer includes no header of a layer above it: the runtime, for one,
   includes no partition, plugins or api header, since a session receives
   graphs that the library (api/) has already partitioned.
2. No two files include each other's headers: within a folder, if a.cpp or
   a.h includes b.h, then b.cpp and b.h include no a.h (the plugin host's
   adapters once did).

Prints one line per violation and exits 1 if there is any.

    tools/check-layers.py [ROOT]
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), ".."))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

# Source folders and public header folders of each layer, bottom up, and the
# public header folders each layer must not include.
LAYERS = {
    "core": (["core", "include/subgraph/ir", "include/subgraph/support",
              "include/subgraph/passes", "include/subgraph/analysis"],
             ["partition", "runtime", "plugins", "api", "onnx"]),
    "partition": (["subgraph", "include/subgraph/partition"],
                  ["runtime", "plugins", "api"]),
    "runtime": (["runtime", "include/subgraph/runtime"],
                ["partition", "plugins", "api", "onnx"]),
}


# Folders inside a layer's folder that belong to a layer above it: the ONNX
# importer and exporter (subgraph::onnx) live in core/onnx but build on core.
ABOVE = {"core/onnx"}


def sources(folder):
    top = os.path.join(ROOT, folder)
    for dirpath, dirnames, files in os.walk(top):
        dirnames[:] = [d for d in dirnames
                       if os.path.relpath(os.path.join(dirpath, d), ROOT) not in ABOVE]
        for f in sorted(files):
            if f.endswith((".h", ".cpp", ".cu", ".hpp")):
                yield os.path.join(dirpath, f)


def includes(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return INCLUDE.findall(f.read())


def layer_violations():
    out = []
    for layer, (folders, forbidden) in LAYERS.items():
        for folder in folders:
            for path in sources(folder):
                for inc in includes(path):
                    parts = inc.split("/")
                    if len(parts) >= 2 and parts[0] == "subgraph" and parts[1] in forbidden:
                        rel = os.path.relpath(path, ROOT)
                        out.append(f"{rel}: the {layer} layer includes {inc}, a layer above it")
    return out


def mutual_violations():
    out = []
    skip = {"build", ".git", "node_modules", "third_party"}
    for dirpath, dirnames, files in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if d not in skip and not d.startswith(".")]
        units = {}
        for f in files:
            stem, ext = os.path.splitext(f)
            if ext in (".h", ".cpp", ".cu", ".hpp"):
                units.setdefault(stem, []).append(os.path.join(dirpath, f))
        headers = {stem for stem in units
                   if any(p.endswith((".h", ".hpp")) for p in units[stem])}
        uses = {}
        for stem, paths in units.items():
            used = set()
            for p in paths:
                for inc in includes(p):
                    other = os.path.splitext(inc)[0]
                    if "/" not in inc and other in headers and other != stem:
                        used.add(other)
            uses[stem] = used
        for a in sorted(uses):
            for b in sorted(uses[a]):
                if a < b and a in uses.get(b, set()):
                    rel = os.path.relpath(dirpath, ROOT)
                    out.append(f"{rel}: {a} and {b} include each other's headers")
    return out


def main():
    problems = layer_violations() + mutual_violations()
    for p in problems:
        print("check-layers:", p)
    if problems:
        return 1
    print("check-layers: the layers show in the includes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
