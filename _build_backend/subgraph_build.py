"""The PEP 517 build backend of `pip install .` (pyproject.toml).

It drives CMake to build the Python extension, the `subgraph` program and
the plugins, and packs them into a wheel with the package's Python files:

    subgraph/__init__.py ... _subgraph.cpython-*.so    the package
    subgraph/bin/subgraph                               the program
    subgraph/lib/subgraph/plugins/*.so                  its plugins
    subgraph/_layout.py                                 where those are, relative
                                                        to the package

so the installed package finds its plugins and program beside itself, also
after the virtual environment that holds it is moved, and the program
finds the same plugins (<its folder>/../lib/subgraph/plugins). The wheel's
`subgraph` command runs that program.

It needs nothing but the standard library and CMake (no setuptools, no
wheel package): pyproject.toml requires nothing, so pip's isolated build
environment needs no download and `pip install .` works offline.

Where the build happens, from a setting (`pip install . --config-settings
KEY=VALUE`) or the environment variable beside it; relative paths are
relative to the source tree:

    build-dir   SUBGRAPH_WHEEL_BUILD_DIR   the CMake build folder: configured
                                           when it has no CMakeCache.txt yet
                                           (Release, no tests, no benchmarks,
                                           this Python), then only the
                                           package's targets are built
                                           (target subgraph_python_package);
                                           default build/wheel
    from-build  SUBGRAPH_WHEEL_FROM_BUILD  an existing build folder packed as
                                           it is, without running CMake (a
                                           CI job or a test that has built
                                           the tree already: seconds instead
                                           of a build); it must hold the
                                           extension for this Python

The parallelism is CMake's: CMAKE_BUILD_PARALLEL_LEVEL.

`pip install -e .` (PEP 660) installs a .pth file that points at the build
folder's package (<build>/python) instead of copying it.
"""
import base64
import hashlib
import importlib.machinery
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Where the payload lives inside the wheel's package folder; the program
# looks for its plugins in <its folder>/../lib/subgraph/plugins.
WHEEL_PLUGIN_DIR = "lib/subgraph/plugins"
WHEEL_PROGRAM = "bin/subgraph"


class BuildError(Exception):
    """A reason the wheel cannot be built, in one line."""


# --- metadata ------------------------------------------------------------------

def _project():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def _version():
    """The version CMake builds (project(subgraph VERSION x.y.z))."""
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        match = re.search(r"project\(\s*subgraph\s+VERSION\s+([0-9.]+)", f.read())
    if not match:
        raise BuildError("CMakeLists.txt: no project(subgraph VERSION ...)")
    return match.group(1)


def _metadata_text():
    p = _project()
    lines = ["Metadata-Version: 2.1", "Name: " + p["name"], "Version: " + _version()]
    if "description" in p:
        lines.append("Summary: " + p["description"])
    if "requires-python" in p:
        lines.append("Requires-Python: " + p["requires-python"])
    for dep in p.get("dependencies", []):
        lines.append("Requires-Dist: " + dep)
    for name, url in p.get("urls", {}).items():
        lines.append("Project-URL: %s, %s" % (name, url))
    return "\n".join(lines) + "\n"


def _tag():
    """cp311-cp311-linux_x86_64: this interpreter, this platform."""
    python = "cp%d%d" % sys.version_info[:2]
    platform = re.sub(r"[-.]", "_", sysconfig.get_platform())
    return "%s-%s-%s" % (python, python, platform)


def _entry_points():
    scripts = _project().get("scripts", {})
    return "[console_scripts]\n" + "".join("%s = %s\n" % kv for kv in scripts.items())


def _dist_info_files(tag):
    """{name: bytes} of the .dist-info folder, RECORD aside."""
    wheel = ("Wheel-Version: 1.0\nGenerator: subgraph_build (_build_backend)\n"
             "Root-Is-Purelib: false\nTag: %s\n" % tag)
    return {"METADATA": _metadata_text().encode(), "WHEEL": wheel.encode(),
            "entry_points.txt": _entry_points().encode()}


def _dist_info_name():
    return "%s-%s.dist-info" % (_project()["name"], _version())


# --- the build -----------------------------------------------------------------

def _setting(config_settings, key, env):
    value = (config_settings or {}).get(key) or os.environ.get(env)
    if not value:
        return None
    return value if os.path.isabs(value) else os.path.join(ROOT, value)


def _log(message):
    print("subgraph_build: " + message, file=sys.stderr, flush=True)


def _run(args):
    _log("$ " + " ".join(args))
    done = subprocess.run(args, cwd=ROOT)
    if done.returncode != 0:
        raise BuildError("%s failed with status %d (its output is above)" % (args[0],
                                                                            done.returncode))


def _cmake_build(build_dir):
    """Configures `build_dir` if needed and builds the package's targets."""
    cmake = shutil.which("cmake")
    if not cmake:
        raise BuildError("cmake not found on PATH (tools/debian-packages.txt lists what the "
                         "build needs)")
    if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
        args = [cmake, "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                "-DSUBGRAPH_BUILD_TESTS=OFF", "-DSUBGRAPH_BUILD_BENCHMARKS=OFF",
                "-DSUBGRAPH_BUILD_PYTHON=ON", "-DPython3_EXECUTABLE=" + sys.executable]
        if shutil.which("ninja"):
            args += ["-G", "Ninja"]
        _run(args)
    _run([cmake, "--build", build_dir, "--target", "subgraph_python_package"])


