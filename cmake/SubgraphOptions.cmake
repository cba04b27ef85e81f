# Compiler flags shared by every subgraph target: warnings (errors in the CI
# preset) and the optional ASan+UBSan instrumentation.

add_library(subgraph_build_flags INTERFACE)
target_compile_options(subgraph_build_flags INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wimplicit-fallthrough)
if(SUBGRAPH_WERROR)
  target_compile_options(subgraph_build_flags INTERFACE -Werror)
endif()
# GCC 12 at -O3 reports warnings inside libstdc++'s own std::string and
# std::vector code after inlining (GCC bugs 105329, 105651, 106199, 108088):
# -Wrestrict, -Wfree-nonheap-object, -Warray-bounds, -Wstringop-overflow and
# -Wmaybe-uninitialized (on std::optional and std::variant moves).
# They are false positives that -Werror would turn into a failed release
# build; real out-of-bounds bugs are caught by the asan preset instead. The
# warnings stay on for other compilers and GCC versions.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(subgraph_build_flags INTERFACE
    -Wno-restrict -Wno-free-nonheap-object -Wno-array-bounds -Wno-stringop-overflow
    -Wno-maybe-uninitialized)
endif()

# UBSan runs without three of its checks, each of which instruments nearly
# every member access or call and which together made GCC 12 take 1.5x to
# 2.3x longer per source (e.g. the reference kernels' elementwise_binary.cpp
# 122 s -> 66 s, run_command.cpp 58 s -> 25 s, partitioner.cpp 20 s -> 12 s),
# pushing CI past its budget: `null` (ASan already stops on a null
# dereference, with a stack), `alignment` (x86 loads tolerate it, and
# tensor buffers come from aligned allocations) and `vptr` (dynamic type
# checks of polymorphic casts; the IR's casts go through isa<>/cast<> on
# the op kind). Overflow, shift, bounds, enum/bool, division, unreachable
# and return checks all stay.
if(SUBGRAPH_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize=vptr,alignment,null
                      -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined -fno-sanitize=vptr,alignment,null)
endif()

# subgraph_unoptimized_under_sanitizers(): in sanitizer builds, compiles the
# targets the calling directory (and those below it) defines afterwards at
# -O0 instead of the preset's -O1. For test and CLI code: a test run spends
# its time in the libraries they drive, which keep -O1, while -O0 compiles
# these template-heavy sources (GoogleTest, CLI11, nlohmann-json) in well
# under half the time; they were half of the asan preset's build, the
# longest step of CI.
function(subgraph_unoptimized_under_sanitizers)
  if(SUBGRAPH_SANITIZE)
    add_compile_options(-O0)
  endif()
endfunction()

# subgraph_target_defaults(TARGET): applies the flags above to a target.
function(subgraph_target_defaults target)
  target_link_libraries(${target} PRIVATE subgraph_build_flags)
endfunction()

# subgraph_precompile_headers(TARGET HEADER...): precompiles the heavy
# headers that (nearly) every source of TARGET includes. GoogleTest+
# GoogleMock cost ~2.4 s of CPU per test source and CLI11+spdlog+fmt+json
# ~10 s per CLI source with GCC 12; the IR's graph.h preprocesses to about
# 100,000 lines, the reference kernels' headers to 190,000, for sources of
# a few hundred lines each. Over ~300 such sources and two CI presets that
# is several minutes of a 2-core CI run. Project headers are given as
# [["subgraph/ir/graph.h"]], found through the target's include path.
# SUBGRAPH_PCH=OFF turns it off (e.g. to check that every source includes
# what it uses).
function(subgraph_precompile_headers target)
  if(SUBGRAPH_PCH)
    target_precompile_headers(${target} PRIVATE ${ARGN})
  endif()
endfunction()
