# SPDX-License-Identifier: Apache-2.0
# tests of kernels/ (owned by the kernels work)
dpzo_test(test_zo_dir)
target_link_libraries(test_zo_dir PRIVATE dpzo_kernels)
target_include_directories(test_zo_dir PRIVATE ${PROJECT_SOURCE_DIR}/kernels/cpu)
# The CUDA kernels against the CPU reference (label gpu): exits 77, reported by ctest as
# skipped, when no device runs them (no GPU, no driver, or a build without CUDA).
dpzo_test(test_cuda)
target_link_libraries(test_cuda PRIVATE dpzo_cuda dpzo_kernels)
# its own stream (cudaStreamCreate): the same shared runtime libdpzo_cuda.so uses
if(DPZO_HAVE_CUDA)
  target_link_libraries(test_cuda PRIVATE CUDA::cudart)
endif()
target_include_directories(test_cuda PRIVATE ${PROJECT_SOURCE_DIR}/kernels/cpu
                                             ${PROJECT_SOURCE_DIR}/kernels)
set_tests_properties(test_cuda PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
# The kernels are libdpzo_cuda.so, opened at the first CUDA call (kernels/cuda/load.c):
# libdpzo.so and the CLI have no NEEDED libcudart, and when the kernels' library cannot be
# loaded every CUDA entry point of libdpzo.so fails cleanly and says why.
set(_no_cudart_args ${CMAKE_READELF} ${CMAKE_NM} $<TARGET_FILE:dpzo_shared> $<TARGET_FILE:dpzo>)
if(DPZO_HAVE_CUDA)
  list(APPEND _no_cudart_args $<TARGET_FILE:dpzo_cuda_kernels>)
endif()
add_test(NAME abi_no_cudart COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/install/no_cudart.sh
                                    ${_no_cudart_args})
if(DPZO_HAVE_CUDA)
  add_executable(test_cuda_load test_cuda_load.c)
  target_include_directories(test_cuda_load PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
                                                    ${CMOCKA_INCLUDE_DIR})
  target_link_libraries(test_cuda_load PRIVATE dpzo_shared ${CMOCKA_LIBRARY})
  set(_missing ${CMAKE_CURRENT_BINARY_DIR}/no-such-dir/libdpzo_cuda.so)
  add_test(NAME test_cuda_load_missing COMMAND test_cuda_load missing ${_missing})
  set_tests_properties(test_cuda_load_missing PROPERTIES ENVIRONMENT DPZO_CUDA_LIBRARY=${_missing})
  add_test(NAME test_cuda_load_foreign
           COMMAND test_cuda_load foreign $<TARGET_FILE:dpzo_shared>)
  set_tests_properties(test_cuda_load_foreign PROPERTIES
                       ENVIRONMENT DPZO_CUDA_LIBRARY=$<TARGET_FILE:dpzo_shared>)
  add_test(NAME test_cuda_load_default COMMAND test_cuda_load default)
endif()
# The typed kernels (dpzo_dir_perturb / _update in f32, bf16, f16) and their conversions
# (kernels/zo_dtype.h).
dpzo_test(test_zo_dtype)
target_link_libraries(test_zo_dtype PRIVATE dpzo_kernels)
target_include_directories(test_zo_dtype PRIVATE ${PROJECT_SOURCE_DIR}/kernels)
