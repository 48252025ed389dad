# SPDX-License-Identifier: Apache-2.0
# cmake/version.cmake: include/dpzo/version.h must state project(dpzo VERSION x.y.z).
#
# The version has one source, the project() line of CMakeLists.txt (pyproject.toml reads the
# Python package's version from it too). The header is checked in, so that it is there for
# every reader of the source tree (the docs, the ABI check, an editor); configuring fails
# when its macros differ from PROJECT_VERSION, and runs again whenever it changes.
set(_dpzo_version_h ${PROJECT_SOURCE_DIR}/include/dpzo/version.h)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_dpzo_version_h})
file(READ ${_dpzo_version_h} _text)
set(_bad "")
foreach(part MAJOR MINOR PATCH)
  if(_text MATCHES "#define DPZO_VERSION_${part} ([0-9]+)\n")
    set(_have ${CMAKE_MATCH_1})
  else()
    set(_have "(missing)")
  endif()
  if(NOT _have STREQUAL PROJECT_VERSION_${part})
    string(APPEND _bad "\n  DPZO_VERSION_${part} is ${_have}, the project's is ${PROJECT_VERSION_${part}}")
  endif()
endforeach()
if(_text MATCHES "#define DPZO_VERSION_STRING \"([^\"]*)\"")
  set(_have "\"${CMAKE_MATCH_1}\"")
else()
  set(_have "(missing)")
endif()
if(NOT _have STREQUAL "\"${PROJECT_VERSION}\"")
  string(APPEND _bad "\n  DPZO_VERSION_STRING is ${_have}, the project's is \"${PROJECT_VERSION}\"")
endif()
# DPZO_VERSION_NUMBER gives minor and patch two decimal digits each.
if(PROJECT_VERSION_MINOR GREATER 99 OR PROJECT_VERSION_PATCH GREATER 99)
  string(APPEND _bad "\n  minor and patch must be below 100 (DPZO_VERSION_NUMBER)")
endif()
if(_bad)
  message(FATAL_ERROR "include/dpzo/version.h does not match project(dpzo VERSION "
                      "${PROJECT_VERSION}) in CMakeLists.txt:${_bad}\nEdit both together.")
endif()
unset(_bad)
unset(_have)
unset(_text)
