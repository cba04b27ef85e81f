#!/usr/bin/env bash
# Builds a ThreadSanitizer configuration of the runtime and its concurrency
# tests and runs them:
#   * runtime_tests ConcurrencyTest.*: many threads on one session, random
#     DAGs with parallel branches, several sessions at once while others are
#     created and destroyed;
#   * reliability_tests: faults injected on four threads, and (when the
#     plugin host is built) plugins loaded and unloaded while sessions run.
#
#   tools/tsan.sh            build (if needed) and run
#
# Environment: SUBGRAPH_TSAN_BUILD (default build/tsan), SUBGRAPH_TSAN_JOBS
# (default 2). Debian's oneTBB is not built with TSan; tools/tsan.supp
# names the few reports inside libtbb's own synchronization, which TSan
# cannot see. docs/reliability.md records the last result.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SUBGRAPH_TSAN_BUILD:-$root/build/tsan}
jobs=${SUBGRAPH_TSAN_JOBS:-2}

if [[ ! -f $build/build.ninja ]]; then
  cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
    -DCMAKE_CXX_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
    -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread \
    -DSUBGRAPH_BUILD_BENCHMARKS=OFF -DSUBGRAPH_MIMALLOC=OFF >/dev/null
fi
targets=(runtime_tests reliability_tests)
# The example plugin, if the plugin host and examples are part of the build.
if ninja -C "$build" -t targets all 2>/dev/null | grep -q '^max_splat:'; then targets+=(max_splat); fi
cmake --build "$build" -j"$jobs" --target "${targets[@]}"

plugin=$(find "$build" -name 'max_splat.so' -print -quit 2>/dev/null || true)
export SUBGRAPH_TEST_PLUGIN=${SUBGRAPH_TEST_PLUGIN:-$plugin}
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$root/tools/tsan.supp ${TSAN_OPTIONS:-}"
export SUBGRAPH_SOURCE_DIR=$root

status=0
run() {
  echo "== $*"
  if "$@"; then echo "PASS: $1"; else status=1; echo "FAIL: $1"; fi
}
run "$build/tests/runtime_tests" --gtest_filter='ConcurrencyTest.*' --gtest_repeat=2
run "$build/tests/reliability_tests" --gtest_filter='FaultInjectionTest.KernelThrowsOrReturnsError:PluginConcurrency*'
echo
[[ $status -eq 0 ]] && echo "tsan: clean" || echo "tsan: FAILED"
exit $status
