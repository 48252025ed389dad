# SPDX-License-Identifier: Apache-2.0
# cmake/install.cmake: what `cmake --install <build> --prefix P` puts where (docs/install.md).
#
#   P/include/dpzo/*.h                    the public headers
#   P/lib/libdpzo.so.0.1.0                the shared library, with the SONAME link
#   P/lib/libdpzo.so.0.1, P/lib/libdpzo.so (and the link-time name libdpzo.so)
#   P/lib/pkgconfig/dpzo.pc               pkg-config: Cflags -I${includedir}, Libs -ldpzo
#   P/lib/cmake/dpzo/                     find_package(dpzo) -> the imported target dpzo::dpzo
#   P/lib/libdpzo_cuda.so                 CUDA builds only: the kernels, opened by libdpzo.so and
#                                         the CLI at the first CUDA call (kernels/cuda/load.c)
#   P/bin/dpzo                            the command line (linked to the archives, so it does
#                                         not need libdpzo.so)
#   P/share/doc/dpzo/LICENSE, NOTICE      the license (Apache-2.0) and its notice
#
# The static archives are not installed: they are the CLI's and the tests' way of linking
# the same objects, not an interface (their private headers are not installed either).
#
# Library directory: "lib" unless -DCMAKE_INSTALL_LIBDIR says otherwise. GNUInstallDirs
# alone would pick lib/x86_64-linux-gnu for the prefix /usr on Debian and lib64 on
# Red Hat-like systems; dpzo's documented layout is P/lib, and a distribution packager sets
# CMAKE_INSTALL_LIBDIR to its own multiarch directory (everything below follows it).
#
# Components: runtime (the library), dev (headers, links, pkg-config, CMake package),
# cli (bin/dpzo), python (only under scikit-build-core: the wheel's copy of the library).
if(NOT DEFINED CMAKE_INSTALL_LIBDIR)
  set(CMAKE_INSTALL_LIBDIR lib CACHE PATH "Object code libraries (lib)")
endif()
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

