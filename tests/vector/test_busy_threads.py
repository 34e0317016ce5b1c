"""The pool warns, once, when other threads of the main process keep a core busy while it waits for the workers."""

from __future__ import annotations

import functools
import threading
import warnings
from collections.abc import Iterator

import numpy as np
import pytest

from tests.helpers import assert_same_value
from tests.vector.envs import CountdownEnv, SleepyEnv
from vecspaces.error import NoAsyncCallError, PerformanceWarning
from vecspaces.vector import AsyncVectorEnv, SyncVectorEnv
from vecspaces.vector._async import busy_threads

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def short_verdicts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(busy_threads, "WATCH_SECONDS", 0.3)
    monkeypatch.setattr(busy_threads, "SAMPLE_EVERY", 1)


@pytest.fixture
def spinning_thread() -> Iterator[None]:
    """A thread of this process that burns a core, as an idle BLAS thread pool does."""
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            pass

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    yield
    stop.set()
    thread.join()


def step_for_a_while() -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env_fns = [functools.partial(SleepyEnv, 0.01)] * 2
        with AsyncVectorEnv(env_fns, num_workers=2, spin_seconds=0, context="fork") as envs:
            envs.reset(seed=0)
            for _ in range(60):  # each step blocks about 10 ms
                envs.step(np.zeros(2, np.int64))
    return [warning for warning in caught if issubclass(warning.category, PerformanceWarning)]


def test_a_thread_burning_a_core_during_the_waits_is_warned_of_once_with_the_fix(spinning_thread: None) -> None:
    warned = step_for_a_while()
    assert len(warned) == 1
    text = str(warned[0].message)
    assert "other threads of this process kept" in text and "torch.set_num_threads(1)" in text
    assert warned[0].filename == __file__  # pointed at the caller's step, not at vecspaces


def test_no_warning_without_busy_threads() -> None:
    assert step_for_a_while() == []


def test_where_warnings_are_errors_the_warning_ends_a_finished_call_and_the_pool_stays_whole(
    spinning_thread: None,
) -> None:
    # pytest's `filterwarnings = error` or `python -W error`: raised in the middle of a wait, the warning lost a
    # completion the pool had taken, and every later step waited a whole blocking slice for it.
    env_fns = [functools.partial(SleepyEnv, 0.01)] * 2
    reference = SyncVectorEnv([functools.partial(CountdownEnv, 1000)] * 2)
    reference.reset(seed=0)
    actions = np.ones(2, np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerformanceWarning)
        with AsyncVectorEnv(env_fns, num_workers=2, spin_seconds=0, context="fork") as envs:
            envs.reset(seed=0)
            for _ in range(200):
                reference.step(actions)
                try:
                    envs.step(actions)
                except PerformanceWarning:
                    break
            else:
                pytest.fail("no PerformanceWarning")
            with pytest.raises(NoAsyncCallError):
                envs.step_wait()  # the step that warned had ended: nothing is left pending
            for _ in range(3):
                expected, *_ = reference.step(actions)
                observations, *_ = envs.step(actions)
                assert_same_value(observations, expected)
            assert envs._pool.inflight.owed == 0
