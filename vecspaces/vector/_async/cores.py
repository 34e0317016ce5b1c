"""How many cores this process may use: the default worker count's ceiling.

The machine's physical cores are not what a process gets on a shared machine. A Slurm job, ``taskset`` or a
container's cpuset restricts the CPUs it may run on (its CPU affinity), and a container's CPU limit (Docker's
``--cpus``, a Kubernetes limit: the cgroup's CPU quota) caps the CPU time it may use, while psutil still
counts every core of the host. One worker per host core there means many more busy workers than cores.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path

import psutil

__all__ = ["allowed_cpus", "cgroup_cpu_quota", "usable_cores"]

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

    Reads cgroup v2 (``cpu.max`` from the process's cgroup up to the root) and v1 (``cpu.cfs_quota_us`` over
    ``cpu.cfs_period_us``); anything unreadable counts as no quota.

    Args:
        root: where the cgroup hierarchy is mounted.
        self_cgroup: the file naming the process's cgroups.
    """
    try:
        lines = self_cgroup.read_text().splitlines()
    except OSError:
        lines = []
    quotas: list[float] = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":  # v2: one unified hierarchy
            quotas += _limits(root, path, lambda folder: _v2_quota(folder / "cpu.max"))
        elif "cpu" in controllers.split(","):
            mount = root / controllers
            quotas += _limits(mount, path, _v1_quota)
    return min(quotas) if quotas else None


def _limits(mount: Path, path: str, quota_of: Callable[[Path], float | None]) -> list[float]:
    """The quotas of the cgroup ``path`` under ``mount`` and of its ancestors (a namespaced one is the root)."""
    folder = mount / path.lstrip("/")
    quotas = []
    while True:
        quota = quota_of(folder)
        if quota is not None:
            quotas.append(quota)
        if folder == mount or mount not in folder.parents:
            return quotas
        folder = folder.parent


def _v2_quota(cpu_max: Path) -> float | None:
    try:
        quota, period = cpu_max.read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        return None


def _v1_quota(folder: Path) -> float | None:
    try:
        quota = int((folder / "cpu.cfs_quota_us").read_text())
        period = int((folder / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return quota / period if quota > 0 and period > 0 else None
