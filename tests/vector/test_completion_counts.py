"""A worker's finished flag says it finished; its completion count only wakes the main process.

A worker sets its flag, then releases the completion semaphore shared by all workers. If it dies between the two,
its count never comes, and a count can also come late: no wait may hang on a count that is missing, and no step may
read a worker's rows because of a count that is not its own. (The soak found a pool-mode ``recv`` waiting out its
whole timeout after such a death, with the worker's flag set.)
"""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vecspaces.vector import AsyncVectorEnv
from vecspaces.vector._async import worker as worker_module
from vecspaces.vector._async.protocol import Command

from .envs import CountdownEnv, SleepyEnv

pytestmark = pytest.mark.timeout(60)

LONG = functools.partial(CountdownEnv, 1000)


def wait_for_flag(envs: AsyncVectorEnv, w: int) -> None:
    deadline = time.monotonic() + 10
    while not envs._pool.control.finished[w]:
        assert time.monotonic() < deadline, f"worker {w} never finished"
        time.sleep(0.001)


def test_a_pool_mode_wait_whose_count_went_missing_still_returns_the_finished_envs() -> None:
    with AsyncVectorEnv([LONG] * 4, num_workers=2, batch_size=2, context="fork") as envs:
        envs.reset(seed=0)
        for step in (1, 2):
            envs.send(np.array([1, 1]), [2, 3])
            wait_for_flag(envs, 1)
            assert envs._pool.completions.acquire(timeout=10)  # worker 1's count is gone: only its flag is left
            obs, _, _, _, _, env_ids = envs.recv(timeout=5)
            assert env_ids.tolist() == [2, 3]
            assert obs[:, 0].tolist() == [step, step]
        envs.send(np.array([2, 2, 2, 2]), [0, 1, 2, 3])  # and the pool goes on
        received = sorted(envs.recv(timeout=5)[-1].tolist() + envs.recv(timeout=5)[-1].tolist())
        assert received == [0, 1, 2, 3]


def test_a_count_that_is_not_a_workers_own_does_not_make_a_step_read_its_rows() -> None:
    fns = [LONG, functools.partial(SleepyEnv, 0.3)]
    with AsyncVectorEnv(fns, num_workers=2, context="fork") as envs:
        envs.reset(seed=0)
        for _ in range(2):  # until the workers announced their info layouts and the steps go the quiet way
            envs.step(np.array([1, 1]))
        envs._pool.completions.release()  # e.g. the late count of a worker that died after its flag
        obs, *_ = envs.step(np.array([1, 1]))
        assert obs[:, 0].tolist() == [3, 3]  # not the slow worker's row before its step
        obs, *_ = envs.step(np.array([1, 1]))
        assert obs[:, 0].tolist() == [4, 4]


def die_between_flag_and_count_once(marker: Path, when: Command) -> Any:
    """A ``_Worker.finish`` with which worker 1's first command ``when`` sets its flag, then the worker dies."""
    original = worker_module._Worker.finish

    def finish(self: Any, reply: Any, command: Command, arguments: Any) -> None:
        if self.index == 1 and command is when and not marker.exists():
            marker.touch()
            self.control.has_reply[self.index] = 0
            self.control.finished[self.index] = 1
            os._exit(1)
        original(self, reply, command, arguments)

    return finish


def test_a_worker_dying_between_its_flag_and_its_count_leaves_no_wait_without_a_count(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    dying = die_between_flag_and_count_once(tmp_path / "died", Command.STEP_SELECTED)
    monkeypatch.setattr(worker_module._Worker, "finish", dying)
    with AsyncVectorEnv([LONG] * 4, num_workers=2, batch_size=2, restart_workers=True, context="fork") as envs:
        envs.reset(seed=0)
        counts = [0, 0, 0, 0]
        ended: set[int] = set()  # the next step of these is the reset step (NEXT_STEP autoreset)
        for _ in range(10):
            envs.send(np.ones(4, dtype=np.int64), [0, 1, 2, 3])
            for _ in range(2):  # every env back before the next send: each worker is waited for
                obs, _, _, truncations, infos, env_ids = envs.recv(timeout=5)
                for position, i in enumerate(env_ids.tolist()):
                    restarted = bool(infos.get("worker_restarted", np.zeros(2, bool))[position])
                    assert truncations[position] == restarted
                    counts[i] = 0 if restarted or i in ended else counts[i] + 1
                    ended ^= {i} if restarted or i in ended else set()
                    assert obs[position, 0] == counts[i], f"env {i}"
        assert (tmp_path / "died").exists() and envs.restarts == 1


def test_after_such_a_death_in_a_step_the_account_of_counts_is_right_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The count owed for the dead worker's flag never comes: it is forgiven before the next step is given, while
    # no worker runs, so no later wait can take another worker's count for it.
    dying = die_between_flag_and_count_once(tmp_path / "died", Command.STEP)
    monkeypatch.setattr(worker_module._Worker, "finish", dying)
    with AsyncVectorEnv([LONG] * 4, num_workers=2, restart_workers=True, context="fork") as envs:
        envs.reset(seed=0)
        for _ in range(6):
            envs.step(np.ones(4, dtype=np.int64))
        pool = envs._pool
        assert envs.restarts == 1
        assert pool.inflight.owed == 0  # nothing owed after the last step...
        assert pool.completions.get_value() == 0  # ... and no count left over
