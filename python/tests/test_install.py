"""An installable package (issue 49, item 3): `pip install .` and `cmake
--install` put a package into a fresh virtual environment that runs a model
on onednn with its own plugins, and still does after the environment's
folder is moved. The wheel is packed from this build's folder
(SUBGRAPH_WHEEL_FROM_BUILD, docs/python.md) so the test takes seconds, not
a second build. setup.sh no longer writes into the system site-packages."""
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import subgraph

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Runs in the virtual environment: the package must be the environment's,
# its plugins the ones beside it, and the block must run on onednn.
CHECK = r"""
import os, sys
import numpy as np
import subgraph
venv, model = sys.argv[1], sys.argv[2]
assert subgraph.__file__.startswith(venv + os.sep), subgraph.__file__
dirs = [str(d) for d in subgraph._subgraph._plugin_dirs()]
assert dirs and dirs[0].startswith(venv + os.sep), dirs
s = subgraph.InferenceSession(model, providers=["DnnlExecutionProvider"])
assert s.session.backends == ["onednn"], s.session.backends
assert {r["backend"] for r in s.session.report["regions"]} == {"onednn"}
y = s.run(None, {"x": np.ones((1, 2, 4, 4), np.float32)})[0]
np.save(sys.argv[3], y)
print("ok", subgraph.__version__, dirs[0])
"""


