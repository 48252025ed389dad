# Tests of common/dpzo_io and of the files dpzo reads and writes (docs/files.md).
dpzo_test(test_io)
target_compile_definitions(test_io PRIVATE DPZO_TEST_TMP="${CMAKE_CURRENT_BINARY_DIR}")
