# SPDX-License-Identifier: Apache-2.0
# fuzz/options.cmake: DPZO_FUZZ=ON builds the libFuzzer targets (docs/fuzzing.md). Included
# by the top-level CMakeLists.txt before the sanitizer set-up: it needs clang, turns the
# AddressSanitizer + UndefinedBehaviorSanitizer build on (DPZO_SANITIZE, which also keeps
# CUDA out) and adds libFuzzer's coverage instrumentation to every C file of the libraries.
if(DPZO_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "DPZO_FUZZ=ON needs clang with libFuzzer (Debian: clang-14 "
                        "libclang-rt-14-dev; configure with CC=clang-14), found "
                        "${CMAKE_C_COMPILER_ID}. `make fuzz` does this.")
  endif()
  set(DPZO_SANITIZE ON)
  add_compile_options($<$<COMPILE_LANGUAGE:C>:-fsanitize=fuzzer-no-link>)
endif()
