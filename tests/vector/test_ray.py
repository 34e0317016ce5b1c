"""RayVectorEnv beyond the behaviour suite: pool mode, agents that die, hang or raise, placement, arguments.

The behaviour suite (test_behaviour.py) runs on two Ray backends too; the 2-node cluster is in test_ray_cluster.py.
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import numpy as np
import pytest

from tests.helpers import is_running
from tests.vector.envs import (
    CountdownEnv,
    FaultyEnv,
    SleepyEnv,
    assert_first_close_error_raised_after_every_env_closed,
    close_recording_envs,
    failing_factory,
)
from vecspaces.error import (
    AlreadyPendingCallError,
    ClosedEnvironmentError,
    EpisodeEndedError,
    InvalidTypeError,
    InvalidValueError,
    WaitTimeoutError,
    WorkerDiedError,
)
from vecspaces.vector import AutoresetMode, SyncVectorEnv
from vecspaces.vector._async.protocol import RemoteTraceback

pytestmark = [pytest.mark.timeout(90), pytest.mark.usefixtures("ray_cluster")]

# Both transports; the socket one with local pools (forked, for speed), the Ray-call one with agents stepping
# their envs themselves. test_default_settings covers the default forkserver pools.
SETUPS = {
    "socket": {"workers_per_agent": 1, "context": "fork"},
    "ray": {"workers_per_agent": 0, "transport": "ray"},
}


def make(env_fns: list[Any], setup: str = "socket", **kwargs: Any) -> Any:
    from vecspaces.vector.ray import RayVectorEnv

    return RayVectorEnv(env_fns, **{"num_agents": 2, "timeout": 30, **SETUPS[setup], **kwargs})


def countdowns(count: int, length: int = 3) -> list[Any]:
    return [functools.partial(CountdownEnv, length, label) for label in range(count)]


def agent_pid(envs: Any, index: int) -> int:
    import ray

    return int(ray.get(envs._crew.agents[index].actor.ping.remote()))


def our_pids(envs: Any) -> list[int]:
    """The agents' processes and their workers'."""
    return [agent_pid(envs, k) for k in range(len(envs._crew.agents))] + [w["pid"] for w in envs.worker_info()]


def assert_all_gone(pids: list[int]) -> None:
    deadline = time.monotonic() + 10
    alive = pids
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in alive if is_running(pid)]
        time.sleep(0.05)
    assert not alive, f"processes left behind: {alive}"


def test_importing_vecspaces_does_not_import_ray() -> None:
    code = "import sys, vecspaces, vecspaces.vector, vecspaces.spaces; print('ray' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_ray_started_here_is_shut_down_by_close_and_by_a_failed_constructor() -> None:
    code = """
import ray
from vecspaces.envs import TinyEnv
from vecspaces.error import InvalidValueError
from vecspaces.vector.ray import RayVectorEnv
try:
    RayVectorEnv([TinyEnv] * 2, num_agents=3)
except InvalidValueError:
    print("refused", ray.is_initialized())
with RayVectorEnv([TinyEnv] * 2, workers_per_agent=0) as envs:
    envs.reset(seed=0)
    print("running", ray.is_initialized())
