"""Shared memory larger than the machine could ever give is refused at once, with its size, before allocating."""

from __future__ import annotations

from typing import Any

import numpy as np
import psutil
import pytest

from vecspaces.env import Env
from vecspaces.error import InvalidValueError
from vecspaces.spaces import Box, Discrete
from vecspaces.vector import AsyncVectorEnv
from vecspaces.vector.utils import create_shared_memory

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
