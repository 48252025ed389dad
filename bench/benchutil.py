# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by the benchmark scripts (python_overhead.py, wor_speed.py,
pld_distinct.py): the machine line every quoted time names, and writing a report."""
import os
import platform
import subprocess


def machine() -> str:
    """CPU count and model, its SIMD flags (lscpu), the kernel and Python version."""
    model, flags = platform.processor() or "unknown CPU", set()
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            key, _, val = line.partition(":")
            if key.strip() == "Model name":
                model = val.strip()
            elif key.strip() == "Flags":
                flags = set(val.split())
    except (OSError, subprocess.CalledProcessError):
        pass
    simd = [f for f in ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512dq", "avx512vl")
            if f in flags]
    return (f"{os.cpu_count()}-core {model} (flags: {' '.join(simd) or 'n/a'}), "
            f"{platform.system()} {platform.release()}, Python {platform.python_version()}")


def emit(text: str, out: str | None) -> None:
    """Prints the report and, with out, writes it there (through a temporary file and a
    rename, so a reader never sees half of it)."""
    print(text, end="" if text.endswith("\n") else "\n")
    if out:
        tmp = out + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, out)
