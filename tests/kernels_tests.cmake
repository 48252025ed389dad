# SPDX-License-Identifier: Apache-2.0
# tests of kernels/ (owned by the kernels work)
dpzo_test(test_zo_dir)
target_link_libraries(test_zo_dir PRIVATE dpzo_kernels)
target_include_directories(test_zo_dir PRIVATE ${PROJECT_SOURCE_DIR}/kernels/cpu)
# The CUDA kernels against the CPU reference (label gpu): exits 77, reported by ctest as
# skipped, when no device runs them (no GPU, no driver, or a build without CUDA).
dpzo_test(test_cuda)
target_link_libraries(test_cuda PRIVATE dpzo_cuda dpzo_kernels)
target_include_directories(test_cuda PRIVATE ${PROJECT_SOURCE_DIR}/kernels/cpu
                                             ${PROJECT_SOURCE_DIR}/kernels)
set_tests_properties(test_cuda PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
# The typed kernels (dpzo_dir_perturb / _update in f32, bf16, f16) and their conversions
# (kernels/zo_dtype.h).
dpzo_test(test_zo_dtype)
target_link_libraries(test_zo_dtype PRIVATE dpzo_kernels)
target_include_directories(test_zo_dtype PRIVATE ${PROJECT_SOURCE_DIR}/kernels)
