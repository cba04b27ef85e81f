#!/usr/bin/env python3
"""Measures what fresh memory costs on this machine: the time to touch
every page of a new anonymous mapping once (the kernel zero-fills each page
on its first touch), with 2 MiB pages asked for (MADV_HUGEPAGE, as the
programs' mimalloc does) and with 4 KiB pages.

Usage: python3 bench/first_touch.py [--mib 1024] [--rounds 3]

A large partition is bound by this: every region body, body value and
report entry is new memory, so its peak RSS sets a floor on its time
(docs/benchmarks.md). Prints the median seconds per GiB for each page size.
Needs only the Python standard library.
"""

import argparse
import mmap
import statistics
import time


def touch(size, huge):
    m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if huge and hasattr(mmap, "MADV_HUGEPAGE"):
        m.madvise(mmap.MADV_HUGEPAGE)
    start = time.perf_counter()
    for offset in range(0, size, 4096):
        m[offset] = 1
    first = time.perf_counter() - start
    start = time.perf_counter()
    for offset in range(0, size, 4096):
        m[offset] = 2
    again = time.perf_counter() - start
    m.close()
    return first, again


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.mib <= 0 or args.rounds <= 0:
        parser.error("--mib and --rounds must be positive")
    size = args.mib << 20
    gib = size / float(1 << 30)
    for huge in (True, False):
        runs = [touch(size, huge) for _ in range(args.rounds)]
        first = statistics.median(r[0] for r in runs) / gib
        again = statistics.median(r[1] for r in runs) / gib
        label = "2 MiB pages (MADV_HUGEPAGE)" if huge else "4 KiB pages"
        print(f"{label}: first touch {first:.2f} s/GiB, second touch {again:.2f} s/GiB "
              f"(the loop's own cost), median of {args.rounds}")


if __name__ == "__main__":
    main()
