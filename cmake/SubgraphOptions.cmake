# Compiler flags shared by every subgraph target: warnings (errors in the CI
# preset) and the optional ASan+UBSan instrumentation.

add_library(subgraph_build_flags INTERFACE)
target_compile_options(subgraph_build_flags INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wimplicit-fallthrough)
if(SUBGRAPH_WERROR)
  target_compile_options(subgraph_build_flags INTERFACE -Werror)
endif()

if(SUBGRAPH_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# subgraph_target_defaults(TARGET): applies the flags above to a target.
function(subgraph_target_defaults target)
  target_link_libraries(${target} PRIVATE subgraph_build_flags)
endfunction()
