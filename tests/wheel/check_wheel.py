# SPDX-License-Identifier: Apache-2.0
"""tests/wheel/check_wheel.py: the installed wheel at work (run by tests/wheel/run.sh, `make
test-wheel`, with the test venv's Python, outside the source tree).

usage: check_wheel.py SITE HIDDEN_LIST MODE
  SITE         the venv's site-packages, where the wheel was installed
  HIDDEN_LIST  a file listing the system libraries run.sh hid (one path a line)
  MODE         "hidden": they are hidden (bind-mounted /dev/null, a private mount namespace);
               "visible": they could not be hidden (no unshare), only the proof below runs

Checks, each with real values:
- `import dpzo` is the wheel's package and library (SITE/dpzo/lib/libdpzo.so);
- dpzo.epsilon of TF Privacy's MNIST run: 2.596641914856823, between the exact optimum (mpmath,
  30 digits) and 1e-9 above it;
- a noise profile's round trip: gaussian_profile -> save -> Profile.load -> equal, verify() ok,
  the numbers of the shipped examples/profile-gaussian.json (dpzo.data_file); a tampered file
  is refused;
- the `dpzo` console script: --help, `dpzo epsilon ... --json` equal to the library's number to
  the last bit, `dpzo profile verify` on a shipped file, an error's exit status 2;
- the bundled OpenBLAS under dpzo's kernel selection: `dpzo train --verbose --json` reports
  what dpzo_blas_choose decides for this CPU;
- CUDA: where the wheel has libdpzo_cuda.so and the CUDA runtime is hidden, every CUDA call
  fails cleanly (DPZO_EUNSUPPORTED) naming the missing libcudart;
- where every library came from: in this process /proc/self/maps, in the CLI's LD_DEBUG=libs;
  any copy of GSL, GSL's CBLAS, MPFR, GMP, cJSON, OpenBLAS/BLAS/LAPACK, gfortran or quadmath
  must be the wheel's (SITE/dpzo.libs), and each of the bundled ones must have been loaded;
  in "hidden" mode libcudart must not be loaded at all.
"""
from __future__ import annotations

import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile

SITE, HIDDEN_LIST, MODE = os.path.realpath(sys.argv[1]), sys.argv[2], sys.argv[3]
assert MODE in ("hidden", "visible"), MODE
EXACT = 2.59664191485651526676  # mpmath, 30 digits (tests/ref/reference_values.h)
# the system libraries the wheel must bring itself (run.sh hides the system's copies)
BUNDLED = re.compile(r"^lib(gsl|gslcblas|mpfr|gmp|cjson|openblas[a-z0-9_.-]*|blas|lapack|gfortran|"
                     r"quadmath|sodium)[-.]")
CUDART = re.compile(r"^libcudart[-.]")
failures: list[str] = []


def check(ok: bool, what: str) -> None:
    print(("ok      " if ok else "FAILED  ") + what)
    if not ok:
        failures.append(what)


def inside(path: str) -> bool:
    return os.path.realpath(path).startswith(SITE + os.sep)


def where(paths: list[str], label: str) -> set[str]:
    """Checks that every bundled-kind library among paths is inside SITE; returns their
    base names without auditwheel's hash (libgsl, libmpfr, ...)."""
    seen = set()
    for p in sorted(set(paths)):
        base = os.path.basename(p)
        if CUDART.match(base):
            check(MODE == "visible", f"{label}: libcudart loaded from {p}")
        if not BUNDLED.match(base):
            continue
        check(inside(p), f"{label}: {base} from {os.path.realpath(p)}")
        seen.add(re.sub(r"[-.].*", "", base))
    return seen


# 0. The hidden files are hidden.
hidden = [line.strip() for line in open(HIDDEN_LIST) if line.strip()]
if MODE == "hidden":
    import stat
    shown = [h for h in hidden if not stat.S_ISCHR(os.stat(h).st_mode)]
    check(not shown and len(hidden) > 0,
          f"{len(hidden)} system libraries hidden (each is /dev/null here){': not ' + str(shown) if shown else ''}")

# 1. The package and its library.
import dpzo  # noqa: E402
import dpzo._lib as L  # noqa: E402

check(inside(dpzo.__file__), f"dpzo imported from {dpzo.__file__}")
check(os.path.realpath(L.library_path) == os.path.join(SITE, "dpzo", "lib", "libdpzo.so"),
      f"library {L.library_path}")

# 2. epsilon
r = dpzo.epsilon(noise_multiplier=1.1, sampling_rate=256 / 60000, steps=14063, delta=1e-5)
check(r.epsilon == 2.596641914856823 and EXACT <= r.epsilon <= EXACT * (1 + 1e-9),
      f"dpzo.epsilon MNIST = {r.epsilon!r} (exact optimum {EXACT!r})")

