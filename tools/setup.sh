#!/usr/bin/env bash
# tools/setup.sh - one command from a fresh Debian bookworm to a working
# subgraph: installs the missing Debian packages (tools/debian-packages.txt),
# builds with the CMake presets, then
#   demo  builds the release preset and runs the demo (inspect and draw a
#         ResNet block; generate, partition and run ResNet-50 once the zoo,
#         partition and run commands exist);
#   test  builds the `ci` and `asan` presets and runs every test in both,
#         ending with a summary.
# Safe to rerun: installed packages are skipped and builds are incremental.
# SUBGRAPH_JOBS overrides the build parallelism (default: nproc);
# SUBGRAPH_DEMO_BACKENDS the backends the demo partitions for.
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: tools/setup.sh demo|test

  demo   install dependencies, build (release preset) and run the demo
  test   install dependencies, build and run all tests (ci and asan presets)
USAGE
}

if [[ $# -ne 1 || ( $1 != demo && $1 != test ) ]]; then
  usage >&2
  exit 2
fi
mode=$1

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
jobs=${SUBGRAPH_JOBS:-$(nproc)}
start_time=$(date +%s)
current_step="starting"

step() {
  current_step=$1
  printf '\n==> [%s] %s\n' "$(date +%H:%M:%S)" "$1"
}
die() {
  printf 'setup.sh: error: %s\n' "$1" >&2
  exit 1
}
elapsed() {
  local s=$(($(date +%s) - $1))
  printf '%dm%02ds' $((s / 60)) $((s % 60))
}
trap 'rc=$?; if [[ $rc -ne 0 ]]; then printf "\nsetup.sh: FAILED during: %s (exit %d)\n" "$current_step" "$rc" >&2; fi' EXIT

#--- 1. Debian packages --------------------------------------------------------

install_packages() {
  step "Checking Debian packages (tools/debian-packages.txt)"
  command -v dpkg-query >/dev/null || die "dpkg-query not found; this script needs Debian bookworm"
  local packages=() missing=() provided pkg
  mapfile -t packages < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' tools/debian-packages.txt | grep -v '^$')
  # Names that installed packages provide count as installed: NodeSource's
  # nodejs provides (and conflicts with) npm, and asking apt for npm there
  # would fail.
  provided=$(dpkg-query -W -f='${db:Status-Abbrev}|${Provides}\n' 2>/dev/null |
    awk -F'|' '$1 ~ /^ii/ && $2 != "" {
      n = split($2, names, /, */)
      for (i = 1; i <= n; i++) { sub(/[ :].*/, "", names[i]); print names[i] }
    }')
  for pkg in "${packages[@]}"; do
    if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
      continue
    fi
    grep -qxF "$pkg" <<<"$provided" || missing+=("$pkg")
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    echo "All ${#packages[@]} packages are installed."
    return
  fi
  echo "Missing ${#missing[@]} of ${#packages[@]} packages: ${missing[*]}"

  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null ||
      die "installing packages needs root: run this script as root, or install sudo"
    sudo=(sudo)
  fi
  step "Installing ${#missing[@]} Debian packages (apt-get)"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
}

#--- 1b. ONNX Runtime (npm) -----------------------------------------------------

# ONNX Runtime is the reference the tests and benchmarks compare whole models
# against. Its Node package ships the CPU library; --ignore-scripts skips
# the install script, which would only try to download GPU files. The
# versions are pinned by bench/package-lock.json. SUBGRAPH_SKIP_ORT=1 skips
# this (the ONNX Runtime comparison tests then skip, saying so).
install_onnxruntime() {
  if [[ ${SUBGRAPH_SKIP_ORT:-0} == 1 ]]; then
    echo "SUBGRAPH_SKIP_ORT=1: not installing onnxruntime-node; the ONNX Runtime comparisons will skip."
    return
  fi
  if [[ -f bench/node_modules/onnxruntime-node/package.json ]]; then
    echo "onnxruntime-node is installed in bench/node_modules."
    return
  fi
  command -v npm >/dev/null || die "npm not found (it is in tools/debian-packages.txt)"
  step "Installing onnxruntime-node 1.30.0 into bench/node_modules (npm ci --ignore-scripts)"
  (cd bench && npm ci --ignore-scripts --no-audit --no-fund) ||
    die "npm could not install onnxruntime-node (set SUBGRAPH_SKIP_ORT=1 to go on without ONNX Runtime)"
}

#--- 2. Build ------------------------------------------------------------------

# build PRESET [extra cmake -D options...]: configure and build one preset.
build() {
  local preset=$1
  shift
  step "Configuring the '$preset' preset (build/$preset)"
  cmake --preset "$preset" "$@"
  step "Building the '$preset' preset with $jobs jobs"
  local t0
  t0=$(date +%s)
  cmake --build --preset "$preset" -j "$jobs"
  echo "Built '$preset' in $(elapsed "$t0")."
}

#--- 2b. The Python package ------------------------------------------------------

# python_usage PRESET: says how to import the package this build made. It
# writes nothing outside the checkout: the build folder's package is used
# through PYTHONPATH, or installed into a virtual environment with pip
# (docs/python.md). An earlier version of this script wrote a subgraph.pth
# into the system site-packages; one still there is pointed out, not
# removed.
python_usage() {
  local preset=$1 pkg="$repo/build/$1/python"
  if [[ ! -f $pkg/subgraph/__init__.py ]]; then
    echo "The Python package was not built (pybind11-dev or python3-dev missing?)."
    return
  fi
  echo "The Python package is in $pkg; this script does not install it. Use it with"
  echo "  PYTHONPATH=$pkg python3 -c 'import subgraph'"
  echo "or install it into a virtual environment (numpy from Debian's python3-numpy):"
  echo "  python3 -m venv --system-site-packages .venv"
  echo "  SUBGRAPH_WHEEL_FROM_BUILD=build/$preset .venv/bin/pip install ."
  local site
  site=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])' 2>/dev/null) || return 0
  if [[ -f $site/subgraph.pth ]]; then
    echo "Note: $site/subgraph.pth, written by an earlier setup.sh, points every python3 at"
    echo "  $(cat "$site/subgraph.pth"); remove it (sudo rm $site/subgraph.pth) unless you want that."
  fi
}

