# SPDX-License-Identifier: Apache-2.0
# cmake/shared.cmake: libdpzo.so, the one shared library of dpzo (docs/install.md).
#
# It is linked from the static archives (whole), so the CLI and the tests keep linking the
# archives while C and Python users get one library. A linker version script exports exactly
# the functions include/dpzo/*.h declares (cmake/exports.cmake); every other symbol, the
# internal dpzo__* helpers and the modules' shared internals among them, is local.
# SONAME: libdpzo.so.<major>.<minor> while the major version is 0 (the API may still change
# between minor versions), libdpzo.so.<major> from 1.0 on.
include(${CMAKE_CURRENT_LIST_DIR}/exports.cmake)
find_package(Threads REQUIRED)
find_package(ZLIB REQUIRED)

file(GLOB DPZO_PUBLIC_HEADERS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/dpzo/*.h)
dpzo_public_functions("${DPZO_PUBLIC_HEADERS}" DPZO_PUBLIC_FUNCTIONS)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${DPZO_PUBLIC_HEADERS})

set(_map "{\n  global:\n")
foreach(f IN LISTS DPZO_PUBLIC_FUNCTIONS)
  string(APPEND _map "    ${f};\n")
endforeach()
string(APPEND _map "  local:\n    *;\n};\n")
file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/dpzo.map CONTENT "${_map}")
string(REPLACE ";" "\n" _list "${DPZO_PUBLIC_FUNCTIONS}")
file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/dpzo_exports.txt CONTENT "${_list}\n")

if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(DPZO_SOVERSION "${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}")
else()
  set(DPZO_SOVERSION "${PROJECT_VERSION_MAJOR}")
endif()

# The objects of every archive go into the library; their external dependencies are linked
# as the archives link them.
set(DPZO_ARCHIVES dpzo_trainer dpzo_cuda dpzo_kernels dpzo_audit dpzo_noisesearch dpzo_accountant
                  dpzo_accountant_pld dpzo_accountant_rdp dpzo_accountant_core dpzo_io)
set(_objects "")
foreach(a IN LISTS DPZO_ARCHIVES)
  list(APPEND _objects $<TARGET_OBJECTS:${a}>)
endforeach()
add_library(dpzo_shared SHARED ${_objects})
set_target_properties(dpzo_shared PROPERTIES
  OUTPUT_NAME dpzo
  VERSION ${PROJECT_VERSION}
  SOVERSION ${DPZO_SOVERSION}
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib
  LINK_DEPENDS ${PROJECT_BINARY_DIR}/dpzo.map)
target_link_libraries(dpzo_shared PRIVATE Threads::Threads GSL::gsl ${MPFR_LIBRARY} ${GMP_LIBRARY} dpzo_openblas
                                          ${CJSON_LIBRARY} dpzo_sodium ZLIB::ZLIB ${MATH_LIBRARY})
if(DPZO_HAVE_CUDA)
  # Not the CUDA runtime: the kernels are libdpzo_cuda.so, opened with dlopen at the first
  # CUDA call (kernels/cuda/load.c), so building the library builds them too.
  target_link_libraries(dpzo_shared PRIVATE ${CMAKE_DL_LIBS})
  add_dependencies(dpzo_shared dpzo_cuda_kernels)
endif()
target_link_options(dpzo_shared PRIVATE
  "LINKER:--version-script=${PROJECT_BINARY_DIR}/dpzo.map" "LINKER:-z,relro" "LINKER:-z,now")
# Every symbol resolved at link time, except in sanitizer builds: clang leaves the
# sanitizer runtime to the executable (the fuzz build), so a shared library has its
# symbols undefined until it is loaded.
if(NOT DPZO_SANITIZE)
  target_link_options(dpzo_shared PRIVATE "LINKER:--no-undefined")
endif()
# The installed copy's include directory comes from install(TARGETS ... INCLUDES DESTINATION)
# (cmake/install.cmake).
target_include_directories(dpzo_shared INTERFACE $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>)
add_library(dpzo::dpzo ALIAS dpzo_shared)
