#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/install/abi.sh: what libdpzo.so exports and what it may call (docs/install.md).
#
#   abi.sh exports <nm> <libdpzo.so> <dpzo_exports.txt>
#       ctest abi_exports: the dynamic symbols the library defines are exactly the functions
#       include/dpzo/*.h declares (cmake/exports.cmake wrote the list): none missing, none
#       extra (no internal dpzo__ helper, no dependency's symbol leaks out).
#   abi.sh exports <nm> <libdpzo.so> <dpzo_exports.txt> <cc> <include dir>
#       also checks the list itself: the list and the library come from the same regular
#       expression, so a declaration it missed would be absent from both. GCC's -aux-info
#       lists the prototypes the compiler itself parsed in include/dpzo/*.h; they must be
#       the list's names. (Skipped, with a note, by a compiler without -aux-info: clang.)
#   abi.sh noprint <nm> <libdpzo.so>
#       ctest abi_never_prints: the library never prints and never exits, so it imports none
#       of the functions or streams that would: printf and friends, puts, perror, exit,
#       abort, assert's __assert_fail, stdout, stderr. (It writes to a file descriptor only
#       where a caller names a file; "-" names standard output on purpose.)
set -euo pipefail
mode=$1; nm=$2; lib=$3
strip_version() { sed -e 's/@.*//'; }
case $mode in
exports)
    list=$4
    have=$(mktemp); trap 'rm -f "$have"' EXIT
    "$nm" -D --defined-only "$lib" | awk '{print $NF}' | strip_version | LC_ALL=C sort -u > "$have"
    if ! diff <(LC_ALL=C sort -u "$list") "$have" > /dev/null; then
        echo "abi_exports: libdpzo.so's dynamic symbols differ from $list"
        echo "  declared in include/dpzo but not exported:"
        LC_ALL=C comm -23 <(LC_ALL=C sort -u "$list") "$have" | sed 's/^/    /'
        echo "  exported but not declared:"
        LC_ALL=C comm -13 <(LC_ALL=C sort -u "$list") "$have" | sed 's/^/    /'
        exit 1
    fi
    echo "abi_exports: $(wc -l < "$have") symbols, exactly the declared functions"
    if [ $# -ge 6 ]; then
        cc=$5; inc=$(cd "$6" && pwd); tu=$(mktemp -d); trap 'rm -f "$have"; rm -rf "$tu"' EXIT
        for h in "$inc"/dpzo/*.h; do echo "#include <dpzo/${h##*/}>"; done > "$tu/all.c"
        if "$cc" -std=c17 -fsyntax-only -I"$inc" -aux-info "$tu/aux" "$tu/all.c" 2> /dev/null; then
            # "/* <header>:<line>:NC */ extern <type> <name> (<parameters>);"
            { grep -F "$inc/dpzo/" "$tu/aux" || true; } | sed -e 's|^/\*[^*]*\*/ *||' -e 's/ *(.*//' \
                | awk '{print $NF}' | sed 's/^\**//' | LC_ALL=C sort -u > "$tu/cc"
            if ! diff "$tu/cc" <(LC_ALL=C sort -u "$list") > /dev/null; then
                echo "abi_exports: $list differs from the functions $cc parsed in $inc/dpzo:"
                diff "$tu/cc" <(LC_ALL=C sort -u "$list") | sed 's/^/    /'
                exit 1
            fi
            echo "abi_exports: the list is the $(wc -l < "$tu/cc") functions $cc parsed"
        else
            echo "abi_exports: $cc has no -aux-info; the list is not checked against the compiler"
        fi
    fi
    ;;
noprint)
    forbidden='printf|vprintf|__printf_chk|__vprintf_chk|puts|putchar|putchar_unlocked|perror|exit|_exit|_Exit|quick_exit|abort|__assert_fail|__assert_perror_fail|__assert|err|errx|verr|verrx|warn|warnx|error|error_at_line|psignal|psiginfo|stdout|stderr'
    found=$("$nm" -D -u "$lib" | awk '{print $NF}' | strip_version | grep -E -x "$forbidden" || true)
    if [ -n "$found" ]; then
        echo "abi_never_prints: libdpzo.so imports" $found
        exit 1
    fi
    echo "abi_never_prints: none of printf, puts, perror, exit, abort, __assert_fail, stdout," \
         "stderr among its $("$nm" -D -u "$lib" | wc -l) imports"
    ;;
*) echo "usage: abi.sh exports|noprint <nm> <lib> [exports.txt]" >&2; exit 2 ;;
esac
