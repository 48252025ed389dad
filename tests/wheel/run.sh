#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/wheel/run.sh: `make test-wheel` (docs/install.md, section 2.3). The wheel installs
# anywhere: it is built from the sdist (scripts/build-wheel.sh: one compile proves both),
# installed into a fresh venv with no network (pip --no-index), then
# tests/wheel/check_wheel.py runs there with the system's copies of the libraries the wheel
# bundles made unloadable: in a private mount namespace (unshare -m), /dev/null is
# bind-mounted over every libgsl*, libgslcblas*, libmpfr*, libgmp*, libcjson*,
# libopenblas*, libblas*, liblapack*, libgfortran*, libquadmath*, libsodium* and libcudart* the loader
# could find (under /usr/lib, /usr/lib64, /usr/local, /opt, ld.so.conf's and
# $LD_LIBRARY_PATH's folders). check_wheel.py also proves from /proc/self/maps and the CLI's
# LD_DEBUG=libs that every such library came from the wheel.
#
# Without the right to unshare (as root, or in a user namespace with unshare -r), the
# libraries stay visible; the test then says so in capitals and runs the proof alone.
#
# Environment: PYTHON (python3) for the test venv; WHEEL_TEST_DIR (build/wheel-test).
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python3}
T=$(realpath -m "${WHEEL_TEST_DIR:-build/wheel-test}")
t0=$(date +%s)
say() { echo "test-wheel: $*"; }

bash scripts/build-wheel.sh
shopt -s nullglob
wheels=(dist/dpzo-*-manylinux_*.whl)
[ ${#wheels[@]} -eq 1 ] || { say "expected one manylinux wheel in dist/, found ${#wheels[@]}"; exit 1; }
whl=$(realpath "${wheels[0]}")

rm -rf "$T"; mkdir -p "$T/run"
"$PYTHON" -m venv "$T/venv"
"$T/venv/bin/python" -m pip install -q --no-index --disable-pip-version-check "$whl"
site=$("$T/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
say "installed $(basename "$whl") into $T/venv"

# Every copy of those libraries the loader could find (real files; links resolved).
dirs=(/usr/lib /usr/lib64 /usr/local /opt)
for f in /etc/ld.so.conf /etc/ld.so.conf.d/*.conf; do
    while read -r d _; do [[ $d == /* ]] && dirs+=("$d"); done < "$f"
done
IFS=: read -ra ldp <<< "${LD_LIBRARY_PATH:-}"
for d in "${ldp[@]}"; do [[ $d == /* ]] && dirs+=("$d"); done
existing=()
for d in "${dirs[@]}"; do [ -d "$d" ] && existing+=("$d"); done
find "${existing[@]}" \( -type f -o -type l \) \
     \( -name 'libgsl*.so*' -o -name 'libmpfr*.so*' -o -name 'libgmp*.so*' \
        -o -name 'libcjson*.so*' -o -name 'libopenblas*.so*' -o -name 'libblas*.so*' \
        -o -name 'liblapack*.so*' -o -name 'libgfortran*.so*' -o -name 'libquadmath*.so*' -o -name 'libsodium*.so*' \
        -o -name 'libcudart*.so*' \) 2> /dev/null \
    | xargs -r realpath -e 2> /dev/null | sort -u | grep -v "^$T/" > "$T/hidden.txt" || true
say "$(wc -l < "$T/hidden.txt") system library files to hide"

check=(env -u PYTHONPATH -u PYTHONHOME -u DPZO_LIBRARY -u DPZO_CLI -u DPZO_CUDA_LIBRARY
       "$T/venv/bin/python" -I "$PWD/tests/wheel/check_wheel.py" "$site" "$T/hidden.txt")
hide='while read -r f; do mount --bind /dev/null "$f" || exit 3; done < "$1"; shift; cd "$1"; shift; exec "$@"'
mode=visible
for u in "unshare -m --propagation private" "unshare -r -m --propagation private"; do
    # shellcheck disable=SC2086
    if $u bash -c 'mount --bind /dev/null "$1"' _ "$T/hidden.txt" 2> /dev/null; then
        mode=hidden
        say "hiding them with $u + mount --bind /dev/null"
        # shellcheck disable=SC2086
        $u bash -c "$hide" _ "$T/hidden.txt" "$T/run" "${check[@]}" hidden
        break
    fi
done
if [ $mode = visible ]; then
    say "WARNING: NOT HIDDEN: unshare -m (as root, or -r in a user namespace) is not permitted" \
        "here, so the system's libraries stay visible; only the /proc/self/maps and" \
        "LD_DEBUG proof that they are loaded from the wheel runs"
    (cd "$T/run" && "${check[@]}" visible)
fi
say "PASSED in $(($(date +%s) - t0)) s (system libraries $([ $mode = hidden ] && echo hidden || echo NOT HIDDEN))"
