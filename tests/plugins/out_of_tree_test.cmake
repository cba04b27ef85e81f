# ctest script: the SDK installs relocatably, and the example plugin builds
# OUT OF TREE against it, both ways the docs show (CMake and pkg-config),
# and loads in the INSTALLED `subgraph` program.
#   1. `cmake --install --component sdk` into one prefix: the SDK only
#      (headers, CMake package, .pc), not the test kit or the program;
#   2. `cmake --install` (everything) into another prefix: the .pc files
#      say prefix=<that prefix>, with -fno-gnu-unique in the Cflags;
#   3. the installed program searches only its own plugin directory
#      (<prefix>/lib/subgraph/plugins), never the build tree's: each plugin
#      is listed once;
#   4. examples/example_convbn built as writing-a-plugin.md says (no build
#      type: subgraph_add_plugin() must still optimise it) with
#      CMAKE_PREFIX_PATH=<prefix>; it exports only its entry point;
#   5. the same source built with `g++ $(pkg-config --cflags subgraph) ...
#      $(pkg-config --libs subgraph)`;
#   6. each of the two plugins, on SUBGRAPH_PLUGIN_PATH, partitions
#      resnet_block.sg in the installed program: 4 Conv+BN regions;
#   7. the example's own GoogleTest tests, built in step 4 against the
#      installed subgraph::testing, run and pass;
#   8. the prefix moved elsewhere: the program follows it.
# Inputs: BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR CXX, and SANITIZE (the
# build is instrumented: the test program then links the sanitizer runtime
# first, as the installed libsubgraph_testing.so needs it).

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}\n${err}")
  endif()
  set(run_out "${out}" PARENT_SCOPE)
  set(run_err "${err}" PARENT_SCOPE)
endfunction()

function(expect_files prefix)
  foreach(f ${ARGN})
    if(NOT EXISTS ${prefix}/${f})
      message(FATAL_ERROR "the install in ${prefix} is missing ${f}")
    endif()
  endforeach()
endfunction()

function(expect_no_files prefix)
  foreach(f ${ARGN})
    if(EXISTS ${prefix}/${f})
      message(FATAL_ERROR "the install in ${prefix} must not have ${f}")
    endif()
  endforeach()
endfunction()

# A .pc file's prefix must be the install's own, and its flags those of
# subgraph_add_plugin().
# The .pc files find their prefix from their own folder (relocatable).
function(expect_pc_prefix pc prefix)
  file(STRINGS ${pc} line REGEX "^prefix=")
  if(NOT line STREQUAL "prefix=\${pcfiledir}/../..")
    message(FATAL_ERROR "${pc}: expected prefix=\${pcfiledir}/../.., found '${line}'")
  endif()
endfunction()

# The number of times `needle` occurs in `text`.
function(count_matches text needle out)
  string(REPLACE "${needle}" "\n@@MATCH@@\n" marked "${text}")
  string(REGEX MATCHALL "@@MATCH@@" hits "${marked}")
  list(LENGTH hits n)
  set(${out} ${n} PARENT_SCOPE)
endfunction()

# Partitions resnet_block.sg with the plugin `dir`/example_convbn.so in the
# installed program: 4 Conv+BN regions.
function(expect_four_regions subgraph dir what)
  run(${CMAKE_COMMAND} -E env SUBGRAPH_PLUGIN_PATH=${dir} SUBGRAPH_BACKEND=example_convbn
      ${subgraph} partition ${SOURCE_DIR}/tests/data/graphs/resnet_block.sg
      --report ${WORK_DIR}/report.json -q)
  file(READ ${WORK_DIR}/report.json report)
  string(JSON regions LENGTH "${report}" regions)
  if(NOT regions EQUAL 4)
    message(FATAL_ERROR "${what}: expected 4 Conv+BN regions, got ${regions}")
  endif()
  file(REMOVE ${WORK_DIR}/report.json)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# 1. The SDK component alone.
set(sdk_prefix ${WORK_DIR}/sdk)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${sdk_prefix} --component sdk)
expect_files(${sdk_prefix} include/subgraph/plugin_abi.h include/subgraph/sdk/plugin.h
  lib/cmake/subgraph/subgraphConfig.cmake lib/cmake/subgraph/SubgraphPlugin.cmake
  lib/pkgconfig/subgraph.pc)
expect_no_files(${sdk_prefix} lib/libsubgraph_testing.so include/subgraph/testing
  lib/cmake/subgraph/subgraphTestingTargets.cmake lib/pkgconfig/subgraph-testing.pc bin/subgraph)
expect_pc_prefix(${sdk_prefix}/lib/pkgconfig/subgraph.pc ${sdk_prefix})