#--- 3a. Demo ------------------------------------------------------------------

# True when the built program has COMMAND (later milestones add commands).
have_command() { "$bin" "$1" --help >/dev/null 2>&1; }

# demo_run DESCRIPTION COMMAND...: prints what is about to run, then runs it.
demo_run() {
  step "$1"
  shift
  printf '$ %s\n' "$*"
  "$@"
}

run_demo() {
  bin=build/release/bin/subgraph
  local out=build/demo block=tests/data/graphs/resnet_block.sg
  [[ -x $bin ]] || die "$bin was not built"
  [[ -f $block ]] || die "$block is missing from the checkout"
  mkdir -p "$out"

  demo_run "Demo: summarize a ResNet basic block (ops, inputs, outputs, verifier)" \
    "$bin" inspect "$block"
  demo_run "Demo: draw it as a Graphviz graph" \
    "$bin" dot "$block" -o "$out/resnet_block.dot"
  if command -v dot >/dev/null; then
    demo_run "Demo: render the drawing with Graphviz" \
      dot -Tsvg "$out/resnet_block.dot" -o "$out/resnet_block.svg"
  fi

  if have_command zoo; then
    local model=$out/resnet50.onnx
    local backends=${SUBGRAPH_DEMO_BACKENDS:-convbnrelu,convaddrelu}
    demo_run "Demo: generate ResNet-50" "$bin" zoo resnet50 -o "$model"
    demo_run "Demo: summarize ResNet-50" "$bin" inspect "$model"
    if have_command partition; then
      demo_run "Demo: partition ResNet-50 for the backends $backends" \
        "$bin" partition "$model" --backend "$backends" \
        --report "$out/resnet50.report.json" --dot "$out/resnet50.partitioned.dot" \
        -o "$out/resnet50.partitioned.sg"
    fi
    if have_command run; then
      demo_run "Demo: run ResNet-50 partitioned for $backends on random inputs, checked against the unpartitioned reference" \
        "$bin" run "$model" --backend "$backends" --random-inputs 0 --check \
        --output-dir "$out/resnet50.outputs"
      # The oneDNN backend is a plugin, built where oneDNN was found; the
      # program finds it by name in its plugin directory.
      if [[ -f build/release/lib/subgraph/plugins/onednn.so ]]; then
        demo_run "Demo: the same on the oneDNN plugin (SUBGRAPH_BACKEND=onednn), checked, with its latency over 10 runs" \
          env SUBGRAPH_BACKEND=onednn "$bin" run "$model" --random-inputs 0 --check --warmup 2 --runs 10
      fi
    fi
  else
    echo
    echo "(The ResNet-50 steps - zoo, partition, run - start once those commands exist.)"
  fi

  if [[ -n ${model:-} && -f build/release/python/subgraph/__init__.py ]]; then
    python_usage release
    demo_run "Demo: the same model from Python (import subgraph; Session; run), with PYTHONPATH=build/release/python" \
      env PYTHONPATH="$repo/build/release/python" /usr/bin/python3 -c "import subgraph, numpy as np
s = subgraph.Session('$model', backends=['convbnrelu', 'convaddrelu'])
out = s.run({'input': np.zeros((1, 3, 224, 224), np.float32)})
print('regions:', len(s.report['regions']), ' output:', {k: v.shape for k, v in out.items()})"
  fi

  step "Demo finished in $(elapsed "$start_time")"
  echo "Program: $repo/$bin   (try: $bin --help)"
  echo "Outputs: $repo/$out/"
}

