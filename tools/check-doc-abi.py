#!/usr/bin/env python3
"""Checks that the docs quote the plugin ABI numbers of the header.

Sample outputs in the guides ("example_convbn 1.0.0 (plugin ABI 5): ...",
"plugin ABI version 5; search path: ...", "older than this subgraph
supports (1 to 5)") are what the program prints for plugins built against
include/subgraph/plugin_abi.h, so they must carry its SG_PLUGIN_ABI_VERSION
and SG_PLUGIN_ABI_MIN_VERSION. Prose such as "(ABI 3)" for when a feature
came is not checked. Prints one line per stale number; exit 1 if any.

    tools/check-doc-abi.py [ROOT]
"""
import glob
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), ".."))


def header_numbers():
    with open(os.path.join(ROOT, "include", "subgraph", "plugin_abi.h")) as f:
        text = f.read()
    version = int(re.search(r"#define SG_PLUGIN_ABI_VERSION (\d+)u", text).group(1))
    minimum = int(re.search(r"#define SG_PLUGIN_ABI_MIN_VERSION (\d+)u", text).group(1))
    return version, minimum


def main():
    version, minimum = header_numbers()
    checks = [
        (re.compile(r"\(plugin ABI (\d+)\):"), lambda m: int(m.group(1)) == version,
         "plugin ABI %d" % version),
        (re.compile(r"plugin ABI version (\d+); search path"),
         lambda m: int(m.group(1)) == version, "plugin ABI version %d" % version),
        (re.compile(r"supports \((\d+) to (\d+)\)"),
         lambda m: (int(m.group(1)), int(m.group(2))) == (minimum, version),
         "supports (%d to %d)" % (minimum, version)),
    ]
    stale = 0
    files = sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")) +
                   [os.path.join(ROOT, "README.md")])
    for path in files:
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                for pattern, good, want in checks:
                    for m in pattern.finditer(line):
                        if not good(m):
                            stale += 1
                            print("check-doc-abi: %s:%d: '%s', the header says '%s'"
                                  % (os.path.relpath(path, ROOT), number, m.group(0), want))
    if stale:
        return 1
    print("check-doc-abi: the docs quote plugin ABI %d (oldest %d)" % (version, minimum))
    return 0


if __name__ == "__main__":
    sys.exit(main())