if(SKBUILD)
  # `pip install .` and `make wheel` (pyproject.toml, scikit-build-core): the wheel carries
  # - the library, as dpzo/lib/libdpzo.so next to the package (python/dpzo/_lib.py looks
  #   there first after $DPZO_LIBRARY). One real file under the plain name: a wheel cannot
  #   hold symlinks, and ctypes opens it by path, so the SONAME does not matter there;
  # - in a CUDA build, the kernels' library dpzo/lib/libdpzo_cuda.so beside it (opened at
  #   the first CUDA call, kernels/cuda/load.c; its libcudart is the user's);
  # - the command line as dpzo/bin/dpzo (the console script `dpzo`, python/dpzo/_cli.py,
  #   runs it; its ../lib is where it finds libdpzo_cuda.so);
  # - the example and audit files the docs' Python examples read, as dpzo/data/examples/
  #   and dpzo/data/audits/ (dpzo.data_file, python/dpzo/_data.py).
  # scripts/build-wheel.sh then bundles the other libraries (auditwheel repair).
  install(FILES $<TARGET_FILE:dpzo_shared> DESTINATION dpzo/lib RENAME libdpzo.so
          COMPONENT python)
  # pyproject.toml's license-files put them into the wheel's .dist-info/licenses; this copy
  # sits beside the package's files, with the library it covers.
  install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/NOTICE DESTINATION dpzo
          COMPONENT python)
  if(DPZO_HAVE_CUDA)
    install(FILES $<TARGET_FILE:dpzo_cuda_kernels> DESTINATION dpzo/lib COMPONENT python)
  endif()
  install(PROGRAMS $<TARGET_FILE:dpzo> DESTINATION dpzo/bin COMPONENT python)
  foreach(d IN ITEMS examples audits)
    file(GLOB _data CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/${d}/*.json)
    install(FILES ${_data} DESTINATION dpzo/data/${d} COMPONENT python)
  endforeach()
  return()
endif()

set_target_properties(dpzo_shared PROPERTIES
  EXPORT_NAME dpzo
  # Keep the directory of every dependency found outside the compilers' implicit and the
  # system's directories (a GSL in /opt, ...) in the installed library's RUNPATH, so the
  # installed copy loads wherever the build-tree copy does. (The CUDA toolkit's directory is
  # nvcc's implicit one: neither copy records it; the loader's ld.so.conf supplies it.)
  INSTALL_RPATH_USE_LINK_PATH ON)
set_target_properties(dpzo PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)

if(DPZO_HAVE_CUDA)
  # beside libdpzo.so, where kernels/cuda/load.c looks (and bin/../lib for the CLI)
  install(TARGETS dpzo_cuda_kernels LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          COMPONENT runtime)
endif()
install(TARGETS dpzo_shared EXPORT dpzoTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${DPZO_PUBLIC_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dpzo
        COMPONENT dev)
install(TARGETS dpzo RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
# The license goes with the library (component runtime): CMAKE_INSTALL_DOCDIR is
# share/doc/dpzo unless the packager sets another.
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/NOTICE
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)

# ---- CMake package: find_package(dpzo) ---------------------------------------------------
set(DPZO_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/dpzo)
install(EXPORT dpzoTargets NAMESPACE dpzo:: FILE dpzoTargets.cmake
        DESTINATION ${DPZO_CMAKE_DIR} COMPONENT dev)
if(DPZO_HAVE_CUDA)
  set(DPZO_CONFIG_CUDA_NOTE "; the CUDA runtime only through libdpzo_cuda.so, opened at the first CUDA call")
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/dpzoConfig.cmake.in
  ${PROJECT_BINARY_DIR}/dpzoConfig.cmake INSTALL_DESTINATION ${DPZO_CMAKE_DIR})
# The SONAME policy (cmake/shared.cmake): while the major version is 0 a minor version may
# break the API, so only the same major.minor is compatible; from 1.0 on, the same major.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_compat SameMinorVersion)
else()
  set(_compat SameMajorVersion)
endif()
write_basic_package_version_file(${PROJECT_BINARY_DIR}/dpzoConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY ${_compat})
install(FILES ${PROJECT_BINARY_DIR}/dpzoConfig.cmake ${PROJECT_BINARY_DIR}/dpzoConfigVersion.cmake
        DESTINATION ${DPZO_CMAKE_DIR} COMPONENT dev)

# ---- pkg-config: dpzo.pc ------------------------------------------------------------------
# The headers include none of the dependencies' headers and only the shared library is
# installed, so a program needs only -I${includedir} -L${libdir} -ldpzo; the loader finds the
# dependencies. They are not listed (no Requires.private, no Libs.private): there is no static
# library to link them for, and pkg-config fails for a Requires.private package without a .pc
# file (a GSL or MPFR built from source) even when asked for --cflags only.
# License: the SPDX identifier (DPZO_LICENSE), a field pkgconf reads since 1.9 (for its SBOM
# tool); a pkg-config that does not know the field skips it (pkgconf 1.8.1, install_consumer).
foreach(d IN ITEMS LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${d}}")
    set(DPZO_PC_${d} "${CMAKE_INSTALL_${d}}")
  else()
    set(DPZO_PC_${d} "\${prefix}/${CMAKE_INSTALL_${d}}")
  endif()
endforeach()
# The prefix is the one given at install time (cmake --install --prefix P), not the one
# configured, so the template is filled in two steps: now everything but the prefix, then
# the prefix when installing.
set(DPZO_PC_PREFIX "@DPZO_PC_PREFIX@")
configure_file(${CMAKE_CURRENT_LIST_DIR}/dpzo.pc.in ${PROJECT_BINARY_DIR}/dpzo.pc.in @ONLY)
install(CODE "
  get_filename_component(DPZO_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\" ABSOLUTE)
  configure_file(\"${PROJECT_BINARY_DIR}/dpzo.pc.in\" \"${PROJECT_BINARY_DIR}/dpzo.pc\" @ONLY)"
  COMPONENT dev)
install(FILES ${PROJECT_BINARY_DIR}/dpzo.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
        COMPONENT dev)
