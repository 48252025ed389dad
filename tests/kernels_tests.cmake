# tests of kernels/ (owned by the kernels work)
dpzo_test(test_zo_dir)
target_link_libraries(test_zo_dir PRIVATE dpzo_kernels)
target_include_directories(test_zo_dir PRIVATE ${PROJECT_SOURCE_DIR}/kernels/cpu)
