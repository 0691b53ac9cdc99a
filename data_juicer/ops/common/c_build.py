"""Small C libraries of the text kernels (``minhash_c``, ``repetition_c``, ``simhash_c``), built once per
machine with the system's C compiler and loaded with ctypes: used before numba's kernels, whose LLVM
costs a process ~0.4 CPU-s at start-up and ~130 MB (``libllvmlite.so`` pages and anonymous memory).

``build`` compiles a source (``$CC`` or ``cc``, ``-O3 -march=native``, else ``-O3``) into
``<DATA_JUICER_CACHE_HOME or ~/.cache/data_juicer>/kernels/``, named after the source, the compiler
and the CPU's flags, so a changed source or another machine builds its own; the build writes a
temporary file and renames it (a concurrent run loads a whole library or builds its own). ``load``
builds, loads and probes one library, once per process, and answers None (with a debug log saying
why) when it cannot: then numba's kernels, or the numpy / Python paths, run. ``DJ_C_KERNELS=0`` turns
all the C libraries off, ``DJ_MINHASH_C=0`` / ``DJ_REPETITION_C=0`` / ``DJ_SIMHASH_C=0`` one of them.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess

_OFF = ("0", "false", "no", "off")


def cache_dir() -> str:
    home = os.environ.get("DATA_JUICER_CACHE_HOME") or os.path.join(
        os.environ.get("CACHE_HOME", os.path.join("~", ".cache")), "data_juicer")
    return os.path.join(os.path.expanduser(home), "kernels")


def _cpu_flags() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    return line
    except OSError:
        pass
    return platform.processor()


def enabled(switch: str) -> bool:
    """Neither ``DJ_C_KERNELS`` nor ``switch`` (e.g. ``DJ_REPETITION_C``) is set to 0 / false / no / off."""
    return all(os.environ.get(v, "1").strip().lower() not in _OFF for v in ("DJ_C_KERNELS", switch))


def build(source: str, name: str) -> str:
    """The path of the library compiled from ``source`` (compiled now if this machine has none yet);
    raises RuntimeError when it cannot be."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        raise RuntimeError("no C compiler (cc, gcc or clang; or set CC)")
    key = hashlib.sha256("\0".join([source, cc, platform.machine(), _cpu_flags()]).encode()).hexdigest()[:20]
    folder = cache_dir()
    path = os.path.join(folder, f"dj_{name}_{key}.so")
    if os.path.exists(path):
        return path
    os.makedirs(folder, exist_ok=True)
    src = os.path.join(folder, f".dj_{name}_{key}.{os.getpid()}.c")
    tmp = src[:-2] + ".so"
    try:
        with open(src, "w", encoding="utf-8") as f:
            f.write(source)
        for flags in (["-O3", "-march=native"], ["-O3"]):  # a compiler without -march=native: portable code
            try:
                done = subprocess.run([cc, *flags, "-shared", "-fPIC", "-o", tmp, src], capture_output=True,
                                      text=True)
            except OSError as e:
                raise RuntimeError(f"cannot run the C compiler {cc}: {e}") from e
            if done.returncode == 0:
                break
        else:
            raise RuntimeError(f"{cc} failed: {done.stderr.strip()[-300:]}")
        os.replace(tmp, path)  # atomic: a concurrent run loads a whole library or builds its own
    finally:
        for p in (src, tmp):
            if os.path.exists(p):
                os.remove(p)
    return path


def load(source: str, name: str, switch: str, setup):
    """The ctypes library built from ``source``, after ``setup(lib)`` (declares the signatures, probes
    the results against known values, raises when they differ); None when switched off or when
    building, loading or the probe fails (logged at debug level, with the reason)."""
    if not enabled(switch):
        return None
    try:
        lib = ctypes.CDLL(build(source, name))
        setup(lib)
        return lib
    except Exception as e:  # noqa: BLE001 - any failure means: numba's kernels, or the numpy / Python path
        from loguru import logger

        logger.debug(f"{name} C kernels not used ({type(e).__name__}: {e}); numba's or the Python path instead")
        return None
