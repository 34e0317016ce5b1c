"""Float actions for a float Box reach each env in the float dtype the caller gave, in every backend, as in
Gymnasium (which hands each env its row of the caller's array): float64 actions for a float32 Box give an env
computing with them the trajectory they give under Gymnasium."""

from __future__ import annotations

import functools
import multiprocessing
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tests.helpers import assert_same_value
from vecspaces.env import Env
from vecspaces.spaces import Box, Dict, Discrete, Sequence, Space
from vecspaces.vector import AsyncVectorEnv, SyncVectorEnv

pytestmark = pytest.mark.timeout(120)

CONTEXT = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
N = 4

# A Dict of float Boxes of each dtype, beside leaves that keep the space's dtype (Discrete) or go by pipe.
MIXED = Dict(
    {
        "force": Box(-1, 1, (2,), np.float32),
        "fine": Box(-1, 1, (), np.float64),
        "half": Box(-1, 1, (1,), np.float16),
        "gear": Discrete(3),
    }
)
PIPED = Dict({"force": Box(-1, 1, (2,), np.float32), "bag": Sequence(Discrete(3))})


class RecordingEnv(Env[Any, Any]):
    """Keeps every action it gets; its observation is a number computed in the action's own dtype."""

    observation_space = Box(-np.inf, np.inf, (), np.float64)

    def __init__(self, action_space: Space[Any]) -> None:
        self.action_space = action_space
        self.received: list[Any] = []

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        return np.float64(0.0), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self.received.append(action)
        force = action["force"] if isinstance(action, dict) else action
        # In the action's dtype, as an env's arithmetic is: float32 and float64 give other results.
        return np.float64(np.sum(force * np.asarray(1 / 3, force.dtype))), 0.0, False, False, {}


BACKENDS: dict[str, Callable[[list[Any]], Any]] = {
    "sync": SyncVectorEnv,
    "async": functools.partial(AsyncVectorEnv, num_workers=2, context=CONTEXT, timeout=30),
    "async main process": functools.partial(
        AsyncVectorEnv, num_workers=1, main_process_envs=1, context=CONTEXT, timeout=30
    ),
    "async pipes": functools.partial(AsyncVectorEnv, shared_memory=False, num_workers=2, context=CONTEXT, timeout=30),
}


def received(envs: Any) -> list[list[Any]]:
    return envs.get_attr("received")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_a_float_box_action_reaches_the_env_in_the_dtype_given(backend: str, dtype: Any) -> None:
    actions = np.random.default_rng(0).uniform(-1, 1, (N, 2)).astype(dtype)
    with BACKENDS[backend]([functools.partial(RecordingEnv, Box(-1, 1, (2,), np.float32))] * N) as envs:
        envs.reset(seed=0)
        observations, *_ = envs.step(actions)
        got = received(envs)
    assert_same_value([actions_of_env[0] for actions_of_env in got], list(actions))
    expected = [np.sum(row * np.asarray(1 / 3, dtype)) for row in actions]
    assert observations.tolist() == [float(value) for value in expected]


@pytest.mark.parametrize("backend", BACKENDS)
def test_lists_of_python_floats_reach_the_env_as_float64_and_other_numbers_as_the_space_dtype(backend: str) -> None:
    with BACKENDS[backend]([functools.partial(RecordingEnv, Box(-1, 1, (2,), np.float32))] * N) as envs:
        envs.reset(seed=0)
        envs.step([[0.1, 0.2]] * N)
        envs.step(np.ones((N, 2), np.int64))  # not floats: cast to the Box's dtype, as before
        envs.step(np.full((N, 2), 0.5, np.float32))
        got = received(envs)
    for actions in got:
        assert [action.dtype for action in actions] == [np.float64, np.float32, np.float32]
        assert actions[0].tolist() == [0.1, 0.2]


@pytest.mark.parametrize("backend", BACKENDS)
def test_each_float_leaf_of_a_dict_keeps_its_own_dtype(backend: str) -> None:
    rng = np.random.default_rng(1)
    batch = {
        "force": rng.uniform(-1, 1, (N, 2)),  # float64 for a float32 leaf
        "fine": rng.uniform(-1, 1, N).astype(np.float32),  # float32 for a float64 leaf
        "half": [[0.5]] * N,  # Python floats for a float16 leaf
        "gear": np.array([0, 1, 2, 1], np.int32),  # cast to the Discrete's int64
    }
    with BACKENDS[backend]([functools.partial(RecordingEnv, MIXED)] * N) as envs:
        envs.reset(seed=0)
        envs.step(batch)
        got = [actions[0] for actions in received(envs)]
    for i, action in enumerate(got):
        assert_same_value(action["force"], batch["force"][i])
        assert_same_value(action["fine"], batch["fine"][i])
        assert_same_value(action["half"], np.array([0.5]))
        assert_same_value(action["gear"], np.int64(batch["gear"][i]))


@pytest.mark.parametrize("backend", ["async", "async main process"])
def test_pool_mode_keeps_each_envs_dtype_when_sends_differ(backend: str) -> None:
    fns = [functools.partial(RecordingEnv, Box(-1, 1, (2,), np.float32))] * N
    with BACKENDS[backend](fns, batch_size=N) as envs:
        envs.reset(seed=0)
        wide, narrow = np.full((2, 2), 0.1), np.full((2, 2), 0.1, np.float32)
        for _ in range(2):  # the same dtype for every env first, then each worker's envs differ
            envs.send(np.concatenate([narrow, narrow]))
            envs.recv()
        envs.send(wide, [0, 2])  # envs 0 and 2 may read their actions after the next send wrote its own
        envs.send(narrow, [1, 3])
        envs.recv()
        envs.send(np.concatenate([narrow, narrow]))  # every env again, after the envs differed
        envs.recv()
        got = received(envs)
    assert [[action.dtype for action in actions] for actions in got] == [
        [np.float32, np.float32, dtype, np.float32] for dtype in (np.float64, np.float32, np.float64, np.float32)
    ]
    assert [actions[2].tolist() for actions in got] == [[0.1, 0.1], narrow[0].tolist()] * 2


def test_actions_with_a_piped_leaf_keep_the_float_dtype() -> None:
    batch = {"force": np.full((N, 2), 0.1), "bag": [(1, 2), (), (0,), (2, 2, 2)]}
    with BACKENDS["async"]([functools.partial(RecordingEnv, PIPED)] * N) as envs:
        envs.reset(seed=0)
        envs.step(batch)
        got = [actions[0] for actions in received(envs)]
    assert [action["force"].dtype for action in got] == [np.float64] * N
    assert [action["bag"] for action in got] == batch["bag"]


def test_pendulum_gives_gymnasiums_trajectory_for_float64_float32_and_list_actions() -> None:
    gym = pytest.importorskip("gymnasium")
    actions = np.random.default_rng(0).uniform(-2, 2, (60, 2, 1))
    forms: dict[str, Callable[[np.ndarray], Any]] = {
        "float64": lambda batch: batch,
        "float32": lambda batch: batch.astype(np.float32),
        "lists": lambda batch: batch.tolist(),
    }
    backends = {"gymnasium": gym.vector.SyncVectorEnv, **BACKENDS}
    for form, express in forms.items():
        records = {}
        for name, backend in backends.items():
            envs = backend([lambda: gym.make("Pendulum-v1")] * 2)  # Gymnasium's has no context manager
            records[name] = [envs.reset(seed=0)[0]]
            records[name] += [envs.step(express(batch))[:2] for batch in actions]
            envs.close()
        for name in BACKENDS:
            assert_same_value(records[name], records["gymnasium"], f"{form} {name}")
