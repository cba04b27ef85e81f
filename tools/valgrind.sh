#!/usr/bin/env bash
# valgrind memcheck over the subgraph program on the zoo models: build a
# model, inspect it, partition it and run it against the reference, each
# under memcheck with --error-exitcode, so any invalid read/write, use of
# uninitialized memory or definite leak fails the script.
#
#   tools/valgrind.sh [BUILD_DIR] [MODEL...]
#
# BUILD_DIR defaults to build/valgrind, configured without mimalloc and
# built if missing (any build holding a bin/subgraph that runs on the system
# malloc will do: `subgraph --version` says which heap it runs on). MODEL defaults to mobilenetv2 and
# a 40-node synthetic graph: a small batch, since memcheck runs ~30x slower.
# ResNet-50 and BERT-base also work, given the time.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# A build of its own: memcheck must replace malloc, so the program may not
# link mimalloc (tools/allocator), whose allocations memcheck cannot track.
build=${1:-$root/build/valgrind}
[[ $# -gt 0 ]] && shift
models=("$@")
[[ ${#models[@]} -gt 0 ]] || models=(mobilenetv2 synthetic)

if [[ ! -x $build/bin/subgraph ]]; then
  [[ -f $build/build.ninja ]] ||
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSUBGRAPH_MIMALLOC=OFF \
      -DSUBGRAPH_BUILD_TESTS=OFF -DSUBGRAPH_BUILD_BENCHMARKS=OFF >/dev/null
  cmake --build "$build" -j2 --target subgraph
fi
cli=$build/bin/subgraph
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# TBB keeps its worker threads' stacks and caches until exit ("still
# reachable"), which is not a leak; only definite and indirect leaks fail.
vg=(valgrind --tool=memcheck --error-exitcode=99 --leak-check=full
    --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect -q)
status=0
check() {
  local name=$1
  shift
  local start=$SECONDS
  if "${vg[@]}" "$@" >"$work/out" 2>"$work/err"; then
    printf '  ok    %-40s %4ds\n' "$name" $((SECONDS - start))
  else
    status=1
    printf '  FAIL  %-40s (exit %d)\n' "$name" $?
    head -40 "$work/err"
  fi
}
echo "valgrind memcheck: $cli"
for m in "${models[@]}"; do
  extra=()
  [[ $m == synthetic ]] && extra=(--nodes 40)
  "$cli" zoo "$m" "${extra[@]}" -o "$work/$m.onnx" -q
  check "zoo $m" "$cli" zoo "$m" "${extra[@]}" -o "$work/$m-vg.onnx" -q
  check "inspect $m" "$cli" inspect "$work/$m.onnx"
  check "partition $m --backend convbnrelu" "$cli" partition "$work/$m.onnx" --backend convbnrelu \
    -o "$work/$m.sg" -q
  [[ $m == synthetic ]] && continue  # synthetic weights are for partitioning, not running
  check "run $m --backend convbnrelu --check" "$cli" run "$work/$m.onnx" --backend convbnrelu \
    --random-inputs 0 --check -q
done
[[ $status -eq 0 ]] && echo "valgrind: clean" || echo "valgrind: FAILED"
exit $status
