"""What the process may use of the machine: cores (the default worker count) and memory (the shared-memory bound)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import psutil
import pytest

from vecspaces.error import InvalidValueError
from vecspaces.spaces import Box
from vecspaces.vector import _machine
from vecspaces.vector._async import options
from vecspaces.vector.utils import create_shared_memory


def machine(monkeypatch: pytest.MonkeyPatch, physical: int, cpus: int, allowed: set[int] | None = None) -> None:
    """A machine of ``physical`` cores and ``cpus`` logical CPUs, of which this process may use ``allowed`` (all)."""
    monkeypatch.setattr(psutil, "cpu_count", lambda logical=True: cpus if logical else physical)
    allowed = set(range(cpus)) if allowed is None else allowed
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: allowed, raising=False)
    monkeypatch.setattr(_machine, "cgroup_cpu_quota", lambda: None)


@pytest.mark.parametrize(
    ("physical", "logical", "allowed", "expected"),
    [
        (8, 16, None, 8),  # the whole machine: its physical cores
        (8, 16, {0, 1, 2, 3}, 2),  # 4 of 16 logical CPUs (taskset, a Slurm job's cpuset): 2 cores' worth
        (8, 16, {5}, 1),
        (2, 2, {1}, 1),
        (32, 64, set(range(8)), 4),
    ],
)
def test_usable_cores_are_the_physical_cores_within_the_cpu_affinity(
    monkeypatch: pytest.MonkeyPatch, physical: int, logical: int, allowed: set[int] | None, expected: int
) -> None:
    machine(monkeypatch, physical, logical, allowed)
    assert _machine.usable_cores() == expected
    assert options.worker_count(None, 64) == expected
    assert options.worker_count(None, 1) == 1


@pytest.mark.parametrize(("quota", "expected"), [(None, 8), (2.0, 2), (1.5, 2), (0.5, 1), (100.0, 8)])
def test_a_cgroup_cpu_quota_caps_the_usable_cores(
    monkeypatch: pytest.MonkeyPatch, quota: float | None, expected: int
) -> None:
    machine(monkeypatch, 8, 16)
    monkeypatch.setattr(_machine, "cgroup_cpu_quota", lambda: quota)
    assert _machine.usable_cores() == expected


def test_an_unknown_physical_count_falls_back_to_the_logical_one(monkeypatch: pytest.MonkeyPatch) -> None:
    machine(monkeypatch, 0, 4)
    monkeypatch.setattr(psutil, "cpu_count", lambda logical=True: 4 if logical else None)
    assert _machine.usable_cores() == 4


def cgroup_tree(tmp_path: Path, self_cgroup: str, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "self").write_text(self_cgroup)
    return tmp_path


@pytest.mark.parametrize(
    ("self_cgroup", "files", "expected"),
    [
        ("0::/\n", {"cpu.max": "200000 100000\n"}, 2.0),  # cgroup v2 in a container's namespace
        ("0::/\n", {"cpu.max": "max 100000\n"}, None),
        ("0::/\n", {}, None),  # the root cgroup has no cpu.max
        # v2 without a namespace: the tightest limit from the process's cgroup up
        ("0::/kube/pod/c\n", {"kube/pod/cpu.max": "150000 100000", "kube/pod/c/cpu.max": "max 100000"}, 1.5),
        ("0::/a/b\n", {"a/cpu.max": "400000 100000", "a/b/cpu.max": "250000 100000"}, 2.5),
        # v1, with the cpu controller mounted beside cpuacct
        (
            "12:memory:/x\n4:cpu,cpuacct:/docker/x\n",
            {"cpu,cpuacct/docker/x/cpu.cfs_quota_us": "300000\n", "cpu,cpuacct/docker/x/cpu.cfs_period_us": "100000\n"},
            3.0,
        ),
        (
            "4:cpu,cpuacct:/\n",
            {"cpu,cpuacct/cpu.cfs_quota_us": "-1\n", "cpu,cpuacct/cpu.cfs_period_us": "100000\n"},
            None,
        ),
        ("garbage\n0::/\n", {"cpu.max": "not numbers"}, None),
    ],
)
def test_cgroup_cpu_quota_reads_v1_and_v2(
    tmp_path: Path, self_cgroup: str, files: dict[str, str], expected: float | None
) -> None:
    root = cgroup_tree(tmp_path, self_cgroup, files)
    assert _machine.cgroup_cpu_quota(root, root / "self") == expected


def test_no_cgroup_file_means_no_quota(tmp_path: Path) -> None:
    assert _machine.cgroup_cpu_quota(tmp_path, tmp_path / "missing") is None


@pytest.mark.timeout(60)
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="CPU affinity is a Linux feature")
def test_a_process_restricted_to_one_cpu_gets_one_worker() -> None:
    code = """
import os
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
from vecspaces.envs import TinyEnv
from vecspaces.vector import AsyncVectorEnv
with AsyncVectorEnv([TinyEnv] * 4) as envs:
    envs.reset(seed=0)
    print(envs.num_workers, len(envs.worker_info()))
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=50, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1", "1"]


@pytest.mark.parametrize(
    ("self_cgroup", "files", "expected"),
    [
        ("0::/\n", {"memory.max": "2147483648\n"}, 2**31),  # cgroup v2 in a container's namespace: 2 GiB
        ("0::/\n", {"memory.max": "max\n"}, None),
        ("0::/a/b\n", {"a/memory.max": "1073741824", "a/b/memory.max": "max"}, 2**30),
        ("9:memory:/x\n", {"memory/x/memory.limit_in_bytes": "536870912\n"}, 2**29),  # v1
        ("9:memory:/\n", {"memory/memory.limit_in_bytes": "9223372036854771712\n"}, None),  # v1's "no limit"
        ("0::/\n", {}, None),
    ],
)
def test_cgroup_memory_limit_reads_v1_and_v2(
    tmp_path: Path, self_cgroup: str, files: dict[str, str], expected: int | None
) -> None:
    root = cgroup_tree(tmp_path, self_cgroup, files)
    assert _machine.cgroup_memory_limit(root, root / "self") == expected


def test_shared_memory_beyond_the_cgroup_memory_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from vecspaces.vector.utils import shared_layout

    monkeypatch.setattr(shared_layout, "cgroup_memory_limit", lambda: 2**30)  # a container limited to 1 GiB
    monkeypatch.setattr(psutil, "swap_memory", lambda: types.SimpleNamespace(total=0))
    frames = Box(0, 255, (2**10, 2**10), np.uint8)  # 1 MiB each
    assert create_shared_memory(frames, 4).read().shape == (4, *frames.shape)
    expected = "expected at most 1.0 GiB, the memory limit of this process's cgroup (a container's), and swap"
    with pytest.raises(InvalidValueError, match=re.escape(expected)):
        create_shared_memory(frames, 2048)  # 2 GiB