def clean_env(**extra):
    """The environment without this build's PYTHONPATH (the virtual
    environment must import its own copy) or a plugin path."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "SUBGRAPH_PLUGIN_PATH", "PYTHONHOME")}
    env["PIP_NO_CACHE_DIR"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def build_dir(program):
    return os.path.dirname(os.path.dirname(os.path.abspath(program)))


def make_venv(path):
    # --without-pip: the system's pip (Debian's python3-pip) runs the
    # install, seen through --system-site-packages like numpy.
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                    str(path)], check=True, env=clean_env())
    return path / "bin" / "python"


def check_in_venv(venv, model, out):
    done = subprocess.run([str(venv / "bin" / "python"), "-c", CHECK, str(venv), model, str(out)],
                          capture_output=True, text=True, env=clean_env(), timeout=300, cwd="/")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("ok " + subgraph.__version__), done.stdout
    return np.load(out)


def expected(block):
    return subgraph.Session(block).run({"x": np.ones((1, 2, 4, 4), np.float32)})["y"]


def test_pip_install_into_a_venv_runs_on_onednn_and_survives_a_move(tmp_path, build_dir, block):
    python = make_venv(tmp_path / "venv")
    done = subprocess.run([str(python), "-m", "pip", "install", "--no-index", "-q", ROOT],
                          capture_output=True, text=True, timeout=600,
                          env=clean_env(SUBGRAPH_WHEEL_FROM_BUILD=build_dir))
    assert done.returncode == 0, done.stdout + done.stderr
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('platlib'))"],
                          capture_output=True, text=True, env=clean_env(), check=True).stdout.strip()
    package = os.path.join(site, "subgraph")
    assert os.access(os.path.join(package, "bin", "subgraph"), os.X_OK)
    assert os.path.exists(os.path.join(package, "lib", "subgraph", "plugins", "onednn.so"))
    metadata = [d for d in os.listdir(site) if d.startswith("subgraph-") and d.endswith(".dist-info")]
    with open(os.path.join(site, metadata[0], "METADATA")) as f:
        assert "Requires-Dist: numpy" in f.read().splitlines()
    want = expected(block)
    np.testing.assert_allclose(check_in_venv(tmp_path / "venv", block, tmp_path / "a.npy"), want,
                               rtol=1e-5, atol=1e-6)
    # The wheel's `subgraph` command is the program beside the package, with
    # the package's plugins.
    listed = subprocess.run([str(tmp_path / "venv" / "bin" / "subgraph"), "plugins"],
                            capture_output=True, text=True, env=clean_env(), timeout=120, cwd="/")
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"onednn", listed.stdout) and package in listed.stdout, listed.stdout

    shutil.move(str(tmp_path / "venv"), str(tmp_path / "moved"))
    np.testing.assert_allclose(check_in_venv(tmp_path / "moved", block, tmp_path / "b.npy"), want,
                               rtol=1e-5, atol=1e-6)
    moved = subprocess.run([str(tmp_path / "moved" / "bin" / "python"), "-m", "subgraph",
                            "plugins"], capture_output=True, text=True, env=clean_env(),
                           timeout=120, cwd="/")  # not where a build's subgraph/ would shadow it
    assert moved.returncode == 0 and str(tmp_path / "moved") in moved.stdout, moved.stderr
    # The wheel's package folder is whole: a copy of it alone runs on onednn.
    copy = tmp_path / "copy"
    shutil.copytree(package.replace(str(tmp_path / "venv"), str(tmp_path / "moved")),
                    str(copy / "subgraph"))
    done = subprocess.run([sys.executable, "-c", CHECK, str(copy), block, str(tmp_path / "c.npy")],
                          capture_output=True, text=True, env=clean_env(PYTHONPATH=str(copy)),
                          timeout=120, cwd="/")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_copied_build_tree_package_says_where_its_plugins_should_be(tmp_path, build_dir):
    """The build tree's python/subgraph finds the build's plugins through a
    relative path; copied alone, it says so at import, and check_plugin
    names the program it cannot find instead of a raw FileNotFoundError."""
    shutil.copytree(os.path.join(build_dir, "python", "subgraph"), str(tmp_path / "subgraph"))
    script = ("import warnings\n"
              "with warnings.catch_warnings(record=True) as w:\n"
              "    warnings.simplefilter('always')\n"
              "    import subgraph\n"
              "print(w[0].message)\n"
              "try:\n"
              "    subgraph.check_plugin('onednn')\n"
              "except subgraph.NoSuchFile as e:\n"
              "    print('NoSuchFile:', e)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=clean_env(PYTHONPATH=str(tmp_path), PATH="/usr/bin:/bin"),
                          timeout=120, cwd="/")
    assert done.returncode == 0, done.stderr
    folder = os.path.normpath(str(tmp_path / "subgraph" / ".." / ".." / "lib" / "subgraph" /
                                  "plugins"))
    assert ("subgraph: this package's plugin folder %s (subgraph/_layout.py) does not exist"
            % folder) in done.stdout, done.stdout
    assert "NoSuchFile: the subgraph program is neither beside the package" in done.stdout


def test_cmake_install_into_a_venv_runs_on_onednn_and_survives_a_move(tmp_path, build_dir, block):
    make_venv(tmp_path / "venv")
    cmake = os.environ.get("SUBGRAPH_TEST_CMAKE") or shutil.which("cmake")
    done = subprocess.run([cmake, "--install", build_dir, "--prefix", str(tmp_path / "venv")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    want = expected(block)
    np.testing.assert_allclose(check_in_venv(tmp_path / "venv", block, tmp_path / "a.npy"), want,
                               rtol=1e-5, atol=1e-6)
    shutil.move(str(tmp_path / "venv"), str(tmp_path / "moved"))
    np.testing.assert_allclose(check_in_venv(tmp_path / "moved", block, tmp_path / "b.npy"), want,
                               rtol=1e-5, atol=1e-6)


def test_pip_names_a_build_folder_without_the_package(tmp_path):
    """The backend's failure is one line naming the folder, not a traceback."""
    python = make_venv(tmp_path / "venv")
    empty = tmp_path / "empty-build"
    empty.mkdir()
    done = subprocess.run([str(python), "-m", "pip", "install", "--no-index", "-q", ROOT],
                          capture_output=True, text=True, timeout=300,
                          env=clean_env(SUBGRAPH_WHEEL_FROM_BUILD=str(empty)))
    assert done.returncode != 0
    assert ("subgraph_build: error: %s/python/subgraph: no Python package here" % empty
            in done.stdout + done.stderr), done.stdout + done.stderr
    site = tmp_path / "venv" / "lib" / ("python%d.%d" % sys.version_info[:2]) / "site-packages"
    assert not os.path.exists(site / "subgraph")


def test_setup_script_writes_nothing_into_the_system_site_packages(tmp_path, build_dir):
    """setup.sh's Python step, run alone: it prints how to use the package
    and leaves the system's site-packages as they were."""
    site = subprocess.run(["/usr/bin/python3", "-c",
                           "import site; print(site.getsitepackages()[0])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    before = sorted(os.listdir(site)) if os.path.isdir(site) else []
    with open(os.path.join(ROOT, "tools", "setup.sh")) as f:
        text = f.read()
    function = re.search(r"^python_usage\(\) \{.*?^\}", text, re.MULTILINE | re.DOTALL).group(0)
    preset = os.path.basename(build_dir)
    script = 'repo=%s\n%s\npython_usage %s\n' % (os.path.dirname(os.path.dirname(build_dir)),
                                                 function, preset)
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    assert "PYTHONPATH=%s/python" % build_dir in done.stdout, done.stdout
    assert "pip install ." in done.stdout
    assert (sorted(os.listdir(site)) if os.path.isdir(site) else []) == before
    assert "getsitepackages()[0])" not in text.split("python_usage()")[0]
    assert not re.search(r"tee .*site|> *\"?\$site", text)
