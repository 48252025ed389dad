# SPDX-License-Identifier: Apache-2.0
# tests of trainer/ (owned by the trainer work)
dpzo_test(test_idx)
target_link_libraries(test_idx PRIVATE dpzo_trainer)
target_compile_definitions(test_idx PRIVATE DPZO_TEST_TMP="${CMAKE_CURRENT_BINARY_DIR}")
dpzo_test(test_model)
target_link_libraries(test_model PRIVATE dpzo_trainer)
dpzo_test(test_privacy)
target_link_libraries(test_privacy PRIVATE dpzo_trainer)
target_compile_definitions(test_privacy PRIVATE DPZO_TEST_TMP="${CMAKE_CURRENT_BINARY_DIR}")
dpzo_test(test_train)
target_link_libraries(test_train PRIVATE dpzo_trainer)
target_include_directories(test_train PRIVATE ${PROJECT_SOURCE_DIR}/trainer)
target_compile_definitions(test_train PRIVATE DPZO_CLI="$<TARGET_FILE:dpzo>"
                                              DPZO_TEST_TMP="${CMAKE_CURRENT_BINARY_DIR}"
                                              DPZO_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
add_dependencies(test_train dpzo)
dpzo_test(test_algorithms)
target_link_libraries(test_algorithms PRIVATE dpzo_trainer)
target_include_directories(test_algorithms PRIVATE ${PROJECT_SOURCE_DIR}/trainer)
target_compile_definitions(test_algorithms PRIVATE DPZO_TEST_TMP="${CMAKE_CURRENT_BINARY_DIR}")
dpzo_test(test_zo_step)
target_link_libraries(test_zo_step PRIVATE dpzo_trainer)
target_include_directories(test_zo_step PRIVATE ${PROJECT_SOURCE_DIR}/trainer)
target_compile_definitions(test_zo_step PRIVATE DPZO_TEST_TMP="${CMAKE_CURRENT_BINARY_DIR}")
# dpzo train's trajectory for the Python plugin's tests (test_torch_plugin.py finds it
# beside the dpzo CLI); not installed.
add_executable(dpzo-zo-reference zo_reference.c)
target_include_directories(dpzo-zo-reference PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
                           ${PROJECT_SOURCE_DIR}/trainer ${CMOCKA_INCLUDE_DIR})
target_link_libraries(dpzo-zo-reference PRIVATE dpzo_trainer ${CMOCKA_LIBRARY})
set_target_properties(dpzo-zo-reference PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                      ${CMAKE_BINARY_DIR}/bin)
# The OpenBLAS kernels dpzo selects (dpzo/blas.h, issue 27): as the environment is, with a
# user's OPENBLAS_CORETYPE, and as on a CPU OpenBLAS does not know (tests/test_blas.c)
dpzo_test(test_blas)
target_link_libraries(test_blas PRIVATE dpzo_trainer)
add_test(NAME test_blas_user_coretype COMMAND test_blas)
set_tests_properties(test_blas_user_coretype PROPERTIES ENVIRONMENT "OPENBLAS_CORETYPE=Prescott")
add_test(NAME test_blas_unknown_cpu COMMAND test_blas unknown-cpu)
set_tests_properties(test_blas_unknown_cpu PROPERTIES ENVIRONMENT "OPENBLAS_CORETYPE=Prescott")
# issue 29: every algorithm's trajectory, bit for bit (tests/trajectories.c); not a ctest
add_executable(dpzo-trajectories trajectories.c)
target_include_directories(dpzo-trajectories PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
                           ${PROJECT_SOURCE_DIR}/trainer ${CMOCKA_INCLUDE_DIR})
target_link_libraries(dpzo-trajectories PRIVATE dpzo_trainer ${CMOCKA_LIBRARY})
target_compile_definitions(dpzo-trajectories PRIVATE DPZO_TEST_TMP="${CMAKE_CURRENT_BINARY_DIR}")
