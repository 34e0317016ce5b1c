"""The vector wrapper base classes: everything passes through, subclasses change one part, Gymnasium stacks on top.

Gymnasium's module exports them, so code that swaps ``gymnasium.vector`` for ``vecspaces.vector`` imports them
from here, over vecspaces' own vector envs and over Gymnasium's.
"""

from __future__ import annotations

import functools
import pickle
import subprocess
import sys
from typing import Any

import gymnasium
import numpy as np
import pytest

from tests.helpers import assert_same_value
from vecspaces.envs import TinyEnv
from vecspaces.error import InvalidTypeError, InvalidValueError
from vecspaces.spaces import Box
from vecspaces.vector import (
    AsyncVectorEnv,
    AutoresetMode,
    SyncVectorEnv,
    VectorActionWrapper,
    VectorEnv,
    VectorObservationWrapper,
    VectorRewardWrapper,
    VectorWrapper,
)

pytestmark = pytest.mark.timeout(60)


class Doubled(VectorObservationWrapper):  # type: ignore[type-arg]
    def observations(self, observations: Any) -> Any:
        return observations * 2


class Reversed(VectorActionWrapper):  # type: ignore[type-arg]
    def actions(self, actions: Any) -> Any:
        return 1 - actions


class Negated(VectorRewardWrapper):  # type: ignore[type-arg]
    def rewards(self, rewards: Any) -> Any:
        return -rewards


def tiny_envs(count: int = 3, **kwargs: Any) -> SyncVectorEnv:
    return SyncVectorEnv([functools.partial(TinyEnv, 4)] * count, **kwargs)


def rollout(envs: Any, actions: list[Any]) -> list[Any]:
    results: list[Any] = [envs.reset(seed=5)]
    results += [envs.step(action) for action in actions]
    return results


ACTIONS = [np.array([1, 0, 1]), np.array([0, 0, 1]), np.array([1, 1, 1]), np.array([0, 1, 0]), np.array([1, 0, 0])]


def test_a_plain_wrapper_passes_every_call_and_attribute_through() -> None:
    with tiny_envs() as inner, tiny_envs() as reference:
        envs = VectorWrapper(inner)
        assert_same_value(rollout(envs, ACTIONS), rollout(reference, ACTIONS))
        assert envs.num_envs == 3 and envs.unwrapped is inner and envs.env is inner
        assert envs.observation_space is inner.observation_space
        assert envs.single_action_space is inner.single_action_space
        assert envs.metadata is inner.metadata and envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
        assert envs.render_mode is None and envs.spec is None
        assert envs.np_random_seed == inner.np_random_seed
        assert repr(envs) == f"<VectorWrapper, {inner!r}>"
        assert isinstance(envs, VectorEnv) and not envs.closed
        envs.close()
        assert inner.closed and envs.closed


def test_spaces_and_metadata_set_on_a_wrapper_are_its_own() -> None:
    with tiny_envs() as inner:
        envs = VectorWrapper(inner)
        observations = Box(0, 2, (3, 4))
        envs.observation_space = observations
        envs.single_observation_space = Box(0, 2, (4,))
        envs.metadata = {"render_fps": 5}
        assert envs.observation_space is observations and envs.single_observation_space == Box(0, 2, (4,))
        assert envs.metadata == {"render_fps": 5}
        assert inner.observation_space == Box(-1, 1, (3, 4)) and "autoreset_mode" in inner.metadata
        assert envs.action_space is inner.action_space  # not assigned: still the wrapped env's


def test_dropping_a_wrapper_leaves_the_wrapped_env_open() -> None:
    with tiny_envs() as inner:
        VectorWrapper(inner)
        assert not inner.closed


def test_the_context_manager_closes_the_wrapped_env() -> None:
    inner = tiny_envs()
    with VectorWrapper(inner) as envs:
        envs.reset(seed=0)
    assert inner.closed


def test_observation_action_and_reward_wrappers_transform_their_part() -> None:
    with tiny_envs() as reference:
        expected = rollout(reference, [1 - action for action in ACTIONS])
    envs = Negated(Reversed(Doubled(tiny_envs())))
    got = rollout(envs, ACTIONS)
    envs.close()
    assert_same_value(got[0][0], expected[0][0] * 2)
    for step, reference_step in zip(got[1:], expected[1:], strict=True):
        assert_same_value(step[0], reference_step[0] * 2)
        assert_same_value(step[1], -reference_step[1])
        assert_same_value(step[2:4], reference_step[2:4])


def test_a_transformation_left_unimplemented_names_the_wrapper() -> None:
    for wrapper, call in [
        (VectorObservationWrapper, lambda envs: envs.reset(seed=0)),
        (VectorActionWrapper, lambda envs: envs.step(np.zeros(3, np.int64))),
        (VectorRewardWrapper, lambda envs: envs.step(np.zeros(3, np.int64))),
    ]:
        with tiny_envs() as inner:
            inner.reset(seed=0)
            with pytest.raises(NotImplementedError, match=wrapper.__name__):
                call(wrapper(inner))


