# SPDX-License-Identifier: Apache-2.0
# cmake/exports.cmake: the public API of libdpzo.so, read off include/dpzo/*.h.
#
# dpzo_public_functions(<headers> <out-var>) sets <out-var> to the sorted list of the
# functions the headers declare (identifiers dpzo_... followed by "(", comments removed).
# The shared library exports exactly these (a linker version script); tests/abi checks it.
function(dpzo_public_functions headers out)
  set(names "")
  foreach(h IN LISTS headers)
    file(READ "${h}" text)
    # Block comments may mention function names; drop them (non-greedy by construction).
    string(REGEX REPLACE "/\\*([^*]|\\*+[^*/])*\\*+/" "" text "${text}")
    # and line comments ("// see dpzo_x()" would otherwise add a name no code defines)
    string(REGEX REPLACE "//[^\n]*" "" text "${text}")
    # "name(" but not "type (*field)(" (a function pointer's return type).
    string(REGEX MATCHALL "dpzo_[a-z0-9_]+[ \t\r\n]*\\([^*]" calls "${text}")
    foreach(c IN LISTS calls)
      string(REGEX REPLACE "[ \t\r\n]*\\(.$" "" c "${c}")
      list(APPEND names "${c}")
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES names)
  list(SORT names)
  set(${out} "${names}" PARENT_SCOPE)
endfunction()
