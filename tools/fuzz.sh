#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang, ASan, coverage instrumentation) and
# runs each for SECONDS (default 60), then prints one line per harness:
# executions, coverage (libFuzzer's cov/ft counters), corpus size and
# findings (crash-*, leak-*, timeout-*, oom-* files). Exits 1 if any
# harness found something.
#
#   tools/fuzz.sh [SECONDS] [HARNESS...]     e.g. tools/fuzz.sh 60 run
#
# Environment: SUBGRAPH_FUZZ_BUILD (build folder, default build/fuzz),
# SUBGRAPH_FUZZ_JOBS (build parallelism, default 2).
# The corpus grows in <build>/fuzz-corpus/<harness>/ across runs; the seeds
# are regenerated into <build>/fuzz-seeds/ (zoo models, ONNX node tests,
# tests/data/graphs); findings land in <build>/fuzz-findings/<harness>/.
# A finding is fixed and its input copied to tests/fuzz/regressions/<harness>/,
# which the fuzz_replay_tests ctest suite replays in every CI preset.
# docs/reliability.md records the campaigns.
set -euo pipefail

seconds=${1:-60}
[[ $# -gt 0 ]] && shift
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SUBGRAPH_FUZZ_BUILD:-$root/build/fuzz}
jobs=${SUBGRAPH_FUZZ_JOBS:-2}
all=(onnx_import text_format partition run)
harnesses=("$@")
[[ ${#harnesses[@]} -gt 0 ]] || harnesses=("${all[@]}")

if [[ ! -f $build/build.ninja ]]; then
  # -O1 and line tables only: the instrumented build is large, and speed of
  # the build matters more here than of each execution.
  cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address -fno-omit-frame-pointer" \
    -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=address \
    -DSUBGRAPH_FUZZ=ON -DSUBGRAPH_BUILD_BENCHMARKS=OFF -DSUBGRAPH_MIMALLOC=OFF >/dev/null
fi
targets=(fuzz_seed_corpus)
for h in "${harnesses[@]}"; do targets+=("fuzz_$h"); done
cmake --build "$build" -j"$jobs" --target "${targets[@]}"

"$build/tests/fuzz/fuzz_seed_corpus" "$build/fuzz-seeds" "$root" >/dev/null

status=0
summary=()
for h in "${harnesses[@]}"; do
  corpus=$build/fuzz-corpus/$h findings=$build/fuzz-findings/$h log=$build/fuzz-$h.log
  mkdir -p "$corpus" "$findings"
  before=$(find "$findings" -type f | wc -l)
  echo "== fuzz_$h for ${seconds}s"
  # -timeout: a single input running 25 s is a hang. -rss_limit_mb bounds
  # memory; the harnesses' own limits are far below it. The first folder
  # receives new inputs; the seeds and regressions are read only.
  inputs=("$corpus" "$build/fuzz-seeds/$h")
  [[ -d $root/tests/fuzz/regressions/$h ]] && inputs+=("$root/tests/fuzz/regressions/$h")
  set +e
  "$build/tests/fuzz/fuzz_$h" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$findings/" "${inputs[@]}" >"$log" 2>&1
  rc=$?
  set -e
  after=$(find "$findings" -type f | wc -l)
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1 || true)
  units=$(find "$corpus" -type f | wc -l)
  new=$((after - before))
  line=$(printf '%-12s %10s execs  %-22s corpus %6s  findings %s' "$h" "$execs" "${cov:-cov: ?}" \
    "$units" "$new")
  if [[ $rc -ne 0 || $new -gt 0 ]]; then
    status=1
    line+="  (exit $rc; see $log and $findings)"
    grep -m3 -E 'ERROR: |fuzz invariant violated|SUMMARY' "$log" || true
  fi
  summary+=("$line")
done
echo
echo "fuzz summary (${seconds}s per harness):"
printf '  %s\n' "${summary[@]}"
exit $status
