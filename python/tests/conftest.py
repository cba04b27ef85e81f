"""Shared fixtures: models made by the `subgraph` program of the same build."""
import os
import subprocess

import pytest


@pytest.fixture(scope="session")
def program():
    """The `subgraph` program of this build (ctest sets SUBGRAPH_TEST_BIN)."""
    path = os.environ.get("SUBGRAPH_TEST_BIN")
    if not path or not os.access(path, os.X_OK):
        pytest.fail("SUBGRAPH_TEST_BIN does not name the subgraph program")
    return path


@pytest.fixture(scope="session")
def resnet50(program, tmp_path_factory):
    """The zoo's ResNet-50 (random weights, seed 0) as an ONNX file."""
    path = tmp_path_factory.mktemp("models") / "resnet50.onnx"
    subprocess.run([program, "zoo", "resnet50", "-o", str(path), "-q"], check=True)
    return str(path)


@pytest.fixture()
def block(tmp_path):
    """A small text graph: Conv -> BatchNormalization -> Relu, and a lone Conv."""
    path = tmp_path / "block.sg"
    path.write_text("""graph @block(%x: f32[1, 2, 4, 4]) {
  %w = const f32[2, 2, 1, 1] splat(0.5)
  %s = const f32[2] splat(1.0)
  %b = const f32[2] splat(0.0)
  %m = const f32[2] splat(0.0)
  %v = const f32[2] splat(1.0)
  %c = Conv(%x, %w) @conv
  %n = BatchNormalization(%c, %s, %b, %m, %v) @bn
  %r = Relu(%n) @relu
  %y = Conv(%r, %w) @lone_conv
  return %y
}
""")
    return str(path)