#--- 3b. Tests -----------------------------------------------------------------

# run_tests PRESET: runs ctest for PRESET; records pass/fail and the count.
declare -A test_status test_line test_time
run_tests() {
  local preset=$1
  local log="build/$preset/ctest-output.log" t0 rc=0
  step "Running the '$preset' tests (ctest --preset $preset)"
  t0=$(date +%s)
  ctest --preset "$preset" --parallel "$jobs" 2>&1 | tee "$log" || rc=$?
  test_time[$preset]=$(elapsed "$t0")
  test_line[$preset]=$(grep -E 'tests passed|No tests were found' "$log" | tail -1 || true)
  if [[ $rc -eq 0 ]]; then test_status[$preset]=PASSED; else test_status[$preset]=FAILED; fi
}

run_test_mode() {
  install_onnxruntime
  build ci
  python_usage ci
  build asan
  run_tests ci
  run_tests asan

  step "Summary"
  local preset failed=0
  for preset in ci asan; do
    printf '  %-5s %-7s %s (%s)\n' "$preset" "${test_status[$preset]}" \
      "${test_line[$preset]:-no ctest summary line}" "${test_time[$preset]}"
    [[ ${test_status[$preset]} == PASSED ]] || failed=1
  done
  printf '  total time %s\n' "$(elapsed "$start_time")"
  # CI keeps only the tail of the output, so repeat what failed here, last:
  # the failing tests' names, then each one's own output, rerun once.
  for preset in ci asan; do
    [[ ${test_status[$preset]} == PASSED ]] && continue
    printf '\n==> What failed in %s\n' "$preset"
    sed -n '/The following tests FAILED/,$p' "build/$preset/ctest-output.log" | head -40
    ctest --preset "$preset" --rerun-failed --output-on-failure 2>&1 | tail -80 || true
  done
  if [[ $failed -ne 0 ]]; then
    current_step="tests (see the failures above; logs in build/<preset>/ctest-output.log)"
    exit 1
  fi
  echo "All tests passed."
}

#--- Main ----------------------------------------------------------------------

install_packages
case $mode in
  demo)
    # The demo needs the program, not the test suites; building them too
    # would double the time a newcomer waits.
    build release -DSUBGRAPH_BUILD_TESTS=OFF
    run_demo
    ;;
  test)
    run_test_mode
    ;;
esac
