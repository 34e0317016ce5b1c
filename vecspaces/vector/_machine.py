"""What this process may use of the machine: its cores (the default worker count) and its memory.

On a shared machine that is less than psutil counts. A Slurm job, ``taskset`` or a container's cpuset
restricts the CPUs a process may run on (its CPU affinity); a container's limits (Docker's ``--cpus`` and
``--memory``, a Kubernetes pod's) cap the CPU time and the memory of its cgroup, while psutil still counts
every core and byte of the host. One worker per host core there means many more busy workers than cores, and
shared memory sized to the host's RAM gets the process killed by the kernel, without a word, once past the
limit.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path

import psutil

__all__ = ["allowed_cpus", "cgroup_cpu_quota", "cgroup_memory_limit", "usable_cores"]

CGROUP_ROOT = Path("/sys/fs/cgroup")
SELF_CGROUP = Path("/proc/self/cgroup")


def usable_cores() -> int:
    """The physical cores this process may use: psutil's count, capped by its CPU affinity and CPU quota.

    With fewer CPUs allowed than the machine has, they count as physical cores in the machine's proportion of
    physical to logical CPUs (4 of 16 logical CPUs on 8 cores: 2 cores). A quota counts up (1.5 CPUs: 2).

    Example:
        >>> 1 <= usable_cores() <= (psutil.cpu_count(logical=False) or psutil.cpu_count() or 1)
        True
    """
    logical = psutil.cpu_count() or 1
    physical = psutil.cpu_count(logical=False) or logical
    cores = physical
    allowed = allowed_cpus()
    if allowed is not None and len(allowed) < logical:
        cores = min(cores, max(1, round(len(allowed) * physical / logical)))
    quota = cgroup_cpu_quota()
    if quota is not None:
        cores = min(cores, max(1, math.ceil(quota)))
    return cores


def allowed_cpus() -> list[int] | None:
    """The CPUs this process may run on, in order; None where they cannot be read or set (macOS, Windows)."""
    return sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None


def cgroup_cpu_quota(root: Path = CGROUP_ROOT, self_cgroup: Path = SELF_CGROUP) -> float | None:
    """The CPUs per period this process's cgroup, or a cgroup above it, may use; None without a quota.

    Reads cgroup v2 (``cpu.max``) and v1 (``cpu.cfs_quota_us`` over ``cpu.cfs_period_us``); anything unreadable
    counts as no quota.

    Args:
        root: where the cgroup hierarchy is mounted.
        self_cgroup: the file naming the process's cgroups.
    """
    return _tightest(root, self_cgroup, "cpu", _v2_cpu_quota, _v1_cpu_quota)


def cgroup_memory_limit(root: Path = CGROUP_ROOT, self_cgroup: Path = SELF_CGROUP) -> int | None:
    """The bytes of memory this process's cgroup, or a cgroup above it, may use; None without a limit.

    Reads cgroup v2 (``memory.max``) and v1 (``memory.limit_in_bytes``, where "no limit" is a number near
    2**63); anything unreadable counts as no limit.
    """
    limit = _tightest(root, self_cgroup, "memory", _v2_memory_limit, _v1_memory_limit)
    return None if limit is None else int(limit)


def _tightest(
    root: Path,
    self_cgroup: Path,
    controller: str,
    v2_limit: Callable[[Path], float | None],
    v1_limit: Callable[[Path], float | None],
) -> float | None:
    """The smallest limit of ``controller`` on the process's cgroups, from its own up to the root."""
    try:
        lines = self_cgroup.read_text().splitlines()
    except OSError:
        lines = []
    limits: list[float] = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":  # v2: one unified hierarchy
            limits += _limits(root, path, v2_limit)
        elif controller in controllers.split(","):
            limits += _limits(root / controllers, path, v1_limit)
    return min(limits) if limits else None


def _limits(mount: Path, path: str, limit_of: Callable[[Path], float | None]) -> list[float]:
    """The limits of the cgroup ``path`` under ``mount`` and of its ancestors (a namespaced one is the root)."""
    folder = mount / path.lstrip("/")
    limits = []
    while True:
        limit = limit_of(folder)
        if limit is not None:
            limits.append(limit)
        if folder == mount or mount not in folder.parents:
            return limits
        folder = folder.parent


def _read_ints(*files: Path) -> list[int] | None:
    try:
        return [int(file.read_text()) for file in files]
    except (OSError, ValueError):
        return None


def _v2_cpu_quota(folder: Path) -> float | None:
    try:
        quota, period = (folder / "cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        return None


def _v1_cpu_quota(folder: Path) -> float | None:
    values = _read_ints(folder / "cpu.cfs_quota_us", folder / "cpu.cfs_period_us")
    return values[0] / values[1] if values and values[0] > 0 and values[1] > 0 else None


def _v2_memory_limit(folder: Path) -> float | None:
    try:
        text = (folder / "memory.max").read_text().strip()
        return None if text == "max" else int(text)
    except (OSError, ValueError):
        return None


def _v1_memory_limit(folder: Path) -> float | None:
    values = _read_ints(folder / "memory.limit_in_bytes")
    # "No limit" reads as the largest page-aligned int64 (9223372036854771712), or near it.
    return values[0] if values and 0 < values[0] < 2**62 else None