print("closed", ray.is_initialized())
"""
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    try:  # within the test's own timeout, so that a stall shows what the script printed
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=75, env=env)
    except subprocess.TimeoutExpired as stalled:
        pytest.fail(f"the script took over 75 s; it printed {stalled.stdout!r}, {stalled.stderr!r}")
    assert result.stdout.split() == ["refused", "False", "running", "True", "closed", "False"], result.stderr


def test_default_settings_match_sync_and_describe_their_workers() -> None:
    from vecspaces.vector.ray import RayVectorEnv

    sync = SyncVectorEnv(countdowns(4, length=3))
    with RayVectorEnv(countdowns(4, length=3), timeout=30) as envs:  # one agent per node, forkserver pool
        assert len(envs._crew.agents) == 1
        assert [o.tolist() for o in (envs.reset(seed=3)[0], sync.reset(seed=3)[0])] == [[[0]] * 4] * 2
        for action in [1, 2, 3, 4]:
            ours, theirs = envs.step(np.full(4, action)), sync.step(np.full(4, action))
            for mine, reference in zip(ours[:4], theirs[:4], strict=True):
                np.testing.assert_array_equal(mine, reference)
            assert ours[4].keys() == theirs[4].keys()
            for key in ours[4]:
                np.testing.assert_array_equal(ours[4][key], theirs[4][key])
        workers = envs.worker_info()
        # The agent has the node's 2 CPUs: it steps half of its envs itself (worker -1) and one worker the rest.
        assert [(w["worker"], w["envs"]) for w in workers] == [(-1, [0, 1]), (0, [2, 3])]
        assert workers[0]["pid"] == envs._crew.agents[0].description.pid != workers[1]["pid"]
        assert all(w["alive"] and w["agent"] == 0 and w["node_id"] and w["address"] for w in workers)
        pids = our_pids(envs)
    assert_all_gone(pids)


@pytest.mark.parametrize("agents", [1, 2])
def test_agents_on_this_node_return_observations_through_shared_memory(agents: int) -> None:
    from vecspaces.envs import AtariEnv
    from vecspaces.vector.ray import RayVectorEnv

    sync = SyncVectorEnv([AtariEnv] * 4)
    with RayVectorEnv([AtariEnv] * 4, num_agents=agents, timeout=30) as envs:
        links = [agent.link for agent in envs._crew.agents]
        assert all(link.block is not None for link in links)
        assert not any(os.path.exists(link.block.path) for link in links)  # named only until the agents mapped it
        np.testing.assert_array_equal(envs.reset(seed=3)[0], sync.reset(seed=3)[0])
        held = []
        for action in range(6):
            ours, theirs = envs.step(np.full(4, action)), sync.step(np.full(4, action))
            for mine, reference in zip(ours[:4], theirs[:4], strict=True):
                np.testing.assert_array_equal(mine, reference)
            held.append((ours[0], theirs[0].copy()))
        for mine, reference in held:  # each step's observations stay the caller's: later steps leave them alone
            np.testing.assert_array_equal(mine, reference)


def test_a_shared_block_that_does_not_fit_in_dev_shm_is_refused_up_front_and_leaves_no_file() -> None:
    from vecspaces.vector.ray.shared_block import SharedBlock

    before = set(os.listdir("/dev/shm"))
    stats = os.statvfs("/dev/shm")
    assert SharedBlock.create(stats.f_bavail * stats.f_frsize + 2**30) is None  # then steps take the socket
    assert set(os.listdir("/dev/shm")) == before


@pytest.mark.parametrize(
    ("setup", "agents"),
    [("socket", 2), ("ray", 2), ("socket", None)],  # None: one agent, stepping 2 envs itself beside a worker
)
def test_pool_mode_returns_the_first_finished_envs_with_their_results(setup: str, agents: int | None) -> None:
    sync = SyncVectorEnv(countdowns(5, length=4))
    pool = {} if agents else {"workers_per_agent": None}
    with make(countdowns(5, length=4), setup, num_agents=agents, batch_size=2, **pool) as envs:
        if agents is None:
            assert [w["envs"] for w in envs.worker_info()] == [[0, 1], [2, 3, 4]]
        envs.reset(seed=0)
        sync.reset(seed=0)
        envs.send(np.arange(5))
        seen = []
        for _ in range(3):  # 2 + 2 + 1
            obs, rewards, _, _, infos, env_ids = envs.recv()
            assert len(env_ids) <= 2 and obs.shape == (len(env_ids), 1)
            np.testing.assert_array_equal(rewards, env_ids)  # reward = action = env id
            np.testing.assert_array_equal(obs[:, 0], 1)
            np.testing.assert_array_equal(infos["label"], env_ids)
            seen += env_ids.tolist()
        assert sorted(seen) == [0, 1, 2, 3, 4]
        # A second round for some envs only, in a scrambled order.
        envs.send(np.array([7, 9]), [4, 1])
        obs, rewards, *_, env_ids = envs.recv()
        assert sorted(zip(env_ids.tolist(), rewards.tolist(), strict=True)) == [(1, 9.0), (4, 7.0)]
        np.testing.assert_array_equal(obs[:, 0], 2)


def test_pool_mode_refuses_busy_envs_and_gymnasium_calls_while_envs_step() -> None:
    with make(countdowns(4), batch_size=4) as envs:
        envs.reset()
        envs.send(np.zeros(2, dtype=np.int64), [0, 3])
        with pytest.raises(AlreadyPendingCallError, match=r"envs \[0\]"):
            envs.send(np.zeros(1, dtype=np.int64), [0])
        with pytest.raises(AlreadyPendingCallError, match="pool mode"):
            envs.step(np.zeros(4, dtype=np.int64))
        with pytest.raises(InvalidValueError, match="env_ids"):
            envs.send(np.zeros(2, dtype=np.int64), [1, 1])
        assert sorted(envs.recv()[-1].tolist()) == [0, 3]
        envs.step(np.zeros(4, dtype=np.int64))  # pool mode over: Gymnasium's calls work again


@pytest.mark.parametrize("setup", list(SETUPS))
def test_an_env_error_names_its_env_and_agent_and_leaves_the_env_usable(setup: str) -> None:
    fns = [*countdowns(3, length=100), functools.partial(FaultyEnv, "raise", at_step=2)]
    with make(fns, setup) as envs:
        envs.reset(seed=0)
        envs.step(np.zeros(4, dtype=np.int64))
        with pytest.raises(KeyError, match="missing-key") as caught:
            envs.step(np.zeros(4, dtype=np.int64))
        notes = getattr(caught.value, "__notes__", [])
        assert "raised by env 3 during step" in notes and any("on agent 1, node" in note for note in notes)
        assert isinstance(caught.value.__cause__, RemoteTraceback)
        assert "env 3" in str(caught.value.__cause__)
        obs, *_ = envs.step(np.zeros(4, dtype=np.int64))
        np.testing.assert_array_equal(obs[:3, 0], 3)


def test_a_failing_factory_is_raised_with_its_agent() -> None:
    with pytest.raises(RuntimeError, match="factory exploded") as caught:
        make([*countdowns(1), failing_factory])
    assert any("agent 1" in note for note in getattr(caught.value, "__notes__", []))


@pytest.mark.parametrize("setup", list(SETUPS))
def test_an_agent_killed_mid_step_is_a_worker_died_error_and_breaks_the_env(setup: str) -> None:
    envs = make([functools.partial(SleepyEnv, 0.3)] * 4, setup)
    envs.reset()
    pids = our_pids(envs)
    victim = agent_pid(envs, 1)  # asked first: an agent stepping its envs itself answers Ray's calls after the step
    envs.step_async(np.zeros(4, dtype=np.int64))
    os.kill(victim, signal.SIGKILL)
    with pytest.raises(WorkerDiedError, match=r"agent 1, node \w+ .*envs 2-3.* died during step"):
        envs.step_wait()
    with pytest.raises(WorkerDiedError, match="broken"):
        envs.step(np.zeros(4, dtype=np.int64))
    envs.close()
    assert_all_gone(pids)


def test_an_agent_killed_while_idle_is_noticed_at_the_next_step() -> None:
    with make(countdowns(4, length=100)) as envs:
        envs.reset()
        os.kill(agent_pid(envs, 0), signal.SIGKILL)
        time.sleep(0.2)
        with pytest.raises(WorkerDiedError, match="agent 0"):
            envs.step(np.zeros(4, dtype=np.int64))


@pytest.mark.parametrize("setup", list(SETUPS))
def test_a_dead_agent_is_replaced_and_its_envs_report_the_restart(setup: str) -> None:
    with make(countdowns(4, length=100), setup, restart_agents=True) as envs:
        envs.reset(seed=0)
        for _ in range(3):
            envs.step(np.ones(4, dtype=np.int64))
        os.kill(agent_pid(envs, 1), signal.SIGKILL)
        obs, rewards, _, truncations, infos = envs.step(np.ones(4, dtype=np.int64))
        assert envs.restarts == 1
        assert obs[:, 0].tolist() == [4, 4, 0, 0]  # the replacement's envs start a new episode
        assert truncations.tolist() == [False, False, True, True]
        assert rewards.tolist() == [1.0, 1.0, 0.0, 0.0]
        assert infos["_worker_restarted"].tolist() == [False, False, True, True]
        obs, *_ = envs.step(np.ones(4, dtype=np.int64))  # NEXT_STEP: the truncated envs are reset
        assert obs[:, 0].tolist() == [5, 5, 0, 0]
        obs, *_ = envs.step(np.ones(4, dtype=np.int64))
        assert obs[:, 0].tolist() == [6, 6, 1, 1]


def test_the_worker_beside_an_agent_stepping_envs_itself_is_replaced_by_the_agents_pool() -> None:
    ones = np.ones(4, dtype=np.int64)
    with make(countdowns(4, length=100), num_agents=None, workers_per_agent=None, restart_agents=True) as envs:
        envs.reset(seed=0)
        workers = envs.worker_info()
        assert [(w["worker"], w["envs"]) for w in workers] == [(-1, [0, 1]), (0, [2, 3])]
        for _ in range(3):
            envs.step(ones)
        os.kill(workers[1]["pid"], signal.SIGKILL)
        obs, _, _, truncations, infos = envs.step(ones)
        assert envs.restarts == 0  # the agent lives on: its local pool replaced the worker
        assert obs[:, 0].tolist() == [4, 4, 0, 0]
        assert truncations.tolist() == [False, False, True, True]
        assert infos["_worker_restarted"].tolist() == [False, False, True, True]
        envs.step(ones)  # NEXT_STEP: the truncated envs are reset
        envs.send(ones)
        received = []
        while len(received) < 4:
            obs, *_, env_ids = envs.recv()
            received += env_ids.tolist()
            assert obs[:, 0].tolist() == [6 if i < 2 else 1 for i in env_ids.tolist()]
        assert sorted(received) == [0, 1, 2, 3]


def test_with_autoreset_disabled_a_restarted_env_must_be_reset_before_its_next_step() -> None:
    with make(countdowns(4, length=100), restart_agents=True, autoreset_mode=AutoresetMode.DISABLED) as envs:
        envs.reset(seed=0)
        envs.step(np.ones(4, dtype=np.int64))
        os.kill(agent_pid(envs, 1), signal.SIGKILL)
        _, _, terminations, truncations, _ = envs.step(np.ones(4, dtype=np.int64))
        assert truncations.tolist() == [False, False, True, True]
        with pytest.raises(EpisodeEndedError, match="env 2 was stepped after its episode ended"):
            envs.step(np.ones(4, dtype=np.int64))  # refused before anything is sent, as after any truncation
        with pytest.raises(EpisodeEndedError, match="env 3"):
            envs.send(np.ones(1, dtype=np.int64), [3])
        envs.reset(options={"reset_mask": terminations | truncations})
        obs, *_ = envs.step(np.ones(4, dtype=np.int64))
        assert obs[:, 0].tolist() == [3, 3, 1, 1]


def test_a_restart_in_pool_mode_reports_each_env_of_the_dead_agent_once() -> None:
    with make(countdowns(4, length=100), restart_agents=True, batch_size=4) as envs:
        envs.reset(seed=0)
        envs.send(np.ones(4, dtype=np.int64))
        envs.recv()
        os.kill(agent_pid(envs, 1), signal.SIGKILL)
        envs.send(np.ones(2, dtype=np.int64), [0, 2])  # env 3, idle, is reported at its next step
        obs, _, _, truncations, _, env_ids = envs.recv()
        rows = dict(zip(env_ids.tolist(), zip(obs[:, 0].tolist(), truncations.tolist(), strict=True), strict=True))
        assert rows == {0: (2, False), 2: (0, True)}
        envs.send(np.ones(2, dtype=np.int64), [3, 2])
        obs, _, _, truncations, _, env_ids = envs.recv()
        rows = dict(zip(env_ids.tolist(), zip(obs[:, 0].tolist(), truncations.tolist(), strict=True), strict=True))
        assert rows == {3: (0, True), 2: (0, False)}  # env 2: the reset step after its truncation


def test_a_hung_env_times_out_and_the_late_results_are_collected() -> None:
    with make([functools.partial(FaultyEnv, "sleep", at_step=1, seconds=1.0), *countdowns(1, 100)]) as envs:
        envs.reset()
        envs.step_async(np.zeros(2, dtype=np.int64))
        with pytest.raises(WaitTimeoutError, match="still pending") as caught:
            envs.step_wait(timeout=0.2)
        assert isinstance(caught.value, TimeoutError)
        with pytest.raises(AlreadyPendingCallError, match="step is pending"):
            envs.reset()
        obs, *_ = envs.step_wait(timeout=30)
        assert obs[:, 0].tolist() == [1, 1]


def test_close_while_a_step_is_pending_is_prompt_and_leaves_nothing_behind() -> None:
    envs = make([functools.partial(SleepyEnv, 20.0)] * 2)
    pids = our_pids(envs)
    envs.step_async(np.zeros(2, dtype=np.int64))
    started = time.monotonic()
    with pytest.warns(UserWarning, match="while a step is pending"):
        envs.close(timeout=0.5)
    assert time.monotonic() - started < 10  # not the 20 s the envs sleep
    assert_all_gone(pids)
    with pytest.raises(ClosedEnvironmentError):
        envs.step(np.zeros(2, dtype=np.int64))


@pytest.mark.parametrize("setup", list(SETUPS))
def test_every_env_is_closed_and_the_first_close_error_reaches_the_caller(setup: str, tmp_path: Any) -> None:
    envs = make(close_recording_envs(str(tmp_path)), setup)  # envs 1 and 2 raise, one in each agent
    envs.reset(seed=0)
    pids = our_pids(envs)
    assert_first_close_error_raised_after_every_env_closed(envs, str(tmp_path))
    assert_all_gone(pids)


class Stop(Exception):
    """What a SIGINT handler of the user's raises."""


