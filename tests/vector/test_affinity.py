"""Pinning workers to CPUs (``pin_workers``)."""

from __future__ import annotations

import functools
import os

import numpy as np
import psutil
import pytest

from tests.vector.envs import CountdownEnv, FaultyEnv
from vecspaces.error import InvalidTypeError
from vecspaces.vector import AsyncVectorEnv
from vecspaces.vector._async import options

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="CPU affinity is a Linux feature"),
]
ALLOWED = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []


def worker_cpus(envs: AsyncVectorEnv) -> list[list[int]]:
    return [sorted(psutil.Process(info["pid"]).cpu_affinity()) for info in envs.worker_info()]


def test_by_default_workers_are_not_pinned_even_one_per_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {2, 5, 7})
    assert options.worker_cpus(None, 3) == [None] * 3
    assert options.worker_cpus(None, 2) == [None, None]


def test_a_default_pool_with_one_worker_per_cpu_leaves_them_free_to_move() -> None:
    with AsyncVectorEnv([CountdownEnv] * len(ALLOWED), num_workers=len(ALLOWED)) as envs:
        assert worker_cpus(envs) == [ALLOWED] * len(ALLOWED)


def test_pin_true_goes_round_the_allowed_cpus_and_false_never_pins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {2, 5})
    assert options.worker_cpus(True, 3) == [2, 5, 2]
    assert options.worker_cpus(False, 2) == [None, None]


def test_pinned_workers_run_on_their_cpus_and_the_main_process_stays_free() -> None:
    with AsyncVectorEnv([CountdownEnv] * 3, num_workers=3, pin_workers=True) as envs:
        envs.reset(seed=0)
        envs.step(np.zeros(3, dtype=np.int64))
        assert worker_cpus(envs) == [[ALLOWED[w % len(ALLOWED)]] for w in range(3)]
    assert sorted(os.sched_getaffinity(0)) == ALLOWED


def test_unpinned_workers_may_run_anywhere_the_main_process_may() -> None:
    with AsyncVectorEnv([CountdownEnv] * 2, num_workers=2, pin_workers=False) as envs:
        assert worker_cpus(envs) == [ALLOWED, ALLOWED]


def test_a_restarted_worker_is_pinned_like_the_one_it_replaces() -> None:
    fns = [CountdownEnv, functools.partial(FaultyEnv, "exit", 1, 0.0, 100)]
    with AsyncVectorEnv(fns, num_workers=2, pin_workers=True, restart_workers=True) as envs:
        envs.reset(seed=0)
        before = worker_cpus(envs)
        envs.step(np.zeros(2, dtype=np.int64))
        assert envs.restarts == 1
        assert worker_cpus(envs) == before == [[ALLOWED[0]], [ALLOWED[1 % len(ALLOWED)]]]


def test_pin_workers_must_be_none_or_a_bool() -> None:
    with pytest.raises(InvalidTypeError, match=r"pin_workers is invalid, expected None, True or False, got 'yes'"):
        AsyncVectorEnv([CountdownEnv] * 2, pin_workers="yes")  # type: ignore[arg-type]
