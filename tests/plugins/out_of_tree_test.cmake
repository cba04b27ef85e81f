# ctest script: the example plugin builds OUT OF TREE against the installed
# SDK and loads through SUBGRAPH_BACKEND.
#   1. cmake --install the `sdk` component into a temporary prefix;
#   2. configure and build examples/example_convbn with
#      CMAKE_PREFIX_PATH=<prefix> (find_package(subgraph),
#      subgraph_add_plugin());
#   3. check the plugin exports only its entry point (when nm is there);
#   4. SUBGRAPH_PLUGIN_PATH=<its build dir> SUBGRAPH_BACKEND=example_convbn
#      subgraph partition resnet_block.sg: 4 Conv+BN regions, and
#      `subgraph plugins` lists it from that directory;
#   5. the example's own GoogleTest tests, built in step 2 against the
#      installed subgraph::testing, run and pass.
# Inputs: BUILD_DIR SOURCE_DIR WORK_DIR SUBGRAPH GENERATOR CXX, and SANITIZE
# (the build is instrumented: the test program then links the sanitizer
# runtime first, as the installed libsubgraph_testing.so needs it).

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}\n${err}")
  endif()
  set(run_out "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} --component sdk)
foreach(f include/subgraph/plugin_abi.h include/subgraph/sdk/plugin.h
          include/subgraph/testing/plugin_test.h lib/cmake/subgraph/subgraphConfig.cmake
          lib/cmake/subgraph/subgraphTestingTargets.cmake lib/pkgconfig/subgraph.pc
          lib/pkgconfig/subgraph-testing.pc)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "the install is missing ${f}")
  endif()
endforeach()

set(extra)
if(SANITIZE)
  list(APPEND extra -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined)
endif()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/example_convbn -B ${WORK_DIR}/build
    -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX}
    -DCMAKE_PREFIX_PATH=${prefix} ${extra})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
set(plugin ${WORK_DIR}/build/example_convbn.so)
if(NOT EXISTS ${plugin})
  message(FATAL_ERROR "the out-of-tree build made no ${plugin}")
endif()

find_program(NM nm)
if(NM)
  run(${NM} -D --defined-only ${plugin})
  string(REGEX MATCHALL "[^\n]+" symbols "${run_out}")
  list(LENGTH symbols count)
  if(NOT count EQUAL 1 OR NOT run_out MATCHES "subgraph_plugin_entry")
    message(FATAL_ERROR "the plugin must export only subgraph_plugin_entry, exports:\n${run_out}")
  endif()
endif()

run(${CMAKE_COMMAND} -E env SUBGRAPH_PLUGIN_PATH=${WORK_DIR}/build SUBGRAPH_BACKEND=example_convbn
    ${SUBGRAPH} partition ${SOURCE_DIR}/tests/data/graphs/resnet_block.sg
    --report ${WORK_DIR}/report.json -q)
file(READ ${WORK_DIR}/report.json report)
string(JSON regions LENGTH "${report}" regions)
if(NOT regions EQUAL 4)
  message(FATAL_ERROR "expected 4 Conv+BN regions, got ${regions}")
endif()

run(${SUBGRAPH} plugins --path ${WORK_DIR}/build)
if(NOT run_out MATCHES "example_convbn 1.0.0" OR NOT run_out MATCHES "${WORK_DIR}/build")
  message(FATAL_ERROR "`subgraph plugins` does not list the out-of-tree plugin:\n${run_out}")
endif()
set(test ${WORK_DIR}/build/example_convbn_test)
if(NOT EXISTS ${test})
  message(FATAL_ERROR "the out-of-tree build made no ${test} (subgraph::testing not found?)")
endif()
run(${test})
if(NOT run_out MATCHES "PASSED")
  message(FATAL_ERROR "the example's tests did not pass:\n${run_out}")
endif()
message(STATUS "out-of-tree example_convbn: built, exports one symbol, 4 regions, its "
               "subgraph::testing tests pass")