# 3. A profile's round trip, and the shipped example files.
tmp = tempfile.mkdtemp(prefix="dpzo-wheel-")
p = dpzo.gaussian_profile(epsilon=3, delta=1e-5, sampling_rate=0.01, steps=1000,
                          created="2026-11-21T12:00:00Z")
path = os.path.join(tmp, "profile.json")
written = p.save(path)
back = dpzo.Profile.load(path)
check(back == written, "profile written and read back equal")
v = back.verify()
check(v.ok and v.epsilon_recomputed <= back.epsilon,
      f"profile verify: ok {v.ok}, recomputed {v.epsilon_recomputed!r} <= {back.epsilon!r}")
shipped = dpzo.data_file("examples/profile-gaussian.json")
check(inside(shipped), f"data_file -> {shipped}")
ex = dpzo.Profile.load(shipped)
check((p.noise_multiplier, p.epsilon) == (ex.noise_multiplier, ex.epsilon)
      == (0.8645448684692383, 2.999997518858909),
      f"noise {p.noise_multiplier!r}, epsilon {p.epsilon!r} as in examples/profile-gaussian.json")
try:
    dpzo.Profile.load(dpzo.data_file("examples/profile-gaussian-tampered.json"))
    check(False, "the tampered profile was accepted")
except dpzo.Error as e:
    check("checksum mismatch" in str(e), f"tampered profile refused: {str(e)[:60]}...")
check(len(dpzo.data_files()) >= 11 and "audits/pazo.json" in dpzo.data_files(),
      f"{len(dpzo.data_files())} data files")

# 4. The console script.
script = os.path.join(os.path.dirname(sys.executable), "dpzo")
check(os.path.isfile(script), f"console script {script}")
env = {k: v for k, v in os.environ.items() if k not in ("DPZO_CLI", "DPZO_LIBRARY", "PYTHONPATH")}


def cli(*args: str, debug: bool = False) -> subprocess.CompletedProcess[str]:
    e = dict(env, LD_DEBUG="libs") if debug else env
    return subprocess.run([script, *args], capture_output=True, text=True, env=e, timeout=120)


h = cli("--help")
check(h.returncode == 0 and "usage: dpzo COMMAND" in h.stdout, f"dpzo --help: exit {h.returncode}")
q = cli("epsilon", "--noise-multiplier", "1.1", "--sampling-rate", "0.004266666666666667",
        "--steps", "14063", "--delta", "1e-5", "--json", debug=True)
try:
    cli_eps = json.loads(q.stdout)["epsilon"]
except (ValueError, KeyError):
    cli_eps = None
check(q.returncode == 0 and cli_eps == r.epsilon,
      f"dpzo epsilon --json = {cli_eps!r}, the library's {r.epsilon!r} (exit {q.returncode})")
vf = cli("profile", "verify", shipped)
check(vf.returncode == 0 and "result           OK" in vf.stdout, f"dpzo profile verify: exit {vf.returncode}")
bad = cli("epsilon", "--noise-multiplier", "-1", "--sampling-rate", "0.01", "--steps", "3",
          "--delta", "1e-5")
check(bad.returncode == 2 and "must be >= 0" in bad.stderr,
      f"dpzo epsilon --noise-multiplier -1: exit {bad.returncode} (2 expected): {bad.stderr.strip()}")

# 4b. The bundled OpenBLAS under dpzo's kernel selection (docs/trainer.md, section 4.3): the
# CLI's `train --verbose --json` reports the decision dpzo_blas_choose makes for what the
# bundled OpenBLAS chose and this CPU (recomputed here through the wheel's libdpzo.so).
# It trains on Fashion-MNIST (Debian's dataset-fashion-mnist, a data package, not hidden).
class _Choice(ctypes.Structure):
    _fields_ = [("do_switch", ctypes.c_int), ("core", ctypes.c_char * 32),
                ("reason", ctypes.c_char * 200)]


cfg = os.path.join(tmp, "blas-run.json")
with open(cfg, "w") as fh:
    json.dump({"algorithm": "mezo", "model": "mlp:8", "steps": 2, "batch_size": 64,
               "lr": 0.001, "lambda": 0.001, "seed": 3}, fh)
env_blas = {k: v for k, v in env.items() if k not in ("OPENBLAS_CORETYPE", "DPZO_BLAS_SELECT")}
t = subprocess.run([script, "train", "--config", cfg, "--verbose", "--json"], capture_output=True,
                   text=True, env=env_blas, timeout=300)
if t.returncode != 0 and "Fashion-MNIST not found" in t.stderr:
    check(False, "dpzo train: Fashion-MNIST not found (scripts/install-deps.sh installs it)")
