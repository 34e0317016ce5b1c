"""One thread for the BLAS and OpenMP libraries of a worker process, unless the user chose a count.

The pool runs one worker per core, so an env that multiplies matrices gains nothing from threads of its own:
they compete with the other workers for the cores, and OpenBLAS's idle threads busy-wait for about a tenth of a
second after each product. The usual fix, ``OMP_NUM_THREADS=1``, acts only on a library loaded after it is set,
and a worker has numpy (and its OpenBLAS) loaded before its first line runs: forked from the main process, or
importing vecspaces when spawned. So on Linux the libraries already loaded are also told directly, through their
own thread-count functions (as ``threadpoolctl`` does), and the variables are set for those loaded later (torch
imported by an env reads ``OMP_NUM_THREADS``). Elsewhere only the variables act.

Measured on 2 cores, 4 envs each multiplying two 200x200 matrices a step, 2 workers: 3.5k env-steps/s
forked and 235 spawned with numpy's own thread count, 6.8k and 6.9k with one thread.
"""

from __future__ import annotations

import ctypes
import os

__all__ = ["THREAD_VARIABLES", "cap_worker_threads", "loaded_libraries"]

# The variables a user sets to choose the count (any of them: then the worker leaves every library alone).
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
# The functions that set a library's thread count, by a part of its file name: OpenBLAS (numpy's and scipy's
# wheels name theirs with a prefix and a suffix for 64-bit integers), MKL, and the OpenMP runtimes.
_SETTERS = {
    "openblas": (
        "openblas_set_num_threads",
        "openblas_set_num_threads64_",
        "scipy_openblas_set_num_threads",
        "scipy_openblas_set_num_threads64_",
    ),
    "mkl_rt": ("MKL_Set_Num_Threads",),
    "gomp": ("omp_set_num_threads",),
    "libomp": ("omp_set_num_threads",),
    "iomp": ("omp_set_num_threads",),
}


def cap_worker_threads() -> list[str]:
    """Give the worker's BLAS and OpenMP libraries one thread each, unless one of ``THREAD_VARIABLES`` is set.

    Returns:
        The libraries told, by file name (empty when the user chose a count or none is loaded).
    """
    if any(name in os.environ for name in THREAD_VARIABLES):
        return []
    for name in THREAD_VARIABLES:
        os.environ[name] = "1"
    capped = []
    for path in loaded_libraries():
        base = os.path.basename(path)
        setters = next((names for part, names in _SETTERS.items() if part in base), ())
        if setters and _set_threads(path, setters, 1):
            capped.append(base)
    return capped


def loaded_libraries() -> list[str]:
    """The paths of the shared libraries this process has loaded (Linux; empty elsewhere)."""
    try:
        with open("/proc/self/maps") as maps:
            fields = [line.split(None, 5) for line in maps]
    except OSError:
        return []
    paths = {parts[5].strip() for parts in fields if len(parts) == 6 and parts[5].startswith("/")}
    return sorted(path for path in paths if ".so" in os.path.basename(path))


def _set_threads(path: str, setters: tuple[str, ...], count: int) -> bool:
    """Call the first of ``setters`` that the (already loaded) library at ``path`` has; whether one was found."""
    try:
        library = ctypes.CDLL(path, mode=getattr(os, "RTLD_NOLOAD", 0) | getattr(os, "RTLD_LAZY", 0))
    except OSError:
        return False
    for name in setters:
        setter = getattr(library, name, None)
        if setter is not None:
            setter(count)
            return True
    return False
