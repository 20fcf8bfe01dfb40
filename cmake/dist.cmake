# The optional engines of the communicator (src/dist/, docs/DISTRIBUTED.md).
# AMPKIT_MPI: AUTO (default: on when find_package(MPI) finds Open MPI), ON (an error
# without it), OFF. AMPKIT_NCCL: OFF (default) or ON (needs the CUDA backend and nccl.h /
# libnccl, looked up under NCCL_ROOT too, e.g. PyTorch's nvidia/nccl wheel directory; several
# processes need MPI as well, to bootstrap it).
# MPI is used through its C API from C++ (the MPI C++ bindings are skipped).
# Sets AMPKIT_HAVE_MPI, AMPKIT_HAVE_NCCL and AMPKIT_DIST_SOURCES (the engine files to build).
set(AMPKIT_MPI AUTO CACHE STRING "Build the MPI communicator: AUTO (when MPI is found), ON or OFF")
set_property(CACHE AMPKIT_MPI PROPERTY STRINGS AUTO ON OFF)
option(AMPKIT_NCCL "Build the NCCL communicator (needs CUDA and NCCL; MPI to bootstrap several processes)" OFF)
set(AMPKIT_HAVE_MPI OFF)
set(AMPKIT_HAVE_NCCL OFF)
set(MPI_CXX_SKIP_MPICXX ON)
if(AMPKIT_MPI STREQUAL "AUTO")
  find_package(MPI COMPONENTS CXX QUIET)
  if(MPI_CXX_FOUND)
    set(AMPKIT_HAVE_MPI ON)
  endif()
elseif(AMPKIT_MPI)
  find_package(MPI COMPONENTS CXX REQUIRED)
  set(AMPKIT_HAVE_MPI ON)
endif()
if(AMPKIT_HAVE_MPI)
  message(STATUS "MPI communicator: on (${MPI_CXX_LIBRARIES}; tests launch ${MPIEXEC_EXECUTABLE})")
else()
  message(STATUS "MPI communicator: off (AMPKIT_MPI=${AMPKIT_MPI}; install libopenmpi-dev openmpi-bin)")
endif()
if(AMPKIT_NCCL)
  if(NOT AMPKIT_HAVE_CUDA)
    message(FATAL_ERROR "AMPKIT_NCCL=ON needs the CUDA backend (AMPKIT_CUDA)")
  endif()
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${NCCL_ROOT} ENV NCCL_ROOT PATH_SUFFIXES include)
  find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS ${NCCL_ROOT} ENV NCCL_ROOT PATH_SUFFIXES lib lib64)
  if(NOT NCCL_INCLUDE_DIR OR NOT NCCL_LIBRARY)
    message(FATAL_ERROR "AMPKIT_NCCL=ON: nccl.h or libnccl not found (set NCCL_ROOT)")
  endif()
  set(AMPKIT_HAVE_NCCL ON)
  message(STATUS "NCCL communicator: on (${NCCL_LIBRARY})")
endif()

# The engine files to build into the library: the MPI ones compile in an object library of their
# own, so MPI's flags reach only them (every other object, and its ccache entry, stays the same).
set(AMPKIT_DIST_SOURCES "")
foreach(engine mpi nccl)
  string(TOUPPER ${engine} upper)
  if(NOT AMPKIT_HAVE_${upper})
    file(GLOB files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/dist/no_${engine}/*.cpp)
    list(APPEND AMPKIT_DIST_SOURCES ${files})
  endif()
endforeach()

# Builds the engines and links them into the library target (privately: the public header needs
# neither MPI nor NCCL).
function(ampkit_link_dist_engines target)
  foreach(engine mpi nccl)
    string(TOUPPER ${engine} upper)
    if(AMPKIT_HAVE_${upper})
      file(GLOB files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/dist/${engine}/*.cpp)
      add_library(ampkit_dist_${engine} OBJECT ${files})
      target_include_directories(ampkit_dist_${engine} PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
      target_sources(${target} PRIVATE $<TARGET_OBJECTS:ampkit_dist_${engine}>)
    endif()
  endforeach()
  if(AMPKIT_HAVE_MPI)
    target_link_libraries(ampkit_dist_mpi PRIVATE MPI::MPI_CXX)
    # The libraries only: MPI::MPI_CXX would also give every source of the library MPI's include
    # directories and definitions (CMake 3.25 applies $<LINK_ONLY:> only to INTERFACE links).
    target_link_libraries(${target} PRIVATE ${MPI_CXX_LIBRARIES})
  endif()
  if(AMPKIT_HAVE_NCCL)
    target_include_directories(ampkit_dist_nccl PRIVATE ${NCCL_INCLUDE_DIR})
    target_link_libraries(ampkit_dist_nccl PRIVATE CUDA::cudart)
    target_link_libraries(${target} PRIVATE ${NCCL_LIBRARY})
  endif()
endfunction()