else:
    b = json.loads(t.stdout).get("blas", {}) if t.returncode == 0 else {}
    lib = ctypes.CDLL(L.library_path)
    lib.dpzo_cpu_features.restype = ctypes.c_uint
    want = _Choice()
    lib.dpzo_blas_choose(b.get("chosen_by_openblas", "").encode(), lib.dpzo_cpu_features(),
                         None, None, ctypes.byref(want))
    check(t.returncode == 0 and b.get("kernels") == want.core.decode()
          and b.get("switched") == bool(want.do_switch),
          f"dpzo train --verbose: {b.get('kernels')} kernels (OpenBLAS chose "
          f"{b.get('chosen_by_openblas')}; dpzo_blas_choose says {want.core.decode()}): "
          f"{b.get('reason', t.stderr.strip()[:200])}")

# 5. CUDA: libdpzo_cuda.so is opened at the first CUDA call.
cuda_lib = os.path.join(SITE, "dpzo", "lib", "libdpzo_cuda.so")
L.lib.dpzo_cuda_unavailable_reason.restype = ctypes.c_char_p
available = L.lib.dpzo_cuda_available()
reason = (L.lib.dpzo_cuda_unavailable_reason() or b"").decode()
print(f"        CUDA: libdpzo_cuda.so {'in' if os.path.exists(cuda_lib) else 'not in'} the wheel; "
      f"available {available}; reason: {reason}")
if os.path.exists(cuda_lib) and MODE == "hidden":
    check(available == 0 and reason.startswith(f"CUDA kernels not loaded: {cuda_lib}: ")
          and re.search(r"libcudart\.so\.\d+", reason) is not None,
          "without libcudart the CUDA kernels are not loaded, and the reason names it")
    f = L.lib.dpzo_cuda_malloc
    f.restype, f.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                                           ctypes.c_size_t]
    ptr = ctypes.c_void_p(1)
    st = f(L.ctx(), ctypes.byref(ptr), 64)
    msg = (L.lib.dpzo_ctx_errmsg(L.ctx()) or b"").decode()
    check(st == 3 and ptr.value is None and reason in msg,
          f"dpzo_cuda_malloc: status {st} (DPZO_EUNSUPPORTED = 3): {msg[:70]}...")
elif not os.path.exists(cuda_lib):
    check(available == 0 and "built without CUDA" in reason, "a CPU-only wheel says so")

# 6. Where the libraries came from.
maps = [line.split(None, 5)[5].strip() for line in open("/proc/self/maps")
        if len(line.split(None, 5)) == 6 and line.split(None, 5)[5].startswith("/")]
py_seen = where(maps, "python")
lines = q.stderr.splitlines()
images: list[list[str]] = []
for line in lines:
    m = re.match(r"^\s*\d+:\s+calling init: (\S+)$", line)
    if m:
        if "ld-linux" in os.path.basename(m.group(1)) or not images:
            images.append([])
        images[-1].append(m.group(1))
check(len(images) >= 1, f"LD_DEBUG=libs of the CLI: {len(images)} images")
cli_seen = where(images[-1] if images else [], "dpzo CLI")
in_wheel = sorted({re.sub(r"[-.].*", "", n) for n in os.listdir(os.path.join(SITE, "dpzo.libs"))})
check(set(in_wheel) <= py_seen and set(in_wheel) <= cli_seen,
      f"every bundled library loaded by both ({', '.join(in_wheel)}); python: "
      f"{sorted(py_seen)}, CLI: {sorted(cli_seen)}")

# the bundled libraries' licenses (scripts/build-wheel.sh, step 5): one copyright file for
# each Debian package a bundled library came from, and a README naming every bundled file
third = os.path.join(SITE, "dpzo", "third_party")
readme = open(os.path.join(third, "README.md")).read() if os.path.isdir(third) else ""
bundled_files = sorted(os.listdir(os.path.join(SITE, "dpzo.libs")))
check(bool(readme) and all(f"dpzo.libs/{f} " in readme for f in bundled_files),
      f"dpzo/third_party/README.md names every bundled file ({len(bundled_files)})")
named = re.findall(r"\| ([\w.+-]+)\.copyright \|", readme)
check(bool(named) and all(os.path.getsize(os.path.join(third, n + ".copyright")) > 0
                          for n in named),
      f"a copyright file for each package: {', '.join(named)}")
check(any(n.startswith("libgsl") for n in named) and "GPL version 3" in readme,
      "GSL's GPL is stated for the wheel as a whole")

print(f"check_wheel: {'FAILED: ' + str(len(failures)) if failures else 'all checks passed'} "
      f"(system libraries {'hidden' if MODE == 'hidden' else 'NOT hidden'})")
sys.exit(1 if failures else 0)
