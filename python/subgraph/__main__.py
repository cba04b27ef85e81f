"""`python -m subgraph ARGS...` runs the `subgraph` program that came with
the package (a wheel's `subgraph` command is this too), so that its
plugins are the package's."""
import os
import sys

from . import _program


def main():
    program = _program()
    os.execv(program, [program] + sys.argv[1:])


if __name__ == "__main__":
    main()
