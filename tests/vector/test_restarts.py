"""Restarting dead workers: every row of a restarted worker's envs says so, and a failing restart gives up."""

from __future__ import annotations

import functools
import os
import signal
import threading
import time
from typing import Any

import numpy as np
import pytest

from vecspaces.error import InvalidValueError, WorkerDiedError
from vecspaces.vector import AsyncVectorEnv

from .envs import SlowToBuildEnv

ONES = np.ones(4, dtype=np.int64)


@pytest.fixture(params=["fork", "forkserver", "spawn"])
def context(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def kill_replacement_while_it_builds(envs: AsyncVectorEnv, old_pid: int) -> threading.Thread:
    """Kill worker 0's replacement as soon as it exists (it is then building its envs)."""

    def watch() -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            process = envs._pool.processes[0]
            if process is not None and process.pid not in (None, old_pid):
                os.kill(process.pid, signal.SIGKILL)
                return
            time.sleep(0.005)

    thread = threading.Thread(target=watch)
    thread.start()
    return thread


@pytest.mark.timeout(60)
def test_a_replacement_killed_while_building_is_replaced_again_and_its_rows_flagged(context: str) -> None:
    fns = [functools.partial(SlowToBuildEnv, 0.4)] * 4
    with AsyncVectorEnv(fns, context=context, num_workers=2, restart_workers=True, timeout=30) as envs:
        envs.reset(seed=0)
        pids = [info["pid"] for info in envs.worker_info()]
        os.kill(pids[0], signal.SIGKILL)
        envs._pool.processes[0].join(5)
        watcher = kill_replacement_while_it_builds(envs, pids[0])
        obs, rewards, _, truncations, infos = envs.step(ONES)
        watcher.join()
        assert truncations.tolist() == [True, True, False, False]
        assert infos["worker_restarted"][:2].tolist() == [True, True]
        assert not infos["_worker_restarted"][2:].any()
        assert obs[:, 0].tolist() == [0, 0, 1, 1] and rewards.tolist() == [0, 0, 1, 1]
        assert envs.restarts == 1  # one replacement succeeded
        assert all(info["alive"] for info in envs.worker_info())
        obs, rewards, _, truncations, _ = envs.step(ONES)
        assert obs[:, 0].tolist() == [1, 1, 2, 2] and not truncations.any()


@pytest.mark.timeout(60)
def test_a_restart_failing_again_and_again_gives_up_and_leaves_the_others_running(context: str, tmp_path: Any) -> None:
    refuse = str(tmp_path / "refuse")
    fns = [functools.partial(SlowToBuildEnv, 0.0, refuse)] * 4
    with AsyncVectorEnv(fns, context=context, num_workers=2, restart_workers=True, timeout=30) as envs:
        envs.reset(seed=0)
        open(refuse, "w").close()
        os.kill(envs.worker_info()[0]["pid"], signal.SIGKILL)
        with pytest.raises(WorkerDiedError, match="failed 3 times in a row") as caught:
            envs.step(ONES)
        assert "refusing to build" in str(caught.value)
        assert "restarting it" not in str(caught.value)
        assert envs.worker_info()[1]["alive"]  # the healthy worker was not stopped
        with pytest.raises(WorkerDiedError, match="broken"):
            envs.step(ONES)


@pytest.mark.timeout(60)
def test_restart_attempts_sets_how_often_a_replacement_may_fail(tmp_path: Any) -> None:
    refuse = str(tmp_path / "refuse")
    fns = [functools.partial(SlowToBuildEnv, 0.0, refuse)] * 2
    with AsyncVectorEnv(fns, num_workers=2, restart_workers=True, restart_attempts=1) as envs:
        envs.reset(seed=0)
        open(refuse, "w").close()
        os.kill(envs.worker_info()[0]["pid"], signal.SIGKILL)
        with pytest.raises(WorkerDiedError, match="its replacement failed once"):
            envs.step(np.ones(2, dtype=np.int64))


@pytest.mark.parametrize("attempts", [0, -1, 1.5, True])
def test_restart_attempts_must_be_a_positive_int(attempts: Any) -> None:
    with pytest.raises(InvalidValueError, match="restart_attempts"):
        AsyncVectorEnv([SlowToBuildEnv] * 2, restart_attempts=attempts)
