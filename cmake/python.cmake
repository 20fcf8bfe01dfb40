# The Python package (python/, docs/PYTHON.md): AMPKIT_PYTHON = AUTO (default: on when pybind11
# and Python3's Development.Module are found), ON (an error without them), OFF (the build stays
# as without this file). Builds the pybind11 module `_ampkit` into <build>/python/ampkit/ beside
# a copy of the pure-Python package python/ampkit/, so `PYTHONPATH=<build>/python python3 -c
# "import ampkit"` works from the build tree; `cmake --install` puts the package into
# AMPKIT_PYTHON_INSTALL_DIR (Python3's platlib by default). Sets AMPKIT_HAVE_PYTHON.
set(AMPKIT_PYTHON AUTO CACHE STRING "Build the Python module: AUTO (when pybind11 and Python3 are found), ON or OFF")
set_property(CACHE AMPKIT_PYTHON PROPERTY STRINGS AUTO ON OFF)
set(AMPKIT_HAVE_PYTHON OFF)
# A sanitized module cannot be loaded by an interpreter that is not (the sanitizer's runtime must
# come first), so AUTO leaves it out of sanitized builds; the plain build's tests cover it.
if(AMPKIT_SANITIZE AND AMPKIT_PYTHON STREQUAL "AUTO")
  message(STATUS "Python module: off (AUTO in a sanitized build: AMPKIT_SANITIZE=${AMPKIT_SANITIZE})")
  return()
endif()
if(AMPKIT_PYTHON)  # AUTO and ON are true, OFF is false
  # Debian's python3-torch, python3-numpy and pybind11-dev belong to /usr/bin/python3: prefer it
  # to a PATH shim (pyenv) unless the caller names an interpreter or works in a venv / conda env.
  if(NOT DEFINED Python3_EXECUTABLE AND NOT DEFINED ENV{VIRTUAL_ENV} AND NOT DEFINED ENV{CONDA_PREFIX}
     AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3)
  endif()
  if(AMPKIT_PYTHON STREQUAL "AUTO")
    find_package(Python3 COMPONENTS Interpreter Development.Module QUIET)
  else()
    find_package(Python3 COMPONENTS Interpreter Development.Module REQUIRED)
  endif()
  if(Python3_FOUND)
    set(PYBIND11_FINDPYTHON ON)
    if(AMPKIT_PYTHON STREQUAL "AUTO")
      find_package(pybind11 CONFIG QUIET)
    else()
      find_package(pybind11 CONFIG REQUIRED)
    endif()
    if(pybind11_FOUND)
      set(AMPKIT_HAVE_PYTHON ON)
    endif()
  endif()
endif()
if(NOT AMPKIT_HAVE_PYTHON)
  if(AMPKIT_PYTHON)
    message(STATUS "Python module: off (AMPKIT_PYTHON=${AMPKIT_PYTHON}: pybind11-dev or python3-dev not found)")
  else()
    message(STATUS "Python module: off (AMPKIT_PYTHON=OFF)")
  endif()
  return()
endif()
message(STATUS "Python module: on (${Python3_EXECUTABLE}, Python ${Python3_VERSION}, pybind11 ${pybind11_VERSION})")

# The module is a shared object and links the static library, so the library's objects are
# position independent in this build. -fno-semantic-interposition keeps the code the compiler
# generates as in a PIE build (nobody interposes ampkit's symbols), so inlining and the bits do
# not change.
set_target_properties(ampkit PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_compile_options(ampkit PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fno-semantic-interposition>)

# NO_EXTRAS: no LTO and no strip (a shorter build; the binding is not where time goes).
set(AMPKIT_PYTHON_BUILD_DIR ${PROJECT_BINARY_DIR}/python/ampkit)
pybind11_add_module(ampkit_python MODULE NO_EXTRAS ${PROJECT_SOURCE_DIR}/python/src/module.cpp
                    ${PROJECT_SOURCE_DIR}/python/src/tensors.cpp)
set_target_properties(ampkit_python PROPERTIES OUTPUT_NAME _ampkit LIBRARY_OUTPUT_DIRECTORY ${AMPKIT_PYTHON_BUILD_DIR})
target_include_directories(ampkit_python PRIVATE ${PROJECT_SOURCE_DIR}/python/src)
target_link_libraries(ampkit_python PRIVATE ampkit)

# The pure-Python files, copied next to the module whenever they change.
file(GLOB AMPKIT_PYTHON_FILES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/python/ampkit/*.py)
set(AMPKIT_PYTHON_COPIES "")
foreach(f ${AMPKIT_PYTHON_FILES})
  get_filename_component(name ${f} NAME)
  add_custom_command(OUTPUT ${AMPKIT_PYTHON_BUILD_DIR}/${name} COMMAND ${CMAKE_COMMAND} -E copy_if_different ${f}
                     ${AMPKIT_PYTHON_BUILD_DIR}/${name} DEPENDS ${f} VERBATIM)
  list(APPEND AMPKIT_PYTHON_COPIES ${AMPKIT_PYTHON_BUILD_DIR}/${name})
endforeach()
add_custom_target(ampkit_python_files ALL DEPENDS ${AMPKIT_PYTHON_COPIES})
add_dependencies(ampkit_python ampkit_python_files)

# Installed into the interpreter's platlib (the module is platform specific), overridable.
if(NOT DEFINED AMPKIT_PYTHON_INSTALL_DIR)
  execute_process(COMMAND ${Python3_EXECUTABLE} -c "import sysconfig; print(sysconfig.get_paths()['platlib'])"
                  OUTPUT_VARIABLE AMPKIT_PYTHON_PLATLIB OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(AMPKIT_PYTHON_INSTALL_DIR ${AMPKIT_PYTHON_PLATLIB} CACHE PATH "Where cmake --install puts the ampkit package")
endif()
install(TARGETS ampkit_python LIBRARY DESTINATION ${AMPKIT_PYTHON_INSTALL_DIR}/ampkit)
install(FILES ${AMPKIT_PYTHON_FILES} DESTINATION ${AMPKIT_PYTHON_INSTALL_DIR}/ampkit)

# tests/python/ (pytest), run by CTest from the build tree; the torch tests skip, saying so,
# where torch is not installed.
if(AMPKIT_BUILD_TESTS)
  add_test(NAME python_tests COMMAND ${Python3_EXECUTABLE} -m pytest -q -rs -p no:cacheprovider
                                     ${PROJECT_SOURCE_DIR}/tests/python)
  set_tests_properties(python_tests PROPERTIES ENVIRONMENT "PYTHONPATH=${PROJECT_BINARY_DIR}/python;PYTHONDONTWRITEBYTECODE=1"
                                               TIMEOUT 300)
  # The example: a torch training loop with ampkit's modules follows the all-torch one (77: skip).
  add_test(NAME python_example_trains COMMAND ${Python3_EXECUTABLE}
                                             ${PROJECT_SOURCE_DIR}/examples/python/train_with_ampkit_modules.py)
  set_tests_properties(python_example_trains PROPERTIES ENVIRONMENT "PYTHONPATH=${PROJECT_BINARY_DIR}/python;PYTHONDONTWRITEBYTECODE=1"
                                                        SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()
