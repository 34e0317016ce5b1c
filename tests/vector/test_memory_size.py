"""Shared memory larger than the machine could ever give is refused at once, with its size, before allocating."""

from __future__ import annotations

import multiprocessing.heap
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import pytest

from vecspaces.env import Env
from vecspaces.error import InvalidValueError
from vecspaces.spaces import Box, Discrete
from vecspaces.vector import AsyncVectorEnv
from vecspaces.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory

FRAME = Box(0, 255, (2**12, 2**12), np.uint8)  # 16 MiB


class FrameEnv16MiB(Env[Any, Any]):
    observation_space = FRAME
    action_space = Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        return np.zeros(FRAME.shape, np.uint8), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        return np.zeros(FRAME.shape, np.uint8), 0.0, False, False, {}


def test_create_shared_memory_refuses_a_size_beyond_the_machine() -> None:
    with pytest.raises(InvalidValueError, match=r"too large, expected at most .*, got 256\.0 TiB \(\d+ bytes\)"):
        create_shared_memory(FRAME, 2**24)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("context", ["fork", "forkserver", "spawn"])
def test_an_async_vector_env_too_large_for_the_machine_is_refused_before_any_worker_starts(context: str) -> None:
    memory = psutil.virtual_memory().total + psutil.swap_memory().total
    num_envs = 2 * memory // FRAME.shape[0] ** 2  # twice the machine's memory in observations
    with pytest.raises(InvalidValueError, match=rf"shared memory for {num_envs} envs \(\d observation buffers"):
        AsyncVectorEnv([FrameEnv16MiB] * num_envs, context=context)


def test_a_large_but_possible_size_is_allocated() -> None:
    assert create_shared_memory(FRAME, 4).read().shape == (4, *FRAME.shape)


def small_dev_shm(monkeypatch: pytest.MonkeyPatch, folder: Path, free_bytes: int, temp_free_bytes: int | None) -> None:
    """Make ``folder`` multiprocessing's first choice for shared memory (``/dev/shm`` on Linux), with this much room;
    and the temporary directory too, if given."""
    folder.mkdir()
    monkeypatch.setattr(multiprocessing.heap.Arena, "_dir_candidates", [str(folder)], raising=False)
    real_statvfs = os.statvfs
    temp = tempfile.gettempdir()

    def statvfs(path: Any) -> os.statvfs_result:
        if str(path) == str(folder) or (temp_free_bytes is not None and str(path) == temp):
            blocks = (free_bytes if str(path) == str(folder) else temp_free_bytes) // 4096
            return os.statvfs_result((4096, 4096, blocks, blocks, blocks, 1000, 1000, 1000, 0, 255))
        return real_statvfs(path)

    monkeypatch.setattr(os, "statvfs", statvfs)


def test_memory_dev_shm_has_no_room_for_is_made_in_the_temporary_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A container's /dev/shm (64 MB by default) too small for the batch: multiprocessing puts it in the
    # temporary directory instead, so it is not refused.
    small_dev_shm(monkeypatch, tmp_path / "shm", free_bytes=2**20, temp_free_bytes=None)
    memory = create_shared_memory(FRAME, 2)  # 32 MiB
    frames = np.arange(2 * FRAME.shape[0] ** 2, dtype=np.uint64).astype(np.uint8).reshape(2, *FRAME.shape)
    write_to_shared_memory(FRAME, 1, frames[1], memory)
    assert np.array_equal(read_from_shared_memory(FRAME, memory, 2)[1], frames[1])
    assert not os.listdir(tmp_path / "shm")


def test_memory_neither_dev_shm_nor_the_temporary_directory_has_room_for_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    small_dev_shm(monkeypatch, tmp_path / "shm", free_bytes=2**20, temp_free_bytes=2**21)
    expected = re.escape(f"expected at most 2.0 MiB, the room left in {tmp_path / 'shm'} or {tempfile.gettempdir()}")
    with pytest.raises(InvalidValueError, match=expected):
        create_shared_memory(FRAME, 2)


@pytest.mark.timeout(60)
def test_an_async_vector_env_runs_where_dev_shm_is_too_small_for_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    small_dev_shm(monkeypatch, tmp_path / "shm", free_bytes=2**20, temp_free_bytes=None)
    with AsyncVectorEnv([FrameEnv16MiB] * 2, num_workers=2, context="fork") as envs:
        assert envs.reset(seed=0)[0].shape == (2, *FRAME.shape)
        assert envs.step(np.zeros(2, dtype=np.int64))[0].shape == (2, *FRAME.shape)
