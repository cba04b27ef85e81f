# subgraph_add_plugin(): builds a backend plugin against the subgraph SDK.
#
#   subgraph_add_plugin(my_backend SOURCES my_backend.cpp
#                       [NAME backend_name] [OUTPUT_DIRECTORY dir])
#
# makes a MODULE library `<NAME>.so` (NAME defaults to the target name, and
# should be the backend name the plugin declares, so SUBGRAPH_BACKEND=<NAME>
# finds it on SUBGRAPH_PLUGIN_PATH). The plugin is built the way the ABI
# expects (docs/writing-a-plugin.md):
#  * hidden visibility for everything, inline functions included;
#  * a linker version script exporting only `subgraph_plugin_entry`;
#  * with GCC, -fno-gnu-unique: a unique-binding symbol (a static in an
#    inline function) would make the library impossible to unload;
#  * optimised (-O2) when the project sets no build type: a plugin's
#    selectors and kernels run in every partition and session, and a bare
#    `cmake -S . -B build` would otherwise compile them with no -O at all.
#    A build type (-DCMAKE_BUILD_TYPE=Debug, ...) decides as usual.
# Used both inside subgraph's build and, installed, by out-of-tree plugins
# through find_package(subgraph).

set(_SUBGRAPH_PLUGIN_MAP "${CMAKE_CURRENT_LIST_DIR}/subgraph_plugin.map"
    CACHE INTERNAL "Linker version script of subgraph plugins")

function(subgraph_add_plugin target)
  cmake_parse_arguments(ARG "" "NAME;OUTPUT_DIRECTORY" "SOURCES" ${ARGN})
  if(NOT ARG_NAME)
    set(ARG_NAME ${target})
  endif()
  add_library(${target} MODULE ${ARG_SOURCES} ${ARG_UNPARSED_ARGUMENTS})
  target_link_libraries(${target} PRIVATE subgraph::sdk)
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    OUTPUT_NAME ${ARG_NAME}
    SUFFIX ".so"
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    LINK_DEPENDS ${_SUBGRAPH_PLUGIN_MAP})
  target_link_options(${target} PRIVATE "LINKER:--version-script=${_SUBGRAPH_PLUGIN_MAP}")
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fno-gnu-unique>)
  endif()
  get_property(_multi_config GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
  if(NOT CMAKE_BUILD_TYPE AND NOT _multi_config)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-O2>)
  endif()
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
  elseif(SUBGRAPH_PLUGIN_OUTPUT_DIRECTORY)
    # Inside subgraph's own build: next to the program, where the loader
    # looks (<build>/lib/subgraph/plugins). The Python package ships these
    # (python/CMakeLists.txt builds them with it).
    set_target_properties(${target} PROPERTIES
      LIBRARY_OUTPUT_DIRECTORY ${SUBGRAPH_PLUGIN_OUTPUT_DIRECTORY})
    set_property(GLOBAL APPEND PROPERTY SUBGRAPH_PLUGIN_TARGETS ${target})
  endif()
  if(SUBGRAPH_PLUGIN_INSTALL_SUBDIR)
    install(TARGETS ${target} LIBRARY DESTINATION ${SUBGRAPH_PLUGIN_INSTALL_SUBDIR})
  endif()
endfunction()
