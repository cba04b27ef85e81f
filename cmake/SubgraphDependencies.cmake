# Finds the system dependencies. Every one of them is a Debian bookworm
# package; the package names are listed once, in tools/debian-packages.txt,
# which the setup script installs from.

find_package(Boost 1.74 REQUIRED COMPONENTS graph filesystem)
find_package(TBB REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Protobuf REQUIRED)
find_package(ONNX REQUIRED)
find_package(dnnl QUIET)
# mimalloc serves malloc in the programs (tools/allocator says why); not in
# sanitizer builds, whose runtimes must see every allocation.
set(SUBGRAPH_HAVE_MIMALLOC OFF)
if(SUBGRAPH_MIMALLOC AND NOT SUBGRAPH_SANITIZE)
  find_package(mimalloc QUIET)
  if(TARGET mimalloc)
    set(SUBGRAPH_HAVE_MIMALLOC ON)
  endif()
endif()
message(STATUS "subgraph: programs link mimalloc: ${SUBGRAPH_HAVE_MIMALLOC}")
if(SUBGRAPH_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(SUBGRAPH_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()

# CUDA 13 and cuDNN 9 are optional: the cuDNN plugin is built only where
# both are found, and the rest of subgraph never needs them.
find_package(CUDAToolkit QUIET)
if(CUDAToolkit_FOUND)
  find_library(SUBGRAPH_CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR})
  find_path(SUBGRAPH_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
endif()
if(CUDAToolkit_FOUND AND SUBGRAPH_CUDNN_LIBRARY AND SUBGRAPH_CUDNN_INCLUDE_DIR)
  set(SUBGRAPH_HAVE_CUDNN ON)
  message(STATUS "subgraph: CUDA ${CUDAToolkit_VERSION} and cuDNN found; the cuDNN plugin will be built")
else()
  set(SUBGRAPH_HAVE_CUDNN OFF)
  message(STATUS "subgraph: CUDA toolkit or cuDNN not found; the cuDNN plugin is skipped")
endif()

# Open MPI (libopenmpi-dev) is optional: with it, pipelines run one stage
# per rank under mpirun (api/mpi_pipeline.cpp); without it, asking for that
# is a clear error.
set(SUBGRAPH_HAVE_MPI OFF)
if(SUBGRAPH_MPI)
  # The C API, called from C++; not the old C++ bindings (libmpi_cxx).
  set(MPI_CXX_SKIP_MPICXX ON)
  find_package(MPI QUIET COMPONENTS CXX)
  if(MPI_CXX_FOUND)
    set(SUBGRAPH_HAVE_MPI ON)
  endif()
endif()
message(STATUS "subgraph: pipelines over MPI: ${SUBGRAPH_HAVE_MPI}")
