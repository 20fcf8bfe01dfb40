# Installing ampkit and consuming it (docs/INSTALL.md): `cmake --install <build>` puts
#   <prefix>/lib/libampkit.a (or libampkit.so.<version> with -DBUILD_SHARED_LIBS=ON, SONAME
#     libampkit.so.<major>.<minor>: before 1.0 a minor version may break the ABI),
#   <prefix>/include/ampkit/ (the public headers and the generated version.hpp),
#   <prefix>/bin/ampkit (the tool),
#   <prefix>/lib/cmake/ampkit/ (find_package(ampkit CONFIG) -> the target ampkit::ampkit),
#   <prefix>/lib/pkgconfig/ampkit.pc (pkg-config --cflags --libs ampkit),
#   <prefix>/share/doc/ampkit/LICENSE,
# and, in a Python build (cmake/python.cmake), the Python package.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(ampkit PROPERTIES VERSION ${PROJECT_VERSION}
                                        SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
                                        EXPORT_NAME ampkit)
add_library(ampkit::ampkit ALIAS ampkit)

install(TARGETS ampkit EXPORT ampkitTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ampkit DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${AMPKIT_VERSION_HEADER} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ampkit)
install(TARGETS ampkit_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})

# What a consumer's link needs besides libampkit: the config file finds the same packages
# (find_dependency) that the library target names; a static library carries its private ones
# ($<LINK_ONLY:...>) too. MPI's libraries are linked as the paths FindMPI gave (cmake/dist.cmake).
set(AMPKIT_CONFIG_DEPENDENCIES "find_dependency(OpenMP)\nfind_dependency(nlohmann_json 3.10)\n")
get_target_property(ampkit_type ampkit TYPE)
if(ampkit_type STREQUAL "STATIC_LIBRARY")
  string(APPEND AMPKIT_CONFIG_DEPENDENCIES "find_dependency(ZLIB)\n")
  if(AMPKIT_HAVE_CUDA)
    string(APPEND AMPKIT_CONFIG_DEPENDENCIES "find_dependency(CUDAToolkit)\n")
  endif()
endif()
install(EXPORT ampkitTargets NAMESPACE ampkit:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ampkit)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ampkitConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/ampkitConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ampkit)
# Before 1.0 a minor version may break: only the same major.minor is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ampkitConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ampkitConfig.cmake ${PROJECT_BINARY_DIR}/ampkitConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ampkit)

# pkg-config: relocatable (prefix from the .pc file's own place). A static libampkit lists what
# it links in Libs (pkg-config users rarely pass --static); a shared one in Libs.private.
set(AMPKIT_PC_LINK "-lz")
if(AMPKIT_HAVE_MPI)
  foreach(lib ${MPI_CXX_LIBRARIES})
    string(APPEND AMPKIT_PC_LINK " ${lib}")
  endforeach()
endif()
if(AMPKIT_HAVE_CUDA)
  string(APPEND AMPKIT_PC_LINK " -L${CUDAToolkit_LIBRARY_DIR} -lcublasLt -lcudart")
endif()
if(AMPKIT_HAVE_NCCL)
  string(APPEND AMPKIT_PC_LINK " ${NCCL_LIBRARY}")
endif()
if(ampkit_type STREQUAL "STATIC_LIBRARY")
  set(AMPKIT_PC_LIBS "${AMPKIT_PC_LINK}")
  set(AMPKIT_PC_LIBS_PRIVATE "")
else()
  set(AMPKIT_PC_LIBS "")
  set(AMPKIT_PC_LIBS_PRIVATE "${AMPKIT_PC_LINK}")
endif()
file(RELATIVE_PATH AMPKIT_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" AMPKIT_PC_TO_PREFIX "${AMPKIT_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/ampkit.pc.in ${PROJECT_BINARY_DIR}/ampkit.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/ampkit.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The CTest test that a consumer finds and links the installed tree (tests/consumer/run.cmake).
if(AMPKIT_BUILD_TESTS)
  set(ampkit_consumer_flags "")
  if(AMPKIT_SANITIZE)
    set(ampkit_consumer_flags "-fsanitize=${AMPKIT_SANITIZE}")
  endif()
  add_test(NAME install_and_consume
           COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
                   -DWORK_DIR=${PROJECT_BINARY_DIR}/consumer_test -DCXX=${CMAKE_CXX_COMPILER}
                   -DLAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER} -DVERSION=${PROJECT_VERSION}
                   "-DEXTRA_FLAGS=${ampkit_consumer_flags}" -P ${PROJECT_SOURCE_DIR}/tests/consumer/run.cmake)
  set_tests_properties(install_and_consume PROPERTIES TIMEOUT 300)
endif()
