# SPDX-License-Identifier: Apache-2.0
# Tests of common/dpzo_io and of the files dpzo reads and writes (docs/files.md).
dpzo_test(test_io)
target_compile_definitions(test_io PRIVATE DPZO_TEST_TMP="${CMAKE_CURRENT_BINARY_DIR}")
dpzo_test(test_checkpoint)
target_link_libraries(test_checkpoint PRIVATE dpzo_trainer dpzo_noisesearch)
target_include_directories(test_checkpoint PRIVATE ${PROJECT_SOURCE_DIR}/trainer
                                                   ${PROJECT_SOURCE_DIR}/noisesearch)
target_compile_definitions(test_checkpoint PRIVATE DPZO_TEST_TMP="${CMAKE_CURRENT_BINARY_DIR}")
set_tests_properties(test_checkpoint PROPERTIES TIMEOUT 120)
dpzo_test(test_files_cli)
target_compile_definitions(test_files_cli PRIVATE DPZO_CLI="$<TARGET_FILE:dpzo>"
                                                  DPZO_TEST_TMP="${CMAKE_CURRENT_BINARY_DIR}")
add_dependencies(test_files_cli dpzo)
# issue 28, items 8 and 9: the rules every JSON reader shares (common/dpzo_json.c)
dpzo_ns_test(test_json_input)
target_link_libraries(test_json_input PRIVATE dpzo_trainer)
target_compile_definitions(test_json_input PRIVATE DPZO_CLI="$<TARGET_FILE:dpzo>"
                                                   DPZO_TEST_TMP="${CMAKE_CURRENT_BINARY_DIR}"
                                                   DPZO_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
add_dependencies(test_json_input dpzo)
# issue 28, item 6: every output checked before the work (a directory, a missing folder, a
# FIFO with no reader, /dev/full, a read-only filesystem)
dpzo_test(test_outputs_cli)
target_compile_definitions(test_outputs_cli PRIVATE DPZO_CLI="$<TARGET_FILE:dpzo>"
                                                    DPZO_TEST_TMP="${CMAKE_CURRENT_BINARY_DIR}")
add_dependencies(test_outputs_cli dpzo)
set_tests_properties(test_outputs_cli PROPERTIES TIMEOUT 600)