# 2. Everything.
set(prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
expect_files(${prefix} bin/subgraph include/subgraph/sdk/plugin.h
  include/subgraph/testing/plugin_test.h lib/libsubgraph_testing.so
  lib/cmake/subgraph/subgraphConfig.cmake lib/cmake/subgraph/subgraphTestingTargets.cmake
  lib/pkgconfig/subgraph.pc lib/pkgconfig/subgraph-testing.pc
  lib/subgraph/plugins/example_convbn.so)
expect_pc_prefix(${prefix}/lib/pkgconfig/subgraph.pc ${prefix})
expect_pc_prefix(${prefix}/lib/pkgconfig/subgraph-testing.pc ${prefix})
set(subgraph ${prefix}/bin/subgraph)

# 3. The installed program's search path is its own plugin directory.
run(${subgraph} plugins)
set(own_dir ${prefix}/lib/subgraph/plugins)
if(NOT run_out MATCHES "search path: ${own_dir}\n")
  message(FATAL_ERROR "the installed program must search only ${own_dir}:\n${run_out}")
endif()
string(FIND "${run_out}" "${BUILD_DIR}/lib" build_dir_at)
if(NOT build_dir_at EQUAL -1)
  message(FATAL_ERROR "the installed program searches the build tree:\n${run_out}")
endif()
count_matches("${run_out}" "example_convbn 1.0.0" listed)
if(NOT listed EQUAL 1)
  message(FATAL_ERROR "the installed program lists example_convbn ${listed} times:\n${run_out}")
endif()

# 4. CMake, as docs/writing-a-plugin.md says: no build type.
set(extra)
if(SANITIZE)
  list(APPEND extra -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined)
endif()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/example_convbn -B ${WORK_DIR}/build
    -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON ${extra})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
set(plugin ${WORK_DIR}/build/example_convbn.so)
if(NOT EXISTS ${plugin})
  message(FATAL_ERROR "the out-of-tree build made no ${plugin}")
endif()
file(READ ${WORK_DIR}/build/compile_commands.json commands)
string(REGEX MATCH "\"command\": \"[^\"]*example_convbn\\.cpp\\.o[^\"]*\"" plugin_command
       "${commands}")
if(NOT plugin_command MATCHES " -O2 ")
  message(FATAL_ERROR "subgraph_add_plugin() built the plugin without -O2 (no build type):\n"
                      "${plugin_command}")
endif()

find_program(NM nm)
function(expect_only_entry_point so)
  if(NM)
    run(${NM} -D --defined-only ${so})
    string(REGEX MATCHALL "[^\n]+" symbols "${run_out}")
    list(LENGTH symbols count)
    if(NOT count EQUAL 1 OR NOT run_out MATCHES "subgraph_plugin_entry")
      message(FATAL_ERROR "${so} must export only subgraph_plugin_entry, exports:\n${run_out}")
    endif()
  endif()
endfunction()
expect_only_entry_point(${plugin})

# 5. pkg-config, the command of writing-a-plugin.md.
find_program(PKG_CONFIG NAMES pkg-config pkgconf REQUIRED)
set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
run(${PKG_CONFIG} --cflags subgraph)
string(STRIP "${run_out}" cflags)
if(NOT cflags MATCHES "-I${prefix}/lib/pkgconfig/../../include" OR NOT cflags MATCHES "-fno-gnu-unique")
  message(FATAL_ERROR "pkg-config --cflags subgraph: ${cflags}")
endif()
separate_arguments(cflags UNIX_COMMAND "${cflags}")
run(${PKG_CONFIG} --libs subgraph)
string(STRIP "${run_out}" libs)
separate_arguments(libs UNIX_COMMAND "${libs}")
file(MAKE_DIRECTORY ${WORK_DIR}/pc)
set(pc_plugin ${WORK_DIR}/pc/example_convbn.so)
run(${CXX} ${cflags} -O2 ${SOURCE_DIR}/examples/example_convbn/example_convbn.cpp -o ${pc_plugin}
    ${libs})
expect_only_entry_point(${pc_plugin})

# 6. Both load in the installed program, from their own directories.
expect_four_regions(${subgraph} ${WORK_DIR}/build "the CMake-built plugin")
expect_four_regions(${subgraph} ${WORK_DIR}/pc "the pkg-config-built plugin")
run(${subgraph} plugins --path ${WORK_DIR}/pc)
if(NOT run_out MATCHES "example_convbn 1.0.0" OR NOT run_out MATCHES "${WORK_DIR}/pc/example_convbn.so")
  message(FATAL_ERROR "`subgraph plugins` does not list the out-of-tree plugin:\n${run_out}")
endif()

# 7. The example's tests against the installed subgraph::testing.
set(test ${WORK_DIR}/build/example_convbn_test)
if(NOT EXISTS ${test})
  message(FATAL_ERROR "the out-of-tree build made no ${test} (subgraph::testing not found?)")
endif()
run(${test})
if(NOT run_out MATCHES "PASSED")
  message(FATAL_ERROR "the example's tests did not pass:\n${run_out}")
endif()

# 8. Moved, the program finds the plugins beside it, not where it was.
set(moved ${WORK_DIR}/moved)
file(RENAME ${prefix} ${moved})
run(${moved}/bin/subgraph plugins)
if(NOT run_out MATCHES "search path: ${moved}/lib/subgraph/plugins\n"
   OR NOT run_out MATCHES "example_convbn 1.0.0")
  message(FATAL_ERROR "the moved install does not search its own plugin directory:\n${run_out}")
endif()
# ... and its pkg-config files point into the moved folder.
set(ENV{PKG_CONFIG_PATH} ${moved}/lib/pkgconfig)
run(${PKG_CONFIG} --cflags --libs subgraph-testing)
if(NOT run_out MATCHES "-I${moved}/lib/pkgconfig/../../include"
   OR NOT run_out MATCHES "-Wl,-rpath,${moved}/lib")
  message(FATAL_ERROR "the moved install's pkg-config flags do not follow it:\n${run_out}")
endif()

message(STATUS "out-of-tree example_convbn: SDK-only and full installs, built with CMake "
               "(-O2) and pkg-config, each exports one symbol and forms 4 regions in the "
               "installed program, its subgraph::testing tests pass, the install moves")