def _build_folder(config_settings):
    """The build folder to pack, built unless it is from-build's."""
    prebuilt = _setting(config_settings, "from-build", "SUBGRAPH_WHEEL_FROM_BUILD")
    if prebuilt:
        _log("packing the build folder %s as it is (from-build)" % prebuilt)
        return prebuilt
    build_dir = (_setting(config_settings, "build-dir", "SUBGRAPH_WHEEL_BUILD_DIR")
                 or os.path.join(ROOT, "build", "wheel"))
    _cmake_build(build_dir)
    return build_dir


def _payload(build_dir):
    """[(path in the wheel, file on disk or bytes, executable)] of the
    package in `build_dir`."""
    package = os.path.join(build_dir, "python", "subgraph")
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    if not os.path.isdir(package):
        raise BuildError("%s: no Python package here; is it a subgraph build folder with "
                         "pybind11 and the Python headers found?" % package)
    extensions = [f for f in os.listdir(package) if f.startswith("_subgraph.")]
    if "_subgraph" + suffix not in extensions:
        raise BuildError("%s holds %s, not _subgraph%s: that build is for another Python than "
                         "this one (%s); build with it (-DPython3_EXECUTABLE=%s) or use another "
                         "build folder" % (package, ", ".join(extensions) or "no extension",
                                           suffix, sys.executable, sys.executable))
    files = []
    for name in sorted(os.listdir(package)):
        path = os.path.join(package, name)
        if name == "_layout.py" or not os.path.isfile(path):
            continue  # the build tree's layout, __pycache__
        if name.startswith("_subgraph.") and name != "_subgraph" + suffix:
            continue
        files.append(("subgraph/" + name, path, False))
    program = os.path.join(build_dir, "bin", "subgraph")
    plugins = os.path.join(build_dir, "lib", "subgraph", "plugins")
    if not os.access(program, os.X_OK):
        raise BuildError("%s: the subgraph program was not built" % program)
    files.append(("subgraph/" + WHEEL_PROGRAM, program, True))
    found = sorted(f for f in os.listdir(plugins) if f.endswith(".so")) if os.path.isdir(
        plugins) else []
    if not found:
        raise BuildError("%s: no plugins were built" % plugins)
    for name in found:
        files.append(("subgraph/%s/%s" % (WHEEL_PLUGIN_DIR, name), os.path.join(plugins, name),
                      False))
    # python/layout.py.in, as CMake fills it for the build tree and installs.
    with open(os.path.join(ROOT, "python", "layout.py.in")) as f:
        layout = f.read()
    for key, value in (("layout_origin", "a wheel, written by _build_backend/subgraph_build.py"),
                       ("layout_plugin_dir", WHEEL_PLUGIN_DIR), ("layout_program", WHEEL_PROGRAM)):
        layout = layout.replace("@%s@" % key, value)
    files.append(("subgraph/_layout.py", layout.encode(), False))
    return files


# --- the wheel file ------------------------------------------------------------

def _record_hash(data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def _write_wheel(wheel_directory, files, tag):
    """Writes the wheel of `files` plus the .dist-info; returns its name."""
    name = "%s-%s-%s.whl" % (_project()["name"], _version(), tag)
    dist_info = _dist_info_name()
    entries = list(files) + [(dist_info + "/" + n, data, False)
                             for n, data in _dist_info_files(tag).items()]
    record = io.StringIO()
    target = os.path.join(wheel_directory, name)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as wheel:
        for arcname, source, executable in entries:
            if isinstance(source, bytes):
                data = source
            else:
                with open(source, "rb") as f:
                    data = f.read()
            info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o100755 if executable else 0o100644) << 16  # regular files
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data, compresslevel=1)
            record.write("%s,%s,%d\n" % (arcname, _record_hash(data), len(data)))
        record.write(dist_info + "/RECORD,,\n")
        info = zipfile.ZipInfo(dist_info + "/RECORD", date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = 0o100644 << 16
        wheel.writestr(info, record.getvalue())
    _log("wrote " + target)
    return name


def _fail(error):
    """Ends the hook with the reason on one line (pip shows it)."""
    print("subgraph_build: error: %s" % error, file=sys.stderr, flush=True)
    raise SystemExit(1)


# --- PEP 517 and PEP 660 hooks ---------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    dist_info = os.path.join(metadata_directory, _dist_info_name())
    os.makedirs(dist_info, exist_ok=True)
    for name, data in _dist_info_files(_tag()).items():
        with open(os.path.join(dist_info, name), "wb") as f:
            f.write(data)
    return _dist_info_name()


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    try:
        return _write_wheel(wheel_directory, _payload(_build_folder(config_settings)), _tag())
    except BuildError as e:
        _fail(e)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel holding only a .pth file that adds <build>/python to sys.path:
    the build folder's package, which finds the build's plugins."""
    try:
        build_dir = _build_folder(config_settings)
        _payload(build_dir)  # checks the build holds the package for this Python
        pth = (os.path.abspath(os.path.join(build_dir, "python")) + "\n").encode()
        return _write_wheel(wheel_directory, [("__editable__.subgraph.pth", pth, False)], _tag())
    except BuildError as e:
        _fail(e)


def build_sdist(sdist_directory, config_settings=None):
    """The files git tracks, as <name>-<version>.tar.gz."""
    base = "%s-%s" % (_project()["name"], _version())
    try:
        listed = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], capture_output=True,
                                check=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        _fail("an sdist is made from a git checkout (git ls-files)")
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as sdist:
        for path in filter(None, listed):
            if os.path.isfile(os.path.join(ROOT, path)):
                sdist.add(os.path.join(ROOT, path), arcname=base + "/" + path, recursive=False)
        pkg_info = _metadata_text().encode()
        info = tarfile.TarInfo(base + "/PKG-INFO")
        info.size = len(pkg_info)
        sdist.addfile(info, io.BytesIO(pkg_info))
    return name
