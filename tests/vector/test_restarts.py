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

from .envs import CountdownEnv, FaultyEnv, SlowToBuildEnv

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
        # NEXT_STEP: the step after a truncation is the reset step, for a restart as for any truncation.
        obs, rewards, _, truncations, _ = envs.step(ONES)
        assert obs[:, 0].tolist() == [0, 0, 2, 2] and rewards.tolist() == [0, 0, 1, 1] and not truncations.any()
        obs = envs.step(ONES)[0]
        assert obs[:, 0].tolist() == [1, 1, 3, 3]


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


@pytest.mark.timeout(30)
def test_ctrl_c_while_a_replacement_builds_its_envs_is_raised_and_the_wait_can_resume(
    context: str, tmp_path: Any
) -> None:
    hang = str(tmp_path / "hang")
    fns = [functools.partial(SlowToBuildEnv, 0.0, None, hang)] * 4
    with AsyncVectorEnv(fns, context=context, num_workers=2, restart_workers=True, timeout=30) as envs:
        envs.reset(seed=0)
        open(hang, "w").close()
        os.kill(envs.worker_info()[0]["pid"], signal.SIGKILL)
        envs._pool.processes[0].join(5)
        envs.step_async(ONES)
        interrupter = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
        interrupter.start()
        with pytest.raises(KeyboardInterrupt):
            envs.step_wait()
        interrupter.join()
        assert envs.restarts == 0  # raised while the replacement was building (it takes 8 s), not after
        os.remove(hang)
        obs, rewards, _, truncations, infos = envs.step_wait()
        assert truncations.tolist() == [True, True, False, False]
        assert infos["worker_restarted"][:2].tolist() == [True, True]
        assert obs[:, 0].tolist() == [0, 0, 1, 1] and rewards.tolist() == [0, 0, 1, 1]
        assert envs.restarts == 1  # the interrupted replacement was stopped, not counted


@pytest.mark.parametrize("attempts", [0, -1, 1.5, True])
def test_restart_attempts_must_be_a_positive_int(attempts: Any) -> None:
    with pytest.raises(InvalidValueError, match="restart_attempts"):
        AsyncVectorEnv([SlowToBuildEnv] * 2, restart_attempts=attempts)


@pytest.mark.timeout(60)
def test_pool_mode_delivers_a_finished_step_whose_worker_died_before_it_was_received(context: str) -> None:
    # One worker steps both envs; env 1's first step kills it.
    fns = [functools.partial(CountdownEnv, 100, 0), functools.partial(FaultyEnv, "kill", 1)]
    with AsyncVectorEnv(fns, context=context, num_workers=1, batch_size=2, restart_workers=True) as envs:
        envs.reset(seed=0)
        envs.send(np.array([4]), [0])
        while not envs._pool.control.finished[0]:  # env 0's step is done, not received
            time.sleep(0.001)
        envs.send(np.array([5]), [1])  # the worker dies in env 1's step and is replaced
        obs, rewards, _, truncations, infos, env_ids = envs.recv(timeout=30)
        assert envs.restarts == 1
        rows = {i: position for position, i in enumerate(env_ids.tolist())}
        assert sorted(rows) == [0, 1]
        # Env 0's finished step is delivered as it was, not replaced by the replacement's reset.
        first = rows[0]
        assert obs[first, 0] == 1 and rewards[first] == 4 and not truncations[first]
        assert not infos.get("_worker_restarted", np.zeros(2, bool))[first]
        # Env 1's row is the restart.
        assert obs[rows[1], 0] == 0 and truncations[rows[1]] and infos["worker_restarted"][rows[1]]
        # Env 0 now lives in the new worker: its first result there says so too; env 1 autoresets.
        envs.send(np.array([6, 6]), [0, 1])
        obs, rewards, _, truncations, infos, env_ids = envs.recv(timeout=30)
        rows = {i: position for position, i in enumerate(env_ids.tolist())}
        assert truncations[rows[0]] and infos["worker_restarted"][rows[0]] and obs[rows[0], 0] == 0
        assert not truncations[rows[1]] and obs[rows[1], 0] == 0 and rewards[rows[1]] == 0
