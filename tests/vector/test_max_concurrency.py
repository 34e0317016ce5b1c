"""Gymnasium's ``max_concurrency``: at most that many sub-envs in reset or step at once, across workers."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

from tests.vector.envs import FaultyEnv, SleepyEnv
from vecspaces.vector import AsyncVectorEnv

pytestmark = pytest.mark.timeout(60)


def most_at_once(infos: dict[str, Any]) -> int:
    """The largest number of envs whose [started, ended] intervals overlap."""
    events = sorted([(t, 1) for t in infos["started"]] + [(t, -1) for t in infos["ended"]])
    running = most = 0
    for _, change in events:
        running += change
        most = max(most, running)
    return most


@pytest.mark.parametrize("context", ["fork", "spawn"])
@pytest.mark.parametrize("limit", [1, 2])
def test_no_more_envs_than_the_limit_run_at_once(context: str, limit: int) -> None:
    with AsyncVectorEnv([SleepyEnv] * 4, context=context, num_workers=4, max_concurrency=limit) as envs:
        _, infos = envs.reset(seed=0)
        assert most_at_once(infos) <= limit
        for _ in range(2):
            *_, infos = envs.step(np.zeros(4, dtype=np.int64))
            assert most_at_once(infos) <= limit


def test_without_a_limit_the_workers_run_together() -> None:
    with AsyncVectorEnv([SleepyEnv] * 4, num_workers=4) as envs:
        _, infos = envs.reset(seed=0)
        assert most_at_once(infos) >= 2


@pytest.mark.parametrize("value", [0, -1, 2.0, "2", True])
def test_an_invalid_limit_is_a_value_error(value: Any) -> None:
    with pytest.raises(ValueError, match="max_concurrency is invalid"):
        AsyncVectorEnv([SleepyEnv], max_concurrency=value)


def test_a_worker_killed_holding_a_permit_gives_it_back() -> None:
    # With one permit, a permit lost with its worker would leave every other env waiting forever.
    fns = [functools.partial(FaultyEnv, "kill", 2, 0.0, 100), SleepyEnv, SleepyEnv]
    with AsyncVectorEnv(fns, num_workers=3, max_concurrency=1, restart_workers=True) as envs:
        envs.reset(seed=0)
        for _ in range(3):
            envs.step(np.ones(3, dtype=np.int64))
        assert envs.restarts == 1
        assert envs._control.permits.tolist() == [0, 0, 0, 0]