def test_an_observation_wrapper_refuses_an_env_that_resets_in_the_same_step() -> None:
    same_step = r"autoresets in the same step.*NEXT_STEP or DISABLED"
    with tiny_envs(autoreset_mode=AutoresetMode.SAME_STEP) as inner, pytest.raises(InvalidValueError, match=same_step):
        Doubled(inner)
    with tiny_envs(autoreset_mode=AutoresetMode.DISABLED) as inner:
        Doubled(inner)  # the final observation never lands in the infos


def test_an_observation_wrapper_warns_when_the_env_does_not_say_how_it_resets() -> None:
    class Bare(VectorEnv):  # type: ignore[type-arg]
        num_envs = 1

    with pytest.warns(UserWarning, match="no metadata\\['autoreset_mode'\\]"):
        Doubled(Bare())


@pytest.mark.parametrize("value", [TinyEnv(), [tiny_envs], "envs", None])
def test_only_a_vector_env_can_be_wrapped(value: Any) -> None:
    with pytest.raises(InvalidTypeError, match="VectorWrapper can only wrap a vector env"):
        VectorWrapper(value)


# -- with Gymnasium --------------------------------------------------------------------------------------------


def cartpoles(vectorise: Any, count: int = 2) -> Any:
    return vectorise([lambda: gymnasium.make("CartPole-v1")] * count)


@pytest.mark.parametrize(
    "vectorise",
    [SyncVectorEnv, functools.partial(AsyncVectorEnv, num_workers=2), gymnasium.vector.SyncVectorEnv],
    ids=["vecspaces-sync", "vecspaces-async", "gymnasium-sync"],
)
def test_around_a_gymnasium_facing_env_gymnasium_wrappers_stack_on_it(vectorise: Any) -> None:
    inner = cartpoles(vectorise)
    envs = gymnasium.wrappers.vector.RecordEpisodeStatistics(Reversed(inner))
    assert isinstance(envs.env, gymnasium.vector.VectorWrapper) and isinstance(envs.env, VectorWrapper)
    assert type(envs.env).__name__ == "Reversed"
    assert isinstance(envs.single_action_space, gymnasium.spaces.Discrete)
    envs.reset(seed=1)
    episodes = 0
    for _ in range(200):
        *_, infos = envs.step(np.ones(2, np.int64))
        episodes += int(infos.get("_episode", np.zeros(2, bool)).sum())
    envs.close()
    assert episodes > 0 and inner.closed


def test_around_an_env_of_vecspaces_spaces_nothing_of_gymnasium_shows() -> None:
    with tiny_envs() as inner:
        envs = VectorWrapper(inner)
        assert not isinstance(envs, gymnasium.vector.VectorEnv)


def test_the_wrappers_import_from_gymnasiums_paths() -> None:
    import vecspaces.vector

    for name in gymnasium.vector.__all__:
        assert hasattr(vecspaces.vector, name), name
    from vecspaces.vector.utils.space_utils import batch_space, iterate  # Gymnasium's module path

    assert batch_space is vecspaces.vector.utils.batch_space and iterate is vecspaces.vector.utils.iterate
    # Gymnasium's submodules are attributes of their packages (code reaches gymnasium.vector.utils.space_utils
    # so): ours too, in a fresh interpreter where nothing imported them by name yet.
    check = """
import importlib, types
import gymnasium.spaces, gymnasium.vector, gymnasium.vector.utils
import vecspaces.spaces, vecspaces.vector, vecspaces.vector.utils
for package in ("spaces", "vector", "vector.utils"):
    theirs, ours = importlib.import_module("gymnasium." + package), importlib.import_module("vecspaces." + package)
    for name, value in vars(theirs).items():
        if isinstance(value, types.ModuleType) and value.__name__ == theirs.__name__ + "." + name:
            print(package, name, isinstance(getattr(ours, name, None), types.ModuleType))
"""
    result = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "vector.utils space_utils" in result.stdout
    assert "False" not in result.stdout, result.stdout


class Counter(VectorEnv):  # type: ignore[type-arg]
    """A vector env of the user's own: its observation is the step count of each of its 2 envs."""

    num_envs = 2
    single_observation_space = Box(0, 100, (1,))
    observation_space = Box(0, 100, (2, 1))

    def reset(self, *, seed: Any = None, options: Any = None) -> tuple[Any, dict[str, Any]]:
        self.count = 0
        return np.zeros((2, 1), np.float32), {"start": np.array([1, 2]), "_start": np.array([True, True])}

    def step(self, actions: Any) -> Any:
        self.count += 1
        observations = np.full((2, 1), self.count, np.float32)
        return observations, np.ones(2), np.zeros(2, bool), np.zeros(2, bool), {}


def test_a_vector_env_of_the_users_own_takes_gymnasium_wrappers() -> None:
    envs = gymnasium.wrappers.vector.DictInfoToList(Counter())
    assert isinstance(envs.env, gymnasium.vector.VectorEnv) and type(envs.env).__name__ == "Counter"
    _, infos = envs.reset()
    assert infos == [{"start": 1}, {"start": 2}]
    assert envs.step(None)[0].tolist() == [[1.0], [1.0]]
    copied = pickle.loads(pickle.dumps(envs.env))  # by the class's name, which leads to Counter itself
    assert type(copied) is type(envs.env) and copied.count == 1