def raise_stop(signum: int, frame: Any) -> None:
    raise Stop


@pytest.mark.parametrize("handler", [None, raise_stop], ids=["ctrl_c", "own_handler"])
def test_ctrl_c_during_a_wait_abandons_the_call_and_the_env_stays_usable(handler: Any) -> None:
    expected = KeyboardInterrupt if handler is None else Stop
    previous = signal.getsignal(signal.SIGINT)
    if handler is not None:
        signal.signal(signal.SIGINT, handler)
    try:
        with make([functools.partial(SleepyEnv, 0.6)] * 2) as envs:
            envs.reset()
            timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
            timer.start()
            started = time.monotonic()
            with pytest.raises(expected):
                envs.step(np.zeros(2, dtype=np.int64))
            assert time.monotonic() - started < 0.55  # raised within a wait slice, not at the end of the step
            timer.join()
            obs, *_ = envs.step(np.zeros(2, dtype=np.int64))  # the abandoned step is collected and dropped first
            assert obs[:, 0].tolist() == [2, 2]
    finally:
        signal.signal(signal.SIGINT, previous)


def test_bad_actions_are_refused_before_anything_is_sent() -> None:
    with make(countdowns(4, length=100)) as envs:
        envs.reset()
        with pytest.raises(InvalidValueError, match="actions"):
            envs.step(np.zeros(3, dtype=np.int64))
        with pytest.raises(InvalidValueError):
            envs.step([0, 1, 2.5, 0])
        obs, rewards, *_ = envs.step([0, 1, 2, 3])  # a list converts exactly
        assert obs[:, 0].tolist() == [1, 1, 1, 1] and rewards.tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("arguments", "error", "match"),
    [
        ({"transport": "carrier-pigeon"}, InvalidValueError, "transport"),
        ({"num_agents": 0}, InvalidValueError, "num_agents"),
        ({"num_agents": 5}, InvalidValueError, r"\[1, 4\]"),
        ({"num_agents": 1.5}, InvalidTypeError, "num_agents"),
        ({"num_agents": 2, "envs_per_agent": 2}, InvalidValueError, "at most one"),
        ({"workers_per_agent": -1}, InvalidValueError, "workers_per_agent"),
        ({"cpus_per_agent": 0}, InvalidValueError, "cpus_per_agent"),
        ({"placement": "everywhere"}, InvalidValueError, "placement"),
        ({"placement": ["no-such-node"]}, InvalidValueError, "not alive"),
        ({"context": "forky"}, InvalidValueError, "context is invalid, expected None or one of 'fork'"),
        ({"timeout": -1}, InvalidValueError, "timeout is invalid, expected a number of seconds >= 0"),
        ({"startup_timeout": "2"}, InvalidTypeError, "startup_timeout is not a number"),
    ],
)
def test_bad_arguments_are_refused_with_what_was_expected(
    arguments: dict[str, Any], error: type[Exception], match: str
) -> None:
    from vecspaces.vector.ray import RayVectorEnv

    with pytest.raises(error, match=match):
        RayVectorEnv(countdowns(4), **arguments)


def test_envs_per_agent_and_placement_on_this_node() -> None:
    import ray

    node = ray.get_runtime_context().get_node_id()
    with make(countdowns(5), envs_per_agent=2, num_agents=None, placement=[node]) as envs:
        assert [len(agent.envs) for agent in envs._crew.agents] == [2, 1, 2]
        assert {w["node_id"] for w in envs.worker_info()} == {node}
        assert envs.reset(seed=0)[0].shape == (5, 1)


def test_gymnasium_envs_give_gymnasium_types_and_match_gymnasium() -> None:
    import gymnasium as gym

    from vecspaces.vector.ray import RayVectorEnv

    def cartpole() -> Any:
        return gym.make("CartPole-v1")

    reference = gym.vector.SyncVectorEnv([cartpole] * 4)
    with RayVectorEnv([cartpole] * 4, num_agents=2, timeout=30) as envs:
        assert isinstance(envs, gym.vector.VectorEnv)
        assert isinstance(envs.single_action_space, gym.spaces.Discrete)
        assert envs.metadata["autoreset_mode"] is envs.autoreset_mode is gym.vector.AutoresetMode.NEXT_STEP
        wrapped = gym.wrappers.vector.RecordEpisodeStatistics(envs)
        np.testing.assert_array_equal(wrapped.reset(seed=42)[0], reference.reset(seed=42)[0])
        for _ in range(60):  # through episode ends and autoresets
            ours, theirs = wrapped.step(np.ones(4, dtype=np.int64)), reference.step(np.ones(4, dtype=np.int64))
            for mine, expected in zip(ours[:4], theirs[:4], strict=True):
                np.testing.assert_array_equal(mine, expected)
        assert "episode" in ours[4]  # the wrapper saw the episodes end


def test_each_space_shows_the_library_the_envs_space_is_of() -> None:
    import gymnasium as gym

    from tests.test_real_clients import SwappedSpacesEnv
    from vecspaces.spaces import Graph
    from vecspaces.vector.utils import batch_space

    # The agents report what their local envs show: a Gymnasium-facing env, vecspaces observations (the env's
    # module swapped them) and Gymnasium actions.
    with make([SwappedSpacesEnv] * 2) as envs:
        assert isinstance(envs, gym.vector.VectorEnv)
        assert isinstance(envs.single_observation_space, Graph)
        assert envs.observation_space == batch_space(SwappedSpacesEnv().observation_space, 2)
        assert isinstance(envs.single_action_space, gym.spaces.Discrete)
        assert isinstance(envs.action_space, gym.spaces.MultiDiscrete)
        observations, _ = envs.reset(seed=0)
        assert observations in envs.observation_space
